// svg.c -- see svg.h.
#include "svg.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fileio.h" // defines: AtomicFile
#include "utf8.h"   // defines: utf8_seq_len

// Text as XML character data: markup characters escaped, control characters XML forbids left
// out, and bytes that are not UTF-8 (a file name in another encoding) written as U+FFFD, so the
// file always parses.
static void escaped(FILE *f, const char *s) {
  while (s && *s) {
    int n = utf8_seq_len(s);
    const unsigned char *u = (const unsigned char *)s;
    if (n == 0)
      fputs("\xEF\xBF\xBD", f), n = 1;
    else if (n == 3 && u[0] == 0xEF && u[1] == 0xBF && u[2] >= 0xBE) // U+FFFE, U+FFFF
      fputs("\xEF\xBF\xBD", f);
    else if (n > 1)
      fwrite(s, 1, (size_t)n, f);
    else
      switch (*s) {
      case '&': fputs("&amp;", f); break;
      case '<': fputs("&lt;", f); break;
      case '>': fputs("&gt;", f); break;
      case '"': fputs("&quot;", f); break;
      default:
        if ((unsigned char)*s >= 0x20 || *s == '\t' || *s == '\n') fputc(*s, f);
      }
    s += n;
  }
}

// fill="#rrggbb" (plus opacity when not opaque)
static void paint(FILE *f, const char *attr, uint32_t c) {
  fprintf(f, " %s=\"#%02x%02x%02x\"", attr, SF_R(c), SF_G(c), SF_B(c));
  if (SF_A(c) != 255) fprintf(f, " %s-opacity=\"%.3f\"", attr, SF_A(c) / 255.0);
}

static void tag(FILE *f, const Cmd *c, const char *element) {
  if (c->tag) {
    fputs("><title>", f);
    escaped(f, c->tag);
    fprintf(f, "</title></%s>\n", element);
  } else {
    fputs("/>\n", f);
  }
}

static void cells(FILE *f, const Cmd *c) {
  fputs("<g shape-rendering=\"crispEdges\">\n", f);
  for (int i = 0; i < c->rows; i++) {
    float y0 = roundf(c->y + c->h * i / c->rows), y1 = roundf(c->y + c->h * (i + 1) / c->rows);
    for (int j = 0; j < c->cols; j++) {
      float x0 = roundf(c->x + c->w * j / c->cols), x1 = roundf(c->x + c->w * (j + 1) / c->cols);
      fprintf(f, "<rect x=\"%g\" y=\"%g\" width=\"%g\" height=\"%g\"", x0, y0, x1 - x0, y1 - y0);
      paint(f, "fill", c->colors[(size_t)i * c->cols + j]);
      fputs("/>\n", f);
    }
  }
  fputs("</g>\n", f);
}

void svg_fprint(const Scene *s, FILE *f, const char *title, const char *desc) {
  fprintf(f,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%g\" height=\"%g\" "
          "viewBox=\"0 0 %g %g\">\n",
          s->width, s->height, s->width, s->height);
  if (title) {
    fputs("<title>", f);
    escaped(f, title);
    fputs("</title>\n", f);
  }
  if (desc) {
    fputs("<desc>", f);
    escaped(f, desc);
    fputs("</desc>\n", f);
  }
  // one hatch pattern per (background, line) colour pair in use
  uint64_t pats[32];
  int n_pats = 0;
  fputs("<defs>\n", f);
  for (int i = 0; i < s->n; i++) {
    const Cmd *c = &s->cmds[i];
    if (c->kind != CMD_HATCH) continue;
    uint64_t key = (uint64_t)c->color << 32 | c->color2;
    int k = 0;
    while (k < n_pats && pats[k] != key) k++;
    if (k < n_pats || n_pats == 32) continue;
    pats[n_pats] = key;
    fprintf(f,
            "<pattern id=\"hatch%d\" patternUnits=\"userSpaceOnUse\" width=\"8\" height=\"8\">"
            "<rect width=\"8\" height=\"8\"",
            n_pats);
    paint(f, "fill", c->color);
    fputs("/><path d=\"M-2,2 l4,-4 M0,8 l8,-8 M6,10 l4,-4\" stroke-width=\"1.5\"", f);
    paint(f, "stroke", c->color2);
    fputs("/></pattern>\n", f);
    n_pats++;
  }
  fputs("</defs>\n<rect width=\"100%\" height=\"100%\"", f);
  paint(f, "fill", s->background);
  fputs("/>\n", f);
  int n_clips = 0;
  bool in_clip = false; // a clipped group is open (scene_clip)
  for (int i = 0; i < s->n; i++) {
    const Cmd *c = &s->cmds[i];
    switch (c->kind) {
    case CMD_CLIP:
      if (in_clip) fputs("</g>\n", f);
      in_clip = c->w > 0 && c->h > 0;
      if (in_clip)
        fprintf(f,
                "<clipPath id=\"clip%d\"><rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>"
                "</clipPath>\n<g clip-path=\"url(#clip%d)\">\n",
                n_clips, c->x, c->y, c->w, c->h, n_clips),
            n_clips++;
      break;
    case CMD_RECT:
      fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"", c->x, c->y, c->w, c->h);
      paint(f, "fill", c->color);
      tag(f, c, "rect");
      break;
    case CMD_FRAME:
      fprintf(
          f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" stroke-width=\"%.2f\"",
          c->x + c->width / 2, c->y + c->width / 2, c->w - c->width, c->h - c->width, c->width);
      paint(f, "stroke", c->color);
      tag(f, c, "rect");
      break;
    case CMD_LINE:
      fprintf(f,
              "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke-width=\"%.2f\" "
              "stroke-linecap=\"round\"",
              c->x, c->y, c->x2, c->y2, c->width);
      paint(f, "stroke", c->color);
      tag(f, c, "line");
      break;
    case CMD_TEXT: {
      const char *style = text_svg_style(c->font);
      fprintf(
          f, "<text x=\"%.2f\" y=\"%.2f\" font-family=\"%s\" font-size=\"%.2f\"%s%s%s xml:space=\"preserve\"",
          c->x, c->y, text_svg_family(c->font), c->size, *style ? " style=\"" : "", style,
          *style ? "\"" : "");
      if (c->turned) fprintf(f, " transform=\"rotate(-90 %.2f %.2f)\"", c->x, c->y);
      paint(f, "fill", c->color);
      fputc('>', f);
      escaped(f, c->text);
      if (c->tag) {
        fputs("<title>", f);
        escaped(f, c->tag);
        fputs("</title>", f);
      }
      fputs("</text>\n", f);
      break;
    }
    case CMD_CELLS: cells(f, c); break;
    case CMD_HATCH: {
      uint64_t key = (uint64_t)c->color << 32 | c->color2;
      int k = 0;
      while (k < n_pats && pats[k] != key) k++;
      fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"", c->x, c->y, c->w, c->h);
      if (k < n_pats)
        fprintf(f, " fill=\"url(#hatch%d)\"", k);
      else
        paint(f, "fill", c->color);
      tag(f, c, "rect");
      break;
    }
    }
  }
  if (in_clip) fputs("</g>\n", f);
  fputs("</svg>\n", f);
}

bool svg_write(const Scene *s, const char *path, const char *title, const char *desc, Err *err) {
  AtomicFile af;
  if (!atomic_open(&af, path, err)) return false;
  svg_fprint(s, af.fp, title, desc);
  return atomic_commit(&af, err);
}
