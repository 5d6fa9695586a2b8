// pngio.h -- writes a Canvas as a PNG file (libpng), atomically, and reads one back.
//
// The canvas's RGBA bytes go to the file as 8-bit RGB (the background is opaque; alpha is
// dropped) with fast compression: heatmaps are flat colour, so zlib level 1 without row
// filters is 4x faster than libpng's default (level 6, adaptive filters) and only 20% larger;
// measured on exported stages, see BENCHMARKS.md.
// Text chunks (tEXt) record what the picture shows: pass key/value pairs, e.g. "Sentence",
// "Model", "Seed", "Software". pngio_read (for tests) returns a malloc'd canvas.
//
//     const char *kv[] = {"Sentence", "The cat walks by the bank", "Seed", "42"};
//     if (!pngio_write(canvas, "out/09-softmax-h1.png", kv, 2, &err)) ...
#ifndef SF_PNGIO_H
#define SF_PNGIO_H

#include <stdbool.h>

#include "canvas.h" // defines: Canvas
#include "err.h"    // defines: Err

bool pngio_write(Canvas c, const char *path, const char *const *kv, int n_kv, Err *err);
bool pngio_read(Canvas *out, const char *path, Err *err); // canvas_free the result

#endif
