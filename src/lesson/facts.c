// facts.c -- claims about a trace's numbers: the parser and the one evaluator (see facts.h).
#include "facts.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inside.h"          // defines: inside_lens, inside_rollout, inside_saliency
#include "lesson_internal.h" // defines: lesson_token_lookup, lesson_nearest
#include "strdist.h"         // defines: strdist_nearest

#define EQ_TOLERANCE 0.0005

static bool fail(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(char *why, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (why && cap) vsnprintf(why, cap, fmt, ap);
  va_end(ap);
  return false;
}

static const char *skip(const char *p) {
  while (*p == ' ' || *p == '\t') p++;
  return p;
}

// Copies [b, e) trimmed into out (cap bytes); false when empty or too long.
static bool copy_trim(char *out, size_t cap, const char *b, const char *e) {
  while (b < e && isspace((unsigned char)*b)) b++;
  while (e > b && isspace((unsigned char)e[-1])) e--;
  if (b == e || (size_t)(e - b) >= cap) return false;
  memcpy(out, b, (size_t)(e - b));
  out[e - b] = 0;
  return true;
}

// A number at *p (strtod's syntax, no inf or nan); advances *p.
static bool number(const char **p, double *v) {
  const char *s = skip(*p);
  if (!(isdigit((unsigned char)*s) ||
        ((*s == '-' || *s == '+' || *s == '.') && (isdigit((unsigned char)s[1]) || s[1] == '.'))))
    return false;
  char *end;
  *v = strtod(s, &end);
  if (end == s || !isfinite(*v)) return false;
  *p = end;
  return true;
}

static const struct {
  const char *s;
  FactOp op;
} OPS[] = {{"<=", FACT_LE},
           {">=", FACT_GE},
           {"!=", FACT_NE},
           {"\xE2\x89\xA4", FACT_LE},
           {"\xE2\x89\xA5", FACT_GE},
           {"\xE2\x89\xA0", FACT_NE},
           {"<", FACT_LT},
           {">", FACT_GT},
           {"=", FACT_EQ}};

// The keywords of the aggregates, by FactWhat.
static const char *WHAT[] = {"", "sum", "max", "min", "mean", "argmax"};

const char *facts_op_name(FactOp op) {
  static const char *names[] = {"<", "<=", ">", ">=", "=", "!=", "in"};
  return names[op];
}

bool facts_parse(Fact *f, const char *text, char *why, size_t cap) {
  memset(f, 0, sizeof *f);
  if (!copy_trim(f->text, sizeof f->text, text, text + strlen(text)))
    return fail(why, cap, *skip(text) ? "claim too long (at most %d bytes)" : "empty claim%.0d",
                FACT_TEXT_MAX - 1);
  const char *p = f->text;
  if (!strncmp(p, "compare:", 8)) f->compare = true, p = skip(p + 8);
  f->what = FACT_VALUE;
  for (int i = FACT_SUM; i <= FACT_ARGMAX; i++) {
    size_t n = strlen(WHAT[i]);
    if (!strncmp(p, WHAT[i], n) && (p[n] == ' ' || p[n] == '\t')) {
      f->what = (FactWhat)i;
      p = skip(p + n);
      break;
    }
  }
  const char *nb = p;
  while (isalnum((unsigned char)*p) || *p == '_') p++;
  if (p == nb)
    return fail(
        why, cap,
        "expected a matrix such as A4 or predict at \"%.20s\" (claims read like A4[bank, river] > 0.9)", nb);
  if ((size_t)(p - nb) >= sizeof f->matrix)
    return fail(why, cap, "matrix name \"%.*s\" too long", (int)(p - nb), nb);
  memcpy(f->matrix, nb, (size_t)(p - nb));
  p = skip(p);
  if (*p == '[') {
    const char *b = ++p;
    while (*p && *p != ',' && *p != ']') p++;
    if (!*p) return fail(why, cap, "unclosed bracket: expected ] after %s[%s", f->matrix, b);
    if (!copy_trim(f->row, sizeof f->row, b, p))
      return fail(why, cap, "empty or too long row in %s[...]: expected a token such as bank", f->matrix);
    if (*p == ',') {
      b = ++p;
      while (*p && *p != ',' && *p != ']') p++;
      if (*p != ']') return fail(why, cap, "expected ] after the column in %s[%s, ...]", f->matrix, f->row);
      if (!copy_trim(f->col, sizeof f->col, b, p))
        return fail(why, cap, "empty or too long column in %s[%s, ...]", f->matrix, f->row);
    }
    p = skip(p + 1);
  }
  bool found = false;
  if (!strncmp(p, "in", 2) && (p[2] == ' ' || p[2] == '[')) {
    f->op = FACT_IN, found = true, p = skip(p + 2);
    if (*p != '[' || (p++, !number(&p, &f->a)) || *(p = skip(p)) != ',' || (p++, !number(&p, &f->b)) ||
        *(p = skip(p)) != ']')
      return fail(why, cap, "bad range after \"in\": expected [LOW, HIGH], two numbers (in [0, 1])");
    if (f->a > f->b) return fail(why, cap, "empty range [%g, %g]: the low end comes first", f->a, f->b);
    p = skip(p + 1);
  } else
    for (size_t i = 0; i < sizeof OPS / sizeof OPS[0] && !found; i++)
      if (!strncmp(p, OPS[i].s, strlen(OPS[i].s)))
        f->op = OPS[i].op, found = true, p = skip(p + strlen(OPS[i].s));
  if (!found)
    return fail(why, cap,
                "expected an operator (< <= > >= = != or in [LOW, HIGH]) after %s%s%s%s%s%s, found \"%.20s\"",
                f->matrix, f->row[0] ? "[" : "", f->row, f->col[0] ? ", " : "", f->col, f->row[0] ? "]" : "",
                p);
  if (f->op != FACT_IN) {
    if (number(&p, &f->a)) {
      if (f->what == FACT_ARGMAX)
        return fail(why, cap, "argmax names a word or token (argmax A4[bank] = river), not a number");
      f->b = EQ_TOLERANCE;
      p = skip(p);
      if (!strncmp(p, "\xC2\xB1", 2) || !strncmp(p, "+-", 2)) {
        p += 2;
        if (f->op != FACT_EQ && f->op != FACT_NE)
          return fail(why, cap, "a tolerance (±) goes with = and != only");
        if (!number(&p, &f->b) || f->b < 0)
          return fail(why, cap, "expected a tolerance after ±, a number >= 0");
      }
    } else {
      if (f->op != FACT_EQ && f->op != FACT_NE)
        return fail(why, cap, "expected a number after %s, found \"%.20s\"", facts_op_name(f->op), p);
      if (f->what != FACT_VALUE && f->what != FACT_ARGMAX)
        return fail(why, cap, "expected a number after %s =, found \"%.20s\"", WHAT[f->what], p);
      if (!*p || strchr(">=!", *p) ||
          (*p == '<' && !isalnum((unsigned char)p[1]))) // "=>", "= <= 1"; "<eos>" is a word
        return fail(why, cap, "expected a number or a word after %s, found \"%.20s\"", facts_op_name(f->op),
                    p);
      const char *b = p;
      while (*p && !isspace((unsigned char)*p)) p++;
      if (!copy_trim(f->word, sizeof f->word, b, p))
        return fail(why, cap, "expected a number or a word after %s", facts_op_name(f->op));
      f->what = FACT_ARGMAX;
    }
    p = skip(p);
  }
  if (*p) return fail(why, cap, "unexpected \"%.20s\" at the end of the claim", p);
  if (f->what == FACT_ARGMAX && (!f->row[0] || f->col[0]))
    return fail(why, cap, "the largest entry is taken in one row: write argmax %s[ROW] = WORD", f->matrix);
  if (f->what == FACT_VALUE && f->op != FACT_IN && (!f->row[0] || !f->col[0]))
    return fail(
        why, cap,
        "%s compares one cell: write %s[ROW, COL] %s ..., or sum/max/min/mean %s[ROW], or in [LOW, HIGH]",
        f->matrix, f->matrix, facts_op_name(f->op), f->matrix);
  if (f->what != FACT_VALUE && f->what != FACT_ARGMAX && f->col[0])
    return fail(why, cap, "%s is taken over a row: write %s[ROW] without a column", WHAT[f->what], f->matrix);
  return true;
}

// ---- evaluation ----

static bool efail(FactResult *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool efail(FactResult *r, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->statement, sizeof r->statement, fmt, ap);
  va_end(ap);
  return false;
}

// The symbols a claim may use beside the stage names: the dump name's suffix in a layer.
static const char *SYMBOLS[] = {"A", "S", "Q", "K", "V", "AV", "p", "pred"};
#define N_SYMBOLS 8

// The tensor a matrix name means (in layer `layer`), or -1.
static int find_matrix(const Trace *t, const char *name, int layer) {
  for (int i = 0; i < N_SYMBOLS; i++)
    if (!strcmp(name, SYMBOLS[i])) {
      if (i >= 6) return t->pred;
      char full[32];
      snprintf(full, sizeof full, "l%d.%s", layer, name);
      return trace_index(t, full);
    }
  StepKind k;
  if (!stage_from_name(name, &k)) return -2; // not a name at all
  int s = trace_step_find(t, k, layer);
  return s < 0 ? -1 : t->steps[s].result;
}

// Resolves a row or column spec along an axis; -1 with r->statement on failure.
static int resolve_index(const Trace *t, const TraceTensor *x, TraceAxis axis, int n, const char *spec,
                         const char *what, FactResult *r) {
  const Tokens *tk = axis == AXIS_TOKEN ? &t->tokens : axis == AXIS_TGT_TOKEN ? &t->dec_tokens : NULL;
  if (tk) {
    int i = lesson_token_lookup(spec, (const char *const *)tk->words, tk->n);
    if (i >= 0 && i < n) return i;
    const char *near = lesson_nearest(spec, (const char *const *)tk->words, tk->n);
    char list[256] = "";
    size_t m = 0;
    for (int k = 0; k < tk->n && m + 70 < sizeof list; k++)
      m += (size_t)snprintf(list + m, sizeof list - m, "%s%s", k ? " " : "", tk->words[k]);
    efail(r, "%s token \"%s\" is not in the sentence%s%s%s (its tokens: %s)", what, spec,
          near ? " (did you mean " : "", near ? near : "", near ? "?)" : "", list);
    return -1;
  }
  if (axis == AXIS_VOCAB || axis == AXIS_TGT_VOCAB) {
    const Vocab *v = axis == AXIS_VOCAB ? &t->model->vocab : &t->model->tgt_vocab;
    char low[FACT_WORD_MAX];
    size_t k = 0;
    for (; spec[k] && k + 1 < sizeof low; k++) low[k] = (char)tolower((unsigned char)spec[k]);
    low[k] = 0;
    int id = vocab_find(v, spec);
    if (id < 0) id = vocab_find(v, low);
    if (id >= 0 && id < n) return id;
    const char *near = strdist_nearest(spec, strlen(spec), (const char *const *)v->words, v->n,
                                       strlen(spec) > 5 ? 3 : 2, true);
    efail(r, "%s \"%s\" is not a word of the model's vocabulary%s%s%s", what, spec,
          near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
    return -1;
  }
  // a dimension (a hidden unit, a class …): d1 … dn, counted from 1, as an edit= writes it
  bool d = (*spec == 'd' || *spec == 'D') && spec[1], digits = *spec != 0;
  for (const char *p = spec + d; *p; p++) digits = digits && isdigit((unsigned char)*p);
  int i = digits && strlen(spec) < 7 ? atoi(spec + d) : 0;
  if (d && i >= 1 && i <= n) return i - 1;
  if (!d && digits && axis == AXIS_CLASS && i >= 1 && i <= n) return i - 1; // a class by its number
  if (!d && digits)
    efail(r, "%s \"%s\" of %s: a %s is written d1 … d%d now (d%s here), as in edit=", what, spec, x->name,
          trace_axis_name(axis), n, spec);
  else
    efail(r, "%s \"%s\" of %s: expected a %s d1 … d%d", what, spec, x->name, trace_axis_name(axis), n);
  return -1;
}

// A token of axis named as a claim names it: after its label, "#2" from the second time the
// sentence holds the word on ("argmax A1[bank] = the#2 (measured: the#2, 0.728)", not "the").
static void token_occurrence(const Trace *t, TraceAxis axis, int k, char *buf, size_t cap) {
  const Tokens *tk = axis == AXIS_TOKEN ? &t->tokens : axis == AXIS_TGT_TOKEN ? &t->dec_tokens : NULL;
  if (!tk || !tk->words || k < 0 || k >= tk->n) return;
  int seen = 1;
  for (int i = 0; i < k; i++) seen += !strcmp(tk->words[i], tk->words[k]);
  size_t n = strlen(buf);
  if (seen > 1 && n < cap) snprintf(buf + n, cap - n, "#%d", seen);
}

static void fmt_num(char *buf, size_t cap, double v) {
  if (isinf(v))
    snprintf(buf, cap, "%s", v < 0 ? "-inf" : "inf");
  else if (fabs(v) >= 1000 || (v != 0 && fabs(v) < 0.001))
    snprintf(buf, cap, "%.3g", v);
  else
    snprintf(buf, cap, "%.3f", v);
}

static bool compare(FactOp op, double v, double a, double b) {
  switch (op) {
  case FACT_LT: return v < a;
  case FACT_LE: return v <= a;
  case FACT_GT: return v > a;
  case FACT_GE: return v >= a;
  case FACT_EQ: return fabs(v - a) <= b;
  case FACT_NE: return !(fabs(v - a) <= b);
  default: return v >= a && v <= b;
  }
}

static bool facts_eval_own(const Fact *f, const Trace *t, int layer, FactResult *r, float **own);

// The views inside the pass as matrices a claim can read (inside.h): lensN [L, V] the prediction
// after layer N (lens alone: after the step's layer, the last outside the layers), rolloutN [L, L]
// (rollout alone: the step's layer) and saliency [L, L], row i the shares of the input tokens in
// position i's top token (saliency[bank, by]: how much "by" drove the word after "bank"). Fills
// *x with *own (malloc'd, the caller frees) and returns 1; 0 for another name; -1 with r set.
static int inside_matrix(const Trace *t, const char *name, int layer, TraceTensor *x, float **own,
                         FactResult *r) {
  static const char *const NAMES[] = {"lens", "rollout", "saliency"};
  int k = -1;
  size_t n = 0;
  for (int i = 0; i < 3 && k < 0; i++)
    if (!strncmp(name, NAMES[i], (n = strlen(NAMES[i])))) k = i;
  if (k < 0) return 0;
  const char *digits = name + n;
  for (const char *p = digits; *p; p++)
    if (!isdigit((unsigned char)*p)) return 0;
  int N = t->cfg.n_layers, L = t->L, l = layer >= 0 && layer < N ? layer : N - 1;
  if (*digits) {
    l = strlen(digits) < 5 ? atoi(digits) - 1 : -1;
    if (l < 0 || l >= N)
      return efail(r, "%s: the model has %d layer%s (write %s1 ... %s%d)", name, N, N == 1 ? "" : "s",
                   NAMES[k], NAMES[k], N),
             -1;
  }
  memset(x, 0, sizeof *x);
  Err err = {0};
  x->heads = 1, x->layer = l, x->row_axis = AXIS_TOKEN, x->stride = 0;
  snprintf(x->name, sizeof x->name, "%.23s", name);
  bool ok;
  if (k == 0) { // the lens after layer l
    if (!inside_has_lens(t) || t->pred < 0)
      return efail(r, "%s: the logit lens needs a prediction head", name), -1;
    int V = t->cfg.V;
    float *all = malloc(sizeof(float) * (size_t)inside_lens_floats(t));
    if (!all) return efail(r, "out of memory"), -1;
    ok = inside_lens(t, all, &err);
    if (ok) memmove(all, all + (size_t)l * L * V, sizeof(float) * (size_t)L * V);
    *own = all, x->rows = L, x->cols = V, x->col_axis = AXIS_VOCAB;
  } else if (k == 1) { // the rollout after layer l
    float *all = malloc(sizeof(float) * (size_t)N * L * L);
    if (!all) return efail(r, "out of memory"), -1;
    ok = inside_rollout(t, all, &err);
    if (ok) memmove(all, all + (size_t)l * L * L, sizeof(float) * (size_t)L * L);
    *own = all, x->rows = L, x->cols = L, x->col_axis = AXIS_TOKEN;
  } else { // row i: the saliency of position i's top token over the input tokens (the columns)
    float *s = malloc(sizeof(float) * (size_t)L * L);
    if (!s) return efail(r, "out of memory"), -1;
    ok = true;
    for (int i = 0; i < L && ok; i++) ok = inside_saliency(t, i, -1, s + (size_t)i * L, NULL, NULL, &err);
    *own = s, x->rows = L, x->cols = L, x->col_axis = AXIS_TOKEN;
  }
  if (!ok) return efail(r, "%s: %s", name, err.msg), -1;
  x->data = *own, x->stride = x->cols;
  return 1;
}

bool facts_eval(const Fact *f, const Trace *t, int layer, FactResult *r) {
  float *own = NULL;
  bool ok = facts_eval_own(f, t, layer, r, &own);
  free(own);
  return ok;
}

static bool facts_eval_own(const Fact *f, const Trace *t, int layer, FactResult *r, float **own) {
  memset(r, 0, sizeof *r);
  TraceTensor inside;
  int head = -1, got = inside_matrix(t, f->matrix, layer, &inside, own, r);
  if (got < 0) return false;
  const TraceTensor *x = &inside;
  if (!got) {
    // the matrix: a whole name, or a name and a head number (A4, softmax2)
    char base[32];
    snprintf(base, sizeof base, "%s", f->matrix);
    int idx = find_matrix(t, base, layer);
    if (idx == -2) {
      size_t n = strlen(base);
      while (n > 0 && isdigit((unsigned char)base[n - 1])) n--;
      if (n > 0 && base[n]) {
        head = strlen(base + n) < 5 ? atoi(base + n) - 1 : 99999;
        base[n] = 0;
        idx = find_matrix(t, base, layer);
      }
    }
    if (idx == -2) {
      const char *near = stage_nearest(base);
      if (!near) near = strdist_nearest(base, strlen(base), SYMBOLS, N_SYMBOLS, 1, false);
      return efail(r,
                   "unknown matrix \"%s\"%s%s%s: write a symbol (A, S, Q, K, V, AV, p), a stage name "
                   "(`stepformer stages` lists them) or lens, rollout, saliency",
                   base, near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
    }
    if (idx < 0) return efail(r, "\"%s\" is not a stage of this model (layer %d)", base, layer + 1);
    x = &t->t[idx];
    if (trace_per_head(x)) {
      if (head < 0 && x->heads > 1)
        return efail(r, "%s has one matrix per head: write %s1 ... %s%d", base, base, base, x->heads);
      if (head < 0) head = 0;
      if (head >= x->heads)
        return efail(r, "head %d of %s is out of range: the model has %d head%s", head + 1, base, x->heads,
                     x->heads == 1 ? "" : "s");
    } else if (head >= 0)
      return efail(r, "%s has no heads: write it without a head number", base);
    else
      head = 0;
  } else
    head = 0;
  int r0 = 0, r1 = x->rows, c0 = 0, c1 = x->cols;
  if (f->row[0]) {
    if ((r0 = resolve_index(t, x, x->row_axis, x->rows, f->row, "row", r)) < 0) return false;
    r1 = r0 + 1;
  }
  if (f->col[0]) {
    if ((c0 = resolve_index(t, x, x->col_axis, x->cols, f->col, "column", r)) < 0) return false;
    c1 = c0 + 1;
  }
  char num[24], a[24], b[24];
  if (f->what == FACT_ARGMAX) {
    int want = resolve_index(t, x, x->col_axis, x->cols, f->word, "word", r);
    if (want < 0) return false;
    int best = c0;
    for (int j = c0; j < c1; j++)
      if (trace_at(x, head, r0, j) > trace_at(x, head, r0, best)) best = j;
    r->value = trace_at(x, head, r0, best);
    trace_axis_label(t, x->col_axis, best, r->word, sizeof r->word);
    token_occurrence(t, x->col_axis, best, r->word, sizeof r->word);
    r->holds = (best == want) == (f->op == FACT_EQ);
    fmt_num(num, sizeof num, r->value);
    snprintf(r->statement, sizeof r->statement, "%s (measured: %s, %s)", f->text, r->word, num);
    return true;
  }
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  for (int i = r0; i < r1; i++)
    for (int j = c0; j < c1; j++) {
      double v = trace_at(x, head, i, j);
      sum += v;
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
  int count = (r1 - r0) * (c1 - c0);
  r->lo = lo, r->hi = hi;
  r->value = f->what == FACT_SUM    ? sum
             : f->what == FACT_MAX  ? hi
             : f->what == FACT_MIN  ? lo
             : f->what == FACT_MEAN ? sum / count
                                    : lo;
  if (f->op == FACT_IN && f->what == FACT_VALUE && count > 1) {
    r->holds = lo >= f->a && hi <= f->b;
    fmt_num(a, sizeof a, lo), fmt_num(b, sizeof b, hi);
    snprintf(r->statement, sizeof r->statement, "%s (measured: %s ... %s)", f->text, a, b);
    return true;
  }
  r->holds = compare(f->op, r->value, f->a, f->b);
  fmt_num(num, sizeof num, r->value);
  snprintf(r->statement, sizeof r->statement, "%s (measured: %s)", f->text, num);
  return true;
}
