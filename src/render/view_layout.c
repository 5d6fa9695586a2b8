// view_layout.c -- the equation engine of the views: operands (heatmaps with their labels) and
// operators (TeX) in rows, one cell size for the whole picture so that shapes compare at a
// glance, colour scales, highlights. See view.h for what a view shows, view_stages.c for what
// each stage puts in its rows.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "axislabels.h" // defines: AxisSpec, AxisLabels, axis_labels_plan
#include "numfmt.h"     // defines: numfmt_fixed
#include "edits.h"      // defines: TraceEdits, TraceEdit
#include "tex.h"        // defines: tex_layout, tex_metrics, tex_emit, tex_free
#include "utf8.h"       // defines: utf8_floor
#include "view_internal.h"

#define SMAX 72.0f     // largest cell of a 1080-line picture, at least (the area may allow larger)
#define SMIN 3.0f      // below this, operands are area-averaged into boxes of their own size
#define FS_MIN 26.0f   // smallest label of the fitted picture per 1080 lines: 17 px at 720
#define FS_MAX 40.0f   // largest label per 1080 lines: labels grow with the cells up to this
#define FS_FLOOR 24.0f // a column label too wide is shrunk to this before it is cut (16 px at 720)
#define FS_LEAST 18.0f // and an axis of up to about 24 tokens to this, so that every word is named (12 px)

void lay_begin(ViewLayout *out, const ViewOptions *o, float x, float y, float w, float h) {
  out->n_ops = 0;
  out->result = -1;
  out->area[0] = x, out->area[1] = y, out->area[2] = w, out->area[3] = h;
  out->grid.layers = 0;
  out->labels_cut = 0, out->labels_short = 0, out->words_missing = 0;
  memset(out->pic, 0, sizeof out->pic), memset(out->clip, 0, sizeof out->clip);
  memset(out->pan_max, 0, sizeof out->pan_max), memset(out->pan, 0, sizeof out->pan);
  out->fs = view_text_size(o);
  memset(out->chart, 0, sizeof out->chart), out->chart_px = 0;
  out->tok_first = out->tok_shown = out->tok_total = 0;
}

void view_token_window(const Trace *t, const ViewOptions *o, int *first, int *count) {
  int L = t->L, n = VIEW_TOKENS_READABLE;
  *first = 0, *count = 0;
  if (o->tok_count > 0 && o->tok_count < L) { // the tokens asked for (export --tokens A-B)
    int f = o->tok_first < 0 ? 0 : o->tok_first;
    *count = o->tok_count, *first = f > L - o->tok_count ? L - o->tok_count : f;
    return;
  }
  if (L <= n) return;
  n = AXL_ALL_UP_TO; // (as many as can each be named: window_size measures how many fit)
  int f = o->tok_first;
  if (f < 0) f = o->focus_row >= 0 && o->focus_row < L ? o->focus_row - n / 2 : 0; // the focus in the middle
  *first = f < 0 ? 0 : f > L - n ? L - n : f, *count = n;
}

// The line under a window of tokens: which tokens show, that row sums are over all of them.
static float window_note_size(const Eq *e) { return FS_MIN * e->o->text_scale * 0.8f; }

float eq_window_cell(const Eq *e) { return FS_LEAST * e->o->text_scale * 1.15f; }

float eq_window_label(const Eq *e) { return VIEW_WINDOW_LABEL * e->o->text_scale; }

float eq_window_label_px(const Eq *e) {
  float least = 1e9f;
  for (int k = 0; k < e->lay->n_ops; k++) {
    const ViewOperand *v = &e->lay->ops[k];
    if ((v->op.row_win || v->op.col_win) && v->token_px > 0) least = fminf(least, v->token_px);
  }
  return least;
}

void view_token_window_fit(const Trace *t, const ViewOptions *o, int most, int *first, int *count) {
  view_token_window(t, o, first, count);
  if (most <= 0 || o->tok_count > 0 || (*count ? *count : t->L) <= most) return;
  int n = most, L = t->L, f = o->tok_first; // the window of `most` tokens around the same focus
  if (f < 0) f = o->focus_row >= 0 && o->focus_row < L ? o->focus_row - n / 2 : 0;
  *first = f < 0 ? 0 : f > L - n ? L - n : f, *count = n;
}

void eq_window(Eq *e) {
  // a count the caller measured (view_render), else VIEW_TOKENS_READABLE's
  view_token_window_fit(e->t, e->o, e->win_n, &e->win_first, &e->win_n);
  if (!e->win_n) return;
  e->lay->tok_first = e->win_first, e->lay->tok_shown = e->win_n, e->lay->tok_total = e->t->L;
  e->h -= window_note_size(e) * 1.8f;
  e->win_y = e->y + e->h;
}

void eq_window_note(Eq *e) {
  if (!e->win_n) return;
  bool sums = false;
  for (int k = 0; k < e->lay->n_ops; k++) sums |= e->deco[k].row_sums && e->lay->ops[k].op.col_win > 0;
  char buf[256];
  int n = snprintf(buf, sizeof buf, "tokens %d–%d of %d shown", e->win_first + 1, e->win_first + e->win_n,
                   e->t->L);
  if (sums && n < (int)sizeof buf)
    n += snprintf(buf + n, sizeof buf - (size_t)n, " · each row's Σ over all %d columns", e->t->L);
  if (e->win_text) n = snprintf(buf, sizeof buf, "%s", e->win_text);
  if (e->o->tok_keys && n < (int)sizeof buf)
    snprintf(buf + n, sizeof buf - (size_t)n, " · %s", e->o->tok_keys);
  float fs = window_note_size(e), w = e->w - eq_bar_width(e);
  while (text_width(FONT_SANS, fs, buf) > w && fs > 8) fs *= 0.9f;
  scene_text(e->s, FONT_SANS, fs, e->x + (w - text_width(FONT_SANS, fs, buf)) / 2, e->win_y + fs * 1.3f,
             e->o->theme->text, buf);
}

float view_zoom(const ViewOptions *o) { return o->zoom <= 0 ? 1.0f : fminf(3.0f, fmaxf(0.5f, o->zoom)); }
float view_text_size(const ViewOptions *o) { return 17.0f * o->text_scale * view_zoom(o); }

int eq_op(Eq *e, Operand op, const char *symbol, LinkKind link) {
  ViewLayout *l = e->lay;
  EXPECT(l->n_ops < VIEW_MAX_OPS);
  int k = l->n_ops++;
  memset(&l->ops[k], 0, sizeof l->ops[k]);
  l->ops[k].op = e->win_n ? operand_window(op, e->win_first, e->win_n) : op;
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

// Symbolic name of an axis for shapes ("L×D"), plain text with Unicode subscripts ("L×dₖ", as
// tex_plain writes d_k).
static const char *axis_letter(TraceAxis a) {
  switch (a) {
  case AXIS_TOKEN: return "L";
  case AXIS_VOCAB: return "V";
  case AXIS_MODEL:
  case AXIS_QKV: return "D";
  case AXIS_HEADDIM: return "dₖ";
  case AXIS_FFN: return "F";
  case AXIS_TGT_TOKEN: return "T";
  case AXIS_TGT_VOCAB: return "Vₜ";
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
int view_top_words(const Operand *op_in, int row, int k, int *idx) {
  Operand whole = operand_whole(*op_in); // (row counts the matrix's rows, window or not)
  const Operand *op = &whole;
  int n = 0;
  for (int j = 0; j < op->cols; j++) {
    float p = operand_at(op, row, j);
    int at = n < k ? n++ : k; // insertion into the sorted list, dropping the last
    while (at > 0 && p > operand_at(op, row, idx[at - 1])) {
      if (at < k) idx[at] = idx[at - 1];
      at--;
    }
    if (at < k) idx[at] = j;
  }
  return n;
}

// Label with an ellipsis when wider than maxw.
static const char *fit_label(const char *s, FontFace f, float fs, float maxw, char *buf, int cap) {
  if (text_width(f, fs, s) <= maxw) return s;
  int n = (int)strlen(s);
  snprintf(buf, (size_t)cap, "%s", s);
  if (n > cap - 1) n = cap - 1; // (a caption longer than buf: a 61-word sentence read past its end)
  while (n > 1) {
    n = (int)utf8_floor(buf, (size_t)n - 1); // a UTF-8 boundary
    if (n == 0) break;                       // not even one character fits
    snprintf(buf + n, (size_t)(cap - n), "…");
    if (text_width(f, fs, buf) <= maxw) return buf;
  }
  return "";
}

// A caption that names sentences in quotes (“…”), fitted into maxw: its longest quoted sentence
// loses whole words from its end, "…" before the closing quote, until the caption fits, so that
// it still reads as sentences ("rows: “the cat walks by the …” · columns: “She puts money in the
// bank”"), not a word cut in two and an open quote; fit_label's cut when even that is too wide.
static const char *fit_caption(const char *s, FontFace f, float fs, float maxw, char *buf, int cap) {
  if (text_width(f, fs, s) <= maxw) return s;
  enum { SPANS = 4 };
  static const char open[] = "“", close[] = "”";
  const char *at[SPANS];
  int len[SPANS], keep[SPANS], n = 0; // each quoted text: where, its bytes, the bytes kept
  for (const char *p = strstr(s, open); p && n < SPANS; p = strstr(p, open)) {
    const char *q = strstr(p + strlen(open), close);
    if (!q) break;
    at[n] = p + strlen(open), len[n] = keep[n] = (int)(q - at[n]), n++;
    p = q + strlen(close);
  }
  for (;;) {
    int m = -1; // the longest quoted text that can lose a word
    for (int k = 0; k < n; k++)
      if (memchr(at[k], ' ', (size_t)keep[k]) && (m < 0 || keep[k] > keep[m])) m = k;
    if (m < 0) break;
    int e = keep[m];
    while (e > 0 && at[m][e - 1] != ' ') e--; // back to the space before the last word kept
    while (e > 0 && at[m][e - 1] == ' ') e--;
    keep[m] = e;
    int o = 0;
    const char *from = s;
    for (int k = 0; k < n && o < cap; k++) {
      o += snprintf(buf + o, (size_t)(cap - o), "%.*s%s", (int)(at[k] + keep[k] - from), from,
                    keep[k] < len[k] ? " …" : "");
      from = at[k] + len[k];
    }
    if (o < cap) snprintf(buf + o, (size_t)(cap - o), "%s", from);
    if (o < cap && text_width(f, fs, buf) <= maxw) return buf;
  }
  return fit_label(s, f, fs, maxw, buf, cap);
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

// Operands that share a colour range per stage: weights apart from activations, except the
// embedding table E, whose rows Z = OE copies (the same numbers get the same colours).
static int scale_group(const Operand *op) {
  const TraceTensor *x = operand_src(op);
  return is_weight_op(op) && !(x && x->kind == T_EMBED_W);
}

bool eq_row_hidden(const Eq *e, int k, int row) {
  const ViewOperand *v = &e->lay->ops[k];
  if (!e->o->hide || !(v->result || v->op.minus_trace)) return false;
  if (e->o->hide == 1) return true;
  int fr = e->deco[k].own_focus ? e->deco[k].focus_row : e->o->focus_row;
  return row + v->op.row0 == fr; // (the focus counts the matrix's rows, the window or not)
}

// Entry f of an axis of op (counted in the whole matrix) as the picture counts it: its place in a
// window of the tokens, -1 when the window does not show it.
static int shown_at(const Operand *op, bool cols, int f) {
  int off = cols ? op->col0 : op->row0, n = cols ? op->cols : op->rows;
  if (f < 0 || !(cols ? op->col_win : op->row_win)) return f;
  return f - off >= 0 && f - off < n ? f - off : -1;
}

// Every row of operand k hidden (a reveal=result step's result).
static bool all_hidden(const Eq *e, int k) {
  return e->lay->ops[k].op.rows > 0 && eq_row_hidden(e, k, 0) &&
         eq_row_hidden(e, k, e->lay->ops[k].op.rows - 1);
}

// operand_range of the rows a reveal= step shows: a hidden row's extremes are no colour bar's
// ends. lo > hi when every row is hidden.
static void visible_range(const Eq *e, int k, float *lo, float *hi) {
  const Operand *op = &e->lay->ops[k].op;
  bool some = false;
  for (int i = 0; i < op->rows && !some; i++) some = eq_row_hidden(e, k, i);
  if (!some) {
    operand_range(op, lo, hi);
    return;
  }
  float a = INFINITY, b = -INFINITY;
  for (int i = 0; i < op->rows; i++)
    if (!eq_row_hidden(e, k, i))
      for (int j = 0; j < op->cols; j++) {
        float x = operand_at(op, i, j);
        if (isfinite(x)) a = fminf(a, x), b = fmaxf(b, x);
      }
  *lo = a, *hi = b;
}

static void compute_scales(Eq *e) {
  ViewLayout *l = e->lay;
  float lo[VIEW_MAX_OPS], hi[VIEW_MAX_OPS];
  for (int k = 0; k < l->n_ops; k++) {
    visible_range(e, k, &lo[k], &hi[k]);
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
              scale_group(&l->ops[q].op) == scale_group(&l->ops[k].op) &&
              is_difference(&l->ops[q].op) == is_difference(&l->ops[k].op))
            a = fminf(a, lo[q]), b = fmaxf(b, hi[q]);
      if (e->o->scale == SCALE_GLOBAL && !is_weight_op(&l->ops[k].op) && !is_difference(&l->ops[k].op))
        a = e->o->global_lo, b = e->o->global_hi;
      if (m != CMAP_DIVERGING && e->o->scale != SCALE_MATRIX && a > 0) a = 0;
    }
    if (!(a <= b)) a = -1, b = 1; // a hidden result alone on its scale: no colour bar shows it (all_hidden)
    const TraceTensor *src = operand_src(&l->ops[k].op);
    if (src && src->kind == T_SIM) a = -1, b = 1; // cosines: always all of [-1, 1], so levels compare
    l->ops[k].scale = scale_for(m, a, b);
  }
}

// ---------------------------------------------------------------- sizes

typedef struct {
  float top, bottom, left, right; // decorations around the cells
} Margins;

// Whether operand k has labels above its columns (and their caption, "keys →"): not a lower row of
// a grid of heads whose columns the top row names (Eq.share_cols).
static bool has_col_labels(const Eq *e, int k) {
  return e->lay->ops[k].op.cols > 1 && !(e->share_cols && e->deco[k].grid_lower);
}

// A vocabulary axis too long to name every word names the sentence's words on up to two tiers
// of labels; its margin keeps room for the second tier, and its caption goes above both.
#define VOCAB_TIER 0.95f // the height of a tier, in units of the font size

static bool has_bands(const Operand *op, bool cols) {
  return (cols ? op->col_axis : op->row_axis) == AXIS_QKV && op->trace->cfg.H > 1;
}

// Sizes of the cells. Every dimension axis (D, d_k, F, V) has the unit k, so in Z·W^q the
// width of Z equals the height of W^q; token axes have their own unit t (taller rows, so the
// words stay readable), at most 2.5k unless that would make them smaller than a line of text.
// When even 3-pixel cells do not fit (D = 512 and more), dimension axes are drawn
// sqrt(n)·k long and area-averaged: every operand stays visible, its true shape labelled.
// The labels grow with the cells (fs, from FS_MIN up to FS_MAX per 1080 lines), so a picture
// fitted to a large area is large as a whole, not large cells with small words.
typedef struct {
  float k, t;
  bool comp;     // dimension axes compressed (sqrt)
  bool tok_comp; // token axes compressed too (long sentences)
  float fs;      // the label size that goes with these cells
  // one operand (the result of a small matrix step) drawn `big` times as large, so that its
  // cells carry their numbers (grow_result); NULL: every operand on the same units
  const ViewOperand *big_v;
  float big_w, big_h; // its width's and its height's factors
} Units;

static Units units_for(const Eq *e, float k, bool comp, bool tight) {
  float ts = e->o->text_scale * e->fs_scale, smax = e->smax, fmin = FS_MIN * ts,
        line = tight ? 0 : fmin * 1.3f;
  int L = e->t->L > e->t->T ? e->t->L : e->t->T;     // the longer sentence of an encoder-decoder
  if (e->win_n && e->t->T <= e->win_n) L = e->win_n; // (a window of a long one's tokens)
  Units u = {k, 0, comp, false, fmin, NULL, 1, 1};
  if (!comp)
    u.t = fminf(smax, fmaxf(2.5f * k, L <= 40 ? line : k));
  else if (L <= 40)
    u.t = fminf(smax, fmaxf(0.8f * k, line));
  else
    u.tok_comp = true;
  float cell = u.tok_comp ? k : u.t;
  u.fs = fminf(FS_MAX * ts, fmaxf(fmin, cell * 0.42f));
  return u;
}

static float axis_len(const Units *u, TraceAxis a, int n) {
  if (is_tok(a)) return u->tok_comp ? sqrtf((float)n) * u->k : n * u->t;
  return u->comp ? sqrtf((float)n) * u->k : n * u->k;
}

static void cell_box(const ViewOperand *v, const Units *u, float *w, float *h) {
  *w = axis_len(u, v->op.col_axis, v->op.cols);
  *h = axis_len(u, v->op.row_axis, v->op.rows);
  if (u->big_v == v) *w *= u->big_w, *h *= u->big_h;
  if (v->op.cols == 1) *w = fmaxf(*w, 6);
  if (v->op.rows == 1) *h = fmaxf(*h, 6);
}

static bool word_cols(TraceAxis a) { return is_words(a) || a == AXIS_CLASS; }

// The focus among an operand's entries along one axis (-1: none), as draw_focus shows it.
static int axis_focus(const Eq *e, int k, bool cols) {
  const OpDeco *d = &e->deco[k];
  int f = cols ? (d->own_focus ? d->focus_col : e->o->focus_col)
               : (d->own_focus ? d->focus_row : e->o->focus_row);
  const ViewOperand *v = &e->lay->ops[k];
  if (!v->result && (v->link == LINK_ROW) == cols)
    return -1; // Q's rows follow the focus row, Kᵀ's columns its column
  return shown_at(&v->op, cols, f);
}

// The word labels of one axis of operand k, `len` pixels long, as axislabels.h decides them for
// every view: the size and the bounds the picture allows, the focus kept first.
static AxisSpec axis_spec(const Eq *e, int k, bool cols, float len, float fs) {
  const ViewOperand *v = &e->lay->ops[k];
  float z = e->o->text_scale * view_zoom(e->o);
  TraceAxis a = cols ? v->op.col_axis : v->op.row_axis;
  return (AxisSpec){.trace = v->op.trace,
                    .axis = a,
                    .n = cols ? v->op.cols : v->op.rows,
                    .cols = cols,
                    .len = len,
                    .fs = fs,
                    // a window of a long sentence's tokens: rows as large as turned columns
                    .floor = (is_tok(a) && (cols ? v->op.col_win : v->op.row_win)
                                  ? fmaxf(FS_FLOOR, VIEW_WINDOW_LABEL)
                                  : FS_FLOOR) *
                             z,
                    .least = FS_LEAST * z,
                    .focus = is_tok(a) ? axis_focus(e, k, cols) : -1,
                    .first = cols ? v->op.col0 : v->op.row0,
                    .vocab = is_vocab(a),
                    .one_tier = e->one_tier};
}

// The room the column labels of operand k take above its cells (cells w pixels wide).
static float col_depth(const Eq *e, int k, float w, float fs) {
  const ViewOperand *v = &e->lay->ops[k];
  if (!word_cols(v->op.col_axis)) return fs * 1.35f; // dimension numbers, at a readable stride
  AxisSpec sp = axis_spec(e, k, true, w, fs);
  return axis_labels_depth(&sp);
}

// Width of the row labels of operand k (cells h pixels tall).
static float row_label_width(const Eq *e, int k, float h, float fs) {
  const ViewOperand *v = &e->lay->ops[k];
  char buf[96];
  if (!is_words(v->op.row_axis)) { // numbers, or the one row of a mean ("mean"), drawn smaller
    if (v->op.row_axis == AXIS_ONE)
      label(v->op.trace, v->op.row_axis, 0, buf, sizeof buf);
    else
      snprintf(buf, sizeof buf, "%d", v->op.rows); // dimensions count from 1
    return text_width(FONT_SANS, fs * 0.85f, buf) + 8;
  }
  AxisSpec sp = axis_spec(e, k, false, h, fs);
  return axis_labels_depth(&sp);
}

// Whether a token axis of operand k names only some of its entries: a line under the shape says so.
static bool labels_partial(const Eq *e, int k, float w, float h, float fs) {
  const ViewOperand *v = &e->lay->ops[k];
  AxisSpec r = axis_spec(e, k, false, h, fs), c = axis_spec(e, k, true, w, fs);
  return (e->deco[k].row_labels && is_tok(v->op.row_axis) && axis_labels_partial(&r)) ||
         (has_col_labels(e, k) && is_tok(v->op.col_axis) && axis_labels_partial(&c));
}

// Today's decoders: a dimension axis that is not D says what it is (grouped-query attention's
// H·d_k and H_kv·d_k, RoPE's d_k/2 angles of a row); else the axis's letter.
static const char *modern_letter(const Trace *t, TraceAxis a, int n, const char *letter) {
  if (!t || !model_is_modern(&t->cfg) || n == 1) return letter;
  int dk = model_dk(&t->cfg), H = t->cfg.H, Hk = model_hkv(&t->cfg);
  if ((a == AXIS_QKV || a == AXIS_MODEL) && n != t->cfg.D)
    return n == H * dk ? "H·dₖ" : n == Hk * dk ? "H_kv·dₖ" : letter;
  if (a == AXIS_HEADDIM && n * 2 == dk) return "dₖ/2";
  return letter;
}

// The shape under an operand ("L×D = 6×64"); true when its cells are fewer pixels than values
// (whole-pixel cells: the test draw_cells makes), said on a line of its own under the shape.
static bool shape_text(const Eq *e, const ViewOperand *v, float w, float h, char *buf, int cap) {
  const char *ra = v->op.rows == 1 ? "1" : axis_letter(v->op.row_axis);
  const char *ca = v->op.cols == 1 ? "1" : axis_letter(v->op.col_axis);
  if (e->t && e->t->T > 0) { // an encoder-decoder calls the source's length S, as the course does
    if (v->op.rows > 1 && v->op.row_axis == AXIS_TOKEN) ra = "S";
    if (v->op.cols > 1 && v->op.col_axis == AXIS_TOKEN) ca = "S";
  }
  ra = modern_letter(e->t, v->op.row_axis, v->op.rows, ra);
  ca = modern_letter(e->t, v->op.col_axis, v->op.cols, ca);
  Operand whole = operand_whole(v->op); // a long sentence's window: the matrix's own shape first
  if (whole.rows != v->op.rows || whole.cols != v->op.cols)
    snprintf(buf, (size_t)cap, "%s×%s = %d×%d, %d×%d shown", ra, ca, whole.rows, whole.cols, v->op.rows,
             v->op.cols);
  else
    snprintf(buf, (size_t)cap, "%s×%s = %d×%d", ra, ca, v->op.rows, v->op.cols);
  return v->op.rows > (int)h || v->op.cols > (int)w;
}

// Whether operand k (cells w × h) leaves its shape to the operand above it: a lower row of a grid
// of heads whose columns are named once (Eq.share_cols), the same shape, and no note under it.
static bool shape_shared(const Eq *e, int k, float w, float h, float fs) {
  char buf[96];
  return e->share_cols && e->deco[k].grid_lower && !shape_text(e, &e->lay->ops[k], w, h, buf, sizeof buf) &&
         !labels_partial(e, k, w, h, fs);
}

static Margins margins(const Eq *e, int k, const Units *u) {
  const ViewOperand *v = &e->lay->ops[k];
  const OpDeco *d = &e->deco[k];
  float fs = u->fs;
  Margins m = {0};
  m.top = fs * 2.1f; // the symbol
  if (d->caption) m.top += fs * 1.5f;
  float w, h;
  cell_box(v, u, &w, &h);
  if (has_col_labels(e, k)) m.top += col_depth(e, k, w, fs);
  if (has_col_labels(e, k) && word_cols(v->op.col_axis)) m.top += fs * 0.95f; // "keys"
  if (is_vocab(v->op.col_axis)) m.top += VOCAB_TIER * fs;                     // a second tier of word labels
  if (has_bands(&v->op, true)) m.top += fs * 0.6f;
  m.bottom = shape_shared(e, k, w, h, fs) ? fs * 0.5f : fs * 1.7f; // the shape
  if (e->o->scale == SCALE_MATRIX) m.bottom += fs * 1.9f;
  m.left = fs * 0.6f;
  if (d->row_labels) m.left += row_label_width(e, k, h, fs);
  if (has_bands(&v->op, false)) m.left += fs * 0.6f;
  m.right = fs * 0.6f;
  if (d->row_sums) m.right += text_width(FONT_SANS, fs * 0.85f, "Σ 1.000") + 8;
  char buf[96];
  if (shape_text(e, v, w, h, buf, sizeof buf)) m.bottom += fs * 0.95f; // "area-averaged"
  if (labels_partial(e, k, w, h, fs)) m.bottom += fs * 0.95f;          // "labelled: 18 of 40 rows"
  return m;
}

static float note_size(float fs);

// How far the lines under an operand (its shape; "area-averaged"; "labelled: 5 of 20 rows, …")
// reach past its cells on each side (they are centred): neighbours keep them apart, so that two
// notes never run into each other.
static const char *averaged_text(const ViewOperand *v);

static float shape_over(const Eq *e, const ViewOperand *v, const Units *u) {
  float w, h;
  char buf[160];
  cell_box(v, u, &w, &h);
  bool averaged = shape_text(e, v, w, h, buf, sizeof buf);
  float wide = text_width(FONT_SANS, u->fs * 0.85f, buf);
  if (averaged) wide = fmaxf(wide, text_width(FONT_SANS_ITALIC, u->fs * 0.7f, averaged_text(v)));
  int k = (int)(v - e->lay->ops);
  if (!e->deco[k].caption_row && labels_partial(e, k, w, h, u->fs)) { // the note at its longest (no plan)
    AxisSpec r = axis_spec(e, k, false, h, u->fs), c = axis_spec(e, k, true, w, u->fs);
    bool rows = e->deco[k].row_labels && is_tok(v->op.row_axis) && axis_labels_partial(&r);
    bool cols = has_col_labels(e, k) && is_tok(v->op.col_axis) && axis_labels_partial(&c);
    int n = snprintf(buf, sizeof buf, "labelled:");
    if (rows) n += snprintf(buf + n, sizeof buf - (size_t)n, " %d of %d rows", v->op.rows, v->op.rows);
    if (cols && n < (int)sizeof buf)
      snprintf(buf + n, sizeof buf - (size_t)n, "%s %d of %d columns", rows ? "," : "", v->op.cols,
               v->op.cols);
    wide = fmaxf(wide, text_width(FONT_SANS_ITALIC, note_size(u->fs), buf));
  }
  return fmaxf(0, (wide - w) / 2);
}

static float row_tallest(const Eq *e, int r, const Units *u) { // delimiters grow to it
  float tallest = 0;
  for (int i = 0; i < e->rows[r].n; i++)
    if (e->rows[r].items[i].kind == IT_OP) {
      float w, h;
      cell_box(&e->lay->ops[e->rows[r].items[i].op], u, &w, &h);
      tallest = fmaxf(tallest, h);
    }
  return tallest;
}

// The tallest operand a delimiter (item i of row r) encloses, up to its partner: softmax( S ) = A
// draws its parentheses round S, not as tall as A. Without a partner: the row's tallest.
static float delim_tallest(const Eq *e, int r, int i, const Units *u) {
  const EqRow *row = &e->rows[r];
  char d = row->items[i].delim;
  int dir = d == '(' || d == '[' ? 1 : -1, depth = 0;
  float tallest = 0;
  for (int q = i; q >= 0 && q < row->n; q += dir) {
    const Item *it = &row->items[q];
    if (it->kind == IT_DELIM) {
      depth += (it->delim == '(' || it->delim == '[') == (dir > 0) ? 1 : -1;
      if (depth == 0) return tallest > 0 ? tallest : row_tallest(e, r, u);
    } else if (it->kind == IT_OP) {
      float w, h;
      cell_box(&e->lay->ops[it->op], u, &w, &h);
      tallest = fmaxf(tallest, h);
    }
  }
  return row_tallest(e, r, u);
}

// Places the items of row r from x = 0: xs[i] (may be NULL) where item i starts (an operand's
// left margin); returns the row's width. Operands are apart by their margins and the operators
// between them, and further when the shapes under two neighbours would otherwise touch (shapes
// are at the bottom: they may reach under an operator, not under the next shape).
static float row_place(const Eq *e, int r, const Units *u, float *xs) {
  const EqRow *row = &e->rows[r];
  float fs = u->fs, gap = fs * 0.6f, x = 0;
  float since = -1, prev_over = 0; // from the last operand's cells' right edge; its shape's reach
  for (int i = 0; i < row->n; i++) {
    const Item *it = &row->items[i];
    if (i) x += gap, since += since >= 0 ? gap : 0;
    if (it->kind != IT_OP) {
      float w = it->kind == IT_TEX ? measure_tex(it->tex, fs * 1.6f).width
                                   : delim_width(delim_tallest(e, r, i, u), fs);
      if (xs) xs[i] = x;
      x += w, since += since >= 0 ? w : 0;
      continue;
    }
    const ViewOperand *v = &e->lay->ops[it->op];
    Margins m = margins(e, it->op, u);
    float w, h, over = shape_over(e, v, u);
    cell_box(v, u, &w, &h);
    if (since >= 0 && prev_over + over + fs * 0.6f > since + m.left)
      x += prev_over + over + fs * 0.6f - (since + m.left);
    else if (since < 0 && over > x + m.left) // the first shape stays inside the row
      x = over - m.left;
    if (xs) xs[i] = x;
    x += m.left + w + m.right, since = m.right, prev_over = over;
  }
  if (since >= 0 && prev_over > since) x += prev_over - since; // and the last one
  return x;
}

// Width of row r and its extent above/below the axis.
static void row_extent(const Eq *e, int r, const Units *u, float *width, float *above, float *below) {
  const EqRow *row = &e->rows[r];
  float fs = u->fs;
  *width = row_place(e, r, u, NULL), *above = 0, *below = 0;
  for (int i = 0; i < row->n; i++) {
    const Item *it = &row->items[i];
    if (it->kind == IT_TEX) {
      TexMetrics m = measure_tex(it->tex, fs * 1.6f);
      *above = fmaxf(*above, m.ascent);
      *below = fmaxf(*below, m.descent);
    } else if (it->kind == IT_OP) {
      Margins m = margins(e, it->op, u);
      float w, h;
      cell_box(&e->lay->ops[it->op], u, &w, &h);
      *above = fmaxf(*above, m.top + h / 2);
      *below = fmaxf(*below, h / 2 + m.bottom);
    }
  }
}

// The picture's width and height at these units.
static void extent(const Eq *e, const Units *u, float *w, float *h) {
  *w = 0, *h = 0;
  for (int r = 0; r < e->n_rows; r++) {
    float rw, a, b;
    row_extent(e, r, u, &rw, &a, &b);
    *w = fmaxf(*w, rw);
    *h += a + b + (r ? u->fs * 1.2f : 0);
  }
}

static bool fits(const Eq *e, const Units *u, float avail_w, float avail_h) {
  float w, h;
  extent(e, u, &w, &h);
  return w <= avail_w && h <= avail_h;
}

// The largest unit k for which every row fits.
// (tight: token rows may be thinner than a line of text, when nothing else fits)
static Units fit_units(const Eq *e, bool comp, float avail_w, float avail_h) {
  for (int tight = 0; tight < 2; tight++) {
    float lo = 0.01f, hi = e->smax * (comp ? 8 : 1);
    for (int it = 0; it < 30; it++) {
      float mid = (lo + hi) / 2;
      Units u = units_for(e, mid, comp, tight);
      if (fits(e, &u, avail_w, avail_h))
        lo = mid;
      else
        hi = mid;
    }
    Units u = units_for(e, lo, comp, tight);
    if (tight || fits(e, &u, avail_w, avail_h)) return u;
  }
  return units_for(e, 0.01f, comp, true);
}

// Then the token unit alone as large as still fits (up to the largest cell): an equation whose
// width is spent on 64 dimensions gets taller token rows in the height it has.
// The largest k that fits with the token unit t fixed (the labels as in base).
static float fit_k(const Eq *e, Units base, float t, float avail_w, float avail_h) {
  float lo = 0, hi = base.k;
  for (int it = 0; it < 16; it++) {
    Units v = base;
    v.k = (lo + hi) / 2, v.t = t;
    if (fits(e, &v, avail_w, avail_h))
      lo = v.k;
    else
      hi = v.k;
  }
  return lo;
}

static Units grow_tokens(const Eq *e, Units u, float avail_w, float avail_h) {
  if (u.tok_comp || !fits(e, &u, avail_w, avail_h)) return u;
  // a taller token row costs a little width (the brackets grow with the matrices): the dimension
  // unit may give up 6 % of its length for it
  float lo = u.t, hi = fmaxf(u.t, e->smax), k = u.k;
  for (int q = 0; q < e->lay->n_ops; q++) { // and no operand more than twice as tall as wide
    const Operand *op = &e->lay->ops[q].op;
    if (is_tok(op->row_axis) && !is_tok(op->col_axis) && op->cols > 1)
      hi = fminf(hi, fmaxf(u.t, 2 * axis_len(&u, op->col_axis, op->cols) / (float)op->rows));
  }
  for (int it = 0; it < 12; it++) { // the labels keep their size: the width is usually what binds
    float t = (lo + hi) / 2, kt = fit_k(e, u, t, avail_w, avail_h);
    if (kt >= 0.94f * u.k)
      lo = t, k = kt;
    else
      hi = t;
  }
  if (lo > u.t) u.t = lo, u.k = k;
  return u;
}

// A small result (up to 12×12, whole cells, token or dimension axes alike) drawn large enough to
// carry its numbers on a slide (issue 31: "large or small compared with its neighbours?" is read
// in numbers): its cells grow to what a number at 0.6 of the labels needs, the other operands
// giving up at most a third of their size (the labels a sixth) for it, within the area; when one
// row is too wide for that, "= result" goes on a row of its own if the area is tall enough.
// Whether units t name fewer entries of some operand's token axis than u: a small result's
// numbers never cost another matrix its word labels.
static bool labels_lost(const Eq *e, const Units *u, const Units *t) {
  for (int k = 0; k < e->lay->n_ops; k++) {
    float w0, h0, w1, h1;
    cell_box(&e->lay->ops[k], u, &w0, &h0);
    cell_box(&e->lay->ops[k], t, &w1, &h1);
    if (labels_partial(e, k, w1, h1, t->fs) && !labels_partial(e, k, w0, h0, u->fs)) return true;
  }
  return false;
}

// Whether some value of the operand is negative: its numbers need room for a sign. The values' own
// minimum, not the colour scale's: a diverging scale is symmetric, and intuition.md's scores of 0
// and 0.577 (scale ±0.58) wanted the room of "-0.0" for numbers that have no sign, which its 9×9
// at 1280×720 did not have.
static bool has_negative(const Operand *op) {
  float lo, hi;
  operand_range(op, &lo, &hi);
  return lo < 0;
}

// The number size a small result (rows × cols up to 12 × 12) needs to be read from the back row of
// a lecture hall: 14 px at 720 lines for up to 6 × 6, 12 px for 9 × 9, a third of a pixel less per
// further row or column (21.5 px per 1080 lines down to 18.5 and 15.5); 0 for larger matrices.
static float backrow_number_px(const Eq *e, const Operand *op) {
  int n = op->rows > op->cols ? op->rows : op->cols;
  if (!e->o->numbers || n > 12 || op->index < 0) return 0;
  return e->o->text_scale * (21.5f - fmaxf(0, (float)(n - 6)));
}

static Units grow_result_in(const Eq *e, Units u, const ViewOperand *v, float want_w, float want_h,
                            float avail_w, float avail_h, bool *ok) {
  *ok = false;
  for (float f = 1.0f; f >= 0.66f; f -= 0.02f) { // the others smaller, the result to its size
    Units t = u;
    t.k *= f, t.t *= f, t.fs *= fmaxf(f, 0.85f), t.big_v = v;
    t.big_w = fmaxf(1, want_w / f), t.big_h = fmaxf(1, want_h / f);
    if (fits(e, &t, avail_w, avail_h) && !labels_lost(e, &u, &t)) {
      *ok = true;
      float lo = 1, hi = 2; // then the whole picture as large as still fits (two rows are shorter)
      for (int it = 0; it < 10; it++) {
        float m = (lo + hi) / 2;
        Units g = t;
        g.k *= m, g.t *= m, g.fs *= m;
        if (fits(e, &g, avail_w, avail_h))
          lo = m;
        else
          hi = m;
      }
      t.k *= lo, t.t *= lo, t.fs *= lo;
      return t;
    }
  }
  return u;
}

static Units grow_result(Eq *e, Units u, float avail_w, float avail_h) {
  const ViewLayout *l = e->lay;
  if (!e->o->numbers || l->result < 0 || l->n_ops < 2 || u.comp || u.tok_comp) return u;
  const ViewOperand *v = &l->ops[l->result];
  if (v->op.rows > 12 || v->op.cols > 12 || v->op.index < 0) return u;
  for (int k = 0; k < l->n_ops; k++) // one result: a grid of heads shares its units (and a
    if ((k != l->result && l->ops[k].result) || e->deco[k].caption) return u; // captioned row its top)
  float w, h;
  cell_box(v, &u, &w, &h);
  // draw_cells's numbers: "-0.0" wide (two digits: ".75", "-9.8"; ".15"), at the back row's size
  // if the area allows, else as large as it allows down to 0.6 of the labels (a quarter at a time)
  float cw = w / v->op.cols, ch = h / v->op.rows, base = fmaxf(9.5f, u.fs * 0.6f);
  float top = fmaxf(base, backrow_number_px(e, &v->op));
  // "= result" on a row of its own under the rest, when one row is too wide for it
  EqRow *r0 = &e->rows[0];
  bool can_split = e->n_rows == 1 && r0->n >= 3 && r0->items[r0->n - 1].kind == IT_OP &&
                   r0->items[r0->n - 1].op == l->result && r0->items[r0->n - 2].kind == IT_TEX &&
                   !strcmp(r0->items[r0->n - 2].tex, "=");
  for (int q = 0; q <= 4; q++) {
    float nf = top - (top - base) * (float)q / 4;
    float want_w = text_width(FONT_MONO, nf, has_negative(&v->op) ? "-0.0" : ".00") / 0.8f * 1.06f / cw;
    float want_h = nf / 0.42f * 1.06f / ch;
    if (want_w <= 1 && want_h <= 1) return u;
    bool ok;
    Units g = grow_result_in(e, u, v, want_w, want_h, avail_w, avail_h, &ok);
    if (ok) return g;
    if (!can_split) continue;
    e->rows[1].n = 0, e->n_rows = 2;
    e->rows[1].items[e->rows[1].n++] = r0->items[r0->n - 2];
    e->rows[1].items[e->rows[1].n++] = r0->items[r0->n - 1];
    r0->n -= 2;
    g = grow_result_in(e, u, v, want_w, want_h, avail_w, avail_h, &ok);
    if (ok) return g;
    r0->items[r0->n++] = e->rows[1].items[0], r0->items[r0->n++] = e->rows[1].items[1];
    e->n_rows = 1;
  }
  return u;
}

// ---------------------------------------------------------------- drawing an operand

static void draw_brackets(Eq *e, float x, float y, float w, float h, uint32_t c) {
  float t = fmaxf(1.5f, e->fs * 0.07f), serif = fminf(e->fs * 0.3f, w / 4 + 2), off = fmaxf(4, e->fs * 0.15f);
  scene_rect(e->s, x - off - t, y - 2, t, h + 4, c);
  scene_rect(e->s, x - off - t, y - 2, serif, t, c);
  scene_rect(e->s, x - off - t, y + h + 2 - t, serif, t, c);
  scene_rect(e->s, x + w + off, y - 2, t, h + 4, c);
  scene_rect(e->s, x + w + off + t - serif, y - 2, serif, t, c);
  scene_rect(e->s, x + w + off + t - serif, y + h + 2 - t, serif, t, c);
}

// A colour bar's number: two decimals, or three digits in e-notation past 10 000 (an
// overflowing model reaches 3e38, which "%.2f" writes with 41 characters).
// A colour bar's end or tick: two decimals, or two significant digits when that would write a
// value that is not 0 as "0.00" (two files' differences, ±0.0031, read "±0.00", issue 31).
static const char *format_tick(char *buf, int cap, float v) {
  if (v != 0 && fabsf(v) < 0.005f) {
    snprintf(buf, (size_t)cap, "%.2g", v);
    return buf;
  }
  if (fabsf(v) < 1e4f) return numfmt_fixed(buf, cap, v, 2);
  snprintf(buf, (size_t)cap, "%.3g", v);
  return buf;
}

static void copy_text(char *buf, int cap, const char *s) { // snprintf(buf, cap, "%s", s)
  if (cap <= 0) return;
  size_t n = strlen(s);
  if (n >= (size_t)cap) n = (size_t)cap - 1;
  memcpy(buf, s, n);
  buf[n] = 0;
}

// The cell's number (numfmt.h's policy): two decimals below 10, one below 100, none above (what
// the inspector's heading rounds to at its 3 digits). compact, for signed values in cells too narrow
// for "-0.00": the leading zero goes first (".75", "-.75", never "0.8" for 0.75), then a decimal
// above 1 ("-9.8", "-15"): never fewer than two digits (".08"); "0" below 0.005. Written
// without printf but for the rare huge value (numfmt_fixed: a heatmap has thousands of cells).
static void format_value(char *buf, int cap, float v, bool onehot, bool compact) {
  if (compact && isfinite(v) && fabsf(v) < 0.005f) {
    copy_text(buf, cap, "0");
  } else if (compact && isfinite(v) && fabsf(v) < 0.995f) {
    int c = (int)lroundf(fabsf(v) * 100), n = 0; // "%s.%02d" of it: 1 … 99, or 100 at 0.99499
    char s[8];
    if (v < 0) s[n++] = '-';
    s[n++] = '.';
    if (c >= 100) s[n++] = (char)('0' + c / 100);
    s[n++] = (char)('0' + c / 10 % 10), s[n++] = (char)('0' + c % 10), s[n] = 0;
    copy_text(buf, cap, s);
  } else if (compact && isfinite(v) && fabsf(v) < 99999.5f) {
    numfmt_fixed(buf, cap, v, fabsf(v) >= 9.95f ? 0 : 1);
  } else if (onehot) {
    snprintf(buf, (size_t)cap, "%s", v == 1.0f ? "1" : "");
  } else if (!isfinite(v)) {
    snprintf(buf, (size_t)cap, v < 0 ? "−∞" : "∞");
  } else if (fabsf(v) >= 99999.5f) {
    snprintf(buf, (size_t)cap, "%.2g", v);
  } else {
    numfmt_fixed(buf, cap, v, fabsf(v) >= 99.95f ? 0 : fabsf(v) >= 9.995f ? 1 : 2);
  }
}

// A one-hot matrix and a prediction over a vocabulary too wide for whole pixels are drawn by the
// largest value of each block, not the mean: a token's 1 (a word's probability peak) among the 44
// columns a pixel covers of GPT-2's 50 257 would average to almost nothing.
typedef enum { BLOCK_MEAN, BLOCK_MAX_ONEHOT, BLOCK_MAX_PRED } BlockRule;
static BlockRule block_rule(const ViewOperand *v) {
  const TraceTensor *src = operand_src(&v->op);
  if (!src || v->op.minus_trace) return BLOCK_MEAN; // a difference of two sentences: by the mean
  return src->kind == T_ONEHOT ? BLOCK_MAX_ONEHOT : src->kind == T_PRED ? BLOCK_MAX_PRED : BLOCK_MEAN;
}

// The line under cells fewer than their values: how the blocks were drawn.
static const char *averaged_text(const ViewOperand *v) {
  BlockRule rule = block_rule(v);
  return rule == BLOCK_MAX_ONEHOT ? "area maximum: every 1 shows"
         : rule == BLOCK_MAX_PRED ? "area maximum: every peak shows"
                                  : "area-averaged";
}

static void draw_cells(Eq *e, ViewOperand *v) {
  const Theme *th = e->o->theme;
  int R = v->op.rows, C = v->op.cols;
  // more cells than pixels: area-average into blocks of 2 × 2 pixels (finer is not visible)
  v->drows = R <= (int)v->h ? R : (int)fmaxf(1, v->h / 2);
  v->dcols = C <= (int)v->w ? C : (int)fmaxf(1, v->w / 2);
  bool exact = v->drows == R && v->dcols == C;
  const TraceTensor *src = operand_src(&v->op);
  bool onehot = src && src->kind == T_ONEHOT, by_max = block_rule(v) != BLOCK_MEAN;
  uint32_t *colors = scene_cells(e->s, v->x, v->y, v->w, v->h, v->drows, v->dcols);
  if (!colors) return;
  bool mask_op = v->op.index < 0;
  bool *masked = scene_alloc(e->s, (size_t)v->drows * (size_t)v->dcols);
  bool *hid = scene_alloc(e->s, (size_t)v->drows); // a drawn row holding a hidden row (reveal=)
  if (!masked || !hid) return;
  int kv = (int)(v - e->lay->ops);
  for (int i = 0; i < v->drows; i++) {
    int r0 = (int)((long)i * R / v->drows), r1 = (int)((long)(i + 1) * R / v->drows);
    hid[i] = false;
    for (int r = r0; r < (r1 > r0 ? r1 : r0 + 1) && !hid[i]; r++) hid[i] = eq_row_hidden(e, kv, r);
    for (int j = 0; j < v->dcols; j++) {
      int c0 = (int)((long)j * C / v->dcols), c1 = (int)((long)(j + 1) * C / v->dcols);
      float val = exact    ? operand_at(&v->op, i, j)
                  : by_max ? operand_block_max(&v->op, r0, r1, c0, c1)
                           : operand_block_mean(&v->op, r0, r1, c0, c1);
      size_t k = (size_t)i * v->dcols + j;
      masked[k] = !isfinite(val) && !hid[i];
      colors[k] = hid[i]      ? th->panel
                  : masked[k] ? th->mask_bg
                  : mask_op   ? th->bg
                              : scale_color(&v->scale, val);
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
  if (has_bands(&v->op, true) && exact) { // (K and V of grouped-query attention: H_kv blocks)
    int dk = model_dk(&e->t->cfg);
    for (int h = 1; h < v->op.cols / dk; h++) scene_rect(e->s, v->x + h * dk * cw - 1, v->y, 2, v->h, th->bg);
  }
  if (has_bands(&v->op, false) && exact) {
    int dk = model_dk(&e->t->cfg);
    for (int h = 1; h < v->op.rows / dk; h++) scene_rect(e->s, v->x, v->y + h * dk * ch - 1, v->w, 2, th->bg);
  }
  // numbers
  if (e->o->numbers && exact) {
    // (a small result's numbers may be larger than the labels: the size the back row reads)
    float want = v->result ? backrow_number_px(e, &v->op) : 0;
    v->number_want = want;
    float nf = fminf(fmaxf(e->fs * 0.95f, want), ch * 0.42f);
    char buf[32];
    bool signed_vals = has_negative(&v->op);
    float need = text_width(FONT_MONO, nf, onehot ? "1" : signed_vals ? "-0.00" : "0.00");
    // smaller numbers rather than none, down to 38% of the labels' size (the size of the old
    // 60% of labels that did not grow with the cells): smaller still, a grid of numbers is noise
    // on a projector, and the colours say more
    float nf0 = nf, least = fmaxf(9.5f, e->fs * 0.38f);
    // a number takes at most 80 % of its cell: a gap between neighbours, or "0.000.00" runs together
    if (need > cw * 0.8f) nf *= cw * 0.8f / need, need = cw * 0.8f;
    // signed values: one decimal fewer rather than no numbers, or than numbers too small to read
    // from the back of a room (below 60 % of the labels) when that makes them a fifth larger
    bool compact = false;
    if (nf < fmaxf(e->fs * 0.6f, want) && !onehot) { // (probabilities too: ".15" beside "1.0")
      float nc = nf0, needc = text_width(FONT_MONO, nc, signed_vals ? "-0.0" : ".00");
      if (needc > cw * 0.8f) nc *= cw * 0.8f / needc, needc = cw * 0.8f;
      // (below the back row's size, a tenth larger is worth the digit)
      if (nc >= least && nc >= nf * (nf < want ? 1.1f : 1.2f)) nf = nc, need = needc, compact = true;
    }
    if (nf >= least && need <= cw * 0.8f + 0.01f) {
      v->number_px = nf;
      for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++) {
          float val = operand_at(&v->op, i, j);
          if ((!isfinite(val) && !mask_op) || hid[i]) continue;
          format_value(buf, sizeof buf, val, onehot, compact);
          if (!buf[0]) continue;
          uint32_t ink = cmap_ink_on(colors[(size_t)i * C + j]);
          float tw = text_width(FONT_MONO, nf, buf);
          if (tw > cw * 0.96f) continue;
          v->number_w = fmaxf(v->number_w, tw);
          scene_text(e->s, FONT_MONO, nf, v->x + j * cw + (cw - tw) / 2, v->y + i * ch + ch / 2 + nf * 0.36f,
                     ink, buf);
        }
    }
  }
}

static void note_label(Eq *e, ViewOperand *v, float lf, const char *full, const char *shown, TraceAxis a) {
  v->label_px = v->label_px > 0 ? fminf(v->label_px, lf) : lf;
  if (is_tok(a)) v->token_px = v->token_px > 0 ? fminf(v->token_px, lf) : lf;
  if (shown != full) e->lay->labels_cut++;
}

// The words a vocabulary axis of operand k names when it cannot name all (best first, into idx):
// a prediction's most likely words, else the sentence's words in its order, the focus word first.
static int vocab_cands(const Eq *e, int k, bool cols, int *idx) {
  const ViewOperand *v = &e->lay->ops[k];
  const OpDeco *d = &e->deco[k];
  if (cols && d->mark_top) return view_top_words(&v->op, d->top_row, 8, idx);
  TraceAxis a = cols ? v->op.col_axis : v->op.row_axis;
  const Tokens *tok = a == AXIS_TGT_VOCAB ? &v->op.trace->dec_tokens : &v->op.trace->tokens;
  int n = 0, N = cols ? v->op.cols : v->op.rows, f = e->o->focus_row;
  for (int q = -1; q < tok->n && n < AXL_MAX; q++) {
    int i = q < 0 ? (f >= 0 && f < tok->n && a != AXIS_TGT_VOCAB ? f : -1) : q;
    if (i < 0) continue;
    int id = tok->ids[i];
    bool seen = id < 0 || id >= N;
    for (int r = 0; r < n && !seen; r++) seen = idx[r] == id;
    if (!seen) idx[n++] = id;
  }
  return n;
}

// The labels of one word axis of operand k, as axislabels.h decides them (cells `len` long).
static void plan_labels(const Eq *e, int k, bool cols, float len, float fs, AxisLabels *al) {
  static _Thread_local int cand[AXL_MAX];
  AxisSpec sp = axis_spec(e, k, cols, len, fs);
  if (sp.vocab) sp.cand = cand, sp.n_cand = vocab_cands(e, k, cols, cand);
  axis_labels_plan(&sp, al);
}

// Column labels above the cells, whose top (or the head bands' top) is `top`, as axislabels.h
// decides them: each across its column, or turned, or moved apart with a leader to its column.
static void draw_col_labels(Eq *e, int k, float fs, float top) {
  ViewOperand *v = &e->lay->ops[k];
  const Theme *th = e->o->theme;
  int C = v->op.cols;
  float cw = v->w / C;
  char buf[96], fit[96];
  TraceAxis a = v->op.col_axis;
  float y_base = top - fs * 0.45f; // horizontal labels' baseline
  if (word_cols(a)) {
    const char *what = a == AXIS_TOKEN2  ? "second sentence →"
                       : is_tok(a)       ? (is_tok(v->op.row_axis) ? "keys →" : "tokens →")
                       : a == AXIS_CLASS ? "classes →"
                                         : "vocabulary →";
    static _Thread_local AxisLabels al;
    plan_labels(e, k, true, v->w, fs, &al);
    v->cols_turned = al.turned;
    if (is_tok(a) && C <= AXL_ALL_UP_TO && al.shown < C) e->lay->labels_short++;
    if (is_tok(a) && al.words_missing) e->lay->words_missing++;
    for (int q = 0; q < al.n; q++) {
      int j = al.idx[q];
      const char *full = al.text[q];
      float cx = v->x + al.at[q], cell = v->x + (j + 0.5f) * cw;
      float most = al.turned ? 7 * fs : al.spread ? 12 * fs : cw * 0.95f;
      const char *s = fit_label(full, FONT_SANS, al.lf, most, fit, sizeof fit);
      uint32_t c = is_unknown_token(v->op.trace, a, j + v->op.col0) ? th->unk : th->text;
      if (al.turned && al.numbered) { // a few named, above a leader to their columns
        scene_line(e->s, cell, top - 1, cx, top - fs * 0.85f, 1.2f, th->muted);
        scene_text_turned(e->s, FONT_SANS, al.lf, cx + al.lf * 0.35f, top - fs * 0.95f, c, s);
      } else if (al.turned) {                 // centred on its column, read upwards from just above the cells
        float up = (float)(j % 2) * al.shift; // (two tiers: a thin leader up to the raised one)
        if (up > 0) scene_rect(e->s, cx - 0.5f, top - fs * 0.25f - up + 2, 1, up - 4, th->grid);
        scene_text_turned(e->s, FONT_SANS, al.lf, cx + al.lf * 0.35f, top - fs * 0.25f - up, c, s);
      } else if (is_vocab(a) && al.shown < C) { // a named word of a long vocabulary: a leader to its column
        float ty = y_base - VOCAB_TIER * fs * 0.8f;
        scene_line(e->s, cell, top - 1, cx, ty + al.lf * 0.3f, 1.5f, th->muted);
        scene_text_aligned(e->s, FONT_SANS, al.lf, cx, ty, 0.5f, c, s);
      } else {
        scene_text_aligned(e->s, FONT_SANS, al.lf, cx, y_base, 0.5f, c, s);
      }
      note_label(e, v, al.lf, full, s, a);
    }
    float cap_y = is_vocab(a) ? y_base - fs * (1.2f + VOCAB_TIER) : top - al.depth - fs * 0.3f;
    scene_text_aligned(e->s, FONT_SANS_ITALIC, fs * 0.8f, v->x + v->w / 2, cap_y, 0.5f, th->muted, what);
    return;
  }
  // dimensions: numbers at a readable stride, counted from 1 (1, 16, 32, …: the column of each)
  float lf = fs * 0.75f;
  snprintf(buf, sizeof buf, "%d", C);
  float lw = text_width(FONT_SANS, lf, buf) + lf;
  int step = 1;
  while (step * cw < lw) step = step < 4 ? step * 2 : step < 8 ? 8 : step * 2;
  for (int m = 0; m < C; m += step) {
    int j = m == 0 || step == 1 ? m : m - 1; // column m (1-based), or the first
    snprintf(buf, sizeof buf, "%d", j + 1);
    scene_text_aligned(e->s, FONT_SANS, lf, v->x + (j + 0.5f) * cw, y_base, 0.5f, th->muted, buf);
  }
}

static void draw_row_labels(Eq *e, int k, float fs, float x_right) {
  ViewOperand *v = &e->lay->ops[k];
  const Theme *th = e->o->theme;
  int R = v->op.rows;
  float ch = v->h / R;
  char buf[96], fit[96];
  TraceAxis a = v->op.row_axis;
  if (is_words(a)) {
    static _Thread_local AxisLabels al;
    plan_labels(e, k, false, v->h, fs, &al);
    if (is_tok(a) && R <= AXL_ALL_UP_TO && al.shown < R) e->lay->labels_short++;
    if (is_tok(a) && al.words_missing) e->lay->words_missing++;
    for (int q = 0; q < al.n; q++) {
      int i = al.idx[q];
      const char *full = al.text[q];
      const char *s = fit_label(full, FONT_SANS, al.lf, 12 * fs, fit, sizeof fit);
      float cy = v->y + al.at[q], cell = v->y + (i + 0.5f) * ch;
      if ((is_vocab(a) && al.shown < R) || al.numbered) // a few named: a leader to its row
        scene_line(e->s, x_right + 2, cy, v->x - 2, cell, 1.5f, th->muted);
      float xr = x_right - (float)(i % 2) * al.shift; // two columns of labels when rows are thin
      if (al.shift > 0 && i % 2) scene_rect(e->s, xr + 2, cy - 0.5f, al.shift - 4, 1, th->grid);
      note_label(e, v, al.lf, full, s, a);
      uint32_t c = is_unknown_token(v->op.trace, a, i + v->op.row0) ? th->unk : th->text;
      scene_text_aligned(e->s, FONT_SANS, al.lf, xr, cy + al.lf * 0.35f, 1.0f, c, s);
    }
    return;
  }
  float lf = fs * 0.75f;
  int step = 1;
  while (step * ch < lf * 1.05f) step *= 2;
  for (int m = 0; m < R; m += step) {
    int i = m == 0 || step == 1 ? m : m - 1; // row m counted from 1 (label(): i + 1), or the first
    const char *s =
        fit_label(label(v->op.trace, a, i, buf, sizeof buf), FONT_SANS, lf, 12 * fs, fit, sizeof fit);
    scene_text_aligned(e->s, FONT_SANS, lf, x_right, v->y + (i + 0.5f) * ch + lf * 0.35f, 1.0f, th->muted, s);
  }
}

// Under the shape, when a token axis names only some entries: how many of each are named, for
// operand k with cells w × h ("labelled: 5 of 20 rows, 5 of 20 columns"). A row of heads' grids
// (caption_row) says it once, for every matrix of the row, under its first: "" for the others.
static const char *partial_note(const Eq *e, int k, float w, float h, float fs, char *note, int cap) {
  const ViewOperand *v = &e->lay->ops[k];
  const OpDeco *d = &e->deco[k];
  static _Thread_local AxisLabels al;
  note[0] = 0;
  if (d->caption_row && !d->caption) return note;
  int n = snprintf(note, (size_t)cap, "%s", d->caption_row ? "labelled in each:" : "labelled:"), n0 = n;
  if (d->row_labels && is_tok(v->op.row_axis)) {
    plan_labels(e, k, false, h, fs, &al);
    if (al.numbered) n += snprintf(note + n, (size_t)(cap - n), " %d of %d rows", al.shown, al.total);
  }
  if (has_col_labels(e, k) && is_tok(v->op.col_axis) && n < cap) {
    plan_labels(e, k, true, w, fs, &al);
    if (al.numbered && n < cap)
      snprintf(note + n, (size_t)(cap - n), "%s %d of %d columns", n > n0 ? "," : "", al.shown, al.total);
  }
  return note;
}

// The note's size, and where it starts: centred under the cells, or (a row of grids) from the
// first one's left edge along the row, where no other note is.
static float note_size(float fs) { return fs * 0.7f; }

// (left: the operand's left margin, its row labels: the note may start under them)
static void draw_partial_note(Eq *e, int k, float fs, float y, float left) {
  ViewOperand *v = &e->lay->ops[k];
  char note[160];
  partial_note(e, k, v->w, v->h, fs, note, sizeof note);
  if (!note[0]) return;
  bool along = e->deco[k].caption_row;
  float x = along ? v->x : v->x + v->w / 2;
  if (along) { // short of the colour bars: moved left, as far as the operand's row labels
    float right = e->x + e->w - eq_bar_width(e) - e->bars_w,
          tw = text_width(FONT_SANS_ITALIC, note_size(fs), note);
    if (x + tw > right) x = fmaxf(right - tw, v->x - left);
  }
  scene_text_aligned(e->s, FONT_SANS_ITALIC, note_size(fs), x, y, along ? 0.0f : 0.5f, e->o->theme->muted,
                     note);
}

static void draw_bands(Eq *e, ViewOperand *v, float fs, bool cols) {
  // head blocks of d_k columns (rows): H of them, or H_kv in grouped-query attention's W^k and W^v
  int dk = model_dk(&e->t->cfg), H = (cols ? v->op.cols : v->op.rows) / dk;
  if (H < 1) H = 1;
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
  // a window of the tokens: the sum of the whole row, every column (the line under says so)
  scene_text(e->s, FONT_SANS_BOLD, fs * 0.85f, x, v->y - fs * 0.5f, th->muted,
             v->op.col_win ? "Σ all" : "Σ row");
  if (ch < 8) return;
  char buf[32];
  int kv = (int)(v - e->lay->ops);
  Operand whole = operand_whole(v->op);
  for (int i = 0; i < v->op.rows; i++) {
    if (eq_row_hidden(e, kv, i)) continue;
    double sum = 0;
    for (int j = 0; j < whole.cols; j++) sum += operand_at(&whole, i + v->op.row0, j);
    snprintf(buf, sizeof buf, "%.3f", sum);
    scene_text(e->s, FONT_SANS, lf, x, v->y + (i + 0.5f) * ch + lf * 0.35f, th->text, buf);
  }
}

static void draw_operand(Eq *e, int k, const Units *u) {
  const Theme *th = e->o->theme;
  ViewOperand *v = &e->lay->ops[k];
  const OpDeco *d = &e->deco[k];
  float fs = u->fs;
  Margins m = margins(e, k, u);
  draw_cells(e, v);
  draw_brackets(e, v->x, v->y, v->w, v->h, th->frame);
  float top = v->y;
  if (has_bands(&v->op, true)) {
    draw_bands(e, v, fs, true);
    top -= fs * 0.6f;
  }
  if (has_bands(&v->op, false)) draw_bands(e, v, fs, false);
  if (has_col_labels(e, k)) {
    draw_col_labels(e, k, fs, top);
    top -= col_depth(e, k, v->w, fs);
  }
  if (has_col_labels(e, k) && word_cols(v->op.col_axis)) top -= fs * 0.95f;
  if (is_vocab(v->op.col_axis)) top -= VOCAB_TIER * fs;
  // the symbol, centred above
  uint32_t sc = d->symbol_color ? d->symbol_color : th->text;
  TexMetrics sm = measure_tex(v->symbol, fs * 1.45f);
  tex_draw(e->s, v->symbol, fs * 1.45f, false, v->x + (v->w - sm.width) / 2, top - fs * 0.55f - sm.descent,
           sc);
  // where it went, for the window's hover (view_symbol_hit), and the shape it stands for
  float sx = v->x + (v->w - sm.width) / 2, sb = top - fs * 0.55f - sm.descent;
  v->sym[0] = sx, v->sym[1] = sb - sm.ascent, v->sym[2] = sm.width, v->sym[3] = sm.ascent + sm.descent;
  shape_text(e, v, v->w, v->h, v->shape, sizeof v->shape);
  if (d->caption) {
    char fit[256];
    // centred over the cells when it fits there; else from the row labels to the right margin
    // (the likely words beside a prediction), cut only when even that is too short
    // (never wider than the operand's own box: the next operand's caption starts there)
    float box = m.left + v->w + m.right;
    float cf = fs * 0.9f, cw = fminf(fmaxf(v->w, fs * 12), box), x = v->x + v->w / 2, align = 0.5f;
    if (d->caption_row) { // from its row labels to the right end of the equation, short of its colour bars
      float right = e->lay->clip[2] > 0 ? fminf(e->x + e->w, e->lay->clip[0] + e->lay->clip[2]) : e->x + e->w;
      for (int q = 0; q < e->lay->n_ops; q++) { // up to the next caption of the row (two sentences' grids)
        const ViewOperand *o = &e->lay->ops[q];
        float mid = o->y + o->h / 2;
        if (q != k && e->deco[q].caption && o->x > v->x && mid >= v->y && mid <= v->y + v->h)
          right = fminf(right, o->x - margins(e, q, u).left);
      }
      x = fmaxf(e->x, v->x - m.left + fs * 0.3f), cw = right - x, align = 0.0f;
    } else if (text_width(FONT_SANS_BOLD, cf, d->caption) > cw && box > cw)
      cw = box - fs * 0.6f, x = v->x - m.left + fs * 0.3f, align = 0.0f;
    // smaller before it is cut: "columns: “She puts mone…”" hid the sentence the view is about
    float tw = text_width(FONT_SANS_BOLD, cf, d->caption);
    if (tw > cw) cf = fmaxf(fs * 0.65f, cf * cw / tw);
    const char *c = fit_caption(d->caption, FONT_SANS_BOLD, cf, cw, fit, sizeof fit);
    scene_text_aligned(e->s, FONT_SANS_BOLD, cf, x, top - fs * 0.55f - sm.ascent - fs * 0.95f, align,
                       th->text, c);
  }
  if (d->row_labels) {
    float xr = v->x - fs * 0.6f - (has_bands(&v->op, false) ? fs * 0.6f : 0);
    draw_row_labels(e, k, fs, xr);
    if (is_tok(v->op.row_axis) && is_tok(v->op.col_axis)) {
      // smaller rather than cut where the rows' labels are narrower than it at the picture's edge
      // (the left panel of a comparison read "ueries ↓")
      const char *cap = v->op.col_axis == AXIS_TOKEN2 ? "first sentence ↓" : "queries ↓";
      float qf = fs * 0.8f, qw = text_width(FONT_SANS_ITALIC, qf, cap);
      if (qw > xr - e->x && xr > e->x) qf = fmaxf(fs * 0.5f, qf * (xr - e->x) / qw);
      scene_text_aligned(e->s, FONT_SANS_ITALIC, qf, xr, v->y - fs * 0.5f, 1.0f, th->muted, cap);
    }
  }
  char buf[96];
  bool averaged = shape_text(e, v, v->w, v->h, buf, sizeof buf);
  if (!shape_shared(e, k, v->w, v->h, fs))
    scene_text_aligned(e->s, FONT_SANS, fs * 0.85f, v->x + v->w / 2, v->y + v->h + fs * 1.35f, 0.5f,
                       th->muted, buf);
  if (averaged) { // as draw_cells drew the blocks
    scene_text_aligned(e->s, FONT_SANS_ITALIC, fs * 0.7f, v->x + v->w / 2, v->y + v->h + fs * 2.2f, 0.5f,
                       th->muted, averaged_text(v));
  }
  float below = averaged ? 2.7f : 1.75f;
  if (labels_partial(e, k, v->w, v->h, fs)) {
    draw_partial_note(e, k, fs, v->y + v->h + fs * (below + 0.45f), m.left);
    below += 0.95f;
  }
  if (e->o->scale == SCALE_MATRIX && v->op.index >= 0 && !all_hidden(e, k))
    draw_matrix_colorbar(e, v, fs, v->y + v->h + fs * below);
  if (d->row_sums) draw_row_sums(e, v, fs);
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
  float w = 0.17f * e->fs;
  if (l->result < 0) return;
  for (int k = 0; k < l->n_ops; k++) { // every result (each head of a grid) shows the focus
    const ViewOperand *r = &l->ops[k];
    int fr = e->deco[k].own_focus ? e->deco[k].focus_row : o->focus_row;
    int fc = e->deco[k].own_focus ? e->deco[k].focus_col : o->focus_col;
    const Operand *ro = r->result || e->deco[k].own_focus ? &r->op : &l->ops[l->result].op; // (in its cells)
    fr = shown_at(ro, false, fr), fc = shown_at(ro, true, fc);
    if (!r->result && e->deco[k].own_focus && fr >= 0 && fr < r->op.rows && fc < 0) { // E's row of the word
      frame_cells(e->s, r, fr, fr + 1, 0, r->op.cols, o->theme->accent, w * 0.8f);
      continue;
    }
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
      i -= op->row0, j -= op->col0; // (a window of the tokens)
      if (i >= 0 && j >= 0 && i < op->rows && j < op->cols)
        frame_cells(e->s, &l->ops[k], i, i + 1, j, j + 1, e->o->theme->warn, 2.5f * e->o->text_scale);
    }
  }
}

void view_draw_selection(Scene *s, const ViewLayout *l, const ViewOptions *o) {
  if (o->hover_op < 0 || o->hover_op >= l->n_ops) return;
  const ViewOperand *v = &l->ops[o->hover_op];
  int i = o->hover_i, j = o->hover_j;
  if (i < 0 || j < 0 || i >= v->op.rows || j >= v->op.cols) return;
  float w = 0.17f * l->fs * (o->pinned ? 1.4f : 1.0f);
  bool clip = l->pan_max[0] > 0 || l->pan_max[1] > 0; // a zoomed picture: not over the header
  if (clip) scene_clip(s, l->clip[0], l->clip[1], l->clip[2], l->clip[3]);
  frame_cells(s, v, i, i + 1, j, j + 1, o->theme->highlight, w);
  if (o->hover_op == l->result)
    for (int k = 0; k < l->n_ops; k++)
      if (k != l->result) link_highlight(s, &l->ops[k], i, j, o->theme->highlight, w * 0.8f);
  if (clip) scene_unclip(s);
}

// ---------------------------------------------------------------- colour bars of the view

static void draw_side_colorbars(Eq *e, float x, float y, float h, float fs) {
  const Theme *th = e->o->theme;
  ViewLayout *l = e->lay;
  ColorScale seen[4];
  const char *what[4];
  int n = 0;
  for (int k = 0; k < l->n_ops && n < 4; k++) {
    if (l->ops[k].op.index < 0 || all_hidden(e, k)) continue; // a hidden result's range is no bar's
    ColorScale s = l->ops[k].scale;
    bool dup = false;
    for (int q = 0; q < n; q++) dup |= seen[q].map == s.map && seen[q].lo == s.lo && seen[q].hi == s.hi;
    if (dup) continue;
    const TraceTensor *src = operand_src(&l->ops[k].op);
    what[n] = src->kind == T_ONEHOT           ? "one-hot"
              : is_probability(&l->ops[k].op) ? "probability"
              : scale_group(&l->ops[k].op)    ? "weights"
                                              : "values"; // E shares the values' range (Z = OE)
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

// The units of the whole picture: labels at their smallest and still no room (a long row of wide
// operands in a small window): smaller labels, step by step, rather than cells of no size.
static Units fit_all(Eq *e, float avail_w, float avail_h) {
  Units u;
  for (e->fs_scale = 1.0f;; e->fs_scale *= 0.9f) {
    u = fit_units(e, false, avail_w, avail_h);
    if (u.k < SMIN) u = fit_units(e, true, avail_w, avail_h);
    if (fits(e, &u, avail_w, avail_h) || e->fs_scale < 0.35f) break;
  }
  return u;
}

// Whether some operand names only some entries of a token axis at units u.
static bool some_partial(const Eq *e, const Units *u) {
  for (int k = 0; k < e->lay->n_ops; k++) {
    float w, h;
    cell_box(&e->lay->ops[k], u, &w, &h);
    if (labels_partial(e, k, w, h, u->fs)) return true;
  }
  return false;
}

// Whether some operand's token columns are named on two tiers at units u (crowded: a grid of heads
// may name them once instead, with room).
static bool some_tiered(const Eq *e, const Units *u) {
  static _Thread_local AxisLabels al;
  for (int k = 0; k < e->lay->n_ops; k++) {
    const ViewOperand *v = &e->lay->ops[k];
    if (!has_col_labels(e, k) || !is_tok(v->op.col_axis)) continue;
    float w, h;
    cell_box(v, u, &w, &h);
    AxisSpec sp = axis_spec(e, k, true, w, u->fs);
    axis_labels_plan(&sp, &al);
    if (al.shift > 0) return true;
  }
  return false;
}

// The units with one layout choice switched on (*choice), kept when they give larger token cells;
// else the choice off again and u as it was.
static Units try_choice(Eq *e, Units u, bool *choice, float avail_w, float avail_h) {
  float scale = e->fs_scale;
  *choice = true;
  Units t = fit_all(e, avail_w, avail_h);
  if ((t.tok_comp ? t.k : t.t) > (u.tok_comp ? u.k : u.t) * 1.001f) return t;
  *choice = false, e->fs_scale = scale;
  return u;
}

void eq_layout_and_draw(Eq *e) {
  const ViewOptions *o = e->o;
  ViewLayout *l = e->lay;
  float ts = o->text_scale, z = view_zoom(o);
  // the colour bars stay at the area's right edge while the picture pans: the fitted
  // picture's smallest label size, zoomed up to 1.5 times
  float bfs = FS_MIN * ts * fminf(z, 1.5f);
  bool side_bar = o->scale != SCALE_MATRIX;
  float bar_w = eq_bar_width(e);
  // the picture is fitted as at 100 % (its colour bar's width too), then zoomed: every length of
  // it grows with the zoom, a small result's grown cells as well
  float fit_bar_w = side_bar ? FS_MIN * ts * 5.5f : 0;
  float avail_w = e->w - fit_bar_w - e->bars_w - FS_MIN * ts, avail_h = e->h - FS_MIN * ts;
  e->smax = fmaxf(SMAX * ts, fminf(avail_w, avail_h) / 5);
  compute_scales(e);
  Units u = fit_all(e, avail_w, avail_h);
  bool grid = false;
  for (int k = 0; k < l->n_ops; k++) grid |= e->deco[k].grid_lower;
  // a grid of heads naming only some of its tokens, or on two tiers: its columns named once, above
  // the top row, when that gives larger cells
  if (grid && (some_partial(e, &u) || some_tiered(e, &u)))
    u = try_choice(e, u, &e->share_cols, avail_w, avail_h);
  // two tiers of column labels take height: when some axis still names only a few, one tier may
  // give it larger cells for as many names
  if (some_partial(e, &u)) u = try_choice(e, u, &e->one_tier, avail_w, avail_h);
  u = grow_tokens(e, u, avail_w, avail_h);
  e->cell = u.tok_comp ? u.k : u.t; // (a window of the tokens being sized: its cells at zoom 1)
  if (e->measure) return;           // (nothing drawn)
  u = grow_result(e, u, avail_w, avail_h);
  for (int pass = 0; pass < 3; pass++) { // nothing fits even tight: the whole picture smaller
    float w, h;
    extent(e, &u, &w, &h);
    float f = fminf(avail_w / fmaxf(w, 1), avail_h / fmaxf(h, 1));
    if (f >= 1) break;
    u.k *= f * 0.98f, u.t *= f * 0.98f, u.fs *= f * 0.98f;
  }
  u.k *= z, u.t *= z, u.fs *= z; // zoom: every length of the fitted picture
  e->fs = l->fs = u.fs;
  float fs = u.fs;
  // rows' extents; the picture is centred in its area, or panned when larger
  float heights[VIEW_MAX_ROWS], aboves[VIEW_MAX_ROWS], widths[VIEW_MAX_ROWS], total = 0, widest = 0;
  for (int r = 0; r < e->n_rows; r++) {
    float b;
    row_extent(e, r, &u, &widths[r], &aboves[r], &b);
    heights[r] = aboves[r] + b;
    total += heights[r] + (r ? fs * 1.2f : 0);
    widest = fmaxf(widest, widths[r]);
  }
  float view_w = e->w - bar_w - e->bars_w - FS_MIN * ts; // (the zoomed colour bar's room given)
  float pmx = fmaxf(0, widest - view_w), pmy = fmaxf(0, total - avail_h);
  float px = fminf(pmx, fmaxf(0, o->pan_x)), py = fminf(pmy, fmaxf(0, o->pan_y));
  l->pan_max[0] = pmx, l->pan_max[1] = pmy, l->pan[0] = px, l->pan[1] = py;
  float cx = e->x, cy = e->y, cw = e->w - bar_w - e->bars_w, ch = e->h;
  l->clip[0] = cx, l->clip[1] = cy, l->clip[2] = cw, l->clip[3] = ch;
  bool clip = pmx > 0 || pmy > 0;
  if (clip) scene_clip(e->s, cx, cy, cw, ch);
  float x0 = pmx > 0 ? e->x - px : e->x + (view_w - widest) / 2;
  float y = pmy > 0 ? e->y - py : e->y + (avail_h - total) / 2;
  l->pic[0] = x0, l->pic[1] = y, l->pic[2] = widest, l->pic[3] = total;
  for (int r = 0; r < e->n_rows; r++) {
    const EqRow *row = &e->rows[r];
    float xs[VIEW_MAX_ITEMS], axis = y + aboves[r], x = x0 + (widest - widths[r]) / 2;
    row_place(e, r, &u, xs);
    for (int i = 0; i < row->n; i++) { // every operand's place first: a caption stops at the next one's
      if (row->items[i].kind != IT_OP) continue;
      ViewOperand *v = &e->lay->ops[row->items[i].op];
      cell_box(v, &u, &v->w, &v->h);
      v->x = x + xs[i] + margins(e, row->items[i].op, &u).left, v->y = axis - v->h / 2;
    }
    for (int i = 0; i < row->n; i++) {
      const Item *it = &row->items[i];
      float ix = x + xs[i];
      if (it->kind == IT_TEX) {
        TexMetrics m = measure_tex(it->tex, fs * 1.6f);
        // centre the operator's box on the axis of the matrices
        tex_draw(e->s, it->tex, fs * 1.6f, false, ix, axis + (m.ascent - m.descent) / 2, o->theme->text);
        continue;
      }
      if (it->kind == IT_DELIM) {
        float h = delim_tallest(e, r, i, &u) + fs * 0.8f;
        draw_delim(e->s, it->delim, ix, axis - h / 2, h, fs, o->theme->text);
        continue;
      }
      ViewOperand *v = &e->lay->ops[it->op];
      Margins m = margins(e, it->op, &u);
      cell_box(v, &u, &v->w, &v->h);
      v->x = ix + m.left;
      v->y = axis - v->h / 2;
      draw_operand(e, it->op, &u);
    }
    y += heights[r] + fs * 1.2f;
  }
  draw_focus(e);
  draw_edits(e);
  if (clip) scene_unclip(e->s);
  view_draw_selection(e->s, e->lay, e->o);
  eq_window_note(e);
  if (side_bar)
    draw_side_colorbars(e, e->x + e->w - bar_w + bfs * 0.5f, e->y,
                        e->bars_h > 0 ? e->bars_h - FS_MIN * ts : avail_h, bfs);
}

float eq_bar_width(const Eq *e) {
  return e->o->scale != SCALE_MATRIX ? FS_MIN * e->o->text_scale * fminf(view_zoom(e->o), 1.5f) * 5.5f : 0;
}
