// fuzz_safetensors.c -- libFuzzer target for the safetensors reader and the model loader.
//
// Every input goes through st_parse. A rejected input must come with a one-line message; an
// accepted one must hold what the header promised (count = prod(shape), data for every non-empty
// tensor). An accepted input is then written to a temporary file and opened with model_load,
// as `stepformer --model` would; a model that loads runs one forward pass on a short sentence
// (an encoder-decoder: with a short target as the decoder's input, as `stepformer dump --target`).
// Any crash, sanitizer report or broken promise (__builtin_trap) is a bug.
//
// Build and run (clang; SF_FUZZ also instruments the libraries, so libFuzzer sees the parsers):
//   CC=clang cmake -S . -B build-fuzz -DSF_FUZZ=ON -DSF_SANITIZE=ON
//   cmake --build build-fuzz --target fuzz_safetensors
//   mkdir -p /tmp/corpus
//   build-fuzz/tests/fuzz_safetensors -max_total_time=60 /tmp/corpus tests/fuzz/corpus/safetensors
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "forward.h"     // defines: model_forward
#include "model.h"       // defines: Model
#include "model_load.h"  // defines: model_load
#include "safetensors.h" // defines: StFile, st_parse
#include "trace.h"       // defines: Trace, trace_new, trace_new_seq2seq, trace_decoder_tokens

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_safetensors: broken promise: %s\n", #x);                                         \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

// Every message is one non-empty line, whatever names the file holds.
static void check_message(const Err *err) {
  PROMISE(err->msg[0] != 0);
  PROMISE(strchr(err->msg, '\n') == NULL);
}

static void load_and_run(const uint8_t *data, size_t size) {
  static char path[64];
  if (!path[0]) snprintf(path, sizeof path, "/tmp/fuzz-safetensors-%010ld.safetensors", (long)getpid());
  FILE *fp = fopen(path, "wb");
  if (!fp) return;
  size_t wrote = fwrite(data, 1, size, fp);
  fclose(fp);
  if (wrote != size) return;
  Err err = {0};
  Model *m = model_load(path, &err);
  remove(path);
  if (!m) {
    check_message(&err);
    return;
  }
  const ModelConfig *c = &m->cfg;
  PROMISE(c->D % c->H == 0 && c->D % 2 == 0 && c->V == m->vocab.n && m->vocab.n >= 1);
  PROMISE(!strcmp(m->vocab.words[0], "<unk>"));
  bool s2s = model_is_seq2seq(m);
  Tokens dec = {0};
  if (s2s) { // the decoder's side: its vocabulary with <bos> and <eos>, and its input
    PROMISE(c->V_t == m->tgt_vocab.n && !strcmp(m->tgt_vocab.words[0], "<unk>"));
    PROMISE(!strcmp(m->tgt_vocab.words[m->bos], "<bos>") && !strcmp(m->tgt_vocab.words[m->eos], "<eos>"));
    PROMISE(m->dec_layers != NULL && m->has_head);
    if (!trace_decoder_tokens(&dec, m, "le chat marche", 0, &err)) {
      check_message(&err);
      model_free(m);
      return;
    }
    PROMISE(dec.n >= 1 && dec.ids[0] == m->bos);
  }
  Tokens tok;
  if (tokens_from_text(&tok, &m->vocab, "the cat walks by the bank", 0, &err)) {
    Trace *t = s2s ? trace_new_seq2seq(m, &tok, &dec, &err) : trace_new(m, &tok, &err);
    if (t) {
      model_forward(t);
      trace_free(t);
    }
    tokens_free(&tok);
  }
  tokens_free(&dec);
  model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  StFile f;
  Err err = {0};
  if (!st_parse(&f, data, size, "<fuzz input>", &err)) {
    check_message(&err);
    PROMISE(f.n == 0 && f.tensors == NULL && f.n_meta == 0);
    return 0;
  }
  for (int i = 0; i < f.n; i++) {
    const StTensor *t = &f.tensors[i];
    int64_t count = 1;
    for (int k = 0; k < t->ndim; k++) count *= t->shape[k];
    PROMISE(t->name && count == t->count && (count == 0 || t->data != NULL));
    PROMISE(st_find(&f, t->name) == t);
    PROMISE(count * 2 <= (int64_t)size); // F16 and BF16: 2 bytes an element in the file
  }
  for (int i = 0; i < f.n_meta; i++) PROMISE(st_meta(&f, f.keys[i]) != NULL);
  st_free(&f);
  load_and_run(data, size);
  return 0;
}
