// tokjson.c -- encoding and decoding with a loaded tokenizer.json (tokjson.h): added tokens, the
// normalizer, the pre-tokenizer's words, BPE merges with a heap as the Rust library's Word does,
// the template's BOS; decoding and labels. Loading is in tokjson_load.c.
#include "tokjson.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe.h"     // defines: bpe_byte_char, bpe_char_byte, bpe_label_bytes
#include "ids.h"     // defines: Ids, ids_push
#include "nocov.h"   // defines: SF_NO_COVERAGE
#include "unicode.h" // defines: uni_decode, uni_encode, uni_nfc, uni_nfd

size_t tokjson_pair_slot(const TokJson *t, uint64_t key); // tokjson_load.c

const char *tokjson_token(const TokJson *t, int id) {
  return id >= 0 && id < t->n_vocab ? t->tokens[id] : NULL;
}

int tokjson_find(const TokJson *t, const char *token) {
  size_t n = strlen(token);
  for (int i = 0; i < t->n_added; i++)
    if ((size_t)t->added[i].len == n && !memcmp(t->added[i].content, token, n)) return t->added[i].id;
  return strtab_get(&t->index, token, (int)n);
}

// ---- a growable byte string

typedef struct {
  char *s;
  size_t n, cap;
} Buf;

static bool buf_add(Buf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + n + 1) cap *= 2;
    char *more = realloc(b->s, cap);
    if (!more) return false;
    b->s = more, b->cap = cap;
  }
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = 0;
  return true;
}

// ---- merging one word

typedef struct {
  int rank, pos, left, right;
} Cand;

typedef struct {
  Ids sym;              // the word's symbols (ids), merged ones -1
  int *next, *prev;     // [sym.n] linked list
  int cap;              // of next, prev
  Cand *heap;           // min-heap by (rank, pos)
  int n_heap, cap_heap; //
  Buf str;              // a word written in the byte alphabet (ignore_merges)
} Work;

static bool cand_less(Cand a, Cand b) { return a.rank != b.rank ? a.rank < b.rank : a.pos < b.pos; }

static bool heap_push(Work *w, Cand c) {
  if (w->n_heap == w->cap_heap) {
    int cap = w->cap_heap ? 2 * w->cap_heap : 64;
    Cand *more = realloc(w->heap, (size_t)cap * sizeof *more);
    if (!more) return false;
    w->heap = more, w->cap_heap = cap;
  }
  int i = w->n_heap++;
  while (i > 0 && cand_less(c, w->heap[(i - 1) / 2])) {
    w->heap[i] = w->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  w->heap[i] = c;
  return true;
}

static Cand heap_pop(Work *w) {
  Cand top = w->heap[0], last = w->heap[--w->n_heap];
  int i = 0, n = w->n_heap;
  for (;;) {
    int k = 2 * i + 1;
    if (k >= n) break;
    if (k + 1 < n && cand_less(w->heap[k + 1], w->heap[k])) k++;
    if (!cand_less(w->heap[k], last)) break;
    w->heap[i] = w->heap[k];
    i = k;
  }
  if (n > 0) w->heap[i] = last;
  return top;
}

static int pair_rank(const TokJson *t, int a, int b, int *joined) {
  uint64_t key = (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1;
  size_t i = tokjson_pair_slot(t, key);
  if (!t->pair_keys[i]) return -1;
  *joined = t->pair_id[i];
  return t->pair_rank[i];
}

static bool offer(const TokJson *t, Work *w, int pos) {
  if (pos < 0 || w->next[pos] < 0) return true;
  int joined, r = pair_rank(t, w->sym.v[pos], w->sym.v[w->next[pos]], &joined);
  return r < 0 || heap_push(w, (Cand){r, pos, w->sym.v[pos], w->sym.v[w->next[pos]]});
}

// Merges w->sym (the word's first symbols) by rank and appends the result to out: the candidate of
// lowest (rank, position) first; one made stale by an earlier merge is skipped.
static bool merge_word(const TokJson *t, Work *w, Ids *out) {
  int m = w->sym.n;
  if (m > w->cap) {
    int *nx = realloc(w->next, (size_t)m * sizeof *nx);
    if (nx) w->next = nx;
    int *pv = realloc(w->prev, (size_t)m * sizeof *pv);
    if (pv) w->prev = pv;
    if (!nx || !pv) return false;
    w->cap = m;
  }
  for (int i = 0; i < m; i++) w->next[i] = i + 1 < m ? i + 1 : -1, w->prev[i] = i - 1;
  w->n_heap = 0;
  for (int i = 0; i + 1 < m; i++)
    if (!offer(t, w, i)) return false;
  int *id = w->sym.v;
  while (w->n_heap > 0) {
    Cand c = heap_pop(w);
    int right = w->next[c.pos];
    if (id[c.pos] != c.left || right < 0 || id[right] != c.right) continue; // stale
    int joined = -1;
    pair_rank(t, c.left, c.right, &joined);
    id[c.pos] = joined, id[right] = -1;
    w->next[c.pos] = w->next[right];
    if (w->next[right] >= 0) w->prev[w->next[right]] = c.pos;
    if (!offer(t, w, w->prev[c.pos]) || !offer(t, w, c.pos)) return false;
  }
  for (int i = 0; m > 0 && i >= 0; i = w->next[i])
    if (!ids_push(out, id[i])) return false;
  return true;
}

// A character without a token: its bytes' <0xXX> (byte_fallback), else unk (once for a run when
// fuse_unk), else nothing (as the library drops it).
static bool unknown_char(const TokJson *t, Work *w, const unsigned char *s, int n, bool *last_unk) {
  if (t->fallback[0] >= 0) {
    for (int i = 0; i < n; i++)
      if (!ids_push(&w->sym, t->fallback[s[i]])) return false;
    *last_unk = false;
    return true;
  }
  if (t->unk < 0 || (t->fuse_unk && *last_unk)) return true;
  *last_unk = true;
  return ids_push(&w->sym, t->unk);
}

// The BPE model on one word s[0..n).
static bool encode_word(const TokJson *t, Work *w, const char *s, size_t n, Ids *out) {
  const unsigned char *u = (const unsigned char *)s;
  w->sym.n = 0;
  if (t->byte_level) {
    if (t->ignore_merges) {
      w->str.n = 0;
      for (size_t i = 0; i < n; i++) {
        char ch[4];
        if (!buf_add(&w->str, ch, (size_t)uni_encode(bpe_byte_char(u[i]), ch))) return false;
      }
      int id = strtab_get(&t->index, w->str.s, (int)w->str.n);
      if (id >= 0) return ids_push(out, id);
    }
    bool last_unk = false;
    for (size_t i = 0; i < n; i++) {
      int id = t->byte_id[u[i]];
      if (id >= 0 ? !ids_push(&w->sym, id) : !unknown_char(t, w, u + i, 1, &last_unk)) return false;
      if (id >= 0) last_unk = false;
    }
  } else {
    if (t->ignore_merges) {
      int id = strtab_get(&t->index, s, (int)n);
      if (id >= 0) return ids_push(out, id);
    }
    bool last_unk = false;
    for (size_t i = 0; i < n;) {
      int32_t cp;
      int k = uni_decode(s + i, n - i, &cp);
      int id = strtab_get(&t->index, s + i, k);
      if (id >= 0 ? !ids_push(&w->sym, id) : !unknown_char(t, w, u + i, k, &last_unk)) return false;
      if (id >= 0) last_unk = false;
      i += (size_t)k;
    }
  }
  return merge_word(t, w, out);
}

// ---- normalizer

// NFC or NFD of s[0..n) into out: each stretch of valid UTF-8 without a NUL is normalized, other
// bytes are kept as they are.
static bool normalize_form(bool nfc, const char *s, size_t n, Buf *out) {
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n) {
      int32_t cp;
      int k = uni_decode(s + j, n - j, &cp);
      if (cp == UNI_INVALID || cp == 0) break;
      j += (size_t)k;
    }
    if (j > i) {
      size_t m;
      char *x = nfc ? uni_nfc(s + i, j - i, &m) : uni_nfd(s + i, j - i, &m);
      bool ok = x && buf_add(out, x, m);
      free(x);
      if (!ok) return false;
    }
    if (j < n && !buf_add(out, s + j, 1)) return false;
    i = j < n ? j + 1 : j;
  }
  return true;
}

// s[0..n) after the normalizer's steps, in *out (malloc'd; out->n its length).
static bool normalize(const TokJson *t, const char *s, size_t n, Buf *out) {
  Buf cur = {0}, nxt = {0};
  bool ok = buf_add(&cur, s, n);
  for (int k = 0; ok && k < t->n_norm; k++) {
    const TokJsonNorm *st = &t->norm[k];
    nxt.n = 0;
    ok = buf_add(&nxt, "", 0);
    if (st->kind == TJ_NORM_NFC || st->kind == TJ_NORM_NFD) {
      ok = ok && normalize_form(st->kind == TJ_NORM_NFC, cur.s, cur.n, &nxt);
    } else if (st->kind == TJ_NORM_PREPEND) {
      ok = ok && (cur.n == 0 || (buf_add(&nxt, st->to, strlen(st->to)) && buf_add(&nxt, cur.s, cur.n)));
    } else { // REPLACE
      size_t f = strlen(st->from), g = strlen(st->to);
      for (size_t i = 0; ok && i < cur.n;) {
        bool hit = i + f <= cur.n && !memcmp(cur.s + i, st->from, f);
        ok = hit ? buf_add(&nxt, st->to, g) : buf_add(&nxt, cur.s + i, 1);
        i += hit ? f : 1;
      }
    }
    Buf swap = cur;
    cur = nxt, nxt = swap;
  }
  free(nxt.s);
  *out = cur;
  return ok;
}

// ---- pre-tokenizer: words as consecutive pieces of one string

typedef struct {
  Buf text;
  Ids ends; // the end offset of each word in text
} Words;

static void words_free(Words *w) {
  free(w->text.s);
  free(w->ends.v);
}

// One step over every word of in, into out. first: the text's first piece (Metaspace's "first").
static bool pre_step(const TokJsonPre *p, const char *meta, const Words *in, bool first, Words *out) {
  size_t ml = strlen(meta);
  for (int k = 0; k < in->ends.n; k++) {
    size_t a = k ? (size_t)in->ends.v[k - 1] : 0, b = (size_t)in->ends.v[k], base = out->text.n;
    const char *s = in->text.s + a;
    size_t n = b - a;
    bool ok = true;
    if (p->kind == TJ_PRE_BYTELEVEL && p->prefix_space && s[0] != ' ') ok = buf_add(&out->text, " ", 1);
    if (p->kind == TJ_PRE_METASPACE) {
      bool add = p->prepend == 2 || (p->prepend == 1 && first && k == 0);
      if (add && s[0] != ' ' && !(n >= ml && !memcmp(s, meta, ml))) // (once its spaces are replaced)
        ok = buf_add(&out->text, meta, ml);
      for (size_t i = 0; ok && i < n; i++)
        ok = s[i] == ' ' ? buf_add(&out->text, meta, ml) : buf_add(&out->text, s + i, 1);
    } else {
      ok = ok && buf_add(&out->text, s, n);
    }
    if (!ok) return false;
    const char *w = out->text.s + base;
    size_t m = out->text.n - base;
    int from = out->ends.n;
    if (p->kind == TJ_PRE_SPLIT || (p->kind == TJ_PRE_BYTELEVEL && p->pattern))
      ok = pretok_split(p->pattern, w, m, &out->ends);
    else if (p->kind == TJ_PRE_DIGITS)
      ok = pretok_digits(p->individual, w, m, &out->ends);
    else if (p->kind == TJ_PRE_METASPACE && p->split) { // cut before every replacement (merged with the next)
      for (size_t i = 1; ok && i < m; i++)
        if (i + ml <= m && !memcmp(w + i, meta, ml)) ok = ids_push(&out->ends, (int)i);
      ok = ok && ids_push(&out->ends, (int)m);
    } else
      ok = ids_push(&out->ends, (int)m);
    if (!ok) return false;
    for (int e = from; e < out->ends.n; e++) out->ends.v[e] += (int)base;
  }
  return true;
}

// Normalizes and pre-tokenizes the piece s[0..n) (between added tokens) and appends its ids.
static bool encode_piece(const TokJson *t, Work *w, const char *s, size_t n, bool first, Ids *out) {
  Words cur = {0}, nxt = {0};
  bool ok = normalize(t, s, n, &cur.text) && (cur.text.n == 0 || ids_push(&cur.ends, (int)cur.text.n));
  for (int k = 0; ok && k < t->n_pre; k++) {
    nxt.text.n = 0, nxt.ends.n = 0;
    ok = pre_step(&t->pre[k], t->meta, &cur, first, &nxt);
    Words swap = cur;
    cur = nxt, nxt = swap;
  }
  for (int k = 0; ok && k < cur.ends.n; k++) {
    size_t a = k ? (size_t)cur.ends.v[k - 1] : 0, b = (size_t)cur.ends.v[k];
    if (b > a) ok = encode_word(t, w, cur.text.s + a, b - a, out);
  }
  words_free(&cur);
  words_free(&nxt);
  return ok;
}

// ---- added tokens

static bool is_ws(const char *s, size_t n, size_t *k) { // a white space character at s (Rust's is_whitespace)
  int32_t cp;
  *k = (size_t)uni_decode(s, n, &cp);
  return cp == ' ' || (cp >= 9 && cp <= 13) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

// The added token at text[i..len) (the longest), or -1.
static int added_at(const TokJson *t, const char *text, size_t len, size_t i, bool parse_special) {
  if (!t->added_first[(unsigned char)text[i]]) return -1;
  for (int k = 0; k < t->n_added; k++) {
    const TokJsonAdded *a = &t->added[k];
    if ((size_t)a->len <= len - i && !memcmp(text + i, a->content, (size_t)a->len) &&
        (parse_special || !a->special))
      return k;
  }
  return -1;
}

bool tokjson_encode(const TokJson *t, const char *text, size_t len, bool add_special, bool parse_special,
                    int **ids, int *n, Err *err) {
  Ids out = {0};
  Work w = {0};
  bool ok = true;
  for (int k = 0; ok && add_special && k < t->n_bos; k++) ok = ids_push(&out, t->bos[k]);
  size_t start = 0; // the piece not yet encoded starts here
  for (size_t i = 0; ok && i <= len; i++) {
    int k = i < len ? added_at(t, text, len, i, parse_special) : -1;
    if (k < 0 && i < len) continue;
    size_t a = i, b = k >= 0 ? i + (size_t)t->added[k].len : len, step;
    if (k >= 0 && t->added[k].lstrip) // the white space before it goes with it
      while (a > start) {
        size_t back = a - 1;
        while (back > start && ((unsigned char)text[back] & 0xC0) == 0x80) back--;
        if (!is_ws(text + back, len - back, &step) || back + step != a) break;
        a = back;
      }
    if (k >= 0 && t->added[k].rstrip)
      while (b < len && is_ws(text + b, len - b, &step)) b += step;
    if (a > start) ok = encode_piece(t, &w, text + start, a - start, start == 0, &out);
    if (ok && k >= 0) ok = ids_push(&out, t->added[k].id);
    start = b, i = b - 1; // (the loop's i++ goes on at b)
    if (k < 0) break;
  }
  for (int k = 0; ok && add_special && k < t->n_eos; k++) ok = ids_push(&out, t->eos[k]);
  free(w.sym.v);
  free(w.next);
  free(w.prev);
  free(w.heap);
  free(w.str.s);
  if (ok && !out.v) ok = (out.v = malloc(sizeof *out.v)) != NULL;
  if (!ok) {
    free(out.v);
    *ids = NULL, *n = 0;
    return err_set(err, "tokenizer.json: out of memory encoding %zu bytes of text", len);
  }
  *ids = out.v, *n = out.n;
  return true;
}

// ---- decoding

// The bytes of token id (not an added token) as the decoder writes them, appended to out. first:
// the first token decoded (whose replacement characters a Metaspace decoder drops).
static bool token_bytes(const TokJson *t, int id, bool first, Buf *out) {
  const char *s = t->tokens[id];
  size_t n = (size_t)t->token_lens[id];
  if (t->dec_bytelevel) { // every character of the byte alphabet, else the token as it is (as the library)
    size_t from = out->n;
    for (size_t i = 0; i < n;) {
      int32_t cp;
      i += (size_t)uni_decode(s + i, n - i, &cp);
      int byte = bpe_char_byte(cp);
      if (byte < 0) {
        out->n = from;
        return buf_add(out, s, n);
      }
      char c = (char)byte;
      if (!buf_add(out, &c, 1)) return false;
    }
    return true;
  }
  if (t->dec_fallback && n == 6 && !memcmp(s, "<0x", 3) && s[5] == '>') {
    unsigned v;
    char c;
    if (sscanf(s + 3, "%2x", &v) == 1) return c = (char)v, buf_add(out, &c, 1);
  }
  size_t sl = t->dec_space ? strlen(t->dec_space) : 0;
  for (size_t i = 0; i < n;) {
    bool hit = sl && i + sl <= n && !memcmp(s + i, t->dec_space, sl);
    if (!(hit ? (first && t->dec_meta) || buf_add(out, " ", 1) : buf_add(out, s + i, 1))) return false;
    i += hit ? sl : 1;
  }
  return true;
}

// SF_NO_COVERAGE (nocov.h): a scan of the added tokens (256 of Llama 3's) for every id decoded, 6 %
// of the tokjson fuzzer's time; the caller's branch on its answer keeps its coverage.
SF_NO_COVERAGE static bool is_added(const TokJson *t, int id) {
  for (int i = 0; i < t->n_added; i++)
    if (t->added[i].id == id) return true;
  return false;
}

char *tokjson_decode(const TokJson *t, const int *ids, int n, bool skip_special, size_t *len) {
  Buf out = {0};
  bool ok = buf_add(&out, "", 0);
  bool first = true;
  for (int i = 0; ok && i < n; i++) {
    int id = ids[i];
    if (id < 0 || id >= t->n_vocab || !t->tokens[id] || (skip_special && t->special[id])) continue;
    ok = t->dec_bytelevel || !is_added(t, id) ? token_bytes(t, id, first, &out)
                                              : buf_add(&out, t->tokens[id], (size_t)t->token_lens[id]);
    first = false;
  }
  if (!ok) {
    free(out.s);
    return NULL;
  }
  size_t skip = 0;
  while ((int)skip < t->dec_strip && skip < out.n && out.s[skip] == ' ') skip++;
  memmove(out.s, out.s + skip, out.n - skip + 1);
  if (len) *len = out.n - skip;
  return out.s;
}

size_t tokjson_label(const TokJson *t, int id, char *out, size_t cap) {
  EXPECT(cap > 0);
  if (id < 0 || id >= t->n_vocab || !t->tokens[id]) {
    snprintf(out, cap, "<unused %d>", id);
    return strlen(out);
  }
  Buf bytes = {0};
  bool added = is_added(t, id);
  if (added ? !buf_add(&bytes, t->tokens[id], (size_t)t->token_lens[id])
            : !token_bytes(t, id, false, &bytes)) {
    out[0] = 0;
    return 0;
  }
  size_t k = bpe_label_bytes(bytes.s, bytes.n, !added, out, cap);
  free(bytes.s);
  return k;
}
