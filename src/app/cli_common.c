// cli_common.c -- options shared by the sub-commands (see cli.h).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "forward.h" // defines: model_forward

#ifndef SF_SOURCE_DIR
#define SF_SOURCE_DIR "."
#endif

int cli_model_option(ModelOpts *o, int argc, char **argv, int *i, Err *err) {
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
  } else
    return 0;
  if (*i + 1 >= argc) return err_set(err, "%s needs a value", a), -1;
  if (*slot) return err_set(err, "%s is given twice: give it once", a), -1;
  *slot = argv[++*i];
  return 1;
}

bool cli_model_opts_check(const ModelOpts *o, Err *err) {
  if (o->model_path && o->random_spec)
    return err_set(err, "give either --model FILE or --random SPEC, not both");
  if (o->vocab && !o->random_spec)
    return err_set(err, "--vocab sets the words of a --random model (a model file has its own): add "
                        "--random SPEC, or leave --vocab out");
  return true;
}

bool cli_parse_size(const char *s, int *w, int *h) {
  char *end;
  if (*s < '0' || *s > '9') return false;
  long a = strtol(s, &end, 10);
  if (*end != 'x' || end[1] < '0' || end[1] > '9') return false;
  long b = strtol(end + 1, &end, 10);
  if (*end || a > 1 << 20 || b > 1 << 20) return false;
  *w = (int)a, *h = (int)b;
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

// Finds the shipped model next to the executable's source tree or installed data.
static const char *default_model_path(void) {
  static const char *candidates[] = {"assets/models/bank.safetensors",
                                     SF_SOURCE_DIR "/assets/models/bank.safetensors"};
  for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++)
    if (access(candidates[i], R_OK) == 0) return candidates[i];
  return NULL;
}

Model *cli_build_model(const ModelOpts *o, Err *err) {
  if (!cli_model_opts_check(o, err)) return NULL;
  Model *m = NULL;
  if (o->model_path) {
    m = model_load(o->model_path, err);
  } else if (o->random_spec || !default_model_path()) {
    ModelConfig c = model_config_default();
    uint64_t seed = 42;
    if (o->random_spec && !model_config_parse(&c, &seed, o->random_spec, err)) return NULL;
    Vocab v;
    if (o->vocab) {
      if (!vocab_from_option(&v, o->vocab, err)) return NULL;
    } else {
      Err terr = {0};
      if (!vocab_from_text(&v, o->text ? o->text : CLI_DEFAULT_TEXT, &terr))
        return err_set(err, "--text: %s", terr.msg), NULL;
    }
    m = model_random(&c, &v, seed, err);
    vocab_free(&v);
  } else {
    m = model_load(default_model_path(), err);
  }
  if (m && o->causal) m->cfg.causal = true;
  return m;
}

Trace *cli_build_trace(const Model *m, const char *text, Err *err) {
  Tokens tok;
  Err terr = {0};
  if (!tokens_from_text(&tok, &m->vocab, text, CLI_MAX_TOKENS, &terr))
    return err_set(err, "--text: %s", terr.msg), NULL;
  Trace *t = trace_new(m, &tok, err);
  tokens_free(&tok);
  if (t) model_forward(t);
  return t;
}

int cli_fail(const char *cmd, const char *msg) {
  fprintf(stderr, "stepformer %s: %s\n", cmd, msg);
  return 2;
}

bool cli_wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return true;
  return false;
}
