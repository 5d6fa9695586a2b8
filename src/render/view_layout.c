// view_layout.c -- the equation engine of the views: operands (heatmaps with their labels) and
// operators (TeX) in rows, one cell size for the whole picture so that shapes compare at a
// glance, colour scales, highlights. See view.h for what a view shows, view_stages.c for what
// each stage puts in its rows.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "edits.h" // defines: TraceEdits, TraceEdit
#include "tex.h"   // defines: tex_layout, tex_metrics, tex_emit, tex_free
#include "utf8.h"  // defines: utf8_floor
#include "view_internal.h"

#define SMAX 72.0f // largest cell, at text scale 1
#define SMIN 3.0f  // below this, operands are area-averaged into boxes of their own size

float view_text_size(const ViewOptions *o) { return 17.0f * o->text_scale; }

int eq_op(Eq *e, Operand op, const char *symbol, LinkKind link) {
  ViewLayout *l = e->lay;
  EXPECT(l->n_ops < VIEW_MAX_OPS);
  int k = l->n_ops++;
  memset(&l->ops[k], 0, sizeof l->ops[k]);
  l->ops[k].op = op;
  l->ops[k].symbol = symbol;
  l->ops[k].link = link;
  memset(&e->deco[k], 0, sizeof e->deco[k]);
  return k;
}

void eq_put(Eq *e, int row, int op) {
  EXPECT(row < VIEW_MAX_ROWS && e->rows[row].n < VIEW_MAX_ITEMS);
  if (row >= e->n_rows) e->n_rows = row + 1;
  e->rows[row].items[e->rows[row].n++] = (Item){IT_OP, op, NULL, 0};
}

void eq_tex(Eq *e, int row, const char *tex) {
  EXPECT(row < VIEW_MAX_ROWS && e->rows[row].n < VIEW_MAX_ITEMS);
  if (row >= e->n_rows) e->n_rows = row + 1;
  e->rows[row].items[e->rows[row].n++] = (Item){IT_TEX, -1, tex, 0};
}

void eq_delim(Eq *e, int row, char d) {
  EXPECT(row < VIEW_MAX_ROWS && e->rows[row].n < VIEW_MAX_ITEMS);
  if (row >= e->n_rows) e->n_rows = row + 1;
  e->rows[row].items[e->rows[row].n++] = (Item){IT_DELIM, -1, NULL, d};
}

static float delim_width(float h, float fs) { return fmaxf(fs * 0.7f, fminf(h * 0.14f, fs * 1.6f)); }

// A parenthesis or bracket spanning [top, top + h]: round ones as a polyline of an ellipse arc.
static void draw_delim(Scene *s, char d, float x, float top, float h, float fs, uint32_t c) {
  float w = delim_width(h, fs), t = fmaxf(1.6f, fs * 0.11f);
  if (d == '[' || d == ']') {
    float xv = d == '[' ? x + w * 0.3f : x + w * 0.7f, xs = d == '[' ? xv + w * 0.5f : xv - w * 0.5f;
    scene_line(s, xv, top, xv, top + h, t, c);
    scene_line(s, xv, top, xs, top, t, c);
    scene_line(s, xv, top + h, xs, top + h, t, c);
    return;
  }
  // an arc bulging left for '(' and right for ')', thicker in the middle like a typeset paren
  int n = 24;
  float cx = d == '(' ? x + w * 0.95f : x + w * 0.05f, rx = w * 0.8f, px = 0, py = 0;
  for (int i = 0; i <= n; i++) {
    float a = 3.14159265f * (-0.5f + (float)i / n), sx = cosf(a) * rx, sy = sinf(a) * h / 2;
    float qx = d == '(' ? cx - sx : cx + sx, qy = top + h / 2 + sy;
    if (i) scene_line(s, px, py, qx, qy, t * (0.6f + 0.6f * cosf(a)), c);
    px = qx, py = qy;
  }
}

static TexMetrics measure_tex(const char *src, float size) {
  TexBox *b = tex_layout(src, size, false, NULL);
  TexMetrics m = b ? tex_metrics(b) : (TexMetrics){0, 0, 0};
  tex_free(b);
  return m;
}

// ---------------------------------------------------------------- labels

// Symbolic name of an axis for shapes ("L×D").
static const char *axis_letter(TraceAxis a) {
  switch (a) {
  case AXIS_TOKEN: return "L";
  case AXIS_VOCAB: return "V";
  case AXIS_MODEL:
  case AXIS_QKV: return "D";
  case AXIS_HEADDIM: return "d_k";
  case AXIS_FFN: return "F";
  case AXIS_TGT_TOKEN: return "T";
  case AXIS_TGT_VOCAB: return "V_t";
  case AXIS_ONE: return "1";
  case AXIS_CLASS: return "C";
  case AXIS_TOKEN2: return "L'";
  }
  return "";
}

// Labels come from the operand's own trace: a compare view shows two sentences.
static const char *label(const Trace *t, TraceAxis a, int i, char *buf, int cap) {
  return trace_axis_label(t, a, i, buf, cap);
}

static bool is_unknown_token(const Trace *t, TraceAxis a, int i) {
  return (a == AXIS_TOKEN && t->tokens.unknown[i]) ||
         ((a == AXIS_TGT_TOKEN || a == AXIS_TOKEN2) && t->dec_tokens.unknown[i]);
}

// An encoder-decoder's target axes are drawn as the source's (view_decoder.c): tokens with their
// words, a vocabulary with the sentence's words marked.
static bool is_tok(TraceAxis a) { return a == AXIS_TOKEN || a == AXIS_TGT_TOKEN || a == AXIS_TOKEN2; }
static bool is_vocab(TraceAxis a) { return a == AXIS_VOCAB || a == AXIS_TGT_VOCAB; }
static bool is_words(TraceAxis a) { return is_tok(a) || is_vocab(a); }
static bool uses_word(const Trace *t, TraceAxis a, int id) {
  if (a != AXIS_TGT_VOCAB) return trace_uses_word(t, id);
  for (int i = 0; i < t->T; i++)
    if (t->dec_tokens.ids[i] == id) return true;
  return false;
}

// Width of the widest row label of an operand.
static float row_label_width(const Eq *e, const ViewOperand *v, float fs) {
  char buf[96];
  float w = 0;
  int n = v->op.rows;
  if (!is_words(v->op.row_axis)) {
    snprintf(buf, sizeof buf, "%d", n - 1);
    return text_width(FONT_SANS, fs * 0.85f, buf) + 8;
  }
  for (int i = 0; i < n && i < 512; i++)
    w = fmaxf(w, text_width(FONT_SANS, fs, label(v->op.trace, v->op.row_axis, i, buf, sizeof buf)));
  return fminf(w, 12 * fs) + 10;
}

// Label with an ellipsis when wider than maxw.
static const char *fit_label(const char *s, FontFace f, float fs, float maxw, char *buf, int cap) {
  if (text_width(f, fs, s) <= maxw) return s;
  int n = (int)strlen(s);
  snprintf(buf, (size_t)cap, "%s", s);
  while (n > 1) {
    n = (int)utf8_floor(buf, (size_t)n - 1); // a UTF-8 boundary
    if (n == 0) break;                       // not even one character fits
    snprintf(buf + n, (size_t)(cap - n), "…");
    if (text_width(f, fs, buf) <= maxw) return buf;
  }
  return "";
}

// ---------------------------------------------------------------- colour scales

// A difference of two traces (a compare view, a what-if edit against the model's own): signed,
// diverging around 0 on a range of its own.
static bool is_difference(const Operand *op) { return op->minus_index >= 0; }

Colormap view_auto_cmap(const Operand *op) {
  const TraceTensor *x = operand_src(op);
  if (!x || is_difference(op)) return CMAP_DIVERGING;
  switch (x->kind) {
  case T_ONEHOT: return CMAP_GREY;
  case T_ATTN:
  case T_CLASS_PRED:
  case T_PRED: return CMAP_VIRIDIS;
  case T_FFN_HIDDEN:
    return x->layer >= 0 && op->trace->cfg.activation == ACT_RELU ? CMAP_VIRIDIS : CMAP_DIVERGING;
  default: return CMAP_DIVERGING;
  }
}

static bool is_probability(const Operand *op) {
  const TraceTensor *x = operand_src(op);
  return x && !is_difference(op) &&
         (x->kind == T_ATTN || x->kind == T_PRED || x->kind == T_ONEHOT || x->kind == T_CLASS_PRED);
}

static Colormap op_cmap(const Eq *e, const Operand *op) {
  Colormap a = view_auto_cmap(op);
  if (e->o->cmap == CMAP_AUTO || a == CMAP_GREY) return a;
  return e->o->cmap;
}

// Weights and activations live on different scales (0.1 against 5): never share a range.
static bool is_weight_op(const Operand *op) {
  const TraceTensor *x = operand_src(op);
  return x && x->is_weight;
}

static void compute_scales(Eq *e) {
  ViewLayout *l = e->lay;
  float lo[VIEW_MAX_OPS], hi[VIEW_MAX_OPS];
  for (int k = 0; k < l->n_ops; k++) {
    operand_range(&l->ops[k].op, &lo[k], &hi[k]);
    // probabilities keep the honest 0..1, but per matrix they stretch to their own maximum,
    // so that 128 keys of about 1/128 each still show their differences
    if (is_probability(&l->ops[k].op))
      lo[k] = 0, hi[k] = e->o->scale == SCALE_MATRIX && hi[k] > 0 ? hi[k] : 1;
  }
  for (int k = 0; k < l->n_ops; k++) {
    Colormap m = op_cmap(e, &l->ops[k].op);
    float a = lo[k], b = hi[k];
    if (!is_probability(&l->ops[k].op)) {
      if (e->o->scale == SCALE_STAGE) // one range for every operand of the same colour map
        for (int q = 0; q < l->n_ops; q++)
          if (op_cmap(e, &l->ops[q].op) == m && !is_probability(&l->ops[q].op) &&
              is_weight_op(&l->ops[q].op) == is_weight_op(&l->ops[k].op) &&
              is_difference(&l->ops[q].op) == is_difference(&l->ops[k].op))
            a = fminf(a, lo[q]), b = fmaxf(b, hi[q]);
      if (e->o->scale == SCALE_GLOBAL && !is_weight_op(&l->ops[k].op) && !is_difference(&l->ops[k].op))
        a = e->o->global_lo, b = e->o->global_hi;
      if (m != CMAP_DIVERGING && e->o->scale != SCALE_MATRIX && a > 0) a = 0;
    }
    const TraceTensor *src = operand_src(&l->ops[k].op);
    if (src && src->kind == T_SIM) a = -1, b = 1; // cosines: always all of [-1, 1], so levels compare
    l->ops[k].scale = scale_for(m, a, b);
  }
}

// ---------------------------------------------------------------- sizes

typedef struct {
  float top, bottom, left, right; // decorations around the cells
} Margins;

static bool has_col_labels(const ViewOperand *v) { return v->op.cols > 1; }

// A vocabulary axis too long to name every word names the sentence's words on up to two tiers
// of labels; its margin keeps room for the second tier, and its caption goes above both.
#define VOCAB_TIER 0.95f // the height of a tier, in units of the font size

static bool has_bands(const Operand *op, bool cols) {
  return (cols ? op->col_axis : op->row_axis) == AXIS_QKV && op->trace->cfg.H > 1;
}

static Margins margins(const Eq *e, int k, float fs) {
  const ViewOperand *v = &e->lay->ops[k];
  const OpDeco *d = &e->deco[k];
  Margins m = {0};
  m.top = fs * 2.1f; // the symbol
  if (d->caption) m.top += fs * 1.3f;
  if (has_col_labels(v)) m.top += fs * 1.35f;
  if (is_words(v->op.col_axis) || v->op.col_axis == AXIS_CLASS) m.top += fs * 0.95f; // "keys"
  if (is_vocab(v->op.col_axis)) m.top += VOCAB_TIER * fs; // a second tier of word labels
  if (has_bands(&v->op, true)) m.top += fs * 0.6f;
  m.bottom = fs * 1.7f; // the shape
  if (e->o->scale == SCALE_MATRIX) m.bottom += fs * 1.9f;
  m.left = 10;
  if (d->row_labels) m.left += row_label_width(e, v, fs);
  if (has_bands(&v->op, false)) m.left += fs * 0.6f;
  m.right = 10;
  if (d->row_sums) m.right += text_width(FONT_SANS, fs * 0.85f, "Σ 1.000") + 8;
  if (d->top_words) m.right += fs * 13.5f;
  return m;
}

// Sizes of the cells. Every dimension axis (D, d_k, F, V) has the unit k, so in Z·W^q the
// width of Z equals the height of W^q; token axes have their own unit t (taller rows, so the
// words stay readable), at most 2.5k unless that would make them smaller than a line of text.
// When even 3-pixel cells do not fit (D = 512 and more), dimension axes are drawn
// sqrt(n)·k long and area-averaged: every operand stays visible, its true shape labelled.
typedef struct {
  float k, t;
  bool comp;     // dimension axes compressed (sqrt)
  bool tok_comp; // token axes compressed too (long sentences)
} Units;

static Units units_for(const Eq *e, float k, bool comp, bool tight) {
  float ts = e->o->text_scale, smax = SMAX * ts, line = tight ? 0 : 21 * ts;
  int L = e->t->L > e->t->T ? e->t->L : e->t->T; // the longer sentence of an encoder-decoder
  Units u = {k, 0, comp, false};
  if (!comp)
    u.t = fminf(smax, fmaxf(2.5f * k, L <= 40 ? line : k));
  else if (L <= 40)
    u.t = fminf(smax, fmaxf(0.8f * k, line));
  else
    u.tok_comp = true;
  return u;
}

static float axis_len(const Units *u, TraceAxis a, int n) {
  if (is_tok(a)) return u->tok_comp ? sqrtf((float)n) * u->k : n * u->t;
  return u->comp ? sqrtf((float)n) * u->k : n * u->k;
}

static void cell_box(const ViewOperand *v, const Units *u, float *w, float *h) {
  *w = axis_len(u, v->op.col_axis, v->op.cols);
  *h = axis_len(u, v->op.row_axis, v->op.rows);
  if (v->op.cols == 1) *w = fmaxf(*w, 6);
  if (v->op.rows == 1) *h = fmaxf(*h, 6);
}

// Width of row r and its extent above/below the axis.
static void row_extent(const Eq *e, int r, const Units *u, float fs, float *width, float *above,
                       float *below) {
  const EqRow *row = &e->rows[r];
  float gap = fs * 0.6f;
  *width = 0, *above = 0, *below = 0;
  float tallest = 0; // delimiters grow to the tallest operand of the row
  for (int i = 0; i < row->n; i++)
    if (row->items[i].kind == IT_OP) {
      float w, h;
      cell_box(&e->lay->ops[row->items[i].op], u, &w, &h);
      tallest = fmaxf(tallest, h);
    }
  for (int i = 0; i < row->n; i++) {
    const Item *it = &row->items[i];
    if (i) *width += gap;
    if (it->kind == IT_TEX) {
      TexMetrics m = measure_tex(it->tex, fs * 1.6f);
      *width += m.width;
      *above = fmaxf(*above, m.ascent);
      *below = fmaxf(*below, m.descent);
      continue;
    }
    if (it->kind == IT_DELIM) {
      *width += delim_width(tallest, fs);
      continue;
    }
    Margins m = margins(e, it->op, fs);
    float w, h;
    cell_box(&e->lay->ops[it->op], u, &w, &h);
    *width += m.left + w + m.right;
    *above = fmaxf(*above, m.top + h / 2);
    *below = fmaxf(*below, h / 2 + m.bottom);
  }
}

static bool fits(const Eq *e, const Units *u, float fs, float avail_w, float avail_h) {
  float total_h = 0;
  for (int r = 0; r < e->n_rows; r++) {
    float w, a, b;
    row_extent(e, r, u, fs, &w, &a, &b);
    if (w > avail_w) return false;
    total_h += a + b + (r ? fs * 1.2f : 0);
  }
  return total_h <= avail_h;
}

// The largest unit k for which every row fits.
// (tight: token rows may be thinner than a line of text, when nothing else fits)
static Units fit_units(const Eq *e, bool comp, float fs, float avail_w, float avail_h) {
  for (int tight = 0; tight < 2; tight++) {
    float lo = 0.01f, hi = SMAX * e->o->text_scale * (comp ? 8 : 1);
    for (int it = 0; it < 36; it++) {
      float mid = (lo + hi) / 2;
      Units u = units_for(e, mid, comp, tight);
      if (fits(e, &u, fs, avail_w, avail_h))
        lo = mid;
      else
        hi = mid;
    }
    Units u = units_for(e, lo, comp, tight);
    if (tight || fits(e, &u, fs, avail_w, avail_h)) return u;
  }
  return units_for(e, 0.01f, comp, true);
}

// ---------------------------------------------------------------- drawing an operand

static void draw_brackets(Eq *e, float x, float y, float w, float h, uint32_t c) {
  float t = fmaxf(1.5f, e->o->text_scale * 1.8f), serif = fminf(8.0f, w / 4 + 2), off = 4;
  scene_rect(e->s, x - off - t, y - 2, t, h + 4, c);
  scene_rect(e->s, x - off - t, y - 2, serif, t, c);
  scene_rect(e->s, x - off - t, y + h + 2 - t, serif, t, c);
  scene_rect(e->s, x + w + off, y - 2, t, h + 4, c);
  scene_rect(e->s, x + w + off + t - serif, y - 2, serif, t, c);
  scene_rect(e->s, x + w + off + t - serif, y + h + 2 - t, serif, t, c);
}

// A colour bar's number: two decimals, or three digits in e-notation past 10 000 (an
// overflowing model reaches 3e38, which "%.2f" writes with 41 characters).
static const char *format_tick(char *buf, int cap, float v) {
  snprintf(buf, (size_t)cap, fabsf(v) < 1e4f ? "%.2f" : "%.3g", v);
  return buf;
}

static void format_value(char *buf, int cap, float v, bool onehot) {
  if (onehot)
    snprintf(buf, (size_t)cap, "%s", v == 1.0f ? "1" : "");
  else if (!isfinite(v))
    snprintf(buf, (size_t)cap, v < 0 ? "−∞" : "∞");
  else if (fabsf(v) >= 99999.5f)
    snprintf(buf, (size_t)cap, "%.2g", v);
  else if (fabsf(v) >= 99.95f)
    snprintf(buf, (size_t)cap, "%.0f", v);
  else if (fabsf(v) >= 9.995f)
    snprintf(buf, (size_t)cap, "%.1f", v);
  else
    snprintf(buf, (size_t)cap, "%.2f", v);
}

static void draw_cells(Eq *e, ViewOperand *v) {
  const Theme *th = e->o->theme;
  int R = v->op.rows, C = v->op.cols;
  // more cells than pixels: area-average into blocks of 2 × 2 pixels (finer is not visible)
  v->drows = R <= (int)v->h ? R : (int)fmaxf(1, v->h / 2);
  v->dcols = C <= (int)v->w ? C : (int)fmaxf(1, v->w / 2);
  bool exact = v->drows == R && v->dcols == C;
  uint32_t *colors = scene_cells(e->s, v->x, v->y, v->w, v->h, v->drows, v->dcols);
  if (!colors) return;
  bool mask_op = v->op.index < 0;
  bool *masked = scene_alloc(e->s, (size_t)v->drows * (size_t)v->dcols);
  if (!masked) return;
  for (int i = 0; i < v->drows; i++) {
    int r0 = (int)((long)i * R / v->drows), r1 = (int)((long)(i + 1) * R / v->drows);
    for (int j = 0; j < v->dcols; j++) {
      int c0 = (int)((long)j * C / v->dcols), c1 = (int)((long)(j + 1) * C / v->dcols);
      float val = exact ? operand_at(&v->op, i, j) : operand_block_mean(&v->op, r0, r1, c0, c1);
      size_t k = (size_t)i * v->dcols + j;
      masked[k] = !isfinite(val);
      colors[k] = masked[k] ? th->mask_bg : mask_op ? th->bg : scale_color(&v->scale, val);
    }
  }
  float cw = v->w / v->dcols, ch = v->h / v->drows;
  for (int i = 0; i < v->drows; i++) // hatch masked cells, over their flat colour
    for (int j = 0; j < v->dcols; j++)
      if (masked[(size_t)i * v->dcols + j]) {
        Cmd *h = scene_hatch(e->s, v->x + j * cw, v->y + i * ch, cw, ch, th->mask_bg, th->mask_line);
        if (h) h->tag = "masked: −∞";
      }
  // thin separators between cells, so equal colours still read as separate numbers
  if (exact && cw >= 14 && ch >= 14) {
    for (int i = 1; i < R; i++) scene_rect(e->s, v->x, v->y + i * ch - 0.5f, v->w, 1, th->bg);
    for (int j = 1; j < C; j++) scene_rect(e->s, v->x + j * cw - 0.5f, v->y, 1, v->h, th->bg);
  }
  // head blocks: a stronger separator between heads
  if (has_bands(&v->op, true) && exact) {
    int dk = e->t->cfg.D / e->t->cfg.H;
    for (int h = 1; h < e->t->cfg.H; h++) scene_rect(e->s, v->x + h * dk * cw - 1, v->y, 2, v->h, th->bg);
  }
  if (has_bands(&v->op, false) && exact) {
    int dk = e->t->cfg.D / e->t->cfg.H;
    for (int h = 1; h < e->t->cfg.H; h++) scene_rect(e->s, v->x, v->y + h * dk * ch - 1, v->w, 2, th->bg);
  }
  // numbers
  const TraceTensor *src = operand_src(&v->op);
  bool onehot = src && src->kind == T_ONEHOT;
  if (e->o->numbers && exact) {
    float nf = fminf(view_text_size(e->o) * 0.95f, ch * 0.42f);
    char buf[32];
    bool signed_vals = v->scale.lo < 0;
    float need = text_width(FONT_MONO, nf, onehot ? "1" : signed_vals ? "-0.00" : "0.00");
    // smaller numbers rather than none, down to 60% of the labels' size: smaller still, a grid of
    // numbers is noise on a projector, and the colours say more
    if (need > cw * 0.9f) nf *= cw * 0.9f / need, need = cw * 0.9f;
    if (nf >= fmaxf(8.5f, view_text_size(e->o) * 0.6f) && need <= cw * 0.9f)
      for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
          float val = operand_at(&v->op, i, j);
          if (!isfinite(val) && !mask_op) continue;
          format_value(buf, sizeof buf, val, onehot);
          if (!buf[0]) continue;
          uint32_t ink = cmap_ink_on(colors[(size_t)i * C + j]);
          float tw = text_width(FONT_MONO, nf, buf);
          if (tw > cw * 0.96f) continue;
          scene_text(e->s, FONT_MONO, nf, v->x + j * cw + (cw - tw) / 2, v->y + i * ch + ch / 2 + nf * 0.36f,
                     ink, buf);
        }
  }
}

static void draw_col_labels(Eq *e, ViewOperand *v, float fs, float y_base) {
  const Theme *th = e->o->theme;
  int C = v->op.cols;
  float cw = v->w / C;
  char buf[96], fit[96];
  TraceAxis a = v->op.col_axis;
  if (is_words(a) || a == AXIS_CLASS) {
    float lf = fs * 0.9f;
    bool fits = cw >= text_width(FONT_SANS, lf, "bank") * 0.8f;
    if (!fits && is_vocab(a)) {
      // too many words to name: name the sentence's words, with a tick on their columns
      float last[2] = {-1e9f, -1e9f}; // right end of the last label on each of two tiers
      for (int j = 0; j < C; j++) {
        if (!uses_word(v->op.trace, a, j)) continue;
        float cx = v->x + (j + 0.5f) * cw,
              w = text_width(FONT_SANS, lf * 0.85f, label(v->op.trace, a, j, buf, sizeof buf));
        int tier = cx - w / 2 >= last[0] + 4 ? 0 : cx - w / 2 >= last[1] + 4 ? 1 : -1;
        if (tier < 0) continue; // no room on either tier
        float ty = y_base - tier * VOCAB_TIER * fs;
        scene_rect(e->s, cx - 0.75f, ty + lf * 0.2f, 1.5f, y_base - ty + lf * 0.5f, th->muted);
        scene_text_aligned(e->s, FONT_SANS, lf * 0.85f, cx, ty, 0.5f, th->text,
                           label(v->op.trace, a, j, buf, sizeof buf));
        last[tier] = cx + w / 2;
      }
      scene_text_aligned(e->s, FONT_SANS_ITALIC, fs * 0.8f, v->x + v->w / 2,
                         y_base - fs * (1.2f + VOCAB_TIER), 0.5f, th->muted, "vocabulary →");
      return;
    }
    int step = fits ? 1 : (int)ceilf(text_width(FONT_SANS, lf, "bank") / fmaxf(cw, 0.01f));
    for (int j = 0; j < C; j += step) {
      const char *s = fit_label(label(v->op.trace, a, j, buf, sizeof buf), FONT_SANS, lf, cw * step * 0.95f,
                                fit, sizeof fit);
      uint32_t c = is_unknown_token(v->op.trace, a, j) ? th->unk : th->text;
      scene_text_aligned(e->s, FONT_SANS, lf, v->x + (j + 0.5f) * cw, y_base, 0.5f, c, s);
    }
    scene_text_aligned(e->s, FONT_SANS_ITALIC, fs * 0.8f, v->x + v->w / 2, y_base - fs * 1.2f, 0.5f,
                       th->muted,
                       a == AXIS_TOKEN2  ? "second sentence →"
                       : is_tok(a)       ? (is_tok(v->op.row_axis) ? "keys →" : "tokens →")
                       : a == AXIS_CLASS ? "classes →"
                                         : "vocabulary →");
    return;
  }
  // dimensions: numbers at a readable stride
  float lf = fs * 0.75f;
  snprintf(buf, sizeof buf, "%d", C - 1);
  float lw = text_width(FONT_SANS, lf, buf) + lf;
  int step = 1;
  while (step * cw < lw) step = step < 4 ? step * 2 : step < 8 ? 8 : step * 2;
  for (int j = 0; j < C; j += step) {
    snprintf(buf, sizeof buf, "%d", j);
    scene_text_aligned(e->s, FONT_SANS, lf, v->x + (j + 0.5f) * cw, y_base, 0.5f, th->muted, buf);
  }
}

static void draw_row_labels(Eq *e, ViewOperand *v, float fs, float x_right) {
  const Theme *th = e->o->theme;
  int R = v->op.rows;
  float ch = v->h / R;
  char buf[96], fit[96];
  TraceAxis a = v->op.row_axis;
  bool words = is_words(a);
  float lf = words ? fminf(fs, fmaxf(9.0f, ch * 0.8f)) : fs * 0.75f;
  if (is_vocab(a) && ch < lf * 1.05f) { // too many words: name the sentence's words only
    lf = fs * 0.8f;
    float last[2] = {-1e9f, -1e9f}, shift = 5 * lf; // two columns of labels when rows are close
    for (int i = 0; i < R; i++) {
      bool used = uses_word(v->op.trace, a, i);
      float cy = v->y + (i + 0.5f) * ch;
      int col = !used ? -1 : cy - lf >= last[0] ? 0 : cy - lf >= last[1] ? 1 : -1;
      if (col < 0) continue;
      float xr = x_right - col * shift;
      scene_rect(e->s, xr + 2, cy - 0.75f, x_right - xr + 6, 1.5f, th->muted);
      scene_text_aligned(e->s, FONT_SANS, lf, xr, cy + lf * 0.35f, 1.0f, th->text,
                         label(v->op.trace, a, i, buf, sizeof buf));
      last[col] = cy;
    }
    return;
  }
  int step = 1;
  while (step * ch < lf * 1.05f) step *= 2;
  for (int i = 0; i < R; i += step) {
    const char *s = label(v->op.trace, a, i, buf, sizeof buf);
    s = fit_label(s, FONT_SANS, lf, 12 * fs, fit, sizeof fit);
    uint32_t c = is_unknown_token(v->op.trace, a, i) ? th->unk : words ? th->text : th->muted;
    scene_text_aligned(e->s, FONT_SANS, lf, x_right, v->y + (i + 0.5f) * ch + lf * 0.35f, 1.0f, c, s);
  }
}

static void draw_bands(Eq *e, ViewOperand *v, float fs, bool cols) {
  int H = e->t->cfg.H, dk = e->t->cfg.D / H;
  float band = fs * 0.4f;
  for (int h = 0; h < H; h++) {
    uint32_t c = theme_head(e->o->theme, h);
    bool sel = e->o->head == h;
    if (cols) {
      float x0 = v->x + v->w * h * dk / (H * dk), x1 = v->x + v->w * (h + 1) * dk / (H * dk);
      scene_rect(e->s, x0 + 1, v->y - band - 3, x1 - x0 - 2, band, c);
      if (sel) scene_frame(e->s, x0 - 1, v->y - 1, x1 - x0 + 2, v->h + 2, 2.5f, c);
    } else {
      float y0 = v->y + v->h * h * dk / (H * dk), y1 = v->y + v->h * (h + 1) * dk / (H * dk);
      scene_rect(e->s, v->x - band - 3, y0 + 1, band, y1 - y0 - 2, c);
      if (sel) scene_frame(e->s, v->x - 1, y0 - 1, v->w + 2, y1 - y0 + 2, 2.5f, c);
    }
  }
}

static void draw_matrix_colorbar(Eq *e, ViewOperand *v, float fs, float y) {
  const Theme *th = e->o->theme;
  float w = fmaxf(v->w, fs * 6), x = v->x + (v->w - w) / 2, h = fs * 0.5f;
  uint32_t *c = scene_cells(e->s, x, y, w, h, 1, 64);
  if (c)
    for (int j = 0; j < 64; j++) c[j] = cmap_color(v->scale.map, (j + 0.5f) / 64);
  char buf[32];
  scene_text_aligned(e->s, FONT_SANS, fs * 0.7f, x, y + h + fs * 0.8f, 0, th->muted,
                     format_tick(buf, sizeof buf, v->scale.lo));
  scene_text_aligned(e->s, FONT_SANS, fs * 0.7f, x + w, y + h + fs * 0.8f, 1, th->muted,
                     format_tick(buf, sizeof buf, v->scale.hi));
}

static void draw_row_sums(Eq *e, ViewOperand *v, float fs) {
  const Theme *th = e->o->theme;
  float ch = v->h / v->op.rows, lf = fminf(fs * 0.85f, fmaxf(8, ch * 0.7f));
  float x = v->x + v->w + 14;
  scene_text(e->s, FONT_SANS_BOLD, fs * 0.85f, x, v->y - fs * 0.5f, th->muted, "Σ row");
  if (ch < 8) return;
  char buf[32];
  for (int i = 0; i < v->op.rows; i++) {
    double sum = 0;
    for (int j = 0; j < v->op.cols; j++) sum += operand_at(&v->op, i, j);
    snprintf(buf, sizeof buf, "%.3f", sum);
    scene_text(e->s, FONT_SANS, lf, x, v->y + (i + 0.5f) * ch + lf * 0.35f, th->text, buf);
  }
}

static void draw_top_words(Eq *e, ViewOperand *v, float fs) {
  const Theme *th = e->o->theme;
  float ch = v->h / v->op.rows;
  if (ch < 9) return;
  float lf = fminf(fs * 0.85f, ch * 0.7f), x = v->x + v->w + 14;
  scene_text(e->s, FONT_SANS_BOLD, fs * 0.85f, x, v->y - fs * 0.5f, th->muted, "most likely words");
  char buf[160], wb[96];
  for (int i = 0; i < v->op.rows; i++) {
    int best[3] = {-1, -1, -1};
    for (int j = 0; j < v->op.cols; j++) {
      float p = operand_at(&v->op, i, j);
      for (int k = 0; k < 3; k++)
        if (best[k] < 0 || p > operand_at(&v->op, i, best[k])) {
          for (int q = 2; q > k; q--) best[q] = best[q - 1];
          best[k] = j;
          break;
        }
    }
    int n = 0;
    for (int k = 0; k < 3 && best[k] >= 0; k++)
      n += snprintf(buf + n, sizeof buf - (size_t)n, "%s%s %.2f", k ? ", " : "",
                    label(v->op.trace, v->op.col_axis, best[k], wb, sizeof wb),
                    operand_at(&v->op, i, best[k]));
    scene_text(e->s, FONT_SANS, lf, x, v->y + (i + 0.5f) * ch + lf * 0.35f, th->text, buf);
  }
}

static void shape_text(const Eq *e, const ViewOperand *v, char *buf, int cap) {
  const TraceTensor *src = operand_src(&v->op);
  const char *ra = v->op.rows == 1 ? "1" : axis_letter(v->op.row_axis);
  const char *ca = v->op.cols == 1 ? "1" : axis_letter(v->op.col_axis);
  if (e->t && e->t->T > 0) { // an encoder-decoder calls the source's length S, as the course does
    if (v->op.rows > 1 && v->op.row_axis == AXIS_TOKEN) ra = "S";
    if (v->op.cols > 1 && v->op.col_axis == AXIS_TOKEN) ca = "S";
  }
  bool averaged = v->drows < v->op.rows || v->dcols < v->op.cols;
  (void)src;
  snprintf(buf, (size_t)cap, "%s×%s = %d×%d%s", ra, ca, v->op.rows, v->op.cols,
           averaged ? " (area-averaged)" : "");
}

static void draw_operand(Eq *e, int k, float fs) {
  const Theme *th = e->o->theme;
  ViewOperand *v = &e->lay->ops[k];
  const OpDeco *d = &e->deco[k];
  Margins m = margins(e, k, fs);
  draw_cells(e, v);
  draw_brackets(e, v->x, v->y, v->w, v->h, th->frame);
  float top = v->y;
  if (has_bands(&v->op, true)) {
    draw_bands(e, v, fs, true);
    top -= fs * 0.6f;
  }
  if (has_bands(&v->op, false)) draw_bands(e, v, fs, false);
  if (has_col_labels(v)) {
    draw_col_labels(e, v, fs, top - fs * 0.45f);
    top -= fs * 1.35f;
  }
  if (is_words(v->op.col_axis) || v->op.col_axis == AXIS_CLASS) top -= fs * 0.95f;
  if (is_vocab(v->op.col_axis)) top -= VOCAB_TIER * fs;
  // the symbol, centred above
  uint32_t sc = d->symbol_color ? d->symbol_color : th->text;
  TexMetrics sm = measure_tex(v->symbol, fs * 1.45f);
  tex_draw(e->s, v->symbol, fs * 1.45f, false, v->x + (v->w - sm.width) / 2, top - fs * 0.55f - sm.descent,
           sc);
  if (d->caption) {
    char fit[256];
    // centred over the cells when it fits there; else from the row labels to the right margin
    // (the likely words beside a prediction), cut only when even that is too short
    float cf = fs * 0.9f, cw = fmaxf(v->w, fs * 12), x = v->x + v->w / 2, align = 0.5f;
    if (d->caption_row)
      cw = e->x + e->w - v->x, x = v->x, align = 0.0f;
    else if (text_width(FONT_SANS_BOLD, cf, d->caption) > cw && m.left + v->w + m.right > cw)
      cw = m.left + v->w + m.right, x = v->x - m.left + 10, align = 0.0f;
    const char *c = fit_label(d->caption, FONT_SANS_BOLD, cf, cw, fit, sizeof fit);
    scene_text_aligned(e->s, FONT_SANS_BOLD, cf, x, top - fs * 0.55f - sm.ascent - fs * 0.6f, align, th->text,
                       c);
  }
  if (d->row_labels) {
    float xr = v->x - 10 - (has_bands(&v->op, false) ? fs * 0.6f : 0);
    draw_row_labels(e, v, fs, xr);
    if (is_tok(v->op.row_axis) && is_tok(v->op.col_axis))
      scene_text_aligned(e->s, FONT_SANS_ITALIC, fs * 0.8f, xr, v->y - fs * 0.5f, 1.0f, th->muted,
                         v->op.col_axis == AXIS_TOKEN2 ? "first sentence ↓" : "queries ↓");
  }
  char buf[96];
  shape_text(e, v, buf, sizeof buf);
  scene_text_aligned(e->s, FONT_SANS, fs * 0.85f, v->x + v->w / 2, v->y + v->h + fs * 1.35f, 0.5f, th->muted,
                     buf);
  if (e->o->scale == SCALE_MATRIX && v->op.index >= 0)
    draw_matrix_colorbar(e, v, fs, v->y + v->h + fs * 1.75f);
  if (d->row_sums) draw_row_sums(e, v, fs);
  if (d->top_words) draw_top_words(e, v, fs);
}

// ---------------------------------------------------------------- highlights

static void frame_cells(Scene *s, const ViewOperand *v, int r0, int r1, int c0, int c1, uint32_t c,
                        float width) {
  float x0 = v->x + v->w * c0 / v->op.cols, x1 = v->x + v->w * c1 / v->op.cols;
  float y0 = v->y + v->h * r0 / v->op.rows, y1 = v->y + v->h * r1 / v->op.rows;
  scene_frame(s, x0 - width / 2, y0 - width / 2, x1 - x0 + width, y1 - y0 + width, width, c);
}

// Outlines, in operand v, what produced result cell (i, j) (i or j may be -1: a whole row/col).
static void link_highlight(Scene *s, const ViewOperand *v, int i, int j, uint32_t c, float width) {
  int R = v->op.rows, C = v->op.cols;
  switch (v->link) {
  case LINK_ROW:
    if (i >= 0 && i < R) frame_cells(s, v, i, i + 1, 0, C, c, width);
    break;
  case LINK_COL:
    if (j >= 0 && j < C) frame_cells(s, v, 0, R, j, j + 1, c, width);
    break;
  case LINK_CELL:
    if (i >= 0 && j >= 0 && i < R && j < C)
      frame_cells(s, v, i, i + 1, j, j + 1, c, width);
    else if (i >= 0 && i < R)
      frame_cells(s, v, i, i + 1, 0, C, c, width);
    else if (j >= 0 && j < C)
      frame_cells(s, v, 0, R, j, j + 1, c, width);
    break;
  case LINK_COLBLOCK: {
    int jj = j - v->link_offset;
    if (i >= 0 && jj >= 0 && jj < C)
      frame_cells(s, v, i, i + 1, jj, jj + 1, c, width);
    else if (i >= 0 && i < R && j < 0)
      frame_cells(s, v, i, i + 1, 0, C, c, width);
    break;
  }
  case LINK_NONE: break;
  }
}

// A lesson's focus (row, column or cell of the result) and what produced it.
static void draw_focus(Eq *e) {
  const ViewOptions *o = e->o;
  ViewLayout *l = e->lay;
  float w = 3.0f * o->text_scale;
  if (l->result < 0) return;
  for (int k = 0; k < l->n_ops; k++) { // every result (each head of a grid) shows the focus
    const ViewOperand *r = &l->ops[k];
    int fr = e->deco[k].own_focus ? e->deco[k].focus_row : o->focus_row;
    int fc = e->deco[k].own_focus ? e->deco[k].focus_col : o->focus_col;
    if (!r->result) {
      link_highlight(e->s, r, fr, fc, o->theme->accent, w * 0.8f);
      continue;
    }
    if (fr >= 0 && fc >= 0)
      frame_cells(e->s, r, fr, fr + 1, fc, fc + 1, o->theme->accent, w);
    else if (fr >= 0 && fr < r->op.rows)
      frame_cells(e->s, r, fr, fr + 1, 0, r->op.cols, o->theme->accent, w);
    else if (fc >= 0 && fc < r->op.cols)
      frame_cells(e->s, r, 0, r->op.rows, fc, fc + 1, o->theme->accent, w);
  }
}

// What-if edits (edits.h): every edited cell shown -- a score, an embedding, a weight -- framed in
// the warning colour, so that the class sees where the number was changed.
static void draw_edits(Eq *e) {
  ViewLayout *l = e->lay;
  for (int k = 0; k < l->n_ops; k++) {
    const Operand *op = &l->ops[k].op;
    const TraceEdits *ed = op->trace ? op->trace->edits : NULL;
    if (!ed || op->index < 0 || op->minus_index >= 0) continue;
    const TraceTensor *x = &op->trace->t[op->index];
    for (int q = 0; q < ed->n; q++) {
      const TraceEdit *d = &ed->e[q];
      bool same = !strcmp(d->tensor, x->name) ||
                  (d->kind == EDIT_SCORE && x->kind == T_MASKED && d->layer == x->layer);
      if (!same || (op->head >= 0 && x->per_head && d->head != op->head)) continue;
      int i = d->i, j = d->j + (op->head < 0 && x->per_head ? d->head * x->cols : 0);
      if (op->transpose) i = j, j = d->i;
      if (i < op->rows && j < op->cols)
        frame_cells(e->s, &l->ops[k], i, i + 1, j, j + 1, e->o->theme->warn, 2.5f * e->o->text_scale);
    }
  }
}

void view_draw_selection(Scene *s, const ViewLayout *l, const ViewOptions *o) {
  if (o->hover_op < 0 || o->hover_op >= l->n_ops) return;
  const ViewOperand *v = &l->ops[o->hover_op];
  int i = o->hover_i, j = o->hover_j;
  if (i < 0 || j < 0 || i >= v->op.rows || j >= v->op.cols) return;
  float w = 3.0f * o->text_scale * (o->pinned ? 1.4f : 1.0f);
  frame_cells(s, v, i, i + 1, j, j + 1, o->theme->highlight, w);
  if (o->hover_op == l->result)
    for (int k = 0; k < l->n_ops; k++)
      if (k != l->result) link_highlight(s, &l->ops[k], i, j, o->theme->highlight, w * 0.8f);
}

// ---------------------------------------------------------------- colour bars of the view

static void draw_side_colorbars(Eq *e, float x, float y, float h, float fs) {
  const Theme *th = e->o->theme;
  ViewLayout *l = e->lay;
  ColorScale seen[4];
  const char *what[4];
  int n = 0;
  for (int k = 0; k < l->n_ops && n < 4; k++) {
    if (l->ops[k].op.index < 0) continue;
    ColorScale s = l->ops[k].scale;
    bool dup = false;
    for (int q = 0; q < n; q++) dup |= seen[q].map == s.map && seen[q].lo == s.lo && seen[q].hi == s.hi;
    if (dup) continue;
    const TraceTensor *src = operand_src(&l->ops[k].op);
    what[n] = src->kind == T_ONEHOT           ? "one-hot"
              : is_probability(&l->ops[k].op) ? "probability"
              : src->is_weight                ? "weights"
                                              : "values";
    seen[n++] = s;
  }
  if (n == 0) return;
  float bh = fminf(h / n - fs * 3.4f, fs * 16), bw = fs * 0.9f;
  for (int q = 0; q < n; q++) {
    float by = y + q * (bh + fs * 3.4f) + fs * 2.2f;
    scene_text(e->s, FONT_SANS_BOLD, fs * 0.8f, x, by - fs * 1.25f, th->text, what[q]);
    scene_text(e->s, FONT_SANS, fs * 0.7f, x, by - fs * 0.35f, th->muted,
               seen[q].map == CMAP_DIVERGING ? "RdBu" : cmap_name(seen[q].map));
    uint32_t *c = scene_cells(e->s, x, by, bw, bh, 64, 1);
    if (c)
      for (int i = 0; i < 64; i++) c[i] = cmap_color(seen[q].map, 1.0f - (i + 0.5f) / 64);
    scene_frame(e->s, x, by, bw, bh, 1, th->frame);
    float ticks[3] = {seen[q].hi, (seen[q].lo + seen[q].hi) / 2, seen[q].lo};
    for (int t = 0; t < 3; t++) {
      char buf[32];
      format_tick(buf, sizeof buf, ticks[t]);
      float ty = by + bh * t / 2;
      scene_rect(e->s, x + bw, ty - 0.75f, fs * 0.35f, 1.5f, th->frame);
      scene_text(e->s, FONT_SANS, fs * 0.8f, x + bw + fs * 0.5f, ty + fs * 0.3f, th->text, buf);
    }
  }
}

// ---------------------------------------------------------------- the whole equation

void eq_layout_and_draw(Eq *e) {
  const ViewOptions *o = e->o;
  float fs = view_text_size(o);
  bool side_bar = o->scale != SCALE_MATRIX;
  float bar_w = side_bar ? fs * 5.5f : 0;
  float avail_w = e->w - bar_w - fs, avail_h = e->h - fs;
  compute_scales(e);
  Units u = fit_units(e, false, fs, avail_w, avail_h);
  if (u.k < SMIN) u = fit_units(e, true, fs, avail_w, avail_h);
  // total height, to centre the rows vertically
  float heights[VIEW_MAX_ROWS], aboves[VIEW_MAX_ROWS], widths[VIEW_MAX_ROWS], total = 0;
  for (int r = 0; r < e->n_rows; r++) {
    float b;
    row_extent(e, r, &u, fs, &widths[r], &aboves[r], &b);
    heights[r] = aboves[r] + b;
    total += heights[r] + (r ? fs * 1.2f : 0);
  }
  float y = e->y + fmaxf(0, (avail_h - total) / 2);
  float gap = fs * 0.6f;
  for (int r = 0; r < e->n_rows; r++) {
    const EqRow *row = &e->rows[r];
    float axis = y + aboves[r], x = e->x + fmaxf(0, (avail_w - widths[r]) / 2), tallest = 0;
    for (int i = 0; i < row->n; i++)
      if (row->items[i].kind == IT_OP) {
        float w, h;
        cell_box(&e->lay->ops[row->items[i].op], &u, &w, &h);
        tallest = fmaxf(tallest, h);
      }
    for (int i = 0; i < row->n; i++) {
      const Item *it = &row->items[i];
      if (i) x += gap;
      if (it->kind == IT_TEX) {
        TexMetrics m = measure_tex(it->tex, fs * 1.6f);
        // centre the operator's box on the axis of the matrices
        tex_draw(e->s, it->tex, fs * 1.6f, false, x, axis + (m.ascent - m.descent) / 2, o->theme->text);
        x += m.width;
        continue;
      }
      if (it->kind == IT_DELIM) {
        float h = tallest + fs * 0.8f;
        draw_delim(e->s, it->delim, x, axis - h / 2, h, fs, o->theme->text);
        x += delim_width(tallest, fs);
        continue;
      }
      ViewOperand *v = &e->lay->ops[it->op];
      Margins m = margins(e, it->op, fs);
      cell_box(v, &u, &v->w, &v->h);
      v->x = x + m.left;
      v->y = axis - v->h / 2;
      draw_operand(e, it->op, fs);
      x += m.left + v->w + m.right;
    }
    y += heights[r] + fs * 1.2f;
  }
  draw_focus(e);
  draw_edits(e);
  view_draw_selection(e->s, e->lay, e->o);
  if (side_bar) draw_side_colorbars(e, e->x + e->w - bar_w + fs * 0.5f, e->y, avail_h, fs);
}
