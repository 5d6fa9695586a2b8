// fuzz_bpe.c -- libFuzzer target for GPT-2's byte-level BPE (core/bpe.h).
//
// The first byte picks the mode; the rest is the input.
//   first byte % 4 != 3: the input is text, encoded with GPT-2's committed vocabulary
//     (tests/ref/gpt2, loaded once; SF_TEST_DIR names the tests folder, "tests" by default). Every
//     id is in range, there are at most as many ids as bytes, decoding gives the input back byte
//     for byte, and every id's label is one line.
//   first byte % 4 == 3: the input is a vocab.json, a NUL byte, then a merges.txt. A rejected pair
//     comes with a one-line message and leaves nothing allocated; an accepted one encodes a short
//     text and its own merges text, and decodes them back. When the first byte also has bit 2 (4),
//     the vocab.json given is the end of one that starts with the 256 byte tokens (ids 0-255):
//     `"ab": 256}` is then a whole vocabulary, so short inputs reach the merges.
// Any crash, sanitizer report or broken promise (__builtin_trap) is a bug.
//
// Build and run (clang):
//   CC=clang cmake -S . -B build-fuzz -DSF_FUZZ=ON -DSF_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
//   cmake --build build-fuzz --target fuzz_bpe
//   mkdir -p /tmp/corpus && build-fuzz/tests/fuzz_bpe /tmp/corpus tests/fuzz/corpus/bpe -max_total_time=60
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe.h" // defines: Bpe, bpe_load, bpe_encode, bpe_decode, bpe_label

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_bpe: broken promise: %s\n", #x);                                                 \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

static const Bpe *gpt2(void) {
  static Bpe b;
  static int loaded;
  if (!loaded) {
    const char *tests = getenv("SF_TEST_DIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/ref/gpt2", tests ? tests : "tests");
    Err err = {0};
    if (!bpe_load_dir(&b, dir, &err)) {
      fprintf(stderr, "fuzz_bpe: %s (run from the repository root, or set SF_TEST_DIR)\n", err.msg);
      abort();
    }
    loaded = 1;
  }
  return &b;
}

// Encodes text with b and checks the promises of bpe.h.
static void check_text(const Bpe *b, const char *text, size_t len, int labels) {
  int *ids, n;
  Err err = {0};
  PROMISE(bpe_encode(b, text, len, &ids, &n, &err));
  PROMISE(ids != NULL && n >= 0 && (size_t)n <= len);
  for (int i = 0; i < n; i++) PROMISE(ids[i] >= 0 && ids[i] < b->n_vocab);
  size_t back_len;
  char *back = bpe_decode(b, ids, n, &back_len);
  PROMISE(back && back_len == len && memcmp(back, text, len) == 0);
  free(back);
  for (int i = 0; labels && i < n; i++) {
    char label[32];
    size_t k = bpe_label(b, ids[i], label, sizeof label);
    PROMISE(k < sizeof label && strlen(label) == k && !strchr(label, '\n'));
  }
  free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  const char *in = (const char *)data + 1;
  size_t n = size - 1;
  if (data[0] % 4 != 3) {
    check_text(gpt2(), in, n, 1);
    return 0;
  }
  const char *nul = memchr(in, 0, n);
  size_t vocab_len = nul ? (size_t)(nul - in) : n;
  const char *merges = nul ? nul + 1 : in + n;
  size_t merges_len = nul ? n - vocab_len - 1 : 0;
  static char vocab[1 << 16];
  static size_t prefix;
  if (!prefix) { // the 256 byte tokens, in GPT-2's byte alphabet
    prefix = (size_t)snprintf(vocab, sizeof vocab, "{");
    for (int c = 0, k = 0; c < 256; c++) {
      int printable = (c >= 33 && c <= 126) || (c >= 161 && c <= 172) || c >= 174;
      prefix += (size_t)snprintf(vocab + prefix, sizeof vocab - prefix, "\"\\u%04x\": %d, ",
                                 printable ? c : 256 + k++, c);
    }
  }
  const char *v = in;
  if (data[0] & 4) {
    if (vocab_len > sizeof vocab - prefix) return 0;
    memcpy(vocab + prefix, in, vocab_len);
    v = vocab, vocab_len += prefix;
  }
  Bpe b;
  Err err = {0};
  if (!bpe_load(&b, v, vocab_len, "vocab.json", merges, merges_len, "merges.txt", &err)) {
    PROMISE(err.msg[0] && !strchr(err.msg, '\n'));
    PROMISE(b.tokens == NULL && b.pair_keys == NULL && b.n_vocab == 0);
    return 0;
  }
  PROMISE(b.n_vocab >= 256);
  check_text(&b, "The cat walks by the bank", 25, 1);
  check_text(&b, merges, merges_len, 0);
  bpe_free(&b);
  return 0;
}
