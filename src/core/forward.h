// forward.h -- the encoder's forward pass, one named stage at a time, into a Trace.
//
// forward.c and trace.c are one module, the traced forward (the one circle of src/core): trace.c
// lays out the tensors forward.c fills, and reads forward_use_gemm to know which layout the
// products will read.
//
// model_forward computes every tensor of the trace (trace.h) from the trace's tokens and model:
// one-hot O, embeddings X = O·E, positions P, Z = X + P, then for each layer the attention
// (Q, K, V split into heads, S = QKᵀ/√d_k, optional causal mask, A = softmax(S), A·V, concat,
// ·W^o), the residuals and LayerNorms (post-norm or pre-norm) and the feed-forward network, and,
// when the model has one, the prediction head; for an encoder-decoder (trace.h), then memory, the
// decoder's embeddings and layers (masked self-attention, cross-attention over memory, FFN, three
// residuals and LayerNorms) and the prediction over the target vocabulary. Nothing is allocated: the trace
// holds all memory (with two threads, the second thread is started on first use). Results match PyTorch's
// nn.TransformerEncoderLayer in float32 to about 1e-6.
//
//     Trace *t = trace_new(model, &tokens, &err);
//     model_forward(t);
#ifndef SF_FORWARD_H
#define SF_FORWARD_H

#include <stdbool.h>

#include "err.h"   // defines: Err
#include "trace.h" // defines: Trace

void model_forward(Trace *t);

// The prediction at temperature T > 0: sets t->temperature and recomputes every row of pred as
// softmax(logits / T) from the logits already computed (no forward pass; a trace without a
// prediction head only keeps T). T = 1 gives the same bits as model_forward's softmax(logits).
void forward_set_temperature(Trace *t, float T);

// ---- one token at a time with a per-layer key/value cache (a causal model with a head)
//
// Generating the next token needs only the new token's row of every stage: the rows before it do
// not change (causal attention), and its attention needs only every layer's K and V of the tokens
// before. A KVCache keeps those, [n_layers][H][cap][d_k] each, so that kv_push costs one row of each
// product plus one row of attention (O(L·D) for the scores instead of O(L²·D), and no full trace).
// The row goes through the same functions as model_forward's (linear, add_norm, softmax), so the
// logits equal those of a full trace's last row to float rounding (tests/test_generate.c: 1e-5).
//
//     KVCache c;
//     kv_init(&c, model, 64, &err);
//     kv_fill(&c, trace);        // the keys and values of a computed trace's L tokens
//     kv_push(&c, next_id);      // token L: c.logits [V] are the logits after it
//     kv_free(&c);
typedef struct {
  const Model *model;
  int n, cap;    // tokens cached, room for
  float *k, *v;  // [n_layers][H][cap][d_k]
  float *logits; // [V] after the last token pushed (or the filled trace's last row)
  float *row;    // scratch for one token's stages
} KVCache;

bool kv_init(KVCache *c, const Model *m, int cap, Err *err); // a causal model with a head
void kv_free(KVCache *c);
// Takes the keys and values of every layer and the last row of logits from t (computed, on the
// same model, at most cap tokens): n becomes t->L.
void kv_fill(KVCache *c, const Trace *t);
// Token id at position n: its row through the embedding and every layer (its K and V appended to
// the cache), then the head: c->logits. n < cap and, with learned positions, n < max_pos (checked
// by the caller).
void kv_push(KVCache *c, int id);

// RoPE of one head's row v[d_k] as if at position pos (the model's own angles and convention): the
// views show with it that a score depends on the distance only, R_{i+s}q · R_{j+s}k = R_i q · R_j k.
void forward_rope_at(float *v, int pos, const ModelConfig *c);

// Threads model_forward may use: 1 (the default; machines are shared) or 2. With 2 it splits
// products by columns, attention by heads and row-wise stages by rows (par.h); BLAS products
// cut into column blocks may then round differently in the last bit (about 1e-6 relative).
// Either way BLAS itself is set to one thread (mat_set_blas_threads(1)): two threads each
// calling a threaded BLAS would fight over the cores. The first model_forward applies the
// default if this was never called.
void forward_set_threads(int n);

// Which kernel multiplies. With the model's weights packed (model.h: machines with AVX2 and
// FMA), every linear layer (QKV, output projection, FFN1, FFN2) of more than
// mat_naive_max_madds multiply-adds runs gemm_matmul_t (gemm.h), which reads the packed weights
// and also writes FFN1's ReLU, whatever the number of tokens; so do attention's QKᵀ and A·V,
// from K_h and V_h packed once per head into the trace. Smaller products, and all of them
// without AVX2 + FMA or with forward_use_gemm false (tests), go to mat_matmul_t / mat_matmul
// (loop kernels or BLAS). gemm_matmul_t rounds each output the same way whatever the column
// split, so these products give the same bits on one thread and on two.
extern bool forward_use_gemm;

// The sinusoidal positional encoding of Vaswani et al. into P[L, D], computed in double and
// rounded to float: P[i,2k] = sin(i / 10000^(2k/D)), P[i,2k+1] = cos(i / 10000^(2k/D)).
void forward_posenc(float *P, int L, int D);

#endif
