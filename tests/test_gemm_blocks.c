// test_gemm_blocks.c -- y = x·wᵀ + b with w packed block by block (gemm_blocks.h).
//
// For each packed kernel this CPU runs (gemm_use): shapes with more than one block of
// GEMM_BLOCK_ROWS rows and a ragged last block (N = 1, 15, 191, 192, 193, 500), K across and
// not a multiple of the 256-column blocks, with and without bias, x, w and y strided sub-views:
// y has the bits of gemm_matmul_t on the whole of w packed at once, nothing outside y is
// written, and two calls on column ranges (cut at a multiple of 16, as the forward's threads cut
// them) give the same bits. Under GEMM_BLAS and GEMM_PORTABLE it declines (false) and leaves y
// alone.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gemm.h"        // defines: GemmWeights, gemm_pack, gemm_matmul_t, gemm_use, gemm_kernel
#include "gemm_blocks.h" // defines: gemm_blocks_matmul_t, GEMM_BLOCK_ROWS
#include "mat.h"         // defines: Mat, mat_view, mat_sub
#include "rng.h"         // defines: rng_seed, rng_uniform

#define SENTINEL 12345.0f

// A rows × cols view starting at (1, 3) inside a parent two rows and seven columns larger, all
// of it set to the sentinel.
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

static bool same_bits(Mat a, Mat b) {
  for (int i = 0; i < a.rows; i++)
    if (memcmp(&MAT_AT(a, i, 0), &MAT_AT(b, i, 0), sizeof(float) * (size_t)a.cols)) return false;
  return true;
}

// Entries of the parent of y (rows + 2 by cols + 7, y at (1, 3)) outside y that are not the sentinel.
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

static void check_shape(int M, int N, int K, bool with_bias, uint64_t *rng) {
  char what[80];
  snprintf(what, sizeof what, "%s %dx%dx%d%s", gemm_kernel_name(gemm_kernel()), M, N, K,
           with_bias ? " bias" : "");
  float *xb, *wb, *yb, *rb, *sb;
  Mat x = padded(&xb, M, K), w = padded(&wb, N, K), y = padded(&yb, M, N), ref = padded(&rb, M, N),
      split = padded(&sb, M, N);
  fill(x, rng), fill(w, rng);
  float *bias = malloc(sizeof(float) * (size_t)N);
  for (int j = 0; j < N; j++) bias[j] = 2.0f * rng_uniform(rng) - 1.0f;
  const float *b = with_bias ? bias : NULL;

  GemmWeights whole;
  CHECK(gemm_pack(&whole, w), "%s: gemm_pack", what);
  gemm_matmul_t(ref, x, &whole, 0, b, (Mat){0});
  CHECK(gemm_blocks_matmul_t(y, x, w, b), "%s: declined", what);
  CHECK(same_bits(y, ref), "%s: other bits than gemm_matmul_t on w packed whole", what);
  CHECK(outside(yb, y) == 0, "%s: wrote outside y", what);

  int c = N / 2 / 16 * 16; // columns 0..c-1, then c..N-1
  CHECK(gemm_blocks_matmul_t(mat_sub(split, 0, 0, M, c), x, mat_sub(w, 0, 0, c, K), b), "%s: left", what);
  CHECK(gemm_blocks_matmul_t(mat_sub(split, 0, c, M, N - c), x, mat_sub(w, c, 0, N - c, K), b ? b + c : NULL),
        "%s: right", what);
  CHECK(same_bits(split, ref), "%s: cut at column %d, other bits", what, c);
  CHECK(outside(sb, split) == 0, "%s: cut at column %d, wrote outside y", what, c);

  gemm_free(&whole);
  free(xb), free(wb), free(yb), free(rb), free(sb), free(bias);
}

static void check_shapes(void) {
  uint64_t rng = rng_seed(12);
  static const int Ns[] = {1, 15, 191, GEMM_BLOCK_ROWS, 193, 500};
  static const int Ks[] = {1, 37, 300};
  for (size_t n = 0; n < sizeof Ns / sizeof *Ns; n++)
    for (size_t k = 0; k < sizeof Ks / sizeof *Ks; k++)
      check_shape(n % 2 ? 17 : 40, Ns[n], Ks[k], k != 1, &rng);
  check_shape(3, 2 * GEMM_BLOCK_ROWS + 20, 768, true, &rng);
}

// The kernels without packing: false, y as it was.
static void check_declines(void) {
  GemmKernel was = gemm_kernel();
  for (int k = GEMM_PORTABLE; k <= GEMM_BLAS; k++) {
    if (!gemm_use((GemmKernel)k)) continue;
    float x[6] = {1, 2, 3, 4, 5, 6}, w[6] = {1, 0, 1, 0, 1, 0}, y[4] = {7, 7, 7, 7};
    bool ok = gemm_blocks_matmul_t(mat_view(y, 2, 2), mat_view(x, 2, 3), mat_view(w, 2, 3), NULL);
    CHECK(!ok && y[0] == 7 && y[1] == 7 && y[2] == 7 && y[3] == 7, "%s: declines and leaves y",
          gemm_kernel_name((GemmKernel)k));
  }
  gemm_use(was);
}

int main(void) {
  check_declines();
  static const GemmKernel kernels[] = {GEMM_AVX512, GEMM_AVX2, GEMM_WASM_SIMD128};
  GemmKernel was = gemm_kernel();
  int ran = 0;
  for (size_t i = 0; i < sizeof kernels / sizeof *kernels; i++) {
    if (!gemm_use(kernels[i])) {
      printf("test_gemm_blocks: %s kernel skipped: this CPU or build does not run it\n",
             gemm_kernel_name(kernels[i]));
      continue;
    }
    check_shapes();
    ran++;
  }
  gemm_use(was);
  if (ran == 0) printf("test_gemm_blocks: no packed kernel here: gemm_blocks_matmul_t always declines\n");
  return check_exit("test_gemm_blocks");
}
