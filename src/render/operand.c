// operand.c -- see operand.h.
#include "operand.h"

#include <math.h>

Operand operand_tensor(const Trace *t, int index, int head, bool transpose) {
  const TraceTensor *x = &t->t[index];
  Operand o = {t, index, head, transpose, 0, 0, x->row_axis, x->col_axis, t->L};
  int rows = x->rows, cols = x->cols;
  if (head < 0 && x->heads > 1) cols *= x->heads; // heads side by side: [L, H·d_k]
  if (head < 0 && x->heads == 1) o.head = 0;
  if (x->heads > 1 && head < 0 && x->col_axis == AXIS_HEADDIM) o.col_axis = AXIS_QKV;
  o.rows = transpose ? cols : rows;
  o.cols = transpose ? rows : cols;
  if (transpose) o.row_axis = o.col_axis, o.col_axis = x->row_axis;
  return o;
}

Operand operand_mask(const Trace *t) {
  return (Operand){t, -1, 0, false, t->L, t->L, AXIS_TOKEN, AXIS_TOKEN, t->L};
}

const TraceTensor *operand_src(const Operand *o) { return o->index < 0 ? NULL : &o->trace->t[o->index]; }

int operand_head_of_col(const Operand *o, int j) {
  const TraceTensor *x = operand_src(o);
  if (!x || o->head >= 0) return o->head < 0 ? 0 : o->head;
  return j / x->cols;
}

float operand_at(const Operand *o, int i, int j) {
  if (o->transpose) {
    int k = i;
    i = j, j = k;
  }
  if (o->index < 0) return j > i ? -INFINITY : 0.0f;
  const TraceTensor *x = &o->trace->t[o->index];
  if (o->head < 0) return trace_at(x, j / x->cols, i, j % x->cols);
  return trace_at(x, o->head, i, j);
}

float operand_block_mean(const Operand *o, int r0, int r1, int c0, int c1) {
  double sum = 0;
  long n = 0;
  for (int i = r0; i < r1; i++)
    for (int j = c0; j < c1; j++) {
      float v = operand_at(o, i, j);
      if (isfinite(v)) sum += v, n++;
    }
  return n ? (float)(sum / (double)n) : -INFINITY;
}

void operand_range(const Operand *o, float *lo, float *hi) {
  float a = INFINITY, b = -INFINITY;
  for (int i = 0; i < o->rows; i++)
    for (int j = 0; j < o->cols; j++) {
      float v = operand_at(o, i, j);
      if (isfinite(v)) a = fminf(a, v), b = fmaxf(b, v);
    }
  if (a > b) a = b = 0;
  *lo = a, *hi = b;
}
