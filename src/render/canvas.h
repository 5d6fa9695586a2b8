// canvas.h -- a plain RGBA pixel buffer and the primitives that fill it.
//
// Pixels are uint32_t holding the bytes R, G, B, A in that memory order (SF_RGBA packs them),
// which is SDL_PIXELFORMAT_RGBA32 and libpng's RGBA: the window uploads and the PNG writer
// stores the buffer without conversion. Pixel (x, y) is px[y*stride + x]; x grows right,
// y grows down, coordinates are pixels. Drawing clips to the canvas and blends by alpha.
// The canvas owns px when made by canvas_new; canvas_sub makes a non-owning window into it.
// Nothing here knows about windows or fonts.
//
//     Canvas c = canvas_new(1920, 1080);
//     canvas_clear(c, SF_RGBA(255, 255, 255, 255));
//     canvas_fill_rect(c, 10, 10, 100, 50, SF_RGBA(200, 0, 0, 255));
//     canvas_free(&c);
#ifndef SF_CANVAS_H
#define SF_CANVAS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
  uint32_t *px;
  int w, h, stride; // stride: pixels between the starts of two rows
  bool owned;
} Canvas;

#define SF_RGBA(r, g, b, a) ((uint32_t)(r) | (uint32_t)(g) << 8 | (uint32_t)(b) << 16 | (uint32_t)(a) << 24)
#define SF_R(c) ((c)&0xFF)
#define SF_G(c) (((c) >> 8) & 0xFF)
#define SF_B(c) (((c) >> 16) & 0xFF)
#define SF_A(c) ((c) >> 24)

Canvas canvas_new(int w, int h); // px == NULL when out of memory
void canvas_free(Canvas *c);
Canvas canvas_sub(Canvas c, int x, int y, int w, int h); // clipped to c
void canvas_clear(Canvas c, uint32_t color);
// Fills [x, x+w) × [y, y+h), with partial coverage at fractional edges (so thin bars look even).
void canvas_fill_rect(Canvas c, float x, float y, float w, float h, uint32_t color);
// The outline of a rectangle, `width` pixels thick, inside its edges.
void canvas_frame_rect(Canvas c, float x, float y, float w, float h, float width, uint32_t color);
// An anti-aliased line segment of the given width.
void canvas_line(Canvas c, float x0, float y0, float x1, float y1, float width, uint32_t color);
// Blends `color` through an 8-bit coverage mask (a glyph) whose top-left lands at (x, y).
void canvas_blend_mask(Canvas c, int x, int y, const uint8_t *mask, int mw, int mh, int mstride,
                       uint32_t color);
// Blends one pixel (clipped); coverage 0..255 scales the colour's alpha.
void canvas_blend(Canvas c, int x, int y, uint32_t color, int coverage);
uint32_t canvas_get(Canvas c, int x, int y); // 0 outside

#endif
