// test_simd.c -- the softmax's vector exp (simd.h) in both forms against exp in double.
//
// f8_exp_neg (every machine) and f8_exp_neg_fma (CPUs with AVX2 + FMA; skipped elsewhere, and
// said so) on x <= 0: within 2e-7 relative of exp(x) on about ten million floats spread over
// [-87.3, 0] (every 97th float by its bits, so densely near 0, and a linear sweep), exp(0) = 1
// exactly, exactly 0 below -87.3, for -inf and for NaN. Exits 1 on any failure.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "simd.h" // defines: F8, f8_exp_neg, f8_exp_neg_fma, SF_AVX2_FMA

#define MAX_REL_ERR 2e-7 // the bound simd.h promises for both forms
#define LOWEST -87.3f    // below it the result is 0

typedef void (*Exp8)(float out[8], const float in[8]);

static void exp_plain(float out[8], const float in[8]) {
  F8 v = f8_load(in), e = f8_exp_neg(&v);
  f8_store(out, e);
}

#if SF_HAVE_AVX2_FMA
SF_AVX2_FMA static void exp_fma(float out[8], const float in[8]) {
  F8 v = _mm256_loadu_ps(in), e = f8_exp_neg_fma(&v); // not f8_load: clang refuses its F8 return here
  f8_store(out, e);
}
#endif

static float from_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

// Largest relative error of exp8 on x[0..n-1] (all in [LOWEST, 0]); *worst gets its x.
static double max_rel_err(Exp8 exp8, const float *x, int n, float *worst) {
  double m = 0;
  for (int i = 0; i + 8 <= n; i += 8) {
    float y[8];
    exp8(y, x + i);
    for (int k = 0; k < 8; k++) {
      double e = exp((double)x[i + k]), d = fabs(y[k] - e) / e;
      if (d > m) m = d, *worst = x[i + k];
    }
  }
  return m;
}

static void check_form(const char *name, Exp8 exp8) {
  // every 97th float from -0 down to LOWEST by its bits, then a linear sweep, in chunks
  enum { CHUNK = 1 << 16 };
  static float x[CHUNK];
  double worst_err = 0;
  float worst_x = 0;
  long count = 0;
  uint32_t b = 0x80000000u, stop;
  float lo = LOWEST;
  memcpy(&stop, &lo, sizeof stop);
  for (int done = 0; !done;) {
    int n = 0;
    for (; n < CHUNK && !(done = b > stop); n++, b += 97) x[n] = from_bits(b);
    n -= n % 8;
    float w = 0;
    double e = max_rel_err(exp8, x, n, &w);
    if (e > worst_err) worst_err = e, worst_x = w;
    count += n;
  }
  for (int c = 0; c < 16; c++) {
    for (int i = 0; i < CHUNK; i++) x[i] = LOWEST * (float)(c * CHUNK + i) / (float)(16 * CHUNK);
    float w = 0;
    double e = max_rel_err(exp8, x, CHUNK, &w);
    if (e > worst_err) worst_err = e, worst_x = w;
    count += CHUNK;
  }
  printf("%s: %ld values, max relative error %.3g (at x = %.9g)\n", name, count, worst_err, worst_x);
  CHECK(worst_err < MAX_REL_ERR, "%s: relative error %.3g at x = %.9g, above %g", name, worst_err, worst_x,
        MAX_REL_ERR);

  // the edges: exp(±0) = 1 exactly; 0 below LOWEST, for -inf and for NaN
  const float edge[8] = {0.0f, -0.0f, -87.31f, -88.0f, -1e30f, -INFINITY, NAN, -NAN};
  float y[8];
  exp8(y, edge);
  CHECK(y[0] == 1.0f && y[1] == 1.0f, "%s: exp(0) = %.9g, exp(-0) = %.9g, not 1", name, y[0], y[1]);
  for (int k = 2; k < 8; k++) CHECK(y[k] == 0.0f, "%s: exp(%g) = %g, not 0", name, edge[k], y[k]);
}

int main(void) {
  check_form("f8_exp_neg", exp_plain);
#if SF_HAVE_AVX2_FMA
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    check_form("f8_exp_neg_fma", exp_fma);
  else
    printf("f8_exp_neg_fma: skipped, this CPU has no AVX2 + FMA\n");
#else
  printf("f8_exp_neg_fma: skipped, not an x86-64 build\n");
#endif
  return check_exit("test_simd");
}
