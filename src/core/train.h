// train.h -- the update of one training step: W ← W − η·dL/dW, into a copy of the model (issue 21).
//
// The model as loaded never changes: a step makes a new model (model_with_params) whose parameter
// block is the old one minus η times the gradient; several steps chain copies, and undoing them
// is going back to the model as loaded.
//
//     TraceGrad *g = backward_new(t, NULL, 0, &err);  backward_run(g);
//     Model *m1 = train_sgd_step(t->model, g, 0.1f, &err);     // one step, η = 0.1
//     Trace *t1 = trace_new(m1, &t->tokens, &err);  model_forward(t1);
//     float after = backward_loss(t1, NULL, 0);
//     trace_free(t1); model_with_params_free(m1);
#ifndef SF_TRAIN_H
#define SF_TRAIN_H

#include "backward.h" // defines: TraceGrad
#include "model.h"    // defines: Model

#define TRAIN_DEFAULT_LR 0.1f // the learning rate η of `dump --train` without --lr

// The model after one SGD step with learning rate lr from m (the model g was computed on).
// Free with model_with_params_free. NULL with a message on memory or a non-finite result.
Model *train_sgd_step(const Model *m, const TraceGrad *g, float lr, Err *err);

// The loss of `tokens` through model m for targets (backward_new's meaning), by a forward of its
// own (no_scale: scores without 1/√d_k, as Trace.no_scale): the loss after a step. NaN with a
// message on failure.
float train_loss(const Model *m, const Tokens *tokens, const int *target, int n_target, bool no_scale,
                 Err *err);

#endif
