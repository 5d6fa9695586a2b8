// tex_delim.c -- things that grow: delimiters, radical signs and big operators.
//
// SDL_ttf cannot reach the size variants in the OpenType MATH table, so: a slightly bigger
// delimiter is the glyph at a bigger size; brackets, bars and floors are drawn as rules at any
// height; parentheses and braces are assembled from Latin Modern Math's encoded pieces
// (U+239B...U+23AD, as TeX does for its biggest sizes) with rules for the straight parts;
// radicals use √ up to a third taller, then the ⎷ bottom piece with a vertical rule.
// Measurements quoted in em come from Latin Modern Math at 1000 units per em.
#include <math.h>

#include "tex_layout.h"

#define MAX_PX 400.0f // text.h's largest font size

static TexBoxNode *glyph(TexLay *L, uint32_t cp, float size) {
  uint32_t drawn;
  FontFace f = tex_face_for(cp, &drawn);
  return tex_box_glyph(L, f, fminf(MAX_PX, fmaxf(4, roundf(size))), drawn);
}

static float ink_height(const TexBoxNode *b) { return b->g.maxy - b->g.miny; }

// b moved up or down so that its ink is centred on the math axis.
static TexBoxNode *on_axis(TexLay *L, TexBoxNode *b, float em) {
  if (!b) return NULL;
  return tex_shifted(L, b, 0, TEX_AXIS * em - (b->g.maxy + b->g.miny) / 2);
}

static TexBoxNode *scaled(TexLay *L, uint32_t cp, float em, float total) {
  TexBoxNode *b = glyph(L, cp, em);
  if (b && ink_height(b) > 0 && total > ink_height(b)) b = glyph(L, cp, ceilf(em * total / ink_height(b)));
  return on_axis(L, b, em);
}

static void add_rule(TexLay *L, TexBoxNode *g, float x, float y0, float y1, float w) {
  tex_box_add(g, tex_box_rule(L, w, y1 - y0, 0), x, y0);
}

// [ ] ⌈ ⌉ ⌊ ⌋ drawn with rules; stem and arms grow a little with the height, as TeX's do.
static TexBoxNode *bracket(TexLay *L, uint32_t cp, float em, float total) {
  TexBoxNode *g = tex_box_new(L, B_GROUP);
  if (!g) return NULL;
  float k = fminf(1, fmaxf(0, (total / em - 1) / 2));
  float t = (0.040f + 0.015f * k) * em, arm = (0.142f + 0.1f * k) * em;
  float open = (0.114f + 0.03f * k) * em, close = (0.03f + 0.03f * k) * em; // side bearings
  float top = TEX_AXIS * em + total / 2, bot = TEX_AXIS * em - total / 2;
  bool right = cp == ']' || cp == 0x2309 || cp == 0x230B;
  float x0 = right ? close : open, stem = right ? x0 + arm - t : x0;
  add_rule(L, g, stem, bot, top, t);
  if (cp == '[' || cp == ']' || cp == 0x2308 || cp == 0x2309) add_rule(L, g, x0, top - t, top, arm);
  if (cp == '[' || cp == ']' || cp == 0x230A || cp == 0x230B) add_rule(L, g, x0, bot, bot + t, arm);
  g->w = open + arm + close;
  return g;
}

// | and ‖ at any height.
static TexBoxNode *bars(TexLay *L, uint32_t cp, float em, float total) {
  TexBoxNode *g = tex_box_new(L, B_GROUP);
  if (!g) return NULL;
  float t = 0.04f * em, top = TEX_AXIS * em + total / 2, bot = TEX_AXIS * em - total / 2;
  add_rule(L, g, 0.119f * em - (cp == '|' ? 0 : 0.008f * em), bot, top, t);
  if (cp != '|') add_rule(L, g, 0.247f * em, bot, top, t);
  g->w = (cp == '|' ? 0.278f : 0.398f) * em;
  return g;
}

// ⟨ ⟩ as two thin strokes that widen slowly with the height.
static TexBoxNode *angle(TexLay *L, uint32_t cp, float em, float total) {
  TexBoxNode *g = tex_box_new(L, B_GROUP);
  if (!g) return NULL;
  float w = 0.226f * em * sqrtf(total / em), lw = 0.045f * em, side = 0.1f * em;
  float top = TEX_AXIS * em + total / 2 - lw / 2, bot = TEX_AXIS * em - total / 2 + lw / 2;
  float tip = cp == 0x27E8 ? side : side + w, far = cp == 0x27E8 ? side + w : side;
  tex_box_add(g, tex_box_line(L, far, top, tip, TEX_AXIS * em, lw), far, top);
  tex_box_add(g, tex_box_line(L, tip, TEX_AXIS * em, far, bot, lw), tip, TEX_AXIS * em);
  g->w = w + 2 * side, g->h = top + lw, g->d = -bot + lw;
  return g;
}

typedef struct {
  uint32_t top, ext, mid, bot;
  float overlap; // em of straight stroke at each end of a piece: how far two pieces may overlap
  float open;    // side bearing on the open side, em
} Pieces;

static bool pieces_of(uint32_t cp, Pieces *p) {
  switch (cp) {
  case '(': *p = (Pieces){0x239B, 0x239C, 0, 0x239D, 0.249f, 0.10f}; return true;
  case ')': *p = (Pieces){0x239E, 0x239F, 0, 0x23A0, 0.249f, 0.10f}; return true;
  case '{': *p = (Pieces){0x23A7, 0x23AA, 0x23A8, 0x23A9, 0.374f, 0.08f}; return true;
  case '}': *p = (Pieces){0x23AB, 0x23AA, 0x23AC, 0x23AD, 0.374f, 0.08f}; return true;
  default: return false;
  }
}

// A rule that continues a glyph's stroke from x0 to x1 (the glyph's whole-pixel ink bounds,
// so half a pixel inside each), anti-aliased like the glyph rather than snapped.
static void stroke(TexLay *L, TexBoxNode *g, float x0, float x1, float y0, float y1) {
  TexBoxNode *r = tex_box_rule(L, fmaxf(0.5f, x1 - x0 - 1), y1 - y0, 0);
  if (r) r->soft = true;
  tex_box_add(g, r, x0 + 0.5f, y0);
}

// A straight stretch between y0 and y1, as wide as the extension piece's ink.
static void fill(TexLay *L, TexBoxNode *g, const TexBoxNode *ext, float y0, float y1) {
  if (y1 > y0) stroke(L, g, ext->g.minx, ext->g.maxx, y0 - 0.5f, y1 + 0.5f);
}

// Top and bottom hooks (and a middle piece for braces) with straight rules between; below
// their natural height, the pieces overlap on their straight ends, then shrink.
static TexBoxNode *assembly(TexLay *L, const Pieces *p, float em, float total) {
  float size = em;
  TexBoxNode *t = NULL, *b = NULL, *m = NULL, *e = NULL;
  for (int pass = 0; pass < 2; pass++) {
    t = glyph(L, p->top, size), b = glyph(L, p->bot, size), e = glyph(L, p->ext, size);
    m = p->mid ? glyph(L, p->mid, size) : NULL;
    if (!t || !b || !e || (p->mid && !m)) return NULL;
    float least =
        ink_height(t) + ink_height(b) + (m ? ink_height(m) : 0) - (m ? 2.0f : 1.0f) * p->overlap * size;
    if (total >= least || pass) break;
    size = floorf(size * total / least);
  }
  TexBoxNode *g = tex_box_new(L, B_GROUP);
  if (!g) return NULL;
  float axis = TEX_AXIS * em, top = axis + total / 2, bot = axis - total / 2;
  bool left = p->top == 0x239B || p->top == 0x23A7;
  float inkl = fminf(t->g.minx, b->g.minx), inkr = fmaxf(t->g.maxx, b->g.maxx);
  if (m) inkl = fminf(inkl, m->g.minx), inkr = fmaxf(inkr, m->g.maxx);
  float open = p->open * em, close = 0.05f * em, x = (left ? open : close) - inkl;
  TexBoxNode *pieces = tex_box_new(L, B_GROUP);
  if (!pieces) return NULL;
  float t_low = top - ink_height(t), b_high = bot + ink_height(b);
  tex_box_add(pieces, t, 0, top - t->g.maxy);
  tex_box_add(pieces, b, 0, bot - b->g.miny);
  if (m) {
    float ym = axis - (m->g.maxy + m->g.miny) / 2;
    tex_box_add(pieces, m, 0, ym);
    fill(L, pieces, e, ym + m->g.maxy, t_low);
    fill(L, pieces, e, b_high, ym + m->g.miny);
  } else {
    fill(L, pieces, e, b_high, t_low);
  }
  tex_box_add(g, pieces, x, 0);
  g->w = open + close + (inkr - inkl);
  return g;
}

TexBoxNode *tex_delim(TexLay *L, uint32_t cp, float em, float total) {
  if (!cp) { // the null delimiter '.': \nulldelimiterspace
    TexBoxNode *g = tex_box_new(L, B_GROUP);
    if (g) g->w = 0.12f * em;
    return g;
  }
  TexBoxNode *b = glyph(L, cp, em);
  if (!b) return NULL;
  float ink = ink_height(b);
  if (ink <= 0 || total <= ink * 1.01f) return on_axis(L, b, em);
  Pieces p;
  switch (cp) {
  case '[':
  case ']':
  case 0x2308:
  case 0x2309:
  case 0x230A:
  case 0x230B: return bracket(L, cp, em, total);
  case '|':
  case 0x2016: return bars(L, cp, em, total);
  case 0x27E8:
  case 0x27E9: return total > 1.3f * ink ? angle(L, cp, em, total) : scaled(L, cp, em, total);
  default:
    if (pieces_of(cp, &p) && total > (L->lm ? 1.9f : 1.4f) * ink) return assembly(L, &p, em, total);
    return scaled(L, cp, em, total);
  }
}

// TeX's rule 19: cover the list's height and depth around the axis, with \delimiterfactor 901
// and \delimitershortfall 5pt.
TexBoxNode *tex_delim_around(TexLay *L, uint32_t cp, float em, float h, float d) {
  float axis = TEX_AXIS * em, delta = fmaxf(h - axis, d + axis);
  float size = fmaxf(delta * 2 * 0.901f, 2 * delta - 0.5f * em);
  return tex_delim(L, cp, em, size);
}

// A radical drawn with lines, for fonts without Latin Modern's pieces.
static TexBoxNode *drawn_radical(TexLay *L, float em, float total, float *rule_x) {
  TexBoxNode *g = tex_box_new(L, B_GROUP);
  if (!g) return NULL;
  float t = TEX_RULE * em, bot = -total, r = fminf(1, total / em);
  float ax = 0.06f * em, ay = bot + 0.42f * em * r, bx = 0.17f * em, by = bot + 0.5f * em * r;
  float cx = 0.40f * em, dx = 0.80f * em, dy = -t / 2;
  tex_box_add(g, tex_box_line(L, ax, ay, bx, by, t * 1.2f), ax, ay);
  tex_box_add(g, tex_box_line(L, bx, by, cx, bot + t, t * 2.2f), bx, by);
  tex_box_add(g, tex_box_line(L, cx, bot + t, dx, dy, t), cx, bot + t);
  *rule_x = dx - t / 2;
  g->h = 0, g->d = total, g->w = dx;
  return g;
}

TexBoxNode *tex_radical(TexLay *L, float em, float total, float *rule_x) {
  TexBoxNode *b = glyph(L, 0x221A, em);
  if (!b) return NULL;
  float ink = ink_height(b);
  if (ink > 0 && total > ink && total <= (L->lm ? 1.35f : 1.15f) * ink)
    b = glyph(L, 0x221A, ceilf(em * total / ink)); // a little taller: the glyph, scaled
  if (ink <= 0 || ink_height(b) >= total * 0.99f) {
    *rule_x = b->g.advance;
    return b; // its height is the top of its ink: the top of the vinculum
  }
  if (!L->lm) return drawn_radical(L, em, total, rule_x);
  // ⎷ stands on the baseline and ends in a vertical stroke 0.04 em wide at its right edge
  TexBoxNode *piece = glyph(L, 0x23B7, em), *g = tex_box_new(L, B_GROUP);
  if (!piece || !g) return NULL;
  if (ink_height(piece) > total) piece = glyph(L, 0x23B7, floorf(em * total / ink_height(piece)));
  if (!piece) return NULL;
  float t = TEX_RULE * em, y = -total - piece->g.miny;
  tex_box_add(g, piece, 0, y);
  float stroke_top = y + piece->g.maxy;
  float right = piece->g.maxx - 0.5f; // the ink's edge, inside its whole-pixel bound
  if (stroke_top < 0) stroke(L, g, right - t - 0.5f, right + 0.5f, stroke_top - 0.5f, 0);
  *rule_x = right - t;
  g->h = 0, g->d = total, g->w = piece->g.maxx;
  return g;
}

TexBoxNode *tex_bigop(TexLay *L, uint32_t cp, float em, bool display) {
  bool integral = cp >= 0x222B && cp <= 0x222E;
  float size = display ? em * (integral ? 2.0f : 1.4f) : em; // display variants: 2.22, 1.40
  return on_axis(L, glyph(L, cp, size), em);
}
