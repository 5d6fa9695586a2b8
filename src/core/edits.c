// edits.c -- see edits.h. The parser and labels, the edited copy of the model, the edited forward
// (the list itself: editlist.c).
#include "edits.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward.h" // defines: model_forward
#include "gemm.h"    // defines: GemmWeights, gemm_pack, gemm_free

// ---------------------------------------------------------------- the list (editlist.c has the rest)

bool edits_set_head(TraceEdits *e, const Trace *t, int l, int h, HeadOff mode, Err *err) {
  int nl = t->cfg.n_layers, H = t->cfg.H;
  if (l < 0 || l >= nl || h < 0 || h >= H)
    return err_set(err, "layer %d head %d: the model has %d layer%s of %d heads", l + 1, h + 1, nl,
                   nl == 1 ? "" : "s", H);
  if (!e->off) {
    if (!(e->off = calloc((size_t)nl * H, 1))) return err_set(err, "out of memory for the edit list");
    e->n_layers = nl, e->H = H;
  }
  e->off[l * H + h] = (unsigned char)mode;
  return true;
}

// ---------------------------------------------------------------- names

// What a learner types and the trace's tensor it edits (within layer l: "l{l}." before it).
static const struct {
  const char *name, *tensor;
} NAMES[] = {
    {"E", "E"},
    {"Wq", "Wq"},
    {"Wk", "Wk"},
    {"Wv", "Wv"},
    {"Wo", "Wo"},
    {"bq", "bq"},
    {"bk", "bk"},
    {"bv", "bv"},
    {"bo", "bo"},
    {"W1", "W1"},
    {"b1", "b1"},
    {"W2", "W2"},
    {"b2", "b2"},
    {"gamma1", "norm1.gamma"},
    {"beta1", "norm1.beta"},
    {"gamma2", "norm2.gamma"},
    {"beta2", "norm2.beta"},
    {"Wg", "Wg"}, // today's decoders (issue 34): the gate, the RMSNorms' and QK-norm's gains
    {"gamma_rms1", "rms1.gamma"},
    {"gamma_rms2", "rms2.gamma"},
    {"gamma_q", "q_norm.gamma"},
    {"gamma_k", "k_norm.gamma"},
};
enum { N_NAMES = sizeof NAMES / sizeof NAMES[0] };
static const char NAME_LIST[] = "E, S1.., Wq, Wk, Wv, Wo, bq, bk, bv, bo, W1, b1, W2, b2, gamma1, beta1, "
                                "gamma2, beta2; Llama / Qwen: Wg, "
                                "gamma_rms1, gamma_rms2, gamma_q, gamma_k";

// The learner's name of a tensor of layer l ("Wq" for "l0.Wq"), or NULL.
static const char *name_of(const char *tensor) {
  const char *dot = tensor[0] == 'l' ? strchr(tensor, '.') : NULL;
  const char *rest = dot ? dot + 1 : tensor;
  for (int k = 0; k < N_NAMES; k++)
    if (!strcmp(NAMES[k].tensor, rest)) return NAMES[k].name;
  return NULL;
}

static bool same_ci(const char *a, size_t n, const char *b) {
  if (strlen(b) != n) return false;
  for (size_t k = 0; k < n; k++)
    if (tolower((unsigned char)a[k]) != tolower((unsigned char)b[k])) return false;
  return true;
}

// [b, e) without the spaces at either end.
static void trim(const char **b, const char **e) {
  while (*b < *e && isspace((unsigned char)**b)) (*b)++;
  while (*e > *b && isspace((unsigned char)(*e)[-1])) (*e)--;
}

// A whole decimal number in [b, e) of at most 6 digits, or -1.
static int number(const char *b, const char *e) {
  if (b == e || e - b > 6) return -1;
  int v = 0;
  for (const char *p = b; p < e; p++) {
    if (!isdigit((unsigned char)*p)) return -1;
    v = 10 * v + (*p - '0');
  }
  return v;
}

// The token [b, e) names: "cat", "the#2" (the second "the"), or a position 1..L. -1 when none.
static int token_index(const Trace *t, const char *b, const char *e) {
  int pos = number(b, e);
  if (pos >= 0) return pos >= 1 && pos <= t->L ? pos - 1 : -1;
  const char *hash = memchr(b, '#', (size_t)(e - b));
  int want = 1;
  if (hash && (want = number(hash + 1, e)) < 1) return -1;
  size_t wl = (size_t)((hash ? hash : e) - b);
  for (int i = 0, seen = 0; i < t->L; i++)
    if (same_ci(b, wl, tokens_label(&t->tokens, &t->model->vocab, i)) && ++seen == want) return i;
  return -1;
}

// The index [b, e) names along `axis` of n entries, or -1 with a message.
static int axis_index(const Trace *t, TraceAxis axis, int n, const char *b, const char *e, const char *what,
                      Err *err) {
  int len = (int)(e - b), k = -1;
  switch (axis) {
  case AXIS_TOKEN:
    if ((k = token_index(t, b, e)) < 0)
      err_set(
          err,
          "%s %.*s is not a token of the sentence (a word, word#2 for its second time, or a position 1..%d)",
          what, len, b, t->L);
    return k;
  case AXIS_VOCAB:
    for (int id = 0; id < t->model->vocab.n && k < 0; id++)
      if (same_ci(b, (size_t)len, t->model->vocab.words[id])) k = id;
    if (k < 0) err_set(err, "%s %.*s is not a word of the model's vocabulary", what, len, b);
    return k;
  case AXIS_MODEL:
  case AXIS_HEADDIM:
  case AXIS_FFN:
  case AXIS_QKV:
    // d1 … dn, counted from 1 as the axes are; a bare number is the old 0-based form: say the new one
    if (len >= 2 && (*b == 'd' || *b == 'D') && (k = number(b + 1, e)) >= 1 && k <= n) return k - 1;
    if ((k = number(b, e)) >= 0)
      err_set(err,
              "%s %.*s: a %s is written d1 … d%d now, counted from 1 as the axes show it (the old 0-based %d "
              "is d%d)",
              what, len, b, trace_axis_name(axis), n, k, k + 1);
    else
      err_set(err, "%s %.*s is not a %s d1 … d%d", what, len, b, trace_axis_name(axis), n);
    return -1;
  default: err_set(err, "%s: this axis cannot be edited", what); return -1;
  }
}

bool edits_parse_edit(const Trace *t, const char *spec, TraceEdit *out, Err *err) {
  if (t->T > 0) return err_set(err, "edits work on encoders and decoder-only models, not an encoder-decoder");
  *out = (TraceEdit){0};
  const char *p = spec;
  while (isspace((unsigned char)*p)) p++;
  int layer = 1;
  bool layer_given = false;
  const char *colon = strchr(p, ':'), *open = strchr(p, '[');
  if (colon && (!open || colon < open)) { // LAYER:
    const char *b = p, *e = colon;
    trim(&b, &e);
    if ((layer = number(b, e)) < 1 || layer > t->cfg.n_layers)
      return err_set(err, "%.*s: not a layer of the model (1..%d) before ':'", (int)(e - b), b,
                     t->cfg.n_layers);
    layer_given = true;
    p = colon + 1;
  }
  if (!open)
    return err_set(err, "'%s' has no [row, column]: write NAME[ROW, COL]=VALUE, as S4[bank, river]=6", spec);
  const char *nb = p, *ne = open;
  trim(&nb, &ne);
  size_t nl = (size_t)(ne - nb);
  char tensor[16];
  const char *name = NULL;
  for (int k = 0; k < N_NAMES && !name; k++)
    if (same_ci(nb, nl, NAMES[k].name))
      name = NAMES[k].name, snprintf(tensor, sizeof tensor, "%s", NAMES[k].tensor);
  if (!name && nl >= 2 && (nb[0] == 'S' || nb[0] == 's')) { // S and its head: S4
    int h = number(nb + 1, ne);
    if (h < 1 || h > t->cfg.H)
      return err_set(err, "%.*s: the model has %d heads (S1..S%d)", (int)nl, nb, t->cfg.H, t->cfg.H);
    name = "S", out->kind = EDIT_SCORE, out->head = h - 1;
    snprintf(tensor, sizeof tensor, "%s", t->cfg.causal ? "S_raw" : "S");
  }
  if (!name) {
    if (nl == 1 && (nb[0] == 'S' || nb[0] == 's')) return err_set(err, "S needs its head: S1..S%d", t->cfg.H);
    return err_set(err, "'%.*s' is not an editable matrix (%s)", (int)nl, nb, NAME_LIST);
  }
  bool global = !strcmp(name, "E");
  if (global && layer_given) return err_set(err, "E belongs to no layer: leave the '%d:' out", layer);
  out->layer = global ? -1 : layer - 1;
  if (global)
    snprintf(out->tensor, sizeof out->tensor, "%s", tensor);
  else
    snprintf(out->tensor, sizeof out->tensor, "l%d.%s", layer - 1, tensor);
  const TraceTensor *x = trace_find(t, out->tensor);
  if (!x) return err_set(err, "%s: this model has none (its layers have no such parameter)", name);

  const char *close = strchr(open, ']');
  if (!close) return err_set(err, "'%s': '[' without ']'", spec);
  const char *comma = memchr(open, ',', (size_t)(close - open));
  const char *rb = open + 1, *re = comma ? comma : close;
  trim(&rb, &re);
  if (x->rows == 1 && !comma) { // a bias or a gain: one index
    out->i = 0;
    if ((out->j = axis_index(t, x->col_axis, x->cols, rb, re, name, err)) < 0) return false;
  } else {
    if (!comma)
      return err_set(err, "%s[%.*s]: %s needs a row and a column, as %s[ROW, COL]", name, (int)(re - rb), rb,
                     name, name);
    const char *cb = comma + 1, *ce = close;
    trim(&cb, &ce);
    if (x->rows == 1) {
      if (number(rb, re) != 0) return err_set(err, "%s has one row: give one index, %s[COL]", name, name);
      out->i = 0;
    } else if ((out->i = axis_index(t, x->row_axis, x->rows, rb, re, "row", err)) < 0)
      return false;
    if ((out->j = axis_index(t, x->col_axis, x->cols, cb, ce, "column", err)) < 0) return false;
  }
  if (out->kind == EDIT_SCORE && t->cfg.causal && out->j > out->i)
    return err_set(
        err, "%s: a masked score (a query sees only the keys up to itself); pick a column up to the row",
        name);
  const char *eq = close + 1;
  while (isspace((unsigned char)*eq)) eq++;
  if (*eq != '=') return err_set(err, "'%s': '=' and a number after the ']'", spec);
  char *end;
  double v = strtod(eq + 1, &end);
  while (isspace((unsigned char)*end)) end++;
  if (end == eq + 1 || *end || !isfinite(v) || fabs(v) > 1e30)
    return err_set(err, "'%s': the value after '=' is not a number", spec);
  out->value = (float)v;
  return true;
}

bool edits_for_cell(const Trace *t, int index, int h, int i, int j, float value, TraceEdit *out, Err *err) {
  if (t->T > 0) return err_set(err, "edits work on encoders and decoder-only models, not an encoder-decoder");
  const TraceTensor *x = &t->t[index];
  *out = (TraceEdit){.layer = x->layer, .i = i, .j = j, .value = value};
  if (x->kind == T_SCORES || x->kind == T_MASKED) {
    if (x->layer < 0 || h < 0) return err_set(err, "pick one head's scores to edit");
    if (t->cfg.causal && j > i)
      return err_set(err, "a masked score cannot be edited (a query sees only the keys up to itself)");
    out->kind = EDIT_SCORE, out->head = h;
    snprintf(out->tensor, sizeof out->tensor, "l%d.%s", x->layer, t->cfg.causal ? "S_raw" : "S");
  } else if (x->is_weight && x->heads == 1 && name_of(x->name) && (x->layer >= 0 || !strcmp(x->name, "E"))) {
    out->kind = EDIT_WEIGHT;
    snprintf(out->tensor, sizeof out->tensor, "%s", x->name);
  } else {
    return err_set(err,
                   "%s cannot be edited: pick a cell of E, a weight or bias (W^q ... b_2), a LayerNorm's "
                   "gain or shift, or a score S_h",
                   x->name);
  }
  if (i < 0 || i >= x->rows || j < 0 || j >= x->cols || (out->kind == EDIT_SCORE && (h >= x->heads)))
    return err_set(err, "no such cell of %s", x->name);
  return true;
}

bool edits_parse_head_off(const Trace *t, const char *spec, int *layer, int *head, HeadOff *mode, Err *err) {
  if (t->T > 0)
    return err_set(err,
                   "heads can be switched off in encoders and decoder-only models, not an encoder-decoder");
  const char *c1 = strchr(spec, ':');
  if (!c1)
    return err_set(
        err, "'%s': write LAYER:HEAD (1-based), then :zero or :uniform if you like, as 1:4:uniform", spec);
  const char *c2 = strchr(c1 + 1, ':');
  const char *b = spec, *e = c1;
  trim(&b, &e);
  int l = number(b, e);
  if (l < 1 || l > t->cfg.n_layers)
    return err_set(err, "'%s': layer %.*s is not one of 1..%d", spec, (int)(e - b), b, t->cfg.n_layers);
  b = c1 + 1, e = c2 ? c2 : c1 + 1 + strlen(c1 + 1);
  trim(&b, &e);
  int h = number(b, e);
  if (h < 1 || h > t->cfg.H)
    return err_set(err, "'%s': head %.*s is not one of 1..%d", spec, (int)(e - b), b, t->cfg.H);
  *mode = HEAD_ZERO;
  if (c2) {
    b = c2 + 1, e = b + strlen(b);
    trim(&b, &e);
    if (same_ci(b, (size_t)(e - b), "uniform"))
      *mode = HEAD_UNIFORM;
    else if (!same_ci(b, (size_t)(e - b), "zero"))
      return err_set(err, "'%s': '%.*s' is not a way to switch a head off (zero or uniform)", spec,
                     (int)(e - b), b);
  }
  *layer = l - 1, *head = h - 1;
  return true;
}

// ---------------------------------------------------------------- labels

// The label of index k along axis as an edit= writes it: a token's word ("the#2" from its second
// time on), a dimension d1 … dD, else the axis label.
static const char *index_label(const Trace *t, TraceAxis axis, int k, char *buf, int cap) {
  if (axis == AXIS_MODEL || axis == AXIS_HEADDIM || axis == AXIS_FFN || axis == AXIS_QKV) {
    snprintf(buf, (size_t)cap, "d%d", k + 1); // as an edit= writes it
    return buf;
  }
  if (axis != AXIS_TOKEN) return trace_axis_label(t, axis, k, buf, cap);
  const char *w = tokens_label(&t->tokens, &t->model->vocab, k);
  int seen = 1;
  for (int i = 0; i < k; i++) seen += !strcmp(tokens_label(&t->tokens, &t->model->vocab, i), w);
  if (seen > 1)
    snprintf(buf, (size_t)cap, "%s#%d", w, seen);
  else
    snprintf(buf, (size_t)cap, "%s", w);
  return buf;
}

const char *edits_label(const Trace *t, const TraceEdit *x, char *buf, int cap) {
  static const char *const SUB[10] = {"₀", "₁", "₂", "₃", "₄", "₅", "₆", "₇", "₈", "₉"};
  char name[40], lay[24] = "", row[64], col[64], val[32];
  if (x->kind == EDIT_SCORE) {
    char digits[12];
    snprintf(digits, sizeof digits, "%d", x->head + 1);
    snprintf(name, sizeof name, "S");
    for (const char *d = digits; *d; d++) strncat(name, SUB[*d - '0'], sizeof name - strlen(name) - 1);
  } else {
    const char *n = name_of(x->tensor);
    snprintf(name, sizeof name, "%s", n ? n : x->tensor);
  }
  if (x->layer >= 0 && t->cfg.n_layers > 1) snprintf(lay, sizeof lay, "layer %d ", x->layer + 1);
  const TraceTensor *tt = trace_find(t, x->tensor);
  snprintf(val, sizeof val, "%g", (double)x->value);
  if (!strpbrk(val, ".en")) strncat(val, ".0", sizeof val - strlen(val) - 1);
  if (!tt || x->i >= tt->rows || x->j >= tt->cols)
    snprintf(buf, (size_t)cap, "%s%s[%d, %d] = %s", lay, name, x->i, x->j, val);
  else if (tt->rows == 1)
    snprintf(buf, (size_t)cap, "%s%s[%s] = %s", lay, name,
             index_label(t, tt->col_axis, x->j, col, sizeof col), val);
  else
    snprintf(buf, (size_t)cap, "%s%s[%s, %s] = %s", lay, name,
             index_label(t, tt->row_axis, x->i, row, sizeof row),
             index_label(t, tt->col_axis, x->j, col, sizeof col), val);
  return buf;
}

// Appends s to buf (cap bytes), cut with "…" when it does not fit.
static void append(char *buf, int cap, const char *s) {
  size_t n = strlen(buf), k = strlen(s);
  if (n + k + 1 <= (size_t)cap) {
    memcpy(buf + n, s, k + 1);
  } else if (n + 4 <= (size_t)cap) {
    size_t room = (size_t)cap - n - 4;
    while (room > 0 && ((unsigned char)s[room] & 0xC0) == 0x80) room--; // whole characters
    memcpy(buf + n, s, room);
    memcpy(buf + n + room, "…", 4);
  }
}

const char *edits_describe(const Trace *t, char *buf, int cap) {
  buf[0] = 0;
  const TraceEdits *e = t->edits;
  if (!e || edits_empty(e)) return buf;
  char one[200];
  for (int k = 0; k < e->n; k++) {
    append(buf, cap, k == 0 ? "edited: " : "; ");
    append(buf, cap, edits_label(t, &e->e[k], one, sizeof one));
  }
  bool first = true;
  for (int l = 0; l < e->n_layers; l++)
    for (int h = 0; h < e->H; h++) {
      HeadOff m = edits_head(e, l, h);
      if (m == HEAD_ON) continue;
      append(buf, cap, first ? (e->n ? "; heads off: " : "heads off: ") : ", ");
      snprintf(one, sizeof one, "layer %d head %d (%s)", l + 1, h + 1, m == HEAD_ZERO ? "zeroed" : "uniform");
      append(buf, cap, one);
      first = false;
    }
  return buf;
}

// ---------------------------------------------------------------- the edited model

// A shallow copy of a model whose edited arrays are copies it owns. `m` first: a Model * to it is
// an EditedModel *.
typedef struct {
  Model m;
  LayerWeights *layers; // the copy m.layers points at (its packed weights shared, or `packs`)
  float **own;          // the copied arrays
  int n_own;
  GemmWeights *packs; // the re-packed matrices
  int n_packs;
} EditedModel;

// One array of parameters of the copy: where its pointer is, its length, the original, and the
// packed copy to redo when it changes (or NULL).
typedef struct {
  float **field;
  const float *orig;
  long len;
  GemmWeights *pack;
  int pn, pk; // the packed matrix's shape [N, K]
  float *copy;
} Array;

// Every editable array of the copy (layers' weights, E). `a` has room for 1 + EDIT_ARRAYS·n_layers.
// Today's decoders (issue 34): in_proj [(H + 2·H_kv)·d_k, D], out_proj [D, H·d_k], the gate [F, D]
// and the QK-norm gains [d_k] (absent arrays are NULL and never match).
enum { EDIT_ARRAYS = 15 };
static int arrays_of(EditedModel *em, Array *a) {
  Model *m = &em->m;
  const ModelConfig *c = &m->cfg;
  int D = c->D, F = c->F, n = 0, dk = model_dk(c), QKV = (c->H + 2 * model_hkv(c)) * dk, QD = c->H * dk;
  a[n++] = (Array){&m->embed, m->embed, (long)m->cfg.V * D, NULL, 0, 0, NULL};
  for (int l = 0; l < m->cfg.n_layers; l++) {
    LayerWeights *w = &em->layers[l];
    a[n++] = (Array){&w->in_proj_weight, w->in_proj_weight, (long)QKV * D, &w->in_proj_packed, QKV, D, NULL};
    a[n++] = (Array){&w->in_proj_bias, w->in_proj_bias, QKV, NULL, 0, 0, NULL};
    a[n++] = (Array){&w->out_proj_weight, w->out_proj_weight, (long)D * QD, &w->out_proj_packed, D, QD, NULL};
    a[n++] = (Array){&w->out_proj_bias, w->out_proj_bias, D, NULL, 0, 0, NULL};
    a[n++] = (Array){&w->linear1_weight, w->linear1_weight, (long)F * D, &w->linear1_packed, F, D, NULL};
    a[n++] = (Array){&w->linear1_bias, w->linear1_bias, F, NULL, 0, 0, NULL};
    a[n++] = (Array){&w->linear2_weight, w->linear2_weight, (long)D * F, &w->linear2_packed, D, F, NULL};
    a[n++] = (Array){&w->linear2_bias, w->linear2_bias, D, NULL, 0, 0, NULL};
    a[n++] = (Array){&w->norm1_weight, w->norm1_weight, D, NULL, 0, 0, NULL};
    a[n++] = (Array){&w->norm1_bias, w->norm1_bias, D, NULL, 0, 0, NULL};
    a[n++] = (Array){&w->norm2_weight, w->norm2_weight, D, NULL, 0, 0, NULL};
    a[n++] = (Array){&w->norm2_bias, w->norm2_bias, D, NULL, 0, 0, NULL};
    a[n++] = (Array){&w->gate_weight, w->gate_weight, (long)F * D, &w->gate_packed, F, D, NULL};
    a[n++] = (Array){&w->q_norm_weight, w->q_norm_weight, dk, NULL, 0, 0, NULL};
    a[n++] = (Array){&w->k_norm_weight, w->k_norm_weight, dk, NULL, 0, 0, NULL};
  }
  return n;
}

void edits_model_free(Model *m) {
  if (!m) return;
  EditedModel *em = (EditedModel *)m;
  for (int k = 0; k < em->n_own; k++) free(em->own[k]);
  for (int k = 0; k < em->n_packs; k++) gemm_free(&em->packs[k]);
  free(em->own);
  free(em->packs);
  free(em->layers);
  free(em);
}

// The model of `base` with the weight edits of e written into copies of the arrays that hold them.
static Model *edited_model(const Trace *base, const TraceEdits *e, Err *err) {
  const Model *m = base->model;
  int nl = m->cfg.n_layers, na = 1 + EDIT_ARRAYS * nl;
  EditedModel *em = calloc(1, sizeof *em);
  Array *a = calloc((size_t)na, sizeof *a);
  if (!em || !a || !(em->layers = malloc(sizeof *em->layers * (size_t)nl)) ||
      !(em->own = calloc((size_t)na, sizeof *em->own)) ||
      !(em->packs = calloc((size_t)na, sizeof *em->packs))) {
    free(a);
    edits_model_free(em ? &em->m : NULL);
    return err_set(err, "out of memory for the edited model"), NULL;
  }
  // a GPT-2 checkpoint's layer matrices in Conv1D layout: the edited model is made of their
  // canonical copies (its trace's views read those, edited), so the weights edited are the forward's
  if (!model_canonical(m)) {
    free(a);
    edits_model_free(&em->m);
    return err_set(err, "out of memory for the edited model"), NULL;
  }
  em->m = *m;
  memcpy(em->layers, m->layers, sizeof *em->layers * (size_t)nl);
  em->m.layers = em->layers;
  em->m.map = NULL;
  for (int l = 0; l < nl; l++)
    em->layers[l].in_proj_xw = em->layers[l].out_proj_xw = em->layers[l].linear1_xw =
        em->layers[l].linear2_xw = NULL;
  na = arrays_of(em, a);
  for (int k = 0; k < e->n; k++) {
    const TraceEdit *x = &e->e[k];
    if (x->kind != EDIT_WEIGHT) continue;
    const TraceTensor *tt = trace_find(base, x->tensor);
    EXPECT(tt && tt->heads == 1);
    const float *p = tt->transposed ? tt->data + (size_t)x->j * tt->stride + x->i
                                    : tt->data + (size_t)x->i * tt->stride + x->j;
    p = model_canonical_elem(m, p); // a view of a Conv1D layout: the same element, canonical
    int at = -1;
    for (int q = 0; q < na && at < 0; q++)
      if (a[q].orig && p >= a[q].orig && p < a[q].orig + a[q].len) at = q;
    EXPECT(at >= 0); // the parser takes only the tensors arrays_of lists
    Array *r = &a[at];
    if (!r->copy) {
      if (!(r->copy = malloc(sizeof(float) * (size_t)r->len))) {
        free(a);
        edits_model_free(&em->m);
        return err_set(err, "out of memory for the edited model"), NULL;
      }
      memcpy(r->copy, r->orig, sizeof(float) * (size_t)r->len);
      em->own[em->n_own++] = r->copy;
      *r->field = r->copy;
      // a tied head multiplies by E itself: the same parameter, edited too
      if (r->orig == m->embed && m->head_weight == m->embed) em->m.head_weight = r->copy;
    }
    r->copy[p - r->orig] = x->value;
  }
  // an edited tied head (E itself) is multiplied block by block, as an unpacked head is
  if (em->m.head_weight != m->head_weight) em->m.head_packed = (GemmWeights){0};
  for (int q = 0; q < na; q++) { // re-pack an edited matrix the model had packed
    Array *r = &a[q];
    if (!r->copy || !r->pack || !r->pack->panels) continue;
    GemmWeights *pw = &em->packs[em->n_packs];
    if (!gemm_pack(pw, mat_view(r->copy, r->pn, r->pk))) {
      *r->pack = (GemmWeights){0}; // no memory to pack: that product runs unpacked
      continue;
    }
    em->n_packs++;
    *r->pack = *pw;
  }
  free(a);
  return &em->m;
}

// ---------------------------------------------------------------- the edited forward

// True when x still names an element of base (a new sentence may have fewer tokens).
static bool fits(const Trace *base, const TraceEdit *x, Err *err) {
  const TraceTensor *tt = trace_find(base, x->tensor);
  int heads = tt ? tt->heads : 0;
  if (tt && x->head < heads && x->i >= 0 && x->i < tt->rows && x->j >= 0 && x->j < tt->cols &&
      (x->kind == EDIT_WEIGHT) == tt->is_weight)
    return true;
  return err_set(err, "the edit of %s[%d, %d] does not fit this sentence or model: undo it", x->tensor, x->i,
                 x->j);
}

Trace *edits_trace(const Trace *base, const TraceEdits *e, Err *err) {
  if (base->T > 0)
    return err_set(err, "edits work on encoders and decoder-only models, not an encoder-decoder"), NULL;
  bool weights = false;
  for (int k = 0; k < e->n; k++) {
    if (!fits(base, &e->e[k], err)) return NULL;
    weights = weights || e->e[k].kind == EDIT_WEIGHT;
  }
  if (e->off && (e->n_layers != base->cfg.n_layers || e->H != base->cfg.H))
    return err_set(err, "the heads switched off are of another model"), NULL;
  Model *m = weights ? edited_model(base, e, err) : NULL;
  if (weights && !m) return NULL;
  TraceEdits *own = NULL;
  if (!edits_empty(e) && (!(own = malloc(sizeof *own)) || !edits_copy(own, e, err))) {
    free(own);
    edits_model_free(m);
    return err_set(err, "out of memory for the edit list"), NULL;
  }
  Trace *t = trace_new(m ? m : base->model, &base->tokens, err);
  if (!t) {
    if (own) edits_free(own);
    free(own);
    edits_model_free(m);
    return NULL;
  }
  t->edits = own;
  t->own_model = m;
  t->own_model_free = edits_model_free;
  model_forward(t);
  // the base's steps, the similarity's too: a lesson's "Stage 7/17" does not change with an edit
  if (trace_step_find(base, STEP_SIM, 0) >= 0 && !trace_add_sim_steps(t)) {
    trace_free(t);
    return err_set(err, "out of memory"), NULL;
  }
  return t;
}
