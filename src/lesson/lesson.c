// lesson.c -- see lesson.h: loading, parsing (front matter, then Markdown) and freeing a lesson.
#include "lesson.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"          // defines: file_read_all
#include "lesson_internal.h" // defines: LessonCtx, lesson_front_parse, lesson_markdown_parse
#include "utf8.h"            // defines: utf8_is_cont

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

// The start of every line. memchr, not a loop over the bytes: the lesson fuzzer's coverage
// instrumentation made the loop a sixth of the parse.
static bool lines_init(LessonCtx *c) {
  const char *end = c->text + c->len;
  int n = 1;
  for (const char *p = c->text; (p = memchr(p, '\n', (size_t)(end - p))); p++) n++;
  c->line_starts = malloc(sizeof(size_t) * (size_t)n);
  if (!c->line_starts) return false;
  c->n_lines = 0;
  c->line_starts[c->n_lines++] = 0;
  for (const char *p = c->text; (p = memchr(p, '\n', (size_t)(end - p))); p++)
    c->line_starts[c->n_lines++] = (size_t)(p - c->text) + 1;
  return true;
}

static void step_free(LessonStep *s) {
  free(s->title);
  free(s->row_spec);
  free(s->spot_row);
  free(s->spot_col);
  free(s->col_spec);
  free(s->compare);
  free(s->edits);
  free(s->heads_off);
  free(s->facts);
  free(s->broken);
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
  free(l->target);
  for (int i = 0; i < l->n_hand; i++) free(l->hand_words[i]);
  free(l->hand_words);
  free(l->hand_embed);
  memset(l, 0, sizeof *l);
}

// The first byte that keeps text from being UTF-8 text (a NUL, or a byte outside a valid
// UTF-8 sequence), or len when there is none.
static size_t not_text_at(const char *text, size_t len) {
  const unsigned char *s = (const unsigned char *)text;
  const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
  for (size_t i = 0; i < len;) {
    // eight bytes at a time while they are ASCII and none is NUL (most of a lesson; one test per
    // eight bytes, not eight, under the fuzzer's instrumentation)
    uint64_t w;
    while (i + 8 <= len && (memcpy(&w, s + i, 8), !(w & highs) && !((w - ones) & ~w & highs))) i += 8;
    if (i >= len) break;
    unsigned c = s[i];
    size_t k = c < 0x80                 ? 1
               : c >= 0xC2 && c <= 0xDF ? 2
               : c >= 0xE0 && c <= 0xEF ? 3
               : c >= 0xF0 && c <= 0xF4 ? 4
                                        : 0;
    if (c == 0 || k == 0 || i + k > len) return i;
    uint32_t u = k == 1 ? c : c & (0x7Fu >> k);
    for (size_t j = 1; j < k; j++) {
      if (!utf8_is_cont(s[i + j])) return i;
      u = u << 6 | (s[i + j] & 0x3F);
    }
    if ((k == 3 && (u < 0x800 || (u >= 0xD800 && u <= 0xDFFF))) || (k == 4 && (u < 0x10000 || u > 0x10FFFF)))
      return i;
    i += k;
  }
  return len;
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
  size_t bad = not_text_at(c.text, c.len);
  if (bad < c.len) { // a binary file, or text in another encoding: one problem, not a flood
    unsigned char byte = (unsigned char)c.text[bad];
    lesson_error_at(&c, bad,
                    byte ? "not UTF-8 text: byte 0x%02X at column %d; save the lesson as UTF-8 "
                           "(a lesson is a Markdown text file)"
                         : "not a text file: a NUL byte (0x%02X) at column %d; a lesson is a UTF-8 "
                           "Markdown text file",
                    byte, lesson_col_of(&c, bad));
  } else {
    size_t body = lesson_front_parse(&c);
    lesson_markdown_parse(&c, body);
  }
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
    bool big = strstr(msg, "too large") != NULL;
    lesson_diag_add(d, path, 0, 0, false, "%s%s", msg,
                    big ? ": a lesson is a text of a few pages; split it into several lessons" : "");
    return false;
  }
  bool ok = lesson_parse(l, text, len, path, d);
  free(text);
  return ok;
}
