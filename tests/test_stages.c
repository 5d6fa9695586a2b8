// test_stages.c -- the stage table of stages.h: one row per stage, names that mean one stage,
// and the numbers a learner sees (the same in the window, `stepformer stages` and exports).
//
// Every StepKind has exactly one row; names, aliases and titles (in stage_key form) never name
// two stages; typos find their stage; every tensor a trace builds has its notation, for every
// variant of the model (post- and pre-norm, causal, GELU, one or three layers, with or without
// a head); and stages are numbered 1..total without a gap, the pre-norm LayerNorm as a half.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model.h"  // defines: Model, model_random, model_config_default
#include "stages.h" // defines: STAGE_TABLE, stage_info, stage_from_name, stage_nearest, stage_key
#include "trace.h"  // defines: Trace, trace_new, trace_stage_number

static void test_rows(void) {
  int rows[STEP_KIND_END] = {0};
  for (int i = 0; i < STAGE_COUNT; i++) rows[STAGE_TABLE[i].kind]++;
  for (int k = STEP_TOKENS; k < STEP_KIND_END; k++) {
    CHECK(rows[k] == 1 && stage_info((StepKind)k) != NULL, "stage kind %d has %d rows", k, rows[k]);
    const StageInfo *s = stage_info((StepKind)k);
    if (!s) continue;
    StepKind back;
    char key[64];
    CHECK(stage_from_name(s->name, &back) && back == s->kind, "%s: its name", s->name);
    CHECK(stage_from_name(s->title, &back) && back == s->kind, "%s: its title \"%s\"", s->name, s->title);
    CHECK(!strcmp(stage_key(s->name, key, sizeof key), s->name), "%s: a name is its own key", s->name);
    for (const char *a = s->aliases; *a;) {
      size_t n = strcspn(a, " ");
      char alias[64];
      snprintf(alias, sizeof alias, "%.*s", (int)n, a);
      CHECK(stage_from_name(alias, &back) && back == s->kind, "%s: alias \"%s\" means %d", s->name, alias,
            (int)back);
      CHECK(!strcmp(stage_key(alias, key, sizeof key), alias), "%s: alias \"%s\" in key form", s->name,
            alias);
      a += n;
      while (*a == ' ') a++;
    }
  }
  // a name that means two stages would resolve to the first: check every pair of keys
  for (int i = 0; i < STAGE_COUNT; i++)
    for (int j = 0; j < STAGE_COUNT; j++) {
      if (i == j) continue;
      char ki[64], kj[64];
      stage_key(STAGE_TABLE[i].title, ki, sizeof ki);
      stage_key(STAGE_TABLE[j].title, kj, sizeof kj);
      CHECK(strcmp(STAGE_TABLE[i].name, STAGE_TABLE[j].name) && strcmp(ki, kj),
            "stages %d and %d share a name", i, j);
    }
}

static void test_names(void) {
  StepKind k;
  CHECK(stage_from_name("Weighted Values", &k) && k == STEP_AV, "a title in any case");
  CHECK(stage_from_name("  softmax  ", &k) && k == STEP_SOFTMAX, "spaces around");
  CHECK(!stage_from_name("", &k) && !stage_from_name("zzz", &k), "no stage");
  const char *near = stage_nearest("sotfmax");
  CHECK(near && !strcmp(near, "softmax"), "sotfmax -> %s", near ? near : "(none)");
  near = stage_nearest("weigted");
  CHECK(near && !strcmp(near, "av"), "weigted -> %s", near ? near : "(none)");
  near = stage_nearest("outpro");
  CHECK(near && !strcmp(near, "outproj"), "outpro -> %s", near ? near : "(none)");
  CHECK(stage_nearest("frobnicate") == NULL, "nothing near frobnicate");
  CHECK(strstr(stage_name_list(), "tokens, onehot") == stage_name_list(), "the list: %s", stage_name_list());
}

// Builds a trace of a random model and checks numbering and notation.
static void check_variant(int norm_first, int causal, int gelu, int layers) {
  ModelConfig c = model_config_default();
  c.norm_first = norm_first, c.causal = causal, c.n_layers = layers;
  c.activation = gelu ? ACT_GELU : ACT_RELU;
  Vocab v;
  Err err = {0};
  CHECK(vocab_from_text(&v, "the cat walks by the bank", &err), "vocab: %s", err.msg);
  Model *m = model_random(&c, &v, 7, &err);
  vocab_free(&v);
  CHECK(m != NULL, "model: %s", err.msg);
  if (!m) return;
  Tokens tk;
  CHECK(tokens_from_text(&tk, &m->vocab, "the cat walks", 0, &err), "tokens: %s", err.msg);
  Trace *t = trace_new(m, &tk, &err);
  tokens_free(&tk);
  CHECK(t != NULL, "trace: %s", err.msg);
  if (t) {
    // through layer 0 the numbers count 1, 2, 3 … (a half stage repeats the number before it);
    // a later layer's stage has its layer-0 counterpart's number; the last is the total
    int total = 0, expect = 1, last = 0;
    for (int s = 0; s < t->n_steps; s++) {
      const TraceStep *st = &t->steps[s];
      const StageInfo *info = stage_info(st->kind);
      int n = trace_stage_number(t, s, &total);
      if (st->layer > 0) {
        int first = trace_step_find(t, st->kind, 0);
        CHECK(first >= 0 && n == trace_stage_number(t, first, NULL),
              "variant %d%d%d%d: %s in layer %d numbered %d", norm_first, causal, gelu, layers, info->name,
              st->layer + 1, n);
      } else if (info->half) {
        CHECK(n == expect - 1, "variant %d%d%d%d: half stage %s numbered %d", norm_first, causal, gelu,
              layers, info->name, n);
      } else {
        CHECK(n == expect, "variant %d%d%d%d: stage %s numbered %d, expected %d", norm_first, causal, gelu,
              layers, info->name, n, expect);
        expect++;
      }
      last = n;
      CHECK(info->in_layer == (st->layer >= 0), "%s: in a layer", info->name);
      const TraceTensor *x = st->result >= 0 ? &t->t[st->result] : NULL;
      if (x) CHECK(x->title && x->symbol && x->tex && *x->tex, "%s: notation", x->name);
      if (x && info->heads != STAGE_ONE_MATRIX) CHECK(trace_per_head(x), "%s: per head", x->name);
    }
    CHECK(total == expect - 1 && last == total, "variant %d%d%d%d: %d stages, counted %d, last %d",
          norm_first, causal, gelu, layers, total, expect - 1, last);
    CHECK((trace_step_find(t, STEP_MASK, 0) >= 0) == causal, "mask iff causal");
    CHECK((trace_step_find(t, STEP_PRENORM, 0) >= 0) == norm_first, "prenorm iff pre-norm");
    const TraceTensor *h = trace_find(t, "l0.ffn_hidden");
    CHECK(h && strstr(h->title, gelu ? "GELU" : "ReLU"), "the activation's title");
    trace_free(t);
  }
  model_free(m);
}

int main(void) {
  test_rows();
  test_names();
  for (int v = 0; v < 16; v++) check_variant(v & 1, (v >> 1) & 1, (v >> 2) & 1, v & 8 ? 3 : 1);
  return check_exit("test_stages");
}
