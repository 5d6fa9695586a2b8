// gemm_avx512.h -- the AVX-512F micro-kernel of gemm.h and its loops, private to gemm.c.
//
// It reads the same packed panels as the AVX2 kernel (gemm.h: blocks of GEMM_KC columns, panels
// of GEMM_NR = 16 rows of w, [kc][16] each) and does, for every y[i,j], the same fused
// multiply-adds in the same order, then the same scale and bias: its results have the bits of
// the AVX2 kernel's. What differs is the tile: GEMM512_MR rows × GEMM512_NV panels (16·NV
// columns of y), held in the 32 zmm registers of AVX-512, each panel read as one 16-float vector.
// gemm.c calls it only when the CPU has AVX-512F (and the build could compile it:
// GEMM_HAVE_AVX512).
#ifndef SF_GEMM_AVX512_H
#define SF_GEMM_AVX512_H

#include "gemm.h" // defines: GemmWeights, GEMM_NR, GEMM_KC
#include "mat.h"  // defines: Mat

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GEMM_HAVE_AVX512 1
#else
#define GEMM_HAVE_AVX512 0
#endif

enum {
  GEMM512_MR = 8, // rows of y per tile
  GEMM512_NV = 3, // panels of 16 columns per tile: 8 × 3 = 24 accumulators, + 3 panel rows + 1
};

// As gemm.c's matmul: y[M,n] = scale · x[M,K]·w[c0.., :]ᵀ + bias, relu(y) when relu.data. The
// arguments are checked by the caller.
void gemm_avx512_matmul(Mat y, Mat x, const GemmWeights *w, int c0, float scale, const float *bias, Mat relu);
// y[M,n] += x[M,K]·w[c0.., :]ᵀ: the same loops with the sums started from y (gemm_matmul_t_add).
void gemm_avx512_matmul_add(Mat y, Mat x, const GemmWeights *w, int c0);

#endif
