// fuzz_ptfile.c -- libFuzzer target for the .pt reader: zip container, pickle and tensors.
//
// Every input goes through pt_parse from memory. A rejected input must come with one line that
// starts with the source's name and leave the StFile empty; an accepted one must hold what it
// promises: count = prod(shape) within ST_MAX_DIMS, data for every non-empty tensor, no more
// values than the input's bytes allow (ptfile.h's budget), st_find finding every name.
// Any crash, sanitizer report or broken promise (__builtin_trap) is a bug. The seeds in
// tests/fuzz/corpus/ptfile are the fixtures of tests/ref/pt (tests/gen_pt_fixtures.py).
//
// Build and run (clang):
//   CC=clang sf_build build-fuzz -DSF_FUZZ=ON -DSF_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
//   mkdir -p /tmp/corpus
//   build-fuzz/tests/fuzz_ptfile /tmp/corpus tests/fuzz/corpus/ptfile -runs=300000 -seed=1
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ptfile.h" // defines: pt_parse
#include "stfile.h" // defines: StFile, st_find

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_ptfile: broken promise: %s\n", #x);                                              \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StFile f;
  Err err = {0};
  if (!pt_parse(&f, data, size, "<fuzz input>", &err)) {
    PROMISE(err.msg[0] != 0 && strchr(err.msg, '\n') == NULL);
    PROMISE(!strncmp(err.msg, "<fuzz input>: ", 14));
    PROMISE(f.n == 0 && f.tensors == NULL && f.by_name == NULL);
    return 0;
  }
  int64_t total = 0;
  volatile float sink = 0.0f;
  for (int i = 0; i < f.n; i++) {
    const StTensor *t = &f.tensors[i];
    PROMISE(t->name && t->ndim >= 0 && t->ndim <= ST_MAX_DIMS);
    int64_t count = 1;
    for (int k = 0; k < t->ndim; k++) count *= t->shape[k];
    PROMISE(count == t->count && (count == 0 || t->data != NULL));
    PROMISE(st_find(&f, t->name) == t);
    for (int64_t k = 0; k < count; k++) sink += t->data[k]; // every value is there to read
    total += count;
  }
  (void)sink;
  PROMISE(total <= 4 * (int64_t)size + 65536);
  PROMISE(f.n_meta == 0);
  st_free(&f);
  return 0;
}
