// tokenizer.c -- see tokenizer.h.
#include "tokenizer.h"

#include "utf8.h" // defines: utf8_seq_len, utf8_is_cont, utf8_lead_len

#include <stdlib.h>
#include <string.h>

// The "C" locale classes, spelled out so that setlocale() elsewhere cannot change tokens.
static bool is_sep(unsigned char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '!' && c <= '/') || (c >= ':' && c <= '@') ||
         (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

// The length of the longest prefix of buf[0..n) that ends on a whole UTF-8 sequence.
static int utf8_whole(const char *buf, int n) {
  int lead = n;
  while (lead > 0 && utf8_is_cont((unsigned char)buf[lead - 1])) lead--;
  if (lead == 0) return n; // only continuation bytes: not UTF-8, keep the bytes as they are
  int need = utf8_lead_len((unsigned char)buf[lead - 1]);
  return (n - (lead - 1) >= need) ? n : lead - 1;
}

// Calls fn(word, len, ctx) for each token of text (lowercased into a scratch buffer).
typedef void (*WordFn)(const char *w, int len, void *ctx);
static void each_word(const char *text, WordFn fn, void *ctx) {
  char buf[TOKEN_MAX_BYTES + 1];
  const unsigned char *p = (const unsigned char *)text;
  while (*p) {
    while (*p && is_sep(*p)) p++;
    if (!*p) break;
    int n = 0;
    bool truncated = false;
    while (*p && !is_sep(*p)) {
      if (n < TOKEN_MAX_BYTES)
        buf[n++] = (char)((*p >= 'A' && *p <= 'Z') ? *p + 32 : *p);
      else
        truncated = true;
      p++;
    }
    if (truncated) n = utf8_whole(buf, n); // never end a cut word inside a UTF-8 sequence
    buf[n] = 0;
    fn(buf, n, ctx);
  }
}

typedef struct {
  char (*words)[TOKEN_MAX_BYTES + 1];
  int n, max;
} Collect;

static void collect(const char *w, int len, void *ctx) {
  Collect *c = ctx;
  if (c->n < c->max) memcpy(c->words[c->n], w, (size_t)len + 1);
  c->n++;
}

int tokenize_words(const char *text, char words[][TOKEN_MAX_BYTES + 1], int max) {
  Collect c = {words, 0, max};
  each_word(text, collect, &c);
  return c.n < max ? c.n : max;
}

static void count_word(const char *w, int len, void *ctx) {
  (void)w, (void)len;
  (*(int *)ctx)++;
}

static int count_words(const char *text) {
  int n = 0;
  each_word(text, count_word, &n);
  return n;
}

// Sorts ids by their words (then by id: the first of twins comes first). A merge sort: qsort has
// no context to reach the words through.
static void sort_ids(int *ids, int n, char *const *words) {
  int *tmp = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
  if (!tmp) { // no memory for the merge: insertion sort, slow but right
    for (int i = 1; i < n; i++)
      for (int j = i; j > 0 && strcmp(words[ids[j - 1]], words[ids[j]]) > 0; j--) {
        int t = ids[j];
        ids[j] = ids[j - 1], ids[j - 1] = t;
      }
    return;
  }
  for (int w = 1; w < n; w *= 2)
    for (int lo = 0; lo < n - w; lo += 2 * w) {
      int mid = lo + w, hi = lo + 2 * w < n ? lo + 2 * w : n, a = lo, b = mid, k = lo;
      while (a < mid && b < hi) tmp[k++] = strcmp(words[ids[a]], words[ids[b]]) <= 0 ? ids[a++] : ids[b++];
      while (a < mid) tmp[k++] = ids[a++];
      while (b < hi) tmp[k++] = ids[b++];
      memcpy(ids + lo, tmp + lo, sizeof(int) * (size_t)(hi - lo));
    }
  free(tmp);
}

bool vocab_from_lines(Vocab *v, const char *lines, Err *err) {
  memset(v, 0, sizeof *v);
  size_t len = strlen(lines);
  int n = 1;
  // (strchr: libc's loop, not the fuzz build's instrumented one)
  for (const char *nl = lines; (nl = strchr(nl, '\n')); nl++) n++;
  if (len > 0 && lines[len - 1] == '\n') n--; // a trailing newline does not make a word
  v->block = malloc(len + 1);
  v->words = malloc(sizeof(char *) * (size_t)(n > 0 ? n : 1));
  if (!v->block || !v->words) {
    vocab_free(v);
    return err_set(err, "out of memory reading the vocabulary");
  }
  memcpy(v->block, lines, len + 1);
  char *p = v->block;
  for (int i = 0; i < n; i++) {
    v->words[i] = p;
    char *nl = strchr(p, '\n');
    if (nl)
      *nl = 0, p = nl + 1;
    else
      p += strlen(p);
  }
  v->n = n;
  if (n < 1 || strcmp(v->words[0], VOCAB_UNK) != 0) {
    bool crlf = n >= 1 && !strcmp(v->words[0], VOCAB_UNK "\r");
    vocab_free(v);
    if (crlf)
      return err_set(err, "the vocabulary's words end in \\r (Windows line ends): join them with \\n only");
    return err_set(err, "the vocabulary must start with \"" VOCAB_UNK "\"");
  }
  for (int i = 0; i < n; i++) {
    if (!v->words[i][0]) {
      vocab_free(v);
      return err_set(err, "vocabulary word %d is empty", i);
    }
    long bad = utf8_invalid_at(v->words[i]); // (vocab_word_ok's rules, each with its own message)
    if (bad >= 0) {
      err_set(err, "vocabulary word %d is not UTF-8 text (byte %ld of it is 0x%02X)", i, bad + 1,
              (unsigned char)v->words[i][bad]);
      vocab_free(v);
      return false;
    }
    // a control character (a tab, an escape sequence) is no part of a word, and printed as it is
    // by `stepformer info` it would drive the terminal
    for (const char *c = v->words[i]; *c; c++)
      if ((unsigned char)*c < 0x20 || *c == 0x7f) {
        err_set(err, "vocabulary word %d holds the control character 0x%02X", i, (unsigned char)*c);
        vocab_free(v);
        return false;
      }
  }
  // sorted once: a repeated word is caught next to its twin, and vocab_find searches by halves
  v->order = malloc(sizeof(int) * (size_t)n);
  if (!v->order) {
    vocab_free(v);
    return err_set(err, "out of memory reading the vocabulary");
  }
  for (int i = 0; i < n; i++) v->order[i] = i;
  sort_ids(v->order, n, v->words);
  for (int k = 1; k < n; k++)
    if (!strcmp(v->words[v->order[k - 1]], v->words[v->order[k]])) {
      int a = v->order[k - 1], b = v->order[k];
      err_set(err, "vocabulary word \"%s\" appears twice (ids %d and %d)", v->words[a], a < b ? a : b,
              a < b ? b : a);
      vocab_free(v);
      return false;
    }
  return true;
}

typedef struct {
  char *buf;
  size_t len;
} Joined;

static void join_unique(const char *w, int len, void *ctx) {
  Joined *j = ctx;
  // linear search over the joined lines: vocabularies made this way are one sentence long
  const char *p = j->buf;
  while (p && *p) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    if (n == (size_t)len && !memcmp(p, w, n)) return;
    p = nl ? nl + 1 : NULL;
  }
  if (!strcmp(w, VOCAB_UNK)) return;
  j->buf[j->len++] = '\n';
  memcpy(j->buf + j->len, w, (size_t)len);
  j->len += (size_t)len;
  j->buf[j->len] = 0;
}

static bool check_utf8(const char *text, Err *err) {
  long bad = utf8_invalid_at(text);
  if (bad < 0) return true;
  return err_set(err, "the sentence is not UTF-8 text (byte %ld is 0x%02X): type or save it as UTF-8",
                 bad + 1, (unsigned char)text[bad]);
}

bool vocab_from_text(Vocab *v, const char *text, Err *err) {
  memset(v, 0, sizeof *v);
  if (!check_utf8(text, err)) return false;
  Joined j = {malloc(strlen(text) * 2 + 16), 0};
  if (!j.buf) return err_set(err, "out of memory");
  strcpy(j.buf, VOCAB_UNK);
  j.len = strlen(VOCAB_UNK);
  each_word(text, join_unique, &j);
  bool ok = vocab_from_lines(v, j.buf, err);
  free(j.buf);
  return ok;
}

char *vocab_to_lines(const Vocab *v) {
  size_t len = 0;
  for (int i = 0; i < v->n; i++) len += strlen(v->words[i]) + 1;
  char *s = malloc(len + 1), *p = s;
  if (!s) return NULL;
  for (int i = 0; i < v->n; i++) {
    size_t n = strlen(v->words[i]);
    memcpy(p, v->words[i], n);
    p += n;
    if (i + 1 < v->n) *p++ = '\n';
  }
  *p = 0;
  return s;
}

int vocab_find(const Vocab *v, const char *word) {
  int lo = 0, hi = v->order ? v->n : 0;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2, c = strcmp(v->words[v->order[mid]], word);
    if (c == 0) return v->order[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return -1;
}

void vocab_free(Vocab *v) {
  free(v->words);
  free(v->order);
  free(v->block);
  memset(v, 0, sizeof *v);
}

typedef struct {
  Tokens *t;
  const Vocab *v;
  char *p;
} Fill;

static void fill_token(const char *w, int len, void *ctx) {
  Fill *f = ctx;
  int i = f->t->n++;
  memcpy(f->p, w, (size_t)len + 1);
  f->t->words[i] = f->p;
  f->p += len + 1;
  int id = vocab_find(f->v, w);
  f->t->unknown[i] = id <= 0; // typing "<unk>" itself cannot happen: '<' separates words
  f->t->ids[i] = id < 0 ? 0 : id;
}

bool tokens_from_text(Tokens *t, const Vocab *v, const char *text, int max_tokens, Err *err) {
  memset(t, 0, sizeof *t);
  if (!check_utf8(text, err)) return false;
  int n = count_words(text);
  if (n == 0)
    return err_set(err, "the sentence has no words: type at least one word (punctuation is dropped)");
  if (max_tokens > 0 && n > max_tokens)
    return err_set(err, "the sentence has %d words; at most %d fit: shorten it", n, max_tokens);
  t->ids = malloc(sizeof(int) * (size_t)n);
  t->words = malloc(sizeof(char *) * (size_t)n);
  t->unknown = malloc(sizeof(bool) * (size_t)n);
  t->block = malloc(strlen(text) + (size_t)n + 1);
  if (!t->ids || !t->words || !t->unknown || !t->block) {
    tokens_free(t);
    return err_set(err, "out of memory tokenizing the sentence");
  }
  Fill f = {t, v, t->block};
  each_word(text, fill_token, &f);
  return true;
}

void tokens_free(Tokens *t) {
  free(t->ids);
  free(t->words);
  free(t->unknown);
  free(t->block);
  memset(t, 0, sizeof *t);
}

const char *tokens_label(const Tokens *t, const Vocab *v, int i) { return v->words[t->ids[i]]; }

bool vocab_word_ok(const char *w, size_t n) {
  if (n == 0 || memchr(w, 0, n)) return false;
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)w[i] < 0x20 || w[i] == 0x7f) return false;
  for (size_t i = 0; i < n;) {
    int k = utf8_lead_len((unsigned char)w[i]);
    if (k == 0 || i + (size_t)k > n) return false;
    char seq[5] = {0};
    memcpy(seq, w + i, (size_t)k);
    if (utf8_seq_len(seq) != k) return false;
    i += (size_t)k;
  }
  return true;
}
