// model_tokens.c -- see model_tokens.h.
#include "model_tokens.h"

#include <stdlib.h>
#include <string.h>

#include "model.h" // defines: Model
#include "utf8.h"  // defines: utf8_seq_len

// Fills t from n ids and their labels (label(ctx, id), copied); unknown[i] where ids[i] == unk.
static bool fill(Tokens *t, const int *ids, int n, const char *(*label)(const void *, int, char *, size_t),
                 const void *ctx, int unk, Err *err) {
  memset(t, 0, sizeof *t);
  if (n < 1) return err_set(err, "the sentence has no tokens");
  char buf[256];
  size_t total = 0;
  for (int i = 0; i < n; i++) total += strlen(label(ctx, ids[i], buf, sizeof buf)) + 1;
  t->ids = malloc(sizeof(int) * (size_t)n);
  t->words = malloc(sizeof(char *) * (size_t)n);
  t->unknown = malloc(sizeof(bool) * (size_t)n);
  t->block = malloc(total + 1);
  if (!t->ids || !t->words || !t->unknown || !t->block) {
    tokens_free(t);
    return err_set(err, "out of memory tokenizing the sentence");
  }
  char *p = t->block;
  for (int i = 0; i < n; i++) {
    const char *l = label(ctx, ids[i], buf, sizeof buf);
    size_t k = strlen(l) + 1;
    memcpy(p, l, k);
    t->ids[i] = ids[i], t->words[i] = p, t->unknown[i] = ids[i] == unk;
    p += k;
  }
  t->n = n;
  return true;
}

static const char *bpe_label_of(const void *ctx, int id, char *buf, size_t cap) {
  bpe_label(ctx, id, buf, cap);
  return buf;
}

static const char *tj_label_of(const void *ctx, int id, char *buf, size_t cap) {
  tokjson_label(ctx, id, buf, cap);
  return buf;
}

static const char *wp_label_of(const void *ctx, int id, char *buf, size_t cap) {
  (void)buf, (void)cap;
  return wp_token(ctx, id);
}

static bool count_ok(int n, int max_tokens, Err *err) {
  if (n == 0) return err_set(err, "the sentence has no tokens: type at least one word");
  if (max_tokens > 0 && n > max_tokens)
    return err_set(err, "the sentence has %d tokens; at most %d fit: shorten it", n, max_tokens);
  return true;
}

// Every non-space character a token; "<unk>" (0) for those not in the vocabulary. The words are
// the characters as typed (the label of an unknown one is still "<unk>", as with words).
static bool chars_tokenize(const Vocab *v, const char *text, int max_tokens, Tokens *t, Err *err) {
  memset(t, 0, sizeof *t);
  size_t len = strlen(text);
  int n = 0;
  for (size_t i = 0; i < len;) {
    int k = utf8_seq_len(text + i);
    if (k <= 0) return err_set(err, "the sentence is not valid UTF-8 (byte %zu): retype it", i + 1);
    unsigned char c = (unsigned char)text[i];
    n += !(c == ' ' || (c >= '\t' && c <= '\r'));
    i += (size_t)k;
  }
  if (!count_ok(n, max_tokens, err)) return false;
  t->ids = malloc(sizeof(int) * (size_t)n);
  t->words = malloc(sizeof(char *) * (size_t)n);
  t->unknown = malloc(sizeof(bool) * (size_t)n);
  t->block = malloc(len + (size_t)n + 1);
  if (!t->ids || !t->words || !t->unknown || !t->block) {
    tokens_free(t);
    return err_set(err, "out of memory tokenizing the sentence");
  }
  char *p = t->block;
  for (size_t i = 0; i < len;) {
    int k = utf8_seq_len(text + i);
    unsigned char c = (unsigned char)text[i];
    if (!(c == ' ' || (c >= '\t' && c <= '\r'))) {
      memcpy(p, text + i, (size_t)k);
      p[k] = 0;
      int id = vocab_find(v, p);
      t->ids[t->n] = id < 0 ? 0 : id, t->unknown[t->n] = id < 0, t->words[t->n] = p;
      t->n++;
      p += k + 1;
    }
    i += (size_t)k;
  }
  return true;
}

bool model_tokenize_target(const Model *m, const char *text, int max_tokens, Tokens *t, Err *err) {
  memset(t, 0, sizeof *t);
  if (m->tok_kind == TOK_CHARS) return chars_tokenize(&m->tgt_vocab, text, max_tokens, t, err);
  return tokens_from_text(t, &m->tgt_vocab, text, max_tokens, err);
}

bool model_tokenize(const Model *m, const char *text, int max_tokens, Tokens *t, Err *err) {
  memset(t, 0, sizeof *t);
  ModelTokenizerKind kind = m->tok_kind;
  const ModelTokenizer *tk = m->tokenizer;
  if (kind == TOK_CHARS) return chars_tokenize(&m->vocab, text, max_tokens, t, err);
  if (kind == TOK_WORDS) return tokens_from_text(t, &m->vocab, text, max_tokens, err);
  if (!tk || tk->kind != (int)kind) // a hub model saved into one file: its tokenizer stayed behind
    return err_set(err,
                   "the model's tokenizer is %s, whose files (%s) come with a hub folder: open the folder "
                   "(--model DIR) instead of a copy of its weights",
                   kind == TOK_BPE         ? "GPT-2's BPE"
                   : kind == TOK_WORDPIECE ? "BERT's WordPiece"
                                           : "a tokenizer.json",
                   kind == TOK_BPE         ? "vocab.json, merges.txt"
                   : kind == TOK_WORDPIECE ? "vocab.txt"
                                           : "tokenizer.json");
  int *ids = NULL, n = 0, extra = 0; // extra: the special tokens the tokenizer adds ([CLS] [SEP], BOS)
  bool ok;
  if (kind == TOK_BPE) {
    ok = bpe_encode(&tk->bpe, text, strlen(text), &ids, &n, err);
  } else if (kind == TOK_WORDPIECE) {
    ok = wp_encode(&tk->wp, text, strlen(text), &ids, &n, err), extra = 2;
  } else {
    ok = tokjson_encode(&tk->tj, text, strlen(text), true, true, &ids, &n, err);
    extra = tk->tj.n_bos + tk->tj.n_eos;
  }
  if (ok) ok = count_ok(n - extra, 0, err) && count_ok(n, max_tokens, err); // [CLS] [SEP] are no words
  if (ok)
    ok = kind == TOK_BPE         ? fill(t, ids, n, bpe_label_of, &tk->bpe, -1, err)
         : kind == TOK_WORDPIECE ? fill(t, ids, n, wp_label_of, &tk->wp, tk->wp.unk, err)
                                 : fill(t, ids, n, tj_label_of, &tk->tj, tk->tj.unk, err);
  free(ids);
  return ok;
}

ModelTokenizer *model_tokenizer_from_json(const char *path, Err *err) {
  ModelTokenizer *tk = calloc(1, sizeof *tk);
  if (!tk) return err_set(err, "out of memory"), NULL;
  tk->kind = TOK_TOKJSON;
  if (tokjson_load_file(&tk->tj, path, err)) return tk;
  free(tk);
  return NULL;
}

// The label of id as the tokenizer writes it for the views.
static const char *label_of(const ModelTokenizer *tk, int id, char *buf, size_t cap) {
  return tk->kind == TOK_BPE         ? bpe_label_of(&tk->bpe, id, buf, cap)
         : tk->kind == TOK_WORDPIECE ? wp_label_of(&tk->wp, id, buf, cap)
                                     : tj_label_of(&tk->tj, id, buf, cap);
}

typedef struct {
  const char *word;
  int id;
} Entry;

static int entry_cmp(const void *a, const void *b) {
  const Entry *x = a, *y = b;
  int c = strcmp(x->word, y->word);
  return c ? c : (x->id > y->id) - (x->id < y->id);
}

bool model_tokenizer_vocab(const ModelTokenizer *tk, Vocab *v, Err *err) {
  return model_tokenizer_labels(tk, 0, v, err);
}

bool model_tokenizer_labels(const ModelTokenizer *tk, int rows, Vocab *v, Err *err) {
  memset(v, 0, sizeof *v);
  int n = tk->kind == TOK_BPE ? tk->bpe.n_vocab : tk->kind == TOK_WORDPIECE ? tk->wp.n : tk->tj.n_vocab;
  if (tk->kind == TOK_TOKJSON && rows > n) n = rows; // ids past the tokenizer's: "<unused N>"
  char buf[256];
  size_t total = 0;
  for (int i = 0; i < n; i++) total += strlen(label_of(tk, i, buf, sizeof buf)) + 1;
  v->words = malloc(sizeof(char *) * (size_t)(n > 0 ? n : 1));
  v->block = malloc(total + 1);
  v->order = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  Entry *e = malloc(sizeof(Entry) * (size_t)(n > 0 ? n : 1));
  if (!v->words || !v->block || !v->order || !e) {
    free(e);
    vocab_free(v);
    return err_set(err, "out of memory for the tokenizer's %d labels", n);
  }
  char *p = v->block;
  for (int i = 0; i < n; i++) {
    const char *l = label_of(tk, i, buf, sizeof buf);
    size_t k = strlen(l) + 1;
    memcpy(p, l, k);
    v->words[i] = p, e[i] = (Entry){p, i};
    p += k;
  }
  qsort(e, (size_t)n, sizeof(Entry), entry_cmp); // vocab_find searches v->order by halves
  for (int i = 0; i < n; i++) v->order[i] = e[i].id;
  free(e);
  v->n = n;
  return true;
}

void model_tokenizer_free(ModelTokenizer *tk) {
  if (!tk) return;
  if (tk->kind == TOK_BPE) bpe_free(&tk->bpe);
  if (tk->kind == TOK_WORDPIECE) wp_free(&tk->wp);
  if (tk->kind == TOK_TOKJSON) tokjson_free(&tk->tj);
  free(tk);
}
