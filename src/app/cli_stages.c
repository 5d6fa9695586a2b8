// cli_stages.c -- `stepformer stages`: a readable table of every stage of one sentence.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "mat.h" // defines: mat_minmax

static const char *USAGE =
    "usage: stepformer stages [--model FILE | --random SPEC [--vocab LIST]] [--text TEXT] [--causal]\n"
    "\n"
    "Runs the encoder and prints every step of the pass in order: its number in the stage\n"
    "table, name, shape, formula (TeX) and the range of its values.\n";

int cli_stages(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) return fputs(USAGE, stdout), 0;
  ModelOpts o = {0};
  Err err = {0};
  for (int i = 1; i < argc; i++) {
    int r = model_source_option(&o, argc, argv, &i, &err);
    if (r < 0) return cli_fail("stages", err.msg);
    if (!r) {
      snprintf(err.msg, sizeof err.msg, "unknown option \"%s\" (see stepformer stages --help)", argv[i]);
      return cli_fail("stages", err.msg);
    }
  }
  Model *m = model_source_open(&o, &err);
  if (!m) return cli_fail("stages", err.msg);
  const char *text = o.text ? o.text : MODEL_SOURCE_DEFAULT_TEXT;
  Trace *t = cli_build_trace(m, text, &err);
  if (!t) {
    model_free(m);
    return cli_fail("stages", err.msg);
  }
  const ModelConfig *c = &t->cfg;
  printf("Stepformer: \"%s\"\n", text);
  printf("model: %s; D=%d H=%d d_k=%d F=%d layers=%d %s %s%s\n", m->source, c->D, c->H, c->D / c->H, c->F,
         c->n_layers, model_activation_name(c->activation), c->norm_first ? "pre-norm" : "post-norm",
         c->causal ? " causal" : "");
  printf("tokens (L=%d):", t->L);
  for (int i = 0; i < t->L; i++) printf(" %s%s", t->tokens.words[i], t->tokens.unknown[i] ? "→<unk>" : "");
  printf("\n\n%-4s %-6s %-36s %-11s %-12s %s\n", "#", "layer", "stage", "file", "shape", "min .. max");
  for (int s = 0; s < t->n_steps; s++) {
    const TraceStep *st = &t->steps[s];
    char layer[16] = "";
    if (st->layer >= 0) snprintf(layer, sizeof layer, "%d", st->layer + 1);
    if (st->result < 0) {
      printf("%-4d %-6s %-36s %-11s L=%-10d", st->kind, layer, st->name, "tokens.txt", t->L);
      for (int i = 0; i < t->L; i++) printf(" %d", t->tokens.ids[i]);
      printf("\n");
      continue;
    }
    const TraceTensor *x = &t->t[st->result];
    char shape[32];
    if (trace_per_head(x))
      snprintf(shape, sizeof shape, "%dx%dx%d", x->heads, x->rows, x->cols);
    else
      snprintf(shape, sizeof shape, "%dx%d", x->rows, x->cols);
    float lo, hi;
    mat_minmax((Mat){x->data, x->heads * x->rows, x->cols, x->cols}, &lo, &hi); // of the finite values
    char file[32], range[64];
    snprintf(file, sizeof file, "%s.npy", x->name);
    long count = (long)x->heads * x->rows * x->cols, nan = 0, neg = 0, pos = 0;
    for (long k = 0; k < count; k++) {
      float v = x->data[k];
      nan += isnan(v), neg += isinf(v) && v < 0, pos += isinf(v) && v > 0;
    }
    if (nan + neg + pos == count)
      snprintf(range, sizeof range, "no finite value");
    else if (fabsf(lo) < 1e6f && fabsf(hi) < 1e6f)
      snprintf(range, sizeof range, "%+.4f .. %+.4f", lo, hi);
    else
      snprintf(range, sizeof range, "%+.4e .. %+.4e", lo, hi);
    printf("%-4d %-6s %-36s %-11s %-12s %s", st->kind == STEP_PRENORM ? 5 : (int)st->kind, layer, st->name,
           file, shape, range);
    // values that are not numbers are counted, not hidden: -inf where scores are masked, NaN or
    // inf where the numbers overflowed
    if (neg) printf("  %ld x -inf", neg);
    if (pos) printf("  %ld x +inf", pos);
    if (nan) printf("  %ld x NaN", nan);
    printf("\n");
    printf("     %-6s   %s\n", "", x->tex);
  }
  trace_free(t);
  model_free(m);
  return 0;
}
