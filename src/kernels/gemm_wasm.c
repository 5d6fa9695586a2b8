// gemm_wasm.c -- see gemm_wasm.h: gemm.h's packed product on wasm SIMD128 (the web build only;
// elsewhere this file compiles to nothing). Shapes: y[M,n] = x[M,K]·w[c0..c0+n, K]ᵀ; tiles of
// MR = 4 rows of x (and y) by TC = 8 columns of y (half a packed panel); blocks of KC columns.
//
// Loop order, as the AVX2 kernel's: for each block of KC columns k, for each block of at most MC
// rows of x, for each panel of 16 columns of y and each half of it, for each tile of rows. y holds
// the partial sums between blocks of k; the last block scales, adds the bias and writes relu.
#include "gemm_wasm.h"

#if GEMM_HAVE_WASM
#include <string.h>
#include <wasm_simd128.h>

#include "simd.h" // defines: SF_INLINE, SF_UNROLL

enum {
  // rows of y per tile and vectors of 4 columns per tile: 8 accumulators, + 2 panel vectors, a
  // broadcast x and a product. Measured in Node at bert128 (BENCHMARKS.md): 4×8 about 46 ms, 6×8
  // (12 accumulators: V8 spills) 61 ms, 2×16 49-56 ms, 3×16 65 ms, 5×8 60 ms.
  MR = 4,
  NV = 2,
  TC = 4 * NV, // columns of y per tile (divides NR)
  NR = GEMM_NR,
  KC = GEMM_KC,
  MC = 192, // rows of x per block, at most
};

static int imin(int a, int b) { return a < b ? a : b; }

// The panel of rows j0.. for the block of columns k0.. (kc of them), as in gemm.c.
static const float *panel_at(const GemmWeights *w, int j0, int k0, int kc) {
  return w->panels + (size_t)k0 * ((w->n + NR - 1) / NR * NR) + (size_t)j0 * kc;
}

void gemm_wasm_pack(GemmWeights *p, float *buf, const float *src, int n, int k, size_t js, size_t ks) {
  *p = (GemmWeights){buf, n, k};
  for (int k0 = 0; k0 < k; k0 += KC) {
    int kc = imin(KC, k - k0);
    for (int j0 = 0; j0 < n; j0 += NR) {
      float *d = (float *)panel_at(p, j0, k0, kc);
      int nr = imin(NR, n - j0);
      const float *s0 = src + (size_t)j0 * js + (size_t)k0 * ks;
      for (int kk = 0; kk < kc; kk++) {
        const float *s = s0 + (size_t)kk * ks;
        float *dk = d + (size_t)kk * NR;
        int jj = 0;
        if (js == 1)
          memcpy(dk, s, (size_t)nr * sizeof(float)), jj = nr;
        else
          for (; jj < nr; jj++) dk[jj] = s[jj * js];
        for (; jj < NR; jj++) dk[jj] = 0.0f;
      }
    }
  }
}

typedef struct {
  const float *x; // the tile's first row of x at the block's first column; rows xs apart
  size_t xs;
  const float *w; // the tile's part of the panel: [kc] rows of TC, NR floats apart
  int kc, nc;     // nc: valid columns of the TC (the others are the panel's zero rows of w)
  int first, last;
  float *y; // rows ys apart
  size_t ys;
  float scale;
  const float *bias; // bias of the tile's columns, or NULL
  float *relu;       // relu(y) of the tile, or NULL; rows rs apart
  size_t rs;
} Tile;

// Stores the nc first lanes of the NV vectors v (TC floats) at p.
SF_INLINE void store_row(float *p, const v128_t *v, int nc) {
  if (nc == TC) {
    SF_UNROLL for (int q = 0; q < NV; q++) wasm_v128_store(p + 4 * q, v[q]);
    return;
  }
  float t[TC];
  SF_UNROLL for (int q = 0; q < NV; q++) wasm_v128_store(t + 4 * q, v[q]);
  memcpy(p, t, (size_t)nc * sizeof(float));
}

SF_INLINE v128_t load_part(const float *p, int n) { // the first n (0..4) floats of p, zeros after
  float t[4] = {0, 0, 0, 0};
  memcpy(t, p, (size_t)(n < 0 ? 0 : n > 4 ? 4 : n) * sizeof(float));
  return wasm_v128_load(t);
}

// y[0..mr, 0..nc] (+)= Σ_k x[r, k]·w[k, :] over the block, then the epilogue. mr is a constant
// in each caller, so the loops over r unroll and c[][] stays in locals (registers).
SF_INLINE void tile_kernel(const int mr, const Tile *t) {
  v128_t c[MR][NV];
  SF_UNROLL for (int r = 0; r < mr; r++) {
    float *yr = t->y + (size_t)r * t->ys;
    SF_UNROLL for (int q = 0; q < NV; q++) {
      if (t->first)
        c[r][q] = wasm_f32x4_splat(0.0f);
      else if (t->nc == TC)
        c[r][q] = wasm_v128_load(yr + 4 * q);
      else
        c[r][q] = load_part(yr + 4 * q, t->nc - 4 * q);
    }
  }
  const float *w = t->w, *xk = t->x;
  size_t xs = t->xs;
  // (unrolled by 4: V8 checks for interrupts at every turn of a loop)
#pragma clang loop unroll_count(4)
  for (int k = 0; k < t->kc; k++, w += NR, xk++) {
    v128_t wv[NV];
    SF_UNROLL for (int q = 0; q < NV; q++) wv[q] = wasm_v128_load(w + 4 * q);
    SF_UNROLL for (int r = 0; r < mr; r++) {
      v128_t xv = wasm_v128_load32_splat(xk + r * xs);
      SF_UNROLL for (int q = 0; q < NV; q++) c[r][q] = wasm_f32x4_add(c[r][q], wasm_f32x4_mul(xv, wv[q]));
    }
  }
  if (t->last && t->scale != 1.0f) {
    v128_t sv = wasm_f32x4_splat(t->scale);
    SF_UNROLL for (int r = 0; r < mr; r++) SF_UNROLL for (int q = 0; q < NV; q++) c[r][q] =
        wasm_f32x4_mul(c[r][q], sv);
  }
  if (t->last && t->bias) {
    SF_UNROLL for (int q = 0; q < NV; q++) {
      v128_t b = load_part(t->bias + 4 * q, t->nc - 4 * q);
      SF_UNROLL for (int r = 0; r < mr; r++) c[r][q] = wasm_f32x4_add(c[r][q], b);
    }
  }
  SF_UNROLL for (int r = 0; r < mr; r++) store_row(t->y + (size_t)r * t->ys, c[r], t->nc);
  if (t->last && t->relu) {
    v128_t zero = wasm_f32x4_splat(0.0f);
    // pmax(c, 0) is c < 0 ? 0 : c: NaN and -0 pass through, as in torch.relu and mat_relu
    SF_UNROLL for (int r = 0; r < mr; r++) {
      v128_t h[NV];
      SF_UNROLL for (int q = 0; q < NV; q++) h[q] = wasm_f32x4_pmax(c[r][q], zero);
      store_row(t->relu + (size_t)r * t->rs, h, t->nc);
    }
  }
}

// The last tile of a row block, with fewer rows (one call each, not inlined).
__attribute__((noinline)) static void tile_5(const Tile *t) { tile_kernel(5, t); }
__attribute__((noinline)) static void tile_4(const Tile *t) { tile_kernel(4, t); }
__attribute__((noinline)) static void tile_3(const Tile *t) { tile_kernel(3, t); }
__attribute__((noinline)) static void tile_2(const Tile *t) { tile_kernel(2, t); }
__attribute__((noinline)) static void tile_1(const Tile *t) { tile_kernel(1, t); }
static void (*const SHORT_TILES[6])(const Tile *) = {NULL, tile_1, tile_2, tile_3, tile_4, tile_5};

// add: the sums start from y's values (never a first block), for gemm_wasm_matmul_add.
static void loops(Mat y, Mat x, const GemmWeights *w, int c0, float scale, const float *bias, Mat relu,
                  bool add) {
  int M = y.rows, N = y.cols, K = x.cols;
  for (int k0 = 0; k0 < K; k0 += KC) {
    int kc = imin(KC, K - k0);
    for (int i0 = 0; i0 < M; i0 += MC) {
      int mc = imin(MC, M - i0);
      for (int j = 0; j < N; j += TC) { // TC columns of y: all or part of a panel
        Tile t = {.xs = (size_t)x.stride,
                  .kc = kc,
                  .nc = imin(TC, N - j),
                  .first = k0 == 0 && !add,
                  .last = k0 + kc == K,
                  .ys = (size_t)y.stride,
                  .scale = scale,
                  .bias = bias ? bias + j : NULL,
                  .rs = (size_t)relu.stride};
        t.w = panel_at(w, c0 + j / NR * NR, k0, kc) + j % NR;
        for (int i = i0, mr; i < i0 + mc; i += mr) {
          mr = imin(MR, i0 + mc - i);
          t.x = &MAT_AT(x, i, k0);
          t.y = &MAT_AT(y, i, j);
          t.relu = relu.data ? &MAT_AT(relu, i, j) : NULL;
          if (mr == MR)
            tile_kernel(MR, &t);
          else
            SHORT_TILES[mr](&t);
        }
      }
    }
  }
}

void gemm_wasm_matmul(Mat y, Mat x, const GemmWeights *w, int c0, float scale, const float *bias, Mat relu) {
  loops(y, x, w, c0, scale, bias, relu, false);
}

void gemm_wasm_matmul_add(Mat y, Mat x, const GemmWeights *w, int c0) {
  loops(y, x, w, c0, 1.0f, NULL, (Mat){0}, true);
}

#endif
