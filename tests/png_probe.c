// png_probe.c -- a helper of the shell tests: how many pixels of a PNG near a colour.
//
//     png_probe FILE R G B [X0 Y0 X1 Y1]
// prints the number of pixels in [X0, X1) × [Y0, Y1) (default: the whole picture) whose red, green
// and blue each lie within 24 of R, G, B (a stroke's anti-aliased edge counts less than its core).
// Exit 2 on a bad argument or an unreadable file.
#include <stdio.h>
#include <stdlib.h>

#include "canvas.h"
#include "pngio.h"

int main(int argc, char **argv) {
  if (argc != 5 && argc != 9) {
    fprintf(stderr, "usage: png_probe FILE R G B [X0 Y0 X1 Y1]\n");
    return 2;
  }
  Canvas c;
  Err err = {0};
  if (!pngio_read(&c, argv[1], &err)) {
    fprintf(stderr, "png_probe: %s\n", err.msg);
    return 2;
  }
  int r = atoi(argv[2]), g = atoi(argv[3]), b = atoi(argv[4]);
  int x0 = 0, y0 = 0, x1 = c.w, y1 = c.h;
  if (argc == 9) x0 = atoi(argv[5]), y0 = atoi(argv[6]), x1 = atoi(argv[7]), y1 = atoi(argv[8]);
  if (x0 < 0) x0 = 0;
  if (y0 < 0) y0 = 0;
  if (x1 > c.w) x1 = c.w;
  if (y1 > c.h) y1 = c.h;
  long n = 0;
  for (int y = y0; y < y1; y++)
    for (int x = x0; x < x1; x++) {
      uint32_t p = c.px[(size_t)y * (size_t)c.stride + (size_t)x];
      n += abs((int)SF_R(p) - r) <= 24 && abs((int)SF_G(p) - g) <= 24 && abs((int)SF_B(p) - b) <= 24;
    }
  printf("%ld\n", n);
  canvas_free(&c);
  return 0;
}
