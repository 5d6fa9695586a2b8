// trace_util.h -- small readers the model tests share (test_bank_model.c, test_shipped_seq2seq.c,
// test_generate.c, test_captions.c, test_notation.c): a model's metadata by key, the largest
// column of a trace tensor's row, a reference model of tests/ref/ loaded with a failed check when
// it cannot be, and a sentence's computed trace.
//
//     Model *m = load_ref_model("head");                   // tests/ref/head/model.safetensors
//     const char *layer = model_meta(m, "sense_layer");    // NULL when absent
//     int next = argmax_row(trace_find(t, "pred"), 0, t->L - 1);
#ifndef SF_TEST_TRACE_UTIL_H
#define SF_TEST_TRACE_UTIL_H

#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "check.h"
#include "forward.h"    // defines: model_forward
#include "model.h"      // defines: Model
#include "model_load.h" // defines: model_load
#include "tokenizer.h"  // defines: tokens_from_text, tokens_free
#include "trace.h"      // defines: TraceTensor, trace_at, trace_new, trace_new_seq2seq

// The column of the largest value in row i of head h of x (the first such column on a tie).
static inline int argmax_row(const TraceTensor *x, int h, int i) {
  int best = 0;
  for (int j = 1; j < x->cols; j++)
    if (trace_at(x, h, i, j) > trace_at(x, h, i, best)) best = j;
  return best;
}

// tests/ref/<name>/model.safetensors, or NULL after a failed check naming why.
static inline Model *load_ref_model(const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/ref/%s/model.safetensors", check_test_dir(), name);
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "%s: %s", name, err.msg);
  return m;
}

// The computed trace of `text` through m, with `target` an encoder-decoder's target sentence (or
// NULL); exits after printing `where` and the reason when the sentence cannot be traced.
static inline Trace *trace_sentence(Model *m, const char *text, const char *target, const char *where) {
  Err err = {0};
  Tokens tok, dec;
  CHECK(tokens_from_text(&tok, &m->vocab, text, 0, &err), "%s", err.msg);
  Trace *t;
  if (target) {
    CHECK(trace_decoder_tokens(&dec, m, target, 0, &err), "%s", err.msg);
    t = trace_new_seq2seq(m, &tok, &dec, &err);
    tokens_free(&dec);
  } else {
    t = trace_new(m, &tok, &err);
  }
  tokens_free(&tok);
  if (!t) {
    fprintf(stderr, "%s: %s\n", where, err.msg);
    exit(1);
  }
  model_forward(t);
  return t;
}

#endif
