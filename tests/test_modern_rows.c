// test_modern_rows.c -- today's decoders' row stages on vectors (modern_rows.h) against the
// formulas in double and the scalar loops they replaced.
//
//   - SiLU(g)·u: every step of 2^-12 over [-20, 20] against g/(1 + e^-g)·u in double,
//     |error| <= 2.5e-7·max(1, |y|), within 8 ulp for g >= -8; special values as PyTorch's F.silu
//     (±0, ±inf, NaN, large of both signs); a row of 13 gives in its last elements the bits of
//     the vector body, and leaves the stride's gap alone.
//   - RMSNorm: rows of 1..70 floats (ragged), strided, in place, with g and with 1 + g, against
//     x·(1/sqrt(mean(x²) + eps))·g in double (within 2 ulp of the largest output), and the rms.
//   - RoPE: halves and pairs, in place and out of place, bit for bit the scalar rotation
//     (a·cos - b·sin, b·cos + a·sin in float), for d_k = 2, 16, 64 and 80.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mat.h"         // defines: Mat, mat_view
#include "modern_rows.h" // defines: rmsnorm_rows, silu_mul_rows, rope_rows

enum { N = 40 * 4096 + 1 }; // [-20, 20] in steps of 2^-12

static float frand(unsigned *s) { // in [-1, 1), a fixed sequence
  *s = *s * 1664525u + 1013904223u;
  return (float)(*s >> 8) / (float)(1u << 23) - 1.0f;
}

static void silu_grid(void) {
  static float g[N], u[N], y[N];
  for (int i = 0; i < N; i++) g[i] = -20.0f + (float)i / 4096.0f, u[i] = (i % 3) ? 1.0f : -0.75f;
  silu_mul_rows(mat_view(y, 1, N), mat_view(g, 1, N), mat_view(u, 1, N));
  double worst = 0, worst_ulp = 0;
  float at = 0, at_ulp = 0;
  for (int i = 0; i < N; i++) {
    double r = (double)g[i] / (1.0 + exp(-(double)g[i])) * u[i], e = fabs(y[i] - r) / fmax(1.0, fabs(r));
    if (e > worst) worst = e, at = g[i];
    if (g[i] >= -8.0f && r != 0) {
      float fr = (float)fabs(r);
      double ulp = fabs(y[i] - r) / (nextafterf(fr, INFINITY) - fr);
      if (ulp > worst_ulp) worst_ulp = ulp, at_ulp = g[i];
    }
  }
  CHECK(worst <= 2.5e-7, "SiLU: largest error %.3g·max(1,|y|) at g = %.9g", worst, at);
  CHECK(worst_ulp <= 8, "SiLU: largest error %.1f ulp at g = %.9g", worst_ulp, at_ulp);
}

static void silu_specials(void) {
  float g[8] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e30f, -1e30f, -200.0f}, u[8], y[8];
  for (int i = 0; i < 8; i++) u[i] = 1.0f;
  silu_mul_rows(mat_view(y, 1, 8), mat_view(g, 1, 8), mat_view(u, 1, 8));
  CHECK(y[0] == 0.0f && !signbit(y[0]), "SiLU(0) = %g", y[0]);
  CHECK(y[1] == 0.0f && signbit(y[1]), "SiLU(-0) = %g", y[1]);
  CHECK(y[2] == INFINITY, "SiLU(inf) = %g", y[2]);
  CHECK(isnan(y[3]), "SiLU(-inf) = %g (PyTorch: -inf/inf = NaN)", y[3]);
  CHECK(isnan(y[4]), "SiLU(NaN) = %g", y[4]);
  CHECK(y[5] == 1e30f, "SiLU(1e30) = %g", y[5]);
  CHECK(y[6] == 0.0f && signbit(y[6]), "SiLU(-1e30) = %g", y[6]);
  CHECK(y[7] == 0.0f && signbit(y[7]), "SiLU(-200) = %g", y[7]);
}

// A 2×13 matrix with a stride of 16, in place: each row's last 5 elements go through the partial
// vector; they must equal the same values computed in a full vector, and the gap stays untouched.
static void silu_tail(void) {
  float m[32], u[32], full[16], want[16];
  for (int i = 0; i < 32; i++) m[i] = (float)(i % 16) * 0.37f - 2.9f, u[i] = 0.5f + (float)(i % 16) * 0.1f;
  memcpy(full, m, sizeof full);
  silu_mul_rows(mat_view(want, 1, 16), mat_view(full, 1, 16), mat_view(u, 1, 16));
  Mat a = {m, 2, 13, 16}, b = {u, 2, 13, 16};
  silu_mul_rows(a, a, b);
  for (int r = 0; r < 2; r++) {
    for (int j = 0; j < 13; j++)
      CHECK(memcmp(&m[16 * r + j], &want[j], sizeof(float)) == 0, "SiLU row %d col %d: %.9g, not %.9g", r, j,
            m[16 * r + j], want[j]);
    for (int j = 13; j < 16; j++)
      CHECK(m[16 * r + j] == full[j], "SiLU row %d col %d (past the row) changed", r, j);
  }
}

static void rmsnorm(void) {
  unsigned s = 7;
  float x[3 * 80], y[3 * 80], g[70], rms[3];
  for (int n = 1; n <= 70; n++)
    for (int offset = 0; offset < 2; offset++) {
      for (int i = 0; i < 3 * 80; i++) x[i] = frand(&s) * (i % 5 == 0 ? 40.0f : 1.0f);
      for (int j = 0; j < n; j++) g[j] = frand(&s) + (offset ? 0.0f : 1.0f);
      float gap = x[n]; // row 0's first float past the row
      Mat xm = {x, 3, n, 80}, ym = {y, 3, n, 80};
      float x0[3 * 80];
      memcpy(x0, x, sizeof x);
      rmsnorm_rows(ym, xm, g, 1e-5f, offset, rms);
      rmsnorm_rows(xm, xm, g, 1e-5f, offset, NULL); // in place: the same bits
      for (int i = 0; i < 3; i++) {
        double ss = 0, big = 0;
        for (int j = 0; j < n; j++) ss += (double)x0[80 * i + j] * x0[80 * i + j];
        double r = sqrt(ss / n + 1e-5);
        CHECK(fabs(rms[i] - r) <= 1e-7 * r, "RMSNorm n=%d row %d: rms %.9g, not %.9g", n, i, rms[i], r);
        for (int j = 0; j < n; j++) big = fmax(big, fabs(x0[80 * i + j] / r * (offset ? 1.0 + g[j] : g[j])));
        for (int j = 0; j < n; j++) {
          double want = x0[80 * i + j] / r * (offset ? 1.0 + g[j] : g[j]);
          CHECK(fabs(y[80 * i + j] - want) <= 2.5e-7 * big, "RMSNorm n=%d row %d col %d: %.9g, not %.9g", n,
                i, j, y[80 * i + j], want);
          CHECK(memcmp(&x[80 * i + j], &y[80 * i + j], sizeof(float)) == 0, "RMSNorm n=%d in place differs",
                n);
        }
      }
      CHECK(x[n] == gap, "RMSNorm n=%d wrote past the row", n);
    }
}

static void rope(void) {
  unsigned s = 11;
  static const int dks[] = {2, 16, 64, 80};
  for (int d = 0; d < 4; d++)
    for (int style = 0; style < 2; style++) {
      int dk = dks[d], n = dk / 2, L = 5;
      float x[5 * 80], y[5 * 80], cs[5 * 80], want[5 * 80];
      for (int i = 0; i < L * dk; i++) x[i] = frand(&s) * 3.0f;
      for (int i = 0; i < L; i++)
        for (int k = 0; k < n; k++) {
          double a = i * pow(10000.0, -2.0 * k / dk);
          cs[i * dk + k] = (float)cos(a), cs[i * dk + n + k] = (float)sin(a);
        }
      for (int i = 0; i < L; i++)
        for (int k = 0; k < n; k++) {
          int j0 = style ? 2 * k : k, j1 = style ? 2 * k + 1 : k + n;
          float a = x[i * dk + j0], b = x[i * dk + j1], c = cs[i * dk + k], sn = cs[i * dk + n + k];
          want[i * dk + j0] = a * c - b * sn;
          want[i * dk + j1] = b * c + a * sn;
        }
      RopeRowsStyle st = style ? ROPE_ROWS_PAIRS : ROPE_ROWS_HALVES;
      rope_rows(mat_view(y, L, dk), mat_view(x, L, dk), cs, st);
      CHECK(memcmp(y, want, sizeof(float) * (size_t)(L * dk)) == 0, "RoPE d_k=%d %s: not the scalar bits", dk,
            style ? "pairs" : "halves");
      rope_rows(mat_view(x, L, dk), mat_view(x, L, dk), cs, st);
      CHECK(memcmp(x, want, sizeof(float) * (size_t)(L * dk)) == 0,
            "RoPE d_k=%d %s in place: not the scalar bits", dk, style ? "pairs" : "halves");
    }
}

int main(void) {
  silu_grid();
  silu_specials();
  silu_tail();
  rmsnorm();
  rope();
  return check_exit("test_modern_rows");
}
