// tokenizer.h -- the vocabulary and the word tokenizer of DESIGN.md.
//
// Tokenizing: ASCII A-Z are lowercased; a token is a maximal run of bytes that are neither ASCII
// whitespace nor ASCII punctuation (C isspace/ispunct in the "C" locale), so punctuation
// separates words and is dropped; UTF-8 bytes stay inside tokens. A word not in the vocabulary
// gets id 0, which is always "<unk>".
//
// A Vocab owns its words (one block); vocab_free releases it. Tokens own their text too.
//
//     Vocab v; vocab_from_lines(&v, "<unk>\nthe\ncat", &err);
//     Tokens t; tokens_from_text(&t, &v, "The cat!", 0);  // t.n == 2, t.ids == {1, 2}
//     tokens_free(&t); vocab_free(&v);
#ifndef SF_TOKENIZER_H
#define SF_TOKENIZER_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h" // defines: Err

#define VOCAB_UNK "<unk>"
#define TOKEN_MAX_BYTES 63 // longer words are cut (at a UTF-8 boundary) before lookup

typedef struct {
  char **words; // words[id], words[0] == "<unk>"
  int n;
  char *block; // storage of all words
  int *order;  // ids sorted by word: vocab_find searches by halves (a 50 000-word vocabulary)
} Vocab;

typedef struct {
  int n;         // L, the number of tokens
  int *ids;      // [L] vocabulary ids (0 for unknown words)
  char **words;  // [L] the words as typed (lowercased), before <unk> replacement
  bool *unknown; // [L] true where the word was not in the vocabulary
  char *block;
} Tokens;

// Parses newline-separated words; the first must be "<unk>", none empty, repeated, not UTF-8 or
// holding a control character.
bool vocab_from_lines(Vocab *v, const char *lines, Err *err);
// "<unk>" followed by the distinct words of text in order of first appearance.
bool vocab_from_text(Vocab *v, const char *text, Err *err);
// Newline-joined words (malloc'd), the inverse of vocab_from_lines.
char *vocab_to_lines(const Vocab *v);
int vocab_find(const Vocab *v, const char *word); // id, or -1
// True when w[0..n) can be a line of vocab_from_lines: not empty, UTF-8, no control character
// (nor a newline or a 0 byte). The loaders write "<|unused N|>" for a token that cannot.
bool vocab_word_ok(const char *w, size_t n);
void vocab_free(Vocab *v);

// Splits text into lowercase words (no vocabulary): fills words, returns the count, at most max.
int tokenize_words(const char *text, char words[][TOKEN_MAX_BYTES + 1], int max);
// Tokenizes text against v. max_tokens <= 0 means no limit. Returns false with a message when
// the text is not UTF-8, has no words or more than max_tokens.
bool tokens_from_text(Tokens *t, const Vocab *v, const char *text, int max_tokens, Err *err);
void tokens_free(Tokens *t);
// The word shown for token i: the vocabulary word, i.e. "<unk>" for unknown words.
const char *tokens_label(const Tokens *t, const Vocab *v, int i);

#endif
