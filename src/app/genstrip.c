// genstrip.c -- the generation strip (genstrip.h).
#include "genstrip.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "numfmt.h" // defines: numfmt_prob
#include "text.h"   // defines: text_width
#include "utf8.h"   // defines: utf8_floor

float genstrip_height(float h, float text_scale) { return 160.0f * h / 1080.0f * text_scale; }

bool genstrip_hides(const Lesson *l, int step, int k, bool hidden_now) {
  if (!l) return false;
  for (int i = 0; i < l->n_steps; i++) {
    const LessonStep *ls = &l->steps[i];
    bool asks = ls->has_stage && ls->gen == k && (ls->stage == STEP_DEC_PREDICT || ls->stage == STEP_PREDICT);
    if (asks) return step < i || (step == i && hidden_now);
  }
  return false;
}

void genstrip_draw(Scene *s, const Generation *g, int k, const Theme *th, float W, float H, float text_scale,
                   bool keys_hint, bool hide_next) {
  float us = H / 1080.0f * text_scale, R = genstrip_height(H, text_scale);
  float y0 = H - 38 * us - R, pad = 14 * us;
  const GenStep *st = &g->steps[k];
  scene_rect(s, 0, y0, W, R, th->panel);
  scene_rect(s, 0, y0, W, 2 * us, th->frame);
  char buf[160];
  // left: the sentence written so far, the word this step writes marked
  float fs = 34 * us, tf = 22 * us, x = 24 * us, right = W * 0.52f, ly = y0 + pad + tf;
  snprintf(buf, sizeof buf, "generation step %d of %d · written so far", k + 1, g->n_steps);
  scene_text(s, FONT_SANS_BOLD, tf, x, ly, th->muted, buf);
  float wy = y0 + R * 0.62f;
  int first = g->seq2seq ? 0 : st->trace->L - k; // a causal model: the generated words only
  const Tokens *in = g->seq2seq ? &st->trace->dec_tokens : &st->trace->tokens;
  if (first < 0) first = 0;
  // the words that fit, counted from the end: the start gives way to "…"
  float room = right - x - 20 * us, used = 0, gap = 16 * us;
  int from = in->n;
  used = text_width(FONT_SANS_BOLD, fs, gen_word(g, st->token));
  while (from > first) {
    float ww = text_width(FONT_SANS_BOLD, fs, gen_word(g, in->ids[from - 1])) + gap;
    if (used + ww + text_width(FONT_SANS_BOLD, fs, "… ") > room) break;
    used += ww, from--;
  }
  if (from > first) {
    scene_text(s, FONT_SANS_BOLD, fs, x, wy, th->muted, "…");
    x += text_width(FONT_SANS_BOLD, fs, "… ");
  }
  for (int i = from; i <= in->n; i++) {
    bool now = i == in->n;
    const char *w = now && hide_next ? "?" : gen_word(g, now ? st->token : in->ids[i]);
    float ww = text_width(FONT_SANS_BOLD, fs, w);
    if (now) {
      scene_rect(s, x - 6 * us, wy - fs * 0.95f, ww + 12 * us, fs * 1.3f, th->highlight);
      scene_text(s, FONT_SANS_BOLD, fs, x, wy, SF_RGBA(0, 0, 0, 255), w);
    } else
      scene_text(s, FONT_SANS_BOLD, fs, x, wy, i == 0 && g->seq2seq ? th->muted : th->text, w);
    x += ww + gap;
  }
  if (keys_hint)
    scene_text(s, FONT_SANS, tf * 0.9f, 24 * us, y0 + R - pad * 0.7f, th->muted,
               ", and . : previous / next generation step");
  // right: the five most probable next words, a bar each (the full height is probability 1)
  float bx = right + 10 * us, bw = (W - bx - 24 * us) / GEN_TOP;
  if (hide_next) { // the lesson asks for it later: no word, no probability
    scene_text(s, FONT_SANS_BOLD, tf, bx, ly, th->muted, "the next word: guess first");
    scene_text(s, FONT_SANS_BOLD, tf * 2.4f, bx, ly + tf * 3.4f, th->muted, "?");
    return;
  }
  scene_text(s, FONT_SANS_BOLD, tf, bx, ly, th->muted, "the next word: the five most probable");
  // each candidate: its word, then a bar as long as its probability (the column's width is 1)
  float wl = ly + tf * 2.3f, by = wl + tf * 0.7f, bh = 20 * us;
  for (int r = 0; r < st->n_top; r++) {
    float cx = bx + r * bw, p = st->top_p[r], track = bw - 18 * us;
    // the word whole, smaller when its column is too narrow ("apporten"), cut with "…" only
    // below 0.8 of the size
    char fit[96];
    snprintf(fit, sizeof fit, "%s", gen_word(g, st->top[r]));
    // (stepped down and measured again: a width does not scale exactly with the size, and a word
    // that misses by a pixel would lose its end, "apporte…" reading as another word)
    float wf = tf * 1.3f, ww = text_width(FONT_SANS_BOLD, wf, fit);
    if (ww > track) wf = fmaxf(tf * 0.8f, wf * track / ww);
    while (wf > tf * 0.8f && text_width(FONT_SANS_BOLD, wf, fit) > track) wf = fmaxf(tf * 0.8f, wf * 0.97f);
    for (size_t n = strlen(fit); n > 1 && text_width(FONT_SANS_BOLD, wf, fit) > track;) {
      n = utf8_floor(fit, n - 1);
      snprintf(fit + n, sizeof fit - n, "…");
    }
    scene_text(s, r == 0 ? FONT_SANS_BOLD : FONT_SANS, wf, cx, wl, th->text, fit);
    scene_frame(s, cx, by, track, bh, 1, th->frame);
    scene_rect(s, cx, by, fmaxf(2 * us, track * p), bh, r == 0 ? th->accent : th->muted);
    bool others = p < 1.0f; // never "100 %" beside another candidate above 0
    for (int o = 0; o < st->n_top; o++) others |= o != r && st->top_p[o] > 0;
    // a percentage, as the prediction's bars above write the same number ("> 99.9 %", "0.0033 %")
    numfmt_prob(buf, sizeof buf, p, others, true);
    scene_text(s, FONT_SANS_BOLD, tf, cx, by + bh + tf * 1.1f, th->text, buf);
  }
}
