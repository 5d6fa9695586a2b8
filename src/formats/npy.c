// npy.c -- see npy.h.
#include "npy.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h" // defines: file_write_atomic, file_read_all

unsigned char *npy_encode(const float *data, int ndim, const int *shape, size_t *len) {
  char dict[256];
  int n = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (");
  size_t count = 1;
  for (int i = 0; i < ndim; i++) { // Python's tuple syntax: "(6, 16)", and "(6,)" for one dim
    n += snprintf(dict + n, sizeof dict - (size_t)n, i ? ", %d" : "%d", shape[i]);
    count *= (size_t)shape[i];
  }
  n += snprintf(dict + n, sizeof dict - (size_t)n, ndim == 1 ? ",), }" : "), }");
  size_t header = 10 + (size_t)n + 1; // magic+version+len, dict, newline
  size_t pad = (64 - header % 64) % 64;
  size_t hlen = (size_t)n + pad + 1;
  *len = 10 + hlen + count * 4;
  unsigned char *out = malloc(*len);
  if (!out) return NULL;
  memcpy(out, "\x93NUMPY\x01\x00", 8);
  out[8] = (unsigned char)(hlen & 0xFF);
  out[9] = (unsigned char)(hlen >> 8);
  memcpy(out + 10, dict, (size_t)n);
  memset(out + 10 + n, ' ', pad);
  out[10 + hlen - 1] = '\n';
  unsigned char *p = out + 10 + hlen;
  for (size_t i = 0; i < count; i++) {
    uint32_t u;
    memcpy(&u, &data[i], 4);
    p[4 * i] = (unsigned char)u;
    p[4 * i + 1] = (unsigned char)(u >> 8);
    p[4 * i + 2] = (unsigned char)(u >> 16);
    p[4 * i + 3] = (unsigned char)(u >> 24);
  }
  return out;
}

bool npy_write(const char *path, const float *data, int ndim, const int *shape, Err *err) {
  size_t len;
  unsigned char *bytes = npy_encode(data, ndim, shape, &len);
  if (!bytes) return err_set(err, "%s: out of memory", path);
  bool ok = file_write_atomic(path, bytes, len, err);
  free(bytes);
  return ok;
}

float *npy_read(const char *path, int *ndim, int shape[NPY_MAX_DIMS], Err *err) {
  size_t len;
  char *b = file_read_all(path, &len, (size_t)1 << 31, err);
  if (!b) return NULL;
  float *out = NULL;
  if (len < 10 || memcmp(b, "\x93NUMPY", 6) != 0) {
    err_set(err, "%s: not a .npy file", path);
    goto done;
  }
  size_t hlen = (unsigned char)b[8] | (size_t)(unsigned char)b[9] << 8, start = 10;
  if (b[6] >= 2) { // version 2/3: u32 header length
    if (len < 12) goto bad;
    hlen = (unsigned char)b[8] | (size_t)(unsigned char)b[9] << 8 | (size_t)(unsigned char)b[10] << 16 |
           (size_t)(unsigned char)b[11] << 24;
    start = 12;
  }
  if (hlen == 0 || hlen > len - start) goto bad;
  char *h = b + start, save = h[hlen - 1];
  h[hlen - 1] = 0;
  if (!strstr(h, "'descr': '<f4'") || !strstr(h, "'fortran_order': False")) {
    err_set(err, "%s: only little-endian float32 C-order arrays are read", path);
    goto done;
  }
  char *s = strstr(h, "'shape': (");
  if (!s) goto bad;
  s += 10;
  *ndim = 0;
  size_t count = 1;
  while (*s && *s != ')') {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 0 || v > INT_MAX || *ndim >= NPY_MAX_DIMS) goto bad;
    if (v > 0 && count > (len / 4) / (size_t)v) goto bad; // more values than the file can hold
    shape[(*ndim)++] = (int)v;
    count *= (size_t)v;
    s = end;
    while (*s == ',' || *s == ' ') s++;
  }
  h[hlen - 1] = save;
  if (count * 4 != len - start - hlen) goto bad;
  out = malloc(count * 4 + 4);
  if (!out) {
    err_set(err, "%s: out of memory", path);
    goto done;
  }
  memcpy(out, b + start + hlen, count * 4); // little-endian host assumed by the tests
  goto done;
bad:
  err_set(err, "%s: corrupt .npy header", path);
done:
  free(b);
  return out;
}
