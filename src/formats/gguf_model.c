// gguf_model.c -- a GGUF file into the canonical model form (see gguf_model.h). An architecture is
// a table of the file's tensor names, their canonical names and the shapes its keys imply: the
// table is checked whole (names, shapes, types) and its memory counted before any tensor is
// converted, then converted tensor by tensor.
#include "gguf_model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpe.h"          // defines: bpe_load
#include "tokenizer.h"    // defines: vocab_word_ok
#include "tokjson.h"      // defines: tokjson_load
#include "gguf_quant.h"   // defines: gguf_dequantize, gguf_type_name, gguf_type_readable
#include "llama_config.h" // defines: LlamaConfig, llama_config_meta
#include "memsize.h"      // defines: mem_available, mem_max_floats
#include "model.h"        // defines: Model, model_from_st, model_free, model_packs_own
#include "safetensors.h"  // defines: st_map_min_bytes
#include "spill.h"        // defines: Spill, spill_open, spill_write, spill_map

#define GGUF_MAX_META 32
#define GGUF_MAX_SIZE (1 << 20) // any width, head count or length a key gives
#define GGUF_MAX_LAYERS 1024

typedef struct {
  char src[GGUF_MAX_NAME + 1]; // the file's name
  char dst[80];                // the canonical name
  int64_t s0, s1;              // the PyTorch shape the keys imply ([s0] when s1 < 0)
  bool optional;
  bool append;         // rows stacked under the entry before it (Q, K, V -> in_proj)
  int unperm;          // > 0: undo llama.cpp's permutation of Q/K rows for this many heads
  const GgufTensor *t; // found (NULL: an optional one absent)
} Map;

typedef struct {
  const char *name; // "GPT-2"
  Map *map;
  int n;
  int D, H, L, F, P;
  int Hk, dk; // today's decoders: K/V heads and the head width
  double eps, theta;
  double rope_factor, rope_low, rope_high, rope_orig; // Llama 3's RoPE scaling (factor 0: none)
  bool modern;                                        // llama, qwen2, qwen3: RMSNorm, RoPE, gated FFN, GQA
  int head;  // the index in map of an optional head tensor (-1: none)
  bool tied; // the head is absent, or holds the same bytes as the embedding (map[0]): not converted
} Arch;

// ---- keys

// An integer key in [lo, hi] (def when absent and def >= 0); false with one line otherwise.
static bool key_int(const GgufFile *g, const char *key, long def, long lo, long hi, int *out, Err *err) {
  uint64_t u;
  const GgufKV *kv = gguf_find(g, key);
  if (!kv) {
    if (def >= 0) return *out = (int)def, true;
    return err_set(err,
                   "%s: the key %s is missing: the file does not describe its model fully (convert it again)",
                   g->what, key);
  }
  if (!gguf_get_uint(g, key, &u))
    return err_set(err, "%s: the key %s is a %s, not a count", g->what, key, gguf_value_type_name(kv->type));
  if (u < (uint64_t)lo || u > (uint64_t)hi)
    return err_set(err, "%s: the key %s is %llu, not in %ld..%ld: the file is damaged", g->what, key,
                   (unsigned long long)u, lo, hi);
  *out = (int)u;
  return true;
}

static bool key_float(const GgufFile *g, const char *key, double def, double *out, Err *err) {
  const GgufKV *kv = gguf_find(g, key);
  if (!kv) return *out = def, true;
  if (!gguf_get_float(g, key, out) || !(*out > 0 && *out < 1))
    return err_set(err, "%s: the key %s must be a number between 0 and 1", g->what, key);
  return true;
}

// ---- the table

static int by_index_name(const void *a, const void *b) {
  return strcmp(((const GgufIndex *)a)->name, ((const GgufIndex *)b)->name);
}

static void add(Arch *a, bool optional, int64_t s0, int64_t s1, const char *dst, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static void add(Arch *a, bool optional, int64_t s0, int64_t s1, const char *dst, const char *fmt, ...) {
  Map *m = &a->map[a->n++];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m->src, sizeof m->src, fmt, ap);
  va_end(ap);
  snprintf(m->dst, sizeof m->dst, "%s", dst);
  m->s0 = s0, m->s1 = s1, m->optional = optional, m->t = NULL, m->append = false, m->unperm = 0;
}

// A LayerNorm (weight and bias [D]) or a linear layer (weight [out, in], bias [out]).
static void add_norm(Arch *a, const char *src, const char *dst, int D) {
  char d[80];
  snprintf(d, sizeof d, "%s.weight", dst);
  add(a, false, D, -1, d, "%s.weight", src);
  snprintf(d, sizeof d, "%s.bias", dst);
  add(a, false, D, -1, d, "%s.bias", src);
}
static void add_linear(Arch *a, const char *src, const char *dst_w, const char *dst_b, int out, int in) {
  add(a, false, out, in, dst_w, "%s.weight", src);
  add(a, false, out, -1, dst_b, "%s.bias", src);
}

static bool gpt2_table(const GgufFile *g, Arch *a, Err *err) {
  if (!key_int(g, "gpt2.embedding_length", -1, 1, GGUF_MAX_SIZE, &a->D, err) ||
      !key_int(g, "gpt2.attention.head_count", -1, 1, GGUF_MAX_SIZE, &a->H, err) ||
      !key_int(g, "gpt2.block_count", -1, 1, GGUF_MAX_LAYERS, &a->L, err) ||
      !key_int(g, "gpt2.context_length", -1, 1, GGUF_MAX_SIZE, &a->P, err) ||
      !key_int(g, "gpt2.feed_forward_length", 4L * a->D, 1, 4L * GGUF_MAX_SIZE, &a->F, err) ||
      !key_float(g, "gpt2.attention.layer_norm_epsilon", 1e-5, &a->eps, err))
    return false;
  const GgufTensor *e = gguf_find_tensor(g, "token_embd.weight");
  if (!e || e->ndim != 2)
    return err_set(err, "%s: tensor token_embd.weight [V, %d] is %s: this is not a complete GPT-2 file",
                   g->what, a->D, e ? "not 2-D" : "missing");
  int64_t V = e->shape[0], D = a->D, F = a->F;
  a->name = "GPT-2";
  a->map = calloc((size_t)(5 + 12 * a->L), sizeof *a->map);
  if (!a->map) return err_set(err, "out of memory");
  add(a, false, V, D, "embed.weight", "token_embd.weight");
  add(a, false, a->P, D, "pos_embed.weight", "position_embd.weight");
  a->head = a->n;
  add(a, true, V, D, "head.weight", "output.weight");
  add_norm(a, "output_norm", "norm", a->D);
  for (int i = 0; i < a->L; i++) {
    char s[48], d[64], d2[64];
    snprintf(s, sizeof s, "blk.%d.attn_norm", i), snprintf(d, sizeof d, "layers.%d.norm1", i);
    add_norm(a, s, d, a->D);
    snprintf(s, sizeof s, "blk.%d.attn_qkv", i);
    snprintf(d, sizeof d, "layers.%d.self_attn.in_proj_weight", i);
    snprintf(d2, sizeof d2, "layers.%d.self_attn.in_proj_bias", i);
    add_linear(a, s, d, d2, 3 * a->D, a->D);
    snprintf(s, sizeof s, "blk.%d.attn_output", i);
    snprintf(d, sizeof d, "layers.%d.self_attn.out_proj.weight", i);
    snprintf(d2, sizeof d2, "layers.%d.self_attn.out_proj.bias", i);
    add_linear(a, s, d, d2, a->D, a->D);
    snprintf(s, sizeof s, "blk.%d.ffn_norm", i), snprintf(d, sizeof d, "layers.%d.norm2", i);
    add_norm(a, s, d, a->D);
    snprintf(s, sizeof s, "blk.%d.ffn_up", i);
    snprintf(d, sizeof d, "layers.%d.linear1.weight", i),
        snprintf(d2, sizeof d2, "layers.%d.linear1.bias", i);
    add_linear(a, s, d, d2, (int)F, a->D);
    snprintf(s, sizeof s, "blk.%d.ffn_down", i);
    snprintf(d, sizeof d, "layers.%d.linear2.weight", i),
        snprintf(d2, sizeof d2, "layers.%d.linear2.bias", i);
    add_linear(a, s, d, d2, a->D, (int)F);
  }
  return true;
}

// Llama 3.1+'s scaled RoPE: llama.cpp's converter writes no keys but rope_freqs.weight, each
// frequency's divisor (1 for short wavelengths, factor for long ones, a blend between), computed
// from rope_scaling's factor, low_freq_factor, high_freq_factor and original_max_position_embeddings.
// Those are found again by trying the values Llama 3.x uses (factor: the last divisor) and
// recomputing every divisor as the converter does; a file they do not reproduce is refused.
static bool rope_llama3(const GgufFile *g, Arch *a, const GgufTensor *rf, Err *err) {
  int n = a->dk / 2;
  if (rf->ndim != 1 || rf->count != n || !gguf_type_readable(rf->type))
    return err_set(err, "%s: tensor rope_freqs.weight is not %d readable numbers (one per rotated pair)",
                   g->what, n);
  float *buf = malloc(sizeof(float) * (size_t)n);
  if (!buf) return err_set(err, "out of memory");
  if (!gguf_dequantize(rf->type, rf->data, buf, n, err)) return free(buf), false;
  double factor = buf[n - 1];
  static const double ORIG[] = {8192, 4096, 2048, 1024, 512, 256, 128, 65536, 32768, 16384, 131072};
  static const double LOW[] = {1, 2}, HIGH[] = {4, 8};
  for (size_t o = 0; o < sizeof ORIG / sizeof *ORIG; o++)
    for (int l = 0; l < 2; l++)
      for (int h = 0; h < 2; h++) {
        bool same = factor >= 1;
        for (int k = 0; same && k < n; k++) {
          float freq = (float)(1.0 / pow(a->theta, (double)(float)(2 * k) / (double)a->dk));
          double wavelen = 2 * 3.14159265358979323846 / freq, want;
          if (wavelen < ORIG[o] / HIGH[h])
            want = 1;
          else if (wavelen > ORIG[o] / LOW[l])
            want = factor;
          else {
            double smooth = (ORIG[o] / wavelen - LOW[l]) / (HIGH[h] - LOW[l]);
            want = 1 / ((1 - smooth) / factor + smooth);
          }
          same = fabs(want - buf[k]) <= 1e-4 * want;
        }
        if (same) {
          a->rope_factor = factor, a->rope_low = LOW[l], a->rope_high = HIGH[h], a->rope_orig = ORIG[o];
          free(buf);
          return true;
        }
      }
  free(buf);
  return err_set(err,
                 "%s: rope_freqs.weight is not Llama 3's scaling for any usual original context length: "
                 "Stepformer cannot read this RoPE scaling",
                 g->what);
}

// Llama, Qwen 2, Qwen 3 (llama.cpp's LLM_ARCH_LLAMA, QWEN2, QWEN3): the keys under the
// architecture's name, Q/K/V stacked into in_proj, Llama's Q and K rows un-permuted (its converter
// interleaves each head's halves for the pairwise RoPE; Hugging Face rotates halves: rope_style
// half then gives Hugging Face's Q and K, stage for stage).
static bool llama_table(const GgufFile *g, Arch *a, const char *arch, Err *err) {
  char k[96];
#define KEY(s) (snprintf(k, sizeof k, "%s.%s", arch, s), k)
  if (!key_int(g, KEY("embedding_length"), -1, 2, GGUF_MAX_SIZE, &a->D, err) ||
      !key_int(g, KEY("attention.head_count"), -1, 1, GGUF_MAX_SIZE, &a->H, err) ||
      !key_int(g, KEY("attention.head_count_kv"), a->H, 1, a->H, &a->Hk, err) ||
      !key_int(g, KEY("block_count"), -1, 1, GGUF_MAX_LAYERS, &a->L, err) ||
      !key_int(g, KEY("feed_forward_length"), -1, 1, 4L * GGUF_MAX_SIZE, &a->F, err) ||
      !key_int(g, KEY("attention.key_length"), a->D / a->H, 2, GGUF_MAX_SIZE, &a->dk, err) ||
      !key_float(g, KEY("attention.layer_norm_rms_epsilon"), 1e-5, &a->eps, err))
    return false;
  a->theta = 10000;
  if (gguf_find(g, KEY("rope.freq_base")) && (!gguf_get_float(g, k, &a->theta) || !(a->theta > 1)))
    return err_set(err, "%s: the key %s must be a number above 1", g->what, k);
  int vl, rd;
  if (!key_int(g, KEY("attention.value_length"), a->dk, 1, GGUF_MAX_SIZE, &vl, err) ||
      !key_int(g, KEY("rope.dimension_count"), a->dk, 1, GGUF_MAX_SIZE, &rd, err))
    return false;
  if (vl != a->dk || rd != a->dk)
    return err_set(err,
                   "%s: value heads of %d or a RoPE over %d of a head's %d dimensions: Stepformer rotates "
                   "whole heads of one width",
                   g->what, vl, rd, a->dk);
  const char *st;
  size_t n;
  if (gguf_get_str(g, KEY("rope.scaling.type"), &st, &n) && !(n == 4 && !memcmp(st, "none", 4)))
    return err_set(err,
                   "%s: RoPE scaling \"%.*s\" is not read yet (Stepformer reads unscaled RoPE from GGUF)",
                   g->what, (int)(n < 20 ? n : 20), st);
  const GgufTensor *rf = gguf_find_tensor(g, "rope_freqs.weight");
  if (rf && !rope_llama3(g, a, rf, err)) return false;
#undef KEY
  if (a->H % a->Hk)
    return err_set(err, "%s: %d K/V heads do not divide %d query heads", g->what, a->Hk, a->H);
  if (a->dk % 2) return err_set(err, "%s: heads of %d dimensions: RoPE rotates pairs", g->what, a->dk);
  const GgufTensor *e = gguf_find_tensor(g, "token_embd.weight");
  if (!e || e->ndim != 2)
    return err_set(err, "%s: tensor token_embd.weight [V, %d] is %s: this is not a complete file", g->what,
                   a->D, e ? "not 2-D" : "missing");
  bool llama = !strcmp(arch, "llama"), qwen3 = !strcmp(arch, "qwen3");
  a->name = llama ? "Llama" : qwen3 ? "Qwen 3" : "Qwen 2";
  a->modern = true;
  int64_t V = e->shape[0], D = a->D, F = a->F, QD = (int64_t)a->H * a->dk, KD = (int64_t)a->Hk * a->dk;
  a->map = calloc((size_t)(4 + 14 * a->L), sizeof *a->map);
  if (!a->map) return err_set(err, "out of memory");
  add(a, false, V, D, "embed.weight", "token_embd.weight");
  a->head = a->n;
  add(a, true, V, D, "head.weight", "output.weight");
  add(a, false, D, -1, "norm.weight", "output_norm.weight");
  for (int i = 0; i < a->L; i++) {
    char d[80];
#define DST(s) (snprintf(d, sizeof d, "layers.%d.%s", i, s), d)
    add(a, false, D, -1, DST("norm1.weight"), "blk.%d.attn_norm.weight", i);
    add(a, false, QD, D, DST("self_attn.in_proj_weight"), "blk.%d.attn_q.weight", i);
    a->map[a->n - 1].unperm = llama ? a->H : 0;
    add(a, false, KD, D, d, "blk.%d.attn_k.weight", i);
    a->map[a->n - 1].unperm = llama ? a->Hk : 0, a->map[a->n - 1].append = true;
    add(a, false, KD, D, d, "blk.%d.attn_v.weight", i);
    a->map[a->n - 1].append = true;
    add(a, true, QD, -1, DST("self_attn.in_proj_bias"), "blk.%d.attn_q.bias", i);
    a->map[a->n - 1].unperm = llama ? a->H : 0;
    add(a, true, KD, -1, d, "blk.%d.attn_k.bias", i);
    a->map[a->n - 1].unperm = llama ? a->Hk : 0, a->map[a->n - 1].append = true;
    add(a, true, KD, -1, d, "blk.%d.attn_v.bias", i);
    a->map[a->n - 1].append = true;
    add(a, false, D, QD, DST("self_attn.out_proj.weight"), "blk.%d.attn_output.weight", i);
    add(a, !qwen3, a->dk, -1, DST("self_attn.q_norm.weight"), "blk.%d.attn_q_norm.weight", i);
    add(a, !qwen3, a->dk, -1, DST("self_attn.k_norm.weight"), "blk.%d.attn_k_norm.weight", i);
    add(a, false, D, -1, DST("norm2.weight"), "blk.%d.ffn_norm.weight", i);
    add(a, false, F, D, DST("gate.weight"), "blk.%d.ffn_gate.weight", i);
    add(a, false, F, D, DST("linear1.weight"), "blk.%d.ffn_up.weight", i);
    add(a, false, D, F, DST("linear2.weight"), "blk.%d.ffn_down.weight", i);
#undef DST
  }
  return true;
}

static void shape_str(char *buf, size_t cap, int64_t s0, int64_t s1) {
  if (s1 < 0)
    snprintf(buf, cap, "[%lld]", (long long)s0);
  else
    snprintf(buf, cap, "[%lld, %lld]", (long long)s0, (long long)s1);
}

// The architecture's table, every tensor found with its shape and a type Stepformer reads.
static bool make_table(const GgufFile *g, Arch *a, Err *err) {
  memset(a, 0, sizeof *a);
  a->head = -1;
  const char *arch;
  size_t n;
  if (!gguf_get_str(g, "general.architecture", &arch, &n))
    return err_set(err,
                   "%s: the key general.architecture is missing: the file does not say what model it holds",
                   g->what);
  char name[16];
  snprintf(name, sizeof name, "%.*s", (int)(n < 15 ? n : 15), arch);
  if (n < 15 && !strcmp(name, "gpt2")) {
    if (!gpt2_table(g, a, err)) return false;
  } else if (n < 15 && (!strcmp(name, "llama") || !strcmp(name, "qwen2") || !strcmp(name, "qwen3"))) {
    if (!llama_table(g, a, name, err)) return false;
  } else {
    return err_set(
        err,
        "%s: architecture \"%.*s\" is not one Stepformer opens from a GGUF file (gpt2, llama, qwen2, "
        "qwen3)",
        g->what, (int)(n < 40 ? n : 40), arch);
  }
  for (int i = 0; i < a->n; i++) {
    Map *m = &a->map[i];
    const GgufTensor *t = gguf_find_tensor(g, m->src);
    char want[64];
    shape_str(want, sizeof want, m->s0, m->s1);
    if (!t) {
      if (m->optional) continue;
      return err_set(err, "%s: tensor %s %s is missing: this is not a complete %s file", g->what, m->src,
                     want, a->name);
    }
    int nd = m->s1 < 0 ? 1 : 2;
    if (t->ndim != nd || t->shape[0] != m->s0 || (nd == 2 && t->shape[1] != m->s1)) {
      char got[64];
      shape_str(got, sizeof got, t->shape[0], t->ndim >= 2 ? t->shape[1] : -1);
      return err_set(
          err, "%s: tensor %s has shape %s%s but the file's keys say %s: the keys and the weights disagree",
          g->what, m->src, got, t->ndim > 2 ? " (and more)" : "", want);
    }
    if (!gguf_type_readable(t->type))
      return err_set(
          err,
          "%s: tensor %s has type %s, which Stepformer does not dequantize (F32, F16, BF16, Q8_0, Q4_0, "
          "Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K): requantize the file with llama-quantize",
          g->what, m->src, gguf_type_name(t->type));
    m->t = t;
  }
  for (int i = 1; i < a->n; i++) // a stacked group (Q, K, V biases) is there whole or not at all
    if (a->map[i].append && !a->map[i].t != !a->map[i - 1].t)
      return err_set(err, "%s: tensor %s is %s but %s is not: the file is damaged", g->what,
                     a->map[i].t ? a->map[i].src : a->map[i - 1].src, "there",
                     a->map[i].t ? a->map[i - 1].src : a->map[i].src);
  char beyond[64];
  snprintf(beyond, sizeof beyond, "blk.%d.attn_norm.weight", a->L);
  if (gguf_find_tensor(g, beyond))
    return err_set(err, "%s: tensor %s is a layer beyond block_count=%d: the keys and the weights disagree",
                   g->what, beyond, a->L);
  const GgufTensor *e = a->map[0].t, *h = a->head >= 0 ? a->map[a->head].t : NULL;
  a->tied = !h || (h->type == e->type && h->nbytes == e->nbytes && !memcmp(h->data, e->data, e->nbytes));
  return true;
}

// ---- memory

static uint64_t table_bytes(const Arch *a) {
  uint64_t b = 0;
  for (int i = 0; i < a->n; i++)
    if (a->map[i].t && !(i == a->head && a->tied)) b += 4 * (uint64_t)a->map[i].t->count;
  return b;
}

uint64_t gguf_estimate_bytes(const GgufFile *g, Err *err) {
  Arch a;
  uint64_t b = make_table(g, &a, err) ? table_bytes(&a) : 0;
  free(a.map);
  return b;
}

static void human(char *buf, size_t cap, uint64_t bytes) {
  if (bytes >= 1000000000ull)
    snprintf(buf, cap, "%.1f GB", bytes / 1e9);
  else if (bytes >= 1000000)
    snprintf(buf, cap, "%.1f MB", bytes / 1e6);
  else
    snprintf(buf, cap, "%.1f kB", bytes / 1e3);
}

// ---- the canonical file

static bool meta(StFile *f, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool meta(StFile *f, const char *key, const char *fmt, ...) {
  EXPECT(f->n_meta < GGUF_MAX_META);
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *v = malloc((size_t)n + 1), *k = strdup(key);
  if (!v || !k) return free(v), free(k), false;
  va_start(ap, fmt);
  vsnprintf(v, (size_t)n + 1, fmt, ap);
  va_end(ap);
  f->keys[f->n_meta] = k, f->values[f->n_meta] = v, f->n_meta++;
  return true;
}

// Takes over v (malloc'd) as metadata key.
static bool meta_take(StFile *f, const char *key, char *v) {
  EXPECT(f->n_meta < GGUF_MAX_META);
  char *k = strdup(key);
  if (!k) return free(v), false;
  f->keys[f->n_meta] = k, f->values[f->n_meta] = v, f->n_meta++;
  return true;
}

// Undoes llama.cpp's permutation of a [heads·hd (, cols)] block of rows: its row h·hd + 2j + p
// is Hugging Face's row h·hd + p·hd/2 + j (LlamaModel.permute swapped the two axes).
static bool unpermute(float *y, int64_t rows, int64_t cols, int heads, Err *err) {
  int64_t hd = rows / heads;
  float *tmp = malloc(sizeof(float) * (size_t)(rows * cols));
  if (!tmp) return err_set(err, "out of memory");
  memcpy(tmp, y, sizeof(float) * (size_t)(rows * cols));
  for (int64_t h = 0; h < heads; h++)
    for (int64_t j = 0; j < hd / 2; j++)
      for (int p = 0; p < 2; p++)
        memcpy(y + (h * hd + p * (hd / 2) + j) * cols, tmp + (h * hd + 2 * j + p) * cols,
               sizeof(float) * (size_t)cols);
  free(tmp);
  return true;
}

// The floats of entry i and the entries appended to it (one canonical tensor).
static int64_t entry_count(const Arch *a, int i) {
  int64_t count = 0;
  for (int k = i; k < a->n && (k == i || a->map[k].append); k++) count += a->map[k].t->count;
  return count;
}

// Where a converted tensor goes in the spill file: whole pages each, so that each tensor's pages can
// go back alone (st_release_pages).
static size_t spill_bytes(int64_t count) { return ((size_t)count * sizeof(float) + 4095) & ~(size_t)4095; }

// True for a layer's weight matrix (Q/K/V, output, the FFN's): what the forward multiplies from a
// packed copy (model_pack), never from the floats themselves. The embedding, the head and the norms
// are read by every forward.
static bool layer_matrix(const Map *m) { return m->s1 >= 0 && !strncmp(m->dst, "layers.", 7); }

// Entry i and the entries appended to it, dequantized into one new canonical tensor (rows
// stacked); the file's pages they came from go back. A layer matrix with a spill file (sp->fd >= 0)
// is written there at *off (which moves past it) and its data stays NULL until the file is mapped
// (gguf_to_canonical), dequantized first into `scratch` (room for the largest layer matrix, reused:
// the memory the packed copies take next is then fresh, not the pages of 150 buffers freed).
static bool convert(const GgufFile *g, StFile *out, const Arch *a, int i, Spill *sp, float *scratch,
                    size_t *off, Err *err) {
  const Map *m = &a->map[i];
  int64_t rows = 0, cols = m->s1 < 0 ? 1 : m->s1, count = entry_count(a, i);
  for (int k = i; k < a->n && (k == i || a->map[k].append); k++) rows += a->map[k].s0;
  bool spilled = sp->fd >= 0 && layer_matrix(m);
  float *y = spilled ? scratch : malloc(sizeof(float) * (size_t)(count ? count : 1));
  StTensor *o = &out->tensors[out->n];
  if (!y || !(o->name = strdup(m->dst))) {
    if (!spilled) free(y);
    return err_set(err, "out of memory");
  }
  int64_t at = 0;
  for (int k = i; k < a->n && (k == i || a->map[k].append); k++) {
    const Map *p = &a->map[k];
    if (!gguf_dequantize(p->t->type, p->t->data, y + at, p->t->count, err) ||
        (p->unperm && !unpermute(y + at, p->s0, cols, p->unperm, err))) {
      if (!spilled) free(y);
      free(o->name), o->name = NULL;
      return false;
    }
    if (g->mapped) st_release_pages(p->t->data, p->t->nbytes);
    at += p->t->count;
  }
  if (spilled) { // into the file's pages: the process keeps no copy
    bool w = spill_write(sp, *off, y, sizeof(float) * (size_t)count, err);
    y = NULL, *off += spill_bytes(count);
    if (!w) return free(o->name), o->name = NULL, false;
  }
  o->ndim = m->s1 < 0 ? 1 : 2;
  o->shape[0] = rows, o->shape[1] = m->s1 < 0 ? 0 : m->s1;
  o->count = count;
  o->data = y;
  snprintf(o->dtype, sizeof o->dtype, "F32");
  out->n++;
  return true;
}

// A name with its first ".<digits>." folded into ".{i}." (blk.3.ffn_up.weight -> blk.{i}.ffn_up.weight).
static void fold(char *out, size_t cap, const char *name) {
  size_t k = 0;
  bool folded = false;
  for (const char *s = name; *s && k + 5 < cap; s++) {
    if (!folded && *s == '.' && s[1] >= '0' && s[1] <= '9') {
      const char *e = s + 1;
      while (*e >= '0' && *e <= '9') e++;
      if (*e == '.') {
        memcpy(out + k, ".{i}", 4), k += 4, s = e - 1, folded = true;
        continue;
      }
    }
    out[k++] = *s;
  }
  out[k] = 0;
}

// Lines "pattern TYPE [shape] ×n" for every tensor (used or not), in the file's order.
static char *tensor_lines(const GgufFile *g, const bool *used, bool want_used) {
  uint64_t n = g->n_tensors;
  char(*pat)[192] = calloc((size_t)(n ? n : 1), sizeof *pat);
  int *count = calloc((size_t)(n ? n : 1), sizeof(int));
  size_t cap = 1;
  int np = 0;
  for (uint64_t i = 0; pat && count && i < n; i++) {
    if (used[i] != want_used) continue;
    const GgufTensor *t = &g->tensors[i];
    char f[GGUF_MAX_NAME + 8], p[192], shape[96];
    fold(f, sizeof f, t->name);
    size_t k = (size_t)snprintf(shape, sizeof shape, "[");
    for (int d = 0; d < t->ndim; d++)
      k += (size_t)snprintf(shape + k, sizeof shape - k, d ? ", %lld" : "%lld", (long long)t->shape[d]);
    snprintf(shape + k, sizeof shape - k, "]");
    snprintf(p, sizeof p, "%s %s %s", f, gguf_type_name(t->type), shape);
    int j = 0;
    while (j < np && strcmp(pat[j], p)) j++;
    if (j == np) snprintf(pat[np++], sizeof pat[0], "%s", p), cap += strlen(p) + 16;
    count[j]++;
  }
  char *s = pat && count ? malloc(cap) : NULL;
  if (s) {
    size_t k = 0;
    s[0] = 0;
    for (int j = 0; j < np; j++)
      k += (size_t)snprintf(s + k, cap - k, count[j] > 1 ? "%s%s ×%d" : "%s%s", j ? "\n" : "", pat[j],
                            count[j]);
  }
  free(pat), free(count);
  return s;
}

// "Q4_K ×13, F32 ×15" and the file's bits per weight.
static char *type_summary(const GgufFile *g, double *bits) {
  int count[GGML_N_TYPES] = {0};
  uint64_t weights = 0, bytes = 0;
  for (uint64_t i = 0; i < g->n_tensors; i++) {
    const GgufTensor *t = &g->tensors[i];
    count[t->type]++, weights += (uint64_t)t->count, bytes += t->nbytes;
  }
  *bits = weights ? 8.0 * (double)bytes / (double)weights : 0;
  char *s = malloc(GGML_N_TYPES * 40 + 1);
  if (!s) return NULL;
  size_t k = 0;
  s[0] = 0;
  for (int pass = 0; pass < 2; pass++) // the quantized types first
    for (int ty = 0; ty < GGML_N_TYPES; ty++)
      if (count[ty] && (pass == 0) == (gguf_type_bits((uint32_t)ty) < 16))
        k += (size_t)snprintf(s + k, GGML_N_TYPES * 40 + 1 - k, pass ? "%s%s ×%d" : "%s%s ×%d (%.4g bits)",
                              k ? ", " : "", gguf_type_name((uint32_t)ty), count[ty],
                              gguf_type_bits((uint32_t)ty));
  return s;
}

// ---- the tokenizer

static bool json_escape(char **p, const char *s, size_t n) {
  char *o = *p;
  *o++ = '"';
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\')
      *o++ = '\\', *o++ = (char)c;
    else if (c < 0x20)
      o += sprintf(o, "\\u%04x", c);
    else
      *o++ = (char)c;
  }
  *o++ = '"';
  *p = o;
  return true;
}

// tokenizer.ggml.tokens and .merges as bpe.h's vocab.json and merges.txt, then bpe_load.
static bool gpt2_tokenizer(const GgufFile *g, int64_t V, ModelTokenizer **out, Err *err) {
  const char *model;
  size_t n;
  if (!gguf_get_str(g, "tokenizer.ggml.model", &model, &n))
    return err_set(err, "%s: the key tokenizer.ggml.model is missing: the file holds no tokenizer", g->what);
  if (n != 4 || memcmp(model, "gpt2", 4))
    return err_set(err, "%s: tokenizer.ggml.model is \"%.*s\"; a GPT-2 file's is gpt2 (byte-level BPE)",
                   g->what, (int)(n < 40 ? n : 40), model);
  const GgufKV *tk = gguf_find(g, "tokenizer.ggml.tokens"), *mk = gguf_find(g, "tokenizer.ggml.merges");
  if (!tk || tk->type != GGUF_ARRAY || tk->elem_type != GGUF_STRING)
    return err_set(err, "%s: tokenizer.ggml.tokens is missing or not an array of strings", g->what);
  if (mk && (mk->type != GGUF_ARRAY || mk->elem_type != GGUF_STRING))
    return err_set(err, "%s: tokenizer.ggml.merges is not an array of strings", g->what);
  if ((int64_t)tk->n != V)
    return err_set(err,
                   "%s: tokenizer.ggml.tokens has %llu tokens but token_embd has %lld rows: the tokenizer "
                   "belongs to another model",
                   g->what, (unsigned long long)tk->n, (long long)V);
  uint64_t nm = mk ? mk->n : 0;
  const char **s = malloc(sizeof *s * (size_t)(V + nm + 1));
  size_t *len = malloc(sizeof *len * (size_t)(V + nm + 1));
  char *json = NULL, *merges = NULL;
  ModelTokenizer *t = calloc(1, sizeof *t);
  bool ok = false;
  if (!s || !len || !t) {
    err_set(err, "out of memory");
    goto done;
  }
  gguf_arr_strings(tk, s, len);
  if (mk) gguf_arr_strings(mk, s + V, len + V);
  size_t jcap = 4, mcap = 1; // every byte escaped at most 6 times; "id,\n" at most 24 bytes
  for (int64_t i = 0; i < V; i++) jcap += 6 * len[i] + 32;
  for (uint64_t i = 0; i < nm; i++) {
    mcap += len[V + i] + 1;
    if (memchr(s[V + i], '\n', len[V + i]) || memchr(s[V + i], 0, len[V + i])) {
      err_set(err, "%s: tokenizer.ggml.merges entry %llu holds a line break or a 0 byte: the file is damaged",
              g->what, (unsigned long long)i);
      goto done;
    }
  }
  json = malloc(jcap), merges = malloc(mcap);
  if (!json || !merges) {
    err_set(err, "out of memory");
    goto done;
  }
  char *p = json;
  *p++ = '{', *p++ = '\n';
  for (int64_t i = 0; i < V; i++) {
    json_escape(&p, s[i], len[i]);
    p += sprintf(p, ":%lld%s\n", (long long)i, i + 1 < V ? "," : "");
  }
  *p++ = '}';
  char *q = merges;
  for (uint64_t i = 0; i < nm; i++) {
    memcpy(q, s[V + i], len[V + i]);
    q += len[V + i];
    *q++ = '\n';
  }
  char vname[400], mname[400];
  snprintf(vname, sizeof vname, "%s (tokenizer.ggml.tokens, token i on line i+2)", g->what);
  snprintf(mname, sizeof mname, "%s (tokenizer.ggml.merges)", g->what);
  t->kind = TOK_BPE;
  ok = bpe_load(&t->bpe, json, (size_t)(p - json), vname, merges, (size_t)(q - merges), mname, err);
done:
  free(s), free(len), free(json), free(merges);
  if (!ok) return free(t), false;
  *out = t;
  return true;
}

// Today's decoders' byte-level BPE, written as the tokenizer.json the file's tokenizer.ggml.* keys
// describe and read by tokjson.h: tokens of type 3 (control) and 4 (user-defined) are its added
// tokens (control ones special), the others its vocabulary; tokenizer.ggml.pre picks the split
// (PRE below, llama.cpp's names for the splits Stepformer has), add_bos_token the BOS before the text.
static const char *const SPLIT_LLAMA3 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
static const char *const SPLIT_QWEN2 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
                                       "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// tokenizer.ggml.pre: llama.cpp's names (llama-vocab.cpp) of the splits Stepformer has, grouped as
// llama.cpp groups them; a name not here is refused (its split differs: deepseek, falcon, gpt-4o, ...).
typedef enum {
  PRE_GPT2,       // GPT-2's pattern (ByteLevel's)
  PRE_SMOLLM,     // every digit a word, then GPT-2's pattern
  PRE_LLAMA3,     // Llama 3's pattern, and a word that is a token is that token (ignore_merges)
  PRE_LLAMA3_ALL, // Llama 3's pattern, merged always
  PRE_QWEN2,      // Qwen 2's pattern (one digit a word)
} PreKind;
static const struct {
  const char *name;
  PreKind kind;
} PRE[] = {
    {"default", PRE_GPT2},
    {"gpt-2", PRE_GPT2},
    {"gpt2", PRE_GPT2},
    {"phi-2", PRE_GPT2},
    {"mpt", PRE_GPT2},
    {"olmo", PRE_GPT2},
    {"jais", PRE_GPT2},
    {"jina-es", PRE_GPT2},
    {"jina-de", PRE_GPT2},
    {"jina-v2-es", PRE_GPT2},
    {"jina-v2-de", PRE_GPT2},
    {"gigachat", PRE_GPT2},
    {"a.x-4.0", PRE_GPT2},
    {"mellum", PRE_GPT2},
    {"exaone4", PRE_GPT2},
    {"trillion", PRE_GPT2},
    {"granite-docling", PRE_GPT2},
    {"smollm", PRE_SMOLLM},
    {"starcoder", PRE_SMOLLM},
    {"refact", PRE_SMOLLM},
    {"command-r", PRE_SMOLLM},
    {"codeshell", PRE_SMOLLM},
    {"exaone", PRE_SMOLLM},
    {"minerva-7b", PRE_SMOLLM},
    {"mellum2", PRE_SMOLLM},
    {"llama-bpe", PRE_LLAMA3},
    {"llama3", PRE_LLAMA3},
    {"llama-v3", PRE_LLAMA3},
    {"falcon3", PRE_LLAMA3},
    {"falcon-h1", PRE_LLAMA3},
    {"pixtral", PRE_LLAMA3},
    {"midm-2.0", PRE_LLAMA3},
    {"lfm2", PRE_LLAMA3},
    {"dbrx", PRE_LLAMA3_ALL},
    {"smaug-bpe", PRE_LLAMA3_ALL},
    {"chatglm-bpe", PRE_LLAMA3_ALL},
    {"glm4", PRE_LLAMA3_ALL},
    {"qwen2", PRE_QWEN2},
    {"deepseek-r1-qwen", PRE_QWEN2},
    {"megrez", PRE_QWEN2},
    {"stablelm2", PRE_QWEN2},
    {"hunyuan", PRE_QWEN2},
    {"kormo", PRE_QWEN2},
    {"solar-open", PRE_QWEN2},
};

// The SentencePiece tokenizer (tokenizer.ggml.model = llama: Llama 2, TinyLlama, Mistral): tokens,
// scores and token types as tokjson_from_spm takes them; the defaults are llama.cpp's (BOS 1, EOS 2,
// unknown 0, add_bos_token and add_space_prefix true).
static bool spm_tokenizer(const GgufFile *g, int64_t V, ModelTokenizer **out, Err *err) {
  const GgufKV *tk = gguf_find(g, "tokenizer.ggml.tokens"), *sk = gguf_find(g, "tokenizer.ggml.scores"),
               *tt = gguf_find(g, "tokenizer.ggml.token_type");
  if (!tk || tk->type != GGUF_ARRAY || tk->elem_type != GGUF_STRING)
    return err_set(err, "%s: tokenizer.ggml.tokens is missing or not an array of strings", g->what);
  if ((int64_t)tk->n != V)
    return err_set(err,
                   "%s: tokenizer.ggml.tokens has %llu tokens but token_embd has %lld rows: the tokenizer "
                   "belongs to another model",
                   g->what, (unsigned long long)tk->n, (long long)V);
  if (!sk || sk->type != GGUF_ARRAY || (sk->elem_type != GGUF_F32 && sk->elem_type != GGUF_I32))
    return err_set(err,
                   "%s: tokenizer.ggml.scores is %s: a SentencePiece tokenizer merges by its tokens' scores "
                   "(float32 or int32, one per token)",
                   g->what, sk ? "not an array of float32 or int32" : "missing");
  if (sk->n != tk->n)
    return err_set(
        err, "%s: tokenizer.ggml.scores has %llu scores for %llu tokens: one per token, the file is damaged",
        g->what, (unsigned long long)sk->n, (unsigned long long)tk->n);
  if (tt && (tt->type != GGUF_ARRAY || tt->elem_type != GGUF_I32 || tt->n != tk->n))
    return err_set(err,
                   "%s: tokenizer.ggml.token_type is not an array of one int32 type per token (it has %llu "
                   "for %llu tokens)",
                   g->what, (unsigned long long)(tt->type == GGUF_ARRAY ? tt->n : 0),
                   (unsigned long long)tk->n);
  TokJsonSpm spm = {.n = (int)V, .bos = V > 1 ? 1 : -1, .eos = V > 2 ? 2 : -1, .unk = -1};
  spm.add_bos = true, spm.add_space_prefix = true;
  gguf_get_bool(g, "tokenizer.ggml.add_bos_token", &spm.add_bos);
  gguf_get_bool(g, "tokenizer.ggml.add_eos_token", &spm.add_eos);
  gguf_get_bool(g, "tokenizer.ggml.add_space_prefix", &spm.add_space_prefix);
  const char *keys[] = {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                        "tokenizer.ggml.unknown_token_id"};
  int *ids[] = {&spm.bos, &spm.eos, &spm.unk};
  for (int k = 0; k < 3; k++) {
    uint64_t u;
    if (!gguf_find(g, keys[k])) continue;
    if (!gguf_get_uint(g, keys[k], &u) || u >= (uint64_t)V)
      return err_set(err, "%s: %s is not a token id (0..%lld)", g->what, keys[k], (long long)V - 1);
    *ids[k] = (int)u;
  }
  const char **s = malloc(sizeof *s * (size_t)V);
  size_t *len = malloc(sizeof *len * (size_t)V);
  float *score = malloc(sizeof *score * (size_t)V);
  int *type = tt ? malloc(sizeof *type * (size_t)V) : NULL;
  ModelTokenizer *t = calloc(1, sizeof *t);
  bool ok = false;
  if (!s || !len || !score || (tt && !type) || !t) {
    err_set(err, "out of memory");
    goto done;
  }
  gguf_arr_strings(tk, s, len);
  for (int64_t i = 0; i < V; i++) {
    double d = 0;
    gguf_arr_number(sk, (uint64_t)i, &d);
    score[i] = (float)d;
    if (tt) gguf_arr_number(tt, (uint64_t)i, &d), type[i] = d >= -1e9 && d <= 1e9 ? (int)d : -1;
    if (tt && spm.unk < 0 && type[i] == TJ_TOKEN_UNKNOWN) spm.unk = (int)i;
  }
  if (!tt && !gguf_find(g, "tokenizer.ggml.unknown_token_id")) spm.unk = 0;
  char name[400];
  snprintf(name, sizeof name, "%s (tokenizer.ggml.*)", g->what);
  spm.name = name, spm.tokens = s, spm.lens = len, spm.scores = score, spm.types = type;
  t->kind = TOK_TOKJSON;
  ok = tokjson_from_spm(&t->tj, &spm, err);
done:
  free(s), free(len), free(score), free(type);
  if (!ok) return free(t), false;
  *out = t;
  return true;
}

static bool modern_tokenizer(const GgufFile *g, int64_t V, ModelTokenizer **out, Err *err) {
  const char *model, *pre = "default";
  size_t n, npre = 7;
  if (!gguf_get_str(g, "tokenizer.ggml.model", &model, &n))
    return err_set(err, "%s: the key tokenizer.ggml.model is missing: the file holds no tokenizer", g->what);
  if (n == 5 && !memcmp(model, "llama", 5)) return spm_tokenizer(g, V, out, err);
  if (n != 4 || memcmp(model, "gpt2", 4))
    return err_set(
        err,
        "%s: tokenizer.ggml.model \"%.*s\" is not read yet (Stepformer reads gpt2, byte-level BPE, "
        "and llama, SentencePiece)",
        g->what, (int)(n < 40 ? n : 40), model);
  gguf_get_str(g, "tokenizer.ggml.pre", &pre, &npre);
  char prename[48];
  snprintf(prename, sizeof prename, "%.*s", (int)(npre < 40 ? npre : 40), pre);
  size_t k = 0, npk = sizeof PRE / sizeof *PRE;
  while (k < npk && (strlen(PRE[k].name) != npre || memcmp(PRE[k].name, pre, npre))) k++;
  if (k == npk) {
    char known[1024];
    size_t at = 0;
    for (size_t i = 0; i < npk && at < sizeof known; i++)
      at += (size_t)snprintf(known + at, sizeof known - at, "%s%s", i ? ", " : "", PRE[i].name);
    return err_set(err,
                   "%s: tokenizer.ggml.pre \"%s\" is not a split Stepformer knows (it knows %s): convert the "
                   "model with one of these, or open its Hugging Face folder",
                   g->what, prename, known);
  }
  PreKind kind = PRE[k].kind;
  const char *pretok = NULL; // NULL: a Split, written below
  if (kind == PRE_GPT2)
    pretok = "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":true}";
  else if (kind == PRE_SMOLLM)
    pretok = "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Digits\",\"individual_digits\":true},"
             "{\"type\":\"ByteLevel\",\"add_prefix_space\":false,\"use_regex\":true}]}";
  const GgufKV *tk = gguf_find(g, "tokenizer.ggml.tokens"), *mk = gguf_find(g, "tokenizer.ggml.merges"),
               *tt = gguf_find(g, "tokenizer.ggml.token_type");
  if (!tk || tk->type != GGUF_ARRAY || tk->elem_type != GGUF_STRING)
    return err_set(err, "%s: tokenizer.ggml.tokens is missing or not an array of strings", g->what);
  if (mk && (mk->type != GGUF_ARRAY || mk->elem_type != GGUF_STRING))
    return err_set(err, "%s: tokenizer.ggml.merges is not an array of strings", g->what);
  if ((int64_t)tk->n != V)
    return err_set(err,
                   "%s: tokenizer.ggml.tokens has %llu tokens but token_embd has %lld rows: the tokenizer "
                   "belongs to another model",
                   g->what, (unsigned long long)tk->n, (long long)V);
  if (tt && (tt->type != GGUF_ARRAY || tt->n != tk->n))
    return err_set(err, "%s: tokenizer.ggml.token_type is not an array of one type per token", g->what);
  uint64_t bos = 0;
  bool add_bos = false;
  gguf_get_bool(g, "tokenizer.ggml.add_bos_token", &add_bos);
  if (add_bos && (!gguf_get_uint(g, "tokenizer.ggml.bos_token_id", &bos) || bos >= (uint64_t)V))
    return err_set(err, "%s: add_bos_token is set but tokenizer.ggml.bos_token_id is missing or not a token",
                   g->what);
  uint64_t nm = mk ? mk->n : 0;
  const char **s = malloc(sizeof *s * (size_t)(V + nm + 1));
  size_t *len = malloc(sizeof *len * (size_t)(V + nm + 1));
  char *json = NULL;
  ModelTokenizer *t = calloc(1, sizeof *t);
  bool ok = false;
  if (!s || !len || !t) {
    err_set(err, "out of memory");
    goto done;
  }
  gguf_arr_strings(tk, s, len);
  if (mk) gguf_arr_strings(mk, s + V, len + V);
  size_t cap = 1024 + 2 * strlen(SPLIT_QWEN2) + 64 * 2;
  for (int64_t i = 0; i < V; i++) cap += 2 * (6 * len[i] + 160);
  for (uint64_t i = 0; i < nm; i++) cap += 6 * len[V + i] + 8;
  if (!(json = malloc(cap))) {
    err_set(err, "out of memory");
    goto done;
  }
  char *p = json;
  p += sprintf(p, "{\"added_tokens\":[");
  bool first = true;
  for (int64_t i = 0; i < V; i++) {
    double ty = 1;
    if (tt) gguf_arr_number(tt, (uint64_t)i, &ty);
    if (ty != 3 && ty != 4) continue;
    p += sprintf(p, "%s{\"id\":%lld,\"content\":", first ? "" : ",", (long long)i);
    json_escape(&p, s[i], len[i]);
    p += sprintf(
        p, ",\"special\":%s,\"lstrip\":false,\"rstrip\":false,\"single_word\":false,\"normalized\":false}\n",
        ty == 3 ? "true" : "false");
    first = false;
  }
  p += sprintf(p, "],\"normalizer\":null,\"pre_tokenizer\":");
  if (pretok)
    p += sprintf(p, "%s", pretok);
  else {
    const char *re = kind == PRE_QWEN2 ? SPLIT_QWEN2 : SPLIT_LLAMA3;
    p += sprintf(p, "{\"type\":\"Sequence\",\"pretokenizers\":[{\"type\":\"Split\",\"pattern\":{\"Regex\":");
    json_escape(&p, re, strlen(re));
    p += sprintf(p,
                 "},\"behavior\":\"Isolated\",\"invert\":false},{\"type\":\"ByteLevel\",\"add_prefix_space\":"
                 "false,\"use_regex\":false}]}");
  }
  if (add_bos)
    p += sprintf(
        p,
        ",\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"bos\","
        "\"type_id\":0}},{\"Sequence\":{\"id\":\"A\",\"type_id\":0}}],\"special_tokens\":{\"bos\":{"
        "\"id\":\"bos\",\"ids\":[%llu],\"tokens\":[\"bos\"]}}}",
        (unsigned long long)bos);
  else
    p += sprintf(p, ",\"post_processor\":null");
  p += sprintf(p, ",\"decoder\":{\"type\":\"ByteLevel\"},\"model\":{\"type\":\"BPE\",\"vocab\":{\n");
  first = true;
  for (int64_t i = 0; i < V; i++) {
    double ty = 1;
    if (tt) gguf_arr_number(tt, (uint64_t)i, &ty);
    if (ty == 3 || ty == 4) continue;
    if (!first) *p++ = ',';
    json_escape(&p, s[i], len[i]);
    p += sprintf(p, ":%lld\n", (long long)i);
    first = false;
  }
  p += sprintf(p, "},\"ignore_merges\":%s,\"merges\":[", kind == PRE_LLAMA3 ? "true" : "false");
  for (uint64_t i = 0; i < nm; i++) {
    if (i) *p++ = ',';
    json_escape(&p, s[V + i], len[V + i]);
  }
  p += sprintf(p, "]}}");
  char name[400];
  snprintf(name, sizeof name, "%s (tokenizer.ggml.*)", g->what);
  t->kind = TOK_TOKJSON;
  ok = tokjson_load(&t->tj, json, (size_t)(p - json), name, err);
done:
  free(s), free(len), free(json);
  if (!ok) return free(t), false;
  *out = t;
  return true;
}

// The tokens of a today's-decoder file by id, newline-joined: metadata "vocab" (a token with a
// newline, empty or given before is "<|unused N|>", as the hub loader writes it).
static char *modern_vocab(const GgufFile *g) {
  const GgufKV *tk = gguf_find(g, "tokenizer.ggml.tokens");
  uint64_t V = tk->n;
  const char **s = malloc(sizeof *s * (size_t)(V + 1));
  size_t *len = malloc(sizeof *len * (size_t)(V + 1)), total = 1;
  if (!s || !len) return free(s), free(len), NULL;
  gguf_arr_strings(tk, s, len);
  for (uint64_t i = 0; i < V; i++) total += len[i] + 32;
  char *v = malloc(total), *p = v;
  // distinct: a sorted index of the tokens, each compared with its neighbour
  GgufIndex *ix = malloc(sizeof *ix * (size_t)(V + 1));
  char **c = calloc((size_t)(V + 1), sizeof *c);
  bool fine = v && ix && c;
  for (uint64_t i = 0; fine && i < V; i++) {
    c[i] = malloc(len[i] + 1);
    if (!c[i])
      fine = false;
    else
      memcpy(c[i], s[i], len[i]), c[i][len[i]] = 0, ix[i].name = c[i], ix[i].i = i;
  }
  if (fine) {
    qsort(ix, (size_t)V, sizeof *ix, by_index_name);
    bool *bad = calloc((size_t)(V + 1), sizeof *bad);
    fine = bad != NULL;
    for (uint64_t i = 0; fine && i < V; i++) {
      uint64_t id = ix[i].i;
      if (!vocab_word_ok(s[id], len[id])) bad[id] = true;
      if (i && !strcmp(ix[i].name, ix[i - 1].name)) bad[ix[i].i > ix[i - 1].i ? ix[i].i : ix[i - 1].i] = true;
    }
    for (uint64_t i = 0; fine && i < V; i++) {
      p += bad[i] ? sprintf(p, "<|unused %llu|>", (unsigned long long)i) : sprintf(p, "%s", c[i]);
      if (i + 1 < V) *p++ = '\n';
    }
    if (fine) *p = 0;
    free(bad);
  }
  for (uint64_t i = 0; c && i < V; i++) free(c[i]);
  free(c), free(ix), free(s), free(len);
  if (!fine) return free(v), NULL;
  return v;
}

// The tokens joined by newlines: metadata "vocab" (model_from_st's distinct words).
static char *vocab_lines(const ModelTokenizer *tk) {
  size_t total = 1;
  for (int i = 0; i < tk->bpe.n_vocab; i++) total += strlen(tk->bpe.tokens[i]) + 1;
  char *v = malloc(total), *p = v;
  for (int i = 0; v && i < tk->bpe.n_vocab; i++) {
    size_t k = strlen(tk->bpe.tokens[i]);
    memcpy(p, tk->bpe.tokens[i], k);
    p += k;
    *p++ = i + 1 < tk->bpe.n_vocab ? '\n' : 0;
  }
  if (v && tk->bpe.n_vocab == 0) *p = 0;
  return v;
}

bool gguf_to_canonical(const GgufFile *g, StFile *out, ModelTokenizer **tk_out, Err *err) {
  memset(out, 0, sizeof *out);
  *tk_out = NULL;
  Arch a;
  ModelTokenizer *tk = NULL;
  bool *used = NULL, ok = false;
  Spill sp = {.fd = -1}; // the temporary file of the float32 weights, when they go there
  float *scratch = NULL; // where each of those is dequantized before it is written
  if (!make_table(g, &a, err)) goto done;
  // refused before anything is dequantized: more floats than a model may hold at all, or than fit
  uint64_t need = table_bytes(&a), have = mem_available();
  if (need / 4 > (uint64_t)mem_max_floats()) {
    err_set(err,
            "%s: the model has %llu weights, more than the %lld Stepformer holds: choose a smaller model",
            g->what, (unsigned long long)(need / 4), (long long)mem_max_floats());
    goto done;
  }
  if (need > have) {
    char n1[32], n2[32], n3[32];
    human(n1, sizeof n1, need), human(n2, sizeof n2, g->len), human(n3, sizeof n3, have);
    err_set(err,
            "%s: the model takes %s once dequantized to float32 (the file is %s) but %s of memory are "
            "available: close other programs or choose a smaller model",
            g->what, n1, n2, n3);
    goto done;
  }
  if (!(a.modern ? modern_tokenizer : gpt2_tokenizer)(g, a.map[0].t->shape[0], &tk, err)) goto done;
  used = calloc((size_t)(g->n_tensors ? g->n_tensors : 1), sizeof *used);
  out->tensors = calloc((size_t)a.n, sizeof(StTensor));
  out->keys = calloc(GGUF_MAX_META, sizeof(char *));
  out->values = calloc(GGUF_MAX_META, sizeof(char *));
  if (!used || !out->tensors || !out->keys || !out->values) {
    err_set(err, "out of memory");
    goto done;
  }
  const Map *head = a.head >= 0 ? &a.map[a.head] : NULL;
  bool tied = a.tied;
  // The layer matrices' float32 weights go into a temporary file's pages when the forward will
  // multiply from packed copies of them (model_pack: a large model's, under model_pack_own_max, on a
  // machine with the packed kernel): the packed copies are then what the process holds, and the
  // floats are read back only by the pictures of the weights (spill.h). Else, or without a disk
  // place for the file, they stay in memory of the model's own, as the embedding and the norms do.
  ModelConfig mc = model_config_default();
  mc.D = a.D, mc.H = a.H, mc.F = a.F, mc.n_layers = a.L, mc.H_kv = a.Hk, mc.d_k = a.dk, mc.gated = a.modern;
  size_t spill_len = 0, off = 0;
  int64_t largest = 0;
  for (int i = 0; i < a.n; i++)
    if (a.map[i].t && !a.map[i].append && layer_matrix(&a.map[i])) {
      spill_len += spill_bytes(entry_count(&a, i));
      largest = entry_count(&a, i) > largest ? entry_count(&a, i) : largest;
    }
  if (need >= st_map_min_bytes && gemm_supported() && model_packs_own(&mc) && spill_open(&sp, spill_len) &&
      !(scratch = malloc(sizeof(float) * (size_t)largest)))
    spill_close(&sp); // (no room for the scratch: the floats stay in memory, each its own)
  for (int i = 0; i < a.n; i++) {
    const Map *m = &a.map[i];
    if (!m->t) continue;
    used[m->t - g->tensors] = true;
    if ((m == head && tied) || m->append) continue;
    if (!convert(g, out, &a, i, &sp, scratch, &off, err)) goto done;
  }
  if (sp.fd >= 0) { // the tensors point into the file's mapping, which the StFile owns
    uint8_t *map = spill_map(&sp, err);
    if (!map) goto done;
    out->map = map, out->map_len = spill_len, out->map_owner = true;
    off = 0;
    for (int t = 0; t < out->n; t++)
      if (!out->tensors[t].data) { // a layer matrix, in the file's order
        out->tensors[t].data = (float *)(map + off);
        off += spill_bytes(out->tensors[t].count);
      }
  }
  const GgufTensor *rf = gguf_find_tensor(g, "rope_freqs.weight");
  if (rf && a.rope_factor > 0) used[rf - g->tensors] = true; // read into rope_scaling's numbers
  LlamaConfig lc = {a.D,   a.H,     a.Hk,          a.dk,       a.F,         a.L,         "silu",
                    a.eps, a.theta, a.rope_factor, a.rope_low, a.rope_high, a.rope_orig, tied};
  double bits;
  char *types = type_summary(g, &bits), *lines = tensor_lines(g, used, true),
       *unused = tensor_lines(g, used, false);
  char size[32];
  human(size, sizeof size, g->len);
  ok = types && lines && unused && meta(out, "gguf_architecture", "%s", a.name) &&
       meta(out, "gguf_file", "version %u, %s, %.2f bits per weight", g->version, size, bits) &&
       meta_take(out, "gguf_types", types) && meta_take(out, "gguf_tensors", lines) &&
       (unused[0] ? meta_take(out, "gguf_unused", unused) : (free(unused), true)) &&
       meta(out, "tokenizer", a.modern ? "tokenizer.json" : "bpe") &&
       (a.modern ? llama_config_meta(out, GGUF_MAX_META, &lc)
                 : meta(out, "d_model", "%d", a.D) && meta(out, "n_heads", "%d", a.H) &&
                       meta(out, "d_ff", "%d", a.F) && meta(out, "n_layers", "%d", a.L) &&
                       meta(out, "norm_first", "1") && meta(out, "causal", "1") &&
                       meta(out, "layer_norm_eps", "%.9g", a.eps) && (!tied || meta(out, "tie_head", "1")) &&
                       meta(out, "activation", "gelu_tanh") && meta(out, "pos_encoding", "learned"));
  if (!ok) {
    if (!types || !lines || !unused) free(types), free(lines), free(unused);
    if (!err->msg[0]) err_set(err, "out of memory");
    goto done;
  }
  char *v = a.modern ? modern_vocab(g) : vocab_lines(tk);
  ok = v && meta_take(out, "vocab", v) && st_index(out, g->what, err);
  if (!ok && !err->msg[0]) err_set(err, "out of memory");
done:
  spill_close(&sp);
  free(scratch);
  free(a.map), free(used);
  if (!ok) {
    st_free(out);
    model_tokenizer_free(tk);
    return false;
  }
  *tk_out = tk;
  return true;
}

Model *gguf_model_from(const GgufFile *g, const char *path, Err *err) {
  StFile f;
  ModelTokenizer *tk;
  if (!gguf_to_canonical(g, &f, &tk, err)) return NULL;
  Model *m = model_from_st(&f, path, err);
  Vocab labels;
  if (!m || !model_tokenizer_vocab(tk, &labels, err)) {
    model_free(m);
    model_tokenizer_free(tk);
    return NULL;
  }
  m->tokenizer = tk;
  vocab_free(&m->vocab); // the tokens as the file writes them ("Ġcat"): shown as labels ("␣cat")
  m->vocab = labels;
  const char *base = strrchr(path, '/');
  snprintf(m->source, sizeof m->source, "%s", base ? base + 1 : path);
  for (uint64_t i = 0; i < g->n_tensors && !m->stored_path; i++) { // "weights as stored" reads it again
    int block, bytes;
    if (gguf_type_readable(g->tensors[i].type) && gguf_type_size(g->tensors[i].type, &block, &bytes) &&
        block > 1 && !(m->stored_path = strdup(path))) {
      model_free(m);
      return err_set(err, "out of memory"), NULL;
    }
  }
  return m;
}

Model *gguf_model_load(const char *path, Err *err) {
  GgufFile g;
  if (!gguf_open(&g, path, err)) return NULL;
  Model *m = gguf_model_from(&g, path, err);
  gguf_close(&g);
  return m;
}
