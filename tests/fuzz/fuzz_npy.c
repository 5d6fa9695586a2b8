// fuzz_npy.c -- libFuzzer target for npy_read, the reader of the tests' reference files.
//
// The input is written to a temporary file and read back with npy_read: a rejected file must
// come with a message; an accepted one must hold exactly prod(shape) floats (the file's size
// says so), and encoding it again with npy_encode must give the same data bytes.
// Build as fuzz_safetensors.c says; seeds in tests/fuzz/corpus/npy/ (any .npy will do).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h" // defines: npy_read, npy_encode

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_npy: broken promise: %s\n", #x);                                                 \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char path[64];
  if (!path[0]) snprintf(path, sizeof path, "/tmp/fuzz-npy-%010ld.npy", (long)getpid());
  FILE *fp = fopen(path, "wb");
  if (!fp) return 0;
  size_t wrote = fwrite(data, 1, size, fp);
  fclose(fp);
  if (wrote != size) return 0;
  Err err = {0};
  int nd = 0, shape[NPY_MAX_DIMS] = {0};
  float *x = npy_read(path, &nd, shape, &err);
  remove(path);
  if (!x) {
    PROMISE(err.msg[0] != 0);
    return 0;
  }
  PROMISE(nd >= 0 && nd <= NPY_MAX_DIMS);
  size_t count = 1;
  for (int k = 0; k < nd; k++) {
    PROMISE(shape[k] >= 0);
    count *= (size_t)shape[k];
  }
  PROMISE(count * 4 <= size);
  size_t len;
  unsigned char *enc = npy_encode(x, nd, shape, &len);
  PROMISE(enc != NULL && len >= count * 4);
  PROMISE(count == 0 || !memcmp(enc + len - count * 4, data + size - count * 4, count * 4));
  free(enc);
  free(x);
  return 0;
}
