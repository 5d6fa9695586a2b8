// tex_layout.c -- TeX's math layout on TexNode lists (The TeXbook, Appendix G, simplified):
// atoms and their spacing classes, scripts, limits, fractions, radicals and accents, with
// Latin Modern Math's MATH constants (tex_internal.h and the comments give them in em).
#include <math.h>
#include <string.h>

#include "tex_layout.h"

SF_NO_COVERAGE float tex_style_size(const TexLay *L, TexStyle st) {
  float s = st == ST_S ? roundf(L->base * 0.7f) : st == ST_SS ? roundf(L->base * 0.5f) : L->base;
  return s < 4 ? 4 : s;
}

Sty tex_sup_style(Sty s) { return (Sty){s.st <= ST_T ? ST_S : ST_SS, s.cramped}; }
Sty tex_sub_style(Sty s) { return (Sty){s.st <= ST_T ? ST_S : ST_SS, true}; }
static Sty num_style(Sty s) { return (Sty){s.st == ST_D ? ST_T : s.st == ST_T ? ST_S : ST_SS, s.cramped}; }
static Sty den_style(Sty s) { return (Sty){num_style(s).st, true}; }

// ---- spacing between atoms (TeXbook p. 170): 1 thin, 2 medium, 3 thick; negative: only in
// display and text styles. Rows: left atom; columns: right atom.
static const signed char SPACING[8][8] = {
    //  ord op bin rel open close punct inner
    {0, 1, -2, -3, 0, 0, 0, -1},     // ord
    {1, 1, 0, -3, 0, 0, 0, -1},      // op
    {-2, -2, 0, 0, -2, 0, 0, -2},    // bin
    {-3, -3, 0, 0, -3, 0, 0, -3},    // rel
    {0, 0, 0, 0, 0, 0, 0, 0},        // open
    {0, 1, -2, -3, 0, 0, 0, -1},     // close
    {-1, -1, 0, -1, -1, -1, -1, -1}, // punct
    {-1, 1, -2, -3, -1, 0, -1, -1},  // inner
};

static float space_between(const TexLay *L, int left, int right, Sty st) {
  int k = SPACING[left][right];
  if (k < 0) k = st.st <= ST_T ? -k : 0;
  static const float MU[4] = {0, 3, 4, 5};
  return MU[k] * tex_style_size(L, (TexStyle)st.st) / 18;
}

typedef struct {
  TexBoxNode *box;
  uint8_t cls; // C_NONE: a kern, not an atom
  Sty st;
} Item;

// TeX's rules 5 and 6: a binary operator with nothing to operate on becomes ordinary.
static void fix_bins(Item *it, int n) {
  int prev = -1;
  for (int i = 0; i < n; i++) {
    int c = it[i].cls;
    if (c == C_NONE) continue;
    int pc = prev < 0 ? C_NONE : it[prev].cls;
    if (c == C_BIN &&
        (pc == C_NONE || pc == C_BIN || pc == C_OP || pc == C_REL || pc == C_OPEN || pc == C_PUNCT))
      it[i].cls = c = C_ORD;
    if ((c == C_REL || c == C_CLOSE || c == C_PUNCT) && pc == C_BIN) it[prev].cls = C_ORD;
    prev = i;
  }
  if (prev >= 0 && it[prev].cls == C_BIN) it[prev].cls = C_ORD;
}

TexBoxNode *tex_lay_list_ex(TexLay *L, const TexNode *list, Sty st, bool lead_ord) {
  TexBoxNode *box = tex_box_new(L, B_GROUP);
  int n = 0;
  for (const TexNode *k = list; k; k = k->next) n++;
  Item *it = n ? tex_alloc(L->arena, sizeof *it * (size_t)n) : NULL;
  if (!box || (n && !it)) return NULL;
  int m = 0;
  for (const TexNode *k = list; k; k = k->next) {
    if (k->kind == N_STYLE) {
      st.st = k->style;
      continue;
    }
    int cls = C_NONE;
    TexBoxNode *b = k->kind == N_SPACE ? tex_box_new(L, B_GROUP) : tex_lay_atom(L, k, st, &cls);
    if (!b) continue;
    if (k->kind == N_SPACE) b->w = k->amount * tex_style_size(L, (TexStyle)st.st) / 18;
    it[m++] = (Item){b, (uint8_t)cls, st};
  }
  fix_bins(it, m);
  float x = 0;
  int prev = lead_ord ? C_ORD : C_NONE;
  for (int i = 0; i < m; i++) {
    if (it[i].cls != C_NONE) {
      if (prev != C_NONE) x += space_between(L, prev, it[i].cls, it[i].st);
      prev = it[i].cls;
    }
    tex_box_add(box, it[i].box, x, 0);
    x += it[i].box->w;
  }
  box->w = x;
  return box;
}

TexBoxNode *tex_lay_list(TexLay *L, const TexNode *list, Sty st) {
  return tex_lay_list_ex(L, list, st, false);
}

TexBoxNode *tex_lay_formula(TexLay *L, const TexNode *list, bool display) {
  return tex_lay_list(L, list, (Sty){display ? ST_D : ST_T, false});
}

// A box holding b shifted by (x, y), with b's width.
TexBoxNode *tex_shifted(TexLay *L, TexBoxNode *b, float x, float y) {
  TexBoxNode *g = tex_box_new(L, B_GROUP);
  if (!g || !b) return NULL;
  tex_box_add(g, b, x, y);
  g->w = b->w;
  return g;
}

// ---- characters

static bool is_prime(uint32_t cp) { return cp >= 0x2032 && cp <= 0x2037; }

// One character; *ic gets its italic correction.
static TexBoxNode *lay_char(TexLay *L, const TexNode *n, Sty st, float *ic) {
  float em = tex_style_size(L, (TexStyle)st.st);
  uint32_t cp = tex_alpha_cp(n->cp, (TexAlphabet)n->alpha), drawn;
  FontFace f = tex_face_for(cp, &drawn);
  if (is_prime(cp) && st.st >= ST_S) {
    // Latin Modern's ′ is drawn raised, for use at full size: a scripted prime is the full
    // size glyph, lowered by the superscript shift that will raise it again.
    float big = roundf(em / (st.st == ST_S ? 0.7f : 0.5f));
    TexBoxNode *b = tex_box_glyph(L, f, big, drawn);
    if (b) b->h = b->g.maxy, b->d = -b->g.miny; // its true extent: above the baseline
    return tex_shifted(L, b, 0, -0.363f * big);
  }
  TexBoxNode *b = tex_box_glyph(L, f, em, drawn);
  if (!b) return NULL;
  if (!b->w && !b->h && tex_fonts_ready())
    tex_diag_add(L->diag, L->src, n->pos, "no glyph for U+%04X in the fonts", (unsigned)cp);
  if (L->lm && f == FONT_MATH)
    *ic = (float)tex_italic_corr(cp) * em / 1000;
  else if (cp != drawn || f == FONT_SERIF_ITALIC)
    *ic = fmaxf(0, b->g.maxx - b->g.advance);
  return b;
}

static bool is_bigop(const TexNode *n) {
  return n->kind == N_CHAR && n->cls == C_OP && tex_char_class(n->cp) == C_OP;
}

// ---- scripts (rules 18a-f, with OpenType MATH constants)

static TexBoxNode *lay_scripts(TexLay *L, TexBoxNode *nuc, bool is_char, float ic, const TexNode *n, Sty st) {
  float em = tex_style_size(L, (TexStyle)st.st);
  TexBoxNode *sup = n->sup ? tex_lay_list(L, n->sup, tex_sup_style(st)) : NULL;
  TexBoxNode *sub = n->sub ? tex_lay_list(L, n->sub, tex_sub_style(st)) : NULL;
  TexBoxNode *g = tex_box_new(L, B_GROUP);
  if (!g || (n->sup && !sup) || (n->sub && !sub)) return NULL;
  float u = is_char ? 0 : nuc->h - 0.250f * em; // SuperscriptBaselineDropMax
  float v = is_char ? 0 : nuc->d + 0.200f * em; // SubscriptBaselineDropMin
  if (sup) u = fmaxf(u, fmaxf(st.cramped ? 0.289f * em : 0.363f * em, sup->d + 0.108f * em));
  if (sub && !sup) v = fmaxf(v, fmaxf(0.247f * em, sub->h - 0.344f * em));
  if (sub && sup) {
    v = fmaxf(v, 0.247f * em);
    float gap = (u - sup->d) - (sub->h - v);
    if (gap < 0.160f * em) { // SubSuperscriptGapMin, then SuperscriptBottomMaxWithSubscript
      v += 0.160f * em - gap;
      float lift = 0.344f * em - (u - sup->d);
      if (lift > 0) u += lift, v -= lift;
    }
  }
  tex_box_add(g, nuc, 0, 0);
  float w = nuc->w + (sub ? 0 : ic);
  if (sup) tex_box_add(g, sup, nuc->w + ic, u), w = fmaxf(w, nuc->w + ic + sup->w);
  if (sub) tex_box_add(g, sub, nuc->w, -v), w = fmaxf(w, nuc->w + sub->w);
  g->w = w + 0.056f * em; // SpaceAfterScript
  return g;
}

// Limits above and below an operator (rule 13a, with TeX's big_op_spacing1..5).
TexBoxNode *tex_lay_limits(TexLay *L, TexBoxNode *op, float ic, const TexNode *over, const TexNode *under,
                           Sty st) {
  float em = tex_style_size(L, (TexStyle)st.st);
  TexBoxNode *sup = over ? tex_lay_list(L, over, tex_sup_style(st)) : NULL;
  TexBoxNode *sub = under ? tex_lay_list(L, under, tex_sub_style(st)) : NULL;
  TexBoxNode *g = tex_box_new(L, B_GROUP);
  if (!g || !op || (over && !sup) || (under && !sub)) return NULL;
  float w = fmaxf(op->w, fmaxf(sup ? sup->w : 0, sub ? sub->w : 0));
  tex_box_add(g, op, (w - op->w) / 2, 0);
  if (sup) {
    float y = op->h + fmaxf(0.111f * em, 0.2f * em - sup->d) + sup->d;
    tex_box_add(g, sup, (w - sup->w + ic) / 2, y);
    g->h += 0.1f * em;
  }
  if (sub) {
    float y = op->d + fmaxf(0.167f * em, 0.6f * em - sub->h) + sub->h;
    tex_box_add(g, sub, (w - sub->w - ic) / 2, -y);
    g->d += 0.1f * em;
  }
  g->w = w;
  return g;
}

// ---- fractions (rule 15, OpenType constants)

static TexBoxNode *lay_frac(TexLay *L, const TexNode *n, Sty st) {
  if (n->style != 0xFF) st.st = n->style;
  float em = tex_style_size(L, (TexStyle)st.st), axis = TEX_AXIS * em;
  bool disp = st.st == ST_D;
  TexBoxNode *num = tex_lay_list(L, n->a, num_style(st));
  TexBoxNode *den = tex_lay_list(L, n->b, den_style(st));
  TexBoxNode *g = tex_box_new(L, B_GROUP);
  if (!num || !den || !g) return NULL;
  float t = n->rule ? TEX_RULE * em : 0, u, v;
  if (n->rule) {
    float gap = (disp ? 0.120f : 0.040f) * em;
    u = (disp ? 0.677f : 0.394f) * em, v = (disp ? 0.686f : 0.345f) * em;
    u = fmaxf(u, gap + axis + t / 2 + num->d);
    v = fmaxf(v, gap + den->h - axis + t / 2);
  } else {
    float gap = (disp ? 0.280f : 0.120f) * em;
    u = (disp ? 0.677f : 0.444f) * em, v = (disp ? 0.686f : 0.345f) * em;
    float clear = (u - num->d) - (den->h - v);
    if (clear < gap) u += (gap - clear) / 2, v += (gap - clear) / 2;
  }
  float w = fmaxf(num->w, den->w), pad = n->ldelim ? 0 : 0.12f * em; // \nulldelimiterspace
  tex_box_add(g, num, pad + (w - num->w) / 2, u);
  tex_box_add(g, den, pad + (w - den->w) / 2, -v);
  if (n->rule) tex_box_add(g, tex_box_rule(L, w, t / 2, t / 2), pad, axis);
  g->w = w + 2 * pad;
  if (!n->ldelim) return g;
  float size = (disp ? 2.39f : 1.01f) * em; // \delim1, \delim2
  TexBoxNode *row = tex_box_new(L, B_GROUP), *l = tex_delim(L, n->ldelim, em, size);
  TexBoxNode *r = tex_delim(L, n->rdelim, em, size);
  if (!row || !l || !r) return NULL;
  tex_box_add(row, l, 0, 0);
  tex_box_add(row, g, l->w, 0);
  tex_box_add(row, r, l->w + g->w, 0);
  return row;
}

// ---- radicals (rule 11, OpenType constants)

static TexBoxNode *lay_sqrt(TexLay *L, const TexNode *n, Sty st) {
  float em = tex_style_size(L, (TexStyle)st.st), t = TEX_RULE * em;
  float gap = (st.st == ST_D ? 0.148f : 0.050f) * em;
  TexBoxNode *body = tex_lay_list(L, n->a, (Sty){st.st, true});
  TexBoxNode *g = tex_box_new(L, B_GROUP);
  if (!body || !g) return NULL;
  float need = body->h + body->d + gap + t, rule_x = 0;
  TexBoxNode *sign = tex_radical(L, em, need, &rule_x);
  if (!sign) return NULL;
  float total = sign->h + sign->d;
  if (total > need) gap += (total - need) / 2;
  float top = body->h + gap + t, x = 0;
  if (n->b) { // the index, in scriptscript style, raised to 60% of the sign
    TexBoxNode *idx = tex_lay_list(L, n->b, (Sty){ST_SS, true});
    if (!idx) return NULL;
    float bottom = top - total, kb = 0.278f * em, ka = -0.556f * em;
    tex_box_add(g, idx, kb, bottom + 0.6f * total + idx->d);
    x = fmaxf(0, kb + idx->w + ka);
  }
  tex_box_add(g, sign, x, top - sign->h);
  tex_box_add(g, tex_box_rule(L, body->w, t, 0), x + rule_x, top - t);
  tex_box_add(g, body, x + rule_x, 0);
  g->h = fmaxf(g->h, top + 0.040f * em); // RadicalExtraAscender
  g->w = x + rule_x + body->w;
  return g;
}

// ---- accents (rule 12): centred on the base's accent point, raised over tall bases

// \widehat and \widetilde over a wide base: thin strokes w wide, like TeX's wide variants.
static TexBoxNode *wide_accent(TexLay *L, uint32_t cp, float em, float w) {
  TexBoxNode *g = tex_box_new(L, B_GROUP);
  if (!g) return NULL;
  float lw = 0.042f * em, hgt = fminf(0.28f * em, 0.1f * em + 0.06f * w);
  if (cp == 0x302) {
    tex_box_add(g, tex_box_line(L, 0, 0, w / 2, hgt, lw), 0, 0);
    tex_box_add(g, tex_box_line(L, w / 2, hgt, w, 0, lw), w / 2, hgt);
  } else { // a tilde: up to a crest at a quarter, down to a trough at three quarters, up
    float px = 0, py = 0;
    for (int i = 1; i <= 16; i++) {
      float t = (float)i / 16, x = t * w;
      float y = hgt * 0.5f * (0.7f * sinf(6.2831853f * t) + t) * 1.9f;
      tex_box_add(g, tex_box_line(L, px, py, x, y, lw), px, py);
      px = x, py = y;
    }
  }
  g->w = w;
  return g;
}

static float accent_point(const TexLay *L, const TexNode *n, const TexBoxNode *base, float em) {
  const TexNode *one = n->a && !n->a->next && n->a->kind == N_CHAR ? n->a : NULL;
  int ta = one && L->lm ? tex_top_accent(tex_alpha_cp(one->cp, (TexAlphabet)one->alpha)) : -1;
  return ta >= 0 ? (float)ta * em / 1000 : base->w / 2;
}

static TexBoxNode *lay_accent(TexLay *L, const TexNode *n, Sty st) {
  float em = tex_style_size(L, (TexStyle)st.st);
  TexBoxNode *base = tex_lay_list(L, n->a, (Sty){st.st, true});
  TexBoxNode *g = tex_box_new(L, B_GROUP);
  if (!base || !g) return NULL;
  uint32_t acp;
  FontFace f = tex_face_for(n->cp, &acp);
  GlyphInfo a;
  if (!tex_glyph(f, (int)em, acp, &a)) a = (GlyphInfo){0};
  tex_box_add(g, base, 0, 0);
  g->w = base->w;
  if (n->wide && (n->cp == 0x302 || n->cp == 0x303) && base->w > 1.3f * (a.maxx - a.minx)) {
    float w = 0.92f * base->w;
    tex_box_add(g, wide_accent(L, n->cp, em, w), (base->w - w) / 2,
                fmaxf(base->h, TEX_XHEIGHT * em) + 0.12f * em);
    return g;
  }
  // the accent is drawn for a base of x-height: lift it by what the base has more
  float lift = fmaxf(0, base->h - TEX_XHEIGHT * em);
  TexBoxNode *acc = tex_box_glyph(L, f, em, acp);
  if (acc) {
    acc->w = 0;
    tex_box_add(g, acc, accent_point(L, n, base, em) - (a.minx + a.maxx) / 2, lift);
  }
  return g;
}

static TexBoxNode *lay_bar(TexLay *L, const TexNode *n, Sty st, bool over) {
  float em = tex_style_size(L, (TexStyle)st.st), t = TEX_RULE * em;
  TexBoxNode *body = tex_lay_list(L, n->a, over ? (Sty){st.st, true} : st);
  TexBoxNode *g = tex_box_new(L, B_GROUP);
  if (!body || !g) return NULL;
  tex_box_add(g, body, 0, 0);
  if (over) {
    tex_box_add(g, tex_box_rule(L, body->w, t, 0), 0, body->h + 3 * t);
    g->h += t;
  } else {
    tex_box_add(g, tex_box_rule(L, body->w, 0, t), 0, -(body->d + 3 * t));
    g->d += t;
  }
  g->w = body->w;
  return g;
}

static TexBoxNode *lay_phantom(TexLay *L, const TexNode *n, Sty st) {
  TexBoxNode *b = tex_lay_list(L, n->a, st);
  if (!b) return NULL;
  b->hidden = true;
  if (n->phantom == 2) b->h = b->d = 0;
  if (n->phantom == 3) b->w = 0;
  return b;
}

// ---- atoms

static bool limits_here(const TexNode *n, Sty st) {
  if (n->limits) return n->limits == 1;
  return n->amount > 0 && st.st == ST_D;
}

// The nucleus of n; *is_char when it is a character (scripts then ignore its height).
static TexBoxNode *nucleus(TexLay *L, const TexNode *n, Sty st, bool *is_char, float *ic) {
  float em = tex_style_size(L, (TexStyle)st.st);
  *is_char = false, *ic = 0;
  switch ((TexNodeKind)n->kind) {
  case N_CHAR:
    if (is_bigop(n)) {
      if (L->lm && n->cp >= 0x222B && n->cp <= 0x222E) *ic = 0.332f * em;
      return tex_bigop(L, n->cp, em, st.st == ST_D);
    }
    *is_char = true;
    return lay_char(L, n, st, ic);
  case N_RUN: *is_char = n->cls != C_OP; return tex_box_run(L, (FontFace)n->face, em, n->text);
  case N_ERROR: { // text as typed: its scripts sit as on a word of \mathrm
    *is_char = true;
    TexBoxNode *b = tex_box_run(L, FONT_SERIF, em, n->text);
    if (b) b->color = SF_RGBA(220, 0, 0, 255);
    return b;
  }
  case N_GROUP: return tex_lay_list(L, n->a, st);
  case N_FRAC: return lay_frac(L, n, st);
  case N_SQRT: return lay_sqrt(L, n, st);
  case N_ACCENT: return lay_accent(L, n, st);
  case N_OVERLINE: return lay_bar(L, n, st, true);
  case N_UNDERLINE: return lay_bar(L, n, st, false);
  case N_PHANTOM: return lay_phantom(L, n, st);
  case N_LEFTRIGHT: return tex_lay_leftright(L, n, st);
  case N_MATRIX: return tex_lay_matrix(L, n, st);
  case N_STACK: return tex_lay_limits(L, tex_lay_list(L, n->a, st), 0, n->b, n->c, st);
  case N_DELIM:
    if (n->amount >= 0) return tex_delim(L, n->cp, em, n->amount * em);
    if (L->mid_h + L->mid_d <= 0) return tex_box_new(L, B_GROUP); // measuring pass
    return tex_delim_around(L, n->cp, em, L->mid_h, L->mid_d);
  case N_SPACE:
  case N_STYLE: break;
  }
  return tex_box_new(L, B_GROUP);
}

TexBoxNode *tex_lay_atom(TexLay *L, const TexNode *n, Sty st, int *cls) {
  bool is_char;
  float ic;
  *cls = n->cls;
  TexBoxNode *b = nucleus(L, n, st, &is_char, &ic);
  if (!b) return NULL;
  if (n->sup || n->sub) {
    if (n->cls == C_OP && limits_here(n, st))
      b = tex_lay_limits(L, b, ic, n->sup, n->sub, st);
    else
      b = lay_scripts(L, b, is_char, ic, n, st);
  } else {
    b->w += ic;
  }
  if (b && n->color && !b->color) b->color = n->color;
  return b;
}
