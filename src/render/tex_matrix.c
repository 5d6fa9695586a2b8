// tex_matrix.c -- \left ... \right (with \middle) and the matrix environments (matrix,
// pmatrix, bmatrix, Bmatrix, vmatrix, Vmatrix, cases, aligned) laid out as amsmath does.
#include <math.h>

#include "tex_layout.h"

// [l] body [r] side by side.
static TexBoxNode *fence(TexLay *L, TexBoxNode *l, TexBoxNode *body, TexBoxNode *r) {
  TexBoxNode *g = tex_box_new(L, B_GROUP);
  if (!g || !l || !body || !r) return NULL;
  tex_box_add(g, l, 0, 0);
  tex_box_add(g, body, l->w, 0);
  tex_box_add(g, r, l->w + body->w, 0);
  g->w = l->w + body->w + r->w;
  return g;
}

TexBoxNode *tex_lay_leftright(TexLay *L, const TexNode *n, Sty st) {
  float em = tex_style_size(L, (TexStyle)st.st);
  float mh = L->mid_h, md = L->mid_d;
  // First pass: \middle takes no room, so it cannot size itself. A second pass draws it at
  // the size found, unless this is itself only measured (nesting would double the work).
  bool again = n->has_middle && !L->measuring;
  L->mid_h = L->mid_d = 0;
  L->measuring += n->has_middle;
  TexBoxNode *body = tex_lay_list(L, n->a, st);
  L->measuring -= n->has_middle;
  if (body && again) {
    L->mid_h = fmaxf(body->h, 0.01f), L->mid_d = body->d;
    body = tex_lay_list(L, n->a, st);
  }
  L->mid_h = mh, L->mid_d = md;
  if (!body) return NULL;
  return fence(L, tex_delim_around(L, n->ldelim, em, body->h, body->d), body,
               tex_delim_around(L, n->rdelim, em, body->h, body->d));
}

typedef struct {
  float *colw, *rowh, *rowd;
  TexBoxNode **cell;
} Grid;

static bool grid_alloc(TexLay *L, Grid *g, int rows, int cols) {
  g->colw = tex_alloc(L->arena, sizeof(float) * (size_t)cols);
  g->rowh = tex_alloc(L->arena, sizeof(float) * (size_t)rows);
  g->rowd = tex_alloc(L->arena, sizeof(float) * (size_t)rows);
  g->cell = tex_alloc(L->arena, sizeof(TexBoxNode *) * (size_t)rows * (size_t)cols);
  return g->colw && g->rowh && g->rowd && g->cell;
}

// Where a cell of width w goes in its column of width cw.
static float align_in(uint8_t align, int col, float w, float cw) {
  if (align == 'l' || (align == 'a' && col % 2)) return 0;
  if (align == 'a') return cw - w;
  return (cw - w) / 2;
}

// The gap before column col (> 0).
static float col_gap(uint8_t align, int col, float em) {
  if (align == 'a') return col % 2 ? 0 : 2 * em; // aligned: pairs of right|left columns
  return em;                                     // 2 \arraycolsep; \quad in cases
}

// The cells, rows × cols, without delimiters.
static TexBoxNode *lay_grid(TexLay *L, const TexNode *n, Sty st) {
  TexBoxNode *box = tex_box_new(L, B_GROUP);
  int R = n->rows, C = n->cols;
  if (!box || R <= 0 || C <= 0 || !n->cells) return box;
  Sty cs = {st.st < ST_T ? ST_T : st.st, false};
  float em = tex_style_size(L, (TexStyle)cs.st);
  float axis = TEX_AXIS * tex_style_size(L, (TexStyle)st.st);
  float jot = n->align == 'a' ? 0.3f * em : 0;
  Grid g;
  if (!grid_alloc(L, &g, R, C)) return NULL;
  for (int r = 0; r < R; r++) {
    g.rowh[r] = 0.84f * em, g.rowd[r] = 0.36f * em; // \arraystretch 1 strut of 1.2 em
    for (int c = 0; c < C; c++) {
      TexBoxNode *b = tex_lay_list_ex(L, n->cells[r * C + c], cs, n->align == 'a' && c % 2);
      if (!b) return NULL;
      g.cell[r * C + c] = b;
      g.colw[c] = fmaxf(g.colw[c], b->w);
      g.rowh[r] = fmaxf(g.rowh[r], b->h), g.rowd[r] = fmaxf(g.rowd[r], b->d);
    }
  }
  float H = jot * (float)(R - 1);
  for (int r = 0; r < R; r++) H += g.rowh[r] + g.rowd[r];
  float y = axis + H / 2;
  for (int r = 0; r < R; r++) {
    y -= g.rowh[r];
    float x = 0;
    for (int c = 0; c < C; c++) {
      if (c) x += col_gap(n->align, c, em);
      TexBoxNode *b = g.cell[r * C + c];
      tex_box_add(box, b, x + align_in(n->align, c, b->w, g.colw[c]), y);
      x += g.colw[c];
    }
    box->w = x;
    y -= g.rowd[r] + jot;
  }
  box->h = fmaxf(box->h, axis + H / 2), box->d = fmaxf(box->d, H / 2 - axis);
  return box;
}

TexBoxNode *tex_lay_matrix(TexLay *L, const TexNode *n, Sty st) {
  TexBoxNode *grid = lay_grid(L, n, st);
  if (!grid || (!n->ldelim && !n->rdelim)) return grid;
  float em = tex_style_size(L, (TexStyle)st.st);
  return fence(L, tex_delim_around(L, n->ldelim, em, grid->h, grid->d), grid,
               tex_delim_around(L, n->rdelim, em, grid->h, grid->d));
}
