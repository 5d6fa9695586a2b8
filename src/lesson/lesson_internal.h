// lesson_internal.h -- what the lesson parser's files share; not part of the lesson API.
//
// One LessonCtx lives for one lesson_parse call: the input bytes, a table of line starts (so a
// byte offset becomes file:line), the words of the sentence (to check focus tokens while
// parsing) and where problems go. Offsets are bytes from the start of the input; lines and
// columns are 1-based. The front matter parser returns where the Markdown body starts; the
// Markdown parser turns the body into steps and calls the heading-options parser for each step
// heading.
//
//     LessonCtx c = {...};                      // see lesson_parse in lesson.c
//     size_t body = lesson_front_parse(&c);
//     lesson_markdown_parse(&c, body);
#ifndef SF_LESSON_INTERNAL_H
#define SF_LESSON_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "lesson.h"

typedef struct {
  Lesson *l;
  LessonDiag *d;
  const char *name; // file name for messages
  const char *text; // the input, len bytes, not NUL-terminated
  size_t len;
  size_t *line_starts; // offset of the first byte of each line
  int n_lines;
  char (*words)[TOKEN_MAX_BYTES + 1]; // the sentence's words (lowercase), n_words of them
  int n_words;
  bool oom;
  bool front_unclosed; // the front matter swallowed the file: no "no steps" error on top
} LessonCtx;

int lesson_line_of(const LessonCtx *c, size_t off); // 1-based line of a byte offset
int lesson_col_of(const LessonCtx *c, size_t off);  // 1-based byte column
// Adds an error (warning false) at the line and column of byte offset off.
void lesson_error_at(LessonCtx *c, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void lesson_error_line(LessonCtx *c, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

char *lesson_strndup(const char *s, size_t n); // NUL-terminated copy, NULL when out of memory

// Parses the front matter into c->l (title, sentence, model, causal) and fills c->words.
// Returns the offset where the Markdown body begins.
size_t lesson_front_parse(LessonCtx *c);

// model: by hand (lesson_hand.c): one row of the embeddings: | table, [b, e) trimmed; and the
// checks after the front matter (switch_line: the first line of a by-hand key, 0 if none).
void lesson_hand_row(LessonCtx *c, size_t b, size_t e);
void lesson_hand_finish(LessonCtx *c, int switch_line);

// Parses the Markdown body from offset body into the steps of c->l.
void lesson_markdown_parse(LessonCtx *c, size_t body);

// Parses the options of a step heading. [b, e) is the heading's raw text; on return *cut is the
// offset of the `{` that opens its options (e when there are none), so the title is [b, *cut).
void lesson_options_parse(LessonCtx *c, LessonStep *s, size_t b, size_t e, size_t *cut);

// When model (the front matter's value) is "random SPEC", parses SPEC (spaces ignored) into *mc
// (from model_config_default) and *seed (42 unless given) and returns 1; 0 when model is not
// a random spec; -1 with err when SPEC is bad.
int lesson_random_spec(const char *model, ModelConfig *mc, uint64_t *seed, Err *err);

// The position of a token spec in words[0..n), or -1 (syntax: lesson.h, lesson_find_token).
int lesson_token_lookup(const char *spec, const char *const *words, int n);
// True when spec is a well-formed token spec ("cat", "the#2", "3").
bool lesson_token_spec_ok(const char *spec);

// The name of names[0..n) nearest to s (within 2 edits, or 3 for names over 5 bytes; A-Z read
// as a-z; see strdist.h), or NULL.
const char *lesson_nearest(const char *s, const char *const *names, int n);

#endif
