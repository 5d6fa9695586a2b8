// err.c -- see err.h.
#include "err.h"

#include <stdarg.h>
#include <string.h>

#include "utf8.h" // defines: utf8_floor, utf8_ceil, utf8_seq_len

bool err_set(Err *err, const char *fmt, ...) {
  if (err) {
    char full[8192];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(full, sizeof full, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof full ? (size_t)n : sizeof full - 1;
    if (len < sizeof err->msg) {
      memcpy(err->msg, full, len + 1);
    } else {
      // too long (a long path): keep its start and its end, where the reason and the fix are.
      // Both cuts give up bytes to land on a character boundary, never take more: the head ends
      // at or before byte 160, the tail starts at or after the first byte that still fits.
      size_t room = sizeof err->msg - 1; // bytes of text, without the NUL
      size_t head = utf8_floor(full, 160);
      size_t tail = utf8_ceil(full, len - (room - head - 3), len);
      memcpy(err->msg, full, head);
      memcpy(err->msg + head, "...", 3);
      memcpy(err->msg + head + 3, full + tail, len - tail + 1); // head + 3 + (len - tail) <= room
    }
    // names quoted from files may hold control characters or bytes that are not UTF-8: the
    // message stays one line of text, each such byte a '?'
    for (char *p = err->msg; *p;) {
      int k = utf8_seq_len(p);
      if (k == 0 || (k == 1 && ((unsigned char)*p < 0x20 || *p == 0x7f))) *p = '?', k = 1;
      p += k;
    }
  }
  return false;
}
