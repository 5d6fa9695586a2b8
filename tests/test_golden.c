// test_golden.c -- the forward pass against PyTorch, stage by stage, for every reference case.
//
// tests/ref/cases.txt lists the cases (folder, causal, sentence), written with the reference files
// by tests/gen_ref.py (`/usr/bin/python3 tests/gen_ref.py --all`). For each case the test loads
// model.safetensors, tokenizes the sentence, runs model_forward and compares every .npy of the
// folder with the trace tensor of the same name: |c - r| <= 1e-5·max(1, |r|), non-finite entries
// (the -inf of masked scores) exactly. tokens.txt must match the token labels. Each case runs
// with the default kernels, with plain loops only, with BLAS only and with each packed kernel of
// gemm.h this machine runs (AVX-512, AVX2, wasm SIMD128; golden_path) for every product, linear
// layers and attention, so every kernel is held to PyTorch. Prints the max difference of every tensor and the
// first mismatches of a failing one (-q: one summary line per case); exits 1 on any failure.
//
// tests/ref/seq2seq_cases.txt lists the encoder-decoder cases (folder, source, target) of
// tests/gen_ref_seq2seq.py: the same comparison of every .npy of the folder, on the trace of the
// source and the decoder's input ("<bos>" + the target), and dec_tokens.txt as well.
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "golden_ref.h" // defines: golden_read_rows
#include "fileio.h"     // defines: file_read_all
#include "forward.h"    // defines: model_forward, forward_use_gemm
#include "gemm.h"       // defines: gemm_kernel, gemm_use
#include "mat.h"        // defines: mat_naive_max_madds
#include "model.h"      // defines: Model
#include "model_load.h" // defines: model_load
#include "npy.h"        // defines: npy_read
#include "trace.h"      // defines: Trace, trace_find, trace_at

#define REL_TOL GOLDEN_REL_TOL
#define SHOW_MISMATCHES 4

typedef struct {
  char name[64];
  bool causal;
  char text[512];
} Case;

// Reads the manifest: "folder<TAB>causal<TAB>sentence" lines (golden_ref.h).
static int read_cases(const char *path, Case *cases, int cap) {
  GoldenRow *rows = calloc((size_t)cap, sizeof *rows);
  int n = rows ? golden_read_rows(path, 3, rows, cap) : 0;
  for (int i = 0; i < n; i++) {
    snprintf(cases[i].name, sizeof cases[i].name, "%.*s", (int)sizeof cases[i].name - 1, rows[i].f[0]);
    cases[i].causal = !strcmp(rows[i].f[1], "1");
    snprintf(cases[i].text, sizeof cases[i].text, "%.*s", (int)sizeof cases[i].text - 1, rows[i].f[2]);
  }
  free(rows);
  return n;
}

// Compares one reference file with the trace tensor of its name. Returns the max |c - r|.
static double compare_stage(const char *cname, const char *dir, const char *file, const Trace *t,
                            bool verbose) {
  char stage[64], path[4096];
  size_t n = strlen(file) - 4; // without ".npy"
  CHECK(n < sizeof stage && path_join(path, sizeof path, dir, file), "%s: name too long", file);
  if (n >= sizeof stage) return INFINITY;
  memcpy(stage, file, n);
  stage[n] = 0;
  const TraceTensor *x = trace_find(t, stage);
  CHECK(x != NULL, "%s: the trace has no tensor \"%s\" (reference %s)", cname, stage, path);
  if (!x) return INFINITY;
  CHECK(!x->is_weight, "%s: \"%s\" is a weight, not a stage", cname, stage);
  Err err = {0};
  int nd = 0, shape[NPY_MAX_DIMS] = {0}, want[3];
  float *ref = npy_read(path, &nd, shape, &err);
  CHECK(ref != NULL, "%s", err.msg);
  if (!ref) return INFINITY;
  int wnd = trace_dump_shape(x, want);
  bool same = nd == wnd;
  for (int k = 0; same && k < nd; k++) same = shape[k] == want[k];
  CHECK(same, "%s/%s: reference shape %dx%dx%d (ndim %d), trace %dx%dx%d (ndim %d)", cname, stage, shape[0],
        shape[1], nd > 2 ? shape[2] : 1, nd, want[0], want[1], wnd > 2 ? want[2] : 1, wnd);
  if (!same) {
    free(ref);
    return INFINITY;
  }
  double maxd = 0.0;
  long bad = 0, k = 0;
  for (int h = 0; h < x->heads; h++)
    for (int i = 0; i < x->rows; i++)
      for (int j = 0; j < x->cols; j++, k++) {
        double c = trace_at(x, h, i, j), r = ref[k];
        bool ok;
        if (!isfinite(r) || !isfinite(c)) {
          ok = (isnan(r) && isnan(c)) || c == r; // -inf must be -inf
          if (!ok) maxd = INFINITY;
        } else {
          double d = fabs(c - r);
          ok = d <= REL_TOL * fmax(1.0, fabs(r));
          if (d > maxd) maxd = d;
        }
        if (!ok && bad++ < SHOW_MISMATCHES)
          fprintf(stderr, "  %s/%s[%d,%d,%d]: got %.9g, PyTorch %.9g\n", cname, stage, h, i, j, c, r);
      }
  CHECK(bad == 0, "%s/%s: %ld of %ld values differ, max |diff| %.3g", cname, stage, bad, k, maxd);
  if (verbose || bad)
    printf("  %-22s %-14s [%d,%d,%d]  max |diff| %.3g%s\n", cname, stage, x->heads, x->rows, x->cols, maxd,
           bad ? "  FAILED" : "");
  free(ref);
  return maxd;
}

static bool has_suffix(const char *s, const char *suf) {
  size_t n = strlen(s), m = strlen(suf);
  return n >= m && !strcmp(s + n - m, suf);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

// tokens.txt (or dec_tokens.txt): one label per line, as the dump writes it.
static void check_tokens_file(const char *cname, const char *dir, const char *file, const Tokens *tok,
                              const Vocab *v) {
  char path[4096];
  CHECK(path_join(path, sizeof path, dir, file), "%s: path too long", dir);
  Err err = {0};
  size_t len;
  char *buf = file_read_all(path, &len, 1 << 20, &err);
  CHECK(buf != NULL, "%s", err.msg);
  if (!buf) return;
  int i = 0;
  for (char *line = buf, *next; *line; line = next, i++) {
    next = strchr(line, '\n');
    CHECK(next != NULL, "%s: the last line has no newline", path);
    if (!next) break;
    *next++ = 0;
    CHECK(i < tok->n && !strcmp(line, tokens_label(tok, v, i)), "%s: token %d is \"%s\", C has \"%s\"", cname,
          i, line, i < tok->n ? tokens_label(tok, v, i) : "(none)");
  }
  CHECK(i == tok->n, "%s: %s has %d tokens, the tokenizer %d", cname, file, i, tok->n);
  free(buf);
}

static void check_tokens(const char *cname, const char *dir, const Tokens *tok, const Vocab *v) {
  check_tokens_file(cname, dir, "tokens.txt", tok, v);
}

// The stage files every case must have: a generator that drops one would weaken the test.
static void check_required(const char *cname, const char *dir, const Model *m) {
  static const char *pre[] = {"O", "X", "P", "Z"};
  static const char *per_layer[] = {"in",         "Q",      "K",    "V",     "S",     "A",
                                    "AV",         "concat", "attn", "res1",  "norm1", "ffn_pre",
                                    "ffn_hidden", "ffn",    "res2", "norm2", "out"};
  char path[4096], name[64];
  for (size_t i = 0; i < sizeof pre / sizeof *pre; i++) {
    snprintf(name, sizeof name, "%s.npy", pre[i]);
    path_join(path, sizeof path, dir, name);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL, "%s: missing reference %s", cname, path);
    if (f) fclose(f);
  }
  for (int l = 0; l < m->cfg.n_layers; l++)
    for (size_t i = 0; i < sizeof per_layer / sizeof *per_layer; i++) {
      snprintf(name, sizeof name, "l%d.%s.npy", l, per_layer[i]);
      path_join(path, sizeof path, dir, name);
      FILE *f = fopen(path, "rb");
      CHECK(f != NULL, "%s: missing reference %s", cname, path);
      if (f) fclose(f);
    }
  const char *head[] = {"logits", "pred", "final_norm"};
  for (int i = 0; i < 3; i++) {
    bool want = i < 2 ? m->has_head : m->has_final_norm;
    snprintf(name, sizeof name, "%s.npy", head[i]);
    path_join(path, sizeof path, dir, name);
    FILE *f = fopen(path, "rb");
    CHECK((f != NULL) == want, "%s: %s %s", cname, path,
          want ? "is missing" : "exists but the model has no such stage");
    if (f) fclose(f);
  }
}

// Fails unless dir/NAME.npy exists.
static void require(const char *cname, const char *dir, const char *name) {
  char path[4096], file[80];
  snprintf(file, sizeof file, "%s.npy", name);
  path_join(path, sizeof path, dir, file);
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL, "%s: missing reference %s", cname, path);
  if (f) fclose(f);
}

// The stage files every encoder-decoder case must have (issue 11's dump names).
static void check_required_seq2seq(const char *cname, const char *dir, const Model *m) {
  static const char *outside[] = {"O",     "X",     "P",     "Z",        "memory", "dec.O",
                                  "dec.X", "dec.P", "dec.Z", "dec.norm", "logits", "pred"};
  static const char *enc[] = {"Q",    "K",     "V",          "S",   "A",    "AV",    "concat", "attn",
                              "res1", "norm1", "ffn_hidden", "ffn", "res2", "norm2", "out"};
  static const char *dec[] = {"Q",       "K",          "V",       "S",     "A",    "AV",    "concat",
                              "attn",    "res1",       "norm1",   "cQ",    "cK",   "cV",    "cS",
                              "cA",      "cAV",        "cconcat", "cattn", "res2", "norm2", "norm3",
                              "ffn_pre", "ffn_hidden", "ffn",     "res3",  "out"};
  char name[64];
  for (size_t i = 0; i < sizeof outside / sizeof *outside; i++) require(cname, dir, outside[i]);
  for (int l = 0; l < m->cfg.n_layers; l++)
    for (size_t i = 0; i < sizeof enc / sizeof *enc; i++) {
      snprintf(name, sizeof name, "l%d.%s", l, enc[i]);
      require(cname, dir, name);
    }
  for (int l = 0; l < m->cfg.n_dec_layers; l++)
    for (size_t i = 0; i < sizeof dec / sizeof *dec; i++) {
      snprintf(name, sizeof name, "d%d.%s", l, dec[i]);
      require(cname, dir, name);
    }
}

// Compares every .npy of dir with the trace; a second forward must give the same bits. Returns the
// number of files compared.
static int compare_all(const char *cname, const char *dir, Trace *t, bool verbose) {
  DIR *d = opendir(dir);
  CHECK(d != NULL, "%s: cannot list", dir);
  char *files[512];
  int nf = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    if (has_suffix(e->d_name, ".npy") && nf < 512) files[nf++] = strdup(e->d_name);
  if (d) closedir(d);
  qsort(files, (size_t)nf, sizeof *files, cmp_str);
  double worst = 0.0;
  const char *worst_name = "";
  for (int i = 0; i < nf; i++) {
    double md = compare_stage(cname, dir, files[i], t, verbose);
    if (md >= worst) worst = md, worst_name = files[i];
  }
  printf("%-22s %2d stages, L=%d T=%d, max |diff| %.3g (%s)\n", cname, nf, t->L, t->T, worst, worst_name);
  size_t bytes = sizeof(float) * (size_t)t->block_floats;
  float *first = malloc(bytes);
  CHECK(first != NULL, "out of memory");
  if (first) {
    memcpy(first, t->block, bytes);
    model_forward(t);
    CHECK(!memcmp(first, t->block, bytes), "%s: a second model_forward changed the trace", cname);
    free(first);
  }
  for (int i = 0; i < nf; i++) free(files[i]);
  return nf;
}

typedef struct {
  char name[64];
  char text[512], target[512];
} Seq2SeqCase;

// Reads seq2seq_cases.txt: "folder<TAB>source<TAB>target" lines; '#' starts a comment line.
static int read_seq2seq_cases(const char *path, Seq2SeqCase *cases, int cap) {
  Err err = {0};
  size_t len;
  char *buf = file_read_all(path, &len, 1 << 20, &err);
  CHECK(buf != NULL, "%s", err.msg);
  if (!buf) return 0;
  int n = 0;
  for (char *line = buf, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = 0;
    if (line[0] == '#' || line[0] == 0) continue;
    char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
    CHECK(t2 != NULL && n < cap, "%s: bad line \"%s\"", path, line);
    if (!t2 || n >= cap) continue;
    *t1 = *t2 = 0;
    Seq2SeqCase *c = &cases[n++];
    snprintf(c->name, sizeof c->name, "%s", line);
    snprintf(c->text, sizeof c->text, "%s", t1 + 1);
    snprintf(c->target, sizeof c->target, "%s", t2 + 1);
  }
  free(buf);
  return n;
}

// Runs one encoder-decoder case. Returns the number of stages compared.
static int run_seq2seq_case(const Seq2SeqCase *c, const char *refdir, bool verbose) {
  char dir[4096], path[4096];
  CHECK(path_join(dir, sizeof dir, refdir, c->name) && path_join(path, sizeof path, dir, "model.safetensors"),
        "%s: path too long", c->name);
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "%s: %s", c->name, err.msg);
  if (!m) return 0;
  CHECK(model_is_seq2seq(m), "%s: not an encoder-decoder", c->name);
  Tokens src = {0}, dec = {0};
  bool ok = model_is_seq2seq(m) && tokens_from_text(&src, &m->vocab, c->text, 0, &err) &&
            trace_decoder_tokens(&dec, m, c->target, 0, &err);
  CHECK(ok, "%s: %s", c->name, err.msg);
  Trace *t = NULL;
  if (ok) {
    check_tokens(c->name, dir, &src, &m->vocab);
    check_tokens_file(c->name, dir, "dec_tokens.txt", &dec, &m->tgt_vocab);
    check_required_seq2seq(c->name, dir, m);
    t = trace_new_seq2seq(m, &src, &dec, &err);
    CHECK(t != NULL, "%s: %s", c->name, err.msg);
  }
  tokens_free(&src);
  tokens_free(&dec);
  int nf = 0;
  if (t) {
    model_forward(t);
    nf = compare_all(c->name, dir, t, verbose);
  }
  trace_free(t);
  model_free(m);
  return nf;
}

// Runs one case with the current kernel threshold. Returns the number of stages compared.
static int run_case(const Case *c, const char *refdir, bool verbose) {
  char dir[4096], path[4096];
  CHECK(path_join(dir, sizeof dir, refdir, c->name) && path_join(path, sizeof path, dir, "model.safetensors"),
        "%s: path too long", c->name);
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "%s: %s", c->name, err.msg);
  if (!m) return 0;
  CHECK(m->cfg.causal == c->causal, "%s: metadata causal=%d, cases.txt says %d", c->name, m->cfg.causal,
        c->causal);
  if (c->causal) m->cfg.causal = true; // as `stepformer --causal`
  Tokens tok;
  bool ok = tokens_from_text(&tok, &m->vocab, c->text, 0, &err);
  CHECK(ok, "%s: %s", c->name, err.msg);
  if (!ok) {
    model_free(m);
    return 0;
  }
  check_tokens(c->name, dir, &tok, &m->vocab);
  check_required(c->name, dir, m);
  Trace *t = trace_new(m, &tok, &err);
  CHECK(t != NULL, "%s: %s", c->name, err.msg);
  tokens_free(&tok);
  if (!t) {
    model_free(m);
    return 0;
  }
  model_forward(t);

  DIR *d = opendir(dir);
  CHECK(d != NULL, "%s: cannot list", dir);
  char *files[256];
  int nf = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    if (has_suffix(e->d_name, ".npy") && nf < 256) files[nf++] = strdup(e->d_name);
  if (d) closedir(d);
  qsort(files, (size_t)nf, sizeof *files, cmp_str);
  double worst = 0.0;
  const char *worst_name = "";
  for (int i = 0; i < nf; i++) {
    double md = compare_stage(c->name, dir, files[i], t, verbose);
    if (md >= worst) worst = md, worst_name = files[i];
  }
  printf("%-22s %2d stages, L=%d, max |diff| %.3g (%s)\n", c->name, nf, t->L, worst, worst_name);

  // A second pass through the same trace gives the same bits (the trace reuses P and scratch).
  size_t bytes = sizeof(float) * (size_t)t->block_floats;
  float *first = malloc(bytes);
  CHECK(first != NULL, "out of memory");
  if (first) {
    memcpy(first, t->block, bytes);
    model_forward(t);
    CHECK(!memcmp(first, t->block, bytes), "%s: a second model_forward changed the trace", c->name);
    free(first);
  }
  for (int i = 0; i < nf; i++) free(files[i]);
  trace_free(t);
  model_free(m);
  return nf;
}

int main(int argc, char **argv) {
  bool verbose = !(argc > 1 && !strcmp(argv[1], "-q")); // -q: summaries only
  char refdir[4096], manifest[4096];
  CHECK(path_join(refdir, sizeof refdir, check_test_dir(), "ref") &&
            path_join(manifest, sizeof manifest, refdir, "cases.txt"),
        "SF_TEST_DIR is too long");
  Case cases[64];
  int n = read_cases(manifest, cases, 64);
  CHECK(n >= 7, "%s lists %d cases, expected at least 7", manifest, n);
  static Seq2SeqCase s2s[16];
  CHECK(path_join(manifest, sizeof manifest, refdir, "seq2seq_cases.txt"), "SF_TEST_DIR is too long");
  int n2 = read_seq2seq_cases(manifest, s2s, 16);
  CHECK(n2 >= 3, "%s lists %d cases, expected at least 3", manifest, n2);

  GemmKernel was = gemm_kernel();
  long saved = mat_naive_max_madds;
  for (int p = 0; p < GOLDEN_PATHS; p++) {
    const GoldenPath *path = golden_path(p);
    if (!golden_path_use(path, was)) continue; // says which packed kernel it skips, and why
    mat_naive_max_madds = path->threshold < 0 ? saved : path->threshold;
    forward_use_gemm = path->gemm;
    int stages = 0;
    for (int i = 0; i < n; i++) stages += run_case(&cases[i], refdir, verbose && p == 0);
    int s2s_stages = 0;
    for (int i = 0; i < n2; i++) s2s_stages += run_seq2seq_case(&s2s[i], refdir, verbose && p == 0);
    CHECK(stages > 0 && s2s_stages > 0, "no stage compared");
  }
  mat_naive_max_madds = saved;
  forward_use_gemm = true;
  gemm_use(was);
  return check_exit("test_golden");
}
