// export.c -- see export.h. Pictures are planned as jobs, drawn by a few threads (each with its
// own Scene and Canvas; text.c and tex.c are thread-safe), written into an OutDir staging folder
// and moved into place only when every file was written.
#include "export.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claims.h"     // defines: claims_measure
#include "fileio.h"     // defines: AtomicFile
#include "genstrip.h"   // defines: genstrip_draw, genstrip_height
#include "npy.h"        // defines: npy_write
#include "simfiles.h"   // defines: simfiles_write
#include "outdir.h"     // defines: OutDir
#include "page.h"       // defines: PageSpec, page_render
#include "pngio.h"      // defines: pngio_write
#include "invariants.h" // defines: invariants_measure
#include "svg.h"        // defines: svg_write
#include "tex.h"        // defines: tex_plain_title
#include "version.h"    // defines: version_string, version_commit

typedef struct {
  int step;           // trace step, -1 for a narration-only lesson step
  int head;           // 0-based, -1 all heads
  int lesson_step;    // -1 without a lesson
  const Trace *trace; // the trace it shows: a lesson step's generation step's (gen=N), else the session's
  char base[128];     // file name without extension
  int hide;           // a reveal= step's first picture: what it hides covered (PageSpec.hide)
  InsideView inside;  // a view inside the pass (--inside; a lesson's stage=lens ...), else INSIDE_NONE
} Job;

typedef struct {
  Session *s;
  const char *lesson_title;
  Job *jobs;
  int n_jobs;
  atomic_int next;
  atomic_int pages; // pictures written: a job's narration or model view may take several pages
  int formats, width, height;
  bool show_text;
  bool invariants; // ExportSpec.invariants
  bool claims;     // ExportSpec.claims
  bool inside;     // ExportSpec.inside
  ViewOptions view;
  OutDir *od;
  pthread_mutex_t lock; // guards od (outdir_path) and the first error
  Err err;
  atomic_bool failed;
} Export;

// A file name from a title: lowercase letters and digits, dashes between words; the names of
// TeX commands (\mathbb in $\mathbb{R}$) are left out, their arguments kept.
static void slug(char *out, size_t cap, const char *s) {
  size_t n = 0;
  bool dash = false;
  for (; *s && n + 2 < cap; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '\\' && isalpha((unsigned char)s[1])) {
      while (isalpha((unsigned char)s[1])) s++;
      continue;
    }
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
      out[n++] = (char)c, dash = false;
    else if (c >= 'A' && c <= 'Z')
      out[n++] = (char)(c + 32), dash = false;
    else if (!dash && n > 0)
      out[n++] = '-', dash = true;
    if (n >= 40) break;
  }
  while (n > 0 && out[n - 1] == '-') n--;
  out[n] = 0;
}

static const char *step_slug(const Trace *t, int step) { return lesson_stage_name(t->steps[step].kind); }

// One picture per step (per head for per-head stages), or one per lesson step.
static int plan(Export *x, int head_opt) {
  const Trace *t = x->s->trace;
  int cap = 64 + t->n_steps * (t->cfg.H + 1) + (x->s->has_lesson ? 2 * x->s->lesson.n_steps : 0) +
            (x->inside ? 3 * t->cfg.n_layers + INSIDE_COUNT : 0);
  x->jobs = calloc((size_t)cap, sizeof(Job));
  if (!x->jobs) return -1;
  int n = 0, number = 1;
  int digits = t->n_steps >= 100 ? 3 : 2; // 007-… sorts before 100-… in any file browser
  int hdigits = t->cfg.H >= 10 ? 2 : 1;   // -h01 … -h12 likewise
  bool layers = t->cfg.n_layers > 1;
  if (x->view.model_view) { // --model-view: one picture, the first softmax step as the model view
    Job *j = &x->jobs[n++];
    j->step = trace_step_find(t, STEP_SOFTMAX, 0), j->head = -1, j->lesson_step = -1; // every head
    snprintf(j->base, sizeof j->base, "model-view");
    return n;
  }
  if (x->s->has_lesson) {
    const Lesson *l = &x->s->lesson;
    int width = l->n_steps >= 100 ? 3 : 2;
    for (int i = 0; i < l->n_steps; i++) {
      Job *j = &x->jobs[n++];
      j->lesson_step = i;
      j->trace = session_step_trace(x->s, i);
      j->step = session_trace_step(x->s, i);
      j->head = l->steps[i].head;
      j->inside = l->steps[i].inside;
      char s[64];
      if (j->step < 0)
        slug(s, sizeof s, l->steps[i].title);
      else if (j->inside) // stage=lens ...: named for the view, not its stage
        snprintf(s, sizeof s, "inside-%s", inside_view_name(j->inside));
      else
        snprintf(s, sizeof s, "%s", step_slug(t, j->step));
      char lay[16] = "";
      if (j->step >= 0 && layers && t->steps[j->step].layer >= 0)
        snprintf(lay, sizeof lay, "l%d-", t->steps[j->step].layer + 1);
      char hd[16] = "";
      if (j->step >= 0 && page_step_has_heads(t, j->step) && (!j->inside || j->inside == INSIDE_HEADVIEW)) {
        if (j->head < 0)
          snprintf(hd, sizeof hd, "-all");
        else
          snprintf(hd, sizeof hd, "-h%0*d", hdigits, j->head + 1);
      }
      snprintf(j->base, sizeof j->base, "%0*d-%s%s%s", width, i + 1, lay, s[0] ? s : "step", hd);
      if (l->steps[i].reveal != REVEAL_NONE && j->step >= 0) { // predict, then reveal: two pictures
        Job *h = &x->jobs[n++];
        *h = *j;
        h->hide = (int)l->steps[i].reveal;
        snprintf(h->base, sizeof h->base, "%.100s-hidden", j->base); // sorts before -revealed
        char full[sizeof j->base];
        snprintf(full, sizeof full, "%.100s-revealed", j->base);
        memcpy(j->base, full, sizeof full);
      }
    }
    return n;
  }
  for (int k = 0; k < t->n_steps; k++, number++) {
    char lay[16] = "";
    if (layers && t->steps[k].layer >= 0) snprintf(lay, sizeof lay, "l%d-", t->steps[k].layer + 1);
    int h0 = 0, h1 = 0; // heads to draw: [h0, h1]
    bool heads = page_step_has_heads(t, k);
    if (heads) {
      if (head_opt == -2)
        h0 = 0, h1 = t->cfg.H - 1; // default: each head
      else if (head_opt == -1)
        h0 = h1 = -1; // the grid
      else
        h0 = h1 = head_opt < t->cfg.H ? head_opt : t->cfg.H - 1;
    }
    for (int h = h0; h <= h1; h++) {
      Job *j = &x->jobs[n++];
      j->step = k, j->head = heads ? h : (head_opt >= 0 ? head_opt : 0), j->lesson_step = -1;
      if (heads && h < 0)
        snprintf(j->base, sizeof j->base, "%0*d-%s%s-all", digits, number, lay, step_slug(t, k));
      else if (heads)
        snprintf(j->base, sizeof j->base, "%0*d-%s%s-h%0*d", digits, number, lay, step_slug(t, k), hdigits,
                 h + 1);
      else
        snprintf(j->base, sizeof j->base, "%0*d-%s%s", digits, number, lay, step_slug(t, k));
    }
  }
  if (x->inside) // --inside: the lens and the saliency once, rollout, head view and neurons per layer
    for (int v = 1; v < INSIDE_COUNT; v++) {
      if (!inside_view_available(t, (InsideView)v)) continue;
      bool per_layer = v == INSIDE_ROLLOUT || v == INSIDE_HEADVIEW || v == INSIDE_NEURONS;
      for (int l = 0; l < (per_layer ? t->cfg.n_layers : 1); l++) {
        Job *j = &x->jobs[n++];
        j->step = per_layer ? trace_step_find(t, STEP_SOFTMAX, l) : t->n_steps - 1;
        j->head = -1, j->lesson_step = -1, j->inside = (InsideView)v;
        if (per_layer && layers)
          snprintf(j->base, sizeof j->base, "inside-l%d-%s", l + 1, inside_view_name((InsideView)v));
        else
          snprintf(j->base, sizeof j->base, "inside-%s", inside_view_name((InsideView)v));
      }
    }
  return n;
}

static void fail(Export *x, const Err *e) {
  pthread_mutex_lock(&x->lock);
  if (!x->failed) x->err = *e;
  x->failed = true;
  pthread_mutex_unlock(&x->lock);
}

static bool reserve(Export *x, const char *name, char *path, size_t cap, Err *e) {
  pthread_mutex_lock(&x->lock);
  bool ok = outdir_path(x->od, name, path, cap, e);
  pthread_mutex_unlock(&x->lock);
  return ok;
}

static void *worker(void *arg) {
  Export *x = arg;
  Scene scene;
  scene_init(&scene, (float)x->width, (float)x->height, 0);
  Canvas cv = canvas_new(x->width, x->height);
  Err e = {0};
  if (!cv.px) {
    err_set(&e, "out of memory for a %dx%d picture", x->width, x->height);
    fail(x, &e);
  }
  const Session *s = x->s;
  char footer[512], label[256], model_line[256], seed[32], software[96];
  snprintf(software, sizeof software, "Stepformer %s (commit %s)", version_string(), version_commit());
  snprintf(model_line, sizeof model_line, "%s", s->model->source);
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)s->model->seed);
  for (int k; cv.px && !x->failed && (k = atomic_fetch_add(&x->next, 1)) < x->n_jobs;) {
    const Job *j = &x->jobs[k];
    const LessonStep *ls = j->lesson_step >= 0 ? &s->lesson.steps[j->lesson_step] : NULL;
    ViewOptions vo = x->view;
    vo.head = j->head;
    vo.inside = j->inside;
    if (ls) {
      vo.focus_row = ls->row, vo.focus_col = ls->col;
      vo.part = (int)ls->show;
    }
    const Trace *jt = j->trace ? j->trace : s->trace;
    page_footer(jt, s->text, footer, sizeof footer); // with the edits of an edited pass (edits.h)
    PageSpec p = {.trace = jt,
                  .step = j->step,
                  .view = &vo,
                  .title = ls ? ls->title : NULL,
                  .narration = ls ? &ls->narration : NULL,
                  .show_text = x->show_text,
                  .sentence = s->text,
                  .lesson = x->lesson_title,
                  .lesson_step = j->lesson_step,
                  .lesson_steps = s->has_lesson ? s->lesson.n_steps : 0,
                  .width = (float)x->width,
                  .height = (float)x->height};
    p.compare = session_compare(s, j->lesson_step, &p.compare_sentence, &p.compare_row, &p.compare_col);
    if (p.compare && s->compare_model) // --compare-model: the same sentence, two files
      p.caption_a = s->model->source, p.caption_b = s->compare_model->source;
    PageClaim claims[CLAIMS_MAX]; // what the step claims, measured on the picture's numbers
    p.hide = j->hide;             // the hidden picture of a reveal= step: no claims to give it away
    // the claims are the teacher's (--claims), not the students' slides: they answer the narration
    p.n_claims = j->hide || !x->claims ? 0 : claims_measure(ls, jt, p.compare, claims, CLAIMS_MAX);
    p.claims = claims;
    Spotlight spot; // a lesson step's spotlight=, on the tokens of the picture's trace (marks.h)
    if (ls && ls->spot) {
      spot = (Spotlight){(SpotKind)ls->spot, ls->spot_row ? lesson_find_token(&jt->tokens, ls->spot_row) : -1,
                         ls->spot_col ? lesson_find_token(&jt->tokens, ls->spot_col) : -1};
      p.spotlight = &spot;
    }
    PageClaim inv[INV_MAX]; // --invariants: the course's facts about the stage, measured
    if (x->invariants && !j->hide && j->step >= 0) {
      InvFact f[INV_MAX];
      p.n_invariants = invariants_measure(jt, j->step, j->head, f, INV_MAX);
      for (int q = 0; q < p.n_invariants; q++) {
        memcpy(inv[q].text, f[q].text, sizeof f[q].text);
        inv[q].state = f[q].state;
      }
      p.invariants = inv;
    }
    // a generation: the strip of the generation step this picture shows
    int gk = -1;
    for (int g = 0; s->gen && g < s->gen->n_steps && gk < 0; g++)
      if (s->gen->steps[g].trace == jt) gk = g;
    if (gk >= 0) p.footer_reserve = genstrip_height(p.height, vo.text_scale);
    if (gk >= 0 && s->gen->sampling.on) // the step's draw, on its prediction (sampling_chart.h)
      vo.sampling = &s->gen->sampling, vo.sampling_rng = s->gen->steps[gk].rng_before;
    ViewLayout lay;
    // a narration longer than its column: one picture per page of it, "-text2" and on after the first;
    // a model view too large to be read at once: one per page of thumbnails, "-page2" and on
    ViewGrid first = {0}; // the model view's first page: how many layers and heads a page holds
    for (int page = 0, pages = 1; page < pages && !x->failed; page++) {
      if (vo.model_view && page > 0) { // the page's first layer and head (pages_h pages across)
        vo.model_layer = page / first.pages_h * first.layers;
        vo.model_head = page % first.pages_h * first.heads;
      } else {
        p.text_page = page;
      }
      page_render(&scene, &p, &lay);
      if (page == 0) first = lay.grid;
      if (page == 0) pages = vo.model_view && first.pages > 1 ? first.pages : lay.text_pages;
      if (gk >= 0) // what a later step asks for is not on this picture (nor on a hidden one's)
        genstrip_draw(&scene, s->gen, gk, vo.theme, p.width, p.height, vo.text_scale, false,
                      genstrip_hides(s->has_lesson ? &s->lesson : NULL, j->lesson_step, gk, j->hide != 0));
      if (j->step >= 0)
        page_header_label(jt, j->step, &vo, label, sizeof label); // the stored view: its own name
      else
        tex_plain_title(ls ? ls->title : "", label, sizeof label); // metadata: no TeX
      atomic_fetch_add(&x->pages, 1);
      char name[160], path[4096], suffix[16] = "";
      if (page > 0) snprintf(suffix, sizeof suffix, vo.model_view ? "-page%d" : "-text%d", page + 1);
      if (x->formats & EXPORT_PNG) {
        scene_raster(&scene, cv, 0);
        const char *kv[] = {"Title",    label,  "Description", footer,     "Model",
                            model_line, "Seed", seed,          "Software", software};
        snprintf(name, sizeof name, "%s%s.png", j->base, suffix);
        if (!reserve(x, name, path, sizeof path, &e) || !pngio_write(cv, path, kv, 5, &e)) fail(x, &e);
      }
      if (x->formats & EXPORT_SVG) {
        snprintf(name, sizeof name, "%s%s.svg", j->base, suffix);
        if (!reserve(x, name, path, sizeof path, &e) || !svg_write(&scene, path, label, footer, &e))
          fail(x, &e);
      }
    }
  }
  canvas_free(&cv);
  scene_free(&scene);
  return NULL;
}

// CSV field: quoted when it holds a comma, quote or newline.
static void csv_field(FILE *f, const char *s) {
  if (!strpbrk(s, ",\"\n\r")) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; s++) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

static bool write_csv(const Trace *t, const TraceTensor *x, int h, const char *path, Err *err) {
  AtomicFile af;
  if (!atomic_open(&af, path, err)) return false;
  FILE *f = af.fp;
  char buf[128];
  fprintf(f, "%s \\ %s", trace_axis_name(x->row_axis), trace_axis_name(x->col_axis));
  for (int j = 0; j < x->cols; j++) {
    fputc(',', f);
    csv_field(f, trace_axis_label(t, x->col_axis, j, buf, sizeof buf));
  }
  fputc('\n', f);
  for (int i = 0; i < x->rows; i++) {
    csv_field(f, x->rows == 1 && x->row_axis == AXIS_TOKEN
                     ? ""
                     : trace_axis_label(t, x->row_axis, i, buf, sizeof buf));
    for (int j = 0; j < x->cols; j++) {
      float v = trace_at(x, h, i, j);
      if (isinf(v))
        fputs(v < 0 ? ",-inf" : ",inf", f);
      else if (isnan(v))
        fputs(",nan", f); // not printf's "-nan" for a NaN with its sign bit set
      else
        fprintf(f, ",%.9g", v); // 9 significant digits: the float comes back exactly
    }
    fputc('\n', f);
  }
  return atomic_commit(&af, err);
}

static bool write_data(Export *x, Err *err) {
  const Trace *t = x->s->trace;
  char name[128], path[4096];
  for (int k = 0; k < t->n; k++) {
    const TraceTensor *tt = &t->t[k];
    if (tt->is_weight) continue;
    if (x->formats & EXPORT_NPY) {
      int shape[3], nd = trace_dump_shape(tt, shape);
      snprintf(name, sizeof name, "%s.npy", tt->name);
      if (!outdir_path(x->od, name, path, sizeof path, err) || !npy_write(path, tt->data, nd, shape, err))
        return false;
    }
    if (x->formats & EXPORT_CSV)
      for (int h = 0; h < tt->heads; h++) {
        if (trace_per_head(tt))
          snprintf(name, sizeof name, "%s-h%d.csv", tt->name, h + 1);
        else
          snprintf(name, sizeof name, "%s.csv", tt->name);
        if (!outdir_path(x->od, name, path, sizeof path, err) || !write_csv(t, tt, h, path, err))
          return false;
      }
  }
  if ((x->formats & EXPORT_NPY) && x->s->compare_all && !x->s->gen && t->T == 0) { // --compare: sim.*.npy
    Sim *sim = sim_new(t, x->s->compare_all, err);
    bool ok = sim && simfiles_write(x->od, sim, err);
    sim_free(sim);
    if (!ok) return false;
  }
  if (x->formats & (EXPORT_NPY | EXPORT_CSV)) { // the labels of the token axis
    size_t len;
    char *s = trace_tokens_lines(t, &len);
    if (!s) return err_set(err, "out of memory");
    bool ok =
        outdir_path(x->od, "tokens.txt", path, sizeof path, err) && file_write_atomic(path, s, len, err);
    free(s);
    if (!ok) return false;
  }
  return true;
}

bool export_run(Session *s, const char *out, const ExportSpec *spec, int *files, int *pictures, Err *err) {
  ViewOptions view = spec->view;
  view_global_range(s->trace, &view.global_lo, &view.global_hi);
  if (spec->head_opt >= s->trace->cfg.H)
    return err_set(err, "--head %d: the model has %d head%s: give 1 to %d, or all", spec->head_opt + 1,
                   s->trace->cfg.H, s->trace->cfg.H == 1 ? "" : "s", s->trace->cfg.H);
  if (view.model_view) {
    int k = trace_step_find(s->trace, STEP_SOFTMAX, 0);
    if (k < 0 || !view_model_available(s->trace, k))
      return err_set(err,
                     "--model-view: this model has no attention softmax to show: leave --model-view out");
    if (spec->formats & (EXPORT_NPY | EXPORT_CSV))
      return err_set(err, "--model-view writes one picture: use --format png, svg or png,svg");
  }
  OutDir od;
  if (!outdir_begin(&od, out, err)) return false;
  Export x = {.s = s,
              .lesson_title = s->has_lesson ? s->lesson.title : NULL,
              .formats = spec->formats,
              .width = spec->width,
              .height = spec->height,
              .show_text = spec->show_text,
              .invariants = spec->invariants,
              .claims = spec->claims,
              .inside = spec->inside,
              .view = view,
              .od = &od};
  pthread_mutex_init(&x.lock, NULL);
  atomic_init(&x.next, 0);
  atomic_init(&x.pages, 0);
  atomic_init(&x.failed, false);
  *pictures = 0;
  if (spec->formats & (EXPORT_PNG | EXPORT_SVG)) {
    x.n_jobs = plan(&x, spec->head_opt);
    if (x.n_jobs < 0) {
      err_set(&x.err, "out of memory");
      x.failed = true;
    }
    pthread_t th[8];
    int started = 0, threads = spec->threads < 1 ? 1 : spec->threads > 8 ? 8 : spec->threads;
    for (int i = 1; i < threads && !x.failed; i++)
      if (pthread_create(&th[started], NULL, worker, &x) == 0) started++;
    if (!x.failed) worker(&x);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    *pictures = atomic_load(&x.pages);
  }
  Err derr = {0};
  if (!x.failed && !write_data(&x, &derr)) fail(&x, &derr);
  *files = od.n;
  bool ok = !x.failed;
  if (!ok) {
    outdir_abort(&od);
    *err = x.err;
  } else {
    ok = outdir_commit(&od, err);
  }
  free(x.jobs);
  pthread_mutex_destroy(&x.lock);
  return ok;
}
