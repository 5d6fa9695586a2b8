// test_edits.c -- what-if edits (edits.h): an edited score, weight or LayerNorm gain reaches
// every later stage and no earlier one, undo gives back the model's own trace bit for bit, a
// head switched off gives zeros in its columns of the concatenation or uniform attention, the
// parser refuses bad specs in one line, and the labels read as the footers print them.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "edits.h"      // defines: TraceEdits, edits_parse_edit, edits_trace
#include "forward.h"    // defines: model_forward
#include "model.h"      // defines: Model, model_random
#include "model_load.h" // defines: model_load
#include "tokenizer.h"  // defines: Tokens, tokens_from_text
#include "trace.h"      // defines: Trace, trace_find, trace_at

static Trace *run_text(const Model *m, const char *text) {
  Err err = {0};
  Tokens tok;
  if (!tokens_from_text(&tok, &m->vocab, text, 0, &err)) {
    CHECK(false, "tokenizing \"%s\": %s", text, err.msg);
    return NULL;
  }
  Trace *t = trace_new(m, &tok, &err);
  tokens_free(&tok);
  CHECK(t != NULL, "trace_new: %s", err.msg);
  if (t) model_forward(t);
  return t;
}

static bool same_bits(const TraceTensor *a, const TraceTensor *b) {
  for (int h = 0; h < a->heads; h++)
    for (int i = 0; i < a->rows; i++)
      for (int j = 0; j < a->cols; j++) {
        float x = trace_at(a, h, i, j), y = trace_at(b, h, i, j);
        if (memcmp(&x, &y, sizeof x)) return false;
      }
  return true;
}

// Every activation of a and b has the same bits.
static bool same_trace(const Trace *a, const Trace *b) {
  for (int k = 0; k < a->n; k++)
    if (!a->t[k].is_weight && !same_bits(&a->t[k], &b->t[k])) return false;
  return true;
}

static Trace *edited(const Trace *base, const TraceEdits *e) {
  Err err = {0};
  Trace *t = edits_trace(base, e, &err);
  CHECK(t != NULL, "edits_trace: %s", err.msg);
  return t;
}

static void add_spec(TraceEdits *e, const Trace *base, const char *spec) {
  Err err = {0};
  TraceEdit x;
  bool ok = edits_parse_edit(base, spec, &x, &err) && edits_add(e, &x, &err);
  CHECK(ok, "%s: %s", spec, err.msg);
}

// The stage numbers of an edited pass are the model's own (issue 31.8: "Stage 7/17" became 7/16
// after an edit, the edited pass lacking the similarity's steps).
static void test_stage_numbers(const Model *m) {
  Trace *base = run_text(m, "The cat walks by the bank");
  if (!base) return;
  CHECK(trace_add_sim_steps(base), "the similarity's steps");
  TraceEdits e = {0};
  add_spec(&e, base, "S1[cat, walks] = 6");
  Trace *t = edited(base, &e);
  if (t) {
    int k0 = trace_step_find(base, STEP_SOFTMAX, 0), k1 = trace_step_find(t, STEP_SOFTMAX, 0), n0, n1;
    int s0 = trace_stage_number(base, k0, &n0), s1 = trace_stage_number(t, k1, &n1);
    CHECK(s0 == s1 && n0 == n1 && t->n_steps == base->n_steps,
          "the softmax is stage %d/%d of the model's pass and %d/%d of the edited one (steps %d, %d)", s0, n0,
          s1, n1, base->n_steps, t->n_steps);
    trace_free(t);
  }
  edits_free(&e);
  trace_free(base);
}

// An edited score: the row of A is the softmax of the edited row; earlier stages keep their bits,
// later ones change; undo gives the model's own trace back.
static void test_score_edit(const Model *m) {
  Trace *base = run_text(m, "The cat sleeps by the river bank");
  if (!base) return;
  TraceEdits e = {0};
  add_spec(&e, base, "S2[bank, river] = 6.0");
  CHECK(e.n == 1 && e.e[0].kind == EDIT_SCORE && e.e[0].head == 1 && e.e[0].i == 6 && e.e[0].j == 5,
        "S2[bank, river]: head 1, row 6, column 5 (0-based)");
  Trace *t = edited(base, &e);
  if (!t) return;
  const TraceTensor *S0 = trace_find(base, "l0.S"), *S1 = trace_find(t, "l0.S");
  const TraceTensor *A0 = trace_find(base, "l0.A"), *A1 = trace_find(t, "l0.A");
  CHECK(trace_at(S1, 1, 6, 5) == 6.0f, "the edited score is in the trace's S");
  double row[7], mx = -INFINITY, sum = 0;
  for (int j = 0; j < 7; j++) row[j] = j == 5 ? 6.0 : trace_at(S0, 1, 6, j), mx = fmax(mx, row[j]);
  for (int j = 0; j < 7; j++) sum += exp(row[j] - mx);
  for (int j = 0; j < 7; j++)
    CHECK_NEAR(trace_at(A1, 1, 6, j), exp(row[j] - mx) / sum, 1e-6,
               "A_2[bank, %d] is the softmax of the edited row", j);
  CHECK(trace_at(A1, 1, 6, 5) != trace_at(A0, 1, 6, 5), "A_2[bank, river] changed");
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 7; j++)
      CHECK(trace_at(A1, 1, i, j) == trace_at(A0, 1, i, j), "A_2 row %d is unchanged", i);
  static const char *const before[] = {"O", "X", "P", "Z", "l0.Q", "l0.K", "l0.V"};
  for (size_t k = 0; k < sizeof before / sizeof *before; k++)
    CHECK(same_bits(trace_find(base, before[k]), trace_find(t, before[k])),
          "%s (before the edit) kept its bits", before[k]);
  static const char *const after[] = {"l0.AV", "l0.concat", "l0.attn", "l0.res1", "l0.out", "logits", "pred"};
  for (size_t k = 0; k < sizeof after / sizeof *after; k++)
    CHECK(!same_bits(trace_find(base, after[k]), trace_find(t, after[k])), "%s (after the edit) changed",
          after[k]);
  char d[256];
  CHECK(!strcmp(edits_describe(t, d, sizeof d), "edited: S₂[bank, river] = 6.0"), "described as \"%s\"", d);
  CHECK(!strcmp(edits_describe(base, d, sizeof d), ""), "the model's own trace describes no edit: \"%s\"", d);
  trace_free(t);

  // undo: the model's own trace, bit for bit, and no edit to describe
  CHECK(edits_undo(&e) && !edits_undo(&e), "one edit to undo");
  if ((t = edited(base, &e))) {
    CHECK(same_trace(base, t), "after undo the trace is the model's own, bit for bit");
    CHECK(t->edits == NULL, "after undo the trace holds no edits");
    trace_free(t);
  }
  edits_free(&e);
  trace_free(base);
}

// A head switched off: zero leaves zeros in its columns of concat and W^o mixes the rest; uniform
// gives rows of 1/L.
static void test_head_off(const Model *m) {
  Trace *base = run_text(m, "The cat sleeps by the river bank");
  if (!base) return;
  Err err = {0};
  int l, h;
  HeadOff mode;
  CHECK(edits_parse_head_off(base, "1:3", &l, &h, &mode, &err) && l == 0 && h == 2 && mode == HEAD_ZERO,
        "1:3 is layer 0 head 2, zeroed: %s", err.msg);
  TraceEdits e = {0};
  CHECK(edits_set_head(&e, base, l, h, mode, &err), "%s", err.msg);
  Trace *t = edited(base, &e);
  if (t) {
    int D = m->cfg.D, dk = D / m->cfg.H, L = t->L;
    const TraceTensor *c0 = trace_find(base, "l0.concat"), *c1 = trace_find(t, "l0.concat");
    const TraceTensor *attn = trace_find(t, "l0.attn"), *Wo = trace_find(t, "l0.Wo"),
                      *bo = trace_find(t, "l0.bo");
    bool zeros = true, rest = true;
    for (int i = 0; i < L; i++)
      for (int j = 0; j < D; j++) {
        if (j / dk == 2)
          zeros = zeros && trace_at(c1, 0, i, j) == 0.0f;
        else
          rest = rest && trace_at(c1, 0, i, j) == trace_at(c0, 0, i, j);
      }
    CHECK(zeros, "head 3's columns of concat are zeros");
    CHECK(rest, "the other heads' columns of concat are unchanged");
    CHECK(same_bits(trace_find(base, "l0.A"), trace_find(t, "l0.A")), "A is as computed (zero mode)");
    double worst = 0;
    for (int i = 0; i < L; i++)
      for (int j = 0; j < D; j++) {
        double s = trace_at(bo, 0, 0, j);
        for (int k = 0; k < D; k++) s += (double)trace_at(c1, 0, i, k) * trace_at(Wo, 0, k, j);
        worst = fmax(worst, fabs(s - trace_at(attn, 0, i, j)));
      }
    CHECK(worst < 1e-5, "attn = concat·W^o + b^o of the other heads (worst %g)", worst);
    CHECK(!same_bits(trace_find(base, "pred"), trace_find(t, "pred")), "the prediction changed");
    char d[256];
    CHECK(!strcmp(edits_describe(t, d, sizeof d), "heads off: layer 1 head 3 (zeroed)"),
          "described as \"%s\"", d);
    trace_free(t);
  }
  CHECK(edits_parse_head_off(base, "1:3:uniform", &l, &h, &mode, &err) && mode == HEAD_UNIFORM, "%s",
        err.msg);
  CHECK(edits_set_head(&e, base, l, h, mode, &err), "%s", err.msg);
  if ((t = edited(base, &e))) {
    const TraceTensor *A = trace_find(t, "l0.A");
    bool uniform = true;
    for (int i = 0; i < t->L; i++)
      for (int j = 0; j < t->L; j++) uniform = uniform && trace_at(A, 2, i, j) == 1.0f / 7;
    CHECK(uniform, "A_3's rows are 1/7 (uniform)");
    CHECK(same_bits(trace_find(base, "l0.S"), trace_find(t, "l0.S")), "S is as computed (uniform mode)");
    trace_free(t);
  }
  CHECK(edits_set_head(&e, base, 0, 2, HEAD_ON, &err) && edits_empty(&e), "switched on again: no edits");
  if ((t = edited(base, &e))) {
    CHECK(same_trace(base, t), "head on again: the model's own trace, bit for bit");
    trace_free(t);
  }
  CHECK(!edits_set_head(&e, base, 0, 4, HEAD_ZERO, &err) && strstr(err.msg, "4 heads"), "head 5 refused: %s",
        err.msg);
  edits_free(&e);
  trace_free(base);
}

// Weight edits: E, W^q, a LayerNorm gain; the model itself never changes.
static void test_weight_edits(const Model *m) {
  Trace *base = run_text(m, "The cat sleeps by the river bank");
  if (!base) return;
  float e_before = m->embed[(size_t)vocab_find(&m->vocab, "cat") * m->cfg.D + 3];
  float wq_before = trace_at(trace_find(base, "l0.Wq"), 0, 5, 7);
  TraceEdits e = {0};
  add_spec(&e, base, "E[cat, d4]=5"); // dimensions d1 … dD, counted from 1 (issue 31.6)
  add_spec(&e, base, "1:Wq[d6, d8] = -2.5");
  add_spec(&e, base, "gamma2[d11]=0");
  Trace *t = edited(base, &e);
  if (t) {
    CHECK(trace_at(trace_find(t, "X"), 0, 1, 3) == 5.0f, "X[cat, 3] = 5 (the edited E row)");
    CHECK(trace_at(trace_find(t, "l0.Wq"), 0, 5, 7) == -2.5f, "the edited trace's W^q shows the edit");
    CHECK(trace_at(trace_find(t, "l0.out"), 0, 2, 10) == trace_at(trace_find(t, "l0.norm2.beta"), 0, 0, 10),
          "a gain of 0: LN2's output column 10 is its shift");
    CHECK(same_bits(trace_find(base, "P"), trace_find(t, "P")), "P kept its bits");
    CHECK(!same_bits(trace_find(base, "l0.Q"), trace_find(t, "l0.Q")), "Q changed");
    char d[256];
    CHECK(!strcmp(edits_describe(t, d, sizeof d),
                  "edited: E[cat, d4] = 5.0; Wq[d6, d8] = -2.5; gamma2[d11] = 0.0"),
          "described as \"%s\"", d);
    trace_free(t);
  }
  CHECK(m->embed[(size_t)vocab_find(&m->vocab, "cat") * m->cfg.D + 3] == e_before,
        "the model's E is unchanged");
  CHECK(trace_at(trace_find(base, "l0.Wq"), 0, 5, 7) == wq_before, "the model's W^q is unchanged");
  edits_clear(&e);
  if ((t = edited(base, &e))) {
    CHECK(same_trace(base, t), "after undo all: the model's own trace, bit for bit");
    trace_free(t);
  }
  edits_free(&e);
  trace_free(base);
}

// Bad specs: one line that says what is wrong.
static void test_parse_errors(const Model *m) {
  Trace *base = run_text(m, "The cat sleeps by the river bank");
  if (!base) return;
  static const struct {
    const char *spec, *says;
  } bad[] = {
      {"S9[bank, river]=1", "4 heads"},
      {"S[bank, river]=1", "needs its head"},
      {"Q1[bank, river]=1", "not an editable matrix"},
      {"S1[bank, lake]=1", "lake is not a token"},
      {"S1[bank, river]", "'='"},
      {"S1[bank, river]=abc", "not a number"},
      {"S1 bank river = 1", "no [row, column]"},
      {"2:S1[bank, river]=1", "not a layer"},
      {"1:E[cat, 3]=1", "no layer"},
      {"E[zebra, 3]=1", "vocabulary"},
      {"Wq[d6, d65]=1", "d1 … d64"},
      {"E[cat, 3]=1", "the old 0-based 3 is d4"}, // the old form, refused with the new one
      {"Wq[d0, d1]=1", "d1 … d64"},
      {"S1[the#3, river]=1", "the#3 is not a token"},
      {"b1[3, 4]=1", "one index"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    Err err = {0};
    TraceEdit x;
    CHECK(!edits_parse_edit(base, bad[k].spec, &x, &err), "%s refused", bad[k].spec);
    CHECK(strstr(err.msg, bad[k].says) && !strchr(err.msg, '\n'), "%s: \"%s\" says %s in one line",
          bad[k].spec, err.msg, bad[k].says);
  }
  static const char *const bad_heads[] = {"1", "0:1", "1:0", "2:1", "1:5", "1:2:off"};
  for (size_t k = 0; k < sizeof bad_heads / sizeof *bad_heads; k++) {
    Err err = {0};
    int l, h;
    HeadOff mode;
    CHECK(!edits_parse_head_off(base, bad_heads[k], &l, &h, &mode, &err) && err.msg[0], "%s refused",
          bad_heads[k]);
  }
  TraceEdit x;
  Err err = {0};
  CHECK(edits_parse_edit(base, "S1[the#2, 7] = 1e-3", &x, &err) && x.i == 4 && x.j == 6,
        "the#2 and position 7: %s", err.msg);
  trace_free(base);
}

// A causal model: a masked score cannot be edited; uniform attention is 1/(i+1) on the keys a
// query may see, with the mask's zeros after them.
static void test_causal(void) {
  ModelConfig c = model_config_default();
  c.causal = true;
  c.n_layers = 2;
  Vocab v;
  Err err = {0};
  CHECK(vocab_from_text(&v, "the cat sat on mat", &err), "%s", err.msg);
  Model *m = model_random(&c, &v, 7, &err);
  vocab_free(&v);
  CHECK(m != NULL, "%s", err.msg);
  if (!m) return;
  Trace *base = run_text(m, "the cat sat on the mat");
  if (base) {
    TraceEdit x;
    CHECK(!edits_parse_edit(base, "S1[cat, sat]=1", &x, &err) && strstr(err.msg, "masked"), "masked: %s",
          err.msg);
    TraceEdits e = {0};
    add_spec(&e, base, "2:S2[sat, cat]=3");
    CHECK(edits_set_head(&e, base, 1, 0, HEAD_UNIFORM, &err), "%s", err.msg);
    Trace *t = edited(base, &e);
    if (t) {
      const TraceTensor *A = trace_find(t, "l1.A");
      bool ok = true;
      for (int i = 0; i < t->L; i++)
        for (int j = 0; j < t->L; j++)
          ok = ok && trace_at(A, 0, i, j) == (j <= i ? 1.0f / (float)(i + 1) : 0.0f);
      CHECK(ok, "uniform with a mask: rows of 1/(i+1), zeros after");
      CHECK(trace_at(trace_find(t, "l1.S_raw"), 1, 2, 1) == 3.0f, "the edit is in S_raw of layer 2");
      CHECK(same_bits(trace_find(base, "l0.A"), trace_find(t, "l0.A")), "layer 1 kept its bits");
      char d[256];
      CHECK(!strcmp(edits_describe(t, d, sizeof d),
                    "edited: layer 2 S₂[sat, cat] = 3.0; heads off: layer 2 head 1 (uniform)"),
            "described as \"%s\"", d);
      trace_free(t);
    }
    edits_free(&e);
    trace_free(base);
  }
  model_free(m);
}

// The window's edit of a selected cell: a score (in a causal model the masked S names S_raw), a
// weight; an activation other than the scores is refused.
static void test_for_cell(void) {
  ModelConfig c = model_config_default();
  c.causal = true;
  Vocab v;
  Err err = {0};
  CHECK(vocab_from_text(&v, "the cat sat", &err), "%s", err.msg);
  Model *m = model_random(&c, &v, 3, &err);
  vocab_free(&v);
  if (!m) return;
  Trace *t = run_text(m, "the cat sat");
  if (t) {
    TraceEdit x;
    CHECK(edits_for_cell(t, trace_index(t, "l1.S"), 1, 2, 0, 4.0f, &x, &err) && x.kind == EDIT_SCORE &&
              !strcmp(x.tensor, "l1.S_raw") && x.layer == 1 && x.head == 1,
          "a cell of the masked scores edits S_raw: %s %s", x.tensor, err.msg);
    CHECK(!edits_for_cell(t, trace_index(t, "l1.S"), 0, 0, 2, 4.0f, &x, &err) && strstr(err.msg, "masked"),
          "a masked cell is refused: %s", err.msg);
    CHECK(edits_for_cell(t, trace_index(t, "l0.Wo"), 0, 3, 4, 0.5f, &x, &err) && x.kind == EDIT_WEIGHT &&
              !strcmp(x.tensor, "l0.Wo"),
          "a cell of W^o: %s", err.msg);
    CHECK(!edits_for_cell(t, trace_index(t, "l0.Q"), 0, 0, 0, 1.0f, &x, &err) &&
              strstr(err.msg, "cannot be edited"),
          "Q is refused: %s", err.msg);
    TraceEdits e = {0};
    CHECK(edits_for_cell(t, trace_index(t, "E"), 0, 2, 1, 0.25f, &x, &err) && edits_add(&e, &x, &err), "%s",
          err.msg);
    Trace *u = edited(t, &e);
    if (u) {
      char d[200];
      CHECK(!strcmp(edits_describe(u, d, sizeof d), "edited: E[cat, d2] = 0.25"), "described as \"%s\"", d);
      trace_free(u);
    }
    edits_free(&e);
    trace_free(t);
  }
  model_free(m);
}

int main(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s/../assets/models/bank.safetensors", check_test_dir());
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "%s: %s", path, err.msg);
  if (m) {
    test_score_edit(m);
    test_stage_numbers(m);
    test_head_off(m);
    test_weight_edits(m);
    test_parse_errors(m);
    model_free(m);
  }
  test_causal();
  test_for_cell();
  return check_exit("test_edits");
}
