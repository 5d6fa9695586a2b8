// fuzz_facts.c -- libFuzzer target for lesson claims (facts.h): parse, then measure on a trace.
//
// The bytes become a NUL-terminated claim. facts_parse must either accept it or give a reason;
// an accepted claim is measured on a small seeded random model (D=8, H=2, causal, so that
// masked scores are -inf) reading "the cat walks by the bank": facts_eval must fill a statement
// and, when it resolves, a value that is a number or an infinity (a masked score), never NaN
// for a single cell.
// Build: CC=clang cmake -S . -B build-fuzz -DSF_FUZZ=ON -DSF_SANITIZE=ON
//        && cmake --build build-fuzz --target fuzz_facts
// Run:   build-fuzz/tests/fuzz_facts -max_total_time=120 tests/fuzz/corpus/facts
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "facts.h"   // defines: facts_parse, facts_eval
#include "forward.h" // defines: model_forward

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_facts: broken promise: %s\n", #x);                                               \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

static Trace *trace_once(void) {
  static Trace *t;
  static Model *m;
  static Vocab v;
  if (t) return t;
  Err err = {0};
  ModelConfig c = model_config_default();
  c.D = 8, c.H = 2, c.F = 16, c.n_layers = 1, c.causal = true;
  const char *text = "the cat walks by the bank";
  Tokens tk;
  PROMISE(vocab_from_text(&v, text, &err));
  PROMISE((m = model_random(&c, &v, 7, &err)) != NULL);
  PROMISE(tokens_from_text(&tk, &m->vocab, text, 0, &err));
  PROMISE((t = trace_new(m, &tk, &err)) != NULL);
  tokens_free(&tk);
  model_forward(t);
  return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 400) return 0;
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  Fact f;
  char why[200] = "";
  if (!facts_parse(&f, text, why, sizeof why)) {
    PROMISE(why[0] != 0);
  } else {
    FactResult r;
    bool ok = facts_eval(&f, trace_once(), 0, &r);
    PROMISE(r.statement[0] != 0);
    if (ok && f.what == FACT_VALUE && f.op != FACT_IN) PROMISE(!isnan(r.value));
  }
  free(text);
  return 0;
}
