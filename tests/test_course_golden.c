// test_course_golden.c -- the course notebook's Transformer, opened as torch.save writes it, against
// PyTorch stage by stage; and the shipped bank-sense classifier against what its script promised.
//
// For every case of tests/ref/course/cases.txt (tests/gen_course_ref.py, from the notebook's own
// classes: 1-3 blocks, 1-4 heads, with and without biases, .pt and .safetensors, the Sanity
// naming) the model opens through model_load (course.h), the sentence runs through model_forward,
// and every .npy of the folder -- O X P Z, l{i}.*, enc_norm, pool, class_logits, class_pred --
// equals the trace tensor of its name: |c - r| <= 1e-5·max(1, |r|). tokens.txt must match.
// Then assets/models/bank-sense.pt (scripts/train/bank_sense.py): river and money sentences get
// their class above 0.9, "the cat walks by the bank" neither class above 0.8; and a sentence
// longer than the model's positions is refused at trace creation in one line. And a .pt of
// Stepformer's own names (tests/ref/course/canonical: the cat-bank model) gives cat-bank's stages.
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fileio.h"     // defines: file_read_all, path_join
#include "forward.h"    // defines: model_forward
#include "model.h"      // defines: Model
#include "model_load.h" // defines: model_load
#include "npy.h"        // defines: npy_read
#include "trace.h"      // defines: Trace, trace_new, trace_find, trace_at

#define REL_TOL 1e-5

static double compare(const char *cname, const char *dir, const char *file, const Trace *t) {
  char stage[64], path[4200];
  size_t n = strlen(file) - 4;
  snprintf(stage, sizeof stage, "%.*s", (int)n, file);
  snprintf(path, sizeof path, "%s/%s", dir, file);
  const TraceTensor *x = trace_find(t, stage);
  CHECK(x != NULL, "%s: the trace has no tensor \"%s\"", cname, stage);
  if (!x) return INFINITY;
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
  double maxd = 0;
  long bad = 0, k = 0;
  for (int h = 0; same && h < x->heads; h++)
    for (int i = 0; i < x->rows; i++)
      for (int j = 0; j < x->cols; j++, k++) {
        double c = trace_at(x, h, i, j), r = ref[k], d = fabs(c - r);
        if (!(d <= REL_TOL * fmax(1.0, fabs(r)))) {
          if (bad++ < 3)
            fprintf(stderr, "  %s/%s[%d,%d,%d]: got %.9g, PyTorch %.9g\n", cname, stage, h, i, j, c, r);
        }
        if (d > maxd || d != d) maxd = d;
      }
  CHECK(bad == 0, "%s/%s: %ld values differ, max |diff| %.3g", cname, stage, bad, maxd);
  free(ref);
  return same ? maxd : INFINITY;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

// Opens path, runs text, compares every .npy of dir (the stages PyTorch computed).
static void run_model(const char *name, const char *path, const char *dir, const char *text) {
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "%s: %s", name, err.msg);
  if (!m) return;
  Tokens tok;
  CHECK(tokens_from_text(&tok, &m->vocab, text, 0, &err), "%s: tokens", name);
  Trace *t = trace_new(m, &tok, &err);
  CHECK(t != NULL, "%s: %s", name, err.msg);
  if (t) {
    model_forward(t);
    DIR *d = opendir(dir);
    char *files[256];
    int nf = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
      size_t n = strlen(e->d_name);
      if (n > 4 && !strcmp(e->d_name + n - 4, ".npy") && nf < 256) files[nf++] = strdup(e->d_name);
    }
    if (d) closedir(d);
    qsort(files, (size_t)nf, sizeof *files, cmp_str);
    double worst = 0;
    for (int i = 0; i < nf; i++) {
      double md = compare(name, dir, files[i], t);
      if (md > worst) worst = md;
      free(files[i]);
    }
    CHECK(nf >= 4 + 17 * m->cfg.n_layers + (m->n_classes > 0 ? 4 : 0), "%s: %d reference files", name, nf);
    printf("  %-20s %2d stages equal PyTorch, max |diff| %.3g\n", name, nf, worst);
    trace_free(t);
  }
  tokens_free(&tok);
  model_free(m);
}

static void run_case(const char *root, const char *name, const char *file, const char *text) {
  char dir[4096], path[8200];
  snprintf(dir, sizeof dir, "%s/%s", root, name);
  snprintf(path, sizeof path, "%s/%s", dir, file);
  run_model(name, path, dir, text);
}

// The shipped classifier: P(class) of a sentence.
static void class_probs(const Model *m, const char *text, float p[2]) {
  Tokens tok;
  Err err = {0};
  p[0] = p[1] = NAN;
  CHECK(tokens_from_text(&tok, &m->vocab, text, 0, &err), "tokens of %s", text);
  Trace *t = trace_new(m, &tok, &err);
  CHECK(t != NULL, "%s: %s", text, err.msg);
  if (t) {
    model_forward(t);
    const TraceTensor *x = trace_find(t, "class_pred");
    CHECK(x && x->rows == 1 && x->cols == 2, "%s: class_pred [1, 2]", text);
    if (x) p[0] = trace_at(x, 0, 0, 0), p[1] = trace_at(x, 0, 0, 1);
    trace_free(t);
  }
  tokens_free(&tok);
}

int main(void) {
  const char *tdir = getenv("SF_TEST_DIR"), *sdir = getenv("SF_SOURCE_DIR");
  char root[2048], path[4200];
  snprintf(root, sizeof root, "%s/ref/course", tdir ? tdir : "tests");
  snprintf(path, sizeof path, "%s/cases.txt", root);
  Err err = {0};
  size_t len;
  char *buf = file_read_all(path, &len, 1 << 20, &err);
  CHECK(buf != NULL, "%s", err.msg);
  int n = 0;
  for (char *line = buf, *next; buf && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = 0;
    if (line[0] == '#' || !line[0]) continue;
    char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
    CHECK(t2 != NULL, "bad line %s", line);
    if (!t2) continue;
    *t1 = *t2 = 0;
    run_case(root, line, t1 + 1, t2 + 1);
    n++;
  }
  free(buf);
  CHECK(n >= 5, "%d cases", n);
  // a .pt of Stepformer's own names with its model.json: the cat-bank reference, stage by stage
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/ref/cat-bank", tdir ? tdir : "tests");
  snprintf(path, sizeof path, "%s/canonical/model.pt", root);
  run_model("canonical .pt", path, dir, "The cat walks by the bank");

  snprintf(path, sizeof path, "%s/assets/models/bank-sense.pt", sdir ? sdir : ".");
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "%s", err.msg);
  if (m) {
    static const struct {
      const char *text;
      int want; // 0 river, 1 money, -1 hesitates
    } s[] = {
        {"The cat sleeps by the river bank", 0},
        {"She puts money in the bank", 1},
        {"He sees the fish and walks to the bank", 0},
        {"The dogs walk with coins to the bank", 1},
        {"The cat walks by the bank", -1},
    };
    for (size_t i = 0; i < sizeof s / sizeof *s; i++) {
      float p[2];
      class_probs(m, s[i].text, p);
      if (s[i].want < 0)
        CHECK(p[0] <= 0.8f && p[1] <= 0.8f, "\"%s\" should hesitate: river %.3f money %.3f", s[i].text, p[0],
              p[1]);
      else
        CHECK(p[s[i].want] > 0.9f, "\"%s\" should be %s: river %.3f money %.3f", s[i].text,
              s[i].want ? "money" : "river", p[0], p[1]);
      printf("  bank-sense: \"%s\": river %.3f, money %.3f\n", s[i].text, p[0], p[1]);
    }
    // 25 words: more than its 24 positions
    Tokens tok;
    CHECK(tokens_from_text(
              &tok, &m->vocab,
              "the cat the cat the cat the cat the cat the cat the cat the cat the cat the cat the cat "
              "the cat the",
              0, &err),
          "long tokens");
    Trace *t = trace_new(m, &tok, &err);
    CHECK(t == NULL && strstr(err.msg, "25 tokens") && strstr(err.msg, "24") && !strchr(err.msg, '\n'),
          "a sentence beyond max_seq_len: \"%s\"", err.msg);
    printf("  refused: %s\n", err.msg);
    trace_free(t);
    tokens_free(&tok);
    model_free(m);
  }
  return check_exit("test_course_golden");
}
