// scene.h -- a picture as a list of drawing commands, for pixels and for SVG alike.
//
// Views never touch pixels: they append commands (filled and outlined rectangles, lines, text,
// blocks of heatmap cells, hatched masked cells) to a Scene in pixel coordinates (x right,
// y down; text at its baseline). scene_raster draws the list into a Canvas; svg.h writes the
// same list as SVG with one <rect> per cell and text as <text>. A command may carry a short
// `tag` (for SVG: a <title> tooltip, e.g. "A[cat, bank] = 0.31").
//
// A Scene owns its commands and an arena for their strings and colour arrays; scene_reset
// empties it for the next frame without freeing; scene_free releases everything.
//
//     Scene s; scene_init(&s, 1920, 1080, SF_RGBA(255, 255, 255, 255));
//     scene_rect(&s, 10, 10, 100, 40, SF_RGBA(230, 230, 230, 255));
//     scene_text(&s, FONT_SANS, 20, 14, 36, SF_RGBA(0, 0, 0, 255), "Q = Z W^q");
//     scene_raster(&s, canvas, 0);  scene_free(&s);
#ifndef SF_SCENE_H
#define SF_SCENE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "canvas.h" // defines: Canvas
#include "text.h"   // defines: FontFace

typedef enum {
  CMD_RECT,  // filled rectangle x, y, w, h
  CMD_FRAME, // outline of x, y, w, h, `width` thick, inside the edges
  CMD_LINE,  // segment (x, y) → (x2, y2), `width` thick
  CMD_TEXT,  // text at pen x, baseline y
  CMD_CELLS, // rows × cols cells tiling x, y, w, h, colours row-major (a heatmap)
  CMD_HATCH, // rectangle filled with `color`, crossed by diagonal lines of `color2`
  CMD_CLIP,  // from here on, draw only inside x, y, w, h (w <= 0: everywhere again)
} CmdKind;

typedef struct {
  CmdKind kind;
  float x, y, w, h;
  float x2, y2; // CMD_LINE end point
  float width;  // CMD_FRAME, CMD_LINE, CMD_HATCH line width
  uint32_t color, color2;
  FontFace font;          // CMD_TEXT
  float size;             // CMD_TEXT font size in pixels
  const char *text;       // CMD_TEXT (arena)
  bool turned;            // CMD_TEXT turned 90° counter-clockwise: it reads upwards from x, y
  int rows, cols;         // CMD_CELLS
  const uint32_t *colors; // CMD_CELLS rows*cols colours (arena)
  const char *tag;        // optional SVG tooltip (arena)
} Cmd;

typedef struct {
  Cmd *cmds;
  int n, cap;
  char *arena; // strings and colour arrays of this frame
  size_t used, arena_cap;
  char **old_arenas; // arenas outgrown during the frame, freed at reset
  int n_old;
  float width, height;
  uint32_t background;
} Scene;

void scene_init(Scene *s, float width, float height, uint32_t background);
void scene_reset(Scene *s, float width, float height, uint32_t background);
void scene_free(Scene *s);

// A point in the list to come back to (a layout tried and dropped, page.c): scene_rewind forgets
// every command added after scene_mark, and their arena room when no larger arena was started since.
typedef struct {
  int n, n_old;
  size_t used;
} SceneMark;
SceneMark scene_mark(const Scene *s);
void scene_rewind(Scene *s, SceneMark m);

// Each returns the new command (for setting `tag`), or NULL when out of memory.
Cmd *scene_rect(Scene *s, float x, float y, float w, float h, uint32_t color);
Cmd *scene_frame(Scene *s, float x, float y, float w, float h, float width, uint32_t color);
Cmd *scene_line(Scene *s, float x0, float y0, float x1, float y1, float width, uint32_t color);
Cmd *scene_text(Scene *s, FontFace f, float size, float x, float y, uint32_t color, const char *utf8);
// Returns an array of rows*cols colours to fill (row-major), owned by the scene.
// Text turned 90° counter-clockwise (a column's label read from bottom to top): the baseline
// runs up from (x, y), the glyphs stand on its left.
Cmd *scene_text_turned(Scene *s, FontFace f, float size, float x, float y, uint32_t color, const char *utf8);
// Everything drawn after scene_clip and before scene_unclip is kept inside x, y, w, h (a view
// larger than its area, panned).
void scene_clip(Scene *s, float x, float y, float w, float h);
void scene_unclip(Scene *s);
uint32_t *scene_cells(Scene *s, float x, float y, float w, float h, int rows, int cols);
Cmd *scene_hatch(Scene *s, float x, float y, float w, float h, uint32_t bg, uint32_t line);
// Copies a string into the scene's arena (for tags); printf-style.
const char *scene_strf(Scene *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void *scene_alloc(Scene *s, size_t bytes); // 16-byte aligned, lives until reset

// Text helpers: measure, then place by alignment (0 left, 0.5 centred, 1 right).
Cmd *scene_text_aligned(Scene *s, FontFace f, float size, float x, float y, float align, uint32_t color,
                        const char *utf8);

// scene_raster flags: SCENE_NO_TEXT skips text (pixel tests that must not depend on fonts);
// SCENE_NO_CLEAR draws over what the canvas holds (a layer on top of another picture).
enum { SCENE_NO_TEXT = 1, SCENE_NO_CLEAR = 2 };
void scene_raster(const Scene *s, Canvas c, int flags);

#endif
