// test_generate.c -- greedy generation (generate.h) against torch's nn.Transformer.
//
// tests/ref/seq2seq-*/generated.txt holds, for the case's source sentence, the words a greedy loop
// over torch's nn.Transformer writes with the same weights (tests/gen_ref_seq2seq.py --greedy):
// one line per step, "step<TAB>id<TAB>word<TAB>prob<TAB>id:prob id:prob ..." (the top five). Each
// step here must choose the same word with the same probabilities (1e-5), stop at the same step
// (<eos> or the limit), and each step's trace, whose encoder part was copied from step 1, must
// equal a trace computed from scratch on the same input. A causal model with a head (tests/ref/
// head) generates by the same calls; an encoder without a causal head is refused.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "forward.h"  // defines: model_forward
#include "generate.h" // defines: gen_run, Generation
#include "model.h"    // defines: model_load

#define LIMIT 6 // tests/gen_ref_seq2seq.py's GREEDY_LIMIT

static const char *ref_dir(void) {
  const char *d = getenv("SF_TEST_DIR");
  return d ? d : "tests";
}

// The case's source sentence from seq2seq_cases.txt (into out).
static bool case_source(const char *name, char *out, size_t cap) {
  char path[4096], line[1024];
  snprintf(path, sizeof path, "%s/ref/seq2seq_cases.txt", ref_dir());
  FILE *f = fopen(path, "r");
  if (!f) return false;
  bool found = false;
  size_t n = strlen(name);
  while (!found && fgets(line, sizeof line, f)) {
    if (strncmp(line, name, n) || line[n] != '\t') continue;
    char *src = line + n + 1, *tab = strchr(src, '\t');
    if (!tab) break;
    *tab = 0;
    snprintf(out, cap, "%s", src);
    found = true;
  }
  fclose(f);
  return found;
}

static float max_diff(const TraceTensor *a, const TraceTensor *b) {
  float m = 0;
  long n = (long)a->heads * a->rows * a->cols;
  for (long i = 0; i < n; i++) {
    float d = a->data[i] - b->data[i];
    if (d < 0) d = -d;
    if (!(d <= m)) m = d; // NaN counts
  }
  return m;
}

// Step k's trace (encoder part copied in) against one computed from scratch on the same input.
static void check_shared_trace(const char *name, const Model *m, const Tokens *src, const Trace *t, int k) {
  Err err = {0};
  Trace *full = trace_new_seq2seq(m, src, &t->dec_tokens, &err);
  CHECK(full != NULL, "%s step %d: %s", name, k + 1, err.msg);
  if (!full) return;
  model_forward(full);
  CHECK(full->n == t->n, "%s step %d: tensor count", name, k + 1);
  for (int i = 0; i < full->n && i < t->n; i++) {
    if (full->t[i].is_weight) continue;
    CHECK(!strcmp(full->t[i].name, t->t[i].name), "%s: tensor %d", name, i);
    CHECK(max_diff(&full->t[i], &t->t[i]) == 0.0f, "%s step %d: %s differs from a full recompute by %g", name,
          k + 1, t->t[i].name, max_diff(&full->t[i], &t->t[i]));
  }
  trace_free(full);
}

static void run_case(const char *name) {
  char path[4096], source[512];
  CHECK(case_source(name, source, sizeof source), "%s: not in seq2seq_cases.txt", name);
  snprintf(path, sizeof path, "%s/ref/%s/model.safetensors", ref_dir(), name);
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "%s: %s", name, err.msg);
  if (!m) return;
  Tokens src = {0};
  CHECK(tokens_from_text(&src, &m->vocab, source, 0, &err), "%s: %s", name, err.msg);
  Generation *g = gen_run(m, &src, LIMIT, &err);
  CHECK(g != NULL, "%s: %s", name, err.msg);
  snprintf(path, sizeof path, "%s/ref/%s/generated.txt", ref_dir(), name);
  FILE *f = fopen(path, "r");
  CHECK(f != NULL, "%s: cannot open %s", name, path);
  if (g && f) {
    char line[1024];
    int k = 0;
    while (fgets(line, sizeof line, f)) {
      if (line[0] == '#') continue;
      int step, id, off = 0;
      char word[64];
      float prob;
      CHECK(sscanf(line, "%d\t%d\t%63s\t%f\t%n", &step, &id, word, &prob, &off) == 4, "%s: bad line %s", name,
            line);
      CHECK(step == k + 1, "%s: step %d on line %d", name, step, k + 1);
      CHECK(k < g->n_steps, "%s: stopped after %d steps, torch went on", name, g->n_steps);
      if (k >= g->n_steps) break;
      const GenStep *s = &g->steps[k];
      CHECK(s->token == id, "%s step %d: wrote %s, torch %s", name, k + 1, gen_word(g, s->token), word);
      CHECK(!strcmp(gen_word(g, s->token), word), "%s step %d: word %s", name, k + 1, word);
      CHECK_NEAR(s->prob, prob, 1e-5, "%s step %d: probability", name, k + 1);
      CHECK(s->trace->T == k + 1, "%s step %d: the decoder's input has %d tokens", name, k + 1, s->trace->T);
      char *p = line + off;
      for (int r = 0; r < GEN_TOP; r++) {
        int tid, used = 0;
        float tp;
        CHECK(sscanf(p, "%d:%f%n", &tid, &tp, &used) == 2, "%s step %d: top %d", name, k + 1, r + 1);
        p += used;
        CHECK(s->top[r] == tid, "%s step %d: candidate %d is %d, torch %d", name, k + 1, r + 1, s->top[r],
              tid);
        CHECK_NEAR(s->top_p[r], tp, 1e-5, "%s step %d: candidate %d", name, k + 1, r + 1);
      }
      if (k > 0) check_shared_trace(name, m, &src, s->trace, k);
      k++;
    }
    CHECK(k == g->n_steps, "%s: %d steps, torch %d", name, g->n_steps, k);
    CHECK(g->ended == (g->steps[g->n_steps - 1].token == m->eos), "%s: ended", name);
    char *sentence = gen_sentence(g);
    CHECK(sentence && !strstr(sentence, "<eos>"), "%s: sentence %s", name, sentence ? sentence : "(null)");
    free(sentence);
  }
  if (f) fclose(f);
  gen_free(g);
  tokens_free(&src);
  model_free(m);
}

// GPT-style: a causal model with a head appends the argmax of its last row and recomputes.
static void run_causal(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/ref/head/model.safetensors", ref_dir());
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "head: %s", err.msg);
  if (!m) return;
  Tokens prompt = {0};
  CHECK(tokens_from_text(&prompt, &m->vocab, "the cat", 0, &err), "head: %s", err.msg);
  Generation *g = gen_run(m, &prompt, 4, &err);
  CHECK(g != NULL, "head: %s", err.msg);
  if (g) {
    CHECK(!g->seq2seq && g->n_steps >= 1 && g->n_steps <= 4, "head: %d steps", g->n_steps);
    for (int k = 0; k < g->n_steps; k++) {
      const Trace *t = g->steps[k].trace;
      CHECK(t->L == prompt.n + k, "head step %d: %d tokens", k + 1, t->L);
      if (k > 0)
        CHECK(t->tokens.ids[t->L - 1] == g->steps[k - 1].token, "head step %d: appended word", k + 1);
      const TraceTensor *p = &t->t[t->pred];
      int best = 0;
      for (int j = 1; j < p->cols; j++)
        if (trace_at(p, 0, p->rows - 1, j) > trace_at(p, 0, p->rows - 1, best)) best = j;
      CHECK(g->steps[k].token == best, "head step %d: argmax %d, chose %d", k + 1, best, g->steps[k].token);
      CHECK(g->steps[k].top_p[0] >= g->steps[k].top_p[1], "head step %d: sorted", k + 1);
    }
  }
  gen_free(g);
  // more steps than the cap: one line
  g = gen_run(m, &prompt, GEN_MAX_STEPS + 1, &err);
  CHECK(g == NULL && strstr(err.msg, "--max-steps"), "cap: %s", err.msg);
  tokens_free(&prompt);
  model_free(m);

  // an encoder without a causal head cannot generate
  snprintf(path, sizeof path, "%s/ref/head-nonorm/model.safetensors", ref_dir());
  m = model_load(path, &err);
  CHECK(m != NULL, "head-nonorm: %s", err.msg);
  if (m) {
    CHECK(!gen_supported(m, &err) && strstr(err.msg, "--generate"), "head-nonorm: %s", err.msg);
    model_free(m);
  }
}

int main(void) {
  CHECK(gen_default_limit(3) == 16 && gen_default_limit(1000) == GEN_MAX_STEPS, "default limit");
  run_case("seq2seq-post");
  run_case("seq2seq-pre-gelu");
  run_case("seq2seq-short-target");
  run_causal();
  return check_exit("test_generate");
}
