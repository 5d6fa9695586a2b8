// sqrtdk.c -- see sqrtdk.h. Sums in double; the draws in a fixed order, so a seed gives one result.
#include "sqrtdk.h"

#include <math.h>
#include <stdlib.h>

#include "err.h" // defines: EXPECT
#include "rng.h" // defines: rng_seed, rng_normal

void sqrtdk_sweep(uint64_t seed, int keys, int rows, const int *dks, int n, SqrtDkRow *out) {
  EXPECT(keys >= 1 && rows >= 1);
  for (int c = 0; c < n; c++) {
    int dk = dks[c];
    EXPECT(dk >= 1 && dk <= 4096);
    uint64_t rng = rng_seed(seed + (uint64_t)c);
    double *q = malloc(sizeof(double) * (size_t)dk), *k = malloc(sizeof(double) * (size_t)keys * dk);
    double *s = malloc(sizeof(double) * (size_t)keys), *a = malloc(sizeof(double) * (size_t)keys);
    double *da = malloc(sizeof(double) * (size_t)keys);
    EXPECT(q && k && s && a && da);
    for (long x = 0; x < (long)keys * dk; x++) k[x] = rng_normal(&rng);
    double s2[2] = {0, 0}, amax[2] = {0, 0}, ds2[2] = {0, 0};
    for (int r = 0; r < rows; r++) {
      for (int x = 0; x < dk; x++) q[x] = rng_normal(&rng);
      for (int j = 0; j < keys; j++) da[j] = rng_normal(&rng);
      for (int j = 0; j < keys; j++) {
        double d = 0;
        for (int x = 0; x < dk; x++) d += q[x] * k[(size_t)j * dk + x];
        s[j] = d;
      }
      for (int v = 0; v < 2; v++) { // v = 0: S = q·k/√d_k; v = 1: S = q·k
        double scale = v ? 1.0 : 1.0 / sqrt((double)dk), mx = -INFINITY, sum = 0, best = 0, rs = 0;
        for (int j = 0; j < keys; j++) mx = fmax(mx, s[j] * scale);
        for (int j = 0; j < keys; j++) sum += a[j] = exp(s[j] * scale - mx);
        for (int j = 0; j < keys; j++) {
          a[j] /= sum;
          best = fmax(best, a[j]);
          rs += da[j] * a[j];
          s2[v] += s[j] * scale * s[j] * scale;
        }
        amax[v] += best;
        for (int j = 0; j < keys; j++) { // dS = A ∘ (dA − rowsum(dA ∘ A))
          double ds = a[j] * (da[j] - rs);
          ds2[v] += ds * ds;
        }
      }
    }
    out[c].dk = dk;
    for (int v = 0; v < 2; v++) {
      out[c].score_std[v] = (float)sqrt(s2[v] / ((double)rows * keys));
      out[c].max_a[v] = (float)(amax[v] / rows);
      out[c].ds_rms[v] = (float)sqrt(ds2[v] / ((double)rows * keys));
    }
    free(q), free(k), free(s), free(a), free(da);
  }
}

void sqrtdk_matrix(const SqrtDkRow *r, int n, float *out) {
  for (int c = 0; c < n; c++) {
    float *o = out + (size_t)c * SQRTDK_COLS;
    o[0] = (float)r[c].dk;
    o[1] = r[c].score_std[0], o[2] = r[c].score_std[1];
    o[3] = r[c].max_a[0], o[4] = r[c].max_a[1];
    o[5] = r[c].ds_rms[0], o[6] = r[c].ds_rms[1];
  }
}
