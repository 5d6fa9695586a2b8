// mat.h -- a row-major float matrix view and the few operations the forward pass needs.
//
// mat and gemm (gemm.h, with gemm_avx512 and gemm_wasm) are one module, the products: gemm's
// kernels work on Mat views, and mat's products ask gemm_kernel() which path was chosen (the one
// circle of src/kernels).
//
// A Mat does not own its data: it is a window {data, rows, cols, stride} onto memory owned by
// someone else (the model's weight block, the trace's activation block), passed by value.
// Element (i, j) lives at data[i*stride + j]; stride >= cols is the leading dimension, so a
// sub-view (one head's columns of Q) is a Mat with the parent's stride and no copy, and goes
// straight to cblas_sgemm.
//
// Weights are stored as PyTorch's nn.Linear stores them, W[out, in], and a linear layer is
// Y = X·Wᵀ + b: mat_matmul_t. Large products go to BLAS (cblas_sgemm). Small ones, and those
// with few rows (a short sentence times a weight matrix), run hand-vectorized loop kernels
// instead: BLAS's call overhead dominates the first, and for the second BLAS copies (packs)
// every weight before using it once. The loop kernels add each output's products in the order
// of the plain reference loops (mat_matmul_t_naive, mat_matmul_naive), so the two agree bit for
// bit; BLAS sums in another order and agrees to rounding. (On CPUs with AVX2 and FMA the forward
// pass multiplies with gemm.h instead, from operands packed once; these are its fallback.)
//
//     Mat x = mat_view(buf, L, D), w = mat_view(wq, D, D), y = mat_view(q, L, D);
//     mat_matmul_t(y, x, w, bias);     // y[L,D] = x[L,D] · w[D,D]ᵀ + bias[D]
#ifndef SF_MAT_H
#define SF_MAT_H

#include <stddef.h>

typedef struct {
  float *data;
  int rows, cols, stride; // stride: floats between the starts of two rows (>= cols)
} Mat;

#define MAT_AT(m, i, j) ((m).data[(size_t)(i) * (size_t)(m).stride + (size_t)(j)])

Mat mat_view(float *data, int rows, int cols);
// Rows r0..r0+rows-1 and columns c0..c0+cols-1 of m, sharing its memory.
Mat mat_sub(Mat m, int r0, int c0, int rows, int cols);
// dst[cols, rows] = src[rows, cols]ᵀ (both contiguous, not overlapping), in 32 × 32 tiles: the rows
// read and the rows written stay in the L1 cache.
void mat_transpose(float *dst, const float *src, long rows, long cols);

// y[M,N] = x[M,K] · w[N,K]ᵀ (+ bias[N] on every row when bias is not NULL).
void mat_matmul_t(Mat y, Mat x, Mat w, const float *bias);
// y[M,N] = s · x[M,K] · w[N,K]ᵀ: the product, then each entry times s (BLAS's alpha).
void mat_matmul_t_scaled(Mat y, Mat x, Mat w, float s);
// y[M,N] = a[M,K] · b[K,N].
void mat_matmul(Mat y, Mat a, Mat b);
// The same two products as plain loops: the algorithmic reference the tests compare with.
void mat_matmul_t_naive(Mat y, Mat x, Mat w, const float *bias);
void mat_matmul_naive(Mat y, Mat a, Mat b);

// Which kernel a product uses. Products with at most mat_naive_max_madds multiply-adds (M*N*K),
// or with at most mat_loop_max_rows rows (M), skip BLAS and run the loop kernels, which equal
// the _naive ones bit for bit. Tests force a path: mat_naive_max_madds = 0 sends every product
// to BLAS (whatever its rows), LONG_MAX every product to the loops. Without BLAS (a build with
// -DSF_BLAS=OFF, or SF_GEMM=portable: gemm.h) every product runs the loops.
extern long mat_naive_max_madds;
extern int mat_loop_max_rows;

// Threads BLAS itself may use for one product (openblas_set_num_threads).
void mat_set_blas_threads(int n);

void mat_copy(Mat dst, Mat src);
void mat_add(Mat y, Mat a, Mat b);   // y = a + b (y may alias a or b)
void mat_scale(Mat m, float s);      // m *= s
void mat_softmax_rows(Mat y, Mat x); // y[i,:] = softmax(x[i,:]); -inf entries give exactly 0
void mat_layernorm_rows(Mat y, Mat x, const float *weight, const float *bias, float eps);
void mat_relu(Mat y, Mat x);                  // max(0, x): NaN and -0 pass through, as in torch.relu
void mat_gelu(Mat y, Mat x);                  // exact GELU: 0.5·x·(1 + erf(x/√2)), PyTorch's default
void mat_minmax(Mat m, float *lo, float *hi); // over finite entries; 0,0 when there are none

#endif
