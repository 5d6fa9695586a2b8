// bpe.h -- GPT-2's byte-level BPE tokenizer, from the hub's vocab.json and merges.txt.
//
// vocab.json is a JSON object token -> id (ids 0..V-1, each once); merges.txt is an optional
// "#version" line, then one merge "a b" a line, by rank (the first line after the version is rank 0;
// a pair listed twice keeps its later rank, as Python's dict). Tokens are written in GPT-2's byte
// alphabet: each byte is one printable character (bytes_to_unicode: '!'..'~', '¡'..'¬', '®'..'ÿ'
// stand for themselves, the other 68 bytes for U+0100.., so a space is 'Ġ', a newline 'Ċ').
// Every byte's character must be a token, and both halves of every merge and their join too (as
// the hub's tokenizers demand), so encoding never meets an unknown symbol.
//
// Encoding (the same ids as OpenAI's encoder and npm's gpt-3-encoder): the text is cut by GPT-2's
// pattern  's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+  with \s as
// JavaScript's (the reference's) white space: \t \n \v \f \r, space, U+00A0, U+1680, U+2000-200A,
// U+2028, U+2029, U+202F, U+205F, U+3000 and U+FEFF; letters and numbers by Unicode 15 (utf8proc).
// Each piece's bytes are merged by rank: the adjacent pair of lowest rank is merged everywhere,
// left to right, until no pair has a rank. Bytes that are not valid UTF-8 are kept, each one a
// character of its own that is neither letter, number nor space (so it joins a punctuation run):
// every input byte is encoded, and bpe_decode gives the input back byte for byte.
//
// A Bpe owns all its memory; bpe_free releases it. Encoding does not change the Bpe (it may be
// shared between threads).
//
//     Bpe b; Err err = {0};
//     if (!bpe_load_dir(&b, "gpt2", &err)) { fprintf(stderr, "%s\n", err.msg); return 2; }
//     int *ids, n;
//     if (bpe_encode(&b, "The cat", 7, &ids, &n, &err)) ...  // {464, 3797}: "The", "Ġcat"
//     free(ids); bpe_free(&b);
#ifndef SF_BPE_H
#define SF_BPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"    // defines: Err
#include "strtab.h" // defines: StrTab

typedef struct {
  int n_vocab;         // V
  char **tokens;       // [V] token strings in the byte alphabet ("Ġthe"), NUL-terminated
  int *token_lens;     // [V] their byte lengths
  char *block;         // storage of the token strings
  StrTab index;        // token -> id
  int byte_id[256];    // the id of each byte's one-character token
  int n_merges;        // merge lines read (ranks 0..n_merges-1)
  uint64_t *pair_keys; // [pair_cap] open addressing: (left id << 32 | right id) + 1, 0 = empty
  int *pair_rank;      // [pair_cap]
  int *pair_id;        // [pair_cap] the id of the joined token
  size_t pair_cap;
} Bpe;

// Loads from memory: vocab_json[0..vocab_len) and merges[0..merges_len). The names are the files'
// names for messages ("gpt2/vocab.json"). On failure b is empty and err holds one line:
// "NAME:LINE: what is wrong: how to fix it".
bool bpe_load(Bpe *b, const char *vocab_json, size_t vocab_len, const char *vocab_name, const char *merges,
              size_t merges_len, const char *merges_name, Err *err);
// Loads DIR/vocab.json and DIR/merges.txt (the hub's names).
bool bpe_load_dir(Bpe *b, const char *dir, Err *err);
void bpe_free(Bpe *b);

// Encodes text[0..len) (any bytes) into a malloc'd array *ids of *n ids (free it; not NULL even when
// *n == 0). False only when memory runs out.
bool bpe_encode(const Bpe *b, const char *text, size_t len, int **ids, int *n, Err *err);
// The bytes that ids stand for (malloc'd, NUL added, *len without it; the bytes may hold a NUL or cut a
// character when the ids do). Every id must be in 0..V-1.
char *bpe_decode(const Bpe *b, const int *ids, int n, size_t *len);
// The token id as a label, NUL-terminated in out[0..cap) (cut between characters when too long):
// its text with a space shown as '␣', a newline as '↵', a tab as '⇥', other control bytes and
// bytes that are not UTF-8 (half an emoji) as \xNN. Returns the label's byte length.
size_t bpe_label(const Bpe *b, int id, char *out, size_t cap);
// The same label of any bytes[0..n) (tokjson_label's too): a space shown as '␣' only when mark_space.
size_t bpe_label_bytes(const char *bytes, size_t n, bool mark_space, char *out, size_t cap);
// The id of a token written in the byte alphabet ("Ġcat"), or -1.
int bpe_find(const Bpe *b, const char *token);

// The byte alphabet (also tokenizer.json's ByteLevel, tokjson.h): the code point that byte b
// (0..255) is written as, and the byte that code point cp stands for (-1 when none).
int32_t bpe_byte_char(int b);
int bpe_char_byte(int32_t cp);

#endif
