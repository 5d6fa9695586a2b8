// backward.c -- see backward.h.
// Legend: L tokens, V vocabulary, D model width, H heads, dk = D/H, F feed-forward width, C classes.
//
// One function per stage's backward, each the formula written out: it reads the forward's tensors
// from the trace and the gradient of the stage's output, and adds (+=) into the gradients of its
// inputs and weights, so a tensor read by two stages (a residual's input) collects both. The
// order is the forward's, reversed: the loss, the head, the layers from the last to the first,
// each stage of a layer from its output back to its input, then the embeddings. Products run in
// BLAS with beta = 1 (it adds into the gradient); row sums in double.
#include "backward.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"      // defines: SF_HAVE_BLAS, gemm_supported
#include "gemm_grad.h" // defines: gemm_grad_nn, gemm_grad_nt, gemm_grad_tn
#include "grad_rows.h" // defines: grad_act_add, grad_gated_add, grad_layernorm_rows
#include "par.h"       // defines: par_run, par_threads
#if SF_HAVE_BLAS
#include <cblas.h>
#endif

// C[M, N] += alpha · op(A) · op(B), row-major; op transposes when ta / tb. With alpha = 1 where a
// packed kernel runs: gemm_grad.h (threads: its blocks split over the team; false inside a task of
// the team); else cblas_sgemm (one BLAS thread), or in a build without BLAS plain loops.
static void gemm_add(bool threads, bool ta, bool tb, int M, int N, int K, float alpha, const float *A,
                     int lda, const float *B, int ldb, float *C, int ldc) {
  if (M <= 0 || N <= 0 || K <= 0) return;
  if (alpha == 1.0f && !(ta && tb)) {
    Mat c = {C, M, N, ldc}, a = {(float *)A, ta ? K : M, ta ? M : K, lda};
    Mat b = {(float *)B, tb ? N : K, tb ? K : N, ldb};
    if (ta   ? gemm_grad_tn(c, a, b, threads)
        : tb ? gemm_grad_nt(c, a, b, threads)
             : gemm_grad_nn(c, a, b, threads))
      return;
  }
#if SF_HAVE_BLAS
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, alpha,
              A, lda, B, ldb, 1.0f, C, ldc);
#else // a build without BLAS (the web page): the same sums in plain loops, row by row of C
  for (int i = 0; i < M; i++)
    for (int k = 0; k < K; k++) {
      float a = alpha * (ta ? A[(size_t)k * lda + i] : A[(size_t)i * lda + k]);
      float *c = C + (size_t)i * ldc;
      if (tb)
        for (int j = 0; j < N; j++) c[j] += a * B[(size_t)j * ldb + k];
      else
        for (int j = 0; j < N; j++) c[j] += a * B[(size_t)k * ldb + j];
    }
#endif
}

static float *D_(const TraceGrad *g, int k) { return k >= 0 ? g->d[k] : NULL; }
static const float *X_(const Trace *t, int k) { return t->t[k].data; }

const float *backward_param_grad(const TraceGrad *g, const float *p) {
  long off = model_param_offset(g->t->model, p); // the flat order of model_weights_flat
  return off < 0 || off >= g->n_params ? NULL : g->dparams + off;
}

// The weight matrices whose gradient a product writes whole (the layers', the head's): backward_run
// does not clear them ahead; the first product writes its matrix's gradient (BLAS's beta = 0)
// rather than adding to zeros, which spares clearing and reading again as many floats as the
// model has weights. Anything else that touches one first (a tied head's embedding rows, a
// fallback without the packed kernel) clears it then (dp).
struct GradRegion {
  long off, n; // the gradient's offset and length in dparams
  bool done;   // written (or cleared) in this run
};

static GradRegion *region_at(const TraceGrad *g, long off) {
  for (int k = 0; k < g->n_regions; k++)
    if (off >= g->regions[k].off && off < g->regions[k].off + g->regions[k].n) return &g->regions[k];
  return NULL;
}

// The gradient of the weights at p, ready to add into (a region not yet written is cleared).
static float *dp(const TraceGrad *g, const float *p) {
  float *d = (float *)backward_param_grad(g, p);
  GradRegion *r = d ? region_at(g, d - g->dparams) : NULL;
  if (r && !r->done) {
    memset(g->dparams + r->off, 0, sizeof(float) * (size_t)r->n);
    r->done = true;
  }
  return d;
}

// The gradient of the n weights at p for a product that writes all of them: *fresh when it is to
// be written (=), not added to; else as dp.
static float *dp_whole(const TraceGrad *g, const float *p, long n, bool *fresh) {
  float *d = (float *)backward_param_grad(g, p);
  GradRegion *r = d ? region_at(g, d - g->dparams) : NULL;
  *fresh = r && !r->done && r->off == d - g->dparams && r->n == n;
  if (*fresh) {
    r->done = true;
    return d;
  }
  return dp(g, p);
}

// ---------------------------------------------------------------- the stages' backward

// Linear layer Y[n, out] = X[n, in]·Wᵀ + b (W [out, in] as PyTorch stores it):
//   dX += dY·W [n, in],  dW += dYᵀ·X [out, in],  db += Σ_rows dY [out].
// The two products are cut into LINEAR_PARTS blocks (dX by columns, dW by rows), always the same
// blocks whatever the number of threads, which run them (par.h): one and two threads give the same
// bits, as each block is the same BLAS call either way.
enum { LINEAR_PARTS = 4, SPLIT_MIN_MADDS = 1 << 18 };

typedef struct {
  const float *dy, *x, *w;
  float *dx, *dw;
  int n, out, in;
  bool conv1d; // w is held as [in, out] (a mapped GPT-2 layer matrix, LayerWeights' *_xw)
} LinearBack;

static int part_at(int len, int p) { return (int)((long)len * p / LINEAR_PARTS); }

static void linear_back_part(void *ctx, int task) {
  const LinearBack *j = ctx;
  int p = task % LINEAR_PARTS;
  if (task < LINEAR_PARTS) { // dX columns c0..c1-1 = dY · W[:, c0..c1-1]
    int c0 = part_at(j->in, p), c1 = part_at(j->in, p + 1);
    if (!j->dx || c1 <= c0) return;
    if (j->conv1d) // W[:, c0..c1-1] is rows c0..c1-1 of the [in, out] layout, transposed
      gemm_add(false, false, true, j->n, c1 - c0, j->out, 1.0f, j->dy, j->out, j->w + (size_t)c0 * j->out,
               j->out, j->dx + c0, j->in);
    else
      gemm_add(false, false, false, j->n, c1 - c0, j->out, 1.0f, j->dy, j->out, j->w + c0, j->in, j->dx + c0,
               j->in);
  } else { // dW rows r0..r1-1 = dY[:, r0..r1-1]ᵀ · X
    int r0 = part_at(j->out, p), r1 = part_at(j->out, p + 1);
    if (j->dw && r1 > r0)
      gemm_add(false, true, false, r1 - r0, j->in, j->n, 1.0f, j->dy + r0, j->out, j->x, j->in,
               j->dw + (size_t)r0 * j->in, j->in);
  }
}

// dw_fresh: dW is written (=), not added to (dp_whole).
static void linear_back_w(const float *dy, int n, int out, const float *x, int in, float *dx, const float *w,
                          bool conv1d, float *dw, bool dw_fresh, float *db) {
  LinearBack j = {dy, x, w, dx, dw, n, out, in, conv1d};
  if (dw && dw_fresh &&
      !gemm_grad_tn_to(mat_view(dw, out, in), mat_view((float *)dy, n, out), mat_view((float *)x, n, in),
                       true))
    memset(dw, 0, sizeof(float) * (size_t)out * in); // no packed kernel: added to zeros below
  else if (dw_fresh)
    j.dw = NULL;          // written
  if (gemm_supported()) { // the packed kernel (gemm_grad.h), its blocks split over the team
    if (dx) gemm_add(true, false, conv1d, n, in, out, 1.0f, dy, out, w, conv1d ? out : in, dx, in);
    if (j.dw) gemm_add(true, true, false, out, in, n, 1.0f, dy, out, x, in, dw, in);
  } else if ((long)n * out * in >= SPLIT_MIN_MADDS && par_threads() > 1)
    par_run(2 * LINEAR_PARTS, linear_back_part, &j);
  else
    for (int task = 0; task < 2 * LINEAR_PARTS; task++) linear_back_part(&j, task);
  if (db) { // row by row into double sums (the rows are contiguous)
    double *s = calloc((size_t)out, sizeof *s);
    EXPECT(s);
    for (int i = 0; i < n; i++)
      for (int jj = 0; jj < out; jj++) s[jj] += dy[(size_t)i * out + jj];
    for (int jj = 0; jj < out; jj++) db[jj] += (float)s[jj];
    free(s);
  }
}

static void linear_back(const TraceGrad *g, const float *dy, int n, int out, const float *x, int in,
                        float *dx, const float *w, const float *bias) {
  bool fresh;
  float *dw = dp_whole(g, w, (long)out * in, &fresh);
  linear_back_w(dy, n, out, x, in, dx, w, false, dw, fresh, bias ? dp(g, bias) : NULL);
}

// A layer matrix as the model holds it: canonical W [out, in], or only the Conv1D layout xw [in, out]
// of a mapped GPT-2 (no canonical copy is made for the backward: 340 MB for GPT-2 small). Its
// gradient is kept in canonical order either way (model_param_offset maps xw[0] to W[0][0]).
static void layer_linear_back(const TraceGrad *g, const float *dy, int n, int out, const float *x, int in,
                              float *dx, const float *canon, const float *xw, const float *bias) {
  const float *w = canon ? canon : xw;
  bool fresh;
  float *dw = dp_whole(g, w, (long)out * in, &fresh);
  linear_back_w(dy, n, out, x, in, dx, w, !canon, dw, fresh, bias ? dp(g, bias) : NULL);
}

// LayerNorm y = γ∘x̂ + β, x̂ = (x − μ)/σ, σ = √(var + ε) per row of n values:
//   with ĝ = dy∘γ:  dx += (1/σ)·(ĝ − mean(ĝ) − x̂·mean(ĝ∘x̂))   (the mean- and the variance-term)
//   dγ += Σ_rows dy∘x̂,  dβ += Σ_rows dy.
static void layernorm_back(const float *dy, const float *x, int rows, int n, const float *gamma, float eps,
                           float *dx, float *dgamma, float *dbeta) {
  // grad_rows.h: on vectors, μ and σ in double
  grad_layernorm_rows(dy, x, rows, n, gamma, eps, dx, dgamma, dbeta);
}

// The kernels' name of an activation (grad_rows.h).
static GradAct grad_act(Activation act) {
  return act == ACT_RELU        ? GRAD_RELU
         : act == ACT_GELU      ? GRAD_GELU
         : act == ACT_GELU_TANH ? GRAD_GELU_TANH
                                : GRAD_SILU;
}

// The activation's derivative at the pre-activation x: d_pre += d_hidden · act'(x).
//   ReLU: 1 where x > 0, else 0 (PyTorch's choice at 0);
//   SiLU: σ(x)·(1 + x·(1 − σ(x)));
//   GELU (erf): Φ(x) + x·φ(x);
//   GELU (tanh): 0.5(1 + tanh u) + 0.5x(1 − tanh² u)·√(2/π)(1 + 3·0.044715x²), u = √(2/π)(x + 0.044715x³).
static void activation_back(Activation act, const float *dh, const float *x, long n, float *dpre) {
  grad_act_add(grad_act(act), dh, x, n, dpre); // grad_rows.h: on vectors
}

// Softmax cross-entropy over rows of logits [rows, n]: the mean over rows with a target of
// −log p̂[y] = logsumexp(row) − row[y]; dlogits (when given) += (p̂ − y)/N, the one-hot y.
// prob: p̂ = softmax(logits) as the forward left it in the trace (pred), or NULL: then, and for a
// row whose p̂[y] is not a normal float, p̂ and the logsumexp are computed again in double.
static double cross_entropy(const float *logits, const float *prob, int rows, int n, const int *target,
                            int n_targets, float *dlogits) {
  double loss = 0;
  float inv_n = 1.0f / (float)n_targets;
  for (int i = 0; i < rows; i++) {
    if (target[i] < 0) continue;
    const float *r = logits + (size_t)i * n, *p = prob ? prob + (size_t)i * n : NULL;
    float *d = dlogits ? dlogits + (size_t)i * n : NULL;
    int y = target[i];
    if (p && p[y] >= FLT_MIN) { // the trace's p̂: −log p̂[y], and p̂/N minus 1/N at y
      loss -= log((double)p[y]);
      if (!d) continue;
      float dy = d[y];
      for (int j = 0; j < n; j++) d[j] += p[j] * inv_n;
      d[y] = dy + (p[y] - 1.0f) * inv_n;
      continue;
    }
    double mx = -INFINITY, s = 0;
    for (int j = 0; j < n; j++) mx = r[j] > mx ? r[j] : mx;
    for (int j = 0; j < n; j++) s += exp(r[j] - mx);
    double lse = mx + log(s);
    loss += lse - r[y];
    if (d)
      for (int j = 0; j < n; j++) d[j] += (float)((exp(r[j] - lse) - (j == y)) / n_targets);
  }
  return loss / n_targets;
}

// The trace's p̂ = softmax(logits) when it holds it at temperature 1 (else NULL).
static const float *trace_prob(const Trace *t, int pred) {
  return pred >= 0 && (t->temperature == 0.0f || t->temperature == 1.0f) ? X_(t, pred) : NULL;
}

// Attention of one layer, back from d concat [L, D] to d Q|K|V [L, 3D] (dqkv, the projection's
// output gradient), head by head:
//   dAV_h = columns h·dk.. of d concat           (the concatenation split back into heads)
//   dA_h  = dAV_h · V_hᵀ [L, L],  dV_h = A_hᵀ · dAV_h [L, dk]
//   dS_h  = A_h ∘ (dA_h − rowsum(dA_h ∘ A_h))     (the softmax's Jacobian; masked entries exactly 0)
//   dQ_h  = (1/√dk) · dS_h · K_h,  dK_h = (1/√dk) · dS_hᵀ · Q_h
// Heads are independent (each writes its own slices and its own columns of dqkv): one task per
// head, run on the team (par.h) when there are two threads; the same bits either way.
typedef struct {
  TraceGrad *g;
  const TraceLayer *y;
  float *dqkv;
} AttentionBack;

// S = s·Q·Kᵀ back to Q and K from dS [L, L] (one head, inside a task): dQ += s·dS·K, dK += s·dSᵀ·Q
// [L, dk]. The packed kernel adds unscaled products: it multiplies s·dS, made once.
static void scores_back(const float *dS, int L, float s, const float *K, const float *Q, int dk, float *dQ,
                        float *dK) {
  float *sd = NULL;
  if (s != 1.0f && gemm_supported()) {
    sd = malloc(sizeof(float) * (size_t)L * L);
    EXPECT(sd);
    for (size_t k = 0; k < (size_t)L * L; k++) sd[k] = s * dS[k];
    dS = sd, s = 1.0f;
  }
  gemm_add(false, false, false, L, dk, L, s, dS, L, K, dk, dQ, dk);
  gemm_add(false, true, false, L, dk, L, s, dS, L, Q, dk, dK, dk);
  free(sd);
}

static void attention_back_head(void *ctx, int h) {
  const AttentionBack *job = ctx;
  TraceGrad *g = job->g;
  const TraceLayer *y = job->y;
  float *dqkv = job->dqkv;
  const Trace *t = g->t;
  int L = t->L, D = t->cfg.D, H = t->cfg.H, dk = D / H;
  float scale = t->no_scale ? 1.0f : 1.0f / sqrtf((float)dk); // the √d_k experiment: none
  const float *dcat = D_(g, y->concat);
  {
    size_t hs = (size_t)h * L * L, hv = (size_t)h * L * dk;
    float *dav = D_(g, y->AV) + hv, *dA = D_(g, y->A) + hs, *dS = D_(g, y->S) + hs;
    float *dQ = D_(g, y->Q) + hv, *dK = D_(g, y->K) + hv, *dV = D_(g, y->V) + hv;
    const float *A = X_(t, y->A) + hs, *Q = X_(t, y->Q) + hv, *K = X_(t, y->K) + hv, *Vh = X_(t, y->V) + hv;
    for (int i = 0; i < L; i++)
      for (int c = 0; c < dk; c++) dav[(size_t)i * dk + c] += dcat[(size_t)i * D + h * dk + c];
    gemm_add(false, false, true, L, L, dk, 1.0f, dav, dk, Vh, dk, dA, L);
    gemm_add(false, true, false, L, dk, L, 1.0f, A, L, dav, dk, dV, dk);
    for (int i = 0; i < L; i++) {
      const float *a = A + (size_t)i * L, *da = dA + (size_t)i * L;
      double r = 0;
      for (int j = 0; j < L; j++) r += (double)da[j] * a[j];
      for (int j = 0; j < L; j++)
        dS[(size_t)i * L + j] += t->cfg.causal && j > i ? 0.0f : (float)(a[j] * (da[j] - r));
    }
    const float *dSr = dS;
    if (y->S_raw >= 0) { // the mask adds a constant: the scores before it get the same gradient
      float *d = D_(g, y->S_raw) + hs;
      for (size_t k = 0; k < (size_t)L * L; k++) d[k] += dS[k];
      dSr = d;
    }
    scores_back(dSr, L, scale, K, Q, dk, dQ, dK);
    for (int i = 0; i < L; i++)
      for (int c = 0; c < dk; c++) {
        float *row = dqkv + (size_t)i * 3 * D + h * dk + c;
        row[0] = dQ[(size_t)i * dk + c];
        row[D] = dK[(size_t)i * dk + c];
        row[2 * D] = dV[(size_t)i * dk + c];
      }
  }
}

static void attention_back(TraceGrad *g, const TraceLayer *y, float *dqkv) {
  AttentionBack job = {g, y, dqkv};
  const Trace *t = g->t;
  if (par_threads() > 1 && t->cfg.H > 1 && (long)t->L * t->L * t->cfg.D >= SPLIT_MIN_MADDS)
    par_run(t->cfg.H, attention_back_head, &job);
  else
    for (int h = 0; h < t->cfg.H; h++) attention_back_head(&job, h);
}

// Layer l, from d out back to d in, the forward's stages in reverse.
static void layer_back(TraceGrad *g, int l, float *dqkv) {
  const Trace *t = g->t;
  const ModelConfig *c = &t->cfg;
  const LayerWeights *w = &t->model->layers[l];
  const TraceLayer *y = &t->layers[l];
  int L = t->L, D = c->D, F = c->F;
  float eps = c->ln_eps;
  bool pre = c->norm_first;
  int f_in = pre ? y->norm2 : y->norm1;
  // 16 the layer's output. post-norm: out = LN2(res2), res2 = f_in + ffn; pre-norm: out = res2 = res1 + ffn
  if (!pre)
    layernorm_back(D_(g, y->norm2), X_(t, y->res2), L, D, w->norm2_weight, eps, D_(g, y->res2),
                   dp(g, w->norm2_weight), dp(g, w->norm2_bias));
  const float *dres2 = D_(g, y->res2);
  float *dffn = D_(g, y->ffn), *dskip = D_(g, pre ? y->res1 : f_in);
  for (long k = 0; k < (long)L * D; k++) {
    dffn[k] += dres2[k];
    dskip[k] += dres2[k]; // the residual: the gradient flows around the FFN unchanged
  }
  // 15 ffn = hidden · W_2ᵀ + b_2
  layer_linear_back(g, dffn, L, D, X_(t, y->ffn_hidden), F, D_(g, y->ffn_hidden), w->linear2_weight,
                    w->linear2_xw, w->linear2_bias);
  // 14 hidden = act(ffn_pre), ffn_pre = f_in · W_1ᵀ + b_1
  activation_back(c->activation, D_(g, y->ffn_hidden), X_(t, y->ffn_pre), (long)L * F, D_(g, y->ffn_pre));
  layer_linear_back(g, D_(g, y->ffn_pre), L, F, X_(t, f_in), D, D_(g, f_in), w->linear1_weight, w->linear1_xw,
                    w->linear1_bias);
  // 13 f_in = LN(res1) (post-norm LN1, pre-norm LN2); res1 = in + attn
  const float *g13 = pre ? w->norm2_weight : w->norm1_weight, *b13 = pre ? w->norm2_bias : w->norm1_bias;
  layernorm_back(D_(g, f_in), X_(t, y->res1), L, D, g13, eps, D_(g, y->res1), dp(g, g13), dp(g, b13));
  const float *dres1 = D_(g, y->res1);
  float *dattn = D_(g, y->attn), *din = D_(g, y->in);
  for (long k = 0; k < (long)L * D; k++) {
    dattn[k] += dres1[k];
    din[k] += dres1[k];
  }
  // 12 attn = concat · W^oᵀ + b^o
  layer_linear_back(g, dattn, L, D, X_(t, y->concat), D, D_(g, y->concat), w->out_proj_weight, w->out_proj_xw,
                    w->out_proj_bias);
  // 11 … 7 the heads
  memset(dqkv, 0, sizeof(float) * (size_t)L * 3 * D);
  attention_back(g, y, dqkv);
  // 6 [Q | K | V] = a_in · in_projᵀ + b; a_in = in (post-norm) or LN1(in) (pre-norm, 5½)
  int a_in = pre ? y->norm1 : y->in;
  layer_linear_back(g, dqkv, L, 3 * D, X_(t, a_in), D, D_(g, a_in), w->in_proj_weight, w->in_proj_xw,
                    w->in_proj_bias);
  if (pre)
    layernorm_back(D_(g, y->norm1), X_(t, y->in), L, D, w->norm1_weight, eps, din, dp(g, w->norm1_weight),
                   dp(g, w->norm1_bias));
}

// ---------------------------------------------------------------- today's decoders (issue 34)

// RMSNorm y = x·r·γ' per row of n values, r = 1/√(mean(x²) + ε), γ' = γ (or 1 + γ, Gemma):
//   with ĝ = dy∘γ':  dx += r·ĝ − x·r³·(Σ ĝ∘x)/n   (no mean-term: RMSNorm subtracts no mean)
//   dγ += Σ_rows dy∘x·r   (the same for 1 + γ). Rows of x, dy and dx have their own strides.
static void rmsnorm_back(const float *dy, int ldy, const float *x, int ldx, int rows, int n,
                         const float *gamma, bool offset, float eps, float *dx, int lddx, float *dgamma) {
  for (int i = 0; i < rows; i++) {
    const float *xi = x + (size_t)i * ldx, *dyi = dy + (size_t)i * ldy;
    double ss = 0, m = 0;
    for (int j = 0; j < n; j++) ss += (double)xi[j] * xi[j];
    double r = 1.0 / sqrt(ss / n + (double)eps);
    for (int j = 0; j < n; j++) m += (double)dyi[j] * (offset ? 1.0 + gamma[j] : gamma[j]) * xi[j];
    m /= n;
    for (int j = 0; j < n; j++) {
      double gh = (double)dyi[j] * (offset ? 1.0 + gamma[j] : gamma[j]);
      dx[(size_t)i * lddx + j] += (float)(r * gh - xi[j] * r * r * r * m);
      if (dgamma) dgamma[j] += (float)(dyi[j] * xi[j] * r);
    }
  }
}

// RoPE turned each pair (x₀, x₁) by +φ: y₀ = x₀c − x₁s, y₁ = x₁c + x₀s. A rotation's gradient is
// turned back by −φ: dx₀ += dy₀c + dy₁s, dx₁ += dy₁c − dy₀s. One head [L, d_k]; cs as the forward's.
static void rope_back(const float *dy, float *dx, int L, int dk, const float *cs, RopeStyle style) {
  int n = dk / 2;
  for (int i = 0; i < L; i++) {
    const float *r = dy + (size_t)i * dk;
    float *o = dx + (size_t)i * dk;
    for (int k = 0; k < n; k++) {
      float c = cs[(size_t)i * 2 * n + k], s = cs[(size_t)i * 2 * n + n + k];
      int j0 = style == ROPE_PAIRS ? 2 * k : k, j1 = style == ROPE_PAIRS ? 2 * k + 1 : k + n;
      o[j0] += r[j0] * c + r[j1] * s;
      o[j1] += r[j1] * c - r[j0] * s;
    }
  }
}

// The gated FFN hidden = a(gate) ⊙ up [n values]: d up += dh·a(gate), d gate += dh·up·a'(gate).
static void gated_back(Activation act, const float *dh, const float *gate, const float *up, long n,
                       float *dgate, float *dup) {
  grad_gated_add(grad_act(act), dh, gate, up, n, dgate, dup); // grad_rows.h: on vectors
}

// Grouped-query attention, back from d concat [L, H·d_k] to dQ [H, L, d_k] (after RoPE) and dK,
// dV [H_kv, L, d_k]: as attention_back_head per query head, but K/V head kv collects the gradients
// of every query head of its group (h = kv·G … kv·G + G − 1, in that order). One task per K/V head:
// no two tasks write the same gradient, and the sums run in the same order on one and two threads.
static void gqa_back_kv(void *ctx, int kv) {
  const AttentionBack *job = ctx;
  TraceGrad *g = job->g;
  const TraceLayer *y = job->y;
  const Trace *t = g->t;
  const ModelConfig *c = &t->cfg;
  int L = t->L, H = c->H, dk = model_dk(c), G = H / model_hkv(c), QD = H * dk;
  float scale = t->no_scale ? 1.0f : 1.0f / sqrtf((float)dk);
  const float *dcat = D_(g, y->concat);
  size_t hkv = (size_t)kv * L * dk;
  float *dK = D_(g, y->K) + hkv, *dV = D_(g, y->V) + hkv;
  const float *K = X_(t, y->K) + hkv, *Vh = X_(t, y->V) + hkv;
  for (int h = kv * G; h < (kv + 1) * G; h++) {
    size_t hs = (size_t)h * L * L, hv = (size_t)h * L * dk;
    float *dav = D_(g, y->AV) + hv, *dA = D_(g, y->A) + hs, *dS = D_(g, y->S) + hs, *dQ = D_(g, y->Q) + hv;
    const float *A = X_(t, y->A) + hs, *Q = X_(t, y->Q) + hv;
    for (int i = 0; i < L; i++)
      for (int cc = 0; cc < dk; cc++) dav[(size_t)i * dk + cc] += dcat[(size_t)i * QD + h * dk + cc];
    gemm_add(false, false, true, L, L, dk, 1.0f, dav, dk, Vh, dk, dA, L);
    gemm_add(false, true, false, L, dk, L, 1.0f, A, L, dav, dk, dV, dk);
    for (int i = 0; i < L; i++) {
      const float *a = A + (size_t)i * L, *da = dA + (size_t)i * L;
      double r = 0;
      for (int j = 0; j <= i; j++) r += (double)da[j] * a[j];
      for (int j = 0; j < L; j++) dS[(size_t)i * L + j] += j > i ? 0.0f : (float)(a[j] * (da[j] - r));
    }
    float *dSr = D_(g, y->S_raw) + hs; // the mask adds a constant: the same gradient before it
    for (size_t q = 0; q < (size_t)L * L; q++) dSr[q] += dS[q];
    scores_back(dSr, L, scale, K, Q, dk, dQ, dK);
  }
}

// Layer l of today's decoders, from d out back to d in (layer_forward_modern reversed). dqkv and
// qkv: scratch [L, (H + 2·H_kv)·d_k] each.
static void layer_back_modern(TraceGrad *g, int l, float *dqkv, float *qkv) {
  const Trace *t = g->t;
  const ModelConfig *c = &t->cfg;
  const LayerWeights *w = &t->model->layers[l];
  const TraceLayer *y = &t->layers[l];
  int L = t->L, D = c->D, F = c->F, H = c->H, Hk = model_hkv(c), dk = model_dk(c);
  int QD = H * dk, KD = Hk * dk, QKV = QD + 2 * KD;
  float eps = c->ln_eps;
  // res2 = res1 + ffn
  const float *dres2 = D_(g, y->res2);
  float *dffn = D_(g, y->ffn), *dres1 = D_(g, y->res1);
  for (long k = 0; k < (long)L * D; k++) {
    dffn[k] += dres2[k];
    dres1[k] += dres2[k];
  }
  // ffn = hidden · W_2ᵀ; hidden = act(gate) ⊙ up; gate = rms2 · W_gᵀ, up = rms2 · W_1ᵀ
  layer_linear_back(g, dffn, L, D, X_(t, y->ffn_hidden), F, D_(g, y->ffn_hidden), w->linear2_weight, NULL,
                    NULL);
  gated_back(c->activation, D_(g, y->ffn_hidden), X_(t, y->gate), X_(t, y->up), (long)L * F, D_(g, y->gate),
             D_(g, y->up));
  layer_linear_back(g, D_(g, y->gate), L, F, X_(t, y->rms2), D, D_(g, y->rms2), w->gate_weight, NULL, NULL);
  layer_linear_back(g, D_(g, y->up), L, F, X_(t, y->rms2), D, D_(g, y->rms2), w->linear1_weight, NULL, NULL);
  // rms2 = RMSNorm(res1); res1 = in + attn
  rmsnorm_back(D_(g, y->rms2), D, X_(t, y->res1), D, L, D, w->norm2_weight, c->rms_offset, eps, dres1, D,
               dp(g, w->norm2_weight));
  float *dattn = D_(g, y->attn), *din = D_(g, y->in);
  for (long k = 0; k < (long)L * D; k++) {
    dattn[k] += dres1[k];
    din[k] += dres1[k];
  }
  // attn = concat · W^oᵀ
  layer_linear_back(g, dattn, L, D, X_(t, y->concat), QD, D_(g, y->concat), w->out_proj_weight, NULL,
                    w->out_proj_bias);
  // the heads, a K/V head's group per task
  AttentionBack job = {g, y, NULL};
  if (par_threads() > 1 && Hk > 1 && (long)L * L * QD >= SPLIT_MIN_MADDS)
    par_run(Hk, gqa_back_kv, &job);
  else
    for (int kv = 0; kv < Hk; kv++) gqa_back_kv(&job, kv);
  // RoPE turned back: d Q_norope, d K_norope (without RoPE the same gradients)
  float *dQn = D_(g, y->Q_norope), *dKn = D_(g, y->K_norope);
  for (int h = 0; h < H + Hk; h++) {
    bool q = h < H;
    size_t o = (size_t)(q ? h : h - H) * L * dk;
    const float *src = D_(g, q ? y->Q : y->K) + o;
    float *dst = (q ? dQn : dKn) + o;
    if (c->rope)
      rope_back(src, dst, L, dk, t->rope_cs, c->rope);
    else
      for (size_t k = 0; k < (size_t)L * dk; k++) dst[k] += src[k];
  }
  // back into the projection's columns: Q heads, K heads (through the QK-norm: its input is the
  // projection again, recomputed into qkv), V heads
  memset(dqkv, 0, sizeof(float) * (size_t)L * QKV);
  if (w->q_norm_weight) {
    memset(qkv, 0, sizeof(float) * (size_t)L * QKV);
    if (w->in_proj_bias)
      for (int i = 0; i < L; i++) memcpy(qkv + (size_t)i * QKV, w->in_proj_bias, sizeof(float) * (size_t)QKV);
    gemm_add(true, false, true, L, QKV, D, 1.0f, X_(t, y->rms1), D, w->in_proj_weight, D, qkv, QKV);
  }
  for (int h = 0; h < H + Hk; h++) {
    bool q = h < H;
    size_t o = (size_t)(q ? h : h - H) * L * dk;
    int col = q ? h * dk : QD + (h - H) * dk;
    const float *src = (q ? dQn : dKn) + o, *gain = q ? w->q_norm_weight : w->k_norm_weight;
    if (gain)
      rmsnorm_back(src, dk, qkv + col, QKV, L, dk, gain, c->rms_offset, eps, dqkv + col, QKV, dp(g, gain));
    else
      for (int i = 0; i < L; i++)
        for (int k = 0; k < dk; k++) dqkv[(size_t)i * QKV + col + k] = src[(size_t)i * dk + k];
  }
  const float *dV = D_(g, y->V);
  for (int h = 0; h < Hk; h++)
    for (int i = 0; i < L; i++)
      for (int k = 0; k < dk; k++)
        dqkv[(size_t)i * QKV + QD + KD + h * dk + k] = dV[((size_t)h * L + i) * dk + k];
  // [Q | K | V] = rms1 · in_projᵀ + b; rms1 = RMSNorm(in)
  layer_linear_back(g, dqkv, L, QKV, X_(t, y->rms1), D, D_(g, y->rms1), w->in_proj_weight, NULL,
                    w->in_proj_bias);
  rmsnorm_back(D_(g, y->rms1), D, X_(t, y->in), D, L, D, w->norm1_weight, c->rms_offset, eps, din, D,
               dp(g, w->norm1_weight));
}

// The prediction head, from the loss to d (last layer's out); or the classifier.
static void head_back(TraceGrad *g, float *scratch) {
  const Trace *t = g->t;
  const Model *m = t->model;
  const ModelConfig *c = &t->cfg;
  int L = t->L, D = c->D, V = c->V;
  int out = t->layers[c->n_layers - 1].out;
  if (t->logits >= 0) {
    // loss = mean −log p̂[y]; d logits = (p̂ − y)/N [L, V]
    g->loss = (float)cross_entropy(X_(t, t->logits), trace_prob(t, t->pred), L, V, g->target, g->n_targets,
                                   D_(g, t->logits));
    int x = t->head_norm >= 0 ? t->head_norm : t->final_norm >= 0 ? t->final_norm : out;
    // logits = x · W_outᵀ + b_out (a tied head: W_out is E, its gradient adds to E's)
    linear_back(g, D_(g, t->logits), L, V, X_(t, x), D, D_(g, x), m->head_weight, m->head_bias);
    if (t->head_norm >= 0) { // BERT: head_norm = LN(hh), hh = act(pre), pre = x0 · W_tᵀ + b_t
      int x0 = t->final_norm >= 0 ? t->final_norm : out;
      layernorm_back(D_(g, t->head_norm), X_(t, t->head_hidden), L, D, m->head_norm_weight, c->ln_eps,
                     D_(g, t->head_hidden), dp(g, m->head_norm_weight), dp(g, m->head_norm_bias));
      // the forward keeps act(pre) only: pre is computed again
      Mat pre = mat_view(scratch, L, D);
      mat_matmul_t(pre, mat_view((float *)X_(t, x0), L, D), mat_view(m->head_transform_weight, D, D),
                   m->head_transform_bias);
      float *dpre = scratch + (size_t)L * D;
      memset(dpre, 0, sizeof(float) * (size_t)L * D);
      activation_back(c->activation, D_(g, t->head_hidden), scratch, (long)L * D, dpre);
      linear_back(g, dpre, L, D, X_(t, x0), D, D_(g, x0), m->head_transform_weight, m->head_transform_bias);
    }
    if (t->final_norm >= 0 && c->rms_norm)
      rmsnorm_back(D_(g, t->final_norm), D, X_(t, out), D, L, D, m->norm_weight, c->rms_offset, c->ln_eps,
                   D_(g, out), D, dp(g, m->norm_weight));
    else if (t->final_norm >= 0)
      layernorm_back(D_(g, t->final_norm), X_(t, out), L, D, m->norm_weight, c->ln_eps, D_(g, out),
                     dp(g, m->norm_weight), dp(g, m->norm_bias));
  } else {
    int C = m->n_classes;
    // loss = −log p̂[c]; d class_logits = p̂ − y [1, C]
    g->loss = (float)cross_entropy(X_(t, t->class_logits), t->class_pred >= 0 ? X_(t, t->class_pred) : NULL,
                                   1, C, g->target, 1, D_(g, t->class_logits));
    linear_back(g, D_(g, t->class_logits), 1, C, X_(t, t->pool), D, D_(g, t->pool), m->classifier_weight,
                m->classifier_bias);
    // pool = (1/L) Σᵢ xᵢ: every position gets d pool / L
    int x = t->enc_norm >= 0 ? t->enc_norm : out;
    float *dx = D_(g, x);
    const float *dpool = D_(g, t->pool);
    for (int i = 0; i < L; i++)
      for (int d = 0; d < D; d++) dx[(size_t)i * D + d] += dpool[d] / (float)L;
    if (t->enc_norm >= 0)
      layernorm_back(dx, X_(t, out), L, D, m->norm_weight, c->ln_eps, D_(g, out), dp(g, m->norm_weight),
                     dp(g, m->norm_bias));
  }
}

// The embeddings: Z = X + P (+ t₀), or Z = LN(embed_sum); X = O·E (row id of E), P the positions.
static void embed_back(TraceGrad *g) {
  const Trace *t = g->t;
  const Model *m = t->model;
  const ModelConfig *c = &t->cfg;
  int L = t->L, D = c->D, V = c->V;
  int sum = t->Z;
  if (t->embed_sum >= 0) {
    sum = t->embed_sum;
    layernorm_back(D_(g, t->Z), X_(t, t->embed_sum), L, D, m->embed_norm_weight,
                   m->embed_norm_eps > 0 ? m->embed_norm_eps : c->ln_eps, D_(g, sum),
                   dp(g, m->embed_norm_weight), dp(g, m->embed_norm_bias));
  }
  const float *ds = D_(g, sum);
  float *dX = D_(g, t->X), *dP = D_(g, t->P);
  for (long k = 0; k < (long)L * D; k++) {
    dX[k] += ds[k];
    dP[k] += ds[k];
  }
  if (m->token_type) { // t₀ is added to every row: its gradient is the sum of the rows
    float *dt = dp(g, m->token_type);
    for (int d = 0; d < D; d++) {
      double s = 0;
      for (int i = 0; i < L; i++) s += ds[(size_t)i * D + d];
      dt[d] += (float)s;
    }
  }
  if (c->learned_pos) { // P = rows 0..L-1 of the table
    float *dpos = dp(g, m->pos_embed);
    for (long k = 0; k < (long)L * D; k++) dpos[k] += dP[k];
  }
  float *dE = dp(g, m->embed); // X = O·E: row id(x_i) of E collects dX_i
  for (int i = 0; i < L; i++)
    for (int d = 0; d < D; d++) dE[(size_t)t->tokens.ids[i] * D + d] += dX[(size_t)i * D + d];
  gemm_add(true, false, true, L, V, D, 1.0f, dX, D, m->embed, D, D_(g, t->O), V); // dO = dX · Eᵀ
}

// ---------------------------------------------------------------- the TraceGrad

static bool targets_ok(const Trace *t, const int *target, int n, Err *err) {
  if (t->logits >= 0) {
    if (n != t->L) return err_set(err, "%d targets for %d tokens: give one per token", n, t->L);
    for (int i = 0; i < n; i++)
      if (target[i] < -1 || target[i] >= t->cfg.V)
        return err_set(err, "target %d is not a word of the model", i + 1);
  } else if (n != 1 || target[0] < 0 || target[0] >= t->model->n_classes)
    return err_set(err, "a classifier takes one class label (1..%d)", t->model->n_classes);
  return true;
}

// Fills g->target (defaults when target is NULL) and n_targets.
static bool set_targets(const Trace *t, int *dst, int *n_dst, const int *target, int n_target, Err *err) {
  const Model *m = t->model;
  if (!m->has_head && !m->has_classifier)
    return err_set(err,
                   "%s has no prediction head: there is no loss to train (a trained model with a head, such "
                   "as the shipped bank model)",
                   m->source);
  if (target) {
    if (!targets_ok(t, target, n_target, err)) return false;
    memcpy(dst, target, sizeof(int) * (size_t)n_target);
  } else if (m->has_classifier) {
    return err_set(err, "a classifier's loss needs its class: --labels CLASS");
  } else {
    if (t->L < 2)
      return err_set(err, "a sentence of one token has no next word to predict: give at least two words");
    for (int i = 0; i < t->L; i++) dst[i] = i + 1 < t->L ? t->tokens.ids[i + 1] : -1;
  }
  int n = 0;
  for (int i = 0; i < (m->has_classifier ? 1 : t->L); i++) n += dst[i] >= 0;
  if (n == 0) return err_set(err, "no position has a target: give at least one word in --labels");
  *n_dst = n;
  return true;
}

float backward_loss(const Trace *t, const int *target, int n_target) {
  int *tg = calloc((size_t)t->L + 1, sizeof(int)), n = 0;
  Err err = {0};
  float loss = NAN;
  if (tg && set_targets(t, tg, &n, target, n_target, &err)) {
    if (t->logits >= 0)
      loss = (float)cross_entropy(X_(t, t->logits), trace_prob(t, t->pred), t->L, t->cfg.V, tg, n, NULL);
    else
      loss = (float)cross_entropy(X_(t, t->class_logits), t->class_pred >= 0 ? X_(t, t->class_pred) : NULL, 1,
                                  t->model->n_classes, tg, 1, NULL);
  }
  free(tg);
  return loss;
}

void backward_free(TraceGrad *g) {
  if (!g) return;
  for (int k = 0; g->d && k < g->t->n; k++)
    if (g->d_own[k]) free(g->d[k]);
  free(g->d);
  free(g->d_own);
  free(g->dparams);
  free(g->regions);
  free(g->target);
  free(g);
}

// Extras of today's decoders that no stage reads (the RoPE angles, the RMSNorms' row rms, shown by
// the views): they have no gradient (d[k] NULL).
static bool is_derived(const Trace *t, int k) {
  if (k == t->rope_angle) return true;
  for (int l = 0; l < t->cfg.n_layers && model_is_modern(&t->cfg); l++)
    if (k == t->layers[l].rms1_r || k == t->layers[l].rms2_r) return true;
  return false;
}

// One weight matrix [out, in] for the regions (none when w is NULL or already listed).
static bool add_region(TraceGrad *g, const float *w, long out, long in) {
  long off = w ? model_param_offset(g->t->model, w) : -1, n = out * in;
  if (off < 0 || n <= 0 || off + n > g->n_params) return true;
  for (int k = 0; k < g->n_regions; k++) // (a tied head's E is listed once)
    if (off < g->regions[k].off + g->regions[k].n && g->regions[k].off < off + n) return true;
  GradRegion *r = realloc(g->regions, sizeof *r * (size_t)(g->n_regions + 1));
  if (!r) return false;
  g->regions = r;
  g->regions[g->n_regions++] = (GradRegion){off, n, false};
  return true;
}

// The matrices a product writes whole (GradRegion): each layer's in_proj, W^o, W_1, W_2 (and the
// gate), the head (the embeddings when tied), BERT's head transform, the classifier; in the shapes
// the layers' backward multiplies them in.
static bool add_regions(TraceGrad *g) {
  const Model *m = g->t->model;
  const ModelConfig *c = &g->t->cfg;
  long D = c->D, F = c->F, dk = model_dk(c), QD = (long)c->H * dk, QKV = QD + 2L * model_hkv(c) * dk;
  bool ok = true;
  for (int l = 0; l < c->n_layers; l++) {
    const LayerWeights *w = &m->layers[l];
#define LAYER_W(name) (w->name##_weight ? w->name##_weight : w->name##_xw)
    ok = ok && add_region(g, LAYER_W(in_proj), QKV, D) && add_region(g, LAYER_W(out_proj), D, QD) &&
         add_region(g, LAYER_W(linear1), F, D) && add_region(g, LAYER_W(linear2), D, F) &&
         add_region(g, w->gate_weight, F, D);
#undef LAYER_W
  }
  if (m->has_head)
    ok = ok && add_region(g, m->head_weight, c->V, D) && add_region(g, m->head_transform_weight, D, D);
  if (m->has_classifier) ok = ok && add_region(g, m->classifier_weight, m->n_classes, D);
  return ok;
}

TraceGrad *backward_new(const Trace *t, const int *target, int n_target, Err *err) {
  if (t->T > 0)
    return err_set(err,
                   "training an encoder-decoder is not there yet: an encoder with a prediction head or a "
                   "classifier"),
           NULL;
  if (t->edits || t->own_model)
    return err_set(err, "a trace with what-if edits cannot be trained: undo the edits first"), NULL;
  TraceGrad *g = calloc(1, sizeof *g);
  if (!g) return err_set(err, "out of memory for the gradients"), NULL;
  g->t = t;
  g->n_params = t->model->n_params;
  if (!(g->target = calloc((size_t)t->L + 1, sizeof(int))) ||
      !set_targets(t, g->target, &g->n_targets, target, n_target, err)) {
    if (!err->msg[0]) err_set(err, "out of memory for the gradients");
    backward_free(g);
    return NULL;
  }
  g->d = calloc((size_t)t->n, sizeof *g->d);
  g->d_own = calloc((size_t)t->n, sizeof *g->d_own);
  g->dparams = calloc((size_t)g->n_params, sizeof(float));
  bool ok = g->d && g->d_own && g->dparams;
  for (int k = 0; ok && k < t->n; k++) {
    const TraceTensor *x = &t->t[k];
    if (x->is_weight || k == t->pred || k == t->class_pred || is_derived(t, k)) continue;
    EXPECT(x->stride == x->cols || x->per_head);
    for (int j = 0; j < k && !g->d[k]; j++) // a view of an earlier tensor shares its gradient
      if (g->d[j] && t->t[j].data == x->data) g->d[k] = g->d[j];
    if (!g->d[k]) {
      g->d[k] = calloc((size_t)x->heads * x->rows * x->cols, sizeof(float));
      g->d_own[k] = true;
      ok = g->d[k] != NULL;
    }
  }
  if (ok) ok = add_regions(g);
  if (!ok) {
    backward_free(g);
    return err_set(err, "out of memory for the gradients"), NULL;
  }
  return g;
}

float backward_run(TraceGrad *g) {
  const Trace *t = g->t;
  for (int k = 0; k < t->n; k++)
    if (g->d_own[k]) memset(g->d[k], 0, sizeof(float) * (size_t)t->t[k].heads * t->t[k].rows * t->t[k].cols);
  // every weight's gradient cleared but the regions' (written by their products), in runs between them
  for (long off = 0; off < g->n_params;) {
    GradRegion *in = region_at(g, off);
    if (in) {
      off = in->off + in->n;
      continue;
    }
    long end = g->n_params;
    for (int k = 0; k < g->n_regions; k++)
      if (g->regions[k].off > off && g->regions[k].off < end) end = g->regions[k].off;
    memset(g->dparams + off, 0, sizeof(float) * (size_t)(end - off));
    off = end;
  }
  for (int k = 0; k < g->n_regions; k++) g->regions[k].done = false;
  const ModelConfig *c = &t->cfg;
  int L = t->L, D = c->D, QKV = (c->H + 2 * model_hkv(c)) * model_dk(c);
  bool modern = model_is_modern(c);
  size_t per = (size_t)L * (modern && QKV > 3 * D ? QKV : 3 * D);
  float *scratch = malloc(sizeof(float) * per * (modern ? 2 : 1));
  if (!scratch) return NAN;
  head_back(g, scratch);
  for (int l = c->n_layers - 1; l >= 0; l--)
    if (modern)
      layer_back_modern(g, l, scratch, scratch + per);
    else
      layer_back(g, l, scratch);
  embed_back(g);
  for (int k = 0; k < g->n_regions; k++) // a matrix no product reached (none today): cleared
    if (!g->regions[k].done)
      memset(g->dparams + g->regions[k].off, 0, sizeof(float) * (size_t)g->regions[k].n);
  free(scratch);
  return g->loss;
}

// ---------------------------------------------------------------- --labels

bool backward_parse_labels(const Trace *t, const char *spec, int *target, int *n_target, Err *err) {
  const Model *m = t->model;
  char buf[64];
  if (m->has_classifier) {
    int n = (int)strlen(spec);
    while (n > 0 && spec[n - 1] == ' ') n--;
    while (*spec == ' ') spec++, n--;
    for (int c = 0; c < m->n_classes; c++)
      if ((int)strlen(m->class_names[c]) == n && !strncmp(m->class_names[c], spec, (size_t)n)) {
        target[0] = c, *n_target = 1;
        return true;
      }
    char *end;
    long c = strtol(spec, &end, 10);
    if (end != spec && *end == 0 && c >= 1 && c <= m->n_classes) {
      target[0] = (int)c - 1, *n_target = 1;
      return true;
    }
    return err_set(err, "--labels \"%s\": not a class of the model: give its name or a number 1..%d", spec,
                   m->n_classes);
  }
  int n = 0;
  for (const char *p = spec;; n++) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    while (len > 0 && *p == ' ') p++, len--;
    while (len > 0 && p[len - 1] == ' ') len--;
    if (n >= t->L)
      return err_set(err, "--labels has more than %d words: give one per token (\"-\" for none)", t->L);
    if (len == 0 || len >= sizeof buf)
      return err_set(err, "--labels: word %d is empty or too long: give a vocabulary word or \"-\"", n + 1);
    memcpy(buf, p, len);
    buf[len] = 0;
    if (!strcmp(buf, "-"))
      target[n] = -1;
    else if ((target[n] = vocab_find(&m->vocab, buf)) < 0)
      return err_set(err, "--labels: \"%s\" is not in the model's vocabulary", buf);
    if (!comma) break;
    p = comma + 1;
  }
  if (n + 1 != t->L)
    return err_set(err, "--labels has %d word%s for %d tokens: give one per token (\"-\" for none)", n + 1,
                   n ? "s" : "", t->L);
  *n_target = t->L;
  return true;
}
