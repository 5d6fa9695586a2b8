// test_flatzip.c -- the PNG data encoder: every stream it writes inflates (zlib) back to exactly
// its input, with a correct adler32, for every row length and content; flat pictures get small.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "check.h"
#include "flatzip.h"
#include "rng.h"

// Encodes h rows of `row` bytes from data, inflates the result with zlib, compares.
// Returns the compressed size (0 on failure).
static size_t roundtrip(const uint8_t *data, size_t row, size_t h, const char *what) {
  FlatZip z;
  CHECK(flatzip_begin(&z, row), "%s: begin", what);
  for (size_t y = 0; y < h; y++) {
    memcpy(z.cur, data + y * row, row);
    CHECK(flatzip_row(&z), "%s: row %zu", what, y);
  }
  uint8_t *out = NULL;
  size_t len = 0;
  CHECK(flatzip_end(&z, &out, &len), "%s: end", what);
  size_t n = row * h;
  uint8_t *back = malloc(n + 1);
  uLongf got = (uLongf)n + 1;
  int rc = uncompress(back, &got, out, (uLong)len); // checks the header and the adler32 too
  CHECK(rc == Z_OK, "%s: zlib says %d (%s)", what, rc, rc == Z_DATA_ERROR ? "data error" : "");
  CHECK(got == n, "%s: inflated to %lu bytes, want %zu", what, (unsigned long)got, n);
  CHECK(rc != Z_OK || got != n || memcmp(back, data, n) == 0, "%s: bytes differ after inflate", what);
  free(back);
  free(out);
  return rc == Z_OK ? len : 0;
}

// A picture like an exported heatmap: flat background, blocks of colour, a few "glyphs".
static void fill_heatmap(uint8_t *d, size_t w, size_t h, uint64_t *r) {
  size_t row = 1 + 3 * w;
  for (size_t y = 0; y < h; y++) {
    d[y * row] = 0;
    for (size_t x = 0; x < w; x++) {
      uint8_t *p = d + y * row + 1 + 3 * x;
      int cell = (int)((x / 40) * 7 + (y / 30) * 13) % 256;
      bool in_map = x > w / 4 && x < 3 * w / 4 && y > h / 4 && y < 3 * h / 4;
      p[0] = in_map ? (uint8_t)cell : 250, p[1] = in_map ? (uint8_t)(255 - cell) : 250, p[2] = 250;
      if (in_map && x % 40 > 10 && x % 40 < 20 && y % 30 > 10 && y % 30 < 18) // anti-aliased text
        p[0] = (uint8_t)(rng_u32(r) & 255);
    }
  }
}

int main(void) {
  uint64_t r = rng_seed(7);
  // Every length of row from 1 to 40 (shorter than a pixel, around the minimum match of 4)
  // and a few long ones: random bytes (no matches: literals only, the buffer grows), one
  // repeated byte (runs), and rows repeating the row above with a few changes.
  size_t rows[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 40, 259, 5761, 32768, 32769, 40000};
  for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
    size_t row = rows[k], h = row > 1000 ? 9 : 50, n = row * h;
    uint8_t *d = malloc(n);
    char what[64];
    for (size_t i = 0; i < n; i++) d[i] = (uint8_t)rng_u32(&r);
    snprintf(what, sizeof what, "random, row %zu", row);
    roundtrip(d, row, h, what);
    memset(d, 0xAB, n);
    snprintf(what, sizeof what, "flat, row %zu", row);
    size_t flat = roundtrip(d, row, h, what);
    if (row >= 16) // matches stay inside a row: shorter rows are mostly literals
      CHECK(flat > 0 && flat < 64 + n / 10, "flat rows compress: %zu bytes for %zu", flat, n);
    for (size_t i = 0; i < n; i++) d[i] = i < row ? (uint8_t)rng_u32(&r) : d[i - row];
    for (size_t i = 0; i < n / 50 + 1; i++) d[rng_u32(&r) % n] ^= 0x5A;
    snprintf(what, sizeof what, "repeating rows, row %zu", row);
    roundtrip(d, row, h, what);
    for (size_t y = 1; y < h; y++) // runs of rows equal to the row above (the encoder's shortcut)
      if (y % 7 != 3) memcpy(d + y * row, d + (y - 1) * row, row);
    snprintf(what, sizeof what, "rows equal to the row above, row %zu", row);
    roundtrip(d, row, h, what);
    free(d);
  }
  // Byte frequencies in the Fibonacci series: an optimal code would need lengths over 15 bits,
  // deflate's limit, so the encoder must shorten them and keep the code complete.
  {
    size_t fib[30] = {1, 1}, n = 0; // 1.3 MB
    for (int k = 2; k < 30; k++) fib[k] = fib[k - 1] + fib[k - 2];
    for (int k = 0; k < 30; k++) n += fib[k];
    uint8_t *d = malloc(n);
    size_t at = 0;
    for (int k = 0; k < 30; k++)
      for (size_t c = 0; c < fib[k]; c++) d[at++] = (uint8_t)(k * 8);
    for (size_t i = n - 1; i > 0; i--) { // shuffled: few runs, so nearly all are literals
      size_t j = rng_u32(&r) % (i + 1);
      uint8_t t = d[i];
      d[i] = d[j], d[j] = t;
    }
    roundtrip(d, n, 1, "Fibonacci byte frequencies (codes longer than 15 bits)");
    free(d);
  }
  // No rows at all: an empty but valid stream.
  uint8_t none[1] = {0};
  roundtrip(none, 5, 0, "no rows");
  // A 1920x1080 heatmap-like picture: round trip, and much smaller than its 6.2 MB.
  size_t w = 1920, h = 1080, row = 1 + 3 * w;
  uint8_t *d = malloc(row * h);
  fill_heatmap(d, w, h, &r);
  size_t len = roundtrip(d, row, h, "heatmap 1920x1080");
  CHECK(len > 0 && len < row * h / 10, "heatmap: %zu bytes of %zu", len, row * h);
  free(d);
  // Random pictures of random sizes and contents, many of them.
  for (int t = 0; t < 300; t++) {
    size_t tw = 1 + rng_u32(&r) % 70, th = 1 + rng_u32(&r) % 20, trow = 1 + 3 * tw;
    uint8_t *p = malloc(trow * th);
    int levels = 1 + (int)(rng_u32(&r) % 4); // few levels: many matches of every length
    for (size_t i = 0; i < trow * th; i++) p[i] = (uint8_t)(rng_u32(&r) % (uint32_t)levels);
    for (size_t y = 1; y < th; y++) // rows that repeat the row above, one or several times
      if (rng_u32(&r) % 3) memcpy(p + y * trow, p + (y - 1) * trow, trow);
    char what[64];
    snprintf(what, sizeof what, "random picture %d (%zux%zu, %d levels)", t, tw, th, levels);
    roundtrip(p, trow, th, what);
    free(p);
  }
  return check_exit("test_flatzip");
}
