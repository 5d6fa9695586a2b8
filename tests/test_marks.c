// test_marks.c -- the invariants panel's numbers against the trace, and the spotlight and pen
// strokes in the pixels of a page (issue 13.3, 13.4; invariants.h, marks.h).
//
// The panel's softmax row sums, A = softmax(S), S = QKᵀ/√d_k, the scale, the masked weights, the
// LayerNorm rows' variances and the residual's norms are recomputed here from the trace's tensors
// and compared; a what-if edit of a score and a uniform head must turn their facts to ✗ (state 0).
// A spotlight on a row leaves that row's pixels as they were and dims the others towards the
// background; a stroke kept in cell coordinates is drawn on the same cells at two page sizes.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "edits.h"      // defines: TraceEdits, edits_trace
#include "forward.h"    // defines: model_forward
#include "invariants.h" // defines: invariants_measure
#include "marks.h"      // defines: Marks, Spotlight
#include "model_load.h" // defines: model_load
#include "page.h"       // defines: PageSpec, page_render
#include "tokenizer.h"  // defines: tokens_from_text
#include "trace.h"      // defines: Trace, trace_at

static Trace *load(const char *ref, const char *text, Model **m) {
  char path[1024];
  snprintf(path, sizeof path, "%s/ref/%s/model.safetensors", check_test_dir(), ref);
  Err err = {0};
  *m = model_load(path, &err);
  CHECK(*m != NULL, "%s", err.msg);
  if (!*m) exit(1);
  Tokens tok;
  CHECK(tokens_from_text(&tok, &(*m)->vocab, text, 0, &err), "%s", err.msg);
  Trace *t = trace_new(*m, &tok, &err);
  tokens_free(&tok);
  CHECK(t != NULL, "trace_new: %s", err.msg);
  if (!t) exit(1);
  model_forward(t);
  return t;
}

// The fact whose text starts with `prefix`, or NULL.
static const InvFact *fact(const InvFact *f, int n, const char *prefix) {
  for (int k = 0; k < n; k++)
    if (!strncmp(f[k].text, prefix, strlen(prefix))) return &f[k];
  return NULL;
}

static void test_softmax(const Trace *t, int head) {
  int step = trace_step_find(t, STEP_SOFTMAX, 0);
  InvFact f[INV_MAX];
  int n = invariants_measure(t, step, head, f, INV_MAX);
  const InvFact *sums = fact(f, n, "each row sums to 1"), *soft = fact(f, n, "A = softmax(S)");
  CHECK(sums && soft, "softmax: the row sums and A = softmax(S) are listed (%d facts)", n);
  if (!sums || !soft) return;
  const TraceTensor *A = &t->t[t->steps[step].result];
  double lo = INFINITY, hi = -INFINITY;
  for (int i = 0; i < A->rows; i++) {
    double s = 0;
    for (int j = 0; j < A->cols; j++) s += trace_at(A, head, i, j);
    lo = fmin(lo, s), hi = fmax(hi, s);
  }
  CHECK_NEAR(sums->value, lo, 1e-6, "the panel's smallest row sum of head %d", head + 1);
  CHECK_NEAR(sums->value2, hi, 1e-6, "the panel's largest row sum of head %d", head + 1);
  CHECK(sums->state == 1 && soft->state == 1 && soft->value < 1e-5, "both hold on the model's own pass (%g)",
        soft->value);
}

static void test_scores(const Trace *t, int head, int dk) {
  int step = trace_step_find(t, STEP_SCORES, 0);
  InvFact f[INV_MAX];
  int n = invariants_measure(t, step, head, f, INV_MAX);
  const InvFact *scale = fact(f, n, "scale 1/√dₖ"), *s = fact(f, n, "S = Q·Kᵀ/√dₖ"),
                *qk = fact(f, n, "Q·Kᵀ:");
  CHECK(scale && s && qk, "scores: the scale, S = QKᵀ/√d_k and the shapes are listed");
  if (!scale || !s || !qk) return;
  CHECK_NEAR(scale->value, 1 / sqrt((double)dk), 1e-9, "the scale is 1/√%d", dk);
  char want[64];
  snprintf(want, sizeof want, "%d×%d times %d×%d", t->L, dk, dk, t->L);
  CHECK(strstr(qk->text, want) != NULL, "the shapes say why they fit: \"%s\" in \"%s\"", want, qk->text);
  CHECK(s->state == 1 && s->value < 1e-4, "S = QKᵀ/√d_k holds on the model's own pass (%g)", s->value);
}

// An edited score breaks S = QKᵀ/√d_k by the edit's size; a uniform head breaks A = softmax(S)
// but its rows still sum to 1.
static void test_edits(const Trace *base) {
  Err err = {0};
  TraceEdits e = {0};
  TraceEdit x;
  bool ok = edits_parse_edit(base, "S2[bank, cat]=6", &x, &err) && edits_add(&e, &x, &err) &&
            edits_set_head(&e, base, 0, 0, HEAD_UNIFORM, &err);
  CHECK(ok, "the edits: %s", err.msg);
  Trace *t = ok ? edits_trace(base, &e, &err) : NULL;
  CHECK(t != NULL, "edits_trace: %s", err.msg);
  if (!t) return edits_free(&e);
  InvFact f[INV_MAX];
  int n = invariants_measure(t, trace_step_find(t, STEP_SCORES, 0), 1, f, INV_MAX);
  const InvFact *s = fact(f, n, "S = Q·Kᵀ/√dₖ");
  const TraceTensor *S0 = trace_find(base, "l0.S");
  double want = fabs(6 - trace_at(S0, 1, t->L - 1, 1));
  CHECK(s && s->state == 0, "an edited score breaks S = QKᵀ/√d_k (✗)");
  if (s) CHECK_NEAR(s->value, want, 1e-3, "by the edit's size");
  n = invariants_measure(t, trace_step_find(t, STEP_SOFTMAX, 0), 0, f, INV_MAX);
  const InvFact *soft = fact(f, n, "A = softmax(S)"), *sums = fact(f, n, "each row sums to 1");
  CHECK(soft && soft->state == 0, "a uniform head breaks A = softmax(S) (✗)");
  CHECK(sums && sums->state == 1, "its rows still sum to 1 (✓)");
  trace_free(t);
  edits_free(&e);
}

static void row_norm_range(const TraceTensor *x, double *lo, double *hi) {
  *lo = INFINITY, *hi = 0;
  for (int i = 0; i < x->rows; i++) {
    double s = 0;
    for (int j = 0; j < x->cols; j++) s += (double)trace_at(x, 0, i, j) * trace_at(x, 0, i, j);
    *lo = fmin(*lo, sqrt(s)), *hi = fmax(*hi, sqrt(s));
  }
}

static void test_layernorm(const Trace *t) {
  int step = trace_step_find(t, STEP_ADDNORM1, 0);
  InvFact f[INV_MAX];
  int n = invariants_measure(t, step, 0, f, INV_MAX);
  const InvFact *before = fact(f, n, "before γ, β"), *after = fact(f, n, "after γ, β"),
                *res = fact(f, n, "residual");
  CHECK(before && after && res, "addnorm1: before and after γ, β and the residual are listed");
  if (!before || !after || !res) return;
  CHECK(before->state == 1, "the normalized rows have mean 0 and variance 1");
  const TraceTensor *y = trace_find(t, "l0.norm1"), *x = trace_find(t, "l0.res1");
  double lo = INFINITY, hi = 0;
  for (int i = 0; i < y->rows; i++) {
    double m = 0, v = 0;
    for (int j = 0; j < y->cols; j++) m += trace_at(y, 0, i, j);
    m /= y->cols;
    for (int j = 0; j < y->cols; j++) v += (trace_at(y, 0, i, j) - m) * (trace_at(y, 0, i, j) - m);
    lo = fmin(lo, v / y->cols), hi = fmax(hi, v / y->cols);
  }
  CHECK_NEAR(after->value, lo, 1e-6, "the smallest row variance after γ, β");
  CHECK_NEAR(after->value2, hi, 1e-6, "the largest row variance after γ, β");
  double a0, a1, b0, b1;
  row_norm_range(trace_find(t, "l0.in"), &a0, &a1);
  row_norm_range(x, &b0, &b1);
  CHECK_NEAR(res->value, a1, 1e-6, "the largest row norm before the sub-layer");
  CHECK_NEAR(res->value2, b1, 1e-6, "the largest row norm after adding it");
}

static void test_causal(void) {
  Model *m;
  Trace *t = load("causal", "the cat eats the mouse", &m);
  InvFact f[INV_MAX];
  int n = invariants_measure(t, trace_step_find(t, STEP_SOFTMAX, 0), -1, f, INV_MAX);
  const InvFact *w = fact(f, n, "masked weights are 0");
  CHECK(w && w->state == 1 && w->value == 0, "causal: the masked weights are exactly 0, all heads");
  if (w) CHECK_NEAR(w->value2, 2 * 10, 0, "over H·L(L−1)/2 = 20 cells");
  n = invariants_measure(t, trace_step_find(t, STEP_MASK, 0), 0, f, INV_MAX);
  const InvFact *s = fact(f, n, "masked scores");
  CHECK(s && s->state == 1, "causal: the masked scores are −∞");
  trace_free(t);
  model_free(m);
}

// ---------------------------------------------------------------- pixels

static Canvas draw(const Trace *t, int step, const Spotlight *sp, const Marks *mk, float w, float h,
                   ViewLayout *lay) {
  ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
  o.head = 0;
  PageSpec p = {.trace = t,
                .step = step,
                .view = &o,
                .sentence = "",
                .spotlight = sp,
                .marks = mk,
                .width = w,
                .height = h};
  Scene s;
  scene_init(&s, w, h, 0);
  page_render(&s, &p, lay);
  Canvas c = canvas_new((int)w, (int)h);
  scene_raster(&s, c, 0);
  scene_free(&s);
  return c;
}

static uint32_t px(Canvas c, float x, float y) { return c.px[(size_t)y * (size_t)c.stride + (size_t)x]; }
static int dist(uint32_t a, uint32_t b) {
  return abs((int)SF_R(a) - (int)SF_R(b)) + abs((int)SF_G(a) - (int)SF_G(b)) +
         abs((int)SF_B(a) - (int)SF_B(b));
}

static void test_spotlight(const Trace *t) {
  int step = trace_step_find(t, STEP_SOFTMAX, 0);
  ViewLayout l0, l1;
  Canvas a = draw(t, step, NULL, NULL, 1280, 720, &l0);
  Spotlight sp = {SPOT_ROW, 1, -1};
  Canvas b = draw(t, step, &sp, NULL, 1280, 720, &l1);
  const ViewOperand *v = &l1.ops[l1.result];
  uint32_t bg = theme_get(THEME_LIGHT)->bg;
  int kept = 0, dimmed = 0;
  for (int i = 0; i < v->op.rows; i++)
    for (int j = 0; j < v->op.cols; j++) {
      float x = v->x + v->w * ((float)j + 0.3f) / (float)v->op.cols,
            y = v->y + v->h * ((float)i + 0.3f) / (float)v->op.rows;
      uint32_t pa = px(a, x, y), pb = px(b, x, y);
      if (i == 1)
        kept += pa == pb;
      else
        dimmed += dist(pb, bg) < dist(pa, bg) / 2 + 8;
    }
  CHECK(kept == v->op.cols, "the spotlit row keeps its pixels (%d of %d cells)", kept, v->op.cols);
  CHECK(dimmed == (v->op.rows - 1) * v->op.cols,
        "every other row is dimmed towards the background (%d of %d)", dimmed, (v->op.rows - 1) * v->op.cols);
  canvas_free(&a);
  canvas_free(&b);
}

// A stroke along row 1 of the result, from column 0.5 to 3.5: red at the centre of cell (1, 2) at
// both page sizes, and not at cell (3, 2).
static void test_stroke(const Trace *t) {
  int step = trace_step_find(t, STEP_SOFTMAX, 0);
  static Marks mk;
  ViewLayout l;
  for (int size = 0; size < 2; size++) {
    float w = size ? 1920 : 1280, h = size ? 1080 : 720;
    Canvas c = draw(t, step, NULL, NULL, w, h, &l);
    canvas_free(&c);
    if (size == 0) { // the points as the window's mouse gives them: pixels, turned into cells
      const ViewOperand *v = &l.ops[l.result];
      MarkPoint p, q;
      float y = v->y + v->h * 1.5f / (float)v->op.rows;
      CHECK(marks_point_at(&l, v->x + v->w * 0.5f / (float)v->op.cols, y, &p), "a point on the result");
      CHECK(marks_point_at(&l, v->x + v->w * 3.5f / (float)v->op.cols, y, &q), "a second point");
      CHECK(p.op == l.result && fabsf(p.r - 1.5f) < 1e-3f && fabsf(q.c - 3.5f) < 1e-3f,
            "the points are kept in the result's cells (op %d, row %.3f, column %.3f)", p.op, p.r, q.c);
      marks_begin(&mk, PEN_FREE, 0, &p);
      marks_add_point(&mk, &q);
    }
    c = draw(t, step, NULL, &mk, w, h, &l);
    float x, y, x3, y3;
    const ViewOperand *v = &l.ops[l.result];
    x = v->x + v->w * 2.5f / (float)v->op.cols, y = v->y + v->h * 1.5f / (float)v->op.rows;
    x3 = x, y3 = v->y + v->h * 3.5f / (float)v->op.rows;
    CHECK(dist(px(c, x, y), marks_color(0)) < 40, "%gx%g: the stroke's red at cell (1, 2)", w, h);
    CHECK(dist(px(c, x3, y3), marks_color(0)) > 100, "%gx%g: no red at cell (3, 2)", w, h);
    canvas_free(&c);
  }
}

int main(void) {
  Model *m;
  Trace *t = load("cat-bank", "The cat walks by the bank", &m);
  for (int h = 0; h < t->cfg.H; h++) test_softmax(t, h);
  test_scores(t, 1, t->cfg.D / t->cfg.H);
  test_edits(t);
  test_layernorm(t);
  test_causal();
  test_spotlight(t);
  test_stroke(t);
  trace_free(t);
  model_free(m);
  return check_exit("test_marks");
}
