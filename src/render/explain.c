// explain.c -- see explain.h. One function per kind of tensor; each recomputes its cell from the
// cells it came from, in double, and prints the numbers as TeX.
#include "explain.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "edits.h"      // defines: TraceEdits, TraceEdit
#include "forward.h"    // defines: forward_rope_at
#include "numfmt.h"     // defines: numfmt_tex, numfmt_reproduces
#include "similarity.h" // defines: Sim, sim_of_trace, sim_cos

typedef struct {
  const Trace *t;
  const TraceTensor *x;
  int h, r, c; // the cell in the tensor's own coordinates
  Explanation *ex;
} Ctx;

// Appends to a line (bounded).
static void add(char *line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(char *line, const char *fmt, ...) {
  size_t n = strlen(line);
  if (n + 1 >= EXPLAIN_CAP) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line + n, EXPLAIN_CAP - n, fmt, ap);
  va_end(ap);
}

static char *next_line(Explanation *ex) {
  if (ex->n_lines >= EXPLAIN_LINES) return ex->lines[EXPLAIN_LINES - 1];
  ex->lines[ex->n_lines][0] = 0;
  return ex->lines[ex->n_lines++];
}

// A number as TeX with the significant digits of the explanation being written (numfmt.h): 3,
// raised by explain_cell until the printed numbers of every line reproduce its printed result.
static _Thread_local int num_sig = NUMFMT_SIG;
static const char *num(char *buf, double v, bool paren) { return numfmt_tex(buf, 32, v, num_sig, paren); }

// A word as TeX text: \text{...} with TeX's special characters escaped.
static const char *word(char *buf, int cap, const char *w) {
  int n = snprintf(buf, (size_t)cap, "\\text{");
  for (; *w && n < cap - 12; w++) {
    if (*w == '\\') // a byte token's label ("\\xD8"): TeX has no backslash in text, "∖" looks like one
      n += snprintf(buf + n, (size_t)(cap - n), "∖");
    else if (strchr("{}$&#^_%~", *w))
      n += snprintf(buf + n, (size_t)(cap - n), "\\%c", *w);
    else
      buf[n++] = *w;
  }
  snprintf(buf + n, (size_t)(cap - n), "}");
  return buf;
}

static const char *axis_tex(const Trace *t, TraceAxis a, int i, char *buf, int cap) {
  char raw[128];
  trace_axis_label(t, a, i, raw, sizeof raw);
  if (a == AXIS_TOKEN || a == AXIS_VOCAB || a == AXIS_CLASS || a == AXIS_ONE || a == AXIS_TGT_TOKEN ||
      a == AXIS_TGT_VOCAB || a == AXIS_TOKEN2)
    return word(buf, cap, raw);
  snprintf(buf, (size_t)cap, "%d", i + 1); // dimensions count from 1, as the axes do
  return buf;
}

// Row i's token: the source's, or the decoder's input for an encoder-decoder's decoder tensors.
static const char *tok(const Ctx *c, int i, char *buf) {
  return axis_tex(c->t, c->x->row_axis == AXIS_TGT_TOKEN ? AXIS_TGT_TOKEN : AXIS_TOKEN, i, buf, 96);
}
// Column j's token: the keys' (cross-attention's keys are the source's, in memory).
static const char *ctok(const Ctx *c, int j, char *buf) {
  TraceAxis a = c->x->col_axis;
  return axis_tex(c->t, a == AXIS_TGT_TOKEN || a == AXIS_TOKEN ? a : AXIS_TOKEN, j, buf, 96);
}

// The token ids of the tensor's rows: the decoder's input for its tensors, else the source's.
static const int *dec_ids(const Ctx *c) {
  return c->x->row_axis == AXIS_TGT_TOKEN ? c->t->dec_tokens.ids : c->t->tokens.ids;
}

static float at(const TraceTensor *x, int h, int i, int j) { return trace_at(x, h, i, j); }
static const TraceTensor *input(const Ctx *c, int k) {
  return k < c->x->n_inputs ? &c->t->t[c->x->inputs[k]] : NULL;
}

// ---------------------------------------------------------------- kinds

// y = x·W + b for column col of W (the displayed D_in × D_out weight).
static void linear(Ctx *c, const char *xs, const char *ws, const char *bs, int col) {
  const TraceTensor *x = input(c, 0), *W = input(c, 1), *b = input(c, 2);
  if (b && b->kind == T_NORM_W) b = NULL; // QK-norm's gain, not a bias (today's decoders)
  char n1[32], n2[32], n3[32], t1[96];
  double dot = 0;
  for (int d = 0; d < x->cols; d++) dot += (double)at(x, 0, c->r, d) * at(W, 0, d, col);
  double bias = b ? at(b, 0, 0, col) : 0;
  char *l = next_line(c->ex);
  add(l, "= \\sum_{d} %s[%s, d]\\, %s[d, %d]", xs, tok(c, c->r, t1), ws, col + 1);
  if (b) add(l, " + %s[%d]", bs, col + 1);
  l = next_line(c->ex);
  add(l, "= ");
  for (int d = 0; d < x->cols && d < 3; d++)
    add(l, "%s%s \\cdot %s", d ? " + " : "", num(n1, at(x, 0, c->r, d), true),
        num(n2, at(W, 0, d, col), true));
  if (x->cols > 3) add(l, " + \\cdots");
  if (b) add(l, " + %s", num(n3, bias, true));
  l = next_line(c->ex);
  add(l, "= %s + %s = %s", num(n1, dot, false), num(n2, bias, true), num(n3, dot + bias, false));
}

// LayerNorm of row r of input 0 at column col, with γ and β in inputs 1 and 2.
static void layernorm(Ctx *c, const char *xs) {
  const TraceTensor *x = input(c, 0), *g = input(c, 1), *b = input(c, 2);
  int n = x->cols;
  double mean = 0, var = 0;
  for (int d = 0; d < n; d++) mean += at(x, 0, c->r, d);
  mean /= n;
  for (int d = 0; d < n; d++) var += (at(x, 0, c->r, d) - mean) * (at(x, 0, c->r, d) - mean);
  var /= n;
  double xv = at(x, 0, c->r, c->c), gv = g ? at(g, 0, 0, c->c) : 1, bv = b ? at(b, 0, 0, c->c) : 0;
  double y = gv * (xv - mean) / sqrt(var + c->t->cfg.ln_eps) + bv;
  char n1[32], n2[32], n3[32], n4[32], n5[32], t1[96];
  char *l = next_line(c->ex);
  add(l, "= \\gamma_{%d} \\frac{%s[%s, %d] - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}} + \\beta_{%d}", c->c + 1,
      xs, tok(c, c->r, t1), c->c + 1, c->c + 1);
  l = next_line(c->ex);
  add(l, "\\mu = %s,\\ \\sigma^2 = %s \\text{ over the %d values of the row}", num(n1, mean, false),
      num(n2, var, false), n);
  l = next_line(c->ex);
  char n6[32];
  add(l, "= %s \\cdot \\frac{%s - %s}{%s} + %s = %s", num(n1, gv, true), num(n2, xv, false),
      num(n3, mean, true), num(n4, sqrt(var + c->t->cfg.ln_eps), false), num(n5, bv, true),
      num(n6, y, false));
}

static void softmax_row(Ctx *c, const TraceTensor *s, int h, const char *ss, bool vocab) {
  double sum = 0, mx = -INFINITY;
  for (int j = 0; j < s->cols; j++) mx = fmax(mx, at(s, h, c->r, j));
  for (int j = 0; j < s->cols; j++) sum += exp((double)at(s, h, c->r, j) - mx);
  double sv = at(s, h, c->r, c->c), e = exp(sv - mx);
  char n1[32], n2[32], n3[32], n4[32], n5[32], t1[96];
  char *l = next_line(c->ex);
  char t2[96];
  const char *col = vocab ? axis_tex(c->t, c->x->col_axis, c->c, t2, 96) : ctok(c, c->c, t2);
  add(l, "= \\frac{e^{%s[%s, %s]}}{\\sum_{%s} e^{%s[%s, %s]}}", ss, tok(c, c->r, t1), col, vocab ? "v" : "j",
      ss, tok(c, c->r, t1), vocab ? "v" : "j");
  l = next_line(c->ex);
  if (isinf(sv)) {
    add(l, "= 0 \\text{ because } %s = -\\infty \\text{ (masked): } e^{-\\infty} = 0", ss);
    return;
  }
  if (mx > 30) { // keep the numbers printable: divide top and bottom by e^max
    add(l, "= \\frac{e^{%s - %s}}{%s} = %s", num(n1, sv, false), num(n2, mx, false), num(n3, sum, false),
        num(n4, e / sum, false));
  } else {
    add(l, "= \\frac{e^{%s}}{%s} = \\frac{%s}{%s} = %s", num(n1, sv, false), num(n2, sum * exp(mx), false),
        num(n3, exp(sv), false), num(n4, sum * exp(mx), false), num(n5, e / sum, false));
  }
}

static void explain_weight(Ctx *c) {
  char *l = next_line(c->ex), t1[96], t2[96];
  const TraceTensor *x = c->x;
  int dk = model_dk(&c->t->cfg);
  switch (x->kind) {
  case T_EMBED_W:
    add(l, "\\text{dimension %d of the embedding of } %s \\text{ (learned)}", c->c + 1,
        axis_tex(c->t, x->row_axis, c->r, t1, 96)); // the source's or the target's vocabulary
    break;
  case T_PROJ_W:
    add(l, "\\text{weight from dimension %d of the input to dimension %d (head %d, column %d of it)}",
        c->r + 1, c->c + 1, c->c / dk + 1, c->c % dk + 1);
    break;
  case T_OUT_W:
    add(l, "\\text{weight from dimension %d of Concat (head %d) to dimension %d}", c->r + 1, c->r / dk + 1,
        c->c + 1);
    break;
  case T_FFN1_W:
    add(l, "\\text{weight from dimension %d of } x \\text{ to hidden unit %d}", c->r + 1, c->c + 1);
    break;
  case T_FFN2_W: add(l, "\\text{weight from hidden unit %d to dimension %d}", c->r + 1, c->c + 1); break;
  case T_HEAD_W:
    add(l, "\\text{weight from dimension %d to the score of } %s", c->r + 1,
        axis_tex(c->t, x->col_axis, c->c, t2, 96));
    break;
  case T_NORM_W: add(l, "\\text{LayerNorm parameter of dimension %d (learned)}", c->c + 1); break;
  case T_POS_W: add(l, "\\text{dimension %d of the embedding of token type 0 (learned)}", c->c + 1); break;
  case T_CLASS_W:
    if (x->rows == 1)
      add(l, "\\text{the bias of the score of class } %s \\text{ (learned)}",
          axis_tex(c->t, AXIS_CLASS, c->c, t2, 96));
    else
      add(l, "\\text{weight from dimension %d of } \\bar{z} \\text{ to the score of class } %s", c->r + 1,
          axis_tex(c->t, AXIS_CLASS, c->c, t2, 96));
    break;
  default: add(l, "\\text{a bias: added to column %d of every row (learned)}", c->c + 1); break;
  }
}

// A cell of the similarity of two sentences: the dot product of the two vectors over their norms.
static void explain_sim(Ctx *c) {
  const Sim *s = sim_of_trace(c->t);
  int k = s ? (int)(c->x - c->t->t) : -1;
  if (!s || sim_level_of(s, k) < 0) return;
  const SimLevel *lv = &s->levels[k];
  const TraceTensor *za = &s->a->t[lv->src_a], *zb = &s->b->t[lv->src_b];
  double dot, na, nb, v = sim_cos(za, c->r, zb, c->c, &dot, &na, &nb);
  char n1[32], n2[32], n3[32], n4[32], n5[32], n6[32], t1[96], t2[96];
  axis_tex(c->t, AXIS_TOKEN, c->r, t1, sizeof t1);
  axis_tex(c->t, AXIS_TOKEN2, c->c, t2, sizeof t2);
  char *l = next_line(c->ex);
  add(l, "= \\frac{z_{%s} \\cdot z'_{%s}}{\\lVert z_{%s} \\rVert\\, \\lVert z'_{%s} \\rVert}", t1, t2, t1,
      t2);
  l = next_line(c->ex);
  add(l, "= \\frac{%s}{%s \\cdot %s} = \\frac{%s}{%s} = %s", num(n1, dot, false), num(n2, na, false),
      num(n3, nb, false), num(n4, dot, false), num(n5, na * nb, false), num(n6, v, false));
  l = next_line(c->ex);
  add(l, "z, z' \\text{: the two sentences' vectors (%s), } D = %d", lv->label, za->cols);
}

// Today's decoders (issue 34): RMSNorm, RoPE, the gate and up products, SwiGLU, and Q K V with
// QK-norm. True when it wrote the cell's lines.
static bool explain_modern(Ctx *c) {
  const TraceTensor *x = c->x;
  const Trace *t = c->t;
  char n1[32], n2[32], n3[32], n4[32], t1[96];
  switch (x->kind) {
  case T_RMSNORM: { // y = x / rms(x) · g, or the rms column itself
    const TraceTensor *in = input(c, 0), *g = x->cols > 1 ? input(c, 1) : NULL;
    double ss = 0;
    for (int d = 0; d < in->cols; d++) ss += (double)at(in, 0, c->r, d) * at(in, 0, c->r, d);
    double rms = sqrt(ss / in->cols + t->cfg.ln_eps), gain = g ? at(g, 0, 0, c->c) : 1;
    if (x->cols == 1) { // each row's rms: the sum of squares, the mean, the root
      char *l = next_line(c->ex);
      add(l, "\\text{the size of row } %s\\text{, not its mean: no } \\mu \\text{ is subtracted}",
          tok(c, c->r, t1));
      l = next_line(c->ex);
      add(l, "= \\sqrt{\\tfrac{1}{%d} \\cdot %s + \\epsilon} = %s", in->cols, num(n1, ss, false),
          num(n2, at(x, 0, c->r, 0), false));
      return true;
    }
    if (t->cfg.rms_offset) gain += 1;
    char *l = next_line(c->ex);
    add(l, "\\text{no mean is subtracted, no shift added: only the row's size is taken out}");
    l = next_line(c->ex);
    add(l, "\\mathrm{rms}(x_{%s}) = \\sqrt{\\tfrac{1}{%d}\\textstyle\\sum_j x_j^2 + \\epsilon} = %s",
        tok(c, c->r, t1), in->cols, num(n1, rms, false));
    l = next_line(c->ex);
    add(l, "= \\frac{%s}{%s} \\cdot %s = %s", num(n1, at(in, 0, c->r, c->c), false), num(n2, rms, false),
        num(n3, gain, true), num(n4, at(x, 0, c->r, c->c), false));
    return true;
  }
  case T_ROPE: { // the pair of column c turned by i·θ_k
    const TraceTensor *pre = input(c, 0), *phi = input(c, 1);
    if (!phi) return false;
    int dk = x->cols, half = dk / 2, pairs = t->cfg.rope == ROPE_PAIRS;
    int k = pairs ? c->c / 2 : c->c % half;
    int j0 = pairs ? 2 * k : k, j1 = pairs ? 2 * k + 1 : k + half;
    double a = at(phi, 0, c->r, k), x0 = at(pre, c->h, c->r, j0), x1 = at(pre, c->h, c->r, j1);
    char *l = next_line(c->ex);
    add(l, "\\text{so } \\tilde{q}_i \\cdot \\tilde{k}_j \\text{ depends on the distance } i - j \\text{, "
           "not on } i");
    l = next_line(c->ex);
    // columns count from 1 as the axes do; the angle's position from 0, as RoPE's formula does
    add(l,
        "\\text{pair } (d_{%d}, d_{%d}) \\text{ of } %s \\text{ turned by } \\phi = %d \\cdot \\theta_{%d} = "
        "%s",
        j0 + 1, j1 + 1, tok(c, c->r, t1), c->r, k, num(n1, a, false));
    l = next_line(c->ex);
    if (c->c == j0)
      add(l, "= %s \\cos\\phi - %s \\sin\\phi = %s", num(n1, x0, true), num(n2, x1, true),
          num(n3, at(x, c->h, c->r, c->c), false));
    else
      add(l, "= %s \\cos\\phi + %s \\sin\\phi = %s", num(n1, x1, true), num(n2, x0, true),
          num(n3, at(x, c->h, c->r, c->c), false));
    return true;
  }
  case T_GATE: linear(c, "\\bar{x}'", strstr(x->name, "gate") ? "W_g" : "W_1", "", c->c); return true;
  case T_GATED: { // h = act(G) ⊙ U
    const TraceTensor *g = input(c, 0), *u = input(c, 1);
    double gv = at(g, 0, c->r, c->c), uv = at(u, 0, c->r, c->c);
    bool silu = t->cfg.activation == ACT_SILU;
    double a = silu ? gv / (1 + exp(-gv)) : at(x, 0, c->r, c->c) / (uv != 0 ? uv : 1);
    char *l = next_line(c->ex);
    add(l, "\\text{the gate decides how much of the up value passes}");
    l = next_line(c->ex);
    add(l,
        silu ? "= \\mathrm{SiLU}(G) \\cdot U = \\frac{%s}{1 + e^{-(%s)}} \\cdot %s"
             : "= \\mathrm{GELU}(G) \\cdot U = \\mathrm{GELU}(%s) \\cdot %s",
        num(n1, gv, false), silu ? num(n2, gv, false) : num(n2, uv, true), num(n3, uv, true));
    l = next_line(c->ex);
    add(l, "= %s \\cdot %s = %s", num(n1, a, false), num(n2, uv, true), num(n3, at(x, 0, c->r, c->c), false));
    return true;
  }
  case T_PROJ: { // Q or K with QK-norm (Qwen 3): the product, then the head's RMSNorm
    const TraceTensor *g = x->n_inputs > 2 ? input(c, x->n_inputs - 1) : NULL;
    if (!g || g->kind != T_NORM_W) return false;
    bool q = strstr(x->name, ".Q") != NULL;
    int dk = x->cols;
    linear(c, "\\bar{x}", q ? "W^q" : "W^k", q ? "b^q" : "b^k", c->h * dk + c->c);
    char *l = next_line(c->ex);
    add(l, "\\rightarrow \\text{RMSNorm of head %d's %d values, times } %s[%d] = %s", c->h + 1, dk,
        q ? "g_q" : "g_k", c->c, num(n1, at(x, c->h, c->r, c->c), false));
    return true;
  }
  case T_POSENC: { // RoPE's angle of token i and frequency k
    if (strcmp(x->name, "rope_angle")) return false;
    double a = at(x, 0, c->r, c->c), theta = c->r > 0 ? a / c->r : 0;
    char *l = next_line(c->ex);
    add(l, "\\theta_{%d} = \\Theta^{-2 \\cdot %d / %d},\\quad \\Theta = %g%s", c->c, c->c, x->cols * 2,
        (double)t->cfg.rope_theta, t->cfg.rope_factor > 0 ? "\\text{ (Llama 3 scaled)}" : "");
    l = next_line(c->ex);
    if (c->r == 0)
      add(l, "= 0 \\cdot \\theta_{%d} = 0", c->c);
    else
      add(l, "= %d \\cdot \\theta_{%d} = %s", c->r, c->c, num(n1, a, false));
    (void)theta;
    return true;
  }
  default: return false;
  }
}

// RoPE's promise, on the score under the pointer: the same q (row i of Q before RoPE, head h) and
// k (row j of K before RoPE, K/V head g) turned as at positions i + s and j + s give the same
// score, so it depends on the distance i − j only. s = 100: clearly another place in the text.
static void rope_distance(Ctx *c, int g) {
  const Trace *t = c->t;
  const TraceLayer *y = &t->layers[c->x->layer];
  if (y->Q_norope < 0 || y->K_norope < 0) return;
  const TraceTensor *Q = &t->t[y->Q_norope], *K = &t->t[y->K_norope];
  int dk = Q->cols, i = c->r, j = c->c, s = 100;
  float q[256], k[256]; // d_k ≤ 256 in every model we open; larger heads go without the line
  if (dk > 256) return;
  for (int d = 0; d < dk; d++) q[d] = at(Q, c->h, i, d), k[d] = at(K, g, j, d);
  forward_rope_at(q, i + s, &t->cfg), forward_rope_at(k, j + s, &t->cfg);
  double dot = 0;
  for (int d = 0; d < dk; d++) dot += (double)q[d] * k[d];
  char n1[32], t1[96], t2[96];
  char *l = next_line(c->ex);
  add(l,
      "\\text{RoPE: } %s, %s \\text{ moved %d places on: } \\frac{R_{%d}\\,q \\cdot R_{%d}\\,k}{\\sqrt{d_k}} "
      "= %s"
      "\\text{, the same: only the distance } %d \\text{ counts}",
      tok(c, i, t1), ctok(c, j, t2), s, i + s, j + s, num(n1, dot / sqrt((double)dk), false), i - j);
}

static void explain_kind(Ctx *c) {
  const TraceTensor *x = c->x;
  const Trace *t = c->t;
  char n1[32], n2[32], n3[32], t1[96], t2[96];
  int H = t->cfg.H, D = t->cfg.D, dk = model_dk(&t->cfg);
  if (x->is_weight) return explain_weight(c);
  if (x->kind == T_SIM) return explain_sim(c);
  if (explain_modern(c)) return;
  (void)H;
  switch (x->kind) {
  case T_ONEHOT: {
    char *l = next_line(c->ex);
    int id = dec_ids(c)[c->r];
    axis_tex(t, x->col_axis, c->c, t2, sizeof t2);
    add(l,
        "x_{%d} = %s \\text{ has id } %d\\text{; column } %s \\text{ is id } %d \\Rightarrow O[%s, %s] = %d",
        c->r + 1, tok(c, c->r, t1), id, t2, c->c, t1, t2, id == c->c);
    break;
  }
  case T_EMBED: {
    char *l = next_line(c->ex);
    add(l, "= \\sum_{v} O[%s, v]\\, E[v, %d] = E[%s, %d] = %s", tok(c, c->r, t1), c->c + 1,
        axis_tex(t, input(c, 1)->row_axis, dec_ids(c)[c->r], t2, 96), c->c,
        num(n1, at(x, 0, c->r, c->c), false));
    break;
  }
  case T_POSENC: {
    if (t->cfg.no_pos) { // pos_encoding=none (a lesson's model by hand): P = 0, not a sinusoid
      add(next_line(c->ex), "= 0 \\text{: this model has no positions}");
      break;
    }
    if (t->cfg.learned_pos) { // GPT-2, BERT, the course: a table learned in training
      char *l = next_line(c->ex);
      add(l, "= P_{\\mathrm{learned}}[%d, %d] = %s", c->r + 1, c->c + 1,
          num(n1, at(x, 0, c->r, c->c), false));
      l = next_line(c->ex);
      add(l, "\\text{row %d of the learned position table: the row of token } x_{%d}", c->r + 1, c->r + 1);
      break;
    }
    // token x_i (i = 1 … L) stands at position i − 1; column 2k + 1 (1-based) is a sine, 2k + 2 a cosine
    int k2 = c->c - c->c % 2;
    double ang = c->r / pow(10000.0, (double)k2 / D);
    char *l = next_line(c->ex);
    add(l, "= \\%s\\left(\\frac{%d - 1}{10000^{%d/%d}}\\right) = \\%s(%s) = %s", c->c % 2 ? "cos" : "sin",
        c->r + 1, k2, D, c->c % 2 ? "cos" : "sin", num(n2, ang, false), num(n1, at(x, 0, c->r, c->c), false));
    l = next_line(c->ex);
    add(l, "\\text{token } x_{%d}\\text{: } i = %d,\\ \\text{column } %d = 2k + %d,\\ k = %d", c->r + 1,
        c->r + 1, c->c + 1, c->c % 2 ? 2 : 1, k2 / 2);
    break;
  }
  case T_ADDPOS:
  case T_RESIDUAL: {
    const TraceTensor *a = input(c, 0), *b = input(c, 1);
    if (!b) { // "out" of a pre-norm layer is a view of res2
      *c = (Ctx){t, a, c->h, c->r, c->c, c->ex};
      return explain_kind(c);
    }
    char *l = next_line(c->ex);
    const TraceTensor *t0 = input(c, 2);
    if (t0) { // BERT: Z + P + t₀
      char n4[32];
      add(l, "= Z + P + t_0 = %s + %s + %s = %s", num(n1, at(a, 0, c->r, c->c), false),
          num(n2, at(b, 0, c->r, c->c), true), num(n3, at(t0, 0, 0, c->c), true),
          num(n4, at(x, 0, c->r, c->c), false));
      break;
    }
    // Z ← OE + P: the embeddings are written OE here, not Z (the picture's "OE + P = Z")
    const char *as = a->kind == T_EMBED ? (a->row_axis == AXIS_TGT_TOKEN ? "O_t E_t" : "O E") : a->symbol;
    add(l, "= %s + %s = %s + %s = %s", as, b->symbol, num(n1, at(a, 0, c->r, c->c), false),
        num(n2, at(b, 0, c->r, c->c), true), num(n3, at(x, 0, c->r, c->c), false));
    break;
  }
  case T_LAYER_IN: {
    char *l = next_line(c->ex);
    add(l, "\\text{the input of layer %d: } %s", x->layer + 1,
        x->layer == 0 ? "Z = OE + P" : "\\text{the output of the layer before}");
    break;
  }
  case T_MEMORY: // memory = LayerNorm(the encoder's output), with encoder.norm's γ and β
  case T_NORM_IN:
  case T_NORM:
    if (x->n_inputs == 1) { // "out" is a view of norm2
      *c = (Ctx){t, &t->t[x->inputs[0]], c->h, c->r, c->c, c->ex};
      return explain_kind(c);
    }
    layernorm(c, input(c, 0)->symbol);
    break;
  case T_PROJ: {
    const char *ws = strstr(x->name, ".Q") ? "W^q" : strstr(x->name, ".K") ? "W^k" : "W^v";
    const char *bs = strstr(x->name, ".Q") ? "b^q" : strstr(x->name, ".K") ? "b^k" : "b^v";
    int r = c->r;
    Ctx lc = *c;
    lc.r = r;
    const TraceTensor *in = input(c, 0); // Z, or LN_1(Z) in a pre-norm model: what the header multiplies
    linear(&lc, in && in->symbol ? in->symbol : "Z", ws, bs, c->h * dk + c->c);
    char *l = next_line(c->ex);
    add(l, "\\text{column %d of head %d is column %d of } %s", c->c + 1, c->h + 1, c->h * dk + c->c + 1, ws);
    break;
  }
  case T_SCORES: {
    const TraceTensor *q = input(c, 0), *k = input(c, 1);
    int kh = c->h / (H / k->heads); // grouped-query attention: the query head's K/V head
    double dot = 0;
    for (int d = 0; d < dk; d++) dot += (double)at(q, c->h, c->r, d) * at(k, kh, c->c, d);
    // an edited score ends with what the model computes, not with the number typed in (the
    // heading says which is shown)
    double model = c->ex->edited ? dot / sqrt((double)dk) : at(x, c->h, c->r, c->c);
    char *l = next_line(c->ex), n4[32];
    add(l, "= \\frac{q_{%s} \\cdot k_{%s}}{\\sqrt{d_k}} = \\frac{%s}{\\sqrt{%d}} = \\frac{%s}{%s} = %s",
        tok(c, c->r, t1), ctok(c, c->c, t2), num(n1, dot, false), dk, num(n2, dot, false),
        num(n4, sqrt((double)dk), false), num(n3, model, false));
    l = next_line(c->ex);
    add(l, "q_{%s} \\cdot k_{%s} = ", tok(c, c->r, t1), ctok(c, c->c, t2));
    for (int d = 0; d < dk && d < 3; d++)
      add(l, "%s%s \\cdot %s", d ? " + " : "", num(n1, at(q, c->h, c->r, d), true),
          num(n2, at(k, kh, c->c, d), true));
    if (dk > 3) add(l, " + \\cdots \\text{ (%d terms)}", dk);
    if (t->cfg.rope && x->layer >= 0 && !c->ex->edited) rope_distance(c, kh);
    if (x->row_axis == AXIS_TGT_TOKEN && x->col_axis == AXIS_TOKEN) { // cross-attention: two sources
      l = next_line(c->ex);
      add(l,
          "q\\text{: row } %s \\text{ of } Q^c_{%d} \\text{ (the decoder)},\\quad k\\text{: row } %s \\text{ "
          "of } K^c_{%d} \\text{ (memory, the source)}",
          tok(c, c->r, t1), c->h + 1, ctok(c, c->c, t2), c->h + 1);
    }
    break;
  }
  case T_MASKED: {
    const TraceTensor *s = input(c, 0);
    char *l = next_line(c->ex);
    bool masked = c->c > c->r;
    // a decoder's M is its memory: its look-ahead mask is written Mask (stages.c, view_decoder.c)
    const char *m = x->row_axis == AXIS_TGT_TOKEN ? "\\mathrm{Mask}" : "M";
    if (masked)
      add(l, "= S + %s = %s + (-\\infty) = -\\infty", m, num(n1, at(s, c->h, c->r, c->c), false));
    else
      add(l, "= S + %s = %s + 0 = %s", m, num(n1, at(s, c->h, c->r, c->c), false),
          num(n2, at(x, c->h, c->r, c->c), false));
    l = next_line(c->ex);
    if (masked)
      add(l, "x_{%d} = %s \\text{ comes after } x_{%d} = %s\\text{: a decoder may not look ahead}", c->c + 1,
          tok(c, c->c, t1), c->r + 1, tok(c, c->r, t2));
    else
      add(l, "x_{%d} = %s \\text{ may look at } x_{%d} = %s \\text{ (not later than itself)}", c->r + 1,
          tok(c, c->r, t1), c->c + 1, tok(c, c->c, t2));
    break;
  }
  case T_ATTN: softmax_row(c, input(c, 0), c->h, "S", false); break;
  case T_PRED: softmax_row(c, input(c, 0), 0, "z", true); break;
  case T_AV: {
    const TraceTensor *a = input(c, 0), *v = input(c, 1);
    int vh = c->h / (H / v->heads); // grouped-query attention: the query head's K/V head
    char *l = next_line(c->ex);
    add(l, "= \\sum_{j} A[%s, j]\\, V[j, %d]", tok(c, c->r, t1), c->c + 1);
    l = next_line(c->ex);
    add(l, "= ");
    int L = a->cols; // the keys: the sentence's tokens (the source's in cross-attention)
    for (int j = 0; j < L && j < 3; j++)
      add(l, "%s%s \\cdot %s", j ? " + " : "", num(n1, at(a, c->h, c->r, j), true),
          num(n2, at(v, vh, j, c->c), true));
    if (L > 3) add(l, " + \\cdots");
    add(l, " = %s", num(n1, at(x, c->h, c->r, c->c), false));
    break;
  }
  case T_CONCAT: {
    char *l = next_line(c->ex);
    add(l, "= \\mathrm{head}_{%d}[%s, %d] = %s", c->c / dk + 1, tok(c, c->r, t1), c->c % dk + 1,
        num(n1, at(x, 0, c->r, c->c), false));
    l = next_line(c->ex);
    add(l, "\\text{column %d of Concat is column %d of head %d: } %d = %d \\cdot %d + %d", c->c + 1,
        c->c % dk + 1, c->c / dk + 1, c->c + 1, c->c / dk, dk, c->c % dk + 1);
    break;
  }
  case T_ATTN_OUT: linear(c, "\\mathrm{Concat}", "W^o", "b^o", c->c); break;
  case T_FFN_PRE: linear(c, "x", "W_1", "b_1", c->c); break;
  case T_FFN_OUT: linear(c, "h", "W_2", "b_2", c->c); break;
  case T_LOGITS: linear(c, "y", "W_{\\mathrm{out}}", "b_{\\mathrm{out}}", c->c); break;
  case T_CLASS_LOGITS: linear(c, "\\bar{z}", "W_c", "b_c", c->c); break;
  case T_HEAD_HIDDEN: { // g = act(u), u = Z'·W_t + b_t: the product's lines, then the activation
    linear(c, "Z'", "W_t", "b_t", c->c);
    const TraceTensor *xin = input(c, 0), *W = input(c, 1), *b = input(c, 2);
    double u = b ? at(b, 0, 0, c->c) : 0;
    for (int d = 0; d < xin->cols; d++) u += (double)at(xin, 0, c->r, d) * at(W, 0, d, c->c);
    char *l = next_line(c->ex);
    add(l, t->cfg.activation == ACT_RELU ? "\\max(0,\\, %s) = %s" : "\\mathrm{GELU}(%s) = %s",
        num(n1, u, false), num(n2, at(x, 0, c->r, c->c), false));
    break;
  }
  case T_POOL: {
    const TraceTensor *y = input(c, 0);
    char *l = next_line(c->ex);
    add(l, "= \\frac{1}{%d} \\sum_{i} y[i, %d] = \\frac{", y->rows, c->c + 1);
    double sum = 0;
    for (int i = 0; i < y->rows; i++) sum += at(y, 0, i, c->c);
    for (int i = 0; i < y->rows && i < 3; i++)
      add(l, "%s%s", i ? " + " : "", num(n1, at(y, 0, i, c->c), true));
    if (y->rows > 3) add(l, " + \\cdots");
    add(l, "}{%d} = \\frac{%s}{%d} = %s", y->rows, num(n2, sum, false), y->rows,
        num(n3, at(x, 0, 0, c->c), false));
    l = next_line(c->ex);
    add(l, "\\text{the mean of column %d over the %d positions: one vector for the sentence}", c->c + 1,
        y->rows);
    break;
  }
  case T_CLASS_PRED: {
    const TraceTensor *s = input(c, 0);
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < s->cols; j++) mx = fmax(mx, at(s, 0, 0, j));
    for (int j = 0; j < s->cols; j++) sum += exp((double)at(s, 0, 0, j) - mx);
    char *l = next_line(c->ex);
    add(l, "= \\frac{e^{s[%s]}}{\\sum_{c} e^{s[c]}} = \\frac{e^{%s - %s}}{%s} = %s",
        axis_tex(t, AXIS_CLASS, c->c, t1, 96), num(n1, at(s, 0, 0, c->c), false), num(n2, mx, false),
        num(n3, sum, false), num(t2, at(x, 0, 0, c->c), false));
    break;
  }
  case T_FFN_HIDDEN: {
    const TraceTensor *u = input(c, 0);
    double uv = at(u, 0, c->r, c->c);
    char *l = next_line(c->ex);
    if (t->cfg.activation == ACT_GELU_TANH) {
      double phi = 0.5 * (1 + tanh(0.7978845608028654 * (uv + 0.044715 * uv * uv * uv)));
      add(l,
          "= \\tfrac{1}{2} u \\left(1 + \\tanh\\left(\\sqrt{2/\\pi}\\,(u + "
          "0.044715\\,u^3)\\right)\\right),\\ u = %s",
          num(n1, uv, false));
      l = next_line(c->ex);
      add(l, "= %s \\cdot %s = %s", num(n1, uv, true), num(n3, phi, false),
          num(n2, at(x, 0, c->r, c->c), false));
    } else if (t->cfg.activation == ACT_GELU) {
      double phi = 0.5 * (1 + erf(uv / sqrt(2.0)));
      add(l, "= u\\,\\Phi(u),\\ u = (x W_1 + b_1)[%s, %d] = %s", tok(c, c->r, t1), c->c + 1,
          num(n1, uv, false));
      l = next_line(c->ex);
      add(l, "= %s \\cdot %s = %s", num(n1, uv, true), num(n3, phi, false),
          num(n2, at(x, 0, c->r, c->c), false));
    } else {
      add(l, "= \\max(0,\\, (x W_1 + b_1)[%s, %d]) = \\max(0,\\, %s) = %s", tok(c, c->r, t1), c->c + 1,
          num(n1, uv, false), num(n2, at(x, 0, c->r, c->c), false));
    }
    break;
  }
  default: break;
  }
}

// A cell of a compare view's difference: the same cell of the two sentences, subtracted.
static void explain_difference(const Operand *op, const char *ra, const char *ca, int i, int j,
                               Explanation *ex) {
  Operand a = *op, b = *op;
  a.minus_index = b.minus_index = -1;
  b.trace = op->minus_trace, b.index = op->minus_index;
  double va = operand_at(&a, i, j), vb = operand_at(&b, i, j);
  char n1[32], n2[32], n3[32], rb[96], cb[96];
  char *l = next_line(ex);
  add(l, "= \\text{left} - \\text{right} = %s - %s = %s", num(n1, va, false), num(n2, vb, true),
      num(n3, operand_at(op, i, j), false));
  l = next_line(ex);
  add(l, "\\text{the same cell of both sentences: } [%s, %s] \\text{ and } [%s, %s]", ra, ca,
      axis_tex(b.trace, op->row_axis, i, rb, sizeof rb), axis_tex(b.trace, op->col_axis, j, cb, sizeof cb));
}

// The what-if edit of element (h, i, j) of tensor x, or NULL (edits.h: the trace's own list).
static const TraceEdit *edit_of(const Trace *t, const TraceTensor *x, int h, int i, int j) {
  const TraceEdits *e = t->edits;
  const TraceEdit *found = NULL;
  for (int k = 0; e && x && k < e->n; k++) // a later edit of the same element wins
    if (!strcmp(e->e[k].tensor, x->name) && e->e[k].head == h && e->e[k].i == i && e->e[k].j == j)
      found = &e->e[k];
  return found;
}

static void explain_once(const Trace *t, const ViewLayout *lay, int k, int i, int j, Explanation *ex) {
  memset(ex, 0, sizeof *ex);
  const ViewOperand *v = &lay->ops[k];
  // a window of a long sentence's tokens: cell (i, j) as the matrix counts it, every sum over all
  // of the tokens (a softmax row's, a product's)
  Operand whole = operand_whole(v->op);
  operand_true_cell(&v->op, &i, &j);
  const Operand *op = &whole;
  if (op->trace) t = op->trace; // a compare view: each operand is explained from its own sentence
  float val = operand_at(op, i, j);
  ex->value = val;
  char n1[32], ra[96], ca[96];
  axis_tex(t, op->row_axis, i, ra, sizeof ra);
  axis_tex(t, op->col_axis, j, ca, sizeof ca);
  // a symbol that is a sum (S_1 + M) takes parentheses before its index: (S_1 + M)[eats, mouse]
  bool sum = strpbrk(v->symbol, "+-") != NULL;
  snprintf(ex->heading, EXPLAIN_CAP, "%s%s%s[%s, %s] = %s", sum ? "\\left(" : "", v->symbol,
           sum ? "\\right)" : "", ra, ca, num(n1, val, false));
  char rp[64], cp[64];
  trace_axis_label(t, op->row_axis, i, rp, sizeof rp);
  trace_axis_label(t, op->col_axis, j, cp, sizeof cp);
  snprintf(ex->plain, EXPLAIN_CAP, "%s%s[%s, %s] = %.4f", op->minus_index >= 0 ? "diff " : "",
           operand_src(op) ? operand_src(op)->name : "M", rp, cp, val);
  if (op->minus_index >= 0) return explain_difference(op, ra, ca, i, j, ex);
  if (op->index < 0) { // the mask
    char *l = next_line(ex);
    if (j > i)
      add(l,
          "= -\\infty: \\ x_{%d} = %s \\text{ comes after } x_{%d} = %s \\text{, a decoder may not look "
          "ahead}",
          j + 1, ca, i + 1, ra);
    else
      add(l, "= 0: \\ x_{%d} = %s \\text{ may look at } x_{%d} = %s", i + 1, ra, j + 1, ca);
    return;
  }
  // the tensor's own coordinates
  int ti = op->transpose ? j : i, tj = op->transpose ? i : j, h = op->head;
  const TraceTensor *x = operand_src(op);
  if (h < 0) h = tj / x->cols, tj %= x->cols;
  Ctx c = {t, x, h, ti, tj, ex};
  if (edit_of(t, x, x->per_head ? h : 0, ti, tj)) { // say so, and what the model computes
    ex->edited = true;
    add(ex->heading, "\\text{, edited by a what-if}");
    add(ex->plain, " (edited)");
  }
  explain_kind(&c);
  if (ex->edited && x->kind == T_SCORES && ex->n_lines > 0) { // "…, edited; the model computes 0.750"
    const char *res = strrchr(ex->lines[0], '=');
    if (res) add(ex->heading, "\\text{; the model computes}\\ %s", res + 1);
  }
}

// One number, one way (issue 31.2): when a line ends with the cell's value printed with fewer
// digits than the heading's (a quotient's result settles to one digit fewer: "= 13.56/4.000 =
// 3.39"), the heading shows it as the line does ("S[cat, bank] = 3.39", not 3.389). The first line
// that ends with the heading's value rounded counts (a softmax's second: "= 1.000/10.56 = 0.0947"
// under "A[loves, jane] = 0.09467"); an edited cell's heading says more and stays.
// A printed number alone ("0.0947", "1.97 \\cdot 10^{-9}"): its value and half a unit of its last
// digit; false for anything else.
static bool plain_number(const char *s, double *v, double *half) {
  char *end;
  *v = strtod(s, &end);
  if (end == s) return false;
  const char *dot = memchr(s, '.', (size_t)(end - s));
  int decimals = dot ? (int)(end - dot - 1) : 0, e = 0;
  if (!strncmp(end, " \\cdot 10^{", 11)) {
    e = (int)strtol(end + 11, &end, 10);
    if (*end++ != '}') return false;
  }
  *v *= pow(10, e), *half = 0.5 * pow(10, e - decimals);
  return *end == 0;
}

static void same_digits(Explanation *ex) {
  if (ex->edited) return;
  char *hv = strrchr(ex->heading, '=');
  if (!hv) return;
  hv++;
  while (*hv == ' ') hv++;
  double b, half_b;
  if (!plain_number(hv, &b, &half_b)) return;
  for (int n = 0; n < ex->n_lines; n++) {
    const char *res = strrchr(ex->lines[n], '=');
    if (!res) continue;
    res++;
    while (*res == ' ') res++;
    double a, half;
    if (!plain_number(res, &a, &half)) continue;
    if (fabs(a - b) > half + 1e-12 * fabs(b)) continue; // not the heading's value rounded
    if (strlen(res) < strlen(hv)) snprintf(hv, (size_t)(EXPLAIN_CAP - (hv - ex->heading)), "%s", res);
    return;
  }
}

void explain_cell(const Trace *t, const ViewLayout *lay, int k, int i, int j, Explanation *ex) {
  // 3 significant digits, more until every line's printed numbers reproduce its printed result
  // (numfmt.h's order of tries); the first try's text stays when none holds
  int min_sig;
  for (int try = 0; numfmt_try(try, &num_sig, &min_sig); try++) {
    explain_once(t, lay, k, i, j, ex);
    bool ok = numfmt_reproduces(ex->heading);
    for (int n = 0; n < ex->n_lines && ok; n++)
      ok = numfmt_settle(ex->lines[n], EXPLAIN_CAP, num_sig, min_sig);
    if (ok) break;
  }
  num_sig = NUMFMT_SIG;
  same_digits(ex);
}
