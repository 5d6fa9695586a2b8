// safetensors.h -- reads and writes the safetensors format (reads F32, F16 and BF16; writes F32).
//
// Byte layout (https://github.com/huggingface/safetensors):
//   [0, 8)        N, the header length, unsigned 64-bit little-endian
//   [8, 8+N)      UTF-8 JSON object: {"__metadata__": {"key": "string", ...},
//                   "name": {"dtype": "F32", "shape": [d0, d1, ...], "data_offsets": [b, e]}, ...}
//   [8+N, end)    the data buffer; a tensor's bytes are [b, e) of it, little-endian, C order.
// The reader checks everything a file can lie about: the header length against the file size,
// JSON syntax, dtype (F32, F16 or BF16, each converted exactly to float32 on load, subnormals
// included, inf and NaN kept for the model loader to report; others are reported by name), that
// e - b == (element size)·prod(shape) without overflow, that offsets lie inside the buffer, and that tensors
// do not overlap. Metadata values must be strings; a tensor name or metadata key may appear once. Parsing and
// st_find take O(n log n) and O(log n) in the number of tensors, so a header of a million tiny
// tensors is answered at once. Files larger than the most a model may hold (mem_max_floats) are
// refused before they are read, and a file whose tensors would take more memory than is available once
// converted to float32 (a BF16 checkpoint takes twice its size) is refused before the first is converted.
// st_read maps the file and converts each tensor into its own buffer, so the file is never held twice. The
// writer pads the header with spaces to a multiple of 8. st_read_lenient (the hub's checkpoints, whose files
// may hold integer buffers such as BERT's position_ids) accepts every safetensors dtype: tensors that are not
// floats keep data NULL and their dtype, for the caller to ignore or refuse by name.
//
// An StFile owns copies of all tensors (aligned floats) and metadata; st_free releases them
// (st_read_mapped: the mapping instead of copies of its F32 tensors, see there).
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

#include "err.h"    // defines: Err
#include "stfile.h" // defines: StFile, StTensor, st_find, st_meta, st_free

#define ST_MAX_HEADER (64u << 20) // a header larger than 64 MiB is rejected as corrupt

// `what` names the source in messages (a path, or "<fuzz input>").
bool st_parse(StFile *f, const uint8_t *bytes, size_t len, const char *what, Err *err);
bool st_read(StFile *f, const char *path, Err *err);
bool st_read_lenient(StFile *f, const char *path, Err *err);
// st_read (lenient: st_read_lenient), but F32 tensors (little-endian host, 4-byte aligned) are not
// copied: their data points into the file's mapping (MAP_PRIVATE, read-only: the floats must never be
// written in place; a write would stop the process), which f owns. A 500 MB checkpoint then costs no
// copy, and its pages come and go with the page cache (st_release_pages). F16/BF16 tensors are
// converted as st_read's. Used for a checkpoint folder (lenient) and a model file (strict).
bool st_read_mapped(StFile *f, const char *path, bool lenient, Err *err);
// st_read_mapped of a sharded checkpoint's n files (model-00001-of-00003.safetensors ...) put together
// into one StFile: the files are mapped into one region (file_map_many), which f owns as its one
// mapping, so a model built from f holds a 1B model's 5 GB of F32 shards as it holds one file's.
// Each shard's metadata is dropped (the hub's shards carry only {"format": "pt"}); a name in two
// shards is refused by the caller's st_index.
bool st_read_mapped_shards(StFile *f, const char *const *paths, int n, bool lenient, Err *err);
// The smallest file st_read_mapped keeps mapped (64 MiB); a smaller one is read as st_read_lenient
// reads it. Memory matters for large checkpoints only, and a small model stays safe from a file
// rewritten in place under it (a notebook saving the model again while the window shows it: a
// mapping would then read the new bytes, or stop the process past a shorter end: SIGBUS, which
// the command line turns into one line and exit code 2, cli.h's cli_catch_sigbus). Tests set 0.
extern size_t st_map_min_bytes;
// Exact conversions of IEEE half and bfloat16 bit patterns to float (subnormals, inf, NaN).
float st_f16_to_f32(uint16_t h);
float st_bf16_to_f32(uint16_t h);

// Writes tensors (in the given order) and metadata atomically to path; a `transposed` tensor is
// written in its canonical layout [shape[0], shape[1]].
bool st_write(const char *path, const StTensor *tensors, int n, const char *const *keys,
              const char *const *values, int n_meta, Err *err);
// st_write, but the pages of the tensors that lie in the file mapping [map, map + map_len) (a
// model's, never written to) go back to the page cache once written (st_release_pages): saving a
// mapped 500 MB checkpoint does not hold the whole file in the process at the end.
bool st_write_mapped(const char *path, const StTensor *tensors, int n, const char *const *keys,
                     const char *const *values, int n_meta, const void *map, size_t map_len, Err *err);

#endif
