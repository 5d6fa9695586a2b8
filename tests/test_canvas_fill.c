// test_canvas_fill.c -- canvas_fill_rect fills rows as spans and whole columns with one alpha per
// row; every pixel must come out as the plain per-pixel definition gives it (coverage of the
// pixel by the rectangle, horizontal times vertical, blended; whole opaque pixels stored), for
// rectangles at whole and fractional coordinates, opaque and translucent, inside, across and
// outside the canvas's edges, on a sub-canvas too.
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "canvas.h"
#include "check.h"
#include "rng.h"

// The definition, pixel by pixel (canvas.c's blend, copied: it is the contract).
static uint32_t ref_blend(uint32_t dst, uint32_t src, unsigned a) {
  if (a >= 255) return src | 0xFF000000u;
  if (a == 0) return dst;
  unsigned ia = 255 - a;
  unsigned r = (SF_R(src) * a + SF_R(dst) * ia + 127) / 255;
  unsigned g = (SF_G(src) * a + SF_G(dst) * ia + 127) / 255;
  unsigned b = (SF_B(src) * a + SF_B(dst) * ia + 127) / 255;
  unsigned oa = a + (SF_A(dst) * ia + 127) / 255;
  return SF_RGBA(r, g, b, oa);
}

static void ref_fill(Canvas c, float x, float y, float w, float h, uint32_t color) {
  if (w <= 0 || h <= 0) return;
  float x1 = x + w, y1 = y + h;
  unsigned alpha = SF_A(color);
  for (int py = 0; py < c.h; py++)
    for (int px = 0; px < c.w; px++) {
      float cx = fminf(x1, (float)px + 1) - fmaxf(x, (float)px);
      float cy = fminf(y1, (float)py + 1) - fmaxf(y, (float)py);
      if (cx <= 0 || cy <= 0) continue;
      uint32_t *p = c.px + (size_t)py * c.stride + px;
      bool whole_pixels = x == floorf(x) && y == floorf(y) && x1 == floorf(x1) && y1 == floorf(y1);
      if (alpha == 255 && (whole_pixels || (cy >= 0.999f && cx >= 0.999f)))
        *p = color;
      else
        *p = ref_blend(*p, color, (unsigned)(alpha * cx * cy + 0.5f));
    }
}

static float coord(uint64_t *r, int range, bool whole) {
  float v = (float)((int)(rng_u32(r) % (uint32_t)(range + 20)) - 10);
  return whole ? v : v + (float)(rng_u32(r) % 64) / 64.0f;
}

int main(void) {
  uint64_t r = rng_seed(11);
  enum { W = 70, H = 40 };
  Canvas a = canvas_new(W, H), b = canvas_new(W, H);
  CHECK(a.px && b.px, "canvases");
  if (!a.px || !b.px) return check_exit("test_canvas_fill");
  for (int t = 0; t < 4000; t++) {
    for (int k = 0; k < W * H; k++) a.px[k] = b.px[k] = rng_u32(&r) | (t % 3 ? 0xFF000000u : 0);
    bool whole = t % 2 == 0, opaque = t % 4 < 3;
    float x = coord(&r, W, whole), y = coord(&r, H, whole);
    float w = t % 5 == 0 ? (float)(rng_u32(&r) % 64) / 64.0f : coord(&r, W, whole) + 10;
    float h = t % 7 == 0 ? (float)(rng_u32(&r) % 64) / 64.0f : coord(&r, H, whole) + 10;
    uint32_t color = rng_u32(&r) | (opaque ? 0xFF000000u : 0);
    Canvas ca = a, cb = b;
    if (t % 3 == 2) { // a window into the canvas: its own clipping, the parent's stride
      ca = canvas_sub(a, 5, 3, W - 12, H - 9);
      cb = canvas_sub(b, 5, 3, W - 12, H - 9);
    }
    canvas_fill_rect(ca, x, y, w, h, color);
    ref_fill(cb, x, y, w, h, color);
    int diff = 0;
    for (int k = 0; k < W * H; k++) diff += a.px[k] != b.px[k];
    CHECK(diff == 0, "rect %d (%g, %g) %gx%g colour %08x: %d pixels differ from the definition", t, x, y, w,
          h, color, diff);
  }
  canvas_free(&a);
  canvas_free(&b);
  return check_exit("test_canvas_fill");
}
