// hub.c -- see hub.h. The translation moves each hub tensor's floats into the canonical file
// (no copy; F32 tensors stay in the file mapping, st_read_mapped) where the layout is the same or
// is GPT-2's Conv1D transpose (marked `transposed`, for model_from_st), and stacks BERT's Q, K, V
// into a new buffer, freeing the hub tensors at once, so that about one copy of the weights is held.
#include "hub.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"       // defines: file_read_all, path_join
#include "llama_config.h" // defines: LlamaConfig, llama_config_meta
#include "model.h"        // defines: Model, model_from_st, TOK_BPE
#include "tokenizer.h"    // defines: vocab_word_ok

#define HUB_MAX_CONFIG (1u << 20) // config.json and tokenizer_config.json: a few KB
#define HUB_MAX_SIZE (1 << 20)    // any size in config.json (a width, a vocabulary)
#define HUB_MAX_META 40

bool hub_is_dir(const char *path) {
  struct stat st;
  return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

// ---- config.json

typedef struct {
  cJSON *root;
  char path[4200]; // DIR/config.json, for messages
} Config;

static bool config_read(Config *c, const char *dir, Err *err) {
  c->root = NULL;
  if (!path_join(c->path, sizeof c->path, dir, "config.json"))
    return err_set(err, "%s: folder name too long", dir);
  size_t len;
  Err rerr = {0};
  char *text = file_read_all(c->path, &len, HUB_MAX_CONFIG, &rerr);
  if (!text)
    return err_set(
        err,
        "%s: not a regular file, and not a hub checkpoint folder (%s); give a "
        ".safetensors file, or a folder downloaded with huggingface-cli download MODEL config.json "
        "model.safetensors ...",
        dir, rerr.msg);
  c->root = cJSON_ParseWithLength(text, len);
  free(text);
  if (!cJSON_IsObject(c->root)) {
    cJSON_Delete(c->root);
    c->root = NULL;
    return err_set(err, "%s: not a JSON object: download config.json again", c->path);
  }
  return true;
}

// An integer config value in 1..HUB_MAX_SIZE; def < 0: required. A JSON null takes the default
// (GPT-2's "n_inner": null).
static bool config_int(const Config *c, const char *key, int def, int *out, Err *err) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(c->root, key);
  if (!j || cJSON_IsNull(j)) {
    if (def < 0) return err_set(err, "%s: \"%s\" is missing: download config.json again", c->path, key);
    *out = def;
    return true;
  }
  double d = cJSON_IsNumber(j) ? j->valuedouble : -1;
  if (!(d >= 1 && d <= HUB_MAX_SIZE) || d != (double)(int)d)
    return err_set(err, "%s: \"%s\" is not a whole number in 1..%d", c->path, key, HUB_MAX_SIZE);
  *out = (int)d;
  return true;
}

// An epsilon: in (0, 1) as the float the model computes with (2e-86 is 0 there, 0.999999999 is 1).
static bool config_float(const Config *c, const char *key, double def, double *out, Err *err) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(c->root, key);
  if (!j || cJSON_IsNull(j)) return *out = def, true;
  if (!cJSON_IsNumber(j) || !((float)j->valuedouble > 0.0f && (float)j->valuedouble < 1.0f))
    return err_set(err, "%s: \"%s\" is not a small positive number (an epsilon, like 1e-05)", c->path, key);
  *out = j->valuedouble;
  return true;
}

// A string config value, or def when absent; NULL (with err) when not a string.
static const char *config_str(const Config *c, const char *key, const char *def, Err *err) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(c->root, key);
  if (!j || cJSON_IsNull(j)) return def;
  if (!cJSON_IsString(j)) return err_set(err, "%s: \"%s\" is not a string", c->path, key), NULL;
  return j->valuestring;
}

// ---- the translation: hub tensors -> canonical tensors

typedef struct {
  StFile *src;        // the hub file (tensors moved out as they are taken)
  bool *used;         // [src->n]
  const char *prefix; // "transformer.", "bert." or ""
  StFile *out;        // the canonical file being built
  int cap;            // room in out->tensors
  const char *wpath;  // DIR/model.safetensors, for messages
  const char *cpath;  // DIR/config.json
  Err *err;
} Tx;

// The hub tensor called (prefix)name, or name without the prefix; NULL if neither.
static StTensor *find(Tx *x, const char *name) {
  char full[256];
  snprintf(full, sizeof full, "%s%s", x->prefix, name);
  const StTensor *t = st_find(x->src, full);
  if (!t) t = st_find(x->src, name);
  return (StTensor *)t;
}

static void shape_str(char *buf, size_t cap, const int64_t *shape, int nd) {
  size_t k = (size_t)snprintf(buf, cap, "[");
  for (int i = 0; i < nd && k < cap; i++)
    k += (size_t)snprintf(buf + k, cap - k, i ? ",%lld" : "%lld", (long long)shape[i]);
  if (k < cap) snprintf(buf + k, cap - k, "]");
}

// The hub tensor name (marked used) with shape [s0] (s1 < 0) or [s0, s1], which config.json's
// `why` ("n_embd=16") implies; NULL with a message when it is missing, misshapen or not floats.
static StTensor *need(Tx *x, const char *name, long s0, long s1, const char *why) {
  StTensor *t = find(x, name);
  int nd = s1 < 0 ? 1 : 2;
  int64_t want[2] = {s0, s1};
  char ws[64];
  shape_str(ws, sizeof ws, want, nd);
  if (!t) {
    err_set(
        x->err,
        "%s: tensor \"%s%s\" %s is missing: this is not a complete checkpoint of the model in config.json",
        x->wpath, x->prefix, name, ws);
    return NULL;
  }
  if (t->ndim != nd || t->shape[0] != s0 || (nd == 2 && t->shape[1] != s1)) {
    char got[64];
    shape_str(got, sizeof got, t->shape, t->ndim);
    err_set(x->err, "%s: tensor \"%s\" has shape %s but %s says %s (%s): the config and the weights disagree",
            x->wpath, t->name, got, x->cpath, ws, why);
    return NULL;
  }
  if (t->count && !t->data) {
    err_set(x->err, "%s: tensor \"%s\" has dtype %s; Stepformer reads F32, F16 and BF16 weights", x->wpath,
            t->name, t->dtype);
    return NULL;
  }
  x->used[t - x->src->tensors] = true;
  return t;
}

// Adds a canonical tensor that takes over data ([s0] or [s0, s1] floats, malloc'd), converted
// from dtype (the file's: "BF16" tells model_from_st that the model's floats are a conversion).
static bool put(Tx *x, const char *name, float *data, long s0, long s1, const char *dtype) {
  EXPECT(x->out->n < x->cap);
  StTensor *o = &x->out->tensors[x->out->n];
  size_t k = strlen(name) + 1;
  o->name = malloc(k);
  if (!o->name) {
    if (!st_mapped(x->src, data)) free(data);
    return err_set(x->err, "out of memory");
  }
  memcpy(o->name, name, k);
  o->ndim = s1 < 0 ? 1 : 2;
  o->shape[0] = s0, o->shape[1] = s1 < 0 ? 0 : s1;
  o->count = s1 < 0 ? s0 : s0 * s1;
  o->data = data;
  snprintf(o->dtype, sizeof o->dtype, "%s", dtype);
  x->out->n++;
  return true;
}

// Moves hub tensor t into the canonical file as `name` (same layout).
static bool move(Tx *x, const char *name, StTensor *t) {
  float *d = t->data;
  t->data = NULL;
  return put(x, name, d, t->shape[0], t->ndim == 2 ? t->shape[1] : -1, t->dtype);
}

// hub [a, b] -> canonical [b, a]: a Conv1D's weight [in, out] is nn.Linear's [out, in] transposed.
// Not transposed here: the canonical tensor keeps the file's floats (in the file mapping, F32) and
// says so (`transposed`); model_from_st packs them as they are, or transposes them (model.h).
static bool transpose(Tx *x, const char *name, StTensor *t) {
  long a = (long)t->shape[0], b = (long)t->shape[1];
  if (!move(x, name, t)) return false;
  StTensor *o = &x->out->tensors[x->out->n - 1];
  o->shape[0] = b, o->shape[1] = a;
  o->transposed = true;
  return true;
}

// Stacks q, k, v (each [n] or [n, D]) into one [3n] or [3n, D]: rows Q, then K, then V.
static bool stack3(Tx *x, const char *name, StTensor *q, StTensor *k, StTensor *v) {
  size_t each = (size_t)q->count;
  float *d = malloc(sizeof(float) * 3 * (each ? each : 1));
  if (!d) return err_set(x->err, "out of memory");
  StTensor *parts[3] = {q, k, v};
  for (int p = 0; p < 3; p++) {
    memcpy(d + p * each, parts[p]->data, sizeof(float) * each);
    if (st_mapped(x->src, parts[p]->data))
      st_release_pages(parts[p]->data, sizeof(float) * each); // copied: the file's pages go back
    else
      free(parts[p]->data);
    parts[p]->data = NULL;
  }
  return put(x, name, d, 3 * (long)q->shape[0], q->ndim == 2 ? q->shape[1] : -1, q->dtype);
}

static bool meta(Tx *x, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool meta(Tx *x, const char *key, const char *fmt, ...) {
  StFile *f = x->out;
  EXPECT(f->n_meta < HUB_MAX_META);
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  size_t kl = strlen(key) + 1, vl = strlen(buf) + 1;
  f->keys[f->n_meta] = malloc(kl);
  f->values[f->n_meta] = malloc(vl);
  if (!f->keys[f->n_meta] || !f->values[f->n_meta]) {
    free(f->keys[f->n_meta]);
    free(f->values[f->n_meta]);
    return err_set(x->err, "out of memory");
  }
  memcpy(f->keys[f->n_meta], key, kl);
  memcpy(f->values[f->n_meta], buf, vl);
  f->n_meta++;
  return true;
}

// The tokenizer's tokens as the file writes them ("Ġcat", "##ing"), joined by newlines: metadata
// "vocab" (distinct words, as model_from_st demands; the Model's labels replace them on load).
static bool meta_vocab(Tx *x, const ModelTokenizer *tk) {
  int n = tk->kind == TOK_BPE ? tk->bpe.n_vocab : tk->wp.n;
  char *const *tokens = tk->kind == TOK_BPE ? tk->bpe.tokens : tk->wp.tokens;
  size_t total = 1;
  for (int i = 0; i < n; i++) total += strlen(tokens[i]) + 1;
  char *v = malloc(total), *key = malloc(sizeof "vocab");
  if (!v || !key) {
    free(v), free(key);
    return err_set(x->err, "out of memory");
  }
  char *p = v;
  for (int i = 0; i < n; i++) {
    size_t k = strlen(tokens[i]);
    memcpy(p, tokens[i], k);
    p += k;
    *p++ = i + 1 < n ? '\n' : 0;
  }
  if (n == 0) *p = 0;
  memcpy(key, "vocab", sizeof "vocab");
  StFile *f = x->out;
  EXPECT(f->n_meta < HUB_MAX_META);
  f->keys[f->n_meta] = key, f->values[f->n_meta] = v, f->n_meta++;
  return true;
}

// True when both tensors hold the same floats (a head saved beside the embedding it is tied to).
// A tied copy a in the file mapping is not read again: its pages go back.
static bool same_floats(const Tx *x, const StTensor *a, const StTensor *b) {
  bool same = a->count == b->count && a->ndim == b->ndim && a->data && b->data &&
              !memcmp(a->data, b->data, sizeof(float) * (size_t)a->count);
  if (same && st_mapped(x->src, a->data)) st_release_pages(a->data, sizeof(float) * (size_t)a->count);
  return same;
}

// The metadata "hub_unused": the hub tensors not taken, with layer numbers folded into {i}
// ("h.{i}.attn.bias ×12, pooler.dense.weight").
static bool note_unused(Tx *x) {
  int n = x->src->n;
  char(*pat)[128] = calloc((size_t)(n > 0 ? n : 1), sizeof *pat);
  int *count = calloc((size_t)(n > 0 ? n : 1), sizeof(int));
  if (!pat || !count) {
    free(pat), free(count);
    return err_set(x->err, "out of memory");
  }
  int np = 0;
  for (int i = 0; i < n; i++) {
    if (x->used[i]) continue;
    const char *name = x->src->tensors[i].name;
    char p[128];
    size_t k = 0;
    bool folded = false;
    for (const char *s = name; *s && k + 4 < sizeof p; s++) {
      // the first ".<digits>." becomes ".{i}."
      if (!folded && *s == '.' && s[1] >= '0' && s[1] <= '9') {
        const char *e = s + 1;
        while (*e >= '0' && *e <= '9') e++;
        if (*e == '.') {
          memcpy(p + k, ".{i}", 4), k += 4, s = e - 1, folded = true;
          continue;
        }
      }
      p[k++] = *s;
    }
    p[k] = 0;
    int j = 0;
    while (j < np && strcmp(pat[j], p)) j++;
    if (j == np) snprintf(pat[np++], sizeof pat[0], "%s", p);
    count[j]++;
  }
  char line[2000];
  size_t k = 0;
  line[0] = 0;
  for (int j = 0; j < np && k < sizeof line - 40; j++)
    k += (size_t)snprintf(line + k, sizeof line - k, count[j] > 1 ? "%s%s ×%d" : "%s%s", j ? ", " : "",
                          pat[j], count[j]);
  if (k >= sizeof line - 40) snprintf(line + sizeof line - 40, 40, ", ...");
  free(pat), free(count);
  return np == 0 || meta(x, "hub_unused", "%s", line);
}

// Finds name (with or without the prefix) if it is there and marks it used; no check.
static StTensor *maybe(Tx *x, const char *name) {
  StTensor *t = find(x, name);
  if (t) x->used[t - x->src->tensors] = true;
  return t;
}

// A LayerNorm's weight and bias ([D]) under `base` (".weight|.bias", or old ".gamma|.beta").
static bool layer_norm(Tx *x, const char *base, const char *canon, long D, const char *why) {
  char w[192], b[192], cw[96], cb[96];
  snprintf(w, sizeof w, "%s.weight", base);
  snprintf(b, sizeof b, "%s.bias", base);
  if (!find(x, w)) { // checkpoints converted from TensorFlow
    snprintf(w, sizeof w, "%s.gamma", base);
    snprintf(b, sizeof b, "%s.beta", base);
    if (!find(x, w)) snprintf(w, sizeof w, "%s.weight", base); // name the usual one as missing
  }
  snprintf(cw, sizeof cw, "%s.weight", canon);
  snprintf(cb, sizeof cb, "%s.bias", canon);
  StTensor *tw = need(x, w, D, -1, why), *tb = tw ? need(x, b, D, -1, why) : NULL;
  return tw && tb && move(x, cw, tw) && move(x, cb, tb);
}

// A linear layer: weight [out, in] (nn.Linear) or, conv1d, [in, out] (GPT-2's Conv1D), and
// bias [out].
static bool linear(Tx *x, const char *base, const char *canon, long out, long in, bool conv1d,
                   const char *why) {
  char w[192], b[192], cw[96], cb[96];
  snprintf(w, sizeof w, "%s.weight", base);
  snprintf(b, sizeof b, "%s.bias", base);
  snprintf(cw, sizeof cw, "%s.weight", canon);
  snprintf(cb, sizeof cb, "%s.bias", canon);
  StTensor *tw = conv1d ? need(x, w, in, out, why) : need(x, w, out, in, why);
  StTensor *tb = tw ? need(x, b, out, -1, why) : NULL;
  if (!tw || !tb) return false;
  return (conv1d ? transpose(x, cw, tw) : move(x, cw, tw)) && move(x, cb, tb);
}

// ---- GPT-2

static const char *gpt2_activation(const char *a) {
  if (!strcmp(a, "gelu_new") || !strcmp(a, "gelu_pytorch_tanh")) return "gelu_tanh";
  if (!strcmp(a, "gelu") || !strcmp(a, "relu")) return a;
  return NULL;
}

static bool gpt2(Tx *x, const Config *c, const ModelTokenizer *tk) {
  Err *err = x->err;
  int D, H, L, F, V, P;
  double eps;
  if (!config_int(c, "n_embd", -1, &D, err) || !config_int(c, "n_head", -1, &H, err) ||
      !config_int(c, "n_layer", -1, &L, err) || !config_int(c, "n_inner", 4 * D, &F, err) ||
      !config_int(c, "vocab_size", 50257, &V, err) || !config_int(c, "n_positions", 1024, &P, err) ||
      !config_float(c, "layer_norm_epsilon", 1e-5, &eps, err))
    return false;
  const char *act = config_str(c, "activation_function", "gelu_new", err);
  if (!act) return false;
  const char *canon_act = gpt2_activation(act);
  if (!canon_act)
    return err_set(err, "%s: activation_function \"%.40s\": Stepformer knows gelu_new, gelu and relu",
                   c->path, act);
  x->prefix = st_find(x->src, "transformer.wte.weight") ? "transformer." : "";
  char why[64], name[128], canon[128];
  snprintf(why, sizeof why, "vocab_size=%d, n_embd=%d", V, D);
  StTensor *wte = need(x, "wte.weight", V, D, why);
  if (!wte) return false;
  if (tk->bpe.n_vocab != V)
    return err_set(err,
                   "%s: the tokenizer (vocab.json) has %d tokens but wte has %d rows: the tokenizer belongs "
                   "to another model",
                   x->wpath, tk->bpe.n_vocab, V);
  StTensor *head = maybe(x, "lm_head.weight");
  bool tied = !head || same_floats(x, head, wte);
  if (head && !tied) {
    snprintf(why, sizeof why, "vocab_size=%d, n_embd=%d", V, D);
    if (!need(x, "lm_head.weight", V, D, why) || !move(x, "head.weight", head)) return false;
  }
  if (!move(x, "embed.weight", wte)) return false;
  snprintf(why, sizeof why, "n_positions=%d, n_embd=%d", P, D);
  StTensor *wpe = need(x, "wpe.weight", P, D, why);
  if (!wpe || !move(x, "pos_embed.weight", wpe)) return false;
  snprintf(why, sizeof why, "n_embd=%d, n_inner=%d", D, F);
  for (int i = 0; i < L; i++) {
    char b[64], cb[64];
    snprintf(b, sizeof b, "h.%d.", i);
    snprintf(cb, sizeof cb, "layers.%d.", i);
#define NAMES(h, cn)                                                                                         \
  (snprintf(name, sizeof name, "%s%s", b, h), snprintf(canon, sizeof canon, "%s%s", cb, cn))
    NAMES("ln_1", "norm1");
    if (!layer_norm(x, name, canon, D, why)) return false;
    NAMES("attn.c_attn", "self_attn.in_proj");
    // in_proj's canonical names are in_proj_weight / in_proj_bias, not .weight / .bias
    StTensor *w = (snprintf(name, sizeof name, "%sattn.c_attn.weight", b), need(x, name, D, 3L * D, why));
    StTensor *bias =
        w ? (snprintf(name, sizeof name, "%sattn.c_attn.bias", b), need(x, name, 3L * D, -1, why)) : NULL;
    if (!w || !bias) return false;
    snprintf(canon, sizeof canon, "%sself_attn.in_proj_weight", cb);
    if (!transpose(x, canon, w)) return false;
    snprintf(canon, sizeof canon, "%sself_attn.in_proj_bias", cb);
    if (!move(x, canon, bias)) return false;
    NAMES("attn.c_proj", "self_attn.out_proj");
    if (!linear(x, name, canon, D, D, true, why)) return false;
    NAMES("ln_2", "norm2");
    if (!layer_norm(x, name, canon, D, why)) return false;
    NAMES("mlp.c_fc", "linear1");
    if (!linear(x, name, canon, F, D, true, why)) return false;
    NAMES("mlp.c_proj", "linear2");
    if (!linear(x, name, canon, D, F, true, why)) return false;
#undef NAMES
  }
  snprintf(name, sizeof name, "%sh.%d.ln_1.weight", x->prefix, L);
  if (st_find(x->src, name))
    return err_set(
        err, "%s: tensor \"%s\" is a layer beyond n_layer=%d in %s: the config and the weights disagree",
        x->wpath, name, L, c->path);
  if (!layer_norm(x, "ln_f", "norm", D, why)) return false;
  return meta(x, "hub_architecture", "GPT-2") && meta(x, "d_model", "%d", D) && meta(x, "n_heads", "%d", H) &&
         meta(x, "d_ff", "%d", F) && meta(x, "n_layers", "%d", L) && meta(x, "activation", "%s", canon_act) &&
         meta(x, "norm_first", "1") && meta(x, "causal", "1") && meta(x, "layer_norm_eps", "%.9g", eps) &&
         meta(x, "pos_encoding", "learned") && meta(x, "tokenizer", "bpe") &&
         (!tied || meta(x, "tie_head", "1"));
}

// ---- BERT

static bool bert(Tx *x, const Config *c, const ModelTokenizer *tk) {
  Err *err = x->err;
  int D, H, L, F, V, P, T;
  double eps;
  if (!config_int(c, "hidden_size", -1, &D, err) || !config_int(c, "num_attention_heads", -1, &H, err) ||
      !config_int(c, "num_hidden_layers", -1, &L, err) || !config_int(c, "intermediate_size", -1, &F, err) ||
      !config_int(c, "vocab_size", -1, &V, err) || !config_int(c, "max_position_embeddings", 512, &P, err) ||
      !config_int(c, "type_vocab_size", 2, &T, err) || !config_float(c, "layer_norm_eps", 1e-12, &eps, err))
    return false;
  const char *act = config_str(c, "hidden_act", "gelu", err);
  if (!act) return false;
  const char *canon_act = gpt2_activation(act);
  if (!canon_act)
    return err_set(err, "%s: hidden_act \"%.40s\": Stepformer knows gelu, gelu_new and relu", c->path, act);
  const char *pe = config_str(c, "position_embedding_type", "absolute", err);
  if (!pe) return false;
  if (strcmp(pe, "absolute"))
    return err_set(
        err, "%s: position_embedding_type \"%.40s\": Stepformer knows absolute (learned) positions only",
        c->path, pe);
  x->prefix = st_find(x->src, "bert.embeddings.word_embeddings.weight") ? "bert." : "";
  char why[64], name[160], canon[128];
  snprintf(why, sizeof why, "vocab_size=%d, hidden_size=%d", V, D);
  StTensor *we = need(x, "embeddings.word_embeddings.weight", V, D, why);
  if (!we) return false;
  if (tk->wp.n != V)
    return err_set(err,
                   "%s: the tokenizer (vocab.txt) has %d tokens but word_embeddings has %d rows: the "
                   "tokenizer belongs to another model",
                   x->wpath, tk->wp.n, V);
  // the masked-LM head, if the checkpoint has one (BertForMaskedLM, BertForPreTraining)
  StTensor *dec = maybe(x, "cls.predictions.decoder.weight");
  StTensor *pbias = maybe(x, "cls.predictions.bias"), *dbias = maybe(x, "cls.predictions.decoder.bias");
  bool has_head = find(x, "cls.predictions.transform.dense.weight") != NULL;
  bool tied = !dec || same_floats(x, dec, we);
  if (has_head) {
    if (dec && !tied &&
        (!need(x, "cls.predictions.decoder.weight", V, D, why) || !move(x, "head.weight", dec)))
      return false;
    StTensor *hb = pbias ? pbias : dbias;
    if (hb) {
      snprintf(why, sizeof why, "vocab_size=%d", V);
      if (!need(x, pbias ? "cls.predictions.bias" : "cls.predictions.decoder.bias", V, -1, why) ||
          !move(x, "head.bias", hb))
        return false;
    }
    snprintf(why, sizeof why, "hidden_size=%d", D);
    if (!linear(x, "cls.predictions.transform.dense", "head_transform", D, D, false, why) ||
        !layer_norm(x, "cls.predictions.transform.LayerNorm", "head_norm", D, why))
      return false;
  }
  if (!move(x, "embed.weight", we)) return false;
  snprintf(why, sizeof why, "max_position_embeddings=%d, hidden_size=%d", P, D);
  StTensor *pos = need(x, "embeddings.position_embeddings.weight", P, D, why);
  if (!pos || !move(x, "pos_embed.weight", pos)) return false;
  snprintf(why, sizeof why, "type_vocab_size=%d, hidden_size=%d", T, D);
  StTensor *tt = need(x, "embeddings.token_type_embeddings.weight", T, D, why);
  if (!tt || !move(x, "token_type.weight", tt)) return false;
  snprintf(why, sizeof why, "hidden_size=%d", D);
  if (!layer_norm(x, "embeddings.LayerNorm", "embed_norm", D, why)) return false;
  snprintf(why, sizeof why, "hidden_size=%d, intermediate_size=%d", D, F);
  for (int i = 0; i < L; i++) {
    char b[64], cb[64];
    snprintf(b, sizeof b, "encoder.layer.%d.", i);
    snprintf(cb, sizeof cb, "layers.%d.", i);
    StTensor *qkv[2][3];
    const char *parts[3] = {"query", "key", "value"};
    for (int p = 0; p < 3; p++) {
      snprintf(name, sizeof name, "%sattention.self.%s.weight", b, parts[p]);
      if (!(qkv[0][p] = need(x, name, D, D, why))) return false;
      snprintf(name, sizeof name, "%sattention.self.%s.bias", b, parts[p]);
      if (!(qkv[1][p] = need(x, name, D, -1, why))) return false;
    }
    snprintf(canon, sizeof canon, "%sself_attn.in_proj_weight", cb);
    if (!stack3(x, canon, qkv[0][0], qkv[0][1], qkv[0][2])) return false;
    snprintf(canon, sizeof canon, "%sself_attn.in_proj_bias", cb);
    if (!stack3(x, canon, qkv[1][0], qkv[1][1], qkv[1][2])) return false;
    static const char *map[][3] = {{"attention.output.dense", "self_attn.out_proj", "L"},
                                   {"attention.output.LayerNorm", "norm1", "N"},
                                   {"intermediate.dense", "linear1", "1"},
                                   {"output.dense", "linear2", "2"},
                                   {"output.LayerNorm", "norm2", "N"}};
    for (int k = 0; k < 5; k++) {
      snprintf(name, sizeof name, "%s%s", b, map[k][0]);
      snprintf(canon, sizeof canon, "%s%s", cb, map[k][1]);
      char kind = map[k][2][0];
      bool ok = kind == 'N'   ? layer_norm(x, name, canon, D, why)
                : kind == 'L' ? linear(x, name, canon, D, D, false, why)
                : kind == '1' ? linear(x, name, canon, F, D, false, why)
                              : linear(x, name, canon, D, F, false, why);
      if (!ok) return false;
    }
  }
  snprintf(name, sizeof name, "encoder.layer.%d.attention.self.query.weight", L);
  if (find(x, name))
    return err_set(err,
                   "%s: tensor \"%s%s\" is a layer beyond num_hidden_layers=%d in %s: the config and the "
                   "weights disagree",
                   x->wpath, x->prefix, name, L, c->path);
  return meta(x, "hub_architecture", "BERT") && meta(x, "d_model", "%d", D) && meta(x, "n_heads", "%d", H) &&
         meta(x, "d_ff", "%d", F) && meta(x, "n_layers", "%d", L) && meta(x, "activation", "%s", canon_act) &&
         meta(x, "norm_first", "0") && meta(x, "causal", "0") && meta(x, "layer_norm_eps", "%.9g", eps) &&
         meta(x, "pos_encoding", "learned") && meta(x, "tokenizer", "wordpiece") &&
         (!has_head || !tied || meta(x, "tie_head", "1"));
}

// ---- Llama, Qwen 2, Qwen 3 (issue 34): today's decoders

// A number config value in (0, hi), or def when absent.
static bool config_num(const Config *c, const cJSON *obj, const char *key, double def, double hi, double *out,
                       Err *err) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!j || cJSON_IsNull(j)) return *out = def, true;
  if (!cJSON_IsNumber(j) || !(j->valuedouble > 0 && j->valuedouble < hi))
    return err_set(err, "%s: \"%s\" is not a positive number below %g", c->path, key, hi);
  *out = j->valuedouble;
  return true;
}

static bool config_bool(const Config *c, const char *key, bool def, bool *out, Err *err) {
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(c->root, key);
  if (!j || cJSON_IsNull(j)) return *out = def, true;
  if (!cJSON_IsBool(j)) return err_set(err, "%s: \"%s\" is not true or false", c->path, key);
  *out = cJSON_IsTrue(j);
  return true;
}

// Stacks q [nq(, D)], k and v [nk(, D)] into one [nq + 2 nk(, D)]: rows Q, then K, then V.
static bool stack_qkv(Tx *x, const char *name, StTensor *q, StTensor *k, StTensor *v) {
  size_t total = (size_t)(q->count + k->count + v->count), off = 0;
  float *d = malloc(sizeof(float) * (total ? total : 1));
  if (!d) return err_set(x->err, "out of memory");
  StTensor *parts[3] = {q, k, v};
  long rows = 0;
  for (int p = 0; p < 3; p++) {
    size_t each = (size_t)parts[p]->count;
    memcpy(d + off, parts[p]->data, sizeof(float) * each);
    off += each;
    rows += (long)parts[p]->shape[0];
    if (st_mapped(x->src, parts[p]->data))
      st_release_pages(parts[p]->data, sizeof(float) * each);
    else
      free(parts[p]->data);
    parts[p]->data = NULL;
  }
  return put(x, name, d, rows, q->ndim == 2 ? q->shape[1] : -1, q->dtype);
}

// config.json's keys of a Llama / Qwen 2 / Qwen 3 checkpoint (model_type `type`) into *o: sizes,
// RMSNorm's epsilon, RoPE's base and Llama 3's rope_scaling, the gate's activation, the biases.
// False with one line naming config.json (nothing about the weights is known yet).
static bool llama_keys(const Config *c, const char *type, HubLlama *o, Err *err) {
  bool qwen2 = !strcmp(type, "qwen2"), qwen3 = !strcmp(type, "qwen3");
  const char *arch_want = qwen2 ? "Qwen2ForCausalLM" : qwen3 ? "Qwen3ForCausalLM" : "LlamaForCausalLM";
  const cJSON *archs = cJSON_GetObjectItemCaseSensitive(c->root, "architectures");
  const cJSON *a0 = cJSON_IsArray(archs) ? cJSON_GetArrayItem(archs, 0) : NULL;
  if (a0 && cJSON_IsString(a0) && strcmp(a0->valuestring, arch_want))
    return err_set(
        err, "%s: architectures says \"%.60s\" but model_type \"%s\" is %s's: the config contradicts itself",
        c->path, a0->valuestring, type, arch_want);
  int D, H, Hk, F, L, V, dk;
  double eps, theta;
  if (!config_int(c, "hidden_size", -1, &D, err) || !config_int(c, "num_attention_heads", -1, &H, err) ||
      !config_int(c, "num_key_value_heads", H, &Hk, err) ||
      !config_int(c, "intermediate_size", -1, &F, err) || !config_int(c, "num_hidden_layers", -1, &L, err) ||
      !config_int(c, "vocab_size", -1, &V, err) || !config_int(c, "head_dim", D / H, &dk, err) ||
      !config_float(c, "rms_norm_eps", 1e-6, &eps, err) ||
      !config_num(c, c->root, "rope_theta", 10000.0, 1e12, &theta, err))
    return false;
  if (dk < 1) // no head_dim, and hidden_size // num_attention_heads is 0
    return err_set(err, "%s: num_attention_heads=%d is more than hidden_size=%d and there is no head_dim",
                   c->path, H, D);
  if (H % Hk)
    return err_set(
        err,
        "%s: num_key_value_heads=%d does not divide num_attention_heads=%d: grouped-query attention "
        "shares each K/V head among a whole number of query heads",
        c->path, Hk, H);
  if (dk % 2) return err_set(err, "%s: head_dim=%d is odd: RoPE rotates pairs of dimensions", c->path, dk);
  const char *act = config_str(c, "hidden_act", "silu", err);
  if (!act) return false;
  const char *canon_act = !strcmp(act, "silu") || !strcmp(act, "swish")                   ? "silu"
                          : !strcmp(act, "gelu_pytorch_tanh") || !strcmp(act, "gelu_new") ? "gelu_tanh"
                          : !strcmp(act, "gelu")                                          ? "gelu"
                                                                                          : NULL;
  if (!canon_act)
    return err_set(err, "%s: hidden_act \"%.40s\": Stepformer knows silu, gelu_pytorch_tanh and gelu",
                   c->path, act);
  bool tie, attn_bias, mlp_bias;
  if (!config_bool(c, "tie_word_embeddings", false, &tie, err) ||
      !config_bool(c, "attention_bias", false, &attn_bias, err) ||
      !config_bool(c, "mlp_bias", false, &mlp_bias, err))
    return false;
  if (mlp_bias) return err_set(err, "%s: mlp_bias=true: Stepformer's gated FFN has no biases", c->path);
  // rope_scaling: none, or Llama 3's
  const cJSON *rs = cJSON_GetObjectItemCaseSensitive(c->root, "rope_scaling");
  double factor = 0, lo = 1, hi = 4, orig = 8192;
  if (rs && !cJSON_IsNull(rs)) {
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(rs, "rope_type");
    if (!rt) rt = cJSON_GetObjectItemCaseSensitive(rs, "type");
    if (!cJSON_IsString(rt) || strcmp(rt->valuestring, "llama3"))
      return err_set(err, "%s: rope_scaling of type \"%.30s\": Stepformer knows llama3 only", c->path,
                     cJSON_IsString(rt) ? rt->valuestring : "?");
    // the model's ranges (model.c): factors below a million, a context of at most 2^24 positions
    if (!config_num(c, rs, "factor", -1, 1e6, &factor, err) ||
        !config_num(c, rs, "low_freq_factor", 1, 1e6, &lo, err) ||
        !config_num(c, rs, "high_freq_factor", 4, 1e6, &hi, err) ||
        !config_num(c, rs, "original_max_position_embeddings", 8192, 1e12, &orig, err))
      return false;
    if (orig > 1 << 24 || orig != (double)(int)orig)
      return err_set(err,
                     "%s: rope_scaling's original_max_position_embeddings is not a whole number in 1..%d",
                     c->path, 1 << 24);
    if (factor <= 0)
      return err_set(err, "%s: rope_scaling has no \"factor\": download config.json again", c->path);
    if (!(hi > lo))
      return err_set(err, "%s: rope_scaling's high_freq_factor must be larger than its low_freq_factor",
                     c->path);
  }
  *o = (HubLlama){.c = {D, H, Hk, dk, F, L, canon_act, eps, theta, factor, lo, hi, orig, tie},
                  .V = V,
                  .family = qwen2   ? HUB_QWEN2
                            : qwen3 ? HUB_QWEN3
                                    : HUB_LLAMA,
                  .attn_bias = attn_bias};
  return true;
}

bool hub_llama_config(const char *text, size_t len, const char *path, HubLlama *out, Err *err) {
  Config c = {.root = cJSON_ParseWithLength(text, len)};
  snprintf(c.path, sizeof c.path, "%s", path);
  bool ok = false;
  const char *type = NULL;
  if (!cJSON_IsObject(c.root))
    err_set(err, "%s: not a JSON object: download config.json again", c.path);
  else if (!(type = config_str(&c, "model_type", NULL, err))) {
    if (!err->msg[0]) err_set(err, "%s: \"model_type\" is missing", c.path);
  } else if (strcmp(type, "llama") && strcmp(type, "qwen2") && strcmp(type, "qwen3"))
    err_set(err, "%s: model_type \"%.40s\" is not llama, qwen2 or qwen3", c.path, type);
  else
    ok = llama_keys(&c, type, out, err);
  cJSON_Delete(c.root);
  return ok;
}

// LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM into the canonical form of model.h (today's
// decoders): q/k/v stacked into in_proj, gate_proj -> gate, up_proj -> linear1, down_proj -> linear2,
// input_layernorm -> norm1, post_attention_layernorm -> norm2, model.norm -> norm, lm_head -> head
// (or tied: tie_word_embeddings).
static bool llama(Tx *x, const Config *c, const char *type) {
  Err *err = x->err;
  HubLlama hl;
  if (!llama_keys(c, type, &hl, err)) return false;
  const LlamaConfig lc = hl.c;
  const int D = lc.D, H = lc.H, Hk = lc.Hk, F = lc.F, L = lc.L, V = hl.V, dk = lc.dk;
  const bool tie = lc.tie, attn_bias = hl.attn_bias, qwen2 = hl.family == HUB_QWEN2,
             qwen3 = hl.family == HUB_QWEN3;
  x->prefix = "";
  char why[96], name[160], canon[128];
  snprintf(why, sizeof why, "vocab_size=%d, hidden_size=%d", V, D);
  StTensor *emb = need(x, "model.embed_tokens.weight", V, D, why);
  if (!emb) return false;
  StTensor *head = maybe(x, "lm_head.weight");
  if (!tie && !head)
    return err_set(
        err,
        "%s: tensor \"lm_head.weight\" [%d,%d] is missing and %s does not say tie_word_embeddings: "
        "this is not a complete checkpoint",
        x->wpath, V, D, c->path);
  if (head && !tie) {
    if (!need(x, "lm_head.weight", V, D, why) || !move(x, "head.weight", head)) return false;
  }
  if (!move(x, "embed.weight", emb)) return false;
  long QD = (long)H * dk, KD = (long)Hk * dk;
  snprintf(why, sizeof why, "hidden_size=%d, %d heads and %d K/V heads of %d, intermediate_size=%d", D, H, Hk,
           dk, F);
  for (int i = 0; i < L; i++) {
    char b[64], cb[64];
    snprintf(b, sizeof b, "model.layers.%d.", i);
    snprintf(cb, sizeof cb, "layers.%d.", i);
    StTensor *t, *q, *k, *v;
#define HUB(n) (snprintf(name, sizeof name, "%s%s", b, n), name)
#define CANON(n) (snprintf(canon, sizeof canon, "%s%s", cb, n), canon)
    if (!(t = need(x, HUB("input_layernorm.weight"), D, -1, why)) || !move(x, CANON("norm1.weight"), t))
      return false;
    if (!(q = need(x, HUB("self_attn.q_proj.weight"), QD, D, why)) ||
        !(k = need(x, HUB("self_attn.k_proj.weight"), KD, D, why)) ||
        !(v = need(x, HUB("self_attn.v_proj.weight"), KD, D, why)) ||
        !stack_qkv(x, CANON("self_attn.in_proj_weight"), q, k, v))
      return false;
    if (qwen2 || attn_bias) {
      if (!(q = need(x, HUB("self_attn.q_proj.bias"), QD, -1, why)) ||
          !(k = need(x, HUB("self_attn.k_proj.bias"), KD, -1, why)) ||
          !(v = need(x, HUB("self_attn.v_proj.bias"), KD, -1, why)) ||
          !stack_qkv(x, CANON("self_attn.in_proj_bias"), q, k, v))
        return false;
    }
    if (!(t = need(x, HUB("self_attn.o_proj.weight"), D, QD, why)) ||
        !move(x, CANON("self_attn.out_proj.weight"), t))
      return false;
    if (attn_bias && !qwen2 &&
        (!(t = need(x, HUB("self_attn.o_proj.bias"), D, -1, why)) ||
         !move(x, CANON("self_attn.out_proj.bias"), t)))
      return false;
    if (qwen3) {
      if (!(t = need(x, HUB("self_attn.q_norm.weight"), dk, -1, why)) ||
          !move(x, CANON("self_attn.q_norm.weight"), t) ||
          !(t = need(x, HUB("self_attn.k_norm.weight"), dk, -1, why)) ||
          !move(x, CANON("self_attn.k_norm.weight"), t))
        return false;
    }
    if (!(t = need(x, HUB("post_attention_layernorm.weight"), D, -1, why)) ||
        !move(x, CANON("norm2.weight"), t) || !(t = need(x, HUB("mlp.gate_proj.weight"), F, D, why)) ||
        !move(x, CANON("gate.weight"), t) || !(t = need(x, HUB("mlp.up_proj.weight"), F, D, why)) ||
        !move(x, CANON("linear1.weight"), t) || !(t = need(x, HUB("mlp.down_proj.weight"), D, F, why)) ||
        !move(x, CANON("linear2.weight"), t))
      return false;
#undef HUB
#undef CANON
  }
  snprintf(name, sizeof name, "model.layers.%d.input_layernorm.weight", L);
  if (st_find(x->src, name))
    return err_set(
        err,
        "%s: tensor \"%s\" is a layer beyond num_hidden_layers=%d in %s: the config and the weights "
        "disagree",
        x->wpath, name, L, c->path);
  StTensor *nw = need(x, "model.norm.weight", D, -1, why);
  if (!nw || !move(x, "norm.weight", nw)) return false;
  const char *arch = qwen2 ? "Qwen 2" : qwen3 ? "Qwen 3" : "Llama";
  if (!meta(x, "hub_architecture", "%s", arch)) return false;
  return llama_config_meta(x->out, HUB_MAX_META, &lc) || err_set(err, "out of memory");
}

// The token strings of tokenizer.json by id (model.vocab and added_tokens), V of them, newline-joined:
// metadata "vocab" (ids without a token, as Qwen's padding rows, are "<|unused N|>"). Until the
// tokenizer.json reader lands, the folder opens with these labels and takes ids, not text.
typedef struct {
  const char *s;
  int i;
} TokId;

static int tokid_cmp(const void *a, const void *b) {
  const TokId *x = a, *y = b;
  int c = strcmp(x->s, y->s);
  return c ? c : (x->i > y->i) - (x->i < y->i);
}

static bool llama_vocab(Tx *x, const char *dir, int V) {
  char path[4200];
  size_t len;
  Err rerr = {0};
  char *text = path_join(path, sizeof path, dir, "tokenizer.json")
                   ? file_read_all(path, &len, 64u << 20, &rerr)
                   : NULL;
  cJSON *root = text ? cJSON_ParseWithLength(text, len) : NULL;
  free(text);
  char **tok = calloc((size_t)V, sizeof(char *));
  if (!tok) return cJSON_Delete(root), err_set(x->err, "out of memory");
  const cJSON *model = cJSON_GetObjectItemCaseSensitive(root, "model");
  const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab"), *e;
  cJSON_ArrayForEach(e, vocab) if (cJSON_IsNumber(e) && e->valuedouble >= 0 && e->valuedouble < V &&
                                   e->string) tok[(int)e->valuedouble] = e->string;
  const cJSON *added = cJSON_GetObjectItemCaseSensitive(root, "added_tokens");
  cJSON_ArrayForEach(e, added) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(e, "id"),
                *ct = cJSON_GetObjectItemCaseSensitive(e, "content");
    if (cJSON_IsNumber(id) && id->valuedouble >= 0 && id->valuedouble < V && cJSON_IsString(ct))
      tok[(int)id->valuedouble] = ct->valuestring;
  }
  size_t total = 1;
  for (int i = 0; i < V; i++) total += (tok[i] ? strlen(tok[i]) : 24) + 1;
  char *v = malloc(total), *key = strdup("vocab"), *p = v;
  if (!v || !key) {
    free(v), free(key), free(tok), cJSON_Delete(root);
    return err_set(x->err, "out of memory");
  }
  // a token with a newline in it (vocab_word_ok), or one already given (a lower id has it), would break
  // the distinct lines: the second found by sorting (id, token) by token, not by comparing every pair (128
  // 256 tokens: Llama 3)
  TokId *by = malloc(sizeof(TokId) * (size_t)V);
  bool *dup = calloc((size_t)V, sizeof(bool));
  if (!by || !dup) {
    free(by), free(dup), free(v), free(key), free(tok), cJSON_Delete(root);
    return err_set(x->err, "out of memory");
  }
  int nb = 0;
  for (int i = 0; i < V; i++)
    if (tok[i]) by[nb++] = (TokId){tok[i], i};
  qsort(by, (size_t)nb, sizeof *by, tokid_cmp);
  for (int k = 1; k < nb; k++)
    if (!strcmp(by[k - 1].s, by[k].s)) dup[by[k].i] = true; // (by id within equal tokens: the first stays)
  for (int i = 0; i < V; i++) {
    bool ok = tok[i] && vocab_word_ok(tok[i], strlen(tok[i])) && !dup[i];
    p += ok ? sprintf(p, "%s", tok[i]) : sprintf(p, "<|unused %d|>", i);
    if (i + 1 < V) *p++ = '\n';
  }
  *p = 0;
  free(by), free(dup);
  free(tok);
  cJSON_Delete(root);
  StFile *f = x->out;
  EXPECT(f->n_meta < HUB_MAX_META);
  f->keys[f->n_meta] = key, f->values[f->n_meta] = v, f->n_meta++;
  return true;
}

// A sharded checkpoint: every file model.safetensors.index.json's weight_map names, mapped together
// into *src as one file's mapping (st_read_mapped_shards: F32 tensors read in place, not copied).
static bool read_shards(StFile *src, const char *dir, Err *err) {
  char path[4200];
  size_t len;
  memset(src, 0, sizeof *src);
  if (!path_join(path, sizeof path, dir, "model.safetensors.index.json"))
    return err_set(err, "%s: folder name too long", dir);
  char *text = file_read_all(path, &len, HUB_MAX_CONFIG * 16, err);
  if (!text) return false;
  cJSON *root = cJSON_ParseWithLength(text, len);
  free(text);
  const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, "weight_map"), *e;
  if (!cJSON_IsObject(map)) {
    cJSON_Delete(root);
    return err_set(err, "%s: no \"weight_map\" object: download the index again", path);
  }
  int cap = cJSON_GetArraySize(map), n = 0;
  char **names = calloc((size_t)cap + 1, sizeof(char *));
  bool ok = names != NULL;
  if (!ok) err_set(err, "out of memory");
  cJSON_ArrayForEach(e, map) {
    if (!ok) break;
    if (!cJSON_IsString(e) || strchr(e->valuestring, '/')) {
      ok = err_set(err, "%s: weight_map's \"%.60s\" is not a file name of the folder", path, e->string);
      break;
    }
    bool seen = false; // each shard once
    for (int i = 0; i < n && !seen; i++) seen = !strcmp(names[i] + strlen(dir) + 1, e->valuestring);
    if (seen) continue;
    size_t need = strlen(dir) + strlen(e->valuestring) + 2;
    if (!(names[n] = malloc(need))) {
      ok = err_set(err, "out of memory");
      break;
    }
    snprintf(names[n++], need, "%s/%s", dir, e->valuestring);
  }
  cJSON_Delete(root);
  if (ok && n == 0) ok = err_set(err, "%s: the weight_map names no tensor", path);
  ok = ok && st_read_mapped_shards(src, (const char *const *)names, n, true, err);
  for (int i = 0; names && i < n; i++) free(names[i]);
  free(names);
  return ok && st_index(src, path, err);
}

// ---- the folder

// BERT's do_lower_case: tokenizer_config.json's, else config.json's, else true (uncased).
static bool bert_lower(const char *dir, const Config *c) {
  char path[4200];
  bool lower = true;
  const cJSON *j = cJSON_GetObjectItemCaseSensitive(c->root, "do_lower_case");
  if (cJSON_IsBool(j)) lower = cJSON_IsTrue(j);
  size_t len;
  Err ignore = {0};
  char *text = path_join(path, sizeof path, dir, "tokenizer_config.json")
                   ? file_read_all(path, &len, HUB_MAX_CONFIG, &ignore)
                   : NULL;
  if (!text) return lower;
  cJSON *root = cJSON_ParseWithLength(text, len);
  free(text);
  j = cJSON_GetObjectItemCaseSensitive(root, "do_lower_case");
  if (cJSON_IsBool(j)) lower = cJSON_IsTrue(j);
  cJSON_Delete(root);
  return lower;
}

static bool file_exists(const char *dir, const char *name) {
  char path[4200];
  struct stat st;
  return path_join(path, sizeof path, dir, name) && stat(path, &st) == 0;
}

bool hub_read(const char *dir, StFile *out, ModelTokenizer **tk_out, Err *err) {
  memset(out, 0, sizeof *out);
  *tk_out = NULL;
  Config c;
  if (!config_read(&c, dir, err)) return false;
  StFile src = {0};
  ModelTokenizer *tk = NULL;
  bool *used = NULL, ok = false;
  char wpath[4200];
  const char *type = config_str(&c, "model_type", NULL, err);
  if (!type) {
    if (!err->msg[0])
      err_set(err, "%s: \"model_type\" is missing: Stepformer opens gpt2 and bert checkpoints", c.path);
    goto done;
  }
  bool is_gpt2 = !strcmp(type, "gpt2"), is_bert = !strcmp(type, "bert");
  bool is_llama = !strcmp(type, "llama") || !strcmp(type, "qwen2") || !strcmp(type, "qwen3");
  if (!is_gpt2 && !is_bert && !is_llama) {
    err_set(err, "%s: model_type \"%.40s\" is not one Stepformer opens (gpt2, bert, llama, qwen2, qwen3)",
            c.path, type);
    goto done;
  }
  path_join(wpath, sizeof wpath, dir, "model.safetensors");
  bool sharded =
      is_llama && !file_exists(dir, "model.safetensors") && file_exists(dir, "model.safetensors.index.json");
  if (sharded) path_join(wpath, sizeof wpath, dir, "model.safetensors.index.json");
  if (!file_exists(dir, "model.safetensors") && !sharded) {
    if (file_exists(dir, "model.safetensors.index.json"))
      err_set(err,
              "%s: the checkpoint is sharded (model.safetensors.index.json); Stepformer reads one file: "
              "merge the "
              "shards with python3 -c \"import glob,safetensors.torch as s; d={}; [d.update(s.load_file(f)) "
              "for f "
              "in sorted(glob.glob('%s/model-*.safetensors'))]; s.save_file(d, '%s')\"",
              dir, dir, wpath);
    else
      err_set(
          err,
          "%s is missing%s: download it with huggingface-cli download MODEL model.safetensors --local-dir %s",
          wpath, file_exists(dir, "pytorch_model.bin") ? " (pytorch_model.bin is not read)" : "", dir);
    goto done;
  }
  // the tokenizer before the weights: a missing file is reported before 500 MB are read
  if (is_llama) { // tokenizer.json (tokjson.h), before 500 MB of weights are read
    if (!file_exists(dir, "tokenizer.json")) {
      err_set(err,
              "%s/tokenizer.json is missing: download it with huggingface-cli download MODEL tokenizer.json "
              "--local-dir %s",
              dir, dir);
      goto done;
    }
    if (!(tk = model_tokenizer_from_json(dir, err))) goto done;
    goto weights;
  }
  tk = calloc(1, sizeof *tk);
  if (!tk) {
    err_set(err, "out of memory");
    goto done;
  }
  tk->kind = is_gpt2 ? TOK_BPE : TOK_WORDPIECE;
  if (is_gpt2 ? !bpe_load_dir(&tk->bpe, dir, err) : !wp_load_dir(&tk->wp, dir, bert_lower(dir, &c), err)) {
    free(tk);
    tk = NULL;
    goto done;
  }
weights:
  if (sharded ? !read_shards(&src, dir, err) : !st_read_mapped(&src, wpath, true, err)) goto done;
  // the canonical file borrows the mapping (its F32 tensors point into it) and owns it at the end
  out->map = src.map, out->map_len = src.map_len, out->map_owner = false;
  used = calloc((size_t)src.n + 1, sizeof(bool));
  int cap = src.n + 8;
  out->tensors = calloc((size_t)cap, sizeof(StTensor));
  out->keys = calloc(HUB_MAX_META, sizeof(char *));
  out->values = calloc(HUB_MAX_META, sizeof(char *));
  if (!used || !out->tensors || !out->keys || !out->values) {
    err_set(err, "out of memory");
    goto done;
  }
  Tx x = {.src = &src,
          .used = used,
          .prefix = "",
          .out = out,
          .cap = cap,
          .wpath = wpath,
          .cpath = c.path,
          .err = err};
  if (is_llama) {
    int V = 0;
    ok = llama(&x, &c, type) && config_int(&c, "vocab_size", -1, &V, err) && llama_vocab(&x, dir, V) &&
         meta(&x, "tokenizer", "%s", tk ? "tokenizer.json" : "bpe") && note_unused(&x) &&
         st_index(out, wpath, err);
  } else
    ok = (is_gpt2 ? gpt2(&x, &c, tk) : bert(&x, &c, tk)) && meta_vocab(&x, tk) && note_unused(&x) &&
         st_index(out, wpath, err);
done:
  free(used);
  if (ok && src.map_owner) src.map_owner = false, out->map_owner = true;
  st_free(&src);
  cJSON_Delete(c.root);
  if (!ok) {
    st_free(out); // its tensors in the mapping are not freed (src has unmapped it)
    model_tokenizer_free(tk);
    return false;
  }
  *tk_out = tk;
  return true;
}

typedef struct {
  const char *word;
  int id;
} Label;

static int label_cmp(const void *a, const void *b) {
  const Label *x = a, *y = b;
  int c = strcmp(x->word, y->word);
  return c ? c : (x->id > y->id) - (x->id < y->id);
}

// Today's decoders: the embedding may have more rows than the tokenizer has ids (Qwen's 151 936 for
// 151 669): labels 0..n-1 as they are, then "<unused N>" up to V. False (one line) when the
// tokenizer has more ids than the embedding has rows.
static bool labels_to(Vocab *v, int V, const char *dir, Err *err) {
  if (v->n > V)
    return err_set(err,
                   "%s: tokenizer.json has %d ids but the embedding has vocab_size=%d rows: the tokenizer "
                   "belongs to another model",
                   dir, v->n, V);
  if (v->n == V) return true;
  size_t total = 0;
  for (int i = 0; i < v->n; i++) total += strlen(v->words[i]) + 1;
  total += (size_t)(V - v->n) * 24;
  char *block = malloc(total + 1), **words = malloc(sizeof(char *) * (size_t)V);
  int *order = malloc(sizeof(int) * (size_t)V);
  Label *e = malloc(sizeof(Label) * (size_t)V);
  if (!block || !words || !order || !e) {
    free(block), free(words), free(order), free(e);
    return err_set(err, "out of memory for %d labels", V);
  }
  char *p = block;
  for (int i = 0; i < V; i++) {
    int k = i < v->n ? sprintf(p, "%s", v->words[i]) : sprintf(p, "<unused %d>", i);
    words[i] = p, e[i] = (Label){p, i};
    p += k + 1;
  }
  qsort(e, (size_t)V, sizeof *e, label_cmp);
  for (int i = 0; i < V; i++) order[i] = e[i].id;
  free(e);
  vocab_free(v);
  v->words = words, v->block = block, v->order = order, v->n = V;
  return true;
}

Model *hub_model_load(const char *dir, Err *err) {
  StFile f;
  ModelTokenizer *tk;
  if (!hub_read(dir, &f, &tk, err)) return NULL;
  Model *m = model_from_st(&f, dir, err);
  Vocab labels = {0};
  if (m && !tk) { // today's decoders: tokenizer.json's tokens as they are (no tokenizer yet: ids)
    size_t k = strlen(dir);
    while (k > 1 && dir[k - 1] == '/') k--;
    size_t s = k;
    while (s > 0 && dir[s - 1] != '/') s--;
    snprintf(m->source, sizeof m->source, "%.*s", (int)(k - s), dir + s);
    return m;
  }
  if (!m || !model_tokenizer_vocab(tk, &labels, err) ||
      (tk->kind == TOK_TOKJSON && !labels_to(&labels, m->cfg.V, dir, err))) {
    if (m && labels.words) vocab_free(&labels);
    model_free(m);
    model_tokenizer_free(tk);
    return NULL;
  }
  m->tokenizer = tk;
  vocab_free(&m->vocab); // the tokens as the file writes them ("Ġcat"): shown as labels ("␣cat")
  m->vocab = labels;
  size_t k = strlen(dir);
  while (k > 1 && dir[k - 1] == '/') k--; // "gpt2/" is captioned "gpt2"
  size_t s = k;
  while (s > 0 && dir[s - 1] != '/') s--;
  snprintf(m->source, sizeof m->source, "%.*s", (int)(k - s), dir + s);
  return m;
}
