// app_train.c -- the window's training step (issue 21): B opens the backward pass of the sentence
// shown, drawn by view_grad.c over the whole window: one head's softmax, A, ∂L/∂A and ∂L/∂S side by
// side with the worked equation of the cell where the gradient of the worst prediction is largest,
// and a panel with the loss and the keys. While it is open:
//   → / ←        walk backwards / forwards through the stages: from the loss's logits back to the
//                embeddings, each page the forward matrix beside its gradient (view_grad_stage);
//   Space or Enter   take a training step, W ← W − η·∂L/∂W, and compute everything again (the loss
//                after each step is listed: it falls over several);
//   Backspace    undo one step;  Home   back to the model as loaded;
//   + / −        η twice / half as large;   K   the √d_k experiment: the scores without 1/√dₖ (the
//                softmax saturates, ∂L/∂S shrinks) and a chart of ∂L/∂S's size against d_k for
//                random queries and keys, with and without the scale;   B or Esc   close.
// The steps are taken on copies of the model (model_with_params): the session's model, the page
// under the overlay and everything else stay the model as loaded.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "app_internal.h"
#include "backward.h"  // defines: TraceGrad, backward_new, backward_run
#include "forward.h"   // defines: model_forward
#include "train.h"     // defines: train_sgd_step, TRAIN_DEFAULT_LR
#include "sqrtdk.h"    // defines: SqrtDkRow, sqrtdk_sweep
#include "tex.h"       // defines: tex_layout, tex_emit, tex_metrics
#include "view.h"      // defines: view_tensor_title
#include "view_grad.h" // defines: view_grad_softmax, view_grad_pick, view_grad_sqrtdk_chart

#define APP_TRAIN_MAX 64

struct AppTrain {
  bool open;
  float lr;
  int n;                         // training steps taken
  Model *models[APP_TRAIN_MAX];  // models[k]: after k + 1 steps
  float loss[APP_TRAIN_MAX + 1]; // loss[k]: after k steps
  float lr_of[APP_TRAIN_MAX];    // the η of step k + 1
  bool no_scale;                 // K: the √d_k experiment, scores without 1/√dₖ
  SqrtDkRow sweep[6];            // its chart (sqrtdk_sweep), made once
  bool swept;
  int label;       // a classifier: the class the step trains toward (0-based; -1: the model's own guess)
  int page;        // 0: the softmax's page; 1 … : the stages walked backwards (view_grad_stages)
  GradWindow win;  // a long sentence's window of tokens (< >): first -1 around the worked cell; as drawn
  Trace *trace;    // the forward of the current model on the session's sentence
  TraceGrad *grad; // its gradients
};

static const Model *current(const AppTrain *tr, const Model *loaded) {
  return tr->n > 0 ? tr->models[tr->n - 1] : loaded;
}

static void drop_pass(AppTrain *tr) {
  backward_free(tr->grad);
  trace_free(tr->trace);
  tr->grad = NULL, tr->trace = NULL;
}

// The forward and backward of the current model; false with the message in the status line.
static bool refresh(App *a) {
  AppTrain *tr = a->train;
  drop_pass(tr);
  Err err = {0};
  const Trace *shown = a->s->base ? a->s->base : a->s->trace; // the model's own pass, not an edited one
  tr->trace = trace_new(current(tr, a->s->model), &shown->tokens, &err);
  if (tr->trace) {
    tr->trace->no_scale = tr->no_scale;
    model_forward(tr->trace);
    const Model *m = tr->trace->model;
    if (m->has_classifier && tr->trace->class_pred >= 0) { // the class to train toward: the teacher's
      if (tr->label < 0 || tr->label >= m->n_classes) {    // (keys 1 … C), else the model's own guess
        const float *p = tr->trace->t[tr->trace->class_pred].data;
        tr->label = 0;
        for (int c = 1; c < m->n_classes; c++)
          if (p[c] > p[tr->label]) tr->label = c;
      }
      tr->grad = backward_new(tr->trace, &tr->label, 1, &err);
    } else {
      tr->grad = backward_new(tr->trace, NULL, 0, &err);
    }
  }
  if (!tr->grad) {
    drop_pass(tr);
    app_set_status(a, "training: %s", err.msg);
    return false;
  }
  tr->loss[tr->n] = backward_run(tr->grad);
  return true;
}

void app_train_free(App *a) {
  AppTrain *tr = a->train;
  if (!tr) return;
  drop_pass(tr);
  for (int k = 0; k < tr->n; k++) model_with_params_free(tr->models[k]);
  free(tr);
  a->train = NULL;
}

static void undo_to(App *a, int n) {
  AppTrain *tr = a->train;
  while (tr->n > n) model_with_params_free(tr->models[--tr->n]);
  refresh(a);
}

static void step(App *a) {
  AppTrain *tr = a->train;
  if (tr->n >= APP_TRAIN_MAX)
    return app_set_status(a, "training: at most %d steps (← undoes one)", APP_TRAIN_MAX);
  Err err = {0};
  Model *next = train_sgd_step(current(tr, a->s->model), tr->grad, tr->lr, &err);
  if (!next) return app_set_status(a, "training: %s", err.msg);
  tr->lr_of[tr->n] = tr->lr;
  tr->models[tr->n++] = next;
  if (refresh(a))
    app_set_status(a, "after %d training step%s, η = %g: loss %.4f (was %.4f)", tr->n, tr->n == 1 ? "" : "s",
                   (double)tr->lr, (double)tr->loss[tr->n], (double)tr->loss[tr->n - 1]);
}

// < and >: the window of a long sentence's tokens (the pages' GradWindow) moved by half its length.
static void move_window(App *a, int dir) {
  GradWindow *w = &a->train->win;
  if (w->shown <= 0)
    return app_set_status(a, "every token is shown: a sentence of more than %d tokens shows a window of them",
                          VIEW_TOKENS_READABLE);
  int step = w->shown / 2 > 0 ? w->shown / 2 : 1, last = w->total - w->shown;
  int f = w->first + dir * step;
  f = f < 0 ? 0 : f > last ? last : f;
  if (f == w->first)
    return app_set_status(a, "the window is at the %s of the sentence", dir < 0 ? "start" : "end");
  w->first = f;
  app_set_status(a, "tokens %d–%d of %d", f + 1, f + w->shown, w->total);
}

// The stages that have a gradient, walked backwards: page 0 is the softmax's, page p the p-th stage.
static void walk(App *a, int dir) {
  AppTrain *tr = a->train;
  tr->win.first = -1; // (each page's window: around its worked cell)
  int ks[512], n = view_grad_stages(tr->trace, tr->grad, ks, 512);
  tr->page = tr->page + dir < 0 ? 0 : tr->page + dir > n ? n : tr->page + dir;
  if (tr->page == 0)
    return app_set_status(a, "backward: the softmax of one head (→ walks back through the stages)");
  const TraceTensor *x = &tr->trace->t[ks[tr->page - 1]];
  // the tensor's title as the page's (the scores without 1/√dₖ while K has taken it out) and its
  // layer as the pages count them (from 1), not its dump name (l0.ffn)
  const char *title = view_tensor_title(tr->trace, x);
  if (x->layer >= 0)
    app_set_status(a, "backward %d/%d: %s, layer %d, beside its gradient", tr->page, n, title ? title : "",
                   x->layer + 1);
  else
    app_set_status(a, "backward %d/%d: %s beside its gradient", tr->page, n, title ? title : "");
}

bool app_train_key(App *a, const AppEvent *e) {
  if (e->kind != EV_KEY || (e->mods & (MOD_CTRL | MOD_ALT))) return false;
  AppTrain *tr = a->train;
  bool b = e->key == KEY_CHAR && e->ch == 'b';
  if (!tr || !tr->open) {
    if (!b) return false;
    if (!tr && !(tr = a->train = calloc(1, sizeof *tr))) return app_set_status(a, "out of memory"), true;
    tr->lr = TRAIN_DEFAULT_LR;
    tr->label = -1;
    tr->win.first = -1;
    if (refresh(a)) {
      tr->open = true;
      const Model *m = tr->trace->model;
      if (m->has_classifier) // the course's classifier: which class the step pulls toward, and how to pick
        app_set_status(a, "training toward class %d of %d: %s (the model's guess; keys 1–%d pick the class)",
                       tr->label + 1, m->n_classes, m->class_names[tr->label],
                       m->n_classes < 9 ? m->n_classes : 9);
    }
    a->dirty = true;
    return true;
  }
  switch (e->key) {
  case KEY_ESCAPE: tr->open = false; break;
  case KEY_RIGHT:
  case KEY_LEFT: walk(a, e->key == KEY_RIGHT ? 1 : -1); break;
  case KEY_ENTER:
  case KEY_SPACE: step(a); break;
  case KEY_BACKSPACE:
    if (tr->n > 0) undo_to(a, tr->n - 1);
    break;
  case KEY_HOME:
    undo_to(a, 0);
    app_set_status(a, "the model as loaded: loss %.4f", (double)tr->loss[0]);
    break;
  case KEY_PLUS:
  case KEY_MINUS: tr->lr = e->key == KEY_PLUS ? fminf(tr->lr * 2, 64) : fmaxf(tr->lr / 2, 1.0f / 1024); break;
  case KEY_CHAR:
    if (b) {
      tr->open = false;
    } else if (e->ch >= '1' && e->ch <= '9' &&
               tr->trace->model->has_classifier) { // the class to train toward
      const Model *m = tr->trace->model;
      int c = (int)(e->ch - '1');
      if (c >= m->n_classes) {
        app_set_status(a, "the classifier has %d classes: keys 1–%d", m->n_classes, m->n_classes);
      } else {
        if (tr->n > 0) undo_to(a, 0); // the steps taken toward another class go
        tr->label = c;
        if (refresh(a))
          app_set_status(a, "training toward class %d of %d: %s · loss %.4f", c + 1, m->n_classes,
                         m->class_names[c], (double)tr->loss[tr->n]);
      }
    } else if (e->ch == '<' || e->ch == '>' || ((e->mods & MOD_SHIFT) && (e->ch == ',' || e->ch == '.'))) {
      move_window(a, e->ch == '>' || e->ch == '.' ? 1 : -1); // (Shift+, Shift+. on a US keyboard)
    } else if (e->ch == 's') { // the picture shown, with its footer "after N training steps, η = …"
      app_save(a);
    } else if (e->ch == 'k') { // the √d_k experiment
      tr->no_scale = !tr->no_scale;
      if (!tr->swept) {
        static const int dks[6] = {4, 16, 64, 256, 1024, 4096};
        sqrtdk_sweep(42, 16, 256, dks, 6, tr->sweep);
        tr->swept = true;
      }
      if (refresh(a))
        app_set_status(a, "%s: loss %.4f", tr->no_scale ? "scores without 1/√dₖ" : "scores with 1/√dₖ again",
                       (double)tr->loss[tr->n]);
    } else if (e->ch == '+' || e->ch == '=' || e->ch == '-')
      tr->lr = e->ch == '-' ? fmaxf(tr->lr / 2, 1.0f / 1024) : fminf(tr->lr * 2, 64);
    break;
  default: break;
  }
  if (e->key == KEY_PLUS || e->key == KEY_MINUS ||
      (e->key == KEY_CHAR && (e->ch == '+' || e->ch == '=' || e->ch == '-')))
    app_set_status(a, "learning rate η = %g", (double)tr->lr);
  a->dirty = true;
  return true; // while open, every key is the training view's
}

void app_train_caption(const App *a, char *buf, size_t cap) {
  const AppTrain *tr = a->train;
  snprintf(buf, cap, "Backward pass: after %d training step%s, η = %g, loss %.4f", tr->n,
           tr->n == 1 ? "" : "s", (double)tr->lr, (double)tr->loss[tr->n]);
}

bool app_train_open(const App *a) { return a->train && a->train->open && a->train->grad; }

void app_train_window(const App *a, int *first, int *shown, int *total) {
  const GradWindow *w = &a->train->win;
  *first = w->first, *shown = w->shown, *total = w->total;
}

void app_train_draw(App *a, Scene *s, float W, float H, float u) {
  AppTrain *tr = a->train;
  if (!tr || !tr->open || !tr->grad) return;
  const Theme *th = theme_get(a->theme);
  int head, row, col;
  view_grad_pick(tr->trace, tr->grad, &head, &row, &col);
  char footer[512];
  snprintf(footer, sizeof footer, "%.120s · \"%.200s\" · after %d training step%s, η = %g · loss %.4f",
           a->s->model->source, a->s->text, tr->n, tr->n == 1 ? "" : "s", (double)tr->lr,
           (double)tr->loss[tr->n]);
  int ks[512], n = view_grad_stages(tr->trace, tr->grad, ks, 512);
  if (tr->page > n) tr->page = n;
  tr->win.keys = "< > move the window";
  if (tr->page > 0)
    view_grad_stage(s, tr->trace, tr->grad, ks[tr->page - 1], head, tr->page, n, footer, th, W, H, &tr->win);
  else
    view_grad_softmax(s, tr->trace, tr->grad, 0, head, row, col, footer, th, W, H, &tr->win);
  // the panel: the loss after each step, η, the keys
  (void)u; // the view scales with the window's height, the panel with it
  float fs = H * 0.024f, x = W * 0.56f, y = H * 0.035f, w = W * 0.42f, lh = fs * 1.35f;
  if (tr->page > 0) y = H * 0.745f; // a stage's page: the title and formula take the top
  scene_rect(s, x, y, w, lh * 5.5f, th->panel);
  scene_frame(s, x, y, w, lh * 5.5f, 2, th->accent);
  if (a->status[0]) // the status line, here rather than in a toast over the pictures (app_draw.c)
    scene_text(s, FONT_SANS_BOLD, fs * 0.75f, x + fs * 0.6f, y + lh * 5.0f, th->accent,
               scene_strf(s, "%.90s", a->status));
  char line[512];
  int len = snprintf(line, sizeof line, "loss %.4f", (double)tr->loss[0]);
  int first = tr->n > 6 ? tr->n - 6 : 1;
  if (first > 1) len += snprintf(line + len, sizeof line - (size_t)len, " → …");
  for (int k = first; k <= tr->n && len < (int)sizeof line - 32; k++)
    len += snprintf(line + len, sizeof line - (size_t)len, " → %.4f", (double)tr->loss[k]);
  scene_text(s, FONT_SANS_BOLD, fs, x + fs * 0.6f, y + lh, th->text,
             scene_strf(s, "after %d training step%s, η = %g", tr->n, tr->n == 1 ? "" : "s", (double)tr->lr));
  scene_text(s, FONT_SANS, fs * 0.9f, x + fs * 0.6f, y + lh * 2.1f, th->text, line);
  scene_text(s, FONT_SANS, fs * 0.75f, x + fs * 0.6f, y + lh * 3.1f, th->muted,
             "→ ← walk the stages   Space: take a step   Backspace: undo   Home   + − η");
  scene_text(s, FONT_SANS, fs * 0.75f, x + fs * 0.6f, y + lh * 4.0f, th->muted,
             tr->no_scale ? "K: scores WITHOUT 1/√dₖ (K again: with)   B or Esc: close"
                          : "K: scores without 1/√dₖ   S: save   B or Esc: close");
  if (tr->page > 0) {
    // a stage's page: the panel and its footer only
  } else if (tr->no_scale && tr->swept) {
    view_grad_sqrtdk_chart(s, tr->sweep, 6, W * 0.56f, H * 0.805f, W * 0.42f, H * 0.16f, th);
  } else if (tr->trace->logits >= 0 && tr->grad->target[row] >= 0) {
    // the loss's worked equation: the term of the row shown (the worst prediction), then the mean
    const Trace *t = tr->trace;
    int id = tr->grad->target[row];
    double p = t->t[t->pred].data[(size_t)row * t->cfg.V + id];
    char word[64];
    snprintf(word, sizeof word, "%s", t->model->vocab.words[id]);
    for (char *c = word; *c; c++)
      if (*c == '_' || *c == '#' || *c == '$' || *c == '%' || *c == '&' || *c == '{' || *c == '}' ||
          *c == '\\')
        *c = '?'; // TeX's special characters
    const char *src =
        scene_strf(s,
                   "-\\log \\hat p_{%d}[\\text{%s}] = -\\log %.4g = %.3f,\\quad \\mathcal{L} = "
                   "-\\frac{1}{%d}\\sum_i \\log \\hat p_i[x_{i+1}] = %.4f",
                   row + 1, word, p, -log(p > 0 ? p : 1e-30), tr->grad->n_targets, (double)tr->loss[tr->n]);
    TexBox *box = tex_layout(src, fs * 1.05f, true, NULL); // right-aligned: measured first
    if (box) tex_emit(s, box, fmaxf(W * 0.4f, W - tex_metrics(box).width - fs), H * 0.87f, th->text);
    tex_free(box);
  }
}
