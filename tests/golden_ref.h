// golden_ref.h -- what the golden tests share: their case lists and the comparison of a trace
// tensor with PyTorch's .npy (every function is static inline: one copy in each test that uses it).
//
// A case list (tests/ref/*/cases.txt and the like, written by the generators) holds one case a
// line, fields separated by tabs; '#' starts a comment line, empty lines are skipped.
//
//     GoldenRow rows[16];
//     int n = golden_read_rows("tests/ref/ext/cases.txt", 2, rows, 16); // folder, sentence
//     golden_compare("gpt2-like", dir, "l0.A", trace);   // CHECKs every value, returns max |diff|
//
// The paths every case runs (golden_path, golden_path_use): the default kernels; plain loops for
// every product; BLAS for every product; and each packed kernel of gemm.h for every product
// (linear layers and attention), once per kernel this machine runs, so that each is held to
// PyTorch, not only the one chosen by itself. A machine without one skips its path and says so.
#ifndef SF_TEST_GOLDEN_REF_H
#define SF_TEST_GOLDEN_REF_H

#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fileio.h" // defines: file_read_all, path_join
#include "gemm.h"   // defines: GemmKernel, gemm_use
#include "npy.h"    // defines: npy_read, NPY_MAX_DIMS
#include "trace.h"  // defines: Trace, trace_find, trace_at, trace_dump_shape

#define GOLDEN_REL_TOL 1e-5 // |c - r| <= 1e-5 · max(1, |r|), and -inf exactly where PyTorch has it
#define GOLDEN_MAX_FIELDS 4

typedef struct {
  char f[GOLDEN_MAX_FIELDS][512]; // the fields of one line, in order
} GoldenRow;

// Reads the lines of path that hold exactly n_fields fields (the last one may hold anything but a
// newline) into rows; a line with fewer fails a CHECK. Returns the number read (at most cap).
static inline int golden_read_rows(const char *path, int n_fields, GoldenRow *rows, int cap) {
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
    char *field[GOLDEN_MAX_FIELDS] = {line};
    int k = 1;
    for (; k < n_fields && field[k - 1]; k++) {
      char *tab = strchr(field[k - 1], '\t');
      if (tab) *tab++ = 0;
      field[k] = tab;
    }
    bool ok = k == n_fields && field[n_fields - 1] && n < cap;
    CHECK(ok, "%s: bad line \"%s\" (%d tab-separated fields expected)", path, line, n_fields);
    if (!ok) continue;
    for (k = 0; k < n_fields; k++) snprintf(rows[n].f[k], sizeof rows[n].f[k], "%s", field[k]);
    n++;
  }
  free(buf);
  return n;
}

// Compares dir/NAME.npy with the trace tensor NAME, value by value (CHECK: the shapes, then every
// value within GOLDEN_REL_TOL; the first four mismatches are printed). Returns the max |c - r|.
static inline double golden_compare(const char *cname, const char *dir, const char *name, const Trace *t) {
  char file[96], path[4096];
  snprintf(file, sizeof file, "%s.npy", name);
  CHECK(path_join(path, sizeof path, dir, file), "path too long");
  const TraceTensor *x = trace_find(t, name);
  CHECK(x != NULL && !x->is_weight, "%s: the trace has no stage \"%s\"", cname, name);
  if (!x || x->is_weight) return INFINITY;
  Err err = {0};
  int nd = 0, shape[NPY_MAX_DIMS] = {0}, want[3];
  float *ref = npy_read(path, &nd, shape, &err);
  CHECK(ref != NULL, "%s", err.msg);
  if (!ref) return INFINITY;
  int wnd = trace_dump_shape(x, want);
  bool same = nd == wnd;
  for (int k = 0; same && k < nd; k++) same = shape[k] == want[k];
  CHECK(same, "%s/%s: reference and trace shapes differ", cname, name);
  double maxd = 0;
  long bad = 0, k = 0;
  for (int h = 0; same && h < x->heads; h++)
    for (int i = 0; i < x->rows; i++)
      for (int j = 0; j < x->cols; j++, k++) {
        double c = trace_at(x, h, i, j), r = ref[k];
        bool ok;
        if (!isfinite(r) || !isfinite(c)) {
          ok = c == r;
          if (!ok) maxd = INFINITY;
        } else {
          double d = fabs(c - r);
          ok = d <= GOLDEN_REL_TOL * fmax(1.0, fabs(r));
          if (d > maxd) maxd = d;
        }
        if (!ok && bad++ < 4)
          fprintf(stderr, "  %s/%s[%d,%d,%d]: got %.9g, PyTorch %.9g\n", cname, name, h, i, j, c, r);
      }
  CHECK(bad == 0, "%s/%s: %ld values differ, max |diff| %.3g", cname, name, bad, maxd);
  free(ref);
  return maxd;
}

typedef struct {
  const char *what;
  long threshold;    // mat_naive_max_madds for the path; -1: the default
  bool gemm;         // forward_use_gemm
  int kernel;        // the GemmKernel the path selects; -1: the one in use when the test started
  const char *needs; // for a packed kernel: what the machine needs to run it, said when skipped
} GoldenPath;

enum { GOLDEN_PATHS = 6 };

static inline const GoldenPath *golden_path(int i) {
  static const GoldenPath paths[GOLDEN_PATHS] = {
      {"default kernels", -1, true, -1, NULL},
      {"plain loops only", LONG_MAX, false, -1, NULL},
      {"BLAS only", 0, false, -1, NULL},
      {"AVX-512 packed kernel for every product", 0, true, GEMM_AVX512, "an x86-64 CPU with AVX-512F"},
      {"AVX2 packed kernel for every product", 0, true, GEMM_AVX2, "an x86-64 CPU with AVX2 + FMA"},
      {"wasm SIMD128 packed kernel for every product", 0, true, GEMM_WASM_SIMD128,
       "the web build (wasm SIMD128)"},
  };
  return &paths[i];
}

// Selects the kernel of path p (was: the kernel in use when the test started) and prints the
// path's heading. False, with a line that says which kernel is skipped and why, when this CPU or
// build does not run it.
static inline bool golden_path_use(const GoldenPath *p, GemmKernel was) {
  if (!gemm_use(p->kernel < 0 ? was : (GemmKernel)p->kernel)) {
    printf("== %s: skipped, it needs %s\n", p->what, p->needs);
    return false;
  }
  printf("== %s\n", p->what);
  return true;
}

#endif
