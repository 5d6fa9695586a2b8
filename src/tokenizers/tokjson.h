// tokjson.h -- the Hugging Face tokenizers file, tokenizer.json, for its BPE models: byte-level
// (GPT-2, Llama 3, Qwen 2/3, SmolLM2) and SentencePiece-style (Llama 2, TinyLlama, Mistral).
//
// Encoding follows the Rust library step by step, and gives its ids (tests/ref/tokjson, made by
// tests/gen_tokjson_ref.js with the library and its JavaScript port):
//  1. added_tokens are found first, in the raw text (leftmost, then longest; lstrip/rstrip take the
//     white space beside them): each is its id, the text between them goes on alone. A special one
//     is text like any other when the caller says so (tokjson_encode's parse_special false).
//  2. the normalizer, on each piece between them: NFC, NFD, Prepend "▁", Replace of a string, or a
//     Sequence of these (Llama 2: Prepend "▁" then Replace " " -> "▁").
//  3. the pre-tokenizer cuts the piece into words: Split by one of the known patterns, which the
//     file carries as a regular expression and this reader recognises by its exact text --
//        gpt2    's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//        llama3  (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//        ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ qwen2   the same with \p{N} for \p{N}{1,3} (one
//        digit a word)
//     matched by hand-written code over Unicode's categories (unicode.h), with \s as the library's
//     regex engine (Oniguruma) has it: \t..\r, U+0085 and the categories Zs, Zl, Zp; ByteLevel
//     (GPT-2's pattern when use_regex, a space before a word that has none when add_prefix_space,
//     then every byte written in GPT-2's byte alphabet, bpe.h); Digits (every number character,
//     Unicode's N as Rust's is_numeric, its own word or runs of them); Metaspace (" " -> "▁", "▁"
//     prepended always or on the text's first piece, then cut before every "▁" when split); or a
//     Sequence of these. Any other pattern or type is refused in one line.
//  4. the BPE model on each word: its characters (bytes in the byte alphabet) as tokens, a
//     character without one as its bytes' <0xXX> tokens (byte_fallback) or unk_token (fuse_unk:
//     one for a run); ignore_merges: a word that is a token is that token; then the adjacent pair of
//     lowest merge rank (the leftmost of equals) is merged, again and again.
//  5. the post-processor's TemplateProcessing: the special tokens before and after $A (BOS) when
//     the caller asks for them (add_special).
// Text that is not UTF-8 (which the library never sees) is encoded byte by byte: each invalid byte
// is a character of its own, neither letter, number nor space, that NFC leaves alone.
// Decoding: the ByteLevel decoder (the byte alphabet back to bytes), or the SentencePiece chain
// (Replace "▁" -> " ", ByteFallback, Fuse, Strip of leading spaces; or Metaspace: "▁" -> " ", and
// dropped from the first token); the bytes are returned as they are (no U+FFFD for a cut character).
//
// A TokJson owns all its memory (tokjson_free); encoding does not change it.
//
//     TokJson t; Err err = {0};
//     if (!tokjson_load_file(&t, "SmolLM2-135M/tokenizer.json", &err)) { puts(err.msg); return 2; }
//     int *ids, n;
//     if (tokjson_encode(&t, "Hello", 5, true, true, &ids, &n, &err)) ...  // free(ids)
//     char *text = tokjson_decode(&t, ids, n, true, NULL);                  // free(text)
//     tokjson_free(&t);
#ifndef SF_TOKJSON_H
#define SF_TOKJSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"    // defines: Err
#include "pretok.h" // defines: PretokPattern
#include "strtab.h" // defines: StrTab

#define TOKJSON_MAX_FILE (64u << 20) // a larger tokenizer.json is refused (Qwen 3's is 11 MB)

// One pre-tokenizer step (step 3 above).
typedef struct {
  enum { TJ_PRE_SPLIT, TJ_PRE_BYTELEVEL, TJ_PRE_DIGITS, TJ_PRE_METASPACE } kind;
  PretokPattern pattern; // SPLIT; BYTELEVEL: PRETOK_GPT2 when use_regex, else 0
  bool prefix_space;     // BYTELEVEL add_prefix_space
  bool individual;       // DIGITS individual_digits
  int prepend;           // METASPACE: 0 never, 1 first, 2 always
  bool split;            // METASPACE split
} TokJsonPre;

// One normalizer step (step 2).
typedef struct {
  enum { TJ_NORM_NFC, TJ_NORM_NFD, TJ_NORM_PREPEND, TJ_NORM_REPLACE } kind;
  char *from, *to; // PREPEND: to; REPLACE: from -> to
} TokJsonNorm;

typedef struct {
  char *content; // as in the file
  int len, id;
  bool special, lstrip, rstrip;
} TokJsonAdded;

typedef struct {
  int n_vocab; // V: one more than the largest id (model vocabulary and added tokens)
  char *
      *tokens; // [V] each id's token as the file writes it ("Ġcat", "▁the", "<0x0A>"), NULL for an unused id
  int *token_lens; // [V]
  bool *special;   // [V] an added token marked special (skipped by decoding when asked)
  char *block;     // the model vocabulary's strings
  StrTab index;    // model vocabulary: token -> id
  int n_merges;
  uint64_t *pair_keys; // [pair_cap] (left << 32 | right) + 1, 0 empty
  int *pair_rank, *pair_id;
  size_t pair_cap;
  bool byte_level;     // a ByteLevel pre-tokenizer: words are written in GPT-2's byte alphabet
  int byte_id[256];    // byte level: the id of each byte's character, -1 when the vocabulary lacks it
  int fallback[256];   // byte_fallback: the id of <0xXX>, -1 without byte_fallback
  bool ignore_merges;  // a word that is a token is that token
  bool fuse_unk;       // one unk for a run of unknown characters
  int unk;             // unk_token's id, or -1
  TokJsonNorm norm[8]; // the normalizer's steps, in order
  int n_norm;
  TokJsonPre pre[8]; // the pre-tokenizer's steps, in order
  int n_pre;
  char meta[8]; // the Metaspace pre-tokenizer's replacement ("▁"), or ""

  TokJsonAdded *added; // [n_added] longest first
  int n_added;
  bool added_first[256]; // the bytes an added token starts with (the others are passed over quickly)
  int bos[4], n_bos, eos[4], n_eos; // TemplateProcessing's special tokens before and after $A
  bool dec_bytelevel;               // decoder: ByteLevel, else the SentencePiece chain
  char *dec_space;                  // SentencePiece chain: the string written for a space ("▁"), or NULL
  bool dec_fallback;                // <0xXX> tokens decode to their byte
  int dec_strip;                    // leading spaces removed from the decoded text
  bool dec_meta;                    // Metaspace decoder: the first token's dec_space are dropped, not spaces
} TokJson;

// Reads a tokenizer.json from memory; name is the file's name for messages. On failure t is empty
// and err holds one line: "NAME: what is wrong: how to fix it".
bool tokjson_load(TokJson *t, const char *json, size_t len, const char *name, Err *err);
// Reads a file; a folder means its tokenizer.json (a hub folder).
bool tokjson_load_file(TokJson *t, const char *path, Err *err);
void tokjson_free(TokJson *t);

// A SentencePiece BPE vocabulary as GGUF writes it (tokenizer.ggml.model = llama): tokens, their
// scores and types (llama.cpp's LLAMA_TOKEN_TYPE_*). tokjson_from_spm makes it a TokJson that
// encodes as llama.cpp's SentencePiece tokenizer does (tokjson_spm.c says how): merges by score,
// CONTROL/UNKNOWN/USER_DEFINED tokens matched first, byte fallback through the BYTE tokens <0xHH>.
enum {
  TJ_TOKEN_NORMAL = 1,
  TJ_TOKEN_UNKNOWN = 2,
  TJ_TOKEN_CONTROL = 3,
  TJ_TOKEN_USER_DEFINED = 4,
  TJ_TOKEN_UNUSED = 5, // kept as a normal token (llama.cpp still merges into it)
  TJ_TOKEN_BYTE = 6,
};
#define TOKJSON_SPM_FIX "convert the model again with llama.cpp's convert_hf_to_gguf.py"

typedef struct {
  const char *name;          // the source, for messages ("model.gguf (tokenizer.ggml.*)")
  int n;                     // V
  const char *const *tokens; // [V] not NUL-terminated
  const size_t *lens;        // [V]
  const float *scores;       // [V], or NULL (every score 0)
  const int *types;          // [V] TJ_TOKEN_*, or NULL (all normal)
  int bos, eos, unk;         // ids, -1 when none (unk: for characters without a token when there
                             // are no byte tokens)
  bool add_bos, add_eos, add_space_prefix;
} TokJsonSpm;

// False with one line in err ("NAME: what is wrong: how to fix it") when a token is empty, holds a
// 0 byte or is there twice, a type is not 1..6, a BYTE token is not <0xHH>, a score is NaN, a byte
// token of the 256 is missing while others are there, or BOS/EOS/unk is not a token.
bool tokjson_from_spm(TokJson *t, const TokJsonSpm *spm, Err *err);

// Encodes text[0..len) (any bytes) into a malloc'd *ids (free it; not NULL when *n == 0).
// add_special: the post-processor's tokens (BOS) around the text. parse_special: special added
// tokens written in the text are their ids (the library's default); false: they are text.
// False only when memory runs out.
bool tokjson_encode(const TokJson *t, const char *text, size_t len, bool add_special, bool parse_special,
                    int **ids, int *n, Err *err);
// The text of ids (malloc'd, NUL added, its length in *len), special tokens left out when
// skip_special. An id outside 0..V-1 or unused is left out.
char *tokjson_decode(const TokJson *t, const int *ids, int n, bool skip_special, size_t *len);
// The token of id as the file writes it, or NULL when id is outside 0..V-1 or unused.
const char *tokjson_token(const TokJson *t, int id);
// The id of a token as the file writes it (an added token or the model's), or -1.
int tokjson_find(const TokJson *t, const char *token);
// id as a label for the views: its decoded text with a space as '␣', a newline '↵', a tab '⇥',
// other control bytes and bytes that are not UTF-8 as \xNN ("<unused N>" for an unused id); an
// added token as itself. NUL-terminated in out[0..cap) (cut between characters). Returns the length.
size_t tokjson_label(const TokJson *t, int id, char *out, size_t cap);

#endif
