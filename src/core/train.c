// train.c -- see train.h.
#include "train.h"

#include <math.h>
#include <stdlib.h>

#include "forward.h" // defines: model_forward

Model *train_sgd_step(const Model *m, const TraceGrad *g, float lr, Err *err) {
  EXPECT(g->n_params == m->n_params);
  float *p = model_weights_flat(m); // θ, in the order of the gradients (model_param_offset)
  if (!p) return err_set(err, "out of memory for the step"), NULL;
  for (long k = 0; k < m->n_params; k++) { // θ ← θ − η·dL/dθ
    p[k] -= lr * g->dparams[k];
    if (!isfinite(p[k])) {
      free(p);
      return err_set(err, "the step with η = %g gives a weight that is not finite: take a smaller η",
                     (double)lr),
             NULL;
    }
  }
  Model *next = model_with_params(m, p, err);
  free(p);
  return next;
}

float train_loss(const Model *m, const Tokens *tokens, const int *target, int n_target, bool no_scale,
                 Err *err) {
  Trace *t = trace_new(m, tokens, err);
  if (!t) return NAN;
  t->no_scale = no_scale;
  model_forward(t);
  float loss = backward_loss(t, target, n_target);
  trace_free(t);
  return loss;
}
