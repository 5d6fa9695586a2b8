// insidefiles.c -- see insidefiles.h.
#include "insidefiles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h" // defines: file_write_atomic
#include "inside.h" // defines: inside_lens, inside_rollout, inside_saliency
#include "npy.h"    // defines: npy_write

int insidefiles_option(InsideOpts *o, int argc, char **argv, int *i, Err *err) {
  const char *a = argv[*i];
  if (strcmp(a, "--position") && strcmp(a, "--target-token")) return 0;
  if (*i + 1 >= argc) {
    err_set(err, "%s needs a value: --position N (1 = the first token), --target-token WORD", a);
    return -1;
  }
  const char *v = argv[++*i];
  if (!strcmp(a, "--target-token")) {
    o->token = v;
    return 1;
  }
  char *end;
  long n = strtol(v, &end, 10);
  if (*end || n < 1 || n > 1 << 20) {
    err_set(err, "--position %s: give a token's position, 1 for the first", v);
    return -1;
  }
  o->position = (int)n;
  return 1;
}

static bool save(OutDir *od, const char *name, const float *x, int nd, const int *shape, Err *err) {
  char path[4096];
  return outdir_path(od, name, path, sizeof path, err) && npy_write(path, x, nd, shape, err);
}

static bool saliency_wanted(const Trace *t) { return t->pred >= 0 && t->T == 0 && !t->edits && t->L > 0; }

int insidefiles_count(const Trace *t) {
  if (t->T > 0) return 0;
  int N = t->cfg.n_layers;
  return (inside_has_lens(t) ? N : 0) + N + 1 + (saliency_wanted(t) ? 2 : 0);
}

bool insidefiles_write(OutDir *od, const Trace *t, const InsideOpts *o, Err *err) {
  if (t->T > 0) return true; // an encoder-decoder: not yet
  int N = t->cfg.n_layers, L = t->L;
  char name[64];
  if (inside_has_lens(t)) {
    int cols = inside_lens_cols(t), rows = t->pred >= 0 ? L : 1;
    float *p = malloc(sizeof(float) * (size_t)inside_lens_floats(t));
    if (!p) return err_set(err, "out of memory (the logit lens: %d layers x %d x %d)", N, rows, cols);
    bool ok = inside_lens(t, p, err);
    for (int l = 0; ok && l < N; l++) {
      snprintf(name, sizeof name, "lens.l%d.npy", l);
      ok = save(od, name, p + (size_t)l * rows * cols, 2, (int[]){rows, cols}, err);
    }
    free(p);
    if (!ok) return false;
  }
  float *R = malloc(sizeof(float) * (size_t)N * L * L);
  if (!R) return err_set(err, "out of memory");
  bool ok = inside_rollout(t, R, err);
  for (int l = 0; ok && l < N; l++) {
    snprintf(name, sizeof name, "rollout.l%d.npy", l);
    ok = save(od, name, R + (size_t)l * L * L, 2, (int[]){L, L}, err);
  }
  ok = ok && save(od, "rollout.npy", R + (size_t)(N - 1) * L * L, 2, (int[]){L, L}, err);
  free(R);
  if (!ok || !saliency_wanted(t)) return ok;
  if (o->position > L)
    return err_set(err, "--position %d: the sentence has %d tokens (1 .. %d)", o->position, L, L);
  int target = -1;
  if (o->token) {
    const Vocab *v = &t->model->vocab;
    for (int k = 0; k < v->n && target < 0; k++)
      if (!strcmp(v->words[k], o->token)) target = k;
    if (target < 0)
      return err_set(err, "--target-token \"%s\" is not a word of the model's vocabulary", o->token);
  }
  float *s = malloc(sizeof(float) * (size_t)L);
  if (!s) return err_set(err, "out of memory");
  int pos, tok;
  ok = inside_saliency(t, o->position - 1, target, s, &pos, &tok, err) &&
       save(od, "saliency.npy", s, 1, &L, err);
  free(s);
  if (!ok) return false;
  char line[512], w[128], path[4096];
  trace_axis_label(t, AXIS_TOKEN, pos, w, sizeof w);
  int n =
      snprintf(line, sizeof line, "position %d %s, token %s (id %d): d log p[position, token] / dX, x X\n",
               pos + 1, w, t->model->vocab.words[tok], tok);
  return outdir_path(od, "saliency.txt", path, sizeof path, err) &&
         file_write_atomic(path, line, (size_t)n, err);
}
