// test_generate.c -- greedy generation (generate.h) against torch's nn.Transformer.
//
// tests/ref/seq2seq-*/generated.txt holds, for the case's source sentence, the words a greedy loop
// over torch's nn.Transformer writes with the same weights (tests/gen_ref_seq2seq.py --greedy):
// one line per step, "step<TAB>id<TAB>word<TAB>prob<TAB>id:prob id:prob ..." (the top five). Each
// step here must choose the same word with the same probabilities (1e-5), stop at the same step
// (<eos> or the limit), and each step's trace, whose encoder part was copied from step 1, must
// equal a trace computed from scratch on the same input. A causal model with a head (tests/ref/
// head) generates by the same calls; an encoder without a causal head is refused.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "forward.h"      // defines: model_forward
#include "generate.h"     // defines: gen_run, Generation
#include "model_load.h"   // defines: model_load
#include "model_tokens.h" // defines: model_tokenize
#include "rng.h"          // defines: rng_seed, rng_uniform
#include "trace_util.h"   // defines: load_ref_model, argmax_row

#define LIMIT 6 // tests/gen_ref_seq2seq.py's GREEDY_LIMIT

// The case's source sentence from seq2seq_cases.txt (into out).
static bool case_source(const char *name, char *out, size_t cap) {
  char path[4096], line[1024];
  snprintf(path, sizeof path, "%s/ref/seq2seq_cases.txt", check_test_dir());
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
  Err err = {0};
  Model *m = load_ref_model(name);
  if (!m) return;
  Tokens src = {0};
  CHECK(tokens_from_text(&src, &m->vocab, source, 0, &err), "%s: %s", name, err.msg);
  Generation *g = gen_run(m, &src, LIMIT, &err);
  CHECK(g != NULL, "%s: %s", name, err.msg);
  snprintf(path, sizeof path, "%s/ref/%s/generated.txt", check_test_dir(), name);
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
  Err err = {0};
  Model *m = load_ref_model("head");
  if (!m) return;
  Tokens prompt = {0};
  CHECK(tokens_from_text(&prompt, &m->vocab, "the cat", 0, &err), "head: %s", err.msg);
  Generation *g = gen_run(m, &prompt, 4, &err);
  CHECK(g != NULL, "head: %s", err.msg);
  if (g) {
    CHECK(!g->seq2seq && g->n_steps >= 1 && g->n_steps <= 4, "head: %d steps", g->n_steps);
    for (int k = 0; k < g->n_steps; k++) {
      CHECK(k == 0 || g->steps[k].trace == NULL, "head step %d: made only when asked for", k + 1);
      const Trace *t = gen_step_trace(g, k, &err);
      CHECK(t != NULL, "head step %d: %s", k + 1, err.msg);
      if (!t) break;
      CHECK(t->L == prompt.n + k, "head step %d: %d tokens", k + 1, t->L);
      if (k > 0)
        CHECK(t->tokens.ids[t->L - 1] == g->steps[k - 1].token, "head step %d: appended word", k + 1);
      const TraceTensor *p = &t->t[t->pred];
      int best = argmax_row(p, 0, p->rows - 1);
      CHECK(g->steps[k].token == best, "head step %d: argmax %d, chose %d", k + 1, best, g->steps[k].token);
      CHECK(g->steps[k].top_p[0] >= g->steps[k].top_p[1], "head step %d: sorted", k + 1);
      for (int r = 0; r < g->steps[k].n_top; r++) // the cache's probabilities: the full trace's
        CHECK_NEAR(g->steps[k].top_p[r], trace_at(p, 0, p->rows - 1, g->steps[k].top[r]), 1e-6,
                   "head step %d: candidate %d", k + 1, r + 1);
      if (k > 0) gen_step_release(g, k);
      CHECK(k == 0 || g->steps[k].trace == NULL, "head step %d: released", k + 1);
    }
  }
  gen_free(g);
  // more steps than the cap: one line
  g = gen_run(m, &prompt, GEN_MAX_STEPS + 1, &err);
  CHECK(g == NULL && strstr(err.msg, "--max-steps"), "cap: %s", err.msg);
  tokens_free(&prompt);
  model_free(m);

  // an encoder without a causal head cannot generate
  m = load_ref_model("head-nonorm");
  if (m) {
    CHECK(!gen_supported(m, &err) && strstr(err.msg, "--generate"), "head-nonorm: %s", err.msg);
    model_free(m);
  }
}

// The window's temperature and sampling (generate.h): pred at T equals softmax(logits / T) row by
// row (computed here in double, to 1e-6: float rounding of the division and the exponentials);
// T = 1 again gives model_forward's bits; the ids drawn with seed 42 are the inverse CDF of
// rng_uniform's stream (computed here), a fixed sequence, and follow p over many draws.
static void run_temperature(void) {
  Err err = {0};
  Model *m = load_ref_model("head");
  if (!m) return;
  Tokens prompt = {0};
  CHECK(tokens_from_text(&prompt, &m->vocab, "the cat sat", 0, &err), "head: %s", err.msg);
  Trace *t = gen_trace_ids(m, prompt.ids, prompt.n, 1.0f, &err);
  CHECK(t != NULL, "head: %s", err.msg);
  if (!t) return;
  const TraceTensor *z = &t->t[t->logits], *p = &t->t[t->pred];
  int V = p->cols;
  float *p1 = malloc(sizeof(float) * (size_t)p->rows * V);
  for (int i = 0; i < p->rows; i++)
    memcpy(p1 + (size_t)i * V, p->data + (size_t)i * p->stride, sizeof(float) * V);
  static const float TS[] = {0.3f, 0.7f, 2.0f};
  for (int k = 0; k < 3; k++) {
    float T = TS[k];
    forward_set_temperature(t, T);
    CHECK(t->temperature == T, "temperature kept");
    double worst = 0;
    for (int i = 0; i < p->rows; i++) {
      double mx = -INFINITY, sum = 0;
      for (int j = 0; j < V; j++) mx = fmax(mx, trace_at(z, 0, i, j) / (double)T);
      for (int j = 0; j < V; j++) sum += exp(trace_at(z, 0, i, j) / (double)T - mx);
      for (int j = 0; j < V; j++)
        worst = fmax(worst, fabs(trace_at(p, 0, i, j) - exp(trace_at(z, 0, i, j) / (double)T - mx) / sum));
    }
    CHECK(worst < 1e-6, "T = %g: pred differs from softmax(logits / T) by %g", T, worst);
    // a sampled id is the inverse CDF of the next uniform of the same stream
    uint64_t a = rng_seed(42), b = rng_seed(42);
    for (int d = 0; d < 20; d++) {
      float prob;
      int id = gen_next(t, &a, &prob);
      double u = rng_uniform(&b), cum = 0;
      int want = -1;
      const float *row = p->data + (size_t)(p->rows - 1) * p->stride;
      for (int j = 0; j < V && want < 0; j++)
        if ((cum += row[j]) > u) want = j;
      CHECK(id == want && prob == row[id], "T = %g draw %d: %d, the inverse CDF gives %d", T, d, id, want);
    }
  }
  forward_set_temperature(t, 1.0f);
  bool same = true;
  for (int i = 0; i < p->rows; i++)
    same &= !memcmp(p1 + (size_t)i * V, p->data + (size_t)i * p->stride, sizeof(float) * V);
  CHECK(same, "T = 1 again: pred has model_forward's bits");
  // the argmax does not depend on T
  int greedy = gen_next(t, NULL, NULL);
  forward_set_temperature(t, 0.3f);
  CHECK(gen_next(t, NULL, NULL) == greedy, "the most likely token at T = 0.3 and at T = 1");
  free(p1);
  trace_free(t);
  tokens_free(&prompt);
  model_free(m);

  // a fixed distribution: the sequence seed 42 gives, and the frequencies of 100 000 draws
  static const float P[] = {0.1f, 0.0f, 0.2f, 0.3f, 0.4f};
  static const int SEQ[] = {2, 3, 3, 2, 4, 3, 3, 4, 4, 4, 3, 3}; // fixed by seed 42
  uint64_t r = rng_seed(42);
  char got[256] = "";
  for (int d = 0; d < (int)(sizeof SEQ / sizeof *SEQ); d++) {
    int id = gen_sample(P, 5, &r);
    snprintf(got + strlen(got), sizeof got - strlen(got), "%d,", id);
    CHECK(id == SEQ[d], "seed 42, draw %d: %d (sequence %s)", d + 1, id, got);
  }
  int count[5] = {0};
  for (int d = 0; d < 100000; d++) count[gen_sample(P, 5, &r)]++;
  CHECK(count[1] == 0, "an id of probability 0 is never drawn");
  for (int j = 0; j < 5; j++)
    CHECK(fabs(count[j] / 100000.0 - P[j]) < 0.005, "id %d drawn %.4f of the time, p = %g", j, count[j] / 1e5,
          P[j]);
  CHECK(gen_argmax(P, 5) == 4, "argmax");
  static const float TIE[] = {0.2f, 0.4f, 0.4f};
  CHECK(gen_argmax(TIE, 3) == 1, "a tie goes to the lower id");
}

// The key/value cache (forward.h): after a full trace of the prompt (kv_fill), each token pushed
// gives the logits of a full trace of the prompt and the tokens pushed, last row, within 1e-5 of
// the row's largest |logit| (absolute when that is below 1; the fixtures' are bit for bit):
// the row goes through the same functions, but a product of one row may take another kernel than
// the same product of L rows (gemm.h's packed kernel, the loop kernels or BLAS, chosen by size),
// and the softmax of a row of p + 1 keys sums in another order than the masked row of L keys, so
// the bits may differ by float rounding. Pushing the prompt from an empty cache gives the same.
static void check_cache(const char *name, Model *m, const char *text) {
  Err err = {0};
  Tokens prompt = {0};
  CHECK(model_tokenize(m, text, 0, &prompt, &err), "%s: %s", name, err.msg);
  int n = prompt.n, extra = 5, ids[64];
  memcpy(ids, prompt.ids, sizeof(int) * (size_t)n);
  Trace *t = gen_trace_ids(m, ids, n, 1.0f, &err);
  KVCache c, c0;
  CHECK(t && kv_init(&c, m, n + extra, &err) && kv_init(&c0, m, n + extra, &err), "%s: %s", name, err.msg);
  if (!t) return;
  kv_fill(&c, t);
  for (int i = 0; i < n; i++) kv_push(&c0, ids[i]);
  int V = m->cfg.V, bitwise = 0;
  double worst = 0;
  for (int k = 0; k < extra; k++) {
    int next = gen_argmax(c.logits, V);
    ids[n + k] = next;
    kv_push(&c, next);
    kv_push(&c0, next);
    trace_free(t);
    t = gen_trace_ids(m, ids, n + k + 1, 1.0f, &err);
    CHECK(t != NULL, "%s: %s", name, err.msg);
    if (!t) break;
    const TraceTensor *z = &t->t[t->logits];
    const float *full = z->data + (size_t)(z->rows - 1) * z->stride;
    double d = 0, big = 1;
    for (int j = 0; j < V; j++) {
      d = fmax(d, fmax(fabs(c.logits[j] - full[j]), fabs(c0.logits[j] - full[j])));
      big = fmax(big, fabs(full[j]));
    }
    bitwise += !memcmp(c.logits, full, sizeof(float) * (size_t)V);
    worst = fmax(worst, d / big);
    CHECK(d <= 1e-5 * big, "%s token %d: cached logits differ from a full recompute by %g (largest %g)", name,
          k + 1, d, big);
  }
  printf("%s: %d tokens through the cache, logits within %.2g (relative to the largest, or absolute when it "
         "is below 1) of a full recompute (%d of %d bit for bit)\n",
         name, extra, worst, bitwise, extra);
  trace_free(t);
  kv_free(&c);
  kv_free(&c0);
  tokens_free(&prompt);
}

static void run_cache(void) {
  char path[4096];
  Err err = {0};
  static const char *const CASES[][2] = {{"hub/gpt2-tiny", "The cat walks by the bank"},
                                         {"hub/gpt2-tiny-f16", "The cat walks by the bank"},
                                         {"head/model.safetensors", "the cat sat on the"}};
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/ref/%s", check_test_dir(), CASES[i][0]);
    Model *m = model_load(path, &err);
    CHECK(m != NULL, "%s: %s", CASES[i][0], err.msg);
    if (m) check_cache(CASES[i][0], m, CASES[i][1]);
    model_free(m);
  }
  // a random causal model, post-norm and pre-norm, large enough for the packed kernel
  for (int pre = 0; pre < 2; pre++) {
    ModelConfig cfg = model_config_default();
    uint64_t seed = 3;
    CHECK(model_config_parse(&cfg, &seed,
                             pre ? "D=128,H=4,F=256,layers=2,causal=1,norm_first=1,pos=learned"
                                 : "D=128,H=4,F=256,layers=2,causal=1",
                             &err),
          "%s", err.msg);
    Vocab v = {0};
    CHECK(vocab_from_lines(&v, "<unk>\nthe\ncat\nsat\non\nmat\n", &err), "%s", err.msg);
    Model *m = model_random(&cfg, &v, seed, &err);
    vocab_free(&v);
    CHECK(m != NULL, "random: %s", err.msg);
    if (!m) continue;
    m->has_head = m->tie_head = true; // a head tied to E (a random model has none of its own)
    m->head_weight = m->embed;
    check_cache(pre ? "random pre-norm" : "random post-norm", m,
                pre ? "the cat sat on the mat the cat sat on the mat the cat sat on the mat"
                    : "the cat sat on the mat");
    model_free(m);
  }
}

// Sampled generation (sampling.h) on the causal fixture: the same seed writes the same words twice,
// each word is one top-k kept (among the two most probable of its step), and a greedy Sampling
// (on == false) writes the greedy words.
static void run_sampled(void) {
  Err err = {0};
  Model *m = load_ref_model("head");
  if (!m) return;
  Tokens prompt = {0};
  CHECK(tokens_from_text(&prompt, &m->vocab, "the cat sat", 0, &err), "head: %s", err.msg);
  Sampling s = sampling_default();
  s.on = true, s.top_k = 2, s.temperature = 1.5f, s.seed = 11;
  Generation *a = gen_run_sampled(m, &prompt, 8, &s, &err), *b = gen_run_sampled(m, &prompt, 8, &s, &err);
  Sampling off = sampling_default();
  Generation *g = gen_run(m, &prompt, 8, &err), *h = gen_run_sampled(m, &prompt, 8, &off, &err);
  CHECK(a && b && g && h, "sampled: %s", err.msg);
  if (a && b && g && h) {
    CHECK(a->n_steps == b->n_steps && g->n_steps == h->n_steps, "step counts");
    for (int k = 0; k < a->n_steps && k < b->n_steps; k++) {
      CHECK(a->steps[k].token == b->steps[k].token, "step %d: seed 11 drew %d then %d", k + 1,
            a->steps[k].token, b->steps[k].token);
      CHECK(a->steps[k].token == a->steps[k].top[0] || a->steps[k].token == a->steps[k].top[1],
            "step %d: drew %d, not one of the top 2", k + 1, a->steps[k].token);
    }
    for (int k = 0; k < g->n_steps && k < h->n_steps; k++)
      CHECK(g->steps[k].token == h->steps[k].token, "greedy step %d", k + 1);
  }
  gen_free(a), gen_free(b), gen_free(g), gen_free(h);
  tokens_free(&prompt);
  model_free(m);
}

int main(void) {
  CHECK(gen_default_limit(3) == 16 && gen_default_limit(1000) == GEN_MAX_STEPS, "default limit");
  run_case("seq2seq-post");
  run_case("seq2seq-pre-gelu");
  run_case("seq2seq-short-target");
  run_causal();
  run_temperature();
  run_sampled();
  run_cache();
  return check_exit("test_generate");
}
