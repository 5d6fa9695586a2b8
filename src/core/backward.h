// backward.h -- one training step's gradients: the loss, then back through every stage (issue 21).
//
// A TraceGrad belongs to one forward Trace (model_forward has run) and holds
//   - the targets and the loss: for a model with a prediction head, the mean cross-entropy of the
//     prediction at the positions that have a target (by default positions 1 … L−1 in the course's
//     counting: position i predicts token i+1, the last has no target), L = −(1/N) Σᵢ log p̂ᵢ[yᵢ];
//     for a classifier, −log p̂[c] of the class label c;
//   - dL/dT for every activation T of the trace (the same shape as T: [H, rows, cols] for the
//     per-head tensors Q, K, V, S, A, AV; [rows, cols] else), under T's index: d[k]. A tensor that
//     is a view of another (a layer's "in" is the previous "out"; pre-norm's "out" is "res2")
//     shares its gradient buffer. pred has none: the loss is taken from the logits (p̂ − y);
//   - dL/dθ for every parameter θ of the model, laid out exactly as model->params (so a weight's
//     gradient is at the same offset as the weight: backward_param_grad). A tied head's E gets
//     both contributions.
// Everything is float32. The products run on the forward's packed kernel where one runs
// (gemm_grad.h: AVX-512, AVX2, wasm SIMD128; else BLAS with one BLAS thread, or loops), the
// activations' derivatives and LayerNorm's backward on vectors (grad_rows.h: LayerNorm's row
// statistics in double), other row sums in double, each in a fixed order. The loss and d logits
// read the trace's softmax (pred). With forward_set_threads(2) the heads of a layer and blocks of
// each product's columns (dX) or rows (dW) are shared between the two threads (par.h): each
// gradient entry is summed in the same order whichever thread takes its block, so the gradients of
// a given forward are the same bits on one and on two.
//
// The backward of each stage is one function in backward.c, written from its formula (the head and
// softmax-cross-entropy p̂ − y; the FFN with ReLU's mask or GELU's derivative; LayerNorm's mean- and
// variance-terms; the residuals; W^o; the concatenation split back into heads; A·V; the softmax
// Jacobian dS = A ∘ (dA − rowsum(dA ∘ A)), masked entries exactly 0; the 1/√d_k; QKᵀ; the
// projections; the embeddings and positions), called in the reverse of the forward's order.
//
// Encoders with a head or a classifier (post- and pre-norm, ReLU / GELU / GELU-tanh, causal or not,
// learned or sinusoidal positions, token types, the embedding LayerNorm, BERT's head transform, a
// tied head), and today's decoders (issue 34: RMSNorm and Gemma's 1 + g, RoPE turned back by −φ,
// grouped K/V heads collecting their query heads' gradients, QK-norm, the gated FFN with SiLU or
// GELU, Q/K/V biases; no gradient for the RoPE angles and the rows' rms, extras no stage reads).
// Not yet: an encoder-decoder (backward_new refuses it with a message), a trace with what-if edits.
//
//     TraceGrad *g = backward_new(t, NULL, 0, &err);   // default targets: the next token
//     backward_run(g);                                  // g->loss, g->d[k], g->dparams
//     const float *dWq = backward_param_grad(g, t->model->layers[0].in_proj_weight);
//     backward_free(g);
#ifndef SF_BACKWARD_H
#define SF_BACKWARD_H

#include <stdbool.h>

#include "err.h"   // defines: Err
#include "trace.h" // defines: Trace

typedef struct GradRegion GradRegion;

typedef struct {
  const Trace *t;
  int *target;   // [L] the target word of each position (a vocabulary id), -1: none; a classifier: [1]
  int n_targets; // positions with a target (the N of the mean)
  float loss;
  float **d;                  // [t->n] dL/dT of activation k, NULL for weights (and pred)
  bool *d_own;                // [t->n] d[k] is a buffer of its own (not a view's shared one)
  float *dparams;             // [model->n_params] dL/dθ, laid out as model->params
  long n_params;              //
  struct GradRegion *regions; // (backward.c's) the weight matrices a product writes whole
  int n_regions;
} TraceGrad;

// Allocates the gradients of trace t (the forward must have run, on the model's own weights). target:
// L ids (−1: no target at that position) or, for a classifier, one class index; NULL: the defaults
// (the next token; a classifier has none: its label must be given). False (NULL) with a message: an
// encoder-decoder, an edited trace, a model without a head or classifier, one token, no target.
TraceGrad *backward_new(const Trace *t, const int *target, int n_target, Err *err);
// The loss and every gradient (all of them recomputed from zero). Returns g->loss.
float backward_run(TraceGrad *g);
void backward_free(TraceGrad *g);
// dL/dθ for the weight array that starts at p (a pointer into the model's parameter block, such as
// model->layers[0].in_proj_weight), laid out as that array; NULL when p is not in the block.
const float *backward_param_grad(const TraceGrad *g, const float *p);
// The loss of trace t for targets (same meaning as backward_new) without the gradients; NaN when
// t has no head or classifier.
float backward_loss(const Trace *t, const int *target, int n_target);

// Parses --labels against t: for a model with a head, L comma-separated words, one per position
// (the word position i should predict; "-" for none): "cat,walks,-"; for a classifier, one class
// (its name or its number 1..C). Writes ids into target (room for t->L) and their count.
bool backward_parse_labels(const Trace *t, const char *spec, int *target, int *n_target, Err *err);

#endif
