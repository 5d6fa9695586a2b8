// fuzz_tokjson.c -- libFuzzer target for the tokenizer.json reader (tokenizers/tokjson.h).
//
// The first byte picks the mode; the rest is the input.
//   first byte % 4 != 3: the input is text, encoded by one of the committed tokenizers
//     (tests/ref/tokjson/*.json.gz, loaded once; SF_TEST_DIR names the tests folder, "tests" by
//     default): first byte / 4 % 4 picks Llama 3.1's, Qwen 3's, SmolLM2-style or Llama 2's, bit 4 of
//     it (16) whether special tokens in the text are matched. Every id is in range; with the two
//     byte-level ones without a normalizer (Llama 3.1, SmolLM2) decoding gives the input back byte
//     for byte; every id's label is one line.
//   first byte % 4 == 3: the input is a tokenizer.json. A rejected one comes with a one-line
//     message and leaves nothing allocated; an accepted one encodes a short text and the input
//     itself, decodes them and labels their ids.
// Any crash, sanitizer report or broken promise (__builtin_trap) is a bug.
//
// Build and run (clang):
//   CC=clang cmake -S . -B build-fuzz -DSF_FUZZ=ON -DSF_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
//   cmake --build build-fuzz --target fuzz_tokjson
//   mkdir -p /tmp/corpus && build-fuzz/tests/fuzz_tokjson /tmp/corpus tests/fuzz/corpus/tokjson
//   -max_total_time=60
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "tokjson.h" // defines: TokJson, tokjson_load, tokjson_encode, tokjson_decode, tokjson_label

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_tokjson: broken promise: %s\n", #x);                                             \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

static const char *const NAMES[4] = {"llama3", "qwen3", "smollm2", "llama2"};

static const TokJson *committed(int k) {
  static TokJson t[4];
  static int loaded[4];
  if (!loaded[k]) {
    const char *tests = getenv("SF_TEST_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/ref/tokjson/%s.json.gz", tests ? tests : "tests", NAMES[k]);
    gzFile f = gzopen(path, "rb");
    size_t cap = 1 << 24, n = 0;
    char *buf = f ? malloc(cap) : NULL;
    int got;
    while (buf && (got = gzread(f, buf + n, (unsigned)(cap - n))) > 0)
      if ((n += (size_t)got) == cap) buf = realloc(buf, cap *= 2);
    if (f) gzclose(f);
    Err err = {0};
    if (!buf || !tokjson_load(&t[k], buf, n, path, &err)) {
      fprintf(stderr, "fuzz_tokjson: %s: %s (run from the repository root, or set SF_TEST_DIR)\n", path,
              err.msg);
      abort();
    }
    free(buf);
    loaded[k] = 1;
  }
  return &t[k];
}

// Encodes text with t and checks the promises of tokjson.h; round_trip: decoding gives it back.
static void check_text(const TokJson *t, const char *text, size_t len, bool special, bool round_trip) {
  int *ids, n;
  Err err = {0};
  PROMISE(tokjson_encode(t, text, len, false, special, &ids, &n, &err));
  PROMISE(ids != NULL && n >= 0);
  for (int i = 0; i < n; i++) PROMISE(ids[i] >= 0 && ids[i] < t->n_vocab);
  size_t back_len;
  char *back = tokjson_decode(t, ids, n, false, &back_len);
  PROMISE(back && strlen(back) <= back_len);
  if (round_trip) PROMISE(back_len == len && memcmp(back, text, len) == 0);
  free(back);
  for (int i = 0; i < n && i < 64; i++) {
    char label[48];
    size_t k = tokjson_label(t, ids[i], label, sizeof label);
    PROMISE(k < sizeof label && strlen(label) == k && !strchr(label, '\n'));
  }
  free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  const char *in = (const char *)data + 1;
  size_t n = size - 1;
  if (data[0] % 4 != 3) {
    int k = data[0] / 4 % 4;
    bool special = data[0] & 16;
    check_text(committed(k), in, n, special, k == 0 || k == 2);
    return 0;
  }
  TokJson t;
  Err err = {0};
  if (!tokjson_load(&t, in, n, "tokenizer.json", &err)) {
    PROMISE(err.msg[0] && !strchr(err.msg, '\n'));
    PROMISE(t.tokens == NULL && t.pair_keys == NULL && t.added == NULL && t.n_vocab == 0);
    return 0;
  }
  PROMISE(t.n_vocab >= 1);
  check_text(&t, "The cat walks by the bank", 25, true, false);
  check_text(&t, in, n < 4096 ? n : 4096, true, false);
  int some[4] = {0, t.n_vocab - 1, t.n_vocab / 2, -1};
  size_t len;
  char *text = tokjson_decode(&t, some, 4, true, &len);
  PROMISE(text != NULL);
  free(text);
  tokjson_free(&t);
  return 0;
}
