// test_llama_threads.c -- today's decoders (issue 34) at a size where the forward shares its work:
// one thread and two give the same bits, and a token through the key/value cache gives the logits
// of a full recompute.
//
// Random Llama-style models (RMSNorm, RoPE in halves and in pairs, grouped-query attention with 2
// query heads per K/V head, SwiGLU, with and without QK-norm, a head tied to E), D = 128, 4 heads
// on 2, F = 384, two layers, 60 tokens: every product, the attention (heads and the packing of each
// K/V head) and the row stages are large enough to be cut between threads (forward.c's
// SPLIT_MIN_WORK). The whole trace (every stage) after a forward on one thread equals the one on
// two threads bit for bit; the cached token's logits too; and they are within 1e-5 (relative to the
// largest) of the last row of a full trace of the 61 tokens. Once more with a vocabulary of 1000 words
// and the head packed, as a model converted from BF16 has it (model.h, head_packed): the head's
// product is then cut between threads too.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "forward.h"  // defines: model_forward, forward_set_threads, KVCache, kv_init, kv_fill, kv_push
#include "gemm.h"     // defines: gemm_pack, gemm_supported
#include "generate.h" // defines: gen_trace_ids, gen_argmax
#include "model.h"    // defines: Model, ModelConfig, model_random
#include "trace.h"    // defines: Trace

enum { L = 60 };

static float final_gain[128]; // the final RMSNorm's gain (a random model has no final norm of its own)

static Model *modern_model(RopeStyle rope, bool qk_norm, bool packed_head) {
  Err err = {0};
  Vocab v = {0};
  char words[8000] = "<unk>\nthe\ncat\nsat\non\nmat\nby\nbank\nriver";
  for (int w = 9, n = (int)strlen(words); packed_head && w < 1000; w++)
    n += snprintf(words + n, sizeof words - (size_t)n, "\nw%d", w);
  CHECK(vocab_from_lines(&v, words, &err), "%s", err.msg);
  ModelConfig c = model_config_default();
  c.D = 128, c.H = 4, c.H_kv = 2, c.F = 384, c.n_layers = 2;
  c.activation = ACT_SILU, c.norm_first = c.causal = true, c.no_pos = true;
  c.rms_norm = c.gated = true, c.rope = rope, c.rope_theta = 10000.0f, c.qk_norm = qk_norm;
  Model *m = model_random(&c, &v, 34, &err);
  vocab_free(&v);
  CHECK(m != NULL, "random modern model: %s", err.msg);
  if (m) { // a final RMSNorm and a head tied to E (a random model has neither of its own)
    for (int j = 0; j < 128; j++) final_gain[j] = 0.5f + (float)j / 128.0f;
    m->has_head = m->tie_head = m->has_final_norm = true;
    m->head_weight = m->embed;
    m->norm_weight = final_gain;
    if (packed_head && gemm_supported())
      CHECK(gemm_pack(&m->head_packed, mat_view(m->head_weight, m->cfg.V, m->cfg.D)), "out of memory");
  }
  return m;
}

static void check_model(RopeStyle rope, bool qk_norm, bool packed_head) {
  const char *name = packed_head          ? "halves, packed head of 1000 words"
                     : rope == ROPE_PAIRS ? (qk_norm ? "pairs, QK-norm" : "pairs")
                                          : (qk_norm ? "halves, QK-norm" : "halves");
  Model *m = modern_model(rope, qk_norm, packed_head);
  if (!m) return;
  Err err = {0};
  int ids[L + 1];
  for (int i = 0; i < L; i++) ids[i] = 1 + (i * 7 + i / 3) % 8;
  Trace *t = gen_trace_ids(m, ids, L, 1.0f, &err);
  CHECK(t != NULL, "%s: %s", name, err.msg);
  if (!t) {
    model_free(m);
    return;
  }
  size_t bytes = sizeof(float) * (size_t)t->block_floats;
  float *one = malloc(bytes);
  CHECK(one != NULL, "out of memory");
  forward_set_threads(1);
  model_forward(t);
  memcpy(one, t->block, bytes);
  forward_set_threads(2);
  model_forward(t);
  for (int k = 0; k < t->n; k++) {
    const TraceTensor *x = &t->t[k];
    if (x->data < t->block || x->data >= t->block + t->block_floats) continue; // a weight
    size_t n = (size_t)x->heads * x->rows * x->cols;
    CHECK(!memcmp(one + (x->data - t->block), x->data, sizeof(float) * n), "%s: %s differs on two threads",
          name, x->name);
  }

  // a token through the cache, on one thread and on two, against the full trace of L + 1 tokens
  KVCache c1, c2;
  bool ok = kv_init(&c1, m, L + 1, &err) && kv_init(&c2, m, L + 1, &err);
  CHECK(ok, "%s: %s", name, err.msg);
  if (ok) {
    kv_fill(&c1, t);
    kv_fill(&c2, t);
    ids[L] = gen_argmax(c1.logits, m->cfg.V);
    forward_set_threads(1);
    kv_push(&c1, ids[L]);
    forward_set_threads(2);
    kv_push(&c2, ids[L]);
    forward_set_threads(1);
    CHECK(!memcmp(c1.logits, c2.logits, sizeof(float) * (size_t)m->cfg.V),
          "%s: cached logits differ on two threads", name);
    Trace *full = gen_trace_ids(m, ids, L + 1, 1.0f, &err);
    CHECK(full != NULL, "%s: %s", name, err.msg);
    if (full) {
      const TraceTensor *z = &full->t[full->logits];
      const float *last = z->data + (size_t)L * z->stride;
      double d = 0, big = 1;
      for (int j = 0; j < m->cfg.V; j++)
        d = fmax(d, fabs(c1.logits[j] - last[j])), big = fmax(big, fabs(last[j]));
      CHECK(d <= 1e-5 * big, "%s: cached logits differ from a full recompute by %g (largest %g)", name, d,
            big);
      trace_free(full);
    }
    kv_free(&c1);
    kv_free(&c2);
  }
  forward_set_threads(1);
  free(one);
  trace_free(t);
  model_free(m);
}

int main(void) {
  check_model(ROPE_HALF, false, false);
  check_model(ROPE_HALF, true, false);
  check_model(ROPE_PAIRS, false, false);
  check_model(ROPE_HALF, false, true);
  return check_exit("test_llama_threads");
}
