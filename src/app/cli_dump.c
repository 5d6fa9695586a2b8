// cli_dump.c -- `stepformer dump`: every stage as .npy, the tokens, and the model.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "edits.h"       // defines: edits_describe
#include "fileio.h"      // defines: file_write_atomic
#include "forward.h"     // defines: model_forward (--no-scale)
#include "insidefiles.h" // defines: InsideOpts, insidefiles_write
#include "model_load.h"  // defines: model_save
#include "npy.h"         // defines: npy_write
#include "outdir.h"      // defines: OutDir
#include "simfiles.h"    // defines: simfiles_write
#include "trainfiles.h"  // defines: TrainOpts, trainfiles_option, trainfiles_write

static const char *USAGE =
    "usage: stepformer dump [--model FILE | --random SPEC [--vocab w1,w2,...]] [--text TEXT]\n"
    "                       [--target TEXT | --generate [--max-steps N] | --compare TEXT] [--causal]\n"
    "                       [--edit SPEC]... [--head-off LAYER:HEAD[:zero|:uniform]]...\n"
    "                       [--train [--lr RATE] [--labels LIST] [--no-scale]] --out DIR\n"
    "\n"
    "Runs the encoder on TEXT and writes into DIR one float32 .npy per stage (O, X, P, Z,\n"
    "l0.Q ... l0.out, as in DESIGN.md), tokens.txt, and the model as model.safetensors, so that\n"
    "a random model can be reopened with --model. Masked scores are -inf, as in PyTorch.\n"
    "A Llama / Qwen model (RMSNorm, RoPE, grouped K/V heads, SwiGLU) writes O, X, Z, rope_angle,\n"
    "l0.in l0.rms1 l0.Q_norope l0.K_norope l0.Q l0.K (after RoPE) l0.V l0.S_raw l0.S l0.A l0.AV\n"
    "l0.concat l0.attn l0.res1 l0.rms2 l0.gate l0.up l0.ffn_hidden l0.ffn l0.res2 l0.out ...,\n"
    "final_norm, logits, pred (K and V with num_key_value_heads heads).\n"
    "File names count layers from 0, as PyTorch's layers.0 does: l0. is what the window and the\n"
    "lessons call layer 1 (they count from 1, as a teacher does).\n"
    "Files of the same names in DIR are replaced, and an earlier run's files of the same kinds\n"
    "that this one does not write again are removed (not those changed since); nothing else in\n"
    "DIR is touched.\n"
    "\n"
    "  --model FILE    a safetensors model (PyTorch names, config in __metadata__); default:\n"
    "                  the shipped assets/models/bank.safetensors\n"
    "  --random SPEC   random weights: D=16,H=2,F=64,layers=2,seed=42[,activation=gelu]\n"
    "                  [,norm_first=1][,causal=1]   (seeded Xavier-uniform)\n"
    "  --vocab LIST    vocabulary of a random model; default: <unk> plus the words of TEXT\n"
    "  --text TEXT     the sentence (default: \"" MODEL_SOURCE_DEFAULT_TEXT "\")\n"
    "  --target TEXT   an encoder-decoder's target sentence: the decoder's input is <bos> followed\n"
    "                  by its words (teacher forcing); without it, <bos> alone. The dump then also\n"
    "                  holds memory, dec.O ... dec.Z, d0.Q ... d0.out, dec.norm, logits, pred and\n"
    "                  dec_tokens.txt (tests/gen_ref_seq2seq.py names them)\n"
    "  --generate      greedy generation (an encoder-decoder from <bos>, a causal model with a head\n"
    "                  after TEXT): DIR/step1/, DIR/step2/ ... each hold that step's stage files and\n"
    "                  dec_tokens.txt (a causal model's: tokens.txt); DIR holds tokens.txt,\n"
    "                  generated.txt (the words written, one line) and model.safetensors\n"
    "  --max-steps N   at most N generation steps (default 2·L + 10, at most 64)\n"
    "  --top-k K, --top-p P, --seed S, --temperature T   with --generate: draw each word instead of\n"
    "                  the argmax: softmax(logits / T), keep the K best, then the smallest set whose\n"
    "                  probability reaches P (as transformers' warpers), renormalize, draw with seed S\n"
    "                  (the same words on every machine; default seed 42)\n"
    "  --compare TEXT  a second sentence: the dump also holds the cosine similarity of the two\n"
    "                  sentences' vectors, sim.X.npy (token embeddings), sim.Z.npy (with positions),\n"
    "                  sim.l0.npy ... (after each layer), sim.final.npy (a final LayerNorm), each\n"
    "                  [L1, L2], rows tokens.txt, columns compare_tokens.txt; sim.line.npy, the\n"
    "                  last word both share across those levels; sim.txt names the levels and word\n"
    "  --causal        mask keys after each query (a decoder's self-attention)\n" CLI_EDIT_HELP
    "  --train         one training step (a model with a prediction head or a classifier): also\n"
    "                  writes loss.npy [1] (the mean cross-entropy of the prediction at positions\n"
    "                  1 .. L-1 against the next token), grad.<stage>.npy for every stage (dL/dS as\n"
    "                  grad.l0.S.npy, its stage's shape), grad.<tensor>.npy for every weight under its\n"
    "                  file name (grad.layers.0.self_attn.in_proj_weight.npy, grad.head.weight.npy)\n"
    "                  and loss_after.npy [1], the loss after one step W <- W - lr*dL/dW, and\n"
    "                  backward-softmax.png, the backward through the softmax of one head\n"
    "  --lr RATE       the learning rate of that step (default 0.1)\n"
    "  --no-scale      the sqrt(d_k) experiment: scores S = QK^T without the 1/sqrt(d_k), in the\n"
    "                  stages and the gradients; also writes sqrt_dk.npy and sqrt_dk.txt, random\n"
    "                  queries and keys: the scores' spread, the softmax's largest weight and the\n"
    "                  size of dL/dS for d_k = 4 .. 4096, with and without the scale\n"
    "  --labels LIST   other targets: one word per token, the word that position should predict,\n"
    "                  \"-\" for none (\"cat,walks,-,-,-,-\"); a classifier: its class, name or 1..C\n"
    "  --position N    the saliency's position (1 = the first token; default: the last)\n"
    "  --target-token WORD  the saliency's word (default: the model's top token there)\n"
    "  --out DIR       the folder to write (created if missing)\n"
    "With --edit or --head-off the stage files are those of the edited pass, DIR gets edits.txt\n"
    "(the edits and heads off, one line) and model.safetensors stays the model's own.\n"
    "Looking inside (an encoder with a prediction head or a classifier; issue 36): lens.l0 ...\n"
    "lens.l{N-1} [L, V] the prediction read after each layer through the model's own final norm\n"
    "and head (the logit lens; a classifier: [1, C]), rollout.l0 ... and rollout [L, L] (attention\n"
    "rollout: 0.5*mean_h A + 0.5*I, multiplied layer by layer), and with a head saliency [L] and\n"
    "saliency.txt: |d log p[position, token] / dX * X| per input token, normalized to sum 1.\n";

// Writes the trace's stage files (and, with a decoder, dec_tokens.txt) into od's staging folder.
static bool write_stages(OutDir *od, const Trace *t, Err *err) {
  char path[4096];
  for (int i = 0; i < t->n; i++) {
    const TraceTensor *x = &t->t[i];
    if (x->is_weight) continue;
    char name[64];
    snprintf(name, sizeof name, "%s.npy", x->name);
    int shape[3], nd = trace_dump_shape(x, shape);
    if (!outdir_path(od, name, path, sizeof path, err) || !npy_write(path, x->data, nd, shape, err))
      return false;
  }
  if (t->T > 0) { // an encoder-decoder: the decoder's input too
    size_t len;
    char *dec = trace_dec_tokens_lines(t, &len);
    if (!dec) return err_set(err, "out of memory");
    bool ok =
        outdir_path(od, "dec_tokens.txt", path, sizeof path, err) && file_write_atomic(path, dec, len, err);
    free(dec);
    return ok;
  }
  return true;
}

// Writes `text` (len bytes) as file `name` of od.
static bool write_text(OutDir *od, const char *name, const char *text, size_t len, Err *err) {
  char path[4096];
  return outdir_path(od, name, path, sizeof path, err) && file_write_atomic(path, text, len, err);
}

// Writes the trace's stages, tokens and model (m: the model's own weights, also for an edited
// trace) into the staging folder of od; an edited trace (--edit, --head-off) also gets edits.txt,
// the line that names its edits and the heads off, so that its stages do not pass for the model's.
static bool write_all(OutDir *od, const Trace *t, const Model *m, Err *err) {
  char path[4096];
  if (!write_stages(od, t, err)) return false;
  size_t len;
  char *tokens = trace_tokens_lines(t, &len);
  if (!tokens) return err_set(err, "out of memory");
  bool ok = write_text(od, "tokens.txt", tokens, len, err);
  free(tokens);
  char note[2048];
  if (ok && edits_describe(t, note, sizeof note - 1)[0]) {
    strcat(note, "\n");
    ok = write_text(od, "edits.txt", note, strlen(note), err);
  }
  return ok && outdir_path(od, "model.safetensors", path, sizeof path, err) && model_save(m, path, err);
}

// --generate: DIR/stepK/ for every step (a causal model's step also gets its tokens.txt), then
// DIR's tokens.txt, generated.txt and model.safetensors (the encoder's tokens: step 1's).
static bool write_generation(const char *out, const Generation *g, Err *err) {
  char dir[4096];
  for (int k = 0; k < g->n_steps; k++) {
    const Trace *t = gen_step_trace(g, k, err); // made for this step, dropped after it
    if (!t) return false;
    if (snprintf(dir, sizeof dir, "%s/step%d", out, k + 1) >= (int)sizeof dir)
      return err_set(err, "--out %s: the path is too long", out);
    OutDir od;
    if (!outdir_begin(&od, dir, err)) return false;
    bool ok = write_stages(&od, t, err);
    if (ok && !g->seq2seq) { // a causal model's input grows: its tokens.txt per step
      size_t len;
      char *tokens = trace_tokens_lines(t, &len);
      ok = tokens ? write_text(&od, "tokens.txt", tokens, len, err) : err_set(err, "out of memory");
      free(tokens);
    }
    if (!ok) {
      outdir_abort(&od);
      return false;
    }
    gen_step_release(g, k);
    if (!outdir_commit(&od, err)) return false;
  }
  char *sentence = gen_sentence(g);
  if (!sentence) return err_set(err, "out of memory");
  size_t n = strlen(sentence);
  char *line = malloc(n + 2);
  if (line) memcpy(line, sentence, n), line[n] = '\n', line[n + 1] = 0;
  free(sentence);
  if (!line) return err_set(err, "out of memory");
  OutDir od;
  const Trace *t = g->steps[0].trace;
  if (!outdir_begin(&od, out, err)) return free(line), false;
  size_t len;
  char *tokens = trace_tokens_lines(t, &len);
  bool ok = tokens && write_text(&od, "tokens.txt", tokens, len, err) &&
            write_text(&od, "generated.txt", line, strlen(line), err) &&
            outdir_path(&od, "model.safetensors", dir, sizeof dir, err) && model_save(t->model, dir, err);
  if (!tokens) err_set(err, "out of memory");
  free(tokens);
  free(line);
  if (!ok) {
    outdir_abort(&od);
    return false;
  }
  return outdir_commit(&od, err);
}

int cli_dump(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) return fputs(USAGE, stdout), 0;
  ModelOpts o = {0};
  const char *out = NULL, *target = NULL, *compare = NULL;
  GenOpts gen = {0};
  TrainOpts train = {0};
  InsideOpts inside = {0};
  Err err = {0};
  for (int i = 1; i < argc; i++) {
    int r = model_source_option(&o, argc, argv, &i, &err);
    if (!r) r = trainfiles_option(&train, argc, argv, &i, &err);
    if (!r) r = insidefiles_option(&inside, argc, argv, &i, &err);
    if (r < 0) return cli_fail("dump", err.msg);
    if (r) continue;
    r = cli_target_option(&target, argc, argv, &i, &err);
    if (!r) r = cli_generate_option(&gen, argc, argv, &i, &err);
    if (r < 0) return cli_fail("dump", err.msg);
    if (r) continue;
    if (!strcmp(argv[i], "--out") && i + 1 < argc && !out)
      out = argv[++i];
    else if (!strcmp(argv[i], "--out"))
      return cli_fail("dump", out ? "--out is given twice: give it once" : "--out needs a folder");
    else if (!strcmp(argv[i], "--compare") && i + 1 < argc && !compare)
      compare = argv[++i];
    else if (!strcmp(argv[i], "--compare"))
      return cli_fail("dump", compare ? "--compare is given twice: give it once"
                                      : "--compare needs a second sentence in quotes");
    else {
      snprintf(err.msg, sizeof err.msg, "unknown option \"%s\" (see stepformer dump --help)", argv[i]);
      return cli_fail("dump", err.msg);
    }
  }
  if (!out) return cli_fail("dump", "--out DIR is required (the folder to write the stages into)");
  if (!cli_generate_check(&gen, target, &err)) return cli_fail("dump", err.msg);
  if (compare && (gen.on || target))
    return cli_fail("dump", "--compare compares two sentences through an encoder: leave out --target and "
                            "--generate");
  if (gen.on && (o.n_edit || o.n_head_off))
    return cli_fail("dump", "--edit and --head-off do not go with --generate: give one or the other");
  if ((train.lr_set || train.labels || train.no_scale) && !train.on)
    return cli_fail("dump", "--lr, --labels and --no-scale go with --train");
  if (train.on && (gen.on || target || compare || o.n_edit || o.n_head_off))
    return cli_fail("dump",
                    "--train takes one step on the model's own encoder: leave out --generate, --target, "
                    "--compare, --edit and --head-off");
  Model *m = model_source_open(&o, &err);
  if (!m) return cli_fail("dump", err.msg);
  if (gen.on) {
    const char *text = o.text ? o.text : MODEL_SOURCE_DEFAULT_TEXT;
    Generation *g = model_source_generate_sampled(m, text, gen.max_steps, &gen.smp, &err);
    bool ok = g && write_generation(out, g, &err);
    if (ok) {
      char *sentence = gen_sentence(g);
      printf(
          "wrote %d generation step%s (step1/ ... step%d/), tokens.txt, generated.txt and model.safetensors "
          "for \"%s\" (%s) to %s: %s\n",
          g->n_steps, g->n_steps == 1 ? "" : "s", g->n_steps, text, m->source, out, sentence ? sentence : "");
      free(sentence);
    }
    gen_free(g);
    model_free(m);
    return ok ? 0 : cli_fail("dump", err.msg);
  }
  Trace *t = cli_build_any_trace(m, o.text ? o.text : MODEL_SOURCE_DEFAULT_TEXT, target, &err);
  if (t && !model_source_apply_edits(&o, &t, &err)) trace_free(t), t = NULL;
  if (!t) {
    model_free(m);
    return cli_fail("dump", err.msg);
  }
  if (train.no_scale) { // the √d_k experiment: the same pass with scores QKᵀ, no 1/√d_k
    t->no_scale = true;
    model_forward(t);
  }
  Trace *tb = NULL;
  Sim *sim = NULL;
  if (compare) { // the second sentence and the similarity of the two
    Err cerr = {0};
    if (t->T > 0)
      err_set(&err, "--compare compares two sentences through an encoder, and %s is an encoder-decoder",
              m->source);
    else if (!(tb = model_source_trace(m, compare, &cerr)))
      err_set(&err, "--compare: %s", cerr.msg);
    else
      sim = sim_new(t, tb, &err);
    if (!sim) {
      trace_free(tb);
      trace_free(t);
      model_free(m);
      return cli_fail("dump", err.msg);
    }
  }
  OutDir od;
  int rc = 0;
  char train_line[512] = "";
  if (!outdir_begin(&od, out, &err))
    rc = 2;
  else if (!write_all(&od, t, m, &err) || (sim && !simfiles_write(&od, sim, &err)) ||
           (!train.on && !insidefiles_write(&od, t, &inside, &err)) ||
           (train.on && !trainfiles_write(&od, t, &train, train_line, sizeof train_line, &err))) {
    outdir_abort(&od);
    rc = 2;
  } else if (!outdir_commit(&od, &err))
    rc = 2;
  if (rc)
    cli_fail("dump", err.msg);
  else {
    int files = 0;
    for (int i = 0; i < t->n; i++) files += !t->t[i].is_weight;
    if (!train.on) files += insidefiles_count(t);
    if (t->T > 0)
      printf(
          "wrote %d stage files, tokens.txt, dec_tokens.txt and model.safetensors for \"%s\" -> \"%s\" (%d "
          "source tokens, %d decoder token%s: <bos>%s; %s) to %s\n",
          files, o.text ? o.text : MODEL_SOURCE_DEFAULT_TEXT, target ? target : "", t->L, t->T,
          t->T == 1 ? "" : "s", target ? " and the target's words" : " alone, as no --target was given",
          m->source, out);
    else
      printf("wrote %d stage files, tokens.txt%s and model.safetensors for \"%s\" (%d tokens, %s) to %s\n",
             files, t->edits ? ", edits.txt" : "", o.text ? o.text : MODEL_SOURCE_DEFAULT_TEXT, t->L,
             m->source, out);
    char note[2048];
    if (edits_describe(t, note, sizeof note)[0]) printf("%s\n", note);
    if (train_line[0]) printf("%s\n", train_line);
    if (sim) {
      char w[96] = "no shared word";
      if (sim->word_a >= 0) trace_axis_label(&sim->trace, AXIS_TOKEN, sim->word_a, w, sizeof w);
      printf("and %d similarity files against \"%s\" (%d tokens): sim.X ... sim.%s [%d, %d], sim.line (%s)\n",
             simfiles_count(sim), compare, tb->L, sim->levels[sim->n_levels - 1].name, t->L, tb->L, w);
    }
  }
  sim_free(sim);
  trace_free(tb);
  trace_free(t);
  model_free(m);
  return rc;
}
