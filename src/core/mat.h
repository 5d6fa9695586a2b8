// mat.h -- a row-major float matrix view and the few operations the forward pass needs.
//
// A Mat does not own its data: it is a window {data, rows, cols, stride} onto memory owned by
// someone else (the model's weight block, the trace's activation block), passed by value.
// Element (i, j) lives at data[i*stride + j]; stride >= cols is the leading dimension, so a
// sub-view (one head's columns of Q) is a Mat with the parent's stride and no copy, and goes
// straight to cblas_sgemm.
//
// Weights are stored as PyTorch's nn.Linear stores them, W[out, in], and a linear layer is
// Y = X·Wᵀ + b: mat_matmul_t. Products small enough that BLAS's call overhead dominates run a
// plain loop instead (mat_matmul_t_naive, which the tests also use as the reference kernel).
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

// y[M,N] = x[M,K] · w[N,K]ᵀ (+ bias[N] on every row when bias is not NULL).
void mat_matmul_t(Mat y, Mat x, Mat w, const float *bias);
// y[M,N] = a[M,K] · b[K,N].
void mat_matmul(Mat y, Mat a, Mat b);
// The same two products as plain loops: the algorithmic reference, and faster for tiny shapes.
void mat_matmul_t_naive(Mat y, Mat x, Mat w, const float *bias);
void mat_matmul_naive(Mat y, Mat a, Mat b);

// Products with at most this many multiply-adds (M*N*K) skip BLAS; tests set it to force a path.
extern long mat_naive_max_madds;

void mat_copy(Mat dst, Mat src);
void mat_add(Mat y, Mat a, Mat b);          // y = a + b (y may alias a or b)
void mat_scale(Mat m, float s);             // m *= s
void mat_softmax_rows(Mat y, Mat x);        // y[i,:] = softmax(x[i,:]); -inf entries give exactly 0
void mat_layernorm_rows(Mat y, Mat x, const float *weight, const float *bias, float eps);
void mat_relu(Mat y, Mat x);
void mat_gelu(Mat y, Mat x);                // exact GELU: 0.5·x·(1 + erf(x/√2)), PyTorch's default
void mat_minmax(Mat m, float *lo, float *hi); // over finite entries; 0,0 when there are none

#endif
