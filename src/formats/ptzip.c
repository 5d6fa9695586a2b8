// ptzip.c -- see ptzip.h. Field offsets are those of PKWARE's APPNOTE.TXT, section 4.3.
#include "ptzip.h"

#include <stdlib.h>
#include <string.h>

#define EOCD_SIZE 22
#define EOCD64_LOCATOR_SIZE 20
#define EOCD64_SIZE 56
#define CENTRAL_SIZE 46
#define LOCAL_SIZE 30

static uint16_t u16le(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t u32le(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t u64le(const uint8_t *p) { return (uint64_t)u32le(p) | (uint64_t)u32le(p + 4) << 32; }

static int entry_cmp_name(const char *a, size_t na, const char *b, size_t nb) {
  int c = memcmp(a, b, na < nb ? na : nb);
  return c ? c : (na > nb) - (na < nb);
}

static int entry_cmp(const void *x, const void *y) {
  const PtZipEntry *a = x, *b = y;
  return entry_cmp_name(a->name, a->name_len, b->name, b->name_len);
}

void ptzip_free(PtZip *z) {
  free(z->entries);
  memset(z, 0, sizeof *z);
}

// The end record: the last "PK\5\6" whose comment ends exactly at the end of the file.
static bool find_eocd(const uint8_t *b, size_t len, size_t *at) {
  if (len < EOCD_SIZE) return false;
  size_t lo = len - EOCD_SIZE > 65535 ? len - EOCD_SIZE - 65535 : 0;
  for (size_t i = len - EOCD_SIZE + 1; i-- > lo;)
    if (u32le(b + i) == 0x06054b50 && i + EOCD_SIZE + u16le(b + i + 20) == len) {
      *at = i;
      return true;
    }
  return false;
}

// Reads the zip64 fields of a central entry's extra field: each saturated 32-bit field is
// replaced, in the order usize, csize, offset.
static bool read_zip64_extra(const uint8_t *x, size_t xlen, PtZipEntry *e, bool big_u, bool big_c,
                             bool big_o) {
  while (xlen >= 4) {
    uint16_t id = u16le(x), n = u16le(x + 2);
    if ((size_t)n + 4 > xlen) return false;
    if (id == 0x0001) {
      const uint8_t *p = x + 4, *end = x + 4 + n;
      if (big_u) {
        if (end - p < 8) return false;
        e->size = u64le(p), p += 8;
      }
      if (big_c) {
        if (end - p < 8) return false;
        e->csize = u64le(p), p += 8;
      }
      if (big_o) {
        if (end - p < 8) return false;
        e->local_offset = u64le(p);
      }
      return true;
    }
    x += 4 + (size_t)n, xlen -= 4 + (size_t)n;
  }
  return !(big_u || big_c || big_o);
}

bool ptzip_open(PtZip *z, const uint8_t *b, size_t len, const char *what, Err *err) {
  memset(z, 0, sizeof *z);
  size_t eocd;
  if (!find_eocd(b, len, &eocd)) {
    if (len >= 4 && u32le(b) == 0x04034b50)
      return err_set(err,
                     "%s: the zip is cut short (no end record): the file is truncated; save or copy it again",
                     what);
    return err_set(err, "%s: not a zip file, so not a file torch.save writes (no zip end record)", what);
  }
  uint64_t n_total = u16le(b + eocd + 10), cd_size = u32le(b + eocd + 12), cd_off = u32le(b + eocd + 16);
  if (u16le(b + eocd + 4) != 0 || u16le(b + eocd + 6) != 0)
    return err_set(err, "%s: a zip split over several disks is not a torch.save file", what);
  if (n_total == 0xFFFF || cd_size == 0xFFFFFFFF || cd_off == 0xFFFFFFFF) {
    if (eocd < EOCD64_LOCATOR_SIZE || u32le(b + eocd - EOCD64_LOCATOR_SIZE) != 0x07064b50)
      return err_set(err, "%s: the zip's end record needs a zip64 record, which is missing", what);
    uint64_t at = u64le(b + eocd - EOCD64_LOCATOR_SIZE + 8);
    if (at > len || len - at < EOCD64_SIZE || u32le(b + at) != 0x06064b50)
      return err_set(err, "%s: the zip64 end record lies outside the file or is damaged", what);
    n_total = u64le(b + at + 32), cd_size = u64le(b + at + 40), cd_off = u64le(b + at + 48);
  }
  if (cd_off > len || cd_size > len - cd_off)
    return err_set(err, "%s: the zip's central directory lies outside the file (truncated?)", what);
  if (n_total > cd_size / CENTRAL_SIZE)
    return err_set(err, "%s: the zip claims %llu entries, more than its central directory holds", what,
                   (unsigned long long)n_total);
  z->entries = malloc(sizeof(PtZipEntry) * (size_t)(n_total + 1));
  if (!z->entries) return err_set(err, "%s: out of memory", what);
  const uint8_t *p = b + cd_off, *end = b + cd_off + cd_size;
  for (uint64_t i = 0; i < n_total; i++) {
    if (end - p < CENTRAL_SIZE || u32le(p) != 0x02014b50) {
      err_set(err, "%s: zip central directory entry %llu is damaged", what, (unsigned long long)i);
      goto fail;
    }
    size_t nlen = u16le(p + 28), xlen = u16le(p + 30), clen = u16le(p + 32);
    if ((size_t)(end - p) - CENTRAL_SIZE < nlen + xlen + clen) {
      err_set(err, "%s: zip central directory entry %llu runs past its end", what, (unsigned long long)i);
      goto fail;
    }
    PtZipEntry *e = &z->entries[z->n];
    e->flags = u16le(p + 8), e->method = u16le(p + 10);
    e->csize = u32le(p + 20), e->size = u32le(p + 24), e->local_offset = u32le(p + 42);
    e->name = (const char *)p + CENTRAL_SIZE, e->name_len = nlen;
    if (!read_zip64_extra(p + CENTRAL_SIZE + nlen, xlen, e, e->size == 0xFFFFFFFF, e->csize == 0xFFFFFFFF,
                          e->local_offset == 0xFFFFFFFF)) {
      err_set(err, "%s: zip entry \"%.*s\" has a damaged zip64 field", what, (int)(nlen < 80 ? nlen : 80),
              e->name);
      goto fail;
    }
    z->n++;
    p += CENTRAL_SIZE + nlen + xlen + clen;
  }
  qsort(z->entries, z->n, sizeof *z->entries, entry_cmp);
  for (size_t i = 1; i < z->n; i++)
    if (!entry_cmp(&z->entries[i - 1], &z->entries[i])) {
      const PtZipEntry *e = &z->entries[i];
      err_set(err, "%s: the zip holds \"%.*s\" twice", what, (int)(e->name_len < 80 ? e->name_len : 80),
              e->name);
      goto fail;
    }
  z->bytes = b, z->len = len, z->what = what;
  return true;
fail:
  ptzip_free(z);
  return false;
}

const PtZipEntry *ptzip_find(const PtZip *z, const char *name) {
  size_t lo = 0, hi = z->n, n = strlen(name);
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = entry_cmp_name(z->entries[mid].name, z->entries[mid].name_len, name, n);
    if (c == 0) return &z->entries[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

bool ptzip_get(const PtZip *z, const char *name, const uint8_t **data, size_t *len, Err *err) {
  const PtZipEntry *e = ptzip_find(z, name);
  if (!e)
    return err_set(err, "%s: the zip has no entry \"%.80s\" (not a torch.save file, or a damaged one)",
                   z->what, name);
  if (e->flags & 1)
    return err_set(err, "%s: zip entry \"%.80s\" is encrypted; torch.save never encrypts", z->what, name);
  if (e->method != 0)
    return err_set(
        err,
        "%s: zip entry \"%.80s\" is compressed (method %u); torch.save stores entries uncompressed: save "
        "the file again with torch.save rather than re-zipping it",
        z->what, name, (unsigned)e->method);
  if (e->csize != e->size)
    return err_set(err, "%s: zip entry \"%.80s\" is stored but its two sizes differ", z->what, name);
  uint64_t at = e->local_offset;
  if (at > z->len || z->len - at < LOCAL_SIZE || u32le(z->bytes + at) != 0x04034b50)
    return err_set(err, "%s: zip entry \"%.80s\" has no local header where the directory says (truncated?)",
                   z->what, name);
  uint64_t start = at + LOCAL_SIZE + u16le(z->bytes + at + 26) + u16le(z->bytes + at + 28);
  if (start > z->len || z->len - start < e->size)
    return err_set(err, "%s: zip entry \"%.80s\" runs past the end of the file (truncated?)", z->what, name);
  *data = z->bytes + start;
  *len = (size_t)e->size;
  return true;
}
