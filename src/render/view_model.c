// view_model.c -- the model view: the attention weights A_h of every layer and head at once, as
// a grid of small heatmaps (rows = layers, columns = heads), each labelled "l3 h2" (1-based).
//
// A student sees at a glance which heads look at the previous word, which at the first one and
// which spread out, in every layer. All thumbnails share one colour scale, 0 → the model's
// largest weight, so they compare (per matrix: each its own). A thumbnail of L×L cells that has fewer pixels
// than L is area-averaged (operand_block_mean), so 24 layers × 12 heads of L = 64 stay a few thousand cells
// to draw. The grid's geometry goes into ViewLayout.grid: the window hit-tests it (view_model_hit) and draws
// its selection on top (view_model_cell).
#include <math.h>
#include <stdio.h>

#include "axislabels.h" // defines: AxisSpec, AxisLabels, axis_labels_plan
#include "view_internal.h"

// The model view's text, per 1080 lines: read from the back row (18 px and 20 px at 720).
#define MV_CAPTION 28.0f
#define MV_LABEL 30.0f

bool view_model_available(const Trace *t, int step) {
  if (step < 0 || step >= t->n_steps || t->steps[step].kind != STEP_SOFTMAX) return false;
  if (t->cfg.n_layers < 1 || !t->layers) return false;
  for (int l = 0; l < t->cfg.n_layers; l++)
    if (t->layers[l].A < 0) return false;
  return true;
}

// The caption above the grid and its colour bar.
static float caption(Scene *s, const Trace *t, const ViewOptions *o, Colormap cm, float top, float x, float y,
                     float w) {
  const Theme *th = o->theme;
  float fs = MV_CAPTION * o->text_scale, base = y + fs * 1.1f;
  const char *text =
      scene_strf(s, "A of every layer (rows) and head (columns): %d × %d matrices of %d×%d, colour",
                 t->cfg.n_layers, t->cfg.H, t->L, t->L);
  float tw = text_width(FONT_SANS, fs, text);
  scene_text(s, FONT_SANS, fs, x, base, th->text, text);
  float bx = x + tw + fs * 0.6f, bw = fminf(fs * 8, fmaxf(0, w - tw - fs * 3)), bh = fs * 0.8f;
  if (bw < fs * 2) return fs * 1.7f; // no room for the bar: the caption alone
  scene_text_aligned(s, FONT_SANS, fs, bx, base, 0.0f, th->muted, "0");
  bx += fs * 0.9f;
  enum { N = 64 };
  uint32_t *c = scene_cells(s, bx, base - bh * 0.9f, bw, bh, 1, N);
  if (c)
    for (int k = 0; k < N; k++) c[k] = cmap_color(cm, (k + 0.5f) / N);
  scene_frame(s, bx, base - bh * 0.9f, bw, bh, 1, th->frame);
  scene_text(s, FONT_SANS, fs, bx + bw + fs * 0.3f, base, th->muted,
             o->scale == SCALE_MATRIX ? "its largest weight" : scene_strf(s, "%.2f", top));
  return fs * 1.7f;
}

// Sizes the grid in (x, y, w, h): the thumbnail with its label above or, when that leaves a
// larger square (wide cells: many heads, few layers ... or many layers), with its label left.
static void fit(ViewGrid *g, const Trace *t, const ViewOptions *o, float x, float y, float w, float h,
                float *lf, bool *left, float *words) {
  // the whole area (issue 31: thumbnails that fill the screen), the tokens named on the first
  // column's rows and above the first row's columns when the cells are large enough for them
  float ts = o->text_scale;
  *words = 0;
  if (t->L <= 24) {
    char buf[96];
    for (int i = 0; i < t->L; i++)
      *words = fmaxf(*words, text_width(FONT_SANS, MV_LABEL * ts * 0.7f,
                                        trace_axis_label(t, AXIS_TOKEN, i, buf, sizeof buf)));
    *words += 8 * ts;
    float cell = fminf((w - *words) / g->heads, (h - *words) / g->layers) * 0.8f / (float)t->L;
    if (cell < 18 * ts) *words = 0; // thumbnails too small to carry words
  }
  x += *words, y += *words, w -= *words, h -= *words;
  g->cw = w / g->heads, g->ch = h / g->layers;
  g->cw = fminf(g->cw, g->ch * 1.6f), g->ch = fminf(g->ch, g->cw * 1.6f); // a few thumbnails: not far apart
  g->x = x + (w - g->cw * g->heads) / 2, g->y = y + (h - g->ch * g->layers) / 2;
  float gap = fmaxf(4.0f, 0.1f * fminf(g->cw, g->ch)); // between thumbnails: rows must not touch
  *lf = fmaxf(7.0f, fminf(MV_LABEL * ts, fminf(g->ch * 0.3f, g->cw * 0.14f)));
  float lw = text_width(FONT_SANS, *lf, "l00 h00") + gap;
  float above = fminf(g->cw - gap, g->ch - *lf * 1.3f - gap), beside = fminf(g->cw - lw - gap, g->ch - gap);
  *left = beside > above;
  g->side = fmaxf(1.0f, floorf(*left ? beside : above));
  if (*left) {
    g->tx = (g->cw - lw - g->side) / 2 + lw, g->ty = (g->ch - g->side) / 2;
  } else {
    g->tx = (g->cw - g->side) / 2, g->ty = (g->ch - *lf * 1.3f - g->side) / 2 + *lf * 1.3f;
  }
}

// The tokens along thumbnail (tx, ty)'s rows (left of it) or columns (above it), as every matrix
// view names them (axislabels.h).
static void thumb_words(Scene *s, const Trace *t, const ViewOptions *o, float tx, float ty, float side,
                        bool cols) {
  static _Thread_local AxisLabels al;
  float ts = o->text_scale;
  AxisSpec sp = {.trace = t,
                 .axis = AXIS_TOKEN,
                 .n = t->L,
                 .cols = cols,
                 .len = side,
                 .fs = MV_LABEL * ts * 0.7f,
                 .floor = 18 * ts,
                 .least = 18 * ts,
                 .focus = o->focus_row};
  axis_labels_plan(&sp, &al);
  for (int k = 0; k < al.n; k++) {
    if (cols)
      scene_text_turned(s, FONT_SANS, al.lf, tx + al.at[k] + al.lf * 0.35f, ty - 4 * ts, o->theme->text,
                        al.text[k]);
    else
      scene_text_aligned(s, FONT_SANS, al.lf, tx - 4 * ts - (float)(al.idx[k] % 2) * al.shift,
                         ty + al.at[k] + al.lf * 0.35f, 1.0f, o->theme->text, al.text[k]);
  }
}

// The largest weight of layer l's heads (SCALE_MATRIX: of head h only) or of every layer.
static float top_weight(const Trace *t, const ViewOptions *o, int l, int h) {
  float m = 0;
  for (int k = 0; k < t->cfg.n_layers; k++) {
    if (o->scale == SCALE_MATRIX && k != l) continue;
    const TraceTensor *a = &t->t[t->layers[k].A];
    for (int hd = 0; hd < a->heads; hd++) {
      if (o->scale == SCALE_MATRIX && hd != h) continue;
      Operand op = operand_tensor(t, t->layers[k].A, hd, false);
      float lo, hi;
      operand_range(&op, &lo, &hi);
      if (hi > m) m = hi;
    }
  }
  return m > 0 ? m : 1;
}

enum { LUT = 256 };

static void lut_fill(uint32_t *lut, Colormap cm, float top) {
  ColorScale sc = scale_for(cm, 0, top);
  for (int k = 0; k < LUT; k++) lut[k] = scale_color(&sc, (k + 0.5f) / LUT * top);
}

void view_model_render(Scene *s, const Trace *t, const ViewOptions *o, float x, float y, float w, float h,
                       ViewLayout *out) {
  const Theme *th = o->theme;
  Operand first = operand_tensor(t, t->layers[0].A, 0, false);
  Colormap cm = o->cmap == CMAP_AUTO ? view_auto_cmap(&first) : o->cmap;
  // One scale for every thumbnail, 0 → the largest weight of the model, so heads compare (a
  // random model's weights stay near 1/L: a 0 → 1 scale would draw them all alike); per matrix:
  // each thumbnail 0 → its own largest weight.
  float top = o->scale == SCALE_MATRIX ? 1 : top_weight(t, o, -1, -1);
  float cap = caption(s, t, o, cm, top, x, y, w);
  ViewGrid *g = &out->grid;
  g->layers = t->cfg.n_layers, g->heads = t->cfg.H;
  float lf, words;
  bool left;
  fit(g, t, o, x, y + cap, w, h - cap, &lf, &left, &words);
  int L = t->L, d = g->side >= L ? L : (int)g->side; // cells drawn per side (area-averaged below L)
  uint32_t lut[LUT]; // the colours of 0 → top in LUT steps: a 24 × 12 grid is ~0.3 M cells to colour
  lut_fill(lut, cm, top);
  for (int l = 0; l < g->layers; l++) {
    for (int hd = 0; hd < g->heads; hd++) {
      float cx = g->x + hd * g->cw, cy = g->y + l * g->ch, tx = cx + g->tx, ty = cy + g->ty;
      if (words > 0 && hd == 0) thumb_words(s, t, o, tx - (left ? g->tx - 4 : 0), ty, g->side, false);
      if (words > 0 && l == 0) thumb_words(s, t, o, tx, ty - (left ? 0 : lf * 1.3f), g->side, true);
      const char *label = scene_strf(s, "layer %d · head %d", l + 1, hd + 1);
      if (text_width(FONT_SANS, lf, label) > (left ? g->tx : g->side))
        label = scene_strf(s, "l%d h%d", l + 1, hd + 1);
      if (left)
        scene_text_aligned(s, FONT_SANS, lf, tx - lf * 0.4f, ty + g->side / 2 + lf * 0.36f, 1.0f, th->text,
                           label);
      else
        scene_text_aligned(s, FONT_SANS, lf, tx + g->side / 2, ty - lf * 0.35f, 0.5f, th->text, label);
      Operand a = operand_tensor(t, t->layers[l].A, hd, false);
      if (o->scale == SCALE_MATRIX) lut_fill(lut, cm, top = top_weight(t, o, l, hd));
      uint32_t *c = scene_cells(s, tx, ty, g->side, g->side, d, d);
      if (!c) return;
      for (int i = 0; i < d; i++) {
        int r0 = i * L / d, r1 = (i + 1) * L / d;
        for (int j = 0; j < d; j++) {
          float v =
              d == L ? operand_at(&a, i, j) : operand_block_mean(&a, r0, r1, j * L / d, (j + 1) * L / d);
          c[i * d + j] = isfinite(v) ? lut[v <= 0     ? 0
                                           : v >= top ? LUT - 1
                                                      : (int)(v / top * LUT)]
                                     : th->mask_bg;
        }
      }
      Cmd *f = scene_frame(s, tx - 1, ty - 1, g->side + 2, g->side + 2, 1, theme_head(th, hd));
      if (f) f->tag = scene_strf(s, "layer %d, head %d: A (%d×%d)", l + 1, hd + 1, L, L);
    }
  }
}

bool view_model_hit(const ViewLayout *lay, float px, float py, int *layer, int *head) {
  const ViewGrid *g = &lay->grid;
  if (g->layers <= 0 || px < g->x || py < g->y) return false;
  int hd = (int)((px - g->x) / g->cw), l = (int)((py - g->y) / g->ch);
  if (hd >= g->heads || l >= g->layers) return false;
  *layer = l, *head = hd;
  return true;
}

void view_model_cell(const ViewLayout *lay, int layer, int head, float r[4]) {
  const ViewGrid *g = &lay->grid;
  r[0] = g->x + head * g->cw + g->tx, r[1] = g->y + layer * g->ch + g->ty;
  r[2] = r[3] = g->side;
}
