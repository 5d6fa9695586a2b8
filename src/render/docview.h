// docview.h -- lays out a Doc (a lesson step's narration: paragraphs, lists, inline and display
// math, emphasis, code) into a column of a Scene, wrapping words and formulas.
//
// docview_render draws the Doc in the box (x, y, w, max_h) and returns the height it used.
// When the text does not fit, it is set again at a smaller size (down to 65 % of `size`);
// what still does not fit is cut at a block boundary and marked with "…". Formulas go through
// tex.h (inline: text style; display: centred, display style). Nothing is drawn right of x + w:
// a displayed formula wider than the column is broken at its top-level \quad and \qquad into
// centred lines (tex_parts), and a formula still too wide is set smaller. Punctuation that
// touches a word or formula stays on its line; code blocks keep their lines, in the monospaced
// face. Colours come from the theme.
//
//     float used = docview_render(&scene, &step->narration, theme, 22, x, y, 560, 800);
#ifndef SF_DOCVIEW_H
#define SF_DOCVIEW_H

#include "colormap.h" // defines: Theme
#include "doc.h"      // defines: Doc
#include "scene.h"    // defines: Scene

float docview_render(Scene *s, const Doc *d, const Theme *theme, float size, float x, float y, float w,
                     float max_h);
// Height the Doc would take at this size and width (nothing drawn).
float docview_measure(const Doc *d, float size, float w);
// The Doc in pages of max_h at this size, never smaller (a long narration goes on a second page
// rather than shrinking, issue 31): a page ends at a block boundary, a block taller than a page
// has a page of its own. docview_render_page draws page `page` (0-based) and returns the height
// used; docview_pages says how many there are (1 when the Doc fits).
int docview_pages(const Doc *d, float size, float w, float max_h);
float docview_render_page(Scene *s, const Doc *d, const Theme *theme, float size, float x, float y, float w,
                          float max_h, int page);

#endif
