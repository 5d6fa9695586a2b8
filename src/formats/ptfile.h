// ptfile.h -- reads a state_dict saved by torch.save (PyTorch >= 1.6) without running anything.
//
// What torch.save(model.state_dict(), "model.pt") writes is a zip (ptzip.h) holding
//   model/data.pkl     the dict of names to tensors, a pickle read by ptpickle.h, which runs
//                      nothing and refuses every global a state_dict does not use, by name
//   model/data/<key>   one storage each: the raw little-endian values, stored uncompressed
//   model/version      (and model/byteorder, .data/serialization_id in newer versions)
// The top folder is named after the file when it was saved; any single folder is accepted.
// pt_parse fills the same StFile that st_parse does (safetensors.h), so a model loader takes
// tensors from either and frees them with st_free; .pt files carry no metadata (n_meta = 0).
// Values are converted to float32 from FloatStorage, HalfStorage, BFloat16Storage and
// DoubleStorage; any other storage type (Long, Int, Bool, ...) is refused, naming the tensor.
// Strides are honoured (a transposed or sliced view is gathered into C order, the values torch.load
// gives: issue 20 asked for non-contiguous strides to be refused, but a state_dict may well hold a
// transposed view, and gathering within the checked storage is as safe as reading it); a tensor with
// more values than its storage (an expanded view), a storage shorter than its tensor, more than
// ST_MAX_DIMS dimensions, a file of the legacy format (before 1.6, or saved with
// _use_new_zipfile_serialization=False) or of a big-endian machine: each one line, false.
// Limits: files up to PT_MAX_FILE; at most PT_MAX_FLOATS values in all, and no more than
// 4 values per byte of the file (so a small corrupt file cannot ask for gigabytes).
//
//     StFile f;
//     if (!pt_read(&f, "model.pt", &err)) { fprintf(stderr, "%s\n", err.msg); return 2; }
//     const StTensor *e = st_find(&f, "encoder.tok_embed.weight"); // e->shape[0] == V
//     st_free(&f);
#ifndef SF_PTFILE_H
#define SF_PTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"    // defines: Err
#include "stfile.h" // defines: StFile, StTensor, st_find, st_free

#define PT_MAX_FILE ((size_t)3 << 30) // room for PT_MAX_FLOATS float32 values and their pickle
#define PT_MAX_FLOATS ((int64_t)1 << 29)

// `what` names the source in messages (a path, or "<fuzz input>"). On failure *f is empty.
bool pt_parse(StFile *f, const uint8_t *bytes, size_t len, const char *what, Err *err);
bool pt_read(StFile *f, const char *path, Err *err);

// True when bytes begin like a torch.save file of either format (a zip, or a legacy pickle),
// for a loader choosing between .pt and .safetensors by content rather than by name.
bool pt_sniff(const uint8_t *bytes, size_t len);

#endif
