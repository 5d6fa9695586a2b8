// tex.c -- see tex.h. The entry points, the box primitives and the walk that emits them.
#include "tex.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tex_internal.h"

// ---- boxes

SF_NO_COVERAGE TexBoxNode *tex_box_new(TexLay *L, TexBoxKind k) {
  TexBoxNode *b = tex_alloc(L->arena, sizeof *b);
  if (b) b->kind = (uint8_t)k;
  return b;
}

SF_NO_COVERAGE void tex_box_add(TexBoxNode *parent, TexBoxNode *child, float x, float y) {
  if (!parent || !child) return;
  child->x = x, child->y = y;
  if (parent->last)
    parent->last->next = child;
  else
    parent->first = child;
  parent->last = child;
  parent->w = fmaxf(parent->w, x + child->w);
  parent->h = fmaxf(parent->h, y + child->h);
  parent->d = fmaxf(parent->d, child->d - y);
}

TexBoxNode *tex_box_glyph(TexLay *L, FontFace f, float size, uint32_t cp) {
  TexBoxNode *b = tex_box_new(L, B_GLYPH);
  char u[5];
  int n = tex_utf8_put(cp, u);
  if (!b || !(b->text = tex_strndup(L->arena, u, (size_t)n))) return NULL;
  b->face = (uint8_t)f, b->size = size;
  if (tex_glyph(f, (int)size, cp, &b->g)) {
    b->w = b->g.advance, b->h = fmaxf(0, b->g.maxy), b->d = fmaxf(0, -b->g.miny);
  }
  return b;
}

TexBoxNode *tex_box_run(TexLay *L, FontFace f, float size, const char *utf8) {
  TexBoxNode *b = tex_box_new(L, B_GLYPH);
  if (!b || !(b->text = tex_strndup(L->arena, utf8, strlen(utf8)))) return NULL;
  b->face = (uint8_t)f, b->size = size;
  b->w = text_width(f, size, utf8);
  bool first = true;
  for (const char *s = utf8; *s;) {
    GlyphInfo g;
    if (!tex_glyph(f, (int)size, text_utf8_next(&s), &g)) continue;
    if (first) b->g = g, first = false;
    b->h = fmaxf(b->h, g.maxy), b->d = fmaxf(b->d, -g.miny);
  }
  return b;
}

TexBoxNode *tex_box_rule(TexLay *L, float w, float h, float d) {
  TexBoxNode *b = tex_box_new(L, B_RULE);
  if (b) b->w = w, b->h = h, b->d = d;
  return b;
}

TexBoxNode *tex_box_line(TexLay *L, float x0, float y0, float x1, float y1, float lw) {
  TexBoxNode *b = tex_box_new(L, B_LINE);
  if (!b) return NULL;
  // the box's origin is (x0, y0) once added at that place; the extent covers both ends
  b->x2 = x1 - x0, b->y2 = y1 - y0, b->lw = lw;
  b->w = fmaxf(0, b->x2) + lw / 2;
  b->h = fmaxf(0, b->y2) + lw / 2, b->d = fmaxf(0, -b->y2) + lw / 2;
  return b;
}

// ---- entry points

TexBox *tex_layout_tree(TexArena *parse, const TexNode *list, const char *src, float size_px, bool display,
                        TexDiag *diag) {
  TexBox *b = calloc(1, sizeof *b);
  if (!b) {
    tex_arena_free(parse);
    return NULL;
  }
  float size = roundf(size_px);
  if (!(size >= 4)) size = 4; // also NaN
  if (size > 200) size = 200;
  TexLay L = {.arena = &b->arena, .diag = diag, .src = src, .base = size};
  if (!tex_fonts_ready()) tex_diag_add(diag, src, 0, "no fonts: call text_init first");
  L.lm = tex_lm_math();
  if (!parse->oom) b->root = tex_lay_formula(&L, list, display);
  bool ok = !parse->oom && !b->arena.oom && b->root;
  tex_arena_free(parse);
  if (!ok) {
    tex_free(b);
    return NULL;
  }
  return b;
}

TexBox *tex_layout_n(const char *src, size_t len, float size_px, bool display, TexDiag *diag) {
  if (diag) memset(diag, 0, sizeof *diag);
  if (!src) src = "", len = 0;
  TexArena parse = {0};
  const TexNode *list = tex_parse(&parse, src, len, diag);
  return tex_layout_tree(&parse, list, src, size_px, display, diag);
}

TexBox *tex_layout(const char *src, float size_px, bool display, TexDiag *diag) {
  return tex_layout_n(src, src ? strlen(src) : 0, size_px, display, diag);
}

TexMetrics tex_metrics(const TexBox *b) {
  if (!b || !b->root) return (TexMetrics){0, 0, 0};
  return (TexMetrics){b->root->w, b->root->h, b->root->d};
}

void tex_free(TexBox *b) {
  if (!b) return;
  tex_arena_free(&b->arena);
  free(b);
}

// ---- emission

// Rules land on whole pixels (at least one), so a fraction bar is crisp, not a grey smear.
static void emit_rule(Scene *s, float x, float top, float w, float h, uint32_t c) {
  float cw = fmaxf(1, roundf(w)), ch = fmaxf(1, roundf(h));
  float x0 = roundf(x + w / 2 - cw / 2), y0 = roundf(top + h / 2 - ch / 2);
  scene_rect(s, x0, y0, cw, ch, c);
}

static void emit_box(Scene *s, const TexBoxNode *b, float ox, float oy, uint32_t color) {
  float x = ox + b->x, y = oy - b->y;
  uint32_t c = b->color ? b->color : color;
  if (b->hidden) return;
  switch ((TexBoxKind)b->kind) {
  case B_GLYPH: scene_text(s, (FontFace)b->face, b->size, x, y, c, b->text); break;
  case B_RULE:
    if (b->soft)
      scene_rect(s, x, y - b->h, b->w, b->h + b->d, c);
    else
      emit_rule(s, x, y - b->h, b->w, b->h + b->d, c);
    break;
  case B_LINE: scene_line(s, x, y, x + b->x2, y - b->y2, b->lw, c); break;
  case B_GROUP:
    for (const TexBoxNode *k = b->first; k; k = k->next) emit_box(s, k, x, y, c);
    break;
  }
}

void tex_emit(Scene *s, const TexBox *b, float x, float baseline_y, uint32_t color) {
  if (s && b && b->root) emit_box(s, b->root, x, baseline_y, color);
}

TexMetrics tex_draw(Scene *s, const char *src, float size_px, bool display, float x, float baseline_y,
                    uint32_t color) {
  TexBox *b = tex_layout(src, size_px, display, NULL);
  TexMetrics m = tex_metrics(b);
  tex_emit(s, b, x, baseline_y, color);
  tex_free(b);
  return m;
}

const char *tex_next_dollar(const char *s) {
  for (; *s; s++) {
    if (*s == '\\' && s[1])
      s++; // \$ (and any other escaped character) is skipped
    else if (*s == '$')
      return s;
  }
  return NULL;
}
