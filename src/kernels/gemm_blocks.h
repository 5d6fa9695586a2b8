// gemm_blocks.h -- y = x·wᵀ (+ b) on gemm.h's packed kernel for a w that is not packed ahead.
//
// The layers' weights are packed once, when the model is made (gemm.h). A prediction head tied
// to the embeddings is not: GPT-2's wte is [50257, 768], 154 MB, and a packed copy kept beside it
// would cost as much again in memory. Here w is packed a block of GEMM_BLOCK_ROWS rows at a time
// into a small buffer (as OpenBLAS packs its operands), and the packed kernel multiplies that
// block into its columns of y. The buffers (the packed block and a copy of its rows, 2 ×
// GEMM_BLOCK_ROWS·K floats, 1.2 MB at K = 768) are allocated per call and freed before returning;
// x and y are read and written in place.
//
// Each y[i,j] gets the sums of gemm_matmul_t on the whole of w packed (the kernel does not depend
// on the block a column falls in), so the cut into blocks and into threads' columns changes no
// bit.
//
//     if (!gemm_blocks_matmul_t(y, x, w, bias))   // false: no packed kernel here, or no memory
//       mat_matmul_t(y, x, w, bias);
#ifndef SF_GEMM_BLOCKS_H
#define SF_GEMM_BLOCKS_H

#include <stdbool.h>

#include "mat.h" // defines: Mat

enum { GEMM_BLOCK_ROWS = 192 }; // rows of w per packed block: a multiple of 48 (the AVX-512 tile)

// y[M,N] = x[M,K]·w[N,K]ᵀ + bias[0..N-1] (bias may be NULL). False, with y untouched, when no
// packed kernel is in use (!gemm_supported()) or the block buffer cannot be allocated.
bool gemm_blocks_matmul_t(Mat y, Mat x, Mat w, const float *bias);

#endif
