// bars.c -- horizontal probability bars (bars.h).
#include "bars.h"

#include <math.h>

// p as a percentage for the back row: 0.1 % and up with one decimal; below, two significant digits
// down to 0.001 % (a flat prediction over GPT-2's 50 257 tokens is 0.0020 % each, not "0.0 %").
static const char *percent(Scene *s, float p) {
  double x = 100.0 * p;
  if (x >= 0.0995 || x <= 0) return scene_strf(s, "%.1f %%", x);
  if (x < 0.001) return scene_strf(s, "< 0.001 %%");
  int decimals = 1 - (int)floor(log10(x));
  return scene_strf(s, "%.*f %%", decimals, x);
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
                       ink, percent(s, b[i].p));
  }
  return fs;
}
