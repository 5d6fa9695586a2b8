// fuzz_modelstore.c -- libFuzzer target for the Ollama manifest reader (modelstore_manifest_model).
//
// A rejected input must come with a one-line message; an accepted one must give 64 lowercase hex
// digits. Any crash, sanitizer report or broken promise (__builtin_trap) is a bug. Build and run as
// fuzz_safetensors.c says; seeds in tests/fuzz/corpus/modelstore/ (Ollama manifests as `ollama
// pull` writes them, and the bad ones of tests/test_modelstore.sh).
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "modelstore.h" // defines: modelstore_manifest_model

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_modelstore: broken promise: %s\n", #x);                                          \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char hex[65] = "";
  Err err = {0};
  if (!modelstore_manifest_model((const char *)data, size, "manifest", hex, &err)) {
    PROMISE(err.msg[0] != 0 && !strchr(err.msg, '\n'));
    return 0;
  }
  PROMISE(strlen(hex) == 64 && strspn(hex, "0123456789abcdef") == 64);
  return 0;
}
