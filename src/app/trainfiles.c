// trainfiles.c -- see trainfiles.h.
#include "trainfiles.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backward.h"  // defines: TraceGrad, backward_new, backward_run, backward_param_grad
#include "fileio.h"    // defines: file_write_atomic
#include "npy.h"       // defines: npy_write
#include "canvas.h"    // defines: canvas_new, canvas_free
#include "pngio.h"     // defines: pngio_write
#include "text.h"      // defines: text_init
#include "sqrtdk.h"    // defines: sqrtdk_sweep, sqrtdk_matrix
#include "view_grad.h" // defines: view_grad_softmax, view_grad_pick
#include "train.h"     // defines: train_sgd_step, train_loss, TRAIN_DEFAULT_LR

int trainfiles_option(TrainOpts *o, int argc, char **argv, int *i, Err *err) {
  const char *a = argv[*i];
  if (!strcmp(a, "--train")) {
    o->on = true;
    return 1;
  }
  if (!strcmp(a, "--lr")) {
    char *end = NULL;
    double v = *i + 1 < argc ? strtod(argv[*i + 1], &end) : 0;
    if (*i + 1 >= argc || !end || *end || end == argv[*i + 1] || !(v > 0) || v > 1e6)
      return err_set(err, "--lr needs a learning rate, a number above 0 such as 0.1"), -1;
    o->lr = (float)v;
    o->lr_set = true;
    ++*i;
    return 1;
  }
  if (!strcmp(a, "--no-scale")) {
    o->no_scale = true;
    return 1;
  }
  if (!strcmp(a, "--labels")) {
    if (*i + 1 >= argc)
      return err_set(err, "--labels needs the targets: one word per token (\"-\" for none), or a class"), -1;
    o->labels = argv[++*i];
    return 1;
  }
  return 0;
}

static bool write_npy(OutDir *od, const char *name, const float *data, int nd, const int *shape, Err *err) {
  char file[160], path[4096];
  snprintf(file, sizeof file, "%s.npy", name);
  return outdir_path(od, file, path, sizeof path, err) && npy_write(path, data, nd, shape, err);
}

bool trainfiles_write(OutDir *od, const Trace *t, const TrainOpts *o, char *summary, int cap, Err *err) {
  int *target = calloc((size_t)t->L + 1, sizeof(int)), n_target = 0;
  if (!target) return err_set(err, "out of memory");
  if (o->labels && !backward_parse_labels(t, o->labels, target, &n_target, err)) return free(target), false;
  TraceGrad *g = backward_new(t, o->labels ? target : NULL, n_target, err);
  if (!g) return free(target), false;
  float lr = o->lr_set ? o->lr : TRAIN_DEFAULT_LR;
  float loss = backward_run(g);
  int one = 1;
  bool ok = write_npy(od, "loss", &loss, 1, &one, err);
  int files = 0;
  for (int k = 0; ok && k < t->n; k++) { // grad.<stage>: each activation's gradient, its own shape
    if (!g->d[k]) continue;
    char name[64];
    int shape[3], nd = trace_dump_shape(&t->t[k], shape);
    snprintf(name, sizeof name, "grad.%s", t->t[k].name);
    ok = write_npy(od, name, g->d[k], nd, shape, err);
    files++;
  }
  int tc = model_tensor_cap(t->model);
  ModelTensor *mt = calloc((size_t)tc, sizeof *mt);
  int n = mt ? model_tensor_list(t->model, mt, tc) : 0;
  if (!mt) ok = err_set(err, "out of memory");
  for (int k = 0; ok && k < n; k++) { // grad.<tensor>: each weight's gradient under its file name
    char name[96];
    int shape[2] = {(int)mt[k].shape[0], (int)mt[k].shape[1]};
    snprintf(name, sizeof name, "grad.%s", mt[k].name);
    ok = write_npy(od, name, backward_param_grad(g, mt[k].data), mt[k].ndim, shape, err);
    files++;
  }
  free(mt);
  if (ok && t->no_scale) { // the √d_k experiment: random queries and keys, with and without the scale
    enum { N_DK = 6 };
    static const int dks[N_DK] = {4, 16, 64, 256, 1024, 4096};
    SqrtDkRow r[N_DK];
    sqrtdk_sweep(42, 16, 256, dks, N_DK, r);
    float m[N_DK * SQRTDK_COLS];
    sqrtdk_matrix(r, N_DK, m);
    int shape[2] = {N_DK, SQRTDK_COLS};
    char text[2048], path[4096];
    int len = snprintf(text, sizeof text,
                       "# sqrt_dk.npy: random q, k ~ N(0,1), 16 keys, 256 query rows, dA ~ N(0,1), seed 42\n"
                       "# d_k\tstd(S) scaled\tstd(S) unscaled\tmax A scaled\tmax A unscaled\t"
                       "rms(dS) scaled\trms(dS) unscaled\n");
    for (int k = 0; k < N_DK && len < (int)sizeof text - 128; k++)
      len += snprintf(text + len, sizeof text - (size_t)len, "%d\t%.4f\t%.4f\t%.4f\t%.4f\t%.3g\t%.3g\n",
                      r[k].dk, (double)r[k].score_std[0], (double)r[k].score_std[1], (double)r[k].max_a[0],
                      (double)r[k].max_a[1], (double)r[k].ds_rms[0], (double)r[k].ds_rms[1]);
    ok = write_npy(od, "sqrt_dk", m, 2, shape, err) &&
         outdir_path(od, "sqrt_dk.txt", path, sizeof path, err) &&
         file_write_atomic(path, text, (size_t)len, err);
  }
  float after = NAN;
  if (ok) {
    Model *next = train_sgd_step(t->model, g, lr, err);
    ok = next != NULL;
    if (ok) after = train_loss(next, &t->tokens, o->labels ? target : NULL, n_target, t->no_scale, err);
    ok = ok && !isnan(after) && write_npy(od, "loss_after", &after, 1, &one, err);
    model_with_params_free(next);
  }
  char picture[300] = ", backward-softmax.png";
  if (ok) { // the picture: the backward through one head's softmax, where the gradient is largest
    int head, row, col;
    view_grad_pick(t, g, &head, &row, &col);
    enum { PW = 1280, PH = 720 };
    Scene sc;
    scene_init(&sc, PW, PH, 0);
    char footer[512], path[4096];
    snprintf(footer, sizeof footer, "%s · %d tokens · loss %.4g, after one training step with η = %g: %.4g",
             t->model->source, t->L, (double)loss, (double)lr, (double)after);
    Err ferr = {0};                // without fonts the dump goes on without the picture, and says so
    bool fonts = text_init(&ferr); // before drawing: the layout measures the text (once per process)
    if (fonts) view_grad_softmax(&sc, t, g, 0, head, row, col, footer, theme_get(THEME_LIGHT), PW, PH, NULL);
    Canvas cv = canvas_new(PW, PH);
    if (!fonts)
      snprintf(picture, sizeof picture, " (no backward-softmax.png: %.200s)", ferr.msg);
    else if (!cv.px)
      ok = err_set(err, "out of memory for the picture");
    else {
      scene_raster(&sc, cv, 0);
      const char *kv[] = {"Title",     "Backward through the softmax", "Description", footer, "Software",
                          "Stepformer"};
      ok = outdir_path(od, "backward-softmax.png", path, sizeof path, err) &&
           pngio_write(cv, path, kv, 3, err);
      canvas_free(&cv);
    }
    scene_free(&sc);
  }
  if (ok)
    snprintf(summary, (size_t)cap,
             "training step: loss %.6g over %d target%s, after one step with η = %g: %.6g; %d gradient files "
             "(grad.*.npy), loss.npy, loss_after.npy%s%s",
             (double)loss, g->n_targets, g->n_targets == 1 ? "" : "s", (double)lr, (double)after, files,
             picture,
             t->no_scale ? "; scores without 1/sqrt(d_k) (--no-scale), sqrt_dk.npy and sqrt_dk.txt" : "");
  backward_free(g);
  free(target);
  return ok;
}
