// ptpickle.h -- the restricted pickle reader of .pt files: a state_dict of tensors, nothing else.
//
// A pickle is a program for a stack machine; Python's unpickler runs it and may call any
// function it names (os.system too). This reader runs none: it knows the opcodes PyTorch's
// torch.save emits for a state_dict (protocol 2, and protocol 4's FRAME, MEMOIZE,
// SHORT_BINUNICODE, STACK_GLOBAL), and six kinds of name a GLOBAL may push:
//   collections.OrderedDict          REDUCE with () makes an empty dict; BUILD sets its
//                                    _metadata (read and dropped)
//   torch._utils._rebuild_tensor_v2  REDUCE with (storage, offset, size, stride, requires_grad,
//                                    hooks[, metadata]) makes a tensor reference
//   torch._utils._rebuild_parameter  REDUCE with (tensor, requires_grad, hooks): the tensor
//   torch.<X>Storage                 a storage type, inside a persistent id
// BINPERSID turns ('storage', torch.<X>Storage, key, location, numel) into a storage reference.
// Every other global and every other opcode is refused by name, in one line, the moment it is
// read: "model.pt: data.pkl uses os.system, which a state_dict never needs: Stepformer refuses
// it (nothing was run)". The result must be a dict of names to tensors.
//
// Tensor data is not touched here: a PtTensorRef says which storage (its key, e.g. "0", the
// zip entry NAME/data/0), its type as named in the file, and sizes, strides and offset in
// elements, all checked to be integers in range (not yet against the storage: ptfile.c does).
// Memory grows at most linearly with the input: every value comes from bytes of the input,
// and memo indices above the input's length are refused.
//
//     PtPickle p;
//     if (!ptpickle_load(&p, pkl, n, "model.pt", &err)) ...;  // err: "model.pt: data.pkl ..."
//     for (int i = 0; i < p.n; i++) p.tensors[i].name ...;
//     ptpickle_free(&p);
#ifndef SF_PTPICKLE_H
#define SF_PTPICKLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h" // defines: Err

#define PT_MAX_DIMS 8 // a size tuple longer than this is refused

typedef struct {
  const char *name;         // the state_dict key
  const char *storage_key;  // zip entry NAME/data/<key>
  const char *storage_type; // "FloatStorage", "HalfStorage", ... as the file names it
  int64_t storage_numel;    // elements the persistent id promises
  int64_t offset;           // storage offset, in elements
  int ndim;
  int64_t size[PT_MAX_DIMS], stride[PT_MAX_DIMS]; // all >= 0
} PtTensorRef;

typedef struct {
  PtTensorRef *tensors; // in the order of the dict
  int n;
  void *arena; // owns every string and value
} PtPickle;

// `what` names the file in messages. false with a one-line message (and nothing to free) when
// the pickle is malformed, uses anything beyond a state_dict, or is not a dict of tensors.
bool ptpickle_load(PtPickle *p, const uint8_t *bytes, size_t len, const char *what, Err *err);
void ptpickle_free(PtPickle *p);

#endif
