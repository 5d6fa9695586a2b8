// view_stages.c -- what each stage of DESIGN.md's table shows, as rows of operands and
// operators for the equation engine (view_layout.c), and the views' public functions.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "axislabels.h"     // defines: AXL_ALL_UP_TO
#include "bars.h"           // defines: bars_draw
#include "sampling_chart.h" // defines: sampling_chart_draw
#include "tex.h"            // defines: tex_draw
#include "view_internal.h"

ViewOptions view_options_default(const Theme *theme) {
  return (ViewOptions){.theme = theme,
                       .cmap = CMAP_AUTO,
                       .scale = SCALE_STAGE,
                       .head = 0,
                       .part = 0,
                       .numbers = true,
                       .text_scale = 1.0f,
                       .zoom = 1.0f,
                       .focus_row = -1,
                       .focus_col = -1,
                       .hover_op = -1,
                       .hover_i = -1,
                       .hover_j = -1,
                       .global_lo = -1,
                       .global_hi = 1,
                       .tok_first = -1};
}

const char *view_scale_name(ScaleMode m) {
  switch (m) {
  case SCALE_MATRIX: return "per matrix";
  case SCALE_STAGE: return "per stage";
  case SCALE_GLOBAL: return "global";
  default: return "?";
  }
}

void view_global_range(const Trace *t, float *lo, float *hi) {
  float a = INFINITY, b = -INFINITY;
  for (int k = 0; k < t->n; k++) {
    const TraceTensor *x = &t->t[k];
    if (x->is_weight || x->kind == T_ONEHOT || x->kind == T_ATTN || x->kind == T_PRED) continue;
    long n = (long)x->heads * x->rows * x->cols;
    for (long i = 0; i < n; i++) { // comparisons, not fminf/fmaxf: those are library calls
      float v = x->data[i];
      if (v < a && v != -INFINITY) a = v;
      if (v > b && v != INFINITY) b = v;
    }
  }
  if (a > b) a = -1, b = 1;
  *lo = a, *hi = b;
}

// ---------------------------------------------------------------- helpers for compositions
// (view_internal.h: view_decoder.c and view_classes.c compose with them too)

int eq_tensor(Eq *e, int index, int head, bool transpose, const char *symbol, LinkKind link) {
  return eq_op(e, operand_tensor(e->t, index, head, transpose), symbol, link);
}

const char *eq_head_symbol(Eq *e, const char *base, int h) {
  return scene_strf(e->s, "%s_{%d}", base, h + 1);
}

void eq_head_color(Eq *e, int k, int h) { e->deco[k].symbol_color = theme_head(e->o->theme, h); }

void eq_result(Eq *e, int k) {
  e->lay->result = k;
  e->lay->ops[k].result = true;
  e->lay->ops[k].link = LINK_NONE;
}

// Operands are made in named steps: C does not fix the order in which a call's arguments are
// evaluated, and the order of the operands is the layout's.
void eq_linear(Eq *e, int row, const char *fn, int x, const char *xs, int W, const char *ws, int b,
               const char *bs, int y, const char *ys) {
  int kx = eq_tensor(e, x, 0, false, xs, LINK_ROW);
  int kw = eq_tensor(e, W, 0, false, ws, LINK_COL);
  int kb = b >= 0 ? eq_tensor(e, b, 0, false, bs, LINK_COL) : -1;
  int ky = eq_tensor(e, y, -1, false, ys, LINK_NONE);
  e->deco[kx].row_labels = true;
  if (fn) {
    eq_tex(e, row, fn);
    eq_delim(e, row, '(');
  }
  eq_put(e, row, kx);
  eq_tex(e, row, "\\times");
  eq_put(e, row, kw);
  if (kb >= 0) { // no bias (b < 0): [x] × [W] = [y]
    eq_tex(e, row, "+");
    eq_put(e, row, kb);
  }
  if (fn) eq_delim(e, row, ')');
  eq_tex(e, row, "=");
  eq_put(e, row, ky);
  if (row == 0 || e->lay->result < 0) eq_result(e, ky);
}

void eq_apply(Eq *e, int row, const char *fn, int ka, int kr) {
  e->deco[ka].row_labels = e->deco[kr].row_labels = true;
  eq_tex(e, row, fn);
  eq_delim(e, row, '(');
  eq_put(e, row, ka);
  eq_delim(e, row, ')');
  eq_tex(e, row, "=");
  eq_put(e, row, kr);
  eq_result(e, kr);
}

void eq_product(Eq *e, int ka, int kb, int kr) {
  e->deco[ka].row_labels = e->deco[kb].row_labels = true;
  eq_put(e, 0, ka);
  eq_tex(e, 0, "\\times");
  eq_put(e, 0, kb);
  eq_tex(e, 0, "=");
  eq_put(e, 0, kr);
  eq_result(e, kr);
}

void eq_single(Eq *e, int index, const char *sym) {
  int k = eq_tensor(e, index, 0, false, sym, LINK_NONE);
  e->deco[k].row_labels = true;
  eq_put(e, 0, k);
  eq_result(e, k);
}

void eq_add_norm(Eq *e, int a, const char *as, int b, const char *bs, int out, const char *os,
                 const char *norm) {
  int ka = eq_tensor(e, a, 0, false, as, norm ? LINK_ROW : LINK_CELL);
  e->deco[ka].row_labels = true;
  int kb = eq_tensor(e, b, 0, false, bs, norm ? LINK_ROW : LINK_CELL);
  int ko = eq_tensor(e, out, 0, false, os, LINK_NONE);
  if (norm) {
    eq_tex(e, 0, norm);
    eq_delim(e, 0, '(');
  }
  eq_put(e, 0, ka);
  eq_tex(e, 0, "+");
  eq_put(e, 0, kb);
  if (norm) eq_delim(e, 0, ')');
  eq_tex(e, 0, "=");
  eq_put(e, 0, ko);
  eq_result(e, ko);
}

void eq_all_heads(Eq *e, int index, const char *base) {
  int H = e->t->cfg.H, per_row = H <= 3 ? H : H <= 4 ? 2 : 4;
  for (int h = 0; h < H; h++) {
    int r = h / per_row;
    if (r >= VIEW_MAX_ROWS) break;
    int k = eq_tensor(e, index, h, false, eq_head_symbol(e, base, h), LINK_NONE);
    e->deco[k].row_labels = h % per_row == 0;
    e->deco[k].grid_lower = r > 0;
    eq_head_color(e, k, h);
    if (h == 0) eq_result(e, k);
    e->lay->ops[k].result = true; // each panel is the result of its head
    eq_put(e, r, k);
  }
}

// ---------------------------------------------------------------- attention (encoder and decoder)

// Head h's symbol of one of a block's names: "Q_{1}", or braced "{Q^c}_{1}"; `after` follows it
// ("^\\top").
static const char *attn_symbol(Eq *e, const EqAttn *b, const char *base, int h, const char *after) {
  return scene_strf(e->s, b->braced ? "{%s}_{%d}%s" : "%s_{%d}%s", base, h + 1, after);
}

void eq_attn_scores(Eq *e, const EqAttn *b, int h) {
  if (h < 0) return eq_all_heads(e, b->S_raw, b->s);
  int kq = eq_tensor(e, b->Q, h, false, attn_symbol(e, b, b->q, h, ""), LINK_ROW);
  int kk = eq_tensor(e, b->K, h, true, attn_symbol(e, b, b->k, h, "^\\top"), LINK_COL);
  int ks = eq_tensor(e, b->S_raw, h, false, attn_symbol(e, b, b->s, h, ""), LINK_NONE);
  e->deco[kq].row_labels = e->deco[ks].row_labels = true;
  eq_head_color(e, kq, h), eq_head_color(e, kk, h), eq_head_color(e, ks, h);
  eq_put(e, 0, kq);
  eq_tex(e, 0, "\\times");
  eq_put(e, 0, kk);
  eq_tex(e, 0,
         scene_strf(e->s, "\\cdot \\frac{1}{\\sqrt{%d}} =", e->t->cfg.D / e->t->cfg.H)); // 1/√d_k, d_k = D/H
  eq_put(e, 0, ks);
  eq_result(e, ks);
}

void eq_attn_softmax(Eq *e, const EqAttn *b, int h) {
  if (h < 0) return eq_all_heads(e, b->A, b->a);
  int ks = eq_tensor(e, b->S, h, false, attn_symbol(e, b, b->s, h, ""), LINK_ROW);
  int ka = eq_tensor(e, b->A, h, false, attn_symbol(e, b, b->a, h, ""), LINK_NONE);
  e->deco[ka].row_sums = true;
  eq_head_color(e, ks, h), eq_head_color(e, ka, h);
  eq_apply(e, 0, "\\operatorname{softmax}", ks, ka);
}

void eq_attn_av(Eq *e, const EqAttn *b, int h) {
  if (h < 0) return eq_all_heads(e, b->AV, b->head);
  int ka = eq_tensor(e, b->A, h, false, attn_symbol(e, b, b->a, h, ""), LINK_ROW);
  int kv = eq_tensor(e, b->V, h, false, attn_symbol(e, b, b->v, h, ""), LINK_COL);
  int kr = eq_tensor(e, b->AV, h, false, attn_symbol(e, b, b->head, h, ""), LINK_NONE);
  eq_head_color(e, ka, h), eq_head_color(e, kv, h), eq_head_color(e, kr, h);
  eq_product(e, ka, kv, kr);
}

void eq_attn_concat(Eq *e, const EqAttn *b) {
  int H = e->t->cfg.H, dk = e->t->cfg.D / H;
  eq_delim(e, 0, '[');
  for (int h = 0; h < H && h < 16; h++) {
    int k = eq_tensor(e, b->AV, h, false, attn_symbol(e, b, b->head, h, ""), LINK_COLBLOCK);
    e->lay->ops[k].link_offset = h * dk;
    e->deco[k].row_labels = h == 0;
    eq_head_color(e, k, h);
    eq_put(e, 0, k);
  }
  eq_delim(e, 0, ']');
  eq_tex(e, 0, "=");
  int kc = eq_tensor(e, b->concat, 0, false, "\\mathrm{Concat}", LINK_NONE);
  eq_put(e, 0, kc);
  eq_result(e, kc);
}

void eq_attn_outproj(Eq *e, const EqAttn *b) {
  eq_linear(e, 0, NULL, b->concat, "\\mathrm{Concat}", b->Wo, b->w_o, b->bo, b->b_o, b->attn, b->out);
}

// ---------------------------------------------------------------- stages

static void stage_tokens(Eq *e) {
  const Trace *t = e->t;
  float fs = view_text_size(e->o) * 1.3f, y = e->y + e->h * 0.35f;
  eq_tokens_note(e, view_tokens_caption(t->model), y - fs * 2.2f);
  eq_token_row(e, &t->tokens, &t->model->vocab, "x", 1, y, "vocabulary: V");
}

bool view_qkv_all(const Trace *t, int part) { return part == 0 && t->L <= 12 && t->cfg.D <= 32; }

static void stage_qkv(Eq *e, int l) {
  const TraceLayer *y = &e->t->layers[l];
  int x = e->t->cfg.norm_first ? y->norm1 : y->in;
  const char *xs = e->t->t[x].symbol;
  int part = e->o->part;
  bool all = view_qkv_all(e->t, part);
  if (all || part <= 1) eq_linear(e, 0, NULL, x, xs, y->Wq, "W^q", y->bq, "b^q", y->Q, "Q");
  if (all || part == 2) eq_linear(e, all ? 1 : 0, NULL, x, xs, y->Wk, "W^k", y->bk, "b^k", y->K, "K");
  if (all || part == 3) eq_linear(e, all ? 2 : 0, NULL, x, xs, y->Wv, "W^v", y->bv, "b^v", y->V, "V");
}

// An encoder layer's attention: S_raw is the scores before the mask (S without one).
static EqAttn layer_attn(const Trace *t, const TraceLayer *y) {
  EqAttn b = EQ_SELF_ATTN(y, "\\mathrm{MultiHead}(Z)");
  if (!t->cfg.causal) b.S_raw = y->S;
  return b;
}

static void stage_mask(Eq *e, int l, int h) {
  const TraceLayer *y = &e->t->layers[l];
  if (h < 0) return eq_all_heads(e, y->S, "S");
  int ks = eq_tensor(e, y->S_raw, h, false, eq_head_symbol(e, "S", h), LINK_CELL);
  e->deco[ks].row_labels = true;
  int km = eq_op(e, operand_mask(e->t), "M", LINK_CELL);
  int kr = eq_tensor(e, y->S, h, false, scene_strf(e->s, "S_{%d} + M", h + 1), LINK_NONE);
  e->deco[kr].row_labels = true;
  eq_put(e, 0, ks);
  eq_tex(e, 0, "+");
  eq_put(e, 0, km);
  eq_tex(e, 0, "=");
  eq_put(e, 0, kr);
  eq_result(e, kr);
}

static void stage_prenorm(Eq *e, int l) {
  const TraceLayer *y = &e->t->layers[l];
  int kz = eq_tensor(e, y->in, 0, false, "Z", LINK_ROW);
  int kn = eq_tensor(e, y->norm1, 0, false, "\\mathrm{LN}_1(Z)", LINK_NONE);
  eq_apply(e, 0, "\\mathrm{LayerNorm}_1", kz, kn);
}

static void stage_ffn(Eq *e, int l, bool hidden) {
  const TraceLayer *y = &e->t->layers[l];
  const char *act = e->t->cfg.activation != ACT_RELU ? "\\mathrm{GELU}" : "\\mathrm{ReLU}";
  if (hidden)
    eq_linear(e, 0, act, e->t->cfg.norm_first ? y->norm2 : y->norm1, "x", y->W1, "W_1", y->b1, "b_1",
              y->ffn_hidden, "h");
  else
    eq_linear(e, 0, NULL, y->ffn_hidden, "h", y->W2, "W_2", y->b2, "b_2", y->ffn, "\\mathrm{FFN}(x)");
}

#define PRED_TOP 8      // words in the prediction's chart
#define PRED_CHART 0.5f // the chart's share of the view's height

// The row whose next word the chart shows: the lesson's focus, else the last token.
static int pred_row(int focus, int rows) { return focus >= 0 && focus < rows ? focus : rows - 1; }

// The PRED_TOP most likely next words after token `row` of t, as bars in x, y, w, h under a
// caption ("the next word after “bank”"); notes the words' size and the chart's place in the layout.
static void pred_chart(Eq *e, const Trace *t, int row, float x, float y, float w, float h, bool hidden) {
  pred_chart_of(e, t, t->pred, row, x, y, w, h, hidden);
}

// Two models' predictions of the same sentence (--compare-model): the words a (left) finds most
// likely after token `row`, each with its probability in a, in b and the difference a − b in
// percentage points, as rows of text in x, y, w, h.
static void pred_difference(Eq *e, const Trace *a, const Trace *b, int row, float x, float y, float w,
                            float h) {
  const Theme *th = e->o->theme;
  float ts = e->o->text_scale;
  Operand pa = operand_tensor(a, a->pred, 0, false), pb = operand_tensor(b, b->pred, 0, false);
  int idx[PRED_TOP], n = view_top_words(&pa, row, PRED_TOP, idx);
  float cf = fminf(h * 0.075f, 34 * ts), pad = w * 0.04f;
  const char *caption = "left → right, difference (points)";
  float cw = text_width(FONT_SANS_BOLD, cf, caption); // within the column: the colour bar is beside it
  scene_text(e->s, FONT_SANS_BOLD, cw > w - 2 * pad ? cf * (w - 2 * pad) / cw : cf, x + pad, y + cf, th->text,
             caption);
  float rh = (h - cf * 1.6f) / PRED_TOP, fs = fminf(rh * 0.6f, 40 * ts);
  char name[96];
  for (int i = 0; i < n; i++) {
    float p = operand_at(&pa, row, idx[i]), q = idx[i] < pb.cols ? operand_at(&pb, row, idx[i]) : 0;
    float ry = y + cf * 1.6f + (i + 0.5f) * rh + fs * 0.35f, d = (p - q) * 100;
    const char *word = trace_axis_label(a, pa.col_axis, idx[i], name, sizeof name);
    float nw = w * 0.3f, tw = text_width(FONT_SANS, fs, word);
    scene_text_aligned(e->s, FONT_SANS, tw > nw ? fs * nw / tw : fs, x + pad + nw, ry, 1.0f, th->text, word);
    const char *nums = scene_strf(e->s, "%.1f → %.1f %%", p * 100, q * 100);
    float mw = w - 2 * pad - nw - fs * 4.6f, mt = text_width(FONT_MONO, fs, nums);
    scene_text(e->s, FONT_MONO, mt > mw ? fs * mw / mt : fs, x + pad + nw + fs * 0.5f, ry, th->muted, nums);
    // a difference under 0.05 points in one significant digit ("-0.004"), never as "-0.0"
    const char *ds = fabsf(d) >= 0.05f ? scene_strf(e->s, "%+.1f", d)
                     : d != 0          ? scene_strf(e->s, "%+.1g", d)
                                       : "0";
    scene_text_aligned(e->s, FONT_MONO, fs, x + w - pad, ry, 1.0f, fabsf(d) < 0.05f ? th->muted : th->accent,
                       ds);
  }
}

// Whether a prediction's row is hidden by a reveal= step: the whole result, or the focus row.
static bool pred_hidden(const ViewOptions *o, int row, int focus) {
  return o->hide == 1 || (o->hide == 2 && row == focus);
}

void pred_chart_of(Eq *e, const Trace *t, int index, int row, float x, float y, float w, float h,
                   bool hidden) {
  const Theme *th = e->o->theme;
  float ts = e->o->text_scale;
  Operand op = operand_tensor(t, index, 0, false);
  int most = e->chart_bars > 0 && e->chart_bars < PRED_TOP ? e->chart_bars : PRED_TOP;
  int idx[PRED_TOP], n = hidden ? 0 : view_top_words(&op, row, most, idx);
  char names[PRED_TOP][96], tok[96];
  Bar bars[PRED_TOP];
  for (int i = 0; i < n; i++) {
    const char *s = trace_axis_label(t, op.col_axis, idx[i], names[i], sizeof names[i]);
    if (s != names[i]) snprintf(names[i], sizeof names[i], "%s", s);
    bars[i] = (Bar){names[i], operand_at(&op, row, idx[i]), i == 0};
  }
  float cf = fminf(h * 0.075f, 34 * ts), pad = w * 0.04f;
  const char *word = trace_axis_label(t, op.row_axis, row, tok, sizeof tok);
  bool sampled = !hidden && e->o->sampling && e->o->sampling->on && row == op.rows - 1 && t->logits >= 0;
  const char *cap = hidden    ? scene_strf(e->s, "the next word after “%s”: your guess?", word)
                    : sampled ? scene_strf(e->s, "the next word after “%s”: drawn, not the argmax", word)
                              : scene_strf(e->s, "the next word after “%s”: the %d most likely", word, n);
  if (text_width(FONT_SANS_BOLD, cf, cap) > w - 2 * pad) cap = scene_strf(e->s, "after “%s”", word);
  float tw = text_width(FONT_SANS_BOLD, cf, cap); // a long word: smaller, never over the next chart
  scene_text(e->s, FONT_SANS_BOLD, tw > w - 2 * pad ? cf * (w - 2 * pad) / tw : cf, x + pad, y + cf, th->text,
             cap);
  float fs;
  if (hidden) { // no bar, no word, no number: a "?" where the chart will be after the click
    float bx = x + pad, by = y + cf * 1.6f, bw = w - 2 * pad, bh = h - cf * 1.6f - cf * 0.4f;
    scene_rect(e->s, bx, by, bw, bh, th->panel);
    scene_frame(e->s, bx, by, bw, bh, fmaxf(1, ts), th->frame);
    fs = fminf(bh * 0.5f, 96 * ts);
    scene_text_aligned(e->s, FONT_SANS_BOLD, fs, bx + bw / 2, by + bh / 2 + fs * 0.2f, 0.5f, th->muted, "?");
    scene_text_aligned(e->s, FONT_SANS, cf * 0.8f, bx + bw / 2, by + bh / 2 + fs * 0.2f + cf * 1.4f, 0.5f,
                       th->muted, "guess first: → reveals it");
  } else if (sampled) { // temperature, top-k, top-p and the seeded draw (sampling_chart.h)
    fs = sampling_chart_draw(e->s, th, t, row, e->o->sampling, e->o->sampling_rng, x + pad, y + cf * 1.6f,
                             w - 2 * pad, h - cf * 1.6f, 40 * ts);
  } else {
    fs = bars_draw(e->s, th, bars, n, x + pad, y + cf * 1.6f, w - 2 * pad, h - cf * 1.6f, 40 * ts);
  }
  ViewLayout *l = e->lay;
  l->chart_px = l->chart_px > 0 ? fminf(l->chart_px, fs) : fs;
  if (l->chart[2] <= 0) {
    l->chart[0] = x + pad, l->chart[1] = y, l->chart[2] = w - 2 * pad, l->chart[3] = h;
  } else { // a second chart (the compare view): the union
    float x1 = fmaxf(l->chart[0] + l->chart[2], x + w - pad);
    l->chart[0] = fminf(l->chart[0], x + pad), l->chart[2] = x1 - l->chart[0];
  }
}

void eq_pred_chart(Eq *e, int kp) {
  const Operand *p = &e->lay->ops[kp].op;
  int row = pred_row(e->o->focus_row, operand_whole(*p).rows); // (the last token, not the window's)
  bool hidden = pred_hidden(e->o, row, e->o->focus_row);
  // the vocabulary axis names the row's likeliest words: not those of a hidden row
  e->deco[kp].mark_top = !hidden, e->deco[kp].top_row = row;
  float share = e->chart_share > 0 ? e->chart_share : PRED_CHART, ch = e->h * share;
  if (share < PRED_CHART) e->chart_bars = (int)(PRED_TOP * share / PRED_CHART + 0.01f); // rows kept
  pred_chart_of(e, p->trace, p->index, row, e->x, e->y + e->h - ch, e->w - eq_bar_width(e), ch, hidden);
  e->bars_h = e->h, e->h -= ch;
}

static void stage_predict(Eq *e) {
  const Trace *t = e->t;
  int x = t->head_norm >= 0    ? t->head_norm
          : t->final_norm >= 0 ? t->final_norm
                               : t->layers[t->cfg.n_layers - 1].out;
  int kx = eq_tensor(e, x, 0, false, x != t->layers[t->cfg.n_layers - 1].out ? "y" : "Z'", LINK_ROW);
  e->deco[kx].row_labels = true;
  int kw = eq_tensor(e, t->Wout, 0, false, t->model->tie_head ? "E^\\top" : "W_{\\mathrm{out}}", LINK_COL);
  int kp = eq_tensor(e, t->pred, 0, false, "\\hat{p}", LINK_NONE);
  eq_pred_chart(e, kp);
  eq_tex(e, 0, "\\operatorname{softmax}");
  eq_delim(e, 0, '(');
  eq_put(e, 0, kx);
  eq_tex(e, 0, "\\times");
  eq_put(e, 0, kw);
  if (t->bout >= 0) eq_tex(e, 0, "+ b_{\\mathrm{out}}");
  bool temp = t->cfg.causal && t->T == 0; // the next token's distribution at a temperature T
  if (temp) eq_tex(e, 0, "/\\, T");
  eq_delim(e, 0, ')');
  eq_tex(e, 0, "=");
  eq_put(e, 0, kp);
  if (temp) { // eq_tex keeps the pointer until the equation is drawn: a literal for the window's
    // temperatures (two equations of one page may differ), else a buffer of this thread's
    static const float TS[] = {0.1f, 0.2f, 0.3f, 0.5f, 0.7f, 1.0f, 1.5f, 2.0f, 3.0f, 5.0f};
    static const char *const TEX[] = {
        ",\\quad T = 0.1", ",\\quad T = 0.2", ",\\quad T = 0.3", ",\\quad T = 0.5", ",\\quad T = 0.7",
        ",\\quad T = 1",   ",\\quad T = 1.5", ",\\quad T = 2",   ",\\quad T = 3",   ",\\quad T = 5"};
    static _Thread_local char tex[48];
    float T = t->temperature > 0 ? t->temperature : 1.0f;
    const char *shown = NULL;
    for (int k = 0; k < 10 && !shown; k++)
      if (T == TS[k]) shown = TEX[k];
    if (!shown) snprintf(tex, sizeof tex, ",\\quad T = %g", T), shown = tex;
    eq_tex(e, 0, shown);
  }
  eq_result(e, kp);
}

static void compose(Eq *e, const TraceStep *st) {
  const Trace *t = e->t;
  int l = st->layer, h = e->o->head;
  if (h >= t->cfg.H) h = t->cfg.H - 1;
  const TraceLayer *y = l >= 0 && l < t->cfg.n_layers ? &t->layers[l] : NULL;
  EqAttn a = y ? layer_attn(t, y) : (EqAttn){0};
  if (view_stage_ext(e, st)) return;    // the canonical extensions' stages: view_classes.c
  if (view_stage_modern(e, st)) return; // today's decoders: view_modern.c
  switch (st->kind) {
  case STEP_TOKENS: stage_tokens(e); break;
  case STEP_ONEHOT: eq_single(e, t->O, "O"); break;
  case STEP_EMBED: {
    int ko = eq_tensor(e, t->O, 0, false, "O", LINK_ROW), ke = eq_tensor(e, t->E, 0, false, "E", LINK_COL);
    int kz = eq_tensor(e, t->X, 0, false, "Z", LINK_NONE);
    int fr = e->o->focus_row; // the focus word's row of E, framed as its row of Z is
    if (fr >= 0 && fr < t->L && !e->o->hide)
      e->deco[ke].own_focus = true, e->deco[ke].focus_row = t->tokens.ids[fr], e->deco[ke].focus_col = -1;
    eq_product(e, ko, ke, kz);
    break;
  }
  case STEP_POSENC: eq_single(e, t->P, "P"); break;
  case STEP_ADDPOS: eq_add_norm(e, t->X, "OE", t->P, "P", t->Z, "Z", NULL); break; // Z ← OE + P
  case STEP_PRENORM: stage_prenorm(e, l); break;
  case STEP_QKV: stage_qkv(e, l); break;
  case STEP_SCORES: eq_attn_scores(e, &a, h); break;
  case STEP_MASK: stage_mask(e, l, h); break;
  case STEP_SOFTMAX: eq_attn_softmax(e, &a, h); break;
  case STEP_AV: eq_attn_av(e, &a, h); break;
  case STEP_CONCAT: eq_attn_concat(e, &a); break;
  case STEP_OUTPROJ: eq_attn_outproj(e, &a); break;
  case STEP_ADDNORM1:
    if (t->cfg.norm_first)
      eq_add_norm(e, y->in, "Z", y->attn, "\\mathrm{MultiHead}", y->norm2, "x", "\\mathrm{LN}_2");
    else
      eq_add_norm(e, y->in, "Z", y->attn, "\\mathrm{MultiHead}(Z)", y->norm1, "x", "\\mathrm{LayerNorm}");
    break;
  case STEP_FFN_HIDDEN: stage_ffn(e, l, true); break;
  case STEP_FFN_OUT: stage_ffn(e, l, false); break;
  case STEP_ADDNORM2:
    if (t->cfg.norm_first)
      eq_add_norm(e, y->res1, "Z + \\mathrm{MultiHead}", y->ffn, "\\mathrm{FFN}(x)", y->out, "Z'", NULL);
    else
      eq_add_norm(e, y->norm1, "x", y->ffn, "\\mathrm{FFN}(x)", y->out, "Z'", "\\mathrm{LayerNorm}");
    break;
  case STEP_PREDICT: stage_predict(e); break;
  default: view_decoder_compose(e, st); break; // an encoder-decoder's stages (view_decoder.c)
  }
}

// A long sentence's window of tokens for this picture: AXL_ALL_UP_TO tokens, fewer when their
// labels would be smaller than eq_window_label (14 px at 720 lines: read at half size), down to 8:
// the most tokens whose labels are large enough, found by halves, drawing the picture into a
// scratch scene (nothing drawn that is kept) and reading the sizes its token labels got. At
// 1280×720 beside a lesson's narration, 40 tokens drew 3 px cells in softmax(S) = A.
// A sentence of 25 to VIEW_TOKENS_READABLE tokens gets a window too when the whole picture would
// leave one of its distinct words unnamed (ViewLayout.words_missing).
typedef struct Compare Compare;
static void compose_compare(Eq *e, int step, const Compare *c);
static int window_size(Scene *s, const Trace *t, int step, const ViewOptions *o, float x, float y, float w,
                       float h, const Compare *cmp) {
  int first, n;
  view_token_window(t, o, &first, &n);
  if (o->tok_count > 0 || t->steps[step].kind == STEP_TOKENS || (!n && t->L <= AXL_ALL_UP_TO)) return n;
  static _Thread_local ViewLayout lay;
  Scene scratch;
  scene_init(&scratch, s->width, s->height, 0);
  if (!n) { // up to VIEW_TOKENS_READABLE tokens: whole when that names every distinct word, else a
            // window (issue 31: 39 tokens beside a lesson's narration named 9 words of 27)
    Eq e;
    memset(&e, 0, sizeof e);
    e.s = &scratch, e.t = t, e.o = o, e.lay = &lay;
    e.x = x, e.y = y, e.w = w, e.h = h;
    lay_begin(&lay, o, x, y, w, h);
    if (cmp)
      compose_compare(&e, step, cmp);
    else
      compose(&e, &t->steps[step]);
    if (e.n_rows > 0) eq_layout_and_draw(&e);
    if (e.n_rows == 0 || lay.words_missing == 0) {
      scene_free(&scratch);
      return 0;
    }
    scene_reset(&scratch, s->width, s->height, 0);
    n = AXL_ALL_UP_TO; // a window of as many as can each be named
  }
  int lo = 8, hi = n + 1; // lo tokens are taken as readable; hi are not (n is tried first)
  for (int m = n; hi - lo > 1; m = (lo + hi) / 2) {
    Eq e;
    memset(&e, 0, sizeof e);
    e.s = &scratch, e.t = t, e.o = o, e.lay = &lay;
    e.x = x, e.y = y, e.w = w, e.h = h, e.win_n = m;
    lay_begin(&lay, o, x, y, w, h);
    eq_window(&e);
    if (cmp)
      compose_compare(&e, step, cmp);
    else
      compose(&e, &t->steps[step]);
    if (e.n_rows == 0) break; // (nothing laid out: the window as it is)
    eq_layout_and_draw(&e);
    if (e.cell >= eq_window_cell(&e) * 0.97f && eq_window_label_px(&e) >= eq_window_label(&e) * 0.995f)
      lo = m;
    else
      hi = m;
    scene_reset(&scratch, s->width, s->height, 0);
  }
  n = hi == n + 1 ? n : lo;
  scene_free(&scratch);
  return n;
}

void view_render(Scene *s, const Trace *t, int step, const ViewOptions *o, float x, float y, float w, float h,
                 ViewLayout *out) {
  EXPECT(step >= 0 && step < t->n_steps);
  Eq e;
  memset(&e, 0, sizeof e);
  e.s = s, e.t = t, e.o = o, e.lay = out;
  e.x = x, e.y = y, e.w = w, e.h = h;
  lay_begin(out, o, x, y, w, h);
  if (o->inside) return view_inside_render(s, t, step, o, x, y, w, h, out);
  if (o->model_view && view_model_available(t, step)) return view_model_render(s, t, o, x, y, w, h, out);
  // the prediction: its chart gives up height, a bar at a time, while the sentence's matrices name
  // only some of up to about 24 tokens (24 tokens: Z' named 9 of 24 rows over half the height)
  static const float shares[] = {PRED_CHART, 0.44f, 0.38f, 0.32f};
  for (size_t q = 0; t->steps[step].kind == STEP_PREDICT && q < sizeof shares / sizeof shares[0]; q++) {
    static _Thread_local ViewLayout lay;
    Scene scratch;
    scene_init(&scratch, s->width, s->height, 0);
    Eq m;
    memset(&m, 0, sizeof m);
    m.s = &scratch, m.t = t, m.o = o, m.lay = &lay, m.chart_share = shares[q];
    m.x = x, m.y = y, m.w = w, m.h = h;
    lay_begin(&lay, o, x, y, w, h);
    m.win_n = window_size(&scratch, t, step, o, x, y, w, h, NULL);
    eq_window(&m);
    compose(&m, &t->steps[step]);
    if (m.n_rows > 0) eq_layout_and_draw(&m);
    scene_free(&scratch);
    e.chart_share = shares[q];
    if (lay.labels_short == 0 && lay.words_missing == 0) break;
    if (q + 1 == sizeof shares / sizeof shares[0]) e.chart_share = 0; // none names them: as it was
  }
  e.win_n = window_size(s, t, step, o, x, y, w, h, NULL);
  eq_window(&e);
  compose(&e, &t->steps[step]);
  if (e.n_rows > 0)
    eq_layout_and_draw(&e);
  else
    eq_window_note(&e);
}

// The second sentence of a compare view, its captions and its focus.
struct Compare {
  const Trace *b;
  const char *caption_a, *caption_b;
  int focus_row_b, focus_col_b;
  float chart; // the prediction charts' share of the height (0: PRED_CHART)
  bool grids;  // all heads: each sentence's in a grid of two columns, side by side (compose_compare)
};

// The compare view's operands in e (nothing drawn but the prediction's charts): a row per sentence
// with a column per head, or the two results side by side with their difference.
static void compose_compare(Eq *e, int step, const Compare *c) {
  const Trace *a = e->t, *b = c->b;
  const ViewOptions *o = e->o;
  const TraceStep *st = &a->steps[step];
  int kb = trace_step_find(b, st->kind, st->layer);
  int ia = st->result, ib = b->steps[kb].result;
  bool heads = trace_per_head(&a->t[ia]);
  if (heads && o->head < 0 && a->cfg.H <= 8) { // all heads: a row per sentence, a column per head
    const char *base = a->t[ia].kind == T_ATTN ? "A" : a->t[ia].kind == T_AV ? "\\mathrm{head}" : "S";
    // or (c->grids) each sentence's heads in a grid of two columns, the two grids side by side,
    // each naming its keys once above its top row
    int per = c->grids ? 2 : a->cfg.H, ka[8], kh[8];
    for (int hd = 0; hd < a->cfg.H; hd++) {
      ka[hd] = eq_op(e, operand_tensor(a, ia, hd, false), eq_head_symbol(e, base, hd), LINK_NONE);
      kh[hd] = eq_op(e, operand_tensor(b, ib, hd, false), eq_head_symbol(e, base, hd), LINK_NONE);
      e->deco[ka[hd]].row_labels = e->deco[kh[hd]].row_labels = hd % per == 0;
      e->deco[ka[hd]].grid_lower = e->deco[kh[hd]].grid_lower = hd >= per;
      if (hd == 0) e->deco[ka[hd]].caption = c->caption_a, e->deco[kh[hd]].caption = c->caption_b;
      e->deco[ka[hd]].caption_row = e->deco[kh[hd]].caption_row = true;
      e->deco[kh[hd]].own_focus = true, e->deco[kh[hd]].focus_row = c->focus_row_b,
      e->deco[kh[hd]].focus_col = c->focus_col_b;
      eq_head_color(e, ka[hd], hd), eq_head_color(e, kh[hd], hd);
      if (hd == 0) eq_result(e, ka[hd]);
      e->lay->ops[ka[hd]].result = e->lay->ops[kh[hd]].result = true;
    }
    if (!c->grids) {
      for (int hd = 0; hd < a->cfg.H; hd++) eq_put(e, 0, ka[hd]), eq_put(e, 1, kh[hd]); // a row per sentence
      return;
    }
    for (int r = 0; r * per < a->cfg.H; r++) {
      for (int hd = r * per; hd < (r + 1) * per && hd < a->cfg.H; hd++) eq_put(e, r, ka[hd]);
      for (int hd = r * per; hd < (r + 1) * per && hd < a->cfg.H; hd++) eq_put(e, r, kh[hd]);
    }
    return;
  }
  int head = heads ? (o->head < 0 ? 0 : o->head) : -1;
  const char *base = a->t[ia].kind == T_ATTN ? "A" : a->t[ia].kind == T_AV ? "\\mathrm{head}" : "S";
  const char *sym = heads ? eq_head_symbol(e, base, head) : a->t[ia].symbol;
  int ka = eq_op(e, operand_tensor(a, ia, head, false), sym, LINK_NONE);
  int kb2 = eq_op(e, operand_tensor(b, ib, head, false), sym, LINK_NONE);
  e->deco[ka].row_labels = e->deco[kb2].row_labels = true;
  e->deco[ka].caption = c->caption_a, e->deco[kb2].caption = c->caption_b;
  e->deco[kb2].own_focus = true, e->deco[kb2].focus_row = c->focus_row_b,
  e->deco[kb2].focus_col = c->focus_col_b;
  if (a->t[ia].kind == T_PRED) { // the two charts side by side under the heatmaps, for the same row
    int ra = pred_row(o->focus_row, a->L), rb = pred_row(c->focus_row_b, b->L);
    bool ha = pred_hidden(o, ra, o->focus_row), hb = pred_hidden(o, rb, c->focus_row_b);
    e->deco[ka].mark_top = !ha, e->deco[kb2].mark_top = !hb;
    e->deco[ka].top_row = ra, e->deco[kb2].top_row = rb;
    // two files of one model (--compare-model): a third column, each word's probability in both
    bool models = a->model != b->model && a->cfg.V == b->cfg.V && ra == rb && !ha && !hb;
    // a smaller share for the charts (view_render_compare) keeps their rows: fewer bars
    float share = c->chart > 0 ? c->chart : PRED_CHART;
    e->chart_bars = (int)(PRED_TOP * share / PRED_CHART + 0.01f);
    float ch = e->h * share, cw = (e->w - eq_bar_width(e)) / (models ? 3 : 2);
    pred_chart(e, a, ra, e->x, e->y + e->h - ch, cw, ch, ha);
    pred_chart(e, b, rb, e->x + cw, e->y + e->h - ch, cw, ch, hb);
    if (models) pred_difference(e, a, b, ra, e->x + 2 * cw, e->y + e->h - ch, cw, ch);
    e->bars_h = e->h, e->h -= ch;
  }
  if (heads) eq_head_color(e, ka, head), eq_head_color(e, kb2, head);
  eq_result(e, ka);
  e->lay->ops[kb2].result = true;
  eq_put(e, 0, ka);
  eq_put(e, 0, kb2);
  const Operand *pa = &e->lay->ops[ka].op, *pb = &e->lay->ops[kb2].op;
  if (pa->rows == pb->rows && pa->cols == pb->cols) { // the same shape: show what changed
    int kd = eq_op(e, operand_difference(*pa, b, ib), "\\Delta", LINK_NONE);
    e->deco[kd].caption = "difference (left − right)";
    eq_put(e, 0, kd);
  }
}

// The compare view c of the step laid out in a scratch scene (nothing of it kept, the scene reset
// after): what its labels name, for view_render_compare's choices of layout.
static const ViewLayout *compare_trial(Scene *scratch, const Trace *a, int step, const ViewOptions *o,
                                       float x, float y, float w, float h, const Compare *c) {
  static _Thread_local ViewLayout lay;
  Eq m;
  memset(&m, 0, sizeof m);
  m.s = scratch, m.t = a, m.o = o, m.lay = &lay;
  m.x = x, m.y = y, m.w = w, m.h = h;
  lay_begin(&lay, o, x, y, w, h);
  m.win_n = window_size(scratch, a, step, o, x, y, w, h, c);
  eq_window(&m);
  compose_compare(&m, step, c);
  eq_layout_and_draw(&m);
  scene_reset(scratch, scratch->width, scratch->height, 0);
  return &lay;
}

void view_render_compare(Scene *s, const Trace *a, const Trace *b, int step, const ViewOptions *o,
                         const char *caption_a, const char *caption_b, int focus_row_b, int focus_col_b,
                         float x, float y, float w, float h, ViewLayout *out) {
  const TraceStep *st = &a->steps[step];
  int kb = trace_step_find(b, st->kind, st->layer);
  if (o->inside) return view_inside_render(s, a, step, o, x, y, w, h, out); // the first sentence's, inside
  if (st->result < 0 || kb < 0 || b->steps[kb].result < 0) { // nothing to compare: the step alone
    view_render(s, a, step, o, x, y, w, h, out);
    return;
  }
  Compare c = {b, caption_a, caption_b, focus_row_b, focus_col_b, 0, false};
  // all four heads of two sentences, a row of heads per sentence naming only some tokens: each
  // sentence's heads in a grid of two columns, the grids side by side, their keys named once above
  // their top rows, when that names more (22 tokens named 7 of 22 rows and 2 of 7 of the other's)
  if (trace_per_head(&a->t[st->result]) && o->head < 0 && a->cfg.H == 4) {
    Scene scratch;
    scene_init(&scratch, s->width, s->height, 0);
    int shorts[2], missing[2];
    for (int g = 0; g < 2; g++) {
      c.grids = g;
      const ViewLayout *l = compare_trial(&scratch, a, step, o, x, y, w, h, &c);
      shorts[g] = l->labels_short, missing[g] = l->words_missing;
      if (!g && !shorts[0] && !missing[0]) break;
    }
    c.grids = c.grids && (missing[1] != missing[0] ? missing[1] < missing[0] : shorts[1] < shorts[0]);
    scene_free(&scratch);
  }
  // two predictions: their charts give up height, a bar at a time, while a sentence of up to about
  // 24 tokens names only some of them (22 tokens named 7 of 22 rows of p̂ over half the height)
  if (a->t[st->result].kind == T_PRED && !o->tok_count) {
    static const float shares[] = {PRED_CHART, 0.44f, 0.38f, 0.32f};
    Scene scratch;
    scene_init(&scratch, s->width, s->height, 0);
    for (size_t q = 0; q < sizeof shares / sizeof shares[0]; q++) {
      c.chart = shares[q];
      const ViewLayout *l = compare_trial(&scratch, a, step, o, x, y, w, h, &c);
      if (l->labels_short == 0 && l->words_missing == 0) break;
      if (q + 1 == sizeof shares / sizeof shares[0]) c.chart = 0; // no share names them: as it was
    }
    scene_free(&scratch);
  }
  Eq e;
  memset(&e, 0, sizeof e);
  e.s = s, e.t = a, e.o = o, e.lay = out;
  e.x = x, e.y = y, e.w = w, e.h = h;
  lay_begin(out, o, x, y, w, h);
  e.win_n = window_size(s, a, step, o, x, y, w, h, &c);
  eq_window(&e);
  compose_compare(&e, step, &c);
  eq_layout_and_draw(&e);
}

bool view_hit(const ViewLayout *l, float px, float py, int *op_out, int *i, int *j) {
  const float *c = l->clip; // a zoomed picture: cells panned out of the area are not there
  if (c[2] > 0 && (px < c[0] || py < c[1] || px >= c[0] + c[2] || py >= c[1] + c[3])) return false;
  for (int k = l->n_ops - 1; k >= 0; k--) {
    const ViewOperand *v = &l->ops[k];
    if (v->w <= 0 || px < v->x || py < v->y || px >= v->x + v->w || py >= v->y + v->h) continue;
    *op_out = k;
    *i = (int)((py - v->y) / v->h * v->op.rows);
    *j = (int)((px - v->x) / v->w * v->op.cols);
    if (*i >= v->op.rows) *i = v->op.rows - 1;
    if (*j >= v->op.cols) *j = v->op.cols - 1;
    return true;
  }
  return false;
}

bool view_symbol_hit(const ViewLayout *l, float px, float py, int *op) {
  const float *c = l->clip; // a zoomed picture: symbols panned out of the area are not there
  if (c[2] > 0 && (px < c[0] || py < c[1] || px >= c[0] + c[2] || py >= c[1] + c[3])) return false;
  for (int k = l->n_ops - 1; k >= 0; k--) {
    const float *b = l->ops[k].sym, m = b[3] * 0.15f; // a little margin round a thin symbol
    if (b[2] > 0 && px >= b[0] - m && py >= b[1] - m && px < b[0] + b[2] + m && py < b[1] + b[3] + m) {
      *op = k;
      return true;
    }
  }
  return false;
}

void view_symbol_describe(const ViewLayout *l, int k, char *buf, int cap) {
  if (cap <= 0) return;
  buf[0] = 0;
  if (k < 0 || k >= l->n_ops) return;
  const ViewOperand *v = &l->ops[k];
  char sym[64];
  tex_plain(v->symbol ? v->symbol : "", sym, sizeof sym);
  // the notation table's title ("Layer output"), its first letter small unless it starts a name
  // ("LayerNorm gain" stays)
  const TraceTensor *src = operand_src(&v->op);
  char what[128];
  snprintf(what, sizeof what, "%s", src ? src->title : "the mask, −∞ where a word may not look");
  if (what[0] >= 'A' && what[0] <= 'Z' && what[1] >= 'a' && what[1] <= 'z')
    what[0] = (char)(what[0] - 'A' + 'a');
  snprintf(buf, (size_t)cap, "%s: %s%s, %s", sym, what,
           v->op.minus_trace ? " (difference of the two sentences)" : "", v->shape);
}

const char *view_tensor_title(const Trace *t, const TraceTensor *x) {
  if (t->no_scale && x->kind == T_SCORES) return "Scores without 1/√dₖ (the √dₖ experiment)";
  return x->title;
}

const char *view_tensor_tex(const Trace *t, const TraceTensor *x) {
  if (t->no_scale && x->kind == T_SCORES) return "S_h = Q_h K_h^\\top \\quad (\\text{no } 1/\\sqrt{d_k})";
  return x->tex;
}
