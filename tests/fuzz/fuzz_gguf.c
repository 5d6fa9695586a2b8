// fuzz_gguf.c -- libFuzzer target for the GGUF reader (gguf_parse) and the dequantizer.
//
// A rejected input must come with a one-line message. An accepted one must hold what the reader
// promises (gguf.h): every tensor's bytes inside the input's data section, its count the product
// of its dimensions, its PyTorch shape the reverse of ne, nbytes as its type's blocks say; every
// key found again by name; every array of strings and numbers readable element by element. The
// tensors of the types Stepformer reads are then dequantized (at most 1 M weights an input), and
// the file opened as a model (gguf_model_from, at most 64 MB of weights): a model that loads runs
// one forward pass on a short sentence tokenized by the file's own tokenizer.
// Any crash, sanitizer report or broken promise (__builtin_trap) is a bug.
// Build and run as fuzz_safetensors.c says; seeds in tests/fuzz/corpus/gguf/ (GGUF files made by
// tests/gen_gguf_fixtures.py, and the SentencePiece spm-*.gguf by tests/gen_gguf_spm.py).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward.h"      // defines: model_forward
#include "gguf.h"         // defines: GgufFile, gguf_parse
#include "gguf_model.h"   // defines: gguf_model_from
#include "memsize.h"      // defines: mem_available_override
#include "gguf_quant.h"   // defines: gguf_type_size, gguf_dequantize
#include "model.h"        // defines: Model, model_free
#include "model_tokens.h" // defines: model_tokenize
#include "trace.h"        // defines: Trace, trace_new

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_gguf: broken promise: %s\n", #x);                                                \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

static void check_kv(const GgufFile *g, const GgufKV *kv, const uint8_t *data, size_t size) {
  PROMISE(gguf_find(g, kv->key) == kv);
  PROMISE(kv->at >= data && kv->at + kv->size <= data + size);
  if (kv->type != GGUF_ARRAY) {
    double f;
    uint64_t u;
    const char *s;
    size_t n;
    bool b;
    (void)gguf_get_float(g, kv->key, &f), (void)gguf_get_uint(g, kv->key, &u),
        (void)gguf_get_bool(g, kv->key, &b);
    if (gguf_get_str(g, kv->key, &s, &n)) PROMISE((const uint8_t *)s + n <= data + size);
    return;
  }
  if (kv->elem_type == GGUF_STRING) {
    PROMISE(kv->n <= size / 8);
    const char **s = malloc(sizeof *s * (size_t)(kv->n + 1));
    size_t *len = malloc(sizeof *len * (size_t)(kv->n + 1));
    PROMISE(s && len && gguf_arr_strings(kv, s, len));
    for (uint64_t i = 0; i < kv->n; i++) PROMISE((const uint8_t *)s[i] + len[i] <= kv->at + kv->size);
    free(s), free(len);
    return;
  }
  double f;
  for (uint64_t i = 0; i < kv->n && i < 4096; i++)
    PROMISE(gguf_arr_number(kv, i, &f) || kv->elem_type == GGUF_ARRAY || kv->elem_type == GGUF_BOOL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  GgufFile g;
  Err err = {0};
  if (!gguf_parse(&g, data, size, "<fuzz input>", &err)) {
    PROMISE(err.msg[0] != 0 && strchr(err.msg, '\n') == NULL);
    return 0;
  }
  PROMISE(g.version == 2 || g.version == 3);
  PROMISE(g.alignment && !(g.alignment & (g.alignment - 1)));
  for (uint64_t i = 0; i < g.n_kv; i++) check_kv(&g, &g.kv[i], data, size);
  int64_t budget = 1 << 20;
  for (uint64_t i = 0; i < g.n_tensors; i++) {
    const GgufTensor *t = &g.tensors[i];
    PROMISE(gguf_find_tensor(&g, t->name) == t);
    PROMISE(t->ndim >= 1 && t->ndim <= GGUF_MAX_DIMS);
    int64_t count = 1;
    for (int d = 0; d < t->ndim; d++) {
      count *= (int64_t)t->ne[d];
      PROMISE(t->shape[d] == (int64_t)t->ne[t->ndim - 1 - d]);
    }
    PROMISE(count == t->count);
    int block, bytes;
    PROMISE(gguf_type_size(t->type, &block, &bytes));
    PROMISE(t->count % block == 0 && t->nbytes == (size_t)(t->count / block) * (size_t)bytes);
    PROMISE(t->data >= data + g.data_offset && t->data + t->nbytes <= data + size);
    if (gguf_type_readable(t->type) && t->count <= budget) {
      budget -= t->count;
      float *y = malloc(sizeof(float) * (size_t)(t->count ? t->count : 1));
      PROMISE(y != NULL);
      PROMISE(gguf_dequantize(t->type, t->data, y, t->count, &err));
      free(y);
    }
  }
  mem_available_override = 64u << 20;
  Err merr = {0};
  Model *m = gguf_model_from(&g, "<fuzz input>", &merr);
  if (!m) {
    PROMISE(merr.msg[0] != 0 && strchr(merr.msg, '\n') == NULL);
  } else {
    PROMISE(m->tokenizer != NULL && m->cfg.V == m->vocab.n && m->cfg.D % m->cfg.H == 0);
    Tokens tok;
    if (model_tokenize(m, "the cat walks by the bank", 0, &tok, &merr)) {
      Trace *t = trace_new(m, &tok, &merr);
      if (t) model_forward(t);
      trace_free(t);
      tokens_free(&tok);
    }
    model_free(m);
  }
  gguf_close(&g);
  return 0;
}
