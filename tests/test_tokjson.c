// test_tokjson.c -- the tokenizer.json reader (tokenizers/tokjson.h) against the reference ids of
// four real tokenizers (tests/ref/tokjson/NAME_ids.txt, made by tests/gen_tokjson_ref.js with npm's
// @lenml/tokenizers and Hugging Face's own library, which agree): Llama 3.1's, Qwen 3's, a Llama 2
// SentencePiece BPE and a SmolLM2-style one; and variants (the library's ids): the Llama 2 file with
// a Metaspace pre-tokenizer in two forms, the SmolLM2-style one with add_prefix_space, and with
// lstrip and rstrip on its chat markers. The tokenizer.json
// files are kept gzipped and read with zlib. Also: decoding back to the text, encoding without special
// tokens, labels, and bad files.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model.h"        // defines: TOK_TOKJSON
#include "model_tokens.h" // defines: model_tokenizer_from_json, model_tokenizer_vocab
#include "tokjson.h"      // defines: TokJson, tokjson_load, tokjson_encode, tokjson_decode
#include "tokjson_ref.h"  // defines: tokjson_ref_read
#include "tokref.h"       // defines: TokRef, tokref_load

static void print_ids(const char *what, const int *ids, int n) {
  fprintf(stderr, "  %s", what);
  for (int i = 0; i < n; i++) fprintf(stderr, " %d", ids[i]);
  fputc('\n', stderr);
}

// s with the text from `from` up to `to` (first occurrences) replaced by put (malloc'd).
static char *cut(char *s, const char *from, const char *to, const char *put) {
  char *a = strstr(s, from), *b = strstr(s, to);
  EXPECT(a && b && b >= a);
  size_t na = (size_t)(a - s), np = strlen(put), nb = strlen(b);
  char *o = malloc(na + np + nb + 1);
  EXPECT(o);
  memcpy(o, s, na);
  memcpy(o + na, put, np);
  memcpy(o + na + np, b, nb + 1);
  free(s);
  return o;
}

#define META_FIRST                                                                                           \
  "{\"type\": \"Metaspace\", \"replacement\": \"\xE2\x96\x81\", \"prepend_scheme\": \"first\", \"split\": "  \
  "false}"
#define META_SPLIT                                                                                           \
  "{\"type\": \"Metaspace\", \"replacement\": \"\xE2\x96\x81\", \"prepend_scheme\": \"always\", \"split\": " \
  "true}"

// A committed tokenizer.json, or llama2meta / llama2split made from llama2's as
// tests/gen_tokjson_ref.js's variant() makes them: a Metaspace pre-tokenizer for the normalizer.
static char *read_json(const char *name, size_t *len) {
  bool meta = !strcmp(name, "llama2meta"), split = !strcmp(name, "llama2split");
  if (!strncmp(name, "smollm2", 7) && name[7]) { // smollm2prefix, smollm2strip
    char *s = tokjson_ref_read("smollm2", len);
    s = realloc(s, *len + 1);
    s[*len] = 0;
    if (!strcmp(name, "smollm2prefix")) // the first "add_prefix_space":false made true
      s = cut(s, "\"add_prefix_space\":false", ",\"trim_offsets\"", "\"add_prefix_space\":true");
    else { // lstrip on <|im_start|>, rstrip on <|im_end|>
      s = cut(s, "\"content\":\"<|im_start|>\",\"single_word\":false,\"lstrip\":false",
              ",\"rstrip\":false,\"normalized\":false,\"special\":true},{\"id\":50258",
              "\"content\":\"<|im_start|>\",\"single_word\":false,\"lstrip\":true");
      s = cut(s, "\"content\":\"<|im_end|>\",\"single_word\":false,\"lstrip\":false,\"rstrip\":false",
              ",\"normalized\":false,\"special\":true}],\"normalizer\"",
              "\"content\":\"<|im_end|>\",\"single_word\":false,\"lstrip\":false,\"rstrip\":true");
    }
    *len = strlen(s);
    return s;
  }
  if (!meta && !split) return tokjson_ref_read(name, len);
  char *s = tokjson_ref_read("llama2", len);
  s = realloc(s, *len + 1);
  s[*len] = 0;
  s = cut(s, "\"normalizer\": {", "\"post_processor\": {",
          meta ? "\"normalizer\": null,\n  \"pre_tokenizer\": " META_FIRST ",\n  "
               : "\"normalizer\": null,\n  \"pre_tokenizer\": " META_SPLIT ",\n  ");
  if (meta) s = cut(s, "\"decoder\": {", "\"model\": {", "\"decoder\": " META_FIRST ",\n  ");
  *len = strlen(s);
  return s;
}

static TokJson load_ref(const char *name) {
  size_t len;
  char *json = read_json(name, &len);
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

// Special tokens as text, the BOS left out, labels, and the hub folder's entry point.
static void test_special_and_labels(void) {
  TokJson t = load_ref("qwen3");
  Err err = {0};
  const char *chat = "<|im_start|>user\nHi<|im_end|>";
  int *ids, n;
  EXPECT(tokjson_encode(&t, chat, strlen(chat), true, true, &ids, &n, &err));
  CHECK(n == 5 && ids[0] == tokjson_find(&t, "<|im_start|>") && ids[4] == tokjson_find(&t, "<|im_end|>"),
        "the chat markers are one token each (%d tokens)", n);
  free(ids);
  EXPECT(tokjson_encode(&t, chat, strlen(chat), true, false, &ids, &n, &err));
  bool none = true;
  for (int i = 0; i < n; i++) none = none && !t.special[ids[i]];
  CHECK(n > 10 && none, "without special handling the markers are text (%d tokens)", n);
  size_t m;
  char *back = tokjson_decode(&t, ids, n, false, &m);
  CHECK(back && m == strlen(chat) && !memcmp(back, chat, m), "and decode back: %s", back);
  free(back);
  free(ids);
  char label[64];
  tokjson_label(&t,
                tokjson_find(&t, "\xC4\xA0"
                                 "cat"),
                label, sizeof label);
  CHECK(!strcmp(label, "\xE2\x90\xA3"
                       "cat"),
        "Ġcat is labelled ␣cat, got %s", label);
  tokjson_label(&t, tokjson_find(&t, "\xC4\x8A"), label, sizeof label);
  CHECK(!strcmp(label, "\xE2\x86\xB5"), "Ċ is labelled ↵, got %s", label);
  tokjson_label(&t, tokjson_find(&t, "<|im_start|>"), label, sizeof label);
  CHECK(!strcmp(label, "<|im_start|>"), "an added token is itself, got %s", label);
  tokjson_label(&t, t.n_vocab + 5, label, sizeof label);
  CHECK(!strncmp(label, "<unused", 7), "an id past the vocabulary, got %s", label);
  // not UTF-8: every byte encoded, decoded back as it was
  const char bad[] = "caf\xE9 \xFF\xFE x\xE2\x82";
  EXPECT(tokjson_encode(&t, bad, sizeof bad - 1, true, true, &ids, &n, &err));
  back = tokjson_decode(&t, ids, n, true, &m);
  CHECK(back && m == sizeof bad - 1 && !memcmp(back, bad, m),
        "bytes that are not UTF-8 come back as they were");
  free(back);
  free(ids);
  tokjson_free(&t);

  t = load_ref("llama2");
  EXPECT(tokjson_encode(&t, "Hi", 2, false, true, &ids, &n, &err));
  CHECK(n >= 1 && ids[0] != 1, "no BOS when add_special is false");
  free(ids);
  EXPECT(
      tokjson_encode(&t, "\xF0\x9F\xA6\x99", 4, true, true, &ids, &n, &err)); // a character without a token
  CHECK(n == 6 && ids[0] == 1 && ids[2] == tokjson_find(&t, "<0xF0>"),
        "byte fallback: BOS ▁ and 4 bytes (%d)", n);
  tokjson_label(&t, ids[2], label, sizeof label);
  CHECK(!strcmp(label, "\\xF0"), "<0xF0> is labelled \\xF0, got %s", label);
  free(ids);
  tokjson_free(&t);

  // the hub folder's entry point: a folder with tokenizer.json
  size_t len;
  char *json = tokjson_ref_read("smollm2", &len);
  char dir[] = "/tmp/test_tokjson_XXXXXX", file[4200];
  EXPECT(mkdtemp(dir));
  snprintf(file, sizeof file, "%s/tokenizer.json", dir);
  FILE *fp = fopen(file, "wb");
  EXPECT(fp && fwrite(json, 1, len, fp) == len && fclose(fp) == 0);
  free(json);
  ModelTokenizer *tk = model_tokenizer_from_json(dir, &err);
  CHECK(tk && tk->kind == TOK_TOKJSON, "model_tokenizer_from_json: %s", err.msg);
  Vocab v;
  if (tk && model_tokenizer_vocab(tk, &v, &err)) {
    CHECK(v.n == 50259 && !strcmp(v.words[464], "The") && !strcmp(v.words[50257], "<|im_start|>"),
          "labels: %d, %s", v.n, v.words[464]);
    vocab_free(&v);
  }
  if (tk && model_tokenizer_labels(tk, 50300, &v, &err)) {
    CHECK(v.n == 50300 && !strcmp(v.words[50299], "<unused 50299>"), "labels for 50 300 rows: %d", v.n);
    vocab_free(&v);
  }
  model_tokenizer_free(tk);
  tk = model_tokenizer_from_json("/nonexistent/folder", &err);
  CHECK(!tk && strstr(err.msg, "tokenizer.json"), "a folder without tokenizer.json: %s", err.msg);
  remove(file);
  remove(dir);
}

// A bad file is one line that names it and says what is wrong.
static void test_bad_files(void) {
  const char *ok_vocab = "\"vocab\": {\"a\": 0, \"b\": 1, \"ab\": 2}, \"merges\": [\"a b\"]";
  struct {
    const char *json, *want;
  } cases[] = {
      {"{", "not valid JSON"},
      {"[1]", "not a JSON object"},
      {"{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}", "the model is Unigram"},
      {"{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}", "the model is WordPiece"},
      {"{}", "no \"model\" object"},
      {"{\"model\": {\"type\": \"BPE\", \"vocab\": [], \"merges\": []}}", "model.vocab is not an object"},
      {"{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}}", "model.vocab is empty"},
      {"{\"model\": {\"vocab\": {\"a\": -1}, \"merges\": []}}", "is not a whole number"},
      {"{\"model\": {\"vocab\": {\"a\": 0, \"b\": 0}, \"merges\": []}}", "share id 0"},
      {"{\"model\": {\"vocab\": {\"a\": 0, \"b\": 99999}, \"merges\": []}}", "few gaps"},
      {"{\"model\": {\"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": [\"a c\"]}}", "lacks"},
      {"{\"model\": {\"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": [\"ab\"]}}", "neither \"a b\""},
      {"{\"model\": {\"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": [[\"a\"]]}}", "neither \"a b\""},
      {"{\"model\": {\"vocab\": {\"a\": 0}, \"merges\": {}}}", "model.merges is not a list"},
      {"{\"model\": {\"vocab\": {\"a\": 0}, \"merges\": [], \"unk_token\": \"<unk>\"}}", "unk_token"},
      {"{\"model\": {\"vocab\": {\"a\": 0}, \"merges\": [], \"byte_fallback\": true}}", "lacks <0x00>"},
      {"{\"model\": {\"vocab\": {\"a\": 0}, \"merges\": [], \"dropout\": 0.1}}", "dropout"},
      {"{\"model\": {\"vocab\": {\"a\": 0}, \"merges\": [], \"continuing_subword_prefix\": \"##\"}}",
       "continuing_subword_prefix"},
      {"{\"added_tokens\": {}, \"model\": {\"vocab\": {\"a\": 0}, \"merges\": []}}",
       "added_tokens is not a list"},
      {"{\"added_tokens\": [{\"id\": 1}], \"model\": {\"vocab\": {\"a\": 0}, \"merges\": []}}",
       "non-empty \"content\""},
      {"{\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"\\\\w+\"}, \"behavior\": "
       "\"Isolated\"}, "
       "\"model\": {\"vocab\": {\"a\": 0}, \"merges\": []}}",
       "Split pattern \\w+ is not one this reader knows"},
      {"{\"pre_tokenizer\": {\"type\": \"Whitespace\"}, \"model\": {\"vocab\": {\"a\": 0}, \"merges\": []}}",
       "pre-tokenizer Whitespace is not supported"},
      {"{\"normalizer\": {\"type\": \"NFKC\"}, \"model\": {\"vocab\": {\"a\": 0}, \"merges\": []}}",
       "normalizer NFKC is not supported"},
      {"{\"post_processor\": {\"type\": \"RobertaProcessing\"}, \"model\": {\"vocab\": {\"a\": 0}, "
       "\"merges\": []}}",
       "post-processor RobertaProcessing"},
      {"{\"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": "
       "\"<s>\"}}]}, "
       "\"model\": {\"vocab\": {\"a\": 0}, \"merges\": []}}",
       "special token <s> is not in its special_tokens"},
      {"{\"pre_tokenizer\": {\"type\": \"Metaspace\", \"replacement\": \"__________\"}, \"model\": "
       "{\"vocab\": "
       "{\"a\": 0}, \"merges\": []}}",
       "longer than 7 bytes"},
      {"{\"decoder\": {\"type\": \"WordPiece\"}, \"model\": {\"vocab\": {\"a\": 0}, \"merges\": []}}",
       "decoder WordPiece is not supported"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    TokJson t;
    Err err = {0};
    bool loaded = tokjson_load(&t, cases[i].json, strlen(cases[i].json), "x/tokenizer.json", &err);
    CHECK(!loaded && strstr(err.msg, "x/tokenizer.json: ") == err.msg && strstr(err.msg, cases[i].want) &&
              !strchr(err.msg, '\n'),
          "case %zu: want \"%s\", got \"%s\"", i, cases[i].want, err.msg);
    if (loaded) tokjson_free(&t);
  }
  // and a small good one: a merge, the pair form, an added token with lstrip
  char json[1024];
  snprintf(json, sizeof json,
           "{\"added_tokens\": [{\"id\": 3, \"content\": \"<x>\", \"special\": true, \"lstrip\": true}], "
           "\"model\": {\"type\": \"BPE\", %s}}",
           ok_vocab);
  TokJson t;
  Err err = {0};
  CHECK(tokjson_load(&t, json, strlen(json), "good", &err), "%s", err.msg);
  int *ids, n;
  EXPECT(tokjson_encode(&t, "ab  <x>a", 8, true, true, &ids, &n, &err));
  CHECK(n == 3 && ids[0] == 2 && ids[1] == 3 && ids[2] == 0, "ab, <x> with the spaces before it, a (%d)", n);
  free(ids);
  tokjson_free(&t);
}

int main(void) {
  test_reference("llama3");
  test_reference("qwen3");
  test_reference("smollm2");
  test_reference("llama2");
  test_reference("llama2meta");
  test_reference("llama2split");
  test_reference("smollm2prefix");
  test_reference("smollm2strip");
  test_special_and_labels();
  test_bad_files();
  return check_exit("test_tokjson");
}
