// bars.h -- horizontal probability bars, large enough to read from the back of a room: one row
// per item, its name right-aligned, a bar as long as its probability on a track of 1, and the
// probability written beside the bar. The prediction's most likely next words (view_stages.c)
// and a classifier's classes (view_classes.c) draw with it.
//
//     Bar b[2] = {{"river", 0.62f, true}, {"money", 0.21f, false}};
//     float fs = bars_draw(scene, theme, b, 2, x, y, w, h, 40);
#ifndef SF_BARS_H
#define SF_BARS_H

#include <stdbool.h>

#include "colormap.h" // defines: Theme
#include "scene.h"    // defines: Scene

typedef struct {
  const char *name;
  float p;     // 0 .. 1
  bool strong; // drawn in the accent colour, its words bold (the winner)
} Bar;

// Draws n bars filling x, y, w, h (rows of equal height), text at most max_fs pixels; returns
// the text size used (about 0.6 of a row). The names take at most 35 % of the width.
float bars_draw(Scene *s, const Theme *th, const Bar *b, int n, float x, float y, float w, float h,
                float max_fs);

#endif
