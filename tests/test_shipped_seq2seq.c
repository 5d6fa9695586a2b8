// test_shipped_seq2seq.c -- the shipped encoder-decoders do what their training scripts promise.
//
// assets/models/translate.safetensors (scripts/train/translate.py): greedy decoding translates
// "She puts money in the bank" to "elle met de l argent dans la banque" and the river sentences
// to "... la rive"; at the row that writes "banque" or "rive", the documented cross-attention
// head (metadata cross_layer, cross_head) puts its largest weight on "bank" or on the clue word;
// and "The cat walks by the bank" leaves the model hesitating: after "le chat marche près de la"
// its two best words are "banque" and "rive", each with a probability of at least 0.2,
// and greedy decoding from <bos> writes "le chat marche près de la" and one of the two.
// assets/models/add.safetensors (scripts/train/add.py): character tokens (metadata
// tokenizer=chars), so the sums are tokenized here by hand, one id per character looked up with
// vocab_find; greedy decoding gives 49+13 -> 62 (the course's worked example) and held-out sums.
//
// The greedy loop is local to this test, over the existing API: the source and the words written
// so far go through trace_new_seq2seq + model_forward, the argmax of the last row of "pred" is
// appended, and the loop stops at <eos> (or after MAX_OUT words).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "forward.h"    // defines: model_forward
#include "model.h"      // defines: Model, model_meta
#include "model_load.h" // defines: model_load
#include "tokenizer.h"  // defines: Tokens, tokens_from_text, vocab_find
#include "trace_util.h" // defines: argmax_row
#include "trace.h"      // defines: Trace, trace_new_seq2seq, trace_find, trace_at

#define MAX_OUT 24

// The decoder's input <bos> + ids[0..n-1] as Tokens whose words point into the target vocabulary
// (trace_new_seq2seq copies them, so the arrays may live on the stack).
static Tokens dec_tokens(const Model *m, const int *ids, int n, int *buf_ids, char **buf_words,
                         bool *buf_unk) {
  buf_ids[0] = m->bos;
  for (int i = 0; i < n; i++) buf_ids[i + 1] = ids[i];
  for (int i = 0; i <= n; i++) {
    buf_words[i] = m->tgt_vocab.words[buf_ids[i]];
    buf_unk[i] = false;
  }
  return (Tokens){.n = n + 1, .ids = buf_ids, .words = buf_words, .unknown = buf_unk};
}

// Runs the source and <bos> + out[0..n-1] through the model; the caller frees the trace.
static Trace *run(const Model *m, const Tokens *src, const int *out, int n) {
  int ids[MAX_OUT + 1];
  char *words[MAX_OUT + 1];
  bool unk[MAX_OUT + 1];
  Tokens dec = dec_tokens(m, out, n, ids, words, unk);
  Err err = {0};
  Trace *t = trace_new_seq2seq(m, src, &dec, &err);
  CHECK(t != NULL, "trace_new_seq2seq: %s", err.msg);
  if (t) model_forward(t);
  return t;
}

// Greedy decoding: fills out with the target ids written (without <bos>/<eos>), returns how many,
// or -1 when no <eos> came within MAX_OUT words or a trace failed.
static int greedy(const Model *m, const Tokens *src, int *out) {
  for (int n = 0; n < MAX_OUT; n++) {
    Trace *t = run(m, src, out, n);
    if (!t) return -1;
    const TraceTensor *pred = trace_find(t, "pred");
    int next = pred ? argmax_row(pred, 0, n) : m->eos;
    CHECK(pred && pred->rows == n + 1 && pred->cols == m->cfg.V_t, "pred is [T, V_t]");
    trace_free(t);
    if (next == m->eos) return n;
    out[n] = next;
  }
  return -1;
}

// The ids joined by spaces (sep " ") or not (sep ""), from the target vocabulary.
static const char *join(const Model *m, const int *ids, int n, const char *sep, char *buf, size_t cap) {
  buf[0] = '\0';
  for (int i = 0; i < n; i++) {
    size_t len = strlen(buf);
    snprintf(buf + len, cap - len, "%s%s", i ? sep : "", m->tgt_vocab.words[ids[i]]);
  }
  return buf;
}

// ---------------------------------------------------------------- translate.safetensors

typedef struct {
  const char *en, *fr;
} Pair;

// translate.py's CHECKS, as it printed them
static const Pair PAIRS[] = {
    {"She puts money in the bank", "elle met de l argent dans la banque"},
    {"The cat sleeps by the river bank", "le chat dort près de la rive"},
    {"he walks with coins to the bank", "il marche avec des pièces vers la banque"},
    {"she sees the river and runs to the bank", "elle voit la rivière et court vers la rive"},
    {"the dogs walk to the bank with fish", "les chiens marchent vers la rive avec du poisson"},
    {"the mice eat the cheese", "les souris mangent le fromage"},
};

static bool is_clue(const char *w) {
  return !strcmp(w, "bank") || !strcmp(w, "money") || !strcmp(w, "coins") || !strcmp(w, "river") ||
         !strcmp(w, "fish");
}

static void check_pair(const Model *m, int layer, int head, const Pair *p) {
  Err err = {0};
  Tokens src = {0};
  if (!tokens_from_text(&src, &m->vocab, p->en, 0, &err)) {
    CHECK(false, "tokenizing \"%s\": %s", p->en, err.msg);
    return;
  }
  for (int i = 0; i < src.n; i++)
    CHECK(!src.unknown[i], "\"%s\": \"%s\" is a known word", p->en, src.words[i]);
  int out[MAX_OUT] = {0};
  int n = greedy(m, &src, out);
  char got[512];
  CHECK(n >= 0 && !strcmp(join(m, out, n > 0 ? n : 0, " ", got, sizeof got), p->fr),
        "\"%s\" -> \"%s\", want \"%s\"", p->en, n >= 0 ? got : "(no <eos>)", p->fr);
  // the rows that write banque or rive: the documented head looks at bank or the clue
  char name[24];
  snprintf(name, sizeof name, "d%d.cA", layer);
  for (int r = 0; n > 0 && r < n; r++) {
    const char *w = m->tgt_vocab.words[out[r]];
    if (strcmp(w, "banque") && strcmp(w, "rive")) continue;
    Trace *t = run(m, &src, out, n);
    const TraceTensor *cA = t ? trace_find(t, name) : NULL;
    CHECK(cA && cA->heads == m->cfg.H && cA->rows == n + 1 && cA->cols == src.n, "%s is [H, T, S]", name);
    if (cA) {
      int key = argmax_row(cA, head, r);
      CHECK(is_clue(src.words[key]),
            "\"%s\": writing \"%s\", %s head %d peaks on \"%s\" (%.3f), want bank or its clue", p->en, w,
            name, head, src.words[key], trace_at(cA, head, r, key));
    }
    trace_free(t);
  }
  tokens_free(&src);
}

// "The cat walks by the bank": after "le chat marche près de la", banque and rive lead.
static void check_ambiguity(const Model *m) {
  Err err = {0};
  Tokens src = {0}, dec = {0};
  bool ok = tokens_from_text(&src, &m->vocab, "The cat walks by the bank", 0, &err) &&
            trace_decoder_tokens(&dec, m, "le chat marche près de la", 0, &err);
  CHECK(ok, "tokenizing the ambiguous sentence: %s", err.msg);
  Trace *t = ok ? trace_new_seq2seq(m, &src, &dec, &err) : NULL;
  CHECK(!ok || t, "trace_new_seq2seq: %s", err.msg);
  if (t) {
    model_forward(t);
    const TraceTensor *pred = trace_find(t, "pred");
    int last = dec.n - 1, banque = vocab_find(&m->tgt_vocab, "banque"),
        rive = vocab_find(&m->tgt_vocab, "rive");
    CHECK(pred && banque >= 0 && rive >= 0, "pred, banque and rive exist");
    if (pred && banque >= 0 && rive >= 0) {
      float pb = trace_at(pred, 0, last, banque), pr = trace_at(pred, 0, last, rive);
      int best = argmax_row(pred, 0, last);
      float second = 0;
      for (int j = 0; j < pred->cols; j++)
        if (j != banque && j != rive && trace_at(pred, 0, last, j) > second)
          second = trace_at(pred, 0, last, j);
      CHECK(best == banque || best == rive, "the best word after \"la\" is %s", m->tgt_vocab.words[best]);
      CHECK(pb >= 0.2f && pr >= 0.2f && second < fminf(pb, pr),
            "the cat walks by the bank: banque %.3f and rive %.3f lead (each >= 0.2; the next word %.3f)", pb,
            pr, second);
    }
    trace_free(t);
  }
  // generating from <bos> alone reaches that point too: the prediction bars of the window show it
  int out[MAX_OUT] = {0};
  int n = ok ? greedy(m, &src, out) : -1;
  char got[512];
  join(m, out, n > 0 ? n : 0, " ", got, sizeof got);
  CHECK(n >= 0 && (!strcmp(got, "le chat marche près de la banque") ||
                   !strcmp(got, "le chat marche près de la rive")),
        "The cat walks by the bank -> \"%s\", want le chat marche près de la banque|rive",
        n >= 0 ? got : "(no <eos>)");
  tokens_free(&src);
  tokens_free(&dec);
}

static void test_translate(const char *root) {
  char path[1024];
  snprintf(path, sizeof path, "%s/assets/models/translate.safetensors", root);
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "model_load(%s): %s", path, err.msg);
  if (!m) return;
  CHECK(model_is_seq2seq(m), "translate.safetensors is an encoder-decoder");
  const char *l = model_meta(m, "cross_layer"), *h = model_meta(m, "cross_head");
  int layer = l ? atoi(l) : -1, head = h ? atoi(h) : -1;
  CHECK(layer >= 0 && layer < m->cfg.n_dec_layers && head >= 0 && head < m->cfg.H,
        "metadata cross_layer %s, cross_head %s name a head", l ? l : "(none)", h ? h : "(none)");
  if (layer >= 0 && layer < m->cfg.n_dec_layers && head >= 0 && head < m->cfg.H)
    for (size_t i = 0; i < sizeof PAIRS / sizeof PAIRS[0]; i++) check_pair(m, layer, head, &PAIRS[i]);
  check_ambiguity(m);
  model_free(m);
}

// ---------------------------------------------------------------- add.safetensors

// Greedy sum of "a+b", tokenized by hand (one id per non-space character).
static void check_sum(const Model *m, const char *text, const char *want) {
  int ids[16];
  char words[16][2];
  char *wp[16];
  bool unk[16];
  int n = 0;
  for (const char *c = text; *c && n < 16; c++) {
    if (*c == ' ') continue;
    words[n][0] = *c, words[n][1] = '\0';
    wp[n] = words[n];
    ids[n] = vocab_find(&m->vocab, words[n]);
    CHECK(ids[n] > 0, "\"%s\" is in the source vocabulary", words[n]);
    unk[n] = ids[n] <= 0;
    if (ids[n] < 0) ids[n] = 0;
    n++;
  }
  Tokens src = {.n = n, .ids = ids, .words = wp, .unknown = unk};
  int out[MAX_OUT] = {0};
  int k = greedy(m, &src, out);
  char got[64];
  CHECK(k >= 0 && !strcmp(join(m, out, k > 0 ? k : 0, "", got, sizeof got), want), "%s -> %s, want %s", text,
        k >= 0 ? got : "(no <eos>)", want);
}

static void test_add(const char *root) {
  char path[1024];
  snprintf(path, sizeof path, "%s/assets/models/add.safetensors", root);
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "model_load(%s): %s", path, err.msg);
  if (!m) return;
  CHECK(model_is_seq2seq(m), "add.safetensors is an encoder-decoder");
  const char *tok = model_meta(m, "tokenizer");
  CHECK(tok && !strcmp(tok, "chars"), "metadata tokenizer=chars (got %s)", tok ? tok : "(none)");
  for (const char *c = "0123456789+"; *c; c++) {
    char w[2] = {*c, '\0'};
    CHECK(vocab_find(&m->vocab, w) > 0 && vocab_find(&m->tgt_vocab, w) > 0, "both vocabularies hold \"%s\"",
          w);
  }
  // add.py's CHECKS (all held out of training) and more held-out sums
  check_sum(m, "49+13", "62");
  check_sum(m, "0+0", "0");
  check_sum(m, "99+99", "198");
  check_sum(m, "7+5", "12");
  check_sum(m, "50+50", "100");
  check_sum(m, "38+64", "102");
  check_sum(m, "4 9 + 1 3", "62"); // spaces are not tokens
  model_free(m);
}

int main(void) {
  const char *root = getenv("SF_SOURCE_DIR");
  test_translate(root ? root : ".");
  test_add(root ? root : ".");
  return check_exit("test_shipped_seq2seq");
}
