// view_grad.c -- see view_grad.h.
#include "view_grad.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axislabels.h" // defines: AxisSpec, AxisLabels, axis_labels_plan
#include "numfmt.h"     // defines: numfmt_tex, numfmt_reproduces
#include "tex.h"        // defines: tex_draw
#include "text.h"       // defines: text_width
#include "view.h"       // defines: view_tensor_title, VIEW_TOKENS_READABLE

// A window of a long sentence's tokens keeps as many as have cells 1.15 times VIEW_WINDOW_LABEL
// (turned labels each at their column, axislabels.c), its labels that large.
#define GRAD_WORD VIEW_WINDOW_LABEL

// One L×L heatmap at (x, y), `cell` pixels a cell: values v (row-major), coloured on sc; numbers
// when the cells are wide enough; tokens on the rows (left, when labels) and columns (above).

// A colour bar of scale sc at (x, y), w × h, its ends (and 0 on a diverging scale) labelled below.
static void color_bar(Scene *s, const ColorScale *sc, const Theme *th, float fs, float x, float y, float w,
                      float h) {
  uint32_t *bar = scene_cells(s, x, y, w, h, 1, 64);
  for (int j = 0; bar && j < 64; j++) bar[j] = cmap_color(sc->map, (j + 0.5f) / 64);
  float ly = y + h + fs * 0.75f;
  scene_text_aligned(s, FONT_SANS, fs * 0.65f, x, ly, 0, th->muted, scene_strf(s, "%.3g", sc->lo));
  if (sc->map == CMAP_DIVERGING)
    scene_text_aligned(s, FONT_SANS, fs * 0.65f, x + w / 2, ly, 0.5f, th->muted, "0");
  scene_text_aligned(s, FONT_SANS, fs * 0.65f, x + w, ly, 1, th->muted, scene_strf(s, "%.3g", sc->hi));
}

// The labels of one word axis of a matrix whose cells start at (x, y): rows left of it, columns
// above it, decided by axislabels.h as in every other view (every token up to about 24 named,
// turned or smaller when they do not fit across; past that a chosen few with their positions).
// `focus` (an entry, or -1) is kept first and drawn in bold; fs is the labels' largest size and
// u the page's unit (1 at 1080 lines). Draws when s is not NULL; returns the room the labels take
// across the axis.
static float word_labels(Scene *s, const Trace *t, TraceAxis axis, int first, int n, bool cols, float x,
                         float y, float len, float fs, float u, int focus, const Theme *th) {
  static _Thread_local AxisLabels al;
  bool win = axis == AXIS_TOKEN && n < t->L; // a window of a long sentence's tokens: its labels this large
  AxisSpec sp = {.trace = t,
                 .axis = axis,
                 .n = n,
                 .first = first, // (a window of a long sentence's tokens: entries first ... first + n - 1)
                 .cols = cols,
                 .len = len,
                 .fs = win ? fmaxf(fs, GRAD_WORD * u) : fs,
                 .floor = (win ? GRAD_WORD : 24) * u, // 16 px at 720 lines, as the matrix views
                 .least = 18 * u,
                 .focus = focus,
                 .vocab = axis == AXIS_VOCAB || axis == AXIS_TGT_VOCAB};
  if (!s) return axis_labels_depth(&sp);
  axis_labels_plan(&sp, &al);
  for (int k = 0; k < al.n; k++) {
    bool f = al.idx[k] == focus;
    FontFace face = f ? FONT_SANS_BOLD : FONT_SANS;
    uint32_t color = f ? th->text : th->muted;
    float up = (float)(al.idx[k] % 2) * al.shift; // a second tier (rows: further left)
    if (cols && al.turned && up > 0)
      scene_rect(s, x + al.at[k] - 0.5f, y - 4 * u - up + 2, 1, up - 4, th->grid);
    if (cols && al.turned)
      scene_text_turned(s, face, al.lf, x + al.at[k] + al.lf * 0.35f, y - 4 * u - up, color, al.text[k]);
    else if (cols)
      scene_text_aligned(s, face, al.lf, x + al.at[k], y - al.lf * 0.45f, 0.5f, color, al.text[k]);
    else
      scene_text_aligned(s, face, al.lf, x - fs * 0.4f - up, y + al.at[k] + al.lf * 0.36f, 1.0f, color,
                         al.text[k]);
  }
  return al.depth;
}

// v is L×L (the whole sentence's); the heatmap shows its tokens i0 .. i0 + n - 1 (every token, or a
// window of a long sentence's); row and col count in the heatmap (-1 or n and more: not shown).
static void heatmap(Scene *s, const Trace *t, const float *v_all, int i0, int n, const ColorScale *sc,
                    float x, float y, float cell, bool labels, int row, int col, const Theme *th,
                    const char *symbol, float fs, float u) {
  int L = n, stride = t->L;
  const float *v = v_all + (size_t)i0 * stride + i0;
  uint32_t *c = scene_cells(s, x, y, cell * L, cell * L, L, L);
  for (int i = 0; c && i < L; i++)
    for (int j = 0; j < L; j++) c[i * L + j] = scale_color(sc, v[i * stride + j]);
  float nfs = cell * 0.2f;
  if (nfs >= 9)
    for (int i = 0; i < L; i++)
      for (int j = 0; j < L; j++) {
        float val = v[i * stride + j];
        const char *txt =
            fabsf(val) < 5e-5f ? "0" : scene_strf(s, fabsf(val) >= 0.01f ? "%.2f" : "%.4f", val);
        scene_text_aligned(s, FONT_MONO, nfs, x + (j + 0.5f) * cell, y + (i + 0.62f) * cell, 0.5f,
                           cmap_ink_on(scale_color(sc, val)), txt);
      }
  scene_frame(s, x, y, cell * L, cell * L, 1.5f, th->frame);
  if (labels) word_labels(s, t, AXIS_TOKEN, i0, L, false, x, y, cell * L, fs * 0.8f, u, row, th);
  float above = word_labels(s, t, AXIS_TOKEN, i0, L, true, x, y, cell * L, fs * 0.8f, u, col, th);
  if (row >= 0 && row < L) {
    scene_frame(s, x - 2, y + row * cell - 2, cell * L + 4, cell + 4, 3, th->accent); // the query row
    if (col >= 0 && col < L)
      scene_frame(s, x + col * cell, y + row * cell, cell, cell, 3, th->highlight); // the worked cell
  }
  tex_draw(s, symbol, fs * 1.3f, false, x + cell * L / 2 - fs * 1.2f, y - fmaxf(fs * 1.6f, above + fs * 0.8f),
           th->text);
  color_bar(s, sc, th, fs, x, y + cell * L + fs * 0.5f, cell * L, fs * 0.45f); // under the matrix
}

// v in TeX with the significant digits of the equation being written (numfmt.h): 3, raised by
// the writers of worked equations until the printed numbers reproduce the printed result.
static _Thread_local int tex_sig = NUMFMT_SIG;
static const char *tex_num(Scene *s, double v) {
  char b[48];
  return scene_strf(s, "%s", numfmt_tex(b, sizeof b, v, tex_sig, false));
}

// The same, in parentheses when negative: "0.4211 - 0.2774", "-0.670 - (-0.662)".
static const char *tex_subtrahend(Scene *s, double v) {
  char b[48];
  return scene_strf(s, "%s", numfmt_tex(b, sizeof b, v, tex_sig, true));
}

// Cell (i, j) of tensor x as a teacher names it: "[\\text{the\\#2}, \\text{where}]" -- tokens and
// vocabulary words by their word (a repeated token with its #n), dimensions counted from 1.
static const char *cell_ref(Scene *s, const Trace *t, const TraceTensor *x, int i, int j) {
  char a[96], b[96];
  const char *parts[2];
  for (int k = 0; k < 2; k++) {
    TraceAxis ax = k ? x->col_axis : x->row_axis;
    int n = k ? j : i;
    char *out = k ? b : a, w[64];
    if (ax == AXIS_TOKEN || ax == AXIS_VOCAB || ax == AXIS_TGT_TOKEN || ax == AXIS_TGT_VOCAB) {
      trace_axis_label(t, ax, n, w, sizeof w);
      int seen = 1; // the second "the" is the#2, as lessons write it
      char o[64];
      for (int q = 0; ax == AXIS_TOKEN && q < n; q++)
        seen += !strcmp(trace_axis_label(t, ax, q, o, sizeof o), w);
      snprintf(out, 96, seen > 1 ? "\\text{%s\\#%d}" : "\\text{%s}", w, seen);
    } else {
      snprintf(out, 96, "%d", n + 1);
    }
    parts[k] = out;
  }
  return scene_strf(s, "[%s, %s]", parts[0], parts[1]);
}

static ColorScale centred(const float *v, long n) {
  float m = 0;
  for (long k = 0; k < n; k++) m = fmaxf(m, fabsf(v[k]));
  return scale_for(CMAP_DIVERGING, -m, m);
}

// The window of tokens a page shows: none (every token) up to VIEW_TOKENS_READABLE tokens, else as
// many as fit(m) accepts from AXL_ALL_UP_TO down to 8, from win->first, else around entries `at` and
// `also` (the worked cell's row and column; around `at` alone when they are further apart than the
// window is long). Writes *i0, *n and, when win, what it shows.
static void grad_window(int L, int at, int also, GradWindow *win, bool (*fit)(void *, int), void *ctx,
                        int *i0, int *n) {
  *i0 = 0, *n = L;
  if (L > VIEW_TOKENS_READABLE) {
    int m = AXL_ALL_UP_TO;
    while (m > 8 && !fit(ctx, m)) m--;
    int mid = also >= 0 && abs(also - at) < m ? (at + also) / 2 : at;
    int f = win && win->first >= 0 ? win->first : mid - m / 2;
    *i0 = f < 0 ? 0 : f > L - m ? L - m : f, *n = m;
  }
  if (win) win->first = *i0, win->shown = *n < L ? *n : 0, win->total = L;
}

// The line under a page's matrices that says which tokens show (a window of them), at (x, y).
static void window_note(Scene *s, const Theme *th, float fs, float x, float y, int i0, int n, int L,
                        const GradWindow *win) {
  if (n >= L) return;
  scene_text(s, FONT_SANS, fs, x, y, th->text,
             scene_strf(s, "tokens %d–%d of %d shown%s%s", i0 + 1, i0 + n, L, win && win->keys ? " · " : "",
                        win && win->keys ? win->keys : ""));
}

// The softmax page's cell for m tokens, its labels' room measured (twice: the labels decide the
// cells, the cells the labels); *label_w and *top for the layout.
typedef struct {
  const Trace *t;
  const Theme *th;
  float w, h, fs, u, gap, label_w, top, cell;
  int i0, row, col;
} SoftmaxFit;
static void softmax_fit(SoftmaxFit *f, int n) {
  f->label_w = f->fs * 5.5f, f->top = f->fs * 10.4f; // under the window's panel
  for (int pass = 0; pass < 2; pass++) {
    f->cell =
        fminf((f->w - 2 * f->fs - f->label_w - 2 * f->gap) / (3.0f * n), (f->h - f->top - f->fs * 11.2f) / n);
    f->label_w = word_labels(NULL, f->t, AXIS_TOKEN, f->i0, n, false, 0, 0, f->cell * n, f->fs * 0.8f, f->u,
                             f->row, f->th);
    float above = word_labels(NULL, f->t, AXIS_TOKEN, f->i0, n, true, 0, 0, f->cell * n, f->fs * 0.8f, f->u,
                              f->col, f->th);
    f->top = f->fs * 10.4f + fmaxf(0, above - f->fs * 1.1f);
  }
}
static bool softmax_fits(void *ctx, int n) {
  SoftmaxFit *f = ctx;
  softmax_fit(f, n);
  return f->cell >= GRAD_WORD * f->u * 1.15f;
}

void view_grad_softmax(Scene *s, const Trace *t, const TraceGrad *g, int layer, int head, int row, int col,
                       const char *footer, const Theme *th, float w, float h, GradWindow *win) {
  const TraceLayer *y = &t->layers[layer];
  int L = t->L;
  size_t hs = (size_t)head * L * L;
  const float *A = t->t[y->A].data + hs, *dA = g->d[y->A] + hs, *dS = g->d[y->S] + hs;
  float fs = h * 0.028f;
  scene_rect(s, 0, 0, w, h, th->bg);
  scene_text(s, FONT_SANS_BOLD, fs * 1.3f, fs, fs * 1.8f, th->text,
             scene_strf(s, "Backward through the softmax: layer %d, head %d", layer + 1, head + 1));
  tex_draw(s,
           "\\frac{\\partial L}{\\partial S_{ij}} = A_{ij}\\left(\\frac{\\partial L}{\\partial A_{ij}} - "
           "\\sum_k \\frac{\\partial L}{\\partial A_{ik}}\\, A_{ik}\\right)",
           fs * 1.25f, true, fs, fs * 4.6f, th->text);
  // three matrices side by side, with room for the row labels on the left and the column labels
  // above (turned when the words do not fit across: the top moves down for them); a long sentence:
  // a window of its tokens around the worked row, as many as can each be named (softmax_fits)
  SoftmaxFit f = {t, th, w, h, fs, h / 1080.0f, fs * 2.2f, 0, 0, 0, 0, row, col};
  int i0, n;
  grad_window(L, row, col, win, softmax_fits, &f, &i0, &n);
  f.i0 = i0, f.row = row - i0, f.col = col - i0;
  softmax_fit(&f, n);
  float u = f.u, gap = f.gap, cell = f.cell, top = f.top, mw = cell * n, x0 = fs + f.label_w;
  ColorScale sa = scale_for(CMAP_VIRIDIS, 0, 1), sda = centred(dA, (long)L * L),
             sds = centred(dS, (long)L * L); // (the whole matrices' scales: a window keeps its colours)
  heatmap(s, t, A, i0, n, &sa, x0, top, cell, true, f.row, f.col, th, "A_h", fs, u);
  heatmap(s, t, dA, i0, n, &sda, x0 + mw + gap, top, cell, false, f.row, f.col, th,
          "\\partial L / \\partial A_h", fs, u);
  heatmap(s, t, dS, i0, n, &sds, x0 + 2 * (mw + gap), top, cell, false, f.row, f.col, th,
          "\\partial L / \\partial S_h", fs, u);
  window_note(s, th, fs * 0.8f, x0, top + mw + fs * 2.6f, i0, n, L, win);
  // the worked equation of cell (row, col)
  double r = 0;
  for (int k = 0; k < L; k++) r += (double)dA[row * L + k] * A[row * L + k];
  float ey = top + mw + fs * 4.6f;
  tex_draw(s, view_grad_softmax_worked(s, t, g, layer, head, row, col), fs * 1.15f, true, fs, ey, th->text);
  // two short lines: the right part of the window's bottom may hold the √d_k chart (app_train.c)
  scene_text(s, FONT_SANS, fs * 0.8f, fs, ey + fs * 1.9f, th->muted,
             scene_strf(s, "the sum over the row: %.3g —", r));
  scene_text(s, FONT_SANS, fs * 0.8f, fs, ey + fs * 3.0f, th->muted,
             "a weight near 0, or a row near one-hot, passes almost nothing back");
  if (footer) scene_text(s, FONT_SANS, fs * 0.75f, fs, h - fs * 0.7f, th->muted, footer);
}

void view_grad_sqrtdk_chart(Scene *s, const SqrtDkRow *r, int n, float x, float y, float w, float h,
                            const Theme *th) {
  if (n < 2) return;
  float fs = h * 0.13f, top = fs * 2.1f, left = fs * 3.2f, bottom = fs * 1.6f;
  float px = x + left, pw = w - left - fs, py = y + top, ph = h - top - bottom, hi = 0;
  for (int k = 0; k < n; k++) hi = fmaxf(hi, fmaxf(r[k].ds_rms[0], r[k].ds_rms[1]));
  hi *= 1.15f;
  scene_rect(s, x, y, w, h, th->panel);
  scene_frame(s, x, y, w, h, 1.5f, th->frame);
  scene_text(s, FONT_SANS_BOLD, fs, x + fs * 0.5f, y + fs * 1.15f, th->text,
             "size of ∂L/∂S against dₖ (random q, k)");
  scene_line(s, px, py + ph, px + pw, py + ph, 1, th->muted);
  scene_line(s, px, py, px, py + ph, 1, th->muted);
  scene_text_aligned(s, FONT_SANS, fs * 0.8f, px - fs * 0.3f, py + fs * 0.3f, 1, th->muted,
                     scene_strf(s, "%.2g", hi));
  scene_text_aligned(s, FONT_SANS, fs * 0.8f, px - fs * 0.3f, py + ph, 1, th->muted, "0");
  float l0 = log2f((float)r[0].dk), l1 = log2f((float)r[n - 1].dk);
  for (int v = 0; v < 2; v++) {
    uint32_t col = v ? th->warn : th->accent;
    float ox = 0, oy = 0;
    for (int k = 0; k < n; k++) {
      float cx = px + pw * (log2f((float)r[k].dk) - l0) / (l1 - l0), cy = py + ph * (1 - r[k].ds_rms[v] / hi);
      if (k) scene_line(s, ox, oy, cx, cy, 2.5f, col);
      scene_rect(s, cx - 3, cy - 3, 6, 6, col);
      ox = cx, oy = cy;
      if (v == 0)
        scene_text_aligned(s, FONT_SANS, fs * 0.8f, cx, py + ph + fs * 1.1f, 0.5f, th->muted,
                           scene_strf(s, "%d", r[k].dk));
    }
    scene_text_aligned(s, FONT_SANS_BOLD, fs * 0.85f, px + pw, v ? oy - fs * 0.5f : oy - fs * 0.5f, 1, col,
                       v ? "without 1/√dₖ" : "with 1/√dₖ");
  }
}

void view_grad_pick(const Trace *t, const TraceGrad *g, int *head, int *row, int *col) {
  int L = t->L, V = t->cfg.V;
  *row = 0;
  if (t->logits >= 0) { // the worst prediction: the largest −log p̂ of its target
    double worst = -1;
    for (int i = 0; i < L; i++) {
      if (g->target[i] < 0) continue;
      double p = t->t[t->pred].data[(size_t)i * V + g->target[i]], term = -log(p > 0 ? p : 1e-30);
      if (term > worst) worst = term, *row = i;
    }
  }
  const float *dS = g->d[t->layers[0].S];
  float best = -1;
  *head = 0, *col = 0;
  for (int h = 0; h < t->cfg.H; h++)
    for (int j = 0; j < L; j++) {
      float v = fabsf(dS[((size_t)h * L + *row) * L + j]);
      if (v > best) best = v, *head = h, *col = j;
    }
}

// ---- the walk backwards through the stages (issue 21 item 4) ----

int view_grad_stages(const Trace *t, const TraceGrad *g, int *out, int max) {
  int n = 0;
  for (int k = t->n - 1; k >= 0 && n < max; k--) { // the table is in the forward's order
    if (t->t[k].is_weight || !g->d[k]) continue;
    bool seen = false; // a view shares its gradient buffer: shown once, under the tensor that owns it
    for (int m = 0; m < n; m++)
      if (g->d[out[m]] == g->d[k]) {
        seen = true;
        if (g->d_own[k]) out[m] = k;
      }
    if (!seen) out[n++] = k;
  }
  return n;
}

// The head of x that query head `head` reads: itself, 0 for a tensor without heads, and under
// grouped-query attention (K and V with H_kv heads, issue 34) the K/V head of its group.
static int head_of(const Trace *t, const TraceTensor *x, int head) {
  if (!x->per_head) return 0;
  if (x->heads > 0 && x->heads < t->cfg.H) return head / (t->cfg.H / x->heads);
  return head;
}

const float *view_grad_shown(const Trace *t, const TraceGrad *g, int k, int head) {
  const TraceTensor *x = &t->t[k];
  int h = head_of(t, x, head);
  return g->d[k] + (size_t)h * x->rows * x->cols;
}

// The backward formula of tensor k, in TeX, written from its forward formula.
const char *view_grad_formula(const Trace *t, int k) {
  if (k == t->logits)
    return "\\frac{\\partial L}{\\partial z_{ij}} = \\frac{1}{N}\\left(\\hat p_{ij} - 1[j = y_i]\\right)";
  if (k == t->final_norm || k == t->head_norm || k == t->enc_norm)
    return "\\frac{\\partial L}{\\partial Y} = \\frac{\\partial L}{\\partial \\mathrm{logits}}\\, "
           "W_{out}^{\\top}";
  if (k == t->Z || k == t->embed_sum || k == t->E || k == t->X ||
      (t->cfg.n_layers > 0 && k == t->layers[0].in))
    return "\\frac{\\partial L}{\\partial X} = \\frac{\\partial L}{\\partial Z}\\ \\text{(through the "
           "layers)},\\quad \\frac{\\partial L}{\\partial E_w} = \\sum_{i: x_i = w} \\frac{\\partial "
           "L}{\\partial "
           "X_i}";
  for (int l = 0; l < t->cfg.n_layers; l++) {
    const TraceLayer *y = &t->layers[l];
    // today's decoders (issue 34): RMSNorm, RoPE turned back, the gated FFN, grouped K/V heads
    bool grouped = model_hkv(&t->cfg) < t->cfg.H;
    if (k == y->rms1 || k == y->rms2)
      return "\\frac{\\partial L}{\\partial x} = \\frac{1}{\\mathrm{rms}}\\left(\\gamma g - \\hat x\\, "
             "\\overline{\\gamma g \\hat x}\\right),\\quad \\hat x = \\frac{x}{\\mathrm{rms}},\\ g = "
             "\\frac{\\partial L}{\\partial \\mathrm{RMSNorm}(x)}";
    if (k == y->Q_norope || k == y->K_norope)
      return "\\frac{\\partial L}{\\partial q_i} = R(-\\varphi_i)\\, \\frac{\\partial L}{\\partial "
             "\\tilde q_i}\\ \\text{(each pair turned back by its angle)}";
    if (k == y->gate)
      return t->cfg.activation == ACT_SILU
                 ? "\\frac{\\partial L}{\\partial G} = \\frac{\\partial L}{\\partial H} \\circ U \\circ "
                   "\\sigma(G)\\left(1 + G\\,(1 - \\sigma(G))\\right)"
                 : "\\frac{\\partial L}{\\partial G} = \\frac{\\partial L}{\\partial H} \\circ U \\circ "
                   "\\mathrm{GELU}'(G)";
    if (k == y->up)
      return t->cfg.activation == ACT_SILU ? "\\frac{\\partial L}{\\partial U} = \\frac{\\partial "
                                             "L}{\\partial H} \\circ \\mathrm{SiLU}(G)"
                                           : "\\frac{\\partial L}{\\partial U} = \\frac{\\partial "
                                             "L}{\\partial H} \\circ \\mathrm{GELU}(G)";
    if (grouped && k == y->K)
      return "\\frac{\\partial L}{\\partial K_g} = \\frac{1}{\\sqrt{d_k}}\\sum_{h \\in g} \\frac{\\partial "
             "L}{\\partial S_h}^{\\top} Q_h\\ \\text{(the query heads of its group)}";
    if (grouped && k == y->V)
      return "\\frac{\\partial L}{\\partial V_g} = \\sum_{h \\in g} A_h^{\\top} \\frac{\\partial "
             "L}{\\partial "
             "(A_hV_h)}\\ \\text{(the query heads of its group)}";
    if (k == y->out || k == y->norm2 || k == y->norm1)
      return "\\frac{\\partial L}{\\partial x} = \\frac{\\gamma}{\\sigma}\\left(g - \\bar g - \\hat x\\, "
             "\\overline{g\\hat x}\\right),\\quad g = \\frac{\\partial L}{\\partial \\mathrm{LN}(x)}";
    if (k == y->res2 || k == y->res1)
      return "r = x + f(x):\\quad \\frac{\\partial L}{\\partial x} = \\frac{\\partial L}{\\partial r} + "
             "\\frac{\\partial L}{\\partial f}\\frac{\\partial f}{\\partial x}\\ \\text{(the gradient flows "
             "around)}";
    if (k == y->ffn)
      return "\\frac{\\partial L}{\\partial F} = \\frac{\\partial L}{\\partial r_2},\\quad "
             "\\frac{\\partial L}{\\partial W_2} = H^{\\top} \\frac{\\partial L}{\\partial F}";
    if (k == y->ffn_hidden)
      return "\\frac{\\partial L}{\\partial H} = \\frac{\\partial L}{\\partial F}\\, W_2^{\\top}";
    if (k == y->ffn_pre)
      return t->cfg.activation == ACT_RELU
                 ? "\\frac{\\partial L}{\\partial P} = \\frac{\\partial L}{\\partial H} \\circ 1[P > 0]"
                 : "\\frac{\\partial L}{\\partial P} = \\frac{\\partial L}{\\partial H} \\circ "
                   "\\left(\\Phi(P) + P\\,\\varphi(P)\\right)";
    if (k == y->attn)
      return "\\frac{\\partial L}{\\partial O} = \\frac{\\partial L}{\\partial r_1},\\quad "
             "\\frac{\\partial L}{\\partial W^o} = C^{\\top} \\frac{\\partial L}{\\partial O}";
    if (k == y->concat)
      return "\\frac{\\partial L}{\\partial C} = \\frac{\\partial L}{\\partial O}\\, W^{o\\top}";
    if (k == y->AV)
      return "\\frac{\\partial L}{\\partial (A_hV_h)} = \\text{head } h\\text{'s columns of } "
             "\\frac{\\partial L}{\\partial C}";
    if (k == y->A)
      return "\\frac{\\partial L}{\\partial A_h} = \\frac{\\partial L}{\\partial (A_hV_h)}\\, V_h^{\\top}";
    if (k == y->S)
      return "\\frac{\\partial L}{\\partial S_{ij}} = A_{ij}\\left(\\frac{\\partial L}{\\partial A_{ij}} - "
             "\\sum_k \\frac{\\partial L}{\\partial A_{ik}} A_{ik}\\right)";
    if (k == y->S_raw)
      return t->no_scale
                 ? "\\frac{\\partial L}{\\partial (Q K^{\\top})} = \\frac{\\partial L}{\\partial S}\\ "
                   "\\text{(no } 1/\\sqrt{d_k}\\text{)}"
                 : "\\frac{\\partial L}{\\partial (Q K^{\\top})} = \\frac{1}{\\sqrt{d_k}} \\frac{\\partial "
                   "L}{\\partial S}";
    if (k == y->Q)
      return t->no_scale
                 ? "\\frac{\\partial L}{\\partial Q_h} = \\frac{\\partial L}{\\partial S_h}\\, K_h"
                 : "\\frac{\\partial L}{\\partial Q_h} = \\frac{1}{\\sqrt{d_k}}\\frac{\\partial L}{\\partial "
                   "S_h}\\, K_h";
    if (k == y->K)
      return t->no_scale
                 ? "\\frac{\\partial L}{\\partial K_h} = \\frac{\\partial L}{\\partial S_h}^{\\top} Q_h"
                 : "\\frac{\\partial L}{\\partial K_h} = \\frac{1}{\\sqrt{d_k}}\\frac{\\partial L}{\\partial "
                   "S_h}^{\\top} Q_h";
    if (k == y->V)
      return "\\frac{\\partial L}{\\partial V_h} = A_h^{\\top} \\frac{\\partial L}{\\partial (A_hV_h)}";
  }
  return "\\frac{\\partial L}{\\partial Y} \\text{ from the stages after it}";
}

static bool words_axis(TraceAxis a) {
  return a == AXIS_TOKEN || a == AXIS_TGT_TOKEN || a == AXIS_VOCAB || a == AXIS_TGT_VOCAB;
}

// A rows×cols heatmap (any shape) of a tensor whose axes are ra × ca: cells cw×ch pixels, the words
// on the rows when labels, on the columns when they are words (word_labels); the symbol above.
// r0, c0: the first row and column shown (a window of a long sentence's tokens), v already cut to them.
// The columns of a dimension axis (D, d_k, F: no words to name them) numbered from 1 above the
// matrix, as the forward views number them: the first and the last, and the framed column's number
// over it (col, -1: none), so that the cell a line names, "[the, 6]", can be found. Returns the
// height taken above y.
static float column_numbers(Scene *s, int c0, int cols, int col, float x, float y, float cw, float nf,
                            const Theme *th) {
  float base = y - nf * 0.45f, gap = nf * 0.5f;
  const char *hot = col >= 0 && col < cols ? scene_strf(s, "%d", c0 + col + 1) : NULL;
  float hw = hot ? text_width(FONT_SANS_BOLD, nf, hot) : 0, hx = x + (col + 0.5f) * cw;
  float hl = hx - hw / 2, hr = hx + hw / 2;
  if (hot) { // kept inside the matrix's width
    float shift = fmaxf(0, x - hl) - fmaxf(0, hr - (x + cw * cols));
    hl += shift, hr += shift, hx += shift;
  }
  for (int e = 0; e < 2; e++) { // the ends, unless the framed column's number is there
    int c = e ? cols - 1 : 0;
    if (e && cols < 2) break;
    const char *n = scene_strf(s, "%d", c0 + c + 1);
    float w = text_width(FONT_SANS, nf, n), l = e ? x + cw * cols - w : x, r = l + w;
    if (hot && (c == col || (r + gap > hl && l - gap < hr))) continue;
    scene_text(s, FONT_SANS, nf, l, base, th->muted, n);
  }
  if (hot) scene_text_aligned(s, FONT_SANS_BOLD, nf, hx, base, 0.5f, th->text, hot);
  return nf * 1.3f;
}

static void heatmap_rc(Scene *s, const Trace *t, const float *v, int rows, int cols, TraceAxis ra,
                       TraceAxis ca, int r0, int c0, const ColorScale *sc, float x, float y, float cw,
                       float ch, bool labels, int row, int col, const Theme *th, const char *symbol, float fs,
                       float u) {
  uint32_t *c = scene_cells(s, x, y, cw * cols, ch * rows, rows, cols);
  for (int i = 0; c && i < rows; i++)
    for (int j = 0; j < cols; j++) c[i * cols + j] = scale_color(sc, v[i * cols + j]);
  float nfs = fminf(ch * 0.4f, cw * 0.2f);
  if (nfs >= 9)
    for (int i = 0; i < rows; i++)
      for (int j = 0; j < cols; j++) {
        float val = v[i * cols + j];
        scene_text_aligned(s, FONT_MONO, nfs, x + (j + 0.5f) * cw, y + (i + 0.62f) * ch, 0.5f,
                           cmap_ink_on(scale_color(sc, val)),
                           fabsf(val) < 5e-5f ? "0"
                                              : scene_strf(s, fabsf(val) >= 0.01f ? "%.2f" : "%.4f", val));
      }
  scene_frame(s, x, y, cw * cols, ch * rows, 1.5f, th->frame);
  if (labels && words_axis(ra))
    word_labels(s, t, ra, r0, rows, false, x, y, ch * rows, fs * 0.8f, u, row, th);
  float above = words_axis(ca) ? word_labels(s, t, ca, c0, cols, true, x, y, cw * cols, fs * 0.8f, u, col, th)
                               : column_numbers(s, c0, cols, col, x, y, cw, fs * 0.7f, th);
  if (row >= 0 && row < rows && col >= 0 && col < cols) // the worked cell (a window may not show it)
    scene_frame(s, x + col * cw - 1, y + row * ch - 1, cw + 2, ch + 2, 3, th->highlight);
  tex_draw(s, symbol, fs * 1.1f, false, x, y - fmaxf(fs * 0.9f, above + fs * 0.5f), th->text);
  color_bar(s, sc, th, fs, x, y + ch * rows + fs * 0.4f, cw * cols, fs * 0.4f);
}

// The displayed weight W[r, c] (stored transposed for PyTorch's W[out, in]).
static float weight_at(const TraceTensor *w, int r, int c) { return trace_at(w, 0, r, c); }

// The worked equation of gradient cell (i, j) of tensor k with the real numbers, where the formula is
// a product's dot product or a mask; NULL else.
static const char *worked_once(Scene *s, const Trace *t, const TraceGrad *g, int k, int head, int i, int j) {
  const TraceTensor *x = &t->t[k];
  const float *d = view_grad_shown(t, g, k, head);
  float v = d[(size_t)i * x->cols + j];
  for (int l = 0; l < t->cfg.n_layers; l++) {
    const TraceLayer *y = &t->layers[l];
    int out = -1, w = -1;
    if (k == y->ffn_hidden) out = y->ffn, w = y->W2;
    if (k == y->concat) out = y->attn, w = y->Wo;
    if (out >= 0 && w >= 0) { // dX[i,j] = Σ_m dY[i,m] W[j,m]: the first terms of the dot product
      const TraceTensor *W = &t->t[w];
      const float *dy = g->d[out] + (size_t)i * t->t[out].cols;
      int n = t->t[out].cols;
      const char *sum = "";
      for (int m = 0; m < n && m < 3; m++)
        sum = scene_strf(s, "%s%s(%s)(%s)", sum, m ? " + " : "", tex_num(s, dy[m]),
                         tex_num(s, weight_at(W, j, m)));
      return scene_strf(
          s, "%s:\\ \\sum_{m=1}^{%d} \\frac{\\partial L}{\\partial Y}_{%d m} W_{%d m} = %s%s = %s",
          cell_ref(s, t, x, i, j), n, i + 1, j + 1, sum, n > 3 ? " + \\cdots" : "", tex_num(s, v));
    }
    if (k == y->ffn_pre && t->cfg.activation == ACT_RELU) {
      float p = trace_at(x, 0, i, j), dh = g->d[y->ffn_hidden][(size_t)i * x->cols + j];
      return scene_strf(s, "%s:\\ %s \\cdot 1[%s > 0] = %s", cell_ref(s, t, x, i, j), tex_num(s, dh),
                        tex_num(s, p), tex_num(s, v));
    }
    // per-head products: dA = dAV·Vᵀ (a row of dAV against a row of V), dQ = dS·K/√d_k
    int dy = -1, other = -1;
    double scale = 1;
    if (k == y->A) dy = y->AV, other = y->V;
    if (k == y->Q) dy = y->S, other = y->K, scale = t->no_scale ? 1 : 1 / sqrt((double)t->t[y->K].cols);
    if (dy >= 0) {
      const TraceTensor *D = &t->t[dy], *O = &t->t[other];
      const float *drow = view_grad_shown(t, g, dy, head) + (size_t)i * D->cols;
      const char *sum = "";
      for (int m = 0; m < D->cols && m < 3; m++)
        sum = scene_strf(s, "%s%s(%s)(%s)", sum, m ? " + " : "", tex_num(s, drow[m]),
                         tex_num(s, k == y->A ? trace_at(O, head_of(t, O, head), j, m)
                                              : trace_at(O, head_of(t, O, head), m, j)));
      return scene_strf(s, "%s:\\ %s\\left(%s%s\\right) = %s", cell_ref(s, t, x, i, j),
                        scale == 1 ? "" : scene_strf(s, "%s", tex_num(s, scale)), sum,
                        D->cols > 3 ? " + \\cdots" : "", tex_num(s, v));
    }
    if (k == y->S) {
      const float *A = t->t[y->A].data + (size_t)head * t->L * t->L, *dA = view_grad_shown(t, g, y->A, head);
      double r = 0;
      for (int m = 0; m < t->L; m++) r += (double)dA[i * t->L + m] * A[i * t->L + m];
      return scene_strf(s, "%s:\\ %s \\cdot (%s - %s) = %s", cell_ref(s, t, x, i, j),
                        tex_num(s, A[i * t->L + j]), tex_num(s, dA[i * t->L + j]), tex_subtrahend(s, r),
                        tex_num(s, v));
    }
  }
  if (k == t->logits && g->target[i] >= 0) {
    float p = t->t[t->pred].data[(size_t)i * t->cfg.V + j];
    return scene_strf(s, "%s:\\ \\frac{1}{%d}(%s - %d) = %s", cell_ref(s, t, x, i, j), g->n_targets,
                      tex_num(s, p), g->target[i] == j, tex_num(s, v));
  }
  return NULL;
}

// True when *eq reproduces, its result one digit fewer if need be (numfmt_settle; *eq then the
// settled copy).
static bool settled(Scene *s, const char **eq, int min_sig) {
  char b[1000];
  snprintf(b, sizeof b, "%s", *eq);
  if (!numfmt_settle(b, sizeof b, tex_sig, min_sig)) return false;
  *eq = scene_strf(s, "%s", b);
  return true;
}

const char *view_grad_worked(Scene *s, const Trace *t, const TraceGrad *g, int k, int head, int i, int j) {
  const char *eq = NULL;
  int min_sig; // more digits until the printed numbers give the result (numfmt.h's order of tries)
  for (int try = 0; numfmt_try(try, &tex_sig, &min_sig); try++) {
    eq = worked_once(s, t, g, k, head, i, j);
    if (!eq || settled(s, &eq, min_sig)) break;
  }
  tex_sig = NUMFMT_SIG;
  return eq;
}

const char *view_grad_softmax_worked(Scene *s, const Trace *t, const TraceGrad *g, int layer, int head,
                                     int row, int col) {
  const TraceLayer *y = &t->layers[layer];
  int L = t->L;
  size_t hs = (size_t)head * L * L;
  const float *A = t->t[y->A].data + hs, *dA = g->d[y->A] + hs, *dS = g->d[y->S] + hs;
  double r = 0;
  for (int k = 0; k < L; k++) r += (double)dA[row * L + k] * A[row * L + k];
  const char *cell = cell_ref(s, t, &t->t[y->S], row, col); // [the#2, by]: a repeated word with its #n
  const char *eq = NULL;
  int min_sig;
  for (int try = 0; numfmt_try(try, &tex_sig, &min_sig); try++) {
    eq = scene_strf(s, "\\frac{\\partial L}{\\partial S}%s = %s \\cdot \\left(%s - %s\\right) = %s", cell,
                    tex_num(s, A[row * L + col]), tex_num(s, dA[row * L + col]), tex_subtrahend(s, r),
                    tex_num(s, dS[row * L + col]));
    if (settled(s, &eq, min_sig)) break;
  }
  tex_sig = NUMFMT_SIG;
  return eq;
}

// A stage page's cells for a window of n tokens (the token axes of its matrix: n entries, others whole),
// the labels' room measured (twice: the labels decide the cells, the cells the labels).
typedef struct {
  const Trace *t;
  const TraceTensor *x;
  const Theme *th;
  float w, h, fs, u, label_w, top, cw, ch;
  int r0, c0, bi, bj;
  bool row_tok, col_tok; // the rows, the columns are the sentence's tokens (a window cuts them)
} StageFit;
static void stage_fit(StageFit *f, int n) {
  const TraceTensor *x = f->x;
  int rows = f->row_tok ? n : x->rows, cols = f->col_tok ? n : x->cols;
  float fs = f->fs, gap = fs * 2.0f;
  f->label_w = fs * 5.0f, f->top = fs * 8.2f;
  for (int pass = 0; pass < 2; pass++) {
    float avail_w = (f->w - 2 * fs - f->label_w - gap) / 2, avail_h = f->h - f->top - fs * 6.5f;
    f->cw = fminf(avail_w / cols, fs * 3.2f), f->ch = fminf(avail_h / rows, fs * 2.2f);
    f->label_w = words_axis(x->row_axis) ? word_labels(NULL, f->t, x->row_axis, f->r0, rows, false, 0, 0,
                                                       f->ch * rows, fs * 0.8f, f->u, f->bi, f->th)
                                         : fs;
    float above = words_axis(x->col_axis) ? word_labels(NULL, f->t, x->col_axis, f->c0, cols, true, 0, 0,
                                                        f->cw * cols, fs * 0.8f, f->u, f->bj, f->th)
                                          : 0;
    f->top = fs * 8.2f + fmaxf(0, above - fs * 0.4f);
  }
}
static bool stage_fits(void *ctx, int n) {
  StageFit *f = ctx;
  stage_fit(f, n);
  float least = GRAD_WORD * f->u * 1.15f;
  return (!f->row_tok || f->ch >= least) && (!f->col_tok || f->cw >= least);
}

void view_grad_stage(Scene *s, const Trace *t, const TraceGrad *g, int k, int head, int page, int pages,
                     const char *footer, const Theme *th, float w, float h, GradWindow *win) {
  const TraceTensor *x = &t->t[k];
  int rows = x->rows, cols = x->cols, hd = head_of(t, x, head);
  const float *d_all = view_grad_shown(t, g, k, head);
  float fs = h * 0.028f;
  scene_rect(s, 0, 0, w, h, th->bg);
  scene_text(s, FONT_SANS_BOLD, fs * 1.2f, fs, fs * 1.8f, th->text,
             scene_strf(s, "Backward %d/%d: %s%s%s", page, pages, // its title, layer and head from 1
                        view_tensor_title(t, x) ? view_tensor_title(t, x) : x->name,
                        x->layer >= 0 ? scene_strf(s, " — layer %d", x->layer + 1) : "",
                        !x->per_head          ? ""
                        : x->heads < t->cfg.H ? scene_strf(s, ", K/V head %d", hd + 1)
                                              : scene_strf(s, ", head %d", hd + 1)));
  tex_draw(s, view_grad_formula(t, k), fs * 1.1f, true, fs, fs * 4.4f, th->text);
  // the forward matrix and its gradient side by side; the worked cell: the largest |gradient|
  int bi = 0, bj = 0;
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++)
      if (fabsf(d_all[(size_t)i * cols + j]) > fabsf(d_all[(size_t)bi * cols + bj])) bi = i, bj = j;
  // the row labels' room and the column labels' (words: turned when they do not fit across) decide
  // the cells, and the cells the labels; a long sentence: a window of its tokens around the worked
  // cell, as many as can each be named (stage_fits)
  int L = t->L;
  StageFit f = {.t = t, .x = x, .th = th, .w = w, .h = h, .fs = fs, .u = h / 1080.0f, .bi = bi, .bj = bj};
  f.row_tok = x->row_axis == AXIS_TOKEN && rows == L, f.col_tok = x->col_axis == AXIS_TOKEN && cols == L;
  int i0 = 0, wn = L;
  if (f.row_tok || f.col_tok)
    grad_window(L, f.row_tok ? bi : bj, f.row_tok && f.col_tok ? bj : -1, win, stage_fits, &f, &i0, &wn);
  else if (win)
    win->first = 0, win->shown = 0, win->total = L;
  int r0 = f.row_tok ? i0 : 0, c0 = f.col_tok ? i0 : 0, all_cols = cols;
  rows = f.row_tok ? wn : rows, cols = f.col_tok ? wn : cols;
  f.r0 = r0, f.c0 = c0, f.bi = bi - r0, f.bj = bj - c0;
  stage_fit(&f, wn);
  float u = f.u, gap = fs * 2.0f, top = f.top, cw = f.cw, ch = f.ch, label_w = f.label_w;
  // forward values of the head shown and its gradient, copied row-major for the heatmaps (the
  // window's rows and columns; the colour scales those of the whole matrices)
  long n = (long)rows * cols;
  float *buf = malloc((size_t)n * sizeof *buf), *d = malloc((size_t)n * sizeof *d), lo = 0, hi = 0, m = 0;
  for (int i = 0; i < x->rows; i++)
    for (int j = 0; j < all_cols; j++) {
      float v = trace_at(x, hd, i, j);
      lo = fminf(lo, v), hi = fmaxf(hi, v), m = fmaxf(m, fabsf(d_all[(size_t)i * all_cols + j]));
    }
  for (int i = 0; i < rows && buf && d; i++)
    for (int j = 0; j < cols; j++)
      buf[i * cols + j] = trace_at(x, hd, r0 + i, c0 + j),
                     d[i * cols + j] = d_all[(size_t)(r0 + i) * all_cols + c0 + j];
  if (buf && d) {
    ColorScale sf = lo >= 0 && hi <= 1 && k != t->logits
                        ? scale_for(CMAP_VIRIDIS, 0, 1)
                        : scale_for(CMAP_DIVERGING, -fmaxf(-lo, hi), fmaxf(-lo, hi));
    heatmap_rc(s, t, buf, rows, cols, x->row_axis, x->col_axis, r0, c0, &sf, fs + label_w, top, cw, ch, true,
               bi - r0, bj - c0, th, x->symbol ? x->symbol : "Y", fs, u);
    ColorScale sd = scale_for(CMAP_DIVERGING, -m, m);
    const char *sym = x->symbol; // an expression ("yW_out + b_out") in brackets under the ∂
    heatmap_rc(
        s, t, d, rows, cols, x->row_axis, x->col_axis, r0, c0, &sd, fs + label_w + cols * cw + gap, top, cw,
        ch, false, bi - r0, bj - c0, th,
        scene_strf(s,
                   sym && strpbrk(sym, "+- ") ? "\\partial L / \\partial (%s)" : "\\partial L / \\partial %s",
                   sym ? sym : "Y"),
        fs, u);
  }
  free(buf), free(d);
  if (f.row_tok || f.col_tok)
    window_note(s, th, fs * 0.75f, fs + label_w, top + rows * ch + fs * 2.45f, i0, wn, L, win);
  const char *eq = view_grad_worked(s, t, g, k, hd, bi, bj);
  float ey = top + rows * ch + fs * (wn < L ? 3.9f : 3.4f); // (under the window's line)
  if (eq)
    tex_draw(s, eq, fs * 1.0f, true, fs, ey, th->text);
  else
    tex_draw(s,
             scene_strf(s, "\\text{the largest gradient: } %s = %s", cell_ref(s, t, x, bi, bj),
                        tex_num(s, d_all[(size_t)bi * all_cols + bj])),
             fs * 0.9f, true, fs, ey, th->muted);
  if (footer) scene_text(s, FONT_SANS, fs * 0.75f, fs, h - fs * 0.7f, th->muted, footer);
}
