// test_hub.c -- the hub folders of tests/ref/hub/ (tests/gen_hub_fixtures.py) translated into the
// canonical model file: names, shapes, Conv1D transposes, Q/K/V stacking, tied heads, the unused
// tensors named, F16/BF16 values; the tokenizers through model_tokenize against the generator's
// ids and labels; every bad folder refused with one line naming what is wrong.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backward.h" // defines: backward_new, backward_run
#include "check.h"
#include "hub_fixture.h"  // defines: hub_fixture_copy, hub_fixture_remove
#include "edits.h"        // defines: edits_for_cell, edits_trace
#include "fileio.h"       // defines: file_read_all, file_write_atomic
#include "forward.h"      // defines: model_forward
#include "gemm.h"         // defines: gemm_supported
#include "hub.h"          // defines: hub_read
#include "mat.h"          // defines: mat_naive_max_madds
#include "model.h"        // defines: Model
#include "model_load.h"   // defines: model_load, model_save
#include "model_tokens.h" // defines: model_tokenize, model_tokenizer_vocab
#include "npy.h"          // defines: npy_read
#include "safetensors.h"  // defines: st_f16_to_f32, st_bf16_to_f32, st_read_lenient

static char ref[4096];

static const StTensor *expect_tensor(const StFile *f, const char *name, long s0, long s1, const char *what) {
  const StTensor *t = st_find(f, name);
  CHECK(t != NULL, "%s: canonical tensor %s missing", what, name);
  if (!t) return NULL;
  CHECK(t->ndim == (s1 < 0 ? 1 : 2) && t->shape[0] == s0 && (s1 < 0 || t->shape[1] == s1),
        "%s: %s has shape [%lld,%lld], expected [%ld,%ld]", what, name, (long long)t->shape[0],
        (long long)t->shape[1], s0, s1);
  return t;
}

// expect_tensor of "layers.<i>.<name>".
static const StTensor *expect_layer_tensor(const StFile *f, int i, const char *name, long s0, long s1,
                                           const char *what) {
  char n[96];
  snprintf(n, sizeof n, "layers.%d.%s", i, name);
  return expect_tensor(f, n, s0, s1, what);
}

static void expect_meta(const StFile *f, const char *key, const char *value, const char *what) {
  const char *v = st_meta(f, key);
  CHECK(v && !strcmp(v, value), "%s: metadata %s = \"%s\", expected \"%s\"", what, key, v ? v : "(none)",
        value);
}

// ---- half and bfloat16

static void test_conversions(void) {
  // every finite half against its definition: (-1)^s · m·2^-24 (subnormal) or (1024+m)·2^(e-25)
  int wrong = 0;
  for (uint32_t h = 0; h < 65536; h++) {
    uint32_t e = (h >> 10) & 31, m = h & 1023;
    float got = st_f16_to_f32((uint16_t)h);
    if (e == 31) {
      wrong += m ? !isnan(got) : !(isinf(got) && (got < 0) == (h >> 15));
      continue;
    }
    double want = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, (int)e - 25);
    if (h >> 15) want = -want;
    wrong += got != (float)want || (signbit(got) != 0) != (h >> 15 != 0);
  }
  CHECK(wrong == 0, "%d of 65536 half patterns convert wrongly", wrong);
  CHECK(st_f16_to_f32(0x3c00) == 1.0f && st_f16_to_f32(0x7bff) == 65504.0f, "1 and the largest half");
  CHECK(st_f16_to_f32(0x0001) == ldexpf(1, -24), "the smallest subnormal half");
  CHECK(st_bf16_to_f32(0x3f80) == 1.0f && st_bf16_to_f32(0xc040) == -3.0f, "bfloat16 1 and -3");
  CHECK(isinf(st_bf16_to_f32(0x7f80)) && isnan(st_bf16_to_f32(0x7fc0)), "bfloat16 inf and NaN");
  CHECK(st_bf16_to_f32(0x0001) == ldexpf(1, -133), "the smallest subnormal bfloat16");
}

// ---- translation

// The hub tensor (as the file stores it, floats) for comparisons.
static float *hub_tensor(const char *dir, const char *name, long *count) {
  char path[4200];
  snprintf(path, sizeof path, "%s/model.safetensors", dir);
  StFile f;
  Err err = {0};
  if (!st_read_lenient(&f, path, &err)) return NULL;
  const StTensor *t = st_find(&f, name);
  float *d = NULL;
  if (t && t->data) {
    d = malloc(sizeof(float) * (size_t)t->count);
    memcpy(d, t->data, sizeof(float) * (size_t)t->count);
    *count = t->count;
  }
  st_free(&f);
  return d;
}

// hub_read of fixture `variant` (its folder into dir[4200]); a failure is a failed check.
static bool read_fixture(const char *variant, char *dir, StFile *f, ModelTokenizer **tk) {
  Err err = {0};
  snprintf(dir, 4200, "%s/hub/%s", ref, variant);
  bool ok = hub_read(dir, f, tk, &err);
  CHECK(ok, "%s: %s", variant, err.msg);
  return ok;
}

static void test_gpt2(const char *variant, const char *prefix, bool tied_by_lm_head) {
  char dir[4200];
  StFile f;
  ModelTokenizer *tk;
  Err err = {0};
  if (!read_fixture(variant, dir, &f, &tk)) return;
  const long D = 16, F = 64, V = tk->bpe.n_vocab;
  expect_tensor(&f, "embed.weight", V, D, variant);
  expect_tensor(&f, "pos_embed.weight", 32, D, variant);
  expect_tensor(&f, "norm.weight", D, -1, variant);
  CHECK(!st_find(&f, "head.weight"), "%s: the head is tied, not copied", variant);
  for (int i = 0; i < 2; i++) {
    char n[96];
    const StTensor *in = expect_layer_tensor(&f, i, "self_attn.in_proj_weight", 3 * D, D, variant);
    const StTensor *l1 = expect_layer_tensor(&f, i, "linear1.weight", F, D, variant);
    expect_layer_tensor(&f, i, "linear2.weight", D, F, variant);
    expect_layer_tensor(&f, i, "self_attn.out_proj.bias", D, -1, variant);
    expect_layer_tensor(&f, i, "norm2.bias", D, -1, variant);
    // the Conv1D weights [in, out] arrive as the file stores them, marked transposed (model_from_st
    // reads them as such): canonical[j][k] == hub[k][j]
    CHECK(in && in->transposed && l1 && l1->transposed,
          "%s: layer %d: the Conv1D weights are marked transposed", variant, i);
    long cnt = 0;
    snprintf(n, sizeof n, "%sh.%d.attn.c_attn.weight", prefix, i);
    float *c_attn = hub_tensor(dir, n, &cnt);
    CHECK(c_attn && cnt == 3 * D * D, "%s: hub %s", variant, n);
    int bad = 0;
    for (long j = 0; c_attn && in && j < 3 * D; j++)
      for (long k = 0; k < D; k++) bad += in->data[k * 3 * D + j] != c_attn[k * 3 * D + j];
    CHECK(c_attn && bad == 0, "%s: layer %d in_proj is not c_attn transposed (%d differ)", variant, i, bad);
    free(c_attn);
    snprintf(n, sizeof n, "%sh.%d.mlp.c_fc.weight", prefix, i);
    float *c_fc = hub_tensor(dir, n, &cnt);
    bad = 0;
    for (long j = 0; c_fc && l1 && j < F; j++)
      for (long k = 0; k < D; k++) bad += l1->data[k * F + j] != c_fc[k * F + j];
    CHECK(c_fc && bad == 0, "%s: layer %d linear1 is not c_fc transposed (%d differ)", variant, i, bad);
    free(c_fc);
  }
  CHECK(f.n == 4 + 2 * 12, "%s: %d canonical tensors, expected 28", variant, f.n);
  expect_meta(&f, "hub_architecture", "GPT-2", variant);
  expect_meta(&f, "d_model", "16", variant);
  expect_meta(&f, "n_heads", "2", variant);
  expect_meta(&f, "d_ff", "64", variant); // n_inner null: 4·D
  expect_meta(&f, "n_layers", "2", variant);
  expect_meta(&f, "activation", "gelu_tanh", variant);
  expect_meta(&f, "norm_first", "1", variant);
  expect_meta(&f, "causal", "1", variant);
  expect_meta(&f, "pos_encoding", "learned", variant);
  expect_meta(&f, "tokenizer", "bpe", variant);
  expect_meta(&f, "tie_head", "1", variant);
  expect_meta(&f, "layer_norm_eps", "1e-05", variant);
  const char *unused = st_meta(&f, "hub_unused");
  if (tied_by_lm_head)
    CHECK(!unused, "%s: nothing unused, got \"%s\"", variant, unused);
  else
    CHECK(unused && strstr(unused, "h.{i}.attn.bias ×2") && strstr(unused, "h.{i}.attn.masked_bias ×2"),
          "%s: hub_unused \"%s\" should fold the mask buffers", variant, unused ? unused : "(none)");
  // the embedding as stored (F32, or F16 converted) gives the reference's X exactly
  char p[4300];
  snprintf(p, sizeof p, "%s/s0/X.npy", dir);
  int nd, shape[NPY_MAX_DIMS];
  float *X = npy_read(p, &nd, shape, &err);
  snprintf(p, sizeof p, "%s/s0/ids.txt", dir);
  FILE *fp = fopen(p, "r");
  int id, row = 0, bad = 0;
  const StTensor *e = st_find(&f, "embed.weight");
  while (X && fp && e && fscanf(fp, "%d", &id) == 1 && row < shape[0]) {
    for (int k = 0; k < D; k++) bad += X[row * D + k] != e->data[id * D + k];
    row++;
  }
  CHECK(X && row == shape[0] && bad == 0, "%s: embed rows differ from X.npy (%d values)", variant, bad);
  if (fp) fclose(fp);
  free(X);
  st_free(&f);
  model_tokenizer_free(tk);
}

static void test_bert(const char *variant) {
  char dir[4200];
  StFile f;
  ModelTokenizer *tk;
  if (!read_fixture(variant, dir, &f, &tk)) return;
  const long D = 16, F = 64, V = tk->wp.n;
  expect_tensor(&f, "embed.weight", V, D, variant);
  expect_tensor(&f, "pos_embed.weight", 32, D, variant);
  expect_tensor(&f, "token_type.weight", 2, D, variant);
  expect_tensor(&f, "embed_norm.weight", D, -1, variant);
  expect_tensor(&f, "embed_norm.bias", D, -1, variant);
  expect_tensor(&f, "head_transform.weight", D, D, variant);
  expect_tensor(&f, "head_transform.bias", D, -1, variant);
  expect_tensor(&f, "head_norm.weight", D, -1, variant);
  expect_tensor(&f, "head.bias", V, -1, variant);
  CHECK(!st_find(&f, "head.weight") && !st_find(&f, "norm.weight"), "%s: tied head, no final norm", variant);
  for (int i = 0; i < 2; i++) {
    char n[96];
    const StTensor *in = expect_layer_tensor(&f, i, "self_attn.in_proj_weight", 3 * D, D, variant);
    const StTensor *inb = expect_layer_tensor(&f, i, "self_attn.in_proj_bias", 3 * D, -1, variant);
    expect_layer_tensor(&f, i, "linear1.weight", F, D, variant);
    expect_layer_tensor(&f, i, "linear2.weight", D, F, variant);
    expect_layer_tensor(&f, i, "norm1.weight", D, -1, variant);
    // rows 0..D-1 query, D..2D-1 key, 2D..3D-1 value, as nn.Linear stores them
    const char *parts[3] = {"query", "key", "value"};
    const char *prefix = strstr(variant, "bf16") ? "" : "bert.";
    for (int q = 0; q < 3 && in && inb; q++) {
      long cw = 0, cb = 0;
      snprintf(n, sizeof n, "%sencoder.layer.%d.attention.self.%s.weight", prefix, i, parts[q]);
      float *w = hub_tensor(dir, n, &cw);
      snprintf(n, sizeof n, "%sencoder.layer.%d.attention.self.%s.bias", prefix, i, parts[q]);
      float *b = hub_tensor(dir, n, &cb);
      CHECK(w && b && !memcmp(in->data + q * D * D, w, sizeof(float) * (size_t)(D * D)) &&
                !memcmp(inb->data + q * D, b, sizeof(float) * (size_t)D),
            "%s: layer %d rows of %s", variant, i, parts[q]);
      free(w), free(b);
    }
  }
  CHECK(f.n == 5 + 2 * 12 + 5, "%s: %d canonical tensors, expected 34", variant, f.n);
  expect_meta(&f, "hub_architecture", "BERT", variant);
  expect_meta(&f, "activation", "gelu", variant);
  expect_meta(&f, "norm_first", "0", variant);
  expect_meta(&f, "causal", "0", variant);
  expect_meta(&f, "tokenizer", "wordpiece", variant);
  expect_meta(&f, "tie_head", "1", variant);
  expect_meta(&f, "layer_norm_eps", "1e-12", variant);
  const char *unused = st_meta(&f, "hub_unused");
  if (!strcmp(variant, "bert-tiny"))
    CHECK(unused && strstr(unused, "bert.pooler.dense.weight") &&
              strstr(unused, "cls.seq_relationship.bias") && strstr(unused, "bert.embeddings.position_ids") &&
              !strstr(unused, "decoder"),
          "%s: hub_unused \"%s\"", variant, unused ? unused : "(none)");
  else
    CHECK(!unused, "%s: nothing unused, got \"%s\"", variant, unused);
  st_free(&f);
  model_tokenizer_free(tk);
}

// ---- tokenizers through the model

static char *read_text(const char *path) {
  size_t len;
  Err err = {0};
  char *t = file_read_all(path, &len, 1 << 20, &err);
  if (t && len && t[len - 1] == '\n') t[len - 1] = 0;
  return t;
}

static void test_tokenize(const char *variant) {
  char dir[4200];
  StFile f;
  Model m = {0};
  Err err = {0};
  m.tok_kind = strstr(variant, "gpt2") ? TOK_BPE : TOK_WORDPIECE;
  if (!read_fixture(variant, dir, &f, &m.tokenizer)) return;
  st_free(&f);
  CHECK(model_tokenizer_vocab(m.tokenizer, &m.vocab, &err), "%s: labels: %s", variant, err.msg);
  for (int s = 0; s < 2; s++) {
    char p[4300];
    snprintf(p, sizeof p, "%s/s%d/text.txt", dir, s);
    char *text = read_text(p);
    snprintf(p, sizeof p, "%s/s%d/ids.txt", dir, s);
    char *ids = read_text(p);
    snprintf(p, sizeof p, "%s/s%d/tokens.txt", dir, s);
    char *labels = read_text(p);
    Tokens t;
    bool ok = text && ids && labels && model_tokenize(&m, text, 64, &t, &err);
    CHECK(ok, "%s s%d: %s", variant, s, err.msg);
    if (ok) {
      char *id_save = NULL, *lab_save = NULL, *id = strtok_r(ids, " ", &id_save),
           *lab = strtok_r(labels, "\n", &lab_save);
      int i = 0;
      for (; i < t.n && id && lab;
           i++, id = strtok_r(NULL, " ", &id_save), lab = strtok_r(NULL, "\n", &lab_save)) {
        CHECK(t.ids[i] == atoi(id), "%s s%d token %d: id %d, expected %s", variant, s, i, t.ids[i], id);
        CHECK(!strcmp(t.words[i], lab) && !strcmp(tokens_label(&t, &m.vocab, i), lab),
              "%s s%d token %d: label \"%s\", expected \"%s\"", variant, s, i, t.words[i], lab);
      }
      CHECK(i == t.n && !id && !lab, "%s s%d: %d tokens, the reference has another count", variant, s, t.n);
      tokens_free(&t);
      // too many tokens: one line
      ok = model_tokenize(&m, text, 3, &t, &err);
      CHECK(!ok && strstr(err.msg, "at most 3"), "%s: a limit of 3 tokens: \"%s\"", variant, err.msg);
    }
    free(text), free(ids), free(labels);
  }
  vocab_free(&m.vocab);
  model_tokenizer_free(m.tokenizer);
}

static void test_chars(void) {
  Model m = {0};
  Err err = {0};
  CHECK(vocab_from_lines(&m.vocab, "<unk>\n1\n2\n+\n=\né", &err), "vocab: %s", err.msg);
  m.tok_kind = TOK_CHARS;
  Tokens t;
  bool ok = model_tokenize(&m, " 12 +x= é", 0, &t, &err);
  CHECK(ok && t.n == 6, "chars: %d tokens (%s)", t.n, err.msg);
  int want[] = {1, 2, 3, 0, 4, 5};
  for (int i = 0; ok && i < 6; i++) CHECK(t.ids[i] == want[i], "chars token %d: id %d", i, t.ids[i]);
  CHECK(ok && t.unknown[3] && !strcmp(t.words[3], "x") && !strcmp(t.words[5], "é"),
        "chars: x unknown, é whole");
  if (ok) tokens_free(&t);
  CHECK(!model_tokenize(&m, "   ", 0, &t, &err) && strstr(err.msg, "no tokens"), "chars: blank: %s", err.msg);
  CHECK(!model_tokenize(&m, "1\xff", 0, &t, &err) && strstr(err.msg, "UTF-8"), "chars: not UTF-8: %s",
        err.msg);
  m.tok_kind = TOK_BPE; // a hub model saved into one file: no tokenizer files, refused
  CHECK(!model_tokenize(&m, "1 2", 0, &t, &err) && strstr(err.msg, "vocab.json, merges.txt") &&
            strstr(err.msg, "--model DIR"),
        "bpe without its files: \"%s\"", err.msg);
  m.tok_kind = TOK_WORDS;
  ok = model_tokenize(&m, "1 2", 0, &t, &err);
  CHECK(ok && t.n == 2 && t.ids[1] == 2, "words: \"1 2\"");
  if (ok) tokens_free(&t);
  vocab_free(&m.vocab);
}

// ---- bad folders

static const char *const INDEX_FILE[] = {"model.safetensors.index.json", NULL}; // made by one case

static void write_file(const char *dir, const char *name, const char *text) {
  char p[4300];
  Err err = {0};
  snprintf(p, sizeof p, "%s/%s", dir, name);
  EXPECT(file_write_atomic(p, text, strlen(text), &err));
}

// Replaces the first `from` in DIR/name by `to`.
static void edit_file(const char *dir, const char *name, const char *from, const char *to) {
  char p[4300];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  size_t len;
  Err err = {0};
  char *d = file_read_all(p, &len, 1 << 24, &err);
  EXPECT(d);
  char *at = strstr(d, from);
  EXPECT(at);
  size_t out_len = len - strlen(from) + strlen(to);
  char *o = malloc(out_len + 1);
  size_t pre = (size_t)(at - d);
  memcpy(o, d, pre);
  memcpy(o + pre, to, strlen(to));
  memcpy(o + pre + strlen(to), at + strlen(from), len - pre - strlen(from));
  EXPECT(file_write_atomic(p, o, out_len, &err));
  free(d), free(o);
}

// hub_read on dir fails with one line holding every key.
static void expect_refused(const char *why, const char *dir, const char *k1, const char *k2) {
  StFile f;
  ModelTokenizer *tk;
  Err err = {0};
  bool ok = hub_read(dir, &f, &tk, &err);
  CHECK(!ok, "%s: accepted", why);
  if (ok) {
    st_free(&f), model_tokenizer_free(tk);
    return;
  }
  CHECK(strstr(err.msg, k1) && (!k2 || strstr(err.msg, k2)) && !strchr(err.msg, '\n'),
        "%s: message \"%s\" lacks \"%s\" / \"%s\"", why, err.msg, k1, k2 ? k2 : "");
  CHECK(f.n == 0 && f.tensors == NULL && tk == NULL, "%s: outputs not cleared", why);
}

// hub_read refuses a copy of fixture `variant` in which `from` in file `name` became `to`.
static void refused_edit(const char *why, const char *variant, const char *name, const char *from,
                         const char *to, const char *k1, const char *k2) {
  char dir[64];
  hub_fixture_copy(variant, dir);
  edit_file(dir, name, from, to);
  expect_refused(why, dir, k1, k2);
  hub_fixture_remove(dir, INDEX_FILE);
}

// hub_read refuses a copy of fixture `variant` without its file `name`.
static void refused_without(const char *why, const char *variant, const char *name, const char *k1,
                            const char *k2) {
  char dir[64], p[4300];
  hub_fixture_copy(variant, dir);
  snprintf(p, sizeof p, "%s/%s", dir, name);
  unlink(p);
  expect_refused(why, dir, k1, k2);
  hub_fixture_remove(dir, INDEX_FILE);
}

static void test_bad(void) {
  char dir[64], p[4300];
  hub_fixture_copy("gpt2-tiny", dir);
  snprintf(p, sizeof p, "%s/config.json", dir);
  unlink(p);
  expect_refused("no config.json", dir, "config.json", "download");
  write_file(dir, "config.json", "{\"model_type\": \"gpt2\", ");
  expect_refused("config.json not JSON", dir, "config.json", "JSON");
  write_file(dir, "config.json", "{\"model_type\": \"mamba\"}");
  expect_refused("unknown model_type", dir, "mamba", "gpt2, bert, llama");
  write_file(dir, "config.json", "{\"n_embd\": 16}");
  expect_refused("no model_type", dir, "model_type", NULL);
  hub_fixture_remove(dir, INDEX_FILE);

  refused_edit("n_embd disagrees", "gpt2-tiny", "config.json", "\"n_embd\": 16", "\"n_embd\": 32",
               "wte.weight", "n_embd=32");
  refused_edit("n_layer too large", "gpt2-tiny", "config.json", "\"n_layer\": 2", "\"n_layer\": 3",
               "h.2.ln_1.weight", "missing");
  refused_edit("n_layer too small", "gpt2-tiny", "config.json", "\"n_layer\": 2", "\"n_layer\": 1",
               "h.1.ln_1.weight", "n_layer=1");
  refused_edit("n_positions disagrees", "gpt2-tiny", "config.json", "\"n_positions\": 32",
               "\"n_positions\": 1024", "wpe.weight", "n_positions=1024");
  refused_edit("unknown activation", "gpt2-tiny", "config.json", "\"gelu_new\"", "\"swish\"", "swish",
               "gelu_new");

  refused_without("no merges.txt", "gpt2-tiny", "merges.txt", "merges.txt", NULL);
  refused_edit("vocabulary smaller than wte", "gpt2-tiny", "vocab.json", ", \"<|endoftext|>\": 292}", "}",
               "292 tokens", "293 rows");
  hub_fixture_copy("gpt2-tiny", dir);
  snprintf(p, sizeof p, "%s/model.safetensors", dir);
  unlink(p);
  write_file(dir, "model.safetensors.index.json", "{\"weight_map\": {}}");
  expect_refused("sharded", dir, "sharded", "merge");
  snprintf(p, sizeof p, "%s/model.safetensors.index.json", dir);
  unlink(p);
  expect_refused("no weights", dir, "model.safetensors is missing", "huggingface-cli");
  hub_fixture_remove(dir, INDEX_FILE);

  refused_without("no vocab.txt", "bert-tiny", "vocab.txt", "vocab.txt", NULL);
  refused_edit("intermediate_size disagrees", "bert-tiny", "config.json", "\"intermediate_size\": 64",
               "\"intermediate_size\": 32", "intermediate.dense.weight", "intermediate_size=32");
  refused_edit("hidden_size disagrees", "bert-tiny", "config.json", "\"hidden_size\": 16",
               "\"hidden_size\": 8", "word_embeddings", "hidden_size=8");
  refused_edit("relative positions", "bert-tiny", "config.json", "\"absolute\"", "\"relative_key\"",
               "relative_key", "absolute");
  refused_edit("vocab.txt one short", "bert-tiny", "vocab.txt", "[PAD]\n", "", "vocab.txt", "rows");
}

// ---- the file mapping (model.h: a GPT-2 checkpoint's F32 weights stay in the file mapping)

// Every tensor of a and b, bit for bit (same names and shapes); the count of elements that differ,
// each tensor that differs reported when same.
static long trace_diff(const Trace *a, const Trace *b, bool same, const char *what) {
  long bad = 0;
  CHECK(a->n == b->n, "%s: %d and %d tensors", what, a->n, b->n);
  for (int k = 0; k < a->n && k < b->n; k++) {
    const TraceTensor *x = &a->t[k], *y = &b->t[k];
    CHECK(!strcmp(x->name, y->name) && x->heads == y->heads && x->rows == y->rows && x->cols == y->cols,
          "%s: tensor %d is %s and %s", what, k, x->name, y->name);
    if (!x->data || !y->data || x->heads != y->heads || x->rows != y->rows || x->cols != y->cols) continue;
    long here = 0;
    for (int h = 0; h < x->heads; h++)
      for (int i = 0; i < x->rows; i++)
        for (int j = 0; j < x->cols; j++) {
          float u = trace_at(x, h, i, j), v = trace_at(y, h, i, j);
          here += memcmp(&u, &v, sizeof u) != 0;
        }
    if (same) CHECK(here == 0, "%s: %s differs in %ld elements", what, x->name, here);
    bad += here;
  }
  return bad;
}

// How many mappings of files whose path ends with `tail` the process has (/proc/self/maps); -1
// when it cannot tell.
static int mappings_of(const char *tail) {
  FILE *fp = fopen("/proc/self/maps", "r");
  if (!fp) return -1;
  char line[8192];
  int n = 0;
  size_t k = strlen(tail);
  while (fgets(line, sizeof line, fp)) {
    size_t len = strcspn(line, "\n");
    n += len >= k && !strncmp(line + len - k, tail, k);
  }
  fclose(fp);
  return n;
}

// The mapped GPT-2 fixture against the same weights saved by model_save and loaded as a plain file
// (canonical layout, copies): the weights, every stage through the packed kernel (no canonical copy
// made) and through the loops (made then), a what-if edit of W^k and the gradients are the same
// bits; the F16 fixture cannot stay mapped.
static void test_mapped(void) {
  char dir[4200], saved[4200];
  snprintf(dir, sizeof dir, "%s/hub/gpt2-tiny", ref);
  snprintf(saved, sizeof saved, "/tmp/sf_test_hub_mapped_%d.safetensors", (int)getpid());
  Err err = {0};
  size_t map_min = st_map_min_bytes;
  st_map_min_bytes = 0; // the fixture is small: mapped all the same
  Model *m = model_load(dir, &err);
  CHECK(m, "mapped: %s", err.msg);
  if (!m) return;
  const char *tail = "gpt2-tiny/model.safetensors";
  int maps = mappings_of(tail);
  CHECK(maps != 0, "mapped: the model holds its file's mapping (%d)", maps);
  const LayerWeights *w = &m->layers[1];
  CHECK(m->map && w->in_proj_xw && w->out_proj_xw && w->linear1_xw && w->linear2_xw && !w->in_proj_weight &&
            !w->linear2_weight,
        "mapped: the F32 GPT-2 keeps its Conv1D matrices in the mapping, without canonical copies");
  CHECK(m->embed >= (float *)(void *)m->map && m->embed < (float *)(void *)(m->map + m->map_len),
        "mapped: wte is read in place");
  CHECK(model_save(m, saved, &err), "mapped: save: %s", err.msg);
  CHECK(!w->in_proj_weight, "mapped: model_save wrote the canonical layout without a canonical copy");
  Model *c = model_load(saved, &err);
  unlink(saved);
  // a canonical file (course_read): mapped in turn, its layer matrices read in place in their own layout
  CHECK(c && c->map && c->layers[1].in_proj_weight && !c->layers[1].in_proj_xw &&
            (uint8_t *)c->layers[1].in_proj_weight >= c->map &&
            (uint8_t *)c->layers[1].in_proj_weight < c->map + c->map_len,
        "mapped: the saved copy is a canonical file, its W^qkv read in its mapping: %s", err.msg);
  if (!c) return model_free(m);
  float *fm = model_weights_flat(m), *fc = model_weights_flat(c);
  CHECK(fm && fc && m->n_params == c->n_params && !memcmp(fm, fc, sizeof(float) * (size_t)m->n_params),
        "mapped: the weights in flat order are those of the saved copy");
  free(fm), free(fc);
  Tokens tk;
  CHECK(model_tokenize(m, "The cat walks by the bank", 64, &tk, &err), "mapped: %s", err.msg);
  long threshold = mat_naive_max_madds;
  for (int pass = 0; pass < 2; pass++) { // the packed kernel for every product, then the loops
    mat_naive_max_madds = pass == 0 ? 0 : threshold;
    Trace *tm = trace_new(m, &tk, &err), *tc = trace_new(c, &tk, &err);
    CHECK(tm && tc, "mapped: %s", err.msg);
    if (!tm || !tc) break;
    model_forward(tm), model_forward(tc);
    if (pass == 0 && gemm_supported())
      CHECK(!w->in_proj_weight, "mapped: the packed forward made no canonical copy");
    if (pass == 1) CHECK(w->in_proj_weight != NULL, "mapped: the forward by loops made the canonical copy");
    if (pass == 0 && gemm_supported()) { // the backward reads the Conv1D layout in place
      TraceGrad *g0 = backward_new(tm, NULL, 0, &err), *g1 = backward_new(tc, NULL, 0, &err);
      CHECK(g0 && g1, "mapped: backward: %s", err.msg);
      if (g0 && g1) {
        backward_run(g0), backward_run(g1);
        CHECK(!w->in_proj_weight && !w->out_proj_weight && !w->linear1_weight && !w->linear2_weight,
              "mapped: the backward made no canonical copy");
        // (dX = dY·W with W transposed in the product: BLAS may sum in another order, so not bit for bit)
        double worst = 0, top = 0;
        for (long k = 0; k < g0->n_params; k++) {
          worst = fmax(worst, fabs((double)g0->dparams[k] - g1->dparams[k]));
          top = fmax(top, fabs((double)g1->dparams[k]));
        }
        CHECK(g0->loss == g1->loss && worst <= 1e-5 * top,
              "mapped: the gradients through the Conv1D layout are the canonical file's (worst %g of %g)",
              worst, top);
      }
      backward_free(g0), backward_free(g1);
    }
    CHECK(trace_diff(tm, tc, true, pass ? "mapped, loops" : "mapped, packed") == 0,
          "mapped: the stages differ");
    // W^k of layer 2 viewed in place: the same element of the parameters as the canonical view's
    const TraceTensor *vm = trace_find(tm, "l1.Wk"), *vc = trace_find(tc, "l1.Wk");
    CHECK(vm && vc && !vm->transposed && vc->transposed, "mapped: W^k is a view of the Conv1D layout");
    if (vm && vc)
      CHECK(model_param_offset(m, vm->data + 3 * vm->stride + 5) ==
                model_param_offset(c, vc->data + 5 * vc->stride + 3),
            "mapped: model_param_offset of a Conv1D view's element");
    // a what-if edit of W^k[3, 5] and the gradients of the next-token loss
    TraceEdit x;
    TraceEdits e = {0};
    int k = (int)(vm - tm->t);
    CHECK(edits_for_cell(tm, k, 0, 3, 5, 2.5f, &x, &err) && edits_add(&e, &x, &err), "mapped: %s", err.msg);
    Trace *em = edits_trace(tm, &e, &err), *ec = edits_trace(tc, &e, &err);
    CHECK(em && ec, "mapped: edit: %s", err.msg);
    if (em && ec) {
      CHECK(trace_diff(em, ec, true, "mapped, edited") == 0, "mapped: the edited stages differ");
      CHECK(trace_at(trace_find(em, "l1.Wk"), 0, 3, 5) == 2.5f, "mapped: the edited view shows the edit");
      CHECK(trace_diff(em, tm, false, "mapped, edit vs none") > 0, "mapped: the edit changed nothing");
    }
    trace_free(em), trace_free(ec), edits_free(&e);
    TraceGrad *gm = backward_new(tm, NULL, 0, &err), *gc = backward_new(tc, NULL, 0, &err);
    CHECK(gm && gc, "mapped: backward: %s", err.msg);
    if (gm && gc) {
      backward_run(gm), backward_run(gc);
      CHECK(gm->loss == gc->loss && !memcmp(gm->dparams, gc->dparams, sizeof(float) * (size_t)gm->n_params),
            "mapped: the loss and the gradients are the saved copy's");
    }
    backward_free(gm), backward_free(gc);
    trace_free(tm), trace_free(tc);
  }
  mat_naive_max_madds = threshold;
  tokens_free(&tk);
  model_free(c);
  model_free(m);
  CHECK(maps < 0 || mappings_of(tail) == 0, "mapped: model_free unmapped the file");
  // half precision becomes floats of its own: nothing stays mapped
  snprintf(dir, sizeof dir, "%s/hub/gpt2-tiny-f16", ref);
  m = model_load(dir, &err);
  CHECK(m && !m->map && m->layers[0].in_proj_weight && !m->layers[0].in_proj_xw,
        "mapped: the F16 GPT-2 is converted, not mapped: %s", err.msg);
  CHECK(maps < 0 || mappings_of("gpt2-tiny-f16/model.safetensors") == 0,
        "mapped: a file no tensor points into is not kept mapped");
  model_free(m);
  st_map_min_bytes = map_min; // a small file is copied as before
  snprintf(dir, sizeof dir, "%s/hub/gpt2-tiny", ref);
  m = model_load(dir, &err);
  CHECK(m && !m->map && m->layers[0].in_proj_weight && !m->layers[0].in_proj_xw,
        "mapped: a small F32 checkpoint is copied, not mapped: %s", err.msg);
  model_free(m);
}

int main(void) {
  snprintf(ref, sizeof ref, "%s/ref", check_test_dir());
  test_mapped();
  test_conversions();
  test_gpt2("gpt2-tiny", "", false);
  test_gpt2("gpt2-tiny-f16", "transformer.", true);
  test_bert("bert-tiny");
  test_bert("bert-tiny-bf16");
  test_tokenize("gpt2-tiny");
  test_tokenize("gpt2-tiny-f16");
  test_tokenize("bert-tiny");
  test_tokenize("bert-tiny-bf16");
  test_chars();
  test_bad();
  return check_exit("test_hub");
}
