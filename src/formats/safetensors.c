// safetensors.c -- see safetensors.h. The JSON header is parsed by cJSON.
#define _DEFAULT_SOURCE // madvise (MADV_DONTNEED, MADV_SEQUENTIAL)
#include "safetensors.h"

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fileio.h"
#include "memsize.h" // defines: mem_available, mem_max_floats, mem_human
#include "mat.h"     // defines: mat_transpose
#include "nocov.h"   // defines: SF_NO_COVERAGE

// The largest file read: the most floats a model may hold at all (mem_max_floats: 64 GiB on 64-bit
// targets) as F32 and a header. The file is mapped, not read; what its tensors take once converted is
// compared with the memory available before the first is converted (need_memory).
#define ST_MAX_FILE ((size_t)mem_max_floats() * 4 + ST_MAX_HEADER + 8)

// The dtypes a header may name, with their element sizes. F32, F16 and BF16 are converted to
// float; the others are known only so that a lenient read can size and skip them.
typedef struct {
  const char *name;
  unsigned size;
  bool floats; // converted to float32
} DtypeInfo;

static const DtypeInfo DTYPES[] = {
    {"F32", 4, true},  {"F16", 2, true},  {"BF16", 2, true},  {"F64", 8, false},     {"I64", 8, false},
    {"U64", 8, false}, {"I32", 4, false}, {"U32", 4, false},  {"I16", 2, false},     {"U16", 2, false},
    {"I8", 1, false},  {"U8", 1, false},  {"BOOL", 1, false}, {"F8_E4M3", 1, false}, {"F8_E5M2", 1, false},
};

static const DtypeInfo *dtype_info(const char *name) {
  for (size_t i = 0; i < sizeof DTYPES / sizeof *DTYPES; i++)
    if (!strcmp(DTYPES[i].name, name)) return &DTYPES[i];
  return NULL;
}

static uint64_t read_u64le(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static float read_f32le(const uint8_t *p) {
  uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// SF_NO_COVERAGE (nocov.h): called for every F16 weight of a GGUF file (its branches are the
// number's class, not the file's structure).
SF_NO_COVERAGE float st_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, u;
  if (e == 0x1f) // inf (m == 0) or NaN (the payload kept in the top mantissa bits)
    u = sign | 0x7f800000u | (m << 13);
  else if (e != 0) // normal: rebias the exponent 15 -> 127
    u = sign | ((e + 112u) << 23) | (m << 13);
  else if (m == 0) // signed zero
    u = sign;
  else { // subnormal m·2^-24: normalise, every one is a normal float
    int shift = 0;
    while (!(m & 0x400u)) m <<= 1, shift++;
    u = sign | ((uint32_t)(113 - shift) << 23) | ((m & 0x3ffu) << 13);
  }
  float f;
  memcpy(&f, &u, 4);
  return f;
}

float st_bf16_to_f32(uint16_t h) { // the top half of a float32
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// The value of every half float (256 kB), made once per process: a 500 MB checkpoint converts at
// memory speed instead of branching on every element, and a model of many small F16 tensors (or
// the fuzzer's thousands of models a second) does not make the table again for each tensor.
static float F16_TABLE[65536];
static pthread_once_t f16_once = PTHREAD_ONCE_INIT;
static void f16_fill(void) {
  for (uint32_t h = 0; h < 65536; h++) F16_TABLE[h] = st_f16_to_f32((uint16_t)h);
}
static const float *f16_table(void) {
  pthread_once(&f16_once, f16_fill);
  return F16_TABLE;
}

// Converts count elements of dtype at p (little-endian) into out. F32 on a little-endian host is
// a copy; F16 goes through the table.
// SF_NO_COVERAGE (nocov.h): a loop over every weight, a seventh of the hub fuzzer's time when
// instrumented.
SF_NO_COVERAGE static bool convert(float *out, const uint8_t *p, uint64_t count, const char *dtype) {
  if (!strcmp(dtype, "F32")) {
    const uint16_t one = 1;
    if (*(const uint8_t *)&one) // a little-endian host: the bytes are the floats
      memcpy(out, p, count * 4);
    else
      for (uint64_t i = 0; i < count; i++) out[i] = read_f32le(p + 4 * i);
  } else if (!strcmp(dtype, "F16")) {
    const float *table = f16_table();
    for (uint64_t i = 0; i < count; i++) out[i] = table[p[2 * i] | p[2 * i + 1] << 8];
  } else {
    for (uint64_t i = 0; i < count; i++) out[i] = st_bf16_to_f32((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
  }
  return true;
}

typedef struct {
  uint64_t begin, end;
  const char *name;
} Span;

static int span_cmp(const void *a, const void *b) {
  const Span *x = a, *y = b;
  return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end > y->end) - (x->end < y->end);
}

// Reads a JSON number that must be a non-negative integer below 2^53.
static bool json_uint(const cJSON *j, uint64_t *out) {
  if (!cJSON_IsNumber(j)) return false;
  double d = j->valuedouble;
  if (!(d >= 0.0 && d <= 9007199254740992.0) || d != (double)(uint64_t)d) return false;
  *out = (uint64_t)d;
  return true;
}

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static int str_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool parse_metadata(StFile *f, const cJSON *meta, const char *what, Err *err) {
  if (!cJSON_IsObject(meta)) return err_set(err, "%s: __metadata__ is not a JSON object", what);
  int n = cJSON_GetArraySize(meta);
  f->keys = calloc((size_t)n + 1, sizeof(char *));
  f->values = calloc((size_t)n + 1, sizeof(char *));
  if (!f->keys || !f->values) return err_set(err, "%s: out of memory", what);
  const cJSON *kv;
  cJSON_ArrayForEach(kv, meta) {
    if (!cJSON_IsString(kv))
      return err_set(err,
                     "%s: metadata \"%.80s\" has a value that is not a string (safetensors metadata holds "
                     "strings only: write \"2\", not 2)",
                     what, kv->string);
    f->keys[f->n_meta] = dupstr(kv->string);
    f->values[f->n_meta] = dupstr(kv->valuestring);
    f->n_meta++;
    if (!f->keys[f->n_meta - 1] || !f->values[f->n_meta - 1]) return err_set(err, "%s: out of memory", what);
  }
  // a key given twice is ambiguous (which d_model?): sorted copies put twins side by side
  char **sorted = malloc(sizeof(char *) * (size_t)(f->n_meta + 1));
  if (!sorted) return err_set(err, "%s: out of memory", what);
  memcpy(sorted, f->keys, sizeof(char *) * (size_t)f->n_meta);
  qsort(sorted, (size_t)f->n_meta, sizeof(char *), str_cmp);
  for (int i = 1; i < f->n_meta; i++)
    if (!strcmp(sorted[i - 1], sorted[i])) {
      err_set(err, "%s: metadata \"%.80s\" appears twice in __metadata__", what, sorted[i]);
      free(sorted);
      return false;
    }
  free(sorted);
  return true;
}

static bool little_endian(void) {
  const uint16_t one = 1;
  return *(const uint8_t *)&one;
}

// The bytes of float32 the tensors of a header take in memory of their own once read: every float
// tensor but the F32 ones a kept mapping serves in place. Entries the main pass would refuse are
// skipped here (it names them).
static uint64_t converted_bytes(const cJSON *root, bool keep) {
  uint64_t sum = 0;
  const cJSON *e;
  cJSON_ArrayForEach(e, root) {
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape"), *d;
    const DtypeInfo *dt = cJSON_IsString(dtype) ? dtype_info(dtype->valuestring) : NULL;
    if (!dt || !dt->floats || !cJSON_IsArray(shape) || (keep && !strcmp(dt->name, "F32") && little_endian()))
      continue;
    uint64_t count = 1, v;
    cJSON_ArrayForEach(d, shape) {
      if (!json_uint(d, &v) || v > (1u << 30)) count = 0;
      count = count > INT32_MAX ? 0 : count * v;
    }
    if (count <= INT32_MAX) sum += count * 4;
  }
  return sum;
}

// mapped: bytes is a file mapping whose pages may be released as tensors are converted; keep: it
// stays (f owns it) and aligned F32 tensors point into it instead of being copied.
static bool parse(StFile *f, const uint8_t *bytes, size_t len, const char *what, bool lenient, bool mapped,
                  bool keep, Err *err) {
  memset(f, 0, sizeof *f);
  cJSON *root = NULL;
  Span *spans = NULL;
  if (len < 8) {
    err_set(err, "%s: too short to be safetensors (%zu bytes; the 8-byte header length is missing)", what,
            len);
    goto fail;
  }
  uint64_t hlen = read_u64le(bytes);
  if (hlen > len - 8 || hlen > ST_MAX_HEADER) {
    err_set(err, "%s: header length %llu does not fit in the %zu-byte file (truncated or not safetensors)",
            what, (unsigned long long)hlen, len);
    goto fail;
  }
  const char *hjson = (const char *)bytes + 8;
  const uint8_t *buf = bytes + 8 + hlen;
  uint64_t buflen = len - 8 - hlen;
  const char *jend = NULL;
  root = cJSON_ParseWithLengthOpts(hjson, (size_t)hlen, &jend, 0);
  if (!root) {
    const char *at = cJSON_GetErrorPtr();
    long off = (at && at >= hjson && at <= hjson + hlen) ? (long)(at - hjson) : -1;
    err_set(err, "%s: the JSON header is corrupt (near byte %ld of the file)", what, off + 8);
    goto fail;
  }
  for (const char *p = jend; p && p < hjson + hlen; p++) // only padding may follow the JSON
    if (*p != ' ' && *p != '\0' && *p != '\n' && *p != '\t' && *p != '\r') {
      err_set(err, "%s: unexpected bytes after the JSON header", what);
      goto fail;
    }
  if (!cJSON_IsObject(root)) {
    err_set(err, "%s: the header is not a JSON object", what);
    goto fail;
  }
  uint64_t need = mapped ? converted_bytes(root, keep) : 0, have = need ? mem_available() : 0;
  if (need > have) { // a large BF16 checkpoint: refused before the first tensor is converted
    char n1[32], n2[32];
    mem_human(n1, sizeof n1, need), mem_human(n2, sizeof n2, have);
    err_set(err,
            "%s: its tensors take %s once converted to float32 but %s of memory are available: close other "
            "programs or choose a smaller model",
            what, n1, n2);
    goto fail;
  }
  int n_entries = cJSON_GetArraySize(root);
  f->tensors = calloc((size_t)n_entries + 1, sizeof(StTensor));
  spans = calloc((size_t)n_entries + 1, sizeof(Span));
  if (!f->tensors || !spans) {
    err_set(err, "%s: out of memory", what);
    goto fail;
  }
  const cJSON *e;
  cJSON_ArrayForEach(e, root) {
    if (!strcmp(e->string, "__metadata__")) {
      if (f->n_meta || f->keys) {
        err_set(err, "%s: __metadata__ appears twice", what);
        goto fail;
      }
      if (!parse_metadata(f, e, what, err)) goto fail;
      continue;
    }
    const char *name = e->string;
    if (!cJSON_IsObject(e)) {
      err_set(err, "%s: tensor \"%.80s\" is not described by a JSON object", what, name);
      goto fail;
    }
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    if (!cJSON_IsString(dtype) || !cJSON_IsArray(shape) || !cJSON_IsArray(offs)) {
      err_set(err, "%s: tensor \"%.80s\" lacks dtype, shape or data_offsets", what, name);
      goto fail;
    }
    const DtypeInfo *dt = dtype_info(dtype->valuestring);
    if (!dt || (!dt->floats && !lenient)) {
      err_set(err,
              "%s: tensor \"%.80s\" has dtype %.20s; Stepformer reads F32, F16 and BF16 only (save with "
              "tensor.float())",
              what, name, dtype->valuestring);
      goto fail;
    }
    StTensor *t = &f->tensors[f->n];
    snprintf(t->dtype, sizeof t->dtype, "%s", dt->name);
    int nd = cJSON_GetArraySize(shape);
    if (nd > ST_MAX_DIMS) {
      err_set(err, "%s: tensor \"%.80s\" has %d dimensions (at most %d)", what, name, nd, ST_MAX_DIMS);
      goto fail;
    }
    uint64_t count = 1;
    const cJSON *d;
    int k = 0;
    cJSON_ArrayForEach(d, shape) {
      uint64_t v;
      if (!json_uint(d, &v)) {
        err_set(err, "%s: tensor \"%.80s\": dimension %d of its shape is not a whole number >= 0", what, name,
                k + 1);
        goto fail;
      }
      if (v > (1u << 30)) {
        err_set(err, "%s: tensor \"%.80s\": dimension %d of its shape, %llu, is out of range (0..%u)", what,
                name, k + 1, (unsigned long long)v, 1u << 30);
        goto fail;
      }
      t->shape[k++] = (int64_t)v;
      count *= v;
      if (count > INT32_MAX) { // (a tensor is indexed by int: mat.h)
        err_set(err, "%s: tensor \"%.80s\" has 2^31 elements or more, more than Stepformer reads", what,
                name);
        goto fail;
      }
    }
    t->ndim = nd;
    t->count = (int64_t)count;
    uint64_t b, en;
    if (cJSON_GetArraySize(offs) != 2 || !json_uint(cJSON_GetArrayItem(offs, 0), &b) ||
        !json_uint(cJSON_GetArrayItem(offs, 1), &en) || b > en) {
      err_set(err, "%s: tensor \"%.80s\" has invalid data_offsets (two whole numbers, begin <= end)", what,
              name);
      goto fail;
    }
    if (en > buflen) {
      err_set(err, "%s: tensor \"%.80s\" ends at byte %llu but the data holds %llu bytes (truncated file?)",
              what, name, (unsigned long long)en, (unsigned long long)buflen);
      goto fail;
    }
    if (en - b != count * dt->size) {
      err_set(err, "%s: tensor \"%.80s\" spans %llu bytes but its shape needs %llu (%s)", what, name,
              (unsigned long long)(en - b), (unsigned long long)(count * dt->size), dt->name);
      goto fail;
    }
    t->name = dupstr(name);
    if (!t->name) {
      err_set(err, "%s: out of memory", what);
      goto fail;
    }
    if (count && dt->floats && keep && !strcmp(dt->name, "F32") && little_endian() &&
        (uintptr_t)(buf + b) % sizeof(float) == 0) {
      t->data = (float *)(void *)(buf + b); // the file's bytes are the floats: no copy
    } else if (count && dt->floats) {
      t->data = malloc(count * 4);
      if (!t->data) {
        err_set(err, "%s: out of memory for tensor \"%.80s\"", what, name);
        goto fail;
      }
      convert(t->data, buf + b, count, dt->name);
      if (mapped) st_release_pages(buf + b, en - b);
    }
    spans[f->n] = (Span){b, en, t->name};
    f->n++;
  }
  if (!st_index(f, what, err)) goto fail;
  qsort(spans, (size_t)f->n, sizeof(Span), span_cmp);
  // sorted by start: a non-empty tensor must start after every non-empty one before it ends
  // (empty tensors occupy no bytes and overlap nothing)
  uint64_t end = 0;
  const char *end_name = NULL;
  for (int i = 0; i < f->n; i++) {
    if (spans[i].end == spans[i].begin) continue;
    if (end_name && spans[i].begin < end) {
      err_set(err, "%s: tensors \"%.80s\" and \"%.80s\" overlap in the data buffer", what, end_name,
              spans[i].name);
      goto fail;
    }
    if (spans[i].end > end) end = spans[i].end, end_name = spans[i].name;
  }
  free(spans);
  cJSON_Delete(root);
  return true;
fail:
  free(spans);
  cJSON_Delete(root);
  if (keep) f->map = (uint8_t *)bytes, f->map_len = len; // so that st_free does not free its tensors
  f->map_owner = false;                                  // the caller unmaps it
  st_free(f);
  return false;
}

bool st_parse(StFile *f, const uint8_t *bytes, size_t len, const char *what, Err *err) {
  return parse(f, bytes, len, what, false, false, false, err);
}

// Maps the file (pages come from the page cache as they are converted, and leave with the
// mapping: no second full copy of the file is held), then parses it. keep (st_read_mapped): the
// mapping stays with f while a tensor points into it.
static bool read_file(StFile *f, const char *path, bool lenient, bool keep, Err *err) {
  memset(f, 0, sizeof *f);
  size_t len;
  Err map_err = {0};
  // (a private, read-only mapping: the weights are never written in place -- what-if edits and
  // training steps write copies -- and a write by mistake stops at once instead of being lost when
  // st_release_pages gives its page back)
  const void *bytes = file_map(path, &len, &map_err);
  if (!bytes) { // an empty file, a pipe: read it the plain way (which names what is wrong)
    char *all = file_read_all(path, &len, ST_MAX_FILE, err);
    if (!all) return false;
    bool ok = parse(f, (const uint8_t *)all, len, path, lenient, false, false, err);
    free(all);
    return ok;
  }
  if (len > ST_MAX_FILE) {
    file_unmap(bytes, len);
    return err_set(err, "%s: %zu bytes is larger than the largest model Stepformer reads (%lld floats)", path,
                   len, (long long)mem_max_floats());
  }
  keep = keep && len >= st_map_min_bytes; // a small file is copied (see safetensors.h)
  if (!keep) // read ahead: the tensors are converted in file order (a kept mapping is read at random)
    madvise((void *)bytes, len, MADV_SEQUENTIAL);
  bool ok = parse(f, (const uint8_t *)bytes, len, path, lenient, true, keep, err);
  bool used = false; // the mapping is kept only while a tensor points into it
  if (ok && keep) {
    f->map = (uint8_t *)bytes, f->map_len = len;
    for (int i = 0; i < f->n && !used; i++) used = st_mapped(f, f->tensors[i].data);
  }
  if (used) {
    f->map_owner = true;
  } else {
    f->map = NULL, f->map_len = 0;
    file_unmap(bytes, len);
  }
  return ok;
}

size_t st_map_min_bytes = (size_t)64 << 20;

bool st_read_mapped_shards(StFile *f, const char *const *paths, int n, bool lenient, Err *err) {
  memset(f, 0, sizeof *f);
  size_t *lens = calloc((size_t)(n > 0 ? n : 1), 2 * sizeof(size_t)), total = 0;
  if (!lens) return err_set(err, "out of memory");
  size_t *offs = lens + (n > 0 ? n : 1);
  uint8_t *base = (uint8_t *)file_map_many(paths, n, lens, offs, &total, err);
  bool ok = base != NULL;
  bool keep = ok && total >= st_map_min_bytes;
  for (int i = 0; ok && i < n; i++) {
    if (lens[i] > ST_MAX_FILE) {
      ok = err_set(err, "%s: %zu bytes is larger than the largest model Stepformer reads (%lld floats)",
                   paths[i], lens[i], (long long)mem_max_floats());
      break;
    }
    if (!keep) madvise(base + offs[i], lens[i], MADV_SEQUENTIAL);
    StFile part;
    if (!parse(&part, base + offs[i], lens[i], paths[i], lenient, true, keep, err)) {
      ok = false;
      break;
    }
    StTensor *grown = realloc(f->tensors, sizeof(StTensor) * (size_t)(f->n + part.n + 1));
    if (!grown) {
      part.map = base, part.map_len = total; // (its mapped tensors are not freed)
      st_free(&part);
      ok = err_set(err, "out of memory");
      break;
    }
    f->tensors = grown;
    memcpy(f->tensors + f->n, part.tensors, sizeof(StTensor) * (size_t)part.n);
    f->n += part.n;
    part.n = 0; // the names and data are f's now; a shard's metadata is not kept
    st_free(&part);
  }
  if (ok && f->n == 0) ok = err_set(err, "%s: the shards hold no tensor", n > 0 ? paths[0] : "?");
  free(lens);
  bool used = false;                           // the region is kept only while a tensor points into it
  if (base) f->map = base, f->map_len = total; // (so that st_free below knows the mapped tensors)
  for (int i = 0; ok && i < f->n && !used; i++) used = st_mapped(f, f->tensors[i].data);
  if (!ok) {
    st_free(f); // map_owner false: unmapped below
  } else if (used) {
    f->map_owner = true;
    return true;
  } else {
    f->map = NULL, f->map_len = 0;
  }
  if (base) file_unmap(base, total);
  return ok;
}

bool st_read(StFile *f, const char *path, Err *err) { return read_file(f, path, false, false, err); }
bool st_read_lenient(StFile *f, const char *path, Err *err) { return read_file(f, path, true, false, err); }
bool st_read_mapped(StFile *f, const char *path, bool lenient, Err *err) {
  return read_file(f, path, lenient, true, err);
}

static bool write_floats(FILE *fp, const float *d, int64_t count) {
  for (int64_t j = 0; j < count; j++) { // little-endian, whatever the host
    uint32_t u;
    memcpy(&u, &d[j], 4);
    uint8_t b[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
    fwrite(b, 1, 4, fp);
  }
  return true;
}

// A transposed tensor (data [cols, rows]) in its canonical layout [rows, cols], transposed whole
// into a buffer of its own first (at most one layer matrix: 9 MB for GPT-2 small's c_fc): read in
// order, as reading it column by column would not be.
static bool write_transposed(FILE *fp, const StTensor *t) {
  float *d = malloc(sizeof(float) * (size_t)(t->count > 0 ? t->count : 1));
  if (!d) return false;
  mat_transpose(d, t->data, t->shape[1], t->shape[0]);
  write_floats(fp, d, t->count);
  free(d);
  return true;
}

bool st_write(const char *path, const StTensor *tensors, int n, const char *const *keys,
              const char *const *values, int n_meta, Err *err) {
  return st_write_mapped(path, tensors, n, keys, values, n_meta, NULL, 0, err);
}

bool st_write_mapped(const char *path, const StTensor *tensors, int n, const char *const *keys,
                     const char *const *values, int n_meta, const void *map, size_t map_len, Err *err) {
  cJSON *root = cJSON_CreateObject();
  if (!root) return err_set(err, "%s: out of memory", path);
  if (n_meta > 0) {
    cJSON *meta = cJSON_AddObjectToObject(root, "__metadata__");
    for (int i = 0; i < n_meta; i++) cJSON_AddStringToObject(meta, keys[i], values[i]);
  }
  uint64_t off = 0;
  for (int i = 0; i < n; i++) {
    cJSON *t = cJSON_AddObjectToObject(root, tensors[i].name);
    cJSON_AddStringToObject(t, "dtype", "F32");
    cJSON *shape = cJSON_AddArrayToObject(t, "shape");
    for (int k = 0; k < tensors[i].ndim; k++)
      cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)tensors[i].shape[k]));
    cJSON *o = cJSON_AddArrayToObject(t, "data_offsets");
    cJSON_AddItemToArray(o, cJSON_CreateNumber((double)off));
    off += (uint64_t)tensors[i].count * 4;
    cJSON_AddItemToArray(o, cJSON_CreateNumber((double)off));
  }
  char *json = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (!json) return err_set(err, "%s: out of memory", path);
  size_t jl = strlen(json), padded = (jl + 7) / 8 * 8;
  AtomicFile af;
  if (!atomic_open(&af, path, err)) {
    free(json);
    return false;
  }
  uint8_t hdr[8];
  for (int i = 0; i < 8; i++) hdr[i] = (uint8_t)((uint64_t)padded >> (8 * i));
  fwrite(hdr, 1, 8, af.fp);
  fwrite(json, 1, jl, af.fp);
  for (size_t i = jl; i < padded; i++) fputc(' ', af.fp);
  free(json);
  bool ok = true;
  for (int i = 0; i < n && ok; i++) {
    const StTensor *t = &tensors[i];
    ok = t->transposed ? write_transposed(af.fp, t) : write_floats(af.fp, t->data, t->count);
    const uint8_t *d = (const uint8_t *)t->data, *m = map;
    if (m && d >= m && d < m + map_len) st_release_pages(d, sizeof(float) * (size_t)t->count);
  }
  if (!ok) {
    atomic_abort(&af);
    return err_set(err, "%s: out of memory", path);
  }
  return atomic_commit(&af, err);
}
