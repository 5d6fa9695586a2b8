// fuzz_tokenizer.c -- libFuzzer target for the word tokenizer and the vocabulary parser.
//
// The input's first byte picks the part under test, the rest is its text:
//   even: the rest is a sentence, tokenized against a fixed vocabulary (the bank model's words)
//         and against a vocabulary made from the sentence itself (vocab_from_text, as --random
//         models do); every token must be a word of the text in lowercase, its id in range, an
//         unknown word id 0, and tokenize_words must agree with tokens_from_text on the count;
//   odd:  the rest is a vocabulary file's lines (vocab_from_lines, as model metadata holds it):
//         accepted vocabularies start with "<unk>", hold no duplicate, and vocab_to_lines gives
//         the same lines back.
// A rejected input must come with a one-line message. Replayed by ctest (replay_tokenizer).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokenizer.h" // defines: Vocab, Tokens, vocab_from_lines, tokens_from_text, tokenize_words

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_tokenizer: broken promise: %s\n", #x);                                           \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

enum { MAX_WORDS = 512 };

static void check_tokens(const Vocab *v, const char *text) {
  Err err = {0};
  Tokens t;
  if (!tokens_from_text(&t, v, text, MAX_WORDS, &err)) {
    PROMISE(err.msg[0] && !strchr(err.msg, '\n'));
    return;
  }
  PROMISE(t.n >= 1 && t.n <= MAX_WORDS);
  static char words[MAX_WORDS + 1][TOKEN_MAX_BYTES + 1];
  int n = tokenize_words(text, words, MAX_WORDS + 1);
  PROMISE(n == t.n);
  for (int i = 0; i < t.n; i++) {
    PROMISE(t.ids[i] >= 0 && t.ids[i] < v->n);
    PROMISE(t.unknown[i] == (t.ids[i] == 0));
    PROMISE(t.words[i][0] != 0 && strlen(t.words[i]) <= TOKEN_MAX_BYTES);
    for (const char *p = t.words[i]; *p; p++) PROMISE(!(*p >= 'A' && *p <= 'Z'));
    if (!t.unknown[i]) PROMISE(!strcmp(v->words[t.ids[i]], t.words[i]));
    PROMISE(!strcmp(words[i], t.words[i]));
  }
  tokens_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 8192) return 0;
  char *text = malloc(size);
  if (!text) return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = 0; // the text ends at its first NUL
  Err err = {0};
  Vocab v;
  if ((data[0] & 1) == 0) {
    static Vocab bank;
    static int ready;
    if (!ready) {
      ready = vocab_from_lines(&bank, "<unk>\nthe\ncat\nwalks\nby\nbank\nriver\nmoney\ncafé\n", &err);
      PROMISE(ready);
    }
    check_tokens(&bank, text);
    if (vocab_from_text(&v, text, &err)) {
      PROMISE(v.n >= 1 && !strcmp(v.words[0], "<unk>"));
      check_tokens(&v, text);
      vocab_free(&v);
    } else {
      PROMISE(err.msg[0] != 0);
    }
  } else if (vocab_from_lines(&v, text, &err)) {
    PROMISE(v.n >= 1 && !strcmp(v.words[0], "<unk>"));
    for (int i = 1; i < v.n; i++) PROMISE(vocab_find(&v, v.words[i]) == i);
    char *lines = vocab_to_lines(&v);
    PROMISE(lines != NULL);
    Vocab again;
    PROMISE(vocab_from_lines(&again, lines, &err) && again.n == v.n);
    for (int i = 0; i < v.n; i++) PROMISE(!strcmp(again.words[i], v.words[i]));
    vocab_free(&again);
    free(lines);
    vocab_free(&v);
  } else {
    PROMISE(err.msg[0] != 0 && !strchr(err.msg, '\n'));
  }
  free(text);
  return 0;
}
