// fuzz_wordpiece.c -- libFuzzer target for BERT's WordPiece (core/wordpiece.h).
//
// The first byte picks the mode; the rest is the input.
//   first byte % 4 != 3: the input is text, encoded with bert-base-uncased's committed vocabulary
//     (tests/ref/bert, loaded once, lowercasing; SF_TEST_DIR names the tests folder, "tests" by
//     default; cased when the first byte is odd). The ids start with [CLS], end with [SEP] and are
//     all in range.
//   first byte % 4 == 3: the input is a vocab.txt. A rejected one comes with a one-line message and
//     leaves nothing allocated; an accepted one encodes a short text and its own text.
// Any crash, sanitizer report or broken promise (__builtin_trap) is a bug.
//
// Build and run (clang): as fuzz_bpe.c, with the target fuzz_wordpiece and tests/fuzz/corpus/wordpiece.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wordpiece.h" // defines: WordPiece, wp_load, wp_encode

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_wordpiece: broken promise: %s\n", #x);                                           \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

static const WordPiece *bert(int lower) {
  static WordPiece w[2];
  static int loaded[2];
  if (!loaded[lower]) {
    const char *tests = getenv("SF_TEST_DIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/ref/bert", tests ? tests : "tests");
    Err err = {0};
    if (!wp_load_dir(&w[lower], dir, lower, &err)) {
      fprintf(stderr, "fuzz_wordpiece: %s (run from the repository root, or set SF_TEST_DIR)\n", err.msg);
      abort();
    }
    loaded[lower] = 1;
  }
  return &w[lower];
}

static void check_text(const WordPiece *w, const char *text, size_t len) {
  int *ids, n;
  Err err = {0};
  PROMISE(wp_encode(w, text, len, &ids, &n, &err));
  PROMISE(n >= 2 && ids[0] == w->cls && ids[n - 1] == w->sep);
  for (int i = 0; i < n; i++) PROMISE(ids[i] >= 0 && ids[i] < w->n && wp_token(w, ids[i]) != NULL);
  free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  const char *in = (const char *)data + 1;
  size_t n = size - 1;
  if (data[0] % 4 != 3) {
    check_text(bert(!(data[0] & 1)), in, n);
    return 0;
  }
  WordPiece w;
  Err err = {0};
  if (!wp_load(&w, in, n, "vocab.txt", data[0] & 4, &err)) {
    PROMISE(err.msg[0] && !strchr(err.msg, '\n'));
    PROMISE(w.tokens == NULL && w.n == 0);
    return 0;
  }
  PROMISE(w.unk >= 0 && w.cls >= 0 && w.sep >= 0);
  check_text(&w, "The cat walks by the [MASK].", 28);
  check_text(&w, in, n);
  wp_free(&w);
  return 0;
}
