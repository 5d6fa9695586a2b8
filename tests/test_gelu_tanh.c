// test_gelu_tanh.c -- GPT-2's GELU (tanh form) on vectors against the formula in double.
//
// Every step of 2^-13 over [-12, 12] (196 609 values) against x·σ(2u) in double (the exact
// form of 0.5·x·(1 + tanh u) that has no cancellation): |error| <= 2.5e-7·max(1, |y|), and within
// 16 ulp for x >= -3; the special values (±0, ±inf, NaN, large of both signs); and a row whose
// length is no multiple of 8 gives, in its last elements, the bits the vector body gives.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "gelu_tanh.h" // defines: gelu_tanh_rows
#include "mat.h"       // defines: Mat, mat_view

enum { N = 24 * 8192 + 1 }; // [-12, 12] in steps of 2^-13

static double exact(double x) {
  return x / (1.0 + exp(-2.0 * 0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

static void grid(void) {
  static float x[N], y[N];
  for (int i = 0; i < N; i++) x[i] = -12.0f + (float)i / 8192.0f;
  gelu_tanh_rows(mat_view(y, 1, N), mat_view(x, 1, N));
  double worst = 0, worst_ulp = 0;
  float at = 0, at_ulp = 0;
  for (int i = 0; i < N; i++) {
    double r = exact(x[i]), e = fabs(y[i] - r) / fmax(1.0, fabs(r));
    if (e > worst) worst = e, at = x[i];
    if (x[i] >= -3.0f && r != 0) {
      float fr = (float)fabs(r);
      double u = fabs(y[i] - r) / (nextafterf(fr, INFINITY) - fr);
      if (u > worst_ulp) worst_ulp = u, at_ulp = x[i];
    }
  }
  CHECK(worst <= 2.5e-7, "largest error %.3g·max(1,|y|) at x = %.9g", worst, at);
  CHECK(worst_ulp <= 16, "largest error %.1f ulp at x = %.9g", worst_ulp, at_ulp);
}

static void specials(void) {
  float x[8] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e30f, -1e30f, -200.0f}, y[8];
  gelu_tanh_rows(mat_view(y, 1, 8), mat_view(x, 1, 8));
  CHECK(y[0] == 0.0f && !signbit(y[0]), "GELU(0) = %g", y[0]);
  CHECK(y[1] == 0.0f && signbit(y[1]), "GELU(-0) = %g", y[1]);
  CHECK(y[2] == INFINITY, "GELU(inf) = %g", y[2]);
  CHECK(isnan(y[3]), "GELU(-inf) = %g (PyTorch: -inf·0 = NaN)", y[3]);
  CHECK(isnan(y[4]), "GELU(NaN) = %g", y[4]);
  CHECK(y[5] == 1e30f, "GELU(1e30) = %g", y[5]);
  CHECK(y[6] == 0.0f && signbit(y[6]), "GELU(-1e30) = %g", y[6]);
  CHECK(y[7] == 0.0f && signbit(y[7]), "GELU(-200) = %g", y[7]);
}

// A 2×13 matrix with a stride of 16, in place: each row's last 5 elements go through the partial
// vector; they must equal the same values computed in a full vector, and the gap stays untouched.
static void tail(void) {
  float m[32], full[16], want[16];
  for (int i = 0; i < 32; i++) m[i] = (float)(i % 16) * 0.37f - 2.9f;
  memcpy(full, m, sizeof full);
  gelu_tanh_rows(mat_view(want, 1, 16), mat_view(full, 1, 16));
  Mat a = {m, 2, 13, 16};
  gelu_tanh_rows(a, a);
  for (int r = 0; r < 2; r++) {
    for (int j = 0; j < 13; j++)
      CHECK(memcmp(&m[16 * r + j], &want[j], sizeof(float)) == 0, "row %d col %d: %.9g, not %.9g", r, j,
            m[16 * r + j], want[j]);
    for (int j = 13; j < 16; j++)
      CHECK(m[16 * r + j] == full[j], "row %d col %d (past the row) changed", r, j);
  }
}

int main(void) {
  grid();
  specials();
  tail();
  return check_exit("test_gelu_tanh");
}
