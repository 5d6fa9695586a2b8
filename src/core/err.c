// err.c -- see err.h.
#include "err.h"

#include <stdarg.h>

bool err_set(Err *err, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    // names quoted from files may hold control characters: the message stays one line
    for (char *p = err->msg; *p; p++)
      if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
  }
  return false;
}
