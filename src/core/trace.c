// trace.c -- see trace.h. Builds the tensor table (names, shapes, notation) and carves the
// activation block; forward.c fills the numbers.
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"   // defines: gemm_supported, gemm_packed_floats
#include "stages.h" // defines: stage_info, stage_notation

typedef struct {
  Trace *t;
  long *own; // floats each tensor needs in the activation block (0 for views)
  int cap;
  int holds; // StageWhen flags true of the model (and of the layer being built)
} Builder;

// A tensor of the table, its notation from stages.c: `name` is the dump name without the layer
// prefix ("A"; in layer 2 it becomes "l2.A").
static int add(Builder *b, const char *name, int layer, bool per_head, int rows, int cols) {
  Trace *t = b->t;
  EXPECT(t->n < b->cap);
  const TensorNotation *nt = stage_notation(name, b->holds);
  EXPECT(nt != NULL); // every tensor has a row in stages.c
  int i = t->n++;
  TraceTensor *x = &t->t[i];
  memset(x, 0, sizeof *x);
  if (layer >= 0)
    snprintf(x->name, sizeof x->name, "l%d.%s", layer, name);
  else
    snprintf(x->name, sizeof x->name, "%s", name);
  x->kind = nt->kind;
  x->layer = layer;
  x->heads = per_head ? t->cfg.H : 1;
  x->per_head = per_head;
  x->rows = rows;
  x->cols = cols;
  x->stride = cols;
  x->row_axis = nt->rows;
  x->col_axis = nt->cols;
  x->extra = nt->extra;
  x->title = nt->title;
  x->symbol = nt->symbol;
  x->tex = nt->tex;
  b->own[i] = (long)x->heads * rows * cols;
  return i;
}

// A tensor that shares memory owned elsewhere (a weight, or another tensor's values).
static int add_view(Builder *b, const char *name, int layer, int rows, int cols, float *data,
                    bool transposed) {
  int i = add(b, name, layer, false, rows, cols);
  TraceTensor *x = &b->t->t[i];
  x->data = data;
  x->transposed = transposed;
  x->stride = transposed ? rows : cols;
  x->is_weight = data != NULL && x->kind != T_LAYER_IN;
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
  t->steps[t->n_steps++] = (TraceStep){k, layer, result, stage_info(k)->title};
}

// The StageWhen flags of the model.
static int model_holds(const ModelConfig *c) {
  return (c->norm_first ? WHEN_PRE_NORM : WHEN_POST_NORM) | (c->causal ? WHEN_CAUSAL : WHEN_NOT_CAUSAL) |
         (c->activation == ACT_GELU ? WHEN_GELU : WHEN_RELU);
}

static void add_layer(Builder *b, int l, int in) {
  Trace *t = b->t;
  const ModelConfig *c = &t->cfg;
  const LayerWeights *w = &t->model->layers[l];
  int L = t->L, D = c->D, H = c->H, dk = D / H, F = c->F;
  TraceLayer *y = &t->layers[l];
  memset(y, -1, sizeof *y);
  b->holds = model_holds(c) | (l == 0 ? WHEN_FIRST_LAYER : WHEN_LATER_LAYER);
  y->in = add_view(b, "in", l, L, D, t->t[in].data, false);
  inputs(t, y->in, in, -1, -1, -1);
  int a_in = y->in;
  if (c->norm_first) { // LN1 before attention
    y->norm1_g = add_view(b, "norm1.gamma", l, 1, D, w->norm1_weight, false);
    y->norm1_b = add_view(b, "norm1.beta", l, 1, D, w->norm1_bias, false);
    y->norm1 = add(b, "norm1", l, false, L, D);
    inputs(t, y->norm1, y->in, y->norm1_g, y->norm1_b, -1);
    a_in = y->norm1;
  }
  // W^q = in_proj_weight[0:D]ᵀ: the stored rows 0..D-1 are W^q's columns.
  y->Wq = add_view(b, "Wq", l, D, D, w->in_proj_weight, true);
  y->Wk = add_view(b, "Wk", l, D, D, w->in_proj_weight + (size_t)D * D, true);
  y->Wv = add_view(b, "Wv", l, D, D, w->in_proj_weight + (size_t)2 * D * D, true);
  y->bq = add_view(b, "bq", l, 1, D, w->in_proj_bias, false);
  y->bk = add_view(b, "bk", l, 1, D, w->in_proj_bias + D, false);
  y->bv = add_view(b, "bv", l, 1, D, w->in_proj_bias + 2 * D, false);
  y->Q = add(b, "Q", l, true, L, dk);
  y->K = add(b, "K", l, true, L, dk);
  y->V = add(b, "V", l, true, L, dk);
  inputs(t, y->Q, a_in, y->Wq, y->bq, -1);
  inputs(t, y->K, a_in, y->Wk, y->bk, -1);
  inputs(t, y->V, a_in, y->Wv, y->bv, -1);
  if (c->causal) { // S is the masked scores, S_raw the scores before the mask
    y->S_raw = add(b, "S_raw", l, true, L, L);
    inputs(t, y->S_raw, y->Q, y->K, -1, -1);
    y->S = add(b, "S", l, true, L, L);
    inputs(t, y->S, y->S_raw, -1, -1, -1);
  } else {
    y->S = add(b, "S", l, true, L, L);
    inputs(t, y->S, y->Q, y->K, -1, -1);
  }
  y->A = add(b, "A", l, true, L, L);
  inputs(t, y->A, y->S, -1, -1, -1);
  y->AV = add(b, "AV", l, true, L, dk);
  inputs(t, y->AV, y->A, y->V, -1, -1);
  y->concat = add(b, "concat", l, false, L, D);
  inputs(t, y->concat, y->AV, -1, -1, -1);
  y->Wo = add_view(b, "Wo", l, D, D, w->out_proj_weight, true);
  y->bo = add_view(b, "bo", l, 1, D, w->out_proj_bias, false);
  y->attn = add(b, "attn", l, false, L, D);
  inputs(t, y->attn, y->concat, y->Wo, y->bo, -1);
  y->res1 = add(b, "res1", l, false, L, D);
  inputs(t, y->res1, y->in, y->attn, -1, -1);
  int f_in;
  if (c->norm_first) { // LN2 of the residual: the feed-forward's input
    y->norm2_g = add_view(b, "norm2.gamma", l, 1, D, w->norm2_weight, false);
    y->norm2_b = add_view(b, "norm2.beta", l, 1, D, w->norm2_bias, false);
    y->norm2 = add(b, "norm2", l, false, L, D);
    inputs(t, y->norm2, y->res1, y->norm2_g, y->norm2_b, -1);
    f_in = y->norm2;
  } else { // LN1 of the residual
    y->norm1_g = add_view(b, "norm1.gamma", l, 1, D, w->norm1_weight, false);
    y->norm1_b = add_view(b, "norm1.beta", l, 1, D, w->norm1_bias, false);
    y->norm1 = add(b, "norm1", l, false, L, D);
    inputs(t, y->norm1, y->res1, y->norm1_g, y->norm1_b, -1);
    f_in = y->norm1;
  }
  y->W1 = add_view(b, "W1", l, D, F, w->linear1_weight, true);
  y->b1 = add_view(b, "b1", l, 1, F, w->linear1_bias, false);
  y->ffn_pre = add(b, "ffn_pre", l, false, L, F);
  inputs(t, y->ffn_pre, f_in, y->W1, y->b1, -1);
  y->ffn_hidden = add(b, "ffn_hidden", l, false, L, F);
  inputs(t, y->ffn_hidden, y->ffn_pre, -1, -1, -1);
  y->W2 = add_view(b, "W2", l, F, D, w->linear2_weight, true);
  y->b2 = add_view(b, "b2", l, 1, D, w->linear2_bias, false);
  y->ffn = add(b, "ffn", l, false, L, D);
  inputs(t, y->ffn, y->ffn_hidden, y->W2, y->b2, -1);
  if (c->norm_first) { // the residual is the layer's output
    y->res2 = add(b, "res2", l, false, L, D);
    inputs(t, y->res2, y->res1, y->ffn, -1, -1);
    y->out = add_view(b, "out", l, L, D, t->t[y->res2].data, false);
  } else { // the layer's output is LN2 of the residual
    y->norm2_g = add_view(b, "norm2.gamma", l, 1, D, w->norm2_weight, false);
    y->norm2_b = add_view(b, "norm2.beta", l, 1, D, w->norm2_bias, false);
    y->res2 = add(b, "res2", l, false, L, D);
    inputs(t, y->res2, f_in, y->ffn, -1, -1);
    y->norm2 = add(b, "norm2", l, false, L, D);
    inputs(t, y->norm2, y->res2, y->norm2_g, y->norm2_b, -1);
    y->out = add_view(b, "out", l, L, D, NULL, false);
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
  if (model_is_seq2seq(model)) // the decoder's stages are not traced yet
    return err_set(err, "%s is an encoder-decoder: its decoder's stages are not traced yet", model->source),
           NULL;
  Trace *t = calloc(1, sizeof *t);
  if (!t) return err_set(err, "out of memory"), NULL;
  t->model = model;
  t->cfg = model->cfg;
  t->L = tokens->n;
  EXPECT(t->L > 0);
  const ModelConfig *c = &t->cfg;
  int L = t->L, D = c->D, V = c->V;
  int cap = 16 + 48 * c->n_layers;
  Builder b = {t, calloc((size_t)cap, sizeof(long)), cap, 0};
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

  b.holds = model_holds(c);
  t->O = add(&b, "O", -1, false, L, V);
  t->E = add_view(&b, "E", -1, V, D, model->embed, false);
  t->X = add(&b, "X", -1, false, L, D);
  inputs(t, t->X, t->O, t->E, -1, -1);
  t->P = add(&b, "P", -1, false, L, D);
  t->Z = add(&b, "Z", -1, false, L, D);
  inputs(t, t->Z, t->X, t->P, -1, -1);
  int prev = t->Z;
  for (int l = 0; l < c->n_layers; l++) {
    add_layer(&b, l, prev);
    prev = t->layers[l].out;
  }
  b.holds = model_holds(c);
  t->final_norm = t->Wout = t->bout = t->logits = t->pred = -1;
  if (model->has_head) {
    int x = prev;
    if (model->has_final_norm) {
      int g = add_view(&b, "norm.gamma", -1, 1, D, model->norm_weight, false);
      int be = add_view(&b, "norm.beta", -1, 1, D, model->norm_bias, false);
      t->final_norm = add(&b, "final_norm", -1, false, L, D);
      inputs(t, t->final_norm, prev, g, be, -1);
      x = t->final_norm;
    }
    t->Wout = add_view(&b, "Wout", -1, D, V, model->head_weight, true);
    t->bout = add_view(&b, "bout", -1, 1, V, model->head_bias, false);
    t->logits = add(&b, "logits", -1, false, L, V);
    inputs(t, t->logits, x, t->Wout, t->bout, -1);
    t->pred = add(&b, "pred", -1, false, L, V);
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

bool trace_per_head(const TraceTensor *x) { return x->per_head; }

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

int trace_stage_number(const Trace *t, int step, int *total) {
  bool present[STEP_KIND_END] = {0};
  for (int s = 0; s < t->n_steps; s++) present[t->steps[s].kind] = true;
  StepKind want = t->steps[step].kind;
  int n = 0, count = 0;
  for (int i = 0; i < STAGE_COUNT; i++) {
    const StageInfo *st = &STAGE_TABLE[i];
    if (!present[st->kind]) continue;
    if (!st->half) count++;
    if (st->kind == want) n = count;
  }
  if (total) *total = count;
  return n;
}
