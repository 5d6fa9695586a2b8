// session_edits.c -- the session's what-if edits (session.h, edits.h): the live list over the
// shown sentence, and the lesson steps' own edits.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"

const Trace *session_unedited(const Session *s) { return s->base ? s->base : s->trace; }

// Frees the lesson steps' edited passes.
static void free_steps(Session *s) {
  if (s->step_edits)
    for (int i = 0; i < s->lesson.n_steps; i++) trace_free(s->step_edits[i]);
  free(s->step_edits);
  s->step_edits = NULL;
}

bool session_edits_apply(Session *s, Err *err) {
  const Trace *own = session_unedited(s);
  if (edits_empty(&s->edits)) {
    if (s->base) {
      trace_free(s->trace);
      s->trace = s->base;
      s->base = NULL;
    }
    return true;
  }
  if (s->gen) return err_set(err, "edits do not go with generation (--generate)");
  Trace *t = edits_trace(own, &s->edits, err);
  if (!t) return false;
  if (s->base)
    trace_free(s->trace);
  else
    s->base = s->trace;
  s->trace = t;
  return true;
}

// The lesson steps' own edit= / heads-off=, each a pass over the model's own trace.
static bool make_steps(Session *s, LessonDiag *d, Err *err) {
  free_steps(s);
  if (!s->has_lesson) return true;
  bool any = false;
  for (int i = 0; i < s->lesson.n_steps; i++)
    any = any || s->lesson.steps[i].edits || s->lesson.steps[i].heads_off;
  if (!any) return true;
  if (s->gen || model_is_seq2seq(s->model))
    return err_set(err,
                   "%s: edit= and heads-off= go with an encoder or a decoder-only model, without generation",
                   s->lesson.path);
  if (!(s->step_edits = calloc((size_t)s->lesson.n_steps, sizeof *s->step_edits)))
    return err_set(err, "out of memory");
  const Trace *own = session_unedited(s);
  for (int i = 0; i < s->lesson.n_steps; i++) {
    const LessonStep *st = &s->lesson.steps[i];
    if (!st->edits && !st->heads_off) continue;
    TraceEdits e;
    if (!lesson_step_edits(&s->lesson, st, own, &e, d))
      return err_set(err, "%s: a step's edits do not fit the model or sentence", s->lesson.path);
    s->step_edits[i] = edits_trace(own, &e, err);
    edits_free(&e);
    if (!s->step_edits[i]) return false;
  }
  return true;
}

// A step's edits apply to its compare= sentence too: its compare trace becomes the edited pass.
static bool edit_compares(Session *s, LessonDiag *d, Err *err) {
  for (int i = 0; s->has_lesson && s->compare && i < s->lesson.n_steps; i++) {
    const LessonStep *st = &s->lesson.steps[i];
    if (!s->compare[i] || (!st->edits && !st->heads_off)) continue;
    TraceEdits e;
    if (!lesson_step_edits(&s->lesson, st, s->compare[i], &e, d))
      return err_set(err, "%s: a step's edits do not fit its compare= sentence", s->lesson.path);
    Trace *t = edits_trace(s->compare[i], &e, err);
    edits_free(&e);
    if (!t) return false;
    trace_free(s->compare[i]);
    s->compare[i] = t;
  }
  return true;
}

bool session_edits_open(Session *s, const SessionOpts *o, LessonDiag *d, Err *err) {
  if ((o->model.n_edit || o->model.n_head_off) && (s->gen || model_is_seq2seq(s->model)))
    return err_set(err,
                   "--edit and --head-off go with an encoder or a decoder-only model, without --generate");
  if (!model_source_edits(&o->model, s->trace, &s->edits, err) || !session_edits_apply(s, err)) return false;
  return make_steps(s, d, err) && edit_compares(s, d, err);
}

void session_edits_unapply(Session *s) {
  free_steps(s);
  if (!s->base) return;
  trace_free(s->trace);
  s->trace = s->base;
  s->base = NULL;
}

void session_edits_reapply(Session *s) {
  Err err = {0};
  if (!session_edits_apply(s, &err)) {
    edits_clear(&s->edits);
    err_set(&s->note, "the edits were dropped: %s", err.msg);
  }
  LessonDiag d = {0};
  if (!make_steps(s, &d, &err)) free_steps(s); // the lesson's edits need its own sentence
}

void session_edits_close(Session *s) {
  free_steps(s);
  if (s->base) {
    trace_free(s->trace);
    s->trace = s->base;
    s->base = NULL;
  }
  edits_free(&s->edits);
}
