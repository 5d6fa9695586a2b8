// gelu_tanh.h -- GPT-2's GELU, the tanh form, on 8-float vectors.
//
// GELU_tanh(x) = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) (transformers' gelu_new, PyTorch's
// F.gelu(approximate="tanh")). Since 1 + tanh(u) = 2·σ(2u), it is computed as x·σ(2u) with
// σ(t) = 1/(1 + e^(-t)) for t >= 0 and e^t/(1 + e^t) for t < 0, so that the one exponential
// (simd.h's f8_exp_neg) never overflows, and near x = 0 there is no 1 - 1 cancellation. Float
// arithmetic throughout, the same in every lane and for the last (partial) vector of a row.
// Within about 6 ulp of the exact value for |x| <= 10 (tests/test_gelu_tanh.c; the error grows
// with |u| as it does in float PyTorch); inf and NaN as in PyTorch: GELU(+inf) = +inf,
// GELU(-inf) = NaN, NaN stays NaN, and large negative x give -0.
//
//     gelu_tanh_rows(h, y);   // h[i,j] = GELU_tanh(y[i,j]); h and y the same shape, may be equal
#ifndef SF_GELU_TANH_H
#define SF_GELU_TANH_H

#include "mat.h" // defines: Mat

void gelu_tanh_rows(Mat y, Mat x);

#endif
