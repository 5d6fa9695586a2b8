// strdist.c -- see strdist.h.
#include "strdist.h"

#include <string.h>

static char fold(char c, bool fold_case) {
  return fold_case && c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

int strdist(const char *a, size_t n, const char *b, size_t m, int limit, bool fold_case) {
  if (limit < 0) limit = 0;
  if (n > STRDIST_MAX_LEN || m > STRDIST_MAX_LEN) return limit + 1;
  if ((n > m ? n - m : m - n) > (size_t)limit) return limit + 1; // that many insertions at least
  // d[i][j]: the distance between a[0..i) and b[0..j); three rows are enough for the swap. Only
  // the band |i - j| <= limit is computed: a cell outside it is over the limit (that many
  // insertions or deletions), and a cell inside gets from outside only by an insertion or a
  // deletion (+1), so every value within the limit is exact. The cells just outside the band
  // hold limit + 1 ("over").
  int over = limit + 1;
  int d[3][STRDIST_MAX_LEN + 2];
  for (size_t j = 0; j <= m; j++) d[0][j] = j <= (size_t)limit ? (int)j : over;
  int prev_min = 0;
  for (size_t i = 1; i <= n; i++) {
    int *cur = d[i % 3], *up = d[(i - 1) % 3], *up2 = d[(i + 1) % 3]; // (i + 1) % 3 == (i - 2) % 3
    char ai = fold(a[i - 1], fold_case);
    size_t lo = i > (size_t)limit ? i - (size_t)limit : 1, hi = i + (size_t)limit < m ? i + (size_t)limit : m;
    cur[0] = i <= (size_t)limit ? (int)i : over;
    cur[lo - 1] = lo - 1 == 0 ? cur[0] : over;
    int row_min = lo == 1 ? cur[0] : over;
    for (size_t j = lo; j <= hi; j++) {
      char bj = fold(b[j - 1], fold_case);
      int best = up[j - 1] + (ai != bj);
      if (up[j] + 1 < best) best = up[j] + 1;
      if (cur[j - 1] + 1 < best) best = cur[j - 1] + 1;
      if (i > 1 && j > 1 && ai == fold(b[j - 2], fold_case) && fold(a[i - 2], fold_case) == bj &&
          up2[j - 2] + 1 < best)
        best = up2[j - 2] + 1;
      cur[j] = best;
      if (best < row_min) row_min = best;
    }
    cur[hi + 1] = over; // the next row reads it as up[j] at the end of its band
    // a cell comes from the row above (+0 or +1) or, by a swap, from two rows above (+1): once
    // two rows in a row are over the limit, every later one is too
    if (row_min > limit && prev_min > limit) return limit + 1;
    prev_min = row_min;
  }
  int r = d[n % 3][m];
  return r > limit ? limit + 1 : r;
}

const char *strdist_nearest(const char *a, size_t n, const char *const *names, int count, int limit,
                            bool fold_case) {
  const char *out = NULL;
  int best = limit + 1;
  for (int i = 0; i < count; i++) {
    int d = strdist(a, n, names[i], strlen(names[i]), best == limit + 1 ? limit : best - 1, fold_case);
    if (d < best) best = d, out = names[i];
  }
  return out;
}
