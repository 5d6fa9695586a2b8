// sampling_chart.c -- the sampling picture on the prediction (sampling_chart.h).
#include "sampling_chart.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "numfmt.h" // defines: numfmt_prob
#include "rng.h"    // defines: rng_uniform
#include "text.h"   // defines: text_width

#define SC_ROWS 6 // words shown

// "12.3 %" for a bar's label.
static const char *pct(Scene *s, float p) {
  char buf[32];
  return scene_strf(s, "%s", numfmt_prob(buf, sizeof buf, p, p < 1, true));
}

float sampling_chart_draw(Scene *s, const Theme *th, const Trace *t, int row, const Sampling *smp,
                          uint64_t rng, float x, float y, float w, float h, float max_fs) {
  if (t->logits < 0) return 0;
  const TraceTensor *zt = &t->t[t->logits];
  int V = zt->cols;
  const float *z = zt->data + (size_t)row * zt->stride;
  float *p = malloc(sizeof(float) * (size_t)V), *q = malloc(sizeof(float) * (size_t)V);
  bool *kept = malloc(sizeof(bool) * (size_t)V);
  if (!p || !q || !kept) {
    free(p), free(q), free(kept);
    return 0;
  }
  SamplingPicture pic = {p, q, kept, 0, 0, 0};
  sampling_apply(z, V, smp, &pic);
  uint64_t r1 = rng, r2 = rng; // the draw R (or the generation step) makes: u, then the id
  float u = rng_uniform(&r1);
  int drawn = sampling_draw(q, V, &r2);
  // the SC_ROWS most probable ids, best first (ties: the lower id)
  int top[SC_ROWS], n = 0;
  for (int id = 0; id < V; id++) {
    int k = n < SC_ROWS ? n++ : SC_ROWS;
    while (k > 0 && p[id] > p[top[k - 1]]) {
      if (k < SC_ROWS) top[k] = top[k - 1];
      k--;
    }
    if (k < SC_ROWS) top[k] = id;
  }
  // the caption's two lines: the settings, then what they kept and drew
  char kbuf[32], pbuf[32], wbuf[96];
  snprintf(kbuf, sizeof kbuf, smp->top_k > 0 ? "top-k %d" : "top-k off", smp->top_k);
  snprintf(pbuf, sizeof pbuf, smp->top_p < 1 ? "top-p %g" : "top-p off", smp->top_p);
  const char *word = trace_axis_label(t, zt->col_axis, drawn, wbuf, sizeof wbuf);
  const char *l1 = scene_strf(s, "sampling: softmax(z / %g) · %s · %s · seed %llu", smp->temperature, kbuf,
                              pbuf, (unsigned long long)smp->seed);
  const char *l2 =
      scene_strf(s, "kept %d of %d · u = %.3f → drew “%s” (%s)", pic.n_kept, V, u, word, pct(s, q[drawn]));
  float cf = fminf(max_fs * 0.7f, h * 0.075f);
  float lw = fmaxf(text_width(FONT_SANS_BOLD, cf, l1), text_width(FONT_SANS_BOLD, cf, l2));
  if (lw > w) cf *= w / lw;
  scene_text(s, FONT_SANS_BOLD, cf, x, y + cf, th->text, l1);
  scene_text(s, FONT_SANS_BOLD, cf, x, y + cf * 2.3f, th->accent, l2);
  float by = y + cf * 3.0f, bh = h - cf * 3.0f, rh = bh / (float)n;
  float fs = fminf(rh * 0.58f, max_fs * 0.8f);
  float name_w = 0;
  for (int i = 0; i < n; i++) {
    char buf[96];
    name_w = fmaxf(
        name_w, text_width(FONT_SANS_BOLD, fs, trace_axis_label(t, zt->col_axis, top[i], buf, sizeof buf)));
  }
  name_w = fminf(name_w + fs, w * 0.3f);
  float lab_w = text_width(FONT_SANS_BOLD, fs, "100.0 % → 100.0 %  ◀ drawn");
  float bar_x = x + name_w, bar_w = fmaxf(1, w - name_w - lab_w - fs * 0.5f);
  for (int i = 0; i < n; i++) {
    int id = top[i];
    char buf[96];
    const char *name = trace_axis_label(t, zt->col_axis, id, buf, sizeof buf);
    float ry = by + i * rh, mid = ry + rh * 0.5f;
    bool cut = !kept[id], is_drawn = id == drawn;
    uint32_t ink = cut ? th->muted : th->text;
    float nw = text_width(is_drawn ? FONT_SANS_BOLD : FONT_SANS, fs, name);
    scene_text_aligned(s, is_drawn ? FONT_SANS_BOLD : FONT_SANS, fs, bar_x - fs * 0.5f, mid + fs * 0.36f,
                       1.0f, ink, name);
    if (cut) // struck through
      scene_line(s, bar_x - fs * 0.5f - fminf(nw, name_w - fs), mid, bar_x - fs * 0.5f, mid,
                 fmaxf(1.5f, fs * 0.1f), th->muted);
    // the original probability: a thin bar on top; the renormalized one: a bold bar under it
    float y1 = ry + rh * 0.12f, h1 = rh * 0.28f, y2 = ry + rh * 0.44f, h2 = rh * 0.44f;
    scene_rect(s, bar_x, y1, bar_w, h1, th->panel);
    scene_rect(s, bar_x, y1, bar_w * fminf(1, p[id]), h1, th->muted);
    if (cut)
      scene_hatch(s, bar_x, y2, bar_w, h2, th->panel, th->muted);
    else {
      scene_rect(s, bar_x, y2, bar_w, h2, th->panel);
      scene_rect(s, bar_x, y2, bar_w * fminf(1, q[id]), h2, is_drawn ? th->accent : th->text);
    }
    scene_frame(s, bar_x, y1, bar_w, y2 + h2 - y1, 1.5f, th->frame);
    const char *lab =
        cut ? scene_strf(s, "%s  cut by %s", pct(s, p[id]), z[id] < pic.kth ? "top-k" : "top-p")
            : scene_strf(s, "%s → %s%s", pct(s, p[id]), pct(s, q[id]), is_drawn ? "  ◀ drawn" : "");
    scene_text(s, is_drawn ? FONT_SANS_BOLD : FONT_SANS, fs, bar_x + bar_w + fs * 0.4f, mid + fs * 0.36f,
               is_drawn ? th->accent : ink, lab);
  }
  free(p), free(q), free(kept);
  return fs;
}
