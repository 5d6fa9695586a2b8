// grad_rows.c -- see grad_rows.h.
#include "grad_rows.h"

#include <math.h>
#include <string.h>

#include "simd.h" // defines: F8, I8, f8_load, f8_store, f8_set, f8_select, f8_exp_neg, SF_KERNEL, SF_INLINE

// e^(−|v|) lane by lane: in (0, 1], 0 past 87.3, for inf and for NaN.
SF_INLINE F8 exp_neg_abs(F8 v) {
  F8 neg_abs = (F8)((I8)v | (I8)f8_set(-0.0f)); // the sign bit set
  return f8_exp_neg(&neg_abs);
}

// Φ(x), the normal distribution's CDF, and e^(−x²/2): erfc(z) = poly(t)·e^(−z²) with z = |x|/√2,
// t = 1/(1 + p·z) (Abramowitz–Stegun 7.1.26), Φ = x ≥ 0 ? 1 − erfc/2 : erfc/2.
SF_INLINE F8 normal_cdf(F8 x, F8 *gauss) {
  F8 z = (F8)((I8)x & 0x7fffffff) * 0.70710678118654752f; // |x|/√2 (the sign bit cleared)
  F8 mz2 = -(z * z);
  F8 e = f8_exp_neg(&mz2);
  F8 t = 1.0f / (1.0f + 0.3275911f * z);
  F8 q = f8_set(1.061405429f);
  q = q * t - 1.453152027f;
  q = q * t + 1.421413741f;
  q = q * t - 0.284496736f;
  q = q * t + 0.254829592f;
  F8 half_erfc = 0.5f * (q * t) * e;
  *gauss = e;
  return f8_select(x >= 0.0f, 1.0f - half_erfc, half_erfc);
}

// act'(x) (and act(x) into *value when value is not NULL) of 8 lanes.
SF_INLINE F8 act8(GradAct act, F8 x, F8 *value) {
  if (act == GRAD_RELU) {
    I8 pos = x > 0.0f;
    if (value) *value = (F8)((I8)x & pos);
    return (F8)(pos & (I8)f8_set(1.0f));
  }
  if (act == GRAD_GELU) {
    F8 g, cdf = normal_cdf(x, &g);
    if (value) *value = x * cdf;
    return cdf + x * g * 0.3989422804014327f; // Φ + x·φ, φ = e^(−x²/2)/√(2π)
  }
  if (act == GRAD_GELU_TANH) {
    F8 u = (x + x * x * x * 0.044715f) * 0.7978845608028654f;
    F8 t = u + u, e = exp_neg_abs(t);
    F8 inv = 1.0f / (1.0f + e);
    F8 sg = f8_select(t >= 0.0f, f8_set(1.0f), e) * inv; // σ(2u) = (1 + tanh u)/2
    if (value) *value = x * sg;
    F8 du = 0.7978845608028654f * (1.0f + 0.134145f * x * x); // du/dx
    return sg + 2.0f * x * du * e * inv * inv;
  }
  // SiLU
  F8 e = exp_neg_abs(x), inv = 1.0f / (1.0f + e);
  I8 pos = x >= 0.0f;
  F8 sg = f8_select(pos, f8_set(1.0f), e) * inv, one_minus = f8_select(pos, e, f8_set(1.0f)) * inv;
  if (value) *value = x * sg;
  return sg * (1.0f + x * one_minus);
}

// Loads the n (< 8) floats of p into a vector, zeros after (the last partial vector of an array).
SF_INLINE F8 load_part(const float *p, long n) {
  float t[8] = {0};
  memcpy(t, p, sizeof(float) * (size_t)n);
  return f8_load(t);
}

SF_INLINE void store_part(float *p, F8 v, long n) {
  float t[8];
  f8_store(t, v);
  memcpy(p, t, sizeof(float) * (size_t)n);
}

SF_KERNEL void grad_act_add(GradAct act, const float *dh, const float *x, long n, float *dx) {
  long i = 0;
  for (; i + 8 <= n; i += 8)
    f8_store(dx + i, f8_load(dx + i) + f8_load(dh + i) * act8(act, f8_load(x + i), NULL));
  if (i < n)
    store_part(dx + i,
               load_part(dx + i, n - i) + load_part(dh + i, n - i) * act8(act, load_part(x + i, n - i), NULL),
               n - i);
}

SF_KERNEL void grad_gated_add(GradAct act, const float *dh, const float *gate, const float *up, long n,
                              float *dgate, float *dup) {
  for (long i = 0; i < n; i += 8) {
    long m = n - i < 8 ? n - i : 8;
    F8 a, h = m == 8 ? f8_load(dh + i) : load_part(dh + i, m);
    F8 d = act8(act, m == 8 ? f8_load(gate + i) : load_part(gate + i, m), &a);
    F8 u = m == 8 ? f8_load(up + i) : load_part(up + i, m);
    F8 du = (m == 8 ? f8_load(dup + i) : load_part(dup + i, m)) + h * a;
    F8 dg = (m == 8 ? f8_load(dgate + i) : load_part(dgate + i, m)) + h * u * d;
    if (m == 8) {
      f8_store(dup + i, du);
      f8_store(dgate + i, dg);
    } else {
      store_part(dup + i, du, m);
      store_part(dgate + i, dg, m);
    }
  }
}

// ---------------------------------------------------------------- LayerNorm

typedef double D4 __attribute__((vector_size(32)));
typedef float F4 __attribute__((vector_size(16)));

SF_INLINE D4 d4_load(const float *p) {
  F4 v;
  memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, D4);
}

SF_INLINE double d4_sum(D4 v) { return (v[0] + v[2]) + (v[1] + v[3]); }

SF_KERNEL void grad_layernorm_rows(const float *dy, const float *x, int rows, int n, const float *gamma,
                                   float eps, float *dx, float *dgamma, float *dbeta) {
  for (int i = 0; i < rows; i++) {
    const float *xi = x + (size_t)i * n, *dyi = dy + (size_t)i * n;
    float *dxi = dx + (size_t)i * n;
    if (n == 0) continue;
    // the mean and variance from sums of d = x − x[0] and d² (a row far from 0 keeps its digits)
    double x0 = xi[0];
    D4 s = {0, 0, 0, 0}, ss = {0, 0, 0, 0};
    int j = 0;
    for (; j + 4 <= n; j += 4) {
      D4 d = d4_load(xi + j) - x0;
      s += d, ss += d * d;
    }
    double sd = d4_sum(s), sdd = d4_sum(ss);
    for (; j < n; j++) sd += xi[j] - x0, sdd += (xi[j] - x0) * (xi[j] - x0);
    double md = sd / n, var = sdd / n - md * md, mean = x0 + md;
    double rstd = 1.0 / sqrt((var > 0.0 ? var : 0.0) + eps);
    // mean(ĝ) and mean(ĝ∘x̂)
    D4 m1 = {0, 0, 0, 0}, m2 = {0, 0, 0, 0};
    for (j = 0; j + 4 <= n; j += 4) {
      D4 xh = (d4_load(xi + j) - mean) * rstd, gh = d4_load(dyi + j) * d4_load(gamma + j);
      m1 += gh, m2 += gh * xh;
    }
    double s1 = d4_sum(m1), s2 = d4_sum(m2);
    for (; j < n; j++) {
      double xh = (xi[j] - mean) * rstd, gh = (double)dyi[j] * gamma[j];
      s1 += gh, s2 += gh * xh;
    }
    s1 /= n, s2 /= n;
    for (j = 0; j + 4 <= n; j += 4) {
      D4 xh = (d4_load(xi + j) - mean) * rstd, dyv = d4_load(dyi + j), gh = dyv * d4_load(gamma + j);
      F4 v, o, r = __builtin_convertvector(rstd * (gh - s1 - xh * s2), F4);
      memcpy(&o, dxi + j, sizeof o);
      v = o + r;
      memcpy(dxi + j, &v, sizeof v);
      if (dgamma) {
        memcpy(&o, dgamma + j, sizeof o);
        v = o + __builtin_convertvector(dyv * xh, F4);
        memcpy(dgamma + j, &v, sizeof v);
      }
      if (dbeta) {
        F4 b;
        memcpy(&o, dbeta + j, sizeof o);
        memcpy(&b, dyi + j, sizeof b);
        v = o + b;
        memcpy(dbeta + j, &v, sizeof v);
      }
    }
    for (; j < n; j++) {
      double xh = (xi[j] - mean) * rstd, gh = (double)dyi[j] * gamma[j];
      dxi[j] += (float)(rstd * (gh - s1 - xh * s2));
      if (dgamma) dgamma[j] += (float)(dyi[j] * xh);
      if (dbeta) dbeta[j] += dyi[j];
    }
  }
}
