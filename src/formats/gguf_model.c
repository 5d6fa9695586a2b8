// gguf_model.c -- a GGUF file into the canonical model form (see gguf_model.h). An architecture is
// a table of the file's tensor names, their canonical names and the shapes its keys imply: the
// table is checked whole (names, shapes, types) and its memory counted before any tensor is
// converted, then converted tensor by tensor.
#include "gguf_model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpe.h"        // defines: bpe_load
#include "gguf_quant.h" // defines: gguf_dequantize, gguf_type_name, gguf_type_readable
#include "model.h"      // defines: Model, model_from_st, model_free

#define GGUF_MAX_META 24
#define GGUF_MAX_SIZE (1 << 20) // any width, head count or length a key gives
#define GGUF_MAX_LAYERS 1024

uint64_t gguf_memory_available = 0; // 0: ask the system (tests set a small number)

typedef struct {
  char src[GGUF_MAX_NAME + 1]; // the file's name
  char dst[80];                // the canonical name
  int64_t s0, s1;              // the PyTorch shape the keys imply ([s0] when s1 < 0)
  bool optional;
  const GgufTensor *t; // found (NULL: an optional one absent)
} Map;

typedef struct {
  const char *name; // "GPT-2"
  Map *map;
  int n;
  int D, H, L, F, P;
  double eps;
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

static void add(Arch *a, bool optional, int64_t s0, int64_t s1, const char *dst, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static void add(Arch *a, bool optional, int64_t s0, int64_t s1, const char *dst, const char *fmt, ...) {
  Map *m = &a->map[a->n++];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m->src, sizeof m->src, fmt, ap);
  va_end(ap);
  snprintf(m->dst, sizeof m->dst, "%s", dst);
  m->s0 = s0, m->s1 = s1, m->optional = optional, m->t = NULL;
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
  if (n == 4 && !memcmp(arch, "gpt2", 4)) {
    if (!gpt2_table(g, a, err)) return false;
  } else {
    return err_set(err, "%s: architecture \"%.*s\" is not one Stepformer opens from a GGUF file (gpt2)",
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
  const GgufTensor *e = a->map[0].t, *h = a->head >= 0 ? a->map[a->head].t : NULL;
  a->tied = !h || (h->type == e->type && h->nbytes == e->nbytes && !memcmp(h->data, e->data, e->nbytes));
  return true;
}

// ---- memory

static uint64_t memory_available(void) {
  if (gguf_memory_available) return gguf_memory_available;
  FILE *fp = fopen("/proc/meminfo", "r");
  char line[256];
  unsigned long long kb = 0;
  while (fp && fgets(line, sizeof line, fp))
    if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
  if (fp) fclose(fp);
  if (kb) return (uint64_t)kb * 1024;
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size : UINT64_MAX;
}

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

// The tensor t dequantized into a new canonical tensor; the file's pages it came from go back.
static bool convert(const GgufFile *g, StFile *out, const Map *m, Err *err) {
  const GgufTensor *t = m->t;
  float *y = malloc(sizeof(float) * (size_t)(t->count ? t->count : 1));
  StTensor *o = &out->tensors[out->n];
  if (!y || !(o->name = strdup(m->dst))) return free(y), err_set(err, "out of memory");
  if (!gguf_dequantize(t->type, t->data, y, t->count, err))
    return free(y), free(o->name), o->name = NULL, false;
  if (g->mapped) st_release_pages(t->data, t->nbytes);
  o->ndim = m->s1 < 0 ? 1 : 2;
  o->shape[0] = m->s0, o->shape[1] = m->s1 < 0 ? 0 : m->s1;
  o->count = t->count;
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
  if (!make_table(g, &a, err)) goto done;
  uint64_t need = table_bytes(&a), have = memory_available();
  if (need > have) {
    char n1[32], n2[32], n3[32];
    human(n1, sizeof n1, need), human(n2, sizeof n2, g->len), human(n3, sizeof n3, have);
    err_set(err,
            "%s: the model takes %s once dequantized to float32 (the file is %s) but %s of memory are "
            "available: close other programs or choose a smaller model",
            g->what, n1, n2, n3);
    goto done;
  }
  if (!gpt2_tokenizer(g, a.map[0].t->shape[0], &tk, err)) goto done;
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
  for (int i = 0; i < a.n; i++) {
    const Map *m = &a.map[i];
    if (!m->t) continue;
    used[m->t - g->tensors] = true;
    if (m == head && tied) continue;
    if (!convert(g, out, m, err)) goto done;
  }
  double bits;
  char *types = type_summary(g, &bits), *lines = tensor_lines(g, used, true),
       *unused = tensor_lines(g, used, false);
  char size[32];
  human(size, sizeof size, g->len);
  ok = types && lines && unused && meta(out, "gguf_architecture", "%s", a.name) &&
       meta(out, "gguf_file", "version %u, %s, %.2f bits per weight", g->version, size, bits) &&
       meta_take(out, "gguf_types", types) && meta_take(out, "gguf_tensors", lines) &&
       (unused[0] ? meta_take(out, "gguf_unused", unused) : (free(unused), true)) &&
       meta(out, "d_model", "%d", a.D) && meta(out, "n_heads", "%d", a.H) && meta(out, "d_ff", "%d", a.F) &&
       meta(out, "n_layers", "%d", a.L) && meta(out, "activation", "gelu_tanh") &&
       meta(out, "norm_first", "1") && meta(out, "causal", "1") &&
       meta(out, "layer_norm_eps", "%.9g", a.eps) && meta(out, "pos_encoding", "learned") &&
       meta(out, "tokenizer", "bpe") && (!tied || meta(out, "tie_head", "1"));
  if (!ok) {
    if (!types || !lines || !unused) free(types), free(lines), free(unused);
    if (!err->msg[0]) err_set(err, "out of memory");
    goto done;
  }
  char *v = vocab_lines(tk);
  ok = v && meta_take(out, "vocab", v) && st_index(out, g->what, err);
  if (!ok && !err->msg[0]) err_set(err, "out of memory");
done:
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
  return m;
}

Model *gguf_model_load(const char *path, Err *err) {
  GgufFile g;
  if (!gguf_open(&g, path, err)) return NULL;
  Model *m = gguf_model_from(&g, path, err);
  gguf_close(&g);
  return m;
}
