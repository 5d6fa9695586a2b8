// test_llama_grad.c -- the backward through today's decoders (issue 34, item 6) against
// torch.autograd: tests/ref/llama_grad (gen_llama_grad_ref.py) on tests/ref/llama's fixtures (GQA
// with 1, 2 and 4 query heads per K/V head, QK-norm, Q/K/V biases, tied and untied heads, both RoPE
// conventions, Llama 3's rope_scaling, Gemma's 1 + g and GELU-gated FFN):
//   - the loss, every stage's gradient and every weight's (canonical names) to 1e-5 of the
//     largest |value| of the reference, on every kernel path of golden_ref.h;
//   - the loss after one SGD step (lr 0.1) equal to torch's;
//   - two threads give the same bits as one;
//   - the saliency (inside_saliency, gradient × input) sums to 1 and equals torch's;
//   - what-if edits of a weight (edits.h: the gate, K, W^o, an RMSNorm's and QK-norm's gain) give
//     torch's logits with that weight changed.
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backward.h" // defines: TraceGrad, backward_new, backward_run, backward_param_grad
#include "check.h"
#include "edits.h"   // defines: TraceEdits, edits_parse_edit, edits_trace
#include "forward.h" // defines: model_forward, forward_set_threads, forward_use_gemm
#include "gemm.h"    // defines: gemm_kernel
#include "golden_ref.h"
#include "inside.h"     // defines: inside_saliency
#include "mat.h"        // defines: mat_naive_max_madds
#include "model.h"      // defines: model_tensor_list
#include "model_load.h" // defines: model_load
#include "npy.h"        // defines: npy_read
#include "train.h"      // defines: train_sgd_step, train_loss

enum { N_CASES = 5 };

static Tokens ids_tokens(const Model *m, const char *ids) {
  Tokens t = {0};
  int cap = 64;
  t.ids = calloc((size_t)cap, sizeof(int));
  t.words = calloc((size_t)cap, sizeof(char *));
  t.unknown = calloc((size_t)cap, sizeof(bool));
  for (const char *p = ids; t.n < cap;) {
    char *end;
    long id = strtol(p, &end, 10);
    if (end == p) break;
    CHECK(id >= 0 && id < m->cfg.V, "id %ld out of the vocabulary", id);
    t.ids[t.n] = (int)id;
    t.words[t.n] = m->vocab.words[id];
    t.n++;
    p = end;
  }
  return t;
}

static float *read_ref(const char *dir, const char *file, long *n) {
  char path[4400];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  Err err = {0};
  int nd, shape[NPY_MAX_DIMS];
  float *v = npy_read(path, &nd, shape, &err);
  CHECK(v != NULL, "%s", err.msg);
  *n = 1;
  for (int k = 0; v && k < nd; k++) *n *= shape[k];
  return v;
}

// got [n] against the reference, to 1e-5 of its largest |value|; returns max |diff|.
static double compare(const char *cname, const char *file, const float *got, long n, const float *ref,
                      long n_ref) {
  CHECK(n == n_ref, "%s/%s: %ld values, the reference %ld", cname, file, n, n_ref);
  if (n != n_ref) return INFINITY;
  double mx = 0, worst = 0;
  for (long k = 0; k < n; k++) mx = fmax(mx, fabs(ref[k]));
  double tol = 1e-5 * fmax(1e-3, mx);
  long bad = 0;
  for (long k = 0; k < n; k++) {
    double d = fabs((double)got[k] - ref[k]);
    worst = fmax(worst, d);
    if (!(d <= tol) && bad++ < 3)
      fprintf(stderr, "  %s/%s[%ld]: got %.9g, torch %.9g\n", cname, file, k, got[k], ref[k]);
  }
  CHECK(bad == 0, "%s/%s: %ld values differ (max |diff| %.3g, tolerance %.3g)", cname, file, bad, worst, tol);
  return worst;
}

// Every grad.*.npy of dir against g; returns the files compared.
static int compare_grads(const char *cname, const char *dir, const TraceGrad *g) {
  const Trace *t = g->t;
  int cap = model_tensor_cap(t->model), files = 0;
  ModelTensor *mt = calloc((size_t)cap, sizeof *mt);
  int n_mt = model_tensor_list(t->model, mt, cap);
  DIR *d = opendir(dir);
  CHECK(d != NULL, "%s: cannot open", dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    const char *f = e->d_name;
    size_t len = strlen(f);
    if (strncmp(f, "grad.", 5) || len < 10 || strcmp(f + len - 4, ".npy")) continue;
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)(len - 9), f + 5);
    const float *got = NULL;
    long n = 0;
    int k = trace_index(t, name);
    if (k >= 0 && g->d[k]) {
      got = g->d[k];
      n = (long)t->t[k].heads * t->t[k].rows * t->t[k].cols;
    }
    for (int i = 0; !got && i < n_mt; i++)
      if (!strcmp(mt[i].name, name)) {
        got = backward_param_grad(g, mt[i].data);
        n = mt[i].ndim == 1 ? mt[i].shape[0] : mt[i].shape[0] * mt[i].shape[1];
      }
    CHECK(got != NULL, "%s: %s has no gradient in C", cname, f);
    long n_ref;
    float *ref = read_ref(dir, f, &n_ref);
    if (got && ref) compare(cname, f, got, n, ref, n_ref);
    free(ref);
    files++;
  }
  if (d) closedir(d);
  free(mt);
  return files;
}

// Each line of dir/edits.txt, an --edit spec, through edits_trace: its logits against edit.<k>.npy.
static int check_edits(const char *cname, const char *dir, const Trace *t) {
  char path[4400], line[128];
  snprintf(path, sizeof path, "%s/edits.txt", dir);
  FILE *f = fopen(path, "r");
  CHECK(f != NULL, "%s: no edits.txt", cname);
  int k = 0;
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    Err err = {0};
    TraceEdit x;
    TraceEdits e = {0};
    bool ok = edits_parse_edit(t, line, &x, &err) && edits_add(&e, &x, &err);
    Trace *te = ok ? edits_trace(t, &e, &err) : NULL;
    CHECK(te != NULL, "%s: --edit \"%s\": %s", cname, line, err.msg);
    char file[64];
    snprintf(file, sizeof file, "edit.%d.npy", k++);
    long n;
    float *ref = read_ref(dir, file, &n);
    if (te && ref) {
      const TraceTensor *lg = &te->t[te->logits];
      compare(cname, line, lg->data, (long)lg->rows * lg->cols, ref, n);
    }
    free(ref);
    trace_free(te);
    edits_free(&e);
  }
  if (f) fclose(f);
  CHECK(k >= 4, "%s: %d edits checked", cname, k);
  return k;
}

static Model *load_case(const char *name, char *dir, size_t cap) {
  char model_path[4400];
  snprintf(dir, cap, "%.4000s/ref/llama_grad/%.100s", check_test_dir(), name);
  snprintf(model_path, sizeof model_path, "%.4000s/ref/llama/%.100s.safetensors", check_test_dir(), name);
  if (access(model_path, F_OK) != 0)
    snprintf(model_path, sizeof model_path, "%.4000s/ref/llama/%.100s", check_test_dir(), name);
  Err err = {0};
  Model *m = model_load(model_path, &err);
  CHECK(m != NULL, "%s: %s", name, err.msg);
  return m;
}

// One case on the current kernel path; full: also the step, two threads and the saliency.
static int run_case(const GoldenRow *row, bool full) {
  const char *cname = row->f[0];
  char dir[4200];
  Model *m = load_case(cname, dir, sizeof dir);
  if (!m) return 0;
  Tokens tok = ids_tokens(m, row->f[1]);
  Err err = {0};
  int files = 0;
  Trace *t = trace_new(m, &tok, &err);
  CHECK(t != NULL, "%s: %s", cname, err.msg);
  TraceGrad *g = NULL;
  if (t) {
    model_forward(t);
    g = backward_new(t, NULL, 0, &err);
    CHECK(g != NULL, "%s: %s", cname, err.msg);
  }
  if (g) {
    backward_run(g);
    long n;
    float *want = read_ref(dir, "loss.npy", &n);
    if (want)
      CHECK(fabsf(g->loss - want[0]) <= 1e-5f * fmaxf(1, fabsf(want[0])), "%s: loss %.9g, torch %.9g", cname,
            g->loss, want[0]);
    free(want);
    files = compare_grads(cname, dir, g);
    if (full) {
      Model *next = train_sgd_step(m, g, 0.1f, &err);
      CHECK(next != NULL, "%s: %s", cname, err.msg);
      float after = next ? train_loss(next, &tok, NULL, 0, false, &err) : NAN;
      float *wa = read_ref(dir, "loss_after.npy", &n);
      if (wa)
        CHECK(fabsf(after - wa[0]) <= 1e-5f * fmaxf(1, fabsf(wa[0])), "%s: loss after %.9g, torch %.9g",
              cname, after, wa[0]);
      free(wa);
      if (next) model_with_params_free(next);
      // two threads: the same bits
      forward_set_threads(2);
      Trace *t2 = trace_new(m, &tok, &err);
      if (t2) {
        model_forward(t2);
        TraceGrad *g2 = backward_new(t2, NULL, 0, &err);
        if (g2) {
          backward_run(g2);
          CHECK(!memcmp(g->dparams, g2->dparams, sizeof(float) * (size_t)g->n_params),
                "%s: weight gradients differ on two threads", cname);
          for (int k = 0; k < t->n; k++)
            if (g->d_own[k])
              CHECK(!memcmp(g->d[k], g2->d[k],
                            sizeof(float) * (size_t)t->t[k].heads * t->t[k].rows * t->t[k].cols),
                    "%s: grad.%s differs on two threads", cname, t->t[k].name);
        }
        backward_free(g2);
      }
      trace_free(t2);
      forward_set_threads(1);
      // saliency: sums to 1, equals torch's
      float *s = calloc((size_t)t->L, sizeof(float));
      bool ok = inside_saliency(t, -1, -1, s, NULL, NULL, &err);
      CHECK(ok, "%s: saliency: %s", cname, err.msg);
      double sum = 0;
      for (int i = 0; ok && i < t->L; i++) sum += s[i];
      CHECK(!ok || fabs(sum - 1) < 1e-5, "%s: saliency sums to %.9g", cname, sum);
      float *ref = read_ref(dir, "saliency.npy", &n);
      if (ok && ref) {
        for (long i = 0; i < n && i < t->L; i++)
          CHECK(fabsf(s[i] - ref[i]) <= 1e-4f, "%s: saliency[%ld] %.7g, torch %.7g", cname, i, s[i], ref[i]);
        CHECK(n == t->L, "%s: saliency of %ld tokens, the reference %ld", cname, (long)t->L, n);
      }
      free(ref);
      free(s);
      int edits = check_edits(cname, dir, t);
      printf("  %-16s loss %.6f, %d gradients, step, two threads, saliency and %d edits checked\n", cname,
             g->loss, files, edits);
    }
  }
  backward_free(g);
  trace_free(t);
  free(tok.ids), free(tok.words), free(tok.unknown);
  model_free(m);
  return files;
}

int main(void) {
  char cases[4200];
  snprintf(cases, sizeof cases, "%s/ref/llama_grad/cases.txt", check_test_dir());
  GoldenRow rows[N_CASES + 1];
  int n = golden_read_rows(cases, 2, rows, N_CASES + 1);
  CHECK(n == N_CASES, "%d cases, expected %d", n, N_CASES);
  forward_set_threads(1);
  GemmKernel was = gemm_kernel();
  long saved = mat_naive_max_madds;
  for (int p = 0; p < GOLDEN_PATHS; p++) {
    const GoldenPath *gp = golden_path(p);
    if (!golden_path_use(gp, was)) continue;
    mat_naive_max_madds = gp->threshold < 0 ? saved : gp->threshold;
    forward_use_gemm = gp->gemm;
    int files = 0;
    for (int i = 0; i < n; i++) files += run_case(&rows[i], p == 0);
    CHECK(files >= N_CASES * 40, "%d gradient files compared", files);
  }
  mat_naive_max_madds = saved;
  forward_use_gemm = true;
  gemm_use(was);
  return check_exit("test_llama_grad");
}
