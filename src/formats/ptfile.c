// ptfile.c -- see ptfile.h: the zip (ptzip.c), the pickle (ptpickle.c), then each tensor's
// values gathered from its storage and converted to float32.
#include "ptfile.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"   // defines: file_read_all
#include "ptpickle.h" // defines: PtPickle, ptpickle_load
#include "ptzip.h"    // defines: PtZip, ptzip_open, ptzip_get

typedef enum { DT_F32, DT_F16, DT_BF16, DT_F64 } Dtype;

static const struct {
  const char *storage, *name;
  Dtype dt;
  int size;
} dtypes[] = {
    {"FloatStorage", "float32", DT_F32, 4},
    {"HalfStorage", "float16", DT_F16, 2},
    {"BFloat16Storage", "bfloat16", DT_BF16, 2},
    {"DoubleStorage", "float64", DT_F64, 8},
};

static uint32_t u32le(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static float f32_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// IEEE half to float: exact (every half is a float), subnormals, infinities and NaN kept.
static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f) return f32_bits(sign | 0x7f800000 | man << 13);
  if (exp) return f32_bits(sign | (exp + 112) << 23 | man << 13);
  if (!man) return f32_bits(sign);
  uint32_t e = 113; // a subnormal: shift its leading 1 up to the hidden bit
  while (!(man & 0x400)) man <<= 1, e--;
  return f32_bits(sign | e << 23 | (man & 0x3ff) << 13);
}

static float load_value(const uint8_t *p, Dtype dt) {
  switch (dt) {
  case DT_F32: return f32_bits(u32le(p));
  case DT_F16: return half_to_float((uint16_t)(p[0] | p[1] << 8));
  case DT_BF16: return f32_bits((uint32_t)(p[0] | p[1] << 8) << 16);
  case DT_F64: {
    uint64_t u = (uint64_t)u32le(p) | (uint64_t)u32le(p + 4) << 32;
    double d;
    memcpy(&d, &u, 8);
    if (d > FLT_MAX) return INFINITY; // out of float's range: C leaves the cast undefined
    if (d < -FLT_MAX) return -INFINITY;
    return (float)d;
  }
  }
  return 0.0f;
}

bool pt_sniff(const uint8_t *b, size_t len) {
  return len >= 4 && ((b[0] == 'P' && b[1] == 'K' && b[2] == 3 && b[3] == 4) || (b[0] == 0x80 && b[1] <= 5));
}

typedef struct {
  const PtZip *zip;
  const char *prefix; // "model" of "model/data.pkl"
  size_t prefix_len;
  const char *what;
  Err *err;
} Ctx;

// Where tensor t reads from: its storage's bytes, checked against the tensor's extent.
static bool tensor_source(const Ctx *c, const PtTensorRef *t, int64_t count, int k, const uint8_t **data,
                          Err *err) {
  size_t klen = strlen(t->storage_key), cap = c->prefix_len + klen + 8;
  char *entry = malloc(cap);
  if (!entry) return err_set(err, "%s: out of memory", c->what);
  memcpy(entry, c->prefix, c->prefix_len);
  memcpy(entry + c->prefix_len, "/data/", 6);
  memcpy(entry + c->prefix_len + 6, t->storage_key, klen + 1);
  size_t len = 0;
  bool ok = ptzip_get(c->zip, entry, data, &len, err);
  free(entry);
  if (!ok) return false;
  int64_t have = (int64_t)(len / (size_t)dtypes[k].size);
  if (t->storage_numel > have)
    return err_set(
        err,
        "%s: storage data/%.40s of tensor \"%.80s\" holds %zu bytes, fewer than its %lld %s values "
        "(truncated?)",
        c->what, t->storage_key, t->name, len, (long long)t->storage_numel, dtypes[k].name);
  // the last element: offset + sum (size - 1) * stride, without overflow
  int64_t last = t->offset;
  for (int d = 0; d < t->ndim; d++) {
    int64_t s = t->size[d] - 1;
    if (s > 0 && (t->stride[d] > (INT64_MAX - last) / s))
      last = INT64_MAX;
    else
      last += s * t->stride[d];
    if (last == INT64_MAX) break;
  }
  if (last >= t->storage_numel)
    return err_set(
        err,
        "%s: tensor \"%.80s\" needs %lld values of its storage, which holds only %lld: the storage is "
        "shorter than the tensor",
        c->what, t->name, (long long)last + (last < INT64_MAX), (long long)t->storage_numel);
  if (count > t->storage_numel)
    return err_set(
        err,
        "%s: tensor \"%.80s\" has %lld values but its storage only %lld (an expanded view): save a "
        ".clone() of it",
        c->what, t->name, (long long)count, (long long)t->storage_numel);
  return true;
}

// Gathers the tensor's values in C order from src, following its strides.
static void gather(float *out, const uint8_t *src, const PtTensorRef *t, int64_t count, int k) {
  int64_t idx[PT_MAX_DIMS] = {0}, at = t->offset;
  Dtype dt = dtypes[k].dt;
  size_t es = (size_t)dtypes[k].size;
  for (int64_t e = 0; e < count; e++) {
    out[e] = load_value(src + (size_t)at * es, dt);
    for (int d = t->ndim - 1; d >= 0; d--) { // the odometer: the last axis moves fastest
      at += t->stride[d];
      if (++idx[d] < t->size[d]) break;
      at -= t->size[d] * t->stride[d];
      idx[d] = 0;
    }
  }
}

static bool convert(StFile *f, const Ctx *c, const PtPickle *p, size_t file_len, Err *err) {
  const char *what = c->what;
  f->tensors = calloc((size_t)p->n + 1, sizeof(StTensor));
  if (!f->tensors) return err_set(err, "%s: out of memory", what);
  int64_t total = 0,
          budget =
              (int64_t)((uint64_t)file_len < (uint64_t)1 << 40 ? (uint64_t)file_len : (uint64_t)1 << 40) * 4 +
              65536;
  if (budget > PT_MAX_FLOATS) budget = PT_MAX_FLOATS;
  for (int i = 0; i < p->n; i++) {
    const PtTensorRef *t = &p->tensors[i];
    int k = -1;
    for (int j = 0; j < (int)(sizeof dtypes / sizeof dtypes[0]); j++)
      if (!strcmp(t->storage_type, dtypes[j].storage)) k = j;
    if (k < 0)
      return err_set(
          err,
          "%s: tensor \"%.80s\" is stored as torch.%s, which Stepformer does not read (only Float, "
          "Half, BFloat16 and Double storages): convert it with .float() before saving",
          what, t->name, t->storage_type);
    if (t->ndim > ST_MAX_DIMS)
      return err_set(err, "%s: tensor \"%.80s\" has %d dimensions; Stepformer reads at most %d", what,
                     t->name, t->ndim, ST_MAX_DIMS);
    int64_t count = 1;
    for (int d = 0; d < t->ndim; d++)
      if (t->size[d] == 0) count = 0;
    for (int d = 0; d < t->ndim && count; d++) {
      if (t->size[d] > budget / count) {
        count = -1;
        break;
      }
      count *= t->size[d];
    }
    if (count < 0 || count > budget - total)
      return err_set(err,
                     "%s: tensor \"%.80s\" would take more values than the file could hold (%lld in all)",
                     what, t->name, (long long)budget);
    StTensor *o = &f->tensors[f->n];
    o->name = strdup(t->name);
    f->n++;
    if (!o->name) return err_set(err, "%s: out of memory", what);
    o->ndim = t->ndim;
    for (int d = 0; d < t->ndim; d++) o->shape[d] = t->size[d];
    o->count = count;
    if (count == 0) continue;
    const uint8_t *src;
    if (!tensor_source(c, t, count, k, &src, err)) return false;
    o->data = malloc((size_t)count * sizeof(float));
    if (!o->data) return err_set(err, "%s: out of memory", what);
    gather(o->data, src, t, count, k);
    total += count;
  }
  return st_index(f, what, err); // st_find by halves; a name given twice is refused
}

bool pt_parse(StFile *f, const uint8_t *b, size_t len, const char *what, Err *err) {
  memset(f, 0, sizeof *f);
  if (len >= 2 && b[0] == 0x80)
    return err_set(
        err,
        "%s: PyTorch's legacy format (before 1.6, or _use_new_zipfile_serialization=False), which "
        "Stepformer does not read: load it in Python and save it again with torch.save(state_dict, "
        "PATH), whose zip format is the default since 1.6",
        what);
  if (len > PT_MAX_FILE)
    return err_set(err, "%s: larger than %zu bytes, more than a model may hold", what, PT_MAX_FILE);
  PtZip zip;
  if (!ptzip_open(&zip, b, len, what, err)) return false;
  Ctx c = {.zip = &zip, .what = what, .err = err};
  for (size_t i = 0; i < zip.n && !c.prefix; i++) { // "NAME/data.pkl", one folder deep
    const PtZipEntry *e = &zip.entries[i];
    const char *slash = memchr(e->name, '/', e->name_len);
    if (slash && slash > e->name && (size_t)(e->name + e->name_len - slash) == 9 &&
        !memcmp(slash, "/data.pkl", 9))
      c.prefix = e->name, c.prefix_len = (size_t)(slash - e->name);
  }
  bool ok = false;
  PtPickle p = {0};
  char *name = NULL;
  if (!c.prefix) {
    err_set(err, "%s: a zip, but not one torch.save writes (no NAME/data.pkl in it)", what);
    goto done;
  }
  name = malloc(c.prefix_len + 16);
  if (!name) {
    err_set(err, "%s: out of memory", what);
    goto done;
  }
  memcpy(name, c.prefix, c.prefix_len);
  const uint8_t *data;
  size_t n;
  memcpy(name + c.prefix_len, "/byteorder", 11);
  if (ptzip_find(&zip, name)) {
    if (!ptzip_get(&zip, name, &data, &n, err)) goto done;
    if (!(n == 6 && !memcmp(data, "little", 6))) {
      err_set(
          err,
          "%s: saved on a big-endian machine (byteorder is not \"little\"), which Stepformer does not read",
          what);
      goto done;
    }
  }
  memcpy(name + c.prefix_len, "/data.pkl", 10);
  if (!ptzip_get(&zip, name, &data, &n, err) || !ptpickle_load(&p, data, n, what, err)) goto done;
  ok = convert(f, &c, &p, len, err);
done:
  free(name);
  ptpickle_free(&p);
  ptzip_free(&zip);
  if (!ok) st_free(f);
  return ok;
}

bool pt_read(StFile *f, const char *path, Err *err) {
  memset(f, 0, sizeof *f);
  size_t len;
  char *bytes = file_read_all(path, &len, PT_MAX_FILE, err);
  if (!bytes) return false;
  bool ok = pt_parse(f, (const uint8_t *)bytes, len, path, err);
  free(bytes);
  return ok;
}
