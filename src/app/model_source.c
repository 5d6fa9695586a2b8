// model_source.c -- see model_source.h.
#include "model_source.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edits.h"        // defines: TraceEdits, edits_parse_edit, edits_trace
#include "forward.h"      // defines: model_forward
#include "model_find.h"   // defines: model_find_shipped
#include "model_load.h"   // defines: model_load
#include "model_tokens.h" // defines: model_tokenize

int model_source_option(ModelOpts *o, int argc, char **argv, int *i, Err *err) {
  const char *a = argv[*i];
  const char **slot = NULL;
  if (!strcmp(a, "--model"))
    slot = &o->model_path;
  else if (!strcmp(a, "--random"))
    slot = &o->random_spec;
  else if (!strcmp(a, "--vocab"))
    slot = &o->vocab;
  else if (!strcmp(a, "--text"))
    slot = &o->text;
  else if (!strcmp(a, "--causal")) {
    o->causal = true;
    return 1;
  } else if (!strcmp(a, "--edit") || !strcmp(a, "--head-off")) {
    bool edit = a[2] == 'e';
    int *n = edit ? &o->n_edit : &o->n_head_off;
    if (*i + 1 >= argc)
      return err_set(err, "%s needs a value (%s)", a,
                     edit ? "NAME[ROW, COL]=VALUE, as \"S2[bank, river]=6\""
                          : "LAYER:HEAD, as 1:2 or 1:2:uniform"),
             -1;
    if (*n >= MODEL_SOURCE_MAX_EDITS)
      return err_set(err, "%s is given more than %d times", a, MODEL_SOURCE_MAX_EDITS), -1;
    (edit ? o->edit : o->head_off)[(*n)++] = argv[++*i];
    return 1;
  } else
    return 0;
  if (*i + 1 >= argc) return err_set(err, "%s needs a value", a), -1;
  if (*slot) return err_set(err, "%s is given twice: give it once", a), -1;
  *slot = argv[++*i];
  if (slot == &o->model_path && !**slot)
    return err_set(err, "--model is given an empty name: give a model file (or a hub folder)"), -1;
  return 1;
}

bool model_source_check(const ModelOpts *o, Err *err) {
  if (o->model_path && o->random_spec)
    return err_set(err, "give either --model FILE or --random SPEC, not both");
  if (o->vocab && !o->random_spec)
    return err_set(err, "--vocab sets the words of a --random model (a model file has its own): add "
                        "--random SPEC, or leave --vocab out");
  return true;
}

// The words of "--vocab the,cat,...": "<unk>" in front when the list does not start with it, and
// each word one the tokenizer can produce (lowercase, no space or punctuation, at most
// TOKEN_MAX_BYTES bytes), or no sentence could ever use it.
static bool vocab_from_option(Vocab *v, const char *list, Err *err) {
  if (!*list)
    return err_set(err, "--vocab is empty: give the words, separated by commas (--vocab the,cat,sat)");
  size_t n = strlen(list);
  char *lines = malloc(n + 16);
  if (!lines) return err_set(err, "out of memory");
  int off = strncmp(list, "<unk>,", 6) && strcmp(list, "<unk>") ? sprintf(lines, "<unk>\n") : 0;
  for (size_t k = 0; k <= n; k++) lines[off + k] = list[k] == ',' ? '\n' : list[k];
  Err verr = {0};
  bool ok = vocab_from_lines(v, lines, &verr);
  free(lines);
  if (!ok) return err_set(err, "--vocab: %s", verr.msg);
  for (int i = 1; i < v->n; i++) {
    char w[2][TOKEN_MAX_BYTES + 1], hint[TOKEN_MAX_BYTES + 16] = "";
    int k = tokenize_words(v->words[i], w, 2);
    if (k == 1 && !strcmp(w[0], v->words[i])) continue;
    if (k == 1) snprintf(hint, sizeof hint, "; write \"%s\"", w[0]);
    err_set(err,
            "--vocab: \"%s\" can never match a word: sentences are lowercased and split at spaces and "
            "punctuation, words cut at %d bytes%s",
            v->words[i], TOKEN_MAX_BYTES, hint);
    vocab_free(v);
    return false;
  }
  return true;
}

// --random SPEC (or, with no spec, the default configuration: the shipped model's stand-in).
static Model *random_model(const ModelOpts *o, Err *err) {
  ModelConfig c = model_config_default();
  uint64_t seed = 42;
  Err e = {0};
  if (o->random_spec && !model_config_parse(&c, &seed, o->random_spec, &e))
    return err_set(err, "--random: %s", e.msg), NULL;
  Vocab v;
  if (o->vocab) {
    if (!vocab_from_option(&v, o->vocab, err)) return NULL;
  } else if (!vocab_from_text(&v, o->text ? o->text : MODEL_SOURCE_DEFAULT_TEXT, &e)) {
    return err_set(err, "--text: %s", e.msg), NULL;
  }
  c.V = v.n;
  Model *m =
      !o->random_spec || model_config_check(&c, "--random", err) ? model_random(&c, &v, seed, err) : NULL;
  vocab_free(&v);
  return m;
}

Model *model_source_open(const ModelOpts *o, Err *err) {
  if (!model_source_check(o, err)) return NULL;
  Model *m = NULL;
  char shipped[4400], looked[1024];
  if (o->model_path)
    m = model_load(o->model_path, err);
  else if (o->random_spec)
    m = random_model(o, err);
  else if (model_find_shipped(shipped, sizeof shipped, looked, sizeof looked))
    m = model_load(shipped, err);
  else if ((m = random_model(o, err)))
    fprintf(stderr,
            "stepformer: note: the shipped model " MODEL_FIND_SHIPPED " is not installed (looked in %s): "
            "using a random model instead (give --model FILE, or set STEPFORMER_DATA to the folder holding "
            "models/)\n",
            looked);
  if (m && o->causal && model_is_seq2seq(m)) {
    err_set(err,
            "--causal: %s is an encoder-decoder, whose decoder is always masked and whose encoder sees the "
            "whole source: leave --causal out",
            m->source);
    model_free(m);
    return NULL;
  }
  if (m && o->causal) m->cfg.causal = true;
  return m;
}

Trace *model_source_trace_seq2seq(const Model *m, const char *text, const char *target, Err *err) {
  Tokens src, dec;
  Err e = {0};
  if (!model_tokenize(m, text, MODEL_SOURCE_MAX_TOKENS, &src, &e))
    return err_set(err, "--text: %s", e.msg), NULL;
  if (!trace_decoder_tokens(&dec, m, target, MODEL_SOURCE_MAX_TOKENS, &e)) {
    tokens_free(&src);
    return err_set(err, "--target: %s", e.msg), NULL;
  }
  Trace *t = trace_new_seq2seq(m, &src, &dec, err);
  tokens_free(&src);
  tokens_free(&dec);
  if (t) model_forward(t);
  return t;
}

Generation *model_source_generate(const Model *m, const char *text, int max_steps, Err *err) {
  return model_source_generate_sampled(m, text, max_steps, NULL, err);
}

Generation *model_source_generate_sampled(const Model *m, const char *text, int max_steps,
                                          const Sampling *smp, Err *err) {
  if (!gen_supported(m, err)) return NULL;
  Tokens src;
  Err e = {0};
  if (!model_tokenize(m, text, MODEL_SOURCE_MAX_TOKENS, &src, &e))
    return err_set(err, "--text: %s", e.msg), NULL;
  Generation *g = gen_run_sampled(m, &src, max_steps, smp, err);
  tokens_free(&src);
  return g;
}

Trace *model_source_trace(const Model *m, const char *text, Err *err) {
  if (model_is_seq2seq(m)) { // the decoder fed "<bos>" alone
    Err e = {0};
    Trace *t = model_source_trace_seq2seq(m, text, "", &e);
    if (!t) err_set(err, "%s", strncmp(e.msg, "--text: ", 8) ? e.msg : e.msg + 8);
    return t;
  }
  Tokens tok;
  if (!model_tokenize(m, text, MODEL_SOURCE_MAX_TOKENS, &tok, err)) return NULL;
  Trace *t = trace_new(m, &tok, err);
  tokens_free(&tok);
  if (t) model_forward(t);
  return t;
}

bool model_source_edits(const ModelOpts *o, const Trace *base, TraceEdits *e, Err *err) {
  *e = (TraceEdits){0};
  Err e1 = {0};
  for (int k = 0; k < o->n_edit; k++) {
    TraceEdit x;
    if (!edits_parse_edit(base, o->edit[k], &x, &e1) || !edits_add(e, &x, &e1)) {
      edits_free(e);
      return err_set(err, "--edit \"%s\": %s", o->edit[k], e1.msg);
    }
  }
  for (int k = 0; k < o->n_head_off; k++) {
    int l, h;
    HeadOff mode;
    if (!edits_parse_head_off(base, o->head_off[k], &l, &h, &mode, &e1) ||
        !edits_set_head(e, base, l, h, mode, &e1)) {
      edits_free(e);
      return err_set(err, "--head-off %s: %s", o->head_off[k], e1.msg);
    }
  }
  return true;
}

bool model_source_apply_edits(const ModelOpts *o, Trace **t, Err *err) {
  if (!o->n_edit && !o->n_head_off) return true;
  TraceEdits e;
  if (!model_source_edits(o, *t, &e, err)) return false;
  Trace *edited = edits_trace(*t, &e, err);
  edits_free(&e);
  if (!edited) return false;
  trace_free(*t);
  *t = edited;
  return true;
}
