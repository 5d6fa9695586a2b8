// view_kvcache.c -- the key/value cache of a causal model (view_inside.c's "kvcache" view).
//
// What generation keeps between steps (forward.h: KVCache): for every token and every layer, the
// row of K (after RoPE, as attention reads it) and the row of V, each H_kv heads × d_k numbers.
// Drawn as a table, a row per token and a pair of strips (K | V) per layer, each strip coloured
// like the stage's heatmaps (one scale for the whole cache), the heads' blocks framed in their
// colours. The last row is the one a generation step adds (kv_push); a prompt's rows come at
// once (kv_fill). Above the table, the size: 2 · N · L · H_kv · d_k floats of 4 bytes, at this
// length and at the model's longest. A long sentence shows a window of its rows (view.h), as many
// as have labels of VIEW_WINDOW_LABEL, ending at the last token unless moved (< >).
#include <math.h>
#include <stdio.h>

#include "view_internal.h"

// "2 048 bytes", "1.5 KiB", "12.0 MiB", "1.20 GiB".
static const char *bytes_text(Scene *s, double b) {
  if (b < 1024) return scene_strf(s, "%.0f bytes", b);
  if (b < 1024.0 * 1024) return scene_strf(s, "%.1f KiB", b / 1024);
  if (b < 1024.0 * 1024 * 1024) return scene_strf(s, "%.1f MiB", b / (1024.0 * 1024));
  return scene_strf(s, "%.2f GiB", b / (1024.0 * 1024 * 1024));
}

#define KV_LABEL VIEW_WINDOW_LABEL // the token labels' least size (17.3 px at 720): rows at least this

static float kv_fs(const ViewOptions *o, float h) { return fmaxf(view_text_size(o) * 1.25f, h / 34); }
// The table's top (from y) and the room its rows have: under the three lines of sizes, above the
// line that names the framed row.
static float kv_top(float fs) { return fs * 7.2f; }
static float kv_room(float fs, float h) { return h - kv_top(fs) - fs * 3.5f; }

int view_kvcache_rows(const ViewOptions *o, float h) {
  float fs = kv_fs(o, h), least = KV_LABEL * o->text_scale / 0.8f; // (a row's strip is 0.8 of it)
  int n = (int)(kv_room(fs, h) / least);
  return n < 8 ? 8 : n;
}

void view_kvcache(Scene *s, const Trace *t, const ViewOptions *o, int r0, int n, float x, float y, float w,
                  float h) {
  const Theme *th = o->theme;
  int N = t->cfg.n_layers, L = t->L, Hk = model_hkv(&t->cfg), dk = model_dk(&t->cfg), row_n = Hk * dk;
  float fs = kv_fs(o, h);
  double per_token = 2.0 * N * row_n * sizeof(float);
  int max_len = t->cfg.learned_pos && t->cfg.max_pos > 0 ? t->cfg.max_pos : 2048;
  scene_text(
      s, FONT_SANS, fs * 1.1f, x, y + fs * 1.4f, th->text,
      scene_strf(
          s,
          "kept per token and layer: its K row and its V row, H_kv = %d head%s × dₖ = %d = %d numbers each",
          Hk, Hk == 1 ? "" : "s", dk, row_n));
  scene_text(s, FONT_SANS_BOLD, fs, x, y + fs * 2.9f, th->accent,
             scene_strf(s, "2 (K, V) × %d layer%s × %d token%s × %d × 4 bytes = %s;  at %d tokens%s: %s", N,
                        N == 1 ? "" : "s", L, L == 1 ? "" : "s", row_n, bytes_text(s, per_token * L), max_len,
                        t->cfg.learned_pos && t->cfg.max_pos > 0
                            ? " (its longest)"
                            : " (an example: no position table limits it)",
                        bytes_text(s, per_token * max_len)));
  scene_text(s, FONT_SANS, fs * 0.85f, x, y + fs * 4.2f, th->muted,
             "a generation step computes one new row per layer (framed) and reads the kept ones: earlier "
             "tokens' K and V "
             "are never computed again");
  // one colour scale for every K and V value of the cache (a window of the rows keeps its colours)
  int r1 = r0 + n; // rows r0 .. r1 - 1 drawn: every token, or a window of a long sentence's
  float lo = 0, hi = 0;
  for (int l = 0; l < N; l++)
    for (int which = 0; which < 2; which++) {
      const TraceTensor *m = &t->t[which ? t->layers[l].V : t->layers[l].K];
      for (int g = 0; g < Hk; g++)
        for (int i = 0; i < L; i++)
          for (int j = 0; j < dk; j++) {
            float v = trace_at(m, g, i, j);
            lo = fminf(lo, v), hi = fmaxf(hi, v);
          }
    }
  ColorScale sc = scale_for(CMAP_DIVERGING, lo, hi);
  char wbuf[96];
  float label_w = 0, tf = fmaxf(fs, KV_LABEL * o->text_scale); // (the token labels: 17.3 px at 720 or more)
  for (int i = r0; i < r1; i++)
    label_w =
        fmaxf(label_w, text_width(FONT_SANS, tf, trace_axis_label(t, AXIS_TOKEN, i, wbuf, sizeof wbuf)));
  label_w = fminf(label_w + fs, w * 0.2f);
  float gy = y + kv_top(fs), gx = x + label_w, gap = fs * 0.9f, pair_gap = fs * 0.3f;
  float strip_w = (w - label_w - gap * (N - 1) - pair_gap * N) / (2.0f * N);
  float rowh = fminf(kv_room(fs, h) / (float)n, fs * 2.2f);
  for (int l = 0; l < N; l++) { // column headers: "layer 1" over its K | V pair
    float cx = gx + l * (2 * strip_w + pair_gap + gap);
    const char *lab = N > 8 ? scene_strf(s, "%d", l + 1) : scene_strf(s, "layer %d", l + 1);
    scene_text_aligned(s, FONT_SANS_BOLD, fs * 0.9f, cx + strip_w + pair_gap / 2, gy - fs * 1.5f, 0.5f,
                       th->text, lab);
    if (strip_w > fs * 1.2f) {
      scene_text_aligned(s, FONT_SANS, fs * 0.8f, cx + strip_w / 2, gy - fs * 0.35f, 0.5f, th->muted, "K");
      scene_text_aligned(s, FONT_SANS, fs * 0.8f, cx + strip_w * 1.5f + pair_gap, gy - fs * 0.35f, 0.5f,
                         th->muted, "V");
    }
  }
  for (int i = r0; i < r1; i++) {
    float ry = gy + (i - r0) * rowh, ch = rowh * 0.8f;
    bool added = i == L - 1;
    scene_text_aligned(s, added ? FONT_SANS_BOLD : FONT_SANS, fminf(tf, ch), gx - fs * 0.4f,
                       ry + ch * 0.5f + tf * 0.33f, 1.0f, added ? th->accent : th->text,
                       trace_axis_label(t, AXIS_TOKEN, i, wbuf, sizeof wbuf));
    for (int l = 0; l < N; l++)
      for (int which = 0; which < 2; which++) {
        const TraceTensor *m = &t->t[which ? t->layers[l].V : t->layers[l].K];
        float cx = gx + l * (2 * strip_w + pair_gap + gap) + which * (strip_w + pair_gap);
        uint32_t *c = scene_cells(s, cx, ry, strip_w, ch, 1, row_n);
        if (c)
          for (int g = 0; g < Hk; g++)
            for (int j = 0; j < dk; j++) c[g * dk + j] = scale_color(&sc, trace_at(m, g, i, j));
        for (int g = 0; Hk > 1 && g < Hk; g++) // each K/V head's block under its colour
          scene_rect(s, cx + strip_w * g / Hk, ry + ch, strip_w / Hk - 1, fmaxf(2, rowh * 0.08f),
                     theme_head(th, g));
      }
  }
  float last = gy + (L - 1 - r0) * rowh; // the row a generation step adds, framed (when shown)
  if (r1 == L) scene_frame(s, x, last - rowh * 0.08f, w, rowh * 0.96f, fmaxf(2, fs * 0.14f), th->accent);
  scene_text(s, FONT_SANS, fs * 0.85f, x, gy + n * rowh + fs * 1.3f, th->muted,
             scene_strf(s,
                        "%s the row of “%s”%s, what one step adds (kv_push); colours: one scale %.2f … "
                        "%.2f; under each strip, its K/V heads",
                        r1 == L ? "framed:" : "past this window:",
                        trace_axis_label(t, AXIS_TOKEN, L - 1, wbuf, sizeof wbuf),
                        r1 == L ? "" : scene_strf(s, " (token %d)", L), lo, hi));
}
