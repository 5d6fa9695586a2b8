// test_inside.c -- looking inside a pass (issue 36): the logit lens, rollout, saliency and neurons
// of inside.h against torch (tests/gen_inside_ref.py: post- and pre-norm, with and without the
// final LayerNorm, causal and not, 1-3 layers), and on the other model kinds their invariants:
// the last lens row is pred (GPT-2's hub folder, the shipped bank model) or class_pred (the course's
// classifier), every rollout row sums to 1, a causal model's rollout keeps the mask, the saliency
// sums to 1; and what cannot be computed is refused in one line.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fileio.h"       // defines: path_join, file_read_all
#include "forward.h"      // defines: model_forward
#include "golden_ref.h"   // defines: golden_read_rows, GoldenRow
#include "inside.h"       // defines: inside_*
#include "model.h"        // defines: Model
#include "model_load.h"   // defines: model_load
#include "model_tokens.h" // defines: model_tokenize
#include "npy.h"          // defines: npy_read
#include "trace.h"        // defines: Trace, trace_new

// |c - r| <= 1e-5 · max(1, |r|) over n floats of file dir/name.npy against c; returns the worst.
static double compare(const char *what, const char *dir, const char *name, const float *c, long n) {
  char path[4300], file[128];
  snprintf(file, sizeof file, "%s.npy", name);
  CHECK(path_join(path, sizeof path, dir, file), "path");
  int nd, shape[NPY_MAX_DIMS];
  Err err = {0};
  float *r = npy_read(path, &nd, shape, &err);
  CHECK(r != NULL, "%s: %s", what, err.msg);
  if (!r) return INFINITY;
  long count = 1;
  for (int k = 0; k < nd; k++) count *= shape[k];
  CHECK(count == n, "%s/%s: %ld values, computed %ld", what, name, count, n);
  double worst = 0;
  long bad = 0;
  for (long i = 0; i < n && i < count; i++) {
    double d = fabs((double)c[i] - r[i]);
    if (d > worst) worst = d;
    bad += !(d <= 1e-5 * fmax(1.0, fabs(r[i])));
  }
  CHECK(bad == 0, "%s/%s: %ld of %ld values differ, max |diff| %.3g", what, name, bad, n, worst);
  free(r);
  return worst;
}

static Trace *open_trace(const char *path, const char *text, Model **mo) {
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "%s: %s", path, err.msg);
  if (!m) return NULL;
  Tokens tok;
  Trace *t = NULL;
  if (model_tokenize(m, text, 0, &tok, &err)) {
    t = trace_new(m, &tok, &err);
    tokens_free(&tok);
  }
  CHECK(t != NULL, "%s: %s", path, err.msg);
  if (t) model_forward(t);
  *mo = m;
  return t;
}

// The invariants every model kind keeps.
static void invariants(const char *what, const Trace *t) {
  int L = t->L, N = t->cfg.n_layers;
  Err err = {0};
  float *R = malloc(sizeof(float) * (size_t)N * L * L);
  CHECK(R && inside_rollout(t, R, &err), "%s: rollout %s", what, err.msg);
  for (int l = 0; R && l < N; l++)
    for (int i = 0; i < L; i++) {
      double s = 0;
      for (int j = 0; j < L; j++) {
        float v = R[((size_t)l * L + i) * L + j];
        s += v;
        if (t->cfg.causal && j > i)
          CHECK(v == 0.0f, "%s: rollout l%d[%d,%d] = %g past the mask", what, l, i, j, v);
      }
      CHECK(fabs(s - 1) < 1e-5, "%s: rollout l%d row %d sums to %.8f", what, l, i, s);
    }
  free(R);
  if (!inside_has_lens(t)) return;
  long n = inside_lens_floats(t);
  int cols = inside_lens_cols(t), rows = t->pred >= 0 ? L : 1;
  float *p = malloc(sizeof(float) * (size_t)n);
  CHECK(p && inside_lens(t, p, &err), "%s: lens %s", what, err.msg);
  const TraceTensor *pred = &t->t[t->pred >= 0 ? t->pred : t->class_pred];
  double worst = 0;
  for (int i = 0; p && i < rows; i++)
    for (int v = 0; v < cols; v++)
      worst = fmax(worst, fabs(p[((size_t)(N - 1) * rows + i) * cols + v] - trace_at(pred, 0, i, v)));
  CHECK(worst < 2e-6, "%s: the last lens row differs from %s by %.3g", what, pred->name, worst);
  free(p);
  if (inside_view_available(t, INSIDE_SALIENCY)) { // (today's decoders: no backward yet)
    float *s = malloc(sizeof(float) * (size_t)L);
    int pos, tok;
    CHECK(s && inside_saliency(t, -1, -1, s, &pos, &tok, &err), "%s: saliency %s", what, err.msg);
    double sum = 0;
    for (int j = 0; s && j < L; j++) {
      sum += s[j];
      CHECK(s[j] >= 0, "%s: saliency[%d] < 0", what, j);
    }
    CHECK(fabs(sum - 1) < 1e-5 && pos == L - 1, "%s: saliency sums to %g at position %d", what, sum, pos);
    free(s);
  }
  printf("  %-28s L=%d, %d layers: rollout rows sum to 1, last lens = %s (max |diff| %.2g)\n", what, L, N,
         pred->name, worst);
}

static void run_case(const char *root, const char *name, const char *text) {
  char dir[4200], path[4300];
  CHECK(path_join(dir, sizeof dir, root, name), "path");
  CHECK(path_join(path, sizeof path, dir, "model.safetensors"), "path");
  Model *m = NULL;
  Trace *t = open_trace(path, text, &m);
  if (!t) {
    model_free(m);
    return;
  }
  int L = t->L, N = t->cfg.n_layers, V = t->cfg.V;
  Err err = {0};
  double worst = 0;
  char stage[32];
  float *p = malloc(sizeof(float) * (size_t)inside_lens_floats(t));
  CHECK(p && inside_lens(t, p, &err), "%s: %s", name, err.msg);
  for (int l = 0; p && l < N; l++) {
    snprintf(stage, sizeof stage, "lens.l%d", l);
    worst = fmax(worst, compare(name, dir, stage, p + (size_t)l * L * V, (long)L * V));
  }
  free(p);
  float *R = malloc(sizeof(float) * (size_t)N * L * L);
  CHECK(R && inside_rollout(t, R, &err), "%s: %s", name, err.msg);
  for (int l = 0; R && l < N; l++) {
    snprintf(stage, sizeof stage, "rollout.l%d", l);
    worst = fmax(worst, compare(name, dir, stage, R + (size_t)l * L * L, (long)L * L));
  }
  if (R) worst = fmax(worst, compare(name, dir, "rollout", R + (size_t)(N - 1) * L * L, (long)L * L));
  free(R);
  float s[256];
  CHECK(L <= 256 && inside_saliency(t, -1, -1, s, NULL, NULL, &err), "%s: saliency: %s", name, err.msg);
  worst = fmax(worst, compare(name, dir, "saliency", s, L));
  // neurons.txt: "unit value id:logit ..." for layer 0's top 3 units at the last position
  CHECK(path_join(path, sizeof path, dir, "neurons.txt"), "path");
  size_t len;
  char *txt = file_read_all(path, &len, 1 << 16, &err), *line = txt;
  int idx[3], id5[5];
  float act[3], lg5[5];
  int n = inside_top_neurons(t, 0, L - 1, 3, idx, act);
  CHECK(n == 3, "%s: %d top units", name, n);
  for (int k = 0; txt && k < n; k++) {
    line = strchr(line, '\n');
    if (!line) break;
    line++;
    int unit;
    float val;
    int used = 0;
    CHECK(sscanf(line, "%d %g%n", &unit, &val, &used) == 2, "%s: neurons.txt line %d", name, k + 2);
    CHECK(unit == idx[k] && fabsf(val - act[k]) <= 1e-5f * fmaxf(1, fabsf(val)),
          "%s: unit %d: %d %g, torch %d %g", name, k + 1, idx[k], act[k], unit, val);
    int m5 = inside_neuron_tokens(t, 0, idx[k], 5, id5, lg5);
    const char *q = line + used;
    for (int j = 0; j < m5; j++) {
      int id, u = 0;
      float lg;
      CHECK(sscanf(q, " %d:%g%n", &id, &lg, &u) == 2, "%s: unit %d token %d", name, unit, j);
      q += u;
      CHECK(id == id5[j] && fabsf(lg - lg5[j]) <= 1e-5f * fmaxf(1, fabsf(lg)),
            "%s: unit %d promotes %d (%g), torch %d (%g)", name, unit, id5[j], lg5[j], id, lg);
    }
  }
  free(txt);
  printf("  %-28s lens, rollout, saliency and neurons equal torch, max |diff| %.3g\n", name, worst);
  invariants(name, t);
  trace_free(t);
  model_free(m);
}

int main(void) {
  char root[4096], path[4200];
  CHECK(path_join(root, sizeof root, check_test_dir(), "ref/inside"), "path");
  snprintf(path, sizeof path, "%s/cases.txt", root);
  GoldenRow rows[16];
  int n = golden_read_rows(path, 2, rows, 16);
  CHECK(n >= 3, "%d cases in %s", n, path);
  for (int i = 0; i < n; i++) run_case(root, rows[i].f[0], rows[i].f[1]);

  // other model kinds: GPT-2's hub folder (tied head, ln_f, GELU tanh), the shipped bank model,
  // the course's classifier (the lens of its class scores), today's decoders (a final RMSNorm,
  // GQA, RoPE; Qwen 3's QK-norm)
  static const char *const KINDS[][2] = {
      {"ref/hub/gpt2-tiny", "The cat walks by the bank"},
      {"../assets/models/bank.safetensors", "The cat walks by the bank"},
      {"ref/course/l2-h4-bias/model.pt", "the mouse sleeps by the river bank"},
      {"ref/llama/llama-gqa2", "The cat walks by the bank"},
      {"ref/llama/qwen3-sharded", "The cat walks by the bank"}};
  for (int i = 0; i < (int)(sizeof KINDS / sizeof *KINDS); i++) {
    snprintf(path, sizeof path, "%s/%s", check_test_dir(), KINDS[i][0]);
    Model *m = NULL;
    Trace *t = open_trace(path, KINDS[i][1], &m);
    if (t) invariants(KINDS[i][0], t);
    if (t && t->class_pred >= 0) { // a classifier has no saliency (no word to explain)
      Err err = {0};
      float s[64];
      CHECK(!inside_saliency(t, -1, -1, s, NULL, NULL, &err) && strstr(err.msg, "prediction head") &&
                !strchr(err.msg, '\n'),
            "classifier saliency: %s", err.msg);
    }
    trace_free(t);
    model_free(m);
  }
  return check_exit("test_inside");
}
