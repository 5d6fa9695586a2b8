// gemm.h -- y = x·wᵀ (+ b) for the forward's products, from an operand packed once.
//
// A linear layer multiplies its input by the same weight matrix w[N,K] (nn.Linear's [out, in])
// at every forward pass. The weights are packed (copied into the order the kernel reads) once,
// when the model is made (model.c), and gemm_matmul_t multiplies straight from the packed copy.
// Attention's K_h and V_h change at every forward: they are packed once per head into memory the
// trace owns (gemm_pack_into, gemm_pack_t_into) and serve every block of query rows. Why, and
// what it gained: BENCHMARKS.md, "What makes the traced forward fast".
//
//   - packed w: for each block of GEMM_KC columns (k), panels of GEMM_NR = 16 rows of w, each
//     stored k-major ([kc][16], rows past N zero), the panels of a block one after the other, so
//     that the kernel reads the weights as one sequential stream;
//   - x is read in place, row by row (no copy): a tile's rows are broadcast one value at a time;
//   - two micro-kernels read the same packed copy, chosen at run time (gemm_kernel()): AVX-512F
//     (gemm_avx512.c) keeps an 8×48 tile of y in 24 zmm registers, three panels side by side, and
//     adds 8×48 products per k with 24 FMAs; AVX2 + FMA keeps a 6×16 tile in 12 ymm registers
//     with 12 FMAs per k. While they work they prefetch the next panels and the next tile of y;
//     the web build (wasm, no AVX) has a third on the same panels, gemm_wasm.c: a 4×8 tile in 8
//     v128 registers, multiply then add (wasm SIMD128 has no FMA), chosen at build time;
//   - the epilogue scales (attention's 1/√d_k), adds the bias and, when asked, also writes
//     relu(y) (FFN1's two stages in one pass).
// Each y[i,j] sums its K products in order within a block of GEMM_KC, blocks in order, with
// fused multiply-adds (one rounding each), then scales and adds the bias: not the bits of
// mat_matmul_t_naive, but within float rounding of it (tests/test_gemm.c), and the same bits
// whatever the cut of a product into calls by columns or rows, so one thread and two give the
// same bits on a machine.
//
// Which kernel, and the bits across machines (the decision of issue 15): the widest the CPU runs
// -- AVX-512F where it has it, else AVX2 + FMA, else none: nothing is packed and the forward keeps
// cblas_sgemm (forward.c), or, in a build without BLAS (cmake -DSF_BLAS=OFF: the web build),
// mat.c's loop kernels for every product ("portable": 8-float vectors, which clang compiles to
// wasm SIMD128 under -msimd128, to SSE/AVX on x86, NEON on ARM). Each is compiled with a target attribute (no
// global -mavx512f), so the same binary runs on AVX2-only and non-x86 machines, falling back as it always
// did. SF_GEMM=avx512|avx2|blas|portable in the environment (or gemm_use) picks another for comparisons and
// tests. Results may differ in the last bits between machines with and without AVX-512 (or FMA):
// the earlier promise of the same result on every machine is withdrawn for speed. What stays
// promised: one and two threads give the same bits on the same machine and kernel, and every
// path is within the golden tests' tolerance of PyTorch. (Today the two kernels happen to do
// the same operations in the same order and so give the same bits; nothing relies on it.) The
// softmax follows the same decision: under GEMM_AVX2 and GEMM_AVX512 its exp is in FMA form
// (mat.c, f8_exp_neg_fma in simd.h), elsewhere in the portable form.
//
//     GemmWeights pw;
//     if (gemm_pack(&pw, mat_view(w, N, K)))                // false unless AVX2/AVX-512
//       gemm_matmul_t(y, x, &pw, 0, bias, (Mat){0});       // y[M,N] = x[M,K]·w[N,K]ᵀ + bias
//     gemm_free(&pw);
#ifndef SF_GEMM_H
#define SF_GEMM_H

#include <stdbool.h>
#include <stddef.h>

#include "mat.h" // defines: Mat

enum {
  GEMM_NR = 16,  // rows of w per packed panel (columns of y per tile); column offsets align to it
  GEMM_KC = 256, // columns of x and w per block: a panel block (16 KB) stays in the L1 cache
};

typedef struct {
  float *panels; // the packed copy (64-byte aligned), NULL when not packed
  int n, k;      // w's shape [N, K]
} GemmWeights;

// SF_HAVE_BLAS: 1 when the core links OpenBLAS (cmake/blas.cmake defines it for every target).
#ifndef SF_HAVE_BLAS
#define SF_HAVE_BLAS 0
#endif

// The kernels, widest last. GEMM_PORTABLE and GEMM_BLAS pack nothing: under GEMM_BLAS the
// forward's large products go to cblas_sgemm, under GEMM_PORTABLE every product runs mat.c's
// loop kernels (the only choice without BLAS and without AVX2: the web build).
// GEMM_WASM_SIMD128 (gemm_wasm.c) is the web build's packed kernel, the only one it runs
// besides GEMM_PORTABLE; native builds never run it.
typedef enum { GEMM_PORTABLE, GEMM_BLAS, GEMM_AVX2, GEMM_AVX512, GEMM_WASM_SIMD128 } GemmKernel;

// The kernel in use: the widest this CPU and build run, unless the environment variable SF_GEMM
// (avx512, avx2, wasm-simd128, blas or portable) names another that it runs (else one line on stderr, and the
// widest). Decided at the first call (model_make calls it, before any thread).
GemmKernel gemm_kernel(void);
// Selects k for what follows (tests, benchmarks); false, and nothing changes, when this CPU or
// build cannot run k. Weights packed before stay valid: the layout is the same for every kernel
// (and under GEMM_BLAS or GEMM_PORTABLE, gemm_matmul_t on them runs the AVX2 kernel).
bool gemm_use(GemmKernel k);
const char *gemm_kernel_name(GemmKernel k);  // "avx512", "avx2", "wasm-simd128", "blas", "portable"
const char *gemm_kernel_about(GemmKernel k); // a few words for info and the status line

// True when a packed kernel is in use (GEMM_AVX2, GEMM_AVX512 or GEMM_WASM_SIMD128).
bool gemm_supported(void);

// Packs w[N,K] (any stride) into p (allocates; false on no memory or !gemm_supported(), p then
// stays empty). gemm_free releases it and leaves p empty; freeing an empty p does nothing.
bool gemm_pack(GemmWeights *p, Mat w);
// The same for y = x·b with b[K,N] (any stride; GPT-2's Conv1D weights as the file stores them):
// the panels of gemm_pack(bᵀ), without making bᵀ.
bool gemm_pack_t(GemmWeights *p, Mat b);
void gemm_free(GemmWeights *p);

// Packing into memory the caller owns, for operands that change at every forward (attention's
// keys and values, packed once per head and used by every block of query rows): no allocation.
// buf holds gemm_packed_floats(N, K) floats and is 32-byte aligned; p points into it (do not
// gemm_free it). gemm_pack_into packs w[N,K] for y = x·wᵀ; gemm_pack_t_into packs b[K,N] for
// y = x·b (it packs bᵀ: the same panels as gemm_pack_into of the transposed matrix).
size_t gemm_packed_floats(int n, int k); // a multiple of 16 (64 bytes)
void gemm_pack_into(GemmWeights *p, float *buf, Mat w);
void gemm_pack_t_into(GemmWeights *p, float *buf, Mat b);

// y[M,n] = x[M,K] · w[c0 .. c0+n-1, :]ᵀ + bias[0 .. n-1] (bias may be NULL), where n = y.cols;
// and relu = max(0, y) (NaN and -0 pass through, as in torch.relu and mat_relu) when relu.data is
// not NULL (same shape as y).
// c0 is a multiple of GEMM_NR, so that the threads of the forward can each take columns.
// Needs gemm_supported(). x, y and relu may be sub-views (any stride); y must not overlap x.
void gemm_matmul_t(Mat y, Mat x, const GemmWeights *w, int c0, const float *bias, Mat relu);
// y[M,N] = s · x[M,K]·w[N,K]ᵀ (all of w's rows): each sum, then times s (BLAS's alpha).
void gemm_matmul_t_scaled(Mat y, Mat x, const GemmWeights *w, float s);
// y[M,n] += x[M,K] · w[c0 .. c0+n-1, :]ᵀ (BLAS's beta = 1: the backward's gradients collect
// several products): each y[i,j] starts from its value and adds its K products in order, with
// fused multiply-adds, as gemm_matmul_t does from 0; so a product cut into calls along K (in
// order) gives the bits of one call. Needs gemm_supported(); c0 as gemm_matmul_t's.
void gemm_matmul_t_add(Mat y, Mat x, const GemmWeights *w, int c0);

#endif
