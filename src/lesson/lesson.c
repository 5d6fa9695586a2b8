// lesson.c -- see lesson.h: loading, parsing (front matter, then Markdown) and freeing a lesson.
#include "lesson.h"

#include <stdlib.h>
#include <string.h>

#include "fileio.h"          // defines: file_read_all
#include "lesson_internal.h" // defines: LessonCtx, lesson_front_parse, lesson_markdown_parse

char *lesson_strndup(const char *s, size_t n) {
  char *p = malloc(n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

int lesson_line_of(const LessonCtx *c, size_t off) {
  int lo = 0, hi = c->n_lines - 1; // last line start <= off
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (c->line_starts[mid] <= off)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo + 1;
}

int lesson_col_of(const LessonCtx *c, size_t off) {
  int line = lesson_line_of(c, off);
  return (int)(off - c->line_starts[line - 1]) + 1;
}

static bool lines_init(LessonCtx *c) {
  int n = 1;
  for (size_t i = 0; i < c->len; i++) n += c->text[i] == '\n';
  c->line_starts = malloc(sizeof(size_t) * (size_t)n);
  if (!c->line_starts) return false;
  c->n_lines = 0;
  c->line_starts[c->n_lines++] = 0;
  for (size_t i = 0; i < c->len; i++)
    if (c->text[i] == '\n') c->line_starts[c->n_lines++] = i + 1;
  return true;
}

static void step_free(LessonStep *s) {
  free(s->title);
  free(s->row_spec);
  free(s->col_spec);
  free(s->compare);
  doc_free(&s->narration);
}

void lesson_free(Lesson *l) {
  if (!l) return;
  for (int i = 0; i < l->n_steps; i++) step_free(&l->steps[i]);
  free(l->steps);
  free(l->path);
  free(l->title);
  free(l->sentence);
  free(l->model);
  memset(l, 0, sizeof *l);
}

bool lesson_parse(Lesson *l, const char *text, size_t len, const char *name, LessonDiag *d) {
  memset(l, 0, sizeof *l);
  LessonDiag local = {0};
  if (!d) d = &local;
  if (!name) name = "lesson";
  int errors_before = d->n_errors;
  l->path = lesson_strndup(name, strlen(name));
  LessonCtx c = {.l = l, .d = d, .name = name, .text = text ? text : "", .len = text ? len : 0};
  c.words = malloc(sizeof *c.words * LESSON_MAX_WORDS);
  if (!l->path || !c.words || !lines_init(&c)) {
    lesson_diag_add(d, name, 0, 0, false, "out of memory");
    free(c.words);
    free(c.line_starts);
    return false;
  }
  size_t body = lesson_front_parse(&c);
  lesson_markdown_parse(&c, body);
  if (c.oom) lesson_diag_add(d, name, 0, 0, false, "out of memory");
  free(c.words);
  free(c.line_starts);
  return d->n_errors == errors_before;
}

bool lesson_load(Lesson *l, const char *path, LessonDiag *d) {
  Err err = {0};
  size_t len = 0;
  LessonDiag local = {0};
  if (!d) d = &local;
  char *text = file_read_all(path, &len, LESSON_MAX_BYTES, &err);
  if (!text) {
    memset(l, 0, sizeof *l);
    l->path = lesson_strndup(path, strlen(path));
    size_t n = strlen(path); // file_read_all's message starts with the path: say it once
    const char *msg =
        !strncmp(err.msg, path, n) && !strncmp(err.msg + n, ": ", 2) ? err.msg + n + 2 : err.msg;
    lesson_diag_add(d, path, 0, 0, false, "%s", msg);
    return false;
  }
  bool ok = lesson_parse(l, text, len, path, d);
  free(text);
  return ok;
}
