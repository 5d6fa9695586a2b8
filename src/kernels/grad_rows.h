// grad_rows.h -- the backward's elementwise and row kernels on vectors: the activations'
// derivatives, the gated FFN's and LayerNorm's backward.
//
// Each adds (+=) into the gradients it is given, as every stage's backward does (a tensor read by
// two stages collects both). The formulas (x the activation's input, dh the gradient of its
// output):
//   ReLU        dx += dh where x > 0, else 0 (PyTorch's choice at 0; NaN gives 0);
//   GELU (erf)  dx += dh·(Φ(x) + x·φ(x)), Φ from erfc (Abramowitz–Stegun 7.1.26, |error| below
//               1.5e-7, relative error small for x < 0 too) and φ(x) = e^(−x²/2)/√(2π);
//   GELU (tanh) with u = √(2/π)(x + 0.044715x³), t = 2u, e = e^(−|t|): σ(t) = (1 + tanh u)/2 as
//               in gelu_tanh.h and 1 − tanh² u = 4σ(1 − σ) = 4e/(1 + e)², so
//               dx += dh·(σ + 2x·√(2/π)(1 + 3·0.044715x²)·e/(1 + e)²), no cancellation;
//   SiLU        with e = e^(−|x|), σ(x) = (x ≥ 0 ? 1 : e)/(1 + e): dx += dh·σ·(1 + x·(1 − σ)).
// Float arithmetic with simd.h's f8_exp_neg (relative error below 2e-7), every lane and the last
// (partial) vector of an array alike, so the bits do not depend on where an array is cut (two
// threads may take its halves). Not the bits of the double loops they replace (backward.c until
// issue 38): within 1e-6 of them, well inside the golden tests' tolerance of torch.autograd.
//
//     grad_act_add(GRAD_GELU_TANH, dh, x, n, dx);
#ifndef SF_GRAD_ROWS_H
#define SF_GRAD_ROWS_H

#include <stdbool.h>

typedef enum { GRAD_RELU, GRAD_GELU, GRAD_GELU_TANH, GRAD_SILU } GradAct;

// dx[i] += dh[i]·act'(x[i]) for i < n.
void grad_act_add(GradAct act, const float *dh, const float *x, long n, float *dx);
// The gated FFN h = act(gate) ⊙ up: dup[i] += dh[i]·act(gate[i]), dgate[i] += dh[i]·up[i]·act'(gate[i]).
void grad_gated_add(GradAct act, const float *dh, const float *gate, const float *up, long n, float *dgate,
                    float *dup);

// LayerNorm y = γ∘x̂ + β, x̂ = (x − μ)/σ, σ = √(var + ε), per row of n values (rows contiguous):
//   with ĝ = dy∘γ:  dx += (1/σ)·(ĝ − mean(ĝ) − x̂·mean(ĝ∘x̂));  dγ += Σ_rows dy∘x̂,  dβ += Σ_rows dy.
// μ, var and the two means in double (as the forward's mat_layernorm_rows: the mean and variance of a row
// by the same shifted sums); dγ and dβ (either may be NULL) in float, rows in order.
void grad_layernorm_rows(const float *dy, const float *x, int rows, int n, const float *gamma, float eps,
                         float *dx, float *dgamma, float *dbeta);

#endif
