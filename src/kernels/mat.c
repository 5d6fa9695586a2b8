// mat.c -- see mat.h. Shapes are checked with EXPECT at the top of every operation.
//
// The kernels marked SF_KERNEL are written on the 8-float vector of simd.h and compiled for
// baseline x86-64 and for AVX2 (simd.h). Each keeps the arithmetic of the plain loop it stands
// for, in the same order where mat.h promises bit-identical results. They are also SF_NO_COVERAGE
// (nocov.h): the fuzz targets that run a forward pass learn nothing from their loop counters.
#include "mat.h"

#include <math.h>
#include <stdbool.h>

#include "err.h"
#include "gemm.h"  // defines: SF_HAVE_BLAS, gemm_kernel, GEMM_PORTABLE, GEMM_AVX2, GEMM_AVX512
#include "nocov.h" // defines: SF_NO_COVERAGE
#include "simd.h"  // defines: F8, f8_load, f8_store, f8_exp_neg, f8_exp_neg_fma, SF_KERNEL

// Measured on Zen 5 with OpenBLAS 0.3.21 (Haswell kernels): the loop kernels are 1.1-1.8x
// faster than sgemm up to 16 rows whatever N and K, about even at 32, slower from 64 on.
long mat_naive_max_madds = 64 * 1024;
int mat_loop_max_rows = 16;

Mat mat_view(float *data, int rows, int cols) { return (Mat){data, rows, cols, cols}; }

SF_NO_COVERAGE void mat_transpose(float *dst, const float *src, long rows, long cols) {
  enum { TILE = 32 };
  for (long i0 = 0; i0 < rows; i0 += TILE)
    for (long j0 = 0; j0 < cols; j0 += TILE) {
      long i1 = i0 + TILE < rows ? i0 + TILE : rows, j1 = j0 + TILE < cols ? j0 + TILE : cols;
      for (long j = j0; j < j1; j++)
        for (long i = i0; i < i1; i++) dst[j * rows + i] = src[i * cols + j];
    }
}

Mat mat_sub(Mat m, int r0, int c0, int rows, int cols) {
  EXPECT(r0 >= 0 && c0 >= 0 && rows >= 0 && cols >= 0);
  EXPECT(r0 + rows <= m.rows && c0 + cols <= m.cols);
  return (Mat){m.data + (size_t)r0 * m.stride + c0, rows, cols, m.stride};
}

static int imin(int a, int b) { return a < b ? a : b; }

// ---------------------------------------------------------------- reference kernels

void mat_matmul_t_naive(Mat y, Mat x, Mat w, const float *bias) {
  EXPECT(y.rows == x.rows && y.cols == w.rows && x.cols == w.cols);
  for (int i = 0; i < y.rows; i++) {
    const float *xi = &MAT_AT(x, i, 0);
    for (int j = 0; j < y.cols; j++) {
      const float *wj = &MAT_AT(w, j, 0);
      float acc = 0.0f;
      for (int k = 0; k < x.cols; k++) acc += xi[k] * wj[k];
      MAT_AT(y, i, j) = bias ? acc + bias[j] : acc;
    }
  }
}

void mat_matmul_naive(Mat y, Mat a, Mat b) {
  EXPECT(y.rows == a.rows && y.cols == b.cols && a.cols == b.rows);
  for (int i = 0; i < y.rows; i++) {
    float *yi = &MAT_AT(y, i, 0);
    for (int j = 0; j < y.cols; j++) yi[j] = 0.0f;
    for (int k = 0; k < a.cols; k++) {
      float aik = MAT_AT(a, i, k);
      const float *bk = &MAT_AT(b, k, 0);
      for (int j = 0; j < y.cols; j++) yi[j] += aik * bk[j];
    }
  }
}

// ---------------------------------------------------------------- loop kernels
//
// y = x·wᵀ in tiles of 8 rows of x (one vector lane per row) by 8 rows of w. The tile's rows of
// x are first copied transposed into xt, so that column k of the tile is one vector; each
// weight w[j, k] is then loaded once per tile and multiplied into all 8 rows at once. Every
// y[i, j] still sums its products k = 0, 1, ..., K-1 one after the other, as the naive kernel
// does, so the two agree bit for bit. Few rows (a short sentence) stream each weight once,
// where BLAS would first copy (pack) all of them.
enum { TILE_M = 8, TILE_N = 8, TILE_K = 256 };

// xt[k][r] = x[i0 + r, k0 + k] for r < mr, 0 for the lanes past the last row: 8x8 blocks
// transposed in registers, then the last kc % 8 columns one by one.
SF_INLINE void pack_rows_transposed(float *xt, Mat x, int i0, int mr, int k0, int kc) {
  int k = 0;
  for (; k + 8 <= kc; k += 8) {
    F8 m[TILE_M];
    SF_UNROLL for (int r = 0; r < TILE_M; r++) m[r] =
        r < mr ? f8_load(&MAT_AT(x, i0 + r, k0 + k)) : f8_set(0.0f);
    f8_transpose(m);
    SF_UNROLL for (int kk = 0; kk < 8; kk++) f8_store(xt + (k + kk) * TILE_M, m[kk]);
  }
  for (; k < kc; k++)
    for (int r = 0; r < TILE_M; r++) xt[k * TILE_M + r] = r < mr ? MAT_AT(x, i0 + r, k0 + k) : 0.0f;
}

typedef struct {
  int i0, mr, j0, nr, k0, kc;
  bool first, last; // the first / last slice of k: start from 0 / finish with alpha and bias
} Tile;

SF_INLINE void matmul_t_tile(Mat y, Mat w, const float *xt, Tile t, const float *bias, float alpha) {
  const float *wr[TILE_N]; // the tile's weight rows (repeating row j0 past the last one)
  F8 acc[TILE_N];          // acc[jj] lane r = y[i0 + r, j0 + jj]
  float tile[TILE_M][TILE_N];
  SF_UNROLL for (int jj = 0; jj < TILE_N; jj++) wr[jj] = &MAT_AT(w, t.j0 + (jj < t.nr ? jj : 0), t.k0);
  if (t.first) {
    SF_UNROLL for (int jj = 0; jj < TILE_N; jj++) acc[jj] = f8_set(0.0f);
  } else { // carry on from the sums of the slices before, stored in y: its rows, transposed
    SF_UNROLL for (int r = 0; r < TILE_M; r++) {
      const float *yr = &MAT_AT(y, t.i0 + (r < t.mr ? r : 0), t.j0);
      if (t.nr < TILE_N) {
        for (int jj = 0; jj < TILE_N; jj++) tile[r][jj] = jj < t.nr ? yr[jj] : 0.0f;
        yr = tile[r];
      }
      acc[r] = f8_load(yr);
    }
    f8_transpose(acc);
  }
  for (int k = 0; k < t.kc; k++) {
    F8 xk = f8_load(xt + k * TILE_M);
    SF_UNROLL for (int jj = 0; jj < TILE_N; jj++) acc[jj] += xk * wr[jj][k];
  }
  if (t.last) { // y = alpha·acc (+ bias): the same operations as the scalar loop, per lane
    if (alpha != 1.0f) SF_UNROLL for (int jj = 0; jj < TILE_N; jj++) acc[jj] *= alpha;
    if (bias) SF_UNROLL for (int jj = 0; jj < TILE_N; jj++) acc[jj] += bias[t.j0 + (jj < t.nr ? jj : 0)];
  }
  f8_transpose(acc); // now acc[r] lane jj = y[i0 + r, j0 + jj]
  for (int r = 0; r < t.mr; r++) {
    float *yr = &MAT_AT(y, t.i0 + r, t.j0);
    if (t.nr == TILE_N) {
      f8_store(yr, acc[r]);
    } else {
      f8_store(tile[0], acc[r]);
      for (int jj = 0; jj < t.nr; jj++) yr[jj] = tile[0][jj];
    }
  }
}

// y[M,N] = alpha · x[M,K]·w[N,K]ᵀ (+ bias[N]).
SF_NO_COVERAGE SF_KERNEL static void matmul_t_loops(Mat y, Mat x, Mat w, const float *bias, float alpha) {
  int M = y.rows, N = y.cols, K = x.cols;
  float xt[TILE_K * TILE_M];
  if (K == 0) { // an empty sum: y = bias or 0
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) MAT_AT(y, i, j) = bias ? 0.0f + bias[j] : 0.0f;
    return;
  }
  for (int i0 = 0; i0 < M; i0 += TILE_M)
    for (int k0 = 0; k0 < K; k0 += TILE_K) {
      Tile t = {.i0 = i0, .mr = imin(TILE_M, M - i0), .k0 = k0, .kc = imin(TILE_K, K - k0)};
      t.first = k0 == 0, t.last = k0 + t.kc == K;
      pack_rows_transposed(xt, x, t.i0, t.mr, t.k0, t.kc);
      for (t.j0 = 0; t.j0 < N; t.j0 += TILE_N) {
        t.nr = imin(TILE_N, N - t.j0);
        matmul_t_tile(y, w, xt, t, bias, alpha);
      }
    }
}

// y[M,N] = a[M,K]·b[K,N]: four rows of y at a time, 8 columns per vector, k in order (the
// naive kernel's order, bit for bit).
SF_NO_COVERAGE SF_KERNEL static void matmul_loops(Mat y, Mat a, Mat b) {
  int M = y.rows, N = y.cols, K = a.cols;
  for (int i0 = 0; i0 < M; i0 += 4) {
    int mr = imin(4, M - i0);
    const float *ar[4]; // the block's rows of a (repeating row i0 past the last one)
    for (int r = 0; r < 4; r++) ar[r] = &MAT_AT(a, i0 + (r < mr ? r : 0), 0);
    int j = 0;
    for (; j + 8 <= N; j += 8) {
      F8 acc[4] = {f8_set(0.0f), f8_set(0.0f), f8_set(0.0f), f8_set(0.0f)};
      for (int k = 0; k < K; k++) {
        F8 bk = f8_load(&MAT_AT(b, k, j));
        SF_UNROLL for (int r = 0; r < 4; r++) acc[r] += ar[r][k] * bk;
      }
      for (int r = 0; r < mr; r++) f8_store(&MAT_AT(y, i0 + r, j), acc[r]);
    }
    for (; j < N; j++)
      for (int r = 0; r < mr; r++) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++) acc += ar[r][k] * MAT_AT(b, k, j);
        MAT_AT(y, i0 + r, j) = acc;
      }
  }
}

// ---------------------------------------------------------------- the dispatching products

#if SF_HAVE_BLAS
#include <cblas.h>
void mat_set_blas_threads(int n) { openblas_set_num_threads(n < 1 ? 1 : n); }
#else // no BLAS (cmake -DSF_BLAS=OFF): every product runs the loop kernels
void mat_set_blas_threads(int n) { (void)n; }
#endif

static bool use_loops(long m, long n, long k) {
  if (!SF_HAVE_BLAS || gemm_kernel() == GEMM_PORTABLE) return true; // no BLAS, or SF_GEMM=portable
  if (mat_naive_max_madds <= 0) return false;                       // forced BLAS
  return m * n * k <= mat_naive_max_madds || m <= mat_loop_max_rows;
}

// y = alpha · x·wᵀ (+ bias) through BLAS: y starts as the bias and the product is added to it.
static void matmul_t_blas(Mat y, Mat x, Mat w, const float *bias, float alpha) {
#if SF_HAVE_BLAS
  float beta = 0.0f;
  if (bias) {
    for (int i = 0; i < y.rows; i++) memcpy(&MAT_AT(y, i, 0), bias, sizeof(float) * (size_t)y.cols);
    beta = 1.0f;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, y.rows, y.cols, x.cols, alpha, x.data, x.stride,
              w.data, w.stride, beta, y.data, y.stride);
#else
  (void)y, (void)x, (void)w, (void)bias, (void)alpha; // never called: use_loops is always true
#endif
}

static void matmul_t(Mat y, Mat x, Mat w, const float *bias, float alpha) {
  EXPECT(y.rows == x.rows && y.cols == w.rows && x.cols == w.cols);
  if (y.rows == 0 || y.cols == 0) return;
  if (use_loops(y.rows, y.cols, x.cols))
    matmul_t_loops(y, x, w, bias, alpha);
  else
    matmul_t_blas(y, x, w, bias, alpha);
}

void mat_matmul_t(Mat y, Mat x, Mat w, const float *bias) { matmul_t(y, x, w, bias, 1.0f); }

void mat_matmul_t_scaled(Mat y, Mat x, Mat w, float s) { matmul_t(y, x, w, NULL, s); }

void mat_matmul(Mat y, Mat a, Mat b) {
  EXPECT(y.rows == a.rows && y.cols == b.cols && a.cols == b.rows);
  if (y.rows == 0 || y.cols == 0) return;
  if (use_loops(y.rows, y.cols, a.cols)) {
    matmul_loops(y, a, b);
    return;
  }
#if SF_HAVE_BLAS
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, y.rows, y.cols, a.cols, 1.0f, a.data, a.stride,
              b.data, b.stride, 0.0f, y.data, y.stride);
#endif
}

// ---------------------------------------------------------------- elementwise

SF_NO_COVERAGE SF_KERNEL void mat_copy(Mat dst, Mat src) {
  EXPECT(dst.rows == src.rows && dst.cols == src.cols);
  for (int i = 0; i < src.rows; i++) {
    float *d = &MAT_AT(dst, i, 0);
    const float *s = &MAT_AT(src, i, 0);
    if (src.cols > 64) { // long rows: the C library's copy; short ones are not worth the call
      memmove(d, s, sizeof(float) * (size_t)src.cols);
      continue;
    }
    int j = 0;
    for (; j + 8 <= src.cols; j += 8) f8_store(d + j, f8_load(s + j));
    for (; j < src.cols; j++) d[j] = s[j];
  }
}

SF_NO_COVERAGE SF_KERNEL void mat_add(Mat y, Mat a, Mat b) {
  EXPECT(y.rows == a.rows && y.cols == a.cols && a.rows == b.rows && a.cols == b.cols);
  for (int i = 0; i < y.rows; i++) {
    float *yi = &MAT_AT(y, i, 0);
    const float *ai = &MAT_AT(a, i, 0), *bi = &MAT_AT(b, i, 0);
    int j = 0;
    for (; j + 8 <= y.cols; j += 8) f8_store(yi + j, f8_load(ai + j) + f8_load(bi + j));
    for (; j < y.cols; j++) yi[j] = ai[j] + bi[j];
  }
}

SF_NO_COVERAGE SF_KERNEL void mat_scale(Mat m, float s) {
  for (int i = 0; i < m.rows; i++) {
    float *mi = &MAT_AT(m, i, 0);
    int j = 0;
    for (; j + 8 <= m.cols; j += 8) f8_store(mi + j, f8_load(mi + j) * s);
    for (; j < m.cols; j++) mi[j] *= s;
  }
}

// max over x[0..n-1], with four running maxima so that the comparisons do not wait on each other
SF_INLINE float row_max(const float *x, int n) {
  F8 m[4] = {f8_set(-INFINITY), f8_set(-INFINITY), f8_set(-INFINITY), f8_set(-INFINITY)};
  int j = 0;
  for (; j + 32 <= n; j += 32) SF_UNROLL for (int u = 0; u < 4; u++) {
      F8 v = f8_load(x + j + 8 * u);
      m[u] = f8_max(v, m[u]);
    }
  for (; j + 8 <= n; j += 8) {
    F8 v = f8_load(x + j);
    m[0] = f8_max(v, m[0]);
  }
  m[0] = f8_max(m[0], m[1]);
  m[2] = f8_max(m[2], m[3]);
  m[0] = f8_max(m[0], m[2]);
  float mx = f8_hmax(&m[0]);
  for (; j < n; j++) mx = x[j] > mx ? x[j] : mx;
  return mx;
}

// x[0 .. m-1] (0 < m < 8) in a vector padded with -inf, whose exp is 0.
SF_INLINE F8 row_tail(const float *x, int m) {
  const float inf = -INFINITY;
  return (F8){x[0],
              1 < m ? x[1] : inf,
              2 < m ? x[2] : inf,
              3 < m ? x[3] : inf,
              4 < m ? x[4] : inf,
              5 < m ? x[5] : inf,
              6 < m ? x[6] : inf,
              inf};
}

// y[j] = exp(x[j] - mx); returns the sum. The last n % 8 entries go through one padded vector.
SF_INLINE float row_exp(float *y, const float *x, int n, float mx) {
  F8 sum = f8_set(0.0f);
  int j = 0;
  for (; j + 8 <= n; j += 8) {
    F8 v = f8_load(x + j) - mx;
    F8 e = f8_exp_neg(&v);
    f8_store(y + j, e);
    sum += e;
  }
  if (j < n) {
    F8 v = row_tail(x + j, n - j) - mx, e = f8_exp_neg(&v);
    float out[8];
    f8_store(out, e);
    memcpy(y + j, out, sizeof(float) * (size_t)(n - j));
    sum += e;
  }
  return f8_sum(&sum);
}

// row_exp with the exp in FMA form (f8_exp_neg_fma): the same steps, 0.43 -> 0.30 ns per score
// (BENCHMARKS.md, issue 15). Only on CPUs with FMA (exp_fma); elsewhere it is row_exp.
#if SF_HAVE_AVX2_FMA
SF_AVX2_FMA static float row_exp_fma(float *y, const float *x, int n, float mx) {
  F8 sum = _mm256_setzero_ps();
  int j = 0;
  // Loads by intrinsics, not f8_load / row_tail: clang refuses a call that returns an F8 from a
  // function of another target (the ABI of a 256-bit return differs), even one always inlined.
  for (; j + 8 <= n; j += 8) {
    F8 v = _mm256_loadu_ps(x + j) - mx;
    F8 e = f8_exp_neg_fma(&v);
    f8_store(y + j, e);
    sum += e;
  }
  if (j < n) {
    float tail[8];
    for (int k = 0; k < 8; k++) tail[k] = j + k < n ? x[j + k] : -INFINITY; // exp(-inf) = 0
    F8 v = _mm256_loadu_ps(tail) - mx, e = f8_exp_neg_fma(&v);
    float out[8];
    f8_store(out, e);
    memcpy(y + j, out, sizeof(float) * (size_t)(n - j));
    sum += e;
  }
  return f8_sum(&sum);
}
#else
static float row_exp_fma(float *y, const float *x, int n, float mx) { return row_exp(y, x, n, mx); }
#endif

// Whether the softmax takes the exp in FMA form: where the products run a packed x86 kernel
// (gemm.h: AVX2 + FMA or AVX-512, so the CPU has FMA). Under SF_GEMM=blas or portable, and on
// CPUs without FMA, the portable form, so one machine can hold both to PyTorch (the golden
// tests' SF_GEMM=portable run). The choice is made before any thread starts (gemm_kernel), so
// one and two threads give the same bits; two machines may differ in the last bits (gemm.h).
static bool exp_fma(void) {
  GemmKernel k = gemm_kernel();
  return SF_HAVE_AVX2_FMA && (k == GEMM_AVX2 || k == GEMM_AVX512);
}

SF_NO_COVERAGE SF_KERNEL void mat_softmax_rows(Mat y, Mat x) {
  EXPECT(y.rows == x.rows && y.cols == x.cols);
  int n = x.cols;
  bool fma = exp_fma();
  for (int i = 0; i < x.rows; i++) {
    const float *xi = &MAT_AT(x, i, 0);
    float *yi = &MAT_AT(y, i, 0);
    float mx = row_max(xi, n);
    if (mx == -INFINITY) { // a fully masked row: PyTorch gives NaN; we never build one
      for (int j = 0; j < n; j++) yi[j] = NAN;
      continue;
    }
    // exp(-inf) is exactly 0: masked weights stay 0
    float inv = 1.0f / (fma ? row_exp_fma(yi, xi, n, mx) : row_exp(yi, xi, n, mx));
    int j = 0;
    for (; j + 8 <= n; j += 8) f8_store(yi + j, f8_load(yi + j) * inv);
    for (; j < n; j++) yi[j] *= inv;
  }
}

// Mean and biased variance of x[0..n-1], in double, in one pass over the row: sums of
// d = x - x[0] and of d² (the shift keeps rows far from 0 free of cancellation).
typedef double D4 __attribute__((vector_size(32)));
typedef float F4 __attribute__((vector_size(16)));

SF_INLINE D4 d4_load(const float *p) {
  F4 v;
  memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, D4);
}

SF_INLINE void row_moments(const float *x, int n, double *mean, double *var) {
  double x0 = x[0];
  D4 s = {0, 0, 0, 0}, ss = {0, 0, 0, 0};
  int j = 0;
  for (; j + 4 <= n; j += 4) {
    D4 d = d4_load(x + j) - x0;
    s += d;
    ss += d * d;
  }
  double sd = (s[0] + s[2]) + (s[1] + s[3]), sdd = (ss[0] + ss[2]) + (ss[1] + ss[3]);
  for (; j < n; j++) {
    double d = x[j] - x0;
    sd += d;
    sdd += d * d;
  }
  double md = sd / n, v = sdd / n - md * md;
  *mean = x0 + md;
  *var = v > 0.0 ? v : 0.0;
}

SF_NO_COVERAGE SF_KERNEL void mat_layernorm_rows(Mat y, Mat x, const float *weight, const float *bias,
                                                 float eps) {
  EXPECT(y.rows == x.rows && y.cols == x.cols);
  int n = x.cols;
  for (int i = 0; i < x.rows; i++) {
    // Mean and biased variance in double: the float result then agrees with PyTorch to ~1 ulp.
    const float *xi = &MAT_AT(x, i, 0);
    float *yi = &MAT_AT(y, i, 0);
    if (n == 0) continue;
    double mean, var;
    row_moments(xi, n, &mean, &var);
    double rstd = 1.0 / sqrt(var + eps);
    int j = 0;
    for (; j + 4 <= n; j += 4) {
      F4 xhat = __builtin_convertvector((d4_load(xi + j) - mean) * rstd, F4), g, b;
      memcpy(&g, weight + j, sizeof g);
      memcpy(&b, bias + j, sizeof b);
      F4 v = xhat * g + b;
      memcpy(yi + j, &v, sizeof v);
    }
    for (; j < n; j++) {
      float xhat = (float)((xi[j] - mean) * rstd);
      yi[j] = xhat * weight[j] + bias[j];
    }
  }
}

SF_NO_COVERAGE SF_KERNEL void mat_relu(Mat y, Mat x) {
  EXPECT(y.rows == x.rows && y.cols == x.cols);
  for (int i = 0; i < x.rows; i++) {
    const float *xi = &MAT_AT(x, i, 0);
    float *yi = &MAT_AT(y, i, 0);
    int j = 0;
    for (; j + 8 <= x.cols; j += 8) {
      F8 v = f8_load(xi + j);
      // the bits of the negative lanes (below -0, up to -inf; not NaN) cleared to +0: NaN and -0
      // pass through, as in torch.relu. Integer comparisons of the bits, because clang turns any
      // float form (f8_max(zero, v), v & ~(v < 0)) into wasm's f32x4.max, which makes -0 into +0.
      U8 b = (U8)v;
      I8 negative = (I8)((b > 0x80000000u) & (b <= 0xff800000u));
      f8_store(yi + j, (F8)((I8)b & ~negative));
    }
    for (; j < x.cols; j++) yi[j] = xi[j] < 0.0f ? 0.0f : xi[j];
  }
}

void mat_gelu(Mat y, Mat x) {
  EXPECT(y.rows == x.rows && y.cols == x.cols);
  const float inv_sqrt2 = 0.70710678118654752f;
  for (int i = 0; i < x.rows; i++)
    for (int j = 0; j < x.cols; j++) {
      float v = MAT_AT(x, i, j);
      MAT_AT(y, i, j) = 0.5f * v * (1.0f + erff(v * inv_sqrt2));
    }
}

void mat_minmax(Mat m, float *lo, float *hi) {
  float a = INFINITY, b = -INFINITY;
  for (int i = 0; i < m.rows; i++)
    for (int j = 0; j < m.cols; j++) {
      float v = MAT_AT(m, i, j);
      if (isfinite(v)) {
        a = fminf(a, v);
        b = fmaxf(b, v);
      }
    }
  if (a > b) a = b = 0.0f;
  *lo = a;
  *hi = b;
}
