// cli_stages.c -- `stepformer stages`: a readable table of every stage of one sentence.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "edits.h" // defines: edits_describe
#include "mat.h"   // defines: mat_minmax

static const char *USAGE =
    "usage: stepformer stages [--model FILE | --random SPEC [--vocab LIST]] [--text TEXT] [--target TEXT]\n"
    "                         [--generate [--max-steps N]] [--causal] [--tsv]\n"
    "                         [--edit SPEC]... [--head-off LAYER:HEAD[:zero|:uniform]]...\n"
    "\n"
    "Runs the encoder and prints every step of the pass in order: its number as the window shows\n"
    "it (stages the model does not have are left out, so the numbers run without a gap; a\n"
    "pre-norm model's LayerNorm before attention is 5½), the layer, the stage's title, its lesson\n"
    "name (stage=...), the .npy file `dump` writes, the shape, the range of its values, and its\n"
    "formula (TeX) on the line below.\n"
    "An encoder-decoder's table goes on with memory and the decoder's stages (their layer column\n"
    "is d1, d2 ...), on the decoder input <bos> followed by --target's words (<bos> alone without).\n"
    "  --target TEXT  the target sentence of an encoder-decoder (teacher forcing)\n"
    "  --generate     greedy generation (an encoder-decoder from <bos>, a causal model with a head\n"
    "                 after TEXT): lists every generation step, the word it wrote and the five most\n"
    "                 probable words, then the stages of step 1 (with --tsv: every step's, its\n"
    "                 number first)\n"
    "  --max-steps N  at most N generation steps (default 2·L + 10, at most 64)\n"
    "  --top-k K, --top-p P, --seed S, --temperature T   with --generate: draw each word instead of\n"
    "                  the argmax: softmax(logits / T), keep the K best, then the smallest set whose\n"
    "                  probability reaches P (as transformers' warpers), renormalize, draw with seed S\n"
    "                  (the same words on every machine; default seed 42)\n"
    "  --edit SPEC, --head-off L:H  what-if edits, as `stepformer dump --help` says: the table is then\n"
    "                 of the edited pass, named on a line above it (--tsv: a # line before the header)\n"
    "  --tsv   one tab-separated line per step with a header line, for scripts: number, layer,\n"
    "          stage, lesson name, file, shape, min, max, -inf count, +inf count, NaN count, TeX\n";

// One row of the table.
typedef struct {
  char number[16], layer[16], file[48], shape[32], lo[32], hi[32], range[80], extra[96];
  const char *title, *name, *tex;
  long neg, pos, nan;
} Row;

// Columns are as wide as their widest cell, counted in characters (UTF-8: "½" is one).
static int width(const char *s) {
  int n = 0;
  for (; *s; s++) n += ((unsigned char)*s & 0xC0) != 0x80;
  return n;
}

static void pad(const char *s, int w) { printf("%s%*s", s, w - width(s), ""); }

static void fill_row(const Trace *t, int s, Row *r) {
  const TraceStep *st = &t->steps[s];
  const StageInfo *info = stage_info(st->kind);
  memset(r, 0, sizeof *r);
  r->title = st->name;
  r->name = info->name;
  bool dec_layer = st->result >= 0 && t->t[st->result].name[0] == 'd' && st->layer >= 0;
  if (st->layer >= 0) snprintf(r->layer, sizeof r->layer, "%s%d", dec_layer ? "d" : "", st->layer + 1);
  snprintf(r->number, sizeof r->number, "%d%s", trace_stage_number(t, s, NULL), info->half ? "½" : "");
  if (st->result < 0) { // the tokens: their ids stand where the range would
    bool dec = st->kind == STEP_DEC_TOKENS;
    const Tokens *tk = dec ? &t->dec_tokens : &t->tokens;
    snprintf(r->file, sizeof r->file, dec ? "dec_tokens.txt" : "tokens.txt");
    snprintf(r->shape, sizeof r->shape, dec ? "T=%d" : "L=%d", tk->n);
    int k = 0;
    for (int i = 0; i < tk->n && k < (int)sizeof r->range - 12; i++)
      k += snprintf(r->range + k, sizeof r->range - (size_t)k, "%s%d", i ? " " : "", tk->ids[i]);
    if (tk->n > 0 && k >= (int)sizeof r->range - 12)
      snprintf(r->range + k, sizeof r->range - (size_t)k, " …");
    r->tex = "";
    return;
  }
  const TraceTensor *x = &t->t[st->result];
  r->tex = x->tex;
  if (trace_per_head(x))
    snprintf(r->shape, sizeof r->shape, "%dx%dx%d", x->heads, x->rows, x->cols);
  else
    snprintf(r->shape, sizeof r->shape, "%dx%d", x->rows, x->cols);
  float lo, hi;
  mat_minmax((Mat){x->data, x->heads * x->rows, x->cols, x->cols}, &lo, &hi); // of the finite values
  snprintf(r->file, sizeof r->file, "%s.npy", x->name);
  long count = (long)x->heads * x->rows * x->cols;
  for (long k = 0; k < count; k++) {
    float v = x->data[k];
    r->nan += isnan(v), r->neg += isinf(v) && v < 0, r->pos += isinf(v) && v > 0;
  }
  if (r->nan + r->neg + r->pos == count) {
    snprintf(r->range, sizeof r->range, "no finite value");
  } else {
    bool big = !(fabsf(lo) < 1e6f && fabsf(hi) < 1e6f);
    snprintf(r->lo, sizeof r->lo, big ? "%+.4e" : "%+.4f", lo);
    snprintf(r->hi, sizeof r->hi, big ? "%+.4e" : "%+.4f", hi);
    snprintf(r->range, sizeof r->range, "%s .. %s", r->lo, r->hi);
  }
  // values that are not numbers are counted, not hidden: -inf where scores are masked, NaN or
  // inf where the numbers overflowed
  int k = 0;
  if (r->neg) k += snprintf(r->extra + k, sizeof r->extra - (size_t)k, "  %ld x -inf", r->neg);
  if (r->pos) k += snprintf(r->extra + k, sizeof r->extra - (size_t)k, "  %ld x +inf", r->pos);
  if (r->nan) snprintf(r->extra + k, sizeof r->extra - (size_t)k, "  %ld x NaN", r->nan);
}

static void print_table(const Row *rows, int n) {
  static const char *HEAD[] = {"#", "layer", "stage", "stage=", "file", "shape", "min .. max"};
  int w[6];
  for (int c = 0; c < 6; c++) w[c] = width(HEAD[c]);
  for (int i = 0; i < n; i++) {
    const char *cells[6] = {rows[i].number, rows[i].layer, rows[i].title,
                            rows[i].name,   rows[i].file,  rows[i].shape};
    for (int c = 0; c < 6; c++)
      if (width(cells[c]) > w[c]) w[c] = width(cells[c]);
  }
  for (int c = 0; c < 6; c++) pad(HEAD[c], w[c] + 2);
  printf("%s\n", HEAD[6]);
  for (int i = 0; i < n; i++) {
    const Row *r = &rows[i];
    const char *cells[6] = {r->number, r->layer, r->title, r->name, r->file, r->shape};
    for (int c = 0; c < 6; c++) pad(cells[c], w[c] + 2);
    printf("%s%s\n", r->range, r->extra);
    if (r->tex[0]) printf("%*s%s\n", w[0] + 2 + w[1] + 2, "", r->tex);
  }
}

static void print_tsv(const Row *rows, int n) {
  printf("number\tlayer\tstage\tname\tfile\tshape\tmin\tmax\tneg_inf\tpos_inf\tnan\ttex\n");
  for (int i = 0; i < n; i++) {
    const Row *r = &rows[i];
    printf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%ld\t%ld\t%ld\t%s\n", r->number, r->layer, r->title, r->name,
           r->file, r->shape, r->lo, r->hi, r->neg, r->pos, r->nan, r->tex);
  }
}

static void print_generation(const Generation *g);

// A quantized GGUF model: the weights-as-stored view, which is no stage of the pass, in a line.
static void print_stored(const Model *m) {
  if (!m->stored_path) return;
  StoredView *v = malloc(sizeof *v);
  StoredPick p = {.which = -1, .block = -1, .weight = -1};
  Err err = {0};
  if (v && gguf_stored_view(m->stored_path, &p, v, &err))
    printf("\nweights as stored (stage=stored; Shift+O in the window; export --inside [--tensor NAME --block "
           "N]):\n"
           "  %d quantized tensors; the first shown: %s %s (%.3g bits a weight), block %lld of %lld\n",
           v->count, v->tensor, v->type, v->bits, (long long)v->block + 1, (long long)v->n_blocks);
  free(v);
}

// --generate: the steps, then step 1's table (text mode), or every step's rows (--tsv).
static int print_generation_table(const Generation *g, bool tsv, const char *text) {
  const Trace *t0 = g->steps[0].trace;
  Row *rows = calloc((size_t)t0->n_steps, sizeof *rows);
  if (!rows) return cli_fail("stages", "out of memory");
  if (tsv) {
    printf("step\t");
    print_tsv(rows, 0);
    for (int k = 0; k < g->n_steps; k++) {
      const Trace *t = gen_step_trace(g, k, &(Err){0});
      if (!t) return free(rows), cli_fail("stages", "out of memory");
      Row *more = realloc(rows, sizeof *rows * (size_t)t->n_steps);
      if (!more) return free(rows), cli_fail("stages", "out of memory");
      rows = more;
      for (int s = 0; s < t->n_steps; s++) {
        fill_row(t, s, &rows[s]);
        const Row *r = &rows[s];
        printf("%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%ld\t%ld\t%ld\t%s\n", k + 1, r->number, r->layer,
               r->title, r->name, r->file, r->shape, r->lo, r->hi, r->neg, r->pos, r->nan, r->tex);
      }
      gen_step_release(g, k);
    }
  } else {
    printf("Stepformer: \"%s\"\nmodel: %s\n", text, g->model->source);
    print_generation(g);
    if (g->seq2seq)
      printf("\nthe stages of step 1 (step k repeats the decoder's stages on <bos> and the k - 1 words "
             "written; the encoder, memory and the K and V of memory are computed once):\n\n");
    else
      printf("\nthe stages of step 1 (step k runs every stage again on the prompt and the k - 1 words "
             "written):\n\n");
    for (int s = 0; s < t0->n_steps; s++) fill_row(t0, s, &rows[s]);
    print_table(rows, t0->n_steps);
  }
  free(rows);
  return 0;
}

// --generate: one line per step (its input, the word written, the candidates), then the sentence.
static void print_generation(const Generation *g) {
  const Sampling *smp = &g->sampling;
  if (smp->on)
    printf("sampled generation (T %g, top-k %d, top-p %g, seed %llu)", smp->temperature, smp->top_k,
           smp->top_p, (unsigned long long)smp->seed);
  else
    printf("greedy generation");
  printf(": %d step%s%s\n", g->n_steps, g->n_steps == 1 ? "" : "s",
         g->ended ? ", ended by its end word" : ", stopped at the limit");
  for (int k = 0; k < g->n_steps; k++) {
    const GenStep *s = &g->steps[k];
    int n_in = g->base + k; // a cached step has no trace (generate.h): its input is g->ids' first n_in
    printf("step %d  input (%d):", k + 1, n_in);
    for (int i = 0; i < n_in; i++) printf(" %s", gen_word(g, g->ids[i]));
    printf("\n        wrote \"%s\" (p=%.4f); candidates:", gen_word(g, s->token), s->prob);
    for (int r = 0; r < s->n_top; r++)
      printf(" %s %.4f%s", gen_word(g, s->top[r]), s->top_p[r], r + 1 < s->n_top ? "," : "");
    printf("\n");
  }
  char *sentence = gen_sentence(g);
  printf("generated: %s\n", sentence ? sentence : "");
  free(sentence);
}

int cli_stages(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) return fputs(USAGE, stdout), 0;
  ModelOpts o = {0};
  Err err = {0};
  bool tsv = false;
  const char *target = NULL;
  GenOpts gen = {0};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--tsv")) {
      tsv = true;
      continue;
    }
    int r = model_source_option(&o, argc, argv, &i, &err);
    if (r < 0) return cli_fail("stages", err.msg);
    if (!r && (r = cli_target_option(&target, argc, argv, &i, &err)) < 0) return cli_fail("stages", err.msg);
    if (!r && (r = cli_generate_option(&gen, argc, argv, &i, &err)) < 0) return cli_fail("stages", err.msg);
    if (!r) {
      snprintf(err.msg, sizeof err.msg, "unknown option \"%s\" (see stepformer stages --help)", argv[i]);
      return cli_fail("stages", err.msg);
    }
  }
  if (!cli_generate_check(&gen, target, &err)) return cli_fail("stages", err.msg);
  if (gen.on && (o.n_edit || o.n_head_off))
    return cli_fail("stages", "--edit and --head-off do not go with --generate: give one or the other");
  Model *m = model_source_open(&o, &err);
  if (!m) return cli_fail("stages", err.msg);
  const char *text = o.text ? o.text : MODEL_SOURCE_DEFAULT_TEXT;
  if (gen.on) {
    Generation *g = model_source_generate_sampled(m, text, gen.max_steps, &gen.smp, &err);
    if (!g) {
      model_free(m);
      return cli_fail("stages", err.msg);
    }
    int rc = print_generation_table(g, tsv, text);
    gen_free(g);
    model_free(m);
    return rc;
  }
  Trace *t = cli_build_any_trace(m, text, target, &err);
  if (t && !model_source_apply_edits(&o, &t, &err)) trace_free(t), t = NULL;
  if (!t) {
    model_free(m);
    return cli_fail("stages", err.msg);
  }
  char note[2048];
  edits_describe(t, note, sizeof note);
  Row *rows = calloc((size_t)t->n_steps, sizeof *rows);
  if (!rows) {
    trace_free(t);
    model_free(m);
    return cli_fail("stages", "out of memory");
  }
  for (int s = 0; s < t->n_steps; s++) fill_row(t, s, &rows[s]);
  if (tsv) {
    if (note[0]) printf("# %s\n", note);
    print_tsv(rows, t->n_steps);
  } else {
    const ModelConfig *c = &t->cfg;
    printf("Stepformer: \"%s\"\n", text);
    printf("model: %s; D=%d H=%d d_k=%d F=%d layers=%d %s %s%s\n", m->source, c->D, c->H, model_dk(c), c->F,
           c->n_layers, model_activation_name(c->activation), c->norm_first ? "pre-norm" : "post-norm",
           c->causal ? " causal" : "");
    if (note[0]) printf("%s (what-if: not the model's own numbers)\n", note);
    printf("tokens (L=%d):", t->L);
    for (int i = 0; i < t->L; i++) printf(" %s%s", t->tokens.words[i], t->tokens.unknown[i] ? "→<unk>" : "");
    printf("\n");
    if (t->T > 0) { // an encoder-decoder
      printf("decoder: %d layer%s, target vocabulary V_t=%d; its input (T=%d):", c->n_dec_layers,
             c->n_dec_layers == 1 ? "" : "s", c->V_t, t->T);
      for (int i = 0; i < t->T; i++)
        printf(" %s%s", t->dec_tokens.words[i], t->dec_tokens.unknown[i] ? "→<unk>" : "");
      printf("%s\n", target ? "" : "   (no --target: <bos> alone)");
      printf("(the encoder has no mask stage; the decoder's self-attention is always masked)\n");
    } else if (!c->causal)
      printf("(no mask stage: the model is not causal; --causal adds it)\n");
    printf("\n");
    print_table(rows, t->n_steps);
    print_stored(m);
  }
  free(rows);
  trace_free(t);
  model_free(m);
  return 0;
}
