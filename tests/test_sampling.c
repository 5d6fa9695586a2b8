// test_sampling.c -- temperature, top-k, top-p and the seeded draw (sampling.h).
//
// tests/ref/sampling/cases.txt (tests/gen_sampling_ref.py: transformers' Temperature, TopK and TopP
// logits warpers in plain torch) holds, per case, logits z, the softmax p = softmax(z / T) and the
// renormalized q after top-k then top-p (0 where cut). sampling_apply must give the same p and q
// (1e-6) and keep exactly the tokens with q > 0. The draw: a fixed seed gives fixed ids (written
// below: the same on every machine, rng.h is integer-only), every id drawn is a kept one, and
// 20 000 draws follow q. The command-line options refuse bad values with one line.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rng.h"      // defines: rng_seed
#include "sampling.h" // defines: sampling_apply, sampling_draw, sampling_option

#define MAXV 64

static int read_row(FILE *f, const char *tag, double *out, int V) {
  char t[8];
  if (fscanf(f, "%7s", t) != 1 || strcmp(t, tag)) return 0;
  for (int i = 0; i < V; i++)
    if (fscanf(f, "%lf", &out[i]) != 1) return 0;
  return 1;
}

static void run_reference(void) {
  char path[4096], line[512];
  snprintf(path, sizeof path, "%s/ref/sampling/cases.txt", check_test_dir());
  FILE *f = fopen(path, "r");
  CHECK(f != NULL, "cannot open %s", path);
  if (!f) return;
  if (!fgets(line, sizeof line, f)) line[0] = 0; // the comment line
  int n_cases = 0;
  char name[64];
  int V, K;
  double T, P;
  while (fscanf(f, " case %63s %d %lf %d %lf", name, &V, &T, &K, &P) == 5) {
    double z[MAXV], p[MAXV], q[MAXV];
    CHECK(V > 0 && V <= MAXV, "%s: V %d", name, V);
    if (V <= 0 || V > MAXV) break;
    CHECK(read_row(f, "z", z, V) && read_row(f, "p", p, V) && read_row(f, "q", q, V), "%s: rows", name);
    float zf[MAXV], pp[MAXV], qq[MAXV];
    bool kept[MAXV];
    for (int i = 0; i < V; i++) zf[i] = (float)z[i];
    Sampling s = sampling_default();
    s.on = true, s.temperature = (float)T, s.top_k = K, s.top_p = (float)P;
    SamplingPicture pic = {pp, qq, kept, 0, 0, 0};
    sampling_apply(zf, V, &s, &pic);
    int n_ref = 0;
    for (int i = 0; i < V; i++) {
      CHECK_NEAR(pp[i], p[i], 1e-6, "%s: p[%d]", name, i);
      CHECK_NEAR(qq[i], q[i], 1e-6, "%s: q[%d]", name, i);
      CHECK(kept[i] == (q[i] > 0), "%s: token %d kept %d, torch's q %g", name, i, kept[i], q[i]);
      n_ref += q[i] > 0;
    }
    CHECK(pic.n_kept == n_ref, "%s: %d kept, torch keeps %d", name, pic.n_kept, n_ref);
    n_cases++;
  }
  fclose(f);
  CHECK(n_cases == 9, "%d cases read, the generator writes 9", n_cases);
}

static void run_draws(void) {
  float z[6] = {2.0f, 1.0f, 0.5f, 0.0f, -1.0f, 3.0f}, p[6], q[6];
  bool kept[6];
  Sampling s = sampling_default();
  s.on = true, s.top_k = 3;
  SamplingPicture pic = {p, q, kept, 0, 0, 0};
  sampling_apply(z, 6, &s, &pic);
  CHECK(pic.n_kept == 3 && kept[0] && kept[1] && kept[5] && !kept[2], "top-3 keeps ids 5, 0, 1");
  // seed 7's first ten draws: the same on every machine (rng.h draws from integers only)
  static const int EXPECT[10] = {0, 1, 5, 5, 5, 5, 5, 5, 5, 5};
  uint64_t rng = rng_seed(7);
  int got[10];
  for (int i = 0; i < 10; i++) got[i] = sampling_draw(q, 6, &rng);
  if (getenv("SF_PRINT_DRAWS"))
    for (int i = 0; i < 10; i++) printf("%d%s", got[i], i < 9 ? ", " : "\n");
  for (int i = 0; i < 10; i++)
    CHECK(got[i] == EXPECT[i], "seed 7, draw %d: id %d, expected %d", i, got[i], EXPECT[i]);
  int count[6] = {0};
  rng = rng_seed(1);
  for (int i = 0; i < 20000; i++) count[sampling_draw(q, 6, &rng)]++;
  for (int i = 0; i < 6; i++) {
    CHECK(kept[i] || count[i] == 0, "id %d was cut but drawn %d times", i, count[i]);
    CHECK_NEAR(count[i] / 20000.0, q[i], 0.015, "id %d's frequency", i);
  }
}

static void run_options(void) {
  struct {
    const char *opt, *val;
    int ret;
  } cases[] = {{"--top-k", "40", 1},       {"--top-k", "0", -1},  {"--top-k", "x", -1},
               {"--top-p", "0.9", 1},      {"--top-p", "0", -1},  {"--top-p", "1.5", -1},
               {"--seed", "7", 1},         {"--seed", "-1", -1},  {"--temperature", "0.5", 1},
               {"--temperature", "0", -1}, {"--top-k", NULL, -1}, {"--other", "1", 0}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    char *argv[2] = {(char *)cases[c].opt, (char *)cases[c].val};
    int i = 0;
    Sampling s = sampling_default();
    Err err = {0};
    int r = sampling_option(&s, cases[c].val ? 2 : 1, argv, &i, &err);
    CHECK(r == cases[c].ret, "%s %s: %d, expected %d", cases[c].opt, cases[c].val ? cases[c].val : "(none)",
          r, cases[c].ret);
    CHECK(r >= 0 || (err.msg[0] && !strchr(err.msg, '\n')), "%s: one line", cases[c].opt);
    CHECK(r != 1 || (s.on && i == 1), "%s: consumed with its value", cases[c].opt);
  }
}

int main(void) {
  run_reference();
  run_draws();
  run_options();
  return check_exit("test_sampling");
}
