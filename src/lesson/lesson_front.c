// lesson_front.c -- the front matter of a lesson: `key: value` lines between two `---` lines.
//
//     ---
//     title: The cat and the bank      # a comment
//     sentence: The cat walks by the bank
//     model: default                   # or a path, or: random D=16,H=2,F=64,layers=2,seed=42
//     causal: off
//     ---
// and a model written by hand (lesson_hand.c): model: by hand, D:, projections: none,
// positions: none, feed-forward: none and an embeddings: | table of indented lines.
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lesson_internal.h"

static const char *KNOWN_KEYS =
    "title, sentence, model, causal, target, generate, D, projections, positions, feed-forward, embeddings";
#define N_KEYS 11

// End of the line that starts at p (the offset of its '\n', or len).
static size_t line_end(const LessonCtx *c, size_t p) {
  while (p < c->len && c->text[p] != '\n') p++;
  return p;
}

// [b, e) without surrounding spaces, tabs and a trailing '\r'.
static void trim(const char *t, size_t *b, size_t *e) {
  while (*b < *e && (t[*b] == ' ' || t[*b] == '\t')) (*b)++;
  while (*e > *b && (t[*e - 1] == ' ' || t[*e - 1] == '\t' || t[*e - 1] == '\r')) (*e)--;
}

static bool is_fence(const LessonCtx *c, size_t b, size_t e) {
  trim(c->text, &b, &e);
  return e - b == 3 && !memcmp(c->text + b, "---", 3);
}

static bool eq_nocase(const char *a, size_t n, const char *b) {
  if (strlen(b) != n) return false;
  for (size_t i = 0; i < n; i++)
    if (tolower((unsigned char)a[i]) != b[i]) return false;
  return true;
}

// A value: "quoted" (no comment inside) or bare up to a " #" comment. Returns a copy or NULL
// (having reported the problem).
static char *value_copy(LessonCtx *c, size_t b, size_t e, const char *key) {
  const char *t = c->text;
  trim(t, &b, &e);
  if (b < e && t[b] == '"') {
    size_t q = b + 1;
    while (q < e && t[q] != '"') q++;
    if (q >= e) {
      lesson_error_at(c, b, "unclosed quote in the value of %s: expected a closing '\"'", key);
      return NULL;
    }
    size_t rest = q + 1, re = e;
    trim(t, &rest, &re);
    if (rest < re && t[rest] != '#') {
      lesson_error_at(c, rest,
                      "text after the quoted value of %s: expected the end of the line "
                      "or a # comment",
                      key);
      return NULL;
    }
    b++, e = q;
  } else {
    for (size_t p = b; p < e; p++)
      if (t[p] == '#' && (p == b || t[p - 1] == ' ' || t[p - 1] == '\t')) {
        e = p;
        break;
      }
    trim(t, &b, &e);
  }
  char *v = lesson_strndup(t + b, e - b);
  if (!v) c->oom = true;
  return v;
}

static void check_model(LessonCtx *c, int line, const char *v) {
  if (!*v) {
    lesson_error_line(c, line,
                      "empty model: expected default, a .safetensors path, random "
                      "D=16,H=2,F=64,layers=2,seed=42, or by hand");
    return;
  }
  if (!strcmp(v, "by hand")) {
    c->l->by_hand = true;
    return;
  }
  ModelConfig mc;
  uint64_t seed;
  Err err = {0};
  if (lesson_random_spec(v, &mc, &seed, &err) < 0) lesson_error_line(c, line, "%s", err.msg);
}

static void set_sentence(LessonCtx *c, int line, char *v) {
  c->l->sentence = v;
  c->l->sentence_line = line;
  c->n_words = tokenize_words(v, c->words, LESSON_MAX_WORDS);
  if (c->n_words == 0)
    lesson_error_line(c, line,
                      "the sentence has no words: expected sentence: The cat walks by "
                      "the bank");
  else if (c->n_words >= LESSON_MAX_WORDS)
    lesson_error_line(c, line, "the sentence is too long: at most %d words", LESSON_MAX_WORDS - 1);
}

// "on", "yes", "true" or "off", "no", "false" (any case) into *out; false for anything else.
static bool on_off(const char *v, bool *out) {
  static const char *on[] = {"on", "yes", "true"}, *off[] = {"off", "no", "false"};
  size_t n = strlen(v);
  for (int i = 0; i < 3; i++)
    if (eq_nocase(v, n, on[i]) || eq_nocase(v, n, off[i])) return *out = eq_nocase(v, n, on[i]), true;
  return false;
}

static void set_causal(LessonCtx *c, int line, const char *v) {
  size_t n = strlen(v);
  static const char *on[] = {"on", "yes", "true"}, *off[] = {"off", "no", "false"};
  for (int i = 0; i < 3; i++) {
    if (eq_nocase(v, n, on[i]))
      c->l->causal = true;
    else if (eq_nocase(v, n, off[i]))
      c->l->causal = false;
    else
      continue;
    c->l->causal_set = true;
    return;
  }
  lesson_error_line(c, line, "bad value for causal: \"%s\" (expected on or off)", v);
}

// A switch of a model by hand: only `none` (what the notebook's model leaves out).
static void set_none(LessonCtx *c, int line, const char *key, const char *v, bool *out) {
  if (!strcmp(v, "none"))
    *out = true;
  else
    lesson_error_line(c, line, "bad value for %s: \"%s\" (expected none: a model by hand leaves it out)", key,
                      v);
}

// One `key: value` line [b, e). Returns true when it opens the embeddings: | table.
static bool key_value(LessonCtx *c, size_t b, size_t e, bool seen[N_KEYS], int *hand_line) {
  const char *t = c->text;
  int line = lesson_line_of(c, b);
  size_t kb = b, ke = b;
  while (ke < e && (isalnum((unsigned char)t[ke]) || t[ke] == '_' || t[ke] == '-')) ke++;
  size_t colon = ke;
  while (colon < e && (t[colon] == ' ' || t[colon] == '\t')) colon++;
  if (ke == kb || colon >= e || t[colon] != ':') {
    lesson_error_at(c, b, "expected key: value in the front matter (keys: %s), or --- to end it", KNOWN_KEYS);
    return false;
  }
  static const char *keys[N_KEYS] = {"title",     "sentence",     "model",     "causal",
                                     "target",    "generate",     "d",         "projections",
                                     "positions", "feed-forward", "embeddings"};
  int k = 0;
  while (k < N_KEYS && !eq_nocase(t + kb, ke - kb, keys[k])) k++;
  if (k == N_KEYS) {
    char key[32], hint[40] = "";
    snprintf(key, sizeof key, "%.*s", (int)(ke - kb < 31 ? ke - kb : 31), t + kb);
    const char *near = lesson_nearest(key, keys, N_KEYS);
    if (near) snprintf(hint, sizeof hint, "; did you mean %s:?", near);
    lesson_error_at(c, kb, "unknown front matter key \"%.*s\" (known keys: %s)%s", (int)(ke - kb), t + kb,
                    KNOWN_KEYS, hint);
    return false;
  }
  if (seen[k]) {
    lesson_error_at(c, kb, "%s is given twice in the front matter", k == 6 ? "D" : keys[k]);
    return false;
  }
  seen[k] = true;
  char *v = value_copy(c, colon + 1, e, keys[k]);
  if (!v) return false;
  if (k >= 6 && !*hand_line) *hand_line = line;
  Lesson *l = c->l;
  switch (k) {
  case 0:
    l->title = v;
    l->title_line = line;
    if (!*v) lesson_error_line(c, line, "empty title: expected title: and the lesson's title");
    return false;
  case 1: set_sentence(c, line, v); return false;
  case 2:
    l->model = v;
    l->model_line = line;
    check_model(c, line, v);
    return false;
  case 3:
    set_causal(c, line, v);
    free(v);
    return false;
  case 4: // an encoder-decoder's target: the decoder reads <bos> and its words
    l->target = v;
    if (!*v)
      lesson_error_line(c, line, "empty target: expected target: and the target sentence (le chat ...)");
    return false;
  case 5: // generate: on | off
    if (!on_off(v, &l->generate))
      lesson_error_line(c, line, "bad value for generate: \"%s\" (expected on or off)", v);
    break;
  case 6: { // D: the width of a model by hand
    char *end;
    long d = strtol(v, &end, 10);
    if (end == v || *end || d < 1 || d > 64)
      lesson_error_line(c, line, "bad value for D: \"%s\" (expected a whole number 1..64, as D: 3)", v);
    else
      l->hand_D = (int)d;
    break;
  }
  case 7: set_none(c, line, "projections", v, &l->no_projections); break;
  case 8: set_none(c, line, "positions", v, &l->no_positions); break;
  case 9: set_none(c, line, "feed-forward", v, &l->no_feed_forward); break;
  default: { // embeddings: | then indented rows
    bool block = !strcmp(v, "|");
    if (!block)
      lesson_error_line(c, line,
                        "embeddings: takes a table on the lines below: write embeddings: | then one "
                        "indented line per word, as   jane 1 0 0");
    free(v);
    return block;
  }
  }
  free(v);
  return false;
}

size_t lesson_front_parse(LessonCtx *c) {
  size_t p = 0;
  if (c->len >= 3 && !memcmp(c->text, "\xEF\xBB\xBF", 3)) p = 3; // a UTF-8 byte order mark
  size_t e = line_end(c, p);
  if (!is_fence(c, p, e)) {
    lesson_error_line(c, 1,
                      "missing front matter: a lesson begins with a line ---, then title: "
                      "and sentence: lines (model:, causal: optional) and a closing ---");
    return p;
  }
  size_t close = e, q = e < c->len ? e + 1 : e; // find the closing fence first
  bool closed = false;
  while (q < c->len) {
    size_t qe = line_end(c, q);
    if (is_fence(c, q, qe)) {
      close = q;
      closed = true;
      break;
    }
    q = qe + 1;
  }
  if (!closed) {
    c->front_unclosed = true;
    lesson_error_line(c, 1,
                      "the front matter opened here is not closed: expected a line --- "
                      "after its key: value lines");
    return c->len;
  }
  bool seen[N_KEYS] = {false}, in_table = false;
  int hand_line = 0;
  for (q = e + 1; q < close; q = line_end(c, q) + 1) {
    size_t b = q, qe = line_end(c, q);
    bool indented = b < qe && (c->text[b] == ' ' || c->text[b] == '\t');
    trim(c->text, &b, &qe);
    if (b == qe || c->text[b] == '#') continue; // blank line or comment
    if (in_table && indented) {                 // a row of the embeddings: | table
      lesson_hand_row(c, b, qe);
      continue;
    }
    in_table = key_value(c, b, qe, seen, &hand_line);
  }
  lesson_hand_finish(c, hand_line);
  if (!seen[0]) lesson_error_line(c, 1, "the front matter has no title: (expected title: ...)");
  if (!seen[1])
    lesson_error_line(c, 1,
                      "the front matter has no sentence: (expected sentence: The cat walks "
                      "by the bank)");
  size_t body = line_end(c, close);
  return body < c->len ? body + 1 : body;
}
