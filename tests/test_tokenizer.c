// test_tokenizer.c -- the word tokenizer and the vocabulary of DESIGN.md.
//
// ASCII A-Z lowercased, words split on ASCII whitespace and punctuation (which is dropped),
// UTF-8 kept inside words and never cut in the middle of a character, unknown words -> id 0
// "<unk>", an empty sentence an error; vocabularies from lines (strict) and from text (in order
// of first appearance).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "tokenizer.h" // defines: Vocab, Tokens, tokenize_words, tokens_from_text
#include "utf8.h"      // defines: utf8_seq_len, utf8_invalid_at, utf8_lead_len

// Tokenizes text and compares the words with want (a NULL-terminated list).
static void expect_words(const char *text, const char *const *want) {
  char words[32][TOKEN_MAX_BYTES + 1];
  int n = tokenize_words(text, words, 32), k = 0;
  while (want[k]) k++;
  CHECK(n == k, "\"%s\": %d words, expected %d", text, n, k);
  for (int i = 0; i < n && i < k; i++)
    CHECK(!strcmp(words[i], want[i]), "\"%s\": word %d is \"%s\", expected \"%s\"", text, i, words[i],
          want[i]);
}

static void test_words(void) {
  expect_words("The cat walks by the bank",
               (const char *[]){"the", "cat", "walks", "by", "the", "bank", NULL});
  expect_words("  HELLO,World!!  ", (const char *[]){"hello", "world", NULL});
  expect_words("don't stop-me now.", (const char *[]){"don", "t", "stop", "me", "now", NULL});
  expect_words("a\tb\nc\rd\ve\ff", (const char *[]){"a", "b", "c", "d", "e", "f", NULL});
  expect_words("(x)[y]{z}<w>|v~u^t_s`r@q#p$o%n&m*l+k=j\\i/h\"g'f;e:d?c!b,a.",
               (const char *[]){"x", "y", "z", "w", "v", "u", "t", "s", "r", "q", "p", "o", "n", "m",
                                "l", "k", "j", "i", "h", "g", "f", "e", "d", "c", "b", "a", NULL});
  expect_words("abc123 4x4", (const char *[]){"abc123", "4x4", NULL}); // digits are letters here
  // UTF-8 stays inside words; only ASCII letters are lowercased
  expect_words("Café CAFÉ naïve—dash Ωmega", (const char *[]){"café", "cafÉ", "naïve—dash", "Ωmega", NULL});
  expect_words("日本語、テスト", (const char *[]){"日本語、テスト", NULL});
  expect_words("", (const char *[]){NULL});
  expect_words("... ?! ,;", (const char *[]){NULL});

  // a word longer than TOKEN_MAX_BYTES is cut, never inside a UTF-8 sequence
  char longw[200] = "", words[2][TOKEN_MAX_BYTES + 1];
  for (int i = 0; i < 40; i++) strcat(longw, "é"); // 80 bytes
  int n = tokenize_words(longw, words, 2);
  CHECK(n == 1, "one long word, got %d", n);
  size_t len = strlen(words[0]);
  CHECK(len <= TOKEN_MAX_BYTES && len % 2 == 0 && len >= TOKEN_MAX_BYTES - 1,
        "a long UTF-8 word is cut to %zu bytes", len);
  memset(longw, 'A', 150);
  longw[150] = 0;
  n = tokenize_words(longw, words, 2);
  CHECK(n == 1 && strlen(words[0]) == TOKEN_MAX_BYTES && words[0][0] == 'a',
        "a long ASCII word is cut to %d lowercase bytes", TOKEN_MAX_BYTES);
  // more words than room: the first max are returned
  n = tokenize_words("a b c d e", words, 2);
  CHECK(n == 2 && !strcmp(words[1], "b"), "max words: %d", n);
}

static void test_vocab(void) {
  Vocab v;
  Err err = {0};
  CHECK(vocab_from_lines(&v, "<unk>\nthe\ncat\ncafé\n", &err), "%s", err.msg);
  CHECK(v.n == 4, "a trailing newline makes no word: %d", v.n);
  CHECK(vocab_find(&v, "café") == 3 && vocab_find(&v, "dog") == -1 && vocab_find(&v, "<unk>") == 0,
        "vocab_find");
  char *lines = vocab_to_lines(&v);
  CHECK(lines && !strcmp(lines, "<unk>\nthe\ncat\ncafé"), "vocab_to_lines: \"%s\"", lines);
  free(lines);
  vocab_free(&v);

  CHECK(!vocab_from_lines(&v, "the\n<unk>", &err) && strstr(err.msg, "<unk>"), "<unk> not first: \"%s\"",
        err.msg);
  CHECK(!vocab_from_lines(&v, "", &err), "an empty vocabulary is accepted");
  CHECK(!vocab_from_lines(&v, "<unk>\nthe\n\ncat", &err) && strstr(err.msg, "empty"), "an empty word: \"%s\"",
        err.msg);
  CHECK(!vocab_from_lines(&v, "<unk>\ncat\nthe\ncat", &err) && strstr(err.msg, "twice") &&
            strstr(err.msg, "cat"),
        "a repeated word: \"%s\"", err.msg);

  // from text: <unk> then the distinct words in order of first appearance
  CHECK(vocab_from_text(&v, "The cat, THE dog; the cat's <unk> bank", &err), "%s", err.msg);
  const char *want[] = {"<unk>", "the", "cat", "dog", "s", "unk", "bank"};
  CHECK(v.n == 7, "vocab_from_text: %d words", v.n);
  for (int i = 0; i < v.n && i < 7; i++)
    CHECK(!strcmp(v.words[i], want[i]), "vocab_from_text word %d: \"%s\", expected \"%s\"", i, v.words[i],
          want[i]);
  vocab_free(&v);
  CHECK(vocab_from_text(&v, "", &err) && v.n == 1, "vocab of an empty text is just <unk>");
  vocab_free(&v);
}

static void test_tokens(void) {
  Vocab v;
  Err err = {0};
  CHECK(vocab_from_lines(&v, "<unk>\nthe\ncat\nbank\ncafé", &err), "%s", err.msg);
  Tokens t;
  CHECK(tokens_from_text(&t, &v, "The CAT sat by the bank... Café!", 0, &err), "%s", err.msg);
  int ids[] = {1, 2, 0, 0, 1, 3, 4};
  const char *words[] = {"the", "cat", "sat", "by", "the", "bank", "café"};
  CHECK(t.n == 7, "%d tokens", t.n);
  for (int i = 0; i < t.n && i < 7; i++) {
    CHECK(t.ids[i] == ids[i], "token %d id %d, expected %d", i, t.ids[i], ids[i]);
    CHECK(!strcmp(t.words[i], words[i]), "token %d typed as \"%s\"", i, t.words[i]);
    CHECK(t.unknown[i] == (ids[i] == 0), "token %d unknown flag", i);
    CHECK(!strcmp(tokens_label(&t, &v, i), ids[i] ? words[i] : "<unk>"), "label %d: %s", i,
          tokens_label(&t, &v, i));
  }
  tokens_free(&t);

  // errors: no words, too many words
  memset(&err, 0, sizeof err);
  CHECK(!tokens_from_text(&t, &v, "", 0, &err) && strstr(err.msg, "no words"), "empty text: \"%s\"", err.msg);
  CHECK(!tokens_from_text(&t, &v, " ?!... ;", 0, &err) && strstr(err.msg, "no words"),
        "punctuation only: \"%s\"", err.msg);
  CHECK(!tokens_from_text(&t, &v, "a b c d", 3, &err) && strstr(err.msg, "4 words") && strstr(err.msg, "3"),
        "too many words: \"%s\"", err.msg);
  CHECK(tokens_from_text(&t, &v, "a b c", 3, &err) && t.n == 3, "exactly max_tokens");
  tokens_free(&t);
  vocab_free(&v);
}

// Well-formed UTF-8 only: what is not (Latin-1 bytes from a terminal or a file) is refused by
// name, so a sentence never reaches a picture, an SVG or a PNG text chunk half-decoded.
static void test_utf8(void) {
  struct {
    const char *s;
    int len;
  } cases[] = {{"a", 1},
               {"\xC3\xA9", 2},
               {"\xE2\x82\xAC", 3},
               {"\xF0\x9F\x98\x80", 4},
               {"\x80", 0},
               {"\xC0\x80", 0},
               {"\xC1\xBF", 0},
               {"\xE0\x80\x80", 0},
               {"\xED\xA0\x80", 0},
               {"\xF4\x90\x80\x80", 0},
               {"\xF5\x80\x80\x80", 0},
               {"\xC3", 0},
               {"\xE2\x82", 0},
               {"\xFF", 0},
               {"", 0}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    CHECK(utf8_seq_len(cases[i].s) == cases[i].len, "utf8_seq_len case %zu: %d, expected %d", i,
          utf8_seq_len(cases[i].s), cases[i].len);
  CHECK(utf8_invalid_at("caf\xC3\xA9 ok") == -1 && utf8_invalid_at("ab\xFF c") == 2, "utf8_invalid_at");
  // utf8_lead_len reads the first byte only: what it claims, 0 where no sequence starts
  static const struct {
    unsigned char c;
    int len;
  } leads[] = {{'a', 1},  {0x7F, 1}, {0x80, 0}, {0xBF, 0}, {0xC0, 2}, {0xDF, 2},
               {0xE0, 3}, {0xEF, 3}, {0xF0, 4}, {0xF7, 4}, {0xF8, 0}, {0xFF, 0}};
  for (size_t i = 0; i < sizeof leads / sizeof *leads; i++)
    CHECK(utf8_lead_len(leads[i].c) == leads[i].len, "utf8_lead_len(0x%02X): %d, expected %d", leads[i].c,
          utf8_lead_len(leads[i].c), leads[i].len);

  Vocab v;
  Err err = {0};
  CHECK(!vocab_from_lines(&v, "<unk>\nthe\ncaf\xE9", &err) && strstr(err.msg, "word 2") &&
            strstr(err.msg, "UTF-8") && strstr(err.msg, "0xE9"),
        "a Latin-1 vocabulary word: \"%s\"", err.msg);
  CHECK(!vocab_from_text(&v, "the caf\xE9", &err) && strstr(err.msg, "sentence") && strstr(err.msg, "byte 8"),
        "a Latin-1 sentence as vocabulary: \"%s\"", err.msg);
  CHECK(vocab_from_lines(&v, "<unk>\nthe", &err), "%s", err.msg);
  Tokens t;
  CHECK(!tokens_from_text(&t, &v, "the \xFF\xFE cat", 0, &err) && strstr(err.msg, "UTF-8") &&
            strstr(err.msg, "byte 5") && strstr(err.msg, "0xFF"),
        "a sentence with bytes that are not UTF-8: \"%s\"", err.msg);
  vocab_free(&v);
}

// A large vocabulary (100 000 words, as a real tokenizer's) is read, checked for repeats and
// searched at once: every pair was compared (21 s), every lookup scanned the list.
static void test_large_vocab(void) {
  size_t cap = 100001 * 8 + 16, len = 0;
  char *lines = malloc(cap);
  len += (size_t)snprintf(lines, cap, "<unk>");
  for (int i = 0; i < 100000; i++)
    len += (size_t)snprintf(lines + len, cap - len, "\nw%d", (i * 7919) % 100000);
  Vocab v;
  Err err = {0};
  clock_t t0 = clock();
  bool ok = vocab_from_lines(&v, lines, &err);
  int found = 0;
  for (int i = 0; ok && i < 100000; i++) {
    char w[16];
    snprintf(w, sizeof w, "w%d", (i * 7919) % 100000);
    found += vocab_find(&v, w) == i + 1;
  }
  double s = (double)(clock() - t0) / CLOCKS_PER_SEC;
  CHECK(ok && v.n == 100001 && found == 100000 && vocab_find(&v, "<unk>") == 0 &&
            vocab_find(&v, "w100000") == -1,
        "a 100 000-word vocabulary: %s, %d found", err.msg, found);
  CHECK(s < 10.0, "a 100 000-word vocabulary took %.1f s", s);
  if (ok) vocab_free(&v);
  // the same with the first word repeated at the end, far from its twin
  snprintf(lines + len, cap - len, "\nw0");
  CHECK(!vocab_from_lines(&v, lines, &err) && strstr(err.msg, "\"w0\" appears twice (ids 1 and 100001)"),
        "a repeat far apart: \"%s\"", err.msg);
  free(lines);
  CHECK(!vocab_from_lines(&v, "<unk>\r\nthe\r\ncat", &err) && strstr(err.msg, "Windows"), "CRLF: \"%s\"",
        err.msg);
  CHECK(!vocab_from_lines(&v, "<unk>\nthe\n\x1b[2Jcat", &err) && strstr(err.msg, "word 2") &&
            strstr(err.msg, "0x1B"),
        "an escape sequence in a word: \"%s\"", err.msg);
}

int main(void) {
  test_utf8();
  test_large_vocab();
  test_words();
  test_vocab();
  test_tokens();
  return check_exit("test_tokenizer");
}
