// colormap.h -- colour maps, value scales and the themes of the pictures.
//
// A ColorScale maps a value to a colour: a diverging map centred on 0 (blue negative, white 0,
// red positive) for signed matrices, viridis or cividis (colour-blind safe) for probabilities
// and other non-negative values, grey for one-hot. Masked entries (-inf) are not coloured by
// the scale: views hatch them. A Theme holds the colours of everything else: light (high
// contrast, for projectors) and dark, and one colour per attention head.
//
//     ColorScale s = scale_for(CMAP_DIVERGING, lo, hi);   // symmetric around 0
//     uint32_t c = scale_color(&s, 0.7f);
//     const Theme *t = theme_get(THEME_LIGHT);
#ifndef SF_COLORMAP_H
#define SF_COLORMAP_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
  CMAP_AUTO,      // choose per matrix kind (views: diverging, viridis or grey)
  CMAP_DIVERGING, // RdBu: blue < 0 < red, white at 0
  CMAP_VIRIDIS,
  CMAP_CIVIDIS,
  CMAP_GREY, // white 0 → black 1
  CMAP_COUNT
} Colormap;

typedef struct {
  Colormap map;
  float lo, hi; // values mapped to the ends (diverging: -m .. m)
} ColorScale;

const char *cmap_name(Colormap m);        // "diverging (RdBu)", "viridis", ...
uint32_t cmap_color(Colormap m, float t); // t in [0, 1], clamped
// A scale over [lo, hi]; diverging scales become symmetric around 0; a flat range is widened.
ColorScale scale_for(Colormap m, float lo, float hi);
uint32_t scale_color(const ColorScale *s, float v);
float scale_t(const ColorScale *s, float v); // position of v on the bar, 0..1
// Black or white, whichever reads better on background c (for numbers printed in cells).
uint32_t cmap_ink_on(uint32_t c);

typedef enum { THEME_LIGHT, THEME_DARK, THEME_COUNT } ThemeId;

typedef struct {
  ThemeId id;
  const char *name;
  uint32_t bg, panel, text, muted, grid, frame, accent, highlight, mask_bg, mask_line, warn, unk;
  uint32_t heads[12]; // colour of head h (h % 12)
} Theme;

const Theme *theme_get(ThemeId id);
uint32_t theme_head(const Theme *t, int h);

#endif
