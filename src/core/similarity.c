// similarity.c -- see similarity.h.
#include "similarity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN16(n) (((n) + 15u) & ~(size_t)15u)

// The levels of trace t: X, Z (with positions), every layer's output, the final LayerNorm.
// Writes up to cap of them into lv (when not NULL); returns how many there are.
static int levels_of(const Trace *t, SimLevel *lv, int cap) {
  int n = 0;
#define LEVEL(idx, nm, lab)                                                                                  \
  do {                                                                                                       \
    if ((idx) >= 0) {                                                                                        \
      if (lv && n < cap) {                                                                                   \
        snprintf(lv[n].name, sizeof lv[n].name, "%s", nm);                                                   \
        snprintf(lv[n].label, sizeof lv[n].label, "%s", lab);                                                \
        lv[n].src_a = lv[n].src_b = (idx);                                                                   \
      }                                                                                                      \
      n++;                                                                                                   \
    }                                                                                                        \
  } while (0)
  LEVEL(t->X, "X", "OE: token embeddings");           // the file name stays sim.X; Z = OE as step 4 wrote it
  if (!t->cfg.no_pos) LEVEL(t->Z, "Z", "Z = OE + P"); // without positions Z = X: the same level
  for (int l = 0; l < t->cfg.n_layers; l++) {
    char nm[16], lab[24];
    snprintf(nm, sizeof nm, "l%d", l);
    snprintf(lab, sizeof lab, "after layer %d", l + 1);
    LEVEL(t->layers[l].out, nm, lab);
  }
  LEVEL(t->enc_norm >= 0 ? t->enc_norm : t->final_norm, "final", "final LayerNorm");
#undef LEVEL
  return n;
}

size_t sim_bytes(const Trace *a, const Trace *b) {
  if (!a || !b || a->model != b->model || a->T > 0 || b->T > 0 || a->L < 1 || b->L < 1) return 0;
  int n = levels_of(a, NULL, 0);
  size_t cells = (size_t)a->L * (size_t)b->L;
  if (cells > ((size_t)1 << 28) / (size_t)(n + 1)) return 0; // far beyond any sentence the app takes
  return ALIGN16(sizeof(Sim)) + ALIGN16((size_t)n * sizeof(SimLevel)) +
         ALIGN16((size_t)n * sizeof(TraceTensor)) + ALIGN16((size_t)n * sizeof(float)) +
         (size_t)n * cells * sizeof(float);
}

double sim_cos(const TraceTensor *x, int i, const TraceTensor *y, int j, double *dot, double *na,
               double *nb) {
  double d = 0, p = 0, q = 0;
  for (int k = 0; k < x->cols; k++) {
    double u = trace_at(x, 0, i, k), v = trace_at(y, 0, j, k);
    d += u * v, p += u * u, q += v * v;
  }
  p = sqrt(p), q = sqrt(q);
  if (dot) *dot = d;
  if (na) *na = p;
  if (nb) *nb = q;
  return p > 0 && q > 0 ? d / (p * q) : 0.0; // a zero vector points nowhere: similarity 0
}

Sim *sim_init(void *mem, size_t bytes, const Trace *a, const Trace *b, Err *err) {
  size_t need = sim_bytes(a, b);
  if (!need) {
    err_set(err, "the similarity needs two sentences through the same encoder");
    return NULL;
  }
  if (!mem || bytes < need) {
    err_set(err, "out of memory for the similarity of two sentences");
    return NULL;
  }
  memset(mem, 0, need);
  char *p = mem;
  Sim *s = (Sim *)p;
  p += ALIGN16(sizeof(Sim));
  int n = levels_of(a, NULL, 0);
  s->levels = (SimLevel *)p;
  p += ALIGN16((size_t)n * sizeof(SimLevel));
  TraceTensor *tt = (TraceTensor *)p;
  p += ALIGN16((size_t)n * sizeof(TraceTensor));
  s->line = (float *)p;
  p += ALIGN16((size_t)n * sizeof(float));
  float *data = (float *)p;
  levels_of(a, s->levels, n);
  s->a = a, s->b = b, s->n_levels = n;

  // the trace the views draw: a's tokens on the rows, b's on the columns (borrowed)
  Trace *t = &s->trace;
  t->model = a->model, t->cfg = a->cfg, t->L = a->L;
  t->tokens = a->tokens, t->dec_tokens = b->tokens; // AXIS_TOKEN2 labels come from dec_tokens
  t->t = tt, t->n = n;
  t->O = t->E = t->X = t->P = t->Z = -1;
  t->final_norm = t->Wout = t->bout = t->logits = t->pred = -1;
  t->t0 = t->embed_sum = t->Wt = t->bt = t->head_hidden = t->head_norm = -1;
  t->enc_norm = t->pool = t->Wc = t->bc = t->class_logits = t->class_pred = -1;
  t->memory = t->memory_g = t->memory_b = -1;
  t->dO = t->dE = t->dX = t->dP = t->dZ = -1;
  t->dec_norm = t->dec_norm_g = t->dec_norm_b = -1;
  t->block = data, t->block_floats = (long)n * a->L * b->L;
  t->cfg.n_layers = 0; // no layers of its own (t->layers is NULL)
  t->cfg.n_dec_layers = 0;
  t->cfg.H = 1;
  for (int k = 0; k < n; k++) {
    const SimLevel *lv = &s->levels[k];
    const TraceTensor *x = &a->t[lv->src_a], *y = &b->t[lv->src_b];
    TraceTensor *m = &tt[k];
    snprintf(m->name, sizeof m->name, "sim.%s", lv->name);
    m->kind = T_SIM;
    m->layer = -1;
    m->heads = 1;
    m->rows = a->L, m->cols = b->L, m->stride = b->L;
    m->data = data + (size_t)k * a->L * b->L;
    m->row_axis = AXIS_TOKEN, m->col_axis = AXIS_TOKEN2;
    m->title = "Cosine similarity of the two sentences' vectors";
    m->symbol = "\\cos";
    m->tex = "\\cos(z_i, z'_j) = \\frac{z_i \\cdot z'_j}{\\lVert z_i \\rVert\\, \\lVert z'_j \\rVert}";
    m->n_inputs = 0;
    for (int i = 0; i < a->L; i++)
      for (int j = 0; j < b->L; j++)
        m->data[(size_t)i * b->L + j] = (float)sim_cos(x, i, y, j, NULL, NULL, NULL);
  }
  sim_set_word(s, -1, -1);
  return s;
}

Sim *sim_new(const Trace *a, const Trace *b, Err *err) {
  size_t n = sim_bytes(a, b);
  void *mem = n ? aligned_alloc(16, ALIGN16(n)) : NULL;
  if (n && !mem) {
    err_set(err, "out of memory for the similarity of two sentences");
    return NULL;
  }
  Sim *s = sim_init(mem, n, a, b, err);
  if (!s) free(mem);
  return s;
}

void sim_free(Sim *s) { free(s); }

void sim_set_word(Sim *s, int ia, int ib) {
  const Tokens *ta = &s->a->tokens, *tb = &s->b->tokens;
  s->word_default = ia < 0 || ib < 0 || ia >= ta->n || ib >= tb->n;
  if (s->word_default) {
    ia = ib = -1;
    for (int i = ta->n - 1; i >= 0 && ia < 0; i--) {
      if (ta->unknown[i]) continue;
      for (int j = tb->n - 1; j >= 0; j--)
        if (!tb->unknown[j] && tb->ids[j] == ta->ids[i]) {
          ia = i, ib = j;
          break;
        }
    }
  }
  s->word_a = ia, s->word_b = ib;
  for (int k = 0; k < s->n_levels; k++)
    s->line[k] = ia >= 0 ? s->trace.t[k].data[(size_t)ia * s->trace.t[k].stride + ib] : 0.0f;
}

const Sim *sim_of_trace(const Trace *t) {
  // only sim_init makes T_SIM tensors, and only in a Sim's trace, its first member
  if (!t || t->n < 1 || !t->t || t->t[0].kind != T_SIM) return NULL;
  return (const Sim *)t;
}

int sim_level_of(const Sim *s, int k) { return k >= 0 && k < s->n_levels ? k : -1; }
