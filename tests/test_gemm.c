// test_gemm.c -- the packed-weight kernel (gemm.h) against the plain loops, alone and in the
// forward pass.
//
// gemm_matmul_t against mat_matmul_t_naive on a grid of shapes with ragged edges (M, N, K not
// multiples of the 6- and 8-row tiles, 16-, 32- and 48-column tiles and 256-column blocks; M = 1, N = 1, K =
// 1, K = 0; more than 256 rows, which splits the rows into blocks), on strided sub-views of x, w, y and the
// ReLU output, on column ranges of the packed weights (c0 > 0), with and without bias and ReLU, packed by
// gemm_pack, into a caller's buffer and from the transpose (y = x·b), scaled. Every entry must be within the
// rounding of a float sum of K products: |gemm - naive| <= 2(K+2)·ε·(Σ_k |x_ik·w_jk| + |b_j|). Nothing
// outside the views may be written; a NaN in x gives NaN in y and after ReLU (as torch.relu); splitting the
// columns or the rows into two calls gives the same bits. Then the forward pass of a model large enough to
// take the kernel: the trace has the same bits on one thread and on two, and stays within 1e-5 of the BLAS
// path. All of it for each kernel this machine runs (AVX-512, AVX2, wasm SIMD128: gemm_use), saying which it
// skips; and under GEMM_BLAS (SF_GEMM=blas), nothing gets packed.
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "err.h"     // defines: EXPECT
#include "forward.h" // defines: model_forward, forward_set_threads, forward_use_gemm
#include "gemm.h"    // defines: GemmWeights, gemm_pack, gemm_matmul_t, gemm_free
#include "mat.h"     // defines: Mat, mat_matmul_t_naive
#include "model.h"   // defines: Model, model_random
#include "rng.h"     // defines: rng_seed, rng_uniform
#include "trace.h"   // defines: Trace, trace_new

#define SENTINEL 12345.0f

typedef struct {
  float *buf;
  int prows, pcols, r0, c0; // the parent buffer and where the view starts in it
  Mat m;
} Guarded;

// A rows × cols view at (pad, 2·pad) inside a parent of (rows + 2·pad) × (cols + 3·pad) filled
// with the sentinel, so that a write past the view shows; pad = 0: the view is the parent.
static Guarded guarded(int rows, int cols, int pad) {
  Guarded g = {.prows = rows + 2 * pad, .pcols = cols + 3 * pad, .r0 = pad, .c0 = 2 * pad};
  size_t n = (size_t)g.prows * g.pcols;
  g.buf = malloc(sizeof(float) * (n ? n : 1));
  EXPECT(g.buf);
  for (size_t i = 0; i < n; i++) g.buf[i] = SENTINEL;
  g.m = (Mat){g.buf + (size_t)g.r0 * g.pcols + g.c0, rows, cols, g.pcols};
  if (pad == 0 && cols == 0) g.m.stride = 0;
  return g;
}

static long touched_outside(const Guarded *g) {
  long n = 0;
  for (int i = 0; i < g->prows; i++)
    for (int j = 0; j < g->pcols; j++) {
      bool inside = i >= g->r0 && i < g->r0 + g->m.rows && j >= g->c0 && j < g->c0 + g->m.cols;
      n += !inside && g->buf[(size_t)i * g->pcols + j] != SENTINEL;
    }
  return n;
}

static void fill(Mat m, uint64_t *rng) {
  for (int i = 0; i < m.rows; i++)
    for (int j = 0; j < m.cols; j++) MAT_AT(m, i, j) = 2.0f * rng_uniform(rng) - 1.0f;
}

// Largest |y - ref| / bound over the entries, with bound = 2(K+2)·ε·(Σ|x·w| + |b|) (> 1: fails).
static double worst_error(Mat y, Mat ref, Mat x, Mat w, const float *bias) {
  double worst = 0.0;
  int K = x.cols;
  for (int i = 0; i < y.rows; i++)
    for (int j = 0; j < y.cols; j++) {
      double mag = bias ? fabs(bias[j]) : 0.0;
      for (int k = 0; k < K; k++) mag += fabs((double)MAT_AT(x, i, k) * MAT_AT(w, j, k));
      double d = fabs((double)MAT_AT(y, i, j) - MAT_AT(ref, i, j)), bound = 2.0 * (K + 2) * FLT_EPSILON * mag;
      worst = fmax(worst, d == 0.0 ? 0.0 : bound > 0.0 ? d / bound : INFINITY);
    }
  return worst;
}

static long relu_mismatches(Mat h, Mat y) {
  long n = 0;
  for (int i = 0; i < y.rows; i++)
    for (int j = 0; j < y.cols; j++) {
      float v = MAT_AT(y, i, j);
      n += MAT_AT(h, i, j) != (v > 0.0f ? v : 0.0f);
    }
  return n;
}

static bool same_bits(Mat a, Mat b) {
  for (int i = 0; i < a.rows; i++)
    if (memcmp(&MAT_AT(a, i, 0), &MAT_AT(b, i, 0), sizeof(float) * (size_t)a.cols)) return false;
  return true;
}

// Packing into a caller's buffer (as attention packs K_h and V_h): gemm_pack_t_into of wᵀ gives
// the panels of gemm_pack_into of w, and s·x·wᵀ from them is within rounding of the naive loops.
static void check_caller_packing(Mat x, Mat w, Mat ref, const char *what, int pad) {
  int N = w.rows, K = w.cols;
  size_t floats = gemm_packed_floats(N, K);
  CHECK(floats % 16 == 0 && floats >= (size_t)N * K, "%s: gemm_packed_floats %zu", what, floats);
  float *b1 = aligned_alloc(64, sizeof(float) * (floats + 16)),
        *b2 = aligned_alloc(64, sizeof(float) * (floats + 16));
  Guarded wt = guarded(K, N, pad); // wᵀ [K, N]
  for (int k = 0; k < K; k++)
    for (int j = 0; j < N; j++) MAT_AT(wt.m, k, j) = MAT_AT(w, j, k);
  GemmWeights p1, p2;
  gemm_pack_into(&p1, b1, w);
  gemm_pack_t_into(&p2, b2, wt.m);
  CHECK(p1.panels == b1 && p2.panels == b2 && p1.n == N && p1.k == K && p2.n == N && p2.k == K,
        "%s: packed into the caller's buffer", what);
  CHECK(!memcmp(b1, b2, sizeof(float) * floats), "%s: gemm_pack_t_into(wᵀ) differs from gemm_pack_into(w)",
        what);
  const float s = 0.125f;
  Guarded y = guarded(x.rows, N, pad);
  gemm_matmul_t_scaled(y.m, x, &p2, s);
  mat_matmul_t_naive(ref, x, w, NULL);
  mat_scale(ref, s);
  double err = worst_error(y.m, ref, x, w, NULL); // the bound of the sum, scaled the same way
  CHECK(err <= s, "%s scaled: differs from the naive loops by %.3g of the rounding bound", what, err / s);
  CHECK(touched_outside(&y) == 0, "%s scaled: wrote outside y", what);
  free(b1), free(b2), free(wt.buf), free(y.buf);
}

// One shape: x[M,K] times rows c0..c0+N of a packed w of N + c0 + 5 rows, every variant.
static void check_shape(int M, int N, int K, int c0, int pad, uint64_t *rng) {
  char what[96];
  snprintf(what, sizeof what, "%dx%dx%d c0=%d%s", M, N, K, c0, pad ? " strided" : "");
  int WN = c0 + N + 5; // rows of the packed matrix: a column range inside it
  Guarded x = guarded(M, K, pad), wall = guarded(WN, K, pad);
  fill(x.m, rng), fill(wall.m, rng);
  Mat w = mat_sub(wall.m, c0, 0, N, K);
  float *bias = malloc(sizeof(float) * (size_t)(N ? N : 1));
  for (int j = 0; j < N; j++) bias[j] = 2.0f * rng_uniform(rng) - 1.0f;
  GemmWeights pw;
  bool packed = gemm_pack(&pw, wall.m);
  CHECK(packed && pw.panels && pw.n == WN && pw.k == K, "%s: gemm_pack", what);
  if (!packed) {
    free(x.buf), free(wall.buf), free(bias);
    return;
  }
  Guarded ref = guarded(M, N, 0);
  for (int v = 0; v < 4; v++) { // bias: v & 1, ReLU: v & 2
    const float *b = v & 1 ? bias : NULL;
    Guarded y = guarded(M, N, pad), h = guarded(M, N, pad);
    gemm_matmul_t(y.m, x.m, &pw, c0, b, v & 2 ? h.m : (Mat){0});
    mat_matmul_t_naive(ref.m, x.m, w, b);
    double err = worst_error(y.m, ref.m, x.m, w, b);
    CHECK(err <= 1.0, "%s%s%s: gemm differs from the naive loops by %.3g of the rounding bound", what,
          b ? " +bias" : "", v & 2 ? " +relu" : "", err);
    CHECK(touched_outside(&y) == 0, "%s: wrote outside y", what);
    if (v & 2) {
      CHECK(relu_mismatches(h.m, y.m) == 0, "%s: relu output is not max(y, 0)", what);
      CHECK(touched_outside(&h) == 0, "%s: wrote outside the relu output", what);
    } else {
      CHECK(touched_outside(&h) == 0 && MAT_AT(h.m, 0, 0) == SENTINEL, "%s: wrote relu without one", what);
    }
    free(y.buf), free(h.buf);
  }
  // the same bits when the columns (at a multiple of 16) or the rows are cut into two calls
  if (N > GEMM_NR || M > 1) {
    Guarded y = guarded(M, N, pad), y2 = guarded(M, N, pad);
    gemm_matmul_t(y.m, x.m, &pw, c0, bias, (Mat){0});
    int nc = N > GEMM_NR ? GEMM_NR * ((N / 2 + GEMM_NR - 1) / GEMM_NR) : N, mr = M / 2;
    if (nc < N) {
      gemm_matmul_t(mat_sub(y2.m, 0, 0, M, nc), x.m, &pw, c0, bias, (Mat){0});
      gemm_matmul_t(mat_sub(y2.m, 0, nc, M, N - nc), x.m, &pw, c0 + nc, bias + nc, (Mat){0});
      CHECK(same_bits(y.m, y2.m), "%s: columns cut at %d give other bits", what, nc);
    }
    if (mr > 0) {
      gemm_matmul_t(mat_sub(y2.m, 0, 0, mr, N), mat_sub(x.m, 0, 0, mr, K), &pw, c0, bias, (Mat){0});
      gemm_matmul_t(mat_sub(y2.m, mr, 0, M - mr, N), mat_sub(x.m, mr, 0, M - mr, K), &pw, c0, bias, (Mat){0});
      CHECK(same_bits(y.m, y2.m), "%s: rows cut at %d give other bits", what, mr);
    }
    free(y.buf), free(y2.buf);
  }
  check_caller_packing(x.m, w, ref.m, what, pad);
  CHECK(touched_outside(&x) == 0 && touched_outside(&wall) == 0, "%s: x or w was written to", what);
  gemm_free(&pw);
  CHECK(pw.panels == NULL, "gemm_free leaves the weights empty");
  free(x.buf), free(wall.buf), free(ref.buf), free(bias);
}

static void check_shapes(void) {
  static const int Ms[] = {1, 2, 5, 6, 7, 8, 9, 13, 17, 40};
  static const int Ns[] = {1, 15, 16, 17, 40, 49};
  static const int Ks[] = {0, 1, 3, 8, 255, 256, 257, 520};
  uint64_t rng = rng_seed(2026);
  int n = 0;
  for (size_t a = 0; a < sizeof Ms / sizeof *Ms; a++)
    for (size_t b = 0; b < sizeof Ns / sizeof *Ns; b++)
      for (size_t c = 0; c < sizeof Ks / sizeof *Ks; c++, n++)
        check_shape(Ms[a], Ns[b], Ks[c], GEMM_NR * (n % 3), n % 2, &rng);
  // more rows than one block of rows (256), and long sums
  static const int big[][3] = {
      {300, 48, 300}, {257, 33, 100}, {513, 20, 64}, {64, 100, 1100}, {12, 2304, 64}};
  for (size_t i = 0; i < sizeof big / sizeof *big; i++)
    check_shape(big[i][0], big[i][1], big[i][2], 16, 1, &rng);
}

static void check_nan(void) {
  float xv[2 * 3] = {NAN, 1, 2, 3, 4, 5}, wv[2 * 3] = {1, 1, 1, -1, -1, -1}, yv[4], hv[4];
  GemmWeights pw;
  if (!gemm_pack(&pw, mat_view(wv, 2, 3))) return;
  gemm_matmul_t(mat_view(yv, 2, 2), mat_view(xv, 2, 3), &pw, 0, NULL, mat_view(hv, 2, 2));
  CHECK(isnan(yv[0]) && isnan(yv[1]) && isnan(hv[0]) && isnan(hv[1]), "a NaN in x: y NaN, relu NaN");
  CHECK(yv[2] == 12.0f && yv[3] == -12.0f && hv[2] == 12.0f && hv[3] == 0.0f, "the row without NaN: %g %g",
        (double)yv[2], (double)yv[3]);
  gemm_free(&pw);
}

// mat_relu as torch.relu: NaN stays NaN, -0 stays -0, negatives become 0 (in the vector loop and
// in the scalar tail: 9 values).
static void check_relu_like_torch(void) {
  float x[9] = {NAN, -0.0f, -1.0f, 2.0f, 0.5f, -3.0f, 4.0f, -0.0f, NAN}, y[9];
  mat_relu(mat_view(y, 1, 9), mat_view(x, 1, 9));
  for (int j = 0; j < 9; j++) {
    bool ok = isnan(x[j]) ? isnan(y[j])
              : x[j] < 0  ? y[j] == 0 && !signbit(y[j])
                          : y[j] == x[j] && signbit(y[j]) == signbit(x[j]);
    CHECK(ok, "relu(%g) = %g", (double)x[j], (double)y[j]);
  }
}

// ---------------------------------------------------------------- in the forward pass

static Trace *trace_of(const Model *m, const char *text) {
  Tokens tok;
  Err err = {0};
  bool ok = tokens_from_text(&tok, &m->vocab, text, 0, &err);
  CHECK(ok, "%s", err.msg);
  if (!ok) return NULL;
  Trace *t = trace_new(m, &tok, &err);
  tokens_free(&tok);
  CHECK(t != NULL, "%s", err.msg);
  return t;
}

static void check_forward(void) {
  const char *words = "the cat walks by the river bank and the mouse sleeps by the money while a dog eats";
  char text[1024] = "";
  for (int i = 0; i < 3; i++)
    snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s", i ? " " : "", words);
  Err err = {0};
  Vocab v;
  CHECK(vocab_from_text(&v, words, &err), "%s", err.msg);
  ModelConfig c = model_config_default();
  uint64_t seed = 5;
  CHECK(model_config_parse(&c, &seed, "D=128,H=4,F=512,layers=2", &err), "%s", err.msg);
  Model *m = model_random(&c, &v, seed, &err);
  vocab_free(&v);
  CHECK(m != NULL, "%s", err.msg);
  if (!m) return;
  CHECK(m->layers[1].linear2_packed.panels != NULL, "the model's weights are packed");
  Trace *t = trace_of(m, text);
  if (!t) {
    model_free(m);
    return;
  }
  CHECK(t->L >= 40, "%d tokens", t->L);
  size_t bytes = sizeof(float) * (size_t)t->block_floats;
  float *one = malloc(bytes);
  forward_set_threads(1);
  model_forward(t);
  memcpy(one, t->block, bytes);
  forward_set_threads(2);
  model_forward(t);
  CHECK(!memcmp(one, t->block, bytes), "the packed kernel gives other bits on two threads");
  forward_set_threads(1);
  forward_use_gemm = false; // BLAS and the loop kernels
  model_forward(t);
  forward_use_gemm = true;
  double worst = 0.0;
  for (long i = 0; i < t->block_floats; i++) {
    float a = one[i], b = t->block[i];
    if (isfinite(b)) worst = fmax(worst, fabs((double)a - b) / fmax(1.0, fabs((double)b)));
  }
  CHECK(worst <= 1e-5, "the forward with the packed kernel differs from BLAS by %.3g", worst);
  printf("forward, %s kernel against BLAS: max relative difference %.3g\n", gemm_kernel_name(gemm_kernel()),
         worst);
  free(one);
  trace_free(t);
  model_free(m);
}

// Under GEMM_BLAS and GEMM_PORTABLE nothing is packed: not the weights, not a model's. A build
// without BLAS cannot select GEMM_BLAS; every build can select GEMM_PORTABLE.
static void check_unpacked_kernels_pack_nothing(void) {
  GemmKernel was = gemm_kernel();
  CHECK(gemm_use(GEMM_BLAS) == SF_HAVE_BLAS, "gemm_use(GEMM_BLAS) in a build %s BLAS",
        SF_HAVE_BLAS ? "with" : "without");
  CHECK(gemm_use(GEMM_PORTABLE) && !gemm_supported(), "gemm_use(GEMM_PORTABLE)");
  for (int k = GEMM_PORTABLE; k <= GEMM_BLAS; k++) {
    if (!gemm_use((GemmKernel)k)) continue;
    GemmWeights pw;
    float w[4] = {1, 2, 3, 4};
    CHECK(!gemm_pack(&pw, mat_view(w, 2, 2)) && pw.panels == NULL, "%s: gemm_pack packs nothing",
          gemm_kernel_name((GemmKernel)k));
  }
  gemm_use(was);
}

int main(void) {
  check_relu_like_torch(); // mat_relu: every CPU
  check_unpacked_kernels_pack_nothing();
  printf("test_gemm: kernel in use %s (SF_GEMM=%s)\n", gemm_kernel_name(gemm_kernel()),
         getenv("SF_GEMM") ? getenv("SF_GEMM") : "");
  // every packed kernel this CPU runs, widest first; the others are skipped, and say so
  static const GemmKernel kernels[] = {GEMM_AVX512, GEMM_AVX2, GEMM_WASM_SIMD128};
  GemmKernel was = gemm_kernel();
  int ran = 0;
  for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++) {
    const char *name = gemm_kernel_name(kernels[i]);
    if (!gemm_use(kernels[i])) {
      printf("test_gemm: %s kernel skipped: this CPU or build does not run it\n", name);
      continue;
    }
    printf("test_gemm: %s kernel\n", name);
    check_shapes();
    check_nan();
    check_forward();
    ran++;
  }
  gemm_use(was);
  if (ran == 0) printf("test_gemm: this CPU has no AVX2 + FMA: the forward multiplies with BLAS\n");
  return check_exit("test_gemm");
}
