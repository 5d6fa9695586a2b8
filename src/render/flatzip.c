// flatzip.c -- see flatzip.h. References: RFC 1950 (zlib stream), RFC 1951 (deflate).
#include "flatzip.h"

#include <stdlib.h>
#include <string.h>

enum { MIN_MATCH = 4, MAX_DIST = 32768 };
#define MAX_MATCH FLATZIP_MAX_MATCH

static void put(FlatZipBits *b, uint32_t value, int n) { // n <= 32
  b->acc |= (uint64_t)value << b->nbits;
  b->nbits += n;
  if (b->nbits >= 32) {
    for (int k = 0; k < 4; k++) *b->p++ = (uint8_t)(b->acc >> (8 * k));
    b->acc >>= 32;
    b->nbits -= 32;
  }
}

static void flush(FlatZipBits *b) {
  while (b->nbits > 0) {
    *b->p++ = (uint8_t)b->acc;
    b->acc >>= 8;
    b->nbits -= 8;
  }
  b->nbits = 0;
  b->acc = 0;
}

static uint32_t reverse(uint32_t code, int n) {
  uint32_t r = 0;
  for (int k = 0; k < n; k++) r |= ((code >> k) & 1u) << (n - 1 - k);
  return r;
}

// The fixed literal/length code of RFC 1951 3.2.6.
static void fixed_litlen(int sym, uint32_t *code, int *len) {
  if (sym < 144)
    *code = 0x30u + (uint32_t)sym, *len = 8;
  else if (sym < 256)
    *code = 0x190u + (uint32_t)(sym - 144), *len = 9;
  else if (sym < 280)
    *code = (uint32_t)(sym - 256), *len = 7;
  else
    *code = 0xC0u + (uint32_t)(sym - 280), *len = 8;
  *code = reverse(*code, *len);
}

static const uint16_t LEN_BASE[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t LEN_EXTRA[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t DIST_BASE[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                       33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                       1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t DIST_EXTRA[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

static FlatZipCode length_code(int len) { // 3..258; 258 has its own symbol (285), not 284 + 31
  int i = len == MAX_MATCH ? 28 : 0;
  if (len < MAX_MATCH)
    while (i + 1 < 28 && LEN_BASE[i + 1] <= len) i++;
  uint32_t code;
  int n;
  fixed_litlen(257 + i, &code, &n);
  return (FlatZipCode){code | (uint32_t)(len - LEN_BASE[i]) << n, n + LEN_EXTRA[i]};
}

static FlatZipCode distance_code(int dist) { // 1..32768; fixed distance codes are 5 bits
  int i = 0;
  while (i + 1 < 30 && DIST_BASE[i + 1] <= dist) i++;
  return (FlatZipCode){reverse((uint32_t)i, 5) | (uint32_t)(dist - DIST_BASE[i]) << 5, 5 + DIST_EXTRA[i]};
}

// How many bytes from a equal those from b, up to max; eight at a time.
static size_t match_length(const uint8_t *a, const uint8_t *b, size_t max) {
  size_t l = 0;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  while (l + 8 <= max) {
    uint64_t x, y;
    memcpy(&x, a + l, 8);
    memcpy(&y, b + l, 8);
    if (x != y) return l + (size_t)__builtin_ctzll(x ^ y) / 8;
    l += 8;
  }
#endif
  while (l < max && a[l] == b[l]) l++;
  return l;
}

// adler32 (RFC 1950 8.2), 4x faster than zlib's: in blocks short enough that 32-bit sums
// cannot overflow (5552 bytes, zlib's NMAX), 16 lanes that the compiler vectorizes. Lane k
// keeps a[k], the sum of the bytes at positions = k (mod 16), and c[k], the sum of a[k] over
// the chunks before; a byte at position p of a block of len bytes adds (len - p) times to s2,
// which is 16 * sum(c) + sum((16 - k) a[k]) in all.
static uint32_t adler32_update(uint32_t adler, const uint8_t *p, size_t n) {
  enum { BASE = 65521, NMAX = 5552 };
  uint64_t s1 = adler & 0xffff, s2 = adler >> 16;
  while (n >= 16) {
    size_t len = (n < NMAX ? n : NMAX) & ~(size_t)15;
    uint32_t a[16] = {0}, c[16] = {0};
    for (size_t j = 0; j < len; j += 16)
      for (int k = 0; k < 16; k++) c[k] += a[k], a[k] += p[j + k];
    uint64_t sa = 0, sc = 0, sw = 0;
    for (int k = 0; k < 16; k++) sa += a[k], sc += c[k], sw += (uint64_t)(16 - k) * a[k];
    s2 = (s2 + len * s1 + 16 * sc + sw) % BASE;
    s1 = (s1 + sa) % BASE;
    p += len, n -= len;
  }
  while (n--) s1 += *p++, s2 += s1; // fewer than 16 bytes: no overflow
  return (uint32_t)((s2 % BASE) << 16 | (s1 % BASE));
}

bool flatzip_begin(FlatZip *z, size_t row) {
  memset(z, 0, sizeof *z);
  z->row = row;
  z->rows = calloc(2 * (row ? row : 1), 1);
  z->cap = 64 * 1024 + 2 * row;
  z->out = malloc(z->cap);
  if (!z->rows || !z->out) {
    flatzip_free(z);
    return false;
  }
  z->cur = z->rows;
  z->adler = 1; // adler32 of nothing
  for (int s = 0; s < 256; s++) fixed_litlen(s, &z->lit[s].bits, &z->lit[s].n);
  for (int l = 3; l <= MAX_MATCH; l++) z->len[l] = length_code(l);
  z->left = distance_code(3);
  z->up = distance_code(row > 0 && row <= MAX_DIST ? (int)row : 1);
  z->out[0] = 0x78, z->out[1] = 0x01; // deflate, 32 KiB window; (0x78 * 256 + 0x01) % 31 == 0
  z->bits = (FlatZipBits){z->out + 2, 0, 0};
  put(&z->bits, 1 | 1 << 1, 3); // BFINAL = 1, BTYPE = 01 (fixed Huffman codes)
  return true;
}

// Makes room for the worst case of n more input bytes: 9-bit literals, 64 bits of slack.
static bool reserve(FlatZip *z, size_t n) {
  size_t used = (size_t)(z->bits.p - z->out), need = used + n + n / 8 + 64;
  if (need <= z->cap) return true;
  size_t cap = z->cap;
  while (cap < need) cap *= 2;
  uint8_t *out = realloc(z->out, cap);
  if (!out) return false;
  z->out = out, z->cap = cap, z->bits.p = out + used;
  return true;
}

bool flatzip_row(FlatZip *z) {
  const uint8_t *cur = z->cur, *prev = z->have_prev ? (z->cur == z->rows ? z->rows + z->row : z->rows) : NULL;
  size_t n = z->row;
  if (!reserve(z, n)) return false;
  bool use_up = prev && n <= MAX_DIST;
  FlatZipBits *b = &z->bits;
  // Greedy: at each byte the longer of the two matches, if it is worth its ~20 bits.
  // Matches stay inside the row (both rows are in this small buffer, not the whole picture).
  for (size_t i = 0; i < n;) {
    size_t max = n - i < MAX_MATCH ? n - i : MAX_MATCH;
    size_t best = 0;
    const FlatZipCode *dist = NULL;
    if (i >= 3) {
      best = match_length(cur + i, cur + i - 3, max);
      dist = &z->left;
    }
    if (use_up && best < max) {
      size_t l = match_length(cur + i, prev + i, max);
      if (l > best) best = l, dist = &z->up;
    }
    if (best >= MIN_MATCH) {
      put(b, z->len[best].bits, z->len[best].n);
      put(b, dist->bits, dist->n);
      i += best;
    } else {
      put(b, z->lit[cur[i]].bits, z->lit[cur[i]].n);
      i++;
    }
  }
  z->adler = adler32_update(z->adler, cur, n);
  z->have_prev = true;
  z->cur = z->cur == z->rows ? z->rows + z->row : z->rows; // this row becomes the one above
  return true;
}

bool flatzip_end(FlatZip *z, uint8_t **out, size_t *out_len) {
  if (!reserve(z, 0)) {
    flatzip_free(z);
    return false;
  }
  FlatZipCode eob;
  fixed_litlen(256, &eob.bits, &eob.n);
  put(&z->bits, eob.bits, eob.n);
  flush(&z->bits);
  for (int k = 3; k >= 0; k--) *z->bits.p++ = (uint8_t)(z->adler >> (8 * k));
  *out = z->out;
  *out_len = (size_t)(z->bits.p - z->out);
  z->out = NULL;
  flatzip_free(z);
  return true;
}

void flatzip_free(FlatZip *z) {
  free(z->rows);
  free(z->out);
  z->rows = z->out = z->cur = NULL;
}
