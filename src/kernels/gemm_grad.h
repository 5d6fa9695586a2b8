// gemm_grad.h -- the backward's products on gemm.h's packed kernel: y += a·b, y += a·wᵀ, y += aᵀ·b.
//
// The backward of a linear layer Y = X·Wᵀ takes dX = dY·W and dW = dYᵀ·X, and attention's
// backward the same forms on one head's tensors (dA = dAV·Vᵀ, dV = Aᵀ·dAV, dQ = dS·K, dK = dSᵀ·Q).
// None of them has an operand packed ahead: the layers' weights are packed once for the forward's
// x·Wᵀ, and dY·W reads W the other way. So, as OpenBLAS does inside every call, the operand that
// the kernel reads as panels is packed here block by block into a buffer of the call's own
// (GRAD_NB columns of y × GRAD_KB of the sum, 384 KB, in the L2 cache while the kernel reads it),
// and gemm_matmul_t_add adds each block's products into y (gradients collect several products:
// every product here adds, as BLAS with beta = 1). For aᵀ·b the columns of a are first copied as
// rows (a transposed block of GRAD_MB rows of y), and b, which is small there (tokens × width),
// is packed once.
//
// y += a·wᵀ with w taller than a (N > M: a Conv1D weight [in, out] or the tied embeddings [V, D]
// times a few tokens' gradients) is turned around, yᵀ = w·aᵀ: the large w is read in place as the
// kernel's x and only a is packed; each block of yᵀ is added, transposed, to y.
//
// Bits: each y[i,j] adds its K products in order, with fused multiply-adds, to its value (or, turned
// around, to 0, and the sum to its value), whatever the blocks and whichever thread runs a block
// (K is never cut between threads, the form depends on the shapes only): one thread and two give
// the same bits. Not the bits of cblas_sgemm (within float rounding of it: test_gemm_grad).
//
// threads: true splits the blocks over par.h's team (par_threads() of them; the caller must not be
// a task of another par_run); false runs them all on the calling thread (inside a per-head task).
// Every function returns false, with y untouched, when no packed kernel runs here
// (!gemm_supported(): the caller keeps BLAS or loops) or a buffer cannot be allocated.
//
//     if (!gemm_grad_nn(dx, dy, w, true))   // dX[n, in] += dY[n, out] · W[out, in]
//       cblas_sgemm(..., 1.0f, dx.data, dx.stride);
#ifndef SF_GEMM_GRAD_H
#define SF_GEMM_GRAD_H

#include <stdbool.h>

#include "mat.h" // defines: Mat

enum {
  GRAD_NB = 192, // columns of y per packed block: 4 tiles of the AVX-512 kernel, 12 of AVX2's
  GRAD_KB = 512, // terms of the sum per packed block: two of gemm.h's GEMM_KC
  GRAD_MB = 128, // rows of y per block of aᵀ·b (a's columns copied as rows: 256 KB at K = 512)
};

// y[M,N] += a[M,K] · b[K,N] (any strides; y must not overlap a or b).
bool gemm_grad_nn(Mat y, Mat a, Mat b, bool threads);
// y[M,N] += a[M,K] · w[N,K]ᵀ.
bool gemm_grad_nt(Mat y, Mat a, Mat w, bool threads);
// y[M,N] += a[K,M]ᵀ · b[K,N].
bool gemm_grad_tn(Mat y, Mat a, Mat b, bool threads);
// y[M,N] = a[K,M]ᵀ · b[K,N]: written, not added (a weight's gradient that no other product adds
// to: the backward then need not clear it first). K = 0 writes zeros.
bool gemm_grad_tn_to(Mat y, Mat a, Mat b, bool threads);

#endif
