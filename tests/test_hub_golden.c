// test_hub_golden.c -- the hub fixtures of tests/ref/hub/ (tests/gen_hub_fixtures.py: tiny GPT-2 and
// BERT checkpoints under the hub's exact names, F32, F16 and BF16, with and without prefixes) opened
// as `stepformer --model DIR` opens them (model_load on the folder), tokenized with their own
// tokenizers (ids and labels equal the generator's), traced, and every reference stage of every
// sentence compared with the trace: |c - r| <= 1e-5·max(1, |r|), -inf exactly.
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "golden_ref.h"   // defines: golden_read_rows, golden_compare
#include "fileio.h"       // defines: file_read_all, path_join
#include "forward.h"      // defines: model_forward
#include "model.h"        // defines: Model
#include "model_load.h"   // defines: model_load
#include "model_tokens.h" // defines: model_tokenize
#include "npy.h"          // defines: npy_read
#include "trace.h"        // defines: Trace, trace_find, trace_at, trace_dump_shape

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

// Every reference file of dir has its stage in the trace, equal to it. Returns the count.
static int compare_refs(const char *cname, const char *dir, const Trace *t) {
  int n = 0;
  double worst = 0;
  char worst_name[64] = "";
  DIR *d = opendir(dir);
  CHECK(d != NULL, "%s: cannot open %s", cname, dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".npy")) continue;
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(len - 4), e->d_name);
    double diff = golden_compare(cname, dir, name, t);
    if (diff >= worst) worst = diff, snprintf(worst_name, sizeof worst_name, "%s", name);
    n++;
  }
  if (d) closedir(d);
  printf("%-28s %2d stages, L=%d, max |diff| %.3g (%s)\n", cname, n, t->L, worst, worst_name);
  return n;
}

// Compares the tokens with the generator's ids.txt and tokens.txt.
static void compare_tokens(const char *cname, const char *dir, const Tokens *tok) {
  char path[4400];
  size_t len;
  Err err = {0};
  snprintf(path, sizeof path, "%s/ids.txt", dir);
  char *ids = file_read_all(path, &len, 1 << 16, &err);
  snprintf(path, sizeof path, "%s/tokens.txt", dir);
  char *labels = file_read_all(path, &len, 1 << 16, &err);
  CHECK(ids && labels, "%s: %s", cname, err.msg);
  char *p = ids, *l = labels;
  int i = 0;
  for (; ids && labels && i < tok->n; i++) {
    char *end;
    long id = strtol(p, &end, 10);
    char *nl = strchr(l, '\n');
    if (end == p || !nl) break;
    *nl = 0;
    CHECK(id == tok->ids[i] && !strcmp(l, tok->words[i]), "%s token %d: %d \"%s\", expected %ld \"%s\"",
          cname, i, tok->ids[i], tok->words[i], id, l);
    p = end, l = nl + 1;
  }
  CHECK(i == tok->n && ids && labels && strtol(p, NULL, 10) == 0 && *l == 0,
        "%s: %d tokens, not the reference's", cname, tok->n);
  free(ids), free(labels);
}

int main(void) {
  char refdir[4096], path[4200];
  snprintf(refdir, sizeof refdir, "%s/ref/hub", check_test_dir());
  snprintf(path, sizeof path, "%s/cases.txt", refdir);
  Case cases[32];
  int n = read_cases(path, cases, 32), stages = 0;
  CHECK(n == 8, "%d cases, expected 8", n);
  for (int i = 0; i < n; i++) {
    int s = 0; // the sentence's folder: sK, K counting the earlier cases of the same model
    for (int j = 0; j < i; j++) s += !strcmp(cases[j].name, cases[i].name);
    char dir[4200], sdir[4300], cname[96];
    snprintf(dir, sizeof dir, "%.4000s/%.60s", refdir, cases[i].name);
    snprintf(sdir, sizeof sdir, "%s/s%d", dir, s);
    snprintf(cname, sizeof cname, "%.60s/s%d", cases[i].name, s);
    Err err = {0};
    Model *m = model_load(dir, &err);
    CHECK(m != NULL, "%s: %s", cname, err.msg);
    if (!m) continue;
    Tokens tok;
    bool ok = model_tokenize(m, cases[i].text, 0, &tok, &err);
    CHECK(ok, "%s: %s", cname, err.msg);
    Trace *t = ok ? trace_new(m, &tok, &err) : NULL;
    CHECK(!ok || t, "%s: %s", cname, err.msg);
    if (ok) compare_tokens(cname, sdir, &tok);
    if (t) {
      model_forward(t);
      stages += compare_refs(cname, sdir, t);
    }
    trace_free(t);
    if (ok) tokens_free(&tok);
    model_free(m);
  }
  CHECK(stages >= 8 * 40, "%d stages compared", stages);
  return check_exit("test_hub_golden");
}
