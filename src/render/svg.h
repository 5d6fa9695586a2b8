// svg.h -- writes a Scene as an SVG 1.1 file: true vectors, one <rect> per heatmap cell, text as
// <text> in the same font families (DejaVu Sans, Latin Modern Math ...), masked cells hatched
// with a <pattern>, command tags as <title> tooltips. Written atomically (fileio.h).
// `title` and `desc` (may be NULL) become the document's <title> and <desc> (the sentence,
// model and seed, so the file says what it shows).
//
//     if (!svg_write(&scene, "out/09-softmax-h1.svg", "softmax, head 1", "The cat ...", &err)) ...
#ifndef SF_SVG_H
#define SF_SVG_H

#include <stdbool.h>
#include <stdio.h>

#include "err.h"   // defines: Err
#include "scene.h" // defines: Scene

bool svg_write(const Scene *s, const char *path, const char *title, const char *desc, Err *err);
// Writes the SVG document to an open stream (what svg_write does inside its atomic file).
void svg_fprint(const Scene *s, FILE *f, const char *title, const char *desc);

#endif
