// pngio.h -- writes a Canvas as a PNG file, atomically, and reads one back (libpng).
//
// The canvas's RGBA bytes go to the file as 8-bit RGB (the background is opaque; alpha is
// dropped), unfiltered, compressed by flatzip (flatzip.h): heatmaps are flat colour, and
// matching only the pixel to the left and the pixel above is 4x faster than zlib's fastest
// level and 6 % larger. The chunks are written here; libpng reads them back (tests).
// Text chunks (tEXt, or iTXt for UTF-8) record what the picture shows: pass key/value pairs,
// e.g. "Sentence", "Model", "Seed", "Software". pngio_read (for tests) returns a malloc'd canvas.
//
//     const char *kv[] = {"Sentence", "The cat walks by the bank", "Seed", "42"};
//     if (!pngio_write(canvas, "out/09-softmax-h1.png", kv, 2, &err)) ...
#ifndef SF_PNGIO_H
#define SF_PNGIO_H

#include <stdbool.h>
#include <stdio.h>

#include "canvas.h" // defines: Canvas
#include "err.h"    // defines: Err

bool pngio_write(Canvas c, const char *path, const char *const *kv, int n_kv, Err *err);
// The same PNG into an open stream (libstepformer: an open_memstream); false only when out of
// memory, the caller checks the stream.
bool pngio_write_stream(Canvas c, FILE *fp, const char *const *kv, int n_kv, Err *err);
bool pngio_read(Canvas *out, const char *path, Err *err); // canvas_free the result

#endif
