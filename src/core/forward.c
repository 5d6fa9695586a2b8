// forward.c -- see forward.h.
// Legend: L tokens, V vocabulary, D model width, H heads, dk = D/H, F feed-forward width.
//
// layer_forward reads as DESIGN.md's stage table: one call per stage, in its order. The attention
// stages (6–11) are one function each, written for a block of query rows of one head; the
// schedule calls those same functions, so the math of a stage is in one place. Every stage is
// written into the trace once; the order of the work is chosen so that what a stage reads is
// still in cache (BENCHMARKS.md has the timings):
//   - attention runs head by head and, inside a head, in blocks of query rows, so a block's
//     scores S, weights A and weighted values A·V stay in the L2 cache between the stages;
//   - the residual sums and LayerNorms run in blocks of rows that fit the L1 cache, the FFN's
//     activation right after its product.
// With forward_set_threads(2) the work is split between two threads (par.h): products by blocks
// of output columns, attention by heads, row-wise stages by blocks of rows; jobs too small to
// pay for the hand-off stay on one thread. The loop kernels, the packed-weight kernel (gemm.h)
// and the elementwise stages give the same bits either way; a BLAS product cut into column
// blocks may round differently in the last bit (about 1e-6 relative), as BLAS picks its inner
// kernels by the shape it is given.
#include "forward.h"

#include <math.h>
#include <string.h>

#include "gemm.h" // defines: GemmWeights, gemm_matmul_t, GEMM_NR
#include "mat.h"  // defines: Mat, mat_matmul_t, mat_softmax_rows, mat_layernorm_rows ...
#include "par.h"  // defines: par_run, par_threads

// A job smaller than this (in multiply-adds, or elementwise operations) runs on one thread: the
// hand-off to the second thread costs some microseconds.
enum { SPLIT_MIN_WORK = 1 << 18 };
// Query rows per attention block: a block of scores [rows, L] of at most this many floats.
enum { ATTN_BLOCK_FLOATS = 64 * 1024 };

static int imin(int a, int b) { return a < b ? a : b; }

static Mat tmat(const TraceTensor *x) { // one-head tensor as a Mat (activations only)
  EXPECT(x->heads == 1 && !x->transposed);
  return (Mat){x->data, x->rows, x->cols, x->stride};
}

static Mat head(const TraceTensor *x, int h) { // head h of an [H, rows, cols] tensor
  return (Mat){x->data + (size_t)h * x->rows * x->cols, x->rows, x->cols, x->cols};
}

static Mat rows(Mat m, int r0, int n) { return mat_sub(m, r0, 0, n, m.cols); }

static const Mat NO_MAT = {0}; // an optional Mat left out

static bool threads_set; // forward_set_threads has run (model_forward runs it once if not)

void forward_set_threads(int n) {
  par_set_threads(n);
  mat_set_blas_threads(1);
  threads_set = true;
}

// Into how many parts to cut a job of `work` multiply-adds (or elementwise operations): one
// per thread, with a spare per thread so that a thread slowed by another program takes less of
// it (par.h); a single part when the job is too small to pay for the hand-off.
static int parts_for(long work) {
  int n = par_threads();
  return n == 1 || work < SPLIT_MIN_WORK ? 1 : 2 * n;
}

// Runs tasks 0..n-1 of a job of `work` multiply-adds: on the team when that pays, else here.
static void run_tasks(int n, ParTask fn, void *ctx, long work) {
  if (parts_for(work) > 1) {
    par_run(n, fn, ctx);
    return;
  }
  for (int i = 0; i < n; i++) fn(ctx, i);
}

// Start of part p of n parts of `len` (columns aligned to multiples of `align`).
static int split_at(int len, int parts, int p, int align) {
  if (p >= parts) return len;
  int at = (int)((long)len * p / parts);
  return at - at % align;
}

void forward_posenc(float *P, int L, int D) {
  for (int i = 0; i < L; i++)
    for (int k = 0; k < D; k += 2) {
      double ang = i / pow(10000.0, (double)k / D);
      P[(size_t)i * D + k] = (float)sin(ang);
      if (k + 1 < D) P[(size_t)i * D + k + 1] = (float)cos(ang);
    }
}

// ---------------------------------------------------------------- linear layers

bool forward_use_gemm = true;

// y[M,N] = x[M,K]·w[N,K]ᵀ + bias, and then act_out = activation(y) when act_out is given;
// part p computes columns split_at(N, parts, p).. of both (multiples of GEMM_NR, as
// gemm_matmul_t needs). With the weights packed, gemm_matmul_t also writes ReLU's output.
typedef struct {
  Mat y, x, w;
  const GemmWeights *packed; // w packed, when this product runs gemm_matmul_t; else NULL
  const float *bias;
  Mat act_out;
  Activation act;
  int parts;
} LinearJob;

static void linear_part(void *ctx, int p) {
  const LinearJob *j = ctx;
  int c0 = split_at(j->y.cols, j->parts, p, GEMM_NR), c1 = split_at(j->y.cols, j->parts, p + 1, GEMM_NR);
  if (c1 <= c0) return;
  Mat y = mat_sub(j->y, 0, c0, j->y.rows, c1 - c0);
  Mat h = j->act_out.data ? mat_sub(j->act_out, 0, c0, y.rows, y.cols) : NO_MAT;
  const float *bias = j->bias ? j->bias + c0 : NULL;
  if (j->packed) {
    bool relu = h.data && j->act == ACT_RELU;
    gemm_matmul_t(y, j->x, j->packed, c0, bias, relu ? h : NO_MAT);
    if (relu) return;
  } else {
    mat_matmul_t(y, j->x, mat_sub(j->w, c0, 0, c1 - c0, j->w.cols), bias);
  }
  if (h.data) {
    if (j->act == ACT_GELU)
      mat_gelu(h, y);
    else
      mat_relu(h, y);
  }
}

// `packed` is w packed once (model.h), or NULL / empty: then mat_matmul_t.
static void linear_act(Mat y, Mat x, Mat w, const GemmWeights *packed, const float *bias, Mat act_out,
                       Activation act) {
  LinearJob j = {y, x, w, NULL, bias, act_out, act, parts_for((long)y.rows * y.cols * x.cols)};
  if (forward_use_gemm && packed && packed->panels && (long)y.rows * y.cols * x.cols > mat_naive_max_madds)
    j.packed = packed;
  par_run(j.parts, linear_part, &j);
}

static void linear(Mat y, Mat x, Mat w, const GemmWeights *packed, const float *bias) {
  linear_act(y, x, w, packed, bias, NO_MAT, ACT_RELU);
}

// ---------------------------------------------------------------- residuals and LayerNorms

// Block of rows by block of rows: sum = a + b (when b is given; else sum is a itself), then
// norm = LayerNorm(sum) (when norm is given), each block small enough to stay in the L1 cache.
typedef struct {
  Mat sum, a, b, norm;
  const float *gain, *shift;
  float eps;
  int parts;
} AddNormJob;

enum { ROW_BLOCK_FLOATS = 4096 };

static void add_norm_part(void *ctx, int p) {
  const AddNormJob *j = ctx;
  int r1 = split_at(j->a.rows, j->parts, p + 1, 1);
  int block = j->a.cols >= ROW_BLOCK_FLOATS ? 1 : ROW_BLOCK_FLOATS / j->a.cols;
  for (int i = split_at(j->a.rows, j->parts, p, 1); i < r1; i += block) {
    int n = imin(block, r1 - i);
    Mat s = rows(j->a, i, n);
    if (j->b.data) {
      s = rows(j->sum, i, n);
      mat_add(s, rows(j->a, i, n), rows(j->b, i, n));
    }
    if (j->norm.data) mat_layernorm_rows(rows(j->norm, i, n), s, j->gain, j->shift, j->eps);
  }
}

static void add_norm(Mat sum, Mat a, Mat b, Mat norm, const float *gain, const float *shift, float eps) {
  AddNormJob j = {sum, a, b, norm, gain, shift, eps, parts_for(8L * a.rows * a.cols)};
  par_run(j.parts, add_norm_part, &j);
}

// ---------------------------------------------------------------- attention, one function per stage
//
// Stages 6–11 of DESIGN.md's table, each a function that computes query rows r0..r1-1 of one
// head h and writes nothing else. The schedule (attention, attention_head) chooses the blocks of rows
// and the threads and calls these same functions; no stage's math is written twice. Shapes of
// one head: Q_h, K_h, V_h and A_h V_h [L, d_k]; S_h and A_h [L, L]. The trace keeps them
// head-major, [H, L, d_k] and [H, L, L]; concat is [L, D], head h in columns h·d_k to
// (h+1)·d_k - 1.

typedef struct {
  Mat qkv[3];         // this head's columns of the Q, K and V blocks of the projection [L, d_k] each
  Mat q, k, v;        // Q_h, K_h, V_h [L, d_k]
  Mat s, masked;      // S_h = Q_h K_hᵀ/√d_k and S_h + M [L, L] (one matrix when there is no mask)
  Mat a;              // A_h = softmax(S_h + M) [L, L]
  Mat av;             // A_h V_h [L, d_k]
  Mat concat;         // columns h·d_k.. of concat [L, D]
  bool causal;        // M: query i sees keys 0..i
  float scale;        // 1/√d_k
  GemmWeights kp, vp; // K_h and V_h packed for gemm.h when that pays, else empty (panels NULL)
} Head;

// Stage 6 (second half): Q_h, K_h, V_h [L, d_k] = columns h·d_k.. of the Q, K and V blocks of the
// projection [L, 3D]. A copy, so that the trace keeps each head as a matrix of its own.
static void split_heads(const Head *hd, int r0, int r1) {
  const Mat dst[3] = {hd->q, hd->k, hd->v};
  for (int part = 0; part < 3; part++)
    mat_copy(rows(dst[part], r0, r1 - r0), rows(hd->qkv[part], r0, r1 - r0));
}

// Stage 7: S_h = Q_h K_hᵀ/√d_k [L, L], rows r0.., against every key. 1/√d_k multiplies each
// finished sum (BLAS's alpha, gemm.h's epilogue), so the scaled scores take one product.
static void scores(const Head *hd, int r0, int r1) {
  Mat s = rows(hd->s, r0, r1 - r0), q = rows(hd->q, r0, r1 - r0);
  if (hd->kp.panels)
    gemm_matmul_t_scaled(s, q, &hd->kp, hd->scale);
  else
    mat_matmul_t_scaled(s, q, hd->k, hd->scale);
}

// Stage 8: S_h + M, rows r0..: with the causal mask, key j > query i gets -inf (exactly 0 after
// the softmax, -inf in the dump as in PyTorch). Into a matrix of its own, so that the trace
// keeps the scores before the mask too; without a mask there is nothing to do (S is S + M).
static void apply_mask(const Head *hd, int r0, int r1) {
  if (!hd->causal) return;
  mat_copy(rows(hd->masked, r0, r1 - r0), rows(hd->s, r0, r1 - r0));
  for (int i = r0; i < r1; i++)
    for (int j = i + 1; j < hd->masked.cols; j++) MAT_AT(hd->masked, i, j) = -INFINITY;
}

// Stage 9: A_h = softmax(S_h + M) [L, L], row by row, rows r0..: each row sums to 1.
static void softmax_rows(const Head *hd, int r0, int r1) {
  mat_softmax_rows(rows(hd->a, r0, r1 - r0), rows(hd->masked, r0, r1 - r0));
}

// Stage 10: A_h V_h [L, d_k], rows r0..: each query's weighted sum of the value rows.
static void weighted_values(const Head *hd, int r0, int r1) {
  Mat av = rows(hd->av, r0, r1 - r0), a = rows(hd->a, r0, r1 - r0);
  if (hd->vp.panels)
    gemm_matmul_t(av, a, &hd->vp, 0, NULL, NO_MAT);
  else
    mat_matmul(av, a, hd->v);
}

// Stage 11: [head_1 … head_H] [L, D]: A_h V_h, rows r0.., into columns h·d_k.. of concat.
static void concat_heads(const Head *hd, int r0, int r1) {
  mat_copy(rows(hd->concat, r0, r1 - r0), rows(hd->av, r0, r1 - r0));
}

// ---------------------------------------------------------------- attention, the schedule

typedef void (*HeadStage)(const Head *hd, int r0, int r1);

// Stages 6–11 in table order, as attention_head runs them: `split` on all of a head's rows (every
// score needs every key), then `block` in this order on each block of query rows.
typedef struct {
  HeadStage split;
  HeadStage block[5];
} AttentionStages;

typedef struct {
  const Trace *t;
  int l;
  const AttentionStages *stages;
} HeadJob;

// The views of head h of layer l (see Head).
static Head head_views(const Trace *t, int l, int h) {
  const TraceLayer *y = &t->layers[l];
  const TraceTensor *T = t->t;
  int L = t->L, D = t->cfg.D, dk = D / t->cfg.H;
  Mat qkv = mat_view(t->scratch, L, 3 * D);
  bool causal = t->cfg.causal;
  return (Head){
      .qkv = {mat_sub(qkv, 0, h * dk, L, dk), mat_sub(qkv, 0, D + h * dk, L, dk),
              mat_sub(qkv, 0, 2 * D + h * dk, L, dk)},
      .q = head(&T[y->Q], h),
      .k = head(&T[y->K], h),
      .v = head(&T[y->V], h),
      .s = head(&T[causal ? y->S_raw : y->S], h),
      .masked = head(&T[y->S], h),
      .a = head(&T[y->A], h),
      .av = head(&T[y->AV], h),
      .concat = mat_sub(tmat(&T[y->concat]), 0, h * dk, L, dk),
      .causal = causal,
      .scale = 1.0f / sqrtf((float)dk),
  };
}

// K_h and V_h serve every block of query rows: with room in the trace for them, and a product
// large enough for gemm.h, they are packed once per head (K_h for S = Q_h·K_hᵀ, V_h transposed
// for A_h·V_h) and every block multiplies from the packed copies.
static void pack_keys_values(Head *hd, const Trace *t, int h) {
  int L = t->L, dk = hd->k.cols;
  if (!t->attn_packed || !forward_use_gemm || (long)L * L * dk <= mat_naive_max_madds) return;
  size_t kf = gemm_packed_floats(L, dk);
  float *buf = t->attn_packed + (size_t)h * (kf + gemm_packed_floats(dk, L));
  gemm_pack_into(&hd->kp, buf, hd->k);
  gemm_pack_t_into(&hd->vp, buf + kf, hd->v);
}

// Task h: head h's attention, block of query rows by block, so that a block's scores, weights and
// weighted values ([rows, L] at most ATTN_BLOCK_FLOATS floats) stay in the L2 cache from one
// stage to the next.
static void attention_head(void *ctx, int h) {
  const HeadJob *job = ctx;
  const AttentionStages *st = job->stages;
  int L = job->t->L;
  Head hd = head_views(job->t, job->l, h);
  st->split(&hd, 0, L);
  pack_keys_values(&hd, job->t, h);
  int block = ATTN_BLOCK_FLOATS / L < 8 ? 8 : ATTN_BLOCK_FLOATS / L;
  for (int r0 = 0; r0 < L; r0 += block)
    for (size_t i = 0; i < sizeof st->block / sizeof st->block[0]; i++)
      st->block[i](&hd, r0, imin(r0 + block, L));
}

// Stages 6–11 of layer l, a head per task: on two threads the heads are shared out (par.h).
static void attention(Trace *t, int l, const AttentionStages *stages) {
  HeadJob job = {t, l, stages};
  run_tasks(t->cfg.H, attention_head, &job, 2L * t->L * t->L * t->cfg.D);
}

// ---------------------------------------------------------------- one layer

// Layer l, stage by stage in the order of DESIGN.md's table (the numbers are its rows).
static void layer_forward(Trace *t, int l) {
  const ModelConfig *c = &t->cfg;
  const LayerWeights *w = &t->model->layers[l];
  const TraceLayer *y = &t->layers[l];
  TraceTensor *T = t->t;
  int L = t->L, D = c->D, F = c->F;
  Mat in = tmat(&T[y->in]);

  // 5½ pre-norm only: the attention sees LN1(in) [L, D]; post-norm: the input itself
  Mat a_in = in;
  if (c->norm_first) {
    a_in = tmat(&T[y->norm1]);
    add_norm(NO_MAT, in, NO_MAT, a_in, w->norm1_weight, w->norm1_bias, c->ln_eps);
  }

  // 6 QKV projection: [Q | K | V] = a_in · in_projᵀ + b [L, 3D], into the scratch
  Mat qkv = mat_view(t->scratch, L, 3 * D);
  linear(qkv, a_in, mat_view(w->in_proj_weight, 3 * D, D), &w->in_proj_packed, w->in_proj_bias);

  // 6–11 attention, head by head; in a head, split_heads on every row (each score needs every key),
  // then the others block of query rows by block, in this order (attention_head)
  static const AttentionStages stages = {split_heads,      // 6  split into heads: Q_h, K_h, V_h [H, L, d_k]
                                         {scores,          // 7  S_h = Q_h K_hᵀ/√d_k [H, L, L]
                                          apply_mask,      // 8  S_h + M (causal)
                                          softmax_rows,    // 9  A_h = softmax(S_h + M) [H, L, L]
                                          weighted_values, // 10 A_h V_h [H, L, d_k]
                                          concat_heads}};  // 11 concat = [head_1 … head_H] [L, D]
  attention(t, l, &stages);

  // 12 output projection: attn = concat · W^oᵀ + b^o [L, D]
  Mat attn = tmat(&T[y->attn]), res1 = tmat(&T[y->res1]);
  linear(attn, tmat(&T[y->concat]), mat_view(w->out_proj_weight, D, D), &w->out_proj_packed,
         w->out_proj_bias);

  // 13 residual + LayerNorm: res1 = in + attn [L, D], then post-norm LN1(res1) (the FFN input),
  // pre-norm LN2(res1)
  Mat f_in = tmat(&T[c->norm_first ? y->norm2 : y->norm1]);
  const float *g = c->norm_first ? w->norm2_weight : w->norm1_weight;
  const float *b = c->norm_first ? w->norm2_bias : w->norm1_bias;
  add_norm(res1, in, attn, f_in, g, b, c->ln_eps);

  // 14 FFN hidden: ffn_pre = f_in · W_1ᵀ + b_1 [L, F], hidden = act(ffn_pre) [L, F]
  Mat hidden = tmat(&T[y->ffn_hidden]), ffn = tmat(&T[y->ffn]);
  linear_act(tmat(&T[y->ffn_pre]), f_in, mat_view(w->linear1_weight, F, D), &w->linear1_packed,
             w->linear1_bias, hidden, c->activation);

  // 15 FFN out: ffn = hidden · W_2ᵀ + b_2 [L, D]
  linear(ffn, hidden, mat_view(w->linear2_weight, D, F), &w->linear2_packed, w->linear2_bias);

  // 16 residual + LayerNorm, the layer's output: pre-norm out = res2 = res1 + ffn;
  // post-norm res2 = f_in + ffn, out = LN2(res2)
  Mat res2 = tmat(&T[y->res2]);
  if (c->norm_first)
    add_norm(res2, res1, ffn, NO_MAT, NULL, NULL, c->ln_eps);
  else
    add_norm(res2, f_in, ffn, tmat(&T[y->norm2]), w->norm2_weight, w->norm2_bias, c->ln_eps);
}

void model_forward(Trace *t) {
  const ModelConfig *c = &t->cfg;
  const Model *m = t->model;
  TraceTensor *T = t->t;
  int L = t->L, D = c->D, V = c->V;
  if (!threads_set) forward_set_threads(1);

  // O [L, V] one-hot; X = O·E [L, D] is row id(x_i) of E, exactly (a product with 0s and one 1)
  memset(T[t->O].data, 0, sizeof(float) * (size_t)L * V);
  for (int i = 0; i < L; i++) {
    int id = t->tokens.ids[i];
    T[t->O].data[(size_t)i * V + id] = 1.0f;
    memcpy(T[t->X].data + (size_t)i * D, m->embed + (size_t)id * D, sizeof(float) * (size_t)D);
  }
  if (!t->pos_ready) {
    forward_posenc(T[t->P].data, L, D);
    t->pos_ready = true;
  }
  mat_add(tmat(&T[t->Z]), tmat(&T[t->X]), tmat(&T[t->P]));

  for (int l = 0; l < c->n_layers; l++) layer_forward(t, l);

  if (t->pred >= 0) { // prediction head: softmax(LN(out) · W_outᵀ + b_out) [L, V]
    const TraceTensor *x = &T[t->layers[c->n_layers - 1].out];
    if (t->final_norm >= 0) {
      mat_layernorm_rows(tmat(&T[t->final_norm]), tmat(x), m->norm_weight, m->norm_bias, c->ln_eps);
      x = &T[t->final_norm];
    }
    linear(tmat(&T[t->logits]), tmat(x), mat_view(m->head_weight, V, D), NULL, m->head_bias);
    mat_softmax_rows(tmat(&T[t->pred]), tmat(&T[t->logits]));
  }
}
