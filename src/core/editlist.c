// editlist.c -- see editlist.h.
#include "editlist.h"

#include <stdlib.h>
#include <string.h>

void edits_free(TraceEdits *e) {
  free(e->e);
  free(e->off);
  *e = (TraceEdits){0};
}

bool edits_add(TraceEdits *e, const TraceEdit *x, Err *err) {
  if (e->n == e->cap) {
    int cap = e->cap ? 2 * e->cap : 8;
    TraceEdit *p = realloc(e->e, sizeof *p * (size_t)cap);
    if (!p) return err_set(err, "out of memory for the edit list");
    e->e = p, e->cap = cap;
  }
  e->e[e->n++] = *x;
  return true;
}

bool edits_undo(TraceEdits *e) {
  if (e->n == 0) return false;
  e->n--;
  return true;
}

void edits_clear(TraceEdits *e) {
  e->n = 0;
  if (e->off) memset(e->off, 0, (size_t)e->n_layers * e->H);
}

bool edits_copy(TraceEdits *dst, const TraceEdits *src, Err *err) {
  *dst = (TraceEdits){0};
  for (int k = 0; k < src->n; k++)
    if (!edits_add(dst, &src->e[k], err)) return edits_free(dst), false;
  if (src->off) {
    size_t n = (size_t)src->n_layers * src->H;
    if (!(dst->off = malloc(n))) return edits_free(dst), err_set(err, "out of memory for the edit list");
    memcpy(dst->off, src->off, n);
    dst->n_layers = src->n_layers, dst->H = src->H;
  }
  return true;
}

HeadOff edits_head(const TraceEdits *e, int l, int h) {
  if (!e || !e->off || l < 0 || l >= e->n_layers || h < 0 || h >= e->H) return HEAD_ON;
  return (HeadOff)e->off[l * e->H + h];
}

bool edits_empty(const TraceEdits *e) {
  if (!e || e->n > 0) return !e;
  for (int k = 0; e->off && k < e->n_layers * e->H; k++)
    if (e->off[k]) return false;
  return true;
}

void edits_apply_scores(const TraceEdits *e, int l, int h, float *s, int stride, int r0, int r1) {
  if (!e) return;
  for (int k = 0; k < e->n; k++) {
    const TraceEdit *x = &e->e[k];
    if (x->kind == EDIT_SCORE && x->layer == l && x->head == h && x->i >= r0 && x->i < r1)
      s[(size_t)x->i * stride + x->j] = x->value;
  }
}
