// safetensors.h -- reads and writes the safetensors format (F32 tensors only).
//
// Byte layout (https://github.com/huggingface/safetensors):
//   [0, 8)        N, the header length, unsigned 64-bit little-endian
//   [8, 8+N)      UTF-8 JSON object: {"__metadata__": {"key": "string", ...},
//                   "name": {"dtype": "F32", "shape": [d0, d1, ...], "data_offsets": [b, e]}, ...}
//   [8+N, end)    the data buffer; a tensor's bytes are [b, e) of it, little-endian, C order.
// The reader checks everything a file can lie about: the header length against the file size,
// JSON syntax, dtype (F32 only: others are reported by name), that e - b == 4·prod(shape)
// without overflow, that offsets lie inside the buffer, and that tensors do not overlap.
// Metadata values must be strings; a tensor name or metadata key may appear once. Parsing and
// st_find take O(n log n) and O(log n) in the number of tensors, so a header of a million tiny
// tensors is answered at once. Files larger than 2 GiB (the most a model may hold) are refused
// before they are read. The writer pads the header with spaces to a multiple of 8.
//
// An StFile owns copies of all tensors (aligned floats) and metadata; st_free releases them.
//
//     StFile f;
//     if (!st_read(&f, "model.safetensors", &err)) ...;
//     const StTensor *e = st_find(&f, "embed.weight");  // e->shape[0] == V
//     const char *d = st_meta(&f, "d_model");           // "16" or NULL
#ifndef SF_SAFETENSORS_H
#define SF_SAFETENSORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h" // defines: Err

#define ST_MAX_DIMS 4
#define ST_MAX_HEADER (64u << 20) // a header larger than 64 MiB is rejected as corrupt

typedef struct {
  char *name;
  int ndim;
  int64_t shape[ST_MAX_DIMS];
  int64_t count; // prod(shape)
  float *data;   // count floats (NULL when count == 0)
} StTensor;

typedef struct {
  StTensor *tensors; // in the order of the header
  int n;
  int *by_name;          // indices of tensors sorted by name, for st_find
  char **keys, **values; // __metadata__
  int n_meta;
} StFile;

// `what` names the source in messages (a path, or "<fuzz input>").
bool st_parse(StFile *f, const uint8_t *bytes, size_t len, const char *what, Err *err);
bool st_read(StFile *f, const char *path, Err *err);
void st_free(StFile *f);
const StTensor *st_find(const StFile *f, const char *name);
const char *st_meta(const StFile *f, const char *key);

// Writes tensors (in the given order) and metadata atomically to path.
bool st_write(const char *path, const StTensor *tensors, int n, const char *const *keys,
              const char *const *values, int n_meta, Err *err);

#endif
