// gguf.c -- the GGUF reader (see gguf.h). The header is walked twice by one function: first with
// nothing allocated, proving that every count, length and offset fits in the bytes that remain
// (so a claimed count of 2^60 fails at the end of the file, after at most one pass over it),
// then again to fill arrays of exactly the sizes the first walk found.
#include "gguf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"     // defines: file_map, file_unmap
#include "gguf_quant.h" // defines: gguf_type_name, gguf_type_size

typedef struct {
  const uint8_t *b;
  size_t len, pos;
  const char *what;
  Err *err;
  GgufFile *g; // the second walk: where the keys and tensors go (NULL in the first)
} Rd;

static const char *const VALUE_TYPES[GGUF_N_VALUE_TYPES] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                                            "int32",  "float32", "bool",   "string", "array",
                                                            "uint64", "int64",   "float64"};
static const size_t VALUE_SIZE[GGUF_N_VALUE_TYPES] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

const char *gguf_value_type_name(uint32_t type) {
  return type < GGUF_N_VALUE_TYPES ? VALUE_TYPES[type] : "?";
}

static uint64_t le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

// True when n more bytes are there; else one line naming what was being read and where.
static bool need(Rd *r, uint64_t n, const char *thing) {
  if (n <= r->len - r->pos) return true;
  return err_set(r->err,
                 "%s: %s at byte %zu needs %llu bytes but the file ends at byte %zu: the file is truncated "
                 "or damaged (download it again)",
                 r->what, thing, r->pos, (unsigned long long)n, r->len);
}

static bool rd_u32(Rd *r, uint32_t *v, const char *thing) {
  if (!need(r, 4, thing)) return false;
  *v = (uint32_t)le(r->b + r->pos, 4), r->pos += 4;
  return true;
}

static bool rd_u64(Rd *r, uint64_t *v, const char *thing) {
  if (!need(r, 8, thing)) return false;
  *v = le(r->b + r->pos, 8), r->pos += 8;
  return true;
}

// A string: u64 length, then the bytes (at most max). *s points at them in the file.
static bool rd_str(Rd *r, const uint8_t **s, uint64_t *n, uint64_t max, const char *thing) {
  size_t at = r->pos;
  if (!rd_u64(r, n, thing)) return false;
  if (*n > max)
    return err_set(
        r->err, "%s: %s at byte %zu is %llu bytes long, more than the %llu GGUF allows: the file is damaged",
        r->what, thing, at, (unsigned long long)*n, (unsigned long long)max);
  if (!need(r, *n, thing)) return false;
  *s = r->b + r->pos, r->pos += (size_t)*n;
  return true;
}

// Skips one value of the given type (an array: its element type, count and elements), checking it.
static bool skip_value(Rd *r, uint32_t type, int depth, const char *key) {
  char thing[160];
  snprintf(thing, sizeof thing, "the value of \"%.100s\"", key);
  if (type >= GGUF_N_VALUE_TYPES)
    return err_set(r->err,
                   "%s: metadata \"%.100s\" at byte %zu has value type %u, which GGUF does not define (0 to "
                   "12): the file is damaged",
                   r->what, key, r->pos, type);
  if (type == GGUF_STRING) {
    const uint8_t *s;
    uint64_t n;
    return rd_str(r, &s, &n, UINT64_MAX, thing);
  }
  if (type == GGUF_BOOL) {
    if (!need(r, 1, thing)) return false;
    if (r->b[r->pos] > 1)
      return err_set(r->err,
                     "%s: metadata \"%.100s\" at byte %zu is a bool of value %u (GGUF allows 0 and 1): the "
                     "file is damaged",
                     r->what, key, r->pos, r->b[r->pos]);
    r->pos++;
    return true;
  }
  if (type != GGUF_ARRAY) return need(r, VALUE_SIZE[type], thing) && (r->pos += VALUE_SIZE[type], true);
  size_t at = r->pos;
  uint32_t et;
  uint64_t n;
  if (!rd_u32(r, &et, thing) || !rd_u64(r, &n, thing)) return false;
  if (et >= GGUF_N_VALUE_TYPES)
    return err_set(r->err,
                   "%s: metadata \"%.100s\" at byte %zu is an array of value type %u, which GGUF does not "
                   "define (0 to 12): the file is damaged",
                   r->what, key, at, et);
  if (et == GGUF_ARRAY && depth + 1 >= GGUF_MAX_DEPTH)
    return err_set(r->err,
                   "%s: metadata \"%.100s\" at byte %zu nests arrays more than %d deep: the file is damaged",
                   r->what, key, at, GGUF_MAX_DEPTH);
  // every element takes at least this many bytes: a count larger than the rest of the file is a lie
  uint64_t least = et == GGUF_STRING ? 8 : et == GGUF_ARRAY ? 12 : VALUE_SIZE[et];
  if (n > (r->len - r->pos) / least)
    return err_set(r->err,
                   "%s: metadata \"%.100s\" at byte %zu claims %llu elements of %s, more than the %zu bytes "
                   "left hold: the file is truncated or damaged",
                   r->what, key, at, (unsigned long long)n, VALUE_TYPES[et], r->len - r->pos);
  if (et != GGUF_STRING && et != GGUF_ARRAY && et != GGUF_BOOL) {
    r->pos += (size_t)(n * least);
    return true;
  }
  for (uint64_t i = 0; i < n; i++)
    if (!skip_value(r, et, depth + 1, key)) return false;
  return true;
}

static char *dup_bytes(const uint8_t *s, uint64_t n) {
  char *c = malloc((size_t)n + 1);
  if (c) memcpy(c, s, (size_t)n), c[n] = 0;
  return c;
}

static bool has_nul(const uint8_t *s, uint64_t n) { return memchr(s, 0, (size_t)n) != NULL; }

static bool read_kv(Rd *r, uint64_t k, uint32_t *alignment) {
  size_t at = r->pos;
  char thing[64];
  snprintf(thing, sizeof thing, "metadata key %llu", (unsigned long long)k);
  const uint8_t *s;
  uint64_t n;
  uint32_t type;
  if (!rd_str(r, &s, &n, GGUF_MAX_KEY, thing)) return false;
  if (n == 0 || has_nul(s, n))
    return err_set(r->err, "%s: metadata key %llu at byte %zu is %s: the file is damaged", r->what,
                   (unsigned long long)k, at, n ? "not text (it holds a 0 byte)" : "empty");
  char key[128];
  snprintf(key, sizeof key, "%.*s", (int)(n < 120 ? n : 120), (const char *)s);
  if (!rd_u32(r, &type, thing)) return false;
  size_t vat = r->pos;
  if (!skip_value(r, type, 0, key)) return false;
  bool is_align = n == strlen("general.alignment") && !memcmp(s, "general.alignment", (size_t)n);
  if (is_align) {
    uint32_t a = type == GGUF_U32 ? (uint32_t)le(r->b + vat, 4) : 0;
    if (type != GGUF_U32 || a == 0 || (a & (a - 1)))
      return err_set(r->err,
                     "%s: general.alignment at byte %zu must be a uint32 power of two (it is %s %u): the "
                     "file is damaged",
                     r->what, at, VALUE_TYPES[type], a);
    *alignment = a;
  }
  if (!r->g) return true;
  GgufKV *kv = &r->g->kv[k];
  if (!(kv->key = dup_bytes(s, n))) return err_set(r->err, "out of memory");
  kv->type = type, kv->pos = at, kv->n = 1, kv->at = r->b + vat, kv->size = r->pos - vat;
  if (type == GGUF_ARRAY) {
    kv->elem_type = (uint32_t)le(r->b + vat, 4), kv->n = le(r->b + vat + 4, 8);
    kv->at += 12, kv->size -= 12;
  }
  return true;
}

static bool read_tensor_info(Rd *r, uint64_t k, uint32_t alignment) {
  size_t at = r->pos;
  char thing[64];
  snprintf(thing, sizeof thing, "tensor info %llu", (unsigned long long)k);
  const uint8_t *s;
  uint64_t n, ne[GGUF_MAX_DIMS] = {1, 1, 1, 1}, offset;
  uint32_t nd, type;
  if (!rd_str(r, &s, &n, GGUF_MAX_NAME, thing)) return false;
  if (n == 0 || has_nul(s, n))
    return err_set(r->err, "%s: tensor %llu at byte %zu has %s name: the file is damaged", r->what,
                   (unsigned long long)k, at, n ? "a binary" : "an empty");
  char name[GGUF_MAX_NAME + 1];
  snprintf(name, sizeof name, "%.*s", (int)n, (const char *)s);
  if (!rd_u32(r, &nd, thing)) return false;
  if (nd < 1 || nd > GGUF_MAX_DIMS)
    return err_set(
        r->err, "%s: tensor \"%s\" at byte %zu has %u dimensions (GGUF allows 1 to %d): the file is damaged",
        r->what, name, at, nd, GGUF_MAX_DIMS);
  for (uint32_t d = 0; d < nd; d++)
    if (!rd_u64(r, &ne[d], thing)) return false;
  if (!rd_u32(r, &type, thing) || !rd_u64(r, &offset, thing)) return false;
  const char *tname = gguf_type_name(type);
  int block, bytes;
  if (!tname)
    return err_set(r->err,
                   "%s: tensor \"%s\" at byte %zu has type %u, which ggml does not define: the file is "
                   "damaged or newer than Stepformer",
                   r->what, name, at, type);
  if (!gguf_type_size(type, &block, &bytes))
    return err_set(r->err,
                   "%s: tensor \"%s\" has type %s, which Stepformer does not read: requantize the file with "
                   "llama-quantize (Q4_K_M, Q8_0 or F16)",
                   r->what, name, tname);
  int64_t count = 1;
  for (uint32_t d = 0; d < nd; d++)
    if (ne[d] > (uint64_t)INT64_MAX || __builtin_mul_overflow(count, (int64_t)ne[d], &count))
      return err_set(r->err,
                     "%s: tensor \"%s\" at byte %zu: its dimensions (dimension %u is %llu) make more than "
                     "2^63 elements: the file is damaged",
                     r->what, name, at, d, (unsigned long long)ne[d]);
  if (ne[0] % (uint64_t)block)
    return err_set(r->err,
                   "%s: tensor \"%s\" of type %s has rows of %llu, not a multiple of its block of %d: the "
                   "file is damaged",
                   r->what, name, tname, (unsigned long long)ne[0], block);
  uint64_t nbytes = (uint64_t)count / (uint64_t)block *
                    (uint64_t)bytes; // count/block ≤ 2^63/32: no overflow for bytes ≤ 292
  if (offset % alignment)
    return err_set(
        r->err, "%s: tensor \"%s\" has offset %llu, not a multiple of the alignment %u: the file is damaged",
        r->what, name, (unsigned long long)offset, alignment);
  if (!r->g) return true;
  GgufTensor *t = &r->g->tensors[k];
  if (!(t->name = dup_bytes(s, n))) return err_set(r->err, "out of memory");
  t->ndim = (int)nd, t->count = count, t->type = type, t->offset = offset, t->nbytes = (size_t)nbytes;
  for (int d = 0; d < GGUF_MAX_DIMS; d++)
    t->ne[d] = ne[d], t->shape[d] = d < (int)nd ? (int64_t)ne[nd - 1 - d] : 0;
  return true;
}

// One walk over the header: the keys (finding general.alignment first), then the tensor infos.
static bool walk(Rd *r, uint64_t n_kv, uint64_t n_t, uint32_t *alignment) {
  r->pos = 24;
  for (uint64_t k = 0; k < n_kv; k++)
    if (!read_kv(r, k, alignment)) return false;
  for (uint64_t k = 0; k < n_t; k++)
    if (!read_tensor_info(r, k, *alignment)) return false;
  return true;
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const GgufIndex *)a)->name, ((const GgufIndex *)b)->name);
}

static int by_offset(const void *a, const void *b) {
  const GgufTensor *x = *(const GgufTensor *const *)a, *y = *(const GgufTensor *const *)b;
  return x->offset < y->offset ? -1 : x->offset > y->offset;
}

// Sorted index of n names; false (with the name) when one is there twice.
static bool make_index(GgufIndex **out, uint64_t n, const char *(*name_of)(const GgufFile *, uint64_t),
                       const GgufFile *g, const char *kind, Err *err) {
  GgufIndex *ix = malloc(sizeof *ix * (size_t)(n ? n : 1));
  if (!ix) return err_set(err, "out of memory");
  for (uint64_t i = 0; i < n; i++) ix[i].name = name_of(g, i), ix[i].i = i;
  qsort(ix, (size_t)n, sizeof *ix, by_name);
  *out = ix;
  for (uint64_t i = 1; i < n; i++)
    if (!strcmp(ix[i].name, ix[i - 1].name))
      return err_set(err, "%s: %s \"%.100s\" is there twice: the file is damaged", g->what, kind, ix[i].name);
  return true;
}
static const char *kv_name(const GgufFile *g, uint64_t i) { return g->kv[i].key; }
static const char *t_name(const GgufFile *g, uint64_t i) { return g->tensors[i].name; }

// Every tensor's bytes inside the data section, none overlapping another.
static bool check_data(GgufFile *g, Err *err) {
  uint64_t size = g->data_offset <= g->len ? g->len - g->data_offset : 0;
  if (g->n_tensors && g->data_offset > g->len)
    return err_set(err,
                   "%s: the tensor data should start at byte %llu but the file ends at byte %zu: the file is "
                   "truncated (download it again)",
                   g->what, (unsigned long long)g->data_offset, g->len);
  GgufTensor **order = malloc(sizeof *order * (size_t)(g->n_tensors ? g->n_tensors : 1));
  if (!order) return err_set(err, "out of memory");
  for (uint64_t i = 0; i < g->n_tensors; i++) {
    GgufTensor *t = &g->tensors[i];
    if (t->offset > size || t->nbytes > size - t->offset) {
      free(order);
      return err_set(err,
                     "%s: tensor \"%s\" lies at bytes [%llu, %llu) of the data section, which holds %llu "
                     "bytes: the file is truncated or damaged (download it again)",
                     g->what, t->name, (unsigned long long)t->offset,
                     (unsigned long long)t->offset + t->nbytes, (unsigned long long)size);
    }
    t->data = g->bytes + g->data_offset + t->offset;
    order[i] = t;
  }
  qsort(order, (size_t)g->n_tensors, sizeof *order, by_offset);
  for (uint64_t i = 1; i < g->n_tensors; i++)
    if (order[i - 1]->offset + order[i - 1]->nbytes > order[i]->offset && order[i - 1]->nbytes &&
        order[i]->nbytes) {
      err_set(err, "%s: tensors \"%s\" and \"%s\" overlap in the data section: the file is damaged", g->what,
              order[i - 1]->name, order[i]->name);
      free(order);
      return false;
    }
  free(order);
  return true;
}

bool gguf_parse(GgufFile *g, const uint8_t *bytes, size_t len, const char *what, Err *err) {
  memset(g, 0, sizeof *g);
  snprintf(g->what, sizeof g->what, "%s", what);
  g->bytes = bytes, g->len = len;
  Rd r = {.b = bytes, .len = len, .what = g->what, .err = err};
  if (len < 4 || memcmp(bytes, "GGUF", 4))
    return err_set(err, "%s: not a GGUF file (it does not start with \"GGUF\")", g->what);
  uint32_t version;
  uint64_t n_t, n_kv;
  r.pos = 4;
  if (!rd_u32(&r, &version, "the version")) return false;
  if (version == 1)
    return err_set(err,
                   "%s: GGUF version 1 (before October 2023) is not read: convert the model again with a "
                   "current llama.cpp",
                   g->what);
  if (version != 2 && version != 3) {
    if ((version & 0xffff) == 0 && version >> 16)
      return err_set(err,
                     "%s: a big-endian GGUF file (version bytes %08x): Stepformer reads little-endian files; "
                     "convert it with gguf-py's gguf_convert_endian.py",
                     g->what, version);
    return err_set(err, "%s: GGUF version %u: Stepformer reads versions 2 and 3", g->what, version);
  }
  if (!rd_u64(&r, &n_t, "the tensor count") || !rd_u64(&r, &n_kv, "the metadata count")) return false;
  // a tensor info takes at least 8 + 4 + 8 + 4 + 8 bytes, a key/value 8 + 1 + 4 + 1
  if (n_t > (len - r.pos) / 32 || n_kv > (len - r.pos) / 14)
    return err_set(err,
                   "%s: the header claims %llu tensors and %llu metadata keys, more than its %zu bytes can "
                   "hold: the file is truncated or damaged",
                   g->what, (unsigned long long)n_t, (unsigned long long)n_kv, len);
  uint32_t alignment = GGUF_DEFAULT_ALIGNMENT;
  if (!walk(&r, n_kv, n_t, &alignment)) return false;
  // the header is proven: the arrays are as long as it really is
  g->version = version, g->n_kv = n_kv, g->n_tensors = n_t, g->alignment = alignment;
  g->kv = calloc((size_t)(n_kv ? n_kv : 1), sizeof *g->kv);
  g->tensors = calloc((size_t)(n_t ? n_t : 1), sizeof *g->tensors);
  if (!g->kv || !g->tensors) {
    gguf_close(g);
    return err_set(err, "out of memory");
  }
  r.g = g;
  if (!walk(&r, n_kv, n_t, &alignment)) {
    gguf_close(g);
    return false;
  }
  g->data_offset = r.pos + (alignment - r.pos % alignment) % alignment;
  if (!make_index(&g->kv_sorted, n_kv, kv_name, g, "metadata key", err) ||
      !make_index(&g->t_sorted, n_t, t_name, g, "tensor", err) || !check_data(g, err)) {
    gguf_close(g);
    return false;
  }
  return true;
}

bool gguf_open(GgufFile *g, const char *path, Err *err) {
  size_t len;
  const void *p = file_map(path, &len, err);
  if (!p) return memset(g, 0, sizeof *g), false;
  if (!gguf_parse(g, p, len, path, err)) {
    file_unmap(p, len);
    return false;
  }
  g->mapped = true;
  return true;
}

bool gguf_sniff(const char *path) {
  size_t n = strlen(path);
  if (n > 5 && !strcmp(path + n - 5, ".gguf")) return true;
  FILE *fp = fopen(path, "rb");
  if (!fp) return false;
  char magic[4];
  bool yes = fread(magic, 1, 4, fp) == 4 && !memcmp(magic, "GGUF", 4);
  fclose(fp);
  return yes;
}

void gguf_close(GgufFile *g) {
  for (uint64_t i = 0; g->kv && i < g->n_kv; i++) free(g->kv[i].key);
  for (uint64_t i = 0; g->tensors && i < g->n_tensors; i++) free(g->tensors[i].name);
  free(g->kv), free(g->tensors), free(g->kv_sorted), free(g->t_sorted);
  if (g->mapped) file_unmap(g->bytes, g->len);
  memset(g, 0, sizeof *g);
}

static const GgufIndex *lookup(const GgufIndex *ix, uint64_t n, const char *name) {
  if (!ix) return NULL;
  GgufIndex key = {.name = name};
  return bsearch(&key, ix, (size_t)n, sizeof *ix, by_name);
}

const GgufKV *gguf_find(const GgufFile *g, const char *key) {
  const GgufIndex *i = lookup(g->kv_sorted, g->n_kv, key);
  return i ? &g->kv[i->i] : NULL;
}

const GgufTensor *gguf_find_tensor(const GgufFile *g, const char *name) {
  const GgufIndex *i = lookup(g->t_sorted, g->n_tensors, name);
  return i ? &g->tensors[i->i] : NULL;
}

// A number of type `type` at p as a double (integers exactly up to 2^53); false for other types.
static bool number_at(uint32_t type, const uint8_t *p, double *out) {
  switch (type) {
  case GGUF_U8: *out = p[0]; return true;
  case GGUF_I8: *out = (int8_t)p[0]; return true;
  case GGUF_U16: *out = (double)le(p, 2); return true;
  case GGUF_I16: *out = (int16_t)le(p, 2); return true;
  case GGUF_U32: *out = (double)le(p, 4); return true;
  case GGUF_I32: *out = (int32_t)le(p, 4); return true;
  case GGUF_U64: *out = (double)le(p, 8); return true;
  case GGUF_I64: *out = (double)(int64_t)le(p, 8); return true;
  case GGUF_F32: {
    uint32_t u = (uint32_t)le(p, 4);
    float f;
    memcpy(&f, &u, 4);
    *out = f;
    return true;
  }
  case GGUF_F64: {
    uint64_t u = le(p, 8);
    memcpy(out, &u, 8);
    return true;
  }
  default: return false;
  }
}

bool gguf_get_uint(const GgufFile *g, const char *key, uint64_t *out) {
  const GgufKV *kv = gguf_find(g, key);
  if (!kv) return false;
  switch (kv->type) {
  case GGUF_U8:
  case GGUF_U16:
  case GGUF_U32:
  case GGUF_U64: *out = le(kv->at, (int)VALUE_SIZE[kv->type]); return true;
  case GGUF_I8:
  case GGUF_I16:
  case GGUF_I32:
  case GGUF_I64: {
    int n = (int)VALUE_SIZE[kv->type];
    uint64_t u = le(kv->at, n);
    if (u >> (8 * n - 1) & 1) return false; // negative
    *out = u;
    return true;
  }
  default: return false;
  }
}

bool gguf_get_float(const GgufFile *g, const char *key, double *out) {
  const GgufKV *kv = gguf_find(g, key);
  return kv && kv->type != GGUF_ARRAY && number_at(kv->type, kv->at, out);
}

bool gguf_get_bool(const GgufFile *g, const char *key, bool *out) {
  const GgufKV *kv = gguf_find(g, key);
  if (!kv || kv->type != GGUF_BOOL) return false;
  *out = kv->at[0] != 0;
  return true;
}

bool gguf_get_str(const GgufFile *g, const char *key, const char **s, size_t *len) {
  const GgufKV *kv = gguf_find(g, key);
  if (!kv || kv->type != GGUF_STRING) return false;
  *len = (size_t)le(kv->at, 8), *s = (const char *)kv->at + 8;
  return true;
}

bool gguf_arr_strings(const GgufKV *kv, const char **s, size_t *len) {
  if (kv->type != GGUF_ARRAY || kv->elem_type != GGUF_STRING) return false;
  const uint8_t *p = kv->at; // proven by the walk: every length fits
  for (uint64_t i = 0; i < kv->n; i++) {
    len[i] = (size_t)le(p, 8), s[i] = (const char *)p + 8;
    p += 8 + len[i];
  }
  return true;
}

bool gguf_arr_number(const GgufKV *kv, uint64_t i, double *out) {
  if (kv->type != GGUF_ARRAY || i >= kv->n || kv->elem_type >= GGUF_N_VALUE_TYPES ||
      !VALUE_SIZE[kv->elem_type] || kv->elem_type == GGUF_BOOL)
    return false;
  return number_at(kv->elem_type, kv->at + i * VALUE_SIZE[kv->elem_type], out);
}
