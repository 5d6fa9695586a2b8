// trace.c -- see trace.h. Builds the tensor table (names, shapes, notation) and carves the
// activation block; forward.c fills the numbers.
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h" // defines: gemm_supported, gemm_packed_floats

typedef struct {
  Trace *t;
  long *own; // floats each tensor needs in the activation block (0 for views)
  int cap;
} Builder;

static int add(Builder *b, const char *name, TensorKind kind, int layer, int heads, int rows, int cols,
               TraceAxis ra, TraceAxis ca, const char *title, const char *symbol, const char *tex) {
  Trace *t = b->t;
  EXPECT(t->n < b->cap);
  int i = t->n++;
  TraceTensor *x = &t->t[i];
  memset(x, 0, sizeof *x);
  snprintf(x->name, sizeof x->name, "%s", name);
  x->kind = kind;
  x->layer = layer;
  x->heads = heads;
  x->rows = rows;
  x->cols = cols;
  x->stride = cols;
  x->row_axis = ra;
  x->col_axis = ca;
  x->title = title;
  x->symbol = symbol;
  x->tex = tex;
  b->own[i] = (long)heads * rows * cols;
  return i;
}

// A tensor that shares memory owned elsewhere (a weight, or another tensor's values).
static int add_view(Builder *b, const char *name, TensorKind kind, int layer, int rows, int cols,
                    TraceAxis ra, TraceAxis ca, float *data, bool transposed, const char *title,
                    const char *symbol, const char *tex) {
  int i = add(b, name, kind, layer, 1, rows, cols, ra, ca, title, symbol, tex);
  TraceTensor *x = &b->t->t[i];
  x->data = data;
  x->transposed = transposed;
  x->stride = transposed ? rows : cols;
  x->is_weight = data != NULL && kind != T_LAYER_IN;
  b->own[i] = 0;
  return i;
}

static void inputs(Trace *t, int i, int a, int b, int c, int d) {
  int in[4] = {a, b, c, d};
  TraceTensor *x = &t->t[i];
  x->n_inputs = 0;
  for (int k = 0; k < 4; k++)
    if (in[k] >= 0) x->inputs[x->n_inputs++] = in[k];
}

static void step(Trace *t, StepKind k, int layer, int result) {
  t->steps[t->n_steps++] = (TraceStep){k, layer, result, trace_step_name(k)};
}

static char *lname(char *buf, int l, const char *s) {
  snprintf(buf, 24, "l%d.%s", l, s);
  return buf;
}

static void add_layer(Builder *b, int l, int in) {
  Trace *t = b->t;
  const ModelConfig *c = &t->cfg;
  const LayerWeights *w = &t->model->layers[l];
  int L = t->L, D = c->D, H = c->H, dk = D / H, F = c->F;
  TraceLayer *y = &t->layers[l];
  memset(y, -1, sizeof *y);
  char n[24];
  y->in = add_view(b, lname(n, l, "in"), T_LAYER_IN, l, L, D, AXIS_TOKEN, AXIS_MODEL, t->t[in].data, false,
                   "Layer input", "Z", l == 0 ? "Z" : "Z \\leftarrow \\text{output of the layer before}");
  t->t[y->in].extra = true;
  t->t[y->in].is_weight = false;
  inputs(t, y->in, in, -1, -1, -1);
  int a_in = y->in;
  if (c->norm_first) {
    y->norm1_g = add_view(b, lname(n, l, "norm1.gamma"), T_NORM_W, l, 1, D, AXIS_TOKEN, AXIS_MODEL,
                          w->norm1_weight, false, "LayerNorm gain", "\\gamma_1", "\\gamma_1");
    y->norm1_b = add_view(b, lname(n, l, "norm1.beta"), T_NORM_W, l, 1, D, AXIS_TOKEN, AXIS_MODEL,
                          w->norm1_bias, false, "LayerNorm shift", "\\beta_1", "\\beta_1");
    y->norm1 = add(
        b, lname(n, l, "norm1"), T_NORM_IN, l, 1, L, D, AXIS_TOKEN, AXIS_MODEL,
        "LayerNorm before attention (pre-norm)", "\\mathrm{LN}_1(Z)",
        "\\mathrm{LN}_1(Z) = \\gamma_1 \\cdot \\frac{Z - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}} + \\beta_1");
    inputs(t, y->norm1, y->in, y->norm1_g, y->norm1_b, -1);
    a_in = y->norm1;
  }
  // W^q = in_proj_weight[0:D]ᵀ: the stored rows 0..D-1 are W^q's columns.
  y->Wq = add_view(b, lname(n, l, "Wq"), T_PROJ_W, l, D, D, AXIS_MODEL, AXIS_QKV, w->in_proj_weight, true,
                   "Query weights", "W^q", "W^q = [W^q_1 \\cdots W^q_H] \\in \\mathbb{R}^{D \\times D}");
  y->Wk = add_view(b, lname(n, l, "Wk"), T_PROJ_W, l, D, D, AXIS_MODEL, AXIS_QKV,
                   w->in_proj_weight + (size_t)D * D, true, "Key weights", "W^k",
                   "W^k = [W^k_1 \\cdots W^k_H] \\in \\mathbb{R}^{D \\times D}");
  y->Wv = add_view(b, lname(n, l, "Wv"), T_PROJ_W, l, D, D, AXIS_MODEL, AXIS_QKV,
                   w->in_proj_weight + (size_t)2 * D * D, true, "Value weights", "W^v",
                   "W^v = [W^v_1 \\cdots W^v_H] \\in \\mathbb{R}^{D \\times D}");
  y->bq = add_view(b, lname(n, l, "bq"), T_PROJ_B, l, 1, D, AXIS_TOKEN, AXIS_QKV, w->in_proj_bias, false,
                   "Query bias", "b^q", "b^q");
  y->bk = add_view(b, lname(n, l, "bk"), T_PROJ_B, l, 1, D, AXIS_TOKEN, AXIS_QKV, w->in_proj_bias + D, false,
                   "Key bias", "b^k", "b^k");
  y->bv = add_view(b, lname(n, l, "bv"), T_PROJ_B, l, 1, D, AXIS_TOKEN, AXIS_QKV, w->in_proj_bias + 2 * D,
                   false, "Value bias", "b^v", "b^v");
  y->Q = add(b, lname(n, l, "Q"), T_PROJ, l, H, L, dk, AXIS_TOKEN, AXIS_HEADDIM, "Queries", "Q_h",
             "Q = Z W^q + b^q,\\quad Q_h = Z W^q_h + b^q_h");
  y->K = add(b, lname(n, l, "K"), T_PROJ, l, H, L, dk, AXIS_TOKEN, AXIS_HEADDIM, "Keys", "K_h",
             "K = Z W^k + b^k,\\quad K_h = Z W^k_h + b^k_h");
  y->V = add(b, lname(n, l, "V"), T_PROJ, l, H, L, dk, AXIS_TOKEN, AXIS_HEADDIM, "Values", "V_h",
             "V = Z W^v + b^v,\\quad V_h = Z W^v_h + b^v_h");
  inputs(t, y->Q, a_in, y->Wq, y->bq, -1);
  inputs(t, y->K, a_in, y->Wk, y->bk, -1);
  inputs(t, y->V, a_in, y->Wv, y->bv, -1);
  const char *scores_tex = "S_h = \\frac{Q_h K_h^\\top}{\\sqrt{d_k}}";
  if (c->causal) {
    y->S_raw = add(b, lname(n, l, "S_raw"), T_SCORES, l, H, L, L, AXIS_TOKEN, AXIS_TOKEN, "Scaled scores",
                   "S_h", scores_tex);
    inputs(t, y->S_raw, y->Q, y->K, -1, -1);
    t->t[y->S_raw].extra = true;
    y->S = add(b, lname(n, l, "S"), T_MASKED, l, H, L, L, AXIS_TOKEN, AXIS_TOKEN, "Causal mask", "S_h + M",
               "S_h \\leftarrow S_h + M,\\quad M_{ij} = -\\infty \\text{ for } j > i");
    inputs(t, y->S, y->S_raw, -1, -1, -1);
  } else {
    y->S = add(b, lname(n, l, "S"), T_SCORES, l, H, L, L, AXIS_TOKEN, AXIS_TOKEN, "Scaled scores", "S_h",
               scores_tex);
    inputs(t, y->S, y->Q, y->K, -1, -1);
  }
  y->A = add(b, lname(n, l, "A"), T_ATTN, l, H, L, L, AXIS_TOKEN, AXIS_TOKEN, "Attention weights", "A_h",
             "A_h = \\operatorname{softmax}\\left(\\frac{Q_h K_h^\\top}{\\sqrt{d_k}}\\right)");
  inputs(t, y->A, y->S, -1, -1, -1);
  y->AV = add(b, lname(n, l, "AV"), T_AV, l, H, L, dk, AXIS_TOKEN, AXIS_HEADDIM, "Weighted values",
              "\\mathrm{head}_h", "\\mathrm{head}_h = A_h V_h");
  inputs(t, y->AV, y->A, y->V, -1, -1);
  y->concat = add(b, lname(n, l, "concat"), T_CONCAT, l, 1, L, D, AXIS_TOKEN, AXIS_QKV, "Heads concatenated",
                  "\\mathrm{Concat}", "\\mathrm{Concat} = [\\mathrm{head}_1 \\cdots \\mathrm{head}_H]");
  inputs(t, y->concat, y->AV, -1, -1, -1);
  y->Wo = add_view(b, lname(n, l, "Wo"), T_OUT_W, l, D, D, AXIS_QKV, AXIS_MODEL, w->out_proj_weight, true,
                   "Output weights", "W^o", "W^o \\in \\mathbb{R}^{D \\times D}");
  y->bo = add_view(b, lname(n, l, "bo"), T_OUT_B, l, 1, D, AXIS_TOKEN, AXIS_MODEL, w->out_proj_bias, false,
                   "Output bias", "b^o", "b^o");
  y->attn = add(b, lname(n, l, "attn"), T_ATTN_OUT, l, 1, L, D, AXIS_TOKEN, AXIS_MODEL, "Output projection",
                "\\mathrm{MultiHead}(Z)", "\\mathrm{MultiHead}(Z) = \\mathrm{Concat} \\cdot W^o + b^o");
  inputs(t, y->attn, y->concat, y->Wo, y->bo, -1);
  y->res1 = add(b, lname(n, l, "res1"), T_RESIDUAL, l, 1, L, D, AXIS_TOKEN, AXIS_MODEL, "Residual",
                "Z + \\mathrm{MultiHead}(Z)", "Z + \\mathrm{MultiHead}(Z)");
  inputs(t, y->res1, y->in, y->attn, -1, -1);
  int f_in;
  if (c->norm_first) {
    y->norm2_g = add_view(b, lname(n, l, "norm2.gamma"), T_NORM_W, l, 1, D, AXIS_TOKEN, AXIS_MODEL,
                          w->norm2_weight, false, "LayerNorm gain", "\\gamma_2", "\\gamma_2");
    y->norm2_b = add_view(b, lname(n, l, "norm2.beta"), T_NORM_W, l, 1, D, AXIS_TOKEN, AXIS_MODEL,
                          w->norm2_bias, false, "LayerNorm shift", "\\beta_2", "\\beta_2");
    y->norm2 = add(b, lname(n, l, "norm2"), T_NORM, l, 1, L, D, AXIS_TOKEN, AXIS_MODEL,
                   "Residual, then LayerNorm (pre-norm)", "x",
                   "x = \\mathrm{LN}_2(Z + \\mathrm{MultiHead}(\\mathrm{LN}_1(Z)))");
    inputs(t, y->norm2, y->res1, y->norm2_g, y->norm2_b, -1);
    f_in = y->norm2;
  } else {
    y->norm1_g = add_view(b, lname(n, l, "norm1.gamma"), T_NORM_W, l, 1, D, AXIS_TOKEN, AXIS_MODEL,
                          w->norm1_weight, false, "LayerNorm gain", "\\gamma_1", "\\gamma_1");
    y->norm1_b = add_view(b, lname(n, l, "norm1.beta"), T_NORM_W, l, 1, D, AXIS_TOKEN, AXIS_MODEL,
                          w->norm1_bias, false, "LayerNorm shift", "\\beta_1", "\\beta_1");
    y->norm1 = add(b, lname(n, l, "norm1"), T_NORM, l, 1, L, D, AXIS_TOKEN, AXIS_MODEL,
                   "Residual and LayerNorm", "x", "x = \\mathrm{LayerNorm}(Z + \\mathrm{MultiHead}(Z))");
    inputs(t, y->norm1, y->res1, y->norm1_g, y->norm1_b, -1);
    f_in = y->norm1;
  }
  y->W1 = add_view(b, lname(n, l, "W1"), T_FFN1_W, l, D, F, AXIS_MODEL, AXIS_FFN, w->linear1_weight, true,
                   "Feed-forward weights 1", "W_1", "W_1 \\in \\mathbb{R}^{D \\times F}");
  y->b1 = add_view(b, lname(n, l, "b1"), T_FFN1_B, l, 1, F, AXIS_TOKEN, AXIS_FFN, w->linear1_bias, false,
                   "Feed-forward bias 1", "b_1", "b_1");
  y->ffn_pre = add(b, lname(n, l, "ffn_pre"), T_FFN_PRE, l, 1, L, F, AXIS_TOKEN, AXIS_FFN,
                   "Feed-forward, before the activation", "x W_1 + b_1", "x W_1 + b_1");
  inputs(t, y->ffn_pre, f_in, y->W1, y->b1, -1);
  t->t[y->ffn_pre].extra = true;
  bool gelu = c->activation == ACT_GELU;
  y->ffn_hidden = add(b, lname(n, l, "ffn_hidden"), T_FFN_HIDDEN, l, 1, L, F, AXIS_TOKEN, AXIS_FFN,
                      gelu ? "Feed-forward hidden layer (GELU)" : "Feed-forward hidden layer (ReLU)", "h",
                      gelu ? "h = \\mathrm{GELU}(x W_1 + b_1),\\quad \\mathrm{GELU}(u) = u\\,\\Phi(u)"
                           : "h = \\max(0,\\, x W_1 + b_1)");
  inputs(t, y->ffn_hidden, y->ffn_pre, -1, -1, -1);
  y->W2 = add_view(b, lname(n, l, "W2"), T_FFN2_W, l, F, D, AXIS_FFN, AXIS_MODEL, w->linear2_weight, true,
                   "Feed-forward weights 2", "W_2", "W_2 \\in \\mathbb{R}^{F \\times D}");
  y->b2 = add_view(b, lname(n, l, "b2"), T_FFN2_B, l, 1, D, AXIS_TOKEN, AXIS_MODEL, w->linear2_bias, false,
                   "Feed-forward bias 2", "b_2", "b_2");
  y->ffn = add(b, lname(n, l, "ffn"), T_FFN_OUT, l, 1, L, D, AXIS_TOKEN, AXIS_MODEL, "Feed-forward output",
               "\\mathrm{FFN}(x)", "\\mathrm{FFN}(x) = h W_2 + b_2");
  inputs(t, y->ffn, y->ffn_hidden, y->W2, y->b2, -1);
  if (c->norm_first) {
    y->res2 = add(b, lname(n, l, "res2"), T_RESIDUAL, l, 1, L, D, AXIS_TOKEN, AXIS_MODEL,
                  "Residual: the layer output (pre-norm)", "Z'",
                  "Z' = Z + \\mathrm{MultiHead}(\\mathrm{LN}_1(Z)) + \\mathrm{FFN}(x)");
    inputs(t, y->res2, y->res1, y->ffn, -1, -1);
    y->out = add_view(b, lname(n, l, "out"), T_RESIDUAL, l, L, D, AXIS_TOKEN, AXIS_MODEL, t->t[y->res2].data,
                      false, "Layer output", "Z'", "Z' = Z + \\ldots + \\mathrm{FFN}(x)");
  } else {
    y->norm2_g = add_view(b, lname(n, l, "norm2.gamma"), T_NORM_W, l, 1, D, AXIS_TOKEN, AXIS_MODEL,
                          w->norm2_weight, false, "LayerNorm gain", "\\gamma_2", "\\gamma_2");
    y->norm2_b = add_view(b, lname(n, l, "norm2.beta"), T_NORM_W, l, 1, D, AXIS_TOKEN, AXIS_MODEL,
                          w->norm2_bias, false, "LayerNorm shift", "\\beta_2", "\\beta_2");
    y->res2 = add(b, lname(n, l, "res2"), T_RESIDUAL, l, 1, L, D, AXIS_TOKEN, AXIS_MODEL, "Residual",
                  "x + \\mathrm{FFN}(x)", "x + \\mathrm{FFN}(x)");
    inputs(t, y->res2, f_in, y->ffn, -1, -1);
    y->norm2 = add(b, lname(n, l, "norm2"), T_NORM, l, 1, L, D, AXIS_TOKEN, AXIS_MODEL,
                   "Residual and LayerNorm: the layer output", "Z'",
                   "Z' = \\mathrm{LayerNorm}(x + \\mathrm{FFN}(x))");
    inputs(t, y->norm2, y->res2, y->norm2_g, y->norm2_b, -1);
    t->t[y->norm2].extra = true;
    y->out = add_view(b, lname(n, l, "out"), T_NORM, l, L, D, AXIS_TOKEN, AXIS_MODEL, NULL, false,
                      "Layer output", "Z'", "Z' = \\mathrm{LayerNorm}(x + \\mathrm{FFN}(x))");
  }
  t->t[y->out].is_weight = false;
  inputs(t, y->out, c->norm_first ? y->res2 : y->norm2, -1, -1, -1);
}

// Points views of activations at their owners once the block is carved.
static void link_views(Trace *t) {
  for (int l = 0; l < t->cfg.n_layers; l++) {
    TraceLayer *y = &t->layers[l];
    int prev = l == 0 ? t->Z : t->layers[l - 1].out;
    t->t[y->in].data = t->t[prev].data;
    t->t[y->out].data = t->t[t->cfg.norm_first ? y->res2 : y->norm2].data;
  }
}

#define TRACE_MAX_FLOATS (1L << 29) // 2 GiB

Trace *trace_new(const Model *model, const Tokens *tokens, Err *err) {
  Trace *t = calloc(1, sizeof *t);
  if (!t) return err_set(err, "out of memory"), NULL;
  t->model = model;
  t->cfg = model->cfg;
  t->L = tokens->n;
  EXPECT(t->L > 0);
  const ModelConfig *c = &t->cfg;
  int L = t->L, D = c->D, V = c->V;
  int cap = 16 + 48 * c->n_layers;
  Builder b = {t, calloc((size_t)cap, sizeof(long)), cap};
  t->t = calloc((size_t)cap, sizeof(TraceTensor));
  t->steps = calloc((size_t)(8 + 16 * c->n_layers), sizeof(TraceStep));
  t->layers = calloc((size_t)c->n_layers, sizeof(TraceLayer));
  // copy the tokens
  t->tokens.n = L;
  size_t text = 0;
  for (int i = 0; i < L; i++) text += strlen(tokens->words[i]) + 1;
  t->tokens.ids = malloc(sizeof(int) * (size_t)L);
  t->tokens.words = malloc(sizeof(char *) * (size_t)L);
  t->tokens.unknown = malloc(sizeof(bool) * (size_t)L);
  t->tokens.block = malloc(text + 1);
  if (!b.own || !t->t || !t->steps || !t->layers || !t->tokens.ids || !t->tokens.words ||
      !t->tokens.unknown || !t->tokens.block)
    goto oom;
  char *p = t->tokens.block;
  for (int i = 0; i < L; i++) {
    t->tokens.ids[i] = tokens->ids[i];
    t->tokens.unknown[i] = tokens->unknown[i];
    size_t n = strlen(tokens->words[i]) + 1;
    memcpy(p, tokens->words[i], n);
    t->tokens.words[i] = p;
    p += n;
  }

  t->O = add(&b, "O", T_ONEHOT, -1, 1, L, V, AXIS_TOKEN, AXIS_VOCAB, "One-hot tokens", "O",
             "O \\in \\mathbb{R}^{L \\times V},\\quad O_{i,\\,\\mathrm{id}(x_i)} = 1");
  t->E = add_view(&b, "E", T_EMBED_W, -1, V, D, AXIS_VOCAB, AXIS_MODEL, model->embed, false,
                  "Embedding table", "E", "E \\in \\mathbb{R}^{V \\times D}");
  t->X = add(&b, "X", T_EMBED, -1, 1, L, D, AXIS_TOKEN, AXIS_MODEL, "Token embeddings", "Z",
             "Z = O E,\\quad E \\in \\mathbb{R}^{V \\times D}");
  inputs(t, t->X, t->O, t->E, -1, -1);
  t->P = add(&b, "P", T_POSENC, -1, 1, L, D, AXIS_TOKEN, AXIS_MODEL, "Positional encoding", "P",
             "p_{i,2k} = \\sin\\left(\\frac{i}{10000^{2k/D}}\\right),\\quad p_{i,2k+1} = "
             "\\cos\\left(\\frac{i}{10000^{2k/D}}\\right)");
  t->Z = add(&b, "Z", T_ADDPOS, -1, 1, L, D, AXIS_TOKEN, AXIS_MODEL, "Embeddings plus positions", "Z",
             "Z \\leftarrow Z + P");
  inputs(t, t->Z, t->X, t->P, -1, -1);
  int prev = t->Z;
  for (int l = 0; l < c->n_layers; l++) {
    add_layer(&b, l, prev);
    prev = t->layers[l].out;
  }
  t->final_norm = t->Wout = t->bout = t->logits = t->pred = -1;
  if (model->has_head) {
    int x = prev;
    if (model->has_final_norm) {
      int g = add_view(&b, "norm.gamma", T_NORM_W, -1, 1, D, AXIS_TOKEN, AXIS_MODEL, model->norm_weight,
                       false, "Final LayerNorm gain", "\\gamma", "\\gamma");
      int be = add_view(&b, "norm.beta", T_NORM_W, -1, 1, D, AXIS_TOKEN, AXIS_MODEL, model->norm_bias, false,
                        "Final LayerNorm shift", "\\beta", "\\beta");
      t->final_norm = add(&b, "final_norm", T_NORM, -1, 1, L, D, AXIS_TOKEN, AXIS_MODEL, "Final LayerNorm",
                          "y", "y = \\mathrm{LayerNorm}(Z')");
      inputs(t, t->final_norm, prev, g, be, -1);
      t->t[t->final_norm].extra = true;
      x = t->final_norm;
    }
    t->Wout = add_view(&b, "Wout", T_HEAD_W, -1, D, V, AXIS_MODEL, AXIS_VOCAB, model->head_weight, true,
                       "Prediction weights", "W_{\\mathrm{out}}",
                       "W_{\\mathrm{out}} \\in \\mathbb{R}^{D \\times V}");
    t->bout = add_view(&b, "bout", T_HEAD_W, -1, 1, V, AXIS_TOKEN, AXIS_VOCAB, model->head_bias, false,
                       "Prediction bias", "b_{\\mathrm{out}}", "b_{\\mathrm{out}}");
    t->logits = add(&b, "logits", T_LOGITS, -1, 1, L, V, AXIS_TOKEN, AXIS_VOCAB, "Logits",
                    "y W_{\\mathrm{out}} + b_{\\mathrm{out}}", "y W_{\\mathrm{out}} + b_{\\mathrm{out}}");
    inputs(t, t->logits, x, t->Wout, t->bout, -1);
    t->t[t->logits].extra = true;
    t->pred = add(&b, "pred", T_PRED, -1, 1, L, V, AXIS_TOKEN, AXIS_VOCAB, "Prediction", "\\hat{p}",
                  "\\hat{p} = \\operatorname{softmax}(y W_{\\mathrm{out}} + b_{\\mathrm{out}})");
    inputs(t, t->pred, t->logits, -1, -1, -1);
  }

  long total = 0;
  for (int i = 0; i < t->n; i++) total += b.own[i];
  if (total > TRACE_MAX_FLOATS) { // many heads and many words: H·L² per score stage
    err_set(err,
            "%d words through this model (D=%d, H=%d, F=%d, %d layer%s) make %.1f GiB of stages, more "
            "than the %d GiB Stepformer keeps: shorten the sentence or use fewer heads or layers",
            L, D, c->H, c->F, c->n_layers, c->n_layers == 1 ? "" : "s", (double)total * 4 / (1 << 30),
            (int)(TRACE_MAX_FLOATS >> 28));
    free(b.own);
    trace_free(t); // c points into t: the message is made first
    return NULL;
  }
  t->block = malloc(sizeof(float) * (size_t)(total > 0 ? total : 1));
  t->scratch = malloc(sizeof(float) * (size_t)L * 3 * D);
  if (!t->block || !t->scratch) goto oom;
  if (gemm_supported()) {
    int dk = D / c->H;
    size_t per_head = gemm_packed_floats(L, dk) + gemm_packed_floats(dk, L);
    t->attn_packed = aligned_alloc(64, sizeof(float) * (per_head * c->H + 16)); // a multiple of 64 bytes
    if (!t->attn_packed) goto oom;
  }
  t->block_floats = total;
  long off = 0;
  for (int i = 0; i < t->n; i++)
    if (b.own[i]) {
      t->t[i].data = t->block + off;
      off += b.own[i];
    }
  link_views(t);
  free(b.own);

  step(t, STEP_TOKENS, -1, -1);
  step(t, STEP_ONEHOT, -1, t->O);
  step(t, STEP_EMBED, -1, t->X);
  step(t, STEP_POSENC, -1, t->P);
  step(t, STEP_ADDPOS, -1, t->Z);
  for (int l = 0; l < c->n_layers; l++) {
    TraceLayer *y = &t->layers[l];
    if (c->norm_first) step(t, STEP_PRENORM, l, y->norm1);
    step(t, STEP_QKV, l, y->Q);
    step(t, STEP_SCORES, l, c->causal ? y->S_raw : y->S);
    if (c->causal) step(t, STEP_MASK, l, y->S);
    step(t, STEP_SOFTMAX, l, y->A);
    step(t, STEP_AV, l, y->AV);
    step(t, STEP_CONCAT, l, y->concat);
    step(t, STEP_OUTPROJ, l, y->attn);
    step(t, STEP_ADDNORM1, l, c->norm_first ? y->norm2 : y->norm1);
    step(t, STEP_FFN_HIDDEN, l, y->ffn_hidden);
    step(t, STEP_FFN_OUT, l, y->ffn);
    step(t, STEP_ADDNORM2, l, y->out);
  }
  if (t->pred >= 0) step(t, STEP_PREDICT, -1, t->pred);
  return t;
oom:
  free(b.own);
  trace_free(t);
  return err_set(err, "out of memory for a trace of %d tokens", L), NULL;
}

bool trace_set_tokens(Trace *t, const Tokens *tokens, Err *err) {
  if (tokens->n != t->L) return err_set(err, "the sentence has %d words, the trace %d", tokens->n, t->L);
  size_t text = 0;
  for (int i = 0; i < t->L; i++) text += strlen(tokens->words[i]) + 1;
  char *block = malloc(text + 1);
  if (!block) return err_set(err, "out of memory");
  char *p = block;
  for (int i = 0; i < t->L; i++) {
    size_t n = strlen(tokens->words[i]) + 1;
    memcpy(p, tokens->words[i], n);
    t->tokens.words[i] = p;
    t->tokens.ids[i] = tokens->ids[i];
    t->tokens.unknown[i] = tokens->unknown[i];
    p += n;
  }
  free(t->tokens.block);
  t->tokens.block = block;
  return true; // P depends on L and D only: still valid
}

void trace_free(Trace *t) {
  if (!t) return;
  free(t->block);
  free(t->scratch);
  free(t->attn_packed);
  free(t->t);
  free(t->steps);
  free(t->layers);
  tokens_free(&t->tokens);
  free(t);
}

int trace_index(const Trace *t, const char *name) {
  for (int i = 0; i < t->n; i++)
    if (!strcmp(t->t[i].name, name)) return i;
  return -1;
}

const TraceTensor *trace_find(const Trace *t, const char *name) {
  int i = trace_index(t, name);
  return i < 0 ? NULL : &t->t[i];
}

bool trace_per_head(const TraceTensor *x) {
  switch (x->kind) {
  case T_PROJ:
  case T_SCORES:
  case T_MASKED:
  case T_ATTN:
  case T_AV: return true;
  default: return false;
  }
}

int trace_dump_shape(const TraceTensor *x, int shape[3]) {
  if (trace_per_head(x)) {
    shape[0] = x->heads, shape[1] = x->rows, shape[2] = x->cols;
    return 3;
  }
  shape[0] = x->rows, shape[1] = x->cols;
  return 2;
}

float trace_at(const TraceTensor *x, int h, int i, int j) {
  EXPECT(h >= 0 && h < x->heads && i >= 0 && i < x->rows && j >= 0 && j < x->cols);
  const float *d = x->data + (size_t)h * x->rows * x->cols;
  return x->transposed ? d[(size_t)j * x->stride + i] : d[(size_t)i * x->stride + j];
}

const char *trace_axis_label(const Trace *t, TraceAxis axis, int i, char *buf, int cap) {
  switch (axis) {
  case AXIS_TOKEN: snprintf(buf, (size_t)cap, "%s", tokens_label(&t->tokens, &t->model->vocab, i)); break;
  case AXIS_VOCAB: snprintf(buf, (size_t)cap, "%s", t->model->vocab.words[i]); break;
  default: snprintf(buf, (size_t)cap, "%d", i); break;
  }
  return buf;
}

const char *trace_axis_name(TraceAxis axis) {
  switch (axis) {
  case AXIS_TOKEN: return "token";
  case AXIS_VOCAB: return "word";
  case AXIS_MODEL: return "dimension";
  case AXIS_HEADDIM: return "head dimension";
  case AXIS_FFN: return "hidden unit";
  case AXIS_QKV: return "dimension";
  }
  return "";
}

const char *trace_step_name(StepKind k) {
  switch (k) {
  case STEP_TOKENS: return "tokens";
  case STEP_ONEHOT: return "one-hot";
  case STEP_EMBED: return "token embeddings";
  case STEP_POSENC: return "positional encoding";
  case STEP_ADDPOS: return "embeddings + positions";
  case STEP_PRENORM: return "LayerNorm (pre-norm)";
  case STEP_QKV: return "Q, K, V projections";
  case STEP_SCORES: return "scaled scores";
  case STEP_MASK: return "mask";
  case STEP_SOFTMAX: return "softmax";
  case STEP_AV: return "weighted values";
  case STEP_CONCAT: return "concatenate heads";
  case STEP_OUTPROJ: return "output projection";
  case STEP_ADDNORM1: return "residual + LayerNorm";
  case STEP_FFN_HIDDEN: return "feed-forward hidden";
  case STEP_FFN_OUT: return "feed-forward out";
  case STEP_ADDNORM2: return "residual + LayerNorm: layer output";
  case STEP_PREDICT: return "prediction";
  }
  return "";
}

char *trace_tokens_lines(const Trace *t, size_t *len) {
  size_t cap = 1;
  for (int i = 0; i < t->L; i++) cap += strlen(tokens_label(&t->tokens, &t->model->vocab, i)) + 1;
  char *s = malloc(cap);
  if (!s) return NULL;
  size_t n = 0;
  for (int i = 0; i < t->L; i++) {
    const char *w = tokens_label(&t->tokens, &t->model->vocab, i);
    size_t k = strlen(w);
    memcpy(s + n, w, k);
    n += k;
    s[n++] = '\n';
  }
  s[n] = 0;
  *len = n;
  return s;
}

bool trace_uses_word(const Trace *t, int id) {
  for (int i = 0; i < t->L; i++)
    if (t->tokens.ids[i] == id) return true;
  return false;
}

int trace_step_find(const Trace *t, StepKind k, int layer) {
  for (int i = 0; i < t->n_steps; i++)
    if (t->steps[i].kind == k && (t->steps[i].layer < 0 || t->steps[i].layer == layer)) return i;
  return -1;
}
