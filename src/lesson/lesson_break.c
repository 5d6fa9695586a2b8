// lesson_break.c -- a lesson with a mistake still gives the lecture (see lesson.h,
// lesson_break_steps): the window turns each step that has an error into a broken step showing
// its message, and opens on the rest.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lesson.h"

// The step whose lines hold `line` (from its heading, or its first text, to the next step's), or -1
// for a line before the first step (the front matter).
static int step_of_line(const Lesson *l, int line) {
  int k = -1;
  for (int i = 0; i < l->n_steps && l->steps[i].line <= line; i++) k = i;
  return k;
}

// A broken step keeps its title and narration; every option that reads the model goes.
static void drop_options(LessonStep *s) {
  s->has_stage = false;
  s->focus = FOCUS_NONE;
  free(s->row_spec), free(s->col_spec), free(s->compare), free(s->edits), free(s->heads_off);
  free(s->spot_row), free(s->spot_col), free(s->facts);
  s->row_spec = s->col_spec = s->compare = s->edits = s->heads_off = s->spot_row = s->spot_col = NULL;
  s->facts = NULL, s->n_facts = 0;
  s->row = s->col = -1;
  s->show = SHOW_ALL, s->reveal = REVEAL_NONE, s->spot = 0, s->gen = 0, s->layer = 0, s->head = 0;
}

int lesson_break_steps(Lesson *l, LessonDiag *d) {
  if (!d) return 0;
  int left = d->n_dropped; // problems that did not fit: not known to be a step's
  for (int q = 0; q < d->n; q++) {
    LessonDiagItem *it = &d->items[q];
    if (it->warning) continue;
    int k = it->line > 0 && l->path && !strcmp(it->file, l->path) ? step_of_line(l, it->line) : -1;
    if (k < 0) {
      left++;
      continue;
    }
    LessonStep *s = &l->steps[k];
    if (!s->broken) { // its first message: the one that explains the others
      size_t n = strlen(it->file) + strlen(it->msg) + 24;
      if ((s->broken = malloc(n))) snprintf(s->broken, n, "%s:%d: %s", it->file, it->line, it->msg);
      drop_options(s);
    }
    it->warning = true; // the window opens: the step shows it instead of its picture
    d->n_errors--;
  }
  return left;
}
