// gelu_tanh.c -- see gelu_tanh.h. It replaced a per-element tanh in double (forward.c until
// 2026-11-27), which took about an eighth of GPT-2 small's traced forward: 256 tokens ×
// 3072 × 12 layers is 9.4 million calls (BENCHMARKS.md, "GPT-2 small").
#include "gelu_tanh.h"

#include "err.h"  // defines: EXPECT
#include "simd.h" // defines: F8, I8, f8_load, f8_store, f8_select, f8_exp_neg, SF_KERNEL, SF_INLINE

// GELU_tanh of 8 floats: u = √(2/π)·(x + 0.044715·x³), t = 2u, e = e^(-|t|) (in (0, 1], or 0 when
// |t| > 87.3, for inf and for NaN), σ(t) = (t >= 0 ? 1 : e) / (1 + e), y = x·σ(t).
SF_INLINE F8 gelu_tanh8(const F8 *xp) {
  F8 x = *xp;
  F8 u = (x + x * x * x * 0.044715f) * 0.7978845608028654f; // as PyTorch rounds it
  F8 t = u + u;
  F8 neg_abs = (F8)((I8)t | (I8)f8_set(-0.0f)); // -|t|: the sign bit set
  F8 e = f8_exp_neg(&neg_abs);
  F8 num = f8_select(t >= 0.0f, f8_set(1.0f), e);
  return x * (num / (1.0f + e));
}

SF_KERNEL void gelu_tanh_rows(Mat y, Mat x) {
  EXPECT(y.rows == x.rows && y.cols == x.cols);
  for (int i = 0; i < x.rows; i++) {
    const float *xi = &MAT_AT(x, i, 0);
    float *yi = &MAT_AT(y, i, 0);
    int j = 0;
    for (; j + 8 <= x.cols; j += 8) {
      F8 v = f8_load(xi + j);
      f8_store(yi + j, gelu_tanh8(&v));
    }
    if (j < x.cols) { // the last few: through a vector too, so that every element gets the same bits
      float in[8] = {0}, out[8];
      memcpy(in, xi + j, sizeof(float) * (size_t)(x.cols - j));
      F8 v = f8_load(in);
      f8_store(out, gelu_tanh8(&v));
      memcpy(yi + j, out, sizeof(float) * (size_t)(x.cols - j));
    }
  }
}
