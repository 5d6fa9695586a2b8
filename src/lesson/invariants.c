// invariants.c -- the course's facts about a stage, measured on a trace (invariants.h).
#include "invariants.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "facts.h"
#include "stages.h"

typedef struct {
  InvFact *out;
  int n, cap;
} Out;

static void add(Out *o, int state, double v, double v2, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void add(Out *o, int state, double v, double v2, const char *fmt, ...) {
  if (o->n >= o->cap) return;
  InvFact *f = &o->out[o->n++];
  f->state = state, f->value = v, f->value2 = v2;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(f->text, sizeof f->text, fmt, ap);
  va_end(ap);
}

static const TraceTensor *tensor(const Trace *t, int i) { return i >= 0 && i < t->n ? &t->t[i] : NULL; }

// Heads [h0, h1) that `head` selects of x.
static void heads(const TraceTensor *x, int head, int *h0, int *h1) {
  int H = x->per_head ? x->heads : 1;
  *h0 = head >= 0 && head < H ? head : 0;
  *h1 = head >= 0 && head < H ? head + 1 : H;
}

// One operand of the shapes line: its symbol as inline TeX, typeset by the panel (page.c), as the
// picture writes it -- W_c, γ_M and z̄ have no plain-text form -- or its name when it has no symbol.
static int shape_part(char *buf, size_t cap, const char *sep, const TraceTensor *x) {
  if (x->symbol && x->symbol[0] && !strchr(x->symbol, '$'))
    return snprintf(buf, cap, "%s$%s$ %d×%d", sep, x->symbol, x->rows, x->cols);
  return snprintf(buf, cap, "%s%s %d×%d", sep, x->name, x->rows, x->cols);
}

// The shapes of the step's operands and of its result: "shapes: $Q_h$ 6×16, $K_h$ 6×16 → $S_h$ 6×6"
// (an operand that does not fit the line is left out whole, never a formula cut in two).
static void shapes(Out *o, const Trace *t, const TraceTensor *x) {
  char line[sizeof o->out->text - 16], part[sizeof line];
  size_t n = 0;
  int m;
  line[0] = 0;
  for (int k = 0; k < x->n_inputs; k++) {
    const TraceTensor *in = tensor(t, x->inputs[k]);
    if (in && (m = shape_part(part, sizeof part, k ? ", " : "", in)) > 0 && n + (size_t)m + 48 < sizeof line)
      memcpy(line + n, part, (size_t)m + 1), n += (size_t)m;
  }
  if ((m = shape_part(part, sizeof part, n ? " → " : "", x)) > 0 && n + (size_t)m < sizeof line)
    memcpy(line + n, part, (size_t)m + 1);
  add(o, -1, x->rows, x->cols, "shapes: %s", line);
}

// Softmax rows sum to 1: per row, facts.h's `sum A{h}[{i}] = 1 ± 0.001` (STEP_SOFTMAX of an
// encoder layer, the evaluator's names), else the sums measured here.
static void row_sums(Out *o, const Trace *t, const TraceTensor *A, StepKind kind, int layer, int head) {
  int h0, h1;
  heads(A, head, &h0, &h1);
  double lo = INFINITY, hi = -INFINITY;
  bool ok = true;
  for (int h = h0; h < h1; h++)
    for (int i = 0; i < A->rows; i++) {
      double sum = 0;
      Fact f;
      FactResult r;
      char text[64], why[160];
      snprintf(text, sizeof text, "sum A%d[%d] = 1 ± 0.001", h + 1, i + 1);
      if (kind == STEP_SOFTMAX && facts_parse(&f, text, why, sizeof why) && facts_eval(&f, t, layer, &r)) {
        sum = r.value;
        ok = ok && r.holds;
      } else {
        for (int j = 0; j < A->cols; j++) sum += trace_at(A, h, i, j);
        ok = ok && fabs(sum - 1) <= 0.001;
      }
      lo = fmin(lo, sum), hi = fmax(hi, sum);
    }
  add(o, ok, lo, hi, "each row sums to 1: sums %.5f … %.5f", lo, hi);
}

// Cells above the diagonal (a causal mask): weights 0, or scores −∞.
static void masked(Out *o, const TraceTensor *x, int head, bool scores) {
  int h0, h1, n = 0;
  heads(x, head, &h0, &h1);
  double worst = 0;
  for (int h = h0; h < h1; h++)
    for (int i = 0; i < x->rows; i++)
      for (int j = i + 1; j < x->cols; j++) {
        double v = trace_at(x, h, i, j);
        n++;
        if (scores ? !(isinf(v) && v < 0) : v != 0) worst = fmax(worst, scores ? 1 : fabs(v));
      }
  if (scores)
    add(o, worst == 0, n, 0, "masked scores (key after query) are −∞: %d of %d", worst == 0 ? n : 0, n);
  else
    add(o, worst == 0, worst, n, "masked weights are 0: largest %.3g over %d cells", worst, n);
}

// A_h = softmax(S_h): the largest difference to the softmax of the scores' rows.
static void softmax_of(Out *o, const TraceTensor *A, const TraceTensor *S, int head) {
  int h0, h1;
  heads(A, head, &h0, &h1);
  double worst = 0;
  for (int h = h0; h < h1; h++)
    for (int i = 0; i < A->rows; i++) {
      double mx = -INFINITY, z = 0;
      for (int j = 0; j < S->cols; j++) mx = fmax(mx, trace_at(S, h, i, j));
      for (int j = 0; j < S->cols; j++) z += isinf(trace_at(S, h, i, j)) ? 0 : exp(trace_at(S, h, i, j) - mx);
      for (int j = 0; j < A->cols; j++) {
        double s = trace_at(S, h, i, j), p = isinf(s) ? 0 : exp(s - mx) / z;
        worst = fmax(worst, fabs(p - trace_at(A, h, i, j)));
      }
    }
  add(o, worst <= 1e-4, worst, 0, "A = softmax(S), row by row: largest difference %.2g", worst);
}

// S_h = Q_h K_hᵀ / √d_k: the scale, why the shapes fit, and the largest difference.
static void scores(Out *o, const Trace *t, const TraceTensor *S, const TraceTensor *Q, const TraceTensor *K,
                   int head) {
  int dk = Q->cols, h0, h1, wi = 0, wj = 0;
  heads(S, head, &h0, &h1);
  double scale = 1 / sqrt((double)dk), worst = 0;
  // grouped-query attention: query head h reads the keys of its group, K's head h·H_kv/H
  int H = S->per_head ? S->heads : 1, Hk = K->per_head ? K->heads : 1;
  for (int h = h0; h < h1; h++)
    for (int i = 0, kh = Hk < H ? h * Hk / H : h; i < S->rows; i++)
      for (int j = 0; j < S->cols; j++) {
        double d = 0;
        for (int k = 0; k < dk; k++) d += (double)trace_at(Q, h, i, k) * trace_at(K, kh, j, k);
        double s = trace_at(S, h, i, j);
        if (!isinf(s) && fabs(d * scale - s) > worst) worst = fabs(d * scale - s), wi = i, wj = j;
      }
  add(o, K->cols == dk, Q->rows, K->rows, "Q·Kᵀ: %d×%d times %d×%d = %d×%d (inner sizes dₖ = %d agree)",
      Q->rows, dk, dk, K->rows, Q->rows, K->rows, dk);
  add(o, -1, scale, dk, "scale 1/√dₖ = 1/√%d = %.4f", dk, scale);
  char ri[40] = "", cj[40] = "", at[96] = "";
  if (worst > 1e-3) // where: the edited cell
    snprintf(at, sizeof at, " at [%s, %s]", trace_axis_label(t, S->row_axis, wi, ri, sizeof ri),
             trace_axis_label(t, S->col_axis, wj, cj, sizeof cj));
  add(o, worst <= 1e-3, worst, 0, "S = Q·Kᵀ/√dₖ: largest difference %.2g%s", worst, at);
}

// Mean and variance of row i of x (population variance, as LayerNorm).
static void row_stats(const TraceTensor *x, int i, double *mean, double *var) {
  double m = 0, v = 0;
  for (int j = 0; j < x->cols; j++) m += trace_at(x, 0, i, j);
  m /= x->cols;
  for (int j = 0; j < x->cols; j++) v += (trace_at(x, 0, i, j) - m) * (trace_at(x, 0, i, j) - m);
  *mean = m, *var = v / x->cols;
}

static void row_norms(const TraceTensor *x, double *lo, double *hi) {
  *lo = INFINITY, *hi = 0;
  for (int i = 0; i < x->rows; i++) {
    double s = 0;
    for (int j = 0; j < x->cols; j++) s += (double)trace_at(x, 0, i, j) * trace_at(x, 0, i, j);
    *lo = fmin(*lo, sqrt(s)), *hi = fmax(*hi, sqrt(s));
  }
}

// LayerNorm y = γ ⊙ (x − μ)/√(σ² + ε) + β: x̂'s rows (mean 0, variance 1), y's rows, the residual.
static void layernorm(Out *o, const Trace *t, const TraceTensor *y, const TraceTensor *x) {
  double worst_v = 0, ylo = INFINITY, yhi = -INFINITY, eps = t->cfg.ln_eps;
  for (int i = 0; i < x->rows; i++) {
    double m, v;
    row_stats(x, i, &m, &v);
    // x̂ = (x − m)/√(v + ε) has mean 0 and variance v/(v + ε) by construction
    double hv = v / (v + eps), ym, yv;
    worst_v = fmax(worst_v, fabs(hv - 1));
    row_stats(y, i, &ym, &yv);
    ylo = fmin(ylo, yv), yhi = fmax(yhi, yv);
  }
  add(o, worst_v <= 1e-2, worst_v, 0, "before γ, β: every row mean 0, variance 1 (off by at most %.1g)",
      worst_v);
  add(o, -1, ylo, yhi, "after γ, β: row variances %.3f … %.3f", ylo, yhi);
  if (x->n_inputs == 2) { // x = in + sublayer(in): the residual's row norms before and after
    const TraceTensor *in = tensor(t, x->inputs[0]);
    if (in && in->rows == x->rows && in->cols == x->cols) {
      double a0, a1, b0, b1;
      row_norms(in, &a0, &a1);
      row_norms(x, &b0, &b1);
      add(o, -1, a1, b1, "residual ‖x‖ per row: %.2f … %.2f before, %.2f … %.2f after adding", a0, a1, b0,
          b1);
    }
  }
}

int invariants_measure(const Trace *t, int step, int head, InvFact *out, int cap) {
  Out o = {out, 0, cap};
  if (!t || step < 0 || step >= t->n_steps) return 0;
  const TraceStep *st = &t->steps[step];
  const TraceTensor *x = tensor(t, st->result);
  if (!x) return 0;
  StepKind k = st->kind;
  int layer = st->layer < 0 ? 0 : st->layer;
  if (k == STEP_SOFTMAX || k == STEP_DEC_SOFTMAX || k == STEP_CROSS_SOFTMAX) {
    row_sums(&o, t, x, k, layer, head);
    const TraceTensor *S = x->n_inputs > 0 ? tensor(t, x->inputs[0]) : NULL;
    if (S && S->rows == x->rows && S->cols == x->cols) softmax_of(&o, x, S, head);
    if (k != STEP_CROSS_SOFTMAX && (t->cfg.causal || k == STEP_DEC_SOFTMAX)) masked(&o, x, head, false);
  } else if (k == STEP_SCORES || k == STEP_DEC_SCORES || k == STEP_CROSS_SCORES || k == STEP_MASK ||
             k == STEP_DEC_MASK) {
    const TraceTensor *S = x; // the scores before the mask when there is one (S ← S_raw ← Q, K)
    if (S->n_inputs == 1) S = tensor(t, S->inputs[0]);
    const TraceTensor *Q = S && S->n_inputs >= 2 ? tensor(t, S->inputs[0]) : NULL,
                      *K = S && S->n_inputs >= 2 ? tensor(t, S->inputs[1]) : NULL;
    if (Q && K) scores(&o, t, S, Q, K, head);
    if (k == STEP_MASK || k == STEP_DEC_MASK) masked(&o, x, head, true);
  } else if (x->n_inputs == 3 && strstr(x->name, "norm")) {
    const TraceTensor *in = tensor(t, x->inputs[0]);
    if (in && in->rows == x->rows && in->cols == x->cols) layernorm(&o, t, x, in);
  }
  shapes(&o, t, x);
  return o.n;
}
