// view_classes.c -- the views of the canonical extensions' stages (model.h): BERT's embeddings
// with token type and their LayerNorm, BERT's head transform, and the course's classifier tail
// (final LayerNorm, mean over positions, class scores, class prediction as labelled bars).
// view_stages.c's compose asks view_stage_ext first; every other stage is drawn there.
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "text.h" // defines: text_width
#include "bars.h" // defines: bars_draw
#include "view_internal.h"

// These stages' tensors have no head axis.
static int op(Eq *e, int index, const char *symbol, LinkKind link) {
  return eq_op(e, operand_tensor(e->t, index, 0, false), symbol, link);
}

// [Z] + [P] (+ [t₀]) = [sum]: the embeddings, positions and (BERT) token type row 0.
static void stage_addpos(Eq *e) {
  const Trace *t = e->t;
  int sum = t->embed_sum >= 0 ? t->embed_sum : t->Z;
  int kx = op(e, t->X, "Z", LINK_CELL), kp = op(e, t->P, "P", LINK_CELL);
  int kt = t->t0 >= 0 ? op(e, t->t0, "t_0", LINK_COL) : -1;
  int ks = op(e, sum, t->t0 >= 0 ? "Z + P + t_0" : "Z + P", LINK_NONE);
  e->deco[kx].row_labels = e->deco[ks].row_labels = true;
  eq_put(e, 0, kx);
  eq_tex(e, 0, "+");
  eq_put(e, 0, kp);
  if (kt >= 0) {
    eq_tex(e, 0, "+");
    eq_put(e, 0, kt);
  }
  eq_tex(e, 0, "=");
  eq_put(e, 0, ks);
  eq_result(e, ks);
}

// BERT: act([Z'] × [W_t] + [b_t]) = [g], then LayerNorm([g]) = [y].
static void stage_head_transform(Eq *e) {
  const Trace *t = e->t;
  const TraceTensor *hh = &t->t[t->head_hidden];
  Activation a = t->cfg.activation;
  const char *act = a == ACT_RELU ? "\\mathrm{ReLU}" : "\\mathrm{GELU}";
  int kx = op(e, hh->inputs[0], "Z'", LINK_ROW), kw = op(e, t->Wt, "W_t", LINK_COL);
  int kb = op(e, t->bt, "b_t", LINK_COL), kg = op(e, t->head_hidden, "g", LINK_ROW);
  int kg2 = op(e, t->head_hidden, "g", LINK_ROW), ky = op(e, t->head_norm, "y", LINK_NONE);
  e->deco[kx].row_labels = e->deco[kg].row_labels = true;
  eq_tex(e, 0, act);
  eq_delim(e, 0, '(');
  eq_put(e, 0, kx);
  eq_tex(e, 0, "\\times");
  eq_put(e, 0, kw);
  eq_tex(e, 0, "+");
  eq_put(e, 0, kb);
  eq_delim(e, 0, ')');
  eq_tex(e, 0, "=");
  eq_put(e, 0, kg);
  eq_apply(e, 1, "\\mathrm{LayerNorm}", kg2, ky);
}

// The classifier's mean: [y] (L×D) on top, z̄ = (1/L) Σᵢ yᵢ (1×D) under it, column by column.
static void stage_pool(Eq *e) {
  const Trace *t = e->t;
  const TraceTensor *p = &t->t[t->pool];
  int ky = op(e, p->inputs[0], t->enc_norm >= 0 ? "y" : "Z'", LINK_COL);
  int kz = op(e, t->pool, "\\bar{z}", LINK_NONE);
  e->deco[ky].row_labels = e->deco[kz].row_labels = true;
  eq_put(e, 0, ky);
  eq_tex(e, 1,
         scene_strf(e->s, "\\bar{z} = \\frac{1}{%d} \\sum_{i=1}^{%d} %s_i =", t->L, t->L,
                    t->enc_norm >= 0 ? "y" : "z'"));
  eq_put(e, 1, kz);
  eq_result(e, kz);
}

// [z̄] × [W_c] + [b_c] = [s].
static void stage_class_scores(Eq *e) {
  const Trace *t = e->t;
  int kz = op(e, t->pool, "\\bar{z}", LINK_ROW), kw = op(e, t->Wc, "W_c", LINK_COL);
  int kb = op(e, t->bc, "b_c", LINK_COL), ks = op(e, t->class_logits, "s", LINK_NONE);
  e->deco[kz].row_labels = e->deco[kw].row_labels = e->deco[ks].row_labels = true;
  eq_put(e, 0, kz);
  eq_tex(e, 0, "\\times");
  eq_put(e, 0, kw);
  eq_tex(e, 0, "+");
  eq_put(e, 0, kb);
  eq_tex(e, 0, "=");
  eq_put(e, 0, ks);
  eq_result(e, ks);
}

// softmax([s]) = [p̂] in the top third; under it one bar per class, its name and its probability
// in large type (read from the back of a room), the most likely class highlighted.
static void stage_class_pred(Eq *e) {
  const Trace *t = e->t;
  const Theme *th = e->o->theme;
  const TraceTensor *p = &t->t[t->class_pred];
  int C = p->cols;
  float top = e->h * 0.34f;
  int ks = op(e, t->class_logits, "s", LINK_CELL), kp = op(e, t->class_pred, "\\hat{p}", LINK_NONE);
  eq_apply(e, 0, "\\operatorname{softmax}", ks, kp);
  int best = 0;
  for (int c = 1; c < C; c++)
    if (p->data[c] > p->data[best]) best = c;
  // the bars, below the equation
  float x0 = e->x + e->w * 0.06f, w = e->w * 0.88f, y0 = e->y + top + e->h * 0.04f,
        h = e->h - top - e->h * 0.06f;
  int shown = C < 12 ? C : 12; // the most a room can read; more classes: the first 12
  Bar bars[12];
  for (int c = 0; c < shown; c++) bars[c] = (Bar){t->model->class_names[c], p->data[c], c == best};
  float fs;
  if (e->o->hide) { // a reveal= step: no class, no probability before the click
    fs = view_text_size(e->o) * 2.2f;
    scene_rect(e->s, x0, y0, w, h, th->panel);
    scene_frame(e->s, x0, y0, w, h, fmaxf(1, e->o->text_scale), th->frame);
    scene_text_aligned(e->s, FONT_SANS_BOLD, fs * 2, x0 + w / 2, y0 + h / 2 + fs * 0.6f, 0.5f, th->muted,
                       "?");
    e->h = top;
    return;
  }
  fs = bars_draw(e->s, th, bars, shown, x0, y0, w, h, view_text_size(e->o) * 2.2f);
  if (C > shown)
    scene_text_aligned(e->s, FONT_SANS_ITALIC, fs * 0.6f, e->x + e->w / 2, e->y + e->h - fs * 0.2f, 0.5f,
                       th->muted, scene_strf(e->s, "(the first %d of %d classes)", shown, C));
  e->h = top; // the equation takes the top third
}

bool view_stage_ext(Eq *e, const TraceStep *st) {
  const Trace *t = e->t;
  switch (st->kind) {
  case STEP_ADDPOS:
    if (t->t0 < 0 && t->embed_sum < 0) return false; // Z = X + P: view_stages.c's
    stage_addpos(e);
    return true;
  case STEP_EMBED_NORM: {
    int ka = op(e, t->embed_sum, t->t0 >= 0 ? "Z + P + t_0" : "Z + P", LINK_ROW);
    int kz = op(e, t->Z, "Z", LINK_NONE);
    eq_apply(e, 0, "\\mathrm{LayerNorm}", ka, kz);
    return true;
  }
  case STEP_HEAD_TRANSFORM: stage_head_transform(e); return true;
  case STEP_ENC_NORM: {
    int ka = op(e, t->t[t->enc_norm].inputs[0], "Z'", LINK_ROW), ky = op(e, t->enc_norm, "y", LINK_NONE);
    eq_apply(e, 0, "\\mathrm{LayerNorm}", ka, ky);
    return true;
  }
  case STEP_POOL: stage_pool(e); return true;
  case STEP_CLASS_SCORES: stage_class_scores(e); return true;
  case STEP_CLASS_PRED: stage_class_pred(e); return true;
  default: return false;
  }
}
