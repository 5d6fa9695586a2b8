// marks.c -- the spotlight and the pen's strokes over a stage picture (marks.h).
#include "marks.h"

#include <math.h>

static const uint32_t COLORS[MARKS_COLORS] = {SF_RGBA(220, 30, 40, 255), SF_RGBA(20, 90, 230, 255),
                                              SF_RGBA(0, 150, 60, 255), SF_RGBA(245, 130, 0, 255)};
static const char *COLOR_NAMES[MARKS_COLORS] = {"red", "blue", "green", "orange"};

uint32_t marks_color(int i) { return COLORS[((i % MARKS_COLORS) + MARKS_COLORS) % MARKS_COLORS]; }
const char *marks_color_name(int i) {
  return COLOR_NAMES[((i % MARKS_COLORS) + MARKS_COLORS) % MARKS_COLORS];
}
const char *marks_shape_name(PenShape s) {
  return s == PEN_ARROW ? "arrow" : s == PEN_CIRCLE ? "circle" : "freehand";
}
const char *marks_spot_name(SpotKind k) {
  return k == SPOT_ROW ? "row" : k == SPOT_COL ? "column" : k == SPOT_CELL ? "cell" : "off";
}

// Operands that carry cells (a difference operand of a compare view counts as one too).
static bool has_cells(const ViewOperand *v) {
  return v->op.rows > 0 && v->op.cols > 0 && v->w > 0 && v->h > 0;
}

bool marks_point_at(const ViewLayout *l, float px, float py, MarkPoint *p) {
  int best = -1;
  float bd = INFINITY;
  for (int k = 0; k < l->n_ops; k++) { // inside an operand: distance 0; else to its rectangle
    const ViewOperand *v = &l->ops[k];
    if (!has_cells(v)) continue;
    float dx = fmaxf(fmaxf(v->x - px, px - (v->x + v->w)), 0),
          dy = fmaxf(fmaxf(v->y - py, py - (v->y + v->h)), 0);
    float d = dx * dx + dy * dy;
    if (d < bd) bd = d, best = k;
  }
  if (best < 0) return false;
  const ViewOperand *v = &l->ops[best];
  p->op = best;
  p->c = (px - v->x) / v->w * (float)v->op.cols;
  p->r = (py - v->y) / v->h * (float)v->op.rows;
  return true;
}

bool marks_point_xy(const ViewLayout *l, const MarkPoint *p, float *x, float *y) {
  if (p->op < 0 || p->op >= l->n_ops || !has_cells(&l->ops[p->op])) return false;
  const ViewOperand *v = &l->ops[p->op];
  *x = v->x + p->c / (float)v->op.cols * v->w;
  *y = v->y + p->r / (float)v->op.rows * v->h;
  return true;
}

bool marks_begin(Marks *m, PenShape shape, int color, const MarkPoint *p) {
  if (m->n >= MARKS_MAX_STROKES) return false;
  MarkStroke *s = &m->strokes[m->n++];
  s->shape = shape, s->color = color, s->n = 1, s->pts[0] = *p;
  return true;
}

void marks_add_point(Marks *m, const MarkPoint *p) {
  if (m->n <= 0) return;
  MarkStroke *s = &m->strokes[m->n - 1];
  if (s->n < MARKS_MAX_POINTS)
    s->pts[s->n++] = *p;
  else
    s->pts[MARKS_MAX_POINTS - 1] = *p;
}

// Rows (or columns) [lo, hi) of an operand with n of them, as a pixel span from `at` over `len`.
static void span(float at, float len, int n, int lo, int hi, float *a, float *b) {
  *a = at + len * (float)lo / (float)n;
  *b = at + len * (float)hi / (float)n;
}

bool marks_spot_keep(const ViewOperand *v, const Spotlight *sp, float r[4]) {
  int r0 = 0, r1 = v->op.rows, c0 = 0, c1 = v->op.cols;
  if (sp && sp->kind != SPOT_OFF) {
    bool row = sp->kind == SPOT_ROW || sp->kind == SPOT_CELL,
         col = sp->kind == SPOT_COL || sp->kind == SPOT_CELL;
    int j = sp->col;
    LinkKind link = v->result ? LINK_CELL : v->link;
    if (link == LINK_COLBLOCK) j -= v->link_offset, link = LINK_CELL;
    if (link == LINK_NONE) return false;                         // not computed into the selection
    if (row && link != LINK_COL) r0 = sp->row, r1 = sp->row + 1; // row i of a left factor, a summand
    if (col && link != LINK_ROW) c0 = j, c1 = j + 1;             // column j of a right factor
    if (r0 < 0 || r1 > v->op.rows || c0 < 0 || c1 > v->op.cols) return false;
  }
  float y0, y1, x0, x1;
  span(v->y, v->h, v->op.rows, r0, r1, &y0, &y1);
  span(v->x, v->w, v->op.cols, c0, c1, &x0, &x1);
  r[0] = x0, r[1] = y0, r[2] = x1 - x0, r[3] = y1 - y0;
  return true;
}

static void draw_spotlight(Scene *s, const ViewLayout *l, const Spotlight *sp, const Theme *th) {
  uint32_t dim = SF_RGBA(SF_R(th->bg), SF_G(th->bg), SF_B(th->bg), 200);
  for (int k = 0; k < l->n_ops; k++) {
    const ViewOperand *v = &l->ops[k];
    if (!has_cells(v)) continue;
    float r[4];
    if (!marks_spot_keep(v, sp, r)) {
      scene_rect(s, v->x, v->y, v->w, v->h, dim);
      continue;
    }
    // the operand minus the kept rectangle: above, below, left and right of it
    scene_rect(s, v->x, v->y, v->w, r[1] - v->y, dim);
    scene_rect(s, v->x, r[1] + r[3], v->w, v->y + v->h - r[1] - r[3], dim);
    scene_rect(s, v->x, r[1], r[0] - v->x, r[3], dim);
    scene_rect(s, r[0] + r[2], r[1], v->x + v->w - r[0] - r[2], r[3], dim);
    scene_frame(s, r[0] - 2, r[1] - 2, r[2] + 4, r[3] + 4, 2, th->text);
  }
}

static void draw_stroke(Scene *s, const ViewLayout *l, const MarkStroke *st, float width) {
  uint32_t c = marks_color(st->color);
  float x0, y0, x1, y1;
  if (st->n < 1 || !marks_point_xy(l, &st->pts[0], &x0, &y0) ||
      !marks_point_xy(l, &st->pts[st->n - 1], &x1, &y1))
    return;
  if (st->shape == PEN_CIRCLE) { // the ellipse inside the dragged box, as 72 segments
    float cx = (x0 + x1) / 2, cy = (y0 + y1) / 2, rx = fabsf(x1 - x0) / 2, ry = fabsf(y1 - y0) / 2;
    float px = cx + rx, py = cy;
    for (int k = 1; k <= 72; k++) {
      float a = (float)k * 6.2831853f / 72, nx = cx + rx * cosf(a), ny = cy + ry * sinf(a);
      scene_line(s, px, py, nx, ny, width, c);
      px = nx, py = ny;
    }
    return;
  }
  if (st->shape == PEN_ARROW) {
    scene_line(s, x0, y0, x1, y1, width, c);
    float dx = x1 - x0, dy = y1 - y0, len = sqrtf(dx * dx + dy * dy);
    if (len < 1) return;
    float ux = dx / len, uy = dy / len, head = fminf(6 * width, len * 0.5f);
    for (int side = -1; side <= 1; side += 2) // two barbs at ±28° from the shaft
      scene_line(s, x1, y1, x1 - head * (ux * 0.88f - side * uy * 0.47f),
                 y1 - head * (uy * 0.88f + side * ux * 0.47f), width, c);
    return;
  }
  if (st->n == 1) { // a dot
    scene_rect(s, x0 - width, y0 - width, 2 * width, 2 * width, c);
    return;
  }
  float px = x0, py = y0;
  for (int k = 1; k < st->n; k++) {
    float nx, ny;
    if (!marks_point_xy(l, &st->pts[k], &nx, &ny)) continue;
    scene_line(s, px, py, nx, ny, width, c);
    px = nx, py = ny;
  }
}

void marks_draw(Scene *s, const ViewLayout *l, const Marks *m, const Spotlight *sp, const Theme *th,
                float unit) {
  if (sp && sp->kind != SPOT_OFF) draw_spotlight(s, l, sp, th);
  if (!m) return;
  float width = fmaxf(2, 5 * unit);
  for (int k = 0; k < m->n; k++) draw_stroke(s, l, &m->strokes[k], width);
}
