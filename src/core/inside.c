// inside.c -- see inside.h: the logit lens, rollout, saliency and neurons of a finished pass.
#include "inside.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backward.h"    // defines: backward_new, backward_run
#include "gelu_tanh.h"   // defines: gelu_tanh_rows
#include "mat.h"         // defines: Mat, mat_*
#include "modern_rows.h" // defines: rmsnorm_rows

static const char *const VIEW_NAMES[INSIDE_COUNT] = {"",         "lens",    "rollout", "headview",
                                                     "saliency", "neurons", "kvcache", "stored"};

const char *inside_view_name(InsideView k) { return k > 0 && k < INSIDE_COUNT ? VIEW_NAMES[k] : ""; }

InsideView inside_view_parse(const char *name) {
  for (int k = 1; k < INSIDE_COUNT; k++)
    if (!strcmp(name, VIEW_NAMES[k])) return (InsideView)k;
  if (!strcmp(name, "logit-lens") || !strcmp(name, "logit_lens")) return INSIDE_LENS;
  if (!strcmp(name, "head-view") || !strcmp(name, "head_view")) return INSIDE_HEADVIEW;
  if (!strcmp(name, "kv-cache") || !strcmp(name, "kv_cache")) return INSIDE_KVCACHE;
  if (!strcmp(name, "weights-as-stored") || !strcmp(name, "weights_as_stored") ||
      !strcmp(name, "quantized") || !strcmp(name, "quantization") || !strcmp(name, "as-stored") ||
      !strcmp(name, "as_stored"))
    return INSIDE_STORED;
  return INSIDE_NONE;
}

bool inside_view_available(const Trace *t, InsideView k) {
  if (t->T > 0 || t->cfg.n_layers < 1 || !t->layers) return false;
  switch (k) {
  case INSIDE_LENS: return inside_has_lens(t);
  case INSIDE_SALIENCY: return t->pred >= 0 && !t->edits;
  case INSIDE_ROLLOUT:
  case INSIDE_HEADVIEW:
  case INSIDE_NEURONS: return true;
  case INSIDE_KVCACHE: return t->cfg.causal && t->pred >= 0;    // what --generate keeps (forward.h: KVCache)
  case INSIDE_STORED: return t->model && t->model->stored_path; // a quantized GGUF file's model
  default: return false;
  }
}

bool inside_has_lens(const Trace *t) { return t->T == 0 && (t->pred >= 0 || t->class_pred >= 0); }

int inside_lens_cols(const Trace *t) {
  if (!inside_has_lens(t)) return 0;
  return t->pred >= 0 ? t->cfg.V : t->model->n_classes;
}

long inside_lens_floats(const Trace *t) {
  if (!inside_has_lens(t)) return 0;
  long rows = t->pred >= 0 ? t->L : 1;
  return (long)t->cfg.n_layers * rows * inside_lens_cols(t);
}

// x [rows, D] (contiguous) through the head's norms: the final LayerNorm, then BERT's transform
// act(x·W_tᵀ + b_t) and its LayerNorm, as model_forward does; in place (tmp: rows·D floats).
// A today's decoder's final RMSNorm is forward.c's own (modern_rows.h's rmsnorm_rows), so that the
// last layer's lens is pred to the bit.
static void head_norms(const Trace *t, Mat x, Mat tmp) {
  const Model *m = t->model;
  const ModelConfig *c = &t->cfg;
  if (m->has_final_norm && m->norm_weight && c->rms_norm)
    rmsnorm_rows(x, x, m->norm_weight, c->ln_eps, c->rms_offset, NULL);
  else if (m->has_final_norm && m->norm_weight)
    mat_layernorm_rows(x, x, m->norm_weight, m->norm_bias, c->ln_eps);
  if (m->has_head_transform) {
    mat_matmul_t(tmp, x, mat_view(m->head_transform_weight, c->D, c->D), m->head_transform_bias);
    if (c->activation == ACT_RELU)
      mat_relu(tmp, tmp);
    else if (c->activation == ACT_GELU)
      mat_gelu(tmp, tmp);
    else
      gelu_tanh_rows(tmp, tmp);
    mat_layernorm_rows(x, tmp, m->head_norm_weight, m->head_norm_bias, c->ln_eps);
  }
}

static Mat out_of(const Trace *t, int l) {
  const TraceTensor *o = &t->t[t->layers[l].out];
  Mat m = mat_view(o->data, o->rows, o->cols);
  m.stride = o->stride;
  return m;
}

bool inside_lens(const Trace *t, float *p, Err *err) {
  if (!inside_has_lens(t))
    return err_set(err, "the logit lens needs a prediction head or a classifier (this model has neither%s)",
                   t->T > 0 ? "; an encoder-decoder's decoder is not read yet" : "");
  const Model *m = t->model;
  const ModelConfig *c = &t->cfg;
  int L = t->L, D = c->D, N = c->n_layers;
  float *buf = malloc(sizeof(float) * (size_t)L * D * 2);
  if (!buf) return err_set(err, "out of memory");
  Mat x = mat_view(buf, L, D), tmp = mat_view(buf + (size_t)L * D, L, D);
  for (int l = 0; l < N; l++) {
    mat_copy(x, out_of(t, l));
    if (t->pred >= 0) { // a head: softmax(head(h_ℓ)) [L, V], temperature 1
      int V = c->V;
      head_norms(t, x, tmp);
      Mat pl = mat_view(p + (size_t)l * L * V, L, V);
      mat_matmul_t(pl, x, mat_view(m->head_weight, V, D), m->head_bias);
      mat_softmax_rows(pl, pl);
    } else { // a classifier: LN, the mean over positions (in double), the class scores
      int C = m->n_classes;
      if (m->has_final_norm && m->norm_weight)
        mat_layernorm_rows(x, x, m->norm_weight, m->norm_bias, c->ln_eps);
      for (int d = 0; d < D; d++) {
        double s = 0;
        for (int i = 0; i < L; i++) s += MAT_AT(x, i, d);
        tmp.data[d] = (float)(s / L);
      }
      Mat pl = mat_view(p + (size_t)l * C, 1, C);
      mat_matmul_t(pl, mat_view(tmp.data, 1, D), mat_view(m->classifier_weight, C, D), m->classifier_bias);
      mat_softmax_rows(pl, pl);
    }
  }
  free(buf);
  return true;
}

bool inside_rollout(const Trace *t, float *R, Err *err) {
  const ModelConfig *c = &t->cfg;
  int L = t->L, H = c->H, N = c->n_layers;
  double *ah = malloc(sizeof(double) * (size_t)L * L * 3), *prev = ah + (size_t)L * L,
         *cur = prev + (size_t)L * L;
  if (!ah) return err_set(err, "out of memory");
  for (int l = 0; l < N; l++) {
    const TraceTensor *A = &t->t[t->layers[l].A];
    // Â = 0.5·mean_h A + 0.5·I, rows renormalized
    for (int i = 0; i < L; i++) {
      double row = 0;
      for (int j = 0; j < L; j++) {
        double s = 0;
        for (int h = 0; h < H; h++) s += trace_at(A, h, i, j);
        double v = 0.5 * (s / H) + (i == j ? 0.5 : 0.0);
        ah[(size_t)i * L + j] = v;
        row += v;
      }
      for (int j = 0; j < L; j++) ah[(size_t)i * L + j] /= row;
    }
    // R_ℓ = Â_ℓ · R_{ℓ−1}
    for (int i = 0; i < L; i++)
      for (int j = 0; j < L; j++) {
        double s = 0;
        if (l == 0)
          s = ah[(size_t)i * L + j];
        else
          for (int k = 0; k < L; k++) s += ah[(size_t)i * L + k] * prev[(size_t)k * L + j];
        cur[(size_t)i * L + j] = s;
        R[((size_t)l * L + i) * L + j] = (float)s;
      }
    memcpy(prev, cur, sizeof(double) * (size_t)L * L);
  }
  free(ah);
  return true;
}

bool inside_saliency(const Trace *t, int pos, int target, float *s, int *pos_out, int *target_out, Err *err) {
  if (t->pred < 0 || t->T > 0)
    return err_set(err, "saliency needs a model with a prediction head (a word to explain)%s",
                   t->T > 0 ? "; an encoder-decoder's is not computed yet" : "");
  int L = t->L, V = t->cfg.V, D = t->cfg.D;
  if (pos < 0) pos = L - 1;
  if (pos >= L) return err_set(err, "saliency: position %d is past the sentence's %d tokens", pos + 1, L);
  if (target < 0) { // the top token of pred at pos (the first on a tie)
    const float *p = t->t[t->pred].data + (size_t)pos * V;
    target = 0;
    for (int v = 1; v < V; v++)
      if (p[v] > p[target]) target = v;
  }
  if (target >= V) return err_set(err, "saliency: token id %d is not in the %d-word vocabulary", target, V);
  int *tg = malloc(sizeof(int) * (size_t)L);
  if (!tg) return err_set(err, "out of memory");
  for (int i = 0; i < L; i++) tg[i] = i == pos ? target : -1;
  TraceGrad *g = backward_new(t, tg, L, err); // loss = −log p̂[pos, target]: dL/dX = −∂ log p̂/∂X
  free(tg);
  if (!g) return false;
  backward_run(g);
  const float *dX = g->d[t->X], *X = t->t[t->X].data;
  double total = 0;
  for (int j = 0; j < L; j++) {
    double n2 = 0;
    for (int d = 0; d < D; d++) {
      double v = (double)dX[(size_t)j * D + d] * X[(size_t)j * D + d];
      n2 += v * v;
    }
    s[j] = (float)sqrt(n2);
    total += s[j];
  }
  for (int j = 0; j < L; j++) s[j] = total > 0 ? (float)(s[j] / total) : 0.0f;
  backward_free(g);
  if (pos_out) *pos_out = pos;
  if (target_out) *target_out = target;
  return true;
}

// Inserts (v, i) into the descending top-k lists of length *n (at most k).
static void top_insert(float *val, int *idx, int *n, int k, float v, int i) {
  if (*n == k && !(v > val[k - 1])) return;
  int at = *n < k ? (*n)++ : k - 1;
  while (at > 0 && v > val[at - 1]) {
    val[at] = val[at - 1], idx[at] = idx[at - 1];
    at--;
  }
  val[at] = v, idx[at] = i;
}

int inside_top_neurons(const Trace *t, int layer, int pos, int k, int *idx, float *act) {
  if (layer < 0 || layer >= t->cfg.n_layers || pos < 0 || pos >= t->L || k <= 0) return 0;
  const TraceTensor *h = &t->t[t->layers[layer].ffn_hidden];
  int n = 0;
  for (int u = 0; u < h->cols; u++) top_insert(act, idx, &n, k, trace_at(h, 0, pos, u), u);
  return n;
}

int inside_neuron_tokens(const Trace *t, int layer, int neuron, int k, int *ids, float *logit) {
  if (t->pred < 0 || t->T > 0 || layer < 0 || layer >= t->cfg.n_layers || k <= 0) return 0;
  const TraceTensor *w2 = &t->t[t->layers[layer].W2]; // displayed [F, D]: row n is unit n's direction
  int D = t->cfg.D, V = t->cfg.V;
  if (neuron < 0 || neuron >= w2->rows) return 0;
  float *buf = malloc(sizeof(float) * ((size_t)D * 2 + (size_t)V));
  if (!buf) return 0;
  Mat x = mat_view(buf, 1, D), tmp = mat_view(buf + D, 1, D), z = mat_view(buf + 2 * D, 1, V);
  for (int d = 0; d < D; d++) buf[d] = trace_at(w2, 0, neuron, d);
  head_norms(t, x, tmp);
  mat_matmul_t(z, x, mat_view(t->model->head_weight, V, D), NULL); // the direction: no bias
  int n = 0;
  for (int v = 0; v < V; v++) top_insert(logit, ids, &n, k, z.data[v], v);
  free(buf);
  return n;
}
