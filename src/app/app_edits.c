// app_edits.c -- what-if edits in the window (issue 13 items 1-2; edits.h, session_edits.c).
//
// Keys (none of them taken before, see app.c and the help overlay):
//   V        type a new value for the selected cell (Enter sets it, Esc cancels)
//   Ctrl+↑ ↓ nudge the selected cell's value up or down (scores by 0.5, other numbers by 0.1)
//   X        switch the head shown off: zeroed in the concatenation, then uniform, then on again
//   U        undo the last edit (or the last head switched); Shift+U undoes all of them
//   D        difference view: the stage edited and the model's own side by side, with their
//            difference (a diverging colour scale centred on 0)
// Every change runs the forward again at once (session_edits_apply) and says in the status what
// it did to the prediction at the last token. The edits and heads off are written above the footer
// of every picture (page.c), saved ones included.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_internal.h"
#include "numfmt.h" // defines: numfmt_prob

const Trace *app_shown_trace(const App *a) {
  const Session *s = a->s;
  if (s->has_lesson && s->step_edits && a->step >= 0 && a->step < s->lesson.n_steps && s->step_edits[a->step])
    return s->step_edits[a->step];
  return s->trace;
}

// An undo history of what changed the list: an edit added, or a head switched (its mode before).
static void push_undo(App *a, int kind, int layer, int head, HeadOff before) {
  if (a->n_undo == APP_MAX_UNDO) { // forget the oldest
    memmove(a->undo, a->undo + 1, sizeof a->undo[0] * (APP_MAX_UNDO - 1));
    a->n_undo--;
  }
  a->undo[a->n_undo++] = (AppUndo){kind, layer, head, before};
}

// The most probable word at the last token of t and its probability; false without a prediction.
static bool top_word(const Trace *t, const char **word, float *p, int *id) {
  int k = t->pred >= 0 ? t->pred : t->class_pred;
  if (k < 0) return false;
  const TraceTensor *x = &t->t[k];
  int r = x->rows - 1, best = 0;
  for (int j = 1; j < x->cols; j++)
    if (trace_at(x, 0, r, j) > trace_at(x, 0, r, best)) best = j;
  char buf[64];
  static char keep[64];
  snprintf(keep, sizeof keep, "%s", trace_axis_label(t, x->col_axis, best, buf, sizeof buf));
  *word = keep, *p = trace_at(x, 0, r, best), *id = best;
  return true;
}

// Runs the edits again; the status says what was done and what the prediction became.
static void rerun(App *a, const char *what) {
  Err err = {0};
  const Trace *own = session_unedited(a->s);
  const char *w0;
  float p0 = 0;
  int id0 = -1;
  char before[64] = "";
  if (top_word(own, &w0, &p0, &id0)) snprintf(before, sizeof before, "%s", w0);
  bool was_edited = a->s->base != NULL;
  if (!session_edits_apply(a->s, &err)) {
    app_set_status(a, "%s", err.msg);
    return;
  }
  if (a->diff && was_edited != (a->s->base != NULL)) // the difference view comes or goes: new cells
    a->sel_op = -1, a->pinned = a->cursor = false;
  if (a->diff && session_unedited(a->s) == app_shown_trace(a)) // nothing left to compare: the view
    a->diff = false; // leaves the difference mode (issue 31: diff=1 stayed on after Shift+U)
  a->global_stale = true;
  app_touch(a);
  const Trace *t = a->s->trace;
  const char *w1;
  float p1;
  int id1;
  if (before[0] && top_word(t, &w1, &p1, &id1)) {
    const TraceTensor *x = &t->t[t->pred >= 0 ? t->pred : t->class_pred];
    float mine = trace_at(x, 0, x->rows - 1, id0); // the model's own favourite, now
    // percentages, as the prediction's bars write them (one notation of a probability on a slide)
    char b0[32], b1[32], bm[32];
    numfmt_prob(b0, sizeof b0, p0, true, true), numfmt_prob(b1, sizeof b1, p1, true, true);
    numfmt_prob(bm, sizeof bm, mine, true, true);
    if (id1 == id0)
      app_set_status(a, "%s · next word: %s %s → %s", what, before, b0, bm);
    else
      app_set_status(a, "%s · next word: %s %s → %s %s (%s now %s)", what, before, b0, w1, b1, before, bm);
  } else {
    app_set_status(a, "%s", what);
  }
}

// With no cell selected, the cell a lesson step frames (its focus) is the selection: the box on
// screen and the cell V edits agree (issue 31: after Shift+U left the difference view, the focus
// box stayed while V said "select a cell first"). False when the step frames no single cell.
static bool select_focus(App *a) {
  const LessonStep *ls = app_lesson_step(a);
  const ViewLayout *l = &a->lay;
  if (!ls || ls->row < 0 || ls->col < 0 || l->result < 0 || l->result >= l->n_ops) return false;
  const Operand *o = &l->ops[l->result].op;
  if (ls->row >= o->rows || ls->col >= o->cols) return false;
  a->sel_op = l->result, a->sel_i = ls->row, a->sel_j = ls->col;
  a->pinned = true, a->dirty = true;
  return true;
}

// The selected cell as an edit (its current value in *now); false with the reason in the status.
static bool selected_edit(App *a, TraceEdit *x, float *now) {
  if ((a->sel_op < 0 || a->sel_op >= a->lay.n_ops) && !select_focus(a)) {
    app_set_status(a, "select a cell first (hover it, click it or Shift+arrows), then V or Ctrl+↑ ↓");
    return false;
  }
  if (app_shown_trace(a) != a->s->trace) {
    app_set_status(a, "this lesson step shows its own edits: edit on another step");
    return false;
  }
  const Operand *o = &a->lay.ops[a->sel_op].op;
  if (o->index < 0 || o->minus_index >= 0 || o->trace != a->s->trace) {
    app_set_status(a, "this cell cannot be edited: pick a cell of E, a weight, a bias, a gain or a score");
    return false;
  }
  const TraceTensor *tt = &o->trace->t[o->index];
  int si = a->sel_i + o->row0, sj = a->sel_j + o->col0; // (the matrix's cell: a window of the tokens)
  int i = o->transpose ? sj : si, j = o->transpose ? si : sj, h = o->head;
  if (h < 0) { // every head side by side: column j of head j / cols
    h = j / tt->cols;
    j %= tt->cols;
  }
  Err err = {0};
  if (!edits_for_cell(o->trace, o->index, tt->heads > 1 || tt->per_head ? h : 0, i, j, 0, x, &err)) {
    app_set_status(a, "%s", err.msg);
    return false;
  }
  *now = trace_at(tt, tt->heads > 1 ? h : 0, i, j);
  return true;
}

static void set_value(App *a, TraceEdit *x, float v) {
  Err err = {0};
  x->value = v;
  if (!edits_add(&a->s->edits, x, &err)) {
    app_set_status(a, "%s", err.msg);
    return;
  }
  push_undo(a, 0, 0, 0, HEAD_ON);
  char label[200];
  rerun(a, edits_label(a->s->trace, x, label, sizeof label));
}

static void nudge(App *a, int dir) {
  TraceEdit x;
  float now;
  if (!selected_edit(a, &x, &now)) return;
  float step = x.kind == EDIT_SCORE ? 0.5f : 0.1f;
  set_value(a, &x, now + (float)dir * step);
}

// X: the head shown, of the layer shown: on → zeroed → uniform → on.
static void toggle_head(App *a) {
  int k = app_trace_step(a);
  const Trace *t = a->s->trace;
  if (a->head < 0 || k < 0 || t->steps[k].layer < 0 || t->T > 0 || t->steps[k].kind >= STEP_MEMORY) {
    app_set_status(a, "X switches off the head shown: go to a stage of a layer and pick a head (1–9)");
    return;
  }
  if (app_shown_trace(a) != t) {
    app_set_status(a, "this lesson step shows its own edits: switch heads on another step");
    return;
  }
  int l = t->steps[k].layer;
  HeadOff was = edits_head(&a->s->edits, l, a->head), next = (HeadOff)((was + 1) % 3);
  Err err = {0};
  if (!edits_set_head(&a->s->edits, t, l, a->head, next, &err)) {
    app_set_status(a, "%s", err.msg);
    return;
  }
  push_undo(a, 1, l, a->head, was);
  char what[96];
  snprintf(what, sizeof what, "layer %d head %d %s", l + 1, a->head + 1,
           next == HEAD_ON     ? "on again"
           : next == HEAD_ZERO ? "off (zeroed)"
                               : "off (uniform attention)");
  rerun(a, what);
}

static void undo(App *a, bool all) {
  if (edits_empty(&a->s->edits)) {
    a->n_undo = 0; // heads switched off and on again: nothing left to undo
    app_set_status(a, "no edits to undo: this is the model's own pass");
    return;
  }
  if (all) {
    edits_clear(&a->s->edits);
    a->n_undo = 0;
    rerun(a, "every edit undone: the model's own numbers");
    return;
  }
  if (a->n_undo == 0) { // edits from the command line: the last of the list
    if (!edits_undo(&a->s->edits)) edits_clear(&a->s->edits);
  } else {
    AppUndo u = a->undo[--a->n_undo];
    Err err = {0};
    if (u.kind == 0)
      edits_undo(&a->s->edits);
    else
      edits_set_head(&a->s->edits, a->s->trace, u.layer, u.head, u.before, &err);
  }
  rerun(a, edits_empty(&a->s->edits) ? "undone: the model's own numbers" : "undone");
}

// V: the value field's keys. Digits, '.', '-', 'e' and Backspace; Enter sets, Esc cancels. The
// field opens with the cell's value, selected: the first character typed replaces it.
static bool value_key(App *a, const AppEvent *e) {
  if (a->value_fresh && e->kind == EV_KEY &&
      (e->key == KEY_CHAR || e->key == KEY_MINUS || e->key == KEY_PLUS || e->key == KEY_BACKSPACE))
    a->value[0] = 0;
  if (e->kind == EV_KEY && e->key != KEY_NONE) a->value_fresh = false;
  size_t n = strlen(a->value);
  if (e->kind == EV_TEXT) {
    for (const char *p = e->text; *p && n + 1 < sizeof a->value; p++)
      if (strchr("0123456789.-+eE", *p)) a->value[n++] = *p, a->value[n] = 0;
    a->dirty = true;
    return true;
  }
  if (e->kind != EV_KEY) return false;
  switch (e->key) {
  case KEY_ESCAPE:
    a->value_editing = false, a->req.text_input_changed = true;
    app_set_status(a, "no edit");
    return true;
  case KEY_BACKSPACE:
    if (n) a->value[n - 1] = 0;
    a->dirty = true;
    return true;
  case KEY_ENTER: {
    char *end;
    double v = strtod(a->value, &end);
    if (end == a->value || *end || !isfinite(v) || fabs(v) > 1e30) {
      app_set_status(a, "“%s” is not a number: type one such as 6 or -0.5", a->value);
      return true;
    }
    a->value_editing = false, a->req.text_input_changed = true;
    set_value(a, &a->value_target, (float)v);
    return true;
  }
  case KEY_MINUS:
  case KEY_PLUS:
    if (n + 1 < sizeof a->value) a->value[n] = e->key == KEY_MINUS ? '-' : '+', a->value[n + 1] = 0;
    a->dirty = true;
    return true;
  case KEY_CHAR:
    if (e->ch < 128 && strchr("0123456789.-+e", (int)e->ch) && n + 1 < sizeof a->value)
      a->value[n] = (char)e->ch, a->value[n + 1] = 0;
    a->dirty = true;
    return true;
  default: return true; // the field has the keys while it is open
  }
}

bool app_edits_key(App *a, const AppEvent *e) {
  if (a->value_editing) return value_key(a, e);
  if (e->kind != EV_KEY) return false;
  bool ctrl = e->mods & MOD_CTRL, shift = e->mods & MOD_SHIFT;
  if (ctrl && (e->key == KEY_UP || e->key == KEY_DOWN)) {
    nudge(a, e->key == KEY_UP ? 1 : -1);
    return true;
  }
  if (e->key != KEY_CHAR || ctrl) return false;
  switch (e->ch) {
  case 'v': {
    float now;
    if (selected_edit(a, &a->value_target, &now)) {
      a->value_editing = true, a->req.text_input_changed = true;
      snprintf(a->value, sizeof a->value, "%g", (double)now);
      a->value_now = now;
      a->value_fresh = true;
      a->dirty = true;
    }
    return true;
  }
  case 'x': toggle_head(a); return true;
  case 'u': // the edits first; with none, U falls to the window's own: the last appended token
    if (edits_empty(&a->s->edits) && session_can_append(a->s, &(Err){0})) return false;
    undo(a, shift);
    return true;
  case 'd':
    if (!a->diff && session_unedited(a->s) == app_shown_trace(a)) {
      app_set_status(a,
                     "D compares an edited pass with the model's own: make an edit first (V, Ctrl+↑ ↓, X)");
      return true;
    }
    if (!a->diff) { // a step that compares two sentences has its own second side already
      const char *text;
      int r, c;
      const LessonStep *ls = app_lesson_step(a);
      if (session_compare(a->s, ls ? a->step : -1, &text, &r, &c)) {
        app_set_status(a, "this step already compares two sentences: D works on the other steps");
        return true;
      }
    }
    a->diff = !a->diff;
    app_touch(a);
    app_set_status(a, a->diff ? "difference view: edited, the model's own, and edited − own"
                              : "difference view off");
    return true;
  default: return false;
  }
}

void app_edits_page(const App *a, PageSpec *p) {
  const Trace *shown = app_shown_trace(a), *own = session_unedited(a->s);
  p->trace = shown;
  if (!a->diff || shown == own || p->compare) return;
  p->compare = own;
  p->compare_sentence = a->s->text;
  p->caption_a = "edited (what-if)";
  p->caption_b = "the model's own";
  const LessonStep *ls = app_lesson_step(a);
  p->compare_row = ls ? ls->row : -1, p->compare_col = ls ? ls->col : -1;
}

void app_edits_draw(App *a, Scene *s, float W, float H, float u) {
  if (!a->value_editing) return;
  const Theme *th = theme_get(a->theme);
  float bh = 64 * u, by = H - bh;
  scene_rect(s, 0, by, W, bh, th->panel);
  scene_rect(s, 0, by, W, 3 * u, th->warn);
  char label[200], line[400];
  edits_label(a->s->trace, &a->value_target, label, sizeof label);
  char *eq = strstr(label, " = ");
  if (eq) *eq = 0; // the name and cell, without the value
  snprintf(line, sizeof line, "New value for %s (now %g) — Enter sets it, Esc cancels", label,
           (double)a->value_now);
  scene_text(s, FONT_SANS_BOLD, 19 * u, 24 * u, by + 26 * u, th->warn, line);
  float fs = 24 * u, tw = text_width(FONT_SANS_BOLD, fs, a->value);
  if (a->value_fresh) // selected: typing replaces it
    scene_rect(s, 22 * u, by + 56 * u - fs * 0.9f, tw + 4 * u, fs * 1.15f, th->highlight);
  snprintf(line, sizeof line, "%s▌", a->value);
  scene_text(s, FONT_SANS_BOLD, fs, 24 * u, by + 56 * u, a->value_fresh ? th->bg : th->text, line);
}

void app_edits_describe(const App *a, char *buf, int cap) {
  const TraceEdits *e = &a->s->edits;
  int off = 0;
  for (int k = 0; e->off && k < e->n_layers * e->H; k++) off += e->off[k] != HEAD_ON;
  snprintf(buf, (size_t)cap, " edits=%d heads_off=%d diff=%d%s%s", e->n, off, a->diff,
           a->value_editing ? " value=" : "", a->value_editing ? a->value : "");
}
