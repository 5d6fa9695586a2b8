// explain.h -- how a number was made: the worked equation of one cell, with the real numbers.
//
// explain_cell looks at cell (i, j) of operand k of a view's layout and writes what the
// inspector shows: a heading ("A_1[cat, bank] = 0.31") and up to EXPLAIN_LINES lines of TeX
// that compute it from the numbers of the cells that produced it, ending with its value, e.g.
//   S[cat, bank] = q_cat · k_bank / √d_k = 3.21 / 2.83 = 1.13
//   A[cat, bank] = e^{1.13} / Σ_j e^{S[cat, j]} = 3.10 / 10.0 = 0.310
// Inputs of a step (weights, the operands of a product) get a line saying what they are.
// Sums are recomputed in double from the trace, so the last number equals the cell's value to
// the printed precision, and the numbers follow numfmt.h's policy: operands and result with the
// same significant digits (3, more where needed), the printed operands reproducing the printed
// result (the tests check both). A cell set by a what-if edit says so in its heading, and the
// worked equation ends with what the model computes:
//   S_1[cat, walks] = 6.00, edited by a what-if; the model computes 0.750
// Pure text: no drawing, no allocation.
//
//     Explanation ex;
//     explain_cell(trace, &layout, k, i, j, &ex);
//     tex_draw(scene, ex.lines[0], ...);
#ifndef SF_EXPLAIN_H
#define SF_EXPLAIN_H

#include "view.h" // defines: ViewLayout

#define EXPLAIN_LINES 4
#define EXPLAIN_CAP 600

typedef struct {
  char heading[EXPLAIN_CAP];              // TeX: "A_{1}[\text{cat}, \text{bank}] = 0.31"
  char lines[EXPLAIN_LINES][EXPLAIN_CAP]; // TeX lines of the worked equation
  int n_lines;
  char plain[EXPLAIN_CAP]; // one line of plain text (for logs and the SVG title)
  float value;
  bool edited; // the cell was set by a what-if edit: the heading says so and what the model computes
} Explanation;

void explain_cell(const Trace *t, const ViewLayout *lay, int k, int i, int j, Explanation *ex);

#endif
