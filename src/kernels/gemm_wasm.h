// gemm_wasm.h -- the wasm SIMD128 micro-kernel of gemm.h and its loops, private to gemm.c.
//
// The web build (emscripten, -msimd128) has neither BLAS nor AVX: this kernel reads the same
// packed panels as the AVX2 one (gemm.h: blocks of GEMM_KC columns, panels of GEMM_NR = 16 rows
// of w, [kc][16] each), half a panel at a time. A tile is 4 rows × 8 columns of y in 8 v128
// accumulators (4 floats each), with 2 more for the half panel row, 1 for a broadcast x and 1 for
// a product: wider tiles spill out of the 16 xmm registers V8 gives wasm on x86 (measured in
// gemm_wasm.c). Wasm SIMD128 has no fused multiply-add (relaxed SIMD's is not in emscripten
// 3.1.6's headers, and clang 14's prototype of it emits an opcode Node 20 refuses: BENCHMARKS.md):
// each product is a multiply then an add, two roundings, so the bits differ from the AVX
// kernels', within the golden tests' tolerance. Compiled only where __wasm_simd128__ is defined
// (GEMM_HAVE_WASM); gemm.c calls it when gemm_kernel() is GEMM_WASM_SIMD128.
#ifndef SF_GEMM_WASM_H
#define SF_GEMM_WASM_H

#include "gemm.h" // defines: GemmWeights, GEMM_NR, GEMM_KC
#include "mat.h"  // defines: Mat

#if defined(__wasm_simd128__)
#define GEMM_HAVE_WASM 1
#else
#define GEMM_HAVE_WASM 0
#endif

// Packs the N×K matrix whose element (j, k) is src[j·js + k·ks] into buf (gemm_packed_floats(n,
// k) floats) in gemm.h's layout, and points p at it.
void gemm_wasm_pack(GemmWeights *p, float *buf, const float *src, int n, int k, size_t js, size_t ks);

// As gemm.c's matmul: y[M,n] = scale · x[M,K]·w[c0.., :]ᵀ + bias, relu(y) when relu.data. The
// arguments are checked by the caller (K > 0, M > 0, n > 0).
void gemm_wasm_matmul(Mat y, Mat x, const GemmWeights *w, int c0, float scale, const float *bias, Mat relu);
// y[M,n] += x[M,K]·w[c0.., :]ᵀ: the same loops with the sums started from y (gemm_matmul_t_add).
void gemm_wasm_matmul_add(Mat y, Mat x, const GemmWeights *w, int c0);

#endif
