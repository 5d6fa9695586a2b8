// test_explain.c -- the inspector's worked equations end with the cell's own value.
//
// For every step of three reference traces (post-norm, pre-norm GELU, causal), every operand of
// the view and a spread of cells, explain_cell must produce a heading and at least one line,
// and for activations the last "= number" of the last line must equal the cell (to the printed
// two decimals): the equation the student reads is the computation that made the number.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "explain_check.h" // defines: explain_check_layout
#include "edits.h"         // defines: edits_parse_edit, edits_trace
#include "explain.h"
#include "numfmt.h" // defines: numfmt_reproduces
#include "forward.h"
#include "model_load.h" // defines: model_load
#include "tex.h"

static Trace *load(const char *ref, const char *text, bool causal, Model **m) {
  char path[1024];
  if (!strcmp(ref, "bank")) // the shipped trained model
    snprintf(path, sizeof path, "%s/../assets/models/bank.safetensors", check_test_dir());
  else
    snprintf(path, sizeof path, "%s/ref/%s/model.safetensors", check_test_dir(), ref);
  Err err = {0};
  *m = model_load(path, &err);
  if (!*m) {
    fprintf(stderr, "%s\n", err.msg);
    exit(1);
  }
  if (causal) (*m)->cfg.causal = true;
  Tokens tok;
  tokens_from_text(&tok, &(*m)->vocab, text, 0, &err);
  Trace *t = trace_new(*m, &tok, &err);
  tokens_free(&tok);
  model_forward(t);
  return t;
}

static void check_trace(const char *name, Trace *t) {
  int explained = 0;
  for (int st = 1; st < t->n_steps; st++) {
    ViewLayout lay;
    Scene s;
    scene_init(&s, 1600, 900, 0);
    ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
    view_render(&s, t, st, &o, 0, 0, 1600, 900, &lay);
    explained += explain_check_layout(name, t, st, &lay);
    scene_free(&s);
  }
  CHECK(explained > 50, "%s: %d cells explained", name, explained);
}

// A compare view: each operand is explained from its own sentence, a difference as left − right.
static void check_compare(const char *name, Trace *a, Trace *b) {
  int explained = 0, differences = 0;
  for (int st = 1; st < a->n_steps; st++) {
    ViewLayout lay;
    Scene s;
    scene_init(&s, 1600, 900, 0);
    ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
    view_render_compare(&s, a, b, st, &o, "a", "b", -1, -1, 0, 0, 1600, 900, &lay);
    explained += explain_check_layout(name, a, st, &lay);
    for (int k = 0; k < lay.n_ops; k++)
      if (lay.ops[k].op.minus_index >= 0) {
        Explanation ex;
        explain_cell(a, &lay, k, 0, 0, &ex);
        CHECK(strstr(ex.lines[0], "\\text{left} - \\text{right}") != NULL, "%s: difference: %s", name,
              ex.lines[0]);
        differences++;
      }
    scene_free(&s);
  }
  CHECK(explained > 50 && differences > 5, "%s: %d cells, %d differences explained", name, explained,
        differences);
}

int main(void) {
  Err err = {0};
  if (!text_init(&err)) return fprintf(stderr, "%s\n", err.msg), 1;
  Model *m1, *m2, *m3, *m4, *m5;
  Trace *a = load("cat-bank", "The cat walks by the bank", false, &m1);
  Trace *b = load("gelu-prenorm", "The cat sleeps by the river bank.", false, &m2);
  Trace *c = load("causal", "the cat eats the mouse", true, &m3);
  Trace *d = load("head", "the cat walks by the river bank", true, &m4);
  Trace *e = load("bank", "The cat walks by the bank", false, &m5);
  check_trace("cat-bank", a);
  check_trace("gelu-prenorm", b);
  check_trace("causal", c);
  check_trace("head", d);
  check_trace("bank", e);
  // the canonical extensions (model.h): learned positions, token type and embedding LayerNorm,
  // bias-free attention, GELU tanh, tied heads, BERT's head transform, the classifier's tail
  const char *ext[][2] = {{"ext/gpt2-like", "The cat walks by the river bank"},
                          {"ext/bert-like", "the mouse eats by the money bank"},
                          {"ext/course-like", "the cat sleeps by the bank"}};
  for (int i = 0; i < 3; i++) {
    Model *mx;
    Trace *tx = load(ext[i][0], ext[i][1], false, &mx);
    check_trace(ext[i][0], tx);
    trace_free(tx);
    model_free(mx);
  }
  Tokens tok; // a second sentence of the same model, with words it does not know
  CHECK(tokens_from_text(&tok, &m1->vocab, "A dog runs to the river", 0, &err), "%s", err.msg);
  Trace *f = trace_new(m1, &tok, &err);
  tokens_free(&tok);
  model_forward(f);
  check_compare("compare", a, f);
  trace_free(f);
  // a known case, spelled out: the scores step explains q·k/√d_k with the real numbers
  int st = trace_step_find(a, STEP_SCORES, 0);
  ViewLayout lay;
  Scene s;
  scene_init(&s, 1600, 900, 0);
  ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
  view_render(&s, a, st, &o, 0, 0, 1600, 900, &lay);
  Explanation ex;
  explain_cell(a, &lay, lay.result, 1, 5, &ex);
  CHECK(strstr(ex.heading, "\\text{cat}") && strstr(ex.heading, "\\text{bank}"),
        "heading names the tokens: %s", ex.heading);
  CHECK(strstr(ex.lines[0], "\\sqrt{d_k}") != NULL, "scores explained with sqrt(d_k): %s", ex.lines[0]);
  { // one number, one way: the heading's value is printed as the equation's result is (issue 31.2)
    const char *a1 = strrchr(ex.heading, '='), *b1 = strrchr(ex.lines[0], '=');
    CHECK(a1 && b1 && !strcmp(a1, b1), "the heading and the equation print the value alike: %s / %s",
          ex.heading, ex.lines[0]);
  }
  scene_free(&s);
  // pos_encoding=none (a lesson's model by hand): a cell of P is 0, not a sinusoid
  {
    Model *mz;
    Trace *z0 = load("bank", "the cat", false, &mz), *z;
    trace_free(z0);
    mz->cfg.no_pos = true;
    Tokens tz;
    Err ez = {0};
    tokens_from_text(&tz, &mz->vocab, "the cat", 0, &ez);
    z = trace_new(mz, &tz, &ez);
    tokens_free(&tz);
    model_forward(z);
    scene_init(&s, 1600, 900, 0);
    view_render(&s, z, trace_step_find(z, STEP_POSENC, -1), &o, 0, 0, 1600, 900, &lay);
    explain_cell(z, &lay, lay.result, 1, 2, &ex);
    CHECK(strstr(ex.lines[0], "no positions") && !strstr(ex.lines[0], "sin"), "no positions: %s",
          ex.lines[0]);
    scene_free(&s);
    trace_free(z);
    model_free(mz);
  }
  // the one-hot names the cell as its heading does, by token and word, with both ids
  scene_init(&s, 1600, 900, 0);
  view_render(&s, c, trace_step_find(c, STEP_ONEHOT, -1), &o, 0, 0, 1600, 900, &lay);
  explain_cell(c, &lay, lay.result, 1, c->tokens.ids[1], &ex);
  CHECK(strstr(ex.heading, "O[\\text{cat}, \\text{cat}]") &&
            strstr(ex.lines[0], "O[\\text{cat}, \\text{cat}] = 1") && strstr(ex.lines[0], "x_{2}"),
        "one-hot: %s / %s", ex.heading, ex.lines[0]);
  scene_free(&s);
  // the masked scores: (S_h + M)[i, j], and which word comes after which, by position
  scene_init(&s, 1600, 900, 0);
  view_render(&s, c, trace_step_find(c, STEP_MASK, 0), &o, 0, 0, 1600, 900, &lay);
  explain_cell(c, &lay, lay.result, 0, 3, &ex); // "the" (x_1) and "the" (x_4)
  CHECK(strstr(ex.heading, "\\left(") && strstr(ex.heading, "+ M\\right)["), "mask heading: %s", ex.heading);
  CHECK(ex.n_lines >= 2 && strstr(ex.lines[1], "x_{4}") && strstr(ex.lines[1], "x_{1}"), "mask: %s",
        ex.n_lines >= 2 ? ex.lines[1] : "");
  scene_free(&s);
  // issue 31: an edited score says it is edited and what the model computes, with digits that give it
  {
    TraceEdits ed = {0};
    TraceEdit x;
    CHECK(edits_parse_edit(a, "S1[cat, walks]=6", &x, &err) && edits_add(&ed, &x, &err), "%s", err.msg);
    Trace *te = edits_trace(a, &ed, &err);
    CHECK(te != NULL, "%s", err.msg);
    if (te) {
      scene_init(&s, 1600, 900, 0);
      view_render(&s, te, trace_step_find(te, STEP_SCORES, 0), &o, 0, 0, 1600, 900, &lay);
      explain_cell(te, &lay, lay.result, 1, 2, &ex); // S_1[cat, walks]
      const TraceTensor *q = &te->t[te->layers[0].Q], *k = &te->t[te->layers[0].K];
      int dk = te->cfg.D / te->cfg.H;
      double dot = 0;
      for (int dd = 0; dd < dk; dd++) dot += (double)trace_at(q, 0, 1, dd) * trace_at(k, 0, 2, dd);
      double got = 0, want = dot / sqrt((double)dk);
      CHECK(ex.edited && strstr(ex.heading, "= 6.00") && strstr(ex.heading, "edited") &&
                strstr(ex.heading, "the model computes"),
            "an edited score says so: %s", ex.heading);
      CHECK(last_number(ex.lines[0], &got) && fabs(got - want) < 0.01 + 0.001 * fabs(want) &&
                fabs(got - 6) > 0.01,
            "the edited score's equation ends with the model's %g: %s", want, ex.lines[0]);
      CHECK(numfmt_reproduces(ex.lines[0]), "reproducible: %s", ex.lines[0]);
      Explanation ex2; // an unedited neighbour says nothing of edits
      explain_cell(te, &lay, lay.result, 1, 3, &ex2);
      CHECK(!ex2.edited && !strstr(ex2.heading, "edited"), "unedited: %s", ex2.heading);
      scene_free(&s);
      trace_free(te);
    }
    edits_free(&ed);
  }
  // a weight too small for 2 decimals keeps 2 significant digits: 1.2 \cdot 10^{-4}, not 0.00
  st = trace_step_find(e, STEP_SOFTMAX, 0);
  scene_init(&s, 1600, 900, 0);
  view_render(&s, e, st, &o, 0, 0, 1600, 900, &lay);
  const Operand *A = &lay.ops[lay.result].op;
  int si = -1, sj = -1;
  for (int i = 0; i < A->rows && si < 0; i++)
    for (int j = 0; j < A->cols && si < 0; j++)
      if (operand_at(A, i, j) > 0 && operand_at(A, i, j) < 0.004f) si = i, sj = j;
  CHECK(si >= 0, "the shipped model's softmax has a weight under 0.004");
  if (si >= 0) {
    explain_cell(e, &lay, lay.result, si, sj, &ex);
    double got = 0;
    CHECK(last_number(ex.heading, &got) && fabs(got - operand_at(A, si, sj)) <= 0.06 * operand_at(A, si, sj),
          "a small weight (%g) is written with its digits: %s", operand_at(A, si, sj), ex.heading);
  }
  scene_free(&s);
  trace_free(a), trace_free(b), trace_free(c), trace_free(d), trace_free(e);
  model_free(m1), model_free(m2), model_free(m3), model_free(m4), model_free(m5);
  return check_exit("test_explain");
}
