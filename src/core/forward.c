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
#include <stdlib.h>
#include <string.h>

#include "editlist.h"    // defines: TraceEdits, edits_apply_scores, edits_head
#include "gelu_tanh.h"   // defines: gelu_tanh_rows
#include "gemm.h"        // defines: GemmWeights, gemm_matmul_t, GEMM_NR
#include "gemm_blocks.h" // defines: gemm_blocks_matmul_t
#include "mat.h"         // defines: Mat, mat_matmul_t, mat_softmax_rows, mat_layernorm_rows ...
#include "modern_rows.h" // defines: rmsnorm_rows, silu_mul_rows, rope_rows
#include "par.h"         // defines: par_run, par_threads

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

// Row i of the sinusoid [D] (model_forward's P and the cache's row of position i).
static void posenc_row(float *P, int i, int D) {
  for (int k = 0; k < D; k += 2) {
    double ang = i / pow(10000.0, (double)k / D);
    P[k] = (float)sin(ang);
    if (k + 1 < D) P[k + 1] = (float)cos(ang);
  }
}

void forward_posenc(float *P, int L, int D) {
  for (int i = 0; i < L; i++) posenc_row(P + (size_t)i * D, i, D);
}

// ---------------------------------------------------------------- linear layers

bool forward_use_gemm = true;

// y[M,N] = x[M,K]·w[N,K]ᵀ + bias, and then act_out = activation(y) when act_out is given;
// part p computes columns split_at(N, parts, p).. of both (multiples of GEMM_NR, as
// gemm_matmul_t needs). With the weights packed, gemm_matmul_t also writes ReLU's output.
typedef struct {
  Mat y, x, w;
  const GemmWeights *packed; // w packed, when this product runs gemm_matmul_t; else NULL
  bool blocks;               // w not packed, but large: packed block by block (gemm_blocks.h)
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
    Mat w = mat_sub(j->w, c0, 0, c1 - c0, j->w.cols);
    if (!j->blocks || !gemm_blocks_matmul_t(y, j->x, w, bias)) mat_matmul_t(y, j->x, w, bias);
  }
  if (h.data) {
    if (j->act == ACT_GELU)
      mat_gelu(h, y);
    else if (j->act == ACT_GELU_TANH)
      gelu_tanh_rows(h, y); // GPT-2's GELU, tanh form
    else
      mat_relu(h, y);
  }
}

// `packed` is w packed once (model.h), or NULL / empty: then mat_matmul_t, except for products
// with more rows than mat_loop_max_rows (those mat_matmul_t would give to BLAS), which pack w
// block by block for the packed kernel (gemm_blocks.h: the prediction head, 50257 rows of wte
// for GPT-2, runs 2-3x faster than in BLAS's AVX2 kernels).
static void linear_act(Mat y, Mat x, Mat w, const GemmWeights *packed, const float *bias, Mat act_out,
                       Activation act) {
  long madds = (long)y.rows * y.cols * x.cols;
  LinearJob j = {y, x, w, NULL, false, bias, act_out, act, parts_for(madds)};
  if (forward_use_gemm && madds > mat_naive_max_madds) {
    if (packed && packed->panels)
      j.packed = packed;
    else
      j.blocks = y.rows > mat_loop_max_rows && gemm_supported();
  }
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
  Mat qkv[3];              // this head's columns of the Q, K and V blocks of the projection [L, d_k] each
  Mat q, k, v;             // Q_h, K_h, V_h [L, d_k]
  Mat s, masked;           // S_h = Q_h K_hᵀ/√d_k and S_h + M [L, L] (one matrix when there is no mask)
  Mat a;                   // A_h = softmax(S_h + M) [L, L]
  Mat av;                  // A_h V_h [L, d_k]
  Mat concat;              // columns h·d_k.. of concat [L, D]
  bool causal;             // M: query i sees keys 0..i
  float scale;             // 1/√d_k
  GemmWeights kp, vp;      // K_h and V_h packed for gemm.h when that pays, else empty (panels NULL)
  const TraceEdits *edits; // what-if edits of an encoder layer (edits.h), or NULL
  int layer, h;            // this head's layer (0-based, -1 outside the encoder) and number
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

// What-if edits (edits.h), after stage 7: the edited scores of rows r0.. replace the computed ones,
// so the mask, the softmax and everything after see them.
static void edit_scores(const Head *hd, int r0, int r1) {
  edits_apply_scores(hd->edits, hd->layer, hd->h, hd->s.data, hd->s.stride, r0, r1);
}

// Stage 8: S_h + M, rows r0..: with the causal mask, key j > query i gets -inf (exactly 0 after
// the softmax, -inf in the dump as in PyTorch). Into a matrix of its own, so that the trace
// keeps the scores before the mask too; without a mask there is nothing to do (S is S + M).
static void apply_mask(const Head *hd, int r0, int r1) {
  if (!hd->causal) return;
  int keys = hd->masked.cols;
  for (int i = r0; i < r1; i++) {
    int n = imin(i + 1, keys); // keys 0..i stay
    float *m = &MAT_AT(hd->masked, i, 0);
    memcpy(m, &MAT_AT(hd->s, i, 0), sizeof(float) * (size_t)n);
    for (int j = n; j < keys; j++) m[j] = -INFINITY;
  }
}

// Stage 9: A_h = softmax(S_h + M) [L, L], row by row, rows r0..: each row sums to 1. Under the
// causal mask only keys 0..i take part (the others' weights are exactly 0, as exp(-inf) would
// give them): half the exponentials of the full rows.
static void softmax_rows(const Head *hd, int r0, int r1) {
  if (!hd->causal) {
    mat_softmax_rows(rows(hd->a, r0, r1 - r0), rows(hd->masked, r0, r1 - r0));
    return;
  }
  int keys = hd->a.cols;
  for (int i = r0; i < r1; i++) {
    int n = imin(i + 1, keys);
    float *a = &MAT_AT(hd->a, i, 0);
    mat_softmax_rows(mat_view(a, 1, n), mat_view(&MAT_AT(hd->masked, i, 0), 1, n));
    float rest = isnan(a[0]) ? NAN : 0.0f; // a row with no finite score is NaN throughout, as before
    for (int j = n; j < keys; j++) a[j] = rest;
  }
}

// Stage 10: A_h V_h [L, d_k], rows r0..: each query's weighted sum of the value rows.
static void weighted_values(const Head *hd, int r0, int r1) {
  Mat av = rows(hd->av, r0, r1 - r0), a = rows(hd->a, r0, r1 - r0);
  if (hd->vp.panels)
    gemm_matmul_t(av, a, &hd->vp, 0, NULL, NO_MAT);
  else
    mat_matmul(av, a, hd->v);
}

// What-if edits (edits.h), after stage 9: a head switched off as "uniform" attends equally to
// every key its query may see: A_h[i, j] = 1/L (causal: 1/(i+1) for j ≤ i, 0 after).
static void uniform_head(const Head *hd, int r0, int r1) {
  if (edits_head(hd->edits, hd->layer, hd->h) != HEAD_UNIFORM) return;
  for (int i = r0; i < r1; i++) {
    int n = hd->causal ? i + 1 : hd->a.cols;
    for (int j = 0; j < hd->a.cols; j++) MAT_AT(hd->a, i, j) = j < n ? 1.0f / (float)n : 0.0f;
  }
}

// What-if edits (edits.h), after stage 11: a head switched off as "zero" leaves zeros in its columns
// of concat (its A_h and A_h V_h stay as computed), so W^o mixes the other heads only.
static void zero_head(const Head *hd, int r0, int r1) {
  if (edits_head(hd->edits, hd->layer, hd->h) != HEAD_ZERO) return;
  for (int i = r0; i < r1; i++) memset(&MAT_AT(hd->concat, i, 0), 0, sizeof(float) * (size_t)hd->concat.cols);
}

// Stage 11: [head_1 … head_H] [L, D]: A_h V_h, rows r0.., into columns h·d_k.. of concat.
static void concat_heads(const Head *hd, int r0, int r1) {
  mat_copy(rows(hd->concat, r0, r1 - r0), rows(hd->av, r0, r1 - r0));
}

// ---------------------------------------------------------------- attention, the schedule

typedef void (*HeadStage)(const Head *hd, int r0, int r1);

// Stages 6–11 in table order, as attention_head runs them: `split` on all of a head's rows (every
// score needs every key), then `block` in this order on each block of query rows (up to the first
// NULL). The encoder's list has the what-if edits (edits.h) between the stages.
typedef struct {
  HeadStage split;
  HeadStage block[8];
} AttentionStages;

// One attention block of the trace: the indices of its tensors and where its projections are.
// The encoder's self-attention and the decoder's masked self-attention read Q, K and V from the
// projection [rows, 3D]; cross-attention reads only Q from it (its K and V come from memory, split
// into heads once per layer by memory_keys_values).
typedef struct {
  int Q, K, V;   // [H, queries, d_k], [H, keys, d_k] x 2
  int s, masked; // S_h and S_h + M [H, queries, keys]: the same tensor without a mask
  int A, AV;     // [H, queries, keys], [H, queries, d_k]
  int concat;    // [queries, D]
  Mat proj[3];   // the Q, K and V blocks of the projection [rows, D] each (K, V: none for cross)
  bool causal;   // M: query i sees keys 0..i
  int layer;     // the encoder layer (0-based) whose what-if edits apply, or -1
  int group;     // query heads per K/V head (grouped-query attention; 0 or 1: one each)
} AttnBlock;

typedef struct {
  const Trace *t;
  const AttnBlock *b;
  const AttentionStages *stages;
} HeadJob;

// The views of head h of an attention block (see Head).
static Head head_views(const Trace *t, const AttnBlock *b, int h) {
  const TraceTensor *T = t->t;
  int dk = T[b->Q].cols, kv = b->group > 1 ? h / b->group : h; // query head h reads K/V head kv
  Head hd = {
      .q = head(&T[b->Q], h),
      .k = head(&T[b->K], kv),
      .v = head(&T[b->V], kv),
      .s = head(&T[b->s], h),
      .masked = head(&T[b->masked], h),
      .a = head(&T[b->A], h),
      .av = head(&T[b->AV], h),
      .concat = mat_sub(tmat(&T[b->concat]), 0, h * dk, T[b->concat].rows, dk),
      .causal = b->causal,
      .scale = t->no_scale && b->layer >= 0 ? 1.0f : 1.0f / sqrtf((float)dk), // no_scale: issue 21
      .edits = b->layer >= 0 ? t->edits : NULL,
      .layer = b->layer,
      .h = h,
  };
  for (int part = 0; part < 3; part++)
    if (b->proj[part].data) hd.qkv[part] = mat_sub(b->proj[part], 0, h * dk, b->proj[part].rows, dk);
  return hd;
}

// K_h and V_h serve every block of query rows: with room in the trace for them, and a product
// large enough for gemm.h, they are packed once per head (K_h for S = Q_h·K_hᵀ, V_h transposed
// for A_h·V_h) and every block multiplies from the packed copies. Under grouped-query attention
// the copies are those of K/V head `kv`, packed once (pack_group) and read by every query head
// of its group; `pack` false only points hd at them.
static void pack_keys_values(Head *hd, const Trace *t, int kv, bool pack) {
  int L = hd->k.rows, dk = hd->k.cols; // L keys
  if (!t->attn_packed || !forward_use_gemm || (long)L * L * dk <= mat_naive_max_madds) return;
  size_t kf = gemm_packed_floats(L, dk);
  float *buf = t->attn_packed + (size_t)kv * (kf + gemm_packed_floats(dk, L));
  if (pack) {
    gemm_pack_into(&hd->kp, buf, hd->k);
    gemm_pack_t_into(&hd->vp, buf + kf, hd->v);
  } else {
    hd->kp = (GemmWeights){buf, L, dk};
    hd->vp = (GemmWeights){buf + kf, dk, L};
  }
}

// Task kv of grouped-query attention: K/V head kv packed, for the query heads of its group.
static void pack_group(void *ctx, int kv) {
  const HeadJob *job = ctx;
  Head hd = head_views(job->t, job->b, kv * job->b->group);
  pack_keys_values(&hd, job->t, kv, true);
}

// Task h: head h's attention, block of query rows by block, so that a block's scores, weights and
// weighted values ([rows, L] at most ATTN_BLOCK_FLOATS floats) stay in the L2 cache from one
// stage to the next.
static void attention_head(void *ctx, int h) {
  const HeadJob *job = ctx;
  const AttentionStages *st = job->stages;
  Head hd = head_views(job->t, job->b, h);
  int L = hd.q.rows, keys = hd.s.cols; // the encoder's self-attention: L == keys
  st->split(&hd, 0, L);
  bool grouped = job->b->group > 1;
  pack_keys_values(&hd, job->t, grouped ? h / job->b->group : h, !grouped);
  int block = ATTN_BLOCK_FLOATS / keys < 8 ? 8 : ATTN_BLOCK_FLOATS / keys;
  for (int r0 = 0; r0 < L; r0 += block)
    for (size_t i = 0; i < sizeof st->block / sizeof st->block[0] && st->block[i]; i++)
      st->block[i](&hd, r0, imin(r0 + block, L));
}

// Stages 6–11 of an attention block, a head per task: on two threads the heads are shared out
// (par.h). Grouped-query attention (K and V already split into their heads) packs each K/V head
// first, once for its whole group.
static void attention(Trace *t, const AttnBlock *b, const AttentionStages *stages) {
  HeadJob job = {t, b, stages};
  const TraceTensor *s = &t->t[b->s];
  if (b->group > 1) {
    const TraceTensor *k = &t->t[b->K];
    run_tasks(t->cfg.H / b->group, pack_group, &job, 2L * k->rows * k->cols * t->cfg.H / b->group);
  }
  run_tasks(t->cfg.H, attention_head, &job, 2L * s->rows * s->cols * t->cfg.D);
}

// The attention block of encoder layer l, its projection [L, 3D] in the scratch.
static AttnBlock encoder_block(const Trace *t, int l) {
  const TraceLayer *y = &t->layers[l];
  int L = t->L, D = t->cfg.D;
  Mat qkv = mat_view(t->scratch, L, 3 * D);
  bool causal = t->cfg.causal;
  return (AttnBlock){y->Q,
                     y->K,
                     y->V,
                     causal ? y->S_raw : y->S,
                     y->S,
                     y->A,
                     y->AV,
                     y->concat,
                     {mat_sub(qkv, 0, 0, L, D), mat_sub(qkv, 0, D, L, D), mat_sub(qkv, 0, 2 * D, L, D)},
                     causal,
                     l,
                     1};
}

// ---------------------------------------------------------------- today's decoders (issue 34)

// y = x / sqrt(mean(x²) + eps) · g (· (1 + g) with offset) row by row, [rows, n] (modern_rows.h);
// rms, when given, receives each row's rms for the view.
static void rms_norm_rows_to(Mat y, Mat x, const float *g, float eps, bool offset, float *rms) {
  rmsnorm_rows(y, x, g, eps, offset, rms);
}

static void rms_norm_rows(Mat y, Mat x, const float *g, float eps, bool offset) {
  rmsnorm_rows(y, x, g, eps, offset, NULL);
}

// The RoPE angles φ[i, k] = i·θ_k [L, d_k/2], θ_k = Θ^(-2k/d_k) as Hugging Face's rotary embedding
// makes them (inv_freq in float, the product in float), with Llama 3's rope_scaling: wavelengths
// 2π/θ_k longer than orig/low are divided by factor, shorter than orig/high kept, those between
// blended (modeling_rope_utils' _compute_llama3_parameters).
static void rope_angle_row(float *phi, int i, const ModelConfig *c) {
  int dk = model_dk(c), n = dk / 2;
  for (int k = 0; k < n; k++) {
    float inv = (float)(1.0 / pow((double)c->rope_theta, (double)(float)(2 * k) / (double)dk));
    if (c->rope_factor > 0) {
      double wavelen = 2 * 3.14159265358979323846 / inv, lo_w = c->rope_orig / c->rope_low,
             hi_w = c->rope_orig / c->rope_high;
      double f = inv;
      if (wavelen > lo_w)
        f = inv / c->rope_factor;
      else if (wavelen >= hi_w) {
        double smooth = (c->rope_orig / wavelen - c->rope_low) / (c->rope_high - c->rope_low);
        f = (1 - smooth) * inv / c->rope_factor + smooth * inv;
      }
      inv = (float)f;
    }
    phi[k] = (float)i * inv;
  }
}

static void rope_rotate(Mat x, const float *csin, RopeStyle style);
static void rope_cos_sin(float *cs, const float *phi, int rows, int n);

void forward_rope_at(float *v, int pos, const ModelConfig *c) {
  int dk = model_dk(c);
  float *phi = malloc(sizeof(float) * (size_t)(dk / 2 + 2 * (dk / 2)));
  if (!phi) return;
  rope_angle_row(phi, pos, c);
  rope_cos_sin(phi + dk / 2, phi, 1, dk / 2);
  rope_rotate(mat_view(v, 1, dk), phi + dk / 2, c->rope);
  free(phi);
}

static void rope_angles(float *phi, int L, const ModelConfig *c) {
  for (int i = 0; i < L; i++) rope_angle_row(phi + (size_t)i * (model_dk(c) / 2), i, c);
}

// hidden = act(gate) ⊙ up [rows, F]: SiLU (SwiGLU, modern_rows.h) or GELU (GeGLU, either form).
static void gated_hidden(Mat hidden, Mat gate, Mat up, Activation act) {
  if (act == ACT_SILU) {
    silu_mul_rows(hidden, gate, up);
    return;
  }
  if (act == ACT_GELU_TANH)
    gelu_tanh_rows(hidden, gate);
  else
    mat_gelu(hidden, gate);
  for (int i = 0; i < gate.rows; i++) {
    const float *u = &MAT_AT(up, i, 0);
    float *h = &MAT_AT(hidden, i, 0);
    for (int j = 0; j < gate.cols; j++) h[j] *= u[j];
  }
}

// The cosines and sines of the angles phi [rows, n]: cs [rows, 2n], each row n cosines then n
// sines (computed once a trace, or once a cached token, not once a head and layer).
static void rope_cos_sin(float *cs, const float *phi, int rows, int n) {
  for (int i = 0; i < rows; i++)
    for (int k = 0; k < n; k++) {
      double a = phi[(size_t)i * n + k];
      cs[(size_t)i * 2 * n + k] = (float)cos(a);
      cs[(size_t)i * 2 * n + n + k] = (float)sin(a);
    }
}

// y [L, d_k] (one head) = x rotated by the angles whose cosines and sines are cs [L, d_k]
// (rope_cos_sin): halves (dimension k with k + d_k/2, rotate_half) or adjacent pairs (2k, 2k + 1).
static void rope_rotate_to(Mat y, Mat x, const float *csin, RopeStyle style) {
  rope_rows(y, x, csin, style == ROPE_PAIRS ? ROPE_ROWS_PAIRS : ROPE_ROWS_HALVES);
}

static void rope_rotate(Mat x, const float *csin, RopeStyle style) { rope_rotate_to(x, x, csin, style); }

// Head h of a projection block [L, heads·d_k] (columns h·d_k..) into dst [L, d_k], then the
// QK-norm (RMSNorm over d_k with gain g) when g is given.
static void take_head(Mat dst, Mat block, int h, const float *g, const ModelConfig *c) {
  int dk = dst.cols;
  mat_copy(dst, mat_sub(block, 0, h * dk, block.rows, dk));
  if (g) rms_norm_rows(dst, dst, g, c->ln_eps, c->rms_offset);
}

static void no_split(const Head *hd, int r0, int r1) { (void)hd, (void)r0, (void)r1; }

// Layer l of today's decoders: RMSNorm, Q K V (grouped), QK-norm, RoPE, causal attention, W^o,
// residual, RMSNorm, gate and up, act(gate) ⊙ up, down, residual. The products go to linear (the
// packed gemm kernels), the attention to the same stage functions as the 2017 layer's.
static void layer_forward_modern(Trace *t, int l) {
  const ModelConfig *c = &t->cfg;
  const LayerWeights *w = &t->model->layers[l];
  const TraceLayer *y = &t->layers[l];
  TraceTensor *T = t->t;
  int L = t->L, D = c->D, F = c->F, H = c->H, Hk = model_hkv(c), dk = model_dk(c);
  int QD = H * dk, KD = Hk * dk, QKV = QD + 2 * KD;
  Mat in = tmat(&T[y->in]), x1 = tmat(&T[y->rms1]);
  rms_norm_rows_to(x1, in, w->norm1_weight, c->ln_eps, c->rms_offset, T[y->rms1_r].data);

  // [Q | K | V] = x1 · in_projᵀ + b [L, (H + 2 H_kv)·d_k], into the scratch; heads taken out, QK-norm
  Mat qkv = mat_view(t->scratch, L, QKV);
  linear(qkv, x1, mat_view(w->in_proj_weight, QKV, D), &w->in_proj_packed, w->in_proj_bias);
  Mat qb = mat_sub(qkv, 0, 0, L, QD), kb = mat_sub(qkv, 0, QD, L, KD), vb = mat_sub(qkv, 0, QD + KD, L, KD);
  for (int h = 0; h < H; h++) take_head(head(&T[y->Q_norope], h), qb, h, w->q_norm_weight, c);
  for (int h = 0; h < Hk; h++) {
    take_head(head(&T[y->K_norope], h), kb, h, w->k_norm_weight, c);
    take_head(head(&T[y->V], h), vb, h, NULL, c);
  }
  // RoPE: Q and K turned by their positions' angles (none: Q and K as they are)
  if (c->rope) {
    for (int h = 0; h < H; h++)
      rope_rotate_to(head(&T[y->Q], h), head(&T[y->Q_norope], h), t->rope_cs, c->rope);
    for (int h = 0; h < Hk; h++)
      rope_rotate_to(head(&T[y->K], h), head(&T[y->K_norope], h), t->rope_cs, c->rope);
  } else {
    memcpy(T[y->Q].data, T[y->Q_norope].data, sizeof(float) * (size_t)H * L * dk);
    memcpy(T[y->K].data, T[y->K_norope].data, sizeof(float) * (size_t)Hk * L * dk);
  }

  // scores, mask, softmax, weighted values, concat: query head h reads K/V head h / (H / H_kv)
  static const AttentionStages stages = {no_split,
                                         {scores, edit_scores, apply_mask, softmax_rows, uniform_head,
                                          weighted_values, concat_heads, zero_head}};
  AttnBlock blk = {y->Q, y->K, y->V,  y->S_raw, y->S, y->A, y->AV, y->concat, {NO_MAT, NO_MAT, NO_MAT},
                   true, l,    H / Hk};
  attention(t, &blk, &stages);

  // attn = concat · W^oᵀ [L, D]; res1 = in + attn; rms2 = RMSNorm(res1)
  Mat attn = tmat(&T[y->attn]), res1 = tmat(&T[y->res1]), x2 = tmat(&T[y->rms2]);
  linear(attn, tmat(&T[y->concat]), mat_view(w->out_proj_weight, D, QD), &w->out_proj_packed,
         w->out_proj_bias);
  add_norm(res1, in, attn, NO_MAT, NULL, NULL, c->ln_eps);
  rms_norm_rows_to(x2, res1, w->norm2_weight, c->ln_eps, c->rms_offset, T[y->rms2_r].data);

  // gate = x2 · W_gᵀ, up = x2 · W_1ᵀ [L, F]; hidden = act(gate) ⊙ up; ffn = hidden · W_2ᵀ [L, D]
  Mat gate = tmat(&T[y->gate]), up = tmat(&T[y->up]), hidden = tmat(&T[y->ffn_hidden]),
      ffn = tmat(&T[y->ffn]);
  linear(gate, x2, mat_view(w->gate_weight, F, D), &w->gate_packed, NULL);
  linear(up, x2, mat_view(w->linear1_weight, F, D), &w->linear1_packed, NULL);
  gated_hidden(hidden, gate, up, c->activation);
  linear(ffn, hidden, mat_view(w->linear2_weight, D, F), &w->linear2_packed, NULL);
  add_norm(tmat(&T[y->res2]), res1, ffn, NO_MAT, NULL, NULL, c->ln_eps);
}

// ---------------------------------------------------------------- one layer

// Layer l, stage by stage in the order of DESIGN.md's table (the numbers are its rows).
static void layer_forward(Trace *t, int l) {
  if (model_is_modern(&t->cfg)) {
    layer_forward_modern(t, l);
    return;
  }
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
  // (edit_scores, uniform_head, zero_head: the what-if edits, edits.h; nothing without them)
  static const AttentionStages stages = {split_heads,      // 6  split into heads: Q_h, K_h, V_h [H, L, d_k]
                                         {scores,          // 7  S_h = Q_h K_hᵀ/√d_k [H, L, L]
                                          edit_scores,     //    edited scores
                                          apply_mask,      // 8  S_h + M (causal)
                                          softmax_rows,    // 9  A_h = softmax(S_h + M) [H, L, L]
                                          uniform_head,    //    a head switched off: uniform
                                          weighted_values, // 10 A_h V_h [H, L, d_k]
                                          concat_heads,    // 11 concat = [head_1 … head_H] [L, D]
                                          zero_head}};     //    a head switched off: zeros
  AttnBlock blk = encoder_block(t, l);
  attention(t, &blk, &stages);

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

// ---------------------------------------------------------------- an encoder-decoder's decoder
//
// Legend: S source tokens (the encoder's L), T the decoder's input tokens (<bos> + the target's),
// V_t target vocabulary. The decoder reuses the encoder's stage functions: the same attention
// (split_heads, scores, apply_mask, softmax_rows, weighted_values, concat_heads), linear and
// add_norm. Its weights are packed as the encoder's (model.c), the cross-attention's in three.

// Cross-attention's split: Q^c_h [T, d_k] = columns h·d_k.. of the query projection, rows r0..
// (its K^c_h and V^c_h come from memory_keys_values, once per layer).
static void split_queries(const Head *hd, int r0, int r1) {
  mat_copy(rows(hd->q, r0, r1 - r0), rows(hd->qkv[0], r0, r1 - r0));
}

// One-hot O [n, V], X = O·E [n, D] (row id(x_i) of E, exactly), Z = X + P [n, D].
static void embed_tokens(Mat O, Mat X, Mat P, Mat Z, const int *ids, const float *table) {
  memset(O.data, 0, sizeof(float) * (size_t)O.rows * O.cols);
  for (int i = 0; i < O.rows; i++) {
    MAT_AT(O, i, ids[i]) = 1.0f;
    memcpy(X.data + (size_t)i * X.stride, table + (size_t)ids[i] * X.cols, sizeof(float) * (size_t)X.cols);
  }
  mat_add(Z, X, P);
}

// Cross-attention's K^c and V^c [H, S, d_k] of decoder layer j: memory [S, D] · (W^{kc} | W^{vc})ᵀ
// + b, split into heads. They depend on memory only, not on the target: computed once per layer
// and read by every target row (generation, one more target word per step, reuses them).
static void memory_keys_values(Trace *t, int j, Mat kv) {
  const DecLayerWeights *dw = &t->model->dec_layers[j];
  const TraceDecLayer *y = &t->dec_layers[j];
  int S = t->L, D = t->cfg.D, dk = D / t->cfg.H;
  linear(kv, tmat(&t->t[t->memory]), mat_view(dw->cross_in_proj_weight + (size_t)D * D, 2 * D, D),
         &dw->cross_kv_packed, dw->cross_in_proj_bias + D);
  for (int h = 0; h < t->cfg.H; h++) {
    mat_copy(head(&t->t[y->cK], h), mat_sub(kv, 0, h * dk, S, dk));
    mat_copy(head(&t->t[y->cV], h), mat_sub(kv, 0, D + h * dk, S, dk));
  }
}

// Decoder layer j, stage by stage in the order of the stage table (STEP_DEC_* and STEP_CROSS_*).
// Post-norm: normK is the LayerNorm after the K-th residual; pre-norm: before the K-th sub-layer.
static void decoder_layer_forward(Trace *t, int j) {
  const ModelConfig *c = &t->cfg;
  const DecLayerWeights *dw = &t->model->dec_layers[j];
  const LayerWeights *w = &dw->self;
  const TraceDecLayer *y = &t->dec_layers[j];
  TraceTensor *T = t->t;
  int Tn = t->T, S = t->L, D = c->D, F = c->F;
  bool pre = c->norm_first;
  Mat in = tmat(&T[y->in]);
  static const AttentionStages self_stages = {
      split_heads, {scores, apply_mask, softmax_rows, weighted_values, concat_heads}};
  static const AttentionStages cross_stages = {
      split_queries, {scores, apply_mask, softmax_rows, weighted_values, concat_heads}};

  // dec_prenorm (pre-norm only): the masked self-attention sees LN1(in) [T, D]
  Mat a_in = in;
  if (pre) {
    a_in = tmat(&T[y->norm1]);
    add_norm(NO_MAT, in, NO_MAT, a_in, w->norm1_weight, w->norm1_bias, c->ln_eps);
  }

  // dec_qkv … dec_concat: masked self-attention over the target, [Q | K | V] [T, 3D] in the scratch,
  // S_h [H, T, T] with -inf above the diagonal (a word may not look at the words after it)
  Mat qkv = mat_view(t->scratch, Tn, 3 * D);
  linear(qkv, a_in, mat_view(w->in_proj_weight, 3 * D, D), &w->in_proj_packed, w->in_proj_bias);
  AttnBlock self = {y->Q,
                    y->K,
                    y->V,
                    y->S_raw,
                    y->S,
                    y->A,
                    y->AV,
                    y->concat,
                    {mat_sub(qkv, 0, 0, Tn, D), mat_sub(qkv, 0, D, Tn, D), mat_sub(qkv, 0, 2 * D, Tn, D)},
                    true,
                    -1,
                    1};
  attention(t, &self, &self_stages);

  // dec_outproj: attn = concat · W^oᵀ + b^o [T, D]
  Mat attn = tmat(&T[y->attn]), res1 = tmat(&T[y->res1]);
  linear(attn, tmat(&T[y->concat]), mat_view(w->out_proj_weight, D, D), &w->out_proj_packed,
         w->out_proj_bias);

  // dec_addnorm1: res1 = in + attn; x1 = post-norm LN1(res1), pre-norm LN2(res1): the cross-attention's
  // queries come from x1
  Mat x1 = tmat(&T[pre ? y->norm2 : y->norm1]);
  add_norm(res1, in, attn, x1, pre ? w->norm2_weight : w->norm1_weight, pre ? w->norm2_bias : w->norm1_bias,
           c->ln_eps);

  // cross_qkv: K^c, V^c [H, S, d_k] from memory (once per layer), Q^c = x1 · W^{qc}ᵀ + b [T, D] in
  // the scratch, then cross_scores … cross_concat: S^c_h [H, T, S], no mask (every source word)
  Mat q = mat_view(t->scratch, Tn, D), kv = mat_view(t->scratch + (size_t)Tn * D, S, 2 * D);
  if (!t->memory_ready) memory_keys_values(t, j, kv); // generation: copied in (trace.h)
  linear(q, x1, mat_view(dw->cross_in_proj_weight, D, D), &dw->cross_q_packed, dw->cross_in_proj_bias);
  AttnBlock cross = {y->cQ, y->cK, y->cV, y->cS, y->cS, y->cA, y->cAV, y->cconcat, {q, NO_MAT, NO_MAT},
                     false, -1,    1};
  attention(t, &cross, &cross_stages);

  // cross_outproj: cattn = cconcat · W^{oc}ᵀ + b^{oc} [T, D]
  Mat cattn = tmat(&T[y->cattn]), res2 = tmat(&T[y->res2]);
  linear(cattn, tmat(&T[y->cconcat]), mat_view(dw->cross_out_proj_weight, D, D), &dw->cross_out_packed,
         dw->cross_out_proj_bias);

  // dec_addnorm2: res2 = (pre-norm res1, post-norm x1) + cattn; f_in = post-norm LN2(res2),
  // pre-norm LN3(res2): the FFN's input
  Mat f_in = tmat(&T[pre ? y->norm3 : y->norm2]);
  add_norm(res2, pre ? res1 : x1, cattn, f_in, pre ? dw->norm3_weight : w->norm2_weight,
           pre ? dw->norm3_bias : w->norm2_bias, c->ln_eps);

  // dec_ffn_hidden, dec_ffn_out: hidden = act(f_in · W_1ᵀ + b_1) [T, F], ffn = hidden · W_2ᵀ + b_2 [T, D]
  Mat hidden = tmat(&T[y->ffn_hidden]), ffn = tmat(&T[y->ffn]);
  linear_act(tmat(&T[y->ffn_pre]), f_in, mat_view(w->linear1_weight, F, D), &w->linear1_packed,
             w->linear1_bias, hidden, c->activation);
  linear(ffn, hidden, mat_view(w->linear2_weight, D, F), &w->linear2_packed, w->linear2_bias);

  // dec_addnorm3, the layer's output: pre-norm out = res3 = res2 + ffn; post-norm res3 = f_in + ffn,
  // out = LN3(res3)
  Mat res3 = tmat(&T[y->res3]);
  if (pre)
    add_norm(res3, res2, ffn, NO_MAT, NULL, NULL, c->ln_eps);
  else
    add_norm(res3, f_in, ffn, tmat(&T[y->norm3]), dw->norm3_weight, dw->norm3_bias, c->ln_eps);
}

// pred = softmax(logits / T) row by row [L, V] (T = t->temperature, 0 meaning 1). At T = 1 the
// logits go to the softmax as they are (torch's bits); else they are divided first, into pred,
// which the softmax then rewrites in place (it reads each element before writing it).
static void predict_rows(Trace *t) {
  Mat p = tmat(&t->t[t->pred]), z = tmat(&t->t[t->logits]);
  float T = t->temperature > 0 ? t->temperature : 1.0f;
  if (T == 1.0f) {
    mat_softmax_rows(p, z);
    return;
  }
  for (int i = 0; i < z.rows; i++)
    for (int j = 0; j < z.cols; j++) MAT_AT(p, i, j) = MAT_AT(z, i, j) / T;
  mat_softmax_rows(p, p);
}

void forward_set_temperature(Trace *t, float T) {
  t->temperature = T;
  if (t->pred >= 0 && t->T == 0) predict_rows(t);
}

// memory, then the decoder on its input tokens, then the prediction over the target vocabulary.
static void decoder_forward(Trace *t) {
  const ModelConfig *c = &t->cfg;
  const Model *m = t->model;
  TraceTensor *T = t->t;
  int Tn = t->T, D = c->D, V_t = c->V_t;

  // memory: M = LayerNorm(Z') [S, D], encoder.norm of the last encoder layer's output
  if (!t->memory_ready) // generation: copied in (trace.h)
    mat_layernorm_rows(tmat(&T[t->memory]), tmat(&T[t->layers[c->n_layers - 1].out]), m->enc_norm_weight,
                       m->enc_norm_bias, c->ln_eps);

  // dec_onehot, dec_embed, dec_posenc, dec_addpos: O_t [T, V_t], Y = O_t·E_t [T, D], P [T, D], Y + P
  forward_posenc(T[t->dP].data, Tn, D);
  embed_tokens(tmat(&T[t->dO]), tmat(&T[t->dX]), tmat(&T[t->dP]), tmat(&T[t->dZ]), t->dec_tokens.ids,
               m->tgt_embed);

  for (int j = 0; j < c->n_dec_layers; j++) decoder_layer_forward(t, j);

  // dec_predict: softmax(LayerNorm(Y') · W_outᵀ + b_out) [T, V_t], decoder.norm first
  mat_layernorm_rows(tmat(&T[t->dec_norm]), tmat(&T[t->dec_layers[c->n_dec_layers - 1].out]),
                     m->dec_norm_weight, m->dec_norm_bias, c->ln_eps);
  linear(tmat(&T[t->logits]), tmat(&T[t->dec_norm]), mat_view(m->head_weight, V_t, D), NULL, m->head_bias);
  mat_softmax_rows(tmat(&T[t->pred]), tmat(&T[t->logits]));
}

void model_forward(Trace *t) {
  const ModelConfig *c = &t->cfg;
  const Model *m = t->model;
  TraceTensor *T = t->t;
  int L = t->L, D = c->D, V = c->V;
  if (!threads_set) forward_set_threads(1);
  if (t->T > 0 && t->memory_ready) { // generation: the encoder's part was copied in (trace.h)
    decoder_forward(t);
    return;
  }

  // O [L, V] one-hot; X = O·E [L, D] is row id(x_i) of E, exactly (a product with 0s and one 1)
  memset(T[t->O].data, 0, sizeof(float) * (size_t)L * V);
  for (int i = 0; i < L; i++) {
    int id = t->tokens.ids[i];
    T[t->O].data[(size_t)i * V + id] = 1.0f;
    memcpy(T[t->X].data + (size_t)i * D, m->embed + (size_t)id * D, sizeof(float) * (size_t)D);
  }
  if (!t->pos_ready) { // P [L, D]: the sinusoid, or rows 0..L-1 of the learned table
    if (c->learned_pos)
      memcpy(T[t->P].data, m->pos_embed, sizeof(float) * (size_t)L * D);
    else if (c->no_pos) // pos_encoding=none: P = 0, so Z = OE exactly
      memset(T[t->P].data, 0, sizeof(float) * (size_t)L * D);
    else
      forward_posenc(T[t->P].data, L, D);
    if (t->rope_angle >= 0) {
      rope_angles(T[t->rope_angle].data, L, c);
      rope_cos_sin(t->rope_cs, T[t->rope_angle].data, L, model_dk(c) / 2);
    }
    t->pos_ready = true;
  }
  // Z = X + P (+ t₀, BERT's token type 0) [L, D]; with an embedding LayerNorm that sum is
  // embed_sum and Z = LayerNorm(embed_sum)
  Mat sum = tmat(&T[t->embed_sum >= 0 ? t->embed_sum : t->Z]);
  mat_add(sum, tmat(&T[t->X]), tmat(&T[t->P]));
  if (t->t0 >= 0)
    for (int i = 0; i < L; i++) mat_add(rows(sum, i, 1), rows(sum, i, 1), mat_view(m->token_type, 1, D));
  if (t->embed_sum >= 0)
    mat_layernorm_rows(tmat(&T[t->Z]), sum, m->embed_norm_weight, m->embed_norm_bias,
                       m->embed_norm_eps > 0 ? m->embed_norm_eps : c->ln_eps);

  for (int l = 0; l < c->n_layers; l++) layer_forward(t, l);

  if (t->T > 0) { // an encoder-decoder: memory and the decoder
    decoder_forward(t);
    return;
  }
  if (t->pred >= 0) { // prediction head: softmax(LN(out) · W_outᵀ + b_out) [L, V]
    const TraceTensor *x = &T[t->layers[c->n_layers - 1].out];
    if (t->final_norm >= 0 && c->rms_norm) {
      rms_norm_rows(tmat(&T[t->final_norm]), tmat(x), m->norm_weight, c->ln_eps, c->rms_offset);
      x = &T[t->final_norm];
    } else if (t->final_norm >= 0) {
      mat_layernorm_rows(tmat(&T[t->final_norm]), tmat(x), m->norm_weight, m->norm_bias, c->ln_eps);
      x = &T[t->final_norm];
    }
    if (t->head_norm >= 0) { // BERT's transform: y = LayerNorm(act(x·W_tᵀ + b_t)) [L, D]
      Mat hh = tmat(&T[t->head_hidden]);
      linear_act(hh, tmat(x), mat_view(m->head_transform_weight, D, D), NULL, m->head_transform_bias, hh,
                 c->activation);
      mat_layernorm_rows(tmat(&T[t->head_norm]), hh, m->head_norm_weight, m->head_norm_bias, c->ln_eps);
      x = &T[t->head_norm];
    }
    // a tied head multiplies by E itself (head_weight == embed); head_bias may be NULL
    linear(tmat(&T[t->logits]), tmat(x), mat_view(m->head_weight, V, D), &m->head_packed, m->head_bias);
    predict_rows(t);
  } else if (t->class_pred >= 0) { // classifier: LayerNorm, mean over positions, class scores
    const TraceTensor *x = &T[t->layers[c->n_layers - 1].out];
    if (t->enc_norm >= 0) {
      mat_layernorm_rows(tmat(&T[t->enc_norm]), tmat(x), m->norm_weight, m->norm_bias, c->ln_eps);
      x = &T[t->enc_norm];
    }
    // z̄ [1, D] = (1/L) Σᵢ yᵢ, summed in double
    float *pool = T[t->pool].data;
    for (int d = 0; d < D; d++) {
      double sum_d = 0;
      for (int i = 0; i < L; i++) sum_d += x->data[(size_t)i * x->stride + d];
      pool[d] = (float)(sum_d / L);
    }
    linear(tmat(&T[t->class_logits]), tmat(&T[t->pool]), mat_view(m->classifier_weight, m->n_classes, D),
           NULL, m->classifier_bias);
    mat_softmax_rows(tmat(&T[t->class_pred]), tmat(&T[t->class_logits]));
  }
}

// ---------------------------------------------------------------- one token with a key/value cache

// The row scratch: x, a_in, qkv (3D), concat, attn, res1, f_in, ffn, res2 [D each but qkv], the
// FFN's pre-activation and hidden [F each], a head's scores and weights [cap each], the head's
// transform [D] and the final norm [D].
static size_t row_floats(const ModelConfig *c, int cap) {
  size_t qkv = (size_t)(c->H + 2 * model_hkv(c)) * model_dk(c), qd = (size_t)c->H * model_dk(c);
  size_t modern = 5 * (size_t)c->D + qkv + qd + 3 * (size_t)c->F + 2 * (size_t)cap + 2 * (size_t)model_dk(c);
  size_t plain = 13 * (size_t)c->D + 2 * (size_t)c->F + 2 * (size_t)cap;
  return modern > plain ? modern : plain;
}

bool kv_init(KVCache *c, const Model *m, int cap, Err *err) {
  memset(c, 0, sizeof *c);
  const ModelConfig *g = &m->cfg;
  if (!g->causal || !m->has_head || g->n_dec_layers > 0)
    return err_set(err, "a key/value cache needs a causal model with a prediction head");
  size_t kv = (size_t)g->n_layers * model_hkv(g) * model_dk(g) * (size_t)cap; // n_layers · H_kv · cap · d_k
  c->model = m;
  c->cap = cap;
  c->k = malloc(sizeof(float) * kv);
  c->v = malloc(sizeof(float) * kv);
  c->logits = malloc(sizeof(float) * (size_t)g->V);
  c->row = malloc(sizeof(float) * row_floats(g, cap));
  if (!c->k || !c->v || !c->logits || !c->row) {
    kv_free(c);
    return err_set(err, "out of memory for a key/value cache of %d tokens", cap);
  }
  return true;
}

void kv_free(KVCache *c) {
  free(c->k);
  free(c->v);
  free(c->logits);
  free(c->row);
  memset(c, 0, sizeof *c);
}

// Layer l, head h of the cache: its keys (or values) [cap, d_k].
// (today's decoders: H_kv heads of d_k, the K/V heads of grouped-query attention, K after RoPE)
static float *kv_at(const KVCache *c, float *base, int l, int h) {
  int dk = model_dk(&c->model->cfg);
  return base + ((size_t)l * model_hkv(&c->model->cfg) + h) * c->cap * dk;
}

void kv_fill(KVCache *c, const Trace *t) {
  const ModelConfig *g = &c->model->cfg;
  int L = t->L, dk = model_dk(g);
  EXPECT(L <= c->cap && t->model == c->model && t->pred >= 0);
  for (int l = 0; l < g->n_layers; l++)
    for (int h = 0; h < model_hkv(g); h++) {
      memcpy(kv_at(c, c->k, l, h), t->t[t->layers[l].K].data + (size_t)h * L * dk, sizeof(float) * L * dk);
      memcpy(kv_at(c, c->v, l, h), t->t[t->layers[l].V].data + (size_t)h * L * dk, sizeof(float) * L * dk);
    }
  const TraceTensor *z = &t->t[t->logits];
  memcpy(c->logits, z->data + (size_t)(L - 1) * z->stride, sizeof(float) * (size_t)g->V);
  c->n = L;
}

// kv_push for today's decoders: the token's row through RMSNorm, Q K V (its K after RoPE and V
// join the cache, H_kv heads), each query head against its K/V head's keys 0..p, W^o, residual,
// RMSNorm, gate and up, act(gate) ⊙ up, down, residual; final RMSNorm and the head. The same
// functions as layer_forward_modern's, so the logits equal a full trace's last row.
static void kv_push_modern(KVCache *c, int id) {
  const Model *m = c->model;
  const ModelConfig *g = &m->cfg;
  int D = g->D, F = g->F, H = g->H, Hk = model_hkv(g), dk = model_dk(g), p = c->n, V = g->V;
  int QD = H * dk, KD = Hk * dk, QKV = QD + 2 * KD, group = H / Hk;
  EXPECT(p < c->cap && id >= 0 && id < V);
  float *r = c->row;
  Mat x = mat_view(r, 1, D), xn = mat_view(r + D, 1, D), attn = mat_view(r + 2 * D, 1, D);
  Mat ffn = mat_view(r + 3 * D, 1, D), fnorm = mat_view(r + 4 * D, 1, D);
  float *q0 = r + 5 * D;
  Mat qkv = mat_view(q0, 1, QKV), concat = mat_view(q0 + QKV, 1, QD);
  float *f0 = q0 + QKV + QD;
  Mat gate = mat_view(f0, 1, F), up = mat_view(f0 + F, 1, F), hidden = mat_view(f0 + 2 * F, 1, F);
  float *sc = f0 + 3 * F, *wt = sc + c->cap, *phi = wt + c->cap, *csin = phi + dk;
  if (g->rope) {
    rope_angle_row(phi, p, g);
    rope_cos_sin(csin, phi, 1, dk / 2);
  }
  memcpy(x.data, m->embed + (size_t)id * D, sizeof(float) * (size_t)D);
  float scale = 1.0f / sqrtf((float)dk);
  for (int l = 0; l < g->n_layers; l++) {
    const LayerWeights *w = &m->layers[l];
    rms_norm_rows(xn, x, w->norm1_weight, g->ln_eps, g->rms_offset);
    linear(qkv, xn, mat_view(w->in_proj_weight, QKV, D), &w->in_proj_packed, w->in_proj_bias);
    for (int h = 0; h < H; h++) { // queries: QK-norm, RoPE
      Mat q = mat_view(q0 + h * dk, 1, dk);
      if (w->q_norm_weight) rms_norm_rows(q, q, w->q_norm_weight, g->ln_eps, g->rms_offset);
      if (g->rope) rope_rotate(q, csin, g->rope);
    }
    for (int h = 0; h < Hk; h++) { // the new key (QK-norm, RoPE) and value join the cache
      float *K = kv_at(c, c->k, l, h), *Vh = kv_at(c, c->v, l, h);
      Mat k = mat_view(K + (size_t)p * dk, 1, dk);
      memcpy(k.data, q0 + QD + h * dk, sizeof(float) * (size_t)dk);
      memcpy(Vh + (size_t)p * dk, q0 + QD + KD + h * dk, sizeof(float) * (size_t)dk);
      if (w->k_norm_weight) rms_norm_rows(k, k, w->k_norm_weight, g->ln_eps, g->rms_offset);
      if (g->rope) rope_rotate(k, csin, g->rope);
    }
    for (int h = 0; h < H; h++) { // the query sees keys 0..p of its K/V head
      float *K = kv_at(c, c->k, l, h / group), *Vh = kv_at(c, c->v, l, h / group);
      Mat s = mat_view(sc, 1, p + 1), a = mat_view(wt, 1, p + 1);
      mat_matmul_t_scaled(s, mat_view(q0 + h * dk, 1, dk), mat_view(K, p + 1, dk), scale);
      mat_softmax_rows(a, s);
      mat_matmul(mat_sub(concat, 0, h * dk, 1, dk), a, mat_view(Vh, p + 1, dk));
    }
    linear(attn, concat, mat_view(w->out_proj_weight, D, QD), &w->out_proj_packed, w->out_proj_bias);
    mat_add(x, x, attn);
    rms_norm_rows(xn, x, w->norm2_weight, g->ln_eps, g->rms_offset);
    linear(gate, xn, mat_view(w->gate_weight, F, D), &w->gate_packed, NULL);
    linear(up, xn, mat_view(w->linear1_weight, F, D), &w->linear1_packed, NULL);
    gated_hidden(hidden, gate, up, g->activation);
    linear(ffn, hidden, mat_view(w->linear2_weight, D, F), &w->linear2_packed, NULL);
    mat_add(x, x, ffn);
  }
  rms_norm_rows(fnorm, x, m->norm_weight, g->ln_eps, g->rms_offset);
  linear(mat_view(c->logits, 1, V), fnorm, mat_view(m->head_weight, V, D), &m->head_packed, m->head_bias);
  c->n = p + 1;
}

void kv_push(KVCache *c, int id) {
  if (model_is_modern(&c->model->cfg)) {
    kv_push_modern(c, id);
    return;
  }
  const Model *m = c->model;
  const ModelConfig *g = &m->cfg;
  int D = g->D, F = g->F, H = g->H, dk = D / H, p = c->n, V = g->V;
  EXPECT(p < c->cap && (!g->learned_pos || p < g->max_pos) && id >= 0 && id < V);
  float *r = c->row;
  Mat x = mat_view(r, 1, D), a_in = mat_view(r + D, 1, D), qkv = mat_view(r + 2 * D, 1, 3 * D);
  Mat concat = mat_view(r + 5 * D, 1, D), attn = mat_view(r + 6 * D, 1, D), res1 = mat_view(r + 7 * D, 1, D);
  Mat f_in = mat_view(r + 8 * D, 1, D), ffn = mat_view(r + 9 * D, 1, D), res2 = mat_view(r + 10 * D, 1, D);
  Mat hh = mat_view(r + 11 * D, 1, D), fnorm = mat_view(r + 12 * D, 1, D);
  Mat pre = mat_view(r + 13 * D, 1, F), hidden = mat_view(r + 13 * D + F, 1, F);
  float *sc = r + 13 * D + 2 * F, *wt = sc + c->cap;

  // Z: the token's row of E, plus its position's row of P (+ t₀), as model_forward adds them
  float *P = res2.data; // free until the first layer's residual
  if (g->learned_pos)
    memcpy(P, m->pos_embed + (size_t)p * D, sizeof(float) * (size_t)D);
  else if (g->no_pos)
    memset(P, 0, sizeof(float) * (size_t)D);
  else
    posenc_row(P, p, D);
  mat_add(x, mat_view(m->embed + (size_t)id * D, 1, D), mat_view(P, 1, D));
  if (m->token_type) mat_add(x, x, mat_view(m->token_type, 1, D));
  if (m->has_embed_norm) {
    mat_copy(a_in, x);
    mat_layernorm_rows(x, a_in, m->embed_norm_weight, m->embed_norm_bias, g->ln_eps);
  }

  float scale = 1.0f / sqrtf((float)dk);
  for (int l = 0; l < g->n_layers; l++) { // x is the layer's input and becomes its output
    const LayerWeights *w = &m->layers[l];
    Mat in = x;
    Mat ai = in;
    if (g->norm_first) {
      ai = a_in;
      add_norm(NO_MAT, in, NO_MAT, ai, w->norm1_weight, w->norm1_bias, g->ln_eps);
    }
    linear(qkv, ai, mat_view(w->in_proj_weight, 3 * D, D), &w->in_proj_packed, w->in_proj_bias);
    for (int h = 0; h < H; h++) { // the new key and value join the cache; the query sees keys 0..p
      float *K = kv_at(c, c->k, l, h), *Vh = kv_at(c, c->v, l, h);
      memcpy(K + (size_t)p * dk, qkv.data + D + h * dk, sizeof(float) * (size_t)dk);
      memcpy(Vh + (size_t)p * dk, qkv.data + 2 * D + h * dk, sizeof(float) * (size_t)dk);
      Mat s = mat_view(sc, 1, p + 1), a = mat_view(wt, 1, p + 1);
      mat_matmul_t_scaled(s, mat_view(qkv.data + h * dk, 1, dk), mat_view(K, p + 1, dk), scale);
      mat_softmax_rows(a, s);
      mat_matmul(mat_sub(concat, 0, h * dk, 1, dk), a, mat_view(Vh, p + 1, dk));
    }
    linear(attn, concat, mat_view(w->out_proj_weight, D, D), &w->out_proj_packed, w->out_proj_bias);
    const float *gn = g->norm_first ? w->norm2_weight : w->norm1_weight;
    const float *bn = g->norm_first ? w->norm2_bias : w->norm1_bias;
    add_norm(res1, in, attn, f_in, gn, bn, g->ln_eps);
    linear_act(pre, f_in, mat_view(w->linear1_weight, F, D), &w->linear1_packed, w->linear1_bias, hidden,
               g->activation);
    linear(ffn, hidden, mat_view(w->linear2_weight, D, F), &w->linear2_packed, w->linear2_bias);
    if (g->norm_first)
      add_norm(res2, res1, ffn, NO_MAT, NULL, NULL, g->ln_eps);
    else
      add_norm(res2, f_in, ffn, a_in, w->norm2_weight, w->norm2_bias, g->ln_eps);
    mat_copy(x, g->norm_first ? res2 : a_in);
  }
  // the head on the last row: final LayerNorm, BERT's transform, logits
  Mat y = x;
  if (m->has_final_norm) {
    mat_layernorm_rows(fnorm, y, m->norm_weight, m->norm_bias, g->ln_eps);
    y = fnorm;
  }
  if (m->has_head_transform) {
    linear_act(hh, y, mat_view(m->head_transform_weight, D, D), NULL, m->head_transform_bias, hh,
               g->activation);
    mat_layernorm_rows(a_in, hh, m->head_norm_weight, m->head_norm_bias, g->ln_eps);
    y = a_in;
  }
  linear(mat_view(c->logits, 1, V), y, mat_view(m->head_weight, V, D), &m->head_packed, m->head_bias);
  c->n = p + 1;
}
