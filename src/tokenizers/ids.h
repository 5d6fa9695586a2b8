// ids.h -- a growable array of token ids: the output the tokenizers (bpe.c, wordpiece.c) build.
//
// Start from a zeroed Ids; ids_push appends one id, doubling the block from 64 when full, and
// returns false when out of memory (the array is then unchanged). The array owns v: hand v and n
// on (the caller frees v) or free(v).
//
//     Ids out = {0};
//     if (!ids_push(&out, 42)) { free(out.v); return false; } // out of memory
//     *ids = out.v, *n = out.n;                                 // the caller frees
#ifndef SF_IDS_H
#define SF_IDS_H

#include <stdbool.h>
#include <stdlib.h>

typedef struct {
  int *v;
  int n, cap;
} Ids;

static inline bool ids_push(Ids *a, int x) {
  if (a->n == a->cap) {
    int cap = a->cap ? 2 * a->cap : 64;
    int *more = realloc(a->v, (size_t)cap * sizeof *more);
    if (!more) return false;
    a->v = more, a->cap = cap;
  }
  a->v[a->n++] = x;
  return true;
}

#endif
