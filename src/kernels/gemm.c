// gemm.c -- see gemm.h: the choice of kernel, the packing, and the AVX2 kernel (the AVX-512 one
// is gemm_avx512.c, on the same packed panels). Shapes: y[M,n] = x[M,K]·w[c0..c0+n, K]ᵀ; tiles
// of MR rows of x (and y) by NR rows of w (columns of y); blocks of KC columns of x and w.
//
// Loop order (BLIS's, with the weights pre-packed): for each block of KC columns k, for each
// block of at most MC rows of x, for each panel of NR columns of y, for each tile of MR rows:
// one call of the micro-kernel, which adds the block's products to a 6×16 tile of y held in
// registers. A panel block ([KC][16], 16 KB) is read from memory once and then stays in the L1
// cache for all the tiles of the row block; the row block of x (MC×KC, at most 256 KB) stays in
// the L2 cache for all the panels. y holds the partial sums between blocks of k.
#include "gemm.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"         // defines: EXPECT
#include "gemm_avx512.h" // defines: gemm_avx512_matmul, GEMM_HAVE_AVX512
#include "gemm_wasm.h"   // defines: gemm_wasm_matmul, gemm_wasm_pack, GEMM_HAVE_WASM
#include "simd.h"        // defines: SF_AVX2_FMA, SF_INLINE, SF_UNROLL

// A tile is 6 rows × 16 columns of y in 12 registers (6 × 2 vectors of 8), with 2 more for a
// row of the panel and 1 for a broadcast x: 15 of AVX2's 16. Its 12 independent FMAs per k keep
// both FMA pipes busy through the FMA latency.
enum {
  MR = 6,
  NR = GEMM_NR,
  KC = GEMM_KC,
  MC = 256, // rows of x per block, at most: a block of x (MC·KC floats, 256 KB) stays in the L2 cache
};

size_t gemm_packed_floats(int n, int k) { return (size_t)(n + NR - 1) / NR * NR * (size_t)k; }

void gemm_free(GemmWeights *p) {
  free(p->panels);
  *p = (GemmWeights){0};
}

// ---------------------------------------------------------------- which kernel

static const char *const KERNEL_NAMES[] = {"portable", "blas", "avx2", "avx512",
                                           "wasm-simd128"}; // by GemmKernel

const char *gemm_kernel_name(GemmKernel k) { return KERNEL_NAMES[k]; }

const char *gemm_kernel_about(GemmKernel k) {
  switch (k) {
  case GEMM_AVX512: return "packed weights, AVX-512F micro-kernel";
  case GEMM_AVX2: return "packed weights, AVX2 + FMA micro-kernel";
  case GEMM_WASM_SIMD128: return "packed weights, wasm SIMD128 micro-kernel";
  case GEMM_BLAS: return "OpenBLAS for large products, the core's loops for small ones";
  default:
#if defined(__wasm_simd128__)
    return "the core's loop kernels on wasm SIMD128, no BLAS";
#elif defined(__wasm__)
    return "the core's loop kernels, scalar wasm, no BLAS";
#else
    return "the core's loop kernels on 8-float vectors, no BLAS";
#endif
  }
}

// Whether this CPU and build run kernel k.
static bool can_run(GemmKernel k) {
  if (k == GEMM_PORTABLE) return true;
  if (k == GEMM_BLAS) return SF_HAVE_BLAS;
  if (k == GEMM_WASM_SIMD128) return GEMM_HAVE_WASM;
#if SF_HAVE_AVX2_FMA
  __builtin_cpu_init();
  bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (k == GEMM_AVX2) return avx2;
  if (k == GEMM_AVX512) return GEMM_HAVE_AVX512 && avx2 && __builtin_cpu_supports("avx512f");
#endif
  return false;
}

static int chosen = -1; // the GemmKernel in use; -1 until the first call of gemm_kernel

GemmKernel gemm_kernel(void) {
  if (chosen >= 0) return (GemmKernel)chosen;
  GemmKernel best = GEMM_PORTABLE;
  for (int k = GEMM_WASM_SIMD128; k > GEMM_PORTABLE && best == GEMM_PORTABLE; k--)
    if (can_run((GemmKernel)k)) best = (GemmKernel)k;
  chosen = (int)best;
  const char *env = getenv("SF_GEMM");
  if (env && *env) {
    int want = -1;
    for (int k = GEMM_PORTABLE; k <= GEMM_WASM_SIMD128; k++)
      if (!strcmp(env, gemm_kernel_name((GemmKernel)k))) want = k;
    if (want < 0)
      fprintf(stderr,
              "SF_GEMM=%s: unknown kernel (use avx512, avx2, wasm-simd128, blas or portable); using %s\n",
              env, gemm_kernel_name(best));
    else if (!can_run((GemmKernel)want))
      fprintf(stderr, "SF_GEMM=%s: this CPU or build cannot run it; using %s\n", env, gemm_kernel_name(best));
    else
      chosen = want;
  }
  return (GemmKernel)chosen;
}

bool gemm_use(GemmKernel k) {
  if (!can_run(k)) return false;
  chosen = (int)k;
  return true;
}

bool gemm_supported(void) { return gemm_kernel() >= GEMM_AVX2; }

#if SF_HAVE_AVX2_FMA
#include <immintrin.h>

static int imin(int a, int b) { return a < b ? a : b; }

// The panel of rows j0.. (j0 a multiple of NR) for the block of columns k0.. (kc of them)
// starts at k0·np + j0·kc, where np is N rounded up to NR: blocks of k one after the other, and
// in each, the panels in order, each [kc][NR].
static float *panel_at(const GemmWeights *w, int j0, int k0, int kc) {
  return w->panels + (size_t)k0 * ((w->n + NR - 1) / NR * NR) + (size_t)j0 * kc;
}

// Transposes the 8×8 block whose rows are m[0..7] (afterwards m[i][j] is the old m[j][i]): pairs
// of rows interleaved, then pairs of pairs, then the 128-bit halves exchanged.
SF_AVX2_FMA SF_INLINE void transpose8(__m256 m[8]) {
  __m256 t[8], u[8];
  SF_UNROLL for (int i = 0; i < 8; i += 2) t[i] = _mm256_unpacklo_ps(m[i], m[i + 1]),
                                           t[i + 1] = _mm256_unpackhi_ps(m[i], m[i + 1]);
  SF_UNROLL for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44), u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44),
          u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  SF_UNROLL for (int i = 0; i < 4; i++) m[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20),
                                        m[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
}

// Packs the N×K matrix whose element (j, k) is src[j·js + k·ks]: w itself (js = stride, ks = 1)
// or the transpose of b[K,N] (js = 1, ks = stride). Each panel row (16 floats, a cache line) is
// filled whole, the rows past N with zeros. Full panels go by vectors: from w, 8×8 blocks
// transposed in registers; from b, 16 floats of a row (attention packs K_h and V_h at every
// forward).
SF_AVX2_FMA static void pack(GemmWeights *p, float *buf, const float *src, int n, int k, size_t js,
                             size_t ks) {
  *p = (GemmWeights){buf, n, k};
  for (int k0 = 0; k0 < k; k0 += KC) {
    int kc = imin(KC, k - k0);
    for (int j0 = 0; j0 < n; j0 += NR) {
      float *d = panel_at(p, j0, k0, kc);
      int nr = imin(NR, n - j0), kk = 0;
      const float *s0 = src + (size_t)j0 * js + (size_t)k0 * ks;
      if (ks == 1 && nr == NR)
        for (; kk + 8 <= kc; kk += 8)
          for (int half = 0; half < NR; half += 8) {
            __m256 m[8]; // rows j0+half.. of w, columns k0+kk..: transposed, columns of the panel
            SF_UNROLL for (int r = 0; r < 8; r++) m[r] = _mm256_loadu_ps(s0 + (size_t)(half + r) * js + kk);
            transpose8(m);
            SF_UNROLL for (int q = 0; q < 8; q++) _mm256_store_ps(d + (size_t)(kk + q) * NR + half, m[q]);
          }
      for (; kk < kc; kk++) {
        const float *s = s0 + (size_t)kk * ks;
        float *dk = d + (size_t)kk * NR;
        int jj = 0;
        if (js == 1 && nr == NR) {
          _mm256_store_ps(dk, _mm256_loadu_ps(s));
          _mm256_store_ps(dk + 8, _mm256_loadu_ps(s + 8));
          continue;
        }
        if (js == 1)
          for (; jj < nr; jj++) dk[jj] = s[jj];
        else
          for (; jj < nr; jj++) dk[jj] = s[jj * js];
        for (; jj < NR; jj++) dk[jj] = 0.0f;
      }
    }
  }
}

// The packing of this branch's kernels (AVX2 and AVX-512 read the same panels): 32-byte rows.
static void pack_checked(GemmWeights *p, float *buf, const float *src, int n, int k, size_t js, size_t ks) {
  EXPECT(((uintptr_t)buf & 31) == 0);
  pack(p, buf, src, n, k, js, ks);
}

enum { FIRST = 1, LAST = 2 }; // the tile's first block of k (start from 0) / last (scale, bias, relu)

typedef struct {
  const float *x; // the tile's first row of x at the block's first column; rows xs apart
  int xs;
  const float *w; // the panel block [kc][NR]
  int kc, nr, flags;
  float *y; // the tile of y (nr valid columns); rows ys apart
  int ys;
  float scale;       // y = scale·(x·wᵀ) (1: no multiply)
  const float *bias; // bias of the tile's columns, or NULL
  float *relu;       // relu(y) of the tile, or NULL; rows rs apart
  int rs;
  const float *pf; // prefetch pf_n cache lines (one panel row each) from here, one per k
  int pf_n;
  const float *py, *pr; // the next tile of y and of relu (py_rows × py_cols), prefetched: its partial
  int py_rows, py_cols; // sums, or the lines it writes, would otherwise come from far caches
} Tile;

// The micro-kernel: y[0..mr, 0..nr] (+)= Σ_k x[r, k]·w[k, :] over the block, then the epilogue.
// mr is a constant in each caller, so the loops over r unroll and c[][] lives in registers.
SF_AVX2_FMA SF_INLINE void tile_kernel(const int mr, const Tile *t) {
  __m256 c[MR][2];
  __m256i nrv = _mm256_set1_epi32(t->nr); // lanes j < nr are written, the others left alone
  __m256i m0 = _mm256_cmpgt_epi32(nrv, _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  __m256i m1 = _mm256_cmpgt_epi32(nrv, _mm256_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15));
  bool full = t->nr == NR;
  SF_UNROLL for (int r = 0; r < mr; r++) {
    float *yr = t->y + (size_t)r * t->ys;
    if (t->flags & FIRST)
      c[r][0] = c[r][1] = _mm256_setzero_ps();
    else if (full)
      c[r][0] = _mm256_loadu_ps(yr), c[r][1] = _mm256_loadu_ps(yr + 8);
    else
      c[r][0] = _mm256_maskload_ps(yr, m0), c[r][1] = _mm256_maskload_ps(yr + 8, m1);
  }
  for (int r = 0; r < t->py_rows; r++) {
    _mm_prefetch((const char *)(t->py + (size_t)r * t->ys), _MM_HINT_T0);
    _mm_prefetch((const char *)(t->py + (size_t)r * t->ys + t->py_cols - 1), _MM_HINT_T0);
    if (t->pr) {
      _mm_prefetch((const char *)(t->pr + (size_t)r * t->rs), _MM_HINT_T0);
      _mm_prefetch((const char *)(t->pr + (size_t)r * t->rs + t->py_cols - 1), _MM_HINT_T0);
    }
  }
  const float *w = t->w, *xk = t->x;
  size_t xs = (size_t)t->xs;
  int k = 0, pf_end = imin(t->pf_n, t->kc);
#define GEMM_STEP()                                                                                          \
  do {                                                                                                       \
    __m256 w0 = _mm256_load_ps(w), w1 = _mm256_load_ps(w + 8);                                               \
    SF_UNROLL for (int r = 0; r < mr; r++) {                                                                 \
      __m256 xv = _mm256_broadcast_ss(xk + r * xs);                                                          \
      c[r][0] = _mm256_fmadd_ps(xv, w0, c[r][0]);                                                            \
      c[r][1] = _mm256_fmadd_ps(xv, w1, c[r][1]);                                                            \
    }                                                                                                        \
    w += NR, xk++;                                                                                           \
  } while (0)
  for (; k < pf_end; k++) { // the first steps also fetch the next panel into the cache
    _mm_prefetch((const char *)(t->pf + (size_t)k * NR), _MM_HINT_T0);
    GEMM_STEP();
  }
#pragma GCC unroll 4
  for (; k < t->kc; k++) GEMM_STEP();
#undef GEMM_STEP
  if (t->flags & LAST && t->scale != 1.0f) {
    __m256 sv = _mm256_set1_ps(t->scale);
    SF_UNROLL for (int r = 0; r < mr; r++) c[r][0] = _mm256_mul_ps(c[r][0], sv),
                                           c[r][1] = _mm256_mul_ps(c[r][1], sv);
  }
  if (t->flags & LAST && t->bias) {
    __m256 b0 = full ? _mm256_loadu_ps(t->bias) : _mm256_maskload_ps(t->bias, m0);
    __m256 b1 = full ? _mm256_loadu_ps(t->bias + 8) : _mm256_maskload_ps(t->bias + 8, m1);
    SF_UNROLL for (int r = 0; r < mr; r++) c[r][0] = _mm256_add_ps(c[r][0], b0),
                                           c[r][1] = _mm256_add_ps(c[r][1], b1);
  }
  SF_UNROLL for (int r = 0; r < mr; r++) {
    float *yr = t->y + (size_t)r * t->ys;
    if (full)
      _mm256_storeu_ps(yr, c[r][0]), _mm256_storeu_ps(yr + 8, c[r][1]);
    else
      _mm256_maskstore_ps(yr, m0, c[r][0]), _mm256_maskstore_ps(yr + 8, m1, c[r][1]);
  }
  if (t->flags & LAST && t->relu) {
    __m256 zero = _mm256_setzero_ps();
    // max(0, c): MAXPS returns its second operand unless the first is larger, so NaN and -0 pass
    // through as in torch.relu (and mat_relu)
    SF_UNROLL for (int r = 0; r < mr; r++) {
      float *hr = t->relu + (size_t)r * t->rs;
      __m256 h0 = _mm256_max_ps(zero, c[r][0]), h1 = _mm256_max_ps(zero, c[r][1]);
      if (full) // (masked stores are slow on some CPUs: only for the last, partial panel)
        _mm256_storeu_ps(hr, h0), _mm256_storeu_ps(hr + 8, h1);
      else
        _mm256_maskstore_ps(hr, m0, h0), _mm256_maskstore_ps(hr + 8, m1, h1);
    }
  }
}

// The last tiles of a row block, with fewer rows (one call each, not inlined).
SF_AVX2_FMA __attribute__((noinline)) static void tile_5(const Tile *t) { tile_kernel(5, t); }
SF_AVX2_FMA __attribute__((noinline)) static void tile_4(const Tile *t) { tile_kernel(4, t); }
SF_AVX2_FMA __attribute__((noinline)) static void tile_3(const Tile *t) { tile_kernel(3, t); }
SF_AVX2_FMA __attribute__((noinline)) static void tile_2(const Tile *t) { tile_kernel(2, t); }
SF_AVX2_FMA __attribute__((noinline)) static void tile_1(const Tile *t) { tile_kernel(1, t); }
static void (*const SHORT_TILES[MR])(const Tile *) = {NULL, tile_1, tile_2, tile_3, tile_4, tile_5};

// Rows of the tile that starts `left` rows before the end of its block: 6, except that 7, 8, 9
// rows left are cut 3+4, 4+4, 5+4, not 6+1, 6+2, 6+3 (a tile of 1 or 2 rows wastes FMA slots).
static int tile_rows(int left) { return left >= 7 && left <= 9 ? left - 4 : imin(MR, left); }

// The AVX2 kernel's loops (the arguments checked by matmul); add: the sums start from y's values
// (no FIRST block: gemm_matmul_t_add).
SF_AVX2_FMA static void avx2_matmul(Mat y, Mat x, const GemmWeights *w, int c0, float scale,
                                    const float *bias, Mat relu, bool add) {
  int M = y.rows, N = y.cols, K = x.cols;
  // blocks of about equal size, in whole tiles but the last: M = 512 is 258 + 254 rows
  int row_blocks = (M + MC - 1) / MC, mc_max = ((M + row_blocks - 1) / row_blocks + MR - 1) / MR * MR;
  for (int k0 = 0; k0 < K; k0 += KC) {
    int kc = imin(KC, K - k0);
    int flags = (k0 == 0 && !add ? FIRST : 0) | (k0 + kc == K ? LAST : 0);
    for (int i0 = 0; i0 < M; i0 += mc_max) {
      int mc = imin(mc_max, M - i0);
      int tiles = (mc + MR - 1) / MR;
      for (int j = 0; j < N; j += NR) {
        Tile t = {.xs = x.stride, .w = panel_at(w, c0 + j, k0, kc), .kc = kc, .nr = imin(NR, N - j)};
        t.flags = flags, t.ys = y.stride, t.scale = scale, t.bias = bias ? bias + j : NULL,
        t.rs = relu.stride;
        // the panel this call reads next (the first of the next row block or block of k after
        // the last), fetched a share of its lines per tile
        const float *next = NULL;
        int next_kc = kc;
        if (j + NR < N)
          next = t.w + (size_t)NR * kc;
        else if (i0 + mc < M)
          next = panel_at(w, c0, k0, kc);
        else if (k0 + kc < K)
          next_kc = imin(KC, K - k0 - kc), next = panel_at(w, c0, k0 + kc, next_kc);
        int pf_per_tile = (next_kc + tiles - 1) / tiles;
        for (int i = i0, n = 0, mr; i < i0 + mc; i += mr, n++) {
          mr = tile_rows(i0 + mc - i);
          t.x = &MAT_AT(x, i, k0);
          t.y = &MAT_AT(y, i, j);
          t.relu = relu.data ? &MAT_AT(relu, i, j) : NULL;
          t.pf_n = next ? imin(pf_per_tile, next_kc - n * pf_per_tile) : 0;
          t.pf = t.pf_n > 0 ? next + (size_t)n * pf_per_tile * NR : NULL;
          int pi = i + mr, pj = j; // the next tile
          if (pi == i0 + mc) pi = i0, pj = j + NR;
          t.py_rows = pj < N ? tile_rows(i0 + mc - pi) : 0, t.py_cols = imin(NR, N - pj);
          t.py = t.py_rows ? &MAT_AT(y, pi, pj) : NULL;
          t.pr = t.py_rows && t.relu && flags & LAST ? &MAT_AT(relu, pi, pj) : NULL;
          if (mr == MR)
            tile_kernel(MR, &t);
          else
            SHORT_TILES[mr](&t);
        }
      }
    }
  }
}

// The kernel in use: AVX-512 when selected, else AVX2 (also when the weights were packed before
// gemm_use(GEMM_BLAS)). The arguments are checked by matmul.
static void kernel_matmul(Mat y, Mat x, const GemmWeights *w, int c0, float scale, const float *bias,
                          Mat relu) {
  if (gemm_kernel() == GEMM_AVX512)
    gemm_avx512_matmul(y, x, w, c0, scale, bias, relu);
  else
    avx2_matmul(y, x, w, c0, scale, bias, relu, false);
}

static void kernel_matmul_add(Mat y, Mat x, const GemmWeights *w, int c0) {
  if (gemm_kernel() == GEMM_AVX512)
    gemm_avx512_matmul_add(y, x, w, c0);
  else
    avx2_matmul(y, x, w, c0, 1.0f, NULL, (Mat){0}, true);
}

#elif GEMM_HAVE_WASM // the web build: the same packed panels, read by gemm_wasm.c's kernel

static void pack_checked(GemmWeights *p, float *buf, const float *src, int n, int k, size_t js, size_t ks) {
  EXPECT(((uintptr_t)buf & 15) == 0);
  gemm_wasm_pack(p, buf, src, n, k, js, ks);
}

static void kernel_matmul(Mat y, Mat x, const GemmWeights *w, int c0, float scale, const float *bias,
                          Mat relu) {
  gemm_wasm_matmul(y, x, w, c0, scale, bias, relu);
}

static void kernel_matmul_add(Mat y, Mat x, const GemmWeights *w, int c0) {
  gemm_wasm_matmul_add(y, x, w, c0);
}

#endif

#if SF_HAVE_AVX2_FMA || GEMM_HAVE_WASM // what both packed kernels share

void gemm_pack_into(GemmWeights *p, float *buf, Mat w) {
  pack_checked(p, buf, w.data, w.rows, w.cols, (size_t)w.stride, 1);
}

void gemm_pack_t_into(GemmWeights *p, float *buf, Mat b) {
  pack_checked(p, buf, b.data, b.cols, b.rows, 1, (size_t)b.stride);
}

// The packed copy of w [N, K] (or, transposed, of bᵀ for b [K, N]) in memory of its own.
static bool pack_alloc(GemmWeights *p, Mat w, bool transposed) {
  *p = (GemmWeights){0};
  if (!gemm_supported()) return false;
  int n = transposed ? w.cols : w.rows, k = transposed ? w.rows : w.cols;
  size_t bytes = (gemm_packed_floats(n, k) * sizeof(float) + 63) / 64 * 64;
  float *buf = aligned_alloc(64, bytes ? bytes : 64);
  if (!buf) return false;
  if (transposed)
    gemm_pack_t_into(p, buf, w);
  else
    gemm_pack_into(p, buf, w);
  return true;
}

bool gemm_pack(GemmWeights *p, Mat w) { return pack_alloc(p, w, false); }
bool gemm_pack_t(GemmWeights *p, Mat b) { return pack_alloc(p, b, true); }

// Checks, the empty cases, then the kernel in use.
static void matmul(Mat y, Mat x, const GemmWeights *w, int c0, float scale, const float *bias, Mat relu) {
  int M = y.rows, N = y.cols, K = x.cols;
  EXPECT(w->panels && x.rows == M && K == w->k && c0 >= 0 && c0 % NR == 0 && c0 + N <= w->n);
  EXPECT(!relu.data || (relu.rows == M && relu.cols == N));
  if (M == 0 || N == 0) return;
  if (K == 0) { // an empty sum: y = bias (or 0; 0 times any scale is 0), and relu(y)
    for (int i = 0; i < M; i++)
      for (int j = 0; j < N; j++) {
        float v = bias ? bias[j] : 0.0f;
        MAT_AT(y, i, j) = v;
        if (relu.data) MAT_AT(relu, i, j) = v < 0.0f ? 0.0f : v;
      }
    return;
  }
  kernel_matmul(y, x, w, c0, scale, bias, relu);
}

void gemm_matmul_t(Mat y, Mat x, const GemmWeights *w, int c0, const float *bias, Mat relu) {
  matmul(y, x, w, c0, 1.0f, bias, relu);
}

void gemm_matmul_t_scaled(Mat y, Mat x, const GemmWeights *w, float s) {
  matmul(y, x, w, 0, s, NULL, (Mat){0});
}

void gemm_matmul_t_add(Mat y, Mat x, const GemmWeights *w, int c0) {
  int M = y.rows, N = y.cols, K = x.cols;
  EXPECT(w->panels && x.rows == M && K == w->k && c0 >= 0 && c0 % NR == 0 && c0 + N <= w->n);
  if (M == 0 || N == 0 || K == 0) return; // an empty sum adds nothing
  kernel_matmul_add(y, x, w, c0);
}

#else // no packed kernel for this compiler or architecture (ARM, scalar wasm): nothing is ever packed

bool gemm_pack(GemmWeights *p, Mat w) {
  (void)w;
  *p = (GemmWeights){0};
  return false;
}

bool gemm_pack_t(GemmWeights *p, Mat b) { return gemm_pack(p, b); }

static void unsupported(const char *what) {
  fprintf(stderr, "%s: this build or CPU has no AVX2 + FMA kernel (check gemm_supported())\n", what);
  abort();
}

void gemm_pack_into(GemmWeights *p, float *buf, Mat w) {
  (void)p, (void)buf, (void)w;
  unsupported("gemm_pack_into");
}

void gemm_pack_t_into(GemmWeights *p, float *buf, Mat b) {
  (void)p, (void)buf, (void)b;
  unsupported("gemm_pack_t_into");
}

void gemm_matmul_t(Mat y, Mat x, const GemmWeights *w, int c0, const float *bias, Mat relu) {
  (void)y, (void)x, (void)w, (void)c0, (void)bias, (void)relu;
  unsupported("gemm_matmul_t");
}

void gemm_matmul_t_scaled(Mat y, Mat x, const GemmWeights *w, float s) {
  (void)y, (void)x, (void)w, (void)s;
  unsupported("gemm_matmul_t_scaled");
}

void gemm_matmul_t_add(Mat y, Mat x, const GemmWeights *w, int c0) {
  (void)y, (void)x, (void)w, (void)c0;
  unsupported("gemm_matmul_t_add");
}

#endif
