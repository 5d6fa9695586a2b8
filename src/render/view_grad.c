// view_grad.c -- see view_grad.h.
#include "view_grad.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tex.h"  // defines: tex_draw
#include "text.h" // defines: text_width

// One L×L heatmap at (x, y), `cell` pixels a cell: values v (row-major), coloured on sc; numbers
// when the cells are wide enough; tokens on the rows (left, when labels) and columns (above).
static void heatmap(Scene *s, const Trace *t, const float *v, const ColorScale *sc, float x, float y,
                    float cell, bool labels, int row, int col, const Theme *th, const char *symbol,
                    float fs) {
  int L = t->L;
  uint32_t *c = scene_cells(s, x, y, cell * L, cell * L, L, L);
  for (int i = 0; c && i < L; i++)
    for (int j = 0; j < L; j++) c[i * L + j] = scale_color(sc, v[i * L + j]);
  float nfs = cell * 0.17f;
  if (nfs >= 9)
    for (int i = 0; i < L; i++)
      for (int j = 0; j < L; j++) {
        float val = v[i * L + j];
        const char *txt =
            fabsf(val) < 5e-5f ? "0" : scene_strf(s, fabsf(val) >= 0.01f ? "%.2f" : "%.4f", val);
        scene_text_aligned(s, FONT_MONO, nfs, x + (j + 0.5f) * cell, y + (i + 0.62f) * cell, 0.5f,
                           cmap_ink_on(scale_color(sc, val)), txt);
      }
  scene_frame(s, x, y, cell * L, cell * L, 1.5f, th->frame);
  char buf[64];
  for (int k = 0; k < L; k++) {
    const char *w = trace_axis_label(t, AXIS_TOKEN, k, buf, sizeof buf);
    if (labels)
      scene_text_aligned(s, k == row ? FONT_SANS_BOLD : FONT_SANS, fs * 0.8f, x - fs * 0.4f,
                         y + (k + 0.62f) * cell, 1.0f, k == row ? th->text : th->muted, w);
    scene_text_aligned(s, k == col ? FONT_SANS_BOLD : FONT_SANS, fs * 0.7f, x + (k + 0.5f) * cell,
                       y - fs * 0.35f, 0.5f, k == col ? th->text : th->muted, w);
  }
  scene_frame(s, x - 2, y + row * cell - 2, cell * L + 4, cell + 4, 3, th->accent); // the query row
  scene_frame(s, x + col * cell, y + row * cell, cell, cell, 3, th->highlight);     // the worked cell
  tex_draw(s, symbol, fs * 1.3f, false, x + cell * L / 2 - fs * 1.2f, y - fs * 1.6f, th->text);
  // the colour bar under the matrix, its ends labelled
  float bw = cell * L, by = y + cell * L + fs * 0.5f;
  uint32_t *bar = scene_cells(s, x, by, bw, fs * 0.45f, 1, 64);
  for (int j = 0; bar && j < 64; j++) bar[j] = cmap_color(sc->map, (j + 0.5f) / 64);
  scene_text_aligned(s, FONT_SANS, fs * 0.65f, x, by + fs * 1.2f, 0, th->muted,
                     scene_strf(s, "%.3g", sc->lo));
  if (sc->map == CMAP_DIVERGING)
    scene_text_aligned(s, FONT_SANS, fs * 0.65f, x + bw / 2, by + fs * 1.2f, 0.5f, th->muted, "0");
  scene_text_aligned(s, FONT_SANS, fs * 0.65f, x + bw, by + fs * 1.2f, 1, th->muted,
                     scene_strf(s, "%.3g", sc->hi));
}

// v in TeX with 4 significant digits: 0.0123, or 4.399 \cdot 10^{-9} for very small or large values.
static const char *tex_num(Scene *s, double v) {
  if (v == 0 || (fabs(v) >= 1e-4 && fabs(v) < 1e5)) return scene_strf(s, "%.4g", v);
  int e = (int)floor(log10(fabs(v)));
  return scene_strf(s, "%.4g \\cdot 10^{%d}", v / pow(10, e), e);
}

static ColorScale centred(const float *v, long n) {
  float m = 0;
  for (long k = 0; k < n; k++) m = fmaxf(m, fabsf(v[k]));
  return scale_for(CMAP_DIVERGING, -m, m);
}

void view_grad_softmax(Scene *s, const Trace *t, const TraceGrad *g, int layer, int head, int row, int col,
                       const char *footer, const Theme *th, float w, float h) {
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
  // three matrices side by side, with room for the row labels on the left
  float label_w = fs * 5.5f, gap = fs * 2.2f, top = fs * 9.6f;
  float cell = fminf((w - 2 * fs - label_w - 2 * gap) / (3.0f * L), (h - top - fs * 9.5f) / L);
  float mw = cell * L, x0 = fs + label_w;
  ColorScale sa = scale_for(CMAP_VIRIDIS, 0, 1), sda = centred(dA, (long)L * L),
             sds = centred(dS, (long)L * L);
  heatmap(s, t, A, &sa, x0, top, cell, true, row, col, th, "A_h", fs);
  heatmap(s, t, dA, &sda, x0 + mw + gap, top, cell, false, row, col, th, "\\partial L / \\partial A_h", fs);
  heatmap(s, t, dS, &sds, x0 + 2 * (mw + gap), top, cell, false, row, col, th, "\\partial L / \\partial S_h",
          fs);
  // the worked equation of cell (row, col)
  double r = 0;
  for (int k = 0; k < L; k++) r += (double)dA[row * L + k] * A[row * L + k];
  char wi[64], wj[64];
  trace_axis_label(t, AXIS_TOKEN, row, wi, sizeof wi);
  trace_axis_label(t, AXIS_TOKEN, col, wj, sizeof wj);
  float ey = top + mw + fs * 4.6f;
  tex_draw(s,
           scene_strf(s,
                      "\\frac{\\partial L}{\\partial S}[\\text{%s}, \\text{%s}] = %s \\cdot \\left(%s - "
                      "(%s)\\right) = %s",
                      wi, wj, tex_num(s, A[row * L + col]), tex_num(s, dA[row * L + col]), tex_num(s, r),
                      tex_num(s, dS[row * L + col])),
           fs * 1.15f, true, fs, ey, th->text);
  scene_text(s, FONT_SANS, fs * 0.8f, fs, ey + fs * 2.0f, th->muted,
             scene_strf(s,
                        "the sum over the row: %.4g — a weight near 0, or a row near one-hot, passes almost "
                        "nothing back",
                        r));
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
             "size of dL/dS against d_k (random q, k)");
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
                       v ? "without 1/sqrt(d_k)" : "with 1/sqrt(d_k)");
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
