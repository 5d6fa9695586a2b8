// scene.c -- see scene.h.
#include "scene.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void scene_init(Scene *s, float width, float height, uint32_t background) {
  memset(s, 0, sizeof *s);
  s->width = width, s->height = height, s->background = background;
}

void scene_reset(Scene *s, float width, float height, uint32_t background) {
  for (int i = 0; i < s->n_old; i++) free(s->old_arenas[i]);
  s->n_old = 0;
  s->n = 0;
  s->used = 0;
  s->width = width, s->height = height, s->background = background;
}

SceneMark scene_mark(const Scene *s) { return (SceneMark){s->n, s->n_old, s->used}; }

void scene_rewind(Scene *s, SceneMark m) {
  if (m.n < s->n) s->n = m.n;
  if (m.n_old == s->n_old && m.used < s->used) s->used = m.used;
}

void scene_free(Scene *s) {
  for (int i = 0; i < s->n_old; i++) free(s->old_arenas[i]);
  free(s->old_arenas);
  free(s->cmds);
  free(s->arena);
  memset(s, 0, sizeof *s);
}

void *scene_alloc(Scene *s, size_t bytes) {
  bytes = (bytes + 15) & ~(size_t)15;
  if (s->used + bytes > s->arena_cap) {
    // Earlier pointers must stay valid: keep the old arena until reset, start a bigger one.
    size_t cap = s->arena_cap ? s->arena_cap * 2 : 1 << 16;
    while (cap < bytes) cap *= 2;
    char *a = malloc(cap);
    if (!a) return NULL;
    if (s->arena) {
      char **o = realloc(s->old_arenas, sizeof(char *) * (size_t)(s->n_old + 1));
      if (!o) {
        free(a);
        return NULL;
      }
      s->old_arenas = o;
      s->old_arenas[s->n_old++] = s->arena;
    }
    s->arena = a, s->arena_cap = cap, s->used = 0;
  }
  void *p = s->arena + s->used;
  s->used += bytes;
  return p;
}

static Cmd *push(Scene *s, CmdKind k) {
  if (s->n == s->cap) {
    int nc = s->cap ? s->cap * 2 : 256;
    Cmd *c = realloc(s->cmds, sizeof(Cmd) * (size_t)nc);
    if (!c) return NULL;
    s->cmds = c, s->cap = nc;
  }
  Cmd *c = &s->cmds[s->n++];
  memset(c, 0, sizeof *c);
  c->kind = k;
  return c;
}

Cmd *scene_rect(Scene *s, float x, float y, float w, float h, uint32_t color) {
  Cmd *c = push(s, CMD_RECT);
  if (c) c->x = x, c->y = y, c->w = w, c->h = h, c->color = color;
  return c;
}

Cmd *scene_frame(Scene *s, float x, float y, float w, float h, float width, uint32_t color) {
  Cmd *c = push(s, CMD_FRAME);
  if (c) c->x = x, c->y = y, c->w = w, c->h = h, c->width = width, c->color = color;
  return c;
}

Cmd *scene_line(Scene *s, float x0, float y0, float x1, float y1, float width, uint32_t color) {
  Cmd *c = push(s, CMD_LINE);
  if (c) c->x = x0, c->y = y0, c->x2 = x1, c->y2 = y1, c->width = width, c->color = color;
  return c;
}

const char *scene_strf(Scene *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return "";
  char *p = scene_alloc(s, (size_t)n + 1);
  if (!p) return "";
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}

Cmd *scene_text(Scene *s, FontFace f, float size, float x, float y, uint32_t color, const char *utf8) {
  if (!utf8 || !*utf8) return NULL;
  size_t n = strlen(utf8) + 1;
  char *copy = scene_alloc(s, n);
  if (!copy) return NULL;
  memcpy(copy, utf8, n);
  Cmd *c = push(s, CMD_TEXT);
  if (c) c->font = f, c->size = size, c->x = x, c->y = y, c->color = color, c->text = copy;
  return c;
}

Cmd *scene_text_aligned(Scene *s, FontFace f, float size, float x, float y, float align, uint32_t color,
                        const char *utf8) {
  float w = align != 0 ? text_width(f, size, utf8) : 0;
  return scene_text(s, f, size, x - w * align, y, color, utf8);
}

Cmd *scene_text_turned(Scene *s, FontFace f, float size, float x, float y, uint32_t color, const char *utf8) {
  Cmd *c = scene_text(s, f, size, x, y, color, utf8);
  if (c) c->turned = true;
  return c;
}

void scene_clip(Scene *s, float x, float y, float w, float h) {
  Cmd *c = push(s, CMD_CLIP);
  if (c) c->x = x, c->y = y, c->w = w, c->h = h;
}

void scene_unclip(Scene *s) {
  Cmd *c = push(s, CMD_CLIP);
  if (c) c->w = 0, c->h = 0;
}

uint32_t *scene_cells(Scene *s, float x, float y, float w, float h, int rows, int cols) {
  uint32_t *colors = scene_alloc(s, sizeof(uint32_t) * (size_t)rows * (size_t)cols);
  if (!colors) return NULL;
  Cmd *c = push(s, CMD_CELLS);
  if (!c) return NULL;
  c->x = x, c->y = y, c->w = w, c->h = h, c->rows = rows, c->cols = cols, c->colors = colors;
  return colors;
}

Cmd *scene_hatch(Scene *s, float x, float y, float w, float h, uint32_t bg, uint32_t line) {
  Cmd *c = push(s, CMD_HATCH);
  if (c) c->x = x, c->y = y, c->w = w, c->h = h, c->color = bg, c->color2 = line, c->width = 1.5f;
  return c;
}

// Cells on exact pixel boundaries, so neighbours never overlap or leave seams.
static void raster_cells(const Cmd *c, Canvas cv) {
  for (int i = 0; i < c->rows; i++) {
    float y0 = roundf(c->y + c->h * i / c->rows), y1 = roundf(c->y + c->h * (i + 1) / c->rows);
    for (int j = 0; j < c->cols; j++) {
      float x0 = roundf(c->x + c->w * j / c->cols), x1 = roundf(c->x + c->w * (j + 1) / c->cols);
      canvas_fill_rect(cv, x0, y0, x1 - x0, y1 - y0, c->colors[(size_t)i * c->cols + j]);
    }
  }
}

static void raster_hatch(const Cmd *c, Canvas cv) {
  canvas_fill_rect(cv, c->x, c->y, c->w, c->h, c->color);
  Canvas sub = canvas_sub(cv, (int)floorf(c->x), (int)floorf(c->y), (int)ceilf(c->w), (int)ceilf(c->h));
  float step = fmaxf(5.0f, fminf(c->w, c->h) / 4.0f);
  float ox = c->x - floorf(c->x), oy = c->y - floorf(c->y);
  for (float d = -c->h; d < c->w; d += step) // lines from bottom-left to top-right
    canvas_line(sub, ox + d, oy + c->h, ox + d + c->h, oy, c->width, c->color2);
}

// Turned text: drawn white on black into a scratch canvas, whose red channel is then the
// coverage of each pixel, blended turned: scratch (tx, ty) lands at (x + ty - base, y - tx).
static void raster_turned(const Cmd *c, Canvas cv) {
  float asc = text_ascent(c->font, c->size), desc = text_descent(c->font, c->size);
  int w = (int)ceilf(text_width(c->font, c->size, c->text)) + 4, h = (int)ceilf(asc + desc) + 4;
  Canvas tmp = canvas_new(w, h);
  if (!tmp.px) return;
  canvas_clear(tmp, SF_RGBA(0, 0, 0, 255));
  float base = 2 + asc;
  text_draw(tmp, c->font, c->size, 2, base, SF_RGBA(255, 255, 255, 255), c->text);
  int x0 = (int)lrintf(c->x), y0 = (int)lrintf(c->y), b = (int)lrintf(base);
  for (int ty = 0; ty < h; ty++)
    for (int tx = 0; tx < w; tx++) {
      int cov = (int)SF_R(tmp.px[(size_t)ty * tmp.stride + tx]);
      if (cov) canvas_blend(cv, x0 + ty - b, y0 - (tx - 2), c->color, cov);
    }
  canvas_free(&tmp);
}

static void raster_one(const Cmd *c, Canvas cv, int flags) {
  switch (c->kind) {
  case CMD_RECT: canvas_fill_rect(cv, c->x, c->y, c->w, c->h, c->color); break;
  case CMD_FRAME: canvas_frame_rect(cv, c->x, c->y, c->w, c->h, c->width, c->color); break;
  case CMD_LINE: canvas_line(cv, c->x, c->y, c->x2, c->y2, c->width, c->color); break;
  case CMD_TEXT:
    if (flags & SCENE_NO_TEXT) break;
    if (c->turned)
      raster_turned(c, cv);
    else
      text_draw(cv, c->font, c->size, c->x, c->y, c->color, c->text);
    break;
  case CMD_CELLS: raster_cells(c, cv); break;
  case CMD_HATCH: raster_hatch(c, cv); break;
  case CMD_CLIP: break;
  }
}

void scene_raster(const Scene *s, Canvas cv, int flags) {
  if (!(flags & SCENE_NO_CLEAR)) canvas_clear(cv, s->background);
  Canvas clip = cv; // inside a CMD_CLIP: a window into cv, commands moved by (-ox, -oy)
  int ox = 0, oy = 0;
  for (int i = 0; i < s->n; i++) {
    const Cmd *c = &s->cmds[i];
    if (c->kind == CMD_CLIP) {
      if (c->w <= 0 || c->h <= 0) {
        clip = cv, ox = oy = 0;
      } else {
        ox = (int)fmaxf(0, floorf(c->x)), oy = (int)fmaxf(0, floorf(c->y));
        clip = canvas_sub(cv, ox, oy, (int)ceilf(c->x + c->w) - ox, (int)ceilf(c->y + c->h) - oy);
      }
      continue;
    }
    if (ox == 0 && oy == 0 && clip.px == cv.px && clip.w == cv.w && clip.h == cv.h) {
      raster_one(c, cv, flags);
      continue;
    }
    if (!clip.px) continue; // the clip lies outside the canvas
    Cmd m = *c;
    m.x -= (float)ox, m.y -= (float)oy, m.x2 -= (float)ox, m.y2 -= (float)oy;
    raster_one(&m, clip, flags);
  }
}
