// fuzz_llama_config.c -- libFuzzer target for the config reader of today's decoders (issue 34): a
// Llama, Qwen 2 or Qwen 3 config.json read by hub_llama_config (the step hub_read takes before it
// opens the weights), the canonical metadata llama_config_meta writes from it (the step the GGUF
// loader shares), and the model the canonical loader makes of that metadata.
//
// An input is config.json's text. A rejected one comes with a one-line message. An accepted one
// holds what the reader promises: sizes in 1..2^20, num_key_value_heads dividing
// num_attention_heads, an even head width of at least 2, RMSNorm's epsilon in (0, 1), a finite
// rope_theta > 0, Llama 3's rope_scaling with factor > 0 and high_freq_factor > low_freq_factor, a
// known activation. Its metadata has at most LLAMA_CONFIG_KEYS distinct keys and every number reads
// back as the config's. When the model is small (at most 2^16 weights), the canonical tensors the
// hub loader makes for it (zero weights, unit gains, its names and shapes) with that metadata must
// make a model (model_from_st) of the config's sizes, and a forward pass of three tokens runs: a
// config the reader accepts, with weights of its shapes, opens (or, for a width the canonical form
// does not take, D < 2 or more heads than D, is refused in one line). Any crash, sanitizer report or
// broken promise (__builtin_trap) is a bug. This is fuzz_hub's config step without the folder's
// files, tokenizer.json and safetensors: 11 000 runs per CPU second from its seeds, about 3 900 once
// its corpus is mostly small models that load and run (fuzz_hub: about 3 000; FUZZING.md).
//
//   CC=clang cmake -S . -B build-fuzz -DSF_FUZZ=ON -DSF_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
//   cmake --build build-fuzz --target fuzz_llama_config
//   mkdir -p /tmp/corpus && build-fuzz/tests/fuzz_llama_config /tmp/corpus tests/fuzz/corpus/llama_config
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward.h"      // defines: model_forward
#include "hub.h"          // defines: hub_llama_config, HubLlama
#include "llama_config.h" // defines: llama_config_meta, LLAMA_CONFIG_KEYS
#include "model.h"        // defines: Model, model_from_st, model_free
#include "nocov.h"        // defines: SF_NO_COVERAGE
#include "trace.h"        // defines: Trace, trace_new

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_llama_config: broken promise: %s\n", #x);                                        \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

#define SMALL (1 << 16) // weights of a model the target builds and loads

static const char *value(const StFile *f, const char *key) {
  const char *v = NULL;
  for (int i = 0; i < f->n_meta; i++)
    if (!strcmp(f->keys[i], key)) {
      PROMISE(v == NULL); // each key once
      v = f->values[i];
    }
  return v;
}

static long meta_long(const StFile *f, const char *key) {
  const char *v = value(f, key);
  PROMISE(v != NULL);
  char *end;
  long x = strtol(v, &end, 10);
  PROMISE(end != v && *end == 0);
  return x;
}

static double meta_double(const StFile *f, const char *key) {
  const char *v = value(f, key);
  PROMISE(v != NULL);
  char *end;
  double x = strtod(v, &end);
  PROMISE(end != v && *end == 0);
  return x;
}

// A canonical tensor [s0] or [s0, s1] of zeros (fill 0) or ones (fill 1). Without coverage
// (nocov.h): the fill loop was a tenth of the target's time and decides nothing.
SF_NO_COVERAGE static void add(StFile *f, const char *name, int64_t s0, int64_t s1, float fill) {
  StTensor *t = &f->tensors[f->n++];
  t->name = strdup(name);
  t->ndim = s1 < 0 ? 1 : 2;
  t->shape[0] = s0, t->shape[1] = s1 < 0 ? 0 : s1;
  t->count = s1 < 0 ? s0 : s0 * s1;
  t->data = malloc(sizeof(float) * (size_t)(t->count ? t->count : 1));
  PROMISE(t->name && t->data);
  for (int64_t i = 0; i < t->count; i++) t->data[i] = fill;
  snprintf(t->dtype, sizeof t->dtype, "F32");
}

static void add_meta(StFile *f, const char *key, char *v) {
  f->keys[f->n_meta] = strdup(key), f->values[f->n_meta] = v, f->n_meta++;
  PROMISE(f->keys[f->n_meta - 1] && v);
}

// The canonical file the hub loader makes of a checkpoint of these shapes (hub.c, llama()), with
// meta's keys; model_from_st must take it.
static void load_small(const HubLlama *h, StFile *meta) {
  const LlamaConfig *c = &h->c;
  const int64_t D = c->D, QKV = (int64_t)(c->H + 2 * c->Hk) * c->dk, QD = (int64_t)c->H * c->dk;
  StFile f = {0};
  int cap = 4 + 12 * c->L; // at most 11 a layer
  f.tensors = calloc((size_t)cap, sizeof(StTensor));
  f.keys = calloc(LLAMA_CONFIG_KEYS + 4, sizeof(char *));
  f.values = calloc(LLAMA_CONFIG_KEYS + 4, sizeof(char *));
  PROMISE(f.tensors && f.keys && f.values);
  for (int i = 0; i < meta->n_meta; i++) add_meta(&f, meta->keys[i], strdup(meta->values[i]));
  // the vocabulary: V distinct labels, as llama_vocab writes them for ids without a token
  char *vocab = malloc((size_t)h->V * 24 + 1), *p = vocab;
  PROMISE(vocab != NULL);
  for (int i = 0; i < h->V; i++) p += sprintf(p, i + 1 < h->V ? "<|unused %d|>\n" : "<|unused %d|>", i);
  add_meta(&f, "vocab", vocab);
  add_meta(&f, "tokenizer", strdup("tokenizer.json"));
  add(&f, "embed.weight", h->V, D, 0);
  if (!c->tie) add(&f, "head.weight", h->V, D, 0);
  for (int i = 0; i < c->L; i++) {
    char n[96];
#define NAME(s) (snprintf(n, sizeof n, "layers.%d.%s", i, s), n)
    add(&f, NAME("norm1.weight"), D, -1, 1);
    add(&f, NAME("self_attn.in_proj_weight"), QKV, D, 0);
    if (h->family == HUB_QWEN2 || h->attn_bias) add(&f, NAME("self_attn.in_proj_bias"), QKV, -1, 0);
    add(&f, NAME("self_attn.out_proj.weight"), D, QD, 0);
    if (h->attn_bias && h->family != HUB_QWEN2) add(&f, NAME("self_attn.out_proj.bias"), D, -1, 0);
    if (h->family == HUB_QWEN3) {
      add(&f, NAME("self_attn.q_norm.weight"), c->dk, -1, 1);
      add(&f, NAME("self_attn.k_norm.weight"), c->dk, -1, 1);
    }
    add(&f, NAME("norm2.weight"), D, -1, 1);
    add(&f, NAME("gate.weight"), c->F, D, 0);
    add(&f, NAME("linear1.weight"), c->F, D, 0);
    add(&f, NAME("linear2.weight"), D, c->F, 0);
#undef NAME
  }
  add(&f, "norm.weight", D, -1, 1);
  Err err = {0};
  PROMISE(st_index(&f, "<fuzz input>", &err));
  Model *m = model_from_st(&f, "<fuzz input>", &err);
  if (!m) { // refused in one line, and only for a size the canonical form does not take
    PROMISE(err.msg[0] != 0 && strchr(err.msg, '\n') == NULL);
    if (c->D >= 2 && c->H <= c->D)
      fprintf(stderr, "fuzz_llama_config: the model did not load: %s\n", err.msg);
    PROMISE(c->D < 2 || c->H > c->D);
    return;
  }
  const ModelConfig *mc = &m->cfg;
  PROMISE(mc->V == h->V && mc->D == c->D && mc->H == c->H && model_hkv(mc) == c->Hk &&
          model_dk(mc) == c->dk && mc->F == c->F && mc->n_layers == c->L);
  PROMISE(mc->rms_norm && mc->gated && mc->rope && mc->causal && mc->norm_first);
  PROMISE(mc->qk_norm == (h->family == HUB_QWEN3) && m->tie_head == c->tie);
  PROMISE(mc->rope_theta == (float)c->theta && fabsf(mc->ln_eps - (float)c->eps) <= 1e-6f * (float)c->eps);
  PROMISE(c->rope_factor <= 0 ||
          (mc->rope_factor == (float)c->rope_factor && mc->rope_orig == (int)c->rope_orig));
  int ids[3] = {0, h->V - 1, h->V / 2};
  char *words[3] = {m->vocab.words[0], m->vocab.words[h->V - 1], m->vocab.words[h->V / 2]};
  bool unknown[3] = {false, false, false};
  Tokens tok = {.n = 3, .ids = ids, .words = words, .unknown = unknown};
  Trace *t = trace_new(m, &tok, &err);
  if (t) {
    model_forward(t);
    trace_free(t);
  } else {
    PROMISE(err.msg[0] != 0 && strchr(err.msg, '\n') == NULL);
  }
  model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  HubLlama h;
  Err err = {0};
  if (!hub_llama_config((const char *)data, size, "config.json", &h, &err)) {
    PROMISE(err.msg[0] != 0 && strchr(err.msg, '\n') == NULL);
    return 0;
  }
  const LlamaConfig *c = &h.c;
  const int big = 1 << 20;
  PROMISE(c->D >= 1 && c->D <= big && c->H >= 1 && c->H <= big && c->Hk >= 1 && c->Hk <= c->H &&
          c->H % c->Hk == 0 && c->F >= 1 && c->F <= big && c->L >= 1 && c->L <= big && h.V >= 1 &&
          h.V <= big);
  PROMISE(c->dk >= 2 && c->dk <= big && c->dk % 2 == 0);
  PROMISE(c->eps > 0 && c->eps < 1 && isfinite(c->theta) && c->theta > 0);
  PROMISE(c->activation && (!strcmp(c->activation, "silu") || !strcmp(c->activation, "gelu_tanh") ||
                            !strcmp(c->activation, "gelu")));
  PROMISE(c->rope_factor <= 0 || (isfinite(c->rope_factor) && c->rope_high > c->rope_low && c->rope_low > 0 &&
                                  c->rope_orig >= 1 && isfinite(c->rope_high)));
  // the metadata
  StFile f = {0};
  f.keys = calloc(LLAMA_CONFIG_KEYS, sizeof(char *));
  f.values = calloc(LLAMA_CONFIG_KEYS, sizeof(char *));
  PROMISE(f.keys && f.values);
  PROMISE(llama_config_meta(&f, LLAMA_CONFIG_KEYS, c));
  PROMISE(f.n_meta <= LLAMA_CONFIG_KEYS);
  PROMISE(meta_long(&f, "d_model") == c->D && meta_long(&f, "n_heads") == c->H &&
          meta_long(&f, "n_kv_heads") == c->Hk && meta_long(&f, "head_dim") == c->dk &&
          meta_long(&f, "d_ff") == c->F && meta_long(&f, "n_layers") == c->L);
  PROMISE(meta_double(&f, "rope_theta") == c->theta &&
          fabs(meta_double(&f, "layer_norm_eps") - c->eps) <= 1e-8 * c->eps);
  PROMISE(!strcmp(value(&f, "activation"), c->activation) && !strcmp(value(&f, "norm"), "rmsnorm"));
  PROMISE((value(&f, "tie_head") != NULL) == c->tie);
  if (c->rope_factor > 0)
    PROMISE(meta_double(&f, "rope_factor") == c->rope_factor &&
            meta_double(&f, "rope_low_freq_factor") == c->rope_low &&
            meta_double(&f, "rope_high_freq_factor") == c->rope_high &&
            meta_long(&f, "rope_original_max_pos") == (long)c->rope_orig);
  else
    PROMISE(value(&f, "rope_scaling") == NULL);
  // the model, when small
  int64_t D = c->D, weights = (int64_t)h.V * D * (c->tie ? 1 : 2) + D;
  int64_t layer = 2 * D + (int64_t)(c->H + 2 * c->Hk) * c->dk * (D + 1) + D * ((int64_t)c->H * c->dk + 1) +
                  3 * (int64_t)c->F * D + 2 * c->dk;
  if (c->L <= 64 && layer <= SMALL && weights + c->L * layer <= SMALL) load_small(&h, &f);
  st_free(&f);
  return 0;
}
