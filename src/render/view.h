// view.h -- one step of the trace drawn as a matrix equation: the picture of a stage.
//
// view_render lays out and draws step `step` of a trace (trace->steps[step]) into the rectangle
// (x, y, w, h) of a Scene, as DESIGN.md's stage table shows it: [O] × [E] = [Z],
// [Z] × [W^q] + [b^q] = [Q] with each head's column block banded in the head's colour,
// [Q_h] × [K_hᵀ] · 1/√d_k = [S_h], softmax([S_h]) = [A_h] with each row's sum, ... Every operand
// is a heatmap with tokens on its token axes (rows are queries, columns keys), its symbol above
// and its shape below (L×D = 6×16), numbers in the cells when they fit, masked cells hatched;
// a colour bar gives the scale. Operands too large for whole-pixel cells are area-averaged (a
// one-hot O and a prediction by the maximum of each block, so that a 1 or a peak shows), their true
// shape labelled. With head = -1 a per-head stage shows all heads as a grid.
//
// The layout is returned (ViewLayout) so the window can hit-test the cursor and the inspector
// can follow links: each operand says how it relates to a cell (i, j) of the result (row i of
// the left factor, column j of the right one, the same cell of a summand ...).
//
//     ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
//     ViewLayout lay;
//     view_render(&scene, trace, step, &o, 0, 80, 1920, 900, &lay);
//     if (view_hit(&lay, mx, my, &op, &i, &j)) ...
#ifndef SF_VIEW_H
#define SF_VIEW_H

#include <stdbool.h>

#include "colormap.h" // defines: Colormap, ColorScale, Theme
#include "inside.h"   // defines: InsideView
#include "operand.h"  // defines: Operand
#include "scene.h"    // defines: Scene
#include "stored.h"   // defines: StoredView
#include "sampling.h" // defines: Sampling
#include "trace.h"    // defines: Trace

typedef enum { SCALE_MATRIX, SCALE_STAGE, SCALE_GLOBAL, SCALE_COUNT } ScaleMode;

// A sentence longer than this shows a window of consecutive tokens on every token axis (issue 31:
// "above the readable size, a window of the tokens with a way to move it"): at 1280×720 the
// scores of 40 tokens have 8 px cells, and a lesson's softmax(S) = A beside its narration 3 px.
// The window holds as many tokens as can each be named at their cells with labels of at least
// VIEW_WINDOW_LABEL (up to 24, measured by drawing the picture), fewer when the picture is crowded,
// at least 8.
#define VIEW_TOKENS_READABLE 40
// The least size of a window's token labels, per 1080 lines: 17.3 px at 720, the equations' own
// label size (view_layout.c's FS_MIN), whose capitals and digits are 12.6 px high (DejaVu Sans: 0.73
// of the size; 24 tokens drew 12.9 px labels, capitals 9.4), still read when the picture is shown at
// half size. A window keeps as many tokens as get labels this large (fewer when the picture is
// small, at least 8).
#define VIEW_WINDOW_LABEL 26.0f

typedef struct {
  const Theme *theme;
  Colormap cmap; // CMAP_AUTO: diverging for signed values, viridis for probabilities, grey one-hot
  ScaleMode scale;
  int head;         // 0-based head of per-head stages; -1 = all heads
  int part;         // Q, K, V stage: 0 all three (when they fit), 1 Q, 2 K, 3 V
  bool numbers;     // print values in cells when they fit
  float text_scale; // the picture's unit: 1 for a 1080-line page (page.c sets it from the height)
  // The picture's scale (window + and −): at 1 the equation is fitted to fill its area; at z
  // every length of that fitted picture (cells, numbers, labels, operators) is z times as long,
  // and when it no longer fits, pan_x/pan_y (pixels, clipped to ViewLayout.pan_max) scroll it.
  float zoom; // 0.5 .. 3 (0 counts as 1)
  float pan_x, pan_y;
  // Highlights, as indices into the result matrix (-1 = none):
  int focus_row, focus_col;       // a lesson's focus
  int hover_op, hover_i, hover_j; // the cell under the cursor (operand index in the layout)
  bool pinned;                    // the hover cell is pinned (drawn heavier)
  float global_lo, global_hi;     // the range SCALE_GLOBAL uses (view_global_range)
  bool model_view;                // softmax stage: every layer × head as thumbnails (view_model.c)
  int model_layer, model_head;    // the model view's selected thumbnail: the page holding it is drawn
  InsideView inside;              // a view inside the pass instead of the step's equation (view_inside.c)
  const StoredView *stored;       // INSIDE_STORED's block and matrix, read from the model's GGUF file
                                  // by the app (formats/gguf_stored.h); NULL: the view says none was read
  // Predict, then reveal (a lesson's reveal=): 0 shows all; 1 hides the whole result, 2 its focus
  // row (each result operand's own focus row in a compare view). A hidden value is not drawn at
  // all -- no cell colour, number, row sum, chart bar, likely-word label or colour-bar end comes
  // from it -- so that neither the pixels nor an SVG's text give the answer away.
  int hide;
  // Sampling (sampling.h) on the prediction's chart of the last row (sampling_chart.h): NULL or
  // off shows the plain most likely words. sampling_rng: the generator's state before the draw
  // (the window's next R, a generation step's own draw), so the picture shows that draw.
  const Sampling *sampling;
  uint64_t sampling_rng;
  // A sentence of more than VIEW_TOKENS_READABLE tokens: the first token of the window shown
  // (0-based), -1 for the window around the focus row (else the sentence's start). tok_keys: how
  // the viewer moves the window, said under the picture ("Shift+← Shift+→ move it"), or NULL.
  int tok_first;
  const char *tok_keys;
  int tok_count; // > 0: exactly tokens tok_first .. tok_first + tok_count - 1, however long the sentence
} ViewOptions;

typedef enum {
  LINK_NONE,
  LINK_ROW,      // row i of this operand produced result cell (i, j)
  LINK_COL,      // column j of this operand
  LINK_CELL,     // cell (i, j) of this operand
  LINK_COLBLOCK, // cell (i, j - offset) when j falls in this operand's columns (heads → concat)
} LinkKind;

#define VIEW_MAX_OPS 40

typedef struct {
  Operand op;
  float x, y, w, h; // the cells' rectangle in pixels
  int drows, dcols; // grid drawn (fewer than rows/cols when area-averaged)
  ColorScale scale;
  LinkKind link;
  int link_offset;
  const char *symbol; // TeX name shown above
  float sym[4];       // the symbol's box as drawn (x, y, w, h; w = 0: not drawn): the window's hover
  char shape[40];     // the shape written under the cells: "L×D = 6×64"
  bool result;
  // What was drawn, for tests and the window's status: the smallest word label (0: none) and the
  // smallest of a token axis (a window of a long sentence's tokens is sized by it), whether the
  // column labels are turned, and the numbers in the cells (size and widest width, 0 when the
  // cells show no numbers), and the size the back row of a lecture hall needs for a small
  // result's numbers (0: none asked; page.c narrows the narration for it).
  float label_px, token_px;
  bool cols_turned;
  float number_px, number_w, number_want;
} ViewOperand;

// The model view's grid (view_model.c): rows are layers, columns heads; the page drawn holds layers
// l0 .. l0 + layers - 1 and heads h0 .. h0 + heads - 1 (all of them when the model's thumbnails
// are readable at once: pages = 1); the cell of layer l0 + r, head h0 + c starts at
// (x + c·cw, y + r·ch) and its thumbnail at (tx, ty) inside the cell, `side` pixels square.
typedef struct {
  int layers, heads; // thumbnails on the page (0 when the view is no model view)
  int l0, h0;        // the page's first layer and head (0-based)
  int page, pages;   // this page (0-based) of how many: pages_h across the heads, then down the layers
  int pages_h;
  float x, y, cw, ch, tx, ty, side;
} ViewGrid;

typedef struct {
  ViewOperand ops[VIEW_MAX_OPS];
  int n_ops;
  int result;        // index of the step's result operand, or -1 (tokens step)
  float area[4];     // the rectangle the view was drawn in (x, y, w, h): the window places its inspector
  ViewGrid grid;     // the model view's thumbnails (grid.layers = 0 for any other view)
  float pic[4];      // the equation's extent as drawn (x, y, w, h), past the area when zoomed in
  float clip[4];     // the part of the area the equation may draw in (its colour bars excluded)
  float pan_max[2];  // how far the picture can pan (0, 0 when it fits its area)
  float pan[2];      // the pan applied (ViewOptions.pan_x/pan_y clipped)
  float fs;          // the label size of the picture, in pixels
  int labels_cut;    // word labels shortened with an ellipsis
  int labels_short;  // token axes of up to about 24 entries (AXL_ALL_UP_TO) that name only some of
                     // them: page.c narrows the narration column for them
  int words_missing; // token axes that leave a distinct word unnamed (a longer sentence: view_stages.c
                     // shows a window of its tokens instead)
  float chart[4];    // the prediction's bar chart(s) of the most likely next words (w = 0: none)
  float chart_px;    // the size of the chart's words
  int text_pages;    // page.c: the pages of the step's narration (1 when it fits; PageSpec.text_page)
  float panel[4];    // page.c: the invariants panel over the view (x, y, w, h; w = 0: none)
  // The window of the tokens shown (VIEW_TOKENS_READABLE): tokens tok_first .. tok_first +
  // tok_shown - 1 (0-based) of tok_total; tok_shown = 0 when every token shows. The operands'
  // cells count from the window's start (Operand.row0, col0 give the matrix's own indices).
  int tok_first, tok_shown, tok_total;
} ViewLayout;

ViewOptions view_options_default(const Theme *theme);
void view_render(Scene *s, const Trace *t, int step, const ViewOptions *o, float x, float y, float w, float h,
                 ViewLayout *out);
// The same step for two sentences side by side (b: another trace of the same model), captioned,
// with their difference when the shapes agree. focus_row_b/col_b place the focus in b's tokens.
void view_render_compare(Scene *s, const Trace *a, const Trace *b, int step, const ViewOptions *o,
                         const char *caption_a, const char *caption_b, int focus_row_b, int focus_col_b,
                         float x, float y, float w, float h, ViewLayout *out);
// The similarity stage (STEP_SIM, view_sim.c) of a and b (b NULL: one line saying it needs a
// second sentence): cos(z_i, z'_j) at the token embeddings and after the step's layer, and the
// line of one word across the layers (o->focus_row in a and focus_b in b, or the last word both
// sentences share).
void view_render_sim(Scene *s, const Trace *a, const Trace *b, int step, const ViewOptions *o,
                     const char *caption_a, const char *caption_b, int focus_b, float x, float y, float w,
                     float h, ViewLayout *out);
// The window of tokens view_render shows for trace t with options o: *first and *count (count 0:
// every token). The window and the exports ask it to move and to name the window.
void view_token_window(const Trace *t, const ViewOptions *o, int *first, int *count);
// The same window with at most `most` tokens (what a picture has room to name; 0: no limit), around
// the same focus, also for a sentence of VIEW_TOKENS_READABLE tokens or fewer longer than `most`; a
// window asked for exactly (tok_count) stays as asked.
void view_token_window_fit(const Trace *t, const ViewOptions *o, int most, int *first, int *count);
// Draws only the selected cell (o->hover_*) and its links, over a view already drawn with this
// layout: the window draws the page once and the selection on top of it at every frame.
void view_draw_selection(Scene *s, const ViewLayout *l, const ViewOptions *o);
// The operand and cell under (px, py), if any.
bool view_hit(const ViewLayout *l, float px, float py, int *op, int *i, int *j);
// The operand whose symbol (the TeX name above its cells) is under (px, py), if any.
bool view_symbol_hit(const ViewLayout *l, float px, float py, int *op);
// What operand k's symbol stands for and its shape, in plain text: "Z′: layer output, L×D = 6×64".
// Empty when k is no operand of l.
void view_symbol_describe(const ViewLayout *l, int k, char *buf, int cap);
// Whether the Q, K, V stage shows all three projections for ViewOptions.part (0 asks for all
// three, shown when the cells stay readable: else Q alone).
bool view_qkv_all(const Trace *t, int part);
// The model view (ViewOptions.model_view) is drawn for this step: a softmax stage (A).
bool view_model_available(const Trace *t, int step);
// The model view's layer and head (0-based) whose cell holds (px, py), if any (on the page drawn).
bool view_model_hit(const ViewLayout *l, float px, float py, int *layer, int *head);
// The thumbnail of layer `layer`, head `head` of the model view: r = x, y, w, h (w = 0: not on
// the page drawn).
void view_model_cell(const ViewLayout *l, int layer, int head, float r[4]);
// The views inside the pass (view_inside.c; inside.h names them): the page title and formula of
// view k. view_render draws o->inside when it is set: the layer is the step's (the last outside the
// layers), the position o->focus_row (-1: the last), the head o->head (-1: all).
const char *view_inside_title(InsideView k);
const char *view_inside_tex(InsideView k);
// The range of all activations of the trace (for SCALE_GLOBAL), ignoring weights and one-hot.
void view_global_range(const Trace *t, float *lo, float *hi);
const char *view_scale_name(ScaleMode m);
// A tensor's title and formula as the trace computed it: the stage table's (x->title, x->tex),
// except with the scale taken out (Trace.no_scale, the training view's √d_k experiment), where the
// scores are no "Scaled scores" and their formula has no 1/√d_k.
const char *view_tensor_title(const Trace *t, const TraceTensor *x);
const char *view_tensor_tex(const Trace *t, const TraceTensor *x);
// The colormap a view uses for an operand when o->cmap is CMAP_AUTO.
Colormap view_auto_cmap(const Operand *op);

#endif
