// model.c -- see model.h. One table (param_table) names every tensor with its shape and its place
// in the parameter block; loading, saving and random init all walk that table.
#include "model.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "memsize.h"      // defines: mem_available, mem_max_floats, mem_human
#include "model_tokens.h" // defines: model_tokenizer_free
#include "rng.h"          // defines: rng_seed, rng_xavier_uniform, rng_fill_normal
#include "stfile.h"       // defines: StFile, st_find, st_meta, st_free
#include "version.h"      // defines: version_string, version_commit

#define MAX_DIM 8192
#define MAX_LAYERS 64
#define MAX_VOCAB 200000
#define MAX_POS 65536 // rows of a learned position table
#define MAX_CLASSES 4096
// No fixed cap on parameters below mem_max_floats() (memsize.h: 64 GiB of floats, so that no byte
// count overflows): what the machine can hold decides (model_memory_check). Llama 3.2 1B has 1.24
// billion, 4.6 GiB as float32; Llama 3.1 8B, 8.03 billion, 29.9 GiB.

ModelConfig model_config_default(void) {
  return (ModelConfig){.V = 0,
                       .D = 16,
                       .H = 2,
                       .F = 64,
                       .n_layers = 2,
                       .activation = ACT_RELU,
                       .norm_first = false,
                       .causal = false,
                       .ln_eps = 1e-5f};
}

const char *model_activation_name(Activation a) {
  return a == ACT_GELU ? "gelu" : a == ACT_GELU_TANH ? "gelu_tanh" : a == ACT_SILU ? "silu" : "relu";
}

const char *model_tokenizer_name(ModelTokenizerKind k) {
  static const char *const NAMES[] = {"words", "chars", "bpe", "wordpiece", "tokenizer.json"};
  return k >= TOK_WORDS && k <= TOK_TOKJSON ? NAMES[k] : "words";
}

// Appends ", " (after the first) and one feature to buf.
static void feature(char *buf, int cap, int *n, bool on, const char *what) {
  if (on && *n < cap) *n += snprintf(buf + *n, (size_t)(cap - *n), "%s%s", *n ? ", " : "", what);
}

const char *model_features(const Model *m, char *buf, int cap) {
  int n = 0;
  char pos[48], cls[48], tok[32];
  buf[0] = 0;
  snprintf(pos, sizeof pos, "learned positions (up to %d)", m->cfg.max_pos);
  snprintf(cls, sizeof cls, "classifier of %d classes", m->n_classes);
  snprintf(tok, sizeof tok, "%s tokenizer", model_tokenizer_name(m->tok_kind));
  const ModelConfig *c = &m->cfg;
  char gqa[64], dk[32];
  snprintf(gqa, sizeof gqa, "grouped-query attention (%d query heads on %d K/V heads)", c->H, model_hkv(c));
  snprintf(dk, sizeof dk, "head width %d", model_dk(c));
  feature(buf, cap, &n, c->rms_norm, c->rms_offset ? "RMSNorm (1 + g)" : "RMSNorm");
  feature(buf, cap, &n, c->rope == ROPE_HALF, "RoPE (halves)");
  feature(buf, cap, &n, c->rope == ROPE_PAIRS, "RoPE (adjacent pairs)");
  feature(buf, cap, &n, c->rope && c->rope_factor > 0, "Llama 3 rope scaling");
  feature(buf, cap, &n, model_hkv(c) != c->H, gqa);
  feature(buf, cap, &n, c->d_k > 0 && c->d_k * c->H != c->D, dk);
  feature(buf, cap, &n, c->gated && c->activation == ACT_SILU, "SwiGLU feed-forward");
  feature(buf, cap, &n, c->gated && c->activation != ACT_SILU, "gated feed-forward");
  feature(buf, cap, &n, c->qk_norm, "QK-norm");
  feature(buf, cap, &n, m->cfg.learned_pos, pos);
  feature(buf, cap, &n, m->cfg.no_pos && !c->rope, "no positions");
  feature(buf, cap, &n, m->token_type != NULL, "token type 0 added");
  feature(buf, cap, &n, m->has_embed_norm, "embedding LayerNorm");
  feature(buf, cap, &n, m->no_in_proj_bias || m->no_out_proj_bias, "attention without bias");
  feature(buf, cap, &n, m->tie_head, m->head_bias ? "tied head with bias" : "tied head");
  feature(buf, cap, &n, m->has_head && !m->tie_head && !m->head_bias, "head without bias");
  feature(buf, cap, &n, m->has_head_transform, "head transform + LayerNorm");
  feature(buf, cap, &n, m->has_classifier, cls);
  feature(buf, cap, &n, m->tok_kind != TOK_WORDS, tok);
  return buf;
}

bool model_config_check(const ModelConfig *c, const char *what, Err *err) {
  if (c->D < 2 || c->D > MAX_DIM)
    return err_set(err, "%s: D=%d is out of range (2..%d)", what, c->D, MAX_DIM);
  if (c->H < 1 || c->H > c->D) return err_set(err, "%s: H=%d heads is out of range (1..D)", what, c->H);
  if (c->H_kv < 0 || c->H_kv > c->H || (c->H_kv > 0 && c->H % c->H_kv))
    return err_set(err,
                   "%s: %d K/V heads do not divide H=%d query heads: grouped-query attention shares each K/V "
                   "head among H/H_kv query heads",
                   what, c->H_kv, c->H);
  if (c->d_k < 0 || c->d_k > MAX_DIM)
    return err_set(err, "%s: head_dim=%d is out of range (1..%d)", what, c->d_k, MAX_DIM);
  if (c->rope && model_dk(c) % 2)
    return err_set(err, "%s: a head of width %d is odd; RoPE rotates pairs of dimensions", what, model_dk(c));
  if (c->D % c->H && c->d_k == 0)
    return err_set(
        err,
        "%s: D=%d is not divisible by H=%d heads (d_k = D/H must be whole): pick H among the divisors of D",
        what, c->D, c->H);
  if (c->D % 2 && !c->learned_pos && !c->no_pos && !c->rope)
    return err_set(err, "%s: D=%d is odd; the sinusoidal positional encoding needs an even D", what, c->D);
  if (c->F < 1 || c->F > 4 * MAX_DIM)
    return err_set(err, "%s: F=%d is out of range (1..%d)", what, c->F, 4 * MAX_DIM);
  if (c->n_layers < 1 || c->n_layers > MAX_LAYERS)
    return err_set(err, "%s: layers=%d is out of range (1..%d)", what, c->n_layers, MAX_LAYERS);
  if (c->V < 1 || c->V > MAX_VOCAB)
    return err_set(err, "%s: a vocabulary of %d words is out of range (1..%d)", what, c->V, MAX_VOCAB);
  if (c->n_dec_layers < 0 || c->n_dec_layers > MAX_LAYERS)
    return err_set(err, "%s: n_decoder_layers=%d is out of range (1..%d)", what, c->n_dec_layers, MAX_LAYERS);
  if (c->n_dec_layers > 0 && (c->V_t < 1 || c->V_t > MAX_VOCAB))
    return err_set(err, "%s: a target vocabulary of %d words is out of range (1..%d)", what, c->V_t,
                   MAX_VOCAB);
  if (c->learned_pos && (c->max_pos < 1 || c->max_pos > MAX_POS))
    return err_set(err, "%s: a learned position table of %d rows is out of range (1..%d)", what, c->max_pos,
                   MAX_POS);
  if (!(c->ln_eps > 0.0f && c->ln_eps < 1.0f))
    return err_set(err, "%s: layer_norm_eps must be in (0, 1)", what);
  int64_t n = model_param_count(c, true, true);
  if (n > mem_max_floats())
    return err_set(err,
                   "%s: D=%d, F=%d, %d layer%s and %d words make %lld parameters, more than the %lld "
                   "Stepformer holds: choose a smaller D, F or number of layers",
                   what, c->D, c->F, c->n_layers, c->n_layers == 1 ? "" : "s", c->V, (long long)n,
                   (long long)mem_max_floats());
  return true;
}

static bool parse_int(const char *s, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end || v < lo || v > hi) return false;
  *out = v;
  return true;
}

bool model_config_parse(ModelConfig *c, uint64_t *seed, const char *spec, Err *err) {
  char buf[512];
  if (strlen(spec) >= sizeof buf) return err_set(err, "the specification is too long (at most 511 bytes)");
  strcpy(buf, spec);
  static const char *const FIELDS[][3] = {
      {"D", "d_model", ""},       {"H", "heads", "n_heads"}, {"F", "d_ff", ""},
      {"layers", "n_layers", ""}, {"seed", "", ""},          {"activation", "", ""},
      {"norm_first", "", ""},     {"causal", "", ""},        {"pos", "pos_encoding", ""},
      {"max_pos", "", ""}};
  unsigned seen = 0;
  for (char *save = NULL, *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(kv, '=');
    if (!eq) return err_set(err, "\"%s\" is not KEY=VALUE (example: D=16,H=2,F=64,layers=2,seed=42)", kv);
    *eq = 0;
    const char *k = kv, *v = eq + 1;
    long n;
    for (unsigned f = 0; f < sizeof FIELDS / sizeof *FIELDS; f++)
      for (int a = 0; a < 3; a++)
        if (FIELDS[f][a][0] && !strcmp(k, FIELDS[f][a])) {
          if (seen & (1u << f)) return err_set(err, "%s is given twice: give it once", FIELDS[f][0]);
          seen |= 1u << f;
        }
    if (!strcmp(k, "D") || !strcmp(k, "d_model")) {
      if (!parse_int(v, 1, MAX_DIM, &n)) return err_set(err, "D=%s is not a width in 1..%d", v, MAX_DIM);
      c->D = (int)n;
    } else if (!strcmp(k, "H") || !strcmp(k, "heads") || !strcmp(k, "n_heads")) {
      if (!parse_int(v, 1, MAX_DIM, &n)) return err_set(err, "H=%s is not a number of heads", v);
      c->H = (int)n;
    } else if (!strcmp(k, "F") || !strcmp(k, "d_ff")) {
      if (!parse_int(v, 1, 4 * MAX_DIM, &n))
        return err_set(err, "F=%s is not a width in 1..%d", v, 4 * MAX_DIM);
      c->F = (int)n;
    } else if (!strcmp(k, "layers") || !strcmp(k, "n_layers")) {
      if (!parse_int(v, 1, MAX_LAYERS, &n)) return err_set(err, "layers=%s is not in 1..%d", v, MAX_LAYERS);
      c->n_layers = (int)n;
    } else if (!strcmp(k, "seed")) {
      char *end;
      errno = 0;
      unsigned long long s = strtoull(v, &end, 10);
      if (errno || end == v || *end || *v == '-')
        return err_set(err, "seed=%s is not a non-negative integer", v);
      if (seed) *seed = s;
    } else if (!strcmp(k, "activation")) {
      if (!strcmp(v, "relu"))
        c->activation = ACT_RELU;
      else if (!strcmp(v, "gelu"))
        c->activation = ACT_GELU;
      else if (!strcmp(v, "gelu_tanh"))
        c->activation = ACT_GELU_TANH;
      else
        return err_set(err, "activation=%s: use relu, gelu or gelu_tanh", v);
    } else if (!strcmp(k, "pos") || !strcmp(k, "pos_encoding")) {
      if (strcmp(v, "sinusoidal") && strcmp(v, "learned"))
        return err_set(err, "pos=%s: use sinusoidal or learned", v);
      c->learned_pos = v[0] == 'l';
      if (c->learned_pos && c->max_pos == 0) c->max_pos = 64; // a random table of 64 positions
      if (!c->learned_pos) c->max_pos = 0;
    } else if (!strcmp(k, "max_pos")) {
      if (!parse_int(v, 1, MAX_POS, &n)) return err_set(err, "max_pos=%s is not in 1..%d", v, MAX_POS);
      c->max_pos = (int)n;
    } else if (!strcmp(k, "norm_first") || !strcmp(k, "causal")) {
      if (strcmp(v, "0") && strcmp(v, "1")) return err_set(err, "%s=%s: use 0 or 1", k, v);
      if (k[0] == 'n')
        c->norm_first = v[0] == '1';
      else
        c->causal = v[0] == '1';
    } else {
      return err_set(
          err,
          "unknown key \"%s\" (known: D, H, F, layers, seed, activation, norm_first, causal, pos, max_pos)",
          k);
    }
  }
  return true;
}

int64_t model_param_count(const ModelConfig *c, bool with_head, bool with_norm) {
  int64_t D = c->D, F = c->F, V = c->V, Vt = c->V_t;
  int64_t QKV = (int64_t)(c->H + 2 * model_hkv(c)) * model_dk(c), HD = (int64_t)c->H * model_dk(c);
  int64_t per_layer = QKV * D + QKV + D * HD + D + F * D + F + D * F + D + 4 * D + (c->gated ? F * D : 0) +
                      (c->qk_norm ? 2 * (int64_t)model_dk(c) : 0);
  if (c->n_dec_layers > 0) { // encoder-decoder: + cross-attention and norm3 per decoder layer
    int64_t per_dec = per_layer + 4 * D * D + 4 * D + 2 * D;
    return V * D + Vt * D + c->n_layers * per_layer + 2 * D + c->n_dec_layers * per_dec + 2 * D + Vt * D + Vt;
  }
  int64_t pos = c->learned_pos ? (int64_t)c->max_pos * D : 0;
  return V * D + pos + c->n_layers * per_layer + (with_head ? V * D + V : 0) + (with_norm ? 2 * D : 0);
}

int64_t model_layer_matrix_floats(const ModelConfig *c) {
  int64_t D = c->D, F = c->F;
  int64_t QKV = (int64_t)(c->H + 2 * model_hkv(c)) * model_dk(c), HD = (int64_t)c->H * model_dk(c);
  int64_t per = QKV * D + D * HD + 2 * F * D + (c->gated ? F * D : 0);
  return per * c->n_layers + (c->n_dec_layers > 0 ? (per + 4 * D * D) * c->n_dec_layers : 0);
}

int64_t model_pack_own_max = (int64_t)1 << 30;
bool model_pack_converted = true;

bool model_packs_own(const ModelConfig *c) {
  return model_layer_matrix_floats(c) * (int64_t)sizeof(float) <= model_pack_own_max;
}

bool model_memory_check(int64_t n_params, bool packed, const char *what, Err *err) {
  uint64_t need = (uint64_t)n_params * sizeof(float), have = mem_available();
  if (need <= have) return true;
  char n1[32], n2[32];
  mem_human(n1, sizeof n1, need), mem_human(n2, sizeof n2, have);
  return err_set(err,
                 "%s: its %lld parameters take %s as float32%s but %s of memory are available: close other "
                 "programs or choose a smaller model",
                 what, (long long)n_params, n1, packed ? " with their packed copies" : "", n2);
}

bool model_is_seq2seq(const Model *m) { return m->cfg.n_dec_layers > 0; }

const char *model_meta(const Model *m, const char *key) {
  for (int i = 0; i < m->n_meta; i++)
    if (!strcmp(m->meta_keys[i], key)) return m->meta_values[i];
  return NULL;
}

bool model_q_scaled(const Model *m) {
  for (int i = 0; i < m->n_meta; i++)
    if (!strcmp(m->meta_keys[i], "course_note")) return true;
  return false;
}

typedef struct {
  char name[64];
  float **ptr; // where the tensor's pointer lives in the Model
  float **xw;  // a layer matrix: where its Conv1D layout's pointer lives (LayerWeights' *_xw); else NULL
  int ndim;
  long shape[2];
  enum { INIT_NORMAL, INIT_XAVIER, INIT_ZERO, INIT_ONE } init;
} Param;

// Lists every tensor of m in file order. Returns the count (at most cap).
static int param_table(Model *m, Param *p, int cap) {
  const ModelConfig *c = &m->cfg;
  long D = c->D, F = c->F, V = c->V, Vt = c->V_t;
  long QKV = (long)(c->H + 2 * model_hkv(c)) * model_dk(c), HD = (long)c->H * model_dk(c); // 3D, D by default
  bool rms = c->rms_norm, gated = c->gated;
  bool s2s = c->n_dec_layers > 0; // nn.Transformer's names
  int n = 0;
  char prefix[32], b[64]; // "decoder.layers.63." + "multihead_attn.out_proj.weight" fits
#define ADD(nm, field, nd, s0, s1, in)                                                                       \
  do {                                                                                                       \
    EXPECT(n < cap);                                                                                         \
    p[n] = (Param){.ptr = &(field), .ndim = nd, .shape = {s0, s1}, .init = in};                              \
    snprintf(p[n].name, sizeof p[n].name, "%s", nm);                                                         \
    n++;                                                                                                     \
  } while (0)
// a tensor of a layer: its name is prefix + suffix ("layers.0." + "norm1.bias")
#define L(suffix, field, nd, s0, s1, in)                                                                     \
  do {                                                                                                       \
    snprintf(b, sizeof b, "%s%s", prefix, suffix);                                                           \
    ADD(b, field, nd, s0, s1, in);                                                                           \
  } while (0)
// the attention of a layer, under "self_attn." or "multihead_attn."
#define ATTN(kind, inw, inb, outw, outb)                                                                     \
  do {                                                                                                       \
    L(kind ".in_proj_weight", inw, 2, QKV, D, INIT_XAVIER);                                                  \
    if (!m->no_in_proj_bias) L(kind ".in_proj_bias", inb, 1, QKV, 0, INIT_ZERO);                             \
    L(kind ".out_proj.weight", outw, 2, D, HD, INIT_XAVIER);                                                 \
    if (!m->no_out_proj_bias) L(kind ".out_proj.bias", outb, 1, D, 0, INIT_ZERO);                            \
  } while (0)
// the feed-forward network and the first two LayerNorms of layer weights w
#define FFN_NORMS(w)                                                                                         \
  do {                                                                                                       \
    if (gated) L("gate.weight", (w)->gate_weight, 2, F, D, INIT_XAVIER);                                     \
    L("linear1.weight", (w)->linear1_weight, 2, F, D, INIT_XAVIER);                                          \
    if (!gated) L("linear1.bias", (w)->linear1_bias, 1, F, 0, INIT_ZERO);                                    \
    L("linear2.weight", (w)->linear2_weight, 2, D, F, INIT_XAVIER);                                          \
    if (!gated) L("linear2.bias", (w)->linear2_bias, 1, D, 0, INIT_ZERO);                                    \
    L("norm1.weight", (w)->norm1_weight, 1, D, 0, rms && c->rms_offset ? INIT_ZERO : INIT_ONE);              \
    if (!rms) L("norm1.bias", (w)->norm1_bias, 1, D, 0, INIT_ZERO);                                          \
    L("norm2.weight", (w)->norm2_weight, 1, D, 0, rms && c->rms_offset ? INIT_ZERO : INIT_ONE);              \
    if (!rms) L("norm2.bias", (w)->norm2_bias, 1, D, 0, INIT_ZERO);                                          \
  } while (0)
  ADD(s2s ? "src_embed.weight" : "embed.weight", m->embed, 2, V, D, INIT_NORMAL);
  if (s2s) ADD("tgt_embed.weight", m->tgt_embed, 2, Vt, D, INIT_NORMAL);
  if (c->learned_pos) ADD("pos_embed.weight", m->pos_embed, 2, c->max_pos, D, INIT_NORMAL);
  if (m->n_types > 0) ADD("token_type.weight", m->token_type, 2, m->n_types, D, INIT_NORMAL);
  if (m->has_embed_norm) {
    ADD("embed_norm.weight", m->embed_norm_weight, 1, D, 0, INIT_ONE);
    ADD("embed_norm.bias", m->embed_norm_bias, 1, D, 0, INIT_ZERO);
  }
  for (int i = 0; i < c->n_layers; i++) {
    LayerWeights *w = &m->layers[i];
    snprintf(prefix, sizeof prefix, s2s ? "encoder.layers.%d." : "layers.%d.", i);
    int first = n;
    ATTN("self_attn", w->in_proj_weight, w->in_proj_bias, w->out_proj_weight, w->out_proj_bias);
    if (c->qk_norm) {
      L("self_attn.q_norm.weight", w->q_norm_weight, 1, model_dk(c), 0, INIT_ONE);
      L("self_attn.k_norm.weight", w->k_norm_weight, 1, model_dk(c), 0, INIT_ONE);
    }
    FFN_NORMS(w);
    for (int k = first; k < n; k++) // the four matrices a GPT-2 checkpoint keeps in Conv1D layout
      p[k].xw = p[k].ptr == &w->in_proj_weight    ? &w->in_proj_xw
                : p[k].ptr == &w->out_proj_weight ? &w->out_proj_xw
                : p[k].ptr == &w->linear1_weight  ? &w->linear1_xw
                : p[k].ptr == &w->linear2_weight  ? &w->linear2_xw
                                                  : NULL;
  }
  if (s2s) {
    ADD("encoder.norm.weight", m->enc_norm_weight, 1, D, 0, INIT_ONE);
    ADD("encoder.norm.bias", m->enc_norm_bias, 1, D, 0, INIT_ZERO);
    for (int j = 0; j < c->n_dec_layers; j++) {
      DecLayerWeights *d = &m->dec_layers[j];
      LayerWeights *w = &d->self;
      snprintf(prefix, sizeof prefix, "decoder.layers.%d.", j);
      ATTN("self_attn", w->in_proj_weight, w->in_proj_bias, w->out_proj_weight, w->out_proj_bias);
      ATTN("multihead_attn", d->cross_in_proj_weight, d->cross_in_proj_bias, d->cross_out_proj_weight,
           d->cross_out_proj_bias);
      FFN_NORMS(w);
      L("norm3.weight", d->norm3_weight, 1, D, 0, INIT_ONE);
      L("norm3.bias", d->norm3_bias, 1, D, 0, INIT_ZERO);
    }
    ADD("decoder.norm.weight", m->dec_norm_weight, 1, D, 0, INIT_ONE);
    ADD("decoder.norm.bias", m->dec_norm_bias, 1, D, 0, INIT_ZERO);
    ADD("head.weight", m->head_weight, 2, Vt, D, INIT_XAVIER);
    ADD("head.bias", m->head_bias, 1, Vt, 0, INIT_ZERO);
  } else if (m->has_head || m->has_classifier) {
    if (m->has_final_norm) {
      ADD("norm.weight", m->norm_weight, 1, D, 0, rms && c->rms_offset ? INIT_ZERO : INIT_ONE);
      if (!rms) ADD("norm.bias", m->norm_bias, 1, D, 0, INIT_ZERO);
    }
    if (m->has_head_transform) {
      ADD("head_transform.weight", m->head_transform_weight, 2, D, D, INIT_XAVIER);
      ADD("head_transform.bias", m->head_transform_bias, 1, D, 0, INIT_ZERO);
      ADD("head_norm.weight", m->head_norm_weight, 1, D, 0, INIT_ONE);
      ADD("head_norm.bias", m->head_norm_bias, 1, D, 0, INIT_ZERO);
    }
    if (m->has_head && !m->tie_head) ADD("head.weight", m->head_weight, 2, V, D, INIT_XAVIER);
    if (m->has_head && m->has_head_bias) ADD("head.bias", m->head_bias, 1, V, 0, INIT_ZERO);
    if (m->has_classifier) {
      ADD("classifier.weight", m->classifier_weight, 2, m->n_classes, D, INIT_XAVIER);
      ADD("classifier.bias", m->classifier_bias, 1, m->n_classes, 0, INIT_ZERO);
    }
  }
#undef FFN_NORMS
#undef ATTN
#undef L
#undef ADD
  return n;
}

// Room for every tensor of a configuration.
static int param_cap(const ModelConfig *c) { return 24 + 15 * c->n_layers + 8 + 18 * c->n_dec_layers; }

static long param_count(const Param *p) { return p->ndim == 1 ? p->shape[0] : p->shape[0] * p->shape[1]; }

// Allocates the layer array and lists every tensor (no weights yet).
static bool model_table(Model *m, Param **table, int *n_table, Err *err) {
  int cap = param_cap(&m->cfg);
  m->layers = calloc((size_t)m->cfg.n_layers, sizeof(LayerWeights));
  if (m->cfg.n_dec_layers > 0) m->dec_layers = calloc((size_t)m->cfg.n_dec_layers, sizeof(DecLayerWeights));
  Param *p = calloc((size_t)cap, sizeof(Param));
  if (!m->layers || !p || (m->cfg.n_dec_layers > 0 && !m->dec_layers)) {
    free(p);
    return err_set(err, "out of memory");
  }
  *n_table = param_table(m, p, cap);
  *table = p;
  return true;
}

// Allocates the parameter block and points every tensor of the table into it.
static bool model_carve(Model *m, Param *p, int n, Err *err) {
  long total = 0;
  for (int i = 0; i < n; i++) total += param_count(&p[i]);
  m->params = malloc(sizeof(float) * (size_t)(total > 0 ? total : 1));
  if (!m->params) return err_set(err, "out of memory for %ld parameters", total);
  m->n_params = total;
  long off = 0;
  for (int i = 0; i < n; i++) {
    *p[i].ptr = m->params + off;
    off += param_count(&p[i]);
  }
  return true;
}

static bool model_alloc(Model *m, Param **table, int *n_table, Err *err) {
  if (!model_table(m, table, n_table, err)) return false;
  if (model_carve(m, *table, *n_table, err)) return true;
  free(*table);
  *table = NULL;
  return false;
}

// The four matrices of layer w: where the canonical pointer lives, the Conv1D layout, [N, K].
typedef struct {
  float **canon;
  const float *xw;
  long n, k;
} LayerMatrix;

// The fifth, a gated FFN's gate, has n = 0 (none) in other models.
enum { LAYER_MATRICES = 5 };
static void layer_matrices(const ModelConfig *c, LayerWeights *w, LayerMatrix out[LAYER_MATRICES]) {
  long D = c->D, F = c->F;
  long QKV = (long)(c->H + 2 * model_hkv(c)) * model_dk(c), HD = (long)c->H * model_dk(c);
  out[0] = (LayerMatrix){&w->in_proj_weight, w->in_proj_xw, QKV, D};
  out[1] = (LayerMatrix){&w->out_proj_weight, w->out_proj_xw, D, HD};
  out[2] = (LayerMatrix){&w->linear1_weight, w->linear1_xw, F, D};
  out[3] = (LayerMatrix){&w->linear2_weight, w->linear2_xw, D, F};
  out[4] = (LayerMatrix){&w->gate_weight, NULL, c->gated ? F : 0, D};
}

static pthread_mutex_t canonical_lock = PTHREAD_MUTEX_INITIALIZER;

bool model_canonical(const Model *cm) {
  Model *m = (Model *)cm; // a cache of the same numbers in the other layout
  bool ok = true;
  pthread_mutex_lock(&canonical_lock);
  for (int l = 0; ok && m->layers && l < m->cfg.n_layers; l++) {
    LayerMatrix mx[LAYER_MATRICES];
    layer_matrices(&m->cfg, &m->layers[l], mx);
    for (int k = 0; ok && k < LAYER_MATRICES; k++) {
      if (!mx[k].xw || *mx[k].canon) continue;
      float *d = malloc(sizeof(float) * (size_t)(mx[k].n * mx[k].k));
      if (d) { // [K, N] -> [N, K]; the mapping's pages, read once, go back
        mat_transpose(d, mx[k].xw, mx[k].k, mx[k].n);
        st_release_pages(mx[k].xw, sizeof(float) * (size_t)(mx[k].n * mx[k].k));
      }
      ok = (*mx[k].canon = d) != NULL;
    }
  }
  pthread_mutex_unlock(&canonical_lock);
  return ok;
}

const float *model_canonical_elem(const Model *m, const float *p) {
  for (int l = 0; p && l < m->cfg.n_layers; l++) {
    LayerMatrix mx[LAYER_MATRICES];
    layer_matrices(&m->cfg, &m->layers[l], mx);
    for (int k = 0; k < LAYER_MATRICES; k++)
      if (mx[k].xw && p >= mx[k].xw && p < mx[k].xw + mx[k].n * mx[k].k) {
        long o = p - mx[k].xw; // [K, N]: row o / N, column o % N
        EXPECT(*mx[k].canon != NULL);
        return *mx[k].canon + (o % mx[k].n) * mx[k].k + o / mx[k].n;
      }
  }
  return p;
}

// True when p points into the model's file mapping (not memory of its own).
static bool in_map(const Model *m, const void *p) {
  const uint8_t *b = p;
  return m->map && b >= m->map && b < m->map + m->map_len;
}

// Packs each layer's weight matrices for gemm_matmul_t, once. Without AVX2 + FMA, or without
// the memory, a matrix stays unpacked and the forward multiplies it with BLAS (from the canonical
// layout, made then for a GPT-2 checkpoint). A matrix in Conv1D layout is packed from it in place
// (the same panels), and its pages then go back to the page cache: the forward reads the packed
// copy, and a view of the weights reads them again from the page cache.
static void model_pack(Model *m) {
  const ModelConfig *c = &m->cfg;
  if (!gemm_supported()) {
    model_canonical(m); // (out of memory: the forward's checks report the missing weights)
    return;
  }
  // Which matrices get a packed copy: those read from a file mapping (the copy takes the place of
  // the file's pages, which go back), and those in memory of the model's own (dequantized from
  // GGUF, random) while they are small (model_packs_own): above that the copy would double the
  // weights' memory, and the forward packs them block by block per product instead. Converted
  // from a safetensors file's F16/BF16 (m->converted) they are packed whatever their size, while
  // the copies leave as much memory free as they take (model.h, model_pack_converted). None when
  // the copies would not fit in the memory available.
  bool own_ok = model_packs_own(c), all = true;
  bool conv = m->converted && model_pack_converted && !own_ok;
  uint64_t want = 0, want_conv = 0; // bytes of the copies: always made, and made for conv
  for (int l = 0; l < c->n_layers; l++) {
    LayerMatrix mx[LAYER_MATRICES];
    layer_matrices(c, &m->layers[l], mx);
    for (int k = 0; k < LAYER_MATRICES; k++) {
      if (mx[k].n == 0) continue;
      uint64_t bytes = sizeof(float) * gemm_packed_floats((int)mx[k].n, (int)mx[k].k);
      if (own_ok || mx[k].xw || in_map(m, *mx[k].canon))
        want += bytes;
      else if (conv)
        want_conv += bytes;
    }
  }
  uint64_t avail = mem_available();
  bool room = want <= avail;
  conv = conv && room && want + 2 * want_conv <= avail;
  for (int l = 0; l < c->n_layers; l++) {
    LayerWeights *w = &m->layers[l];
    LayerMatrix mx[LAYER_MATRICES];
    layer_matrices(c, w, mx);
    GemmWeights *packed[LAYER_MATRICES] = {&w->in_proj_packed, &w->out_proj_packed, &w->linear1_packed,
                                           &w->linear2_packed, &w->gate_packed};
    for (int k = 0; k < LAYER_MATRICES; k++) {
      if (mx[k].n == 0) continue;
      if (!room || !(own_ok || conv || mx[k].xw || in_map(m, *mx[k].canon))) {
        all = false;
        continue;
      }
      if (mx[k].xw) {
        all &= gemm_pack_t(packed[k], mat_view((float *)mx[k].xw, (int)mx[k].k, (int)mx[k].n));
        st_release_pages(mx[k].xw, sizeof(float) * (size_t)(mx[k].n * mx[k].k));
      } else {
        all &= gemm_pack(packed[k], mat_view(*mx[k].canon, (int)mx[k].n, (int)mx[k].k));
        if (in_map(m, *mx[k].canon)) // a BERT or Llama checkpoint's, in the mapping
          st_release_pages(*mx[k].canon, sizeof(float) * (size_t)(mx[k].n * mx[k].k));
      }
    }
  }
  if (!all) model_canonical(m); // a matrix left unpacked is multiplied from the canonical layout
  // the prediction head of a converted model whose layer matrices are packed (a tied head is E: V
  // rows, 1 GiB for Llama 3.2 1B; packed per product otherwise, the largest of them), while the
  // copy leaves as much memory free as it takes
  size_t head_bytes = m->has_head && m->head_weight && c->n_dec_layers == 0
                          ? sizeof(float) * gemm_packed_floats(c->V, c->D)
                          : 0;
  if (head_bytes && m->converted && model_pack_converted && all && room && 2 * head_bytes <= mem_available())
    gemm_pack(&m->head_packed, mat_view(m->head_weight, c->V, c->D));
  for (int j = 0; j < c->n_dec_layers; j++) { // a decoder layer: its self-attention, FFN and cross
    DecLayerWeights *d = &m->dec_layers[j];
    LayerWeights *w = &d->self;
    gemm_pack(&w->in_proj_packed, mat_view(w->in_proj_weight, 3 * c->D, c->D));
    gemm_pack(&w->out_proj_packed, mat_view(w->out_proj_weight, c->D, c->D));
    gemm_pack(&w->linear1_packed, mat_view(w->linear1_weight, c->F, c->D));
    gemm_pack(&w->linear2_packed, mat_view(w->linear2_weight, c->D, c->F));
    gemm_pack(&d->cross_q_packed, mat_view(d->cross_in_proj_weight, c->D, c->D));
    gemm_pack(&d->cross_kv_packed, mat_view(d->cross_in_proj_weight + (size_t)c->D * c->D, 2 * c->D, c->D));
    gemm_pack(&d->cross_out_packed, mat_view(d->cross_out_proj_weight, c->D, c->D));
  }
}

static void layer_unpack(LayerWeights *w) {
  gemm_free(&w->in_proj_packed);
  gemm_free(&w->out_proj_packed);
  gemm_free(&w->linear1_packed);
  gemm_free(&w->linear2_packed);
  gemm_free(&w->gate_packed);
}

void model_free(Model *m) {
  if (!m) return;
  gemm_free(&m->head_packed);
  for (int l = 0; m->layers && l < m->cfg.n_layers; l++) {
    layer_unpack(&m->layers[l]);
    LayerMatrix mx[LAYER_MATRICES];
    layer_matrices(&m->cfg, &m->layers[l], mx);
    for (int k = 0; k < LAYER_MATRICES; k++)
      if (mx[k].xw) free(*mx[k].canon); // model_canonical's copy (the Conv1D layout is the mapping's)
  }
  if (m->map) munmap(m->map, m->map_len);
  for (int j = 0; m->dec_layers && j < m->cfg.n_dec_layers; j++) {
    DecLayerWeights *d = &m->dec_layers[j];
    layer_unpack(&d->self);
    gemm_free(&d->cross_q_packed);
    gemm_free(&d->cross_kv_packed);
    gemm_free(&d->cross_out_packed);
  }
  for (int i = 0; i < m->n_meta; i++) {
    free(m->meta_keys[i]);
    free(m->meta_values[i]);
  }
  free(m->meta_keys);
  free(m->meta_values);
  free(m->stored_path);
  free(m->params);
  for (int i = 0; i < m->n_owned; i++) free(m->owned[i]);
  free(m->owned);
  free(m->layers);
  free(m->dec_layers);
  for (int i = 0; m->class_names && i < m->n_classes; i++) free(m->class_names[i]);
  free(m->class_names);
  vocab_free(&m->vocab);
  vocab_free(&m->tgt_vocab);
  model_tokenizer_free(m->tokenizer);
  free(m);
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

Model *model_random(const ModelConfig *c, const Vocab *vocab, uint64_t seed, Err *err) {
  Model *m = calloc(1, sizeof *m);
  if (!m) return err_set(err, "out of memory"), NULL;
  m->cfg = *c;
  m->cfg.V = vocab->n;
  m->cfg.n_dec_layers = m->cfg.V_t = 0; // random weights make an encoder only
  if (!model_config_check(&m->cfg, "random model", err)) goto fail;
  int64_t n_need = model_param_count(&m->cfg, false, false);
  bool own_packed = model_packs_own(&m->cfg) && gemm_supported();
  if (!model_memory_check(n_need + (own_packed ? model_layer_matrix_floats(&m->cfg) : 0), own_packed,
                          "random model", err))
    goto fail;
  char *lines = vocab_to_lines(vocab);
  bool ok = lines && vocab_from_lines(&m->vocab, lines, err);
  free(lines);
  if (!ok) goto fail;
  Param *p;
  int n;
  if (!model_alloc(m, &p, &n, err)) goto fail;
  uint64_t rng = rng_seed(seed);
  for (int i = 0; i < n; i++) {
    float *w = *p[i].ptr;
    long cnt = param_count(&p[i]);
    switch (p[i].init) {
    case INIT_NORMAL: rng_fill_normal(&rng, w, cnt); break;
    case INIT_XAVIER: rng_xavier_uniform(&rng, w, (int)p[i].shape[0], (int)p[i].shape[1]); break;
    case INIT_ZERO: memset(w, 0, sizeof(float) * (size_t)cnt); break;
    case INIT_ONE:
      for (long k = 0; k < cnt; k++) w[k] = 1.0f;
      break;
    }
  }
  free(p);
  m->has_seed = true;
  m->seed = seed;
  model_pack(m);
  snprintf(m->source, sizeof m->source, "random weights, seed %llu", (unsigned long long)seed);
  return m;
fail:
  model_free(m);
  return NULL;
}

// Reads an integer metadata value in lo..hi; a missing key keeps *out (when optional). A value
// that is a whole number out of the range says the range, one that is not says so.
static bool meta_int(const StFile *f, const char *path, const char *key, long lo, long hi, int *out,
                     bool required, Err *err) {
  const char *v = st_meta(f, key);
  if (!v) {
    if (required)
      return err_set(
          err,
          "%s: metadata \"%s\" is missing: save the model with __metadata__ {\"%s\": \"...\"} (see README)",
          path, key, key);
    return true;
  }
  long n;
  if (!parse_int(v, LONG_MIN, LONG_MAX, &n)) {
    bool digits = *v != 0;
    for (const char *p = *v == '-' || *v == '+' ? v + 1 : v; *p; p++) digits &= *p >= '0' && *p <= '9';
    if (digits) // strtol's range was passed: a whole number far out of range
      return err_set(err, "%s: metadata %s=\"%s\" is out of range (%ld..%ld)", path, key, v, lo, hi);
    return err_set(err, "%s: metadata %s=\"%s\" is not a whole number", path, key, v);
  }
  if (n < lo || n > hi)
    return err_set(err, "%s: metadata %s=\"%s\" is out of range (%ld..%ld)", path, key, v, lo, hi);
  *out = (int)n;
  return true;
}

// The decoder's side of an encoder-decoder: n_decoder_layers, tgt_vocab and its <bos> and <eos>.
static bool read_target_side(const StFile *f, const char *path, Model *m, Err *err) {
  if (!meta_int(f, path, "n_decoder_layers", 1, MAX_LAYERS, &m->cfg.n_dec_layers, true, err)) return false;
  const char *tv = st_meta(f, "tgt_vocab");
  if (!tv)
    return err_set(err,
                   "%s: metadata \"tgt_vocab\" is missing: an encoder-decoder (n_decoder_layers) needs its "
                   "target words joined by newlines, \"<unk>\" first, with <bos> and <eos>",
                   path);
  Err verr = {0};
  if (!vocab_from_lines(&m->tgt_vocab, tv, &verr))
    return err_set(err, "%s: metadata tgt_vocab: %s", path, verr.msg);
  m->cfg.V_t = m->tgt_vocab.n;
  m->bos = vocab_find(&m->tgt_vocab, "<bos>");
  m->eos = vocab_find(&m->tgt_vocab, "<eos>");
  if (m->bos < 0 || m->eos < 0)
    return err_set(
        err,
        "%s: metadata tgt_vocab has no \"%s\": the decoder starts from <bos> and stops at <eos>; add "
        "both words to the target vocabulary",
        path, m->bos < 0 ? "<bos>" : "<eos>");
  return true;
}

static bool meta_flag(const StFile *f, const char *path, const char *key, bool *out, Err *err) {
  const char *v = st_meta(f, key);
  if (!v) return true;
  if (!strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "False"))
    *out = false;
  else if (!strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "True"))
    *out = true;
  else
    return err_set(err, "%s: metadata %s=\"%s\" must be 0 or 1", path, key, v);
  return true;
}

// The vocabulary of a bpe / wordpiece model: any distinct words, "<unk>" first or not. Parsed by
// vocab_from_lines behind a "<unk>" of its own (when the first word is not it), which is then
// dropped: ids stay the file's line numbers.
static bool vocab_any(Vocab *v, const char *lines, Err *err) {
  if (!strncmp(lines, VOCAB_UNK "\n", strlen(VOCAB_UNK) + 1) || !strcmp(lines, VOCAB_UNK))
    return vocab_from_lines(v, lines, err);
  size_t len = strlen(lines);
  char *with = malloc(len + sizeof VOCAB_UNK + 1);
  if (!with) return err_set(err, "out of memory reading the vocabulary");
  memcpy(with, VOCAB_UNK "\n", sizeof VOCAB_UNK);
  memcpy(with + sizeof VOCAB_UNK, lines, len + 1);
  bool ok = vocab_from_lines(v, with, err);
  free(with);
  if (!ok) return false;
  memmove(v->words, v->words + 1, sizeof(char *) * (size_t)(v->n - 1));
  int k = 0;
  for (int i = 0; i < v->n; i++)
    if (v->order[i] != 0) v->order[k++] = v->order[i] - 1;
  v->n--;
  return true;
}

// The class names of a classifier: metadata `classes` (C lines), or "class 1" .. "class C".
static bool read_classes(const StFile *f, const char *path, Model *m, Err *err) {
  int C = m->n_classes;
  m->class_names = calloc((size_t)C, sizeof(char *));
  if (!m->class_names) return err_set(err, "out of memory");
  const char *v = st_meta(f, "classes");
  int i = 0;
  for (const char *p = v; p && i <= C;) {
    size_t n = strcspn(p, "\n");
    if (i < C && !(m->class_names[i] = strndup(p, n))) return err_set(err, "out of memory");
    i++;
    if (!p[n]) break;
    p += n + 1;
  }
  if (v && i != C)
    return err_set(err,
                   "%s: metadata classes names %d class%s but classifier.weight has %d rows: give one name "
                   "per class, joined by newlines",
                   path, i, i == 1 ? "" : "es", C);
  for (i = 0; !v && i < C; i++) {
    char name[32];
    snprintf(name, sizeof name, "class %d", i + 1);
    if (!(m->class_names[i] = strdup(name))) return err_set(err, "out of memory");
  }
  return true;
}

// The canonical extensions' metadata and which optional tensors are there (model.h), checked
// against each other: what a loader got wrong is named in one line.
static bool read_extensions(const StFile *f, const char *path, Model *m, bool s2s, Err *err) {
  ModelConfig *c = &m->cfg;
  const char *pe = st_meta(f, "pos_encoding");
  if (pe && strcmp(pe, "sinusoidal") && strcmp(pe, "learned") && strcmp(pe, "none") && strcmp(pe, "rope"))
    return err_set(err,
                   "%s: metadata pos_encoding=\"%s\": Stepformer knows sinusoidal, learned, rope and none",
                   path, pe);
  c->learned_pos = pe && !strcmp(pe, "learned");
  c->no_pos = pe && (!strcmp(pe, "none") || !strcmp(pe, "rope")); // RoPE: nothing added to X
  c->rope = pe && !strcmp(pe, "rope") ? ROPE_HALF : ROPE_NONE;
  const StTensor *pos = st_find(f, "pos_embed.weight");
  if (c->learned_pos && !pos)
    return err_set(
        err,
        "%s: metadata pos_encoding=learned needs the tensor \"pos_embed.weight\" [max_pos, D]: add "
        "the learned position table, or set pos_encoding to sinusoidal",
        path);
  if (!c->learned_pos && pos)
    return err_set(
        err,
        "%s: tensor \"pos_embed.weight\" is a learned position table but the metadata does not say "
        "pos_encoding=learned: add it to the metadata (or remove the tensor)",
        path);
  if (pos) {
    if (pos->ndim != 2 || pos->shape[0] < 1 || pos->shape[0] > MAX_POS)
      return err_set(err, "%s: tensor \"pos_embed.weight\" must be [max_pos, D] with max_pos in 1..%d", path,
                     MAX_POS);
    c->max_pos = (int)pos->shape[0];
  }
  const StTensor *tt = st_find(f, "token_type.weight");
  if (tt) {
    if (tt->ndim != 2 || tt->shape[0] < 1 || tt->shape[0] > 1024)
      return err_set(err, "%s: tensor \"token_type.weight\" must be [n_types, D] with n_types in 1..1024",
                     path);
    m->n_types = (int)tt->shape[0];
  }
  m->has_embed_norm = st_find(f, "embed_norm.weight") || st_find(f, "embed_norm.bias");
  const char *ee = st_meta(f, "embed_norm_eps");
  if (ee) {
    char *end;
    m->embed_norm_eps = strtof(ee, &end);
    if (end == ee || *end || !(m->embed_norm_eps > 0.0f && m->embed_norm_eps < 1.0f))
      return err_set(err, "%s: metadata embed_norm_eps=\"%s\" must be an epsilon between 0 and 1, like 1e-12",
                     path, ee);
    if (!m->has_embed_norm)
      return err_set(
          err,
          "%s: metadata embed_norm_eps=\"%s\" without embed_norm.weight|bias: remove it or add the "
          "embedding LayerNorm",
          path, ee);
  }
  m->no_in_proj_bias = !s2s && !st_find(f, "layers.0.self_attn.in_proj_bias");
  m->no_out_proj_bias = !s2s && !st_find(f, "layers.0.self_attn.out_proj.bias");
  if (!meta_flag(f, path, "tie_head", &m->tie_head, err)) return false;
  bool head_w = st_find(f, "head.weight") != NULL;
  if (m->tie_head && head_w)
    return err_set(err,
                   "%s: metadata tie_head=1 but the file has \"head.weight\": a tied head is embed.weight; "
                   "remove head.weight or set tie_head to 0",
                   path);
  if (s2s && (c->learned_pos || m->tie_head || tt || m->has_embed_norm))
    return err_set(err,
                   "%s: an encoder-decoder takes sinusoidal positions, no token types, no embedding "
                   "LayerNorm and its own head: remove those from the file",
                   path);
  m->has_head = s2s || head_w || m->tie_head;
  m->has_head_bias = s2s || (m->has_head && st_find(f, "head.bias") != NULL);
  const StTensor *cw = st_find(f, "classifier.weight"), *cb = st_find(f, "classifier.bias");
  m->has_classifier = !s2s && (cw || cb);
  if (m->has_classifier && m->has_head)
    return err_set(err,
                   "%s: the file has both a prediction head (%s) and a classifier (classifier.*): a model "
                   "has one or the other; remove one",
                   path, m->tie_head ? "tie_head=1" : "head.weight");
  if (m->has_classifier) {
    const StTensor *t = cw ? cw : cb;
    if (t->ndim < 1 || t->shape[0] < 1 || t->shape[0] > MAX_CLASSES)
      return err_set(err, "%s: tensor \"%s\" must have 1..%d classes as its first dimension", path, t->name,
                     MAX_CLASSES);
    m->n_classes = (int)t->shape[0];
    if (!read_classes(f, path, m, err)) return false;
  } else if (st_meta(f, "classes")) {
    return err_set(err, "%s: metadata classes names classes but the file has no classifier.weight", path);
  }
  m->has_head_transform = m->has_head && !s2s &&
                          (st_find(f, "head_transform.weight") || st_find(f, "head_transform.bias") ||
                           st_find(f, "head_norm.weight") || st_find(f, "head_norm.bias"));
  return true;
}

// A float metadata value in (lo, hi); a missing key keeps *out.
static bool meta_float(const StFile *f, const char *path, const char *key, double lo, double hi, float *out,
                       Err *err) {
  const char *v = st_meta(f, key);
  if (!v) return true;
  char *end;
  double x = strtod(v, &end);
  if (end == v || *end || !(x > lo && x < hi))
    return err_set(err, "%s: metadata %s=\"%s\" must be a number between %g and %g", path, key, v, lo, hi);
  *out = (float)x;
  return true;
}

// Today's decoders' metadata (model.h): norm, rms_offset, rope_*, n_kv_heads, head_dim, ffn, and
// QK-norm from its tensors. Such a model must be pre-norm and causal.
static bool read_modern(const StFile *f, const char *path, Model *m, Err *err) {
  ModelConfig *c = &m->cfg;
  const char *norm = st_meta(f, "norm"), *ffn = st_meta(f, "ffn"), *style = st_meta(f, "rope_style");
  const char *scaling = st_meta(f, "rope_scaling");
  if (norm && strcmp(norm, "layernorm") && strcmp(norm, "rmsnorm"))
    return err_set(err, "%s: metadata norm=\"%s\": Stepformer knows layernorm and rmsnorm", path, norm);
  c->rms_norm = norm && !strcmp(norm, "rmsnorm");
  if (ffn && strcmp(ffn, "plain") && strcmp(ffn, "gated"))
    return err_set(err, "%s: metadata ffn=\"%s\": Stepformer knows plain and gated", path, ffn);
  c->gated = ffn && !strcmp(ffn, "gated");
  if (!meta_flag(f, path, "rms_offset", &c->rms_offset, err)) return false;
  c->rope_theta = 10000.0f;
  if (!meta_float(f, path, "rope_theta", 0, 1e12, &c->rope_theta, err)) return false;
  if (style && strcmp(style, "half") && strcmp(style, "pairs"))
    return err_set(err, "%s: metadata rope_style=\"%s\": Stepformer knows half and pairs", path, style);
  if (c->rope && style && !strcmp(style, "pairs")) c->rope = ROPE_PAIRS;
  if (scaling && strcmp(scaling, "llama3"))
    return err_set(err, "%s: metadata rope_scaling=\"%s\": Stepformer knows llama3 only", path, scaling);
  if (scaling) {
    c->rope_low = 1.0f, c->rope_high = 4.0f, c->rope_orig = 8192;
    if (!st_meta(f, "rope_factor"))
      return err_set(err, "%s: metadata rope_scaling=llama3 needs rope_factor (Llama 3.2: 32)", path);
    if (!meta_float(f, path, "rope_factor", 0, 1e6, &c->rope_factor, err) ||
        !meta_float(f, path, "rope_low_freq_factor", 0, 1e6, &c->rope_low, err) ||
        !meta_float(f, path, "rope_high_freq_factor", 0, 1e6, &c->rope_high, err) ||
        !meta_int(f, path, "rope_original_max_pos", 1, 1 << 24, &c->rope_orig, false, err))
      return false;
    if (!(c->rope_high > c->rope_low))
      return err_set(err, "%s: metadata rope_high_freq_factor must be larger than rope_low_freq_factor",
                     path);
  }
  if (!meta_int(f, path, "n_kv_heads", 1, MAX_DIM, &c->H_kv, false, err) ||
      !meta_int(f, path, "head_dim", 1, MAX_DIM, &c->d_k, false, err))
    return false;
  c->qk_norm =
      st_find(f, "layers.0.self_attn.q_norm.weight") || st_find(f, "layers.0.self_attn.k_norm.weight");
  const char *act = st_meta(f, "activation");
  if (act && !strcmp(act, "silu")) c->activation = ACT_SILU;
  bool modern = model_is_modern(c) || c->H_kv || c->d_k || c->qk_norm;
  if (c->activation == ACT_SILU && !c->gated)
    return err_set(err, "%s: metadata activation=silu is the gated FFN's (SwiGLU): add ffn=gated", path);
  if (modern && (!c->norm_first || !c->causal || m->cfg.n_dec_layers > 0))
    return err_set(
        err,
        "%s: RMSNorm, RoPE, grouped-query attention and the gated FFN are a decoder's: the metadata "
        "must say norm_first=1 and causal=1",
        path);
  if (c->gated && c->activation != ACT_SILU && c->activation != ACT_GELU_TANH && c->activation != ACT_GELU)
    return err_set(err, "%s: metadata ffn=gated takes activation silu, gelu or gelu_tanh", path);
  return true;
}

// See model.h. Every path out releases *f.
Model *model_from_st(StFile *fp, const char *path, Err *err) {
  StFile f = *fp; // taken over: *fp is left empty (st_free on it again does nothing)
  memset(fp, 0, sizeof *fp);
  Model *m = calloc(1, sizeof *m);
  Param *p = NULL;
  if (!m) {
    err_set(err, "out of memory");
    goto fail;
  }
  ModelConfig *c = &m->cfg;
  *c = model_config_default();
  // an encoder-decoder (nn.Transformer's names: src_embed, encoder.*, decoder.*): the decoder's
  // layers and target vocabulary
  bool s2s = st_meta(&f, "n_decoder_layers") != NULL;
  if (s2s && !read_target_side(&f, path, m, err)) goto fail;
  const char *tok = st_meta(&f, "tokenizer");
  if (tok) {
    int k = TOK_WORDS;
    while (k <= TOK_TOKJSON && strcmp(tok, model_tokenizer_name((ModelTokenizerKind)k))) k++;
    if (k > TOK_TOKJSON) {
      err_set(
          err,
          "%s: metadata tokenizer=\"%s\": Stepformer knows words, chars, bpe, wordpiece and tokenizer.json",
          path, tok);
      goto fail;
    }
    m->tok_kind = (ModelTokenizerKind)k;
  }
  const char *vocab = st_meta(&f, "vocab");
  if (!vocab) {
    err_set(
        err,
        "%s: metadata \"vocab\" is missing: add the words joined by newlines, \"<unk>\" first (see README)",
        path);
    goto fail;
  }
  Err verr = {0};
  bool any_words = m->tok_kind >= TOK_BPE; // bpe, wordpiece, tokenizer.json: their own unknown token
  if (!(any_words ? vocab_any(&m->vocab, vocab, &verr) : vocab_from_lines(&m->vocab, vocab, &verr))) {
    err_set(err, "%s: metadata vocab: %s", path, verr.msg);
    goto fail;
  }
  c->V = m->vocab.n;
  if (!meta_int(&f, path, "d_model", 2, MAX_DIM, &c->D, true, err) ||
      !meta_int(&f, path, "n_heads", 1, MAX_DIM, &c->H, true, err) ||
      !meta_int(&f, path, "d_ff", 1, 4 * MAX_DIM, &c->F, true, err) ||
      !meta_int(&f, path, "n_layers", 1, MAX_LAYERS, &c->n_layers, true, err) ||
      !meta_flag(&f, path, "norm_first", &c->norm_first, err) ||
      !meta_flag(&f, path, "causal", &c->causal, err))
    goto fail;
  const char *act = st_meta(&f, "activation");
  if (act && !strcmp(act, "gelu"))
    c->activation = ACT_GELU;
  else if (act && !strcmp(act, "gelu_tanh"))
    c->activation = ACT_GELU_TANH;
  else if (act && strcmp(act, "relu") && strcmp(act, "silu")) {
    err_set(err, "%s: metadata activation=\"%s\": Stepformer knows relu, gelu, gelu_tanh and silu", path,
            act);
    goto fail;
  }
  const char *eps = st_meta(&f, "layer_norm_eps");
  if (eps) {
    char *end;
    c->ln_eps = strtof(eps, &end);
    if (end == eps || *end) {
      err_set(err, "%s: metadata layer_norm_eps=\"%s\" is not a number", path, eps);
      goto fail;
    }
  }
  if (!read_extensions(&f, path, m, s2s, err) || !read_modern(&f, path, m, err)) goto fail;
  if (s2s && c->causal) {
    err_set(err,
            "%s: metadata causal=1 in an encoder-decoder: its encoder sees the whole source and its decoder "
            "is always masked; set causal to 0",
            path);
    goto fail;
  }
  if (!model_config_check(c, path, err)) goto fail;
  const char *seed = st_meta(&f, "seed");
  if (seed && *seed >= '0' && *seed <= '9') { // strtoull would take "-1" as 2^64-1
    char *end;
    m->seed = strtoull(seed, &end, 10);
    m->has_seed = end != seed && !*end;
  }
  // (has_head, has_classifier: read_extensions; an encoder-decoder's head is required)
  bool has_norm = !s2s && st_find(&f, "norm.weight") != NULL;
  m->has_final_norm = (m->has_head || m->has_classifier) && has_norm;
  int n;
  // every tensor must be in the file with its shape before anything is allocated for it:
  // a small file that claims a huge configuration fails here, not in malloc
  if (!model_table(m, &p, &n, err)) goto fail;
  for (int i = 0; i < n; i++) {
    const StTensor *t = st_find(&f, p[i].name);
    if (!t) {
      if (p[i].ndim == 1)
        err_set(err, "%s: tensor \"%s\" [%ld] is missing", path, p[i].name, p[i].shape[0]);
      else
        err_set(err, "%s: tensor \"%s\" [%ld,%ld] is missing", path, p[i].name, p[i].shape[0], p[i].shape[1]);
      goto fail;
    }
    bool same = t->ndim == p[i].ndim && t->shape[0] == p[i].shape[0] &&
                (p[i].ndim == 1 || t->shape[1] == p[i].shape[1]);
    if (!same) {
      char got[64] = "", *g = got;
      for (int k = 0; k < t->ndim; k++) g += snprintf(g, 16, k ? ",%lld" : "%lld", (long long)t->shape[k]);
      if (p[i].ndim == 1)
        err_set(err, "%s: tensor \"%s\" has shape [%s], expected [%ld] for the configuration in the metadata",
                path, p[i].name, got, p[i].shape[0]);
      else
        err_set(err,
                "%s: tensor \"%s\" has shape [%s], expected [%ld,%ld] for the configuration in the metadata",
                path, p[i].name, got, p[i].shape[0], p[i].shape[1]);
      goto fail;
    }
  }
  if (has_norm && !c->rms_norm && !st_find(&f, "norm.bias")) {
    err_set(err, "%s: tensor \"norm.bias\" is missing (norm.weight is present)", path);
    goto fail;
  }
  // every tensor of the file must be one the model uses: a tensor left out would make the
  // numbers differ from the trained model's without a word
  for (int i = 0; f.n > n && i < f.n; i++) { // every one of the n is there: more means others
    const char *name = f.tensors[i].name;
    int k = 0;
    while (k < n && strcmp(p[k].name, name)) k++;
    if (k < n) continue;
    int layer;
    if (s2s) {
      bool enc = sscanf(name, "encoder.layers.%d.", &layer) == 1 && layer >= c->n_layers;
      if (enc || (sscanf(name, "decoder.layers.%d.", &layer) == 1 && layer >= c->n_dec_layers))
        err_set(err,
                "%s: tensor \"%s\" belongs to %s layer %d but the metadata says %s=%d: set it to the number "
                "of layers the file holds",
                path, name, enc ? "encoder" : "decoder", layer + 1, enc ? "n_layers" : "n_decoder_layers",
                enc ? c->n_layers : c->n_dec_layers);
      else
        err_set(err,
                "%s: tensor \"%s\" is not one of an encoder-decoder (src_embed.weight, tgt_embed.weight, "
                "encoder.layers.N.*, encoder.norm.*, decoder.layers.N.*, decoder.norm.*, head.*): remove it "
                "from the file",
                path, name);
    } else if (sscanf(name, "layers.%d.", &layer) == 1 && layer >= c->n_layers)
      err_set(err,
              "%s: tensor \"%s\" belongs to layer %d but the metadata says n_layers=%d: set n_layers to the "
              "number of layers the file holds",
              path, name, layer + 1, c->n_layers);
    else if (!strcmp(name, "head.bias") || (!strcmp(name, "norm.bias") && (m->has_head || m->has_classifier)))
      err_set(err, "%s: tensor \"%s\" is present but \"%s\" is missing", path, name,
              name[0] == 'h' ? "head.weight" : "norm.weight");
    else if (!strncmp(name, "norm.", 5))
      err_set(err,
              "%s: tensor \"%s\" is a final LayerNorm, which Stepformer applies only before a prediction "
              "head (head.weight, head.bias) or a classifier: save the head too, or leave the norm out",
              path, name);
    else if (!strncmp(name, "head_transform.", 15) || !strncmp(name, "head_norm.", 10))
      err_set(err,
              "%s: tensor \"%s\" is part of a head's transform, and the file has no head (head.weight or "
              "tie_head=1): add the head, or remove it",
              path, name);
    else if (!strncmp(name, "layers.", 7) && (strstr(name, ".in_proj_bias") || strstr(name, "out_proj.bias")))
      err_set(err,
              "%s: tensor \"%s\" is an attention bias, but layer 1 has none: every layer has the biases or "
              "none does",
              path, name);
    else
      err_set(err,
              "%s: tensor \"%s\" is not one Stepformer uses (embed.weight, layers.N.*, norm.*, head.*): "
              "remove it from the file",
              path, name);
    goto fail;
  }
  // every tensor's buffer is taken over from f as it is (no parameter block, no copy); a tensor in
  // f's file mapping stays there (model.h)
  if (!(m->owned = calloc((size_t)n + 1, sizeof(float *)))) {
    err_set(err, "out of memory");
    goto fail;
  }
  bool uses_map = false;
  for (int i = 0; i < n; i++) {
    StTensor *st = (StTensor *)st_find(&f, p[i].name); // f is ours: its buffers are taken over
    const float *src = st->data;
    long cnt = param_count(&p[i]);
    bool tr = st->transposed && p[i].ndim == 2; // src holds [shape[1], shape[0]]
    for (long k = 0; k < cnt; k++)
      if (!isfinite(src[k])) {
        char at[48];
        if (p[i].ndim == 1)
          snprintf(at, sizeof at, "[%ld]", k);
        else if (tr)
          snprintf(at, sizeof at, "[%ld,%ld]", k % p[i].shape[0], k / p[i].shape[0]);
        else
          snprintf(at, sizeof at, "[%ld,%ld]", k / p[i].shape[1], k % p[i].shape[1]);
        err_set(err,
                "%s: tensor \"%s\" holds %s at %s: the model is broken (training diverged?); save it again "
                "from a good checkpoint",
                path, p[i].name,
                isnan(src[k]) ? "NaN"
                : src[k] > 0  ? "+inf"
                              : "-inf",
                at);
        goto fail;
      }
    m->converted |= !strcmp(st->dtype, "BF16") || !strcmp(st->dtype, "F16"); // (model_pack)
    bool mapped = st_mapped(&f, st->data);
    if (mapped) // checked: its pages go back to the page cache until something reads them
      st_release_pages(st->data, sizeof(float) * (size_t)cnt);
    if (tr && !(mapped && p[i].xw)) { // only a mapped layer matrix stays in Conv1D layout
      float *d = malloc(sizeof(float) * (size_t)cnt);
      if (!d) {
        err_set(err, "out of memory");
        goto fail;
      }
      mat_transpose(d, st->data, p[i].shape[1], p[i].shape[0]);
      if (!mapped) free(st->data);
      st->data = d, mapped = tr = false;
    }
    if (tr)
      *p[i].xw = st->data;
    else
      *p[i].ptr = st->data;
    if (!mapped) m->owned[m->n_owned++] = st->data;
    uses_map |= mapped;
    st->data = NULL;
    m->n_params += cnt;
  }
  if (uses_map) { // the model's tensors point into it: it stays while the model lives
    EXPECT(f.map_owner);
    m->map = f.map, m->map_len = f.map_len;
    f.map_owner = false;
  }
  if (m->tie_head) m->head_weight = m->embed; // the head is the embedding table itself
  snprintf(m->source, sizeof m->source, "%s", base_name(path));
  // keep the metadata: take the arrays over from the StFile
  m->meta_keys = f.keys, m->meta_values = f.values, m->n_meta = f.n_meta;
  f.keys = f.values = NULL, f.n_meta = 0;
  free(p);
  st_free(&f);
  model_pack(m);
  return m;
fail:
  free(p);
  st_free(&f);
  model_free(m);
  return NULL;
}

// The parameter table of a const model: param_table takes a mutable Model, so it reads a shallow
// copy with the same weight pointers (and copies of the layer arrays, whose fields it points at).
typedef struct {
  Model copy;
  LayerWeights *lw;
  DecLayerWeights *dw;
  Param *p;
  int n;
} ParamView;

static void param_view_free(ParamView *v) {
  free(v->lw);
  free(v->dw);
  free(v->p);
}

static bool param_view(const Model *m, ParamView *v) {
  v->copy = *m;
  v->lw = malloc(sizeof(LayerWeights) * (size_t)(m->cfg.n_layers > 0 ? m->cfg.n_layers : 1));
  v->dw = calloc((size_t)m->cfg.n_dec_layers + 1, sizeof(DecLayerWeights));
  int cap = param_cap(&m->cfg);
  v->p = calloc((size_t)cap, sizeof(Param));
  v->n = 0;
  if (!v->lw || !v->dw || !v->p) return param_view_free(v), false;
  memcpy(v->lw, m->layers, sizeof(LayerWeights) * (size_t)m->cfg.n_layers);
  if (m->cfg.n_dec_layers > 0)
    memcpy(v->dw, m->dec_layers, sizeof(DecLayerWeights) * (size_t)m->cfg.n_dec_layers);
  v->copy.layers = v->lw, v->copy.dec_layers = v->dw;
  v->n = param_table(&v->copy, v->p, cap);
  return true;
}

float *model_weights_flat(const Model *m) {
  ParamView v;
  float *out = malloc(sizeof(float) * (size_t)(m->n_params > 0 ? m->n_params : 1));
  if (!out || !param_view(m, &v)) return free(out), NULL;
  long off = 0;
  for (int i = 0; i < v.n && off + param_count(&v.p[i]) <= m->n_params; i++) {
    const Param *q = &v.p[i];
    const float *src = *q->ptr ? *q->ptr : q->xw ? *q->xw : NULL;
    size_t bytes = sizeof(float) * (size_t)param_count(q);
    if (!*q->ptr && src) // Conv1D layout [K, N] -> [N, K]
      mat_transpose(out + off, src, q->shape[1], q->shape[0]);
    else
      memcpy(out + off, src, bytes);
    const uint8_t *b = (const uint8_t *)src; // copied from the file mapping: its pages go back
    if (m->map && b >= m->map && b < m->map + m->map_len) st_release_pages(src, bytes);
    off += param_count(q);
  }
  param_view_free(&v);
  return out;
}

int64_t model_table_floats(const Model *m) {
  ParamView v;
  int64_t n = 0;
  if (!param_view(m, &v)) return -1;
  for (int i = 0; i < v.n; i++) n += param_count(&v.p[i]);
  param_view_free(&v);
  return n;
}

void model_memory(const Model *m, uint64_t *mapped, uint64_t *own, uint64_t *packed) {
  *mapped = *own = *packed = 0;
  ParamView v;
  if (param_view(m, &v)) {
    for (int i = 0; i < v.n; i++) {
      const Param *q = &v.p[i];
      uint64_t bytes = sizeof(float) * (uint64_t)param_count(q);
      const float *a = *q->ptr, *b = q->xw ? *q->xw : NULL; // canonical, Conv1D layout (or NULL)
      if (a) *(in_map(m, a) ? mapped : own) += bytes;
      if (b) *(in_map(m, b) ? mapped : own) += bytes;
    }
    param_view_free(&v);
  }
  for (int l = 0; m->layers && l < m->cfg.n_layers; l++) {
    const LayerWeights *w = &m->layers[l];
    const GemmWeights *g[LAYER_MATRICES] = {&w->in_proj_packed, &w->out_proj_packed, &w->linear1_packed,
                                            &w->linear2_packed, &w->gate_packed};
    for (int k = 0; k < LAYER_MATRICES; k++)
      if (g[k]->panels) *packed += sizeof(float) * gemm_packed_floats(g[k]->n, g[k]->k);
  }
  if (m->head_packed.panels)
    *packed += sizeof(float) * gemm_packed_floats(m->head_packed.n, m->head_packed.k);
}

void model_release_pages(const Model *m) {
  for (int l = 0; m->map && m->layers && l < m->cfg.n_layers; l++) {
    LayerMatrix mx[LAYER_MATRICES];
    layer_matrices(&m->cfg, &m->layers[l], mx);
    for (int k = 0; k < LAYER_MATRICES; k++) {
      size_t bytes = sizeof(float) * (size_t)(mx[k].n * mx[k].k);
      if (mx[k].n > 0 && in_map(m, *mx[k].canon)) st_release_pages(*mx[k].canon, bytes);
      if (mx[k].n > 0 && mx[k].xw && in_map(m, mx[k].xw)) st_release_pages(mx[k].xw, bytes);
    }
  }
}

long model_param_offset(const Model *m, const float *x) {
  ParamView v;
  if (!x || !param_view(m, &v)) return -1;
  long found = -1, off = 0;
  for (int i = 0; i < v.n && found < 0; i++) {
    long c = param_count(&v.p[i]);
    const float *base = *v.p[i].ptr, *xw = v.p[i].xw ? *v.p[i].xw : NULL;
    if (base && x >= base && x < base + c) found = off + (x - base);
    if (xw && x >= xw && x < xw + c) { // Conv1D layout [K, N]: row o / N, column o % N
      long o = x - xw, N = v.p[i].shape[0], K = v.p[i].shape[1];
      found = off + (o % N) * K + o / N;
    }
    off += c;
  }
  param_view_free(&v);
  return found;
}

bool model_write(const Model *m, const char *path, ModelWriteFn writer, Err *err) {
  Model copy = *m; // param_table takes a mutable Model: a shallow copy with the same pointers
  LayerWeights *lw = malloc(sizeof(LayerWeights) * (size_t)m->cfg.n_layers);
  DecLayerWeights *dw = calloc((size_t)m->cfg.n_dec_layers + 1, sizeof(DecLayerWeights));
  int cap = param_cap(&m->cfg);
  Param *p = calloc((size_t)cap, sizeof(Param));
  StTensor *t = calloc((size_t)cap, sizeof(StTensor));
  char *vocab = vocab_to_lines(&m->vocab);
  bool s2s = m->cfg.n_dec_layers > 0;
  char *tgt_vocab = s2s ? vocab_to_lines(&m->tgt_vocab) : NULL;
  const char **keys = NULL, **vals = NULL;
  bool ok = false;
  if (!lw || !dw || !p || !t || !vocab || (s2s && !tgt_vocab)) {
    err_set(err, "out of memory");
    goto done;
  }
  memcpy(lw, m->layers, sizeof(LayerWeights) * (size_t)m->cfg.n_layers);
  copy.layers = lw;
  if (s2s) memcpy(dw, m->dec_layers, sizeof(DecLayerWeights) * (size_t)m->cfg.n_dec_layers);
  copy.dec_layers = dw;
  int n = param_table(&copy, p, cap);
  for (int i = 0; i < n; i++) {
    t[i].name = p[i].name;
    t[i].ndim = p[i].ndim;
    t[i].shape[0] = p[i].shape[0];
    t[i].shape[1] = p[i].shape[1];
    t[i].count = param_count(&p[i]);
    t[i].data = *p[i].ptr;
    if (!t[i].data && p[i].xw && *p[i].xw) // written in the canonical layout by the writer
      t[i].data = *p[i].xw, t[i].transposed = true;
  }
  const ModelConfig *c = &m->cfg;
  char d[16], h[16], f[16], l[16], nf[4], ca[4], eps[32], seed[32], dl[16];
  snprintf(d, sizeof d, "%d", c->D);
  snprintf(h, sizeof h, "%d", c->H);
  snprintf(f, sizeof f, "%d", c->F);
  snprintf(l, sizeof l, "%d", c->n_layers);
  snprintf(dl, sizeof dl, "%d", c->n_dec_layers);
  snprintf(nf, sizeof nf, "%d", c->norm_first);
  snprintf(ca, sizeof ca, "%d", c->causal);
  snprintf(eps, sizeof eps, "%g", (double)c->ln_eps);
  snprintf(seed, sizeof seed, "%llu", (unsigned long long)m->seed);
  // The configuration as this model has it, then every other key the loaded file had (their
  // names are distinct: st_parse refuses a repeated one).
  // An encoder-decoder adds its decoder's layers and target vocabulary.
  // The canonical extensions: the keys a loader wrote (tie_head, tokenizer) from the model itself.
  enum { FIXED_MAX = 15 };
  const char *FIXED_KEYS[FIXED_MAX] = {"format",         "d_model",      "n_heads",    "d_ff",
                                       "n_layers",       "activation",   "norm_first", "causal",
                                       "layer_norm_eps", "pos_encoding", "vocab"};
  const char *fixed_vals[FIXED_MAX] = {
      "pt", d,
      h,    f,
      l,    model_activation_name(c->activation),
      nf,   ca,
      eps,  c->rope ? "rope" : c->learned_pos ? "learned" : c->no_pos ? "none" : "sinusoidal",
      vocab};
  int FIXED = 11;
  if (m->tie_head) FIXED_KEYS[FIXED] = "tie_head", fixed_vals[FIXED++] = "1";
  if (m->tok_kind != TOK_WORDS)
    FIXED_KEYS[FIXED] = "tokenizer", fixed_vals[FIXED++] = model_tokenizer_name(m->tok_kind);
  if (s2s) {
    FIXED_KEYS[FIXED] = "n_decoder_layers", fixed_vals[FIXED++] = dl;
    FIXED_KEYS[FIXED] = "tgt_vocab", fixed_vals[FIXED++] = tgt_vocab;
  }
  keys = malloc(sizeof(char *) * (size_t)(FIXED + m->n_meta + 3));
  vals = malloc(sizeof(char *) * (size_t)(FIXED + m->n_meta + 3));
  if (!keys || !vals) {
    err_set(err, "out of memory");
    goto done;
  }
  int n_meta = FIXED;
  for (int k = 0; k < FIXED; k++) keys[k] = FIXED_KEYS[k], vals[k] = fixed_vals[k];
  for (int i = 0; i < m->n_meta; i++) {
    int k = 0;
    while (k < FIXED && strcmp(keys[k], m->meta_keys[i])) k++;
    if (k == FIXED)
      keys[n_meta] = m->meta_keys[i], vals[n_meta++] = m->meta_values[i];
    else if (!strcmp(keys[k], "layer_norm_eps") || !strcmp(keys[k], "format"))
      vals[k] = m->meta_values[i];
  }
  bool seen_gen = false, seen_seed = false;
  for (int k = 0; k < n_meta; k++) {
    seen_gen |= !strcmp(keys[k], "generator");
    seen_seed |= !strcmp(keys[k], "seed");
  }
  if (!seen_gen) keys[n_meta] = "generator", vals[n_meta++] = "stepformer";
  // the version that wrote this copy (a dump's model.safetensors), replacing an earlier one's
  char written_by[96];
  snprintf(written_by, sizeof written_by, "stepformer %s (commit %s)", version_string(), version_commit());
  int wk = 0;
  while (wk < n_meta && strcmp(keys[wk], "written_by")) wk++;
  keys[wk] = "written_by", vals[wk] = written_by;
  if (wk == n_meta) n_meta++;
  if (!seen_seed && m->has_seed) keys[n_meta] = "seed", vals[n_meta++] = seed;
  ok = writer(path, t, n, keys, vals, n_meta, m->map, m->map_len, err);
done:
  free(keys);
  free(vals);
  free(lw);
  free(dw);
  free(p);
  free(t);
  free(vocab);
  free(tgt_vocab);
  return ok;
}

// ---------------------------------------------------------------- training (issue 21)

int model_tensor_list(const Model *m, ModelTensor *out, int cap) {
  if (!model_canonical(m)) return 0; // the data pointers are the canonical layout's
  Model copy = *m; // param_table takes a mutable Model: a shallow copy with the same pointers
  LayerWeights *lw = malloc(sizeof(LayerWeights) * (size_t)m->cfg.n_layers);
  DecLayerWeights *dw = calloc((size_t)m->cfg.n_dec_layers + 1, sizeof(DecLayerWeights));
  int pc = param_cap(&m->cfg), n = 0;
  Param *p = calloc((size_t)pc, sizeof(Param));
  if (lw && dw && p) {
    memcpy(lw, m->layers, sizeof(LayerWeights) * (size_t)m->cfg.n_layers);
    if (m->cfg.n_dec_layers > 0)
      memcpy(dw, m->dec_layers, sizeof(DecLayerWeights) * (size_t)m->cfg.n_dec_layers);
    copy.layers = lw;
    copy.dec_layers = dw;
    int all = param_table(&copy, p, pc);
    for (int i = 0; i < all && n < cap; i++, n++) {
      snprintf(out[n].name, sizeof out[n].name, "%s", p[i].name);
      out[n].data = *p[i].ptr;
      out[n].ndim = p[i].ndim;
      out[n].shape[0] = p[i].shape[0];
      out[n].shape[1] = p[i].shape[1];
    }
  }
  free(lw);
  free(dw);
  free(p);
  return n;
}

int model_tensor_cap(const Model *m) { return param_cap(&m->cfg); }

// A shallow copy of an encoder whose parameter block is its own; `m` first, so a Model * to it is a
// StepModel *.
typedef struct {
  Model m;
} StepModel;

Model *model_with_params(const Model *m, const float *params, Err *err) {
  if (model_is_seq2seq(m)) return err_set(err, "an encoder-decoder cannot take a training step yet"), NULL;
  StepModel *s = calloc(1, sizeof *s);
  Param *p = calloc((size_t)param_cap(&m->cfg), sizeof(Param));
  if (!s || !p) {
    free(s);
    free(p);
    return err_set(err, "out of memory for the model after the step"), NULL;
  }
  Model *c = &s->m;
  *c = *m;
  c->stored_path = NULL; // its weights are no longer the file's
  c->layers = malloc(sizeof(LayerWeights) * (size_t)m->cfg.n_layers);
  c->params = malloc(sizeof(float) * (size_t)(m->n_params > 0 ? m->n_params : 1));
  if (!c->layers || !c->params) {
    free(c->layers);
    free(c->params);
    free(s);
    free(p);
    return err_set(err, "out of memory for the model after the step"), NULL;
  }
  memcpy(c->layers, m->layers, sizeof(LayerWeights) * (size_t)m->cfg.n_layers);
  memcpy(c->params, params, sizeof(float) * (size_t)m->n_params);
  int n = param_table(c, p, param_cap(&m->cfg));
  long off = 0; // the flat order of model_weights_flat: one block, tensor after tensor
  for (int i = 0; i < n; i++) *p[i].ptr = c->params + off, off += param_count(&p[i]);
  c->owned = NULL, c->n_owned = 0; // the copy owns its one block, not the loaded model's buffers
  c->map = NULL, c->map_len = 0;
  for (int l = 0; l < m->cfg.n_layers; l++) // its matrices are the block's, in the canonical layout
    c->layers[l].in_proj_xw = c->layers[l].out_proj_xw = c->layers[l].linear1_xw = c->layers[l].linear2_xw =
        NULL;
  if (m->tie_head) c->head_weight = c->embed;
  c->head_packed = (GemmWeights){0}; // packed afresh below when the model's is
  if (m->head_packed.panels) gemm_pack(&c->head_packed, mat_view(c->head_weight, c->cfg.V, c->cfg.D));
  free(p);
  for (int l = 0; l < m->cfg.n_layers; l++) { // packed afresh (or not at all, as the model's)
    LayerWeights *w = &c->layers[l];
    const LayerWeights *o = &m->layers[l];
    GemmWeights *dst[LAYER_MATRICES] = {&w->in_proj_packed, &w->out_proj_packed, &w->linear1_packed,
                                        &w->linear2_packed, &w->gate_packed};
    const GemmWeights *src[LAYER_MATRICES] = {&o->in_proj_packed, &o->out_proj_packed, &o->linear1_packed,
                                              &o->linear2_packed, &o->gate_packed};
    LayerMatrix mx[LAYER_MATRICES]; // the shapes (today's decoders: [(H + 2·H_kv)·d_k, D] …, the gate)
    layer_matrices(&c->cfg, w, mx);
    for (int k = 0; k < LAYER_MATRICES; k++) {
      *dst[k] = (GemmWeights){0};
      if (src[k]->panels && mx[k].n > 0)
        gemm_pack(dst[k], mat_view(*mx[k].canon, (int)mx[k].n, (int)mx[k].k));
    }
  }
  return c;
}

void model_with_params_free(Model *m) {
  if (!m) return;
  for (int l = 0; l < m->cfg.n_layers; l++) layer_unpack(&m->layers[l]);
  gemm_free(&m->head_packed);
  free(m->layers);
  free(m->params);
  free((StepModel *)m);
}
