// test_wordpiece.c -- BERT's WordPiece (core/wordpiece.h): bert-base-uncased's vocabulary against the
// reference ids of every committed sentence (tests/ref/bert/ref_ids.txt, made with Hugging Face's
// tokenizers: see tests/gen_tokenizer_ref.js), then DESIGN.md's edge cases on a small vocabulary
// whose expected ids are worked out by hand from BertTokenizer's algorithm (wordpiece.h, steps 1-7).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tokref.h"    // defines: TokRef, tokref_load
#include "wordpiece.h" // defines: WordPiece, wp_load, wp_encode

// Encodes s and compares with the n_want ids of want; prints both on a mismatch.
static int same_ids(const WordPiece *w, const char *s, size_t n, const int *want, int n_want) {
  int *ids, n_ids;
  Err err = {0};
  if (!wp_encode(w, s, n, &ids, &n_ids, &err)) return 0;
  int same = n_ids == n_want && memcmp(ids, want, (size_t)n_ids * sizeof *ids) == 0;
  if (!same) {
    fprintf(stderr, "mismatch: \"%s\"\n  got ", s);
    for (int i = 0; i < n_ids; i++) fprintf(stderr, " %d", ids[i]);
    fprintf(stderr, "\n  want");
    for (int i = 0; i < n_want; i++) fprintf(stderr, " %d", want[i]);
    fputc('\n', stderr);
  }
  free(ids);
  return same;
}

// Where Hugging Face's tokenizers (the reference) and BertTokenizer differ: Rust lowercases Σ always
// to σ, Python's str.lower() (BertTokenizer's) writes ς at a word's end. By hand, from
// tests/ref/bert/vocab.txt (line = id + 1): "ΟΔΟΣ" -> "οδος" -> ο (1169) ##δ (29722) ##ος (15297,
// "##ο" + final "ς"); "ΣΊΣΥΦΟΣ" -> "σίσυφος" -> NFD without Mn "σισυφος" -> σ (1173) ##ι (18199)
// ##σ (29733) ##υ (29735) ##φ (29736) ##ος (15297). The reference's ids for these are ##ο ##σ at the end.
static const struct {
  const char *text;
  int ids[16], n;
} bert_not_rust[] = {
    {"Οδυσσεύς ΟΔΟΣ",
     {101, 1169, 29722, 29735, 29733, 29733, 29723, 29735, 19579, 1169, 29722, 15297, 102},
     13},
    {"ΣΊΣΥΦΟΣ", {101, 1173, 18199, 29733, 29735, 29736, 15297, 102}, 8},
};

static void test_reference(void) {
  char dir[4096], path[4200];
  snprintf(dir, sizeof dir, "%s/ref/bert", check_test_dir());
  WordPiece w;
  Err err = {0};
  CHECK(wp_load_dir(&w, dir, true, &err), "%s", err.msg);
  if (!w.tokens) return;
  CHECK(w.n == 30522 && w.unk == 100 && w.cls == 101 && w.sep == 102 && w.mask == 103 && w.pad == 0,
        "bert-base-uncased: V=%d", w.n);
  const int cat[] = {101, 1996, 4937, 7365, 2011, 1996, 2924, 102};
  CHECK(same_ids(&w, "The cat walks by the bank", 25, cat, 8), "the lesson's sentence");
  snprintf(path, sizeof path, "%s/ref_ids.txt", dir);
  TokRef r;
  CHECK(tokref_load(&r, path), "%s", path);
  int agree = 0;
  int differ = 0;
  for (int i = 0; i < r.n; i++) {
    int k = -1;
    for (int j = 0; j < (int)(sizeof bert_not_rust / sizeof *bert_not_rust); j++)
      if (!strcmp(r.text[i], bert_not_rust[j].text)) k = j;
    if (k >= 0) differ++;
    agree += k < 0 ? same_ids(&w, r.text[i], r.len[i], r.ids[i], r.n_ids[i])
                   : same_ids(&w, r.text[i], r.len[i], bert_not_rust[k].ids, bert_not_rust[k].n);
  }
  CHECK(differ == 2, "the sentences where Python's lowercasing differs are in the reference");
  printf("test_wordpiece: %d of %d sentences agree (%d of them BertTokenizer's final sigma)\n", agree, r.n,
         differ);
  CHECK(r.n >= 300 && agree == r.n, "%d of %d sentences agree", agree, r.n);
  tokref_free(&r);
  wp_free(&w);
}

// A small vocabulary, every id checkable by eye: the line index is the id.
static const char *fixture = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n"            // 0-4
                             "the\ncat\nwalks\nby\nbank\n"                     // 5-9
                             "[\n]\nmask\n.\ncafe\n"                           // 10-14
                             "un\n##aff\n##able\n\xE4\xB8\xAD\n\xE6\x96\x87\n" // 15-19: un ##aff ##able 中 文
                             ",\n!\n##s\na\n##a\n"                             // 20-24
                             "cat\n"                                 // 25: "cat" again: the later line wins
                             "\xCE\xBF\xCF\x82\n\xCF\x83\xCE\xBF\n"; // 26 ος (final sigma), 27 σο

#define IDS(...) ((const int[]){__VA_ARGS__}), (int)(sizeof((const int[]){__VA_ARGS__}) / sizeof(int))

static void test_fixture(void) {
  WordPiece w;
  Err err = {0};
  CHECK(wp_load(&w, fixture, strlen(fixture), "fixture", true, &err), "%s", err.msg);
  if (!w.tokens) return;
  CHECK(w.n == 28 && w.mask == 4 && w.unk == 1, "V=%d", w.n);
  // a token twice: the later line's index; the earlier id keeps its label
  CHECK(strtab_get(&w.index, "cat", 3) == 25 && !strcmp(wp_token(&w, 6), "cat"), "cat is 25");
#define CASE(text, ...) CHECK(same_ids(&w, text, strlen(text), IDS(__VA_ARGS__)), "%s", text)
  CASE("The cat walks by the [MASK].", 2, 5, 25, 7, 8, 5, 4, 13, 3);
  CASE("the[MASK]cat", 2, 5, 4, 25, 3); // cut out of the raw text, even inside a word
  CASE("[mask]", 2, 10, 12, 11, 3);     // case-sensitive: [ mask ]
  CASE("[Mask] [MASK ]", 2, 10, 12, 11, 10, 12, 11, 3);
  CASE("[CLS][SEP]", 2, 2, 3, 3);
  CASE("Café CAFE\xCC\x81 cafe", 2, 14, 14, 14, 3); // accents stripped, composed or not
  CASE("unaffable", 2, 15, 16, 17, 3);              // greedy longest match, ## continuations
  CASE("cats", 2, 25, 22, 3);
  CASE("catz cat", 2, 1, 25, 3);                      // no split for "##z": the whole word is [UNK]
  CASE("\xE4\xB8\xAD\xE6\x96\x87x", 2, 18, 19, 1, 3); // 中文x: each ideograph a word
  CASE("cat,cat!!", 2, 25, 20, 25, 21, 21, 3);        // each punctuation character a word
  CASE("c\xE2\x80\x8B"
       "at c\xC2\xAD"
       "at \x01"
       "cat\xEF\xBF\xBD",
       2, 25, 25, 25, 3);    // ZWSP, soft hyphen, ^A, U+FFFD
  CASE("ca\xFFt", 2, 25, 3); // a byte that is not UTF-8 counts as U+FFFD: deleted
  CASE("the\xC2\xA0"
       "cat\tby\nbank\r\nthe\xE2\x80\xA8"
       "cat",
       2, 5, 25, 8, 9, 5, 25, 3);                          // NBSP, tab, newline, U+2028
  CASE("\xCE\x9F\xCE\xA3 \xCE\xA3\xCE\x9F", 2, 26, 27, 3); // ΟΣ -> ος (final), ΣΟ -> σο
  CASE("", 2, 3);
  CASE(" \t\n ", 2, 3);
  char word[128];
  memset(word, 'a', 100), word[100] = 0; // 100 characters: a ##a ... (99 times)
  int *ids, n;
  wp_encode(&w, word, 100, &ids, &n, &err);
  CHECK(n == 102 && ids[1] == 23 && ids[2] == 24 && ids[100] == 24, "100 a's: a + 99 ##a, n=%d", n);
  free(ids);
  memset(word, 'a', 101), word[101] = 0;
  CASE(word, 2, 1, 3); // 101 characters: [UNK]
  wp_free(&w);

  // cased (do_lower_case false): no lowercasing, no accent stripping
  CHECK(wp_load(&w, fixture, strlen(fixture), "fixture", false, &err), "%s", err.msg);
  CASE("The cat", 2, 1, 25, 3);
  CASE("caf\xC3\xA9", 2, 1, 3);
  wp_free(&w);
#undef CASE
}

static void test_load(void) {
  WordPiece w;
  Err err = {0};
  // \r\n and \r end lines too; no newline after the last line; an empty line is an id
  const char *crlf = "[UNK]\r\n[CLS]\r[SEP]\n\nx";
  CHECK(wp_load(&w, crlf, strlen(crlf), "v", true, &err) && w.n == 5 && w.sep == 2 &&
            strtab_get(&w.index, "x", 1) == 4 && !strcmp(wp_token(&w, 3), ""),
        "%s", err.msg);
  wp_free(&w);
  struct {
    const char *text, *want;
  } bad[] = {
      {"[CLS]\n[SEP]\n", "v: no line holds [UNK]"},
      {"[UNK]\n[SEP]\n", "v: no line holds [CLS]"},
      {"[UNK]\n[CLS]\n", "v: no line holds [SEP]"},
      {"[UNK]\n[CLS]\n[SEP]\nca\xFF\n", "v:4: not UTF-8 text"},
      {"", "v: no line holds [UNK]"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    err = (Err){0};
    CHECK(!wp_load(&w, bad[i].text, strlen(bad[i].text), "v", true, &err) && strstr(err.msg, bad[i].want) &&
              w.tokens == NULL,
          "case %zu: %s", i, err.msg);
  }
  CHECK(!wp_load(&w, "[UNK]\n\0\n", 8, "v", true, &err) && strstr(err.msg, "v:2: not UTF-8"), "%s", err.msg);
  CHECK(!wp_load_dir(&w, "/nonexistent-folder", true, &err) &&
            strstr(err.msg, "/nonexistent-folder/vocab.txt") && strstr(err.msg, "holds vocab.txt"),
        "%s", err.msg);
}

int main(void) {
  test_reference();
  test_fixture();
  test_load();
  return check_exit("test_wordpiece");
}
