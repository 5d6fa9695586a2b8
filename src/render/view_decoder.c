// view_decoder.c -- what each stage of an encoder-decoder's decoder shows (issue 11): memory, the
// decoder's input and embeddings, masked self-attention (T×T, the −∞ mask visible), cross-attention
// (queries from the decoder's rows, keys and values from memory's: scores T×S, target words on the
// rows and source words on the columns), the residuals, LayerNorms, FFN and the prediction over the
// target vocabulary. view_stages.c's compose() hands every STEP_DEC_*, STEP_CROSS_* and STEP_MEMORY
// step here; the equation engine (view_layout.c) draws the rows these functions fill.
//
// Legend: S source tokens, T the decoder's input tokens (<bos> and the words written so far), D
// model width, H heads, d_k = D/H, V_t target vocabulary. Symbols follow the course: Y for the
// decoder's stream, M for memory, a superscript c for cross-attention's tensors.
#include <stdio.h>
#include <string.h>

#include "tex.h" // defines: tex_draw
#include "view_internal.h"

// ---------------------------------------------------------------- helpers (view_internal.h has the others)

// A line of plain text under the equation (what a stage reuses, where its sides come from): the
// equation gets the view's height less two lines.
static void note(Eq *e, const char *text) {
  float fs = view_text_size(e->o);
  e->h -= fs * 2.2f;
  scene_text_aligned(e->s, FONT_SANS_ITALIC, fs * 1.05f, e->x + e->w / 2, e->y + e->h + fs * 1.4f, 0.5f,
                     e->o->theme->text, text);
}

// ---------------------------------------------------------------- attention (self and cross)

// The decoder's masked self-attention and its cross-attention, with the TeX names they carry.
static EqAttn self_block(const TraceDecLayer *y) {
  EqAttn b = EQ_SELF_ATTN(y, "\\mathrm{MaskedMH}(Y)");
  b.braced = true;
  return b;
}

static EqAttn cross_block(const TraceDecLayer *y) {
  EqAttn b = {0};
  b.Q = y->cQ, b.K = y->cK, b.V = y->cV, b.S_raw = b.S = y->cS, b.A = y->cA, b.AV = y->cAV;
  b.concat = y->cconcat, b.Wo = y->cWo, b.bo = y->cbo, b.attn = y->cattn;
  b.q = "Q^c", b.k = "K^c", b.v = "V^c", b.s = "S^c", b.a = "A^c", b.head = "\\mathrm{head}^c";
  b.w_o = "W^{oc}", b.b_o = "b^{oc}", b.out = "\\mathrm{CrossMH}(x, M)", b.braced = true;
  return b;
}

// A cross-attention stage's line under the equation, for one head (the grid of all heads has none).
static void cross_note(Eq *e, int h, const char *text) {
  if (h >= 0) note(e, text);
}

static void mask(Eq *e, const EqAttn *b, int h) {
  if (h < 0) return eq_all_heads(e, b->S, "S");
  int T = e->t->T;
  int ks = eq_tensor(e, b->S_raw, h, false, scene_strf(e->s, "{S}_{%d}", h + 1), LINK_CELL);
  int km =
      eq_op(e, (Operand){e->t, -1, 0, false, T, T, AXIS_TGT_TOKEN, AXIS_TGT_TOKEN, T, NULL, -1, 0, 0, 0, 0},
            "\\mathrm{Mask}", LINK_CELL);
  int kr = eq_tensor(e, b->S, h, false, scene_strf(e->s, "S_{%d} + \\mathrm{Mask}", h + 1), LINK_NONE);
  e->deco[ks].row_labels = e->deco[kr].row_labels = true;
  note(e, "a word being written may not look at the words after it: −∞ above the diagonal");
  eq_put(e, 0, ks);
  eq_tex(e, 0, "+");
  eq_put(e, 0, km);
  eq_tex(e, 0, "=");
  eq_put(e, 0, kr);
  eq_result(e, kr);
}

// The three projections; all three rows when they fit (as view_qkv_all), else the part asked for.
static bool qkv_all(const Eq *e) {
  return e->o->part == 0 && e->t->T <= 12 && e->t->L <= 12 && e->t->cfg.D <= 32;
}

static void self_qkv(Eq *e, const TraceDecLayer *y) {
  int x = e->t->cfg.norm_first ? y->norm1 : y->in;
  const char *xs = e->t->cfg.norm_first ? "\\mathrm{LN}_1(Y)" : "Y";
  int part = e->o->part;
  bool all = qkv_all(e);
  if (all || part <= 1) eq_linear(e, 0, NULL, x, xs, y->Wq, "W^q", y->bq, "b^q", y->Q, "Q");
  if (all || part == 2) eq_linear(e, all ? 1 : 0, NULL, x, xs, y->Wk, "W^k", y->bk, "b^k", y->K, "K");
  if (all || part == 3) eq_linear(e, all ? 2 : 0, NULL, x, xs, y->Wv, "W^v", y->bv, "b^v", y->V, "V");
}

// Q^c from the decoder's rows; K^c and V^c from memory's, the same matrix M in both rows.
static void cross_qkv(Eq *e, const TraceDecLayer *y) {
  const Trace *t = e->t;
  int x = t->cfg.norm_first ? y->norm2 : y->norm1;
  int part = e->o->part;
  // all three rows when they stay readable (as the encoder's Q, K, V: memory M is then seen
  // feeding both K^c and V^c); else Q^c large and K^c, V^c a key away (P), as twelve matrices
  // 30 px wide were not read from the back row (issue 31.4)
  bool all = qkv_all(e);
  if (all || part <= 1) eq_linear(e, 0, NULL, x, "x", y->cWq, "W^{qc}", y->cbq, "b^{qc}", y->cQ, "Q^c");
  if (all || part == 2)
    eq_linear(e, all ? 1 : 0, NULL, t->memory, "M", y->cWk, "W^{kc}", y->cbk, "b^{kc}", y->cK, "K^c");
  if (all || part == 3)
    eq_linear(e, all ? 2 : 0, NULL, t->memory, "M", y->cWv, "W^{vc}", y->cbv, "b^{vc}", y->cV, "V^c");
  note(e, (all || part == 2 || part == 3)
              ? "K and V of memory M are computed once per layer and reused at every generation step"
              : "queries from the decoder; keys and values from memory M, the encoder's output (P shows K "
                "and V)");
}

// ---------------------------------------------------------------- the decoder's other stages

static void dec_tokens(Eq *e) {
  const Trace *t = e->t;
  float fs = view_text_size(e->o) * 1.3f;
  char buf[160];
  // the source, small, above: what memory holds
  float y0 = e->y + e->h * 0.12f;
  int k = snprintf(buf, sizeof buf, "source (in memory):");
  for (int i = 0; i < t->L && k < (int)sizeof buf - 40; i++)
    k += snprintf(buf + k, sizeof buf - (size_t)k, " %s", tokens_label(&t->tokens, &t->model->vocab, i));
  eq_tokens_note(e, buf, y0);
  eq_tokens_note(e, "the decoder's input: <bos>, then the words written so far (one more each step)",
                 y0 + fs * 2.0f);
  eq_token_row(e, &t->dec_tokens, &t->model->tgt_vocab, "y", 0, e->y + e->h * 0.38f, "target vocabulary: Vₜ");
}

static void memory(Eq *e) {
  const Trace *t = e->t;
  int last = t->layers[t->cfg.n_layers - 1].out;
  int ka = eq_tensor(e, last, 0, false, "Z'", LINK_ROW),
      kr = eq_tensor(e, t->memory, 0, false, "M", LINK_NONE);
  note(e, "memory M: what the decoder reads of the source; K and V of memory are computed once per "
          "layer and reused at every generation step");
  eq_apply(e, 0, "\\mathrm{LayerNorm}", ka, kr);
}

static void predict(Eq *e) {
  const Trace *t = e->t;
  int kx = eq_tensor(e, t->dec_norm, 0, false, "y", LINK_ROW);
  int kw = eq_tensor(e, t->Wout, 0, false, "W_{\\mathrm{out}}", LINK_COL);
  int kp = eq_tensor(e, t->pred, 0, false, "\\hat{p}", LINK_NONE);
  e->deco[kx].row_labels = true;
  note(e, "each row predicts the word after its input word: the last row is the next word to write");
  eq_tex(e, 0, "\\operatorname{softmax}");
  eq_delim(e, 0, '(');
  eq_put(e, 0, kx);
  eq_tex(e, 0, "\\times");
  eq_put(e, 0, kw);
  eq_tex(e, 0, "+ b_{\\mathrm{out}}");
  eq_delim(e, 0, ')');
  eq_tex(e, 0, "=");
  eq_put(e, 0, kp);
  eq_result(e, kp);
  eq_pred_chart(e, kp); // the next word's candidates as large bars (view_stages.c)
}

static void ffn(Eq *e, const TraceDecLayer *y, bool hidden) {
  bool pre = e->t->cfg.norm_first;
  const char *act = e->t->cfg.activation == ACT_GELU ? "\\mathrm{GELU}" : "\\mathrm{ReLU}";
  if (hidden)
    eq_linear(e, 0, act, pre ? y->norm3 : y->norm2, "x", y->W1, "W_1", y->b1, "b_1", y->ffn_hidden, "h");
  else
    eq_linear(e, 0, NULL, y->ffn_hidden, "h", y->W2, "W_2", y->b2, "b_2", y->ffn, "\\mathrm{FFN}(x)");
}

bool view_decoder_compose(Eq *e, const TraceStep *st) {
  const Trace *t = e->t;
  int l = st->layer, h = e->o->head;
  if (h >= t->cfg.H) h = t->cfg.H - 1;
  if (t->T <= 0) return false;
  const TraceDecLayer *y = l >= 0 ? &t->dec_layers[l] : NULL;
  bool pre = t->cfg.norm_first;
  EqAttn sb, cb;
  if (y) sb = self_block(y), cb = cross_block(y);
  switch (st->kind) {
  case STEP_MEMORY: memory(e); break;
  case STEP_DEC_TOKENS: dec_tokens(e); break;
  case STEP_DEC_ONEHOT: eq_single(e, t->dO, "O_t"); break;
  case STEP_DEC_EMBED: {
    int ko = eq_tensor(e, t->dO, 0, false, "O_t", LINK_ROW),
        ke = eq_tensor(e, t->dE, 0, false, "E_t", LINK_COL);
    int kx = eq_tensor(e, t->dX, 0, false, "Y", LINK_NONE);
    eq_product(e, ko, ke, kx);
    break;
  }
  case STEP_DEC_POSENC: eq_single(e, t->dP, "P"); break;
  case STEP_DEC_ADDPOS:
    eq_add_norm(e, t->dX, "O_t E_t", t->dP, "P", t->dZ, "Y", NULL);
    break; // Y ← O_tE_t + P
  case STEP_DEC_PRENORM: {
    int ka = eq_tensor(e, y->in, 0, false, "Y", LINK_ROW),
        kr = eq_tensor(e, y->norm1, 0, false, "\\mathrm{LN}_1(Y)", LINK_NONE);
    eq_apply(e, 0, "\\mathrm{LayerNorm}_1", ka, kr);
    break;
  }
  case STEP_DEC_QKV: self_qkv(e, y); break;
  case STEP_DEC_SCORES: eq_attn_scores(e, &sb, h); break;
  case STEP_DEC_MASK: mask(e, &sb, h); break;
  case STEP_DEC_SOFTMAX: eq_attn_softmax(e, &sb, h); break;
  case STEP_DEC_AV: eq_attn_av(e, &sb, h); break;
  case STEP_DEC_CONCAT: eq_attn_concat(e, &sb); break;
  case STEP_DEC_OUTPROJ: eq_attn_outproj(e, &sb); break;
  case STEP_DEC_ADDNORM1:
    if (pre)
      eq_add_norm(e, y->in, "Y", y->attn, "\\mathrm{MaskedMH}", y->norm2, "x", "\\mathrm{LN}_2");
    else
      eq_add_norm(e, y->in, "Y", y->attn, "\\mathrm{MaskedMH}(Y)", y->norm1, "x", "\\mathrm{LayerNorm}_1");
    break;
  case STEP_CROSS_QKV: cross_qkv(e, y); break;
  case STEP_CROSS_SCORES:
    cross_note(e, h, "queries from the decoder (target words) · keys from memory (source words)");
    eq_attn_scores(e, &cb, h);
    break;
  case STEP_CROSS_SOFTMAX:
    cross_note(e, h, "each target word's weights over the source words sum to 1");
    eq_attn_softmax(e, &cb, h);
    break;
  case STEP_CROSS_AV:
    cross_note(e, h, "a mix of memory's rows (the source words) for each target word");
    eq_attn_av(e, &cb, h);
    break;
  case STEP_CROSS_CONCAT: eq_attn_concat(e, &cb); break;
  case STEP_CROSS_OUTPROJ: eq_attn_outproj(e, &cb); break;
  case STEP_DEC_ADDNORM2:
    if (pre)
      eq_add_norm(e, y->res1, "Y + \\mathrm{MaskedMH}", y->cattn, "\\mathrm{CrossMH}", y->norm3, "x'",
                  "\\mathrm{LN}_3");
    else
      eq_add_norm(e, y->norm1, "x", y->cattn, "\\mathrm{CrossMH}(x, M)", y->norm2, "x'",
                  "\\mathrm{LayerNorm}_2");
    break;
  case STEP_DEC_FFN_HIDDEN: ffn(e, y, true); break;
  case STEP_DEC_FFN_OUT: ffn(e, y, false); break;
  case STEP_DEC_ADDNORM3:
    if (pre)
      eq_add_norm(e, y->res2, "Y + \\mathrm{MaskedMH} + \\mathrm{CrossMH}", y->ffn, "\\mathrm{FFN}(x')",
                  y->out, "Y'", NULL);
    else
      eq_add_norm(e, y->norm2, "x'", y->ffn, "\\mathrm{FFN}(x')", y->out, "Y'", "\\mathrm{LayerNorm}_3");
    break;
  case STEP_DEC_PREDICT: predict(e); break;
  default: return false;
  }
  return true;
}
