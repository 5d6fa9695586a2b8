// stages.c -- see stages.h. The course's notation, reviewable in one place.
#include "stages.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strdist.h" // defines: strdist

#define ROWS(r, c) AXIS_##r, AXIS_##c

// The learner's order. Aliases are in stage_key form; titles are accepted as names too. An alias
// means one stage only: no letters alone ("Z" is three stages), no "projection" (Q, K, V or W^o?),
// no "residual" or "output" (there are two of each in a layer).
const StageInfo STAGE_TABLE[] = {
    {STEP_TOKENS, "tokens", "token ids words", "tokens", 1, false, false, STAGE_ONE_MATRIX, STAGE_ALWAYS,
     ROWS(TOKEN, TOKEN), NULL, NULL},
    {STEP_ONEHOT, "onehot", "one_hot", "one-hot", 2, false, false, STAGE_ONE_MATRIX, STAGE_ALWAYS,
     ROWS(TOKEN, VOCAB), NULL, NULL},
    {STEP_EMBED, "embed", "embedding embeddings", "token embeddings", 3, false, false, STAGE_ONE_MATRIX,
     STAGE_ALWAYS, ROWS(TOKEN, MODEL), NULL, NULL},
    {STEP_POSENC, "posenc", "positions positional", "positional encoding", 4, false, false, STAGE_ONE_MATRIX,
     STAGE_ALWAYS, ROWS(TOKEN, MODEL), NULL, NULL},
    {STEP_ADDPOS, "addpos", "z_p add_positions", "embeddings + positions", 5, false, false, STAGE_ONE_MATRIX,
     STAGE_ALWAYS, ROWS(TOKEN, MODEL), NULL, NULL},
    {STEP_EMBED_NORM, "embed_norm", "embedding_norm embeddings_layernorm", "embedding LayerNorm", 5, false,
     false, STAGE_ONE_MATRIX, STAGE_IF_EMBED_NORM, ROWS(TOKEN, MODEL), NULL, NULL},
    {STEP_PRENORM, "prenorm", "ln1 layernorm_before_attention pre_norm", "LayerNorm (pre-norm)", 5, true,
     true, STAGE_ONE_MATRIX, STAGE_IF_PRE_NORM, ROWS(TOKEN, MODEL), NULL, NULL},
    {STEP_RMSNORM1, "rmsnorm", "rms1 rms_norm rmsnorm1 rmsnorm_before_attention", "RMSNorm before attention",
     5, true, true, STAGE_ONE_MATRIX, STAGE_IF_RMSNORM, ROWS(TOKEN, MODEL), NULL, NULL},
    {STEP_QKV, "qkv", "q_k_v queries keys values", "Q, K, V projections", 6, false, true, STAGE_HEAD_BANDS,
     STAGE_ALWAYS, ROWS(TOKEN, HEADDIM), "Queries, keys and values",
     "Q = Z W^q + b^q,\\quad K = Z W^k + b^k,\\quad V = Z W^v + b^v"},
    {STEP_ROPE, "rope", "rotary rotary_positions rotary_position_embedding rotate", "RoPE: rotate Q and K", 6,
     true, true, STAGE_HEAD_BANDS, STAGE_IF_ROPE, ROWS(TOKEN, HEADDIM),
     "Rotary positions on queries and keys", "Q_h \\leftarrow R_i\\, Q_h,\\quad K_h \\leftarrow R_i\\, K_h"},
    {STEP_SCORES, "scores", "scaled score", "scaled scores", 7, false, true, STAGE_PER_HEAD, STAGE_ALWAYS,
     ROWS(TOKEN, TOKEN), NULL, NULL},
    {STEP_MASK, "mask", "masked causal causal_mask", "mask", 8, false, true, STAGE_PER_HEAD, STAGE_IF_CAUSAL,
     ROWS(TOKEN, TOKEN), NULL, NULL},
    {STEP_SOFTMAX, "softmax", "attention attention_weights", "softmax", 9, false, true, STAGE_PER_HEAD,
     STAGE_ALWAYS, ROWS(TOKEN, TOKEN), NULL, NULL},
    {STEP_AV, "av", "a_v weighted weighted_value", "weighted values", 10, false, true, STAGE_PER_HEAD,
     STAGE_ALWAYS, ROWS(TOKEN, HEADDIM), NULL, NULL},
    {STEP_CONCAT, "concat", "concatenate concatenation heads_concatenated", "concatenate heads", 11, false,
     true, STAGE_ONE_MATRIX, STAGE_ALWAYS, ROWS(TOKEN, QKV), NULL, NULL},
    {STEP_OUTPROJ, "outproj", "output_projection out_proj wo multihead", "output projection", 12, false, true,
     STAGE_ONE_MATRIX, STAGE_ALWAYS, ROWS(TOKEN, MODEL), NULL, NULL},
    {STEP_ADDNORM1, "addnorm1", "add_norm1 residual1", "residual + LayerNorm", 13, false, true,
     STAGE_ONE_MATRIX, STAGE_ALWAYS, ROWS(TOKEN, MODEL), NULL, NULL},
    {STEP_RMSNORM2, "rmsnorm2", "rms2 residual_rmsnorm rmsnorm_before_ffn", "residual + RMSNorm", 13, false,
     true, STAGE_ONE_MATRIX, STAGE_IF_RMSNORM, ROWS(TOKEN, MODEL), NULL, NULL},
    {STEP_GATE, "gate", "gate_proj swiglu_gate", "gate", 14, false, true, STAGE_ONE_MATRIX, STAGE_IF_GATED,
     ROWS(TOKEN, FFN), NULL, NULL},
    {STEP_UP, "up", "up_proj swiglu_up", "up", 14, true, true, STAGE_ONE_MATRIX, STAGE_IF_GATED,
     ROWS(TOKEN, FFN), NULL, NULL},
    {STEP_FFN_HIDDEN, "ffn_hidden", "ffn1 hidden relu gelu swiglu silu", "feed-forward hidden", 14, false,
     true, STAGE_ONE_MATRIX, STAGE_ALWAYS, ROWS(TOKEN, FFN), NULL, NULL},
    {STEP_FFN_OUT, "ffn_out", "ffn2 feed_forward_output", "feed-forward out", 15, false, true,
     STAGE_ONE_MATRIX, STAGE_ALWAYS, ROWS(TOKEN, MODEL), NULL, NULL},
    {STEP_ADDNORM2, "addnorm2", "add_norm2 residual2 layer_output", "residual + LayerNorm: layer output", 16,
     false, true, STAGE_ONE_MATRIX, STAGE_ALWAYS, ROWS(TOKEN, MODEL), NULL, NULL},
    {STEP_HEAD_TRANSFORM, "head_transform", "mlm_transform transform", "head transform", 17, false, false,
     STAGE_ONE_MATRIX, STAGE_IF_HEAD_TRANSFORM, ROWS(TOKEN, MODEL), NULL, NULL},
    {STEP_PREDICT, "predict", "prediction pred next_word logits", "prediction", 17, false, false,
     STAGE_ONE_MATRIX, STAGE_IF_HEAD, ROWS(TOKEN, VOCAB), NULL, NULL},
    // A classifier (the course's model): after the last layer, a sentence becomes one vector.
    {STEP_ENC_NORM, "enc_norm", "classifier_norm encoder_final_norm", "final LayerNorm", 17, false, false,
     STAGE_ONE_MATRIX, STAGE_IF_CLASSIFIER, ROWS(TOKEN, MODEL), NULL, NULL},
    {STEP_POOL, "pool", "mean mean_pool pooling average", "mean over positions", 18, false, false,
     STAGE_ONE_MATRIX, STAGE_IF_CLASSIFIER, ROWS(ONE, MODEL), NULL, NULL},
    {STEP_CLASS_SCORES, "class_scores", "class_logits classifier", "class scores", 19, false, false,
     STAGE_ONE_MATRIX, STAGE_IF_CLASSIFIER, ROWS(ONE, CLASS), NULL, NULL},
    {STEP_CLASS_PRED, "class_pred", "classification class_prediction_probabilities", "class prediction", 20,
     false, false, STAGE_ONE_MATRIX, STAGE_IF_CLASSIFIER, ROWS(ONE, CLASS), NULL, NULL},
    // Two sentences: how alike their vectors are after each layer (rows: the first sentence's
    // tokens, columns the second's), and one word's similarity across the layers.
    {STEP_SIM, "sim", "similarity cosine cosine_similarity bank_in_two_contexts", "cosine similarity", 21,
     false, true, STAGE_ONE_MATRIX, STAGE_IF_COMPARE, ROWS(TOKEN, TOKEN2), NULL, NULL},

    // An encoder-decoder (issue 11): memory, then the decoder. Its tokens are the target's (T of
    // them: <bos> and the target's words); cross-attention's keys are the source's (S of them).
    {STEP_MEMORY, "memory", "encoder_output encoder_norm", "memory", 18, false, false, STAGE_ONE_MATRIX,
     STAGE_IF_DECODER, ROWS(TOKEN, MODEL), NULL, NULL},
    {STEP_DEC_TOKENS, "dec_tokens", "target_tokens decoder_input", "target tokens", 19, false, false,
     STAGE_ONE_MATRIX, STAGE_IF_DECODER, ROWS(TGT_TOKEN, TGT_TOKEN), NULL, NULL},
    {STEP_DEC_ONEHOT, "dec_onehot", "target_one_hot", "target one-hot", 20, false, false, STAGE_ONE_MATRIX,
     STAGE_IF_DECODER, ROWS(TGT_TOKEN, TGT_VOCAB), NULL, NULL},
    {STEP_DEC_EMBED, "dec_embed", "target_embedding target_embeddings", "target token embeddings", 21, false,
     false, STAGE_ONE_MATRIX, STAGE_IF_DECODER, ROWS(TGT_TOKEN, MODEL), NULL, NULL},
    {STEP_DEC_POSENC, "dec_posenc", "target_positions", "target positional encoding", 22, false, false,
     STAGE_ONE_MATRIX, STAGE_IF_DECODER, ROWS(TGT_TOKEN, MODEL), NULL, NULL},
    {STEP_DEC_ADDPOS, "dec_addpos", "target_add_positions", "target embeddings + positions", 23, false, false,
     STAGE_ONE_MATRIX, STAGE_IF_DECODER, ROWS(TGT_TOKEN, MODEL), NULL, NULL},
    {STEP_DEC_PRENORM, "dec_prenorm", "decoder_pre_norm", "decoder LayerNorm (pre-norm)", 23, true, true,
     STAGE_ONE_MATRIX, STAGE_IF_DECODER_PRE_NORM, ROWS(TGT_TOKEN, MODEL), NULL, NULL},
    {STEP_DEC_QKV, "dec_qkv", "decoder_q_k_v", "masked self-attention: Q, K, V", 24, false, true,
     STAGE_HEAD_BANDS, STAGE_IF_DECODER, ROWS(TGT_TOKEN, HEADDIM), "Queries, keys and values of the target",
     "Q = Y W^q + b^q,\\quad K = Y W^k + b^k,\\quad V = Y W^v + b^v"},
    {STEP_DEC_SCORES, "dec_scores", "decoder_scores", "masked self-attention: scaled scores", 25, false, true,
     STAGE_PER_HEAD, STAGE_IF_DECODER, ROWS(TGT_TOKEN, TGT_TOKEN), NULL, NULL},
    {STEP_DEC_MASK, "dec_mask", "look_ahead_mask decoder_mask", "masked self-attention: mask", 26, false,
     true, STAGE_PER_HEAD, STAGE_IF_DECODER, ROWS(TGT_TOKEN, TGT_TOKEN), NULL, NULL},
    {STEP_DEC_SOFTMAX, "dec_softmax", "decoder_attention", "masked self-attention: softmax", 27, false, true,
     STAGE_PER_HEAD, STAGE_IF_DECODER, ROWS(TGT_TOKEN, TGT_TOKEN), NULL, NULL},
    {STEP_DEC_AV, "dec_av", "decoder_weighted_values", "masked self-attention: weighted values", 28, false,
     true, STAGE_PER_HEAD, STAGE_IF_DECODER, ROWS(TGT_TOKEN, HEADDIM), NULL, NULL},
    {STEP_DEC_CONCAT, "dec_concat", "decoder_concat", "masked self-attention: concatenate heads", 29, false,
     true, STAGE_ONE_MATRIX, STAGE_IF_DECODER, ROWS(TGT_TOKEN, QKV), NULL, NULL},
    {STEP_DEC_OUTPROJ, "dec_outproj", "decoder_out_proj", "masked self-attention: output projection", 30,
     false, true, STAGE_ONE_MATRIX, STAGE_IF_DECODER, ROWS(TGT_TOKEN, MODEL), NULL, NULL},
    {STEP_DEC_ADDNORM1, "dec_addnorm1", "decoder_residual1", "decoder residual + LayerNorm 1", 31, false,
     true, STAGE_ONE_MATRIX, STAGE_IF_DECODER, ROWS(TGT_TOKEN, MODEL), NULL, NULL},
    {STEP_CROSS_QKV, "cross_qkv", "cross_q_k_v memory_keys_values", "cross-attention: Q, K, V", 32, false,
     true, STAGE_HEAD_BANDS, STAGE_IF_DECODER, ROWS(TGT_TOKEN, HEADDIM),
     "Cross-attention: queries from the decoder, keys and values from memory",
     "Q^c = X W^{qc} + b^{qc},\\quad K^c = M W^{kc} + b^{kc},\\quad V^c = M W^{vc} + b^{vc}"},
    {STEP_CROSS_SCORES, "cross_scores", "cross_scaled_scores", "cross-attention: scaled scores", 33, false,
     true, STAGE_PER_HEAD, STAGE_IF_DECODER, ROWS(TGT_TOKEN, TOKEN), NULL, NULL},
    {STEP_CROSS_SOFTMAX, "cross_softmax", "cross_attention cross_attention_weights",
     "cross-attention: softmax", 34, false, true, STAGE_PER_HEAD, STAGE_IF_DECODER, ROWS(TGT_TOKEN, TOKEN),
     NULL, NULL},
    {STEP_CROSS_AV, "cross_av", "cross_weighted_values", "cross-attention: weighted values", 35, false, true,
     STAGE_PER_HEAD, STAGE_IF_DECODER, ROWS(TGT_TOKEN, HEADDIM), NULL, NULL},
    {STEP_CROSS_CONCAT, "cross_concat", "cross_concatenate", "cross-attention: concatenate heads", 36, false,
     true, STAGE_ONE_MATRIX, STAGE_IF_DECODER, ROWS(TGT_TOKEN, QKV), NULL, NULL},
    {STEP_CROSS_OUTPROJ, "cross_outproj", "cross_out_proj", "cross-attention: output projection", 37, false,
     true, STAGE_ONE_MATRIX, STAGE_IF_DECODER, ROWS(TGT_TOKEN, MODEL), NULL, NULL},
    {STEP_DEC_ADDNORM2, "dec_addnorm2", "decoder_residual2", "decoder residual + LayerNorm 2", 38, false,
     true, STAGE_ONE_MATRIX, STAGE_IF_DECODER, ROWS(TGT_TOKEN, MODEL), NULL, NULL},
    {STEP_DEC_FFN_HIDDEN, "dec_ffn_hidden", "decoder_ffn1", "decoder feed-forward hidden", 39, false, true,
     STAGE_ONE_MATRIX, STAGE_IF_DECODER, ROWS(TGT_TOKEN, FFN), NULL, NULL},
    {STEP_DEC_FFN_OUT, "dec_ffn_out", "decoder_ffn2", "decoder feed-forward out", 40, false, true,
     STAGE_ONE_MATRIX, STAGE_IF_DECODER, ROWS(TGT_TOKEN, MODEL), NULL, NULL},
    {STEP_DEC_ADDNORM3, "dec_addnorm3", "decoder_residual3 decoder_layer_output",
     "decoder residual + LayerNorm 3: layer output", 41, false, true, STAGE_ONE_MATRIX, STAGE_IF_DECODER,
     ROWS(TGT_TOKEN, MODEL), NULL, NULL},
    {STEP_DEC_PREDICT, "dec_predict", "target_prediction next_target_word translation", "target prediction",
     42, false, false, STAGE_ONE_MATRIX, STAGE_IF_DECODER, ROWS(TGT_TOKEN, TGT_VOCAB), NULL, NULL},
};
const int STAGE_COUNT = (int)(sizeof STAGE_TABLE / sizeof STAGE_TABLE[0]);

const StageInfo *stage_info(StepKind k) {
  for (int i = 0; i < STAGE_COUNT; i++)
    if (STAGE_TABLE[i].kind == k) return &STAGE_TABLE[i];
  return NULL;
}

char *stage_key(const char *name, char *out, int cap) {
  int n = 0;
  bool gap = false;
  for (const char *p = name; *p && n < cap - 1; p++) {
    char c = *p;
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      if (gap && n > 0 && n < cap - 2) out[n++] = '_';
      out[n++] = c;
      gap = false;
    } else {
      gap = true;
    }
  }
  out[n] = 0;
  return out;
}

// Every name of every stage in the table's order: its name, its title, its aliases (each in
// stage_key form), with its length and strdist_letters. Made once per process: a lesson (and the
// lesson fuzzer, thousands of times a second) looks a name up for every stage= it meets.
typedef struct {
  const char *key;
  size_t len;
  uint64_t letters;
  const StageInfo *s;
} StageName;
static StageName *NAMES;
static int n_names;
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

// Calls add (when not NULL) with every name of stage s; returns how many there are.
static int list_names(void (*add)(const char *key, const StageInfo *s)) {
  char key[64];
  int n = 0;
  for (int i = 0; i < STAGE_COUNT; i++) {
    const StageInfo *s = &STAGE_TABLE[i];
    if (add) add(s->name, s), add(stage_key(s->title, key, sizeof key), s);
    n += 2;
    for (const char *a = s->aliases; *a;) {
      size_t len = strcspn(a, " ");
      if (len > 0 && len < sizeof key) {
        memcpy(key, a, len);
        key[len] = 0;
        if (add) add(key, s);
        n++;
      }
      a += len;
      while (*a == ' ') a++;
    }
  }
  return n;
}

static void add_name(const char *key, const StageInfo *s) {
  StageName *k = &NAMES[n_names++];
  k->len = strlen(key);
  k->key = key == s->name ? key : strdup(key); // made once, kept for the process
  k->letters = strdist_letters(key, k->len);
  k->s = s;
  if (!k->key) n_names--;
}

static void make_names(void) {
  NAMES = calloc((size_t)list_names(NULL), sizeof *NAMES);
  if (NAMES) list_names(add_name);
}

// Calls fn with every name of every stage; stops and returns true when fn does.
typedef bool (*NameFn)(const StageName *name, void *ctx);
static bool each_name(NameFn fn, void *ctx) {
  pthread_once(&names_once, make_names);
  for (int i = 0; i < n_names; i++)
    if (fn(&NAMES[i], ctx)) return true;
  return false;
}

typedef struct {
  const char *want;
  const StageInfo *found;
} Find;

static bool match(const StageName *name, void *ctx) {
  Find *f = ctx;
  if (strcmp(name->key, f->want)) return false;
  f->found = name->s;
  return true;
}

bool stage_from_name(const char *name, StepKind *k) {
  char key[64];
  if (!name || strlen(name) >= sizeof key) return false;
  Find f = {stage_key(name, key, sizeof key), NULL};
  if (!key[0] || !each_name(match, &f)) return false;
  *k = f.found->kind;
  return true;
}

typedef struct {
  const char *want;
  size_t n;
  uint64_t letters;
  int best;
  const StageInfo *found;
} Near;

static bool nearer(const StageName *name, void *ctx) {
  Near *f = ctx;
  int limit = f->best - 1;
  if ((name->len > f->n ? name->len - f->n : f->n - name->len) > (size_t)limit ||
      strdist_bound(f->letters, name->letters) > limit)
    return false; // cannot be within reach
  int d = strdist(f->want, f->n, name->key, name->len, limit, false);
  if (d < f->best) f->best = d, f->found = name->s; // the first of the nearest, in the table's order
  return false;
}

const char *stage_nearest(const char *name) {
  char key[64];
  if (!name || strlen(name) >= sizeof key) return NULL;
  stage_key(name, key, sizeof key);
  size_t n = strlen(key);
  if (n == 0) return NULL;
  Near f = {key, n, strdist_letters(key, n), (n > 5 ? 3 : 2) + 1,
            NULL}; // within 2 edits, or 3 for a longer name
  each_name(nearer, &f);
  return f.found ? f.found->name : NULL;
}

const char *stage_name_list(void) {
  static char list[1024];
  if (!list[0]) {
    int n = 0;
    for (int i = 0; i < STAGE_COUNT && n < (int)sizeof list; i++)
      n += snprintf(list + n, sizeof list - (size_t)n, "%s%s", i ? ", " : "", STAGE_TABLE[i].name);
  }
  return list;
}

// ---------------------------------------------------------------- the notation of every tensor

#define PRE WHEN_PRE_NORM
#define POST WHEN_POST_NORM
#define DEC WHEN_DECODER
#define MOD WHEN_MODERN
static const TensorNotation NOTATION[] = {
    // ---- today's decoders (issue 34: Llama, Qwen, SmolLM). First, so that their tensors find these
    // rows before the 2017 Transformer's of the same name. Notation: x the residual stream, RMSNorm's
    // gain g, RoPE's rotation R_i of position i, H_kv K/V heads (query head h reads K/V head
    // ⌊h / (H/H_kv)⌋), the gated FFN's W_g (gate), W_1 (up), W_2 (down).
    {"X", MOD, T_EMBED, ROWS(TOKEN, MODEL), false, "Token embeddings (no positions added)", "X", "X = O E"},
    {"P", MOD, T_POSENC, ROWS(TOKEN, MODEL), true, "No added positions: RoPE rotates Q and K", "P", "P = 0"},
    {"Z", MOD, T_ADDPOS, ROWS(TOKEN, MODEL), true, "The residual stream's start: Z = X", "Z", "Z = X = O E"},
    {"rope_angle", MOD, T_POSENC, ROWS(TOKEN, HEADDIM), true, "RoPE angles: position × frequency",
     "i\\theta_k", "\\phi_{i,k} = i\\,\\theta_k,\\quad \\theta_k = \\Theta^{-2k/d_k}"},
    {"in", MOD | WHEN_FIRST_LAYER, T_LAYER_IN, ROWS(TOKEN, MODEL), true, "Layer input", "x", "x = X"},
    {"in", MOD | WHEN_LATER_LAYER, T_LAYER_IN, ROWS(TOKEN, MODEL), true, "Layer input", "x",
     "x \\leftarrow \\text{output of the layer before}"},
    {"rms1.rms", MOD, T_RMSNORM, ROWS(TOKEN, ONE), true, "Each row's root mean square", "\\mathrm{rms}(x)",
     "\\mathrm{rms}(x_i) = \\sqrt{\\tfrac{1}{D}\\textstyle\\sum_j x_{ij}^2 + \\epsilon}"},
    {"rms2.rms", MOD, T_RMSNORM, ROWS(TOKEN, ONE), true, "Each row's root mean square", "\\mathrm{rms}(x')",
     "\\mathrm{rms}(x'_i) = \\sqrt{\\tfrac{1}{D}\\textstyle\\sum_j x'^2_{ij} + \\epsilon}"},
    {"rms1.gamma", MOD, T_NORM_W, ROWS(TOKEN, MODEL), false, "RMSNorm gain", "g_1", "g_1"},
    {"rms1", MOD | WHEN_RMSNORM_OFFSET, T_RMSNORM, ROWS(TOKEN, MODEL), false, "RMSNorm before attention",
     "\\bar{x}", "\\bar{x} = \\frac{x}{\\sqrt{\\frac{1}{D}\\sum_j x_j^2 + \\epsilon}} \\odot (1 + g_1)"},
    {"rms1", MOD, T_RMSNORM, ROWS(TOKEN, MODEL), false, "RMSNorm before attention", "\\bar{x}",
     "\\bar{x} = \\frac{x}{\\sqrt{\\frac{1}{D}\\sum_j x_j^2 + \\epsilon}} \\odot g_1"},
    {"Wq", MOD, T_PROJ_W, ROWS(MODEL, QKV), false, "Query weights", "W^q",
     "W^q = [W^q_1 \\cdots W^q_H] \\in \\mathbb{R}^{D \\times H d_k}"},
    {"Wk", MOD, T_PROJ_W, ROWS(MODEL, QKV), false, "Key weights", "W^k",
     "W^k = [W^k_1 \\cdots W^k_{H_{kv}}] \\in \\mathbb{R}^{D \\times H_{kv} d_k}"},
    {"Wv", MOD, T_PROJ_W, ROWS(MODEL, QKV), false, "Value weights", "W^v",
     "W^v = [W^v_1 \\cdots W^v_{H_{kv}}] \\in \\mathbb{R}^{D \\times H_{kv} d_k}"},
    {"q_norm.gamma", MOD, T_NORM_W, ROWS(TOKEN, HEADDIM), false, "QK-norm gain of the queries", "g_q", "g_q"},
    {"k_norm.gamma", MOD, T_NORM_W, ROWS(TOKEN, HEADDIM), false, "QK-norm gain of the keys", "g_k", "g_k"},
    {"Q_norope", MOD | WHEN_QK_NORM, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Queries, normalized per head",
     "Q_h", "Q_h = \\mathrm{RMSNorm}(\\bar{x} W^q_h) \\odot g_q"},
    {"K_norope", MOD | WHEN_QK_NORM, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Keys, normalized per head", "K_h",
     "K_h = \\mathrm{RMSNorm}(\\bar{x} W^k_h) \\odot g_k"},
    {"Q_norope", MOD | WHEN_NO_BIAS, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Queries (before RoPE)", "Q_h",
     "Q_h = \\bar{x} W^q_h"},
    {"K_norope", MOD | WHEN_NO_BIAS, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Keys (before RoPE)", "K_h",
     "K_h = \\bar{x} W^k_h,\\quad h = 1 \\ldots H_{kv}"},
    {"Q_norope", MOD, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Queries (before RoPE)", "Q_h",
     "Q_h = \\bar{x} W^q_h + b^q_h"},
    {"K_norope", MOD, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Keys (before RoPE)", "K_h",
     "K_h = \\bar{x} W^k_h + b^k_h,\\quad h = 1 \\ldots H_{kv}"},
    {"V", MOD | WHEN_NO_BIAS, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Values", "V_h",
     "V_h = \\bar{x} W^v_h,\\quad h = 1 \\ldots H_{kv}"},
    {"V", MOD, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Values", "V_h",
     "V_h = \\bar{x} W^v_h + b^v_h,\\quad h = 1 \\ldots H_{kv}"},
    {"Q", MOD, T_ROPE, ROWS(TOKEN, HEADDIM), false, "Queries, rotated by position (RoPE)", "\\tilde{Q}_h",
     "\\tilde{q}_{i} = R_{\\theta, i}\\, q_{i}:\\ \\text{pair } k \\text{ turned by } i\\,\\theta_k,\\ "
     "\\theta_k = \\Theta^{-2k/d_k}"},
    {"K", MOD, T_ROPE, ROWS(TOKEN, HEADDIM), false, "Keys, rotated by position (RoPE)", "\\tilde{K}_h",
     "\\tilde{k}_{j} = R_{\\theta, j}\\, k_{j}:\\ \\text{pair } k \\text{ turned by } j\\,\\theta_k"},
    {"S_raw", MOD, T_SCORES, ROWS(TOKEN, TOKEN), true, "Scaled scores", "S_h",
     "S_h = \\frac{\\tilde{Q}_h \\tilde{K}_{g(h)}^\\top}{\\sqrt{d_k}},\\quad g(h) = \\lfloor h H_{kv} / H "
     "\\rfloor"},
    {"A", MOD, T_ATTN, ROWS(TOKEN, TOKEN), false, "Attention weights", "A_h",
     "A_h = \\operatorname{softmax}(S_h + M)"},
    {"AV", MOD, T_AV, ROWS(TOKEN, HEADDIM), false, "Weighted values", "\\mathrm{head}_h",
     "\\mathrm{head}_h = A_h V_{g(h)}"},
    {"Wo", MOD, T_OUT_W, ROWS(QKV, MODEL), false, "Output weights", "W^o",
     "W^o \\in \\mathbb{R}^{H d_k \\times D}"},
    {"attn", MOD, T_ATTN_OUT, ROWS(TOKEN, MODEL), false, "Output projection", "\\mathrm{Attn}(\\bar{x})",
     "\\mathrm{Attn}(\\bar{x}) = \\mathrm{Concat} \\cdot W^o"},
    {"res1", MOD, T_RESIDUAL, ROWS(TOKEN, MODEL), false, "Residual", "x'",
     "x' = x + \\mathrm{Attn}(\\bar{x})"},
    {"rms2.gamma", MOD, T_NORM_W, ROWS(TOKEN, MODEL), false, "RMSNorm gain", "g_2", "g_2"},
    {"rms2", MOD | WHEN_RMSNORM_OFFSET, T_RMSNORM, ROWS(TOKEN, MODEL), false, "Residual, then RMSNorm",
     "\\bar{x}'", "\\bar{x}' = \\frac{x'}{\\mathrm{rms}(x')} \\odot (1 + g_2)"},
    {"rms2", MOD, T_RMSNORM, ROWS(TOKEN, MODEL), false, "Residual, then RMSNorm", "\\bar{x}'",
     "\\bar{x}' = \\frac{x'}{\\sqrt{\\frac{1}{D}\\sum_j x'^2_j + \\epsilon}} \\odot g_2"},
    {"Wg", MOD, T_FFN1_W, ROWS(MODEL, FFN), false, "Gate weights", "W_g",
     "W_g \\in \\mathbb{R}^{D \\times F}"},
    {"W1", MOD, T_FFN1_W, ROWS(MODEL, FFN), false, "Up weights", "W_1", "W_1 \\in \\mathbb{R}^{D \\times F}"},
    {"W2", MOD, T_FFN2_W, ROWS(FFN, MODEL), false, "Down weights", "W_2",
     "W_2 \\in \\mathbb{R}^{F \\times D}"},
    {"gate", MOD, T_GATE, ROWS(TOKEN, FFN), false, "Gate", "G", "G = \\bar{x}' W_g"},
    {"up", MOD, T_GATE, ROWS(TOKEN, FFN), false, "Up", "U", "U = \\bar{x}' W_1"},
    {"ffn_hidden", MOD | WHEN_SILU, T_GATED, ROWS(TOKEN, FFN), false, "SwiGLU: SiLU(gate) ⊙ up", "h",
     "h = \\mathrm{SiLU}(G) \\odot U,\\quad \\mathrm{SiLU}(u) = \\frac{u}{1 + e^{-u}}"},
    {"ffn_hidden", MOD | WHEN_GELU_TANH, T_GATED, ROWS(TOKEN, FFN), false, "GeGLU: GELU(gate) ⊙ up", "h",
     "h = \\mathrm{GELU}(G) \\odot U \\text{ (tanh form)}"},
    {"ffn_hidden", MOD, T_GATED, ROWS(TOKEN, FFN), false, "GeGLU: GELU(gate) ⊙ up", "h",
     "h = \\mathrm{GELU}(G) \\odot U"},
    {"ffn", MOD, T_FFN_OUT, ROWS(TOKEN, MODEL), false, "Down projection", "\\mathrm{FFN}(\\bar{x}')",
     "\\mathrm{FFN}(\\bar{x}') = h W_2"},
    {"res2", MOD, T_RESIDUAL, ROWS(TOKEN, MODEL), false, "Residual: the layer output", "x''",
     "x'' = x' + \\mathrm{FFN}(\\bar{x}')"},
    {"out", MOD, T_RESIDUAL, ROWS(TOKEN, MODEL), false, "Layer output", "x''",
     "x'' = x + \\mathrm{Attn}(\\bar{x}) + \\mathrm{FFN}(\\bar{x}')"},
    {"norm.gamma", MOD, T_NORM_W, ROWS(TOKEN, MODEL), false, "Final RMSNorm gain", "g", "g"},
    {"final_norm", MOD, T_RMSNORM, ROWS(TOKEN, MODEL), true, "Final RMSNorm", "y",
     "y = \\frac{x''}{\\mathrm{rms}(x'')} \\odot g"},

    // ---- an encoder-decoder's memory and decoder (issue 11). First, so that a decoder's tensor
    // finds its row before the encoder's row of the same name. Notation: the decoder's input Y
    // (target tokens, T of them), memory M (source tokens, S of them), cross-attention's ^c.
    {"memory.gamma", DEC, T_NORM_W, ROWS(TOKEN, MODEL), false, "Encoder's final LayerNorm gain", "\\gamma_M",
     "\\gamma_M"},
    {"memory.beta", DEC, T_NORM_W, ROWS(TOKEN, MODEL), false, "Encoder's final LayerNorm shift", "\\beta_M",
     "\\beta_M"},
    {"memory", DEC, T_MEMORY, ROWS(TOKEN, MODEL), false, "Memory: the encoder's output", "M",
     "M = \\mathrm{LayerNorm}(Z'),\\quad M \\in \\mathbb{R}^{S \\times D}"},
    {"dec.O", DEC, T_ONEHOT, ROWS(TGT_TOKEN, TGT_VOCAB), false, "One-hot target tokens", "O_t",
     "O_t \\in \\mathbb{R}^{T \\times V_t},\\quad \\text{target word } 1 = \\langle\\mathrm{bos}\\rangle"},
    {"dec.E", DEC, T_EMBED_W, ROWS(TGT_VOCAB, MODEL), false, "Target embedding table", "E_t",
     "E_t \\in \\mathbb{R}^{V_t \\times D}"},
    {"dec.X", DEC, T_EMBED, ROWS(TGT_TOKEN, MODEL), false, "Target token embeddings", "Y",
     "Y = O_t E_t,\\quad E_t \\in \\mathbb{R}^{V_t \\times D}"},
    {"dec.P", DEC, T_POSENC, ROWS(TGT_TOKEN, MODEL), false, "Positional encoding of the target", "P",
     "p_{i,\\,2k+1} = \\sin\\left(\\frac{i-1}{10000^{2k/D}}\\right),\\quad p_{i,\\,2k+2} = "
     "\\cos\\left(\\frac{i-1}{10000^{2k/D}}\\right)"},
    {"dec.Z", DEC, T_ADDPOS, ROWS(TGT_TOKEN, MODEL), false, "Target embeddings plus positions", "Y",
     "Y \\leftarrow O_t E_t + P"},

    // a decoder layer: its input, masked self-attention
    {"in", DEC | WHEN_FIRST_LAYER, T_LAYER_IN, ROWS(TGT_TOKEN, MODEL), true, "Decoder layer input", "Y", "Y"},
    {"in", DEC | WHEN_LATER_LAYER, T_LAYER_IN, ROWS(TGT_TOKEN, MODEL), true, "Decoder layer input", "Y",
     "Y \\leftarrow \\text{output of the decoder layer before}"},
    {"norm1", DEC | PRE, T_NORM_IN, ROWS(TGT_TOKEN, MODEL), false,
     "LayerNorm before the masked self-attention (pre-norm)", "\\mathrm{LN}_1(Y)",
     "\\mathrm{LN}_1(Y) = \\gamma_1 \\cdot \\frac{Y - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}} + \\beta_1"},
    // pre-norm: the projections multiply LN_1(Y), as the picture does
    {"Q", DEC | PRE, T_PROJ, ROWS(TGT_TOKEN, HEADDIM), false, "Queries of the target", "Q_h",
     "Q = \\mathrm{LN}_1(Y) W^q + b^q,\\quad Q_h = \\mathrm{LN}_1(Y) W^q_h + b^q_h"},
    {"K", DEC | PRE, T_PROJ, ROWS(TGT_TOKEN, HEADDIM), false, "Keys of the target", "K_h",
     "K = \\mathrm{LN}_1(Y) W^k + b^k,\\quad K_h = \\mathrm{LN}_1(Y) W^k_h + b^k_h"},
    {"V", DEC | PRE, T_PROJ, ROWS(TGT_TOKEN, HEADDIM), false, "Values of the target", "V_h",
     "V = \\mathrm{LN}_1(Y) W^v + b^v,\\quad V_h = \\mathrm{LN}_1(Y) W^v_h + b^v_h"},
    {"Q", DEC, T_PROJ, ROWS(TGT_TOKEN, HEADDIM), false, "Queries of the target", "Q_h",
     "Q = Y W^q + b^q,\\quad Q_h = Y W^q_h + b^q_h"},
    {"K", DEC, T_PROJ, ROWS(TGT_TOKEN, HEADDIM), false, "Keys of the target", "K_h",
     "K = Y W^k + b^k,\\quad K_h = Y W^k_h + b^k_h"},
    {"V", DEC, T_PROJ, ROWS(TGT_TOKEN, HEADDIM), false, "Values of the target", "V_h",
     "V = Y W^v + b^v,\\quad V_h = Y W^v_h + b^v_h"},
    {"S_raw", DEC, T_SCORES, ROWS(TGT_TOKEN, TGT_TOKEN), true, "Scaled scores of the target", "S_h",
     "S_h = \\frac{Q_h K_h^\\top}{\\sqrt{d_k}}"},
    // the look-ahead mask is Mask here: M is the decoder's memory
    {"S", DEC, T_MASKED, ROWS(TGT_TOKEN, TGT_TOKEN), false, "Look-ahead mask", "S_h + \\mathrm{Mask}",
     "S_h \\leftarrow S_h + \\mathrm{Mask},\\quad \\mathrm{Mask}_{ij} = -\\infty \\text{ for } j > i "
     "\\text{ (a word not yet written)}"},
    {"A", DEC, T_ATTN, ROWS(TGT_TOKEN, TGT_TOKEN), false, "Masked self-attention weights", "A_h",
     "A_h = \\operatorname{softmax}(S_h + \\mathrm{Mask})"},
    {"AV", DEC, T_AV, ROWS(TGT_TOKEN, HEADDIM), false, "Weighted values of the target", "\\mathrm{head}_h",
     "\\mathrm{head}_h = A_h V_h"},
    {"concat", DEC, T_CONCAT, ROWS(TGT_TOKEN, QKV), false, "Heads concatenated", "\\mathrm{Concat}",
     "\\mathrm{Concat} = [\\mathrm{head}_1 \\cdots \\mathrm{head}_H]"},
    {"attn", DEC, T_ATTN_OUT, ROWS(TGT_TOKEN, MODEL), false, "Masked self-attention output",
     "\\mathrm{MaskedMH}(Y)", "\\mathrm{MaskedMH}(Y) = \\mathrm{Concat} \\cdot W^o + b^o"},
    {"res1", DEC, T_RESIDUAL, ROWS(TGT_TOKEN, MODEL), false, "Residual", "Y + \\mathrm{MaskedMH}(Y)",
     "Y + \\mathrm{MaskedMH}(Y)"},
    {"norm1", DEC | POST, T_NORM, ROWS(TGT_TOKEN, MODEL), false, "Residual and LayerNorm 1", "x",
     "x = \\mathrm{LayerNorm}_1(Y + \\mathrm{MaskedMH}(Y))"},
    {"norm2", DEC | PRE, T_NORM_IN, ROWS(TGT_TOKEN, MODEL), false,
     "Residual, then LayerNorm before the cross-attention (pre-norm)", "x",
     "x = \\mathrm{LN}_2(Y + \\mathrm{MaskedMH}(\\mathrm{LN}_1(Y)))"},
    {"norm3.gamma", DEC, T_NORM_W, ROWS(TOKEN, MODEL), false, "LayerNorm gain", "\\gamma_3", "\\gamma_3"},
    {"norm3.beta", DEC, T_NORM_W, ROWS(TOKEN, MODEL), false, "LayerNorm shift", "\\beta_3", "\\beta_3"},

    // cross-attention: queries from the decoder, keys and values from memory M
    {"cWq", DEC, T_PROJ_W, ROWS(MODEL, QKV), false, "Cross-attention query weights", "W^{qc}",
     "W^{qc} \\in \\mathbb{R}^{D \\times D}"},
    {"cWk", DEC, T_PROJ_W, ROWS(MODEL, QKV), false, "Cross-attention key weights", "W^{kc}",
     "W^{kc} \\in \\mathbb{R}^{D \\times D}"},
    {"cWv", DEC, T_PROJ_W, ROWS(MODEL, QKV), false, "Cross-attention value weights", "W^{vc}",
     "W^{vc} \\in \\mathbb{R}^{D \\times D}"},
    {"cbq", DEC, T_PROJ_B, ROWS(TGT_TOKEN, QKV), false, "Cross-attention query bias", "b^{qc}", "b^{qc}"},
    {"cbk", DEC, T_PROJ_B, ROWS(TOKEN, QKV), false, "Cross-attention key bias", "b^{kc}", "b^{kc}"},
    {"cbv", DEC, T_PROJ_B, ROWS(TOKEN, QKV), false, "Cross-attention value bias", "b^{vc}", "b^{vc}"},
    {"cQ", DEC, T_PROJ, ROWS(TGT_TOKEN, HEADDIM), false, "Cross-attention queries (from the decoder)",
     "Q^c_h", "Q^c = x W^{qc} + b^{qc},\\quad Q^c_h = x W^{qc}_h + b^{qc}_h"},
    {"cK", DEC, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Cross-attention keys (from memory)", "K^c_h",
     "K^c = M W^{kc} + b^{kc},\\quad K^c_h = M W^{kc}_h + b^{kc}_h \\text{ (once per layer)}"},
    {"cV", DEC, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Cross-attention values (from memory)", "V^c_h",
     "V^c = M W^{vc} + b^{vc},\\quad V^c_h = M W^{vc}_h + b^{vc}_h \\text{ (once per layer)}"},
    {"cS", DEC, T_SCORES, ROWS(TGT_TOKEN, TOKEN), false, "Cross-attention scaled scores", "S^c_h",
     "S^c_h = \\frac{Q^c_h (K^c_h)^\\top}{\\sqrt{d_k}} \\in \\mathbb{R}^{T \\times S}"},
    {"cA", DEC, T_ATTN, ROWS(TGT_TOKEN, TOKEN), false, "Cross-attention weights", "A^c_h",
     "A^c_h = \\operatorname{softmax}\\left(\\frac{Q^c_h (K^c_h)^\\top}{\\sqrt{d_k}}\\right)"},
    {"cAV", DEC, T_AV, ROWS(TGT_TOKEN, HEADDIM), false, "Cross-attention weighted values",
     "\\mathrm{head}^c_h", "\\mathrm{head}^c_h = A^c_h V^c_h"},
    {"cconcat", DEC, T_CONCAT, ROWS(TGT_TOKEN, QKV), false, "Cross-attention heads concatenated",
     "\\mathrm{Concat}^c", "\\mathrm{Concat}^c = [\\mathrm{head}^c_1 \\cdots \\mathrm{head}^c_H]"},
    {"cWo", DEC, T_OUT_W, ROWS(QKV, MODEL), false, "Cross-attention output weights", "W^{oc}",
     "W^{oc} \\in \\mathbb{R}^{D \\times D}"},
    {"cbo", DEC, T_OUT_B, ROWS(TGT_TOKEN, MODEL), false, "Cross-attention output bias", "b^{oc}", "b^{oc}"},
    {"cattn", DEC, T_ATTN_OUT, ROWS(TGT_TOKEN, MODEL), false, "Cross-attention output",
     "\\mathrm{CrossMH}(x, M)", "\\mathrm{CrossMH}(x, M) = \\mathrm{Concat}^c \\cdot W^{oc} + b^{oc}"},
    {"res2", DEC, T_RESIDUAL, ROWS(TGT_TOKEN, MODEL), false, "Residual", "x + \\mathrm{CrossMH}(x, M)",
     "x + \\mathrm{CrossMH}(x, M)"},
    {"norm2", DEC | POST, T_NORM, ROWS(TGT_TOKEN, MODEL), false, "Residual and LayerNorm 2", "x'",
     "x' = \\mathrm{LayerNorm}_2(x + \\mathrm{CrossMH}(x, M))"},
    {"norm3", DEC | PRE, T_NORM_IN, ROWS(TGT_TOKEN, MODEL), false,
     "Residual, then LayerNorm before the feed-forward (pre-norm)", "x'",
     "x' = \\mathrm{LN}_3(Y + \\mathrm{MaskedMH}(\\mathrm{LN}_1(Y)) + \\mathrm{CrossMH}(x, M))"},

    // feed-forward and the layer's output
    {"ffn_pre", DEC, T_FFN_PRE, ROWS(TGT_TOKEN, FFN), true, "Feed-forward, before the activation",
     "x' W_1 + b_1", "x' W_1 + b_1"},
    {"ffn_hidden", DEC | WHEN_RELU, T_FFN_HIDDEN, ROWS(TGT_TOKEN, FFN), false,
     "Feed-forward hidden layer (ReLU)", "h", "h = \\max(0,\\, x' W_1 + b_1)"},
    {"ffn_hidden", DEC | WHEN_GELU, T_FFN_HIDDEN, ROWS(TGT_TOKEN, FFN), false,
     "Feed-forward hidden layer (GELU)", "h", "h = \\mathrm{GELU}(x' W_1 + b_1)"},
    {"ffn", DEC, T_FFN_OUT, ROWS(TGT_TOKEN, MODEL), false, "Feed-forward output", "\\mathrm{FFN}(x')",
     "\\mathrm{FFN}(x') = h W_2 + b_2"},
    {"res3", DEC | PRE, T_RESIDUAL, ROWS(TGT_TOKEN, MODEL), false, "Residual: the layer output (pre-norm)",
     "Y'", "Y' = Y + \\mathrm{MaskedMH}(\\mathrm{LN}_1(Y)) + \\mathrm{CrossMH}(x, M) + \\mathrm{FFN}(x')"},
    {"res3", DEC | POST, T_RESIDUAL, ROWS(TGT_TOKEN, MODEL), false, "Residual", "x' + \\mathrm{FFN}(x')",
     "x' + \\mathrm{FFN}(x')"},
    {"norm3", DEC | POST, T_NORM, ROWS(TGT_TOKEN, MODEL), true, "Residual and LayerNorm 3: the layer output",
     "Y'", "Y' = \\mathrm{LayerNorm}_3(x' + \\mathrm{FFN}(x'))"},
    {"out", DEC | PRE, T_RESIDUAL, ROWS(TGT_TOKEN, MODEL), false, "Decoder layer output", "Y'",
     "Y' = Y + \\mathrm{MaskedMH}(\\mathrm{LN}_1(Y)) + \\mathrm{CrossMH}(x, M) + \\mathrm{FFN}(x')"},
    {"out", DEC | POST, T_NORM, ROWS(TGT_TOKEN, MODEL), false, "Decoder layer output", "Y'",
     "Y' = \\mathrm{LayerNorm}_3(x' + \\mathrm{FFN}(x'))"},

    // the decoder's final LayerNorm and the prediction over the target vocabulary
    {"dec.norm.gamma", DEC, T_NORM_W, ROWS(TOKEN, MODEL), false, "Decoder's final LayerNorm gain", "\\gamma",
     "\\gamma"},
    {"dec.norm.beta", DEC, T_NORM_W, ROWS(TOKEN, MODEL), false, "Decoder's final LayerNorm shift", "\\beta",
     "\\beta"},
    {"dec.norm", DEC, T_NORM, ROWS(TGT_TOKEN, MODEL), false, "Decoder's final LayerNorm", "y",
     "y = \\mathrm{LayerNorm}(Y')"},
    {"Wout", DEC, T_HEAD_W, ROWS(MODEL, TGT_VOCAB), false, "Prediction weights", "W_{\\mathrm{out}}",
     "W_{\\mathrm{out}} \\in \\mathbb{R}^{D \\times V_t}"},
    {"bout", DEC, T_HEAD_W, ROWS(TGT_TOKEN, TGT_VOCAB), false, "Prediction bias", "b_{\\mathrm{out}}",
     "b_{\\mathrm{out}}"},
    {"logits", DEC, T_LOGITS, ROWS(TGT_TOKEN, TGT_VOCAB), true, "Logits",
     "y W_{\\mathrm{out}} + b_{\\mathrm{out}}", "y W_{\\mathrm{out}} + b_{\\mathrm{out}}"},
    {"pred", DEC, T_PRED, ROWS(TGT_TOKEN, TGT_VOCAB), false, "Prediction of the next target word", "\\hat{p}",
     "\\hat{p}_i = \\operatorname{softmax}(y_i W_{\\mathrm{out}} + b_{\\mathrm{out}}) \\text{: the word "
     "after target word } i"},

    // ---- the encoder (and an encoder-decoder's encoder)
    // before the layers
    {"O", 0, T_ONEHOT, ROWS(TOKEN, VOCAB), false, "One-hot tokens", "O",
     "O \\in \\mathbb{R}^{L \\times V},\\quad O_{i,\\,\\mathrm{id}(x_i)} = 1"},
    {"E", 0, T_EMBED_W, ROWS(VOCAB, MODEL), false, "Embedding table", "E",
     "E \\in \\mathbb{R}^{V \\times D}"},
    {"X", 0, T_EMBED, ROWS(TOKEN, MODEL), false, "Token embeddings", "Z",
     "Z = O E,\\quad E \\in \\mathbb{R}^{V \\times D}"},
    {"P", WHEN_LEARNED_POS, T_POSENC, ROWS(TOKEN, MODEL), false, "Positional encoding (learned)", "P",
     "P = \\text{rows } 1..L \\text{ of the learned table},\\quad P \\in \\mathbb{R}^{L \\times D}"},
    {"t0", 0, T_POS_W, ROWS(ONE, MODEL), false, "Token type embedding (type 0)", "t_0",
     "t_0 \\in \\mathbb{R}^{D} \\text{ (row 0 of the token type table)}"},
    {"embed_sum", WHEN_TOKEN_TYPE, T_ADDPOS, ROWS(TOKEN, MODEL), false,
     "Embeddings, positions and token type", "Z + P + t_0", "Z + P + t_0"},
    {"embed_sum", 0, T_ADDPOS, ROWS(TOKEN, MODEL), false, "Embeddings plus positions", "Z + P", "Z + P"},
    {"embed_norm.gamma", 0, T_NORM_W, ROWS(TOKEN, MODEL), false, "Embedding LayerNorm gain", "\\gamma_E",
     "\\gamma_E"},
    {"embed_norm.beta", 0, T_NORM_W, ROWS(TOKEN, MODEL), false, "Embedding LayerNorm shift", "\\beta_E",
     "\\beta_E"},
    {"Z", WHEN_EMBED_NORM | WHEN_TOKEN_TYPE, T_NORM, ROWS(TOKEN, MODEL), false, "Embedding LayerNorm", "Z",
     "Z \\leftarrow \\mathrm{LayerNorm}(Z + P + t_0)"},
    {"Z", WHEN_EMBED_NORM, T_NORM, ROWS(TOKEN, MODEL), false, "Embedding LayerNorm", "Z",
     "Z \\leftarrow \\mathrm{LayerNorm}(Z + P)"},
    {"Z", WHEN_TOKEN_TYPE, T_ADDPOS, ROWS(TOKEN, MODEL), false, "Embeddings, positions and token type", "Z",
     "Z \\leftarrow Z + P + t_0"},
    {"P", WHEN_NO_POS, T_POSENC, ROWS(TOKEN, MODEL), false, "No positions: P = 0", "P",
     "P = 0 \\text{: no positions, word order is not seen}"},
    {"Z", WHEN_NO_POS, T_ADDPOS, ROWS(TOKEN, MODEL), false, "No positions: Z = OE", "Z",
     "\\text{no positions: } Z = O E"},
    {"P", 0, T_POSENC, ROWS(TOKEN, MODEL), false, "Positional encoding", "P",
     "p_{i,\\,2k+1} = \\sin\\left(\\frac{i-1}{10000^{2k/D}}\\right),\\quad p_{i,\\,2k+2} = "
     "\\cos\\left(\\frac{i-1}{10000^{2k/D}}\\right)"},
    {"Z", 0, T_ADDPOS, ROWS(TOKEN, MODEL), false, "Embeddings plus positions", "Z", "Z \\leftarrow O E + P"},

    // a layer: its input, and the LayerNorm before attention of a pre-norm model
    {"in", WHEN_FIRST_LAYER, T_LAYER_IN, ROWS(TOKEN, MODEL), true, "Layer input", "Z", "Z"},
    {"in", WHEN_LATER_LAYER, T_LAYER_IN, ROWS(TOKEN, MODEL), true, "Layer input", "Z",
     "Z \\leftarrow \\text{output of the layer before}"},
    {"norm1.gamma", 0, T_NORM_W, ROWS(TOKEN, MODEL), false, "LayerNorm gain", "\\gamma_1", "\\gamma_1"},
    {"norm1.beta", 0, T_NORM_W, ROWS(TOKEN, MODEL), false, "LayerNorm shift", "\\beta_1", "\\beta_1"},
    {"norm1", PRE, T_NORM_IN, ROWS(TOKEN, MODEL), false, "LayerNorm before attention (pre-norm)",
     "\\mathrm{LN}_1(Z)",
     "\\mathrm{LN}_1(Z) = \\gamma_1 \\cdot \\frac{Z - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}} + \\beta_1"},

    // Q, K, V. W^q = in_proj_weight[0:D]ᵀ: the stored rows 0..D-1 are W^q's columns.
    {"Wq", WHEN_Q_SCALED, T_PROJ_W, ROWS(MODEL, QKV), false, "Query weights ÷ √H", "W^q",
     "W^q = W^{\\text{queries}} / \\sqrt{H}"},
    {"Wq", 0, T_PROJ_W, ROWS(MODEL, QKV), false, "Query weights", "W^q",
     "W^q = [W^q_1 \\cdots W^q_H] \\in \\mathbb{R}^{D \\times D}"},
    {"Wk", 0, T_PROJ_W, ROWS(MODEL, QKV), false, "Key weights", "W^k",
     "W^k = [W^k_1 \\cdots W^k_H] \\in \\mathbb{R}^{D \\times D}"},
    {"Wv", 0, T_PROJ_W, ROWS(MODEL, QKV), false, "Value weights", "W^v",
     "W^v = [W^v_1 \\cdots W^v_H] \\in \\mathbb{R}^{D \\times D}"},
    {"bq", 0, T_PROJ_B, ROWS(TOKEN, QKV), false, "Query bias", "b^q", "b^q"},
    {"bk", 0, T_PROJ_B, ROWS(TOKEN, QKV), false, "Key bias", "b^k", "b^k"},
    {"bv", 0, T_PROJ_B, ROWS(TOKEN, QKV), false, "Value bias", "b^v", "b^v"},
    // pre-norm: the projections multiply LN_1(Z), as the picture does
    {"Q", PRE | WHEN_Q_SCALED, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Queries ÷ √H", "Q_h",
     "Q = \\frac{\\mathrm{LN}_1(Z) W^{\\text{queries}}}{\\sqrt{H}},\\quad Q_h K_h^\\top / \\sqrt{d_k} = "
     "\\mathrm{LN}_1(Z) W_h^{\\text{queries}} K_h^\\top / \\sqrt{D}"},
    {"Q", PRE | WHEN_NO_BIAS, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Queries", "Q_h",
     "Q = \\mathrm{LN}_1(Z) W^q,\\quad Q_h = \\mathrm{LN}_1(Z) W^q_h"},
    {"K", PRE | WHEN_NO_BIAS, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Keys", "K_h",
     "K = \\mathrm{LN}_1(Z) W^k,\\quad K_h = \\mathrm{LN}_1(Z) W^k_h"},
    {"V", PRE | WHEN_NO_BIAS, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Values", "V_h",
     "V = \\mathrm{LN}_1(Z) W^v,\\quad V_h = \\mathrm{LN}_1(Z) W^v_h"},
    {"Q", PRE, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Queries", "Q_h",
     "Q = \\mathrm{LN}_1(Z) W^q + b^q,\\quad Q_h = \\mathrm{LN}_1(Z) W^q_h + b^q_h"},
    {"K", PRE, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Keys", "K_h",
     "K = \\mathrm{LN}_1(Z) W^k + b^k,\\quad K_h = \\mathrm{LN}_1(Z) W^k_h + b^k_h"},
    {"V", PRE, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Values", "V_h",
     "V = \\mathrm{LN}_1(Z) W^v + b^v,\\quad V_h = \\mathrm{LN}_1(Z) W^v_h + b^v_h"},
    {"Q", WHEN_Q_SCALED, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Queries ÷ √H", "Q_h",
     "Q = \\frac{Z W^{\\text{queries}}}{\\sqrt{H}},\\quad Q_h K_h^\\top / \\sqrt{d_k} = "
     "Z W_h^{\\text{queries}} K_h^\\top / \\sqrt{D}"},
    {"Q", WHEN_NO_BIAS, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Queries", "Q_h",
     "Q = Z W^q,\\quad Q_h = Z W^q_h"},
    {"K", WHEN_NO_BIAS, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Keys", "K_h", "K = Z W^k,\\quad K_h = Z W^k_h"},
    {"V", WHEN_NO_BIAS, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Values", "V_h",
     "V = Z W^v,\\quad V_h = Z W^v_h"},
    {"Q", 0, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Queries", "Q_h",
     "Q = Z W^q + b^q,\\quad Q_h = Z W^q_h + b^q_h"},
    {"K", 0, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Keys", "K_h",
     "K = Z W^k + b^k,\\quad K_h = Z W^k_h + b^k_h"},
    {"V", 0, T_PROJ, ROWS(TOKEN, HEADDIM), false, "Values", "V_h",
     "V = Z W^v + b^v,\\quad V_h = Z W^v_h + b^v_h"},

    // attention: with a causal mask, "S" is the masked scores and "S_raw" the scores before it
    {"S_raw", WHEN_CAUSAL, T_SCORES, ROWS(TOKEN, TOKEN), true, "Scaled scores", "S_h",
     "S_h = \\frac{Q_h K_h^\\top}{\\sqrt{d_k}}"},
    {"S", WHEN_CAUSAL, T_MASKED, ROWS(TOKEN, TOKEN), false, "Causal mask", "S_h + M",
     "S_h \\leftarrow S_h + M,\\quad M_{ij} = -\\infty \\text{ for } j > i"},
    {"S", WHEN_NOT_CAUSAL, T_SCORES, ROWS(TOKEN, TOKEN), false, "Scaled scores", "S_h",
     "S_h = \\frac{Q_h K_h^\\top}{\\sqrt{d_k}}"},
    {"A", 0, T_ATTN, ROWS(TOKEN, TOKEN), false, "Attention weights", "A_h",
     "A_h = \\operatorname{softmax}\\left(\\frac{Q_h K_h^\\top}{\\sqrt{d_k}}\\right)"},
    {"AV", 0, T_AV, ROWS(TOKEN, HEADDIM), false, "Weighted values", "\\mathrm{head}_h",
     "\\mathrm{head}_h = A_h V_h"},
    {"concat", 0, T_CONCAT, ROWS(TOKEN, QKV), false, "Heads concatenated", "\\mathrm{Concat}",
     "\\mathrm{Concat} = [\\mathrm{head}_1 \\cdots \\mathrm{head}_H]"},
    {"Wo", 0, T_OUT_W, ROWS(QKV, MODEL), false, "Output weights", "W^o",
     "W^o \\in \\mathbb{R}^{D \\times D}"},
    {"bo", 0, T_OUT_B, ROWS(TOKEN, MODEL), false, "Output bias", "b^o", "b^o"},
    {"attn", WHEN_NO_OUT_BIAS, T_ATTN_OUT, ROWS(TOKEN, MODEL), false, "Output projection",
     "\\mathrm{MultiHead}(Z)", "\\mathrm{MultiHead}(Z) = \\mathrm{Concat} \\cdot W^o"},
    {"attn", 0, T_ATTN_OUT, ROWS(TOKEN, MODEL), false, "Output projection", "\\mathrm{MultiHead}(Z)",
     "\\mathrm{MultiHead}(Z) = \\mathrm{Concat} \\cdot W^o + b^o"},
    {"res1", 0, T_RESIDUAL, ROWS(TOKEN, MODEL), false, "Residual", "Z + \\mathrm{MultiHead}(Z)",
     "Z + \\mathrm{MultiHead}(Z)"},

    // residual and LayerNorm after attention: post-norm's norm1, pre-norm's norm2
    {"norm1", POST, T_NORM, ROWS(TOKEN, MODEL), false, "Residual and LayerNorm", "x",
     "x = \\mathrm{LayerNorm}(Z + \\mathrm{MultiHead}(Z))"},
    {"norm2.gamma", 0, T_NORM_W, ROWS(TOKEN, MODEL), false, "LayerNorm gain", "\\gamma_2", "\\gamma_2"},
    {"norm2.beta", 0, T_NORM_W, ROWS(TOKEN, MODEL), false, "LayerNorm shift", "\\beta_2", "\\beta_2"},
    {"norm2", PRE, T_NORM, ROWS(TOKEN, MODEL), false, "Residual, then LayerNorm (pre-norm)", "x",
     "x = \\mathrm{LN}_2(Z + \\mathrm{MultiHead}(\\mathrm{LN}_1(Z)))"},

    // feed-forward
    {"W1", 0, T_FFN1_W, ROWS(MODEL, FFN), false, "Feed-forward weights 1", "W_1",
     "W_1 \\in \\mathbb{R}^{D \\times F}"},
    {"b1", 0, T_FFN1_B, ROWS(TOKEN, FFN), false, "Feed-forward bias 1", "b_1", "b_1"},
    {"ffn_pre", 0, T_FFN_PRE, ROWS(TOKEN, FFN), true, "Feed-forward, before the activation", "x W_1 + b_1",
     "x W_1 + b_1"},
    {"ffn_hidden", WHEN_RELU, T_FFN_HIDDEN, ROWS(TOKEN, FFN), false, "Feed-forward hidden layer (ReLU)", "h",
     "h = \\max(0,\\, x W_1 + b_1)"},
    {"ffn_hidden", WHEN_GELU_TANH, T_FFN_HIDDEN, ROWS(TOKEN, FFN), false,
     "Feed-forward hidden layer (GELU, tanh form)", "h",
     "h = \\mathrm{GELU}(u),\\quad \\mathrm{GELU}(u) \\approx \\tfrac{1}{2} u \\left(1 + "
     "\\tanh\\left(\\sqrt{2/\\pi}\\,(u + 0.044715\\, u^3)\\right)\\right),\\ u = x W_1 + b_1"},
    {"ffn_hidden", WHEN_GELU, T_FFN_HIDDEN, ROWS(TOKEN, FFN), false, "Feed-forward hidden layer (GELU)", "h",
     "h = \\mathrm{GELU}(x W_1 + b_1),\\quad \\mathrm{GELU}(u) = u\\,\\Phi(u)"},
    {"W2", 0, T_FFN2_W, ROWS(FFN, MODEL), false, "Feed-forward weights 2", "W_2",
     "W_2 \\in \\mathbb{R}^{F \\times D}"},
    {"b2", 0, T_FFN2_B, ROWS(TOKEN, MODEL), false, "Feed-forward bias 2", "b_2", "b_2"},
    {"ffn", 0, T_FFN_OUT, ROWS(TOKEN, MODEL), false, "Feed-forward output", "\\mathrm{FFN}(x)",
     "\\mathrm{FFN}(x) = h W_2 + b_2"},

    // the layer's output
    {"res2", PRE, T_RESIDUAL, ROWS(TOKEN, MODEL), false, "Residual: the layer output (pre-norm)", "Z'",
     "Z' = Z + \\mathrm{MultiHead}(\\mathrm{LN}_1(Z)) + \\mathrm{FFN}(x)"},
    {"res2", POST, T_RESIDUAL, ROWS(TOKEN, MODEL), false, "Residual", "x + \\mathrm{FFN}(x)",
     "x + \\mathrm{FFN}(x)"},
    {"norm2", POST, T_NORM, ROWS(TOKEN, MODEL), true, "Residual and LayerNorm: the layer output", "Z'",
     "Z' = \\mathrm{LayerNorm}(x + \\mathrm{FFN}(x))"},
    {"out", PRE, T_RESIDUAL, ROWS(TOKEN, MODEL), false, "Layer output", "Z'",
     "Z' = Z + \\mathrm{MultiHead}(\\mathrm{LN}_1(Z)) + \\mathrm{FFN}(x)"},
    {"out", POST, T_NORM, ROWS(TOKEN, MODEL), false, "Layer output", "Z'",
     "Z' = \\mathrm{LayerNorm}(x + \\mathrm{FFN}(x))"},

    // the prediction head
    {"norm.gamma", 0, T_NORM_W, ROWS(TOKEN, MODEL), false, "Final LayerNorm gain", "\\gamma", "\\gamma"},
    {"norm.beta", 0, T_NORM_W, ROWS(TOKEN, MODEL), false, "Final LayerNorm shift", "\\beta", "\\beta"},
    {"final_norm", 0, T_NORM, ROWS(TOKEN, MODEL), true, "Final LayerNorm", "y",
     "y = \\mathrm{LayerNorm}(Z')"},
    // no final LayerNorm (a post-norm model): the head reads the last layer's output Z' itself
    {"logits", WHEN_HEAD_READS_Z | WHEN_TIED_HEAD | WHEN_NO_HEAD_BIAS, T_LOGITS, ROWS(TOKEN, VOCAB), true,
     "Logits", "Z' E^\\top", "Z' E^\\top"},
    {"logits", WHEN_HEAD_READS_Z | WHEN_TIED_HEAD, T_LOGITS, ROWS(TOKEN, VOCAB), true, "Logits",
     "Z' E^\\top + b_{\\mathrm{out}}", "Z' E^\\top + b_{\\mathrm{out}}"},
    {"logits", WHEN_HEAD_READS_Z | WHEN_NO_HEAD_BIAS, T_LOGITS, ROWS(TOKEN, VOCAB), true, "Logits",
     "Z' W_{\\mathrm{out}}", "Z' W_{\\mathrm{out}}"},
    {"logits", WHEN_HEAD_READS_Z, T_LOGITS, ROWS(TOKEN, VOCAB), true, "Logits",
     "Z' W_{\\mathrm{out}} + b_{\\mathrm{out}}", "Z' W_{\\mathrm{out}} + b_{\\mathrm{out}}"},
    {"pred", WHEN_HEAD_READS_Z | WHEN_CAUSAL | WHEN_TIED_HEAD | WHEN_NO_HEAD_BIAS, T_PRED, ROWS(TOKEN, VOCAB),
     false, "Prediction", "\\hat{p}", "\\hat{p} = \\operatorname{softmax}(Z' E^\\top / T)"},
    {"pred", WHEN_HEAD_READS_Z | WHEN_CAUSAL | WHEN_TIED_HEAD, T_PRED, ROWS(TOKEN, VOCAB), false,
     "Prediction", "\\hat{p}", "\\hat{p} = \\operatorname{softmax}((Z' E^\\top + b_{\\mathrm{out}}) / T)"},
    {"pred", WHEN_HEAD_READS_Z | WHEN_CAUSAL | WHEN_NO_HEAD_BIAS, T_PRED, ROWS(TOKEN, VOCAB), false,
     "Prediction", "\\hat{p}", "\\hat{p} = \\operatorname{softmax}(Z' W_{\\mathrm{out}} / T)"},
    {"pred", WHEN_HEAD_READS_Z | WHEN_TIED_HEAD | WHEN_NO_HEAD_BIAS, T_PRED, ROWS(TOKEN, VOCAB), false,
     "Prediction", "\\hat{p}", "\\hat{p} = \\operatorname{softmax}(Z' E^\\top)"},
    {"pred", WHEN_HEAD_READS_Z | WHEN_TIED_HEAD, T_PRED, ROWS(TOKEN, VOCAB), false, "Prediction", "\\hat{p}",
     "\\hat{p} = \\operatorname{softmax}(Z' E^\\top + b_{\\mathrm{out}})"},
    {"pred", WHEN_HEAD_READS_Z | WHEN_NO_HEAD_BIAS, T_PRED, ROWS(TOKEN, VOCAB), false, "Prediction",
     "\\hat{p}", "\\hat{p} = \\operatorname{softmax}(Z' W_{\\mathrm{out}})"},
    {"pred", WHEN_HEAD_READS_Z | WHEN_CAUSAL, T_PRED, ROWS(TOKEN, VOCAB), false, "Prediction", "\\hat{p}",
     "\\hat{p} = \\operatorname{softmax}((Z' W_{\\mathrm{out}} + b_{\\mathrm{out}}) / T)"},
    {"pred", WHEN_HEAD_READS_Z, T_PRED, ROWS(TOKEN, VOCAB), false, "Prediction", "\\hat{p}",
     "\\hat{p} = \\operatorname{softmax}(Z' W_{\\mathrm{out}} + b_{\\mathrm{out}})"},
    {"Wout", WHEN_TIED_HEAD, T_HEAD_W, ROWS(MODEL, VOCAB), false, "Prediction weights (the embedding table)",
     "E^\\top", "W_{\\mathrm{out}} = E^\\top \\in \\mathbb{R}^{D \\times V} \\text{ (tied)}"},
    {"logits", WHEN_TIED_HEAD | WHEN_NO_HEAD_BIAS, T_LOGITS, ROWS(TOKEN, VOCAB), true, "Logits", "y E^\\top",
     "y E^\\top"},
    {"logits", WHEN_TIED_HEAD, T_LOGITS, ROWS(TOKEN, VOCAB), true, "Logits", "y E^\\top + b_{\\mathrm{out}}",
     "y E^\\top + b_{\\mathrm{out}}"},
    {"logits", WHEN_NO_HEAD_BIAS, T_LOGITS, ROWS(TOKEN, VOCAB), true, "Logits", "y W_{\\mathrm{out}}",
     "y W_{\\mathrm{out}}"},
    // a causal model's prediction is the next token's distribution at a temperature T (1: torch's)
    {"pred", WHEN_CAUSAL | WHEN_TIED_HEAD | WHEN_NO_HEAD_BIAS, T_PRED, ROWS(TOKEN, VOCAB), false,
     "Prediction", "\\hat{p}", "\\hat{p} = \\operatorname{softmax}(y E^\\top / T)"},
    {"pred", WHEN_CAUSAL | WHEN_TIED_HEAD, T_PRED, ROWS(TOKEN, VOCAB), false, "Prediction", "\\hat{p}",
     "\\hat{p} = \\operatorname{softmax}((y E^\\top + b_{\\mathrm{out}}) / T)"},
    {"pred", WHEN_CAUSAL | WHEN_NO_HEAD_BIAS, T_PRED, ROWS(TOKEN, VOCAB), false, "Prediction", "\\hat{p}",
     "\\hat{p} = \\operatorname{softmax}(y W_{\\mathrm{out}} / T)"},
    {"pred", WHEN_TIED_HEAD | WHEN_NO_HEAD_BIAS, T_PRED, ROWS(TOKEN, VOCAB), false, "Prediction", "\\hat{p}",
     "\\hat{p} = \\operatorname{softmax}(y E^\\top)"},
    {"pred", WHEN_TIED_HEAD, T_PRED, ROWS(TOKEN, VOCAB), false, "Prediction", "\\hat{p}",
     "\\hat{p} = \\operatorname{softmax}(y E^\\top + b_{\\mathrm{out}})"},
    {"pred", WHEN_NO_HEAD_BIAS, T_PRED, ROWS(TOKEN, VOCAB), false, "Prediction", "\\hat{p}",
     "\\hat{p} = \\operatorname{softmax}(y W_{\\mathrm{out}})"},
    {"Wout", 0, T_HEAD_W, ROWS(MODEL, VOCAB), false, "Prediction weights", "W_{\\mathrm{out}}",
     "W_{\\mathrm{out}} \\in \\mathbb{R}^{D \\times V}"},
    {"bout", 0, T_HEAD_W, ROWS(TOKEN, VOCAB), false, "Prediction bias", "b_{\\mathrm{out}}",
     "b_{\\mathrm{out}}"},
    {"logits", 0, T_LOGITS, ROWS(TOKEN, VOCAB), true, "Logits", "y W_{\\mathrm{out}} + b_{\\mathrm{out}}",
     "y W_{\\mathrm{out}} + b_{\\mathrm{out}}"},
    {"pred", WHEN_CAUSAL, T_PRED, ROWS(TOKEN, VOCAB), false, "Prediction", "\\hat{p}",
     "\\hat{p} = \\operatorname{softmax}((y W_{\\mathrm{out}} + b_{\\mathrm{out}}) / T)"},
    {"pred", 0, T_PRED, ROWS(TOKEN, VOCAB), false, "Prediction", "\\hat{p}",
     "\\hat{p} = \\operatorname{softmax}(y W_{\\mathrm{out}} + b_{\\mathrm{out}})"},

    // BERT's masked-LM transform before the (tied) head
    {"Wt", 0, T_FFN1_W, ROWS(MODEL, MODEL), false, "Head transform weights", "W_t",
     "W_t \\in \\mathbb{R}^{D \\times D}"},
    {"bt", 0, T_FFN1_B, ROWS(TOKEN, MODEL), false, "Head transform bias", "b_t", "b_t"},
    {"head_hidden", WHEN_GELU_TANH, T_HEAD_HIDDEN, ROWS(TOKEN, MODEL), false,
     "Head transform (GELU, tanh form)", "g", "g = \\mathrm{GELU}(Z' W_t + b_t)"},
    {"head_hidden", WHEN_GELU, T_HEAD_HIDDEN, ROWS(TOKEN, MODEL), false, "Head transform (GELU)", "g",
     "g = \\mathrm{GELU}(Z' W_t + b_t)"},
    {"head_hidden", 0, T_HEAD_HIDDEN, ROWS(TOKEN, MODEL), false, "Head transform (ReLU)", "g",
     "g = \\max(0,\\, Z' W_t + b_t)"},
    {"head_norm.gamma", 0, T_NORM_W, ROWS(TOKEN, MODEL), false, "Head LayerNorm gain", "\\gamma_t",
     "\\gamma_t"},
    {"head_norm.beta", 0, T_NORM_W, ROWS(TOKEN, MODEL), false, "Head LayerNorm shift", "\\beta_t",
     "\\beta_t"},
    {"head_norm", 0, T_NORM, ROWS(TOKEN, MODEL), false, "Head transform and LayerNorm", "y",
     "y = \\mathrm{LayerNorm}(\\mathrm{GELU}(Z' W_t + b_t))"},

    // the classifier: final LayerNorm, mean over positions, class scores and their softmax
    {"enc_norm", 0, T_NORM, ROWS(TOKEN, MODEL), false, "Final LayerNorm", "y", "y = \\mathrm{LayerNorm}(Z')"},
    {"pool", WHEN_HEAD_READS_Z, T_POOL, ROWS(ONE, MODEL), false, "Mean over positions", "\\bar{z}",
     "\\bar{z} = \\frac{1}{L} \\sum_{i=1}^{L} Z'_i,\\quad \\bar{z} \\in \\mathbb{R}^{1 \\times D}"},
    {"pool", 0, T_POOL, ROWS(ONE, MODEL), false, "Mean over positions", "\\bar{z}",
     "\\bar{z} = \\frac{1}{L} \\sum_{i=1}^{L} y_i,\\quad \\bar{z} \\in \\mathbb{R}^{1 \\times D}"},
    {"Wc", 0, T_CLASS_W, ROWS(MODEL, CLASS), false, "Classifier weights", "W_c",
     "W_c \\in \\mathbb{R}^{D \\times C}"},
    {"bc", 0, T_CLASS_W, ROWS(ONE, CLASS), false, "Classifier bias", "b_c", "b_c"},
    {"class_logits", 0, T_CLASS_LOGITS, ROWS(ONE, CLASS), false, "Class scores", "s",
     "s = \\bar{z} W_c + b_c \\in \\mathbb{R}^{1 \\times C}"},
    {"class_pred", 0, T_CLASS_PRED, ROWS(ONE, CLASS), false, "Class prediction", "\\hat{p}",
     "\\hat{p} = \\operatorname{softmax}(\\bar{z} W_c + b_c)"},
};
#undef PRE
#undef POST
#undef DEC
#undef MOD

enum { N_NOTATION = sizeof NOTATION / sizeof NOTATION[0] };

// The rows of NOTATION sorted by name, rows of one name in table order: a trace names ~50 to 200
// tensors, and a scan of the whole table with strcmp for each was most of trace_new.
static uint16_t by_name[N_NOTATION];
static pthread_once_t by_name_once = PTHREAD_ONCE_INIT;

static int notation_cmp(const void *a, const void *b) {
  uint16_t x = *(const uint16_t *)a, y = *(const uint16_t *)b;
  int c = strcmp(NOTATION[x].name, NOTATION[y].name);
  return c ? c : (x > y) - (x < y);
}

static void sort_notation(void) {
  for (int i = 0; i < N_NOTATION; i++) by_name[i] = (uint16_t)i;
  qsort(by_name, N_NOTATION, sizeof by_name[0], notation_cmp);
}

const TensorNotation *stage_notation(const char *name, int holds) {
  pthread_once(&by_name_once, sort_notation);
  int lo = 0, hi = N_NOTATION; // the first row whose name is not below `name`
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (strcmp(NOTATION[by_name[mid]].name, name) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  // the first row of that name, in table order, whose conditions the model meets
  for (int k = lo; k < N_NOTATION && !strcmp(NOTATION[by_name[k]].name, name); k++)
    if ((NOTATION[by_name[k]].when & ~holds) == 0) return &NOTATION[by_name[k]];
  return NULL;
}
