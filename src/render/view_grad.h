// view_grad.h -- the backward pass drawn: one head's softmax, back from ∂L/∂A to ∂L/∂S (issue 21).
//
// view_grad_softmax draws into a Scene of w×h pixels, for layer `layer` and head `head` of a
// trace whose gradients g holds (backward.h): the title, the backward formula
// ∂L/∂S_ij = A_ij (∂L/∂A_ij − Σ_k ∂L/∂A_ik A_ik), then three L×L heatmaps side by side — the forward
// A_h (viridis, 0 … 1), its gradient ∂L/∂A_h and the scores' gradient ∂L/∂S_h (both diverging,
// centred on 0, each its own symmetric range) — with the tokens on their axes, numbers in the
// cells when they fit, query row `row` framed and its cell `col` marked; under them the worked
// equation of that cell with the real numbers, and `footer` at the bottom (the model, the loss).
//
//     Scene s; scene_init(&s, 1280, 720, 0);
//     view_grad_softmax(&s, t, g, 0, 2, 4, 5, "bank.safetensors · loss 4.51", theme_get(THEME_LIGHT), 1280,
//     720, NULL);
#ifndef SF_VIEW_GRAD_H
#define SF_VIEW_GRAD_H

#include "backward.h" // defines: TraceGrad
#include "colormap.h" // defines: Theme
#include "scene.h"    // defines: Scene
#include "sqrtdk.h"   // defines: SqrtDkRow

// A sentence of more than VIEW_TOKENS_READABLE tokens (view.h): the pages show a window of its tokens,
// as many as can each be named (up to 24, at least 8). In: first, the window's first token (-1:
// around the page's worked cell), keys (how to move it, said under the matrices, or NULL). Out:
// first, shown (0 when every token shows), total. The pages take NULL: around the worked cell.
typedef struct {
  int first, shown, total;
  const char *keys;
} GradWindow;

void view_grad_softmax(Scene *s, const Trace *t, const TraceGrad *g, int layer, int head, int row, int col,
                       const char *footer, const Theme *th, float w, float h, GradWindow *win);

// The √d_k experiment's chart in (x, y, w, h): the size of ∂L/∂S (root mean square) against d_k on
// a log axis, with the 1/√d_k (accent) and without it (warning colour), from sqrtdk_sweep's rows.
void view_grad_sqrtdk_chart(Scene *s, const SqrtDkRow *r, int n, float x, float y, float w, float h,
                            const Theme *th);

// The head and the cell a picture of one training step shows first: the query row with the largest
// loss term (the worst prediction; a classifier: row 0), the head and key where |∂L/∂S| is
// largest in that row of the first layer. Writes *head, *row, *col.
void view_grad_pick(const Trace *t, const TraceGrad *g, int *head, int *row, int *col);

// The walk backwards through the stages (issue 21 item 4): the activations that have a gradient, in
// the reverse of the forward's order (a view sharing its gradient buffer listed once), into out
// (room for max); returns their count.
int view_grad_stages(const Trace *t, const TraceGrad *g, int *out, int max);
// The gradient matrix a stage's page shows: head `head` of tensor k's dL/dT ([rows, cols], row-major),
// a pointer into g->d[k] (head ignored for a tensor without heads).
const float *view_grad_shown(const Trace *t, const TraceGrad *g, int k, int head);
// The worked equations the pages print, in TeX (numfmt.h's digits: the printed numbers reproduce the
// printed result): cell (i, j) of stage k's gradient (NULL where the formula is not a product or a
// mask), and the softmax page's cell (row, col). Strings live in the scene.
const char *view_grad_worked(Scene *s, const Trace *t, const TraceGrad *g, int k, int head, int i, int j);
const char *view_grad_softmax_worked(Scene *s, const Trace *t, const TraceGrad *g, int layer, int head,
                                     int row, int col);
// The backward formula of tensor k's gradient, in TeX.
const char *view_grad_formula(const Trace *t, int k);
// One stage's page (page of pages): the title, the backward formula, the forward matrix and its
// gradient side by side (diverging, centred on 0), the worked equation of the largest gradient cell
// with the real numbers where the formula is a dot product or a mask, and the footer.
void view_grad_stage(Scene *s, const Trace *t, const TraceGrad *g, int k, int head, int page, int pages,
                     const char *footer, const Theme *th, float w, float h, GradWindow *win);

#endif
