// stfile.h -- StFile: named tensors and string metadata, the container of the canonical model form
// (model.h: model_from_st takes one). The readers of src/formats fill it (safetensors.h, the .pt
// and hub loaders); core only reads what it holds, so it needs no reader to know it.
//
// An StFile owns its tensors (aligned floats) and metadata; st_free releases them. A reader may
// instead point F32 tensors into a file mapping it made (map, map_len; st_read_mapped): st_free
// then unmaps it when map_owner, and st_mapped tells such data from a malloc'd buffer.
//
//     const StTensor *e = st_find(&f, "embed.weight");  // e->shape[0] == V
//     const char *d = st_meta(&f, "d_model");           // "16" or NULL
#ifndef SF_STFILE_H
#define SF_STFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h" // defines: Err

#define ST_MAX_DIMS 4

typedef struct {
  char *name;
  int ndim;
  int64_t shape[ST_MAX_DIMS];
  int64_t count; // prod(shape)
  float *data;   // count floats (NULL when count == 0, or for a dtype st_read_lenient skips)
  char dtype[8]; // as the file names it: "F32", "F16", "BF16" (converted), or "I64"... (skipped)
  // data holds the [shape[1], shape[0]] transpose of this 2-D tensor: GPT-2's Conv1D weight [in,
  // out] kept as the file stores it under the canonical [out, in] name (set by the hub loader only;
  // st_write writes the canonical layout)
  bool transposed;
} StTensor;

typedef struct {
  StTensor *tensors; // in the order of the header
  int n;
  int *by_name;          // indices of tensors sorted by name, for st_find
  char **keys, **values; // __metadata__
  int n_meta;
  // st_read_mapped only: the file's private mapping, which the data of its aligned F32 tensors point
  // into (not copies; st_mapped tells them apart). The owner unmaps it in st_free; a borrower (the
  // hub's canonical file, built from tensors of a mapped one) only knows not to free those pointers.
  uint8_t *map;
  size_t map_len;
  bool map_owner;
} StFile;

// True when p points into f's mapping (not a malloc'd buffer: never free it).
bool st_mapped(const StFile *f, const void *p);
// Gives the pages wholly inside [p, p + bytes) of a file mapping back to the kernel (madvise
// MADV_DONTNEED); they are read again from the page cache when touched. Only for pages that were
// never written (a written page of a private mapping would lose the write).
void st_release_pages(const void *p, size_t bytes);
void st_free(StFile *f);
const StTensor *st_find(const StFile *f, const char *name);
// (Re)builds f->by_name after tensors were put into f by hand (the hub loader's canonical file);
// refuses a name given twice.
bool st_index(StFile *f, const char *what, Err *err);
const char *st_meta(const StFile *f, const char *key);

#endif
