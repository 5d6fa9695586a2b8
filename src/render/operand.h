// operand.h -- a matrix as a view shows it: one trace tensor seen through a head and a transpose.
//
// Views draw equations like [Q_h] × [K_hᵀ] = [S_h]; each bracket is an Operand: a trace tensor,
// which head of it (or all heads side by side as one L×D matrix), whether it is transposed, or
// the causal mask M (0 on and below the diagonal, -inf above), which is no tensor. operand_at
// reads element (i, j) of the matrix as displayed. Large operands are shown by area-averaging:
// operand_block_mean averages the finite entries of a block of cells (masked -inf entries are
// skipped; a block of masked entries only is -inf).
//
//     Operand k = operand_tensor(trace, trace->layers[0].K, h, true);  // K_hᵀ, d_k × L
//     float v = operand_at(&k, i, j);
#ifndef SF_OPERAND_H
#define SF_OPERAND_H

#include <stdbool.h>

#include "trace.h" // defines: Trace, TraceTensor, TraceAxis

typedef struct {
  const Trace *trace;
  int index;      // trace tensor index, or -1 for the mask
  int head;       // head shown; -1 = all heads side by side (columns h·cols .. of head h)
  bool transpose; // shown transposed
  int rows, cols; // displayed shape
  TraceAxis row_axis, col_axis;
  int L;                    // mask size
  const Trace *minus_trace; // a difference: this operand minus the same tensor of another
  int minus_index;          // trace (a compare view), or -1
  // A window of the tokens (operand_window): displayed row i is the matrix's row i + row0, column j
  // its column j + col0. 0, 0 when every entry shows.
  int row0, col0;
  int row_win, col_win; // the whole axis's length when it shows a window, else 0
} Operand;

Operand operand_tensor(const Trace *t, int index, int head, bool transpose);
Operand operand_mask(const Trace *t);
// The difference a − b of two operands of the same shape (the same stage for two sentences).
Operand operand_difference(Operand a, const Trace *b_trace, int b_index);
const TraceTensor *operand_src(const Operand *o); // NULL for the mask
float operand_at(const Operand *o, int i, int j);
// Mean of the finite entries of rows [r0, r1) × cols [c0, c1); -inf when all are -inf.
float operand_block_mean(const Operand *o, int r0, int r1, int c0, int c1);
// Largest of the finite entries of the block; -inf when all are -inf. A one-hot matrix of a large
// vocabulary is drawn with it, so that each token's 1 shows (a mean of 44 columns is 1/44: white).
float operand_block_max(const Operand *o, int r0, int r1, int c0, int c1);
// Min and max of the finite entries (of the whole matrix, window or not: colours do not change as a
// window of the tokens moves).
void operand_range(const Operand *o, float *lo, float *hi);
// Only tokens first .. first + count - 1 of each token axis (AXIS_TOKEN) of o, when the sentence is
// longer than count: a long sentence's picture shows a window of it (view.h: ViewOptions.tok_first).
Operand operand_window(Operand o, int first, int count);
// The operand with every entry again (no window), and the matrix's (i, j) of displayed cell (i, j).
Operand operand_whole(Operand o);
void operand_true_cell(const Operand *o, int *i, int *j);

#endif
