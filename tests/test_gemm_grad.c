// test_gemm_grad.c -- the backward's products (gemm_grad.h) and elementwise kernels (grad_rows.h).
//
// For each packed kernel this CPU runs (gemm_use): y += a·b, y += a·wᵀ (both ways round: w
// wider and taller than a) and y += aᵀ·b on strided sub-views, shapes with ragged blocks (columns
// across GRAD_NB = 192, terms across GRAD_KB = 512, rows across GRAD_MB = 128, the 8×8 turns'
// edges), checked against a sum in double: |y − ref| ≤ 1e-6·(|y₀| + Σ|a||b|) + 1e-30; nothing
// outside y written; two threads give the bits of one; y = aᵀ·b written, not added, too. Under
// GEMM_BLAS and GEMM_PORTABLE they decline (false) and leave y alone.
// grad_rows.h: the derivatives of ReLU, GELU (erf), GELU (tanh) and SiLU and the gated FFN's
// against double formulas on [−12, 12] and at 0, ±inf, NaN (ReLU), arrays of every length mod 8;
// LayerNorm's backward against double loops, dγ and dβ added to what they held.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gemm.h"      // defines: gemm_use, gemm_kernel, gemm_kernel_name
#include "gemm_grad.h" // defines: gemm_grad_nn, gemm_grad_nt, gemm_grad_tn, GRAD_NB, GRAD_KB, GRAD_MB
#include "grad_rows.h" // defines: grad_act_add, grad_gated_add, grad_layernorm_rows
#include "mat.h"       // defines: Mat, mat_view, mat_sub
#include "par.h"       // defines: par_set_threads
#include "rng.h"       // defines: rng_seed, rng_uniform

#define SENTINEL 12345.0f

// A rows × cols view at (1, 3) inside a parent two rows and seven columns larger, all sentinel.
static Mat padded(float **buf, int rows, int cols) {
  int pc = cols + 7;
  *buf = malloc(sizeof(float) * (size_t)(rows + 2) * pc);
  for (long i = 0; i < (long)(rows + 2) * pc; i++) (*buf)[i] = SENTINEL;
  return mat_sub(mat_view(*buf, rows + 2, pc), 1, 3, rows, cols);
}

static void fill(Mat m, uint64_t *rng) {
  for (int i = 0; i < m.rows; i++)
    for (int j = 0; j < m.cols; j++) MAT_AT(m, i, j) = 2.0f * rng_uniform(rng) - 1.0f;
}

static void copy(Mat dst, Mat src) {
  for (int i = 0; i < src.rows; i++)
    memcpy(&MAT_AT(dst, i, 0), &MAT_AT(src, i, 0), sizeof(float) * (size_t)src.cols);
}

static bool same_bits(Mat a, Mat b) {
  for (int i = 0; i < a.rows; i++)
    if (memcmp(&MAT_AT(a, i, 0), &MAT_AT(b, i, 0), sizeof(float) * (size_t)a.cols)) return false;
  return true;
}

static long outside(const float *buf, Mat y) {
  int pc = y.cols + 7;
  long n = 0;
  for (int i = 0; i < y.rows + 2; i++)
    for (int j = 0; j < pc; j++) {
      bool in = i >= 1 && i <= y.rows && j >= 3 && j < 3 + y.cols;
      n += !in && buf[(size_t)i * pc + j] != SENTINEL;
    }
  return n;
}

typedef enum { NN, NT, TN } Form;
static const char *const FORM[] = {"a·b", "a·wᵀ", "aᵀ·b"};

static bool run(Form f, Mat y, Mat a, Mat b, bool threads) {
  return f == NN   ? gemm_grad_nn(y, a, b, threads)
         : f == NT ? gemm_grad_nt(y, a, b, threads)
                   : gemm_grad_tn(y, a, b, threads);
}

static void check_shape(Form f, int M, int N, int K, uint64_t *rng) {
  char what[96];
  snprintf(what, sizeof what, "%s %s %dx%dx%d", gemm_kernel_name(gemm_kernel()), FORM[f], M, N, K);
  float *ab, *bb, *yb, *tb;
  Mat a = f == TN ? padded(&ab, K, M) : padded(&ab, M, K);
  Mat b = f == NT ? padded(&bb, N, K) : padded(&bb, K, N);
  Mat y = padded(&yb, M, N), y2 = padded(&tb, M, N);
  fill(a, rng), fill(b, rng), fill(y, rng);
  copy(y2, y);
  double *ref = malloc(sizeof(double) * (size_t)M * N), *mag = malloc(sizeof(double) * (size_t)M * N);
  double *sum = malloc(sizeof(double) * (size_t)M * N); // the product alone
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double s = MAT_AT(y, i, j), m = fabs(s);
      for (int k = 0; k < K; k++) {
        double av = f == TN ? MAT_AT(a, k, i) : MAT_AT(a, i, k),
               bv = f == NT ? MAT_AT(b, j, k) : MAT_AT(b, k, j);
        s += av * bv, m += fabs(av * bv);
      }
      ref[(size_t)i * N + j] = s, mag[(size_t)i * N + j] = m, sum[(size_t)i * N + j] = s - MAT_AT(y, i, j);
    }
  par_set_threads(1);
  CHECK(run(f, y, a, b, true), "%s: declined", what);
  long bad = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double d = fabs(MAT_AT(y, i, j) - ref[(size_t)i * N + j]);
      if (!(d <= 1e-6 * mag[(size_t)i * N + j] + 1e-30) && bad++ < 3)
        fprintf(stderr, "  %s [%d,%d]: %.9g, double %.9g\n", what, i, j, MAT_AT(y, i, j),
                ref[(size_t)i * N + j]);
    }
  CHECK(bad == 0, "%s: %ld entries off the double sum", what, bad);
  CHECK(outside(yb, y) == 0, "%s: wrote outside y", what);
  par_set_threads(2);
  CHECK(run(f, y2, a, b, true), "%s: declined on two threads", what);
  par_set_threads(1);
  CHECK(same_bits(y, y2), "%s: two threads, other bits", what);
  CHECK(outside(tb, y2) == 0, "%s: two threads wrote outside y", what);
  if (f == TN) { // y = aᵀ·b, written: what y held (NaN here) plays no part
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) MAT_AT(y2, i, j) = NAN;
    par_set_threads(2);
    CHECK(gemm_grad_tn_to(y2, a, b, true), "%s =: declined", what);
    par_set_threads(1);
    long off = 0;
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        double d = fabs(MAT_AT(y2, i, j) - sum[(size_t)i * N + j]);
        off += !(d <= 1e-6 * mag[(size_t)i * N + j] + 1e-30);
      }
    CHECK(off == 0, "%s =: %ld entries off the double sum", what, off);
    CHECK(outside(tb, y2) == 0, "%s =: wrote outside y", what);
  }
  free(ab), free(bb), free(yb), free(tb), free(ref), free(mag), free(sum);
}

static void check_products(void) {
  uint64_t rng = rng_seed(38);
  static const int dims[][3] = {{1, 1, 1},
                                {7, 5, 3},
                                {17, 9, 33},
                                {40, 15, 64},
                                {64, GRAD_NB + 9, 70},
                                {9, 300, GRAD_KB + 37},
                                {GRAD_MB + 3, 41, 24},
                                {130, 200, 128},
                                {64, 768, 96}};
  for (size_t s = 0; s < sizeof dims / sizeof *dims; s++)
    for (int f = NN; f <= TN; f++) {
      check_shape((Form)f, dims[s][0], dims[s][1], dims[s][2], &rng);
      if (f == NT) check_shape(NT, dims[s][1], dims[s][0], dims[s][2], &rng); // a taller than w
    }
}

static void check_declines(void) {
  GemmKernel was = gemm_kernel();
  for (int k = GEMM_PORTABLE; k <= GEMM_BLAS; k++) {
    if (!gemm_use((GemmKernel)k)) continue;
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 1, 0, 1, 0}, y[4] = {7, 7, 7, 7};
    bool ok = gemm_grad_nn(mat_view(y, 2, 2), mat_view(a, 2, 3), mat_view(b, 3, 2), true) ||
              gemm_grad_nt(mat_view(y, 2, 2), mat_view(a, 2, 3), mat_view(b, 2, 3), true) ||
              gemm_grad_tn(mat_view(y, 2, 2), mat_view(a, 3, 2), mat_view(b, 3, 2), true);
    CHECK(!ok && y[0] == 7 && y[1] == 7 && y[2] == 7 && y[3] == 7, "%s: declines and leaves y",
          gemm_kernel_name((GemmKernel)k));
  }
  gemm_use(was);
}

// ---------------------------------------------------------------- grad_rows.h

static double phi_cdf(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

// act'(x) and act(x) in double.
static double dact(GradAct a, double x, double *value) {
  const double k = 0.7978845608028654;
  if (a == GRAD_RELU) return *value = x > 0 ? x : 0, x > 0 ? 1.0 : 0.0;
  if (a == GRAD_GELU) return *value = x * phi_cdf(x), phi_cdf(x) + x * exp(-0.5 * x * x) / 2.5066282746310002;
  if (a == GRAD_GELU_TANH) {
    double th = tanh(k * (x + 0.044715 * x * x * x));
    *value = 0.5 * x * (1 + th);
    return 0.5 * (1 + th) + 0.5 * x * (1 - th * th) * k * (1 + 3 * 0.044715 * x * x);
  }
  double sg = 1 / (1 + exp(-x));
  *value = x * sg;
  return sg * (1 + x * (1 - sg));
}

static void check_activations(void) {
  static const char *const NAME[] = {"relu", "gelu", "gelu_tanh", "silu"};
  enum { N = 2403 }; // 2403 = 8·300 + 3: a partial last vector
  float *x = malloc(sizeof(float) * N), *dh = malloc(sizeof(float) * N), *dx = malloc(sizeof(float) * N);
  float *up = malloc(sizeof(float) * N), *dg = malloc(sizeof(float) * N), *du = malloc(sizeof(float) * N);
  uint64_t rng = rng_seed(3);
  for (int i = 0; i < N; i++) {
    x[i] = -12.0f + 24.0f * (float)i / (N - 1);
    dh[i] = 2.0f * rng_uniform(&rng) - 1.0f, up[i] = 2.0f * rng_uniform(&rng) - 1.0f;
  }
  x[N / 2] = 0.0f;
  for (int a = GRAD_RELU; a <= GRAD_SILU; a++) {
    for (int i = 0; i < N; i++) dx[i] = 0.5f, dg[i] = 0.25f, du[i] = -0.25f;
    grad_act_add((GradAct)a, dh, x, N, dx);
    grad_gated_add((GradAct)a, dh, x, up, N, dg, du);
    double worst = 0, worst_g = 0;
    for (int i = 0; i < N; i++) {
      double v, d = dact((GradAct)a, x[i], &v);
      worst = fmax(worst, fabs(dx[i] - (0.5 + dh[i] * d)));
      worst_g = fmax(worst_g, fabs(dg[i] - (0.25 + (double)dh[i] * up[i] * d)));
      worst_g = fmax(worst_g, fabs(du[i] - (-0.25 + (double)dh[i] * v)) / fmax(1.0, fabs(x[i])));
    }
    CHECK(worst <= 1e-6, "%s: derivative off by %.3g", NAME[a], worst);
    CHECK(worst_g <= 2e-6, "%s: gated off by %.3g", NAME[a], worst_g);
    float full[17] = {0}, part[17];
    grad_act_add((GradAct)a, dh + 100, x + 100, 17, full);
    for (int n = 0; n <= 17; n++) { // every length mod 8: the same bits at the same x
      memset(part, 0, sizeof part);
      grad_act_add((GradAct)a, dh + 100, x + 100, n, part);
      CHECK(!memcmp(part, full, sizeof(float) * (size_t)n), "%s: length %d, other bits", NAME[a], n);
    }
  }
  float sx[4] = {INFINITY, -INFINITY, NAN, -0.0f}, sd[4] = {1, 1, 1, 1}, so[4] = {0, 0, 0, 0};
  grad_act_add(GRAD_RELU, sd, sx, 4, so);
  CHECK(so[0] == 1 && so[1] == 0 && so[2] == 0 && so[3] == 0, "relu' at inf, -inf, NaN, -0: %g %g %g %g",
        so[0], so[1], so[2], so[3]);
  free(x), free(dh), free(dx), free(up), free(dg), free(du);
}

static void check_layernorm(void) {
  enum { R = 5, D = 67 };
  float x[R * D], dy[R * D], g[D], dx[R * D], dgm[D], dbt[D];
  uint64_t rng = rng_seed(4);
  for (int i = 0; i < R * D; i++) x[i] = 100.0f + 3.0f * rng_uniform(&rng), dy[i] = rng_uniform(&rng) - 0.5f;
  for (int j = 0; j < D; j++) g[j] = 0.5f + rng_uniform(&rng), dgm[j] = 1.0f, dbt[j] = -1.0f;
  for (int i = 0; i < R * D; i++) dx[i] = 0.125f;
  grad_layernorm_rows(dy, x, R, D, g, 1e-5f, dx, dgm, dbt);
  double worst = 0, worst_p = 0, sg[D] = {0}, sb[D] = {0};
  for (int i = 0; i < R; i++) {
    const float *xi = x + i * D, *di = dy + i * D;
    double mu = 0, var = 0, m1 = 0, m2 = 0;
    for (int j = 0; j < D; j++) mu += xi[j];
    mu /= D;
    for (int j = 0; j < D; j++) var += (xi[j] - mu) * (xi[j] - mu);
    double rs = 1 / sqrt(var / D + 1e-5);
    for (int j = 0; j < D; j++) m1 += di[j] * g[j], m2 += di[j] * g[j] * (xi[j] - mu) * rs;
    m1 /= D, m2 /= D;
    for (int j = 0; j < D; j++) {
      double xh = (xi[j] - mu) * rs;
      worst = fmax(worst, fabs(dx[i * D + j] - (0.125 + rs * (di[j] * g[j] - m1 - xh * m2))));
      sg[j] += di[j] * xh, sb[j] += di[j];
    }
  }
  for (int j = 0; j < D; j++)
    worst_p = fmax(worst_p, fmax(fabs(dgm[j] - 1 - sg[j]), fabs(dbt[j] + 1 - sb[j])));
  CHECK(worst <= 1e-5, "layernorm dx off by %.3g", worst);
  CHECK(worst_p <= 1e-5, "layernorm dγ, dβ off by %.3g", worst_p);
}

int main(void) {
  check_declines();
  static const GemmKernel kernels[] = {GEMM_AVX512, GEMM_AVX2, GEMM_WASM_SIMD128};
  GemmKernel was = gemm_kernel();
  int ran = 0;
  for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++) {
    if (!gemm_use(kernels[i])) {
      printf("test_gemm_grad: %s kernel skipped: this CPU or build does not run it\n",
             gemm_kernel_name(kernels[i]));
      continue;
    }
    check_products();
    ran++;
  }
  gemm_use(was);
  if (ran == 0) printf("test_gemm_grad: no packed kernel here: the products always decline\n");
  check_activations();
  check_layernorm();
  return check_exit("test_gemm_grad");
}
