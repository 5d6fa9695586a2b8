// view_modern.c -- the stages of today's decoders (issue 34: Llama, Qwen, SmolLM), in the course's
// notation beside their 2017 siblings: RMSNorm, Q K V with grouped K/V heads, RoPE (the angles as
// a position × frequency heatmap, Q and K before and after), scores and weighted values that read
// the query head's K/V head (its group), the gate and up products and SwiGLU. view_stages.c's
// compose asks view_stage_modern first; the stages it leaves (mask, softmax, output projection,
// prediction) are drawn there as for GPT-2.
#include <math.h>
#include <stdio.h>

#include "forward.h" // defines: forward_rope_at
#include "view_internal.h"

// The K/V head query head h reads: h / (H / H_kv).
static int kv_head(const Trace *t, int h) { return h / (t->cfg.H / model_hkv(&t->cfg)); }

// Grouped-query attention under the equation: the H query heads in a row, each in its colour, a
// line from each to the K/V head it reads (H_kv of them, each under its group), the head shown
// framed. Takes the bottom of the view (the colour bars keep the whole height).
static void gqa_strip(Eq *e, int shown) {
  const Trace *t = e->t;
  int H = t->cfg.H, Hk = model_hkv(&t->cfg), group = H / Hk;
  if (Hk == H) return; // one K/V head per query head: nothing shared
  const Theme *th = e->o->theme;
  float fs = view_text_size(e->o), ch = fminf(e->h * 0.24f, fs * 7.5f);
  e->bars_h = e->h, e->h -= ch;
  float y0 = e->y + e->h + fs * 0.6f, box = fminf(fs * 1.9f, (e->w * 0.7f) / (float)H * 0.8f);
  float left = e->x + e->w * 0.22f, span = e->w * 0.62f, step = span / (float)H;
  float yq = y0, yk = y0 + ch - box - fs * 1.4f;
  scene_text_aligned(e->s, FONT_SANS, fs, left - fs, yq + box * 0.7f, 1.0f, th->text, "query heads");
  scene_text_aligned(e->s, FONT_SANS, fs, left - fs, yk + box * 0.7f, 1.0f, th->text, "K/V heads");
  for (int g = 0; g < Hk; g++) {
    float cx = left + step * ((float)g * group + group * 0.5f);
    for (int h = g * group; h < (g + 1) * group; h++) // the group's lines, behind the boxes
      scene_line(e->s, left + step * (h + 0.5f), yq + box, cx, yk, h == shown ? 2.5f : 1.2f,
                 h == shown ? th->text : th->muted);
    scene_rect(e->s, cx - box / 2, yk, box, box, theme_head(th, g));
    scene_text_aligned(e->s, FONT_SANS_BOLD, fs * 0.9f, cx, yk + box * 0.7f, 0.5f, th->bg,
                       scene_strf(e->s, "%d", g + 1));
    if (g == shown / group) scene_frame(e->s, cx - box / 2 - 3, yk - 3, box + 6, box + 6, 2.5f, th->text);
  }
  for (int h = 0; h < H; h++) {
    float cx = left + step * (h + 0.5f);
    scene_rect(e->s, cx - box / 2, yq, box, box, theme_head(th, h));
    scene_text_aligned(e->s, FONT_SANS_BOLD, fs * 0.9f, cx, yq + box * 0.7f, 0.5f, th->bg,
                       scene_strf(e->s, "%d", h + 1));
    if (h == shown) scene_frame(e->s, cx - box / 2 - 3, yq - 3, box + 6, box + 6, 2.5f, th->text);
  }
  scene_text_aligned(
      e->s, FONT_SANS_ITALIC, fs * 0.85f, e->x + e->w * 0.53f, yk + box + fs * 1.2f, 0.5f, th->muted,
      scene_strf(e->s, "%d query heads share %d K/V heads: %d each (grouped-query attention)", H, Hk, group));
}

// [Q_h] × [K_g]ᵀ · 1/√d_k = [S_h]: query head h against its group's keys (after RoPE).
static void scores(Eq *e, const TraceLayer *y, int h) {
  const Trace *t = e->t;
  if (h < 0) return eq_all_heads(e, y->S_raw, "S");
  int g = kv_head(t, h);
  int kq = eq_tensor(e, y->Q, h, false, eq_head_symbol(e, "\\tilde{Q}", h), LINK_ROW);
  int kk = eq_tensor(e, y->K, g, true, scene_strf(e->s, "\\tilde{K}_{%d}^\\top", g + 1), LINK_COL);
  int ks = eq_tensor(e, y->S_raw, h, false, eq_head_symbol(e, "S", h), LINK_NONE);
  e->deco[kq].row_labels = e->deco[ks].row_labels = true;
  eq_head_color(e, kq, h), eq_head_color(e, kk, g), eq_head_color(e, ks, h);
  eq_put(e, 0, kq);
  eq_tex(e, 0, "\\times");
  eq_put(e, 0, kk);
  eq_tex(e, 0, scene_strf(e->s, "\\cdot \\frac{1}{\\sqrt{%d}} =", model_dk(&t->cfg)));
  eq_put(e, 0, ks);
  eq_result(e, ks);
  gqa_strip(e, h);
}

// [A_h] × [V_g] = [head_h].
static void weighted(Eq *e, const TraceLayer *y, int h) {
  if (h < 0) return eq_all_heads(e, y->AV, "\\mathrm{head}");
  int g = kv_head(e->t, h);
  int ka = eq_tensor(e, y->A, h, false, eq_head_symbol(e, "A", h), LINK_ROW);
  int kv = eq_tensor(e, y->V, g, false, eq_head_symbol(e, "V", g), LINK_COL);
  int kr = eq_tensor(e, y->AV, h, false, eq_head_symbol(e, "\\mathrm{head}", h), LINK_NONE);
  eq_head_color(e, ka, h), eq_head_color(e, kv, g), eq_head_color(e, kr, h);
  eq_product(e, ka, kv, kr);
  gqa_strip(e, h);
}

// [head_1 … head_H] = Concat [L, H·d_k].
static void concat(Eq *e, const TraceLayer *y) {
  int H = e->t->cfg.H, dk = model_dk(&e->t->cfg);
  eq_delim(e, 0, '[');
  for (int h = 0; h < H && h < 16; h++) {
    int k = eq_tensor(e, y->AV, h, false, eq_head_symbol(e, "\\mathrm{head}", h), LINK_COLBLOCK);
    e->lay->ops[k].link_offset = h * dk;
    e->deco[k].row_labels = h == 0;
    eq_head_color(e, k, h);
    eq_put(e, 0, k);
  }
  eq_delim(e, 0, ']');
  eq_tex(e, 0, "=");
  int kc = eq_tensor(e, y->concat, 0, false, "\\mathrm{Concat}", LINK_NONE);
  eq_put(e, 0, kc);
  eq_result(e, kc);
}

// Q, K, V: [x̄] × [W^q] (+ b^q) = [Q] ... K and V with H_kv heads; the view's part picks one as
// view_stages.c's does.
static void qkv(Eq *e, const TraceLayer *y) {
  int part = e->o->part;
  bool all = view_qkv_all(e->t, part);
  const char *xs = "\\bar{x}";
  if (all || part <= 1) eq_linear(e, 0, NULL, y->rms1, xs, y->Wq, "W^q", y->bq, "b^q", y->Q_norope, "Q");
  if (all || part == 2)
    eq_linear(e, all ? 1 : 0, NULL, y->rms1, xs, y->Wk, "W^k", y->bk, "b^k", y->K_norope, "K");
  if (all || part == 3) eq_linear(e, all ? 2 : 0, NULL, y->rms1, xs, y->Wv, "W^v", y->bv, "b^v", y->V, "V");
}

// The score of two tokens depends on their distance only: the same q (row i of Q, head h) and k
// (row j of K, head g) turned as at positions (i, j) and as at (i + s, j + s) give the same dot
// product (to float rounding), written on a row of its own under K → K̃ with s = 100 (beside it,
// the line set the width of the whole picture: 50 px matrices at 1280×720).
static void rope_distance(Eq *e, const TraceLayer *y, int h, int g) {
  const Trace *t = e->t;
  int L = t->L, dk = model_dk(&t->cfg),
      i = e->o->focus_row >= 0 && e->o->focus_row < L ? e->o->focus_row : L - 1;
  int j = i > 0 ? 0 : i, s = 100;
  float *q = malloc(sizeof(float) * 4 * (size_t)dk);
  if (!q) return;
  float *k = q + dk, *q2 = k + dk, *k2 = q2 + dk;
  const TraceTensor *Q = &t->t[y->Q_norope], *K = &t->t[y->K_norope];
  for (int c = 0; c < dk; c++) q[c] = q2[c] = trace_at(Q, h, i, c), k[c] = k2[c] = trace_at(K, g, j, c);
  forward_rope_at(q, i, &t->cfg), forward_rope_at(k, j, &t->cfg);
  forward_rope_at(q2, i + s, &t->cfg), forward_rope_at(k2, j + s, &t->cfg);
  double d1 = 0, d2 = 0;
  for (int c = 0; c < dk; c++) d1 += (double)q[c] * k[c], d2 += (double)q2[c] * k2[c];
  free(q);
  if (fabs(d1 - d2) > 1e-4 * fmax(1, fabs(d1))) // (not reached: the angles' differences are the same)
    eq_tex(e, 3,
           scene_strf(e->s, "R_{%d}\\,q \\cdot R_{%d}\\,k = %.4f,\\ R_{%d}\\,q \\cdot R_{%d}\\,k = %.4f", i,
                      j, d1, i + s, j + s, d2));
  else
    eq_tex(e, 3,
           scene_strf(e->s,
                      "R_{%d}\\,q \\cdot R_{%d}\\,k = %.4f = R_{%d}\\,q \\cdot R_{%d}\\,k:\\ "
                      "\\text{distance only}",
                      i, j, d1, i + s, j + s));
}

// RoPE: the angles φ = i·θ_k (position × frequency), then R_i(Q_h) = Q̃_h and R_i(K_g) = K̃_g.
static void rope(Eq *e, const TraceLayer *y, int h) {
  const Trace *t = e->t;
  if (h < 0) h = 0;
  int g = kv_head(t, h);
  int kphi = eq_tensor(e, t->rope_angle, 0, false, "\\phi_{i,k} = i\\,\\theta_k", LINK_ROW);
  e->deco[kphi].row_labels = true;
  eq_put(e, 0, kphi);
  eq_tex(e, 0,
         t->cfg.rope == ROPE_PAIRS ? "\\text{turns the pair } (q_{2k}, q_{2k+1}) \\text{ of row } i"
                                   : "\\text{turns the pair } (q_{k}, q_{k+d_k/2}) \\text{ of row } i");
  int kq = eq_tensor(e, y->Q_norope, h, false, eq_head_symbol(e, "Q", h), LINK_CELL);
  int kqr = eq_tensor(e, y->Q, h, false, eq_head_symbol(e, "\\tilde{Q}", h), LINK_NONE);
  eq_head_color(e, kq, h), eq_head_color(e, kqr, h);
  e->deco[kq].row_labels = e->deco[kqr].row_labels = true;
  eq_apply(e, 1, "R_i", kq, kqr);
  int kk = eq_tensor(e, y->K_norope, g, false, eq_head_symbol(e, "K", g), LINK_CELL);
  int kkr = eq_tensor(e, y->K, g, false, eq_head_symbol(e, "\\tilde{K}", g), LINK_NONE);
  eq_head_color(e, kk, g), eq_head_color(e, kkr, g);
  e->deco[kk].row_labels = true;
  eq_put(e, 2, kk);
  eq_tex(e, 2, "\\rightarrow");
  eq_put(e, 2, kkr);
  if (e->w >= 1.4f * e->h) rope_distance(e, y, h, g); // a wide picture: room for its line
}

// SwiGLU: act([G]) ⊙ [U] = [h].
static void gated(Eq *e, const TraceLayer *y) {
  const char *act = e->t->cfg.activation == ACT_SILU ? "\\mathrm{SiLU}" : "\\mathrm{GELU}";
  int kg = eq_tensor(e, y->gate, 0, false, "G", LINK_CELL);
  int ku = eq_tensor(e, y->up, 0, false, "U", LINK_CELL);
  int kh = eq_tensor(e, y->ffn_hidden, 0, false, "h", LINK_NONE);
  e->deco[kg].row_labels = e->deco[kh].row_labels = true;
  eq_tex(e, 0, act);
  eq_delim(e, 0, '(');
  eq_put(e, 0, kg);
  eq_delim(e, 0, ')');
  eq_tex(e, 0, "\\odot");
  eq_put(e, 0, ku);
  eq_tex(e, 0, "=");
  eq_put(e, 0, kh);
  eq_result(e, kh);
}

// Row `row`: [x] / [rms(x)] ⊙ [g] = [x̄]: each row of x divided by its rms (a column, one number
// a token), each column times its gain (Gemma: 1 + g), the result.
static void rmsnorm(Eq *e, int row, int x, const char *xs, int r, int g, const char *gs, int out,
                    const char *os) {
  int kx = eq_tensor(e, x, 0, false, xs, LINK_ROW);
  int kr = eq_tensor(e, r, 0, false, scene_strf(e->s, "\\mathrm{rms}(%s)", xs), LINK_ROW);
  int kg = eq_tensor(e, g, 0, false, e->t->cfg.rms_offset ? scene_strf(e->s, "1 + %s", gs) : gs, LINK_COL);
  int ko = eq_tensor(e, out, 0, false, os, LINK_NONE);
  e->deco[kx].row_labels = e->deco[ko].row_labels = true;
  eq_put(e, row, kx);
  eq_tex(e, row, "/");
  eq_put(e, row, kr);
  eq_tex(e, row, "\\odot");
  eq_put(e, row, kg);
  eq_tex(e, row, "=");
  eq_put(e, row, ko);
  eq_result(e, ko);
}

// Row 0 of the second RMSNorm's stage: [x] + [Attn(x̄)] = [x'], the residual it normalizes.
static void eq_linear_free_add(Eq *e, const TraceLayer *y) {
  int ka = eq_tensor(e, y->in, 0, false, "x", LINK_CELL);
  int kb = eq_tensor(e, y->attn, 0, false, "\\mathrm{Attn}(\\bar{x})", LINK_CELL);
  int kr = eq_tensor(e, y->res1, 0, false, "x'", LINK_NONE);
  e->deco[ka].row_labels = true;
  eq_put(e, 0, ka);
  eq_tex(e, 0, "+");
  eq_put(e, 0, kb);
  eq_tex(e, 0, "=");
  eq_put(e, 0, kr);
}

bool view_stage_modern(Eq *e, const TraceStep *st) {
  const Trace *t = e->t;
  if (!model_is_modern(&t->cfg) || st->layer < 0 || st->layer >= t->cfg.n_layers) return false;
  const TraceLayer *y = &t->layers[st->layer];
  int h = e->o->head;
  if (h >= t->cfg.H) h = t->cfg.H - 1;
  switch (st->kind) {
  case STEP_RMSNORM1:
    rmsnorm(e, 0, y->in, "x", y->rms1_r, y->rms1_g, "g_1", y->rms1, "\\bar{x}");
    return true;
  case STEP_QKV: qkv(e, y); return true;
  case STEP_ROPE: rope(e, y, h); return true;
  case STEP_SCORES: scores(e, y, h); return true;
  case STEP_AV: weighted(e, y, h); return true;
  case STEP_CONCAT: concat(e, y); return true;
  case STEP_RMSNORM2: // the residual, then its RMSNorm
    eq_linear_free_add(e, y);
    rmsnorm(e, 1, y->res1, "x'", y->rms2_r, y->rms2_g, "g_2", y->rms2, "\\bar{x}'");
    return true;
  case STEP_GATE:
    eq_linear(e, 0, NULL, y->rms2, "\\bar{x}'", y->Wg, "W_g", -1, NULL, y->gate, "G");
    return true;
  case STEP_UP: eq_linear(e, 0, NULL, y->rms2, "\\bar{x}'", y->W1, "W_1", -1, NULL, y->up, "U"); return true;
  case STEP_FFN_HIDDEN: gated(e, y); return true;
  case STEP_FFN_OUT:
    eq_linear(e, 0, NULL, y->ffn_hidden, "h", y->W2, "W_2", -1, NULL, y->ffn, "\\mathrm{FFN}(\\bar{x}')");
    return true;
  case STEP_ADDNORM2:
    eq_add_norm(e, y->res1, "x'", y->ffn, "\\mathrm{FFN}(\\bar{x}')", y->out, "x''", NULL);
    return true;
  default: return false;
  }
}
