// pretok.c -- see pretok.h. The characters are decoded once into classes; each pattern is then a
// function that gives the length of the match at a character, following the regular expression's
// alternatives in order (the first that matches wins, each as greedy as the regex engine is).
#include "pretok.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "unicode.h" // defines: uni_decode, uni_category, uni_is_letter, uni_is_number

static const char *const pretok_res[] = {
    [PRETOK_GPT2] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
    [PRETOK_LLAMA3] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
                      "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
    [PRETOK_QWEN2] = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| "
                     "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};

PretokPattern pretok_pattern(const char *re) {
  for (int p = PRETOK_GPT2; p <= PRETOK_QWEN2; p++)
    if (!strcmp(re, pretok_res[p])) return (PretokPattern)p;
  return 0;
}

// A character's class: \p{L}, \p{N}, \r or \n (which are \s too), other \s, anything else.
enum { C_L, C_N, C_NL, C_SP, C_OTHER };

static int pretok_class(int32_t c) {
  if (c >= 0 && c < 128) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return C_L;
    if (c >= '0' && c <= '9') return C_N;
    if (c == '\r' || c == '\n') return C_NL;
    return c == ' ' || (c >= 9 && c <= 13) ? C_SP : C_OTHER;
  }
  if (c == UNI_INVALID) return C_OTHER;
  if (c == 0x85) return C_SP;
  UniCategory k = uni_category(c);
  if (k == UNI_Zs || k == UNI_Zl || k == UNI_Zp) return C_SP;
  if (uni_is_letter(c)) return C_L;
  return uni_is_number(c) ? C_N : C_OTHER;
}

// The text as characters: at[i] the byte offset of character i (at[nc] == n), cp and class.
typedef struct {
  size_t *at;
  int32_t *cp;
  unsigned char *cls;
  size_t nc;
} Chars;

static bool chars_read(Chars *c, const char *s, size_t n) {
  c->at = malloc((n + 1) * sizeof *c->at);
  c->cp = malloc((n + 1) * sizeof *c->cp);
  c->cls = malloc(n + 1);
  c->nc = 0;
  if (!c->at || !c->cp || !c->cls) return false;
  for (size_t i = 0; i < n; c->nc++) {
    c->at[c->nc] = i;
    i += (size_t)uni_decode(s + i, n - i, &c->cp[c->nc]);
    c->cls[c->nc] = (unsigned char)pretok_class(c->cp[c->nc]);
  }
  c->at[c->nc] = n;
  return true;
}

static void chars_free(Chars *c) {
  free(c->at);
  free(c->cp);
  free(c->cls);
}

// Case folding as (?i) has it for the contractions' letters: ASCII, and U+017F (long s) folds to s.
static int32_t fold(int32_t c, bool ci) {
  if (!ci) return c;
  if (c >= 'A' && c <= 'Z') return c + 32;
  return c == 0x17F ? 's' : c;
}

// 's 't 're 've 'm 'll 'd at character i: their length in characters, or 0.
static size_t contraction(const Chars *c, size_t i, bool ci) {
  if (c->cp[i] != '\'' || i + 1 >= c->nc) return 0;
  int32_t a = fold(c->cp[i + 1], ci);
  if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
  if (i + 2 >= c->nc) return 0;
  int32_t b = fold(c->cp[i + 2], ci);
  return (a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l') ? 3 : 0;
}

static size_t run(const Chars *c, size_t j, int cls) {
  while (j < c->nc && c->cls[j] == cls) j++;
  return j;
}

static bool is_space(int cls) { return cls == C_SP || cls == C_NL; }

// \s+(?!\S)|\s+ at a white space character i: the run, less its last character when a non-space
// follows and the run is longer than one.
static size_t space_run(const Chars *c, size_t i) {
  size_t j = i;
  while (j < c->nc && is_space(c->cls[j])) j++;
  return j < c->nc && j - i > 1 ? j - 1 : j;
}

// GPT-2's pattern at character i: the end of the match (a character index).
static size_t match_gpt2(const Chars *c, size_t i) {
  size_t k = contraction(c, i, false);
  if (k) return i + k;
  if (c->cp[i] == ' ' && i + 1 < c->nc && !is_space(c->cls[i + 1])) return run(c, i + 1, c->cls[i + 1]);
  if (!is_space(c->cls[i])) return run(c, i, c->cls[i]);
  return space_run(c, i);
}

// Llama 3's pattern (digits at most 3 a word), or Qwen 2's (digits == 1).
static size_t match_llama3(const Chars *c, size_t i, size_t digits) {
  size_t k = contraction(c, i, true), nc = c->nc;
  if (k) return i + k;
  int c0 = c->cls[i];
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (c0 == C_L) return run(c, i, C_L);
  if ((c0 == C_SP || c0 == C_OTHER) && i + 1 < nc && c->cls[i + 1] == C_L) return run(c, i + 1, C_L);
  // \p{N}{1,3}
  if (c0 == C_N) {
    size_t j = i;
    while (j < nc && j - i < digits && c->cls[j] == C_N) j++;
    return j;
  }
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  size_t start = c->cp[i] == ' ' && i + 1 < nc && c->cls[i + 1] == C_OTHER ? i + 1
                 : c0 == C_OTHER                                           ? i
                                                                           : nc + 1;
  if (start <= nc) return run(c, run(c, start, C_OTHER), C_NL);
  // \s*[\r\n]+ : up to the run's last \r or \n
  size_t j = i;
  while (j < nc && is_space(c->cls[j])) j++;
  for (size_t q = j; q > i; q--)
    if (c->cls[q - 1] == C_NL) return q;
  return space_run(c, i);
}

bool pretok_split(PretokPattern p, const char *s, size_t n, Ids *ends) {
  Chars c;
  bool ok = chars_read(&c, s, n);
  for (size_t i = 0; ok && i < c.nc;) {
    size_t j = p == PRETOK_GPT2 ? match_gpt2(&c, i) : match_llama3(&c, i, p == PRETOK_QWEN2 ? 1 : 3);
    ok = ids_push(ends, (int)c.at[j]);
    i = j;
  }
  chars_free(&c);
  return ok;
}

bool pretok_digits(bool individual, const char *s, size_t n, Ids *ends) {
  Chars c;
  bool ok = chars_read(&c, s, n);
  for (size_t i = 0; ok && i < c.nc;) {
    bool num = c.cls[i] == C_N;
    size_t j = i + 1;
    if (!(num && individual))
      while (j < c.nc && (c.cls[j] == C_N) == num) j++;
    ok = ids_push(ends, (int)c.at[j]);
    i = j;
  }
  chars_free(&c);
  return ok;
}
