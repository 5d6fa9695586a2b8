// course.c -- see course.h: the notebook's names and NAME.json translated into the canonical
// StFile (model.h), every shape checked against the others before anything is copied.
#include "course.h"
#include "course_tr.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h" // defines: file_read_all
#include "ptfile.h" // defines: pt_read, pt_sniff

#define MAX_CONFIG (64u << 20) // a NAME.json larger than this is not a config
#define MAX_BLOCKS 4096        // encoder_blocks.{i}: an index beyond is no model's
#define MAX_META 64

// ---------------------------------------------------------------- the config
// What NAME.json (or a .safetensors' __metadata__) says. The keys the shapes decide are only
// compared with them: fixed[] in the order of fixed_keys.
static const char *const fixed_keys[] = {"d_model",     "d_ff",       "n_layers",
                                         "max_seq_len", "vocab_size", "num_classes"};

static void config_free(CtConfig *c) {
  free(c->vocab);
  free(c->classes);
}

// A JSON list of strings (or one string of lines) joined by newlines; *n counts them.
static bool join_list(const cJSON *v, const char *key, const CtConfig *c, const char *what, char **out,
                      int *n, Err *err) {
  if (cJSON_IsString(v)) {
    *out = strdup(v->valuestring);
    if (!*out) return err_set(err, "%s: out of memory", what);
    *n = 1;
    for (const char *p = *out; *p; p++) *n += *p == '\n';
    return true;
  }
  if (!cJSON_IsArray(v) || !v->child)
    return err_set(err, "%s: %s: \"%s\" must be a list of words, like [\"<unk>\", \"the\", ...]", what,
                   c->src, key);
  size_t len = 0;
  int count = 0;
  for (const cJSON *it = v->child; it; it = it->next, count++) {
    if (!cJSON_IsString(it) || !it->valuestring[0] || strchr(it->valuestring, '\n'))
      return err_set(err, "%s: %s: entry %d of \"%s\" is not a word (a non-empty string without newline)",
                     what, c->src, count + 1, key);
    len += strlen(it->valuestring) + 1;
  }
  char *s = malloc(len + 1), *p = s;
  if (!s) return err_set(err, "%s: out of memory", what);
  for (const cJSON *it = v->child; it; it = it->next) {
    size_t k = strlen(it->valuestring);
    memcpy(p, it->valuestring, k);
    p += k;
    *p++ = it->next ? '\n' : 0;
  }
  *out = s;
  *n = count;
  return true;
}

static bool whole(const cJSON *v, long lo, long hi, long *out) {
  if (!cJSON_IsNumber(v) || !(v->valuedouble >= (double)lo && v->valuedouble <= (double)hi) ||
      v->valuedouble != floor(v->valuedouble))
    return false;
  *out = (long)v->valuedouble;
  return true;
}

// Reads the keys Stepformer uses from a JSON object; other keys (a notebook's dropout, ...) are
// left alone.
static bool config_from_json(CtConfig *c, const cJSON *root, const char *what, Err *err) {
  if (!cJSON_IsObject(root))
    return err_set(err, "%s: %s is not a JSON object like {\"n_heads\": 2, \"vocab\": [\"<unk>\", ...]}",
                   what, c->src);
  const cJSON *v;
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "n_heads"))) {
    if (!whole(v, 1, 8192, &c->H))
      return err_set(err, "%s: %s: \"n_heads\" must be a whole number of heads in 1..8192", what, c->src);
    c->has_H = true;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "vocab")) &&
      !join_list(v, "vocab", c, what, &c->vocab, &c->n_vocab, err))
    return false;
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "classes")) &&
      !join_list(v, "classes", c, what, &c->classes, &c->n_classes, err))
    return false;
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "eps")) ||
      (v = cJSON_GetObjectItemCaseSensitive(root, "layer_norm_eps"))) {
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0 && v->valuedouble < 1))
      return err_set(err, "%s: %s: \"%s\" must be a LayerNorm epsilon, a number between 0 and 1 like 1e-5",
                     what, c->src, v->string);
    c->eps = v->valuedouble, c->has_eps = true;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "embed_eps"))) {
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0 && v->valuedouble < 1))
      return err_set(err,
                     "%s: %s: \"embed_eps\" must be a LayerNorm epsilon, a number between 0 and 1 like 1e-12",
                     what, c->src);
    c->embed_eps = v->valuedouble, c->has_embed_eps = true;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "norm_first"))) {
    long nf = -1;
    if (cJSON_IsBool(v))
      nf = cJSON_IsTrue(v);
    else if (!whole(v, 0, 1, &nf))
      return err_set(err, "%s: %s: \"norm_first\" must be 1 (pre-norm) or 0 (post-norm)", what, c->src);
    c->norm_first = (int)nf;
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "pos_encoding"))) {
    if (!cJSON_IsString(v) || (strcmp(v->valuestring, "sinusoidal") && strcmp(v->valuestring, "none") &&
                               strcmp(v->valuestring, "learned")))
      return err_set(err, "%s: %s: \"pos_encoding\" must be \"sinusoidal\", \"none\" or \"learned\"", what,
                     c->src);
    snprintf(c->pos, sizeof c->pos, "%s", v->valuestring);
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "energy_scale"))) {
    if (!cJSON_IsString(v) || (strcmp(v->valuestring, "head_dim") && strcmp(v->valuestring, "embed_size")))
      return err_set(err,
                     "%s: %s: \"energy_scale\" must be \"head_dim\" (softmax(energy/sqrt(d_k)), the course "
                     "notebook's) or \"embed_size\" (energy/sqrt(D))",
                     what, c->src);
    snprintf(c->energy_scale, sizeof c->energy_scale, "%s", v->valuestring);
  }
  if ((v = cJSON_GetObjectItemCaseSensitive(root, "activation"))) {
    if (!cJSON_IsString(v) || (strcmp(v->valuestring, "gelu") && strcmp(v->valuestring, "relu") &&
                               strcmp(v->valuestring, "gelu_tanh")))
      return err_set(err,
                     "%s: %s: \"activation\" must be \"gelu\" (nn.GELU()), \"relu\" (nn.ReLU()) or "
                     "\"gelu_tanh\" (nn.GELU(approximate=\"tanh\"))",
                     what, c->src);
    snprintf(c->act, sizeof c->act, "%s", v->valuestring);
  }
  for (int k = 0; k < FX_N; k++)
    if ((v = cJSON_GetObjectItemCaseSensitive(root, fixed_keys[k]))) {
      if (!whole(v, 0, 1L << 30, &c->fixed[k]))
        return err_set(err, "%s: %s: \"%s\" must be a whole number", what, c->src, fixed_keys[k]);
      c->has_fixed[k] = true;
    }
  return true;
}

static bool config_parse(CtConfig *c, const char *json, const char *what, Err *err) {
  cJSON *root = cJSON_Parse(json);
  if (!root) {
    const char *at = cJSON_GetErrorPtr();
    return err_set(err,
                   "%s: %s is not valid JSON (at byte %ld): write it as {\"n_heads\": 2, \"vocab\": [...]}",
                   what, c->src, at && at >= json ? (long)(at - json) : 0L);
  }
  bool ok = config_from_json(c, root, what, err);
  cJSON_Delete(root);
  return ok;
}

// A .safetensors' __metadata__ (strings only) seen as the JSON object it stands for: numbers
// parsed, vocab and classes as a JSON list when they start with '[', else lines.
static bool config_from_meta(CtConfig *c, const StFile *f, const char *what, Err *err) {
  snprintf(c->src, sizeof c->src, "__metadata__");
  cJSON *root = cJSON_CreateObject();
  if (!root) return err_set(err, "%s: out of memory", what);
  for (int i = 0; i < f->n_meta; i++) {
    const char *k = f->keys[i], *s = f->values[i];
    cJSON *v = NULL;
    bool list = !strcmp(k, "vocab") || !strcmp(k, "classes");
    if (list && s[0] == '[')
      v = cJSON_Parse(s);
    else if (list)
      v = cJSON_CreateString(s);
    else {
      char *end;
      errno = 0;
      double d = strtod(s, &end);
      v = end != s && !*end && !errno ? cJSON_CreateNumber(d) : cJSON_CreateString(s);
    }
    if (!v) {
      cJSON_Delete(root);
      return err_set(err, "%s: __metadata__ \"%s\" is not a JSON list of words", what, k);
    }
    cJSON_AddItemToObject(root, k, v);
  }
  bool ok = config_from_json(c, root, what, err);
  cJSON_Delete(root);
  return ok;
}

// ---------------------------------------------------------------- the canonical file being built

void ct_shape_str(char *buf, size_t cap, const StTensor *x) {
  size_t at = 0;
  buf[0] = 0;
  for (int k = 0; k < x->ndim && at < cap; k++)
    at += (size_t)snprintf(buf + at, cap - at, k ? ",%lld" : "%lld", (long long)x->shape[k]);
}

StTensor *ct_take(CtTr *t, const char *name) {
  const StTensor *x = st_find(t->in, name);
  if (!x) return NULL;
  t->used[x - t->in->tensors] = true;
  return (StTensor *)x;
}

// The tensor `name` with shape [d0] (ndim 1) or [d0, d1]; why says where the sizes come from.
StTensor *ct_need(CtTr *t, const char *name, int ndim, int64_t d0, int64_t d1, const char *why) {
  StTensor *x = ct_take(t, name);
  char want[48];
  if (ndim == 1)
    snprintf(want, sizeof want, "%lld", (long long)d0);
  else
    snprintf(want, sizeof want, "%lld,%lld", (long long)d0, (long long)d1);
  if (!x) {
    err_set(t->err, "%s: tensor \"%s\" [%s] is missing (%s)", t->what, name, want, why);
    return NULL;
  }
  if (x->ndim != ndim || x->shape[0] != d0 || (ndim == 2 && x->shape[1] != d1)) {
    char got[64];
    ct_shape_str(got, sizeof got, x);
    err_set(t->err, "%s: tensor \"%s\" has shape [%s], expected [%s] (%s)", t->what, name, got, want, why);
    return NULL;
  }
  return x;
}

// A new tensor of *out, named, with room for its values (NULL data when count is 0).
StTensor *ct_out_new(CtTr *t, const char *name, int ndim, int64_t d0, int64_t d1) {
  EXPECT(t->out->n < t->cap_t);
  StTensor *o = &t->out->tensors[t->out->n];
  memset(o, 0, sizeof *o);
  o->name = strdup(name);
  if (!o->name) {
    err_set(t->err, "%s: out of memory", t->what);
    return NULL;
  }
  t->out->n++;
  o->ndim = ndim;
  o->shape[0] = d0;
  o->shape[1] = ndim == 2 ? d1 : 0;
  o->count = ndim == 2 ? d0 * d1 : d0;
  return o;
}

// Moves x's values into *out under `name` (x keeps its name and shape, no data).
bool ct_out_move(CtTr *t, const char *name, StTensor *x) {
  StTensor *o = ct_out_new(t, name, 1, 0, 0);
  if (!o) return false;
  o->ndim = x->ndim;
  memcpy(o->shape, x->shape, sizeof o->shape);
  o->count = x->count;
  o->data = x->data;
  x->data = NULL;
  return true;
}

// The tensor `name` [d0, d1] (ndim 2) or [d0] with the values of x reshaped (same count).
static bool out_reshape(CtTr *t, const char *name, StTensor *x, int ndim, int64_t d0, int64_t d1) {
  if (!ct_out_move(t, name, x)) return false;
  StTensor *o = &t->out->tensors[t->out->n - 1];
  EXPECT(o->count == (ndim == 2 ? d0 * d1 : d0));
  memset(o->shape, 0, sizeof o->shape);
  o->ndim = ndim, o->shape[0] = d0, o->shape[1] = ndim == 2 ? d1 : 0;
  return true;
}

bool ct_out_meta(CtTr *t, const char *key, const char *value) {
  StFile *o = t->out;
  EXPECT(o->n_meta < t->cap_m);
  o->keys[o->n_meta] = strdup(key);
  o->values[o->n_meta] = strdup(value);
  if (!o->keys[o->n_meta] || !o->values[o->n_meta]) {
    free(o->keys[o->n_meta]);
    free(o->values[o->n_meta]);
    return err_set(t->err, "%s: out of memory", t->what);
  }
  o->n_meta++;
  return true;
}

bool ct_out_meta_int(CtTr *t, const char *key, long v) {
  char s[32];
  snprintf(s, sizeof s, "%ld", v);
  return ct_out_meta(t, key, s);
}

// Insertion sort of the indices by name (a model has a few hundred tensors at most here).
static bool out_index(CtTr *t) {
  StFile *o = t->out;
  o->by_name = malloc(sizeof(int) * (size_t)(o->n + 1));
  if (!o->by_name) return err_set(t->err, "%s: out of memory", t->what);
  for (int i = 0; i < o->n; i++) {
    int j = i;
    while (j > 0 && strcmp(o->tensors[o->by_name[j - 1]].name, o->tensors[i].name) > 0)
      o->by_name[j] = o->by_name[j - 1], j--;
    o->by_name[j] = i;
  }
  for (int i = 1; i < o->n; i++)
    if (!strcmp(o->tensors[o->by_name[i - 1]].name, o->tensors[o->by_name[i]].name))
      return err_set(t->err, "%s: tensor \"%.80s\" would appear twice (the file holds it under two names)",
                     t->what, o->tensors[o->by_name[i]].name);
  return true;
}

// ---------------------------------------------------------------- the notebook's names
bool course_is_notebook(const StFile *f) {
  if (st_find(f, "encoder.tok_embed.weight") || course_modules_is(f)) return true;
  for (int i = 0; i < f->n; i++)
    if (!strncmp(f->tensors[i].name, "encoder.encoder_blocks.", 23)) return true;
  return false;
}

// The number of blocks: one more than the largest i of encoder.encoder_blocks.{i}.*
static int count_blocks(const StFile *f) {
  int n = 0;
  for (int i = 0; i < f->n; i++) {
    const char *s = f->tensors[i].name;
    if (strncmp(s, "encoder.encoder_blocks.", 23)) continue;
    char *end;
    long k = strtol(s + 23, &end, 10);
    if (end != s + 23 && *end == '.' && s[23] >= '0' && s[23] <= '9' && k < MAX_BLOCKS && k + 1 > n)
      n = (int)k + 1;
  }
  return n;
}

static const char *const OPENS =
    "Stepformer opens the course notebook's Transformer (encoder.tok_embed.weight, encoder.pos_embed, "
    "encoder.encoder_blocks.N.*, encoder.norm.*, linear.*), the course's modules "
    "(layers.N.attention.heads.H.q, "
    "layers.N.attention.queries) and its own names (embed.weight, layers.N.*): see README";

// A config key the shapes decide, compared with them.
bool ct_agree(CtTr *t, const CtConfig *c, int k, long have, const char *from) {
  if (!c->has_fixed[k] || c->fixed[k] == have) return true;
  return err_set(t->err, "%s: %s says %s = %ld, but %s gives %ld: make the two agree", t->what, c->src,
                 fixed_keys[k], c->fixed[k], from, have);
}

static bool notebook_layer(CtTr *t, int i, int64_t D, int64_t *F) {
  char pre[64], n[128], why[128];
  snprintf(pre, sizeof pre, "encoder.encoder_blocks.%d.", i);
  snprintf(why, sizeof why, "D = %lld from encoder.tok_embed.weight", (long long)D);
#define NAME(s) (snprintf(n, sizeof n, "%s%s", pre, s), n)
  bool sanity = st_find(t->in, NAME("mha.WQ.weight")) != NULL;
  static const char *const plain[4] = {"mha.W_Q", "mha.W_K", "mha.W_V", "mha.W_O"};
  static const char *const sane[4] = {"mha.WQ", "mha.WK", "mha.WV", "mha.linear"};
  const char *const *names = sanity ? sane : plain;
  StTensor *w[4], *b[4];
  for (int k = 0; k < 4; k++) {
    char s[48];
    snprintf(s, sizeof s, "%s.weight", names[k]);
    if (!(w[k] = ct_need(t, NAME(s), 2, D, D, why))) return false;
    snprintf(s, sizeof s, "%s.bias", names[k]);
    b[k] = ct_take(t, NAME(s));
    if (b[k] && !(b[k]->ndim == 1 && b[k]->shape[0] == D)) return ct_need(t, n, 1, D, 0, why) != NULL;
  }
  if ((b[0] != NULL) != (b[1] != NULL) || (b[0] != NULL) != (b[2] != NULL)) {
    int has = b[0] ? 0 : b[1] ? 1 : 2, lacks = !b[0] ? 0 : !b[1] ? 1 : 2;
    return err_set(t->err,
                   "%s: block %d has %s.bias but not %s.bias: the three projections have biases or none",
                   t->what, i, names[has], names[lacks]);
  }
  // Q, K, V stacked: rows 0..D-1 Q, D..2D-1 K, 2D..3D-1 V, as nn.MultiheadAttention's in_proj
  snprintf(n, sizeof n, "layers.%d.self_attn.in_proj_weight", i);
  StTensor *o = ct_out_new(t, n, 2, 3 * D, D);
  if (!o || !(o->data = malloc(sizeof(float) * (size_t)(3 * D * D))))
    return err_set(t->err, "%s: out of memory", t->what);
  for (int k = 0; k < 3; k++) memcpy(o->data + k * D * D, w[k]->data, sizeof(float) * (size_t)(D * D));
  if (b[0]) {
    snprintf(n, sizeof n, "layers.%d.self_attn.in_proj_bias", i);
    if (!(o = ct_out_new(t, n, 1, 3 * D, 0)) || !(o->data = malloc(sizeof(float) * (size_t)(3 * D))))
      return err_set(t->err, "%s: out of memory", t->what);
    for (int k = 0; k < 3; k++) memcpy(o->data + k * D, b[k]->data, sizeof(float) * (size_t)D);
  }
  snprintf(n, sizeof n, "layers.%d.self_attn.out_proj.weight", i);
  if (!ct_out_move(t, n, w[3])) return false;
  snprintf(n, sizeof n, "layers.%d.self_attn.out_proj.bias", i);
  if (b[3] && !ct_out_move(t, n, b[3])) return false;
  // the feed-forward: F from block 0's first linear layer
  if (*F == 0) {
    const StTensor *f0 = st_find(t->in, NAME("feed_forward.0.weight"));
    if (f0 && f0->ndim == 2 && f0->shape[0] > 0) *F = f0->shape[0];
  }
  char whyf[320];
  snprintf(whyf, sizeof whyf, "%s, F = %lld from encoder.encoder_blocks.0.feed_forward.0.weight", why,
           (long long)*F);
  static const struct {
    const char *from, *to;
    int nd;
    bool f0, f1; // the first (second) size is F, else D
  } map[] = {
      {"feed_forward.0.weight", "linear1.weight", 2, true, false},
      {"feed_forward.0.bias", "linear1.bias", 1, true, false},
      {"feed_forward.3.weight", "linear2.weight", 2, false, true},
      {"feed_forward.3.bias", "linear2.bias", 1, false, false},
      {"residual1.norm.weight", "norm1.weight", 1, false, false},
      {"residual1.norm.bias", "norm1.bias", 1, false, false},
      {"residual2.norm.weight", "norm2.weight", 1, false, false},
      {"residual2.norm.bias", "norm2.bias", 1, false, false},
  };
  for (size_t k = 0; k < sizeof map / sizeof map[0]; k++) {
    int64_t d0 = map[k].f0 ? *F : D, d1 = map[k].f1 ? *F : D;
    StTensor *x = ct_need(t, NAME(map[k].from), map[k].nd, d0, d1, map[k].f0 || map[k].f1 ? whyf : why);
    char to[96];
    snprintf(to, sizeof to, "layers.%d.%s", i, map[k].to);
    if (!x || !ct_out_move(t, to, x)) return false;
  }
#undef NAME
  return true;
}

static bool translate_notebook(CtTr *t, const CtConfig *c) {
  StTensor *e = ct_take(t, "encoder.tok_embed.weight");
  if (!e || e->ndim != 2 || e->shape[0] < 1 || e->shape[1] < 1) {
    char got[64] = "missing";
    if (e) ct_shape_str(got, sizeof got, e);
    return err_set(
        t->err,
        "%s: the course notebook's names, but its token embedding encoder.tok_embed.weight [V, D] is %s%s%s",
        t->what, e ? "[" : "", got, e ? "]" : "");
  }
  int64_t V = e->shape[0], D = e->shape[1], F = 0;
  if (!strcmp(c->energy_scale, "embed_size"))
    return err_set(
        t->err,
        "%s: %s says energy_scale \"embed_size\", but the notebook's Transformer divides its scores "
        "by sqrt(d_k) (ScaledDotProductAttention): leave the key out or write \"head_dim\"",
        t->what, c->src);
  char why[128];
  snprintf(why, sizeof why, "D = %lld from encoder.tok_embed.weight", (long long)D);
  StTensor *pos = ct_take(t, "encoder.pos_embed");
  if (!pos || !((pos->ndim == 3 && pos->shape[0] == 1 && pos->shape[2] == D && pos->shape[1] > 0) ||
                (pos->ndim == 2 && pos->shape[1] == D && pos->shape[0] > 0))) {
    char got[64] = "";
    if (pos) ct_shape_str(got, sizeof got, pos);
    return err_set(t->err, "%s: tensor \"encoder.pos_embed\" %s%s%s, expected [1,max_seq_len,%lld] (%s)",
                   t->what, pos ? "has shape [" : "is missing", got, pos ? "]" : "", (long long)D, why);
  }
  int64_t M = pos->ndim == 3 ? pos->shape[1] : pos->shape[0];
  int n_layers = count_blocks(t->in);
  if (n_layers == 0)
    return err_set(t->err,
                   "%s: no tensor encoder.encoder_blocks.0.*: the notebook's Transformer has at least one "
                   "EncoderBlock",
                   t->what);
  // what the config must say, and must not contradict
  char from[160];
  if (!c->has_H)
    return err_set(t->err, "%s: %s has no \"n_heads\" (the tensors cannot say it): add \"n_heads\": H",
                   t->what, c->src);
  if (D % c->H)
    return err_set(
        t->err,
        "%s: %s says n_heads = %ld, which does not divide d_model = %lld (encoder.tok_embed.weight "
        "[%lld,%lld]): give the number of heads the model was built with",
        t->what, c->src, c->H, (long long)D, (long long)V, (long long)D);
  if (!c->vocab)
    return err_set(t->err,
                   "%s: %s has no \"vocab\": add the %lld words of encoder.tok_embed.weight, \"<unk>\" first",
                   t->what, c->src, (long long)V);
  if (c->n_vocab != V)
    return err_set(
        t->err,
        "%s: %s lists %d words in \"vocab\", but encoder.tok_embed.weight [%lld,%lld] has %lld rows: "
        "make the two agree",
        t->what, c->src, c->n_vocab, (long long)V, (long long)D, (long long)V);
  snprintf(from, sizeof from, "encoder.tok_embed.weight [%lld,%lld]", (long long)V, (long long)D);
  if (!ct_agree(t, c, FX_D, (long)D, from) || !ct_agree(t, c, FX_V, (long)V, from)) return false;
  snprintf(from, sizeof from, "encoder.pos_embed (max_seq_len %lld)", (long long)M);
  if (!ct_agree(t, c, FX_M, (long)M, from)) return false;
  snprintf(from, sizeof from, "encoder.encoder_blocks.0..%d", n_layers - 1);
  if (!ct_agree(t, c, FX_LAYERS, n_layers, from)) return false;

  if (!ct_out_move(t, "embed.weight", e) || !out_reshape(t, "pos_embed.weight", pos, 2, M, D)) return false;
  for (int i = 0; i < n_layers; i++)
    if (!notebook_layer(t, i, D, &F)) return false;
  snprintf(from, sizeof from, "encoder.encoder_blocks.0.feed_forward.0.weight (d_ff %lld)", (long long)F);
  if (!ct_agree(t, c, FX_F, (long)F, from)) return false;
  StTensor *nw = ct_need(t, "encoder.norm.weight", 1, D, 0, why),
           *nb = nw ? ct_need(t, "encoder.norm.bias", 1, D, 0, why) : NULL;
  if (!nb || !ct_out_move(t, "norm.weight", nw) || !ct_out_move(t, "norm.bias", nb)) return false;
  StTensor *lw = ct_take(t, "linear.weight");
  if (!lw || lw->ndim != 2 || lw->shape[1] != D || lw->shape[0] < 1) {
    char got[64] = "";
    if (lw) ct_shape_str(got, sizeof got, lw);
    return err_set(t->err, "%s: tensor \"linear.weight\" (the class scores) %s%s%s, expected [C,%lld] (%s)",
                   t->what, lw ? "has shape [" : "is missing", got, lw ? "]" : "", (long long)D, why);
  }
  int64_t C = lw->shape[0];
  snprintf(from, sizeof from, "linear.weight [%lld,%lld]", (long long)C, (long long)D);
  if (!ct_agree(t, c, FX_C, (long)C, from)) return false;
  if (c->classes && c->n_classes != C)
    return err_set(t->err,
                   "%s: %s names %d classes, but linear.weight [%lld,%lld] scores %lld: make the two agree",
                   t->what, c->src, c->n_classes, (long long)C, (long long)D, (long long)C);
  char whyc[64];
  snprintf(whyc, sizeof whyc, "C = %lld from linear.weight", (long long)C);
  StTensor *lb = ct_need(t, "linear.bias", 1, C, 0, whyc);
  if (!lb || !ct_out_move(t, "classifier.weight", lw) || !ct_out_move(t, "classifier.bias", lb)) return false;
  for (int i = 0; i < t->in->n; i++)
    if (!t->used[i])
      return err_set(t->err, "%s: tensor \"%.80s\" is not one of the notebook's Transformer (%d blocks): %s",
                     t->what, t->in->tensors[i].name, n_layers, OPENS);

  char eps[32];
  snprintf(eps, sizeof eps, "%.9g", c->has_eps ? c->eps : 1e-5);
  if (!ct_out_meta_int(t, "d_model", (long)D) || !ct_out_meta_int(t, "n_heads", c->H) ||
      !ct_out_meta_int(t, "d_ff", (long)F) || !ct_out_meta_int(t, "n_layers", n_layers) ||
      !ct_out_meta(t, "activation", c->act[0] ? c->act : "relu") || !ct_out_meta(t, "norm_first", "1") ||
      !ct_out_meta(t, "causal", "0") || !ct_out_meta(t, "layer_norm_eps", eps) ||
      !ct_out_meta(t, "pos_encoding", "learned") || !ct_out_meta(t, "vocab", c->vocab) ||
      !ct_out_meta(t, "format", "course"))
    return false;
  if (c->classes && !ct_out_meta(t, "classes", c->classes)) return false;
  return true;
}

// ---------------------------------------------------------------- canonical names from a .pt
// The tensors as they are; NAME.json's keys become the metadata.
static bool translate_canonical(CtTr *t, const char *json) {
  cJSON *root = cJSON_Parse(json);
  if (!root || !cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return err_set(t->err, "%s: %s is not a JSON object like {\"n_heads\": 2, \"vocab\": [...]}", t->what,
                   t->config);
  }
  bool ok = false, has[3] = {false, false, false};
  static const char *const derived[3] = {"d_model", "d_ff", "n_layers"};
  for (const cJSON *v = root->child; v; v = v->next) {
    if (t->out->n_meta >= MAX_META - 4) {
      err_set(t->err, "%s: %s has more than %d keys", t->what, t->config, MAX_META - 4);
      goto done;
    }
    const char *key = !strcmp(v->string, "eps") ? "layer_norm_eps" : v->string;
    for (int k = 0; k < 3; k++) has[k] |= !strcmp(key, derived[k]);
    char num[40], *joined = NULL;
    const char *s = NULL;
    if (cJSON_IsString(v))
      s = v->valuestring;
    else if (cJSON_IsBool(v))
      s = cJSON_IsTrue(v) ? "1" : "0";
    else if (cJSON_IsNumber(v)) {
      snprintf(num, sizeof num, "%.9g", v->valuedouble);
      s = num;
    } else if (cJSON_IsArray(v)) {
      CtConfig c = {0};
      snprintf(c.src, sizeof c.src, "%s", t->config);
      int n;
      if (!join_list(v, key, &c, t->what, &joined, &n, t->err)) goto done;
      s = joined;
    } else {
      err_set(t->err, "%s: %s: \"%s\" is neither a string, a number nor a list of words", t->what, t->config,
              key);
      goto done;
    }
    bool m = ct_out_meta(t, key, s);
    free(joined);
    if (!m) goto done;
  }
  // what the tensors say, unless the config says it (then core compares)
  const StTensor *e = st_find(t->in, "embed.weight"), *f = st_find(t->in, "layers.0.linear1.weight");
  int n_layers = 0;
  for (int i = 0; i < t->in->n; i++) {
    int k;
    if (sscanf(t->in->tensors[i].name, "layers.%d.", &k) == 1 && k >= 0 && k < MAX_BLOCKS && k + 1 > n_layers)
      n_layers = k + 1;
  }
  if ((!has[0] && e && e->ndim == 2 && !ct_out_meta_int(t, "d_model", (long)e->shape[1])) ||
      (!has[1] && f && f->ndim == 2 && !ct_out_meta_int(t, "d_ff", (long)f->shape[0])) ||
      (!has[2] && n_layers && !ct_out_meta_int(t, "n_layers", n_layers)))
    goto done;
  for (int i = 0; i < t->in->n; i++)
    if (!ct_out_move(t, t->in->tensors[i].name, &t->in->tensors[i])) goto done;
  ok = true;
done:
  cJSON_Delete(root);
  return ok;
}

bool course_translate(StFile *in, const char *config_json, const char *config_name, const char *what,
                      StFile *out, Err *err) {
  memset(out, 0, sizeof *out);
  bool notebook = course_is_notebook(in), canonical = st_find(in, "embed.weight") != NULL;
  if (!notebook && !canonical) {
    if (in->n == 0) return err_set(err, "%s: holds no tensor: %s", what, OPENS);
    return err_set(err, "%s: tensor \"%.80s\" is neither the course notebook's nor a canonical name: %s",
                   what, in->tensors[0].name, OPENS);
  }
  if (!config_name) config_name = "its config";
  CtTr t = {.in = in,
            .out = out,
            .cap_t = in->n + 8,
            .cap_m = in->n_meta + MAX_META,
            .config = config_name,
            .what = what,
            .err = err};
  t.used = calloc((size_t)in->n + 1, sizeof(bool));
  out->tensors = calloc((size_t)t.cap_t, sizeof(StTensor));
  out->keys = calloc((size_t)t.cap_m, sizeof(char *));
  out->values = calloc((size_t)t.cap_m, sizeof(char *));
  CtConfig c = {.norm_first = -1};
  bool ok = false;
  if (!t.used || !out->tensors || !out->keys || !out->values) {
    err_set(err, "%s: out of memory", what);
    goto done;
  }
  if (!notebook) {
    ok = config_json ? translate_canonical(&t, config_json) : true;
    if (ok && !config_json) // copied through, metadata and all
      for (int i = 0; i < in->n_meta && ok; i++) ok = ct_out_meta(&t, in->keys[i], in->values[i]);
    if (ok && !config_json)
      for (int i = 0; i < in->n && ok; i++) ok = ct_out_move(&t, in->tensors[i].name, &in->tensors[i]);
  } else {
    if (config_json) snprintf(c.src, sizeof c.src, "%s", config_name);
    ok = config_json ? config_parse(&c, config_json, what, err) : config_from_meta(&c, in, what, err);
    ok = ok && (course_modules_is(in) ? course_modules_translate(&t, &c) : translate_notebook(&t, &c));
  }
  ok = ok && out_index(&t);
done:
  config_free(&c);
  free(t.used);
  if (!ok) st_free(out);
  return ok;
}

// ---------------------------------------------------------------- reading
// NAME.json beside NAME.pt (or NAME.safetensors, or NAME with no extension).
static void config_path(char *out, size_t cap, const char *path) {
  const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
  size_t stem = dot && (!slash || dot > slash + 1) ? (size_t)(dot - path) : strlen(path);
  snprintf(out, cap, "%.*s.json", (int)stem, path);
}

static const char *base(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

bool course_read(const char *path, StFile *out, Err *err) {
  memset(out, 0, sizeof *out);
  uint8_t head[9] = {0};
  size_t got = 0;
  FILE *fp = fopen(path, "rb");
  if (fp) {
    got = fread(head, 1, sizeof head, fp);
    fclose(fp);
  }
  // a safetensors header opens with '{' at byte 8, after its length: whose low byte may be 0x80,
  // which alone would look like a pickle's PROTO
  bool pt = pt_sniff(head, got) && !(got == 9 && head[8] == '{');
  StFile in;
  // a large .safetensors stays mapped (st_read_mapped, st_map_min_bytes): a canonical one's F32
  // weights are then read in place, as a checkpoint folder's are, not copied (GPT-2 small's dump
  // held 1.7x its file)
  if (pt ? !pt_read(&in, path, err) : !st_read_mapped(&in, path, false, err)) return false;
  if (!pt && !course_is_notebook(&in)) { // a canonical .safetensors: as it is
    *out = in;
    return true;
  }
  if (in.map) { // a notebook's names: the translation moves and rewrites tensors, so read copies
    st_free(&in);
    if (!st_read(&in, path, err)) return false;
  }
  char cpath[4096];
  config_path(cpath, sizeof cpath, path);
  char *json = NULL;
  FILE *cf = fopen(cpath, "rb");
  if (cf) {
    fclose(cf);
    size_t len;
    Err jerr = {0};
    if (!(json = file_read_all(cpath, &len, MAX_CONFIG, &jerr))) {
      st_free(&in);
      return err_set(err, "%s", jerr.msg);
    }
  } else if (pt || in.n_meta == 0) {
    st_free(&in);
    return err_set(
        err,
        "%s: its config %s is missing: write {\"n_heads\": H, \"vocab\": [\"<unk>\", ...]} beside it "
        "(see README)",
        path, base(cpath));
  }
  bool ok = course_translate(&in, json, json ? base(cpath) : NULL, path, out, err);
  free(json);
  st_free(&in);
  return ok;
}
