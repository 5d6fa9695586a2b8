// sqrtdk.h -- why the scores are divided by √d_k, measured (issue 21, item 4).
//
// The footnote of "Attention Is All You Need": if the components of q and k are independent with
// mean 0 and variance 1, q·k = Σ_{i=1}^{d_k} q_i k_i has mean 0 and variance d_k. Without the
// division the scores of a wide head spread out, the softmax rows go one-hot, and the gradient
// through the softmax, dS = A ∘ (dA − rowsum(dA ∘ A)), vanishes. sqrtdk_sweep measures it: for
// each d_k, `rows` query rows against `keys` keys, q and k drawn N(0, 1) (seeded), an upstream
// gradient dA drawn N(0, 1), with and without the 1/√d_k.
//
//     SqrtDkRow r[5];
//     const int dks[5] = {4, 16, 64, 256, 1024};
//     sqrtdk_sweep(42, 16, 256, dks, 5, r);   // r[k].ds_rms[1]: the unscaled gradient's size
#ifndef SF_SQRTDK_H
#define SF_SQRTDK_H

#include <stdint.h>

typedef struct {
  int dk;
  float score_std[2]; // standard deviation of the scores: [0] with 1/√d_k, [1] without
  float max_a[2];     // mean over rows of the row's largest attention weight (1: one-hot)
  float ds_rms[2];    // root mean square of dS: the size of the gradient that reaches the scores
} SqrtDkRow;

#define SQRTDK_COLS 7 // a row as floats: dk, score_std[0..1], max_a[0..1], ds_rms[0..1]

// Fills out[0..n-1] for dks[0..n-1] (each 1..4096); rows and keys at least 1.
void sqrtdk_sweep(uint64_t seed, int keys, int rows, const int *dks, int n, SqrtDkRow *out);
// out[k·SQRTDK_COLS ...]: the rows as a matrix, for sqrt_dk.npy.
void sqrtdk_matrix(const SqrtDkRow *r, int n, float *out);

#endif
