// err.c -- see err.h.
#include "err.h"

#include <stdarg.h>
#include <string.h>

// Moves back to the start of a UTF-8 sequence (never splits a character).
static size_t char_start(const char *s, size_t i) {
  while (i > 0 && ((unsigned char)s[i] & 0xC0) == 0x80) i--;
  return i;
}

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
      // too long (a long path): keep its start and its end, where the reason and the fix are
      size_t head = char_start(full, 160), tail = char_start(full, len - (sizeof err->msg - 1 - head - 3));
      memcpy(err->msg, full, head);
      memcpy(err->msg + head, "...", 3);
      memcpy(err->msg + head + 3, full + tail, len - tail + 1);
    }
    // names quoted from files may hold control characters: the message stays one line
    for (char *p = err->msg; *p; p++)
      if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
  }
  return false;
}
