// flatzip.c -- see flatzip.h. References: RFC 1950 (zlib stream), RFC 1951 (deflate).
#include "flatzip.h"

#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h> // match_length
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h> // adler32_avx2
#define SF_ADLER_AVX2 1
#endif

enum {
  MIN_LEFT = 3,      // a match with the pixel to the left: distance 3 costs a few bits, no extra
  MIN_UP = 4,        // with the pixel above: its distance has 11 extra bits (a 1920-pixel row)
  MAX_MATCH = 258,   // deflate's longest
  MAX_DIST = 32768,  // deflate's window
  N_LITLEN = 286,    // literal/length symbols: bytes, end of block (256), lengths (257..285)
  N_DIST = 30,       // distance symbols
  N_CLEN = 19,       // code-length symbols of the block header
  MAX_BITS = 15,     // longest literal/length or distance code
  MAX_CLEN_BITS = 7, // longest code-length code
  BLOCK_SYMS = 16384 // symbols per block (zlib's too): codes follow the picture's parts
};

// A symbol found by flatzip_row: a literal byte, or a match (MATCH | UP for "the row above").
#define SYM_MATCH 0x80000000u
#define SYM_UP 0x10000u

static const uint16_t LEN_BASE[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t LEN_EXTRA[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t DIST_BASE[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                       33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                       1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t DIST_EXTRA[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
static const uint8_t CLEN_ORDER[N_CLEN] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

static int length_index(int len) { // 3..258 -> 0..28; 258 has its own symbol (285), not 284 + 31
  if (len == MAX_MATCH) return 28;
  int i = 0;
  while (i + 1 < 28 && LEN_BASE[i + 1] <= len) i++;
  return i;
}

static int dist_index(int dist) { // 1..32768 -> 0..29
  int i = 0;
  while (i + 1 < 30 && DIST_BASE[i + 1] <= dist) i++;
  return i;
}

// ---------------------------------------------------------------- finding matches

// How many bytes from a equal those from b, up to max: sixteen at a time where SSE2 is (every
// x86-64), else eight. Matches in these pictures are long (up to 258 bytes: runs of one colour,
// rows that repeat), so the width of the compare is most of the finder's speed.
static size_t match_length(const uint8_t *a, const uint8_t *b, size_t max) {
  size_t l = 0;
#if defined(__SSE2__)
  while (l + 16 <= max) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(a + l));
    __m128i y = _mm_loadu_si128((const __m128i *)(const void *)(b + l));
    unsigned diff = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) ^ 0xFFFFu;
    if (diff) return l + (size_t)__builtin_ctz(diff);
    l += 16;
  }
#endif
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

// The longer of the matches of c with left and with up (ties: left's), up to max; *above tells
// which. Both are compared at once, 16 bytes at a time, until the first of them ends: the
// other is the longer and goes on alone (the cost is the longer match, not both).
static size_t longer_match(const uint8_t *c, const uint8_t *left, const uint8_t *up, size_t max,
                           bool *above) {
  size_t l = 0;
#if defined(__SSE2__)
  for (; l + 16 <= max; l += 16) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(c + l));
    __m128i y = _mm_loadu_si128((const __m128i *)(const void *)(left + l));
    __m128i u = _mm_loadu_si128((const __m128i *)(const void *)(up + l));
    unsigned dl = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) ^ 0xFFFFu;
    unsigned du = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, u)) ^ 0xFFFFu;
    if (!(dl | du)) continue;
    size_t nl = dl ? l + (size_t)__builtin_ctz(dl) : max, nu = du ? l + (size_t)__builtin_ctz(du) : max;
    if (nu > nl) { // left ended first: the match above is the longer
      *above = true;
      return du ? nu : l + 16 + match_length(c + l + 16, up + l + 16, max - l - 16);
    }
    *above = false;
    return dl ? nl : l + 16 + match_length(c + l + 16, left + l + 16, max - l - 16);
  }
#endif
  size_t nl = l + match_length(c + l, left + l, max - l), nu = l + match_length(c + l, up + l, max - l);
  *above = nu > nl;
  return nu > nl ? nu : nl;
}

// adler32 (RFC 1950 8.2), 4x faster than zlib's: in blocks short enough that 32-bit sums
// cannot overflow (5552 bytes, zlib's NMAX), 16 lanes that the compiler vectorizes. Lane k
// keeps a[k], the sum of the bytes at positions = k (mod 16), and c[k], the sum of a[k] over
// the chunks before; a byte at position p of a block of len bytes adds (len - p) times to s2,
// which is 16 * sum(c) + sum((16 - k) a[k]) in all.
static uint32_t adler32_portable(uint32_t adler, const uint8_t *p, size_t n) {
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

#if SF_ADLER_AVX2
// The same sums 32 bytes at a time (AVX2, 4x the portable loop): per block of 32 bytes, s1
// gains their sum (vpsadbw) and s2 gains 32 * s1 before the block plus sum((32 - k) * byte k)
// (vpmaddubsw by the weights 32..1, then vpmaddwd by ones). Blocks of at most 173 * 32 bytes
// keep every 32-bit lane below 2^31 (the sums of s1 before each block, the largest, reach
// 173 * 173 * 2040 * 32 < 2^31) before they are reduced modulo 65521.
__attribute__((target("avx2"))) static uint32_t adler32_avx2(uint32_t adler, const uint8_t *p, size_t n) {
  enum { BASE = 65521, BLOCKS = 173 };
  uint64_t s1 = adler & 0xffff, s2 = adler >> 16;
  const __m256i weights = _mm256_setr_epi8(32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16,
                                           15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1);
  const __m256i ones = _mm256_set1_epi16(1), zero = _mm256_setzero_si256();
  while (n >= 32) {
    size_t blocks = n / 32 < BLOCKS ? n / 32 : BLOCKS;
    n -= blocks * 32;
    s2 += s1 * 32 * blocks;
    __m256i vs1 = zero, vbefore = zero, vs2 = zero; // vbefore: the sum of vs1 before each block
    for (size_t b = 0; b < blocks; b++, p += 32) {
      __m256i bytes = _mm256_loadu_si256((const __m256i *)(const void *)p);
      vbefore = _mm256_add_epi32(vbefore, vs1);
      vs1 = _mm256_add_epi32(vs1, _mm256_sad_epu8(bytes, zero));
      vs2 = _mm256_add_epi32(vs2, _mm256_madd_epi16(_mm256_maddubs_epi16(bytes, weights), ones));
    }
    vs2 = _mm256_add_epi32(vs2, _mm256_slli_epi32(vbefore, 5));
    uint32_t a[8], c[8];
    _mm256_storeu_si256((__m256i *)(void *)a, vs1);
    _mm256_storeu_si256((__m256i *)(void *)c, vs2);
    for (int k = 0; k < 8; k++) s1 += a[k], s2 += c[k];
    s1 %= BASE, s2 %= BASE;
  }
  return adler32_portable((uint32_t)(s2 << 16 | s1), p, n);
}
#endif

static uint32_t adler32_update(uint32_t adler, const uint8_t *p, size_t n) {
#if SF_ADLER_AVX2
  if (__builtin_cpu_supports("avx2")) return adler32_avx2(adler, p, n);
#endif
  return adler32_portable(adler, p, n);
}

bool flatzip_begin(FlatZip *z, size_t row) {
  memset(z, 0, sizeof *z);
  z->row = row;
  z->rows = calloc(2 * (row ? row : 1), 1);
  z->cap_syms = 4096 + row;
  z->syms = malloc(sizeof(uint32_t) * z->cap_syms);
  if (!z->rows || !z->syms) {
    flatzip_free(z);
    return false;
  }
  z->cur = z->rows;
  z->adler = 1; // adler32 of nothing
  return true;
}

bool flatzip_row(FlatZip *z) {
  const uint8_t *cur = z->cur, *prev = z->have_prev ? (z->cur == z->rows ? z->rows + z->row : z->rows) : NULL;
  size_t n = z->row;
  if (z->n_syms + n > z->cap_syms) { // at most one symbol per byte
    size_t cap = z->cap_syms * 2 > z->n_syms + n ? z->cap_syms * 2 : z->n_syms + n;
    uint32_t *syms = realloc(z->syms, sizeof(uint32_t) * cap);
    if (!syms) return false;
    z->syms = syms, z->cap_syms = cap;
  }
  bool use_up = prev && n <= MAX_DIST;
  uint32_t *out = z->syms + z->n_syms;
  bool repeat = use_up && memcmp(cur, prev, n) == 0;
  if (repeat && z->prev_repeat) {
    // The row above repeated its own row above, and this one repeats it: the search below would
    // find exactly the symbols it found (same bytes, the same matches above), so copy them.
    memcpy(out, z->syms + z->prev_start, sizeof(uint32_t) * z->prev_count);
    out += z->prev_count;
  } else if (repeat) {
    // A row that repeats the one above (most rows of a cell, of a margin): the match above is
    // as long as a match can be everywhere, so the greedy search below takes it unless the run
    // to the left is as long; only that one is checked (memcmp found the other, 4x faster).
    size_t i = 0;
    for (; i + MIN_UP <= n; i += MAX_MATCH) {
      size_t max = n - i < MAX_MATCH ? n - i : MAX_MATCH;
      bool left = i >= 3 && match_length(cur + i, cur + i - 3, max) == max;
      *out++ = SYM_MATCH | (left ? 0 : SYM_UP) | (uint32_t)max;
    }
    while (i < n) *out++ = cur[i++]; // fewer than MIN_UP bytes left
  }
  // Greedy: at each byte the longer of the two matches, if it is worth its ~20 bits.
  // Matches stay inside the row (both rows are in this small buffer, not the whole picture).
  for (size_t i = repeat ? n : 0; i < n;) {
    size_t max = n - i < MAX_MATCH ? n - i : MAX_MATCH, best = 0;
    uint32_t up = 0;
    if (i >= 3 && use_up) {
      bool above;
      best = longer_match(cur + i, cur + i - 3, prev + i, max, &above);
      up = above ? SYM_UP : 0;
    } else if (i >= 3) {
      best = match_length(cur + i, cur + i - 3, max);
    } else if (use_up) {
      size_t l = match_length(cur + i, prev + i, max);
      if (l > best) best = l, up = SYM_UP;
    }
    if (up && best < MIN_UP && i >= 3) { // too short to pay the distance's extra bits: left?
      size_t l = match_length(cur + i, cur + i - 3, max);
      if (l >= MIN_LEFT) best = l, up = 0;
    }
    if (best >= (up ? MIN_UP : MIN_LEFT)) {
      *out++ = SYM_MATCH | up | (uint32_t)best;
      i += best;
    } else {
      *out++ = cur[i++];
    }
  }
  z->prev_start = z->n_syms, z->prev_count = (size_t)(out - z->syms) - z->n_syms, z->prev_repeat = repeat;
  z->n_syms = (size_t)(out - z->syms);
  z->adler = adler32_update(z->adler, cur, n);
  z->have_prev = true;
  z->cur = z->cur == z->rows ? z->rows + z->row : z->rows; // this row becomes the one above
  return true;
}

// ---------------------------------------------------------------- Huffman codes

// Moffat and Katajainen's in-place minimum-redundancy code: w holds n weights in ascending
// order; on return, w[i] is the code length of the i-th (the lightest get the longest).
static void min_redundancy(int *w, int n) {
  if (n == 1) {
    w[0] = 1;
    return;
  }
  w[0] += w[1];
  int root = 0, leaf = 2;
  for (int next = 1; next < n - 1; next++) { // build the tree: internal weights, parent links
    if (leaf >= n || w[root] < w[leaf])
      w[next] = w[root], w[root++] = next;
    else
      w[next] = w[leaf++];
    if (leaf >= n || (root < next && w[root] < w[leaf]))
      w[next] += w[root], w[root++] = next;
    else
      w[next] += w[leaf++];
  }
  w[n - 2] = 0;
  for (int next = n - 3; next >= 0; next--) w[next] = w[w[next]] + 1; // internal depths
  int avbl = 1, used = 0, depth = 0, root2 = n - 2, next = n - 1;
  while (avbl > 0) { // leaf depths
    while (root2 >= 0 && w[root2] == depth) used++, root2--;
    while (avbl > used) w[next--] = depth, avbl--;
    avbl = 2 * used, depth++, used = 0;
  }
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

// Code lengths (at most max_bits) for n symbols of frequencies freq; a complete code always
// (a lone symbol gets a partner), which every inflater accepts.
static void code_lengths(const uint32_t *freq, int n, int max_bits, uint8_t *len) {
  int sym[N_LITLEN], w[N_LITLEN], m = 0;
  memset(len, 0, (size_t)n);
  for (int s = 0; s < n; s++)
    if (freq[s]) sym[m++] = s;
  for (int s = 0; m < 2; s++) // fewer than two symbols: add unused ones
    if (!freq[s] && (m == 0 || sym[0] != s)) sym[m++] = s;
  uint64_t key[N_LITLEN]; // sort by frequency, ascending, ties by symbol: frequency << 9 | symbol
  for (int i = 0; i < m; i++) key[i] = (uint64_t)freq[sym[i]] << 9 | (uint64_t)sym[i];
  qsort(key, (size_t)m, sizeof key[0], cmp_u64);
  for (int i = 0; i < m; i++) sym[i] = (int)(key[i] & 0x1FF);
  for (int i = 0; i < m; i++) w[i] = freq[sym[i]] ? (int)freq[sym[i]] : 1;
  min_redundancy(w, m);
  // Too long codes: give them max_bits and lengthen shorter ones until the code is complete
  // again (Kraft sum 1), as miniz does; then hand the lengths out, shortest to the commonest.
  int count[N_LITLEN + 1] = {0};
  for (int i = 0; i < m; i++) count[w[i] < max_bits ? w[i] : max_bits]++;
  uint32_t total = 0;
  for (int b = max_bits; b > 0; b--) total += (uint32_t)count[b] << (max_bits - b);
  while (total != 1u << max_bits) {
    count[max_bits]--;
    for (int b = max_bits - 1; b > 0; b--)
      if (count[b]) {
        count[b]--, count[b + 1] += 2;
        break;
      }
    total--;
  }
  for (int b = 1, i = m - 1; b <= max_bits; b++)
    for (int k = count[b]; k > 0; k--) len[sym[i--]] = (uint8_t)b;
}

// Canonical codes from lengths (RFC 1951 3.2.2), bit-reversed for writing LSB first.
static void canonical_codes(const uint8_t *len, int n, uint16_t *code) {
  int count[MAX_BITS + 1] = {0};
  uint32_t next[MAX_BITS + 1] = {0};
  for (int s = 0; s < n; s++) count[len[s]]++;
  count[0] = 0;
  for (int b = 1, c = 0; b <= MAX_BITS; b++) next[b] = (uint32_t)(c = (c + count[b - 1]) << 1);
  for (int s = 0; s < n; s++) {
    if (!len[s]) continue;
    uint32_t c = next[len[s]]++, r = 0;
    for (int k = 0; k < len[s]; k++) r |= ((c >> k) & 1u) << (len[s] - 1 - k);
    code[s] = (uint16_t)r;
  }
}

// ---------------------------------------------------------------- writing the block

typedef struct {
  uint8_t *p;
  uint64_t acc; // bits not yet written, the first in the lowest bit; fewer than 8 between puts
  int nbits;
} Bits;

// Appends n bits (n <= 56) of value, first bit lowest. Branch-free: the 8 bytes of the
// accumulator are stored every time and p moves over the whole ones, so the buffer needs 8
// bytes to spare past the last bit.
static inline void put(Bits *b, uint64_t value, int n) {
  b->acc |= value << b->nbits;
  b->nbits += n;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(b->p, &b->acc, 8);
#else
  for (int k = 0; k < 8; k++) b->p[k] = (uint8_t)(b->acc >> (8 * k));
#endif
  int bytes = b->nbits >> 3; // at most 7: nbits < 8 + 56
  b->p += bytes;
  b->acc = bytes ? b->acc >> (8 * bytes) : b->acc;
  b->nbits &= 7;
}

static void flush(Bits *b) {
  if (b->nbits > 0) *b->p++ = (uint8_t)b->acc;
  b->nbits = 0, b->acc = 0;
}

// The code lengths of the two alphabets, run-length coded with the symbols 16 (repeat the
// previous 3-6 times), 17 (3-10 zeros) and 18 (11-138 zeros): rle[i] = symbol | extra << 8.
static int rle_lengths(const uint8_t *lens, int n, uint16_t *rle) {
  int k = 0;
  for (int i = 0; i < n;) {
    int v = lens[i], run = 1;
    while (i + run < n && lens[i + run] == v) run++;
    i += run;
    if (v == 0) {
      for (; run >= 11; run -= run < 138 ? run : 138)
        rle[k++] = (uint16_t)(18 | ((run < 138 ? run : 138) - 11) << 8);
      if (run >= 3) rle[k++] = (uint16_t)(17 | (run - 3) << 8), run = 0;
    } else {
      rle[k++] = (uint16_t)v, run--;
      for (; run >= 3; run -= run < 6 ? run : 6) rle[k++] = (uint16_t)(16 | ((run < 6 ? run : 6) - 3) << 8);
    }
    while (run-- > 0) rle[k++] = (uint16_t)v;
  }
  return k;
}

// One block's codes (BTYPE 10, RFC 1951 3.2.7), made for the frequencies of its symbols, and its
// exact size in bits.
typedef struct {
  uint8_t llen[N_LITLEN + N_DIST], clen[N_CLEN]; // code lengths: literal/length, then distance
  uint16_t lcode[N_LITLEN], dcode[N_DIST], ccode[N_CLEN];
  uint16_t rle[N_LITLEN + N_DIST]; // the header's code lengths, run-length coded
  int n_rle, hlit, hdist, hclen;
  uint64_t bits;
} Block;

static const int RLE_EXTRA[3] = {2, 3, 7};

static void plan_block(const uint32_t *syms, size_t n, const uint8_t *lindex, int d_left, int d_up,
                       Block *k) {
  uint32_t flit[N_LITLEN] = {0}, fdist[N_DIST] = {0};
  for (size_t i = 0; i < n; i++) {
    uint32_t s = syms[i];
    if (s & SYM_MATCH) {
      flit[257 + lindex[s & 0x1FF]]++;
      fdist[s & SYM_UP ? d_up : d_left]++;
    } else {
      flit[s]++;
    }
  }
  flit[256] = 1; // end of block
  uint8_t *llen = k->llen, *dlen = k->llen + N_LITLEN;
  memset(k->lcode, 0, sizeof k->lcode), memset(k->dcode, 0, sizeof k->dcode),
      memset(k->ccode, 0, sizeof k->ccode);
  code_lengths(flit, N_LITLEN, MAX_BITS, llen);
  code_lengths(fdist, N_DIST, MAX_BITS, dlen);
  int hlit = N_LITLEN, hdist = N_DIST, hclen = N_CLEN;
  while (hlit > 257 && !llen[hlit - 1]) hlit--;
  while (hdist > 1 && !dlen[hdist - 1]) hdist--;
  uint8_t both[N_LITLEN + N_DIST]; // the lengths as the header sends them: hlit, then hdist
  memcpy(both, llen, (size_t)hlit);
  memcpy(both + hlit, dlen, (size_t)hdist);
  k->n_rle = rle_lengths(both, hlit + hdist, k->rle);
  uint32_t fclen[N_CLEN] = {0};
  for (int i = 0; i < k->n_rle; i++) fclen[k->rle[i] & 0xFF]++;
  code_lengths(fclen, N_CLEN, MAX_CLEN_BITS, k->clen);
  while (hclen > 4 && !k->clen[CLEN_ORDER[hclen - 1]]) hclen--;
  canonical_codes(llen, N_LITLEN, k->lcode);
  canonical_codes(dlen, N_DIST, k->dcode);
  canonical_codes(k->clen, N_CLEN, k->ccode);
  k->hlit = hlit, k->hdist = hdist, k->hclen = hclen;
  uint64_t bits = 3 + 5 + 5 + 4 + 3 * (uint64_t)hclen; // the exact size: header, symbols, end
  for (int i = 0; i < k->n_rle; i++) {
    int c = k->rle[i] & 0xFF;
    bits += k->clen[c] + (c >= 16 ? RLE_EXTRA[c - 16] : 0);
  }
  for (int c = 0; c < N_LITLEN; c++)
    bits += (uint64_t)flit[c] * (llen[c] + (c >= 257 ? LEN_EXTRA[c - 257] : 0));
  for (int c = 0; c < N_DIST; c++) bits += (uint64_t)fdist[c] * (dlen[c] + DIST_EXTRA[c]);
  k->bits = bits;
}

static void write_block(Bits *b, const Block *k, const uint32_t *syms, size_t n, bool last,
                        const uint8_t *lindex, int d_left, int d_up, int up_dist) {
  const uint8_t *llen = k->llen, *dlen = k->llen + N_LITLEN;
  put(b, (last ? 1u : 0u) | 2 << 1, 3); // BFINAL, BTYPE = 10 (codes of our own)
  put(b, (uint32_t)(k->hlit - 257), 5);
  put(b, (uint32_t)(k->hdist - 1), 5);
  put(b, (uint32_t)(k->hclen - 4), 4);
  for (int i = 0; i < k->hclen; i++) put(b, k->clen[CLEN_ORDER[i]], 3);
  for (int i = 0; i < k->n_rle; i++) {
    int c = k->rle[i] & 0xFF;
    put(b, k->ccode[c], k->clen[c]);
    if (c >= 16) put(b, (uint32_t)(k->rle[i] >> 8), RLE_EXTRA[c - 16]);
  }
  // Each symbol as one put: a literal's code; a match's length code, its extra bits, its
  // distance code and extra bits (at most 15 + 5 + 15 + 13 bits), for either distance.
  uint64_t dbits[2] = {k->dcode[d_left] | (uint64_t)(3 - DIST_BASE[d_left]) << dlen[d_left],
                       k->dcode[d_up] | (uint64_t)(up_dist - DIST_BASE[d_up]) << dlen[d_up]};
  int dn[2] = {dlen[d_left] + DIST_EXTRA[d_left], dlen[d_up] + DIST_EXTRA[d_up]};
  uint64_t mbits[2][MAX_MATCH + 1] = {{0}};
  uint8_t mn[2][MAX_MATCH + 1] = {{0}};
  for (int l = 3; l <= MAX_MATCH; l++) {
    int li = lindex[l], sym = 257 + li, nb = llen[sym] + LEN_EXTRA[li];
    uint64_t code = k->lcode[sym] | (uint64_t)(l - LEN_BASE[li]) << llen[sym];
    for (int up = 0; up < 2; up++) mbits[up][l] = code | dbits[up] << nb, mn[up][l] = (uint8_t)(nb + dn[up]);
  }
  for (size_t i = 0; i < n; i++) {
    uint32_t s = syms[i];
    if (s & SYM_MATCH) {
      int up = (s & SYM_UP) != 0;
      put(b, mbits[up][s & 0x1FF], mn[up][s & 0x1FF]);
    } else {
      put(b, k->lcode[s], llen[s]);
    }
  }
  put(b, k->lcode[256], llen[256]);
}

bool flatzip_end(FlatZip *z, uint8_t **out, size_t *out_len) {
  uint8_t lindex[MAX_MATCH + 1] = {0}; // match length -> its length symbol's index (0..28)
  for (int l = 3; l <= MAX_MATCH; l++) lindex[l] = (uint8_t)length_index(l);
  int up_dist = z->row > 0 && z->row <= MAX_DIST ? (int)z->row : 1; // 1: no "row above" matches
  int d_left = dist_index(3), d_up = dist_index(up_dist);
  // Blocks of BLOCK_SYMS symbols, each with codes of its own: the top of a picture (titles) and
  // its middle (a heatmap's colours) use different bytes.
  size_t n_blocks = z->n_syms ? (z->n_syms + BLOCK_SYMS - 1) / BLOCK_SYMS : 1;
  Block *blocks = malloc(sizeof(Block) * n_blocks);
  if (!blocks) {
    flatzip_free(z);
    return false;
  }
  uint64_t bits = 0;
  for (size_t k = 0; k < n_blocks; k++) {
    size_t a = k * BLOCK_SYMS, n = z->n_syms - a < BLOCK_SYMS ? z->n_syms - a : BLOCK_SYMS;
    plan_block(z->syms + a, n, lindex, d_left, d_up, &blocks[k]);
    bits += blocks[k].bits;
  }
  size_t cap = 2 + (size_t)(bits / 8) + 8 + 4; // then the buffer, written once
  uint8_t *buf = malloc(cap);
  if (!buf) {
    free(blocks);
    flatzip_free(z);
    return false;
  }
  buf[0] = 0x78, buf[1] = 0x01; // deflate, 32 KiB window; (0x78 * 256 + 0x01) % 31 == 0
  Bits b = {buf + 2, 0, 0};
  for (size_t k = 0; k < n_blocks; k++) {
    size_t a = k * BLOCK_SYMS, n = z->n_syms - a < BLOCK_SYMS ? z->n_syms - a : BLOCK_SYMS;
    write_block(&b, &blocks[k], z->syms + a, n, k + 1 == n_blocks, lindex, d_left, d_up, up_dist);
  }
  flush(&b);
  for (int k = 3; k >= 0; k--) *b.p++ = (uint8_t)(z->adler >> (8 * k));
  *out = buf;
  *out_len = (size_t)(b.p - buf);
  free(blocks);
  flatzip_free(z);
  return true;
}

void flatzip_free(FlatZip *z) {
  free(z->rows);
  free(z->syms);
  z->rows = z->cur = NULL;
  z->syms = NULL;
}
