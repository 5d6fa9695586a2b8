// mat.c -- see mat.h. Shapes are checked with EXPECT at the top of every operation.
#include "mat.h"

#include <cblas.h>
#include <math.h>

#include "err.h"

long mat_naive_max_madds = 48 * 1024;

Mat mat_view(float *data, int rows, int cols) { return (Mat){data, rows, cols, cols}; }

Mat mat_sub(Mat m, int r0, int c0, int rows, int cols) {
  EXPECT(r0 >= 0 && c0 >= 0 && rows >= 0 && cols >= 0);
  EXPECT(r0 + rows <= m.rows && c0 + cols <= m.cols);
  return (Mat){m.data + (size_t)r0 * m.stride + c0, rows, cols, m.stride};
}

void mat_matmul_t_naive(Mat y, Mat x, Mat w, const float *bias) {
  EXPECT(y.rows == x.rows && y.cols == w.rows && x.cols == w.cols);
  for (int i = 0; i < y.rows; i++) {
    const float *xi = &MAT_AT(x, i, 0);
    for (int j = 0; j < y.cols; j++) {
      const float *wj = &MAT_AT(w, j, 0);
      float acc = 0.0f;
      for (int k = 0; k < x.cols; k++) acc += xi[k] * wj[k];
      MAT_AT(y, i, j) = bias ? acc + bias[j] : acc;
    }
  }
}

void mat_matmul_naive(Mat y, Mat a, Mat b) {
  EXPECT(y.rows == a.rows && y.cols == b.cols && a.cols == b.rows);
  for (int i = 0; i < y.rows; i++) {
    float *yi = &MAT_AT(y, i, 0);
    for (int j = 0; j < y.cols; j++) yi[j] = 0.0f;
    for (int k = 0; k < a.cols; k++) {
      float aik = MAT_AT(a, i, k);
      const float *bk = &MAT_AT(b, k, 0);
      for (int j = 0; j < y.cols; j++) yi[j] += aik * bk[j];
    }
  }
}

static int small(long m, long n, long k) { return m * n * k <= mat_naive_max_madds; }

void mat_matmul_t(Mat y, Mat x, Mat w, const float *bias) {
  EXPECT(y.rows == x.rows && y.cols == w.rows && x.cols == w.cols);
  if (small(y.rows, y.cols, x.cols)) {
    mat_matmul_t_naive(y, x, w, bias);
    return;
  }
  float beta = 0.0f;
  if (bias) { // start from the bias in every row, then accumulate the product onto it
    for (int i = 0; i < y.rows; i++)
      for (int j = 0; j < y.cols; j++) MAT_AT(y, i, j) = bias[j];
    beta = 1.0f;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, y.rows, y.cols, x.cols, 1.0f, x.data,
              x.stride, w.data, w.stride, beta, y.data, y.stride);
}

void mat_matmul(Mat y, Mat a, Mat b) {
  EXPECT(y.rows == a.rows && y.cols == b.cols && a.cols == b.rows);
  if (small(y.rows, y.cols, a.cols)) {
    mat_matmul_naive(y, a, b);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, y.rows, y.cols, a.cols, 1.0f, a.data,
              a.stride, b.data, b.stride, 0.0f, y.data, y.stride);
}

void mat_copy(Mat dst, Mat src) {
  EXPECT(dst.rows == src.rows && dst.cols == src.cols);
  for (int i = 0; i < src.rows; i++)
    for (int j = 0; j < src.cols; j++) MAT_AT(dst, i, j) = MAT_AT(src, i, j);
}

void mat_add(Mat y, Mat a, Mat b) {
  EXPECT(y.rows == a.rows && y.cols == a.cols && a.rows == b.rows && a.cols == b.cols);
  for (int i = 0; i < y.rows; i++)
    for (int j = 0; j < y.cols; j++) MAT_AT(y, i, j) = MAT_AT(a, i, j) + MAT_AT(b, i, j);
}

void mat_scale(Mat m, float s) {
  for (int i = 0; i < m.rows; i++)
    for (int j = 0; j < m.cols; j++) MAT_AT(m, i, j) *= s;
}

void mat_softmax_rows(Mat y, Mat x) {
  EXPECT(y.rows == x.rows && y.cols == x.cols);
  for (int i = 0; i < x.rows; i++) {
    float mx = -INFINITY;
    for (int j = 0; j < x.cols; j++) mx = fmaxf(mx, MAT_AT(x, i, j));
    if (mx == -INFINITY) { // a fully masked row: PyTorch gives NaN; we never build one
      for (int j = 0; j < x.cols; j++) MAT_AT(y, i, j) = NAN;
      continue;
    }
    float sum = 0.0f;
    for (int j = 0; j < x.cols; j++) {
      float e = expf(MAT_AT(x, i, j) - mx); // exp(-inf) is exactly 0: masked weights stay 0
      MAT_AT(y, i, j) = e;
      sum += e;
    }
    float inv = 1.0f / sum;
    for (int j = 0; j < x.cols; j++) MAT_AT(y, i, j) *= inv;
  }
}

void mat_layernorm_rows(Mat y, Mat x, const float *weight, const float *bias, float eps) {
  EXPECT(y.rows == x.rows && y.cols == x.cols);
  int n = x.cols;
  for (int i = 0; i < x.rows; i++) {
    // Mean and biased variance in double: the float result then agrees with PyTorch to ~1 ulp.
    double mean = 0.0, var = 0.0;
    for (int j = 0; j < n; j++) mean += MAT_AT(x, i, j);
    mean /= n;
    for (int j = 0; j < n; j++) {
      double d = MAT_AT(x, i, j) - mean;
      var += d * d;
    }
    var /= n;
    double rstd = 1.0 / sqrt(var + eps);
    for (int j = 0; j < n; j++) {
      float xhat = (float)((MAT_AT(x, i, j) - mean) * rstd);
      MAT_AT(y, i, j) = xhat * weight[j] + bias[j];
    }
  }
}

void mat_relu(Mat y, Mat x) {
  EXPECT(y.rows == x.rows && y.cols == x.cols);
  for (int i = 0; i < x.rows; i++)
    for (int j = 0; j < x.cols; j++) MAT_AT(y, i, j) = fmaxf(MAT_AT(x, i, j), 0.0f);
}

void mat_gelu(Mat y, Mat x) {
  EXPECT(y.rows == x.rows && y.cols == x.cols);
  const float inv_sqrt2 = 0.70710678118654752f;
  for (int i = 0; i < x.rows; i++)
    for (int j = 0; j < x.cols; j++) {
      float v = MAT_AT(x, i, j);
      MAT_AT(y, i, j) = 0.5f * v * (1.0f + erff(v * inv_sqrt2));
    }
}

void mat_minmax(Mat m, float *lo, float *hi) {
  float a = INFINITY, b = -INFINITY;
  for (int i = 0; i < m.rows; i++)
    for (int j = 0; j < m.cols; j++) {
      float v = MAT_AT(m, i, j);
      if (isfinite(v)) {
        a = fminf(a, v);
        b = fmaxf(b, v);
      }
    }
  if (a > b) a = b = 0.0f;
  *lo = a;
  *hi = b;
}
