// pngio.c -- see pngio.h.
#include "pngio.h"

#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h" // defines: AtomicFile

static void on_error(png_structp p, png_const_charp msg) {
  Err *err = png_get_error_ptr(p);
  err_set(err, "PNG: %s", msg);
  longjmp(png_jmpbuf(p), 1);
}

static void on_warning(png_structp p, png_const_charp msg) { (void)p, (void)msg; }

bool pngio_write(Canvas c, const char *path, const char *const *kv, int n_kv, Err *err) {
  AtomicFile af;
  if (!atomic_open(&af, path, err)) return false;
  Err perr = {0};
  png_structp p = png_create_write_struct(PNG_LIBPNG_VER_STRING, &perr, on_error, on_warning);
  png_infop info = p ? png_create_info_struct(p) : NULL;
  uint8_t *volatile row = malloc((size_t)c.w * 3 + 1);
  if (!p || !info || !row) {
    png_destroy_write_struct(&p, &info);
    free(row);
    atomic_abort(&af);
    return err_set(err, "%s: out of memory", path);
  }
  if (setjmp(png_jmpbuf(p))) {
    png_destroy_write_struct(&p, &info);
    free(row);
    atomic_abort(&af);
    return err_set(err, "%s: %s", path, perr.msg);
  }
  png_init_io(p, af.fp);
  png_set_IHDR(p, info, (png_uint_32)c.w, (png_uint_32)c.h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_compression_level(p, 1);
  png_set_filter(p, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE); // see pngio.h
  png_text texts[16];
  int nt = n_kv < 16 ? n_kv : 16;
  for (int i = 0; i < nt; i++) {
    memset(&texts[i], 0, sizeof texts[i]);
    texts[i].compression = PNG_TEXT_COMPRESSION_NONE;
    texts[i].key = (png_charp)kv[2 * i];
    texts[i].text = (png_charp)kv[2 * i + 1];
  }
  if (nt) png_set_text(p, info, texts, nt);
  png_write_info(p, info);
  for (int y = 0; y < c.h; y++) {
    const uint32_t *src = c.px + (size_t)y * c.stride;
    for (int x = 0; x < c.w; x++) {
      row[3 * x] = (uint8_t)SF_R(src[x]);
      row[3 * x + 1] = (uint8_t)SF_G(src[x]);
      row[3 * x + 2] = (uint8_t)SF_B(src[x]);
    }
    png_write_row(p, row);
  }
  png_write_end(p, info);
  png_destroy_write_struct(&p, &info);
  free(row);
  return atomic_commit(&af, err);
}

bool pngio_read(Canvas *out, const char *path, Err *err) {
  png_image img;
  memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&img, path)) return err_set(err, "%s: %s", path, img.message);
  img.format = PNG_FORMAT_RGBA;
  *out = canvas_new((int)img.width, (int)img.height);
  if (!out->px) {
    png_image_free(&img);
    return err_set(err, "%s: out of memory", path);
  }
  if (!png_image_finish_read(&img, NULL, out->px, (png_int_32)(out->stride * 4), NULL)) {
    canvas_free(out);
    return err_set(err, "%s: %s", path, img.message);
  }
  return true;
}
