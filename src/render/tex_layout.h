// tex_layout.h -- what the layout files (tex_layout.c, tex_matrix.c, tex_delim.c) share:
// the style record and the layout functions that call each other. Private to tex_*.c.
#ifndef SF_TEX_LAYOUT_H
#define SF_TEX_LAYOUT_H

#include "tex_internal.h"

typedef struct {
  uint8_t st;   // TexStyle
  bool cramped; // TeX's cramped styles: superscripts sit lower
} Sty;

Sty tex_sup_style(Sty s);
Sty tex_sub_style(Sty s);

// Lays out a list as one horizontal box; lead_ord spaces its first atom as if an ordinary
// atom came before (the {} of "& = b" in aligned).
TexBoxNode *tex_lay_list_ex(TexLay *L, const TexNode *list, Sty st, bool lead_ord);
TexBoxNode *tex_lay_list(TexLay *L, const TexNode *list, Sty st);
// One atom with its scripts; *cls gets its spacing class.
TexBoxNode *tex_lay_atom(TexLay *L, const TexNode *n, Sty st, int *cls);
TexBoxNode *tex_lay_limits(TexLay *L, TexBoxNode *op, float ic, const TexNode *over, const TexNode *under,
                           Sty st);
TexBoxNode *tex_shifted(TexLay *L, TexBoxNode *b, float x, float y);

TexBoxNode *tex_lay_leftright(TexLay *L, const TexNode *n, Sty st); // tex_matrix.c
TexBoxNode *tex_lay_matrix(TexLay *L, const TexNode *n, Sty st);    // tex_matrix.c

#endif
