// docview.c -- see docview.h. Each block is cut into "words" (a run of text without spaces, or
// one inline formula), placed greedily on lines; a line's height comes from its tallest word.
// Pieces that touch (a word and the comma after its emphasis, a formula and its full stop) are
// glued: a line never starts with the punctuation that closes the previous one.
#include "docview.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "tex.h" // defines: tex_layout, tex_emit, tex_parts

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

// The background of code: the grid colour, half transparent, so that it shows on the narration
// panel as well as on the page.
static uint32_t code_bg(const Theme *th) { return (th->grid & 0x00FFFFFFu) | 0x90000000u; }

// One placed piece of a line.
typedef struct {
  float x, w, asc, desc;
  const char *text;
  int len; // text piece (not NUL-terminated)
  FontFace face;
  bool code, link;
  bool glued; // no space before it: it moves to the next line with the piece before it
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
  float widest; // the widest line flushed so far
} Liner;

static void flush(Liner *ln) {
  float asc = ln->c->size * 0.95f, desc = ln->c->size * 0.3f;
  for (int i = 0; i < ln->n; i++) asc = fmaxf(asc, ln->p[i].asc), desc = fmaxf(desc, ln->p[i].desc);
  float base = ln->y + asc;
  const Theme *th = ln->c->th;
  if (ln->n) ln->widest = fmaxf(ln->widest, ln->pen);
  for (int i = 0; i < ln->n; i++) {
    Piece *p = &ln->p[i];
    float x = ln->x0 + ln->indent + p->x;
    // the words of one code span share one band: it also covers the space between them
    float band = i > 0 && p->code && ln->p[i - 1].code
                     ? ln->x0 + ln->indent + ln->p[i - 1].x + ln->p[i - 1].w + 2
                     : x - 2;
    if (ln->c->s) {
      if (p->math) {
        tex_emit(ln->c->s, p->math, x, base, th->text);
      } else {
        char buf[512];
        int n = p->len < 511 ? p->len : 511;
        memcpy(buf, p->text, (size_t)n);
        buf[n] = 0;
        if (p->code)
          scene_rect(ln->c->s, band, base - p->asc, x + p->w + 2 - band, p->asc + p->desc, code_bg(th));
        scene_text(ln->c->s, p->face, ln->c->size * (p->code ? 0.92f : 1.0f), x, base,
                   p->link ? th->accent : th->text, buf);
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
  p.glued = ln->n > 0 && !ln->space_pending;
  if (ln->n && ln->pen + space + p.w > ln->w - ln->indent) {
    int k = ln->n; // the glued run this piece would join moves along with it
    while (p.glued && k > 0 && ln->p[k - 1].glued) k--;
    if (p.glued && k > 0) k--;
    int keep = p.glued && k > 0 ? k : ln->n, moved = ln->n - keep;
    Piece run[MAX_PIECES];
    memcpy(run, ln->p + keep, sizeof *run * (size_t)moved);
    ln->n = keep;
    flush(ln);
    for (int i = 0; i < moved; i++) {
      run[i].x = ln->pen, run[i].glued = i > 0;
      ln->pen += run[i].w;
      ln->p[ln->n++] = run[i];
    }
    space = 0;
    p.glued = ln->n > 0;
  }
  if (ln->n == MAX_PIECES) flush(ln), p.glued = false;
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
                .code = kind == SPAN_CODE,
                .link = (style & DOC_LINK) != 0};
    place(ln, pc);
    p = q;
  }
}

// Lays src out at size, smaller when it is wider than w (down to `least` times size, and never
// under 4 px; least 0: as small as it takes).
static TexBox *fitted(const char *src, size_t len, float size, bool display, float w, float least) {
  TexBox *b = tex_layout_n(src, len, size, display, NULL);
  float width = tex_metrics(b).width, s = size, floor_px = fmaxf(size * least, 4);
  while (b && width > w && w > 0 && s > floor_px) { // sizes are whole pixels: try again
    s = fmaxf(floor_px, fminf(s - 1, floorf(s * w / width)));
    tex_free(b);
    b = tex_layout_n(src, len, s, display, NULL);
    width = tex_metrics(b).width;
  }
  return b;
}

static void add_math(Liner *ln, const char *src) {
  float size = ln->c->size * 1.05f;
  TexBox *b = fitted(src, strlen(src), size, false, ln->w - ln->indent, 0.5f);
  if (!b) return;
  TexMetrics m = tex_metrics(b);
  place(ln, (Piece){.w = m.width, .asc = m.ascent, .desc = m.descent, .math = b});
}

#define MAX_DISPLAY_LINES 16

// A displayed formula as lines that fit the width w: the whole formula when it fits, else its
// top-level parts (split at \quad and \qquad) gathered greedily, each line shrunk if it is
// still too wide. Returns the number of lines in out (the caller frees them).
static int display_lines(const char *src, float size, float w, TexBox **out) {
  size_t len = strlen(src);
  TexBox *whole = tex_layout_n(src, len, size, true, NULL);
  if (!whole) return 0;
  TexPart parts[MAX_DISPLAY_LINES];
  int np = tex_metrics(whole).width > w ? tex_parts(src, len, parts, MAX_DISPLAY_LINES) : 0;
  if (np <= 1) {
    if (tex_metrics(whole).width <= w) return out[0] = whole, 1;
    tex_free(whole);
    out[0] = fitted(src, len, size, true, w, 0); // as small as it takes: never over the stage
    return out[0] ? 1 : 0;
  }
  tex_free(whole);
  int n = 0;
  for (int i = 0; i < np;) {
    int j = i;
    while (j + 1 < np) { // one more part on this line?
      TexBox *t = tex_layout_n(src + parts[i].start, parts[j + 1].end - parts[i].start, size, true, NULL);
      bool fits = t && tex_metrics(t).width <= w;
      tex_free(t);
      if (!fits) break;
      j++;
    }
    TexBox *b = fitted(src + parts[i].start, parts[j].end - parts[i].start, size, true, w, 0);
    if (b) out[n++] = b;
    i = j + 1;
  }
  return n;
}

// A code block: its lines as typed, in the monospaced face, on a shaded band; a block wider
// than the column is set smaller (down to 55 %).
static float code_block(Ctx *c, const char *text, float x, float y, float w) {
  float sz = c->size * 0.88f, pad = c->size * 0.35f;
  float widest = 0;
  int lines = 1;
  char buf[1024];
  for (const char *p = text; *p;) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    size_t k = 0;
    for (size_t i = 0; i < n && k + 4 < sizeof buf; i++) // tabs to 4 spaces
      if (p[i] == '\t')
        for (int t = 0; t < 4; t++) buf[k++] = ' ';
      else if (p[i] != '\r')
        buf[k++] = p[i];
    buf[k] = 0;
    widest = fmaxf(widest, text_width(FONT_MONO, sz, buf));
    if (!e) break;
    lines++, p = e + 1;
  }
  if (widest > w - 2 * pad) sz = fmaxf(c->size * 0.55f, sz * (w - 2 * pad) / widest);
  float lh = text_line_height(FONT_MONO, sz), h = lines * lh + 2 * pad * 0.6f;
  if (c->s) {
    scene_rect(c->s, x, y, w, h, code_bg(c->th));
    float base = y + pad * 0.6f + text_ascent(FONT_MONO, sz);
    for (const char *p = text; *p; base += lh) {
      const char *e = strchr(p, '\n');
      size_t n = e ? (size_t)(e - p) : strlen(p), k = 0;
      for (size_t i = 0; i < n && k + 4 < sizeof buf; i++)
        if (p[i] == '\t')
          for (int t = 0; t < 4; t++) buf[k++] = ' ';
        else if (p[i] != '\r')
          buf[k++] = p[i];
      buf[k] = 0;
      scene_text(c->s, FONT_MONO, sz, x + pad, base, c->th->text, buf);
      if (!e) break;
      p = e + 1;
    }
  }
  return h + c->size * 0.55f;
}

#define MAX_COLS 16

// One row of a table: its cells as ranges of spans [start, end) of the block.
typedef struct {
  int start[MAX_COLS], end[MAX_COLS];
  unsigned align[MAX_COLS];
  int n;
} Row;

// Reads the row whose SPAN_ROW is at span i into r; returns the index of the next row's span.
static int read_row(const DocBlock *b, int i, Row *r) {
  r->n = 0;
  for (i++; i < b->n_spans && b->spans[i].kind != SPAN_ROW; i++) {
    const DocSpan *sp = &b->spans[i];
    if (sp->kind == SPAN_CELL) {
      if (r->n < MAX_COLS) r->start[r->n] = r->end[r->n] = i + 1, r->align[r->n] = sp->style, r->n++;
    } else if (r->n > 0 && r->n <= MAX_COLS && r->end[r->n - 1] == i) {
      r->end[r->n - 1] = i + 1;
    }
  }
  return i;
}

// Lays the spans [i0, i1) of b out from (x, y) within width w (drawn when c->s); returns the
// height, and the widest line in *width.
static float cell(Ctx *c, const DocBlock *b, int i0, int i1, unsigned extra, float x, float y, float w,
                  float *width) {
  Liner ln;
  memset(&ln, 0, sizeof ln);
  ln.c = c, ln.x0 = x, ln.w = w, ln.y = y;
  for (int i = i0; i < i1; i++) {
    const DocSpan *sp = &b->spans[i];
    switch (sp->kind) {
    case SPAN_TEXT: add_text(&ln, sp->text, sp->style | extra, SPAN_TEXT); break;
    case SPAN_CODE: add_text(&ln, sp->text, sp->style | extra, SPAN_CODE); break;
    case SPAN_MATH: add_math(&ln, sp->text); break;
    default: flush(&ln); break;
    }
  }
  flush(&ln);
  if (width) *width = ln.widest;
  return ln.y - y;
}

// The natural width of each column of a table at the size of c (header rows bold) into nat;
// returns the number of columns.
static int natural(const Ctx *c, const DocBlock *b, float *nat) {
  Ctx m = {NULL, c->th, c->size};
  int ncol = 0, rows = 0;
  Row r;
  for (int k = 0; k < MAX_COLS; k++) nat[k] = 0;
  for (int i = 0; i < b->n_spans; i = read_row(b, i, &r)) {
    if (b->spans[i].kind != SPAN_ROW) continue;
    read_row(b, i, &r);
    unsigned extra = rows++ < b->level ? DOC_STRONG : 0;
    for (int k = 0; k < r.n; k++) {
      float wd = 0;
      cell(&m, b, r.start[k], r.end[k], extra, 0, 0, 1e9f, &wd);
      nat[k] = fmaxf(nat[k], wd);
    }
    if (r.n > ncol) ncol = r.n;
  }
  return ncol;
}

// A table: each column as wide as its widest cell, text at the narration's size; a table wider
// than w is set smaller (down to 65 %), then its columns narrowed in proportion (their cells
// wrap; a cell that would still reach past w, and those after it, are left out). The header
// rows are bold, with a rule under them.
static float table(Ctx *c0, const DocBlock *b, float x, float y, float w) {
  Ctx tc = *c0, *c = &tc, m = {NULL, c0->th, c0->size};
  float nat[MAX_COLS], col[MAX_COLS], sum = 0;
  int ncol = natural(c, b, nat);
  if (ncol == 0) return 0;
  for (;;) {
    sum = 0;
    for (int k = 0; k < ncol; k++) sum += nat[k];
    if (sum + c->size * 1.1f * (float)(ncol - 1) <= w || c->size <= c0->size * 0.65f) break;
    c->size = fmaxf(c0->size * 0.65f, c->size * 0.92f);
    natural(c, b, nat);
  }
  m.size = c->size;
  float gap = c->size * 1.1f, room = w - gap * (float)(ncol - 1);
  float scale = sum > room && sum > 0 ? fmaxf(room, 0) / sum : 1, total = gap * (float)(ncol - 1);
  for (int k = 0; k < ncol; k++) col[k] = nat[k] * scale, total += col[k];
  Row r;
  float top = y + c->size * 0.15f;
  int row = 0;
  for (int i = 0; i < b->n_spans; i = read_row(b, i, &r)) {
    if (b->spans[i].kind != SPAN_ROW) continue;
    read_row(b, i, &r);
    unsigned extra = row < b->level ? DOC_STRONG : 0;
    float h = c->size * 1.3f, cx = x;
    for (int k = 0; k < r.n && cx < x + w; k++) {
      float wd = 0, cw = fminf(col[k], x + w - cx);
      cell(&m, b, r.start[k], r.end[k], extra, 0, 0, cw, &wd);
      float shift = r.align[k] & DOC_ALIGN_RIGHT    ? cw - wd
                    : r.align[k] & DOC_ALIGN_CENTER ? (cw - wd) / 2
                                                    : 0;
      if (cx + fmaxf(shift, 0) + wd > x + w + 0.5f) break; // a word wider than what is left
      h = fmaxf(h, cell(c, b, r.start[k], r.end[k], extra, cx + fmaxf(shift, 0), top, cw, NULL));
      cx += col[k] + gap;
    }
    top += h;
    row++;
    if (row == b->level) {
      if (c->s) scene_rect(c->s, x, top + c->size * 0.1f, fminf(total, w), 1.5f, c->th->grid);
      top += c->size * 0.3f;
    }
  }
  return top - y + c0->size * 0.55f;
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
    // as much room above as below: the paragraph before ends with its own space
    const char *src = b->n_spans ? b->spans[0].text : "";
    TexBox *lines[MAX_DISPLAY_LINES];
    int n = display_lines(src, c->size * 1.2f, w, lines);
    float top = y + c->size * 0.15f;
    for (int i = 0; i < n; i++) {
      TexMetrics m = tex_metrics(lines[i]);
      if (i) top += c->size * 0.5f;
      if (c->s) tex_emit(c->s, lines[i], x + fmaxf(0, (w - m.width) / 2), top + m.ascent, th->text);
      top += m.ascent + m.descent;
      tex_free(lines[i]);
    }
    return top - y + c->size * 0.7f;
  }
  case BLOCK_CODE: return code_block(c, b->n_spans ? b->spans[0].text : "", x, y, w);
  case BLOCK_TABLE: return table(c, b, x, y, w);
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
    case SPAN_BREAK:
    case SPAN_ROW:
    case SPAN_CELL: flush(&ln); break;
    }
  }
  flush(&ln);
  float h = ln.y - y;
  if (b->kind == BLOCK_QUOTE && c->s) scene_rect(c->s, x + 2, y, 3, h, th->accent);
  return h + (b->kind == BLOCK_ITEM ? c->size * 0.2f : c->size * 0.55f);
}

// The height of block i, with the space that ends a list after its last item.
static float block_at(Ctx *c, const Doc *d, int i, float x, float y, float w) {
  float h = block(c, &d->blocks[i], x, y, w);
  if (d->blocks[i].kind == BLOCK_ITEM && i + 1 < d->n && d->blocks[i + 1].kind != BLOCK_ITEM)
    h += c->size * 0.35f;
  return h;
}

static float layout(Scene *s, const Doc *d, const Theme *th, float size, float x, float y, float w,
                    float max_h, bool clip) {
  Ctx c = {s, th, size};
  float used = 0;
  for (int i = 0; i < d->n; i++) {
    if (clip) { // stop before a block that would not fit, and say so
      float need = block_at(&(Ctx){NULL, th, size}, d, i, x, 0, w);
      if (used + need > max_h) {
        if (s) scene_text(s, FONT_SANS, size, x, y + used + size, th->muted, "…");
        return used + size * 1.3f;
      }
    }
    used += block_at(&c, d, i, x, y + used, w);
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

// The space block i leaves under itself (block_at's height includes it): the last block of a page
// needs no room for it.
static float space_after(const Doc *d, int i, float size) {
  switch (d->blocks[i].kind) {
  case BLOCK_RULE: return 0;
  case BLOCK_MATH: return size * 0.7f;
  case BLOCK_ITEM: return size * (i + 1 < d->n && d->blocks[i + 1].kind != BLOCK_ITEM ? 0.55f : 0.2f);
  default: return size * 0.55f;
  }
}

// Whether block i, need pixels high, fits under `used` pixels of a page of max_h.
static bool fits_page(const Doc *d, int i, float size, float used, float need, float max_h) {
  return used + need - space_after(d, i, size) <= max_h;
}

// The page of each block (pages of max_h, each ending at a block boundary; a block taller than a
// page has a page of its own) into page_of (may be NULL); returns the number of pages.
static int paginate(const Doc *d, float size, float w, float max_h, int *page_of) {
  int page = 0;
  float used = 0;
  for (int i = 0; i < d->n; i++) {
    float need = block_at(&(Ctx){NULL, NULL, size}, d, i, 0, 0, w);
    if (used > 0 && !fits_page(d, i, size, used, need, max_h)) page++, used = 0;
    used += need;
    if (page_of) page_of[i] = page;
  }
  return page + 1;
}

int docview_pages(const Doc *d, float size, float w, float max_h) {
  return d->n > 0 ? paginate(d, size, w, max_h, NULL) : 1;
}

float docview_render_page(Scene *s, const Doc *d, const Theme *theme, float size, float x, float y, float w,
                          float max_h, int page) {
  int stack[256], *page_of = d->n <= 256 ? stack : malloc(sizeof(int) * (size_t)d->n);
  if (!page_of) return docview_render(s, d, theme, size, x, y, w, max_h);
  paginate(d, size, w, max_h, page_of);
  Ctx c = {s, theme, size};
  float used = 0;
  for (int i = 0; i < d->n; i++) {
    if (page_of[i] != page) continue;
    if (used > 0 && !fits_page(d, i, size, used, block_at(&(Ctx){NULL, theme, size}, d, i, x, 0, w), max_h))
      break;
    used += block_at(&c, d, i, x, y + used, w);
  }
  if (page_of != stack) free(page_of);
  return used;
}
