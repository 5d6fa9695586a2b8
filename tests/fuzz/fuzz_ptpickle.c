// fuzz_ptpickle.c -- libFuzzer target for the restricted pickle machine alone, on raw bytes (no
// zip around them, so every mutation reaches the opcodes).
//
// A rejected input must come with one line and leave nothing allocated; an accepted one is a
// dict of named tensors whose sizes and strides are non-negative and at most PT_MAX_DIMS long.
// The seeds in tests/fuzz/corpus/ptpickle are the data.pkl of every fixture in tests/ref/pt.
//
//   build-fuzz/tests/fuzz_ptpickle /tmp/corpus-pkl tests/fuzz/corpus/ptpickle -runs=300000 -seed=1
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ptpickle.h" // defines: ptpickle_load, PtPickle

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_ptpickle: broken promise: %s\n", #x);                                            \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  PtPickle p;
  Err err = {0};
  if (!ptpickle_load(&p, data, size, "<fuzz input>", &err)) {
    PROMISE(err.msg[0] != 0 && strchr(err.msg, '\n') == NULL);
    PROMISE(p.n == 0 && p.tensors == NULL && p.arena == NULL);
    return 0;
  }
  PROMISE(p.n >= 0 && (p.n == 0 || p.tensors != NULL));
  for (int i = 0; i < p.n; i++) {
    const PtTensorRef *t = &p.tensors[i];
    PROMISE(t->name && t->storage_key && t->storage_key[0] && t->storage_type);
    PROMISE(t->ndim >= 0 && t->ndim <= PT_MAX_DIMS && t->offset >= 0 && t->storage_numel >= 0);
    for (int k = 0; k < t->ndim; k++) PROMISE(t->size[k] >= 0 && t->stride[k] >= 0);
  }
  ptpickle_free(&p);
  return 0;
}
