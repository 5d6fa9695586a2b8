// test_strdist.c -- the edit distance behind every "did you mean".
//
// Known pairs (a swap of neighbours is one edit, case folds only when asked), the limit (the
// answer is exact up to it and limit + 1 past it), and 200 000 seeded random pairs against a
// plain full-table implementation, so the early stop never changes an answer within the limit.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rng.h"     // defines: rng_seed, rng_u32
#include "strdist.h" // defines: strdist, strdist_nearest

// Optimal string alignment distance, the whole table, no stopping early.
static int plain(const char *a, const char *b) {
  int n = (int)strlen(a), m = (int)strlen(b), d[40][40];
  for (int i = 0; i <= n; i++) d[i][0] = i;
  for (int j = 0; j <= m; j++) d[0][j] = j;
  for (int i = 1; i <= n; i++)
    for (int j = 1; j <= m; j++) {
      int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
        best = d[i - 2][j - 2] + 1;
      d[i][j] = best;
    }
  return d[n][m];
}

static int dist(const char *a, const char *b, int limit, bool fold) {
  return strdist(a, strlen(a), b, strlen(b), limit, fold);
}

int main(void) {
  CHECK(dist("softmax", "softmax", 3, false) == 0, "same");
  CHECK(dist("sotfmax", "softmax", 3, false) == 1, "a swap is one edit");
  CHECK(dist("softmx", "softmax", 3, false) == 1, "a deletion");
  CHECK(dist("weighted", "av", 3, false) == 4, "far apart: limit + 1");
  CHECK(dist("Softmax", "softmax", 3, false) == 1 && dist("Softmax", "softmax", 3, true) == 0, "case");
  CHECK(dist("", "abc", 5, false) == 3 && dist("abc", "", 5, false) == 3, "empty");
  char long_name[40];
  memset(long_name, 'a', 32), long_name[32] = 0;
  CHECK(dist(long_name, long_name, 5, false) == 6, "over STRDIST_MAX_LEN is never near");
  const char *names[] = {"scores", "softmax", "mask", "av"};
  CHECK(strdist_nearest("sotfmax", 7, names, 4, 2, false) == names[1], "nearest");
  CHECK(strdist_nearest("zzzzzzz", 7, names, 4, 2, false) == NULL, "none near");
  CHECK(strdist_nearest("mas", 3, names, 4, 2, false) == names[2], "the nearest, not the first within reach");

  uint64_t r = rng_seed(14);
  int wrong = 0;
  for (int t = 0; t < 200000; t++) {
    char a[16], b[16];
    int n = (int)(rng_u32(&r) % 12), m = (int)(rng_u32(&r) % 12);
    for (int i = 0; i < n; i++) a[i] = (char)('a' + rng_u32(&r) % 3); // few letters: many near pairs
    for (int i = 0; i < m; i++) b[i] = (char)('a' + rng_u32(&r) % 3);
    a[n] = b[m] = 0;
    int limit = (int)(rng_u32(&r) % 6), want = plain(a, b);
    if (want > limit) want = limit + 1;
    if (strdist_bound(strdist_letters(a, strlen(a)), strdist_letters(b, strlen(b))) > plain(a, b) &&
        wrong++ < 5)
      CHECK(0, "\"%s\" vs \"%s\": the letters' bound is over the distance", a, b);
    if (dist(a, b, limit, false) != want && wrong++ < 5)
      CHECK(0, "\"%s\" vs \"%s\", limit %d: %d, expected %d", a, b, limit, dist(a, b, limit, false), want);
  }
  CHECK(wrong == 0, "%d random pairs disagree with the full table", wrong);
  return check_exit("test_strdist");
}
