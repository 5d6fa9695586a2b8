// strtab.c -- see strtab.h.
#include "strtab.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nocov.h" // defines: SF_NO_COVERAGE

// The hash and the probe are SF_NO_COVERAGE (nocov.h): a collision tells a fuzzer nothing, and
// the probes of a 128 k-token vocabulary were a tenth of the tokenizer fuzzers' time. The caller's
// branch on found / not found keeps its coverage.
SF_NO_COVERAGE static uint32_t strtab_hash(const char *key, int len) {
  uint32_t h = 2166136261u;
  for (int i = 0; i < len; i++) h = (h ^ (unsigned char)key[i]) * 16777619u;
  return h;
}

static bool strtab_alloc(StrTab *t, size_t cap) {
  t->keys = calloc(cap, sizeof *t->keys);
  t->lens = calloc(cap, sizeof *t->lens);
  t->vals = calloc(cap, sizeof *t->vals);
  t->cap = cap;
  t->n = 0;
  if (t->keys && t->lens && t->vals) return true;
  strtab_free(t);
  return false;
}

bool strtab_init(StrTab *t, size_t expected) {
  size_t cap = 16;
  while (cap < 2 * expected + 2) cap *= 2;
  return strtab_alloc(t, cap);
}

// The slot of key, or the empty slot where it would go.
SF_NO_COVERAGE static size_t strtab_slot(const StrTab *t, const char *key, int len) {
  size_t mask = t->cap - 1, i = strtab_hash(key, len) & mask;
  while (t->keys[i] && !(t->lens[i] == len && memcmp(t->keys[i], key, (size_t)len) == 0)) i = (i + 1) & mask;
  return i;
}

static bool strtab_grow(StrTab *t) {
  StrTab big;
  if (!strtab_alloc(&big, t->cap * 2)) return false;
  for (size_t i = 0; i < t->cap; i++) {
    if (!t->keys[i]) continue;
    size_t j = strtab_slot(&big, t->keys[i], t->lens[i]);
    big.keys[j] = t->keys[i], big.lens[j] = t->lens[i], big.vals[j] = t->vals[i];
    big.n++;
  }
  strtab_free(t);
  *t = big;
  return true;
}

int strtab_put(StrTab *t, const char *key, int len, int val) {
  if (t->cap == 0) return -2;
  size_t i = strtab_slot(t, key, len);
  if (t->keys[i]) {
    int old = t->vals[i];
    t->vals[i] = val;
    return old;
  }
  if (2 * (t->n + 1) > t->cap) {
    if (!strtab_grow(t)) return -2;
    i = strtab_slot(t, key, len);
  }
  t->keys[i] = key, t->lens[i] = len, t->vals[i] = val;
  t->n++;
  return -1;
}

int strtab_get(const StrTab *t, const char *key, int len) {
  if (t->cap == 0) return -1;
  size_t i = strtab_slot(t, key, len);
  return t->keys[i] ? t->vals[i] : -1;
}

void strtab_free(StrTab *t) {
  free(t->keys);
  free(t->lens);
  free(t->vals);
  *t = (StrTab){0};
}
