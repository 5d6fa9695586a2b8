// model_tokens.h -- text to tokens with the model's own tokenizer.
//
// Every place where text becomes tokens calls model_tokenize, which dispatches on the model's
// tokenizer (m->tok_kind, from metadata "tokenizer"):
//   words      the word tokenizer of tokenizer.h (the default; today's models)
//   chars      every character that is not ASCII white space is a token of its own, looked up
//              as typed (no lowercasing) in the model's vocabulary, "<unk>" (id 0) when absent
//              (metadata tokenizer=chars: the add model, "12+34=")
//   bpe        GPT-2's byte-level BPE (bpe.h), from a hub folder's vocab.json + merges.txt
//   wordpiece  BERT's WordPiece (wordpiece.h), from a hub folder's vocab.txt; [CLS] ... [SEP]
//   tokenizer.json  a Hugging Face tokenizer.json's BPE (tokjson.h: Llama, Qwen, SmolLM, Mistral),
//              from a hub folder: model_tokenizer_from_json makes it; the file's special tokens
//              (BOS) are added and those written in the text are matched
// The hub's two are objects the Model owns (m->tokenizer, made by the hub loader, released by
// model_free through model_tokenizer_free). Their vocabularies become m->vocab as labels: the
// token as the tokenizer writes it with its space made visible ("␣cat", GPT-2) or its "##" kept
// ("##ing", BERT); Tokens.words holds the same labels and Tokens.unknown marks BERT's [UNK].
//
//     Tokens t; Err err = {0};
//     if (!model_tokenize(m, "The cat walks", 64, &t, &err)) ...  // t.n, t.ids, t.words
//     tokens_free(&t);
#ifndef SF_MODEL_TOKENS_H
#define SF_MODEL_TOKENS_H

#include <stdbool.h>

#include "bpe.h"       // defines: Bpe
#include "err.h"       // defines: Err
#include "tokenizer.h" // defines: Tokens, Vocab
#include "tokjson.h"   // defines: TokJson
#include "wordpiece.h" // defines: WordPiece

struct Model; // model.h

typedef struct ModelTokenizer {
  int kind;     // TOK_BPE, TOK_WORDPIECE or TOK_TOKJSON (model.h's ModelTokenizerKind)
  Bpe bpe;      // kind == TOK_BPE
  WordPiece wp; // kind == TOK_WORDPIECE
  TokJson tj;   // kind == TOK_TOKJSON
} ModelTokenizer;

// A tokenizer.json (path: the file, or a hub folder that holds it) as a ModelTokenizer of kind
// TOK_TOKJSON (malloc'd: model_tokenizer_free), or NULL with one line in err. The hub loader sets
// m->tok_kind = TOK_TOKJSON, m->tokenizer to it, and m->vocab to model_tokenizer_labels's labels
// (as many as the embedding has rows).
ModelTokenizer *model_tokenizer_from_json(const char *path, Err *err);

// Tokenizes text for m. A bpe or wordpiece model needs its m->tokenizer (a model saved from a hub
// folder into one file has none: refused in one line). max_tokens <= 0 means no limit.
// False with one line when the text is not UTF-8 (words, chars), gives no token, or more than max_tokens.
bool model_tokenize(const struct Model *m, const char *text, int max_tokens, Tokens *t, Err *err);
// The same for the target side of an encoder-decoder (m->tgt_vocab): characters for a chars
// model (the add model's "62"), else words.
bool model_tokenize_target(const struct Model *m, const char *text, int max_tokens, Tokens *t, Err *err);
// The labels of a hub tokenizer's ids 0..V-1 as a Vocab (labels may repeat: vocab_find finds one).
// A tokenizer.json's V is one more than its largest id; an unused id is labelled "<unused N>" (a
// model's embedding may have more rows than the tokenizer has ids: Qwen's 151 936 for 151 669).
bool model_tokenizer_vocab(const ModelTokenizer *tk, Vocab *v, Err *err);
// The same with at least rows labels for a tokenizer.json (the embedding's rows: Qwen 3's 151 936
// for its tokenizer's 151 669 ids), the ids past the tokenizer's labelled "<unused N>".
bool model_tokenizer_labels(const ModelTokenizer *tk, int rows, Vocab *v, Err *err);
void model_tokenizer_free(ModelTokenizer *tk); // frees tk itself too; NULL is fine

#endif
