// trace.c -- see trace.h. Builds the tensor table (names, shapes, notation) and carves the
// activation block; forward.c fills the numbers.
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "editlist.h"     // defines: edits_free
#include "forward.h"      // defines: forward_use_gemm
#include "gemm.h"         // defines: gemm_supported, gemm_packed_floats
#include "memsize.h"      // defines: mem_available, mem_max_floats, mem_human
#include "mat.h"          // defines: mat_naive_max_madds
#include "model_tokens.h" // defines: model_tokenize_target
#include "stages.h"       // defines: stage_info, stage_notation

typedef struct {
  Trace *t;
  long *own; // floats each tensor needs in the activation block (0 for views)
  int cap;
  int holds;   // StageWhen flags true of the model (and of the layer being built)
  char prefix; // a layer's tensors are named prefix + layer + "." + name: 'l' encoder, 'd' decoder
} Builder;

// A tensor of the table, its notation from stages.c: `name` is the dump name without the layer
// prefix ("A"; in layer 2 it becomes "l2.A").
static int add(Builder *b, const char *name, int layer, bool per_head, int rows, int cols) {
  Trace *t = b->t;
  EXPECT(t->n < b->cap);
  const TensorNotation *nt = stage_notation(name, b->holds);
  EXPECT(nt != NULL); // every tensor has a row in stages.c
  int i = t->n++;
  TraceTensor *x = &t->t[i];
  memset(x, 0, sizeof *x);
  if (layer >= 0)
    snprintf(x->name, sizeof x->name, "%c%d.%s", b->prefix, layer, name);
  else
    snprintf(x->name, sizeof x->name, "%s", name);
  x->kind = nt->kind;
  x->layer = layer;
  x->heads = per_head ? t->cfg.H : 1;
  x->per_head = per_head;
  x->rows = rows;
  x->cols = cols;
  x->stride = cols;
  x->row_axis = nt->rows;
  x->col_axis = nt->cols;
  x->extra = nt->extra;
  x->title = nt->title;
  x->symbol = nt->symbol;
  x->tex = nt->tex;
  b->own[i] = (long)x->heads * rows * cols;
  return i;
}

// A tensor that shares memory owned elsewhere (a weight, or another tensor's values).
static int add_view(Builder *b, const char *name, int layer, int rows, int cols, float *data,
                    bool transposed) {
  int i = add(b, name, layer, false, rows, cols);
  TraceTensor *x = &b->t->t[i];
  x->data = data;
  x->transposed = transposed;
  x->stride = transposed ? rows : cols;
  x->is_weight = data != NULL && x->kind != T_LAYER_IN;
  b->own[i] = 0;
  return i;
}

static void inputs(Trace *t, int i, int a, int b, int c, int d) {
  int in[4] = {a, b, c, d};
  TraceTensor *x = &t->t[i];
  x->n_inputs = 0;
  for (int k = 0; k < 4; k++)
    if (in[k] >= 0) x->inputs[x->n_inputs++] = in[k];
}

static void step(Trace *t, StepKind k, int layer, int result) {
  t->steps[t->n_steps++] = (TraceStep){k, layer, result, stage_info(k)->title};
}

// The StageWhen flags of the model (GELU's tanh form holds WHEN_GELU too: what differs is in the
// rows marked WHEN_GELU_TANH, which come first).
static int model_holds(const Model *m) {
  const ModelConfig *c = &m->cfg;
  Activation a = c->activation;
  return (c->norm_first ? WHEN_PRE_NORM : WHEN_POST_NORM) | (c->causal ? WHEN_CAUSAL : WHEN_NOT_CAUSAL) |
         (a == ACT_GELU        ? WHEN_GELU
          : a == ACT_GELU_TANH ? WHEN_GELU | WHEN_GELU_TANH
                               : WHEN_RELU) |
         (c->learned_pos ? WHEN_LEARNED_POS
          : c->no_pos    ? WHEN_NO_POS
                         : WHEN_SINUSOIDAL) |
         (m->has_embed_norm ? WHEN_EMBED_NORM : 0) | (m->no_in_proj_bias ? WHEN_NO_BIAS : 0) |
         (m->no_out_proj_bias ? WHEN_NO_OUT_BIAS : 0) |
         (m->token_type ? WHEN_TOKEN_TYPE : WHEN_NO_TOKEN_TYPE) | (m->tie_head ? WHEN_TIED_HEAD : 0) |
         (m->has_head && !m->head_bias ? WHEN_NO_HEAD_BIAS : 0) | (model_q_scaled(m) ? WHEN_Q_SCALED : 0) |
         ((m->has_head || m->has_classifier) && !m->has_final_norm && !m->has_head_transform
              ? WHEN_HEAD_READS_Z
              : 0) |
         (model_is_modern(c) ? WHEN_MODERN : 0) | (c->qk_norm ? WHEN_QK_NORM : 0) |
         (c->activation == ACT_SILU ? WHEN_SILU : 0) | (c->rope ? WHEN_ROPE : 0) |
         (c->rms_norm && c->rms_offset ? WHEN_RMSNORM_OFFSET : 0);
}

// A LayerNorm of the layer being built, with its gain and shift: norm `k` (1, 2, 3) of tensor `in`
// [rows, D].
static int add_norm(Builder *b, int l, int k, const float *gain, const float *shift, int rows, int in, int *g,
                    int *be) {
  char name[24];
  snprintf(name, sizeof name, "norm%d.gamma", k);
  *g = add_view(b, name, l, 1, b->t->cfg.D, (float *)gain, false);
  snprintf(name, sizeof name, "norm%d.beta", k);
  *be = add_view(b, name, l, 1, b->t->cfg.D, (float *)shift, false);
  snprintf(name, sizeof name, "norm%d", k);
  int i = add(b, name, l, false, rows, b->t->cfg.D);
  inputs(b->t, i, in, *g, *be, -1);
  return i;
}

// Where one attention block's tensor indices go: fields of a TraceLayer or a TraceDecLayer
// (S_raw NULL for a block without a mask).
typedef struct {
  int *Wq, *Wk, *Wv, *bq, *bk, *bv, *Q, *K, *V, *S_raw, *S, *A, *AV, *concat, *Wo, *bo, *attn;
} AttnSlots;

// The self-attention fields of y, a TraceLayer or a TraceDecLayer (both name them alike).
#define SELF_ATTN_SLOTS(y)                                                                                   \
  ((AttnSlots){&(y)->Wq, &(y)->Wk, &(y)->Wv, &(y)->bq, &(y)->bk, &(y)->bv, &(y)->Q, &(y)->K, &(y)->V,        \
               &(y)->S_raw, &(y)->S, &(y)->A, &(y)->AV, &(y)->concat, &(y)->Wo, &(y)->bo, &(y)->attn})

// A layer matrix's view [rows, cols] as the forward multiplies it (x·W): the transpose of the
// stored W[out, in] (rows off.. of canon), or a GPT-2 checkpoint's Conv1D layout [in, out] read in
// place (columns off.. of xw, whose stored rows hold xw_cols floats).
static int weight_view(Builder *b, const char *name, int l, int rows, int cols, float *canon, float *xw,
                       int xw_cols, size_t off) {
  if (!xw) return add_view(b, name, l, rows, cols, canon + off * (size_t)rows, true);
  int i = add_view(b, name, l, rows, cols, xw + off, false);
  b->t->t[i].stride = xw_cols;
  return i;
}

// One attention block of layer l, in the order of its stages, named `pre` + the self-attention's
// names ("c": "cWq" ... "cattn"): W^q, W^k, W^v, views of in_w [3D, D] (PyTorch's in_proj_weight,
// whose rows 0..D-1 are W^q's columns), and b^q, b^k, b^v from in_b [3D] (none when NULL); Q
// [H, Lq, d_k] from tensor q_in, K and V [H, Lk, d_k] from kv_in; the scores (masked: S_raw
// before the mask, then S) and A [H, Lq, Lk], AV, concat [Lq, D]; W^o, b^o (none when NULL), attn.
// in_xw, out_xw: the two matrices in a GPT-2 checkpoint's Conv1D layout (model.h), viewed in place
// instead; NULL else.
static void add_attention(Builder *b, int l, const char *pre, AttnSlots y, int q_in, int Lq, int kv_in,
                          int Lk, bool masked, float *in_w, float *in_xw, float *in_b, float *out_w,
                          float *out_xw, float *out_b) {
  Trace *t = b->t;
  int D = t->cfg.D, dk = D / t->cfg.H;
  char n[24];
#define NAME(s) (snprintf(n, sizeof n, "%s%s", pre, s), n)
  *y.Wq = weight_view(b, NAME("Wq"), l, D, D, in_w, in_xw, 3 * D, 0);
  *y.Wk = weight_view(b, NAME("Wk"), l, D, D, in_w, in_xw, 3 * D, (size_t)D);
  *y.Wv = weight_view(b, NAME("Wv"), l, D, D, in_w, in_xw, 3 * D, (size_t)2 * D);
  if (in_b) { // absent: Q = Z W^q (the course's bias-free projections)
    *y.bq = add_view(b, NAME("bq"), l, 1, D, in_b, false);
    *y.bk = add_view(b, NAME("bk"), l, 1, D, in_b + D, false);
    *y.bv = add_view(b, NAME("bv"), l, 1, D, in_b + 2 * D, false);
  }
  *y.Q = add(b, NAME("Q"), l, true, Lq, dk);
  *y.K = add(b, NAME("K"), l, true, Lk, dk);
  *y.V = add(b, NAME("V"), l, true, Lk, dk);
  inputs(t, *y.Q, q_in, *y.Wq, *y.bq, -1);
  inputs(t, *y.K, kv_in, *y.Wk, *y.bk, -1);
  inputs(t, *y.V, kv_in, *y.Wv, *y.bv, -1);
  int scores = *y.Q; // the scores' first input: Q, or S_raw under a mask
  if (masked) {
    *y.S_raw = add(b, NAME("S_raw"), l, true, Lq, Lk);
    inputs(t, *y.S_raw, *y.Q, *y.K, -1, -1);
    scores = *y.S_raw;
  }
  *y.S = add(b, NAME("S"), l, true, Lq, Lk);
  inputs(t, *y.S, scores, masked ? -1 : *y.K, -1, -1);
  *y.A = add(b, NAME("A"), l, true, Lq, Lk);
  inputs(t, *y.A, *y.S, -1, -1, -1);
  *y.AV = add(b, NAME("AV"), l, true, Lq, dk);
  inputs(t, *y.AV, *y.A, *y.V, -1, -1);
  *y.concat = add(b, NAME("concat"), l, false, Lq, D);
  inputs(t, *y.concat, *y.AV, -1, -1, -1);
  *y.Wo = weight_view(b, NAME("Wo"), l, D, D, out_w, out_xw, D, 0);
  if (out_b) *y.bo = add_view(b, NAME("bo"), l, 1, D, out_b, false);
  *y.attn = add(b, NAME("attn"), l, false, Lq, D);
  inputs(t, *y.attn, *y.concat, *y.Wo, *y.bo, -1);
#undef NAME
}

// The feed-forward network of layer l on tensor f_in [rows, D]: W1 [D, F], b1, ffn_pre [rows, F],
// ffn_hidden = act(ffn_pre), W2 [F, D], b2, ffn [rows, D]; their indices go to *W1 ... *ffn (the
// fields of a TraceLayer or a TraceDecLayer).
static void add_ffn(Builder *b, int l, const LayerWeights *w, int f_in, int rows, int *W1, int *b1, int *pre,
                    int *hidden, int *W2, int *b2, int *ffn) {
  Trace *t = b->t;
  int D = t->cfg.D, F = t->cfg.F;
  *W1 = weight_view(b, "W1", l, D, F, w->linear1_weight, w->linear1_xw, F, 0);
  *b1 = add_view(b, "b1", l, 1, F, w->linear1_bias, false);
  *pre = add(b, "ffn_pre", l, false, rows, F);
  inputs(t, *pre, f_in, *W1, *b1, -1);
  *hidden = add(b, "ffn_hidden", l, false, rows, F);
  inputs(t, *hidden, *pre, -1, -1, -1);
  *W2 = weight_view(b, "W2", l, F, D, w->linear2_weight, w->linear2_xw, D, 0);
  *b2 = add_view(b, "b2", l, 1, D, w->linear2_bias, false);
  *ffn = add(b, "ffn", l, false, rows, D);
  inputs(t, *ffn, *hidden, *W2, *b2, -1);
}

// A per-head tensor of `heads` heads (K and V of grouped-query attention: H_kv of them).
static int add_heads(Builder *b, const char *name, int layer, int heads, int rows, int cols) {
  int i = add(b, name, layer, true, rows, cols);
  b->t->t[i].heads = heads;
  b->own[i] = (long)heads * rows * cols;
  return i;
}

// Layer l of today's decoders (model_is_modern; issue 34), in the order of its stages: rms1 =
// RMSNorm(in); W^q, W^k, W^v (views of in_proj [(H + 2 H_kv)·d_k, D]) and their biases when there
// are; Q_norope [H, L, d_k] and K_norope [H_kv, L, d_k] (after any QK-norm), Q and K after RoPE,
// V [H_kv, L, d_k]; the causal scores S_raw, S, A [H, L, L], AV, concat [L, H·d_k], W^o, attn;
// res1, rms2 = RMSNorm(res1); W_g, gate, W_1, up [L, F], ffn_hidden = act(gate) ⊙ up, W_2, ffn,
// res2 = out.
static void add_layer_modern(Builder *b, int l, int in) {
  Trace *t = b->t;
  const ModelConfig *c = &t->cfg;
  const LayerWeights *w = &t->model->layers[l];
  int L = t->L, D = c->D, F = c->F, H = c->H, Hk = model_hkv(c), dk = model_dk(c);
  int QD = H * dk, KD = Hk * dk, QKV = QD + 2 * KD;
  TraceLayer *y = &t->layers[l];
  memset(y, -1, sizeof *y);
  b->holds = model_holds(t->model) | (l == 0 ? WHEN_FIRST_LAYER : WHEN_LATER_LAYER);
  y->in = add_view(b, "in", l, L, D, t->t[in].data, false);
  inputs(t, y->in, in, -1, -1, -1);
  y->rms1_r = add(b, "rms1.rms", l, false, L, 1);
  inputs(t, y->rms1_r, y->in, -1, -1, -1);
  y->rms1_g = add_view(b, "rms1.gamma", l, 1, D, w->norm1_weight, false);
  y->rms1 = add(b, "rms1", l, false, L, D);
  inputs(t, y->rms1, y->in, y->rms1_g, y->rms1_r, -1);
  float *iw = w->in_proj_weight, *ib = w->in_proj_bias;
  y->Wq = add_view(b, "Wq", l, D, QD, iw, true);
  y->Wk = add_view(b, "Wk", l, D, KD, iw + (size_t)QD * D, true);
  y->Wv = add_view(b, "Wv", l, D, KD, iw + (size_t)(QD + KD) * D, true);
  if (ib) {
    y->bq = add_view(b, "bq", l, 1, QD, ib, false);
    y->bk = add_view(b, "bk", l, 1, KD, ib + QD, false);
    y->bv = add_view(b, "bv", l, 1, KD, ib + QD + KD, false);
  }
  (void)QKV;
  y->Q_norope = add_heads(b, "Q_norope", l, H, L, dk);
  y->K_norope = add_heads(b, "K_norope", l, Hk, L, dk);
  if (c->qk_norm) {
    y->q_norm_g = add_view(b, "q_norm.gamma", l, 1, dk, w->q_norm_weight, false);
    y->k_norm_g = add_view(b, "k_norm.gamma", l, 1, dk, w->k_norm_weight, false);
  }
  inputs(t, y->Q_norope, y->rms1, y->Wq, y->bq, y->q_norm_g);
  inputs(t, y->K_norope, y->rms1, y->Wk, y->bk, y->k_norm_g);
  y->Q = add_heads(b, "Q", l, H, L, dk);
  y->K = add_heads(b, "K", l, Hk, L, dk);
  y->V = add_heads(b, "V", l, Hk, L, dk);
  inputs(t, y->Q, y->Q_norope, t->rope_angle, -1, -1);
  inputs(t, y->K, y->K_norope, t->rope_angle, -1, -1);
  inputs(t, y->V, y->rms1, y->Wv, y->bv, -1);
  y->S_raw = add(b, "S_raw", l, true, L, L);
  inputs(t, y->S_raw, y->Q, y->K, -1, -1);
  y->S = add(b, "S", l, true, L, L);
  inputs(t, y->S, y->S_raw, -1, -1, -1);
  y->A = add(b, "A", l, true, L, L);
  inputs(t, y->A, y->S, -1, -1, -1);
  y->AV = add(b, "AV", l, true, L, dk);
  inputs(t, y->AV, y->A, y->V, -1, -1);
  y->concat = add(b, "concat", l, false, L, QD);
  inputs(t, y->concat, y->AV, -1, -1, -1);
  y->Wo = add_view(b, "Wo", l, QD, D, w->out_proj_weight, true);
  if (w->out_proj_bias) y->bo = add_view(b, "bo", l, 1, D, w->out_proj_bias, false);
  y->attn = add(b, "attn", l, false, L, D);
  inputs(t, y->attn, y->concat, y->Wo, y->bo, -1);
  y->res1 = add(b, "res1", l, false, L, D);
  inputs(t, y->res1, y->in, y->attn, -1, -1);
  y->rms2_r = add(b, "rms2.rms", l, false, L, 1);
  inputs(t, y->rms2_r, y->res1, -1, -1, -1);
  y->rms2_g = add_view(b, "rms2.gamma", l, 1, D, w->norm2_weight, false);
  y->rms2 = add(b, "rms2", l, false, L, D);
  inputs(t, y->rms2, y->res1, y->rms2_g, y->rms2_r, -1);
  y->Wg = add_view(b, "Wg", l, D, F, w->gate_weight, true);
  y->gate = add(b, "gate", l, false, L, F);
  inputs(t, y->gate, y->rms2, y->Wg, -1, -1);
  y->W1 = add_view(b, "W1", l, D, F, w->linear1_weight, true);
  y->up = add(b, "up", l, false, L, F);
  inputs(t, y->up, y->rms2, y->W1, -1, -1);
  y->ffn_hidden = add(b, "ffn_hidden", l, false, L, F);
  inputs(t, y->ffn_hidden, y->gate, y->up, -1, -1);
  y->W2 = add_view(b, "W2", l, F, D, w->linear2_weight, true);
  y->ffn = add(b, "ffn", l, false, L, D);
  inputs(t, y->ffn, y->ffn_hidden, y->W2, -1, -1);
  y->res2 = add(b, "res2", l, false, L, D);
  inputs(t, y->res2, y->res1, y->ffn, -1, -1);
  y->out = add_view(b, "out", l, L, D, NULL, false);
  t->t[y->out].is_weight = false;
  inputs(t, y->out, y->res2, -1, -1, -1);
}

static void add_layer(Builder *b, int l, int in) {
  if (model_is_modern(&b->t->cfg)) {
    add_layer_modern(b, l, in);
    return;
  }
  Trace *t = b->t;
  const ModelConfig *c = &t->cfg;
  const LayerWeights *w = &t->model->layers[l];
  int L = t->L, D = c->D;
  TraceLayer *y = &t->layers[l];
  memset(y, -1, sizeof *y);
  b->holds = model_holds(t->model) | (l == 0 ? WHEN_FIRST_LAYER : WHEN_LATER_LAYER);
  y->in = add_view(b, "in", l, L, D, t->t[in].data, false);
  inputs(t, y->in, in, -1, -1, -1);
  int a_in = y->in;
  if (c->norm_first) // LN1 before attention
    a_in = y->norm1 = add_norm(b, l, 1, w->norm1_weight, w->norm1_bias, L, y->in, &y->norm1_g, &y->norm1_b);
  add_attention(b, l, "", SELF_ATTN_SLOTS(y), a_in, L, a_in, L, c->causal, w->in_proj_weight, w->in_proj_xw,
                w->in_proj_bias, w->out_proj_weight, w->out_proj_xw, w->out_proj_bias);
  y->res1 = add(b, "res1", l, false, L, D);
  inputs(t, y->res1, y->in, y->attn, -1, -1);
  // the feed-forward's input: pre-norm LN2 of the residual, post-norm LN1 of it
  int f_in = c->norm_first ? (y->norm2 = add_norm(b, l, 2, w->norm2_weight, w->norm2_bias, L, y->res1,
                                                  &y->norm2_g, &y->norm2_b))
                           : (y->norm1 = add_norm(b, l, 1, w->norm1_weight, w->norm1_bias, L, y->res1,
                                                  &y->norm1_g, &y->norm1_b));
  add_ffn(b, l, w, f_in, L, &y->W1, &y->b1, &y->ffn_pre, &y->ffn_hidden, &y->W2, &y->b2, &y->ffn);
  if (c->norm_first) { // the residual is the layer's output
    y->res2 = add(b, "res2", l, false, L, D);
    inputs(t, y->res2, y->res1, y->ffn, -1, -1);
    y->out = add_view(b, "out", l, L, D, t->t[y->res2].data, false);
  } else { // the layer's output is LN2 of the residual
    y->norm2_g = add_view(b, "norm2.gamma", l, 1, D, w->norm2_weight, false);
    y->norm2_b = add_view(b, "norm2.beta", l, 1, D, w->norm2_bias, false);
    y->res2 = add(b, "res2", l, false, L, D);
    inputs(t, y->res2, f_in, y->ffn, -1, -1);
    y->norm2 = add(b, "norm2", l, false, L, D);
    inputs(t, y->norm2, y->res2, y->norm2_g, y->norm2_b, -1);
    y->out = add_view(b, "out", l, L, D, NULL, false);
  }
  t->t[y->out].is_weight = false;
  inputs(t, y->out, c->norm_first ? y->res2 : y->norm2, -1, -1, -1);
}

// Decoder layer l of an encoder-decoder (names "d{l}.*"), in the order of its stages: masked
// self-attention over the target, residual and LayerNorm, cross-attention (queries from the
// decoder, keys and values from memory), residual and LayerNorm, FFN, residual and LayerNorm.
static void add_dec_layer(Builder *b, int l, int in) {
  Trace *t = b->t;
  const ModelConfig *c = &t->cfg;
  const DecLayerWeights *dw = &t->model->dec_layers[l];
  const LayerWeights *w = &dw->self;
  int T = t->T, S = t->L, D = c->D;
  bool pre = c->norm_first;
  TraceDecLayer *y = &t->dec_layers[l];
  memset(y, -1, sizeof *y);
  b->holds = model_holds(t->model) | WHEN_DECODER | (l == 0 ? WHEN_FIRST_LAYER : WHEN_LATER_LAYER);
  y->in = add_view(b, "in", l, T, D, t->t[in].data, false);
  inputs(t, y->in, in, -1, -1, -1);
  int a_in = y->in; // masked self-attention's input: pre-norm LN1(in)
  if (pre)
    a_in = y->norm1 = add_norm(b, l, 1, w->norm1_weight, w->norm1_bias, T, y->in, &y->norm1_g, &y->norm1_b);
  // masked self-attention [H, T, T]: S is the masked scores, S_raw the scores before the mask
  add_attention(b, l, "", SELF_ATTN_SLOTS(y), a_in, T, a_in, T, true, w->in_proj_weight, w->in_proj_xw,
                w->in_proj_bias, w->out_proj_weight, w->out_proj_xw, w->out_proj_bias);
  y->res1 = add(b, "res1", l, false, T, D);
  inputs(t, y->res1, y->in, y->attn, -1, -1);
  // residual + LayerNorm 1: post-norm LN1(res1), pre-norm LN2(res1): the cross-attention's input x1
  int x1 = pre ? (y->norm2 =
                      add_norm(b, l, 2, w->norm2_weight, w->norm2_bias, T, y->res1, &y->norm2_g, &y->norm2_b))
               : (y->norm1 = add_norm(b, l, 1, w->norm1_weight, w->norm1_bias, T, y->res1, &y->norm1_g,
                                      &y->norm1_b));
  // cross-attention: Q^c [H, T, d_k] from x1, K^c and V^c [H, S, d_k] from memory, S^c [H, T, S]
  AttnSlots cross = {&y->cWq, &y->cWk, &y->cWv, &y->cbq, &y->cbk,     &y->cbv, &y->cQ,  &y->cK,   &y->cV,
                     NULL,    &y->cS,  &y->cA,  &y->cAV, &y->cconcat, &y->cWo, &y->cbo, &y->cattn};
  add_attention(b, l, "c", cross, x1, T, t->memory, S, false, dw->cross_in_proj_weight, NULL,
                dw->cross_in_proj_bias, dw->cross_out_proj_weight, NULL, dw->cross_out_proj_bias);
  y->res2 = add(b, "res2", l, false, T, D);
  inputs(t, y->res2, pre ? y->res1 : x1, y->cattn, -1, -1);
  // residual + LayerNorm 2: post-norm LN2(res2), pre-norm LN3(res2): the FFN's input
  int f_in =
      pre ? (y->norm3 =
                 add_norm(b, l, 3, dw->norm3_weight, dw->norm3_bias, T, y->res2, &y->norm3_g, &y->norm3_b))
          : (y->norm2 =
                 add_norm(b, l, 2, w->norm2_weight, w->norm2_bias, T, y->res2, &y->norm2_g, &y->norm2_b));
  add_ffn(b, l, w, f_in, T, &y->W1, &y->b1, &y->ffn_pre, &y->ffn_hidden, &y->W2, &y->b2, &y->ffn);
  // residual + LayerNorm 3, the layer's output: pre-norm res3 = res2 + ffn; post-norm LN3(f_in + ffn)
  y->res3 = add(b, "res3", l, false, T, D);
  inputs(t, y->res3, pre ? y->res2 : f_in, y->ffn, -1, -1);
  if (!pre)
    y->norm3 = add_norm(b, l, 3, dw->norm3_weight, dw->norm3_bias, T, y->res3, &y->norm3_g, &y->norm3_b);
  y->out = add_view(b, "out", l, T, D, NULL, false);
  inputs(t, y->out, pre ? y->res3 : y->norm3, -1, -1, -1);
}

// Points views of activations at their owners once the block is carved.
static void link_views(Trace *t) {
  for (int l = 0; l < t->cfg.n_layers; l++) {
    TraceLayer *y = &t->layers[l];
    int prev = l == 0 ? t->Z : t->layers[l - 1].out;
    t->t[y->in].data = t->t[prev].data;
    t->t[y->out].data = t->t[t->cfg.norm_first ? y->res2 : y->norm2].data;
  }
  for (int l = 0; l < t->cfg.n_dec_layers; l++) {
    TraceDecLayer *y = &t->dec_layers[l];
    int prev = l == 0 ? t->dZ : t->dec_layers[l - 1].out;
    t->t[y->in].data = t->t[prev].data;
    t->t[y->out].data = t->t[t->cfg.norm_first ? y->res3 : y->norm3].data;
  }
}

// Copies tokens into out (one block of text). False when out of memory (free out then).
static bool tokens_copy(Tokens *out, const Tokens *in) {
  EXPECT(in->n > 0);
  size_t L = (size_t)in->n;
  size_t text = 0;
  for (size_t i = 0; i < L; i++) text += strlen(in->words[i]) + 1;
  out->n = in->n;
  out->ids = malloc(sizeof(int) * L);
  out->words = malloc(sizeof(char *) * L);
  out->unknown = malloc(sizeof(bool) * L);
  out->block = malloc(text + 1);
  if (!out->ids || !out->words || !out->unknown || !out->block) return false;
  char *p = out->block;
  for (size_t i = 0; i < L; i++) {
    out->ids[i] = in->ids[i];
    out->unknown[i] = in->unknown[i];
    size_t n = strlen(in->words[i]) + 1;
    memcpy(p, in->words[i], n);
    out->words[i] = p;
    p += n;
  }
  return true;
}

bool trace_decoder_tokens(Tokens *out, const Model *model, const char *target, int max_tokens, Err *err) {
  EXPECT(model_is_seq2seq(model));
  memset(out, 0, sizeof *out);
  char probe[1][TOKEN_MAX_BYTES + 1];
  Tokens words = {0};
  bool any = model->tok_kind == TOK_CHARS
                 ? target[strspn(target, " \t\n\v\f\r")] != 0 // a chars model
                 : tokenize_words(target, probe, 1) > 0;      // an empty target: <bos> alone
  if (any && !model_tokenize_target(model, target, max_tokens > 0 ? max_tokens - 1 : 0, &words, err))
    return false;
  // "<bos>", then the target's words
  int n = words.n + 1;
  int *ids = malloc(sizeof(int) * (size_t)n);
  char **ws = malloc(sizeof(char *) * (size_t)n);
  bool *unk = malloc(sizeof(bool) * (size_t)n);
  bool ok = ids && ws && unk;
  if (ok) {
    ids[0] = model->bos, ws[0] = "<bos>", unk[0] = false;
    for (int i = 1; i < n; i++)
      ids[i] = words.ids[i - 1], ws[i] = words.words[i - 1], unk[i] = words.unknown[i - 1];
    Tokens all = {n, ids, ws, unk, NULL};
    ok = tokens_copy(out, &all);
  }
  free(ids);
  free(ws);
  free(unk);
  tokens_free(&words);
  if (!ok) {
    tokens_free(out);
    return err_set(err, "out of memory");
  }
  return true;
}

// True when the forward may multiply a layer of m without its packed copy (forward.c's linear: a
// product of at most mat_naive_max_madds multiply-adds, forward_use_gemm off, a matrix not packed):
// it then reads the canonical layout. The smallest product is one row's, N·K.
static bool forward_may_unpack(const Model *m) {
  const ModelConfig *c = &m->cfg;
  if (!forward_use_gemm || (long)c->D * (c->F < c->D ? c->F : c->D) <= mat_naive_max_madds) return true;
  for (int l = 0; l < c->n_layers; l++) {
    const LayerWeights *w = &m->layers[l];
    if (!w->in_proj_packed.panels || !w->out_proj_packed.panels || !w->linear1_packed.panels ||
        !w->linear2_packed.panels)
      return true;
  }
  return false;
}

Trace *trace_new(const Model *model, const Tokens *tokens, Err *err) {
  return trace_new_seq2seq(model, tokens, NULL, err);
}

Trace *trace_new_seq2seq(const Model *model, const Tokens *tokens, const Tokens *dec_tokens, Err *err) {
  bool s2s = model_is_seq2seq(model);
  EXPECT(s2s || dec_tokens == NULL); // an encoder has no decoder to feed
  if (s2s && !dec_tokens)
    return err_set(err,
                   "%s is an encoder-decoder: its trace needs the decoder's input too (<bos> and the "
                   "target's tokens: trace_new_seq2seq)",
                   model->source),
           NULL;
  // a GPT-2 checkpoint's layer matrices are kept in its Conv1D layout (model.h): their canonical
  // copies are made once, when the forward may read them
  if (!s2s && model->layers[0].in_proj_xw && forward_may_unpack(model) && !model_canonical(model))
    return err_set(err, "out of memory for the canonical copy of the layer weights"), NULL;
  Trace *t = calloc(1, sizeof *t);
  if (!t) return err_set(err, "out of memory"), NULL;
  t->model = model;
  t->cfg = model->cfg;
  t->L = tokens->n;
  t->T = s2s ? dec_tokens->n : 0;
  EXPECT(t->L > 0 && (!s2s || t->T > 0));
  const ModelConfig *c = &t->cfg;
  int L = t->L, D = c->D, V = c->V, T = t->T;
  if (c->learned_pos && L > c->max_pos)
    return err_set(err,
                   "the sentence has %d tokens; this model knows positions up to %d: shorten the sentence", L,
                   c->max_pos),
           trace_free(t), NULL;
  int cap = 40 + 48 * c->n_layers + 32 + 80 * c->n_dec_layers;
  Builder b = {t, calloc((size_t)cap, sizeof(long)), cap, 0, 'l'};
  t->t = calloc((size_t)cap, sizeof(TraceTensor));
  t->steps = calloc((size_t)(16 + 16 * c->n_layers + 16 + 32 * c->n_dec_layers), sizeof(TraceStep));
  t->layers = calloc((size_t)c->n_layers, sizeof(TraceLayer));
  if (s2s) t->dec_layers = calloc((size_t)c->n_dec_layers, sizeof(TraceDecLayer));
  if (s2s && (!t->dec_layers || !tokens_copy(&t->dec_tokens, dec_tokens))) goto oom;
  // copy the tokens
  t->tokens.n = L;
  size_t text = 0;
  for (int i = 0; i < L; i++) text += strlen(tokens->words[i]) + 1;
  t->tokens.ids = malloc(sizeof(int) * (size_t)L);
  t->tokens.words = malloc(sizeof(char *) * (size_t)L);
  t->tokens.unknown = malloc(sizeof(bool) * (size_t)L);
  t->tokens.block = malloc(text + 1);
  if (!b.own || !t->t || !t->steps || !t->layers || !t->tokens.ids || !t->tokens.words ||
      !t->tokens.unknown || !t->tokens.block)
    goto oom;
  char *p = t->tokens.block;
  for (int i = 0; i < L; i++) {
    t->tokens.ids[i] = tokens->ids[i];
    t->tokens.unknown[i] = tokens->unknown[i];
    size_t n = strlen(tokens->words[i]) + 1;
    memcpy(p, tokens->words[i], n);
    t->tokens.words[i] = p;
    p += n;
  }

  b.holds = model_holds(t->model);
  t->O = add(&b, "O", -1, false, L, V);
  t->E = add_view(&b, "E", -1, V, D, model->embed, false);
  t->X = add(&b, "X", -1, false, L, D);
  inputs(t, t->X, t->O, t->E, -1, -1);
  t->P = add(&b, "P", -1, false, L, D);
  t->t0 = t->embed_sum = t->Wt = t->bt = t->head_hidden = t->head_norm = -1;
  t->enc_norm = t->pool = t->Wc = t->bc = t->class_logits = t->class_pred = -1;
  if (model->token_type) t->t0 = add_view(&b, "t0", -1, 1, D, model->token_type, false);
  if (model->has_embed_norm) { // BERT: Z = LayerNorm(X + P + t₀)
    t->embed_sum = add(&b, "embed_sum", -1, false, L, D);
    inputs(t, t->embed_sum, t->X, t->P, t->t0, -1);
    int g = add_view(&b, "embed_norm.gamma", -1, 1, D, model->embed_norm_weight, false);
    int be = add_view(&b, "embed_norm.beta", -1, 1, D, model->embed_norm_bias, false);
    t->Z = add(&b, "Z", -1, false, L, D);
    inputs(t, t->Z, t->embed_sum, g, be, -1);
  } else {
    t->Z = add(&b, "Z", -1, false, L, D);
    inputs(t, t->Z, t->X, t->P, t->t0, -1);
  }
  t->rope_angle = -1;
  if (c->rope) t->rope_angle = add(&b, "rope_angle", -1, false, L, model_dk(c) / 2);
  int prev = t->Z;
  for (int l = 0; l < c->n_layers; l++) {
    add_layer(&b, l, prev);
    prev = t->layers[l].out;
  }
  b.holds = model_holds(t->model);
  t->final_norm = t->Wout = t->bout = t->logits = t->pred = -1;
  t->memory = t->memory_g = t->memory_b = t->dO = t->dE = t->dX = t->dP = t->dZ = -1;
  t->dec_norm = t->dec_norm_g = t->dec_norm_b = -1;
  if (s2s) {
    int Vt = c->V_t;
    b.holds = model_holds(t->model) | WHEN_DECODER;
    // memory [S, D]: what every decoder layer's cross-attention reads
    t->memory_g = add_view(&b, "memory.gamma", -1, 1, D, model->enc_norm_weight, false);
    t->memory_b = add_view(&b, "memory.beta", -1, 1, D, model->enc_norm_bias, false);
    t->memory = add(&b, "memory", -1, false, L, D);
    inputs(t, t->memory, prev, t->memory_g, t->memory_b, -1);
    t->dO = add(&b, "dec.O", -1, false, T, Vt);
    t->dE = add_view(&b, "dec.E", -1, Vt, D, model->tgt_embed, false);
    t->dX = add(&b, "dec.X", -1, false, T, D);
    inputs(t, t->dX, t->dO, t->dE, -1, -1);
    t->dP = add(&b, "dec.P", -1, false, T, D);
    t->dZ = add(&b, "dec.Z", -1, false, T, D);
    inputs(t, t->dZ, t->dX, t->dP, -1, -1);
    b.prefix = 'd';
    int dprev = t->dZ;
    for (int l = 0; l < c->n_dec_layers; l++) {
      add_dec_layer(&b, l, dprev);
      dprev = t->dec_layers[l].out;
    }
    b.holds = model_holds(t->model) | WHEN_DECODER;
    t->dec_norm_g = add_view(&b, "dec.norm.gamma", -1, 1, D, model->dec_norm_weight, false);
    t->dec_norm_b = add_view(&b, "dec.norm.beta", -1, 1, D, model->dec_norm_bias, false);
    t->dec_norm = add(&b, "dec.norm", -1, false, T, D);
    inputs(t, t->dec_norm, dprev, t->dec_norm_g, t->dec_norm_b, -1);
    t->Wout = add_view(&b, "Wout", -1, D, Vt, model->head_weight, true);
    t->bout = add_view(&b, "bout", -1, 1, Vt, model->head_bias, false);
    t->logits = add(&b, "logits", -1, false, T, Vt);
    inputs(t, t->logits, t->dec_norm, t->Wout, t->bout, -1);
    t->pred = add(&b, "pred", -1, false, T, Vt);
    inputs(t, t->pred, t->logits, -1, -1, -1);
  } else if (model->has_head) {

    int x = prev;
    if (model->has_final_norm) {
      int g = add_view(&b, "norm.gamma", -1, 1, D, model->norm_weight, false);
      int be = c->rms_norm ? -1 : add_view(&b, "norm.beta", -1, 1, D, model->norm_bias, false);
      t->final_norm = add(&b, "final_norm", -1, false, L, D);
      inputs(t, t->final_norm, prev, g, be, -1);
      x = t->final_norm;
    }
    if (model->has_head_transform) { // BERT: y = LayerNorm(act(x·W_t + b_t)) before the head
      t->Wt = add_view(&b, "Wt", -1, D, D, model->head_transform_weight, true);
      t->bt = add_view(&b, "bt", -1, 1, D, model->head_transform_bias, false);
      t->head_hidden = add(&b, "head_hidden", -1, false, L, D);
      inputs(t, t->head_hidden, x, t->Wt, t->bt, -1);
      int g = add_view(&b, "head_norm.gamma", -1, 1, D, model->head_norm_weight, false);
      int be = add_view(&b, "head_norm.beta", -1, 1, D, model->head_norm_bias, false);
      t->head_norm = add(&b, "head_norm", -1, false, L, D);
      inputs(t, t->head_norm, t->head_hidden, g, be, -1);
      x = t->head_norm;
    }
    // a tied head is E itself: W_out = Eᵀ
    t->Wout = add_view(&b, "Wout", -1, D, V, model->head_weight, true);
    if (model->head_bias) t->bout = add_view(&b, "bout", -1, 1, V, model->head_bias, false);
    t->logits = add(&b, "logits", -1, false, L, V);
    inputs(t, t->logits, x, t->Wout, t->bout, -1);
    t->pred = add(&b, "pred", -1, false, L, V);
    inputs(t, t->pred, t->logits, -1, -1, -1);
  } else if (model->has_classifier) { // the course's: LayerNorm, mean over positions, classes
    int x = prev, C = model->n_classes;
    if (model->has_final_norm) {
      int g = add_view(&b, "norm.gamma", -1, 1, D, model->norm_weight, false);
      int be = add_view(&b, "norm.beta", -1, 1, D, model->norm_bias, false);
      t->enc_norm = add(&b, "enc_norm", -1, false, L, D);
      inputs(t, t->enc_norm, prev, g, be, -1);
      x = t->enc_norm;
    }
    t->pool = add(&b, "pool", -1, false, 1, D);
    inputs(t, t->pool, x, -1, -1, -1);
    t->Wc = add_view(&b, "Wc", -1, D, C, model->classifier_weight, true);
    t->bc = add_view(&b, "bc", -1, 1, C, model->classifier_bias, false);
    t->class_logits = add(&b, "class_logits", -1, false, 1, C);
    inputs(t, t->class_logits, t->pool, t->Wc, t->bc, -1);
    t->class_pred = add(&b, "class_pred", -1, false, 1, C);
    inputs(t, t->class_pred, t->class_logits, -1, -1, -1);
  }

  int64_t total = 0;
  for (int i = 0; i < t->n; i++) total += b.own[i];
  // many heads and many words (H·L² per score stage), or a large vocabulary (L·V for O, the logits
  // and pred): refused when it cannot fit, before anything is allocated
  uint64_t have = mem_available();
  if (total > mem_max_floats() || (uint64_t)total * sizeof(float) > have) {
    char h[32];
    mem_human(h, sizeof h, have);
    err_set(err,
            "%d words through this model (D=%d, H=%d, F=%d, %d layer%s) make %.1f GiB of stages, more "
            "than the %s of memory available: shorten the sentence or use fewer heads or layers",
            L, D, c->H, c->F, c->n_layers, c->n_layers == 1 ? "" : "s", (double)total * 4 / (1 << 30), h);
    free(b.own);
    trace_free(t); // c points into t: the message is made first
    return NULL;
  }
  t->block = malloc(sizeof(float) * (size_t)(total > 0 ? total : 1));
  // [L, 3D]; a decoder's: [T, 3D] for its self-attention, [T, D] + [S, 2D] for cross-attention
  int rows = L > T ? L : T;
  int qkv_cols = (c->H + 2 * model_hkv(c)) * model_dk(c); // 3D but in today's decoders
  t->scratch = malloc(sizeof(float) * (size_t)rows * (size_t)(qkv_cols > 3 * D ? qkv_cols : 3 * D));
  if (!t->block || !t->scratch) goto oom;
  if (c->rope && !(t->rope_cs = malloc(sizeof(float) * (size_t)L * (size_t)model_dk(c)))) goto oom;
  if (gemm_supported()) {
    int dk = model_dk(c);
    size_t per_head = gemm_packed_floats(L, dk) + gemm_packed_floats(dk, L);
    if (T > 0 && gemm_packed_floats(T, dk) + gemm_packed_floats(dk, T) > per_head) // a decoder's keys
      per_head = gemm_packed_floats(T, dk) + gemm_packed_floats(dk, T);
    t->attn_packed = aligned_alloc(64, sizeof(float) * (per_head * c->H + 16)); // a multiple of 64 bytes
    if (!t->attn_packed) goto oom;
  }
  t->block_floats = total;
  long off = 0;
  for (int i = 0; i < t->n; i++)
    if (b.own[i]) {
      t->t[i].data = t->block + off;
      off += b.own[i];
    }
  link_views(t);
  free(b.own);

  step(t, STEP_TOKENS, -1, -1);
  step(t, STEP_ONEHOT, -1, t->O);
  step(t, STEP_EMBED, -1, t->X);
  if (!c->rope) { // RoPE: nothing is added to X (Z = X); positions turn Q and K in each layer
    step(t, STEP_POSENC, -1, t->P);
    step(t, STEP_ADDPOS, -1, t->embed_sum >= 0 ? t->embed_sum : t->Z);
    if (c->no_pos) t->steps[t->n_steps - 1].name = "embeddings (no positions)"; // Z = OE, nothing added
  }
  if (t->embed_sum >= 0) step(t, STEP_EMBED_NORM, -1, t->Z);
  for (int l = 0; l < c->n_layers && model_is_modern(c); l++) { // today's decoders (issue 34)
    TraceLayer *y = &t->layers[l];
    step(t, STEP_RMSNORM1, l, y->rms1);
    step(t, STEP_QKV, l, y->Q_norope);
    if (c->rope) step(t, STEP_ROPE, l, y->Q);
    step(t, STEP_SCORES, l, y->S_raw);
    step(t, STEP_MASK, l, y->S);
    step(t, STEP_SOFTMAX, l, y->A);
    step(t, STEP_AV, l, y->AV);
    step(t, STEP_CONCAT, l, y->concat);
    step(t, STEP_OUTPROJ, l, y->attn);
    step(t, STEP_RMSNORM2, l, y->rms2);
    step(t, STEP_GATE, l, y->gate);
    step(t, STEP_UP, l, y->up);
    step(t, STEP_FFN_HIDDEN, l, y->ffn_hidden);
    step(t, STEP_FFN_OUT, l, y->ffn);
    step(t, STEP_ADDNORM2, l, y->out);
    t->steps[t->n_steps - 1].name = "residual: layer output";
  }
  for (int l = 0; l < c->n_layers && !model_is_modern(c); l++) {
    TraceLayer *y = &t->layers[l];
    if (c->norm_first) step(t, STEP_PRENORM, l, y->norm1);
    step(t, STEP_QKV, l, y->Q);
    step(t, STEP_SCORES, l, c->causal ? y->S_raw : y->S);
    if (c->causal) step(t, STEP_MASK, l, y->S);
    step(t, STEP_SOFTMAX, l, y->A);
    step(t, STEP_AV, l, y->AV);
    step(t, STEP_CONCAT, l, y->concat);
    step(t, STEP_OUTPROJ, l, y->attn);
    step(t, STEP_ADDNORM1, l, c->norm_first ? y->norm2 : y->norm1);
    step(t, STEP_FFN_HIDDEN, l, y->ffn_hidden);
    step(t, STEP_FFN_OUT, l, y->ffn);
    step(t, STEP_ADDNORM2, l, y->out);
  }
  if (s2s) { // the encoder-decoder's memory and decoder
    step(t, STEP_MEMORY, -1, t->memory);
    step(t, STEP_DEC_TOKENS, -1, -1);
    step(t, STEP_DEC_ONEHOT, -1, t->dO);
    step(t, STEP_DEC_EMBED, -1, t->dX);
    step(t, STEP_DEC_POSENC, -1, t->dP);
    step(t, STEP_DEC_ADDPOS, -1, t->dZ);
    for (int l = 0; l < c->n_dec_layers; l++) {
      TraceDecLayer *y = &t->dec_layers[l];
      if (c->norm_first) step(t, STEP_DEC_PRENORM, l, y->norm1);
      step(t, STEP_DEC_QKV, l, y->Q);
      step(t, STEP_DEC_SCORES, l, y->S_raw);
      step(t, STEP_DEC_MASK, l, y->S);
      step(t, STEP_DEC_SOFTMAX, l, y->A);
      step(t, STEP_DEC_AV, l, y->AV);
      step(t, STEP_DEC_CONCAT, l, y->concat);
      step(t, STEP_DEC_OUTPROJ, l, y->attn);
      step(t, STEP_DEC_ADDNORM1, l, c->norm_first ? y->norm2 : y->norm1);
      step(t, STEP_CROSS_QKV, l, y->cQ);
      step(t, STEP_CROSS_SCORES, l, y->cS);
      step(t, STEP_CROSS_SOFTMAX, l, y->cA);
      step(t, STEP_CROSS_AV, l, y->cAV);
      step(t, STEP_CROSS_CONCAT, l, y->cconcat);
      step(t, STEP_CROSS_OUTPROJ, l, y->cattn);
      step(t, STEP_DEC_ADDNORM2, l, c->norm_first ? y->norm3 : y->norm2);
      step(t, STEP_DEC_FFN_HIDDEN, l, y->ffn_hidden);
      step(t, STEP_DEC_FFN_OUT, l, y->ffn);
      step(t, STEP_DEC_ADDNORM3, l, y->out);
    }
    step(t, STEP_DEC_PREDICT, -1, t->pred);
  } else if (t->pred >= 0) {
    if (t->head_norm >= 0) step(t, STEP_HEAD_TRANSFORM, -1, t->head_norm);
    step(t, STEP_PREDICT, -1, t->pred);
  } else if (t->class_pred >= 0) {
    if (t->enc_norm >= 0) step(t, STEP_ENC_NORM, -1, t->enc_norm);
    step(t, STEP_POOL, -1, t->pool);
    step(t, STEP_CLASS_SCORES, -1, t->class_logits);
    step(t, STEP_CLASS_PRED, -1, t->class_pred);
  }
  return t;

oom:
  free(b.own);
  trace_free(t);
  return err_set(err, "out of memory for a trace of %d tokens", L), NULL;
}

bool trace_set_tokens(Trace *t, const Tokens *tokens, Err *err) {
  if (tokens->n != t->L) return err_set(err, "the sentence has %d words, the trace %d", tokens->n, t->L);
  size_t text = 0;
  for (int i = 0; i < t->L; i++) text += strlen(tokens->words[i]) + 1;
  char *block = malloc(text + 1);
  if (!block) return err_set(err, "out of memory");
  char *p = block;
  for (int i = 0; i < t->L; i++) {
    size_t n = strlen(tokens->words[i]) + 1;
    memcpy(p, tokens->words[i], n);
    t->tokens.words[i] = p;
    t->tokens.ids[i] = tokens->ids[i];
    t->tokens.unknown[i] = tokens->unknown[i];
    p += n;
  }
  free(t->tokens.block);
  t->tokens.block = block;
  return true; // P depends on L and D only: still valid
}

void trace_free(Trace *t) {
  if (!t) return;
  free(t->block);
  free(t->scratch);
  free(t->attn_packed);
  free(t->rope_cs);
  free(t->t);
  free(t->steps);
  free(t->layers);
  free(t->dec_layers);
  tokens_free(&t->tokens);
  tokens_free(&t->dec_tokens);
  if (t->edits) edits_free(t->edits);
  free(t->edits);
  if (t->own_model_free) t->own_model_free(t->own_model);
  free(t);
}

int trace_index(const Trace *t, const char *name) {
  for (int i = 0; i < t->n; i++)
    if (!strcmp(t->t[i].name, name)) return i;
  return -1;
}

const TraceTensor *trace_find(const Trace *t, const char *name) {
  int i = trace_index(t, name);
  return i < 0 ? NULL : &t->t[i];
}

bool trace_per_head(const TraceTensor *x) { return x->per_head; }

int trace_dump_shape(const TraceTensor *x, int shape[3]) {
  if (trace_per_head(x)) {
    shape[0] = x->heads, shape[1] = x->rows, shape[2] = x->cols;
    return 3;
  }
  shape[0] = x->rows, shape[1] = x->cols;
  return 2;
}

float trace_at(const TraceTensor *x, int h, int i, int j) {
  EXPECT(h >= 0 && h < x->heads && i >= 0 && i < x->rows && j >= 0 && j < x->cols);
  const float *d = x->data + (size_t)h * x->rows * x->cols;
  return x->transposed ? d[(size_t)j * x->stride + i] : d[(size_t)i * x->stride + j];
}

const char *trace_axis_word(const Trace *t, TraceAxis axis, int i) {
  switch (axis) {
  case AXIS_TOKEN: return tokens_label(&t->tokens, &t->model->vocab, i);
  case AXIS_VOCAB: return t->model->vocab.words[i];
  case AXIS_TGT_TOKEN: return tokens_label(&t->dec_tokens, &t->model->tgt_vocab, i);
  case AXIS_TGT_VOCAB: return t->model->tgt_vocab.words[i];
  case AXIS_CLASS: return t->model->class_names[i];
  case AXIS_TOKEN2: return tokens_label(&t->dec_tokens, &t->model->vocab, i);
  default: return NULL; // the mean row, dimensions
  }
}

const char *trace_axis_label(const Trace *t, TraceAxis axis, int i, char *buf, int cap) {
  const char *w = trace_axis_word(t, axis, i);
  if (w)
    snprintf(buf, (size_t)cap, "%s", w);
  else if (axis == AXIS_ONE)
    snprintf(buf, (size_t)cap, "mean");
  else
    snprintf(buf, (size_t)cap, "%d", i + 1); // a dimension: counted from 1, as a teacher counts
  return buf;
}

const char *trace_axis_name(TraceAxis axis) {
  switch (axis) {
  case AXIS_TOKEN: return "token";
  case AXIS_VOCAB: return "word";
  case AXIS_MODEL: return "dimension";
  case AXIS_HEADDIM: return "head dimension";
  case AXIS_FFN: return "hidden unit";
  case AXIS_QKV: return "dimension";
  case AXIS_TGT_TOKEN: return "target token";
  case AXIS_TGT_VOCAB: return "target word";
  case AXIS_ONE: return "mean";
  case AXIS_CLASS: return "class";
  case AXIS_TOKEN2: return "token of the second sentence";
  }
  return "";
}

// One label per line.
static char *lines_of(const Tokens *tk, const Vocab *v, size_t *len) {
  size_t cap = 1;
  for (int i = 0; i < tk->n; i++) cap += strlen(tokens_label(tk, v, i)) + 1;
  char *s = malloc(cap);
  if (!s) return NULL;
  size_t n = 0;
  for (int i = 0; i < tk->n; i++) {
    const char *w = tokens_label(tk, v, i);
    size_t k = strlen(w);
    memcpy(s + n, w, k);
    n += k;
    s[n++] = '\n';
  }
  s[n] = 0;
  *len = n;
  return s;
}

char *trace_tokens_lines(const Trace *t, size_t *len) { return lines_of(&t->tokens, &t->model->vocab, len); }

char *trace_dec_tokens_lines(const Trace *t, size_t *len) {
  return t->T > 0 ? lines_of(&t->dec_tokens, &t->model->tgt_vocab, len) : NULL;
}

bool trace_uses_word(const Trace *t, int id) {
  for (int i = 0; i < t->L; i++)
    if (t->tokens.ids[i] == id) return true;
  return false;
}

int trace_step_find(const Trace *t, StepKind k, int layer) {
  for (int i = 0; i < t->n_steps; i++)
    if (t->steps[i].kind == k && (t->steps[i].layer < 0 || t->steps[i].layer == layer)) return i;
  return -1;
}

int trace_stage_number(const Trace *t, int step, int *total) {
  bool present[STEP_KIND_END] = {0};
  for (int s = 0; s < t->n_steps; s++) present[t->steps[s].kind] = true;
  StepKind want = t->steps[step].kind;
  int n = 0, count = 0;
  for (int i = 0; i < STAGE_COUNT; i++) {
    const StageInfo *st = &STAGE_TABLE[i];
    if (!present[st->kind]) continue;
    if (!st->half) count++;
    if (st->kind == want) n = count;
  }
  if (total) *total = count;
  return n;
}

bool trace_add_sim_steps(Trace *t) {
  if (t->T > 0 || trace_step_find(t, STEP_SIM, 0) >= 0) return true; // an encoder only, once
  TraceStep *st = realloc(t->steps, (size_t)(t->n_steps + t->cfg.n_layers) * sizeof *st);
  if (!st) return false;
  t->steps = st;
  for (int l = 0; l < t->cfg.n_layers; l++) step(t, STEP_SIM, l, -1); // drawn from two traces (similarity.h)
  return true;
}
