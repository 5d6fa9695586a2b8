// lesson_diag.c -- the problems of a lesson, as "FILE:LINE: message" (see lesson.h).
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lesson.h"
#include "lesson_internal.h" // defines: LessonCtx

static void vadd(LessonDiag *d, const char *file, int line, int col, bool warning, const char *fmt,
                 va_list ap) {
  if (!d) return;
  if (!warning) d->n_errors++;
  if (d->n >= LESSON_DIAG_MAX) {
    d->n_dropped++;
    return;
  }
  LessonDiagItem *it = &d->items[d->n++];
  snprintf(it->file, sizeof it->file, "%s", file ? file : "lesson");
  it->line = line;
  it->col = col;
  it->warning = warning;
  vsnprintf(it->msg, sizeof it->msg, fmt, ap);
  for (char *p = it->msg; *p; p++) // one line each and no terminal controls, whatever the input held
    if ((unsigned char)*p < 0x20 || *p == 0x7F) *p = ' ';
}

void lesson_diag_add(LessonDiag *d, const char *file, int line, int col, bool warning, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vadd(d, file, line, col, warning, fmt, ap);
  va_end(ap);
}

void lesson_error_at(LessonCtx *c, size_t off, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vadd(c->d, c->name, lesson_line_of(c, off), lesson_col_of(c, off), false, fmt, ap);
  va_end(ap);
}

void lesson_error_line(LessonCtx *c, int line, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vadd(c->d, c->name, line, 0, false, fmt, ap);
  va_end(ap);
}

void lesson_diag_print(const LessonDiag *d, FILE *f) {
  for (int i = 0; i < d->n; i++) {
    const LessonDiagItem *it = &d->items[i];
    const char *kind = it->warning ? "warning: " : "";
    if (it->line > 0)
      fprintf(f, "%s:%d: %s%s\n", it->file, it->line, kind, it->msg);
    else
      fprintf(f, "%s: %s%s\n", it->file, kind, it->msg);
  }
  if (d->n_dropped) fprintf(f, "... and %d more problems not shown\n", d->n_dropped);
}
