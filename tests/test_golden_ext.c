// test_golden_ext.c -- the canonical model extensions (model.h) against PyTorch, stage by stage.
//
// tests/ref/ext/cases.txt lists the cases (folder, sentence) that tests/gen_ref_ext.py wrote: a
// GPT-2-like model (pre-norm, causal, learned positions, GELU tanh, tied head without bias), a
// BERT-like one (post-norm, token type, embedding LayerNorm, head transform, tied head with bias,
// eps 1e-12) and the course's classifier (no attention biases, final LayerNorm, mean over
// positions, class scores). For each case the test loads model.safetensors, checks that every
// stage the model has is among the references (and that the references are all there), runs
// model_forward and compares every .npy with the trace tensor of its name:
// |c - r| <= 1e-5·max(1, |r|), -inf exactly. Each case runs with the default kernels, plain loops,
// BLAS and each packed kernel this machine runs (golden_path) for every product. It also checks what the
// loader records (the features of each model) and that a sentence longer than the learned position
// table is refused in one line. Exits 1 on any failure.
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "golden_ref.h" // defines: golden_read_rows, golden_compare
#include "fileio.h"     // defines: file_read_all
#include "forward.h"    // defines: model_forward, forward_use_gemm
#include "gemm.h"       // defines: gemm_kernel, gemm_use
#include "mat.h"        // defines: mat_naive_max_madds
#include "model.h"      // defines: Model
#include "model_load.h" // defines: model_load, model_save
#include "npy.h"        // defines: npy_read
#include "trace.h"      // defines: Trace, trace_find, trace_at

typedef struct {
  char name[64];
  char text[512];
} Case;

// "folder<TAB>sentence" lines (golden_ref.h).
static int read_cases(const char *path, Case *cases, int cap) {
  GoldenRow *rows = calloc((size_t)cap, sizeof *rows);
  int n = rows ? golden_read_rows(path, 2, rows, cap) : 0;
  for (int i = 0; i < n; i++) {
    snprintf(cases[i].name, sizeof cases[i].name, "%.*s", (int)sizeof cases[i].name - 1, rows[i].f[0]);
    snprintf(cases[i].text, sizeof cases[i].text, "%.*s", (int)sizeof cases[i].text - 1, rows[i].f[1]);
  }
  free(rows);
  return n;
}

// Every activation of the trace has its reference, and every reference its activation.
static int compare_all(const char *cname, const char *dir, const Trace *t, bool verbose) {
  int n = 0;
  double worst = 0;
  const char *worst_name = "";
  for (int i = 0; i < t->n; i++) {
    const TraceTensor *x = &t->t[i];
    if (x->is_weight) continue;
    double d = golden_compare(cname, dir, x->name, t);
    if (verbose)
      printf("  %-12s %-14s [%d,%d,%d]  max |diff| %.3g\n", cname, x->name, x->heads, x->rows, x->cols, d);
    if (d >= worst) worst = d, worst_name = x->name;
    n++;
  }
  int files = 0;
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".npy")) continue;
    files++;
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(len - 4), e->d_name);
    CHECK(trace_find(t, name) != NULL, "%s: reference %s has no stage in the trace", cname, e->d_name);
  }
  if (d) closedir(d);
  CHECK(files >= n, "%s: %d reference files for %d stages", cname, files, n);
  printf("%-12s %2d stages, L=%d, max |diff| %.3g (%s)\n", cname, n, t->L, worst, worst_name);
  return n;
}

static Model *load_case(const char *refdir, const Case *c, char *dir, size_t cap) {
  char path[4096];
  CHECK(path_join(dir, cap, refdir, c->name) && path_join(path, sizeof path, dir, "model.safetensors"),
        "path too long");
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "%s: %s", c->name, err.msg);
  return m;
}

static int run_case(const char *refdir, const Case *c, bool verbose) {
  char dir[4096];
  Model *m = load_case(refdir, c, dir, sizeof dir);
  if (!m) return 0;
  Err err = {0};
  Tokens tok;
  bool ok = tokens_from_text(&tok, &m->vocab, c->text, 0, &err);
  CHECK(ok, "%s: %s", c->name, err.msg);
  Trace *t = ok ? trace_new(m, &tok, &err) : NULL;
  CHECK(!ok || t != NULL, "%s: %s", c->name, err.msg);
  if (ok) tokens_free(&tok);
  int n = 0;
  if (t) {
    model_forward(t);
    n = compare_all(c->name, dir, t, verbose);
  }
  trace_free(t);
  model_free(m);
  return n;
}

// What the loader records for each case, and the stages the trace walks.
static void check_features(const char *refdir, const Case *c) {
  char dir[4096];
  Model *m = load_case(refdir, c, dir, sizeof dir);
  if (!m) return;
  char feat[256];
  model_features(m, feat, sizeof feat);
  printf("%-12s %s\n", c->name, feat);
  CHECK(m->cfg.learned_pos && m->pos_embed && m->cfg.max_pos > 0, "%s: learned positions", c->name);
  if (!strcmp(c->name, "gpt2-like")) {
    CHECK(m->cfg.activation == ACT_GELU_TANH && m->tie_head && m->head_weight == m->embed && !m->head_bias &&
              m->has_final_norm && m->cfg.causal,
          "gpt2-like: gelu_tanh, tied head without bias, ln_f, causal");
    // the tied head is not a second copy: the parameter block holds E once
    long D = m->cfg.D, V = m->cfg.V;
    CHECK(m->n_params == model_param_count(&m->cfg, true, true) - V * D - V,
          "gpt2-like: %ld parameters, the tied head counted once", m->n_params);
  } else if (!strcmp(c->name, "bert-like")) {
    CHECK(m->token_type && m->n_types == 2 && m->has_embed_norm && m->has_head_transform && m->tie_head &&
              m->head_bias && fabsf(m->cfg.ln_eps - 1e-12f) < 1e-15f,
          "bert-like: token type, embedding LayerNorm, transform, tied head with bias, eps 1e-12");
  } else if (!strcmp(c->name, "course-like")) {
    CHECK(m->has_classifier && !m->has_head && m->n_classes == 3 && !strcmp(m->class_names[1], "place") &&
              m->no_in_proj_bias && m->no_out_proj_bias && m->layers[0].in_proj_bias == NULL,
          "course-like: classifier of 3 named classes, attention without biases");
  }
  // a sentence longer than the position table: one line, no trace
  int n = m->cfg.max_pos + 1;
  int *ids = calloc((size_t)n, sizeof(int));
  char **words = calloc((size_t)n, sizeof(char *));
  bool *unk = calloc((size_t)n, sizeof(bool));
  for (int i = 0; i < n && words; i++) words[i] = "the", ids[i] = 1;
  Tokens tok = {n, ids, words, unk, NULL};
  Err err = {0};
  Trace *t = ids && words && unk ? trace_new(m, &tok, &err) : NULL;
  char want[96];
  snprintf(want, sizeof want, "has %d tokens; this model knows positions up to %d", n, m->cfg.max_pos);
  CHECK(t == NULL && strstr(err.msg, want) && strstr(err.msg, "shorten"), "%s: a long sentence: \"%s\"",
        c->name, err.msg);
  trace_free(t);
  free(ids), free(words), free(unk);
  // a saved copy loads as the same model
  char copy[4200];
  snprintf(copy, sizeof copy, "%s/../ext-copy-%s.safetensors", dir, c->name);
  CHECK(model_save(m, copy, &err), "%s: save: %s", c->name, err.msg);
  Model *back = model_load(copy, &err);
  float *wb = back ? model_weights_flat(back) : NULL, *wm = model_weights_flat(m);
  CHECK(back && wb && wm && back->n_params == m->n_params && back->tie_head == m->tie_head &&
            back->cfg.learned_pos && back->has_classifier == m->has_classifier &&
            !memcmp(wb, wm, sizeof(float) * (size_t)m->n_params),
        "%s: the saved copy: %s", c->name, back ? "differs" : err.msg);
  free(wb);
  free(wm);
  model_free(back);
  remove(copy);
  model_free(m);
}

int main(int argc, char **argv) {
  bool verbose = !(argc > 1 && !strcmp(argv[1], "-q"));
  char refdir[4096], manifest[4096];
  CHECK(path_join(refdir, sizeof refdir, check_test_dir(), "ref/ext") &&
            path_join(manifest, sizeof manifest, refdir, "cases.txt"),
        "SF_TEST_DIR is too long");
  Case cases[16];
  int n = read_cases(manifest, cases, 16);
  CHECK(n >= 3, "%s lists %d cases, expected at least 3", manifest, n);
  for (int i = 0; i < n; i++) check_features(refdir, &cases[i]);
  GemmKernel was = gemm_kernel();
  long saved = mat_naive_max_madds;
  for (int p = 0; p < GOLDEN_PATHS; p++) {
    const GoldenPath *path = golden_path(p);
    if (!golden_path_use(path, was)) continue; // says which packed kernel it skips, and why
    mat_naive_max_madds = path->threshold < 0 ? saved : path->threshold;
    forward_use_gemm = path->gemm;
    int stages = 0;
    for (int i = 0; i < n; i++) stages += run_case(refdir, &cases[i], verbose && p == 0);
    CHECK(stages > 0, "no stage compared");
  }
  mat_naive_max_madds = saved;
  forward_use_gemm = true;
  gemm_use(was);
  return check_exit("test_golden_ext");
}
