// marks.h -- what a teacher puts over a stage picture: a spotlight and pen strokes (issue 13.4).
//
// A spotlight dims every cell of the stage's operands but those of the selected row, column or
// cell of the result, and the cells they were computed from (row i of a left factor, column j of a
// right one: the links of view.h). A pen stroke is a list of points kept in the picture's cell
// coordinates -- an operand of the layout and a fractional row and column of it (row 2.5 is the
// middle of the third row) -- so a stroke stays on its cells when the window's size, the zoom or
// the text scale changes: marks_point_xy asks the layout where the operand is now. A stroke is
// freehand, an arrow (first point to last) or a circle (the ellipse in the box the drag spans).
//
//     Marks m = {0};
//     MarkPoint p;
//     if (marks_point_at(&lay, mx, my, &p)) marks_add_point(&m, &p);  // while the mouse drags
//     marks_draw(&scene, &lay, &m, &spot, theme, unit);             // after the view is drawn
#ifndef SF_MARKS_H
#define SF_MARKS_H

#include <stdbool.h>
#include <stdint.h>

#include "colormap.h" // defines: Theme
#include "scene.h"    // defines: Scene
#include "view.h"     // defines: ViewLayout

typedef enum { SPOT_OFF, SPOT_ROW, SPOT_COL, SPOT_CELL, SPOT_KINDS } SpotKind;

typedef struct {
  SpotKind kind;
  int row, col; // indices into the step's result matrix (token positions); -1 for none
} Spotlight;

typedef enum { PEN_FREE, PEN_ARROW, PEN_CIRCLE, PEN_SHAPES } PenShape;

#define MARKS_COLORS 4
#define MARKS_MAX_STROKES 64
#define MARKS_MAX_POINTS 512

typedef struct {
  int op;     // the operand of the layout the point is measured against
  float r, c; // fractional row and column of that operand (may lie outside it, beside it)
} MarkPoint;

typedef struct {
  PenShape shape;
  int color; // 0 .. MARKS_COLORS-1 (marks_color)
  int n;     // points (arrow and circle use the first and the last)
  MarkPoint pts[MARKS_MAX_POINTS];
} MarkStroke;

typedef struct {
  int n; // strokes; the last one grows while the mouse drags
  MarkStroke strokes[MARKS_MAX_STROKES];
} Marks;

// The pen's colours (red, blue, green, orange): strong on both themes.
uint32_t marks_color(int i);
const char *marks_color_name(int i);
const char *marks_shape_name(PenShape s);
const char *marks_spot_name(SpotKind k);

// The point (px, py) in cell coordinates of the operand under it, or of the nearest operand;
// false when the layout has no operand.
bool marks_point_at(const ViewLayout *l, float px, float py, MarkPoint *p);
// Where p is drawn in this layout; false when its operand is not there.
bool marks_point_xy(const ViewLayout *l, const MarkPoint *p, float *x, float *y);

// Starts a stroke (false when MARKS_MAX_STROKES are drawn) and adds a point to the last one
// (a point beyond MARKS_MAX_POINTS replaces the last, so a long stroke still ends where it ends).
bool marks_begin(Marks *m, PenShape shape, int color, const MarkPoint *p);
void marks_add_point(Marks *m, const MarkPoint *p);

// The kept rectangle of operand v under the spotlight (x, y, w, h in pixels): false when the
// whole operand is dimmed; with SPOT_OFF the whole operand is kept.
bool marks_spot_keep(const ViewOperand *v, const Spotlight *sp, float r[4]);
// Draws the spotlight (dims every operand's cells outside its kept rectangle with the theme's
// background at 78 %) and then the strokes, `unit` scaling the pen's width (1 at 1080 px).
void marks_draw(Scene *s, const ViewLayout *l, const Marks *m, const Spotlight *sp, const Theme *th,
                float unit);

#endif
