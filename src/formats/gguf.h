// gguf.h -- reads GGUF files (llama.cpp's and Ollama's model files), versions 2 and 3.
//
// Written from the specification, docs/gguf.md in the ggml repository. Byte layout (little-endian):
//   "GGUF" u32 version (2 or 3) u64 n_tensors u64 n_kv
//   n_kv × { string key, u32 value_type, value }      string = u64 length + bytes (no NUL)
//   n_tensors × { string name, u32 n_dims, u64 ne[n_dims], u32 ggml_type, u64 offset }
//   padding to general.alignment (u32 metadata, 32 when absent), then the data section; a
//   tensor's bytes start at data + offset (a multiple of the alignment).
// Value types: u8 i8 u16 i16 u32 i32 f32 bool string array u64 i64 f64 (0..12); an array is
// u32 element type + u64 count + the elements, and may hold arrays (nested, at most
// GGUF_MAX_DEPTH deep). Dimensions are ggml's order, the reverse of PyTorch's shape: ne[0] is the
// fastest-moving index, so a PyTorch [out, in] weight is written ne = {in, out}; GgufTensor holds
// both orders.
//
// Contract: gguf_parse walks the whole header once before it allocates anything, checking every
// count, length, dimension, type and offset against the bytes that remain; the memory it then
// takes is proportional to the header's real size, never to a count the file claims. A refusal is
// one line naming the file, what is wrong and the byte where it was found. The tensor data are
// not read by the parser: GgufTensor.data points into the caller's bytes (gguf_open: the file
// mapped read-only), and every tensor's [offset, offset + nbytes) is proven inside the data
// section and apart from the others. Big-endian files and version 1 are refused by name.
//
//     GgufFile g;
//     if (!gguf_open(&g, "model.gguf", &err)) ...;
//     const char *arch; size_t n;
//     if (gguf_get_str(&g, "general.architecture", &arch, &n)) ...;   // not NUL-terminated
//     const GgufTensor *t = gguf_find_tensor(&g, "token_embd.weight"); // t->shape[0] == V
//     gguf_close(&g);
#ifndef SF_GGUF_H
#define SF_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h" // defines: Err

#define GGUF_MAX_DIMS 4
#define GGUF_MAX_DEPTH 8   // arrays of arrays, at most this deep
#define GGUF_MAX_NAME 64   // a tensor name's bytes (the specification's limit)
#define GGUF_MAX_KEY 65535 // a key's bytes
#define GGUF_DEFAULT_ALIGNMENT 32

enum {
  GGUF_U8 = 0,
  GGUF_I8 = 1,
  GGUF_U16 = 2,
  GGUF_I16 = 3,
  GGUF_U32 = 4,
  GGUF_I32 = 5,
  GGUF_F32 = 6,
  GGUF_BOOL = 7,
  GGUF_STRING = 8,
  GGUF_ARRAY = 9,
  GGUF_U64 = 10,
  GGUF_I64 = 11,
  GGUF_F64 = 12,
  GGUF_N_VALUE_TYPES
};

typedef struct {
  char *key;          // NUL-terminated copy (keys hold no NUL byte)
  uint32_t type;      // GGUF_U8 .. GGUF_F64
  uint32_t elem_type; // arrays: the elements' type
  uint64_t n;         // arrays: the element count (scalars: 1)
  const uint8_t *at;  // the value's bytes (arrays: the first element; strings: the length)
  size_t size;        // the value's bytes in the file (arrays: the elements only)
  uint64_t pos;       // the key's offset in the file, for messages
} GgufKV;

typedef struct {
  char *name; // NUL-terminated copy
  int ndim;
  uint64_t ne[GGUF_MAX_DIMS];   // ggml's order: ne[0] fastest (unused dims 1)
  int64_t shape[GGUF_MAX_DIMS]; // PyTorch's order: shape[ndim-1] == ne[0]
  int64_t count;                // prod(ne)
  uint32_t type;                // ggml_type (gguf_quant.h names it)
  uint64_t offset;              // from the start of the data section
  size_t nbytes;                // count / block size × block bytes
  const uint8_t *data;          // in the caller's bytes (gguf_open: the mapping)
} GgufTensor;

typedef struct {
  const char *name; // a key or a tensor name
  uint64_t i;       // its index in kv or tensors
} GgufIndex;

typedef struct {
  uint32_t version; // 2 or 3
  GgufKV *kv;
  uint64_t n_kv;
  GgufTensor *tensors; // in the file's order
  uint64_t n_tensors;
  GgufIndex *kv_sorted, *t_sorted; // sorted by key / name, for the lookups
  uint32_t alignment;
  uint64_t data_offset; // the data section's start in the file
  const uint8_t *bytes; // the whole file
  size_t len;
  bool mapped;    // gguf_open: bytes is a mapping gguf_close unmaps
  char what[256]; // the file's name in messages
} GgufFile;

// Parses bytes[0, len) (kept by the caller, alive as long as g); `what` names the source in messages.
bool gguf_parse(GgufFile *g, const uint8_t *bytes, size_t len, const char *what, Err *err);
// Maps path read-only and parses it.
bool gguf_open(GgufFile *g, const char *path, Err *err);
// True when path ends in ".gguf" or the file starts with the magic "GGUF" (model_load's dispatch:
// a damaged .gguf file is then told it is not GGUF, not that it is not safetensors).
bool gguf_sniff(const char *path);
void gguf_close(GgufFile *g);

const GgufKV *gguf_find(const GgufFile *g, const char *key);
const GgufTensor *gguf_find_tensor(const GgufFile *g, const char *name);
// Scalar getters: false when the key is absent or of another kind. gguf_get_uint accepts any
// integer type with a value >= 0; gguf_get_float f32 or f64 (and integers).
bool gguf_get_uint(const GgufFile *g, const char *key, uint64_t *out);
bool gguf_get_float(const GgufFile *g, const char *key, double *out);
bool gguf_get_bool(const GgufFile *g, const char *key, bool *out);
bool gguf_get_str(const GgufFile *g, const char *key, const char **s, size_t *len);
// The string array kv's elements in order: s[i], len[i] (caller's arrays of kv->n); false when kv
// is not an array of strings.
bool gguf_arr_strings(const GgufKV *kv, const char **s, size_t *len);
// Element i of an array of integers (any width, signed or not) or floats, as a double; false when
// kv holds no such array or i is out of range.
bool gguf_arr_number(const GgufKV *kv, uint64_t i, double *out);
const char *gguf_value_type_name(uint32_t type);

#endif
