// strdist.h -- how far apart two short names are, for "did you mean" suggestions.
//
// The edit distance of Damerau's "optimal string alignment": insertions, deletions,
// substitutions, and a swap of two neighbours ("sotfmax" -> "softmax") each count as one edit.
// Names over STRDIST_MAX_LEN bytes are never near anything. The work stops as soon as the
// answer is known to exceed `limit` (then limit + 1 is returned), so looking a typo up in a
// table of a few hundred names costs little; the TeX and lesson parsers do it for every unknown
// word they meet (and their fuzzers meet many).
//
//     strdist("sotfmax", 7, "softmax", 7, 2, false) == 1
//     strdist("Softmax", 7, "softmax", 7, 2, true)  == 0   // fold_case: A-Z as a-z
#ifndef SF_STRDIST_H
#define SF_STRDIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STRDIST_MAX_LEN 31

// The distance between a[0..n) and b[0..m), or limit + 1 when it is greater than limit.
int strdist(const char *a, size_t n, const char *b, size_t m, int limit, bool fold_case);

// The name in names[0..count) nearest to a[0..n) within `limit` edits (the first such on a
// tie), or NULL when none is that near.
const char *strdist_nearest(const char *a, size_t n, const char *const *names, int count, int limit,
                            bool fold_case);

// A cheap lower bound for a table scanned often (the TeX commands): strdist_letters gives the
// set of byte values of s (folded onto 64 buckets, c & 63); every bucket that one name has and
// the other lacks needs an edit of its own, so strdist(a, b) >= strdist_bound(letters(a),
// letters(b)). Skip a candidate whose bound is already over the limit.
static inline uint64_t strdist_letters(const char *s, size_t n) {
  uint64_t m = 0;
  for (size_t i = 0; i < n; i++) m |= 1ull << ((unsigned char)s[i] & 63);
  return m;
}
static inline int strdist_bound(uint64_t a, uint64_t b) {
  int x = __builtin_popcountll(a & ~b), y = __builtin_popcountll(b & ~a);
  return x > y ? x : y;
}

#endif
