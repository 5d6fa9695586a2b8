// wordpiece.c -- see wordpiece.h. Loading, BertTokenizer's basic tokenizing on code points, and
// the greedy longest-match WordPiece.
#include "wordpiece.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"  // defines: file_read_all, path_join
#include "ids.h"     // defines: Ids, ids_push
#include "unicode.h" // defines: uni_decode, uni_category, uni_nfc, uni_nfd
#include "utf8.h"    // defines: utf8_invalid_at

#define WP_MAX_FILE (64u << 20)

// ---- loading

void wp_free(WordPiece *w) {
  free(w->tokens);
  free(w->block);
  strtab_free(&w->index);
  *w = (WordPiece){0};
}

bool wp_load(WordPiece *w, const char *text, size_t len, const char *name, bool lower, Err *err) {
  const char *fix = "use the vocab.txt of a BERT tokenizer";
  *w = (WordPiece){0};
  w->lower = lower;
  size_t lines = 1;
  for (size_t i = 0; i < len; i++) lines += text[i] == '\n' || text[i] == '\r';
  w->block = malloc(len + 1);
  w->tokens = malloc(lines * sizeof *w->tokens);
  if (!w->block || !w->tokens || !strtab_init(&w->index, lines)) {
    wp_free(w);
    return err_set(err, "%s: out of memory (%zu bytes)", name, len);
  }
  memcpy(w->block, text, len);
  w->block[len] = 0;
  for (size_t i = 0; i < len;) {
    size_t end = i;
    while (end < len && w->block[end] != '\n' && w->block[end] != '\r') end++;
    size_t next = end < len ? end + 1 : len;
    if (end < len && w->block[end] == '\r' && end + 1 < len && w->block[end + 1] == '\n') next++;
    w->block[end] = 0; // a line break becomes the token's NUL (block has one more byte for the last)
    const char *tok = w->block + i;
    if (memchr(tok, 0, end - i) || utf8_invalid_at(tok) >= 0) {
      int id = w->n;
      wp_free(w);
      return err_set(err, "%s:%d: not UTF-8 text: %s", name, id + 1, fix);
    }
    w->tokens[w->n] = w->block + i;
    if (strtab_put(&w->index, tok, (int)(end - i), w->n) == -2) {
      wp_free(w);
      return err_set(err, "%s: out of memory", name);
    }
    w->n++;
    i = next;
  }
  w->unk = strtab_get(&w->index, "[UNK]", 5);
  w->cls = strtab_get(&w->index, "[CLS]", 5);
  w->sep = strtab_get(&w->index, "[SEP]", 5);
  w->pad = strtab_get(&w->index, "[PAD]", 5);
  w->mask = strtab_get(&w->index, "[MASK]", 6);
  const char *missing = w->unk < 0 ? "[UNK]" : w->cls < 0 ? "[CLS]" : w->sep < 0 ? "[SEP]" : NULL;
  if (missing) {
    wp_free(w);
    return err_set(err, "%s: no line holds %s: %s", name, missing, fix);
  }
  return true;
}

bool wp_load_dir(WordPiece *w, const char *dir, bool lower, Err *err) {
  *w = (WordPiece){0};
  char path[4096];
  if (!path_join(path, sizeof path, dir, "vocab.txt")) return err_set(err, "%s: folder name too long", dir);
  size_t len;
  char *text = file_read_all(path, &len, WP_MAX_FILE, err);
  if (!text) {
    char why[sizeof err->msg];
    snprintf(why, sizeof why, "%s", err->msg);
    return err_set(err, "%s: a BERT tokenizer folder holds vocab.txt, as the hub has it", why);
  }
  bool ok = wp_load(w, text, len, path, lower, err);
  free(text);
  return ok;
}

const char *wp_token(const WordPiece *w, int id) {
  EXPECT(id >= 0 && id < w->n);
  return w->tokens[id];
}

// ---- character classes (BertTokenizer's _is_control, _is_whitespace, _is_punctuation)

static bool wp_is_whitespace(int32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || uni_category(c) == UNI_Zs;
}

static bool wp_is_control(int32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  UniCategory k = uni_category(c);
  return k == UNI_Cc || k == UNI_Cf;
}

static bool wp_is_punct(int32_t c) {
  if ((c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126))
    return true;
  return uni_is_punct(c);
}

static bool wp_is_cjk(int32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// Python's case-ignorable characters, near enough: Mn Me Cf Lm Sk and the word-break MidLetter,
// MidNumLet and Single_Quote characters.
static bool wp_case_ignorable(int32_t c) {
  UniCategory k = uni_category(c);
  if (k == UNI_Mn || k == UNI_Me || k == UNI_Cf || k == UNI_Lm || k == UNI_Sk) return true;
  static const int32_t mid[] = {0x27,   0x2E,   0x3A,   0xB7,   0x387,  0x55F,  0x5F4,  0x2018, 0x2019,
                                0x2024, 0x2027, 0xFE13, 0xFE52, 0xFE55, 0xFF07, 0xFF0E, 0xFF1A};
  for (size_t i = 0; i < sizeof mid / sizeof *mid; i++)
    if (c == mid[i]) return true;
  return false;
}

// ---- growable buffers

typedef struct {
  char *s;
  size_t n, cap;
} WpStr;

static bool wp_str_add(WpStr *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 256;
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

static bool wp_str_cp(WpStr *b, int32_t c) {
  char u[4];
  int k = uni_encode(c, u);
  return wp_str_add(b, u, (size_t)k);
}

// ---- WordPiece proper: one word (no space, no punctuation inside), s[0..n) UTF-8

static bool wp_word(const WordPiece *w, const char *s, size_t n, Ids *out, WpStr *scratch) {
  size_t at[WP_MAX_WORD_CHARS + 2], nc = 0; // character starts
  for (size_t i = 0; i < n; nc++) {
    if (nc > WP_MAX_WORD_CHARS) return ids_push(out, w->unk);
    int32_t cp;
    at[nc] = i;
    i += (size_t)uni_decode(s + i, n - i, &cp);
  }
  if (nc > WP_MAX_WORD_CHARS) return ids_push(out, w->unk);
  at[nc] = n;
  int first = out->n;
  for (size_t start = 0; start < nc;) {
    int id = -1;
    size_t end = nc;
    for (; end > start; end--) {
      scratch->n = 0;
      if (start > 0 && !wp_str_add(scratch, "##", 2)) return false;
      if (!wp_str_add(scratch, s + at[start], at[end] - at[start])) return false;
      id = strtab_get(&w->index, scratch->s, (int)scratch->n);
      if (id >= 0) break;
    }
    if (id < 0) { // no piece starts here: the whole word is unknown
      out->n = first;
      return ids_push(out, w->unk);
    }
    if (!ids_push(out, id)) return false;
    start = end;
  }
  return true;
}

// ---- the basic tokenizer on one piece of text between special tokens

typedef struct {
  WpStr clean, word, low, scratch;
  int32_t *cps;
  size_t n_cps, cap_cps;
} WpWork;

static bool wp_cps_push(WpWork *k, int32_t c) {
  if (k->n_cps == k->cap_cps) {
    size_t cap = k->cap_cps ? 2 * k->cap_cps : 256;
    int32_t *more = realloc(k->cps, cap * sizeof *more);
    if (!more) return false;
    k->cps = more, k->cap_cps = cap;
  }
  k->cps[k->n_cps++] = c;
  return true;
}

// Lowercases, strips accents (with lower), splits at punctuation and WordPieces the word cps[0..n).
static bool wp_basic_word(const WordPiece *w, WpWork *k, const int32_t *cps, size_t n, Ids *out) {
  k->low.n = 0;
  for (size_t i = 0; i < n; i++) {
    int32_t c = cps[i];
    if (w->lower) {
      if (c == 0x3A3) { // Σ: final form when a cased letter comes before and none after (Final_Sigma)
        size_t j = i;
        while (j > 0 && wp_case_ignorable(cps[j - 1])) j--;
        bool final = j > 0 && uni_is_cased(cps[j - 1]);
        size_t m = i + 1;
        while (m < n && wp_case_ignorable(cps[m])) m++;
        if (m < n && uni_is_cased(cps[m])) final = false;
        c = final ? 0x3C2 : 0x3C3;
      } else {
        c = uni_tolower(c);
      }
    }
    if (!wp_str_cp(&k->low, c)) return false;
  }
  const char *s = k->low.s ? k->low.s : "";
  size_t len = k->low.n;
  char *nfd = NULL;
  if (w->lower && len > 0) {
    nfd = uni_nfd(s, len, &len);
    if (!nfd) return false;
    s = nfd;
  }
  // punctuation split (and accent dropping) into words, each WordPieced
  bool ok = true;
  k->word.n = 0;
  for (size_t i = 0; ok && i <= len;) {
    int32_t c = 0;
    int step = i < len ? uni_decode(s + i, len - i, &c) : 1;
    bool punct = i < len && wp_is_punct(c);
    if (i == len || punct) {
      if (k->word.n) ok = wp_word(w, k->word.s, k->word.n, out, &k->scratch);
      k->word.n = 0;
      if (ok && punct) ok = wp_word(w, s + i, (size_t)step, out, &k->scratch);
    } else if (!(w->lower && uni_category(c) == UNI_Mn)) {
      ok = wp_str_add(&k->word, s + i, (size_t)step);
    }
    i += (size_t)step;
  }
  free(nfd);
  return ok;
}

static bool wp_basic(const WordPiece *w, WpWork *k, const char *text, size_t len, Ids *out) {
  k->clean.n = 0;
  for (size_t i = 0; i < len;) {
    int32_t c;
    i += (size_t)uni_decode(text + i, len - i, &c);
    if (c == UNI_INVALID || c == 0 || c == 0xFFFD || wp_is_control(c)) continue;
    bool ok = true;
    if (wp_is_whitespace(c))
      ok = wp_str_add(&k->clean, " ", 1);
    else if (wp_is_cjk(c))
      ok = wp_str_add(&k->clean, " ", 1) && wp_str_cp(&k->clean, c) && wp_str_add(&k->clean, " ", 1);
    else
      ok = wp_str_cp(&k->clean, c);
    if (!ok) return false;
  }
  if (k->clean.n == 0) return true;
  size_t n;
  char *nfc = uni_nfc(k->clean.s, k->clean.n, &n);
  if (!nfc) return false;
  k->n_cps = 0;
  bool ok = true;
  for (size_t i = 0; ok && i <= n;) {
    int32_t c = ' ';
    if (i < n)
      i += (size_t)uni_decode(nfc + i, n - i, &c);
    else
      i++;
    if (uni_is_py_space(c)) {
      if (k->n_cps) ok = wp_basic_word(w, k, k->cps, k->n_cps, out);
      k->n_cps = 0;
    } else {
      ok = wp_cps_push(k, c);
    }
  }
  free(nfc);
  return ok;
}

bool wp_encode(const WordPiece *w, const char *text, size_t len, int **ids, int *n, Err *err) {
  static const char *special[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  int special_id[5] = {w->pad, w->unk, w->cls, w->sep, w->mask};
  Ids out = {0};
  WpWork k = {0};
  bool ok = ids_push(&out, w->cls);
  size_t from = 0;
  for (size_t i = 0; ok && i <= len;) {
    int hit = -1;
    if (i < len && text[i] == '[')
      for (int s = 0; s < 5 && hit < 0; s++) {
        size_t m = strlen(special[s]);
        if (i + m <= len && memcmp(text + i, special[s], m) == 0) hit = s;
      }
    if (hit < 0 && i < len) {
      i++;
      continue;
    }
    ok = wp_basic(w, &k, text + from, i - from, &out);
    if (ok && hit >= 0) {
      ok = ids_push(&out, special_id[hit] >= 0 ? special_id[hit] : w->unk);
      i += strlen(special[hit]);
    } else {
      i++;
    }
    from = i;
  }
  ok = ok && ids_push(&out, w->sep);
  free(k.clean.s), free(k.word.s), free(k.low.s), free(k.scratch.s), free(k.cps);
  if (!ok) {
    free(out.v);
    *ids = NULL, *n = 0;
    return err_set(err, "wordpiece: out of memory encoding %zu bytes of text", len);
  }
  *ids = out.v, *n = out.n;
  return true;
}
