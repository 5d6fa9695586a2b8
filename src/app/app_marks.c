// app_marks.c -- the pen, the spotlight and the invariants panel in the window (issue 13.3, 13.4).
//
// Keys (free before, see app.c and the help overlay):
//   W   the pen: off → freehand → arrow → circle → off. While it is on, a drag over the view draws
//       (a pen tablet drives the mouse); a click no longer selects cells.
//   K   the pen's next colour (red, blue, green, orange)
//   Z   clear the strokes of this step
//   Y   spotlight on the selected cell (or the lesson's focus): row → column → cell → off
//   I   the invariants panel: the course's facts about the stage on screen, measured (invariants.h)
// Strokes are kept in the layout's cell coordinates (marks.h), so they stay on their cells when the
// window is resized or zoomed; a new step starts with none. All of it is drawn into the page
// (page.h), so S saves it too.
#include <string.h>

#include "app_internal.h"

void app_marks_step(App *a) {
  a->marks.n = 0;
  a->pen_down = false;
  a->spot = (Spotlight){SPOT_OFF, -1, -1};
  a->spot_user = false;
}

// The cell the spotlight starts from: the selected one, else the lesson's focus.
static bool spot_cell(const App *a, int *i, int *j) {
  if (a->sel_op >= 0) return *i = a->sel_i, *j = a->sel_j, true;
  const LessonStep *ls = app_lesson_step(a);
  if (ls && (ls->row >= 0 || ls->col >= 0)) {
    const ViewLayout *l = &a->lay; // (the picture's cells: a window of a long sentence's tokens)
    int r0 = l->result >= 0 ? l->ops[l->result].op.row0 : 0,
        c0 = l->result >= 0 ? l->ops[l->result].op.col0 : 0;
    return *i = ls->row >= 0 ? ls->row - r0 : -1, *j = ls->col >= 0 ? ls->col - c0 : -1, true;
  }
  return false;
}

static void cycle_spot(App *a) {
  int i = -1, j = -1;
  if (a->spot.kind == SPOT_OFF && !spot_cell(a, &i, &j)) {
    app_set_status(a, "select a cell first (hover it, click it or Shift+arrows), then Y");
    return;
  }
  if (a->spot.kind == SPOT_OFF) a->spot.row = i, a->spot.col = j;
  a->spot.kind = (SpotKind)((a->spot.kind + 1) % SPOT_KINDS);
  if (a->spot.kind == SPOT_ROW && a->spot.row < 0) a->spot.kind = SPOT_COL; // a column focus only
  if (a->spot.kind != SPOT_ROW && a->spot.col < 0) a->spot.kind = SPOT_OFF;
  a->spot_user = true;
  app_touch(a);
  app_set_status(a, "spotlight: %s", marks_spot_name(a->spot.kind));
}

bool app_marks_key(App *a, const AppEvent *e) {
  if (e->key != KEY_CHAR || (e->mods & (MOD_CTRL | MOD_ALT))) return false;
  switch (e->ch) {
  case 'w':
    if (e->mods & MOD_SHIFT) { // Shift+W: the strokes go (Z is the picture's fit)
      a->marks.n = 0, a->pen_down = false;
      app_touch(a);
      app_set_status(a, "strokes cleared");
      return true;
    }
    if (!a->pen_on)
      a->pen_on = true, a->pen_shape = PEN_FREE;
    else if (a->pen_shape + 1 < PEN_SHAPES)
      a->pen_shape = (PenShape)(a->pen_shape + 1);
    else
      a->pen_on = false;
    a->pen_down = false;
    if (a->pen_on)
      app_set_status(a, "pen: %s, %s (drag over the view; W next shape, K colour, Shift+W clear)",
                     marks_shape_name(a->pen_shape), marks_color_name(a->pen_color));
    else
      app_set_status(a, "pen off: the mouse selects cells again");
    return true;
  case 'k':
    if (e->mods & MOD_SHIFT) return false; // Shift+K: R's top-k (app.c)
    a->pen_color = (a->pen_color + 1) % MARKS_COLORS;
    app_set_status(a, "pen colour: %s", marks_color_name(a->pen_color));
    return true;
  case 'y': cycle_spot(a); return true;
  case 'i':
    a->invariants = !a->invariants;
    app_touch(a);
    app_set_status(a, "invariants panel %s", a->invariants ? "on" : "off");
    return true;
  default: return false;
  }
}

// What the strokes' operand numbers refer to: the step, head, layer and part shown, the difference
// view. Strokes drawn on one view are dropped when another is shown (their cells are not there).
static long view_key(const App *a) {
  return (((((long)a->step * 64 + a->head + 1) * 64 + a->layer_delta + 32) * 8 + a->part) * 2 + a->diff) * 2 +
         a->model;
}

bool app_marks_mouse(App *a, const AppEvent *e) {
  if (e->kind == EV_MOUSE_LEAVE) a->pen_down = false; // a stroke ends where the pointer left
  if (!a->pen_on || a->model || a->editing) return false;
  MarkPoint pt;
  if (e->kind == EV_MOUSE_DOWN) {
    if (e->y < a->lay.area[1] || !marks_point_at(&a->lay, e->x, e->y, &pt))
      return false; // the header's controls
    if (a->marks.n == 0) a->marks_view = view_key(a);
    if (!marks_begin(&a->marks, a->pen_shape, a->pen_color, &pt)) {
      app_set_status(a, "%d strokes are the most: Shift+W clears them", MARKS_MAX_STROKES);
      return true;
    }
    a->pen_down = true;
    app_touch(a);
    return true;
  }
  if (e->kind == EV_MOUSE_MOVE && a->pen_down) {
    if (marks_point_at(&a->lay, e->x, e->y, &pt)) marks_add_point(&a->marks, &pt);
    app_touch(a);
    return true;
  }
  if (e->kind == EV_MOUSE_UP && a->pen_down) {
    a->pen_down = false;
    app_touch(a);
    return true;
  }
  return e->kind == EV_MOUSE_MOVE; // no hovering of cells while the pen is on
}

void app_marks_page(App *a, PageSpec *p) {
  const LessonStep *ls = app_lesson_step(a);
  if (!a->spot_user && ls && ls->spot && p->trace) {
    a->lesson_spot.kind = (SpotKind)ls->spot;
    a->lesson_spot.row = ls->spot_row ? lesson_find_token(&p->trace->tokens, ls->spot_row) : -1;
    a->lesson_spot.col = ls->spot_col ? lesson_find_token(&p->trace->tokens, ls->spot_col) : -1;
    p->spotlight = &a->lesson_spot;
  } else if (a->spot.kind != SPOT_OFF) {
    p->spotlight = &a->spot;
  }
  if (a->marks.n > 0 && a->marks_view != view_key(a)) a->marks.n = 0, a->pen_down = false; // another view
  if (a->marks.n > 0) p->marks = &a->marks;
  p->n_invariants = 0;
  a->n_inv = 0;
  if (a->invariants && !p->hide && p->step >= 0) {
    InvFact f[INV_MAX];
    int n = invariants_measure(p->trace, p->step, p->view->head, f, INV_MAX);
    for (int k = 0; k < n; k++) {
      _Static_assert(sizeof f[k].text <= sizeof a->inv[k].text, "an invariant's line fits a PageClaim");
      memcpy(a->inv[k].text, f[k].text, sizeof f[k].text);
      a->inv[k].state = f[k].state;
    }
    p->invariants = a->inv, p->n_invariants = n;
    a->n_inv = n;
  }
}

void app_marks_describe(const App *a, char *buf, int cap) {
  int n = 0;
  buf[0] = 0;
  if (a->pen_on)
    n += snprintf(buf + n, (size_t)(cap - n), " pen=%s/%s", marks_shape_name(a->pen_shape),
                  marks_color_name(a->pen_color));
  float x, y;
  if (a->marks.n > 0 && n < cap) {
    const MarkStroke *st = &a->marks.strokes[a->marks.n - 1];
    n += snprintf(buf + n, (size_t)(cap - n), " strokes=%d", a->marks.n);
    if (n < cap && marks_point_xy(&a->lay, &st->pts[0], &x, &y))
      n += snprintf(buf + n, (size_t)(cap - n), " at=%.0f,%.0f", x, y);
  }
  const Spotlight *sp = a->spot_user || a->spot.kind != SPOT_OFF ? &a->spot : NULL;
  const LessonStep *ls = app_lesson_step(a);
  if (!sp && ls && ls->spot) sp = &a->lesson_spot;
  if (sp && sp->kind != SPOT_OFF && n < cap)
    n += snprintf(buf + n, (size_t)(cap - n), " spot=%s:%d,%d", marks_spot_name(sp->kind), sp->row + 1,
                  sp->col + 1);
  if (a->invariants && n < cap) {
    int held = 0, facts = 0;
    for (int k = 0; k < a->n_inv; k++) held += a->inv[k].state == 1, facts += a->inv[k].state >= 0;
    snprintf(buf + n, (size_t)(cap - n), " invariants=%d/%d", held, facts);
  }
}
