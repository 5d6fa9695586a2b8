// test_bpe.c -- GPT-2's byte-level BPE (core/bpe.h) against the reference ids of every committed
// sentence (tests/ref/gpt2/ref_ids.txt, made by npm gpt-3-encoder: see tests/gen_tokenizer_ref.js),
// decoding back to the same bytes, labels, bytes that are not UTF-8, and the loader's errors.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpe.h" // defines: Bpe, bpe_load_dir, bpe_encode
#include "check.h"
#include "tokref.h" // defines: TokRef, tokref_load

static Bpe gpt2;

// Encodes s (n bytes) and compares with want[0..n_want); prints both on a mismatch.
static int same_ids(const char *s, size_t n, const int *want, int n_want, const char *what) {
  int *ids, n_ids;
  Err err = {0};
  if (!bpe_encode(&gpt2, s, n, &ids, &n_ids, &err)) return 0;
  int same = n_ids == n_want && memcmp(ids, want, (size_t)n_ids * sizeof *ids) == 0;
  if (!same) {
    fprintf(stderr, "%s: \"%s\"\n  got ", what, s);
    for (int i = 0; i < n_ids; i++) fprintf(stderr, " %d", ids[i]);
    fprintf(stderr, "\n  want");
    for (int i = 0; i < n_want; i++) fprintf(stderr, " %d", want[i]);
    fputc('\n', stderr);
  }
  free(ids);
  return same;
}

static int roundtrips(const char *s, size_t n) {
  int *ids, n_ids;
  Err err = {0};
  if (!bpe_encode(&gpt2, s, n, &ids, &n_ids, &err)) return 0;
  size_t len;
  char *back = bpe_decode(&gpt2, ids, n_ids, &len);
  int ok = back && len == n && memcmp(back, s, n) == 0;
  free(back);
  free(ids);
  return ok;
}

static void test_reference(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/ref/gpt2/ref_ids.txt", check_test_dir());
  TokRef r;
  CHECK(tokref_load(&r, path), "%s", path);
  int agree = 0, back = 0;
  for (int i = 0; i < r.n; i++) {
    agree += same_ids(r.text[i], r.len[i], r.ids[i], r.n_ids[i], "reference mismatch");
    back += roundtrips(r.text[i], r.len[i]);
  }
  printf("test_bpe: %d of %d sentences give the reference ids\n", agree, r.n);
  CHECK(r.n >= 300 && agree == r.n, "%d of %d sentences agree", agree, r.n);
  CHECK(back == r.n, "%d of %d sentences decode to themselves", back, r.n);
  tokref_free(&r);
}

static void test_known(void) {
  // the lesson's sentence, and ids anyone can check against the hub's tokenizer
  const int cat[] = {464, 3797, 11114, 416, 262, 3331};
  CHECK(same_ids("The cat walks by the bank", 25, cat, 6, "cat"), "The cat walks by the bank");
  CHECK(gpt2.n_vocab == 50257 && gpt2.n_merges == 50000, "V=%d merges=%d", gpt2.n_vocab, gpt2.n_merges);
  CHECK(bpe_find(&gpt2, "\xC4\xA0"
                        "cat") == 3797,
        "Ġcat is 3797");
  CHECK(bpe_find(&gpt2, "<|endoftext|>") == 50256, "<|endoftext|> is the last id");
  // the byte alphabet: a space is Ġ (U+0120), a newline Ċ (U+010A), 0xFF is ÿ
  CHECK(gpt2.byte_id[' '] == bpe_find(&gpt2, "\xC4\xA0"), "space is Ġ");
  CHECK(gpt2.byte_id['\n'] == bpe_find(&gpt2, "\xC4\x8A"), "newline is Ċ");
  CHECK(gpt2.byte_id[0xFF] == bpe_find(&gpt2, "\xC3\xBF"), "0xFF is ÿ");
}

static void test_labels(void) {
  char label[64];
  bpe_label(&gpt2, 3797, label, sizeof label);
  CHECK(!strcmp(label, "\xE2\x90\xA3"
                       "cat"),
        "Ġcat is labelled ␣cat, got %s", label);
  bpe_label(&gpt2, 464, label, sizeof label);
  CHECK(!strcmp(label, "The"), "The, got %s", label);
  bpe_label(&gpt2, gpt2.byte_id['\n'], label, sizeof label);
  CHECK(!strcmp(label, "\xE2\x86\xB5"), "newline is ↵, got %s", label);
  bpe_label(&gpt2, gpt2.byte_id['\t'], label, sizeof label);
  CHECK(!strcmp(label, "\xE2\x87\xA5"), "tab is ⇥, got %s", label);
  bpe_label(&gpt2, gpt2.byte_id[0xF0], label, sizeof label);
  CHECK(!strcmp(label, "\\xF0"), "a lone lead byte is \\xF0, got %s", label);
  bpe_label(&gpt2, gpt2.byte_id[0], label, sizeof label);
  CHECK(!strcmp(label, "\\x00"), "NUL is \\x00, got %s", label);
  size_t k = bpe_label(&gpt2, 3797, label, 4); // "␣" is 3 bytes: "␣c" does not fit in 4 with the NUL
  CHECK(k == 3 && !strcmp(label, "\xE2\x90\xA3"), "cut between characters, got %zu", k);
  // an emoji is two tokens: its first bytes, then the rest, each labelled by its bytes
  int *ids, n;
  Err err = {0};
  CHECK(bpe_encode(&gpt2, "\xF0\x9F\x98\x80", 4, &ids, &n, &err) && n == 2, "😀 is %d tokens", n);
  if (n == 2) {
    bpe_label(&gpt2, ids[0], label, sizeof label);
    CHECK(!strcmp(label, "\\xF0\\x9F\\x98"), "got %s", label);
    bpe_label(&gpt2, ids[1], label, sizeof label);
    CHECK(!strcmp(label, "\\x80"), "got %s", label);
  }
  free(ids);
}

// Bytes that are not UTF-8 are kept, one character each, neither letter, number nor space.
static void test_invalid_utf8(void) {
  const char *cases[] = {"\xFF",
                         "caf\xE9",
                         "\xC0\xAF overlong",
                         "\xED\xA0\x80 surrogate",
                         "cut \xE2\x82",
                         "\x80\x80\x80",
                         "a\xFF!b",
                         ("1\xFE"
                          "2")};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    CHECK(roundtrips(cases[i], strlen(cases[i])), "case %zu decodes to itself", i);
  int want_ff[] = {gpt2.byte_id[0xFF]};
  CHECK(same_ids("\xFF", 1, want_ff, 1, "0xFF"), "0xFF alone is the token ÿ");
  // "a\xFF" is not one letter run: the byte ends the word "a" (as a punctuation character would)
  int *ids, n;
  Err err = {0};
  bpe_encode(&gpt2, "a\xFF", 2, &ids, &n, &err);
  CHECK(n == 2 && ids[0] == bpe_find(&gpt2, "a") && ids[1] == gpt2.byte_id[0xFF], "a then ÿ, n=%d", n);
  free(ids);
  // and it joins a punctuation run: "!\xFF!" is one piece, so it encodes as the bytes merge
  bpe_encode(&gpt2, "x!\xFF", 3, &ids, &n, &err);
  CHECK(n >= 2 && ids[0] == bpe_find(&gpt2, "x"), "x first");
  free(ids);
  bpe_encode(&gpt2, "", 0, &ids, &n, &err);
  CHECK(ids != NULL && n == 0, "empty text: no ids");
  free(ids);
}

// A tiny tokenizer from memory: every byte, then merges by rank.
static const char *tiny_vocab_json(void) {
  static char json[1 << 14];
  if (json[0]) return json;
  size_t k = 0;
  k += (size_t)snprintf(json + k, sizeof json - k, "{");
  for (int b = 0; b < 256; b++) {
    // bytes_to_unicode, written as JSON \u escapes
    int cp = b, n = 0;
    if (!((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174)) {
      for (int c = 0; c < b; c++) n += !((c >= 33 && c <= 126) || (c >= 161 && c <= 172) || c >= 174);
      cp = 256 + n;
    }
    k += (size_t)snprintf(json + k, sizeof json - k, "\"\\u%04x\": %d, ", cp, b);
  }
  snprintf(json + k, sizeof json - k, "\"ab\": 256, \"abc\": 257, \"aa\": 258, \"bc\": 259}");
  return json;
}

// The tiny vocabulary again with its tokens as UTF-8 bytes (\" and \\ escaped): what most
// vocab.json files hold, which bpe.c reads without cJSON (tiny_vocab_json's \u escapes go through
// cJSON).
static const char *tiny_vocab_utf8(void) {
  static char json[1 << 14];
  if (json[0]) return json;
  size_t k = (size_t)snprintf(json, sizeof json, "{");
  for (int b = 0; b < 256; b++) {
    int cp = b, n = 0;
    if (!((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174)) {
      for (int c = 0; c < b; c++) n += !((c >= 33 && c <= 126) || (c >= 161 && c <= 172) || c >= 174);
      cp = 256 + n;
    }
    char u[8];
    if (cp == '"' || cp == '\\')
      snprintf(u, sizeof u, "\\%c", cp);
    else if (cp < 0x80)
      snprintf(u, sizeof u, "%c", cp);
    else
      snprintf(u, sizeof u, "%c%c", 0xC0 | cp >> 6, 0x80 | (cp & 0x3F));
    k += (size_t)snprintf(json + k, sizeof json - k, "\"%s\": %d, ", u, b);
  }
  snprintf(json + k, sizeof json - k, "\"ab\": 256, \"abc\": 257, \"aa\": 258, \"bc\": 259}");
  return json;
}

// Both readers of vocab.json give the same tokens, ids and messages: the UTF-8 form against the
// \u form, and each case as it is (read without cJSON when it can be) against the same bytes after
// a UTF-8 byte order mark (which only cJSON reads).
static void test_two_readers(void) {
  const char *merges = "a b\n";
  Bpe x, y;
  Err ex = {0}, ey = {0};
  const char *fast = tiny_vocab_utf8(), *slow = tiny_vocab_json();
  CHECK(bpe_load(&x, fast, strlen(fast), "v.json", merges, strlen(merges), "m.txt", &ex), "%s", ex.msg);
  CHECK(bpe_load(&y, slow, strlen(slow), "v.json", merges, strlen(merges), "m.txt", &ey), "%s", ey.msg);
  CHECK(x.n_vocab == 260 && y.n_vocab == 260, "V=%d and %d", x.n_vocab, y.n_vocab);
  for (int i = 0; i < x.n_vocab && i < y.n_vocab; i++)
    CHECK(x.token_lens[i] == y.token_lens[i] && !memcmp(x.tokens[i], y.tokens[i], (size_t)x.token_lens[i]),
          "token %d", i);
  bpe_free(&x);
  bpe_free(&y);
  const char *cases[] = {
      "{}",
      " \t{ } trailing",
      "{\"a\": 0, \"a\": 1}",
      "{\"a\": 0, \"b\": 0}",
      "{\"a\": 007}",
      "{\"a\": 1e0}",
      "{\"a\": 1000000000}",
      "{\"a\": 999999999}",
      "{\"a\": -0}",
      "{\"a\": 0,}",
      "{\"a\" 0}",
      "{\"a\": 0 \"b\": 1}",
      "{\"a\\/b\": 0}",
      "{\"a\\\"\": 1}",
      "{\"\\u0041\": 0}",
      "{\"a\": 0}x",
      "{\"a\": 0} {",
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char bom[128];
    snprintf(bom, sizeof bom, "\xEF\xBB\xBF%s", cases[i]);
    ex = ey = (Err){0};
    bool okx = bpe_load(&x, cases[i], strlen(cases[i]), "v.json", merges, strlen(merges), "m.txt", &ex);
    bool oky = bpe_load(&y, bom, strlen(bom), "v.json", merges, strlen(merges), "m.txt", &ey);
    bool json_error = strstr(ex.msg, "not valid JSON") != NULL; // its byte offset moves by the mark
    CHECK(!okx && !oky && (json_error ? strstr(ey.msg, "not valid JSON") != NULL : !strcmp(ex.msg, ey.msg)),
          "case %zu: \"%s\" vs \"%s\"", i, ex.msg, ey.msg);
  }
}

static void test_tiny_and_errors(void) {
  const char *json = tiny_vocab_json();
  Bpe b;
  Err err = {0};
  const char *merges = "#version: 0.2\na b\nab c\na a\nb c\n";
  CHECK(bpe_load(&b, json, strlen(json), "v.json", merges, strlen(merges), "m.txt", &err), "%s", err.msg);
  int *ids, n;
  // "aaa": pair (a a) rank 2 merges left to right: aa a
  bpe_encode(&b, "aaa", 3, &ids, &n, &err);
  CHECK(n == 2 && ids[0] == 258 && ids[1] == 'a', "aaa -> aa a, n=%d", n);
  free(ids);
  // "abc": (a b) rank 0 first, then (ab c) rank 1, although (b c) exists at rank 3
  bpe_encode(&b, "abc", 3, &ids, &n, &err);
  CHECK(n == 1 && ids[0] == 257, "abc -> abc, n=%d", n);
  free(ids);
  bpe_encode(&b, "bcab", 4, &ids, &n, &err);
  CHECK(n == 2 && ids[0] == 259 && ids[1] == 256, "bcab -> bc ab, n=%d", n);
  free(ids);
  bpe_free(&b);

  // a pair listed twice keeps its later rank: (b c) before (a b) now, so "abc" is a bc
  const char *twice = "b c\na b\nab c\nb c\n";
  CHECK(bpe_load(&b, json, strlen(json), "v.json", twice, strlen(twice), "m.txt", &err), "%s", err.msg);
  bpe_encode(&b, "abc", 3, &ids, &n, &err);
  CHECK(n == 1 && ids[0] == 257, "abc still one token (a b rank 1 < b c rank 3), n=%d", n);
  free(ids);
  bpe_free(&b);
  // CRLF merges are read too
  const char *crlf = "#version: 0.2\r\na b\r\n";
  CHECK(bpe_load(&b, json, strlen(json), "v.json", crlf, strlen(crlf), "m.txt", &err), "%s", err.msg);
  CHECK(b.n_merges == 1, "one merge");
  bpe_free(&b);

  struct {
    const char *vocab, *merges, *want;
  } bad[] = {
      {"[1, 2]", "", "v.json: not a JSON object"},
      {"{\"a\": 0", "", "v.json: not valid JSON"},
      {"{}", "", "v.json: the vocabulary is empty"},
      {"{\"a\": 0.5}", "", "not a whole number"},
      {"{\"a\": 2500000000000000000000000007}", "", "not a whole number below 1e9"},
      {"{\"a\": \"0\"}", "", "not a whole number"},
      {"{\"a\": -1}", "", "outside 0..0"},
      {"{\"a\": 0, \"b\": 5}", "", "outside 0..1"},
      {"{\"a\": 0, \"b\": 0}", "", "share id 0"},
      {"{\"a\": 0}", "", "no token for byte 0x00"},
      {NULL, "a b c\n", "m.txt:1: expected two tokens"},
      {NULL, "a b\nab\n", "m.txt:2: expected two tokens"},
      {NULL, "a  b\n", "m.txt:1: expected two tokens"},
      {NULL, "a b\nx y\n", "m.txt:2: \"x y\" uses or makes a token that vocab.json lacks"},
      {NULL, "b a\n", "m.txt:1: \"b a\" uses or makes"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    const char *v = bad[i].vocab ? bad[i].vocab : json;
    err = (Err){0};
    bool ok = bpe_load(&b, v, strlen(v), "v.json", bad[i].merges, strlen(bad[i].merges), "m.txt", &err);
    CHECK(!ok && strstr(err.msg, bad[i].want) && !strchr(err.msg, '\n'), "case %zu: %s", i, err.msg);
    CHECK(b.tokens == NULL && b.n_vocab == 0, "case %zu: nothing kept", i);
  }
  err = (Err){0};
  CHECK(!bpe_load_dir(&b, "/nonexistent-folder", &err) && strstr(err.msg, "/nonexistent-folder/vocab.json") &&
            strstr(err.msg, "holds vocab.json and merges.txt"),
        "%s", err.msg);
}

int main(void) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/ref/gpt2", check_test_dir());
  Err err = {0};
  if (!bpe_load_dir(&gpt2, dir, &err)) {
    fprintf(stderr, "test_bpe: %s\n", err.msg);
    return 1;
  }
  test_known();
  test_reference();
  test_labels();
  test_invalid_utf8();
  test_tiny_and_errors();
  test_two_readers();
  bpe_free(&gpt2);
  return check_exit("test_bpe");
}
