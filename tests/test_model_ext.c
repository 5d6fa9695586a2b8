// test_model_ext.c -- the loader's validation of the canonical extensions (model.h): each
// contradictory or misshapen file is refused in one line that names the file and the tensor or key
// to fix; the valid combinations load with what they say (a tied head is embed itself, a missing
// attention bias is NULL, a bpe vocabulary need not start with "<unk>"), model_from_st takes an
// StFile over, and a saved copy loads again. Files are written into a temporary folder.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdlib.h> // mkdtemp
#include <unistd.h> // rmdir

#include "check.h"
#include "model.h"       // defines: Model, model_from_st
#include "model_load.h"  // defines: model_load, model_save
#include "safetensors.h" // defines: StTensor, st_write, st_read

// A valid tiny model (D=4, H=2, F=8, n_layers layers, V=3) plus the edits of a case.
typedef struct {
  StTensor t[48];
  int n;
  const char *keys[16], *vals[16];
  int n_meta;
  float data[64 * 64];
} Tiny;

static void add_t(Tiny *m, const char *name, int64_t s0, int64_t s1) {
  m->t[m->n++] = (StTensor){.name = (char *)name,
                            .ndim = s1 ? 2 : 1,
                            .shape = {s0, s1},
                            .count = s1 ? s0 * s1 : s0,
                            .data = m->data};
}

static void del_t(Tiny *m, const char *name) {
  for (int i = 0; i < m->n; i++)
    if (!strcmp(m->t[i].name, name)) {
      m->t[i] = m->t[--m->n];
      return;
    }
}

static void meta(Tiny *m, const char *key, const char *val) {
  for (int i = 0; i < m->n_meta; i++)
    if (!strcmp(m->keys[i], key)) {
      m->vals[i] = val;
      return;
    }
  m->keys[m->n_meta] = key, m->vals[m->n_meta++] = val;
}

static void tiny(Tiny *m, int layers) {
  static const char *const names[2][12] = {
      {"layers.0.self_attn.in_proj_weight", "layers.0.self_attn.in_proj_bias",
       "layers.0.self_attn.out_proj.weight", "layers.0.self_attn.out_proj.bias", "layers.0.linear1.weight",
       "layers.0.linear1.bias", "layers.0.linear2.weight", "layers.0.linear2.bias", "layers.0.norm1.weight",
       "layers.0.norm1.bias", "layers.0.norm2.weight", "layers.0.norm2.bias"},
      {"layers.1.self_attn.in_proj_weight", "layers.1.self_attn.in_proj_bias",
       "layers.1.self_attn.out_proj.weight", "layers.1.self_attn.out_proj.bias", "layers.1.linear1.weight",
       "layers.1.linear1.bias", "layers.1.linear2.weight", "layers.1.linear2.bias", "layers.1.norm1.weight",
       "layers.1.norm1.bias", "layers.1.norm2.weight", "layers.1.norm2.bias"}};
  static const int64_t shapes[12][2] = {{12, 4}, {12, 0}, {4, 4}, {4, 0}, {8, 4}, {8, 0},
                                        {4, 8},  {4, 0},  {4, 0}, {4, 0}, {4, 0}, {4, 0}};
  memset(m, 0, sizeof *m);
  for (int i = 0; i < 64 * 64; i++) m->data[i] = (float)(i % 7) * 0.125f - 0.25f;
  add_t(m, "embed.weight", 3, 4);
  for (int l = 0; l < layers; l++)
    for (int k = 0; k < 12; k++) add_t(m, names[l][k], shapes[k][0], shapes[k][1]);
  meta(m, "d_model", "4");
  meta(m, "n_heads", "2");
  meta(m, "d_ff", "8");
  meta(m, "n_layers", layers == 1 ? "1" : "2");
  meta(m, "vocab", "<unk>\nthe\ncat");
}

static char tmp[256];

// Writes m and loads it: expects success (want NULL) or one line naming the file and `want`.
static Model *load(const char *why, Tiny *m, const char *want) {
  char path[512];
  snprintf(path, sizeof path, "%s/ext.safetensors", tmp);
  Err err = {0};
  CHECK(st_write(path, m->t, m->n, m->keys, m->vals, m->n_meta, &err), "%s: %s", why, err.msg);
  Model *model = model_load(path, &err);
  remove(path);
  if (!want) {
    CHECK(model != NULL, "%s: %s", why, err.msg);
    return model;
  }
  CHECK(model == NULL, "%s: loaded", why);
  CHECK(!model && strstr(err.msg, "ext.safetensors") && strstr(err.msg, want) && !strchr(err.msg, '\n'),
        "%s: message \"%s\" lacks the file name or \"%s\"", why, err.msg, want);
  model_free(model);
  return NULL;
}

int main(void) {
  snprintf(tmp, sizeof tmp, "/tmp/sf-model-ext-XXXXXX");
  CHECK(mkdtemp(tmp) != NULL, "mkdtemp");
  Tiny m;
  Model *ok;

  // learned positions
  tiny(&m, 1), meta(&m, "pos_encoding", "learned");
  load("pos_encoding=learned without the table", &m, "\"pos_embed.weight\"");
  tiny(&m, 1), add_t(&m, "pos_embed.weight", 8, 4);
  load("a position table without pos_encoding=learned", &m, "pos_encoding=learned");
  tiny(&m, 1), meta(&m, "pos_encoding", "learned"), add_t(&m, "pos_embed.weight", 8, 5);
  load("a position table of the wrong width", &m, "pos_embed.weight");
  tiny(&m, 1), meta(&m, "pos_encoding", "rotary");
  load("an unknown pos_encoding", &m, "pos_encoding=\"rotary\"");
  tiny(&m, 1), meta(&m, "pos_encoding", "learned"), add_t(&m, "pos_embed.weight", 8, 4);
  ok = load("learned positions", &m, NULL);
  CHECK(ok && ok->cfg.learned_pos && ok->cfg.max_pos == 8 && ok->pos_embed, "learned positions recorded");
  model_free(ok);

  // activation, tokenizer
  tiny(&m, 1), meta(&m, "activation", "swish");
  load("an unknown activation", &m, "gelu_tanh");
  tiny(&m, 1), meta(&m, "activation", "gelu_tanh");
  ok = load("gelu_tanh", &m, NULL);
  CHECK(ok && ok->cfg.activation == ACT_GELU_TANH, "gelu_tanh recorded");
  model_free(ok);
  tiny(&m, 1), meta(&m, "tokenizer", "sentencepiece");
  load("an unknown tokenizer", &m, "tokenizer=\"sentencepiece\"");
  tiny(&m, 1), meta(&m, "tokenizer", "bpe"), meta(&m, "vocab", "the\ncat\n<|endoftext|>");
  ok = load("a bpe vocabulary without <unk>", &m, NULL);
  CHECK(ok && ok->tok_kind == TOK_BPE && ok->vocab.n == 3 && !strcmp(ok->vocab.words[0], "the") &&
            vocab_find(&ok->vocab, "<|endoftext|>") == 2 && vocab_find(&ok->vocab, "cat") == 1,
        "a bpe vocabulary keeps its ids");
  model_free(ok);
  tiny(&m, 1), meta(&m, "tokenizer", "chars");
  ok = load("the chars tokenizer", &m, NULL);
  CHECK(ok && ok->tok_kind == TOK_CHARS, "chars recorded");
  model_free(ok);

  // BERT's embeddings
  tiny(&m, 1), add_t(&m, "token_type.weight", 2, 5);
  load("a token type table of the wrong width", &m, "token_type.weight");
  tiny(&m, 1), add_t(&m, "embed_norm.weight", 4, 0);
  load("embed_norm.weight without its bias", &m, "embed_norm.bias");

  // attention without biases: in every layer or none
  tiny(&m, 1), del_t(&m, "layers.0.self_attn.in_proj_bias"), del_t(&m, "layers.0.self_attn.out_proj.bias");
  ok = load("attention without biases", &m, NULL);
  CHECK(ok && !ok->layers[0].in_proj_bias && !ok->layers[0].out_proj_bias && ok->no_in_proj_bias,
        "no attention biases: NULL");
  CHECK(ok && ok->n_params == 3 * 4 + 12 * 4 + 16 + 32 + 8 + 32 + 4 + 16, "%ld parameters",
        ok ? ok->n_params : 0);
  model_free(ok);
  tiny(&m, 2), del_t(&m, "layers.0.self_attn.in_proj_bias");
  load("an attention bias in layer 2 only", &m, "layers.1.self_attn.in_proj_bias");

  // heads
  tiny(&m, 1), meta(&m, "tie_head", "1"), add_t(&m, "head.weight", 3, 4);
  load("tie_head=1 with a head.weight", &m, "tie_head=1");
  tiny(&m, 1), meta(&m, "tie_head", "1"), add_t(&m, "head.bias", 3, 0);
  ok = load("a tied head with a bias", &m, NULL);
  CHECK(ok && ok->has_head && ok->tie_head && ok->head_weight == ok->embed && ok->head_bias, "a tied head");
  if (ok) { // a saved tied head stays tied (no head.weight in the copy)
    char path[512];
    snprintf(path, sizeof path, "%s/tied.safetensors", tmp);
    Err err = {0};
    CHECK(model_save(ok, path, &err), "save: %s", err.msg);
    StFile f;
    CHECK(st_read(&f, path, &err), "%s", err.msg);
    CHECK(!st_find(&f, "head.weight") && st_meta(&f, "tie_head") && !strcmp(st_meta(&f, "tie_head"), "1"),
          "the copy is tied");
    Model *back = model_from_st(&f, path, &err); // takes f over
    CHECK(back && back->tie_head && back->n_params == ok->n_params, "the copy loads: %s", err.msg);
    st_free(&f); // harmless: f was emptied
    model_free(back);
    remove(path);
  }
  model_free(ok);
  tiny(&m, 1), add_t(&m, "head_transform.weight", 4, 4), add_t(&m, "head_transform.bias", 4, 0);
  load("a head transform without a head", &m, "head_transform");
  tiny(&m, 1), meta(&m, "tie_head", "1"), add_t(&m, "head_transform.weight", 4, 4),
      add_t(&m, "head_transform.bias", 4, 0);
  load("a head transform without its LayerNorm", &m, "head_norm.weight");

  // the classifier
  tiny(&m, 1), add_t(&m, "head.weight", 3, 4), add_t(&m, "classifier.weight", 2, 4),
      add_t(&m, "classifier.bias", 2, 0);
  load("a head and a classifier", &m, "classifier");
  tiny(&m, 1), add_t(&m, "classifier.weight", 2, 4);
  load("a classifier without its bias", &m, "classifier.bias");
  tiny(&m, 1), add_t(&m, "classifier.weight", 2, 4), add_t(&m, "classifier.bias", 2, 0),
      meta(&m, "classes", "yes\nno\nmaybe");
  load("three class names for two classes", &m, "classes");
  tiny(&m, 1), meta(&m, "classes", "yes\nno");
  load("class names without a classifier", &m, "classifier.weight");
  tiny(&m, 1), add_t(&m, "classifier.weight", 2, 4), add_t(&m, "classifier.bias", 2, 0),
      add_t(&m, "norm.weight", 4, 0), add_t(&m, "norm.bias", 4, 0);
  ok = load("a classifier with a final norm", &m, NULL);
  CHECK(ok && ok->has_classifier && ok->has_final_norm && ok->n_classes == 2 &&
            !strcmp(ok->class_names[1], "class 2"),
        "a classifier with default class names");
  model_free(ok);

  // a random model with learned positions (--random ...,pos=learned,max_pos=N)
  {
    ModelConfig c = model_config_default();
    uint64_t seed = 0;
    Err err = {0};
    CHECK(model_config_parse(&c, &seed,
                             "D=8,H=2,F=16,layers=1,seed=3,pos=learned,max_pos=5,activation=gelu_tanh", &err),
          "%s", err.msg);
    CHECK(c.learned_pos && c.max_pos == 5 && c.activation == ACT_GELU_TANH, "pos=learned parsed");
    CHECK(!model_config_parse(&c, &seed, "pos=rotary", &err) && strstr(err.msg, "pos=rotary"), "pos=rotary");
    Vocab v;
    CHECK(vocab_from_text(&v, "the cat", &err), "%s", err.msg);
    Model *r = model_random(&c, &v, seed, &err);
    vocab_free(&v);
    CHECK(r && r->pos_embed && r->cfg.max_pos == 5 && r->n_params == model_param_count(&r->cfg, false, false),
          "a random model with learned positions: %s", err.msg);
    model_free(r);
  }

  // model_from_st frees the StFile on failure too (ASan's leak check sees it)
  {
    tiny(&m, 1), meta(&m, "tie_head", "1"), add_t(&m, "head.weight", 3, 4);
    char path[512];
    snprintf(path, sizeof path, "%s/bad.safetensors", tmp);
    Err err = {0};
    CHECK(st_write(path, m.t, m.n, m.keys, m.vals, m.n_meta, &err), "%s", err.msg);
    StFile f;
    CHECK(st_read(&f, path, &err), "%s", err.msg);
    CHECK(!model_from_st(&f, "canonical", &err) && strstr(err.msg, "canonical: metadata tie_head=1"),
          "model_from_st names its source: \"%s\"", err.msg);
    CHECK(f.n == 0 && f.tensors == NULL, "the StFile was taken over");
    st_free(&f);
    remove(path);
  }
  rmdir(tmp);
  return check_exit("test_model_ext");
}
