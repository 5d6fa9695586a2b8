// fuzz_labels.c -- libFuzzer target for backward_parse_labels, the parser of `dump --train
// --labels` (issue 21).
//
// The input (NUL-terminated at the first NUL) is parsed as --labels against a fixed random model
// with a head of the words <unk> the cat walks bank and the sentence "the cat walks": accepted, it
// must give 3 targets, each −1 or a word of the model, and backward_new must then take them or
// refuse with a message (no target at all); refused, it must come with a message.
// Build as fuzz_safetensors.c says; seeds in tests/fuzz/corpus/labels/.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backward.h" // defines: backward_parse_labels, backward_new
#include "forward.h"  // defines: model_forward
#include "model.h"    // defines: model_random, model_free

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_labels: broken promise: %s\n", #x);                                              \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

static Trace *the_trace(void) {
  static Trace *t;
  if (t) return t;
  Err err = {0};
  static Vocab v;
  PROMISE(vocab_from_lines(&v, "<unk>\nthe\ncat\nwalks\nbank", &err));
  ModelConfig c = model_config_default();
  c.D = 8, c.H = 2, c.F = 8, c.n_layers = 1;
  Model *m = model_random(&c, &v, 1, &err);
  PROMISE(m != NULL);
  // a random model has no head: give it one that is the embedding (a tied head), for the parser only
  m->has_head = true;
  m->tie_head = true;
  m->head_weight = m->embed;
  Tokens tok;
  PROMISE(tokens_from_text(&tok, &m->vocab, "the cat walks", 0, &err));
  t = trace_new(m, &tok, &err); // copies the tokens
  tokens_free(&tok);
  PROMISE(t != NULL);
  model_forward(t);
  return t; // kept for the process's life, as the model
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) return 0;
  memcpy(s, data, size);
  s[size] = 0;
  Trace *t = the_trace();
  int target[4] = {0}, n = 0;
  Err err = {0};
  if (backward_parse_labels(t, s, target, &n, &err)) {
    PROMISE(n == t->L);
    for (int i = 0; i < n; i++) PROMISE(target[i] >= -1 && target[i] < t->cfg.V);
    TraceGrad *g = backward_new(t, target, n, &err);
    PROMISE(g != NULL || err.msg[0]);
    backward_free(g);
  } else {
    PROMISE(err.msg[0] != 0);
  }
  free(s);
  return 0;
}
