// test_gguf_spm.c -- a GGUF file with a SentencePiece tokenizer (tokenizer.ggml.model = llama:
// Llama 2, TinyLlama, Mistral), tests/ref/gguf/tinyllama-spm.gguf (tests/gen_gguf_spm.py): opened by
// model_load, its tokenizer gives, on 485 texts (accents, emoji, digits, CJK, code, leading spaces,
// newlines, special and user-defined tokens inline), with the BOS the file asks for,
//  - the ids of the tokenizer.json it was made from (tinyllama-spm_ids.txt: Hugging Face's
//    tokenizers and their JavaScript port, tests/gen_gguf_spm_ref.mjs),
//  - llama.cpp's ids on the same file (tinyllama-spm_llamacpp.txt: node-llama-cpp's llama.cpp),
//  - and decodes those ids to the library's text (tinyllama-spm_decoded.txt, special tokens skipped);
// the model runs a sentence through every stage.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fileio.h"       // defines: file_read_all
#include "forward.h"      // defines: model_forward
#include "gguf.h"         // defines: GgufFile, gguf_parse
#include "gguf_model.h"   // defines: gguf_model_from
#include "model.h"        // defines: Model, model_free, TOK_TOKJSON
#include "model_load.h"   // defines: model_load
#include "model_tokens.h" // defines: model_tokenize, ModelTokenizer
#include "tokjson.h"      // defines: tokjson_encode, tokjson_decode
#include "tokref.h"       // defines: TokRef, tokref_load
#include "trace.h"        // defines: Trace, trace_new

static void against(const TokJson *t, const char *file) {
  char path[4096];
  snprintf(path, sizeof path, "%s/ref/gguf/%s", check_test_dir(), file);
  TokRef r;
  if (!tokref_load(&r, path)) {
    CHECK(0, "%s: reference file", file);
    return;
  }
  int agree = 0;
  Err err = {0};
  for (int i = 0; i < r.n; i++) {
    int *ids, n;
    EXPECT(tokjson_encode(t, r.text[i], r.len[i], true, true, &ids, &n, &err));
    bool same = n == r.n_ids[i] && !memcmp(ids, r.ids[i], sizeof *ids * (size_t)n);
    agree += same;
    if (!same && agree + 10 > i) fprintf(stderr, "%s: \"%s\" differs\n", file, r.text[i]);
    free(ids);
  }
  printf("test_gguf_spm: %d of %d texts give the ids of %s\n", agree, r.n, file);
  CHECK(r.n >= 480 && agree == r.n, "%s: %d of %d texts agree", file, agree, r.n);
  tokref_free(&r);
}

static void decoded(const TokJson *t) {
  char path[4096];
  snprintf(path, sizeof path, "%s/ref/gguf/tinyllama-spm_decoded.txt", check_test_dir());
  TokRef d;
  if (!tokref_load(&d, path)) {
    CHECK(0, "decoded reference file");
    return;
  }
  int back = 0;
  for (int i = 0; i < d.n; i++) {
    size_t m;
    char *text = tokjson_decode(t, d.ids[i], d.n_ids[i], true, &m);
    back += text && m == d.len[i] && !memcmp(text, d.text[i], m);
    free(text);
  }
  printf("test_gguf_spm: %d of %d id lists decode to the library's text\n", back, d.n);
  CHECK(d.n >= 480 && back == d.n, "%d of %d decode alike", back, d.n);
  tokref_free(&d);
}

// tokenizer.ggml.pre: llama.cpp's other names for GPT-2's split open the same way; an unknown one is
// refused in one line that lists the known ones (llama-gqa2.gguf's "gpt-2" rewritten in memory).
static void pre_names(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/ref/gguf/llama-gqa2.gguf", check_test_dir());
  size_t len;
  Err err = {0};
  char *bytes = file_read_all(path, &len, 1 << 24, &err);
  EXPECT(bytes);
  char *at = NULL;
  for (size_t i = 0; i + 5 <= len && !at; i++)
    if (!memcmp(bytes + i, "gpt-2", 5)) at = bytes + i;
  EXPECT(at);
  const char *names[] = {"phi-2", "gpt-4"};
  for (int k = 0; k < 2; k++) {
    memcpy(at, names[k], 5);
    GgufFile g;
    EXPECT(gguf_parse(&g, (const uint8_t *)bytes, len, names[k], &err));
    err.msg[0] = 0;
    Model *m = gguf_model_from(&g, path, &err);
    if (k == 0) CHECK(m != NULL, "pre \"phi-2\" (GPT-2's split) opens: %s", err.msg);
    if (k == 1)
      CHECK(!m && strstr(err.msg, "tokenizer.ggml.pre \"gpt-4\" is not a split Stepformer knows") &&
                strstr(err.msg, "llama-bpe") && strstr(err.msg, "smollm") && !strchr(err.msg, '\n'),
            "an unknown pre is refused with the known ones: %s", err.msg);
    model_free(m);
    gguf_close(&g);
  }
  free(bytes);
}

int main(void) {
  pre_names();
  char path[4096];
  snprintf(path, sizeof path, "%s/ref/gguf/tinyllama-spm.gguf", check_test_dir());
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "tinyllama-spm.gguf opens: %s", err.msg);
  if (!m) return check_exit("test_gguf_spm");
  CHECK(m->tok_kind == TOK_TOKJSON && m->tokenizer && !m->tokenizer->tj.byte_level,
        "a SentencePiece tokenizer");
  const TokJson *t = &m->tokenizer->tj;
  against(t, "tinyllama-spm_ids.txt");
  against(t, "tinyllama-spm_llamacpp.txt");
  decoded(t);
  Tokens tok;
  bool ok = model_tokenize(m, "The cat sat by the river bank. 你好 🤖", 0, &tok, &err);
  CHECK(ok && tok.n > 5 && tok.ids[0] == 1, "model_tokenize: BOS first (%s)", err.msg);
  Trace *tr = ok ? trace_new(m, &tok, &err) : NULL;
  CHECK(tr != NULL, "a trace: %s", err.msg);
  if (tr) {
    model_forward(tr);
    trace_free(tr);
  }
  if (ok) tokens_free(&tok);
  model_free(m);
  return check_exit("test_gguf_spm");
}
