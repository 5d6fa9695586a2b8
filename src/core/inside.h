// inside.h -- looking inside a finished pass (issue 36): the logit lens, attention rollout, input
// saliency and the FFN's neurons, each computed from a Trace after model_forward, on the model's
// own weights. None of them changes the trace.
//
// Shapes: L tokens, V vocabulary, D width, F feed-forward width, N layers (cfg.n_layers). Layers
// are counted from 0 here and in the dump names (lens.l0 is after the first layer, as l0.out is);
// the window counts them from 1.
//
//   Logit lens (nostalgebraist 2020; tuned-lens's LogitLens): p̂_ℓ = softmax(head(h_ℓ)) for every
//   layer output h_ℓ = l{ℓ}.out [L, D], through the model's own head: its final LayerNorm (when it
//   has one), BERT's transform (when it has one), the unembedding W_out and its bias, temperature
//   1. The last layer's equals pred (at temperature 1). A classifier's lens is its class scores
//   on each layer's output: softmax(W_c · mean_i LN(h_ℓ)_i + b_c) [1, C].
//   Rollout (Abnar & Zuidema 2020): Â_ℓ = 0.5·mean_h A_ℓ + 0.5·I, each row renormalized to sum 1;
//   R_0 = Â_0, R_ℓ = Â_ℓ R_{ℓ−1} [L, L] (computed in double). A causal model's masked entries stay 0.
//   Saliency, gradient × input (Ecco's): s_j = ‖(∂ log p̂[pos, target] / ∂X_j) ⊙ X_j‖₂ over the
//   D dimensions, X = O·E the token embeddings before positions, normalized to sum 1 over j. Taken
//   through the backward pass (backward.h) with the one target; a tied head's E stays a constant.
//   Neurons: the top-k hidden units of l{ℓ}.ffn_hidden at one position, and what a unit writes
//   back: its row of W_2 (h·W_2: row n is unit n's direction in the residual stream) through the
//   final norm and the unembedding, the tokens it promotes most.
//
//     float *p = malloc(sizeof(float) * inside_lens_floats(t));
//     inside_lens(t, p, &err);            // p[(ℓ·L + i)·V + v]
//     inside_rollout(t, R, &err);         // R[(ℓ·L + i)·L + j]
//     inside_saliency(t, -1, -1, s, &err); // the last position's top token
#ifndef SF_INSIDE_H
#define SF_INSIDE_H

#include <stdbool.h>

#include "err.h"   // defines: Err
#include "trace.h" // defines: Trace

// The views of a pass from inside, as lessons (stage=lens ...), file names and the window name
// them; the render layer draws them (view_inside.c).
typedef enum {
  INSIDE_NONE,
  INSIDE_LENS,     // "lens" (also "logit-lens")
  INSIDE_ROLLOUT,  // "rollout"
  INSIDE_HEADVIEW, // "headview" (also "head-view")
  INSIDE_SALIENCY, // "saliency"
  INSIDE_NEURONS,  // "neurons"
  INSIDE_KVCACHE,  // "kvcache" (also "kv-cache"): what generation keeps per token and layer
  INSIDE_STORED,   // "stored" (also "weights-as-stored", "quantized"): a quantized GGUF model's weights
                   // as the file holds them, one block at a time (stored.h; the window reads the file)
  INSIDE_COUNT
} InsideView;
const char *inside_view_name(InsideView k);     // "" for INSIDE_NONE
InsideView inside_view_parse(const char *name); // INSIDE_NONE when unknown
// Whether view k can be drawn for t: a lens needs a head or a classifier, saliency a head and an
// unedited pass; an encoder-decoder has none of them yet.
bool inside_view_available(const Trace *t, InsideView k);
// True when t has something to read the lens through (a prediction head or a classifier); an
// encoder-decoder's lens is not computed yet (false).
bool inside_has_lens(const Trace *t);
// Floats of the lens: N·L·V for a head, N·C for a classifier (0 without either).
long inside_lens_floats(const Trace *t);
// The width of one lens row: V, or C for a classifier.
int inside_lens_cols(const Trace *t);
// Fills p [N, L, V] (a classifier: [N, 1, C]). False with a message when t has no head.
bool inside_lens(const Trace *t, float *p, Err *err);
// Fills R [N, L, L] with the rollout after each layer.
bool inside_rollout(const Trace *t, float *R, Err *err);
// s [L]: the saliency of each input token for log p̂[pos, target]; pos −1: the last position,
// target −1: the top token of pred at pos. *pos_out and *target_out (when not NULL) get what was
// used. False with a message: no head, an encoder-decoder, an edited trace, a bad pos or target.
bool inside_saliency(const Trace *t, int pos, int target, float *s, int *pos_out, int *target_out, Err *err);
// The k largest activations of l{layer}.ffn_hidden at position pos: idx[k] units, act[k] values,
// largest first (ties: the smaller index first). Returns how many (k, or F when F < k).
int inside_top_neurons(const Trace *t, int layer, int pos, int k, int *idx, float *act);
// The k tokens unit `neuron` of `layer` promotes most: ids[k], logit[k] of head(row n of W_2)
// (the final norm applied when the model has one). Returns how many; 0 without a head.
int inside_neuron_tokens(const Trace *t, int layer, int neuron, int k, int *ids, float *logit);

#endif
