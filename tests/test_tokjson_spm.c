// test_tokjson_spm.c -- the SentencePiece vocabulary of GGUF files (tokjson_from_spm, tokjson.h):
//  1. Llama 2's whole vocabulary (tests/ref/tokjson/llama2.json.gz, the tokenizer.json of Llama 2 and
//     TinyLlama) given as GGUF gives it -- tokens by id, token types (<unk> UNKNOWN, <s> </s>
//     CONTROL, <0xHH> BYTE, the rest NORMAL) and scores -- merges by score as llama.cpp does, and
//     gives tokenizer.json's reference ids (llama2_ids.txt, from Hugging Face's tokenizers) on every
//     text, and decodes them to the reference text (llama2_decoded.txt). The scores: each token's
//     -(rank of the first merge of tokenizer.json that makes it), the order the converter gave the
//     merges (it sorts them by the scores of sentencepiece's model); tokens no merge makes score -1e9.
//  2. llama.cpp's rule for equal scores (the leftmost pair first), USER_DEFINED tokens matched even
//     when special tokens are text, the unknown token without byte tokens, add_space_prefix off.
//  3. bad vocabularies: one line each.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tokjson.h"     // defines: TokJson, tokjson_from_spm, tokjson_encode, tokjson_decode
#include "tokjson_ref.h" // defines: tokjson_ref_read
#include "tokref.h"      // defines: TokRef, tokref_load

typedef struct {
  int n;
  const char **tokens;
  size_t *lens;
  float *scores;
  int *types;
} Vocab2;

// Llama 2's tokenizer.json as GGUF's arrays (see the top).
static Vocab2 llama2_as_gguf(TokJson *hf) {
  size_t len;
  char *json = tokjson_ref_read("llama2", &len);
  Err err = {0};
  EXPECT(tokjson_load(hf, json, len, "llama2", &err));
  free(json);
  Vocab2 v = {hf->n_vocab, calloc((size_t)hf->n_vocab, sizeof(char *)),
              calloc((size_t)hf->n_vocab, sizeof(size_t)), calloc((size_t)hf->n_vocab, sizeof(float)),
              calloc((size_t)hf->n_vocab, sizeof(int))};
  for (int i = 0; i < v.n; i++) {
    v.tokens[i] = hf->tokens[i], v.lens[i] = (size_t)hf->token_lens[i], v.scores[i] = -1e9f;
    const char *s = hf->tokens[i];
    v.types[i] = !strcmp(s, "<unk>")                                      ? TJ_TOKEN_UNKNOWN
                 : hf->special[i]                                         ? TJ_TOKEN_CONTROL
                 : strlen(s) == 6 && !strncmp(s, "<0x", 3) && s[5] == '>' ? TJ_TOKEN_BYTE
                                                                          : TJ_TOKEN_NORMAL;
  }
  for (size_t k = 0; k < hf->pair_cap; k++) {
    int id = hf->pair_id[k];
    float score = -(float)hf->pair_rank[k];
    if (hf->pair_keys[k] && (v.scores[id] == -1e9f || score > v.scores[id])) v.scores[id] = score;
  }
  return v;
}

static void test_llama2(void) {
  TokJson hf, t;
  Vocab2 v = llama2_as_gguf(&hf);
  Err err = {0};
  TokJsonSpm spm = {"llama2 as GGUF", v.n, v.tokens, v.lens, v.scores, v.types, 1, 2, 0, true, false, true};
  bool built = tokjson_from_spm(&t, &spm, &err);
  CHECK(built, "Llama 2's vocabulary builds: %s", err.msg);
  if (!built) return;
  CHECK(t.n_merges == hf.n_merges, "as many merges from the tokens (%d) as tokenizer.json lists (%d)",
        t.n_merges, hf.n_merges);
  char path[4096];
  TokRef r, d;
  snprintf(path, sizeof path, "%s/ref/tokjson/llama2_ids.txt", check_test_dir());
  EXPECT(tokref_load(&r, path));
  snprintf(path, sizeof path, "%s/ref/tokjson/llama2_decoded.txt", check_test_dir());
  EXPECT(tokref_load(&d, path));
  int agree = 0, back = 0;
  for (int i = 0; i < r.n; i++) {
    int *ids, n;
    EXPECT(tokjson_encode(&t, r.text[i], r.len[i], true, true, &ids, &n, &err));
    bool same = n == r.n_ids[i] && !memcmp(ids, r.ids[i], sizeof *ids * (size_t)n);
    agree += same;
    if (!same && agree + 10 > i) fprintf(stderr, "llama2 as GGUF: \"%s\" differs\n", r.text[i]);
    free(ids);
  }
  for (int i = 0; i < d.n; i++) {
    size_t m;
    char *text = tokjson_decode(&t, d.ids[i], d.n_ids[i], true, &m);
    bool same = text && m == d.len[i] && !memcmp(text, d.text[i], m);
    back += same;
    free(text);
  }
  printf("test_tokjson_spm: Llama 2 by scores: %d of %d texts give tokenizer.json's ids, %d of %d decode "
         "alike\n",
         agree, r.n, back, d.n);
  CHECK(r.n >= 450 && agree == r.n, "%d of %d texts agree", agree, r.n);
  CHECK(back == d.n, "%d of %d decode alike", back, d.n);
  tokref_free(&r);
  tokref_free(&d);
  tokjson_free(&t);
  tokjson_free(&hf);
  free(v.tokens), free(v.lens), free(v.scores), free(v.types);
}

// A small vocabulary: tokens[i] with types and scores.
static bool small(TokJson *t, const char *const *tok, const int *types, const float *scores, int n,
                  bool prefix, Err *err) {
  size_t lens[32];
  int unk = -1;
  for (int i = 0; i < n; i++)
    lens[i] = strlen(tok[i]), unk = unk < 0 && types[i] == TJ_TOKEN_UNKNOWN ? i : unk;
  TokJsonSpm spm = {"small", n, tok, lens, scores, types, -1, -1, unk, false, false, prefix};
  return tokjson_from_spm(t, &spm, err);
}

static int encode(const TokJson *t, const char *text, bool parse_special, int *out) {
  int *ids, n;
  Err err = {0};
  EXPECT(tokjson_encode(t, text, strlen(text), true, parse_special, &ids, &n, &err));
  for (int i = 0; i < n && i < 16; i++) out[i] = ids[i];
  free(ids);
  return n;
}

static void test_rules(void) {
  // 0 a, 1 b, 2 ab, 3 ba, 4 <ctl>, 5 <u>, 6 ▁, 7 <unk>
  const char *tok[] = {"a", "b", "ab", "ba", "<ctl>", "<u>", "\xE2\x96\x81", "<unk>"};
  int types[] = {1, 1, 1, 1, 3, 4, 1, 2};
  float tie[] = {0, 0, -1, -1, 0, 0, 0, 0}, right[] = {0, 0, -2, -1, 0, 0, 0, 0};
  TokJson t;
  Err err = {0};
  int ids[16], n;
  EXPECT(small(&t, tok, types, tie, 8, false, &err));
  n = encode(&t, "aba", true, ids);
  CHECK(n == 2 && ids[0] == 2 && ids[1] == 0, "equal scores: the leftmost pair first (ab a), got %d ids", n);
  n = encode(&t, "a<ctl>b<u>a", false, ids);
  CHECK(n == 5 && ids[0] == 0 && ids[1] == 7 && ids[2] == 1 && ids[3] == 5 && ids[4] == 0,
        "a USER_DEFINED token is matched even when special tokens are text (%d ids)", n);
  n = encode(&t, "a<ctl>b", true, ids);
  CHECK(n == 3 && ids[0] == 0 && ids[1] == 4 && ids[2] == 1, "a CONTROL token matched when parsed (%d ids)",
        n);
  n = encode(&t, "axb", true, ids);
  CHECK(n == 3 && ids[1] == 7, "no byte tokens: a character without a token is <unk> (%d ids)", n);
  tokjson_free(&t);
  EXPECT(small(&t, tok, types, right, 8, true, &err));
  n = encode(&t, "aba", true, ids);
  CHECK(n == 3 && ids[0] == 6 && ids[1] == 0 && ids[2] == 3,
        "▁ prepended; the higher score first (▁ a ba), got %d", n);
  size_t m;
  char *text = tokjson_decode(&t, ids, n, true, &m);
  CHECK(text && !strcmp(text, "aba"), "decodes back without the prepended space: \"%s\"", text ? text : "");
  free(text);
  tokjson_free(&t);
}

static void test_bad(void) {
  struct {
    const char *tok[4];
    int types[4];
    float scores[4];
    const char *msg;
  } cases[] = {
      {{"a", "a", "b", "c"}, {1, 1, 1, 1}, {0, 0, 0, 0}, "is there twice"},
      {{"a", "<0x4>", "b", "c"}, {1, 6, 1, 1}, {0, 0, 0, 0}, "not of the form <0xHH>"},
      {{"a", "<0x41>", "b", "c"}, {1, 6, 1, 1}, {0, 0, 0, 0}, "lacks <0x00>"},
      {{"a", "b", "c", "d"}, {1, 9, 1, 1}, {0, 0, 0, 0}, "has type 9"},
      {{"a", "", "c", "d"}, {1, 1, 1, 1}, {0, 0, 0, 0}, "is empty"},
      {{"a", "b", "c", "d"}, {1, 1, 1, 1}, {0, NAN, 0, 0}, "not a number"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    TokJson t;
    Err err = {0};
    bool built = small(&t, cases[i].tok, cases[i].types, cases[i].scores, 4, true, &err);
    CHECK(!built && strstr(err.msg, cases[i].msg) && !strchr(err.msg, '\n'),
          "bad %zu: want \"%s\", got \"%s\"", i, cases[i].msg, err.msg);
    if (built) tokjson_free(&t);
  }
  const char *tok[] = {"a", "b"};
  size_t lens[] = {1, 1};
  TokJsonSpm spm = {"small", 2, tok, lens, NULL, NULL, 5, -1, -1, true, false, true};
  TokJson t;
  Err err = {0};
  CHECK(!tokjson_from_spm(&t, &spm, &err) && strstr(err.msg, "BOS token id 5"), "BOS outside: %s", err.msg);
}

int main(void) {
  test_llama2();
  test_rules();
  test_bad();
  return check_exit("test_tokjson_spm");
}
