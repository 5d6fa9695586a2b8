// pngio.c -- see pngio.h.
#include "pngio.h"

#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h> // crc32
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h> // rgba_to_rgb_ssse3
#define SF_PNG_SSSE3 1
#endif

#include "fileio.h"  // defines: AtomicFile, atomic_open, atomic_commit
#include "flatzip.h" // defines: FlatZip, flatzip_begin, flatzip_row, flatzip_end
#include "utf8.h"    // defines: utf8_seq_len

// A chunk: length, type, data, CRC of type and data (PNG spec 5.3), big-endian numbers.
static void put_u32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

static void write_chunk(FILE *fp, const char *type, const void *data, size_t len) {
  uint8_t head[8], tail[4];
  put_u32(head, (uint32_t)len);
  memcpy(head + 4, type, 4);
  uLong crc = crc32(crc32(0, NULL, 0), head + 4, 4);
  if (len) crc = crc32(crc, data, (uInt)len);
  put_u32(tail, (uint32_t)crc);
  fwrite(head, 1, 8, fp);
  if (len) fwrite(data, 1, len, fp);
  fwrite(tail, 1, 4, fp);
}

// Key/value text: tEXt when both are ASCII, iTXt (UTF-8) otherwise, e.g. a sentence "café".
// iTXt must hold UTF-8: bytes that are not (a file name in another encoding) become U+FFFD.
static void write_text(FILE *fp, const char *key, const char *value) {
  size_t nk = strlen(key), nv = strlen(value);
  if (nk < 1 || nk > 79) return; // the spec's keyword limits; our keys are short constants
  bool ascii = true;
  for (const char *s = value; *s; s++) ascii = ascii && (unsigned char)*s < 0x80;
  uint8_t *data = malloc(nk + 3 * nv + 5);
  if (!data) return;
  memcpy(data, key, nk + 1); // keyword and its 0 separator
  size_t at = nk + 1;
  if (!ascii) {
    memset(data + at, 0, 4); // uncompressed, method 0, no language tag, no translated keyword
    at += 4;
  }
  for (const char *s = value; *s;) {
    int n = utf8_seq_len(s);
    if (n)
      memcpy(data + at, s, (size_t)n), at += (size_t)n, s += n;
    else
      memcpy(data + at, "\xEF\xBF\xBD", 3), at += 3, s++;
  }
  write_chunk(fp, ascii ? "tEXt" : "iTXt", data, at);
  free(data);
}

// Packs n pixels' R, G, B bytes. In little-endian memory a pixel is the bytes R G B A, so a
// 4-byte store per pixel, each overwriting the last one's A, does it (2x the byte-wise loop).
static void rgba_to_rgb_portable(uint8_t *dst, const uint32_t *src, int n) {
  int x = 0;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  for (; x + 1 < n; x++, dst += 3) memcpy(dst, &src[x], 4); // the last pixel is done below
#endif
  for (; x < n; x++, dst += 3)
    dst[0] = (uint8_t)SF_R(src[x]), dst[1] = (uint8_t)SF_G(src[x]), dst[2] = (uint8_t)SF_B(src[x]);
}

#if SF_PNG_SSSE3
// The same with SSSE3's byte shuffle, 4x the portable loop: 16 bytes (4 pixels) in, their 12
// RGB bytes out, stored as 16 (the last 4 are overwritten by the next store, or are the next
// pixels' place in the row buffer: the last 4 pixels go through the portable loop).
__attribute__((target("ssse3"))) static void rgba_to_rgb_ssse3(uint8_t *dst, const uint32_t *src, int n) {
  const __m128i pick = _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1);
  int x = 0;
  for (; x + 8 <= n; x += 4, dst += 12) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(src + x));
    _mm_storeu_si128((__m128i *)(void *)dst, _mm_shuffle_epi8(v, pick));
  }
  rgba_to_rgb_portable(dst, src + x, n - x);
}
#endif

static void rgba_to_rgb(uint8_t *dst, const uint32_t *src, int n) {
#if SF_PNG_SSSE3
  if (__builtin_cpu_supports("ssse3")) {
    rgba_to_rgb_ssse3(dst, src, n);
    return;
  }
#endif
  rgba_to_rgb_portable(dst, src, n);
}

// The PNG's bytes into fp (an open file or an open_memstream): false only when out of memory;
// the caller checks the stream for write errors. `what` names the picture in the message.
static bool write_png(Canvas c, FILE *fp, const char *const *kv, int n_kv, const char *what, Err *err) {
  // The image data: per row a filter byte (0, none) and the row's RGB bytes (see pngio.h).
  FlatZip fz;
  uint8_t *z = NULL;
  size_t zlen = 0;
  bool ok = flatzip_begin(&fz, 1 + (size_t)c.w * 3);
  for (int y = 0; ok && y < c.h; y++) {
    const uint32_t *src = c.px + (size_t)y * c.stride;
    fz.cur[0] = 0;
    rgba_to_rgb(fz.cur + 1, src, c.w);
    ok = flatzip_row(&fz);
  }
  if (ok)
    ok = flatzip_end(&fz, &z, &zlen);
  else
    flatzip_free(&fz);
  if (!ok) return err_set(err, "%s: out of memory", what);
  static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  uint8_t ihdr[13];
  put_u32(ihdr, (uint32_t)c.w);
  put_u32(ihdr + 4, (uint32_t)c.h);
  ihdr[8] = 8, ihdr[9] = 2, ihdr[10] = 0, ihdr[11] = 0, ihdr[12] = 0; // 8-bit RGB, no interlace
  fwrite(signature, 1, 8, fp);
  write_chunk(fp, "IHDR", ihdr, 13);
  for (int i = 0; i < n_kv; i++) write_text(fp, kv[2 * i], kv[2 * i + 1]);
  for (size_t at = 0, part; at < zlen; at += part) { // IDAT chunks of at most 1 MiB
    part = zlen - at < ((size_t)1 << 20) ? zlen - at : ((size_t)1 << 20);
    write_chunk(fp, "IDAT", z + at, part);
  }
  write_chunk(fp, "IEND", NULL, 0);
  free(z);
  return true;
}

bool pngio_write(Canvas c, const char *path, const char *const *kv, int n_kv, Err *err) {
  AtomicFile af;
  if (!atomic_open(&af, path, err)) return false;
  if (!write_png(c, af.fp, kv, n_kv, path, err)) {
    atomic_abort(&af);
    return false;
  }
  return atomic_commit(&af, err); // reports a write error (disk full) and leaves no file
}

bool pngio_write_stream(Canvas c, FILE *fp, const char *const *kv, int n_kv, Err *err) {
  return write_png(c, fp, kv, n_kv, "the picture", err);
}

bool pngio_read(Canvas *out, const char *path, Err *err) {
  png_image img;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, path)) return err_set(err, "%s: %s", path, img.message);
  img.format = PNG_FORMAT_RGBA;
  *out = canvas_new((int)img.width, (int)img.height);
  if (!out->px) {
    png_image_free(&img);
    return err_set(err, "%s: out of memory", path);
  }
  if (!png_image_finish_read(&img, NULL, out->px, (png_int_32)(out->stride * 4), NULL)) {
    canvas_free(out);
    return err_set(err, "%s: %s", path, img.message);
  }
  return true;
}
