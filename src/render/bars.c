// bars.c -- horizontal probability bars (bars.h).
#include "bars.h"

#include <math.h>

#include "numfmt.h" // defines: numfmt_prob

// Bar i's probability as a percentage for the back row (numfmt_prob): "100 %" only for a certain
// one; a p that rounds to 1 beside another candidate above 0 is "> 99.9 %".
static const char *percent(Scene *s, const Bar *b, int n, int i) {
  bool others = b[i].p < 1.0f;
  for (int k = 0; k < n; k++)
    if (k != i && b[k].p > 0) others = true;
  char buf[32];
  return scene_strf(s, "%s", numfmt_prob(buf, sizeof buf, b[i].p, others, true));
}

float bars_draw(Scene *s, const Theme *th, const Bar *b, int n, float x, float y, float w, float h,
                float max_fs) {
  if (n <= 0) return 0;
  float row = h / (float)n, fs = fminf(row * 0.66f, max_fs);
  float name_w = 0;
  for (int i = 0; i < n; i++) name_w = fmaxf(name_w, text_width(FONT_SANS_BOLD, fs, b[i].name));
  name_w = fminf(name_w + fs, w * 0.35f);
  float pct_w =
      fmaxf(text_width(FONT_SANS_BOLD, fs, "100.0 %"), text_width(FONT_SANS_BOLD, fs, "0.0020 %")) + fs;
  float bar_x = x + name_w, bar_w = fmaxf(1, w - name_w - pct_w);
  for (int i = 0; i < n; i++) {
    float ry = y + i * row, v = fmaxf(0.0f, fminf(1.0f, b[i].p));
    uint32_t ink = b[i].strong ? th->text : th->muted;
    FontFace f = b[i].strong ? FONT_SANS_BOLD : FONT_SANS;
    scene_text_aligned(s, f, fs, bar_x - fs * 0.5f, ry + row * 0.5f + fs * 0.36f, 1.0f, ink, b[i].name);
    scene_rect(s, bar_x, ry + row * 0.16f, bar_w, row * 0.68f, th->panel);
    scene_rect(s, bar_x, ry + row * 0.16f, bar_w * v, row * 0.68f, b[i].strong ? th->accent : th->muted);
    scene_frame(s, bar_x, ry + row * 0.16f, bar_w, row * 0.68f, 1.5f, th->frame);
    scene_text_aligned(s, FONT_SANS_BOLD, fs, bar_x + bar_w + fs * 0.4f, ry + row * 0.5f + fs * 0.36f, 0.0f,
                       ink, percent(s, b, n, i));
  }
  return fs;
}
