// doc.c -- see doc.h.
#include "doc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

DocBlock *doc_add_block(Doc *d, BlockKind kind, int line) {
  if (d->n == d->cap) {
    int nc = d->cap ? d->cap * 2 : 16;
    DocBlock *b = realloc(d->blocks, sizeof(DocBlock) * (size_t)nc);
    if (!b) return NULL;
    d->blocks = b, d->cap = nc;
  }
  DocBlock *b = &d->blocks[d->n++];
  memset(b, 0, sizeof *b);
  b->kind = kind;
  b->line = line;
  return b;
}

bool doc_add_spann(Doc *d, DocBlock *b, SpanKind kind, unsigned style, const char *text, int len, int line) {
  (void)d;
  if (len < 0) len = text ? (int)strlen(text) : 0;
  if (b->n_spans > 0 && kind == SPAN_TEXT) { // merge runs of the same style
    DocSpan *last = &b->spans[b->n_spans - 1];
    if (last->kind == SPAN_TEXT && last->style == style) {
      size_t old = strlen(last->text);
      char *t = realloc(last->text, old + (size_t)len + 1);
      if (!t) return false;
      memcpy(t + old, text, (size_t)len);
      t[old + (size_t)len] = 0;
      last->text = t;
      return true;
    }
  }
  if (b->n_spans == b->cap_spans) {
    int nc = b->cap_spans ? b->cap_spans * 2 : 8;
    DocSpan *s = realloc(b->spans, sizeof(DocSpan) * (size_t)nc);
    if (!s) return false;
    b->spans = s, b->cap_spans = nc;
  }
  char *copy = malloc((size_t)len + 1);
  if (!copy) return false;
  if (len) memcpy(copy, text, (size_t)len);
  copy[len] = 0;
  b->spans[b->n_spans++] = (DocSpan){kind, style, copy, line};
  return true;
}

void doc_free(Doc *d) {
  for (int i = 0; i < d->n; i++) {
    for (int k = 0; k < d->blocks[i].n_spans; k++) free(d->blocks[i].spans[k].text);
    free(d->blocks[i].spans);
  }
  free(d->blocks);
  memset(d, 0, sizeof *d);
}
