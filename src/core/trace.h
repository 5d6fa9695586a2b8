// trace.h -- every value of one forward pass, by name, and the steps a learner walks through.
//
// A Trace is the record of model_forward (forward.h) on one sentence: the tokens, then one
// TraceTensor per intermediate under the dump names of DESIGN.md ("O", "X", "P", "Z",
// "l0.Q" ... "l0.out", "pred"), and the weights that fed them ("E", "l0.Wq", ...) as views into
// the model. Each tensor carries what a view needs to draw it without knowing the model: title,
// TeX formula in the course notation, shape, row and column axes, and the tensors it was
// computed from. The steps (trace->steps) are DESIGN.md's stage table, in order, for every
// layer: the lesson outline of the pass.
//
// Shapes: L tokens, V vocabulary, D model width, H heads, d_k = D/H, F feed-forward width.
// Per-head tensors (Q, K, V, S, A, AV) are [H, rows, cols], contiguous, head-major.
// Weights are shown as the notation writes them, W^q ∈ ℝ^{D×D} with Q = Z·W^q, which is the
// transpose of PyTorch's stored W[out, in]: such tensors have `transposed` set, and trace_at
// hides it.
//
// An encoder-decoder's trace (model_is_seq2seq; issue 11) holds the encoder as above on the
// source tokens (S = L of them), then "memory" [S, D] = encoder.norm of the last encoder layer's
// output, the decoder's "dec.O" [T, V_t], "dec.X", "dec.P", "dec.Z" [T, D] on its input tokens
// (dec_tokens: "<bos>" and the target's tokens, T of them), per decoder layer j "d{j}.Q" ...
// "d{j}.out" (masked self-attention [H, T, T], cross-attention "d{j}.cQ" [H, T, d_k], "d{j}.cK",
// "d{j}.cV" [H, S, d_k], "d{j}.cS", "d{j}.cA" [H, T, S], ..., residuals, LayerNorms and FFN),
// then "dec.norm" [T, D], "logits" and "pred" [T, V_t]: the names of tests/gen_ref_seq2seq.py.
//
// A Trace owns its activation block, its tensor table and a copy of the tokens; the weights it
// points at belong to the Model, which must outlive it. trace_free releases it.
//
//     Trace *t = trace_new(model, &tokens, &err);  // allocates for this L
//     model_forward(t);                            // fills every tensor
//     const TraceTensor *s = trace_find(t, "l0.A");
//     float a = trace_at(s, h, i, j);              // head h, query i, key j
#ifndef SF_TRACE_H
#define SF_TRACE_H

#include <stdbool.h>

#include "err.h"       // defines: Err
#include "model.h"     // defines: Model, ModelConfig
#include "stages.h"    // defines: StepKind, TensorKind, TraceAxis, StageInfo
#include "tokenizer.h" // defines: Tokens

#define TRACE_MAX_INPUTS 4

typedef struct {
  char name[24]; // dump name: "l0.S"; weights: "l0.Wq"
  TensorKind kind;
  int layer;       // 0-based layer, or -1 outside the layers
  int heads;       // 1, or H for per-head tensors
  bool per_head;   // [H, rows, cols] with a head axis, even when H == 1 (Q, K, V, S, A, AV)
  int rows, cols;  // shape of one head's matrix, as displayed
  float *data;     // heads·rows·cols floats (or the stored transpose, see `transposed`)
  int stride;      // floats between rows of the stored matrix
  bool transposed; // data holds the displayed matrix's transpose (PyTorch's W[out,in])
  bool is_weight;  // a model parameter, not an activation (not dumped)
  bool extra;      // dumped, but not one of the required stage files
  TraceAxis row_axis, col_axis;
  const char *title;            // "Attention weights"
  const char *symbol;           // TeX of the matrix's name: "A_h"
  const char *tex;              // TeX of how it is computed: "A_h = \\operatorname{softmax}(S_h)"
  int inputs[TRACE_MAX_INPUTS]; // indices of the tensors it was computed from
  int n_inputs;
} TraceTensor;

typedef struct {
  StepKind kind;
  int layer;        // -1 before the layers
  int result;       // index of the tensor the step produces (for STEP_TOKENS: -1)
  const char *name; // the stage's title: "softmax" (stage_info(kind) has the rest)
} TraceStep;

// Indices into the tensor table of one layer's tensors (-1 where the configuration has none),
// so the forward pass and the views reach them without looking names up.
typedef struct {
  int in, Wq, Wk, Wv, bq, bk, bv, Q, K, V, S_raw, S, A, AV, concat, Wo, bo, attn, res1;
  int norm1, norm1_g, norm1_b, W1, b1, ffn_pre, ffn_hidden, W2, b2, ffn, res2, norm2, norm2_g, norm2_b, out;
  // today's decoders (model_is_modern; -1 else): RMSNorm before attention and its gain, Q and K
  // before RoPE (after any QK-norm, with its gains), RMSNorm before the FFN, the gate's weights,
  // the gate and up products. Q and K are then after RoPE, K and V have H_kv heads, W1 is "up".
  int rms1, rms1_g, Q_norope, K_norope, q_norm_g, k_norm_g, rms2, rms2_g, Wg, gate, up;
  int rms1_r, rms2_r; // each row's rms √(mean(x²) + ε) [L, 1] of the two RMSNorms' inputs (extra)
} TraceLayer;

// The same for a decoder layer of an encoder-decoder: masked self-attention (the encoder's names),
// cross-attention (c*), three residuals and LayerNorms (post-norm: normK after the K-th residual;
// pre-norm: normK before the K-th sub-layer), the FFN.
typedef struct {
  int in, Wq, Wk, Wv, bq, bk, bv, Q, K, V, S_raw, S, A, AV, concat, Wo, bo, attn, res1;
  int cWq, cWk, cWv, cbq, cbk, cbv, cQ, cK, cV, cS, cA, cAV, cconcat, cWo, cbo, cattn, res2;
  int norm1, norm1_g, norm1_b, norm2, norm2_g, norm2_b, norm3, norm3_g, norm3_b;
  int W1, b1, ffn_pre, ffn_hidden, W2, b2, ffn, res3, out;
} TraceDecLayer;

typedef struct {
  const Model *model;
  ModelConfig cfg; // copy of model->cfg
  int L;
  Tokens tokens;  // owned copy
  TraceTensor *t; // the tensor table
  int n;
  TraceStep *steps;
  int n_steps;
  TraceLayer *layers;                       // [n_layers]
  int O, E, X, P, Z;                        // indices of the stages before the layers
  int final_norm, Wout, bout, logits, pred; // prediction head, -1 without one (bout: without a bias)
  // The canonical extensions (model.h), -1 where the model has none:
  int t0;        // token type row t₀ [1, D] (a view of the model's table)
  int embed_sum; // X + P (+ t₀) [L, D] before the embedding LayerNorm (then Z is its LN)
  int Wt, bt, head_hidden, head_norm; // BERT's transform: act(x·W_t + b_t), then its LayerNorm [L, D]
  int enc_norm, pool;                 // a classifier's final LayerNorm [L, D], its mean over positions [1, D]
  int Wc, bc, class_logits, class_pred; // classifier weights [D, C], bias [1, C]; scores, softmax [1, C]
  int rope_angle;                       // RoPE's angles i·θ_k [L, d_k/2] (extra), -1 without RoPE
  float *rope_cs;                       // their cosines and sines [L, d_k] (a row: d_k/2 of each), or NULL
  float *block;                         // all activations, one allocation
  long block_floats;
  float *scratch; // [L, 3D]: the fused Q|K|V product before it is split into heads
  // Per head, K_h and V_h packed for the packed-weight kernel (gemm.h: gemm_packed_floats(L, d_k)
  // + gemm_packed_floats(d_k, L) floats a head, 64-byte aligned); NULL without AVX2 + FMA.
  float *attn_packed;
  bool pos_ready; // P depends on L and D only: filled by the first forward
  // An encoder-decoder's decoder side (T == 0, dec_layers NULL and -1s for an encoder):
  int T;                                // the decoder's input length: <bos> + the target's tokens
  Tokens dec_tokens;                    // owned copy, ids in model->tgt_vocab
  TraceDecLayer *dec_layers;            // [n_dec_layers]
  int memory, memory_g, memory_b;       // memory = encoder.norm(last encoder output) [S, D]
  int dO, dE, dX, dP, dZ;               // the decoder's embedding stages: dec.O [T, V_t] ... dec.Z [T, D]
  int dec_norm, dec_norm_g, dec_norm_b; // decoder.norm [T, D], before the head
  // Set by generate.c when it has copied in, from the first generation step's trace on the same
  // source, every encoder tensor, memory and each decoder layer's K^c, V^c: model_forward then
  // computes the decoder only (the K and V of memory are computed once per layer, not per step).
  bool memory_ready;
  // What-if edits (edits.h): the list and head switches model_forward applies, or NULL; and the
  // edited copy of the model that `model` then points at, or NULL. Both owned (trace_free).
  struct TraceEdits *edits;
  struct Model *own_model;
  void (*own_model_free)(struct Model *m); // how own_model is freed (edits.h: edits_model_free)
  // The temperature of the prediction: pred = softmax(logits / temperature) (0, as made by
  // trace_new, means 1: torch's plain softmax). The window changes it (forward_set_temperature).
  float temperature;
  // The √d_k experiment (issue 21): when set, the encoder's scores are S_h = Q_h K_hᵀ without the
  // 1/√d_k (model_forward and backward_run both); false for every model's own pass.
  bool no_scale;
} Trace;

// Allocates a trace for `tokens` through `model` (copies the tokens). Fails on memory, when the
// stages would take more than the memory available (mem_available; a long sentence through many
// heads: H·L² per score stage; a long one through a large vocabulary: L·V for O, logits, pred),
// and when a model with learned positions gets more tokens than its table has rows.
Trace *trace_new(const Model *model, const Tokens *tokens, Err *err);
// The same for an encoder-decoder: `tokens` the source, `dec_tokens` the decoder's input (ids in
// model->tgt_vocab, from trace_decoder_tokens). For an encoder, dec_tokens must be NULL; for an
// encoder-decoder trace_new (dec_tokens NULL) fails with a message.
Trace *trace_new_seq2seq(const Model *model, const Tokens *tokens, const Tokens *dec_tokens, Err *err);
// The decoder's input for a target sentence: "<bos>" followed by target's words, tokenized as a
// sentence is, against model->tgt_vocab (an empty target gives "<bos>" alone). At most
// max_tokens tokens in all (<= 0: no limit). False with a message on a bad text.
bool trace_decoder_tokens(Tokens *out, const Model *model, const char *target, int max_tokens, Err *err);
void trace_free(Trace *t);
// Gives t new tokens of the same length (t->L): the window reuses the trace while a sentence is
// edited without changing its number of words. Returns false (t unchanged) on another length.
bool trace_set_tokens(Trace *t, const Tokens *tokens, Err *err);

const TraceTensor *trace_find(const Trace *t, const char *name); // NULL when absent
int trace_index(const Trace *t, const char *name);               // -1 when absent
// True for tensors with a head axis ([H, rows, cols] even when H == 1): Q, K, V, S, A, AV.
bool trace_per_head(const TraceTensor *x);
// The dump's shape of x: 3 dims for per-head tensors, else 2. Returns ndim.
int trace_dump_shape(const TraceTensor *x, int shape[3]);
// Element (i, j) of head h of the displayed matrix.
float trace_at(const TraceTensor *x, int h, int i, int j);
// The tokens as the model sees them ("<unk>" for unknown words), one per line: the content of
// tokens.txt in dumps and exports. malloc'd, *len bytes (NULL when out of memory).
char *trace_tokens_lines(const Trace *t, size_t *len);
// The same for an encoder-decoder's decoder input (dec_tokens.txt); NULL for an encoder.
char *trace_dec_tokens_lines(const Trace *t, size_t *len);
// True when vocabulary word `id` is one of the sentence's tokens.
bool trace_uses_word(const Trace *t, int id);
// The word entry i of an axis of words stands for (token, vocabulary word, class name), borrowed
// from the trace and its model; NULL for an axis whose labels depend on its length alone (the
// mean row, dimensions).
const char *trace_axis_word(const Trace *t, TraceAxis axis, int i);
// A label for index i along an axis: the token word, the vocabulary word or the number (a dimension,
// a hidden unit: i + 1, counted from 1 as everywhere a teacher reads or writes).
// Writes into buf (cap bytes) and returns it.
const char *trace_axis_label(const Trace *t, TraceAxis axis, int i, char *buf, int cap);
const char *trace_axis_name(TraceAxis axis); // "token", "dimension", ...
// The number a learner sees for step `step`: stages are counted in the stage table's order among
// those this model has (an encoder has no mask stage, a model without a head no prediction), so
// they run 1, 2, 3 … without a gap; a half stage (pre-norm's LayerNorm before attention) takes
// the number of the stage before it, shown with "½" (stage_info(kind)->half). *total (when not
// NULL) is the number of whole stages. `stepformer stages`, the window and the exports agree.
int trace_stage_number(const Trace *t, int step, int *total);
// Appends the similarity stage (STEP_SIM, one step per layer, no tensor of its own: it is drawn
// from this trace and a second sentence's, similarity.h) when the session compares two
// sentences. An encoder's trace only; a second call does nothing. False when out of memory.
bool trace_add_sim_steps(Trace *t);
// The index in t->steps of the step of this kind (in this layer, for layer stages), or -1.
int trace_step_find(const Trace *t, StepKind k, int layer);

#endif
