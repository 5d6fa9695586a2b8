// lesson_edits.c -- a step's what-if edits (edit=, heads-off=; lesson.h) checked against a trace of
// the lesson's model on its sentence and turned into a TraceEdits (edits.h).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edits.h"        // defines: TraceEdits, edits_parse_edit, edits_parse_head_off
#include "model_tokens.h" // defines: model_tokenize
#include "lesson.h"

// Calls one(part) on every part of list cut at `sep` (spaces around a part are the parser's);
// stops at the first that fails.
static bool each_part(const char *list, char sep, bool (*one)(const char *part, void *ctx), void *ctx) {
  char part[512];
  for (const char *p = list; *p;) {
    const char *q = strchr(p, sep);
    size_t n = q ? (size_t)(q - p) : strlen(p);
    if (n >= sizeof part) n = sizeof part - 1;
    memcpy(part, p, n);
    part[n] = 0;
    bool blank = strspn(part, " \t") == n;
    if (!blank && !one(part, ctx)) return false;
    p = q ? q + 1 : p + strlen(p);
  }
  return true;
}

typedef struct {
  const Lesson *l;
  const LessonStep *s;
  const Trace *t;
  TraceEdits *e;
  LessonDiag *d;
} EditCtx;

static bool one_edit(const char *part, void *ctx) {
  EditCtx *c = ctx;
  Err err = {0};
  TraceEdit x;
  if (edits_parse_edit(c->t, part, &x, &err) && edits_add(c->e, &x, &err)) return true;
  lesson_diag_add(c->d, c->l->path, c->s->line, 0, false, "edit=\"%s\": %s", part, err.msg);
  return false;
}

static bool one_head(const char *part, void *ctx) {
  EditCtx *c = ctx;
  Err err = {0};
  int layer, head;
  HeadOff mode;
  if (edits_parse_head_off(c->t, part, &layer, &head, &mode, &err) &&
      edits_set_head(c->e, c->t, layer, head, mode, &err))
    return true;
  lesson_diag_add(c->d, c->l->path, c->s->line, 0, false, "heads-off=%s: %s", part, err.msg);
  return false;
}

bool lesson_step_edits(const Lesson *l, const LessonStep *s, const Trace *t, TraceEdits *e, LessonDiag *d) {
  *e = (TraceEdits){0};
  EditCtx c = {l, s, t, e, d};
  bool ok = (!s->edits || each_part(s->edits, ';', one_edit, &c)) &&
            (!s->heads_off || each_part(s->heads_off, ',', one_head, &c));
  if (!ok) edits_free(e);
  return ok;
}

// The step's edits against its compare= sentence too (they apply to both sides).
static bool check_compare(const Lesson *l, const LessonStep *s, const Trace *t, LessonDiag *d) {
  if (!s->compare || (!s->edits && !s->heads_off)) return true;
  Tokens tk;
  Err err = {0};
  if (!model_tokenize(t->model, s->compare, LESSON_MAX_WORDS, &tk, &err)) return true; // said elsewhere
  Trace *ct = trace_new(t->model, &tk, &err);
  tokens_free(&tk);
  if (!ct) return true;
  TraceEdits e;
  bool ok = lesson_step_edits(l, s, ct, &e, d);
  if (ok) edits_free(&e);
  trace_free(ct);
  return ok;
}

bool lesson_check_edits(const Lesson *l, const Trace *t, LessonDiag *d) {
  bool ok = true;
  for (int i = 0; i < l->n_steps; i++) {
    TraceEdits e;
    if (lesson_step_edits(l, &l->steps[i], t, &e, d))
      edits_free(&e), ok = check_compare(l, &l->steps[i], t, d) && ok;
    else
      ok = false;
  }
  return ok;
}
