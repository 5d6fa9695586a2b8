// docview.c -- see docview.h. Each block is cut into "words" (a run of text without spaces, or
// one inline formula), placed greedily on lines; a line's height comes from its tallest word.
#include "docview.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tex.h" // defines: tex_layout, tex_emit

typedef struct {
  Scene *s; // NULL when only measuring
  const Theme *th;
  float size;
} Ctx;

static FontFace face_of(unsigned style, SpanKind k) {
  if (k == SPAN_CODE) return FONT_MONO;
  if (style & DOC_STRONG) return FONT_SANS_BOLD;
  if (style & DOC_EM) return FONT_SANS_ITALIC;
  return FONT_SANS;
}

// One placed piece of a line.
typedef struct {
  float x, w, asc, desc;
  const char *text;
  int len; // text piece (not NUL-terminated)
  FontFace face;
  bool code;
  TexBox *math;
} Piece;

#define MAX_PIECES 256

typedef struct {
  Ctx *c;
  float x0, w, y; // left edge, width, top of the current line
  float indent;
  Piece p[MAX_PIECES];
  int n;
  float pen; // x of the next piece, relative to x0 + indent
  bool space_pending;
} Liner;

static void flush(Liner *ln) {
  float asc = ln->c->size * 0.95f, desc = ln->c->size * 0.3f;
  for (int i = 0; i < ln->n; i++) asc = fmaxf(asc, ln->p[i].asc), desc = fmaxf(desc, ln->p[i].desc);
  float base = ln->y + asc;
  for (int i = 0; i < ln->n; i++) {
    Piece *p = &ln->p[i];
    float x = ln->x0 + ln->indent + p->x;
    if (ln->c->s) {
      if (p->math) {
        tex_emit(ln->c->s, p->math, x, base, ln->c->th->text);
      } else {
        char buf[512];
        int n = p->len < 511 ? p->len : 511;
        memcpy(buf, p->text, (size_t)n);
        buf[n] = 0;
        if (p->code) scene_rect(ln->c->s, x - 2, base - p->asc, p->w + 4, p->asc + p->desc, ln->c->th->panel);
        scene_text(ln->c->s, p->face, ln->c->size * (p->code ? 0.92f : 1.0f), x, base, ln->c->th->text, buf);
      }
    }
    if (p->math) tex_free(p->math);
  }
  if (ln->n) ln->y += (asc + desc) * 1.18f;
  ln->n = 0;
  ln->pen = 0;
  ln->space_pending = false;
}

static void place(Liner *ln, Piece p) {
  float space = ln->space_pending && ln->n ? ln->c->size * 0.3f : 0;
  if (ln->n && ln->pen + space + p.w > ln->w - ln->indent) {
    flush(ln);
    space = 0;
  }
  if (ln->n == MAX_PIECES) flush(ln);
  p.x = ln->pen + space;
  ln->pen = p.x + p.w;
  ln->p[ln->n++] = p;
  ln->space_pending = false;
}

static void add_text(Liner *ln, const char *t, unsigned style, SpanKind kind) {
  FontFace f = face_of(style, kind);
  float sz = ln->c->size * (kind == SPAN_CODE ? 0.92f : 1.0f);
  const char *p = t;
  while (*p) {
    if (*p == ' ' || *p == '\n' || *p == '\t') {
      ln->space_pending = true;
      p++;
      continue;
    }
    const char *q = p;
    while (*q && *q != ' ' && *q != '\n' && *q != '\t') q++;
    char buf[512];
    int n = (int)(q - p) < 511 ? (int)(q - p) : 511;
    memcpy(buf, p, (size_t)n);
    buf[n] = 0;
    Piece pc = {.w = text_width(f, sz, buf),
                .asc = text_ascent(f, sz),
                .desc = text_descent(f, sz),
                .text = p,
                .len = n,
                .face = f,
                .code = kind == SPAN_CODE};
    place(ln, pc);
    p = q;
  }
}

static void add_math(Liner *ln, const char *src) {
  TexBox *b = tex_layout(src, ln->c->size * 1.05f, false, NULL);
  if (!b) return;
  TexMetrics m = tex_metrics(b);
  place(ln, (Piece){.w = m.width, .asc = m.ascent, .desc = m.descent, .math = b});
}

static float block(Ctx *c, const DocBlock *b, float x, float y, float w) {
  Liner ln;
  memset(&ln, 0, sizeof ln);
  ln.c = c, ln.x0 = x, ln.w = w, ln.y = y;
  const Theme *th = c->th;
  switch (b->kind) {
  case BLOCK_RULE:
    if (c->s) scene_rect(c->s, x, y + c->size * 0.5f, w, 1.5f, th->grid);
    return c->size * 1.2f;
  case BLOCK_MATH: {
    const char *src = b->n_spans ? b->spans[0].text : "";
    TexBox *bx = tex_layout(src, c->size * 1.2f, true, NULL);
    TexMetrics m = tex_metrics(bx);
    // wider than the column: smaller, so it stays inside (TeX sizes are whole pixels)
    for (float sz = c->size * 1.2f; bx && m.width > w && w > 0 && sz > 4;) {
      float next = floorf(sz * w / m.width);
      sz = next < sz ? next : sz - 1;
      tex_free(bx);
      bx = tex_layout(src, sz, true, NULL);
      m = tex_metrics(bx);
    }
    float h = m.ascent + m.descent + c->size * 0.6f;
    if (c->s && bx)
      tex_emit(c->s, bx, x + fmaxf(0, (w - m.width) / 2), y + c->size * 0.3f + m.ascent, th->text);
    tex_free(bx);
    return h;
  }
  case BLOCK_ITEM: {
    ln.indent = c->size * (1.2f * b->level + 0.2f);
    char mark[16];
    if (b->ordered)
      snprintf(mark, sizeof mark, "%d.", b->number);
    else
      snprintf(mark, sizeof mark, "•");
    if (c->s)
      scene_text_aligned(c->s, FONT_SANS, c->size, x + ln.indent - c->size * 0.4f,
                         y + text_ascent(FONT_SANS, c->size) * 1.0f, 1.0f, th->muted, mark);
    break;
  }
  case BLOCK_QUOTE: ln.indent = c->size; break;
  default: break;
  }
  Ctx hc = *c;
  if (b->kind == BLOCK_HEADING) hc.size = c->size * (b->level <= 3 ? 1.15f : 1.0f), ln.c = &hc;
  for (int i = 0; i < b->n_spans; i++) {
    const DocSpan *sp = &b->spans[i];
    unsigned style = sp->style | (b->kind == BLOCK_HEADING ? DOC_STRONG : 0);
    switch (sp->kind) {
    case SPAN_TEXT: add_text(&ln, sp->text, style, SPAN_TEXT); break;
    case SPAN_CODE: add_text(&ln, sp->text, style, SPAN_CODE); break;
    case SPAN_MATH: add_math(&ln, sp->text); break;
    case SPAN_BREAK: flush(&ln); break;
    }
  }
  flush(&ln);
  float h = ln.y - y;
  if (b->kind == BLOCK_QUOTE && c->s) scene_rect(c->s, x + 2, y, 3, h, th->accent);
  return h + (b->kind == BLOCK_ITEM ? c->size * 0.2f : c->size * 0.55f);
}

static float layout(Scene *s, const Doc *d, const Theme *th, float size, float x, float y, float w,
                    float max_h, bool clip) {
  Ctx c = {s, th, size};
  float used = 0;
  for (int i = 0; i < d->n; i++) {
    if (clip) { // stop before a block that would not fit, and say so
      float need = block(&(Ctx){NULL, th, size}, &d->blocks[i], x, 0, w);
      if (used + need > max_h) {
        if (s) scene_text(s, FONT_SANS, size, x, y + used + size, th->muted, "…");
        return used + size * 1.3f;
      }
    }
    used += block(&c, &d->blocks[i], x, y + used, w);
  }
  return used;
}

float docview_measure(const Doc *d, float size, float w) {
  return layout(NULL, d, NULL, size, 0, 0, w, 1e9f, false);
}

float docview_render(Scene *s, const Doc *d, const Theme *theme, float size, float x, float y, float w,
                     float max_h) {
  float sz = size;
  while (sz > size * 0.65f && docview_measure(d, sz, w) > max_h) sz *= 0.92f;
  return layout(s, d, theme, sz, x, y, w, max_h, true);
}
