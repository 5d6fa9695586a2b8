// pretok.h -- the split patterns of tokenizer.json's pre-tokenizers (tokjson.h), written by hand:
// where the regular expression would cut a word, without a regular expression engine.
//
// Each function cuts s[0..n) into consecutive words and appends the end offset of each word to
// ends (the last is n; nothing for n == 0). Invalid UTF-8 bytes are characters of their own that
// are neither letter, number nor space. \s is the Rust library's (Oniguruma's): \t..\r, U+0085 and
// the categories Zs, Zl, Zp (not U+FEFF, which JavaScript's \s has).
//
//     Ids ends = {0};
//     pretok_split(PRETOK_LLAMA3, "Hello world", 11, &ends);   // ends.v = {5, 11}: "Hello", " world"
#ifndef SF_PRETOK_H
#define SF_PRETOK_H

#include <stdbool.h>
#include <stddef.h>

#include "ids.h" // defines: Ids

typedef enum {
  PRETOK_GPT2 = 1, // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  PRETOK_LLAMA3,   // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
                   // ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
  PRETOK_QWEN2,    // the same with \p{N} (one number character a word)
} PretokPattern;

// The pattern whose regular expression is exactly re (as tokenizer.json writes it, unescaped), or 0.
PretokPattern pretok_pattern(const char *re);
// Cuts by pattern p. False only when memory runs out. (Offsets are ints: s is under 2 GB.)
bool pretok_split(PretokPattern p, const char *s, size_t n, Ids *ends);
// The Digits pre-tokenizer: every number character (Unicode's N) a word of its own when
// individual, else runs of them; the runs of other characters between are words too.
bool pretok_digits(bool individual, const char *s, size_t n, Ids *ends);

#endif
