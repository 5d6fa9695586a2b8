// gemm_avx512.c -- see gemm_avx512.h. Shapes: y[M,n] = x[M,K]·w[c0..c0+n, K]ᵀ; tiles of MR rows
// of x (and y) by NV panels of 16 rows of w (16·NV columns of y); blocks of KC columns of x and w.
//
// The loops are gemm.c's (BLIS's order): for each block of KC columns k, for each block of at
// most MC rows of x, for each group of NV panels, for each tile of MR rows, one call of the
// micro-kernel. The NV panels of a group lie one after the other in the packed copy (gemm.c's
// panel_at), so the kernel reads NV sequential streams of 64-byte rows, one vector each.
#include "gemm_avx512.h"

#if GEMM_HAVE_AVX512
#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>

#include "simd.h" // defines: SF_INLINE, SF_UNROLL

#define SF_AVX512 __attribute__((target("avx512f,avx2,fma")))

enum {
  MR = GEMM512_MR,
  NV = GEMM512_NV,
  NR = GEMM_NR,
  KC = GEMM_KC,
  MC = 256, // rows of x per block, at most (32 tiles): the block of x (MC·KC floats) stays in L2
  // columns of y per call of loops(), at most (12 groups of panels): the block of y (MC·NC floats,
  // 576 KB) stays in L2 beside x's from one block of k to the next, where a wide y (Llama 3.2 1B's
  // FFN, 8192 columns: 8 MB at 256 rows; its head, 128 256) went to L3 and back at every block of k.
  // Measured on Zen 5, one thread, 256 rows, K 2048: N 8192 218 -> 235 GFLOP/s, the head's
  // 128 256 columns 230 -> 238 (N 2048, K 8192: 234 -> 235). Each y[i,j] gets the same FMAs in the
  // same order (the groups of panels start at the same columns): the same bits.
  NC = 12 * NV * GEMM_NR,
};

static int imin(int a, int b) { return a < b ? a : b; }

// The panel of rows j0.. (a multiple of NR) for the block of columns k0.. (kc of them): as gemm.c.
static const float *panel_at(const GemmWeights *w, int j0, int k0, int kc) {
  return w->panels + (size_t)k0 * ((w->n + NR - 1) / NR * NR) + (size_t)j0 * kc;
}

enum { FIRST = 1, LAST = 2 }; // the tile's first block of k (start from 0) / last (scale, bias, relu)

typedef struct {
  const float *x; // the tile's first row of x at the block's first column; rows xs apart
  int xs;
  const float *w; // the first panel block [kc][NR]; the next panels follow, NR·kc floats apart
  int kc, nr, flags;
  float *y; // the tile of y (nr valid columns); rows ys apart
  int ys;
  float scale;       // y = scale·(x·wᵀ) (1: no multiply)
  const float *bias; // bias of the tile's columns, or NULL
  float *relu;       // relu(y) of the tile, or NULL; rows rs apart
  int rs;
  const float *pf; // prefetch pf_n cache lines from here, nv per k at the start of the block
  int pf_n;
  const float *py, *pr; // the next tile of y and of relu (py_rows × py_cols), prefetched
  int py_rows, py_cols;
} Tile;

// The micro-kernel: y[0..mr, 0..nr] (+)= Σ_k x[r, k]·w[k, :] over the block, then the epilogue,
// with nv panels (nr > 16·(nv-1)). mr and nv are constants in each caller, so the loops over them
// unroll and c[][] lives in registers. Lanes past nr are masked off (loads give 0, stores skip).
SF_AVX512 SF_INLINE void tile_kernel(const int mr, const int nv, const Tile *t) {
  __m512 c[MR][NV]; // (sizes that are constants: a variable-length array would live in memory)
  int tail = t->nr - NR * (nv - 1); // valid lanes of the last vector, 1..16
  __mmask16 mk[NV];
  SF_UNROLL for (int v = 0; v < nv; v++) mk[v] =
      v < nv - 1 ? (__mmask16)0xFFFF : (__mmask16)((1u << tail) - 1);
  SF_UNROLL for (int r = 0; r < mr; r++) {
    float *yr = t->y + (size_t)r * t->ys;
    SF_UNROLL for (int v = 0; v < nv; v++) c[r][v] =
        t->flags & FIRST ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(mk[v], yr + NR * v);
  }
  for (int r = 0; r < t->py_rows; r++) {
    const float *py = t->py + (size_t)r * t->ys, *pr = t->pr ? t->pr + (size_t)r * t->rs : NULL;
    for (int j = 0; j < t->py_cols; j += NR) {
      _mm_prefetch((const char *)(py + j), _MM_HINT_T0);
      if (pr) _mm_prefetch((const char *)(pr + j), _MM_HINT_T0);
    }
    _mm_prefetch((const char *)(py + t->py_cols - 1), _MM_HINT_T0);
    if (pr) _mm_prefetch((const char *)(pr + t->py_cols - 1), _MM_HINT_T0);
  }
  const float *w = t->w, *xk = t->x;
  size_t xs = (size_t)t->xs, ws = (size_t)NR * t->kc;
  int k = 0, pf_end = imin((t->pf_n + nv - 1) / nv, t->kc);
#define GEMM_STEP()                                                                                          \
  do {                                                                                                       \
    __m512 wv[NV];                                                                                           \
    SF_UNROLL for (int v = 0; v < nv; v++) wv[v] = _mm512_load_ps(w + ws * v);                               \
    SF_UNROLL for (int r = 0; r < mr; r++) {                                                                 \
      __m512 xv = _mm512_set1_ps(xk[r * xs]);                                                                \
      SF_UNROLL for (int v = 0; v < nv; v++) c[r][v] = _mm512_fmadd_ps(xv, wv[v], c[r][v]);                  \
    }                                                                                                        \
    w += NR, xk++;                                                                                           \
  } while (0)
  for (; k < pf_end; k++) { // the first steps also fetch the next panels into the cache
    SF_UNROLL for (int v = 0; v < nv; v++)
        _mm_prefetch((const char *)(t->pf + (size_t)(k * nv + v) * NR), _MM_HINT_T0);
    GEMM_STEP();
  }
#pragma GCC unroll 2
  for (; k < t->kc; k++) GEMM_STEP();
#undef GEMM_STEP
  if (t->flags & LAST && t->scale != 1.0f) {
    __m512 sv = _mm512_set1_ps(t->scale);
    SF_UNROLL for (int r = 0; r < mr; r++) SF_UNROLL for (int v = 0; v < nv; v++) c[r][v] =
        _mm512_mul_ps(c[r][v], sv);
  }
  if (t->flags & LAST && t->bias) {
    SF_UNROLL for (int v = 0; v < nv; v++) {
      __m512 b = _mm512_maskz_loadu_ps(mk[v], t->bias + NR * v);
      SF_UNROLL for (int r = 0; r < mr; r++) c[r][v] = _mm512_add_ps(c[r][v], b);
    }
  }
  SF_UNROLL for (int r = 0; r < mr; r++) {
    float *yr = t->y + (size_t)r * t->ys;
    SF_UNROLL for (int v = 0; v < nv; v++) _mm512_mask_storeu_ps(yr + NR * v, mk[v], c[r][v]);
  }
  if (t->flags & LAST && t->relu) {
    __m512 zero = _mm512_setzero_ps();
    // max(0, c): MAXPS returns its second operand unless the first is larger, so NaN and -0 pass
    // through as in torch.relu (and mat_relu)
    SF_UNROLL for (int r = 0; r < mr; r++) {
      float *hr = t->relu + (size_t)r * t->rs;
      SF_UNROLL for (int v = 0; v < nv; v++)
          _mm512_mask_storeu_ps(hr + NR * v, mk[v], _mm512_max_ps(zero, c[r][v]));
    }
  }
}

// Every other tile shape (fewer rows at the end of a row block, fewer panels at the end of the
// columns): one function each, not inlined, in a table by [rows][panels].
// clang-format off
#define TILE(mr, nv)                                                                                         \
  SF_AVX512 __attribute__((noinline)) static void tile_##mr##_##nv(const Tile *t) { tile_kernel(mr, nv, t); }
#define TILES(mr) TILE(mr, 1) TILE(mr, 2) TILE(mr, 3)
TILES(1)
TILES(2)
TILES(3)
TILES(4)
TILES(5)
TILES(6)
TILES(7)
TILES(8)
#undef TILES
#undef TILE
#define ROW(mr)                                                                                              \
  { NULL, tile_##mr##_1, tile_##mr##_2, tile_##mr##_3 }
static void (*const TILE_FN[MR + 1][NV + 1])(const Tile *) = {{NULL}, ROW(1), ROW(2), ROW(3), ROW(4),
                                                              ROW(5), ROW(6), ROW(7), ROW(8)};
#undef ROW
// clang-format on
_Static_assert(MR == 8 && NV == 3, "the table of tile functions above lists 8 rows × 3 panels");

// Rows of the tile that starts `left` rows before the end of its block: MR, but the last MR+1 ..
// 2·MR-1 rows are cut into two near-equal tiles (a tile of a few rows wastes FMA slots).
static int tile_rows(int left) { return left <= MR ? left : left < 2 * MR ? (left + 1) / 2 : MR; }

// add: the sums start from y's values (no FIRST block), for gemm_avx512_matmul_add.
SF_AVX512 static void loops(Mat y, Mat x, const GemmWeights *w, int c0, float scale, const float *bias,
                            Mat relu, bool add) {
  int M = y.rows, N = y.cols, K = x.cols;
  const int GW = NV * NR; // columns of y per group of panels
  // blocks of about equal size, in whole tiles but the last
  int row_blocks = (M + MC - 1) / MC, mc_max = ((M + row_blocks - 1) / row_blocks + MR - 1) / MR * MR;
  for (int k0 = 0; k0 < K; k0 += KC) {
    int kc = imin(KC, K - k0);
    int flags = (k0 == 0 && !add ? FIRST : 0) | (k0 + kc == K ? LAST : 0);
    for (int i0 = 0; i0 < M; i0 += mc_max) {
      int mc = imin(mc_max, M - i0);
      int tiles = (mc + MR - 1) / MR;
      for (int j = 0; j < N; j += GW) {
        int nr = imin(GW, N - j), nv = (nr + NR - 1) / NR;
        Tile t = {.xs = x.stride, .w = panel_at(w, c0 + j, k0, kc), .kc = kc, .nr = nr};
        t.flags = flags, t.ys = y.stride, t.scale = scale, t.bias = bias ? bias + j : NULL,
        t.rs = relu.stride;
        // the panels this call reads next (the first group of the next row block or block of k
        // after the last): their lines are contiguous, fetched a share per tile
        const float *next = NULL;
        int next_lines = 0;
        if (j + GW < N)
          next = t.w + (size_t)NR * kc * nv, next_lines = kc * ((imin(GW, N - j - GW) + NR - 1) / NR);
        else if (i0 + mc < M)
          next = panel_at(w, c0, k0, kc), next_lines = kc * ((imin(GW, N) + NR - 1) / NR);
        else if (k0 + kc < K) {
          int next_kc = imin(KC, K - k0 - kc);
          next = panel_at(w, c0, k0 + kc, next_kc), next_lines = next_kc * ((imin(GW, N) + NR - 1) / NR);
        }
        int pf_per_tile = (next_lines + tiles - 1) / tiles;
        for (int i = i0, n = 0, mr; i < i0 + mc; i += mr, n++) {
          mr = tile_rows(i0 + mc - i);
          t.x = &MAT_AT(x, i, k0);
          t.y = &MAT_AT(y, i, j);
          t.relu = relu.data ? &MAT_AT(relu, i, j) : NULL;
          t.pf_n = next ? imin(pf_per_tile, next_lines - n * pf_per_tile) : 0;
          t.pf = t.pf_n > 0 ? next + (size_t)n * pf_per_tile * NR : NULL;
          int pi = i + mr, pj = j; // the next tile
          if (pi == i0 + mc) pi = i0, pj = j + GW;
          t.py_rows = pj < N ? tile_rows(i0 + mc - pi) : 0, t.py_cols = imin(GW, N - pj);
          t.py = t.py_rows ? &MAT_AT(y, pi, pj) : NULL;
          t.pr = t.py_rows && t.relu && flags & LAST ? &MAT_AT(relu, pi, pj) : NULL;
          if (mr == MR && nv == NV)
            tile_kernel(MR, NV, &t);
          else
            TILE_FN[mr][nv](&t);
        }
      }
    }
  }
}

// loops() on blocks of at most NC columns of y, one after the other.
static void column_blocks(Mat y, Mat x, const GemmWeights *w, int c0, float scale, const float *bias,
                          Mat relu, bool add) {
  for (int j = 0; j < y.cols; j += NC) {
    int n = imin(NC, y.cols - j);
    Mat rj = relu.data ? mat_sub(relu, 0, j, relu.rows, n) : relu;
    loops(mat_sub(y, 0, j, y.rows, n), x, w, c0 + j, scale, bias ? bias + j : NULL, rj, add);
  }
}

void gemm_avx512_matmul(Mat y, Mat x, const GemmWeights *w, int c0, float scale, const float *bias,
                        Mat relu) {
  column_blocks(y, x, w, c0, scale, bias, relu, false);
}

void gemm_avx512_matmul_add(Mat y, Mat x, const GemmWeights *w, int c0) {
  column_blocks(y, x, w, c0, 1.0f, NULL, (Mat){0}, true);
}

#else
typedef int gemm_avx512_none; // (ISO C wants a declaration in every file)
#endif
