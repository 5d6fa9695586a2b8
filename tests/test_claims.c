// test_claims.c -- claims of lessons (facts.h): parsed, measured on the shipped model, and checked
// by `stepformer check`, which must fail when the model's heads are renumbered.
//
// 1. facts_parse: claims that parse, and malformed ones with the reason (bad operator, argmax with
//    a number, a range the wrong way round ...).
// 2. facts_eval on "The cat walks by the bank" through assets/models/bank.safetensors: claims that
//    hold and that fail, with the measured value; names that do not resolve ("did you mean").
// 3. The heads renumbered: the four heads of bank.safetensors written in the order 4 3 2 1 into a
//    temporary model (in_proj rows and out_proj columns moved together, so the model computes the
//    same function: its predictions are unchanged), lessons/cat-bank.md copied to use it: `stepformer
//    check` must fail with FILE:LINE on the heading of "Where does bank look?", the claim
//    A4[bank, by] > 0.95 and the value measured, while the claims on the prediction still hold.
//
//     SF_SOURCE_DIR=. build/tests/test_claims
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"          // defines: cli_check
#include "facts.h"        // defines: facts_parse, facts_eval
#include "forward.h"      // defines: model_forward
#include "model_load.h"   // defines: model_load
#include "model_tokens.h" // defines: model_tokenize
#include "safetensors.h"  // defines: st_read, st_write

static int failures = 0;
#define FAIL(...) (fprintf(stderr, "FAILED: " __VA_ARGS__), fputc('\n', stderr), failures++)

static void parse_ok(const char *text) {
  Fact f;
  char why[200];
  if (!facts_parse(&f, text, why, sizeof why)) FAIL("\"%s\" should parse: %s", text, why);
}

static void parse_bad(const char *text, const char *want) {
  Fact f;
  char why[200] = "";
  if (facts_parse(&f, text, why, sizeof why))
    FAIL("\"%s\" should not parse", text);
  else if (!strstr(why, want))
    FAIL("\"%s\": the reason \"%s\" should say \"%s\"", text, why, want);
}

// Evaluates text on t: want 1 holds, 0 fails, -1 does not resolve; the statement must hold `says`.
static void eval(const Trace *t, const char *text, int want, const char *says) {
  Fact f;
  char why[200];
  FactResult r;
  if (!facts_parse(&f, text, why, sizeof why)) {
    FAIL("\"%s\" should parse: %s", text, why);
    return;
  }
  int got = facts_eval(&f, t, 0, &r) ? r.holds : -1;
  if (got != want) FAIL("\"%s\": got %d, want %d (%s)", text, got, want, r.statement);
  if (!strstr(r.statement, says)) FAIL("\"%s\": \"%s\" should say \"%s\"", text, r.statement, says);
}

static void test_parse(void) {
  parse_ok("A4[bank, river] > 0.9");
  parse_ok("argmax A4[bank] = river");
  parse_ok("predict[bank] = where");
  parse_ok("sum A1[cat] = 1 ± 0.001");
  parse_ok("  compare: A2[cat, walks] in [0.2, 0.5] ");
  parse_ok("A1[cat, bank] ≥ 0.5");
  parse_ok("max softmax2[the#2] <= 1");
  parse_bad("A4[bank, river] >> 0.9", "expected a number after >");
  parse_bad("A4[bank, river] ~ 0.9", "expected an operator");
  parse_bad("argmax A4[bank] = 3", "argmax names a word");
  parse_bad("A4[bank, river] in [1, 0]", "empty range");
  parse_bad("A4[bank, river", "expected ]");
  parse_bad("A4[bank] > 0.5", "compares one cell");
  parse_bad("sum A4[bank, river] > 0.5", "taken over a row");
  parse_bad("A4[bank, river] > 0.5 extra", "unexpected");
  parse_bad("A4[bank, river] < 0.5 ± 0.1", "goes with = and != only");
  parse_bad("", "empty claim");
}

static void test_eval(const char *root) {
  char path[1024];
  snprintf(path, sizeof path, "%s/assets/models/bank.safetensors", root);
  Err err = {0};
  Model *m = model_load(path, &err);
  if (!m) {
    FAIL("%s", err.msg);
    return;
  }
  Tokens tk;
  Trace *t = NULL;
  if (model_tokenize(m, "The cat walks by the bank", 64, &tk, &err)) {
    t = trace_new(m, &tk, &err);
    tokens_free(&tk);
  }
  if (!t) {
    FAIL("%s", err.msg);
    model_free(m);
    return;
  }
  model_forward(t);
  eval(t, "A4[bank, by] > 0.95", 1, "measured: 0.99");
  eval(t, "A4[bank, by] < 0.5", 0, "measured: 0.99");
  eval(t, "argmax A4[bank] = by", 1, "measured: by");
  eval(t, "A4[bank] = the", 0, "measured: by, 0.99");
  eval(t, "predict[bank] = to", 1, "measured: to, 0.52");
  eval(t, "p[bank] != where", 1, "measured: to");
  eval(t, "sum A2[cat] = 1 ± 0.0001", 1, "measured: 1.000");
  eval(t, "A3[the] in [0, 1]", 1, " ... 0.984)");
  eval(t, "softmax1 in [0.5, 1]", 0, "measured: ");
  eval(t, "A1[the#2, bank] = 1 ± 0.01", 1, "measured: 1.000");
  // the word measured is named as the claim names it: the second "the" is the#2 (issue 31.3)
  eval(t, "argmax A1[bank] = the#2", 1, "measured: the#2, 0.7");
  eval(t, "argmax A3[the#2] = by", 1, "measured: by, 0.9");
  eval(t, "A1[5, 6] = 1 ± 0.01", 1, "measured: 1.000"); // positions, as focus tokens take them
  eval(t, "ffn_hidden[cat, d1] >= 0", 1, "measured: "); // a ReLU: never below zero
  eval(t, "A4[bnak, by] > 0.5", -1, "did you mean bank?");
  eval(t, "A4[bank, river] > 0.5", -1, "not in the sentence");
  eval(t, "p[bank, wehre] > 0.5", -1, "did you mean where?");
  eval(t, "A9[bank, by] > 0.5", -1, "out of range: the model has 4 heads");
  eval(t, "A[bank, by] > 0.5", -1, "write A1 ... A4");
  eval(t, "sofmtax4[bank, by] > 0.5", -1, "did you mean softmax?");
  eval(t, "p2[bank, to] > 0.5", -1, "has no heads");
  eval(t, "embed[cat, d65] > 0", -1, "d1 … d64");
  eval(t, "embed[cat, 3] > 0", -1, "written d1 … d64 now (d3 here)"); // the old form: the new one said
  trace_free(t);
  model_free(m);
}

// The heads of bank.safetensors in the order perm (new head h is old head perm[h]) into out.
static bool permute_heads(const char *in, const char *out, const int *perm) {
  StFile f;
  Err err = {0};
  if (!st_read(&f, in, &err)) return FAIL("%s", err.msg), false;
  int D = atoi(st_meta(&f, "d_model")), H = atoi(st_meta(&f, "n_heads")), dk = D / H;
  for (int i = 0; i < f.n; i++) {
    StTensor *x = &f.tensors[i];
    bool w = strstr(x->name, "self_attn.in_proj_weight") != NULL,
         b = strstr(x->name, "self_attn.in_proj_bias") != NULL;
    bool o = strstr(x->name, "self_attn.out_proj.weight") != NULL;
    if (!w && !b && !o) continue;
    float *old = malloc(sizeof(float) * (size_t)x->count);
    memcpy(old, x->data, sizeof(float) * (size_t)x->count);
    int cols = w || o ? D : 1; // in_proj: rows [3D], q k v blocks of D rows; out_proj: [D, D] (out, in)
    for (int h = 0; h < H; h++)
      for (int k = 0; k < dk; k++) {
        if (o) // the inputs of W^o are the heads' columns side by side
          for (int r = 0; r < D; r++) x->data[r * D + h * dk + k] = old[r * D + perm[h] * dk + k];
        else
          for (int part = 0; part < 3; part++)
            memcpy(x->data + (size_t)(part * D + h * dk + k) * cols,
                   old + (size_t)(part * D + perm[h] * dk + k) * cols, sizeof(float) * (size_t)cols);
      }
    free(old);
  }
  bool ok = st_write(out, f.tensors, f.n, (const char *const *)f.keys, (const char *const *)f.values,
                     f.n_meta, &err);
  if (!ok) FAIL("%s", err.msg);
  st_free(&f);
  return ok;
}

// Runs `stepformer check FILE` in this process; its stderr goes into err (cap bytes).
static int run_check(const char *file, char *out, size_t cap, const char *dir) {
  char path[1100];
  snprintf(path, sizeof path, "%s/stderr.txt", dir);
  fflush(stderr);
  int saved = dup(2);
  FILE *f = fopen(path, "w+");
  if (!f) return FAIL("cannot write %s", path), -1;
  dup2(fileno(f), 2);
  char *argv[] = {"check", (char *)file, NULL};
  int rc = cli_check(2, argv);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(f);
  size_t n = fread(out, 1, cap - 1, f);
  out[n] = 0;
  fclose(f);
  return rc;
}

static void test_renumbered(const char *root) {
  char dir[] = "/tmp/sf-claims.XXXXXX";
  if (!mkdtemp(dir)) return (void)FAIL("mkdtemp");
  char model[1100], lesson[1100], src[1100];
  snprintf(model, sizeof model, "%s/perm.safetensors", dir);
  snprintf(lesson, sizeof lesson, "%s/cat-bank.md", dir);
  snprintf(src, sizeof src, "%s/assets/models/bank.safetensors", root);
  int perm[4] = {3, 2, 1, 0};
  if (!permute_heads(src, model, perm)) return;
  // cat-bank.md with the model: line pointing at the renumbered model; the heading's line noted
  snprintf(src, sizeof src, "%s/lessons/cat-bank.md", root);
  FILE *in = fopen(src, "r"), *out = fopen(lesson, "w");
  if (!in || !out) return (void)FAIL("cannot copy %s", src);
  char line[4096];
  int n = 0, where = 0, off = 0; // off: the step that switches heads off by number
  while (fgets(line, sizeof line, in)) {
    n++;
    if (line[0] == '#' && strstr(line, "heads-off=")) off = n;
    if (!strncmp(line, "model:", 6))
      fprintf(out, "model: %s\n", model);
    else
      fputs(line, out);
    if (strstr(line, "Where does \"bank\" look?")) where = n;
  }
  fclose(in);
  fclose(out);
  if (!where) FAIL("no heading \"Where does \"bank\" look?\" in %s", src);
  static char err[1 << 16];
  int rc = run_check(lesson, err, sizeof err, dir);
  if (rc != 2) FAIL("check on the renumbered heads: exit %d, want 2", rc);
  char want[1300];
  snprintf(want, sizeof want, "%s:%d: claim does not hold: A4[bank, by] > 0.95 (measured: ", lesson, where);
  char *hit = strstr(err, want);
  if (!hit)
    FAIL("check's errors should hold \"%s\"; they were:\n%s", want, err);
  else { // head 4 is now the old head 1, whose bank looks at the two "the": by gets about 0
    double v = atof(hit + strlen(want));
    if (!(v < 0.05)) FAIL("measured A4[bank, by] = %g on the renumbered heads, want about 0", v);
  }
  // the same function: the same predictions, except on the step that switches heads off by their
  // numbers (after renumbering, other heads go off: its prediction must change, and be reported)
  char off_at[1200];
  snprintf(off_at, sizeof off_at, "%s:%d: ", lesson, off);
  bool off_reported = false;
  for (char *l = err; *l;) {
    char *e = strchr(l, '\n');
    size_t len = e ? (size_t)(e - l) : strlen(l);
    bool on_off = off && !strncmp(l, off_at, strlen(off_at));
    char one[2048];
    snprintf(one, sizeof one, "%.*s", (int)(len < sizeof one ? len : sizeof one - 1), l);
    if (on_off && strstr(one, "p[bank")) off_reported = true;
    if (!on_off && (strstr(one, "p[bank") || strstr(one, "predict[bank")))
      FAIL("the renumbered model should predict as the shipped one:\n%s", one);
    l = e ? e + 1 : l + len;
  }
  if (off && !off_reported)
    FAIL("the heads-off step (line %d) should report its prediction changed:\n%s", off, err);
  remove(model);
  remove(lesson);
  snprintf(src, sizeof src, "%s/stderr.txt", dir);
  remove(src);
  rmdir(dir);
}

int main(void) {
  const char *root = getenv("SF_SOURCE_DIR");
  if (!root) root = ".";
  test_parse();
  test_eval(root);
  test_renumbered(root);
  if (failures)
    fprintf(stderr, "test_claims: %d failure(s)\n", failures);
  else
    printf("test_claims: ok\n");
  return failures ? 1 : 0;
}
