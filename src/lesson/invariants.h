// invariants.h -- the facts the course states about a stage, measured on one pass (issue 13.3).
//
// For the step on screen: each softmax row sums to 1 (the sums, measured by facts.h's evaluator
// as `sum A2[3] = 1 ± 0.001`), masked weights are 0 and masked scores −∞, A_h = softmax(S_h),
// S_h = Q_h K_hᵀ/√d_k with the scale's value and why the shapes fit (L×d_k times d_k×L), LayerNorm
// rows with mean 0 and variance 1 before the gain and the shift (and their values after), the
// residual's row norms before and after the sub-layer, and the shapes of every operand (its symbol
// as inline TeX, "shapes: $Q_h$ 6×16": the panel typesets it). A fact
// that holds by construction on the model's own pass can fail on a what-if pass (edits.h): an
// edited score breaks S = QKᵀ/√d_k, a uniform head breaks A = softmax(S), an edited gain moves the
// rows' variance after γ. Values that claim nothing (a norm) have state -1.
//
//     InvFact f[INV_MAX];
//     int n = invariants_measure(trace, step, head, f, INV_MAX); // head -1: all heads together
#ifndef SF_INVARIANTS_H
#define SF_INVARIANTS_H

#include "trace.h" // defines: Trace

#define INV_MAX 12

typedef struct {
  char text[200]; // "each row of A₂ sums to 1: sums 0.99999 … 1.00001"
  int state;      // 1 holds, 0 fails, -1 a value (nothing claimed)
  double value;   // the number the line is about (the largest |difference|, the smallest sum ...)
  double value2;  // a second number (the largest sum, a range's top), or 0
} InvFact;

// Fills up to cap facts about step `step` of t (head: 0-based, -1 all heads); returns how many.
int invariants_measure(const Trace *t, int step, int head, InvFact *out, int cap);

#endif
