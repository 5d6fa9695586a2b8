// err.c -- see err.h.
#include "err.h"

#include <stdarg.h>

bool err_set(Err *err, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
  }
  return false;
}
