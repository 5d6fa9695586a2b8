// view_model.c -- the model view: the attention weights A_h of every layer and head at once, as
// a grid of small heatmaps (rows = layers, columns = heads), the layers named down the left
// ("layer 3") and the heads across the top ("head 2"), 1-based, at the back row's size.
//
// A student sees at a glance which heads look at the previous word, which at the first one and
// which spread out, in every layer. All thumbnails share one colour scale, 0 → the model's
// largest weight, so they compare (per matrix: each its own). A thumbnail is never smaller than
// MV_THUMB: a model with more layers (or heads) than the area holds at that size -- GPT-2 small's
// 12 × 12 at 1280×720 -- shows a page of them, says which ("page 1 of 2: layers 1–6 of 12") and
// the page follows the selection (the window's arrows). A thumbnail of L×L cells that has fewer
// pixels than L is area-averaged (operand_block_mean). A sentence of more than VIEW_TOKENS_READABLE
// tokens shows the same window of them in every thumbnail (view.h), as many as the thumbnails can
// name (at least 8; else every token, unnamed), and the caption says which. The grid's geometry goes into
// ViewLayout.grid: the window hit-tests it (view_model_hit) and draws its selection on top
// (view_model_cell).
#include <math.h>
#include <stdio.h>

#include "axislabels.h" // defines: AxisSpec, AxisLabels, axis_labels_plan
#include "view_internal.h"

// The model view's text, per 1080 lines: 20 px at 720, the narration's size (tests/test_backrow.c).
#define MV_TEXT 30.0f
// The smallest thumbnail, per 1080 lines (67 px at 720): a head's pattern seen from the back row.
#define MV_THUMB 100.0f
// The token words beside the thumbnails, per 1080 lines (14 px at 720); a cell 1.15 times that
// names each token (turned, axislabels.c).
#define MV_WORD 21.0f

// The words' size for a thumbnail of L of t's tokens: MV_WORD, or a window's (VIEW_WINDOW_LABEL).
static float mv_word(const Trace *t, int L, float ts) {
  return (L < t->L ? VIEW_WINDOW_LABEL : MV_WORD) * ts;
}

bool view_model_available(const Trace *t, int step) {
  if (step < 0 || step >= t->n_steps || t->steps[step].kind != STEP_SOFTMAX) return false;
  if (t->cfg.n_layers < 1 || !t->layers) return false;
  for (int l = 0; l < t->cfg.n_layers; l++)
    if (t->layers[l].A < 0) return false;
  return true;
}

// Text at size fs from (x, base), set smaller (down to 70 %) to fit w; its width.
static float fitted_text(Scene *s, FontFace f, float fs, float x, float base, float w, uint32_t color,
                         const char *text) {
  float tw = text_width(f, fs, text);
  if (tw > w && tw > 0) fs *= fmaxf(0.7f, w / tw), tw = text_width(f, fs, text);
  scene_text(s, f, fs, x, base, color, text);
  return tw;
}

// The caption above the grid and its colour bar; a window of the tokens (n of them from i0, n < L)
// said in it.
static float caption(Scene *s, const Trace *t, const ViewOptions *o, Colormap cm, float top, int i0, int n,
                     float x, float y, float w) {
  const Theme *th = o->theme;
  float fs = MV_TEXT * o->text_scale, base = y + fs * 1.1f;
  const char *text =
      n < t->L
          ? scene_strf(s,
                       "A of every layer (rows) and head (columns): %d × %d matrices of %d×%d, tokens "
                       "%d–%d of %d shown, colour",
                       t->cfg.n_layers, t->cfg.H, t->L, t->L, i0 + 1, i0 + n, t->L)
          : scene_strf(s, "A of every layer (rows) and head (columns): %d × %d matrices of %d×%d, colour",
                       t->cfg.n_layers, t->cfg.H, t->L, t->L);
  const char *end = o->scale == SCALE_MATRIX ? "its largest weight" : scene_strf(s, "%.2f", top);
  float ew = text_width(FONT_SANS, fs, end) + fs * 2.2f; // "0 ", the bar's margins, its end
  float tw = fitted_text(s, FONT_SANS, fs, x, base, w - ew - fs * 4, th->text, text);
  float bx = x + tw + fs * 0.6f, bw = fminf(fs * 8, w - tw - ew), bh = fs * 0.8f;
  if (bw < fs * 2) return fs * 1.7f; // no room for the bar: the caption alone
  scene_text_aligned(s, FONT_SANS, fs, bx, base, 0.0f, th->muted, "0");
  bx += fs * 0.9f;
  enum { N = 64 };
  uint32_t *c = scene_cells(s, bx, base - bh * 0.9f, bw, bh, 1, N);
  if (c)
    for (int k = 0; k < N; k++) c[k] = cmap_color(cm, (k + 0.5f) / N);
  scene_frame(s, bx, base - bh * 0.9f, bw, bh, 1, th->frame);
  scene_text(s, FONT_SANS, fs, bx + bw + fs * 0.3f, base, th->muted, end);
  return fs * 1.7f;
}

// How the grid is laid out: the labels' room and the pages.
typedef struct {
  float lf;         // the layer and head numbers' size
  float left, top;  // the room of the layer labels (left of the grid) and the head labels (above)
  float words;      // the token words beside the first column's rows and above the first row (0: none)
  bool head_words;  // "head 3" above each column (else "3", with "head" once in the corner)
  int per_l, per_h; // thumbnails per page, down and across
} Fit;

// Pages of n things, at most `fit` per page, as even as they go: the count per page.
static int per_page(int n, int fit) {
  if (fit < 1) fit = 1;
  if (fit >= n) return n;
  int pages = (n + fit - 1) / fit;
  return (n + pages - 1) / pages;
}

// Sizes the grid in (x, y, w, h): thumbnails of at least MV_THUMB, as large as the area allows,
// with the layer labels left and the head labels above; a page of them when not all fit. Each
// thumbnail shows L tokens from i0 (a window of a long sentence's, or all of them).
static void fit(ViewGrid *g, const Trace *t, const ViewOptions *o, int i0, int L, float x, float y, float w,
                float h, Fit *f) {
  float ts = o->text_scale, lf = MV_TEXT * ts, gap = fmaxf(4.0f, 12 * ts), least = MV_THUMB * ts;
  int NL = t->cfg.n_layers, NH = t->cfg.H;
  char buf[96];
  snprintf(buf, sizeof buf, "layer %d", NL);
  f->lf = lf, f->left = text_width(FONT_SANS, lf, buf) + lf * 0.6f, f->top = lf * 1.5f;
  float words = 0;
  if (L <= 24) { // the tokens named on the first column's rows and above the first row's columns
    for (int i = i0; i < i0 + L; i++)
      words = fmaxf(words, text_width(FONT_SANS, fmaxf(MV_TEXT * ts * 0.7f, mv_word(t, L, ts)),
                                      trace_axis_label(t, AXIS_TOKEN, i, buf, sizeof buf)));
    words += 8 * ts;
  }
  float side = 0, aw = 0, ah = 0;
  for (int pass = 0; pass < 2; pass++) {
    aw = w - f->left - words, ah = h - f->top - words;
    f->per_l = per_page(NL, (int)(ah / (least + gap)));
    f->per_h = per_page(NH, (int)(aw / (least + gap)));
    side = floorf(fminf(aw / f->per_h, ah / f->per_l) - gap);
    if (words == 0 || (side / (float)L >= mv_word(t, L, ts) * 1.15f && f->per_l == NL && f->per_h == NH))
      break;
    words = 0; // thumbnails too small to carry words, or more pages with them than without
  }
  f->words = words;
  g->side = fmaxf(1.0f, side);
  g->cw = g->ch = g->side + gap;
  g->tx = g->ty = gap / 2;
  int pages_l = (NL + f->per_l - 1) / f->per_l;
  g->pages_h = (NH + f->per_h - 1) / f->per_h;
  g->pages = pages_l * g->pages_h;
  int pl = o->model_layer / f->per_l, ph = o->model_head / f->per_h;
  if (pl < 0 || pl >= pages_l) pl = 0;
  if (ph < 0 || ph >= g->pages_h) ph = 0;
  g->page = pl * g->pages_h + ph;
  g->l0 = pl * f->per_l, g->h0 = ph * f->per_h;
  g->layers = NL - g->l0 < f->per_l ? NL - g->l0 : f->per_l;
  g->heads = NH - g->h0 < f->per_h ? NH - g->h0 : f->per_h;
  snprintf(buf, sizeof buf, "head %d", NH);
  f->head_words = text_width(FONT_SANS, lf, buf) <= g->cw - lf * 0.3f;
  // the page's grid centred across, the labels with it; from the top down
  float total = f->left + words + f->per_h * g->cw;
  g->x = x + fmaxf(0, (w - total) / 2) + f->left + words;
  g->y = y + f->top + words + fmaxf(0, (ah - f->per_l * g->ch) / 2);
}

// The tokens along thumbnail (tx, ty)'s rows (left of it) or columns (above it), as every matrix
// view names them (axislabels.h).
static void thumb_words(Scene *s, const Trace *t, const ViewOptions *o, int i0, int n, float tx, float ty,
                        float side, bool cols) {
  static _Thread_local AxisLabels al;
  float ts = o->text_scale;
  AxisSpec sp = {.trace = t,
                 .axis = AXIS_TOKEN,
                 .n = n,
                 .first = i0,
                 .cols = cols,
                 .len = side,
                 .fs = fmaxf(MV_TEXT * ts * 0.7f, mv_word(t, n, ts)),
                 .floor = mv_word(t, n, ts),
                 .least = mv_word(t, n, ts),
                 .focus = o->focus_row >= i0 && o->focus_row < i0 + n ? o->focus_row - i0 : -1};
  axis_labels_plan(&sp, &al);
  for (int k = 0; k < al.n; k++) {
    float up = (float)(al.idx[k] % 2) * al.shift; // a second tier (rows: further left)
    if (cols && up > 0) scene_rect(s, tx + al.at[k] - 0.5f, ty - 4 * ts - up + 2, 1, up - 4, o->theme->grid);
    if (cols)
      scene_text_turned(s, FONT_SANS, al.lf, tx + al.at[k] + al.lf * 0.35f, ty - 4 * ts - up, o->theme->text,
                        al.text[k]);
    else
      scene_text_aligned(s, FONT_SANS, al.lf, tx - 4 * ts - up, ty + al.at[k] + al.lf * 0.35f, 1.0f,
                         o->theme->text, al.text[k]);
  }
}

// The layer numbers down the left of the page's rows, the head numbers above its columns.
static void grid_labels(Scene *s, const ViewOptions *o, const ViewGrid *g, const Fit *f) {
  const Theme *th = o->theme;
  float lf = f->lf, lx = g->x - f->words - lf * 0.4f, hy = g->y - f->words - lf * 0.45f;
  for (int r = 0; r < g->layers; r++)
    scene_text_aligned(s, FONT_SANS, lf, lx, g->y + r * g->ch + g->ty + g->side / 2 + lf * 0.36f, 1.0f,
                       th->text, scene_strf(s, "layer %d", g->l0 + r + 1));
  if (!f->head_words) scene_text_aligned(s, FONT_SANS, lf, lx, hy, 1.0f, th->text, "head");
  for (int c = 0; c < g->heads; c++)
    scene_text_aligned(s, FONT_SANS, lf, g->x + c * g->cw + g->tx + g->side / 2, hy, 0.5f, th->text,
                       scene_strf(s, f->head_words ? "head %d" : "%d", g->h0 + c + 1));
}

// With more than one page: which layers and heads this one shows, and how to reach the others.
static void page_note(Scene *s, const Trace *t, const ViewOptions *o, const ViewGrid *g, float x, float y,
                      float w) {
  float fs = MV_TEXT * o->text_scale;
  int NL = t->cfg.n_layers, NH = t->cfg.H;
  char heads[64] = "";
  if (g->heads < NH) snprintf(heads, sizeof heads, ", heads %d–%d of %d", g->h0 + 1, g->h0 + g->heads, NH);
  const char *text =
      scene_strf(s, "page %d of %d: layers %d–%d of %d%s (%s past the edge turn the page)", g->page + 1,
                 g->pages, g->l0 + 1, g->l0 + g->layers, NL, heads, g->pages_h > 1 ? "arrows" : "↑ ↓");
  fitted_text(s, FONT_SANS, fs, x, y + fs * 1.1f, w, o->theme->warn, text);
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
  // a long sentence: the window of its tokens that the thumbnails can name, 24 down to 8 (else all)
  float cap = MV_TEXT * o->text_scale * 1.7f, note = 0; // (caption's height)
  ViewGrid *g = &out->grid;
  Fit f;
  int i0 = 0, L = t->L;
  view_token_window(t, o, &i0, &L);
  for (int most = L; L > 0; most--) {
    view_token_window_fit(t, o, most, &i0, &L);
    fit(g, t, o, i0, L, x, y + cap, w, h - cap, &f);
    note = g->pages > 1 ? MV_TEXT * o->text_scale * 1.6f : 0; // a line says which page this is
    if (note > 0) fit(g, t, o, i0, L, x, y + cap + note, w, h - cap - note, &f);
    if (f.words > 0 || o->tok_count > 0) break;
    if (most <= 8) { // too small to name even 8: every token, unnamed (the caption says how many)
      i0 = 0, L = 0;
      break;
    }
  }
  if (L <= 0) { // every token
    i0 = 0, L = t->L;
    fit(g, t, o, i0, L, x, y + cap, w, h - cap, &f);
    note = g->pages > 1 ? MV_TEXT * o->text_scale * 1.6f : 0;
    if (note > 0) fit(g, t, o, i0, L, x, y + cap + note, w, h - cap - note, &f);
  }
  if (L < t->L) out->tok_first = i0, out->tok_shown = L, out->tok_total = t->L;
  caption(s, t, o, cm, top, i0, L, x, y, w);
  if (note > 0) page_note(s, t, o, g, x, y + cap, w);
  grid_labels(s, o, g, &f);
  int d = g->side >= L ? L : (int)g->side; // cells drawn per side (area-averaged below L)
  uint32_t lut[LUT]; // the colours of 0 → top in LUT steps: a 24 × 12 grid is ~0.3 M cells to colour
  lut_fill(lut, cm, top);
  for (int row = 0; row < g->layers; row++) {
    for (int col = 0; col < g->heads; col++) {
      int l = g->l0 + row, hd = g->h0 + col;
      float tx = g->x + col * g->cw + g->tx, ty = g->y + row * g->ch + g->ty;
      if (f.words > 0 && col == 0) thumb_words(s, t, o, i0, L, tx, ty, g->side, false);
      if (f.words > 0 && row == 0) thumb_words(s, t, o, i0, L, tx, ty, g->side, true);
      Operand a = operand_window(operand_tensor(t, t->layers[l].A, hd, false), i0, L);
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
      Cmd *fr = scene_frame(s, tx - 1, ty - 1, g->side + 2, g->side + 2, 1, theme_head(th, hd));
      if (fr) fr->tag = scene_strf(s, "layer %d, head %d: A (%d×%d)", l + 1, hd + 1, t->L, t->L);
    }
  }
}

bool view_model_hit(const ViewLayout *lay, float px, float py, int *layer, int *head) {
  const ViewGrid *g = &lay->grid;
  if (g->layers <= 0 || px < g->x || py < g->y) return false;
  int hd = (int)((px - g->x) / g->cw), l = (int)((py - g->y) / g->ch);
  if (hd >= g->heads || l >= g->layers) return false;
  *layer = g->l0 + l, *head = g->h0 + hd;
  return true;
}

void view_model_cell(const ViewLayout *lay, int layer, int head, float r[4]) {
  const ViewGrid *g = &lay->grid;
  int row = layer - g->l0, col = head - g->h0;
  r[0] = g->x + col * g->cw + g->tx, r[1] = g->y + row * g->ch + g->ty;
  r[2] = r[3] = row >= 0 && row < g->layers && col >= 0 && col < g->heads ? g->side : 0;
}
