// modern_rows.c -- see modern_rows.h. These replaced scalar loops in forward.c (until
// 2026-11-28): SiLU with glibc's expf per element, and RMSNorm and RoPE one float at a time took
// about a tenth of SmolLM2-135M's traced forward at 256 tokens (BENCHMARKS.md, "Today's LLMs").
#include "modern_rows.h"

#include <math.h>

#include "err.h"  // defines: EXPECT
#include "simd.h" // defines: F8, I8, f8_load, f8_store, f8_set, f8_select, f8_exp_neg, SF_KERNEL

typedef double D4 __attribute__((vector_size(32)));
typedef float F4 __attribute__((vector_size(16)));

SF_INLINE D4 d4_load(const float *p) {
  F4 v;
  memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, D4);
}

SF_KERNEL void rmsnorm_rows(Mat y, Mat x, const float *g, float eps, bool offset, float *rms) {
  EXPECT(y.rows == x.rows && y.cols == x.cols);
  int n = x.cols;
  for (int i = 0; i < x.rows; i++) {
    const float *xi = &MAT_AT(x, i, 0);
    float *yi = &MAT_AT(y, i, 0);
    D4 s4 = {0, 0, 0, 0}, t4 = {0, 0, 0, 0}; // two chains of four lanes
    int j = 0;
    for (; j + 8 <= n; j += 8) {
      D4 a = d4_load(xi + j), b = d4_load(xi + j + 4);
      s4 += a * a;
      t4 += b * b;
    }
    s4 += t4;
    double ss = (s4[0] + s4[2]) + (s4[1] + s4[3]);
    for (; j < n; j++) ss += (double)xi[j] * xi[j];
    double ms = (n > 0 ? ss / n : 0.0) + (double)eps;
    if (rms) rms[i] = (float)sqrt(ms);
    float r = (float)(1.0 / sqrt(ms));
    j = 0;
    for (; j + 8 <= n; j += 8) {
      F8 gj = f8_load(g + j);
      if (offset) gj = 1.0f + gj;
      f8_store(yi + j, (f8_load(xi + j) * r) * gj);
    }
    for (; j < n; j++) yi[j] = (xi[j] * r) * (offset ? 1.0f + g[j] : g[j]);
  }
}

// SiLU(g)·u of 8 floats: e = e^(-|g|) (0 past |g| > 87.3, for inf and for NaN), σ(g) = (g >= 0 ?
// 1 : e) / (1 + e), SiLU(g) = g·σ(g).
SF_INLINE F8 silu_mul8(const F8 *gp, const F8 *up) {
  F8 g = *gp;
  F8 neg_abs = (F8)((I8)g | (I8)f8_set(-0.0f)); // -|g|: the sign bit set
  F8 e = f8_exp_neg(&neg_abs);
  F8 num = f8_select(g >= 0.0f, f8_set(1.0f), e);
  return (g * (num / (1.0f + e))) * *up;
}

SF_KERNEL void silu_mul_rows(Mat h, Mat gate, Mat up) {
  EXPECT(h.rows == gate.rows && h.cols == gate.cols && up.rows == gate.rows && up.cols == gate.cols);
  for (int i = 0; i < gate.rows; i++) {
    const float *gi = &MAT_AT(gate, i, 0), *ui = &MAT_AT(up, i, 0);
    float *hi = &MAT_AT(h, i, 0);
    int j = 0;
    for (; j + 8 <= gate.cols; j += 8) {
      F8 g = f8_load(gi + j), u = f8_load(ui + j);
      f8_store(hi + j, silu_mul8(&g, &u));
    }
    if (j < gate.cols) { // the last few: through a vector too, so that every element gets the same bits
      float gb[8] = {0}, ub[8] = {0}, out[8];
      size_t k = sizeof(float) * (size_t)(gate.cols - j);
      memcpy(gb, gi + j, k);
      memcpy(ub, ui + j, k);
      F8 g = f8_load(gb), u = f8_load(ub);
      f8_store(out, silu_mul8(&g, &u));
      memcpy(hi + j, out, k);
    }
  }
}

SF_KERNEL void rope_rows(Mat y, Mat x, const float *cs, RopeRowsStyle style) {
  EXPECT(y.rows == x.rows && y.cols == x.cols && x.cols % 2 == 0);
  int n = x.cols / 2;
  for (int i = 0; i < x.rows; i++) {
    const float *xi = &MAT_AT(x, i, 0), *c = cs + (size_t)i * 2 * n, *s = c + n;
    float *yi = &MAT_AT(y, i, 0);
    int k = 0;
    if (style == ROPE_ROWS_HALVES)
      for (; k + 8 <= n; k += 8) {
        F8 a = f8_load(xi + k), b = f8_load(xi + n + k), ck = f8_load(c + k), sk = f8_load(s + k);
        f8_store(yi + k, a * ck - b * sk);
        f8_store(yi + n + k, b * ck + a * sk);
      }
    for (; k < n; k++) {
      int j0 = style == ROPE_ROWS_PAIRS ? 2 * k : k, j1 = style == ROPE_ROWS_PAIRS ? 2 * k + 1 : k + n;
      float a = xi[j0], b = xi[j1];
      yi[j0] = a * c[k] - b * s[k];
      yi[j1] = b * c[k] + a * s[k];
    }
  }
}
