// stepformer_render.c -- see stepformer.h: a step of a pass drawn into PNG or SVG bytes, as
// `stepformer export` draws it (src/app/export.c's worker, without a lesson), into an
// open_memstream instead of a file.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "page.h"  // defines: PageSpec, page_render, page_stage_label, page_footer
#include "pngio.h" // defines: pngio_write_stream
#include "sf_internal.h"
#include "stepformer.h"
#include "svg.h"     // defines: svg_fprint
#include "text.h"    // defines: text_init
#include "version.h" // defines: version_string, version_commit

int sf_step_heads(const sf_pass *p, int k) {
  if (!p || k < 0 || k >= p->t->n_steps) return 0;
  return page_step_has_heads(p->t, k) ? p->t->cfg.H : 1;
}

const char *sf_step_label(sf_pass *p, int k, int head) {
  if (!p || k < 0 || k >= p->t->n_steps) return NULL;
  return page_stage_label(p->t, k, head, p->label, sizeof p->label);
}

static pthread_mutex_t fonts_lock = PTHREAD_MUTEX_INITIALIZER;

int sf_render(sf_pass *p, int k, int head, int width, int height, int format, int flags, void **bytes,
              size_t *len) {
  char msg[600];
  if (bytes) *bytes = NULL;
  if (len) *len = 0;
  if (!p || !bytes || !len) return sf_fail("sf_render: no pass, or nowhere to put the picture"), 0;
  const Trace *t = p->t;
  if (k < 0 || k >= t->n_steps) {
    snprintf(msg, sizeof msg, "sf_render: step %d: this pass has steps 0 to %d (sf_step_count)", k,
             t->n_steps - 1);
    return sf_fail(msg), 0;
  }
  if (width < 320 || height < 180 || width > 8192 || height > 8192) {
    snprintf(msg, sizeof msg, "sf_render: %dx%d: give a size from 320x180 to 8192x8192 pixels", width,
             height);
    return sf_fail(msg), 0;
  }
  if (format != SF_PNG && format != SF_SVG) return sf_fail("sf_render: format: give SF_PNG or SF_SVG"), 0;
  if (head < -1 || head >= t->cfg.H) {
    snprintf(msg, sizeof msg, "sf_render: head %d: the model has %d head%s: give 0 to %d, or -1 for all",
             head, t->cfg.H, t->cfg.H == 1 ? "" : "s", t->cfg.H - 1);
    return sf_fail(msg), 0;
  }
  ViewOptions vo = view_options_default(theme_get(flags & SF_RENDER_DARK ? THEME_DARK : THEME_LIGHT));
  view_global_range(t, &vo.global_lo, &vo.global_hi);
  vo.numbers = !(flags & SF_RENDER_NO_NUMBERS);
  vo.head = page_step_has_heads(t, k) ? head : (head >= 0 ? head : 0);
  if (flags & SF_RENDER_MODEL_VIEW) {
    k = trace_step_find(t, STEP_SOFTMAX, 0);
    if (k < 0 || !view_model_available(t, k))
      return sf_fail("sf_render: this model has no attention softmax to show as the model view"), 0;
    vo.model_view = true, vo.head = -1;
  }
  Err err = {0};
  pthread_mutex_lock(&fonts_lock);
  bool fonts = text_init(&err);
  pthread_mutex_unlock(&fonts_lock);
  if (!fonts) return sf_fail(err.msg), 0;

  Scene scene;
  scene_init(&scene, (float)width, (float)height, 0);
  PageSpec ps = {.trace = t,
                 .step = k,
                 .view = &vo,
                 .show_text = true,
                 .sentence = p->text,
                 .lesson_step = -1,
                 .compare_row = -1,
                 .compare_col = -1,
                 .width = (float)width,
                 .height = (float)height};
  ViewLayout lay;
  page_render(&scene, &ps, &lay);
  char label[256], footer[512], software[96], seed[32];
  page_stage_label(t, k, vo.head, label, sizeof label);
  page_footer(t, p->text, footer, sizeof footer);
  snprintf(software, sizeof software, "Stepformer %s (commit %s)", version_string(), version_commit());
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)t->model->seed);

  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  bool ok = f != NULL;
  if (!ok)
    sf_fail("out of memory for the picture");
  else if (format == SF_SVG)
    svg_fprint(&scene, f, label, footer);
  else {
    Canvas cv = canvas_new(width, height);
    if (!cv.px)
      ok = sf_fail("out of memory for the picture");
    else {
      scene_raster(&scene, cv, 0);
      const char *kv[] = {"Title",          label,  "Description", footer,     "Model",
                          t->model->source, "Seed", seed,          "Software", software};
      if (!pngio_write_stream(cv, f, kv, 5, &err)) ok = sf_fail(err.msg);
      canvas_free(&cv);
    }
  }
  if (f && (ferror(f) | fclose(f)) && ok) ok = sf_fail("out of memory for the picture");
  scene_free(&scene);
  if (!ok) {
    free(buf);
    return 0;
  }
  *bytes = buf, *len = n;
  return 1;
}
