// test_grad_golden.c -- one training step against torch.autograd (issue 21).
//
// For every case of tests/ref/grad/cases.txt (written by tests/gen_grad_ref.py): loads the model,
// runs the forward and backward_run, and checks
//   - the loss and the loss after one SGD step (η = 0.1, train_sgd_step) against loss.npy and
//     loss_after.npy;
//   - every grad.<stage>.npy against the trace tensor's gradient and every grad.<tensor>.npy against
//     the weight's (|c − r| ≤ 1e-5 · max(1e-3, max |r| of the tensor)); every reference file is
//     used, and every gradient the dump writes has a reference or is one torch has no name for
//     (the scores before the mask);
//   - the masked scores' gradient entries are exactly +0 (bits), in S and S_raw;
//   - the forward and backward on two threads give the same bits as on one;
//   - central finite differences of the loss agree with a few entries of every weight tensor
//     (through a model copy with one weight moved) and of the scores S (through a what-if edit):
//     |fd − g| ≤ 0.02·|g| + 2e-3.
// The canonical extensions (tests/ref/ext: GPT-2-like, BERT-like, the course's classifier) by the
// same finite differences. Also: a model without a head and a one-token sentence are refused;
// --labels parses; one target's loss is −log p̂ of it.
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backward.h" // defines: TraceGrad, backward_new, backward_run, backward_param_grad
#include "check.h"
#include "edits.h"   // defines: TraceEdits, edits_trace
#include "fileio.h"  // defines: path_join
#include "forward.h" // defines: model_forward, forward_set_threads
#include "golden_ref.h"
#include "model.h"      // defines: model_tensor_list, model_with_params
#include "model_load.h" // defines: model_load
#include "npy.h"        // defines: npy_read
#include "sqrtdk.h"     // defines: sqrtdk_sweep
#include "train.h"      // defines: train_sgd_step, train_loss

static bool has_prefix(const char *s, const char *p) { return !strncmp(s, p, strlen(p)); }

// Compares n floats of got with the reference file; returns false on a mismatch.
static bool compare(const char *cname, const char *file, const float *got, long n_got, const float *ref,
                    long n_ref) {
  CHECK(n_got == n_ref, "%s/%s: %ld values, the reference %ld", cname, file, n_got, n_ref);
  if (n_got != n_ref) return false;
  double mx = 0, worst = 0;
  for (long k = 0; k < n_ref; k++) mx = fmax(mx, fabs(ref[k]));
  double tol = 1e-5 * fmax(1e-3, mx);
  long bad = 0;
  for (long k = 0; k < n_ref; k++) {
    double d = fabs((double)got[k] - ref[k]);
    worst = fmax(worst, d);
    if (!(d <= tol) && bad++ < 3)
      fprintf(stderr, "  %s/%s[%ld]: got %.9g, torch %.9g\n", cname, file, k, got[k], ref[k]);
  }
  CHECK(bad == 0, "%s/%s: %ld values differ (max |diff| %.3g, tolerance %.3g)", cname, file, bad, worst, tol);
  return bad == 0;
}

static long prod(int nd, const int *shape) {
  long n = 1;
  for (int k = 0; k < nd; k++) n *= shape[k];
  return n;
}

// The gradient the reference file `name` (without "grad." and ".npy") names: a stage, or a weight.
static const float *grad_named(const TraceGrad *g, const ModelTensor *mt, int n_mt, const char *name,
                               long *n) {
  const Trace *t = g->t;
  int k = trace_index(t, name);
  if (k >= 0 && g->d[k]) {
    *n = (long)t->t[k].heads * t->t[k].rows * t->t[k].cols;
    return g->d[k];
  }
  for (int i = 0; i < n_mt; i++)
    if (!strcmp(mt[i].name, name)) {
      *n = mt[i].ndim == 1 ? mt[i].shape[0] : mt[i].shape[0] * mt[i].shape[1];
      return backward_param_grad(g, mt[i].data);
    }
  return NULL;
}

static float read_scalar(const char *dir, const char *file) {
  char path[4096];
  CHECK(path_join(path, sizeof path, dir, file), "path too long");
  Err err = {0};
  int nd, shape[NPY_MAX_DIMS];
  float *v = npy_read(path, &nd, shape, &err);
  CHECK(v && nd == 1 && shape[0] == 1, "%s: %s", path, err.msg);
  float x = v ? v[0] : NAN;
  free(v);
  return x;
}

// Every reference file of dir against g. Returns the files compared.
static int compare_files(const char *cname, const char *dir, const TraceGrad *g) {
  int cap = model_tensor_cap(g->t->model);
  ModelTensor *mt = calloc((size_t)cap, sizeof *mt);
  int n_mt = model_tensor_list(g->t->model, mt, cap), files = 0;
  DIR *d = opendir(dir);
  CHECK(d != NULL, "%s: cannot open", dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    const char *f = e->d_name;
    size_t len = strlen(f);
    if (!has_prefix(f, "grad.") || len < 10 || strcmp(f + len - 4, ".npy")) continue;
    char name[128], path[4096];
    snprintf(name, sizeof name, "%.*s", (int)(len - 9), f + 5);
    long n = 0;
    const float *got = grad_named(g, mt, n_mt, name, &n);
    CHECK(got != NULL, "%s: %s has no gradient in C", cname, f);
    CHECK(path_join(path, sizeof path, dir, f), "path too long");
    Err err = {0};
    int nd, shape[NPY_MAX_DIMS];
    float *ref = npy_read(path, &nd, shape, &err);
    CHECK(ref != NULL, "%s", err.msg);
    if (got && ref) compare(cname, f, got, n, ref, prod(nd, shape));
    free(ref);
    files++;
  }
  if (d) closedir(d);
  // every stage gradient C has, torch has too (but the scores before the mask: torch names none)
  const Trace *t = g->t;
  for (int k = 0; k < t->n; k++) {
    if (!g->d[k] || strstr(t->t[k].name, "S_raw")) continue;
    char path[4096], file[96];
    snprintf(file, sizeof file, "grad.%s.npy", t->t[k].name);
    CHECK(path_join(path, sizeof path, dir, file), "path too long");
    FILE *fp = fopen(path, "rb");
    CHECK(fp != NULL, "%s: C has %s, the reference does not", cname, file);
    if (fp) fclose(fp);
  }
  free(mt);
  return files;
}

// Masked scores (key after the query) have gradient exactly +0.
static void check_masked_zeros(const char *cname, const TraceGrad *g) {
  const Trace *t = g->t;
  if (!t->cfg.causal) return;
  long checked = 0, bad = 0;
  for (int l = 0; l < t->cfg.n_layers; l++) {
    int ks[2] = {t->layers[l].S, t->layers[l].S_raw};
    for (int q = 0; q < 2; q++)
      for (int h = 0; h < t->cfg.H; h++)
        for (int i = 0; i < t->L; i++)
          for (int j = i + 1; j < t->L; j++) {
            float v = g->d[ks[q]][((size_t)h * t->L + i) * t->L + j];
            unsigned bits;
            memcpy(&bits, &v, sizeof bits);
            checked++;
            bad += bits != 0;
          }
  }
  CHECK(checked > 0 && bad == 0, "%s: %ld of %ld masked score gradients are not +0", cname, bad, checked);
}

// Two threads give the same bits as g (one thread). forward_too: the forward runs again on two
// threads (the small models: every product of theirs is one the forward keeps bit-exact); else
// the backward alone runs again on g's own trace (a large model: the forward's BLAS products cut
// by columns may round differently in the last bit, forward.c says; the backward's blocks do not).
static void check_two_threads(const char *cname, const Model *m, const Tokens *tok, const TraceGrad *g,
                              bool forward_too) {
  Err err = {0};
  forward_set_threads(2);
  Trace *t2 = forward_too ? trace_new(m, tok, &err) : (Trace *)g->t;
  CHECK(t2 != NULL, "%s", err.msg);
  if (t2) {
    if (forward_too) model_forward(t2);
    TraceGrad *g2 = backward_new(t2, NULL, 0, &err);
    CHECK(g2 != NULL, "%s", err.msg);
    if (g2) {
      backward_run(g2);
      CHECK(!memcmp(&g->loss, &g2->loss, sizeof g->loss), "%s: the loss differs on two threads", cname);
      CHECK(!memcmp(g->dparams, g2->dparams, sizeof(float) * (size_t)g->n_params),
            "%s: weight gradients differ on two threads", cname);
      for (int k = 0; k < t2->n; k++)
        if (g->d[k])
          CHECK(!memcmp(g->d[k], g2->d[k],
                        sizeof(float) * (size_t)t2->t[k].heads * t2->t[k].rows * t2->t[k].cols),
                "%s: grad.%s differs on two threads", cname, t2->t[k].name);
    }
    backward_free(g2);
    if (forward_too) trace_free(t2);
  }
  forward_set_threads(1);
}

static float loss_with_params(const Model *m, const float *params, const TraceGrad *g) {
  Err err = {0};
  Model *c = model_with_params(m, params, &err);
  CHECK(c != NULL, "%s", err.msg);
  float loss =
      c ? train_loss(c, &g->t->tokens, g->target, m->has_classifier ? 1 : g->t->L, g->t->no_scale, &err)
        : NAN;
  model_with_params_free(c);
  return loss;
}

static bool fd_near(double fd, double g) { return fabs(fd - g) <= 0.02 * fabs(g) + 2e-3; }

// Central differences of the loss: three entries of every weight tensor (the largest gradient,
// the first and the middle), and the largest dS entry of each layer through an edit of the score.
static int check_finite_differences(const char *cname, const Trace *t, const TraceGrad *g) {
  const Model *m = t->model;
  const float eps = 2e-3f; // small enough that no ReLU flips, large enough above float32 rounding
  float *p = model_weights_flat(m), *p0 = model_weights_flat(m); // θ in the gradients' order
  int cap = model_tensor_cap(m), checked = 0;
  ModelTensor *mt = calloc((size_t)cap, sizeof *mt);
  int n_mt = model_tensor_list(m, mt, cap);
  for (int i = 0; i < n_mt; i++) {
    long n = mt[i].ndim == 1 ? mt[i].shape[0] : mt[i].shape[0] * mt[i].shape[1];
    long off = model_param_offset(m, mt[i].data), big = 0;
    CHECK(off >= 0, "%s: %s is not a weight of the model", cname, mt[i].name);
    if (off < 0) continue;
    for (long k = 1; k < n; k++)
      if (fabsf(g->dparams[off + k]) > fabsf(g->dparams[off + big])) big = k;
    long at[3] = {big, 0, n / 2};
    for (int q = 0; q < 3; q++) {
      long k = off + at[q];
      p[k] = p0[k] + eps;
      double up = loss_with_params(m, p, g);
      p[k] = p0[k] - eps;
      double down = loss_with_params(m, p, g);
      p[k] = p0[k];
      double fd = (up - down) / (2 * eps);
      CHECK(fd_near(fd, g->dparams[k]), "%s: d loss/d %s[%ld]: finite difference %.6g, backward %.6g", cname,
            mt[i].name, at[q], fd, g->dparams[k]);
      checked++;
    }
  }
  for (int l = 0; l < t->cfg.n_layers && !t->no_scale; l++) { // dS through a what-if edit of the score
    int k = t->cfg.causal ? t->layers[l].S_raw : t->layers[l].S;
    const TraceTensor *s = &t->t[k];
    long n = (long)s->heads * s->rows * s->cols, big = 0;
    for (long q = 1; q < n; q++)
      if (fabsf(g->d[k][q]) > fabsf(g->d[k][big])) big = q;
    int h = (int)(big / ((long)s->rows * s->cols)), i = (int)(big / s->cols % s->rows),
        j = (int)(big % s->cols);
    double ls[2];
    for (int side = 0; side < 2; side++) {
      TraceEdits e = {0};
      TraceEdit x = {.kind = EDIT_SCORE, .layer = l, .head = h, .i = i, .j = j};
      snprintf(x.tensor, sizeof x.tensor, "%s", s->name);
      x.value = trace_at(s, h, i, j) + (side ? -eps : eps);
      Err err = {0};
      CHECK(edits_add(&e, &x, &err), "%s", err.msg);
      Trace *te = edits_trace(t, &e, &err);
      CHECK(te != NULL, "%s", err.msg);
      ls[side] = te ? backward_loss(te, g->target, m->has_classifier ? 1 : t->L) : NAN;
      trace_free(te);
      edits_free(&e);
    }
    double fd = (ls[0] - ls[1]) / (2 * eps);
    CHECK(fd_near(fd, g->d[k][big]), "%s: d loss/d %s[%d,%d,%d]: finite difference %.6g, backward %.6g",
          cname, s->name, h, i, j, fd, g->d[k][big]);
    checked++;
  }
  free(mt);
  free(p);
  free(p0);
  return checked;
}

static void run_case(const char *refdir, const char *cname, const char *text) {
  char dir[4096], path[4096];
  CHECK(path_join(dir, sizeof dir, refdir, cname) && path_join(path, sizeof path, dir, "model.safetensors"),
        "path too long");
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "%s: %s", cname, err.msg);
  if (!m) return;
  Tokens tok;
  bool ok = tokens_from_text(&tok, &m->vocab, text, 0, &err);
  CHECK(ok, "%s: %s", cname, err.msg);
  Trace *t = ok ? trace_new(m, &tok, &err) : NULL;
  CHECK(t != NULL, "%s: %s", cname, err.msg);
  if (t) {
    model_forward(t);
    TraceGrad *g = backward_new(t, NULL, 0, &err);
    CHECK(g != NULL, "%s: %s", cname, err.msg);
    if (g) {
      backward_run(g);
      float want = read_scalar(dir, "loss.npy");
      CHECK(fabsf(g->loss - want) <= 1e-5f * fmaxf(1, fabsf(want)), "%s: loss %.9g, torch %.9g", cname,
            g->loss, want);
      int files = compare_files(cname, dir, g);
      Model *next = train_sgd_step(m, g, 0.1f, &err);
      CHECK(next != NULL, "%s", err.msg);
      float after = next ? train_loss(next, &tok, NULL, 0, false, &err) : NAN,
            want_after = read_scalar(dir, "loss_after.npy");
      CHECK(fabsf(after - want_after) <= 1e-5f * fmaxf(1, fabsf(want_after)),
            "%s: loss after %.9g, torch %.9g", cname, after, want_after);
      CHECK(after < g->loss, "%s: the step does not lower the loss (%g -> %g)", cname, g->loss, after);
      model_with_params_free(next);
      // the model as loaded is untouched: its loss is the same again
      CHECK(train_loss(m, &tok, NULL, 0, false, &err) == g->loss, "%s: the step changed the model", cname);
      check_masked_zeros(cname, g);
      check_two_threads(cname, m, &tok, g, true);
      int fd = check_finite_differences(cname, t, g);
      printf("  %-20s loss %.6f -> %.6f, %d reference files, %d finite differences\n", cname, g->loss, after,
             files, fd);
    }
    backward_free(g);
    trace_free(t);
  }
  if (ok) tokens_free(&tok);
  model_free(m);
}

// The canonical extensions (tests/ref/ext, gen_ref_ext.py's models: GPT-2's learned positions,
// GELU-tanh and tied head without a bias; BERT's token type, embedding LayerNorm and head transform;
// the course's classifier, its label class 1) by finite differences, and one and two threads.
static void run_ext_case(const char *cname, const char *text) {
  char ext[4096], dir[4096], path[4096];
  const char *td = getenv("SF_TEST_DIR");
  CHECK(path_join(ext, sizeof ext, td ? td : "tests", "ref/ext") && path_join(dir, sizeof dir, ext, cname) &&
            path_join(path, sizeof path, dir, "model.safetensors"),
        "path too long");
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "%s: %s", cname, err.msg);
  if (!m) return;
  Tokens tok;
  bool ok = tokens_from_text(&tok, &m->vocab, text, 0, &err);
  CHECK(ok, "%s", err.msg);
  Trace *t = ok ? trace_new(m, &tok, &err) : NULL;
  if (t) {
    model_forward(t);
    int label = 0;
    TraceGrad *g = backward_new(t, m->has_classifier ? &label : NULL, 1, &err);
    CHECK(g != NULL, "%s: %s", cname, err.msg);
    if (g) {
      backward_run(g);
      CHECK(isfinite(g->loss) && g->loss > 0, "%s: loss %g", cname, g->loss);
      int fd = check_finite_differences(cname, t, g);
      if (!m->has_classifier) check_two_threads(cname, m, &tok, g, true);
      printf("  %-20s loss %.6f, %d finite differences\n", cname, g->loss, fd);
    }
    backward_free(g);
    trace_free(t);
  }
  if (ok) tokens_free(&tok);
  model_free(m);
}

// The √d_k experiment: a pass without the scale is checked by finite differences of every weight;
// the sweep of random queries and keys shows the scores spreading as √d_k without it, the softmax
// saturating and dL/dS shrinking, and stays put with it.
static void check_no_scale(void) {
  char path[4096];
  const char *td = getenv("SF_TEST_DIR");
  CHECK(path_join(path, sizeof path, td ? td : "tests", "ref/grad/pre-gelu-causal-2/model.safetensors"),
        "path too long");
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "%s", err.msg);
  if (!m) return;
  Tokens tok;
  CHECK(tokens_from_text(&tok, &m->vocab, "the mouse eats the money by the river", 0, &err), "%s", err.msg);
  Trace *t = trace_new(m, &tok, &err), *ts = trace_new(m, &tok, &err);
  model_forward(t);
  ts->no_scale = true;
  model_forward(ts);
  const TraceTensor *s = trace_find(t, "l0.S_raw"), *s1 = trace_find(ts, "l0.S_raw");
  float dk = (float)(m->cfg.D / m->cfg.H);
  CHECK(fabsf(trace_at(s1, 0, 2, 1) - sqrtf(dk) * trace_at(s, 0, 2, 1)) < 1e-5f,
        "no scale: S = √d_k · scaled S");
  TraceGrad *g = backward_new(ts, NULL, 0, &err);
  CHECK(g != NULL, "%s", err.msg);
  if (g) {
    backward_run(g);
    int fd = check_finite_differences("no-scale", ts, g);
    printf("  %-20s loss %.6f, %d finite differences\n", "no-scale", g->loss, fd);
  }
  backward_free(g);
  trace_free(ts);
  trace_free(t);
  tokens_free(&tok);
  model_free(m);

  const int dks[4] = {4, 64, 1024, 4096};
  SqrtDkRow r[4], again[4];
  sqrtdk_sweep(42, 16, 256, dks, 4, r);
  sqrtdk_sweep(42, 16, 256, dks, 4, again);
  CHECK(!memcmp(r, again, sizeof r), "the sweep depends on its seed only");
  for (int k = 0; k < 4; k++) {
    CHECK(fabsf(r[k].score_std[0] - 1) < 0.1f, "d_k %d: scaled scores' std %g, not about 1", dks[k],
          r[k].score_std[0]);
    CHECK(fabsf(r[k].score_std[1] / sqrtf((float)dks[k]) - 1) < 0.15f,
          "d_k %d: unscaled std %g, not about √d_k", dks[k], r[k].score_std[1]);
    CHECK(r[k].max_a[0] < 0.3f, "d_k %d: the scaled softmax saturates (max A %g)", dks[k], r[k].max_a[0]);
    if (k) CHECK(r[k].max_a[1] > r[k - 1].max_a[1], "unscaled: max A grows with d_k");
  }
  CHECK(r[3].max_a[1] > 0.95f, "d_k 4096 unscaled: max A %g, not saturated", r[3].max_a[1]);
  CHECK(r[3].ds_rms[1] < 0.5f * r[3].ds_rms[0], "d_k 4096: dS unscaled %g is not well below scaled %g",
        r[3].ds_rms[1], r[3].ds_rms[0]);
}

// Large enough that the backward splits its products and heads between two threads (backward.c):
// a random 2-layer model (D=64, H=4, F=256) given a tied head, on 64 words. Same bits as one thread.
static void check_two_threads_large(void) {
  char lines[1024] = "<unk>", text[1024] = "";
  for (int i = 0; i < 64; i++) {
    snprintf(lines + strlen(lines), sizeof lines - strlen(lines), "\nw%d", i);
    snprintf(text + strlen(text), sizeof text - strlen(text), "%sw%d", i ? " " : "", (i * 7) % 64);
  }
  Err err = {0};
  Vocab v;
  CHECK(vocab_from_lines(&v, lines, &err), "%s", err.msg);
  ModelConfig c = model_config_default();
  c.D = 64, c.H = 4, c.F = 256, c.n_layers = 2, c.norm_first = true, c.activation = ACT_GELU;
  Model *m = model_random(&c, &v, 7, &err);
  vocab_free(&v);
  CHECK(m != NULL, "%s", err.msg);
  if (!m) return;
  m->has_head = m->tie_head = true; // the embedding as the head: a model with a loss
  m->head_weight = m->embed;
  Tokens tok;
  CHECK(tokens_from_text(&tok, &m->vocab, text, 0, &err), "%s", err.msg);
  Trace *t = trace_new(m, &tok, &err);
  CHECK(t != NULL, "%s", err.msg);
  if (t) {
    model_forward(t);
    TraceGrad *g = backward_new(t, NULL, 0, &err);
    CHECK(g != NULL, "%s", err.msg);
    if (g) {
      backward_run(g);
      check_two_threads("random-64", m, &tok, g, false);
      printf("  %-20s loss %.6f, one and two threads compared\n", "random-64", g->loss);
    }
    backward_free(g);
    trace_free(t);
  }
  tokens_free(&tok);
  model_free(m);
}

// Refusals and --labels.
static void check_refusals(void) {
  Err err = {0};
  ModelConfig c = model_config_default();
  Vocab v = {0};
  CHECK(vocab_from_lines(&v, "<unk>\na\nb", &err), "%s", err.msg);
  Model *m = model_random(&c, &v, 1, &err);
  Tokens tok;
  CHECK(m && tokens_from_text(&tok, &m->vocab, "a b", 0, &err), "%s", err.msg);
  Trace *t = trace_new(m, &tok, &err);
  model_forward(t);
  err = (Err){0};
  CHECK(!backward_new(t, NULL, 0, &err) && strstr(err.msg, "no prediction head"), "no head: \"%s\"", err.msg);
  trace_free(t);
  tokens_free(&tok);
  model_free(m);
  vocab_free(&v);

  char dir[4096], path[4096];
  const char *td = getenv("SF_TEST_DIR");
  CHECK(path_join(dir, sizeof dir, td ? td : "tests", "ref/grad/post-relu-1") &&
            path_join(path, sizeof path, dir, "model.safetensors"),
        "path too long");
  m = model_load(path, &err);
  CHECK(m != NULL, "%s", err.msg);
  if (!m) return;
  CHECK(tokens_from_text(&tok, &m->vocab, "bank", 0, &err), "%s", err.msg);
  t = trace_new(m, &tok, &err);
  model_forward(t);
  CHECK(!backward_new(t, NULL, 0, &err) && strstr(err.msg, "one token"), "one token: \"%s\"", err.msg);
  trace_free(t);
  tokens_free(&tok);
  CHECK(tokens_from_text(&tok, &m->vocab, "the cat walks", 0, &err), "%s", err.msg);
  t = trace_new(m, &tok, &err);
  model_forward(t);
  int target[8], n = 0;
  CHECK(backward_parse_labels(t, "cat, -, river", target, &n, &err) && n == 3 && target[1] == -1 &&
            target[0] == vocab_find(&m->vocab, "cat"),
        "labels: %s", err.msg);
  CHECK(!backward_parse_labels(t, "cat,-", target, &n, &err) && strstr(err.msg, "2 words for 3 tokens"),
        "short labels: \"%s\"", err.msg);
  CHECK(!backward_parse_labels(t, "cat,zebra,-", target, &n, &err) && strstr(err.msg, "zebra"),
        "unknown label: \"%s\"", err.msg);
  CHECK(!backward_parse_labels(t, "-,-,-", target, &n, &err) || !backward_new(t, target, n, &err),
        "no target at all is refused");
  // one target: the loss is that word's −log p̂
  CHECK(backward_parse_labels(t, "-,river,-", target, &n, &err), "%s", err.msg);
  TraceGrad *g = backward_new(t, target, n, &err);
  CHECK(g && g->n_targets == 1, "%s", err.msg);
  if (g) {
    backward_run(g);
    int river = vocab_find(&m->vocab, "river");
    const TraceTensor *pred = trace_find(t, "pred");
    CHECK(fabs(g->loss + log(trace_at(pred, 0, 1, river))) < 1e-5, "one target: loss %g, -log p %g", g->loss,
          -log(trace_at(pred, 0, 1, river)));
  }
  backward_free(g);
  trace_free(t);
  tokens_free(&tok);
  model_free(m);
}

int main(void) {
  const char *td = getenv("SF_TEST_DIR");
  char refdir[4096], cases[4096];
  CHECK(path_join(refdir, sizeof refdir, td ? td : "tests", "ref/grad") &&
            path_join(cases, sizeof cases, refdir, "cases.txt"),
        "path too long");
  forward_set_threads(1);
  GoldenRow rows[16];
  int n = golden_read_rows(cases, 2, rows, 16);
  CHECK(n >= 4, "%s: %d cases", cases, n);
  for (int i = 0; i < n; i++) run_case(refdir, rows[i].f[0], rows[i].f[1]);
  GoldenRow ext[8];
  char ext_cases[4096];
  CHECK(path_join(ext_cases, sizeof ext_cases, td ? td : "tests", "ref/ext/cases.txt"), "path too long");
  int n_ext = golden_read_rows(ext_cases, 2, ext, 8);
  for (int i = 0; i < n_ext; i++) run_ext_case(ext[i].f[0], ext[i].f[1]);
  check_no_scale();
  check_two_threads_large();
  check_refusals();
  return check_exit("test_grad_golden");
}
