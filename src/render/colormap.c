// colormap.c -- see colormap.h. The tables are in colormap_data.c (generated).
#include "colormap.h"

#include <math.h>
#include <pthread.h>

#include "canvas.h" // defines: SF_RGBA

extern const uint8_t colormap_viridis[256][3], colormap_cividis[256][3], colormap_diverging[256][3];

const char *cmap_name(Colormap m) {
  switch (m) {
  case CMAP_AUTO: return "automatic";
  case CMAP_DIVERGING: return "diverging (RdBu)";
  case CMAP_VIRIDIS: return "viridis";
  case CMAP_CIVIDIS: return "cividis";
  case CMAP_GREY: return "grey";
  default: return "?";
  }
}

static uint32_t lut(const uint8_t (*t)[3], float x) {
  // linear interpolation between the two nearest entries
  float f = x * 255.0f;
  int k = (int)f;
  if (k >= 255) return SF_RGBA(t[255][0], t[255][1], t[255][2], 255);
  float w = f - (float)k;
  int r = (int)lrintf(t[k][0] + (t[k + 1][0] - t[k][0]) * w);
  int g = (int)lrintf(t[k][1] + (t[k + 1][1] - t[k][1]) * w);
  int b = (int)lrintf(t[k][2] + (t[k + 1][2] - t[k][2]) * w);
  return SF_RGBA(r, g, b, 255);
}

// Every map sampled at 1024 points, interpolated once: a colour is then one table read.
#define TABLE 1024
static uint32_t tables[CMAP_COUNT][TABLE];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static uint32_t sample(Colormap m, float t) {
  switch (m) {
  case CMAP_VIRIDIS: return lut(colormap_viridis, t);
  case CMAP_CIVIDIS: return lut(colormap_cividis, t);
  case CMAP_GREY: {
    int v = (int)lrintf(255.0f * (1.0f - t));
    return SF_RGBA(v, v, v, 255);
  }
  default: return lut(colormap_diverging, t);
  }
}

static void fill_tables(void) {
  for (int m = 0; m < CMAP_COUNT; m++)
    for (int k = 0; k < TABLE; k++) tables[m][k] = sample((Colormap)m, (float)k / (TABLE - 1));
}

uint32_t cmap_color(Colormap m, float t) {
  if (!(t >= 0.0f)) t = 0.0f; // also NaN
  if (t > 1.0f) t = 1.0f;
  pthread_once(&tables_once, fill_tables);
  return tables[m < CMAP_COUNT ? m : CMAP_DIVERGING][(int)(t * (TABLE - 1) + 0.5f)];
}

ColorScale scale_for(Colormap m, float lo, float hi) {
  if (!isfinite(lo)) lo = 0;
  if (!isfinite(hi)) hi = 0;
  if (m == CMAP_DIVERGING || m == CMAP_AUTO) {
    float a = fmaxf(fabsf(lo), fabsf(hi));
    if (a == 0) a = 1;
    return (ColorScale){CMAP_DIVERGING, -a, a};
  }
  if (hi - lo < 1e-12f) hi = lo + 1.0f;
  return (ColorScale){m, lo, hi};
}

float scale_t(const ColorScale *s, float v) {
  // in double: hi - lo overflows a float when the values reach ±1.7e38 (an overflowing model)
  double t = ((double)v - s->lo) / ((double)s->hi - s->lo);
  return t < 0 ? 0 : t > 1 ? 1 : (float)t;
}

uint32_t scale_color(const ColorScale *s, float v) { return cmap_color(s->map, scale_t(s, v)); }

uint32_t cmap_ink_on(uint32_t c) {
  // relative luminance (sRGB, approximate gamma 2.2)
  float r = powf(SF_R(c) / 255.0f, 2.2f), g = powf(SF_G(c) / 255.0f, 2.2f), b = powf(SF_B(c) / 255.0f, 2.2f);
  float y = 0.2126f * r + 0.7152f * g + 0.0722f * b;
  return y > 0.2f ? SF_RGBA(0, 0, 0, 255) : SF_RGBA(255, 255, 255, 255);
}

// Head colours: Okabe-Ito (colour-blind safe) first, then further distinct hues.
#define HEADS_LIGHT                                                                                          \
  {                                                                                                          \
    SF_RGBA(0, 114, 178, 255), SF_RGBA(213, 94, 0, 255), SF_RGBA(0, 158, 115, 255),                          \
        SF_RGBA(204, 121, 167, 255), SF_RGBA(230, 159, 0, 255), SF_RGBA(86, 180, 233, 255),                  \
        SF_RGBA(120, 94, 240, 255), SF_RGBA(160, 120, 40, 255), SF_RGBA(90, 90, 90, 255),                    \
        SF_RGBA(0, 110, 90, 255), SF_RGBA(180, 40, 90, 255), SF_RGBA(60, 60, 160, 255)                       \
  }
#define HEADS_DARK                                                                                           \
  {                                                                                                          \
    SF_RGBA(86, 180, 233, 255), SF_RGBA(240, 130, 60, 255), SF_RGBA(40, 200, 150, 255),                      \
        SF_RGBA(230, 150, 200, 255), SF_RGBA(240, 190, 60, 255), SF_RGBA(150, 210, 250, 255),                \
        SF_RGBA(170, 150, 255, 255), SF_RGBA(210, 170, 90, 255), SF_RGBA(190, 190, 190, 255),                \
        SF_RGBA(60, 190, 160, 255), SF_RGBA(240, 100, 150, 255), SF_RGBA(140, 140, 240, 255)                 \
  }

static const Theme THEMES[THEME_COUNT] = {
    {THEME_LIGHT, "light", SF_RGBA(255, 255, 255, 255), SF_RGBA(244, 245, 247, 255), SF_RGBA(0, 0, 0, 255),
     SF_RGBA(80, 80, 90, 255), SF_RGBA(200, 200, 205, 255), SF_RGBA(40, 40, 50, 255),
     SF_RGBA(0, 90, 200, 255), SF_RGBA(255, 170, 0, 255), SF_RGBA(236, 236, 236, 255),
     SF_RGBA(150, 150, 150, 255), SF_RGBA(200, 0, 0, 255), SF_RGBA(190, 40, 150, 255), HEADS_LIGHT},
    {THEME_DARK, "dark", SF_RGBA(24, 26, 32, 255), SF_RGBA(36, 39, 48, 255), SF_RGBA(235, 235, 240, 255),
     SF_RGBA(160, 165, 180, 255), SF_RGBA(70, 74, 86, 255), SF_RGBA(200, 200, 210, 255),
     SF_RGBA(100, 170, 255, 255), SF_RGBA(255, 190, 40, 255), SF_RGBA(50, 52, 60, 255),
     SF_RGBA(120, 124, 136, 255), SF_RGBA(255, 90, 90, 255), SF_RGBA(240, 110, 210, 255), HEADS_DARK},
};

const Theme *theme_get(ThemeId id) { return &THEMES[id < THEME_COUNT ? id : 0]; }

uint32_t theme_head(const Theme *t, int h) { return t->heads[(h < 0 ? 0 : h) % 12]; }
