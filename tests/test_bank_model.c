// test_bank_model.c -- the trained models load and do what their documentation promises.
//
// assets/models/bank.safetensors (scripts/train/train_bank.py): in the documented sense head
// (metadata sense_layer, sense_head), the "bank" row of the attention puts its largest weight
// on "river" in river sentences and on "money" in money sentences, and the prediction at the
// last token ("bank") is the next word of that sense: "where" (... where the fish swim) or "to"
// (... to get a loan). Without a clue ("The cat walks by the bank") those two lead.
// tests/ref/notebook/model.safetensors (scripts/train/notebook_example.py): a notebook's model
// loads and runs, with the shapes of its config, probability rows that sum to 1, and the
// prediction torch computed (pred.npy).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "forward.h"     // defines: model_forward
#include "model.h"       // defines: Model, model_meta
#include "model_load.h"  // defines: model_load
#include "npy.h"         // defines: npy_read
#include "safetensors.h" // defines: st_read
#include "stfile.h"      // defines: StFile, st_meta
#include "tokenizer.h"   // defines: Tokens, tokens_from_text
#include "trace_util.h"  // defines: argmax_row
#include "trace.h"       // defines: Trace, trace_new, trace_find, trace_at

// Tokenizes text (every word must be known), runs the forward pass; NULL on failure.
static Trace *run_text(const Model *m, const char *text, Tokens *tok) {
  Err err = {0};
  if (!tokens_from_text(tok, &m->vocab, text, 0, &err)) {
    CHECK(false, "tokenizing \"%s\": %s", text, err.msg);
    return NULL;
  }
  for (int i = 0; i < tok->n; i++)
    CHECK(!tok->unknown[i], "\"%s\": word \"%s\" is not in the vocabulary", text, tok->words[i]);
  Trace *t = trace_new(m, tok, &err);
  CHECK(t != NULL, "trace_new: %s", err.msg);
  if (t) model_forward(t);
  return t;
}

typedef struct {
  const char *text, *clue, *next; // the bank row's strongest key, the prediction at the last token
} SenseCase;

static const SenseCase SENSE_CASES[] = {
    {"The cat sleeps by the river bank", "river", "where"},
    {"She puts money in the bank", "money", "to"},
    {"the mice sleep near the river bank", "river", "where"},
    {"he keeps money in the bank", "money", "to"},
    {"she sees the river and walks to the bank", "river", "where"},
};

static void check_sense_case(const Model *m, int layer, int head, const SenseCase *c) {
  Tokens tok = {0};
  Trace *t = run_text(m, c->text, &tok);
  if (!t) {
    tokens_free(&tok);
    return;
  }
  char name[24];
  snprintf(name, sizeof name, "l%d.A", layer);
  const TraceTensor *A = trace_find(t, name), *pred = trace_find(t, "pred");
  int bank = -1;
  for (int i = 0; i < tok.n; i++)
    if (!strcmp(tok.words[i], "bank")) bank = i;
  CHECK(A && pred && bank >= 0, "\"%s\": %s, pred and the word bank exist", c->text, name);
  if (A && pred && bank >= 0) {
    int key = argmax_row(A, head, bank);
    CHECK(!strcmp(tok.words[key], c->clue),
          "\"%s\": the bank row of layer %d head %d peaks on \"%s\" (%.3f), expected \"%s\"", c->text, layer,
          head, tok.words[key], trace_at(A, head, bank, key), c->clue);
    int w = argmax_row(pred, 0, tok.n - 1);
    CHECK(!strcmp(m->vocab.words[w], c->next),
          "\"%s\": the prediction at the last token is \"%s\" (p=%.3f), expected \"%s\"", c->text,
          m->vocab.words[w], trace_at(pred, 0, tok.n - 1, w), c->next);
    printf("  %-42s bank -> %s %.3f; next word: %s %.3f\n", c->text, tok.words[key],
           trace_at(A, head, bank, key), m->vocab.words[w], trace_at(pred, 0, tok.n - 1, w));
  }
  trace_free(t);
  tokens_free(&tok);
}

// Reads an integer from the metadata of the file, through the safetensors reader.
static int st_meta_int(const StFile *f, const char *key) {
  const char *v = st_meta(f, key);
  CHECK(v != NULL, "metadata \"%s\" is present", key);
  return v ? atoi(v) : -1;
}

static void test_bank(const char *root) {
  char path[4096];
  snprintf(path, sizeof path, "%s/assets/models/bank.safetensors", root);
  struct stat st;
  CHECK(stat(path, &st) == 0 && st.st_size < (1 << 20), "%s exists and is under 1 MiB", path);

  Err err = {0};
  StFile f = {0};
  CHECK(st_read(&f, path, &err), "st_read %s: %s", path, err.msg);
  int layer = st_meta_int(&f, "sense_layer"), head = st_meta_int(&f, "sense_head");
  CHECK(st_meta(&f, "objective") != NULL, "metadata \"objective\" is present");
  st_free(&f);

  Model *m = model_load(path, &err);
  CHECK(m != NULL, "model_load %s: %s", path, err.msg);
  if (!m) return;
  const ModelConfig *c = &m->cfg;
  CHECK(c->D == 64 && c->H == 4 && !c->causal && m->has_head, "D=%d H=%d causal=%d head=%d", c->D, c->H,
        c->causal, m->has_head);
  CHECK(c->V < 200 && !strcmp(m->vocab.words[0], "<unk>"), "a small vocabulary, <unk> first");
  const char *ml = model_meta(m, "sense_layer"), *mh = model_meta(m, "sense_head");
  CHECK(ml && mh && atoi(ml) == layer && atoi(mh) == head, "Model keeps the sense head metadata");
  CHECK(layer >= 0 && layer < c->n_layers && head >= 0 && head < c->H, "sense head l%d h%d exists", layer,
        head);
  if (layer < 0 || layer >= c->n_layers || head < 0 || head >= c->H) {
    model_free(m);
    return;
  }

  printf("bank.safetensors, sense head: layer %d, head %d\n", layer, head);
  for (size_t i = 0; i < sizeof SENSE_CASES / sizeof SENSE_CASES[0]; i++)
    check_sense_case(m, layer, head, &SENSE_CASES[i]);

  // no clue: the model hesitates between the two senses' next words
  Tokens tok = {0};
  Trace *t = run_text(m, "The cat walks by the bank", &tok);
  const TraceTensor *pred = t ? trace_find(t, "pred") : NULL;
  if (pred) {
    int where = vocab_find(&m->vocab, "where"), to = vocab_find(&m->vocab, "to"), L = tok.n;
    CHECK(where > 0 && to > 0, "\"where\" and \"to\" are words of the vocabulary");
    float pw = trace_at(pred, 0, L - 1, where), pt = trace_at(pred, 0, L - 1, to);
    for (int j = 0; j < c->V; j++)
      if (j != where && j != to)
        CHECK(trace_at(pred, 0, L - 1, j) < pw && trace_at(pred, 0, L - 1, j) < pt,
              "no clue: \"%s\" (%.3f) is below where (%.3f) and to (%.3f)", m->vocab.words[j],
              trace_at(pred, 0, L - 1, j), pw, pt);
    printf("  %-42s next word: where %.3f, to %.3f\n", "The cat walks by the bank", pw, pt);
  }
  trace_free(t);
  tokens_free(&tok);
  model_free(m);
}

static void test_notebook(const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/ref/notebook/model.safetensors", dir);
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "model_load %s: %s", path, err.msg);
  if (!m) return;
  const ModelConfig *c = &m->cfg;
  CHECK(c->V == 10 && c->D == 16 && c->H == 2 && c->F == 32 && c->n_layers == 1,
        "notebook config V=%d D=%d H=%d F=%d layers=%d", c->V, c->D, c->H, c->F, c->n_layers);
  CHECK(m->has_head && !m->has_final_norm, "a head, no final norm");

  const char *text = "the cat sleeps by the river bank";
  Tokens tok = {0};
  Trace *t = run_text(m, text, &tok);
  if (t) {
    int L = tok.n;
    CHECK(L == 7, "7 tokens, got %d", L);
    const TraceTensor *A = trace_find(t, "l0.A"), *out = trace_find(t, "l0.out");
    const TraceTensor *pred = trace_find(t, "pred");
    CHECK(A && A->heads == 2 && A->rows == L && A->cols == L, "l0.A is [2, L, L]");
    CHECK(out && out->rows == L && out->cols == 16, "l0.out is [L, 16]");
    CHECK(pred && pred->rows == L && pred->cols == 10, "pred is [L, V]");
    for (int h = 0; A && h < A->heads; h++)
      for (int i = 0; i < L; i++) {
        double s = 0;
        for (int j = 0; j < L; j++) s += trace_at(A, h, i, j);
        CHECK_NEAR(s, 1.0, 1e-5, "row %d of head %d of l0.A", i, h);
      }
    snprintf(path, sizeof path, "%s/ref/notebook/pred.npy", dir);
    int nd = 0, shape[NPY_MAX_DIMS] = {0};
    float *ref = npy_read(path, &nd, shape, &err);
    CHECK(ref && nd == 2 && shape[0] == L && shape[1] == 10, "%s: [L, V] (%s)", path, err.msg);
    for (int i = 0; pred && i < L; i++) {
      double s = 0, worst = 0;
      for (int j = 0; j < pred->cols; j++) {
        float p = trace_at(pred, 0, i, j);
        s += p;
        if (ref && nd == 2 && shape[0] == L && shape[1] == 10) worst = fmax(worst, fabs(p - ref[i * 10 + j]));
      }
      CHECK_NEAR(s, 1.0, 1e-5, "row %d of pred sums to 1", i);
      CHECK(worst <= 1e-5, "row %d of pred differs from torch's pred.npy by %g", i, worst);
    }
    free(ref);
  }
  trace_free(t);
  tokens_free(&tok);
  model_free(m);
}

int main(void) {
  const char *root = getenv("SF_SOURCE_DIR");
  test_bank(root ? root : ".");
  test_notebook(check_test_dir());
  return check_exit("test_bank_model");
}
