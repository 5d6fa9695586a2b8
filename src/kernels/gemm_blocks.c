// gemm_blocks.c -- see gemm_blocks.h.
//
// Each block's rows of w are first copied, whole rows in order, into a staging buffer, and packed
// from there: the packer reads 16 rows side by side, 8 floats of each at a time, which from main
// memory ran at half the speed of a plain copy; from the staging buffer (in the L2 cache) it is
// quick. Measured on GPT-2's wte (CPU time, one thread, Zen 5): packing straight from w 13 ms,
// copying 8 ms + packing the copies 3 ms; the head of 32 tokens 23 ms before, 20 ms after.
#include "gemm_blocks.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"  // defines: EXPECT
#include "gemm.h" // defines: GemmWeights, gemm_pack_into, gemm_matmul_t, gemm_packed_floats

bool gemm_blocks_matmul_t(Mat y, Mat x, Mat w, const float *bias) {
  EXPECT(y.rows == x.rows && y.cols == w.rows && x.cols == w.cols);
  if (!gemm_supported()) return false;
  int N = w.rows, K = x.cols;
  if (y.rows == 0 || N == 0) return true;
  int rows = N < GEMM_BLOCK_ROWS ? N : GEMM_BLOCK_ROWS;
  // one allocation: the packed block (64-byte aligned, its size a multiple of 16 floats), then
  // the staging copy of the block's rows [rows, K]
  size_t packed = gemm_packed_floats(rows, K), bytes = sizeof(float) * (packed + (size_t)rows * K);
  float *buf = aligned_alloc(64, bytes / 64 * 64 + 64); // a multiple of 64 bytes, never 0
  if (!buf) return false;
  float *stage = buf + packed;
  for (int j0 = 0; j0 < N; j0 += rows) {
    int n = N - j0 < rows ? N - j0 : rows;
    for (int r = 0; r < n; r++)
      memcpy(stage + (size_t)r * K, &MAT_AT(w, j0 + r, 0), sizeof(float) * (size_t)K);
    GemmWeights p;
    gemm_pack_into(&p, buf, mat_view(stage, n, K)); // rows j0.. of w, [n, K]
    gemm_matmul_t(mat_sub(y, 0, j0, y.rows, n), x, &p, 0, bias ? bias + j0 : NULL, (Mat){0});
  }
  free(buf);
  return true;
}
