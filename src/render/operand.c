// operand.c -- see operand.h.
#include "operand.h"

#include <math.h>

Operand operand_tensor(const Trace *t, int index, int head, bool transpose) {
  const TraceTensor *x = &t->t[index];
  Operand o = {t, index, head, transpose, 0, 0, x->row_axis, x->col_axis, t->L, NULL, -1, 0, 0, 0, 0};
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
  return (Operand){t, -1, 0, false, t->L, t->L, AXIS_TOKEN, AXIS_TOKEN, t->L, NULL, -1, 0, 0, 0, 0};
}

Operand operand_window(Operand o, int first, int count) {
  int L = o.trace->L;
  if (count <= 0 || count >= L) return o;
  if (first < 0) first = 0;
  if (first > L - count) first = L - count;
  if (o.row_axis == AXIS_TOKEN && o.rows == L) o.row0 = first, o.rows = count, o.row_win = L;
  if (o.col_axis == AXIS_TOKEN && o.cols == L) o.col0 = first, o.cols = count, o.col_win = L;
  return o;
}

Operand operand_whole(Operand o) {
  if (o.row_win) o.rows = o.row_win;
  if (o.col_win) o.cols = o.col_win;
  o.row0 = o.col0 = o.row_win = o.col_win = 0;
  return o;
}

void operand_true_cell(const Operand *o, int *i, int *j) { *i += o->row0, *j += o->col0; }

Operand operand_difference(Operand a, const Trace *b_trace, int b_index) {
  a.minus_trace = b_trace;
  a.minus_index = b_index;
  return a;
}

static float at_one(const Trace *t, int index, const Operand *o, int i, int j) {
  if (o->transpose) {
    int k = i;
    i = j, j = k;
  }
  const TraceTensor *x = &t->t[index];
  if (o->head < 0) return trace_at(x, j / x->cols, i, j % x->cols);
  return trace_at(x, o->head, i, j);
}

const TraceTensor *operand_src(const Operand *o) { return o->index < 0 ? NULL : &o->trace->t[o->index]; }

float operand_at(const Operand *o, int i, int j) {
  i += o->row0, j += o->col0;
  if (o->minus_index >= 0) { // equal values (two masked -inf too) differ by 0
    float x = at_one(o->trace, o->index, o, i, j), y = at_one(o->minus_trace, o->minus_index, o, i, j);
    return x == y ? 0.0f : x - y;
  }
  if (o->transpose) {
    int k = i;
    i = j, j = k;
  }
  if (o->index < 0) return j > i ? -INFINITY : 0.0f;
  const TraceTensor *x = &o->trace->t[o->index];
  if (o->head < 0) return trace_at(x, j / x->cols, i, j % x->cols);
  return trace_at(x, o->head, i, j);
}

// The stored matrix behind head h of an operand: element (r, c) of the tensor's displayed
// matrix is base[r * rs + c * cs] (before the operand's own transpose).
static const float *stored(const Operand *o, int h, long *rs, long *cs) {
  const TraceTensor *x = &o->trace->t[o->index];
  const float *base = x->data + (size_t)h * x->rows * x->cols;
  if (x->transposed)
    *rs = 1, *cs = x->stride;
  else
    *rs = x->stride, *cs = 1;
  return base;
}

// A block's finite entries, summed and counted (for the mean) and their largest (for the maximum).
typedef struct {
  double sum;
  long n;
  float max;
} Block;

static void block_add(Block *b, float v) {
  if (!isfinite(v)) return;
  b->sum += v, b->n++;
  if (v > b->max) b->max = v;
}

// The slow, general way (differences): element by element.
static void generic_block(const Operand *o, int r0, int r1, int c0, int c1, Block *b) {
  for (int i = r0; i < r1; i++)
    for (int j = c0; j < c1; j++) block_add(b, operand_at(o, i, j));
}

// The finite entries of rows [r0, r1) × cols [c0, c1), read along the stored layout.
static Block block_of(const Operand *o, int r0, int r1, int c0, int c1) {
  Block b = {0, 0, -INFINITY};
  if (o->minus_index >= 0) {
    generic_block(o, r0, r1, c0, c1, &b); // (operand_at adds the window's offsets)
    return b;
  }
  r0 += o->row0, r1 += o->row0, c0 += o->col0, c1 += o->col0;
  if (o->index < 0) { // the mask: finite (0) below and on the diagonal
    for (int i = r0; i < r1 && !b.n; i++)
      if (c0 <= i) block_add(&b, 0.0f);
    return b;
  }
  if (o->transpose) { // a block of the transpose is the transposed block
    int t0 = r0, t1 = r1;
    r0 = c0, r1 = c1, c0 = t0, c1 = t1;
  }
  const TraceTensor *x = &o->trace->t[o->index];
  // columns of an all-heads operand cross head blocks: walk each head's part
  for (int c = c0; c < c1;) {
    int h = o->head >= 0 ? o->head : c / x->cols, cc = o->head >= 0 ? c : c % x->cols;
    int cend = o->head >= 0 ? c1 : (c1 - c < x->cols - cc ? c1 : c + (x->cols - cc));
    long rs, cs;
    const float *base = stored(o, h, &rs, &cs);
    int ccount = cend - c;
    if (cs == 1) { // rows contiguous: read along them
      for (int i = r0; i < r1; i++) {
        const float *row = base + i * rs + cc;
        for (int j = 0; j < ccount; j++) block_add(&b, row[j]);
      }
    } else { // stored transposed (weights): read along the stored rows
      for (int j = 0; j < ccount; j++) {
        const float *col = base + (long)(cc + j) * cs;
        for (int i = r0; i < r1; i++) block_add(&b, col[i]);
      }
    }
    c = cend;
  }
  return b;
}

float operand_block_mean(const Operand *o, int r0, int r1, int c0, int c1) {
  Block b = block_of(o, r0, r1, c0, c1);
  return b.n ? (float)(b.sum / (double)b.n) : -INFINITY;
}

float operand_block_max(const Operand *o, int r0, int r1, int c0, int c1) {
  return block_of(o, r0, r1, c0, c1).max;
}

void operand_range(const Operand *o, float *lo, float *hi) {
  float a = INFINITY, b = -INFINITY;
  if (o->index < 0) {
    *lo = *hi = 0;
    return;
  }
  if (o->minus_index >= 0) {
    for (int i = 0; i < o->rows; i++)
      for (int j = 0; j < o->cols; j++) {
        float v = operand_at(o, i, j);
        if (isfinite(v)) a = fminf(a, v), b = fmaxf(b, v);
      }
    if (a > b) a = b = 0;
    *lo = a, *hi = b;
    return;
  }
  // the range of a matrix is the range of its stored values: scan them in memory order
  const TraceTensor *x = &o->trace->t[o->index];
  int h0 = o->head >= 0 ? o->head : 0, h1 = o->head >= 0 ? o->head + 1 : x->heads;
  long per_head = (long)x->rows * x->cols;
  bool contiguous = x->stride == (x->transposed ? x->rows : x->cols);
  for (int h = h0; h < h1; h++) {
    if (contiguous) {
      const float *d = x->data + (size_t)h * per_head;
      for (long k = 0; k < per_head; k++)
        if (isfinite(d[k])) a = d[k] < a ? d[k] : a, b = d[k] > b ? d[k] : b;
    } else {
      for (int i = 0; i < x->rows; i++)
        for (int j = 0; j < x->cols; j++) {
          float v = trace_at(x, h, i, j);
          if (isfinite(v)) a = fminf(a, v), b = fmaxf(b, v);
        }
    }
  }
  if (a > b) a = b = 0;
  *lo = a, *hi = b;
}
