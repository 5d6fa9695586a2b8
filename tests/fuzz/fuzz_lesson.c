// fuzz_lesson.c -- libFuzzer target for the lesson parser (front matter, headings, md4c).
//
// Every input goes through lesson_parse as the bytes of a lesson file. Whatever it returns, the
// lesson must be well formed: the diagnostics count what they hold and each is one line with a
// line number inside the file; every step has a title; every block of every narration holds
// NUL-terminated spans whose lines are inside the file; focus kinds agree with their token specs.
// Parsed lessons are then resolved against a small random model over the sentence's words, as
// `stepformer check` does. Any crash, sanitizer report, leak or broken promise is a bug.
//
// Build and run (clang):
//   CC=clang cmake -S . -B build-fuzz -DSF_FUZZ=ON -DSF_SANITIZE=ON
//   cmake --build build-fuzz --target fuzz_lesson
//   scripts/fuzz --target lesson --minutes 2
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edits.h"   // defines: TraceEdits, edits_trace, edits_describe
#include "forward.h" // defines: model_forward
#include "lesson.h"  // defines: Lesson, lesson_parse, lesson_resolve, lesson_step_edits

// Bounds on the work of one input (a campaign drifts to lessons of 256 words with dozens of
// steps, each step's edits a forward: the rate fell from 3 800 to 1 000 a second, spent in the
// attention's products, which test_golden checks): sentences of at most MAX_WORDS words are
// resolved, and at most MAX_FORWARDS steps' edits are run.
#define MAX_WORDS 32
#define MAX_FORWARDS 4

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_lesson: broken promise: %s\n", #x);                                              \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

static int count_lines(const uint8_t *data, size_t size) { // memchr: not instrumented, so fast
  int n = 1;
  for (const uint8_t *p = data, *end = data + size; (p = memchr(p, '\n', (size_t)(end - p))); p++) n++;
  return n;
}

static void check_diag(const LessonDiag *d, int lines) {
  PROMISE(d->n >= 0 && d->n <= LESSON_DIAG_MAX && d->n_dropped >= 0);
  for (int i = 0; i < d->n; i++) {
    const LessonDiagItem *it = &d->items[i];
    PROMISE(it->msg[0] && !strchr(it->msg, '\n') && !strchr(it->msg, '\r'));
    PROMISE(it->line >= 0 && it->line <= lines);
  }
}

static void check_lesson(const Lesson *l, int lines) {
  PROMISE(l->n_steps >= 0 && (l->n_steps == 0 || l->steps));
  for (int i = 0; i < l->n_steps; i++) {
    const LessonStep *s = &l->steps[i];
    PROMISE(s->title != NULL && s->line >= 1 && s->line <= lines);
    PROMISE(s->layer >= 0 && (s->head >= 0 || s->head == LESSON_ALL_HEADS));
    PROMISE((s->focus == FOCUS_ROW) == (s->row_spec && !s->col_spec));
    PROMISE((s->focus == FOCUS_CELL) == (s->row_spec && s->col_spec));
    if (s->has_stage) PROMISE(lesson_stage_name(s->stage)[0] != 0);
    const Doc *d = &s->narration;
    for (int b = 0; b < d->n; b++) {
      const DocBlock *k = &d->blocks[b];
      PROMISE(k->line >= 1 && k->line <= lines);
      PROMISE(k->kind == BLOCK_RULE || k->n_spans > 0);
      if (k->kind == BLOCK_MATH) PROMISE(k->n_spans == 1 && k->spans[0].kind == SPAN_MATH);
      for (int j = 0; j < k->n_spans; j++) {
        PROMISE(k->spans[j].text != NULL);
        PROMISE(k->spans[j].line >= 1 && k->spans[j].line <= lines);
      }
    }
  }
}

// The steps' edit= and heads-off= against a trace of the model: each problem one line on the
// step's line; edits that parse run (edits_trace) and name themselves (edits_describe).
static void check_edits(const Lesson *l, const Model *m, const Tokens *tk) {
  Err err = {0};
  Trace *t = trace_new(m, tk, &err);
  if (!t) return;
  model_forward(t);
  int forwards = 0; // each edits_trace is a forward: at most MAX_FORWARDS an input (see above)
  for (int i = 0; i < l->n_steps; i++) {
    LessonDiag d = {0};
    TraceEdits e;
    if (!lesson_step_edits(l, &l->steps[i], t, &e, &d)) {
      PROMISE(d.n == 1 && d.items[0].line == l->steps[i].line && !strchr(d.items[0].msg, '\n'));
      continue;
    }
    if (forwards == MAX_FORWARDS) {
      edits_free(&e);
      continue;
    }
    forwards++;
    Trace *x = edits_trace(t, &e, &err);
    PROMISE(x != NULL);
    char buf[300];
    PROMISE(edits_empty(&e) == !edits_describe(x, buf, sizeof buf)[0]);
    trace_free(x);
    edits_free(&e);
  }
  trace_free(t);
}

// Resolves against a random model over the lesson's words (steps with a stage only).
static void resolve(Lesson *l) {
  if (!l->sentence) return;
  char *saved = l->model;
  l->model = "random D=8,H=2,F=8,layers=2,seed=1"; // never a file named by the input
  Err err = {0};
  Model *m = lesson_open_model(l, NULL, &err);
  l->model = saved;
  if (!m) return;
  Tokens tk;
  bool ok = tokens_from_text(&tk, &m->vocab, l->sentence, LESSON_MAX_WORDS, &err);
  if (ok && tk.n > MAX_WORDS) tokens_free(&tk), ok = false; // see MAX_WORDS
  if (ok) {
    LessonDiag d = {0};
    lesson_resolve(l, m, &tk, &d);
    for (int i = 0; i < l->n_steps; i++) {
      const LessonStep *s = &l->steps[i];
      PROMISE(s->row >= -1 && s->row < tk.n && s->col >= -1 && s->col < tk.n);
    }
    check_edits(l, m, &tk);
    tokens_free(&tk);
  }
  model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > LESSON_MAX_BYTES) return 0;
  int lines = count_lines(data, size);
  Lesson l;
  LessonDiag d = {0};
  bool ok = lesson_parse(&l, (const char *)data, size, "fuzz.md", &d);
  check_diag(&d, lines);
  PROMISE(ok == (d.n_errors == 0));
  check_lesson(&l, lines);
  if (ok) resolve(&l);
  lesson_free(&l);
  return 0;
}
