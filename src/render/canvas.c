// canvas.c -- see canvas.h.
#define _DEFAULT_SOURCE // madvise, MADV_HUGEPAGE
#include "canvas.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h> // madvise
#endif

#include "nocov.h" // defines: SF_NO_COVERAGE

Canvas canvas_new(int w, int h) {
  Canvas c = {0};
  if (w <= 0 || h <= 0) return c;
  size_t bytes = sizeof(uint32_t) * (size_t)w * (size_t)h;
  enum { HUGE_PAGE = 2 << 20 };
  if (bytes >= 2 * HUGE_PAGE) {
    // A 1920x1080 canvas is 8 MB: 2000 page faults of 4 KB on first touch, which cost more
    // than drawing a picture on a virtual machine. Aligned to 2 MB and marked, it takes 4.
    bytes = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    c.px = aligned_alloc(HUGE_PAGE, bytes);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (c.px) madvise(c.px, bytes, MADV_HUGEPAGE); // a hint: ignored where unsupported
#endif
  } else {
    c.px = malloc(bytes);
  }
  if (!c.px) return c;
  c.w = w, c.h = h, c.stride = w, c.owned = true;
  return c;
}

void canvas_free(Canvas *c) {
  if (c->owned) free(c->px);
  *c = (Canvas){0};
}

Canvas canvas_sub(Canvas c, int x, int y, int w, int h) {
  if (x < 0) w += x, x = 0;
  if (y < 0) h += y, y = 0;
  if (x + w > c.w) w = c.w - x;
  if (y + h > c.h) h = c.h - y;
  if (w <= 0 || h <= 0) return (Canvas){0};
  return (Canvas){c.px + (size_t)y * c.stride + x, w, h, c.stride, false};
}

void canvas_clear(Canvas c, uint32_t color) {
  if (c.w <= 0 || c.h <= 0) return;
  for (int x = 0; x < c.w; x++) c.px[x] = color; // one row, then copies of it
  for (int y = 1; y < c.h; y++) memcpy(c.px + (size_t)y * c.stride, c.px, (size_t)c.w * sizeof *c.px);
}

// The per-pixel loops below are no parser of outside input: under the fuzzers' coverage
// instrumentation their comparisons cost the TeX fuzzer a tenth of its time and told it
// nothing (nocov.h). ASan and UBSan still check them.

// dst over src blending with 8-bit alpha a (0..255), on straight (not premultiplied) colours.
SF_NO_COVERAGE static inline uint32_t blend(uint32_t dst, uint32_t src, unsigned a) {
  if (a >= 255) return src | 0xFF000000u;
  if (a == 0) return dst;
  unsigned ia = 255 - a;
  unsigned r = (SF_R(src) * a + SF_R(dst) * ia + 127) / 255;
  unsigned g = (SF_G(src) * a + SF_G(dst) * ia + 127) / 255;
  unsigned b = (SF_B(src) * a + SF_B(dst) * ia + 127) / 255;
  unsigned da = SF_A(dst);
  unsigned oa = a + (da * ia + 127) / 255;
  return SF_RGBA(r, g, b, oa);
}

void canvas_blend(Canvas c, int x, int y, uint32_t color, int coverage) {
  if (x < 0 || y < 0 || x >= c.w || y >= c.h || coverage <= 0) return;
  unsigned a = (SF_A(color) * (unsigned)(coverage > 255 ? 255 : coverage) + 127) / 255;
  uint32_t *p = c.px + (size_t)y * c.stride + x;
  *p = blend(*p, color, a);
}

uint32_t canvas_get(Canvas c, int x, int y) {
  if (x < 0 || y < 0 || x >= c.w || y >= c.h) return 0;
  return c.px[(size_t)y * c.stride + x];
}

// Sets n pixels from p to color: 16 at a time (a 64-byte pattern the compiler stores in vector
// registers), then one by one.
SF_NO_COVERAGE static void fill_span(uint32_t *p, int n, uint32_t color) {
  uint32_t pattern[16];
  for (int k = 0; k < 16; k++) pattern[k] = color;
  int x = 0;
  for (; x + 16 <= n; x += 16) memcpy(p + x, pattern, sizeof pattern);
  for (; x < n; x++) p[x] = color;
}

// The pixels of [x0, x1) of one row, partly covered: horizontal coverage per pixel times the
// row's vertical coverage cy, blended (or stored, when whole and opaque).
SF_NO_COVERAGE static void fill_edge(uint32_t *row, int x0, int x1, float x, float xe, float cy,
                                     bool full_row, uint32_t color) {
  unsigned alpha = SF_A(color);
  for (int px = x0; px < x1; px++) {
    float cx = fminf(xe, (float)px + 1) - fmaxf(x, (float)px);
    if (full_row && cx >= 0.999f && alpha == 255) {
      row[px] = color;
      continue;
    }
    unsigned a = (unsigned)(alpha * cx * cy + 0.5f);
    row[px] = blend(row[px], color, a);
  }
}

void canvas_fill_rect(Canvas c, float x, float y, float w, float h, uint32_t color) {
  if (w <= 0 || h <= 0) return;
  float x1 = x + w, y1 = y + h;
  if (SF_A(color) == 255 && x == floorf(x) && y == floorf(y) && x1 == floorf(x1) && y1 == floorf(y1)) {
    // whole pixels, opaque (heatmap cells, panels): the first row as a span, the others copies
    int ix0 = x < 0 ? 0 : (int)x, iy0 = y < 0 ? 0 : (int)y;
    int ix1 = x1 > c.w ? c.w : (int)x1, iy1 = y1 > c.h ? c.h : (int)y1;
    if (ix0 >= ix1 || iy0 >= iy1) return;
    uint32_t *first = c.px + (size_t)iy0 * c.stride + ix0;
    fill_span(first, ix1 - ix0, color);
    for (int py = iy0 + 1; py < iy1; py++)
      memcpy(c.px + (size_t)py * c.stride + ix0, first, sizeof(uint32_t) * (size_t)(ix1 - ix0));
    return;
  }
  int ix0 = (int)floorf(x), iy0 = (int)floorf(y), ix1 = (int)ceilf(x1), iy1 = (int)ceilf(y1);
  if (ix0 < 0) ix0 = 0;
  if (iy0 < 0) iy0 = 0;
  if (ix1 > c.w) ix1 = c.w;
  if (iy1 > c.h) iy1 = c.h;
  if (ix0 >= ix1) return;
  // [cx0, cx1): the columns the rectangle covers whole (coverage exactly 1), between at most one
  // partly covered column on either side; they take one alpha per row (or a span, when opaque).
  int cx0 = (int)ceilf(x), cx1 = (int)floorf(x1);
  cx0 = cx0 < ix0 ? ix0 : cx0 > ix1 ? ix1 : cx0;
  cx1 = cx1 > ix1 ? ix1 : cx1 < cx0 ? cx0 : cx1;
  unsigned alpha = SF_A(color);
  for (int py = iy0; py < iy1; py++) {
    float cy = fminf(y1, (float)py + 1) - fmaxf(y, (float)py); // vertical coverage of this row
    uint32_t *row = c.px + (size_t)py * c.stride;
    bool full_row = cy >= 0.999f;
    fill_edge(row, ix0, cx0, x, x1, cy, full_row, color);
    if (full_row && alpha == 255) {
      fill_span(row + cx0, cx1 - cx0, color);
    } else {
      unsigned a = (unsigned)((float)alpha * cy + 0.5f); // alpha * cx * cy with cx == 1
      for (int px = cx0; px < cx1; px++) row[px] = blend(row[px], color, a);
    }
    fill_edge(row, cx1, ix1, x, x1, cy, full_row, color);
  }
}

void canvas_frame_rect(Canvas c, float x, float y, float w, float h, float width, uint32_t color) {
  if (width * 2 >= w || width * 2 >= h) {
    canvas_fill_rect(c, x, y, w, h, color);
    return;
  }
  canvas_fill_rect(c, x, y, w, width, color);
  canvas_fill_rect(c, x, y + h - width, w, width, color);
  canvas_fill_rect(c, x, y + width, width, h - 2 * width, color);
  canvas_fill_rect(c, x + w - width, y + width, width, h - 2 * width, color);
}

void canvas_line(Canvas c, float x0, float y0, float x1, float y1, float width, uint32_t color) {
  // Coverage from the distance of each pixel centre to the segment (a capsule), 1 px of feather.
  float hw = width * 0.5f;
  int minx = (int)floorf(fminf(x0, x1) - hw - 1), maxx = (int)ceilf(fmaxf(x0, x1) + hw + 1);
  int miny = (int)floorf(fminf(y0, y1) - hw - 1), maxy = (int)ceilf(fmaxf(y0, y1) + hw + 1);
  if (minx < 0) minx = 0;
  if (miny < 0) miny = 0;
  if (maxx > c.w) maxx = c.w;
  if (maxy > c.h) maxy = c.h;
  float dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy;
  for (int py = miny; py < maxy; py++)
    for (int px = minx; px < maxx; px++) {
      float cx = (float)px + 0.5f, cy = (float)py + 0.5f;
      float t = len2 > 0 ? ((cx - x0) * dx + (cy - y0) * dy) / len2 : 0;
      t = t < 0 ? 0 : t > 1 ? 1 : t;
      float ex = x0 + t * dx - cx, ey = y0 + t * dy - cy;
      float d = sqrtf(ex * ex + ey * ey);
      float cov = hw + 0.5f - d;
      if (cov <= 0) continue;
      if (cov > 1) cov = 1;
      if (width < 1) cov *= width; // thin lines fade rather than vanish
      canvas_blend(c, px, py, color, (int)(cov * 255 + 0.5f));
    }
}

SF_NO_COVERAGE void canvas_blend_mask(Canvas c, int x, int y, const uint8_t *mask, int mw, int mh,
                                      int mstride, uint32_t color) {
  int sx0 = x < 0 ? -x : 0, sy0 = y < 0 ? -y : 0;
  int sx1 = x + mw > c.w ? c.w - x : mw, sy1 = y + mh > c.h ? c.h - y : mh;
  unsigned ca = SF_A(color);
  for (int sy = sy0; sy < sy1; sy++) {
    const uint8_t *m = mask + (size_t)sy * mstride;
    uint32_t *row = c.px + (size_t)(y + sy) * c.stride + x;
    for (int sx = sx0; sx < sx1; sx++)
      if (m[sx]) row[sx] = blend(row[sx], color, (m[sx] * ca + 127) / 255);
  }
}
