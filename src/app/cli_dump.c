// cli_dump.c -- `stepformer dump`: every stage as .npy, the tokens, and the model.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fileio.h" // defines: file_write_atomic
#include "npy.h"    // defines: npy_write
#include "outdir.h" // defines: OutDir

static const char *USAGE =
    "usage: stepformer dump [--model FILE | --random SPEC [--vocab w1,w2,...]] [--text TEXT]\n"
    "                       [--target TEXT | --generate [--max-steps N]] [--causal] --out DIR\n"
    "\n"
    "Runs the encoder on TEXT and writes into DIR one float32 .npy per stage (O, X, P, Z,\n"
    "l0.Q ... l0.out, as in DESIGN.md), tokens.txt, and the model as model.safetensors, so that\n"
    "a random model can be reopened with --model. Masked scores are -inf, as in PyTorch.\n"
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
    "  --causal        mask keys after each query (a decoder's self-attention)\n"
    "  --out DIR       the folder to write (created if missing)\n";

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

// Writes the trace's stages, tokens and model into the staging folder of od.
static bool write_all(OutDir *od, const Trace *t, Err *err) {
  char path[4096];
  if (!write_stages(od, t, err)) return false;
  size_t len;
  char *tokens = trace_tokens_lines(t, &len);
  if (!tokens) return err_set(err, "out of memory");
  bool ok = write_text(od, "tokens.txt", tokens, len, err);
  free(tokens);
  return ok && outdir_path(od, "model.safetensors", path, sizeof path, err) &&
         model_save(t->model, path, err);
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
  const char *out = NULL, *target = NULL;
  GenOpts gen = {0};
  Err err = {0};
  for (int i = 1; i < argc; i++) {
    int r = model_source_option(&o, argc, argv, &i, &err);
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
    else {
      snprintf(err.msg, sizeof err.msg, "unknown option \"%s\" (see stepformer dump --help)", argv[i]);
      return cli_fail("dump", err.msg);
    }
  }
  if (!out) return cli_fail("dump", "--out DIR is required (the folder to write the stages into)");
  if (!cli_generate_check(&gen, target, &err)) return cli_fail("dump", err.msg);
  Model *m = model_source_open(&o, &err);
  if (!m) return cli_fail("dump", err.msg);
  if (gen.on) {
    const char *text = o.text ? o.text : MODEL_SOURCE_DEFAULT_TEXT;
    Generation *g = model_source_generate(m, text, gen.max_steps, &err);
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
  if (!t) {
    model_free(m);
    return cli_fail("dump", err.msg);
  }
  OutDir od;
  int rc = 0;
  if (!outdir_begin(&od, out, &err))
    rc = 2;
  else if (!write_all(&od, t, &err)) {
    outdir_abort(&od);
    rc = 2;
  } else if (!outdir_commit(&od, &err))
    rc = 2;
  if (rc)
    cli_fail("dump", err.msg);
  else {
    int files = 0;
    for (int i = 0; i < t->n; i++) files += !t->t[i].is_weight;
    if (t->T > 0)
      printf(
          "wrote %d stage files, tokens.txt, dec_tokens.txt and model.safetensors for \"%s\" -> \"%s\" (%d "
          "source tokens, %d decoder token%s: <bos>%s; %s) to %s\n",
          files, o.text ? o.text : MODEL_SOURCE_DEFAULT_TEXT, target ? target : "", t->L, t->T,
          t->T == 1 ? "" : "s", target ? " and the target's words" : " alone, as no --target was given",
          m->source, out);
    else
      printf("wrote %d stage files, tokens.txt and model.safetensors for \"%s\" (%d tokens, %s) to %s\n",
             files, o.text ? o.text : MODEL_SOURCE_DEFAULT_TEXT, t->L, m->source, out);
  }
  trace_free(t);
  model_free(m);
  return rc;
}
