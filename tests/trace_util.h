// trace_util.h -- small readers the model tests share (test_bank_model.c, test_shipped_seq2seq.c,
// test_generate.c): a model's metadata by key, the largest column of a trace tensor's row, and a
// reference model of tests/ref/ loaded with a failed check when it cannot be.
//
//     Model *m = load_ref_model("head");                   // tests/ref/head/model.safetensors
//     const char *layer = model_meta(m, "sense_layer");    // NULL when absent
//     int next = argmax_row(trace_find(t, "pred"), 0, t->L - 1);
#ifndef SF_TEST_TRACE_UTIL_H
#define SF_TEST_TRACE_UTIL_H

#include <stdio.h>
#include <string.h>

#include "check.h"
#include "model.h"      // defines: Model
#include "model_load.h" // defines: model_load
#include "trace.h"      // defines: TraceTensor, trace_at

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

#endif
