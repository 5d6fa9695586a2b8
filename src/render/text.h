// text.h -- fonts and glyphs: the one module that talks to SDL2_ttf (no window, no renderer).
//
// text_init finds the faces through fontconfig: DejaVu Sans / Sans Mono (fonts-dejavu-core) for
// the interface and the numbers in cells, Latin Modern Math and Latin Modern Roman
// (fonts-lmodern) for notation; without fonts-lmodern the notation falls back to DejaVu Serif
// (text_warning says so); without DejaVu, text_init fails with a message naming the package.
// A character a face lacks (Chinese in DejaVu Sans, Cyrillic in Latin Modern) comes from a
// fallback font fontconfig finds for it -- of the face's kind, sans-serif, serif or monospace;
// on Debian fonts-dejavu-core covers Latin, Greek and Cyrillic, fonts-droid-fallback (or
// fonts-noto-cjk) Chinese, Japanese and Korean -- and a string of several fonts is drawn piece by
// piece on one baseline. The web page has no fontconfig: its fallback is Droid Sans Fallback when
// scripts/web could put it in the page's data.
// Sizes are pixels (fonts are opened at 72 dpi, so 1 pt = 1 px). Coordinates: x is the left of
// the pen, y the baseline. Strings are UTF-8.
//
// Rasterized strings are cached (face, size, text) → 8-bit coverage mask, so redrawing a frame
// costs blending only. All functions are safe to call from several threads (one lock).
// text_shutdown frees fonts and caches.
//
//     Err err = {0};
//     if (!text_init(&err)) { fprintf(stderr, "%s\n", err.msg); return 2; }
//     float w = text_width(FONT_SANS, 18, "cat");
//     text_draw(canvas, FONT_SANS, 18, x, baseline, SF_RGBA(0, 0, 0, 255), "cat");
#ifndef SF_TEXT_H
#define SF_TEXT_H

#include <stdbool.h>
#include <stdint.h>

#include "canvas.h" // defines: Canvas
#include "err.h"    // defines: Err

typedef enum {
  FONT_SANS,         // DejaVu Sans: labels, titles, narration
  FONT_SANS_BOLD,    // DejaVu Sans Bold
  FONT_SANS_ITALIC,  // DejaVu Sans Oblique: emphasis in narration
  FONT_MONO,         // DejaVu Sans Mono: numbers in cells, code
  FONT_MATH,         // Latin Modern Math: symbols, math italic/bold letters, operators
  FONT_SERIF,        // Latin Modern Roman 10 regular: \mathrm, \text, \operatorname
  FONT_SERIF_ITALIC, // Latin Modern Roman 10 italic
  FONT_SERIF_BOLD,   // Latin Modern Roman 10 bold: \mathbf
  FONT_COUNT
} FontFace;

typedef struct {
  float advance;                // pen advance in pixels
  float minx, maxx, miny, maxy; // ink box relative to the pen on the baseline (y up)
} GlyphInfo;

bool text_init(Err *err);
void text_shutdown(void);
const char *text_warning(void); // a missing optional font, or NULL

float text_width(FontFace f, float size, const char *utf8);
float text_ascent(FontFace f, float size);  // above the baseline, positive
float text_descent(FontFace f, float size); // below the baseline, positive
float text_line_height(FontFace f, float size);
bool text_glyph(FontFace f, float size, uint32_t codepoint, GlyphInfo *g); // false if absent
// True when the character is drawn from a real glyph -- the face's own or a fallback's -- and not
// as the missing-glyph box (TTF_GlyphIsProvided32 through the fallback chain).
bool text_provided(FontFace f, float size, uint32_t codepoint);
// The family name SVG files use for a face ("DejaVu Sans"), and its style attributes.
const char *text_svg_family(FontFace f);
const char *text_svg_style(FontFace f); // e.g. "font-weight:bold", or ""

void text_draw(Canvas c, FontFace f, float size, float x, float y, uint32_t color, const char *utf8);

// Decodes one UTF-8 code point at *s and advances *s; invalid bytes give U+FFFD.
uint32_t text_utf8_next(const char **s);

#endif
