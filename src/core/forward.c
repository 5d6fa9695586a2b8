// forward.c -- see forward.h.
// Legend: L tokens, V vocabulary, D model width, H heads, dk = D/H, F feed-forward width.
#include "forward.h"

#include <math.h>
#include <string.h>

#include "mat.h" // defines: Mat, mat_matmul_t, mat_softmax_rows, mat_layernorm_rows ...

static Mat tmat(const TraceTensor *x) { // one-head tensor as a Mat (activations only)
  EXPECT(x->heads == 1 && !x->transposed);
  return (Mat){x->data, x->rows, x->cols, x->stride};
}

static Mat head(const TraceTensor *x, int h) { // head h of an [H, rows, cols] tensor
  return (Mat){x->data + (size_t)h * x->rows * x->cols, x->rows, x->cols, x->cols};
}

void forward_posenc(float *P, int L, int D) {
  for (int i = 0; i < L; i++)
    for (int k = 0; k < D; k += 2) {
      double ang = i / pow(10000.0, (double)k / D);
      P[(size_t)i * D + k] = (float)sin(ang);
      if (k + 1 < D) P[(size_t)i * D + k + 1] = (float)cos(ang);
    }
}

// qkv[L, 3D] = a_in[L, D] · in_projᵀ + b, then split: Q[h][i][j] = qkv[i][h·dk + j], and so on.
static void attention_projections(Trace *t, int l, const TraceTensor *a_in) {
  const ModelConfig *c = &t->cfg;
  int L = t->L, D = c->D, H = c->H, dk = D / H;
  const LayerWeights *w = &t->model->layers[l];
  const TraceLayer *y = &t->layers[l];
  Mat qkv = mat_view(t->scratch, L, 3 * D);
  mat_matmul_t(qkv, tmat(a_in), mat_view(w->in_proj_weight, 3 * D, D), w->in_proj_bias);
  const TraceTensor *dst[3] = {&t->t[y->Q], &t->t[y->K], &t->t[y->V]};
  for (int part = 0; part < 3; part++)
    for (int h = 0; h < H; h++)
      for (int i = 0; i < L; i++)
        memcpy(dst[part]->data + ((size_t)h * L + i) * dk, &MAT_AT(qkv, i, part * D + h * dk),
               sizeof(float) * (size_t)dk);
}

static void layer_forward(Trace *t, int l) {
  const ModelConfig *c = &t->cfg;
  const LayerWeights *w = &t->model->layers[l];
  const TraceLayer *y = &t->layers[l];
  TraceTensor *T = t->t;
  int L = t->L, D = c->D, H = c->H, dk = D / H;

  // pre-norm: the attention sees LN1(in); post-norm: the input itself
  const TraceTensor *a_in = &T[y->in];
  if (c->norm_first) {
    mat_layernorm_rows(tmat(&T[y->norm1]), tmat(&T[y->in]), w->norm1_weight, w->norm1_bias, c->ln_eps);
    a_in = &T[y->norm1];
  }
  attention_projections(t, l, a_in); // Q, K, V [H, L, dk]

  // S_h = Q_h K_hᵀ / √dk  [H, L, L], then the causal mask, then A_h = softmax(S_h)
  const TraceTensor *scores = &T[c->causal ? y->S_raw : y->S];
  float inv_sqrt_dk = 1.0f / sqrtf((float)dk);
  for (int h = 0; h < H; h++) {
    Mat s = head(scores, h);
    mat_matmul_t(s, head(&T[y->Q], h), head(&T[y->K], h), NULL);
    mat_scale(s, inv_sqrt_dk);
    if (c->causal) {
      Mat m = head(&T[y->S], h);
      mat_copy(m, s);
      for (int i = 0; i < L; i++)
        for (int j = i + 1; j < L; j++) MAT_AT(m, i, j) = -INFINITY;
    }
    mat_softmax_rows(head(&T[y->A], h), head(&T[y->S], h));
    mat_matmul(head(&T[y->AV], h), head(&T[y->A], h), head(&T[y->V], h)); // A_h V_h [L, dk]
  }

  // concat[i, h·dk + j] = AV[h, i, j]  [L, D]
  Mat concat = tmat(&T[y->concat]);
  for (int h = 0; h < H; h++)
    for (int i = 0; i < L; i++)
      memcpy(&MAT_AT(concat, i, h * dk), T[y->AV].data + ((size_t)h * L + i) * dk, sizeof(float) * (size_t)dk);

  // attn = concat · W^oᵀ + b^o, res1 = in + attn  [L, D]
  mat_matmul_t(tmat(&T[y->attn]), concat, mat_view(w->out_proj_weight, D, D), w->out_proj_bias);
  mat_add(tmat(&T[y->res1]), tmat(&T[y->in]), tmat(&T[y->attn]));

  // the FFN input: post-norm LN1(res1), pre-norm LN2(res1)
  const TraceTensor *f_in;
  if (c->norm_first) {
    mat_layernorm_rows(tmat(&T[y->norm2]), tmat(&T[y->res1]), w->norm2_weight, w->norm2_bias, c->ln_eps);
    f_in = &T[y->norm2];
  } else {
    mat_layernorm_rows(tmat(&T[y->norm1]), tmat(&T[y->res1]), w->norm1_weight, w->norm1_bias, c->ln_eps);
    f_in = &T[y->norm1];
  }

  // ffn_pre = f_in · W_1ᵀ + b_1 [L, F], hidden = act(ffn_pre), ffn = hidden · W_2ᵀ + b_2 [L, D]
  mat_matmul_t(tmat(&T[y->ffn_pre]), tmat(f_in), mat_view(w->linear1_weight, c->F, D), w->linear1_bias);
  if (c->activation == ACT_GELU) mat_gelu(tmat(&T[y->ffn_hidden]), tmat(&T[y->ffn_pre]));
  else mat_relu(tmat(&T[y->ffn_hidden]), tmat(&T[y->ffn_pre]));
  mat_matmul_t(tmat(&T[y->ffn]), tmat(&T[y->ffn_hidden]), mat_view(w->linear2_weight, D, c->F), w->linear2_bias);

  // post-norm: out = LN2(f_in + ffn); pre-norm: out = res1 + ffn
  if (c->norm_first) {
    mat_add(tmat(&T[y->res2]), tmat(&T[y->res1]), tmat(&T[y->ffn]));
  } else {
    mat_add(tmat(&T[y->res2]), tmat(f_in), tmat(&T[y->ffn]));
    mat_layernorm_rows(tmat(&T[y->norm2]), tmat(&T[y->res2]), w->norm2_weight, w->norm2_bias, c->ln_eps);
  }
}

void model_forward(Trace *t) {
  const ModelConfig *c = &t->cfg;
  const Model *m = t->model;
  TraceTensor *T = t->t;
  int L = t->L, D = c->D, V = c->V;

  // O [L, V] one-hot; X = O·E [L, D] is row id(x_i) of E, exactly (a product with 0s and one 1)
  memset(T[t->O].data, 0, sizeof(float) * (size_t)L * V);
  for (int i = 0; i < L; i++) {
    int id = t->tokens.ids[i];
    T[t->O].data[(size_t)i * V + id] = 1.0f;
    memcpy(T[t->X].data + (size_t)i * D, m->embed + (size_t)id * D, sizeof(float) * (size_t)D);
  }
  if (!t->pos_ready) {
    forward_posenc(T[t->P].data, L, D);
    t->pos_ready = true;
  }
  mat_add(tmat(&T[t->Z]), tmat(&T[t->X]), tmat(&T[t->P]));

  for (int l = 0; l < c->n_layers; l++) layer_forward(t, l);

  if (t->pred >= 0) { // prediction head: softmax(LN(out) · W_outᵀ + b_out) [L, V]
    const TraceTensor *x = &T[t->layers[c->n_layers - 1].out];
    if (t->final_norm >= 0) {
      mat_layernorm_rows(tmat(&T[t->final_norm]), tmat(x), m->norm_weight, m->norm_bias, c->ln_eps);
      x = &T[t->final_norm];
    }
    mat_matmul_t(tmat(&T[t->logits]), tmat(x), mat_view(m->head_weight, V, D), m->head_bias);
    mat_softmax_rows(tmat(&T[t->pred]), tmat(&T[t->logits]));
  }
}
