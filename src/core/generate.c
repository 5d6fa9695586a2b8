// generate.c -- greedy generation (generate.h): a trace per step, the encoder's part computed once.
#include "generate.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "bpe.h"          // defines: bpe_decode
#include "forward.h"      // defines: model_forward, forward_set_temperature, KVCache
#include "mat.h"          // defines: mat_softmax_rows
#include "model_tokens.h" // defines: ModelTokenizer
#include "rng.h"          // defines: rng_uniform
#include "sampling.h"     // defines: sampling_apply, sampling_draw

int gen_default_limit(int S) {
  int n = 2 * S + 10;
  return n > GEN_MAX_STEPS ? GEN_MAX_STEPS : n;
}

bool gen_supported(const Model *m, Err *err) {
  if (model_is_seq2seq(m)) return true; // the loader checked <bos> and <eos>
  if (m->cfg.causal && m->has_head) return true;
  return err_set(err,
                 "--generate: %s is an encoder without a causal prediction head, it cannot write the next "
                 "word: use an encoder-decoder (nn.Transformer) or a causal model with a head (GPT-style)",
                 m->source);
}

const char *gen_word(const Generation *g, int id) {
  const Vocab *v = g->seq2seq ? &g->model->tgt_vocab : &g->model->vocab;
  return id >= 0 && id < v->n ? v->words[id] : "?";
}

// Tokens from ids of vocabulary v (the words are v's: none is unknown). Pointers into v.
static bool tokens_of_ids(Tokens *out, const int *ids, int n, const Vocab *v) {
  memset(out, 0, sizeof *out);
  out->n = n;
  out->ids = malloc(sizeof(int) * (size_t)n);
  out->words = malloc(sizeof(char *) * (size_t)n);
  out->unknown = calloc((size_t)n, sizeof(bool));
  if (!out->ids || !out->words || !out->unknown) return false;
  for (int i = 0; i < n; i++) out->ids[i] = ids[i], out->words[i] = v->words[ids[i]];
  return true;
}

static void tokens_release(Tokens *t) { // the words point into a vocabulary: not freed
  free(t->ids);
  free(t->words);
  free(t->unknown);
  memset(t, 0, sizeof *t);
}

// An encoder tensor of an encoder-decoder's trace: "O", "X", "P", "Z", "l{i}.*" and "memory".
static bool encoder_tensor(const char *name) {
  if (name[0] == 'l' && isdigit((unsigned char)name[1])) return true;
  return !strcmp(name, "O") || !strcmp(name, "X") || !strcmp(name, "P") || !strcmp(name, "Z") ||
         !strcmp(name, "memory");
}

// Copies from `first` (step 1, fully computed, on the same source) into t every encoder
// activation, memory and each decoder layer's K^c, V^c [H, S, d_k]; model_forward(t) then
// computes the decoder only (trace.h: memory_ready).
static void share_encoder(Trace *t, const Trace *first) {
  for (int k = 0; k < first->n; k++) {
    const TraceTensor *x = &first->t[k];
    if (x->is_weight) continue;
    const char *dot = strchr(x->name, '.');
    bool cross_kv = x->name[0] == 'd' && isdigit((unsigned char)x->name[1]) && dot &&
                    (!strcmp(dot, ".cK") || !strcmp(dot, ".cV"));
    if (!cross_kv && !encoder_tensor(x->name)) continue;
    int i = trace_index(t, x->name);
    EXPECT(i >= 0 && t->t[i].heads == x->heads && t->t[i].rows == x->rows && t->t[i].cols == x->cols);
    if (t->t[i].data != x->data)
      memcpy(t->t[i].data, x->data, sizeof(float) * (size_t)x->heads * x->rows * x->cols);
  }
  t->memory_ready = true;
}

// The chosen word and the top candidates from a row of probabilities p[V].
static void record_row(GenStep *s, const float *p, int V) {
  s->n_top = V < GEN_TOP ? V : GEN_TOP;
  for (int k = 0; k < s->n_top; k++) s->top[k] = -1, s->top_p[k] = -1;
  for (int id = 0; id < V; id++) { // insertion into the sorted top list; ties keep the lower id first
    float v = p[id];
    int k = s->n_top;
    while (k > 0 && (s->top[k - 1] < 0 || v > s->top_p[k - 1])) k--;
    if (k >= s->n_top) continue;
    memmove(s->top + k + 1, s->top + k, sizeof(int) * (size_t)(s->n_top - k - 1));
    memmove(s->top_p + k + 1, s->top_p + k, sizeof(float) * (size_t)(s->n_top - k - 1));
    s->top[k] = id, s->top_p[k] = v;
  }
  s->token = s->top[0];
  s->prob = s->top_p[0];
}

// With sampling on, the word written is drawn (sampling.h) from the last row of logits z[V]
// instead of the argmax: s->token, s->prob (its probability before any cut) and s->rng_before
// (the generator's state before the draw, so a view can show the same draw again).
static bool choose(Generation *g, GenStep *s, const float *z, int V) {
  if (!g->sampling.on) return true;
  SamplingPicture pic = {malloc(sizeof(float) * (size_t)V),
                         malloc(sizeof(float) * (size_t)V),
                         malloc(sizeof(bool) * (size_t)V),
                         0,
                         0,
                         0};
  bool ok = pic.p && pic.q && pic.kept;
  if (ok) {
    sampling_apply(z, V, &g->sampling, &pic);
    s->rng_before = g->rng;
    s->token = sampling_draw(pic.q, V, &g->rng);
    s->prob = pic.p[s->token];
  }
  free(pic.p), free(pic.q), free(pic.kept);
  return ok;
}

// The same from the last row of a trace's pred (and its logits when sampling).
static bool record(Generation *g, GenStep *s, const Trace *t) {
  const TraceTensor *p = &t->t[t->pred], *z = &t->t[t->logits];
  record_row(s, p->data + (size_t)(p->rows - 1) * p->stride, p->cols);
  return choose(g, s, z->data + (size_t)(z->rows - 1) * z->stride, z->cols);
}

Trace *gen_trace_ids(const Model *m, const int *ids, int n, float T, Err *err) {
  Tokens in;
  if (!tokens_of_ids(&in, ids, n, &m->vocab)) {
    tokens_release(&in);
    return err_set(err, "out of memory"), NULL;
  }
  Trace *t = trace_new(m, &in, err);
  tokens_release(&in);
  if (!t) return NULL;
  t->temperature = T;
  model_forward(t);
  return t;
}

int gen_argmax(const float *p, int V) {
  int best = 0;
  for (int id = 1; id < V; id++)
    if (p[id] > p[best]) best = id;
  return best;
}

int gen_sample(const float *p, int V, uint64_t *rng) {
  double u = rng_uniform(rng), sum = 0;
  int last = 0;
  for (int id = 0; id < V; id++) {
    if (!(p[id] > 0)) continue;
    last = id;
    sum += p[id];
    if (sum > u) return id;
  }
  return last;
}

int gen_next(const Trace *t, uint64_t *rng, float *prob) {
  const TraceTensor *p = &t->t[t->pred];
  const float *row = p->data + (size_t)(p->rows - 1) * p->stride;
  int id = rng ? gen_sample(row, p->cols, rng) : gen_argmax(row, p->cols);
  if (prob) *prob = row[id];
  return id;
}

char *gen_decode(const Model *m, const int *ids, int n) {
  if (m->tok_kind == TOK_BPE && m->tokenizer) {
    size_t len;
    return bpe_decode(&m->tokenizer->bpe, ids, n, &len);
  }
  if (m->tok_kind == TOK_TOKJSON && m->tokenizer)
    return tokjson_decode(&m->tokenizer->tj, ids, n, false, NULL);
  size_t cap = 1;
  for (int k = 0; k < n; k++) cap += strlen(m->vocab.words[ids[k]]) + 1;
  char *s = malloc(cap), *q = s;
  if (!s) return NULL;
  for (int k = 0; k < n; k++) {
    if (m->tok_kind != TOK_CHARS) *q++ = ' ';
    size_t w = strlen(m->vocab.words[ids[k]]);
    memcpy(q, m->vocab.words[ids[k]], w);
    q += w;
  }
  *q = 0;
  return s;
}

// A causal model's steps 2.. from the cache: push the word before, softmax of its logits.
static bool causal_step(Generation *g, KVCache *c, float *probs, int k, Err *err) {
  const Model *m = g->model;
  if (m->cfg.learned_pos && g->base + k > m->cfg.max_pos) { // the trace's own message says so
    Trace *t = gen_trace_ids(m, g->ids, g->base + k, 1.0f, err);
    if (t) trace_free(t); // (not reached: the positions are all used)
    return false;
  }
  kv_push(c, g->ids[g->base + k - 1]);
  int V = m->cfg.V;
  mat_softmax_rows(mat_view(probs, 1, V), mat_view(c->logits, 1, V));
  record_row(&g->steps[k], probs, V);
  if (!choose(g, &g->steps[k], c->logits, V)) return err_set(err, "out of memory");
  return true;
}

Generation *gen_run(const Model *m, const Tokens *source, int max_steps, Err *err) {
  return gen_run_sampled(m, source, max_steps, NULL, err);
}

Generation *gen_run_sampled(const Model *m, const Tokens *source, int max_steps, const Sampling *smp,
                            Err *err) {
  if (!gen_supported(m, err)) return NULL;
  if (max_steps > GEN_MAX_STEPS)
    return err_set(err, "--max-steps %d: at most %d generation steps; give a smaller number", max_steps,
                   GEN_MAX_STEPS),
           NULL;
  Generation *g = calloc(1, sizeof *g);
  if (!g) return err_set(err, "out of memory"), NULL;
  g->model = m;
  g->sampling = smp ? *smp : sampling_default();
  g->rng = rng_seed(g->sampling.seed);
  g->seq2seq = model_is_seq2seq(m);
  g->limit = max_steps > 0 ? max_steps : gen_default_limit(source->n);
  if (g->seq2seq)
    g->end_token = m->eos;
  else {
    g->end_token = vocab_find(&m->vocab, "<eos>");
    if (g->end_token < 0) g->end_token = vocab_find(&m->vocab, "<|endoftext|>");
  }
  g->steps = calloc((size_t)g->limit, sizeof(GenStep));
  // the input of the last step: <bos> (or the prompt) and every word but the last
  g->base = g->seq2seq ? 1 : source->n;
  g->ids = malloc(sizeof(int) * (size_t)(g->base + g->limit));
  KVCache cache = {0};
  float *probs = NULL;
  if (!g->steps || !g->ids) goto oom;
  if (g->seq2seq)
    g->ids[0] = m->bos;
  else
    memcpy(g->ids, source->ids, sizeof(int) * (size_t)source->n);
  for (int k = 0; k < g->limit; k++) {
    GenStep *s = &g->steps[k];
    if (g->seq2seq) {
      Tokens in;
      if (!tokens_of_ids(&in, g->ids, g->base + k, &m->tgt_vocab)) {
        tokens_release(&in);
        goto oom;
      }
      s->trace = trace_new_seq2seq(m, source, &in, err);
      tokens_release(&in);
      if (!s->trace) goto fail;
      if (k > 0) share_encoder(s->trace, g->steps[0].trace);
      model_forward(s->trace);
      if (!record(g, s, s->trace)) goto oom;
    } else if (k == 0) { // the prompt's full trace; its keys and values fill the cache
      if (!(s->trace = gen_trace_ids(m, g->ids, g->base, 1.0f, err))) goto fail;
      if (!record(g, s, s->trace)) goto oom;
      if (g->limit > 1) {
        if (!kv_init(&cache, m, g->base + g->limit, err)) goto fail;
        if (!(probs = malloc(sizeof(float) * (size_t)m->cfg.V))) goto oom;
        kv_fill(&cache, s->trace);
      }
    } else if (!causal_step(g, &cache, probs, k, err))
      goto fail;
    g->n_steps++;
    g->ids[g->base + k] = s->token;
    if (s->token == g->end_token) {
      g->ended = true;
      break;
    }
  }
  kv_free(&cache);
  free(probs);
  return g;
oom:
  err_set(err, "out of memory");
fail:
  kv_free(&cache);
  free(probs);
  gen_free(g);
  return NULL;
}

Trace *gen_step_trace(const Generation *g, int k, Err *err) {
  GenStep *s = &g->steps[k];
  if (!s->trace) s->trace = gen_trace_ids(g->model, g->ids, g->base + k, 1.0f, err);
  return s->trace;
}

void gen_step_release(const Generation *g, int k) {
  if (g->seq2seq || k == 0) return;
  trace_free(g->steps[k].trace);
  g->steps[k].trace = NULL;
}

void gen_free(Generation *g) {
  if (!g) return;
  for (int k = 0; g->steps && k < g->limit; k++) trace_free(g->steps[k].trace); // NULL: never made
  free(g->steps);
  free(g->ids);
  free(g);
}

char *gen_sentence(const Generation *g) {
  size_t n = 1;
  for (int k = 0; k < g->n_steps; k++) n += strlen(gen_word(g, g->steps[k].token)) + 1;
  char *s = malloc(n), *p = s;
  if (!s) return NULL;
  for (int k = 0; k < g->n_steps; k++) {
    if (g->ended && k == g->n_steps - 1) break;
    size_t w = strlen(gen_word(g, g->steps[k].token));
    if (p > s) *p++ = ' ';
    memcpy(p, gen_word(g, g->steps[k].token), w);
    p += w;
  }
  *p = 0;
  return s;
}
