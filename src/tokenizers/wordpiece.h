// wordpiece.h -- BERT's WordPiece tokenizer (transformers' BertTokenizer), from the hub's vocab.txt.
//
// vocab.txt holds one token a line; the line's index (from 0) is the token's id. Lines end with
// \n, \r\n or \r (Python reads the file with universal newlines); a token that appears twice takes
// the later line's index (the earlier id keeps its text for labels). [UNK], [CLS] and [SEP] must be
// there. The text must be valid UTF-8 (a vocabulary Python could read).
//
// Encoding, in BertTokenizer's order (do_lower_case as `lower`):
//   1. [PAD] [UNK] [CLS] [SEP] [MASK] are cut out of the raw text first, exactly and
//      case-sensitively ("[mask]" is "[", "mask", "]"), each one its own id;
//   2. NUL, U+FFFD and control and format characters (Cc, Cf, but not \t \n \r) are deleted; bytes
//      that are not UTF-8 count as U+FFFD, so they are deleted too; space, \t, \n, \r and Zs become
//      spaces; CJK ideographs get a space on each side; the text is put in NFC;
//   3. words split at white space (Python's str.split: Zs, and bidi classes WS, B, S);
//   4. with lower: each word lowercased (Σ at a word's end becomes ς, as Python's str.lower does),
//      then NFD with the nonspacing marks (Mn) dropped: "Crème" -> "creme";
//   5. every punctuation character (ASCII !-/ :-@ [-` {-~, and Unicode P*) becomes a word of its own;
//   6. a word of more than 100 characters is [UNK]; else greedy longest match from the left against
//      the vocabulary, later pieces written "##piece"; a word with no split at all is one [UNK];
//   7. [CLS] first and [SEP] last.
// Unicode categories and normalization are utf8proc's (Unicode 15).
//
// A WordPiece owns its memory; wp_free releases it. Encoding does not change it.
//
//     WordPiece w; Err err = {0};
//     if (!wp_load_dir(&w, "bert-base-uncased", true, &err)) { fprintf(stderr, "%s\n", err.msg); return 2; }
//     int *ids, n;
//     if (wp_encode(&w, "The cat walks", 13, &ids, &n, &err)) ...  // {101, 1996, 4937, 7365, 102}
//     free(ids); wp_free(&w);
#ifndef SF_WORDPIECE_H
#define SF_WORDPIECE_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"    // defines: Err
#include "strtab.h" // defines: StrTab

#define WP_MAX_WORD_CHARS 100 // longer words are [UNK] (BertTokenizer's max_input_chars_per_word)

typedef struct {
  int n;                        // V, the number of lines
  char **tokens;                // [V] each line's token, NUL-terminated
  char *block;                  // their storage
  StrTab index;                 // token -> id (the later line for a token listed twice)
  int unk, cls, sep, pad, mask; // ids of [UNK] [CLS] [SEP] [PAD] [MASK]; pad and mask -1 when absent
  bool lower;                   // lowercase and strip accents (an uncased model)
} WordPiece;

// Reads vocab.txt from text[0..len); name is the file's name for messages. On failure w is empty and
// err holds one line.
bool wp_load(WordPiece *w, const char *text, size_t len, const char *name, bool lower, Err *err);
// Reads DIR/vocab.txt.
bool wp_load_dir(WordPiece *w, const char *dir, bool lower, Err *err);
void wp_free(WordPiece *w);

// Encodes text[0..len) (any bytes) as [CLS] ... [SEP] into a malloc'd *ids of *n ids (free it).
// False only when memory runs out.
bool wp_encode(const WordPiece *w, const char *text, size_t len, int **ids, int *n, Err *err);
// The token of id as the vocabulary writes it ("##ing" for a continuation): the label to show.
const char *wp_token(const WordPiece *w, int id);

#endif
