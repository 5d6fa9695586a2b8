// cli_export.c -- `stepformer export`: pictures (PNG, SVG) of every step and data files (.npy,
// CSV) of every stage, headless, without a display. Pictures are drawn on two threads.
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "fileio.h"  // defines: AtomicFile
#include "npy.h"     // defines: npy_write
#include "outdir.h"  // defines: OutDir
#include "page.h"    // defines: PageSpec, page_render
#include "pngio.h"   // defines: pngio_write
#include "session.h" // defines: Session
#include "svg.h"     // defines: svg_write

static const char *USAGE =
    "usage: stepformer export [--lesson FILE] [--text TEXT] [--model FILE | --random SPEC [--vocab LIST]]\n"
    "                         [--causal] --out DIR [--format png|svg|npy|csv|all] [--size WxH]\n"
    "                         [--theme light|dark] [--head H|all] [--scale matrix|stage|global]\n"
    "                         [--no-text] [--no-numbers] [--threads 1|2]\n"
    "\n"
    "Writes, without a display, one picture per step of the pass (or per lesson step with\n"
    "--lesson, narration included unless --no-text) as PNG and/or SVG, named NN-stage[-hH],\n"
    "and the exact values of every stage as .npy and/or CSV with the token labels.\n"
    "Files of the same names in DIR are replaced; nothing else in DIR is touched.\n"
    "\n"
    "  --lesson FILE   export the lesson's steps (its sentence and model unless overridden)\n"
    "  --text TEXT     the sentence (default: the lesson's, or \"" CLI_DEFAULT_TEXT "\")\n"
    "  --model FILE    a safetensors model; --random SPEC a seeded random one (see dump --help)\n"
    "  --format F      png (default), svg, npy, csv, or all; several with commas: png,svg\n"
    "  --size WxH      picture size in pixels (default 1920x1080)\n"
    "  --theme T       light (default, for slides and paper) or dark\n"
    "  --head H        per-head stages: only head H (1-based), or all = the grid of all heads;\n"
    "                  default: one picture per head\n"
    "  --scale S       colour scale per matrix, per stage (default) or global\n"
    "  --no-text       pictures without the lesson's narration\n"
    "  --no-numbers    no values printed in the cells\n";

enum { F_PNG = 1, F_SVG = 2, F_NPY = 4, F_CSV = 8 };

typedef struct {
  int step;         // trace step, -1 for a narration-only lesson step
  int head;         // 0-based, -1 all heads
  int lesson_step;  // -1 without a lesson
  char base[96];    // file name without extension
} Job;

typedef struct {
  Session *s;
  const char *lesson_title;
  Job *jobs;
  int n_jobs;
  atomic_int next;
  int formats, width, height;
  bool show_text;
  ViewOptions view;
  OutDir *od;
  pthread_mutex_t lock; // guards od (outdir_path) and the first error
  Err err;
  atomic_bool failed;
} Export;

static void slug(char *out, size_t cap, const char *s) {
  size_t n = 0;
  bool dash = false;
  for (; *s && n + 2 < cap; s++) {
    unsigned char c = (unsigned char)*s;
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) out[n++] = (char)c, dash = false;
    else if (c >= 'A' && c <= 'Z') out[n++] = (char)(c + 32), dash = false;
    else if (!dash && n > 0) out[n++] = '-', dash = true;
    if (n >= 40) break;
  }
  while (n > 0 && out[n - 1] == '-') n--;
  out[n] = 0;
}

static const char *step_slug(const Trace *t, int step) {
  return lesson_stage_name(t->steps[step].kind);
}

// One picture per step (per head for per-head stages), or one per lesson step.
static int plan(Export *x, int head_opt) {
  const Trace *t = x->s->trace;
  int cap = 64 + t->n_steps * (t->cfg.H + 1) + (x->s->has_lesson ? x->s->lesson.n_steps : 0);
  x->jobs = calloc((size_t)cap, sizeof(Job));
  if (!x->jobs) return -1;
  int n = 0, number = 1;
  bool layers = t->cfg.n_layers > 1;
  if (x->s->has_lesson) {
    const Lesson *l = &x->s->lesson;
    int width = l->n_steps >= 100 ? 3 : 2;
    for (int i = 0; i < l->n_steps; i++) {
      Job *j = &x->jobs[n++];
      j->lesson_step = i;
      j->step = session_trace_step(x->s, i);
      j->head = l->steps[i].head;
      char s[64];
      if (j->step < 0) slug(s, sizeof s, l->steps[i].title);
      else snprintf(s, sizeof s, "%s", step_slug(t, j->step));
      char lay[16] = "";
      if (j->step >= 0 && layers && t->steps[j->step].layer >= 0) snprintf(lay, sizeof lay, "l%d-", t->steps[j->step].layer + 1);
      char hd[16] = "";
      if (j->step >= 0 && page_step_has_heads(t, j->step)) {
        if (j->head < 0) snprintf(hd, sizeof hd, "-all");
        else snprintf(hd, sizeof hd, "-h%d", j->head + 1);
      }
      snprintf(j->base, sizeof j->base, "%0*d-%s%s%s", width, i + 1, lay, s[0] ? s : "step", hd);
    }
    return n;
  }
  for (int k = 0; k < t->n_steps; k++, number++) {
    char lay[16] = "";
    if (layers && t->steps[k].layer >= 0) snprintf(lay, sizeof lay, "l%d-", t->steps[k].layer + 1);
    int h0 = 0, h1 = 0; // heads to draw: [h0, h1]
    bool heads = page_step_has_heads(t, k);
    if (heads) {
      if (head_opt == -2) h0 = 0, h1 = t->cfg.H - 1;  // default: each head
      else if (head_opt == -1) h0 = h1 = -1;         // the grid
      else h0 = h1 = head_opt < t->cfg.H ? head_opt : t->cfg.H - 1;
    }
    for (int h = h0; h <= h1; h++) {
      Job *j = &x->jobs[n++];
      j->step = k, j->head = heads ? h : (head_opt >= 0 ? head_opt : 0), j->lesson_step = -1;
      if (heads && h < 0) snprintf(j->base, sizeof j->base, "%02d-%s%s-all", number, lay, step_slug(t, k));
      else if (heads) snprintf(j->base, sizeof j->base, "%02d-%s%s-h%d", number, lay, step_slug(t, k), h + 1);
      else snprintf(j->base, sizeof j->base, "%02d-%s%s", number, lay, step_slug(t, k));
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
  char footer[512], label[256], model_line[256], seed[32];
  page_footer(s->trace, s->text, footer, sizeof footer);
  snprintf(model_line, sizeof model_line, "%s", s->model->source);
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)s->model->seed);
  for (int k; cv.px && !x->failed && (k = atomic_fetch_add(&x->next, 1)) < x->n_jobs;) {
    const Job *j = &x->jobs[k];
    const LessonStep *ls = j->lesson_step >= 0 ? &s->lesson.steps[j->lesson_step] : NULL;
    ViewOptions vo = x->view;
    vo.head = j->head;
    if (ls) {
      vo.focus_row = ls->row, vo.focus_col = ls->col;
      vo.part = (int)ls->show;
    }
    PageSpec p = {.trace = s->trace, .step = j->step, .view = &vo, .title = ls ? ls->title : NULL,
                  .narration = ls ? &ls->narration : NULL, .show_text = x->show_text, .sentence = s->text,
                  .lesson = x->lesson_title, .lesson_step = j->lesson_step,
                  .lesson_steps = s->has_lesson ? s->lesson.n_steps : 0,
                  .width = (float)x->width, .height = (float)x->height};
    ViewLayout lay;
    page_render(&scene, &p, &lay);
    if (j->step >= 0) page_stage_label(s->trace, j->step, j->head, label, sizeof label);
    else snprintf(label, sizeof label, "%s", ls ? ls->title : "");
    char name[128], path[4096];
    if (x->formats & F_PNG) {
      scene_raster(&scene, cv, 0);
      const char *kv[] = {"Title", label, "Description", footer, "Model", model_line, "Seed", seed, "Software",
                          "Stepformer"};
      snprintf(name, sizeof name, "%s.png", j->base);
      if (!reserve(x, name, path, sizeof path, &e) || !pngio_write(cv, path, kv, 5, &e)) fail(x, &e);
    }
    if (x->formats & F_SVG) {
      snprintf(name, sizeof name, "%s.svg", j->base);
      if (!reserve(x, name, path, sizeof path, &e) || !svg_write(&scene, path, label, footer, &e)) fail(x, &e);
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
    csv_field(f, x->rows == 1 && x->row_axis == AXIS_TOKEN ? "" : trace_axis_label(t, x->row_axis, i, buf, sizeof buf));
    for (int j = 0; j < x->cols; j++) {
      float v = trace_at(x, h, i, j);
      if (isinf(v)) fputs(v < 0 ? ",-inf" : ",inf", f);
      else fprintf(f, ",%.9g", v); // 9 significant digits: the float comes back exactly
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
    if (x->formats & F_NPY) {
      int shape[3], nd = trace_dump_shape(tt, shape);
      snprintf(name, sizeof name, "%s.npy", tt->name);
      if (!outdir_path(x->od, name, path, sizeof path, err) || !npy_write(path, tt->data, nd, shape, err)) return false;
    }
    if (x->formats & F_CSV)
      for (int h = 0; h < tt->heads; h++) {
        if (trace_per_head(tt)) snprintf(name, sizeof name, "%s-h%d.csv", tt->name, h + 1);
        else snprintf(name, sizeof name, "%s.csv", tt->name);
        if (!outdir_path(x->od, name, path, sizeof path, err) || !write_csv(t, tt, h, path, err)) return false;
      }
  }
  if (x->formats & (F_NPY | F_CSV)) { // the labels of the token axis
    size_t cap = 64, len = 0;
    for (int i = 0; i < t->L; i++) cap += strlen(tokens_label(&t->tokens, &t->model->vocab, i)) + 2;
    char *s = malloc(cap);
    if (!s) return err_set(err, "out of memory");
    for (int i = 0; i < t->L; i++) len += (size_t)sprintf(s + len, "%s\n", tokens_label(&t->tokens, &t->model->vocab, i));
    bool ok = outdir_path(x->od, "tokens.txt", path, sizeof path, err) && file_write_atomic(path, s, len, err);
    free(s);
    if (!ok) return false;
  }
  return true;
}

static bool parse_formats(const char *s, int *out) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s", s);
  *out = 0;
  for (char *save = NULL, *f = strtok_r(buf, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
    if (!strcmp(f, "png")) *out |= F_PNG;
    else if (!strcmp(f, "svg")) *out |= F_SVG;
    else if (!strcmp(f, "npy")) *out |= F_NPY;
    else if (!strcmp(f, "csv")) *out |= F_CSV;
    else if (!strcmp(f, "all")) *out |= F_PNG | F_SVG | F_NPY | F_CSV;
    else return false;
  }
  return *out != 0;
}

int cli_export(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) return fputs(USAGE, stdout), 0;
  SessionOpts so = {0};
  const char *out = NULL;
  int formats = F_PNG, width = 1920, height = 1080, head_opt = -2, threads = 2;
  bool show_text = true;
  ViewOptions view = view_options_default(theme_get(THEME_LIGHT));
  Err err = {0};
  char msg[600];
  for (int i = 1; i < argc; i++) {
    int r = cli_model_option(&so.model, argc, argv, &i, &err);
    if (r < 0) return cli_fail("export", err.msg);
    if (r) continue;
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    bool takes = !strcmp(a, "--out") || !strcmp(a, "--lesson") || !strcmp(a, "--format") || !strcmp(a, "--size") ||
                 !strcmp(a, "--theme") || !strcmp(a, "--head") || !strcmp(a, "--scale") || !strcmp(a, "--threads");
    if (takes && !v) {
      snprintf(msg, sizeof msg, "%s needs a value (see stepformer export --help)", a);
      return cli_fail("export", msg);
    }
    if (takes) i++;
    if (!strcmp(a, "--out")) out = v;
    else if (!strcmp(a, "--lesson")) so.lesson = v;
    else if (!strcmp(a, "--format")) {
      if (!parse_formats(v, &formats)) {
        snprintf(msg, sizeof msg, "--format %s: use png, svg, npy, csv or all (several with commas)", v);
        return cli_fail("export", msg);
      }
    } else if (!strcmp(a, "--size")) {
      if (sscanf(v, "%dx%d", &width, &height) != 2 || width < 320 || height < 240 || width > 8192 || height > 8192) {
        snprintf(msg, sizeof msg, "--size %s: give WIDTHxHEIGHT in pixels, from 320x240 to 8192x8192", v);
        return cli_fail("export", msg);
      }
    } else if (!strcmp(a, "--theme")) {
      if (!strcmp(v, "light")) view.theme = theme_get(THEME_LIGHT);
      else if (!strcmp(v, "dark")) view.theme = theme_get(THEME_DARK);
      else return cli_fail("export", "--theme: use light or dark");
    } else if (!strcmp(a, "--head")) {
      char *end;
      long h = strtol(v, &end, 10);
      if (!strcmp(v, "all")) head_opt = -1;
      else if (end != v && !*end && h >= 1 && h <= 4096) head_opt = (int)h - 1;
      else return cli_fail("export", "--head: give a head number from 1, or all");
    } else if (!strcmp(a, "--scale")) {
      if (!strcmp(v, "matrix")) view.scale = SCALE_MATRIX;
      else if (!strcmp(v, "stage")) view.scale = SCALE_STAGE;
      else if (!strcmp(v, "global")) view.scale = SCALE_GLOBAL;
      else return cli_fail("export", "--scale: use matrix, stage or global");
    } else if (!strcmp(a, "--threads")) {
      threads = atoi(v);
      if (threads < 1 || threads > 8) return cli_fail("export", "--threads: 1 to 8");
    } else if (!strcmp(a, "--no-text")) show_text = false;
    else if (!strcmp(a, "--no-numbers")) view.numbers = false;
    else {
      snprintf(msg, sizeof msg, "unknown option \"%s\" (see stepformer export --help)", a);
      return cli_fail("export", msg);
    }
  }
  if (!out) return cli_fail("export", "--out DIR is required (the folder to write into)");
  if ((formats & (F_PNG | F_SVG)) && !text_init(&err)) return cli_fail("export", err.msg);

  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  Session s;
  LessonDiag diag = {0};
  if (!session_open(&s, &so, &diag, &err)) {
    lesson_diag_print(&diag, stderr);
    return cli_fail("export", err.msg);
  }
  if (s.note.msg[0]) fprintf(stderr, "stepformer export: note: %s\n", s.note.msg);
  if (head_opt >= s.trace->cfg.H) {
    snprintf(msg, sizeof msg, "--head %d: the model has %d heads", head_opt + 1, s.trace->cfg.H);
    session_close(&s);
    return cli_fail("export", msg);
  }
  view_global_range(s.trace, &view.global_lo, &view.global_hi);
  OutDir od;
  if (!outdir_begin(&od, out, &err)) {
    session_close(&s);
    return cli_fail("export", err.msg);
  }
  Export x = {.s = &s, .lesson_title = s.has_lesson ? s.lesson.title : NULL, .formats = formats, .width = width,
              .height = height, .show_text = show_text, .view = view, .od = &od};
  pthread_mutex_init(&x.lock, NULL);
  atomic_init(&x.next, 0);
  atomic_init(&x.failed, false);
  int rc = 0, pictures = 0;
  if (formats & (F_PNG | F_SVG)) {
    x.n_jobs = plan(&x, head_opt);
    pictures = x.n_jobs;
    pthread_t th[8];
    int started = 0;
    for (int i = 1; i < threads; i++)
      if (pthread_create(&th[started], NULL, worker, &x) == 0) started++;
    worker(&x);
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
  }
  if (!x.failed && !write_data(&x, &err)) fail(&x, &err);
  int files = od.n;
  if (x.failed) {
    outdir_abort(&od);
    rc = cli_fail("export", x.err.msg);
  } else if (!outdir_commit(&od, &err)) {
    rc = cli_fail("export", err.msg);
  } else {
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("wrote %d files (%d pictures) for \"%s\" to %s in %.0f ms\n", files, pictures, s.text, out, ms);
  }
  free(x.jobs);
  pthread_mutex_destroy(&x.lock);
  session_close(&s);
  return rc;
}
