// fuzz_hub.c -- libFuzzer target for the hub loader: config.json and the hub's tensor names.
//
// An input is a config.json, a NUL byte, then a model.safetensors (no NUL: the whole input is the
// config and the folder has no weights). They are written into a folder of this process beside
// the tokenizer files of the fixtures (tests/ref/hub/gpt2-tiny's vocab.json + merges.txt,
// bert-tiny's vocab.txt + tokenizer_config.json, tests/ref/llama/llama-gqa2's tokenizer.json; SF_TEST_DIR
// names the tests folder, "tests" by default), and the folder is opened with model_load, as `stepformer
// --model DIR` does. A refusal must come with a one-line message; a model that loads must have its tokenizer,
// a vocabulary of its embedding's size, and tokenize and run a forward pass on a short sentence. Any crash,
// sanitizer report or broken promise (__builtin_trap) is a bug.
//
//   CC=clang cmake -S . -B build-fuzz -DSF_FUZZ=ON -DSF_SANITIZE=ON
//   cmake --build build-fuzz --target fuzz_hub
//   build-fuzz/tests/fuzz_hub -max_total_time=60 /tmp/corpus tests/fuzz/corpus/hub
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"       // defines: file_read_all, file_write_atomic
#include "forward.h"      // defines: model_forward
#include "model.h"        // defines: Model
#include "model_load.h"   // defines: model_load
#include "model_tokens.h" // defines: model_tokenize, ModelTokenizer
#include "trace.h"        // defines: Trace, trace_new

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_hub: broken promise: %s\n", #x);                                                 \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

static char dir[64];

static void copy(const char *from_dir, const char *name) {
  char src[4200], dst[200];
  snprintf(src, sizeof src, "%s/%s", from_dir, name);
  snprintf(dst, sizeof dst, "%s/%s", dir, name);
  size_t len;
  Err err = {0};
  char *d = file_read_all(src, &len, 1 << 24, &err);
  if (!d) {
    fprintf(stderr, "fuzz_hub: %s\n", err.msg);
    exit(2);
  }
  if (!file_write_atomic(dst, d, len, &err)) exit(2);
  free(d);
}

static const char *const FILES[] = {
    "vocab.json",  "merges.txt",        "vocab.txt",     "tokenizer_config.json",
    "config.json", "model.safetensors", "tokenizer.json"};

static void cleanup(void) {
  for (size_t i = 0; i < sizeof FILES / sizeof *FILES; i++) {
    char path[200];
    snprintf(path, sizeof path, "%s/%s", dir, FILES[i]);
    remove(path);
  }
  rmdir(dir);
}

// The folder, with the tokenizer files, made once per process (removed at exit).
static void setup(void) {
  if (dir[0]) return;
  // In memory (/dev/shm) where there is one: two files are written for every input, and on a
  // disk's file system making and renaming them cost more than loading the model.
  snprintf(dir, sizeof dir, "/dev/shm/fuzz-hub-%010ld", (long)getpid());
  if (mkdir(dir, 0700) != 0) {
    snprintf(dir, sizeof dir, "/tmp/fuzz-hub-%010ld", (long)getpid());
    mkdir(dir, 0700);
  }
  atexit(cleanup);
  const char *tests = getenv("SF_TEST_DIR") ? getenv("SF_TEST_DIR") : "tests";
  char gpt2[4096], bert[4096];
  snprintf(gpt2, sizeof gpt2, "%s/ref/hub/gpt2-tiny", tests);
  snprintf(bert, sizeof bert, "%s/ref/hub/bert-tiny", tests);
  copy(gpt2, "vocab.json");
  copy(gpt2, "merges.txt");
  copy(bert, "vocab.txt");
  copy(bert, "tokenizer_config.json");
  char llama[4096]; // today's decoders (model_type llama, qwen2, qwen3) read tokenizer.json
  snprintf(llama, sizeof llama, "%s/ref/llama/llama-gqa2", tests);
  copy(llama, "tokenizer.json");
}

// Written in place, not with file_write_atomic: nothing else reads the folder while the target
// writes it, and a temporary file made and renamed twice per input was a tenth of the target's
// time. A model.safetensors an input does not hold is removed.
static void put(const char *name, const uint8_t *data, size_t size) {
  char path[200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  if (!data) {
    remove(path);
    return;
  }
  FILE *fp = fopen(path, "wb");
  PROMISE(fp != NULL);
  PROMISE(fwrite(data, 1, size, fp) == size || size == 0);
  PROMISE(fclose(fp) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  setup();
  const uint8_t *nul = memchr(data, 0, size);
  size_t clen = nul ? (size_t)(nul - data) : size;
  put("config.json", data, clen);
  put("model.safetensors", nul ? nul + 1 : NULL, nul ? size - clen - 1 : 0);
  Err err = {0};
  Model *m = model_load(dir, &err);
  if (!m) {
    PROMISE(err.msg[0] != 0 && strchr(err.msg, '\n') == NULL);
    return 0;
  }
  PROMISE(m->tokenizer != NULL && m->vocab.n == m->cfg.V &&
          (m->cfg.D % m->cfg.H == 0 || m->cfg.d_k > 0)); // Qwen 3's head_dim need not be D/H
  Tokens tok;
  if (model_tokenize(m, "The cat walks by the [MASK].", 0, &tok, &err)) {
    for (int i = 0; i < tok.n; i++) PROMISE(tok.ids[i] >= 0 && tok.ids[i] < m->cfg.V && tok.words[i]);
    Trace *t = trace_new(m, &tok, &err);
    if (t) {
      model_forward(t);
      trace_free(t);
    } else {
      PROMISE(err.msg[0] != 0 && strchr(err.msg, '\n') == NULL);
    }
    tokens_free(&tok);
  }
  model_free(m);
  return 0;
}
