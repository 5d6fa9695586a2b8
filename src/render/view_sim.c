// view_sim.c -- the similarity stage (STEP_SIM): two sentences' vectors compared by cosine.
//
// Above, two L1 × L2 matrices C[i, j] = cos(z_i, z'_j) (similarity.h), rows the first
// sentence's tokens and columns the second's: at the token embeddings X, where the same word is
// the same row of E and its cell is exactly 1, and after the step's layer. Below, a line chart
// of one word's cell at every level (X, Z, after layer 1, ..., the final LayerNorm), each point
// with its value, the levels named on the x axis, the matrices' two levels marked. The word is
// the step's focus (a lesson's row=) when both sentences have it, else the last word they share;
// the chart's heading says which. Colours: the diverging scale fixed to [-1, 1], white at 0:
// a cosine's sign matters (pointing away is not "unrelated"), and one fixed scale lets the two
// matrices, and every layer's, be compared by eye. A sentence of more than VIEW_TOKENS_READABLE
// tokens shows a window of its tokens (rows of the first, columns of the second: as many as can
// each be named, around the word of the line, moved together by < >), said under the matrices.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axislabels.h" // defines: AXL_ALL_UP_TO
#include "similarity.h" // defines: Sim, sim_init, sim_set_word
#include "text.h"       // defines: text_width
#include "view_internal.h"

// The line chart in (x, y, w, h): one point per level, `mark_a` and `mark_b` drawn larger.
static void draw_line(Scene *s, const Sim *sim, const ViewOptions *o, int mark_a, int mark_b, float x,
                      float y, float w, float h) {
  const Theme *th = o->theme;
  // 14 px at 720 lines (the line under the title 12 px at least), as far as the plot keeps its room
  float fs = fminf(view_text_size(o) * 1.25f, fmaxf(view_text_size(o), h / 10));
  int n = sim->n_levels;
  char wa[96], wb[96];
  const char *who = sim->word_default ? "the last word both sentences share" : "the step's focus (row=)";
  if (sim->word_a < 0) {
    scene_text_aligned(s, FONT_SANS_ITALIC, fs, x + w / 2, y + fs * 1.5f, 0.5f, th->muted,
                       "The two sentences share no word: no line to draw (a lesson picks one with row=).");
    return;
  }
  trace_axis_label(&sim->trace, AXIS_TOKEN, sim->word_a, wa, sizeof wa);
  trace_axis_label(&sim->trace, AXIS_TOKEN2, sim->word_b, wb, sizeof wb);
  scene_text(s, FONT_SANS_BOLD, fs * 1.05f, x, y + fs * 1.1f, th->text,
             scene_strf(s, "cos(“%s” in sentence 1, “%s” in sentence 2) across the layers", wa, wb));
  const char *how = scene_strf(
      s, "“%s”: %s · 1 = the same direction, 0 = unrelated, −1 = opposite · bold: the matrices' levels", wa,
      who);
  float hs = fs * 0.9f; // smaller only as far as 12 px at 720 lines
  while (hs > 18 * o->text_scale && text_width(FONT_SANS_ITALIC, hs, how) > w)
    hs = fmaxf(18 * o->text_scale, hs * 0.96f);
  scene_text(s, FONT_SANS_ITALIC, hs, x, y + fs * 2.3f, th->muted, how);
  // the plot area: y from min(0, lowest) to 1, levels evenly along x
  float lo = 0;
  for (int k = 0; k < n; k++) lo = fminf(lo, sim->line[k]);
  if (lo < 0) lo = floorf(lo * 2) / 2; // -0.5, -1
  float left = x + fs * 3.5f, right = x + w - fs * 1.5f;
  float top = y + fs * 4.6f, bottom = y + h - fs * 2.4f;
  if (bottom - top < fs * 2 || right - left < fs * 4) return;
  float inset = fs * 5; // room for the first and last level's names under their points
  float dx = n > 1 ? (right - left - 2 * inset) / (float)(n - 1) : 0;
  float x0 = n > 1 ? left + inset : (left + right) / 2;
#define PY(v) (bottom - ((v)-lo) / (1.0f - lo) * (bottom - top))
  for (float g = lo; g <= 1.0001f; g += 0.5f) { // grid lines at every half
    scene_line(s, left - fs * 0.3f, PY(g), right, PY(g), 1.0f, th->grid);
    scene_text_aligned(s, FONT_SANS, fs * 0.95f, left - fs * 0.5f, PY(g) + fs * 0.32f, 1.0f, th->muted,
                       scene_strf(s, "%.1f", g));
  }
  // the levels on the x axis: their names ("after layer 3"), or, when those do not fit between
  // the points (a deep model), X, Z, the layer's number and "final" under "after layer →"
  float widest = 0;
  for (int k = 0; k < n; k++)
    widest = fmaxf(widest, text_width(FONT_SANS_BOLD, fs * 1.05f, sim->levels[k].label));
  bool short_names = n > 1 && widest > dx * 0.92f;
  for (int k = 0; k < n; k++) {
    float px = x0 + dx * (float)k;
    bool mark = k == mark_a || k == mark_b;
    const char *nm = sim->levels[k].name, *label = sim->levels[k].label;
    if (short_names && nm[0] == 'l')
      label = scene_strf(s, "%d", atoi(nm + 1) + 1);
    else if (short_names)
      label = !strcmp(nm, "X") ? "OE" : nm; // the level's file name is sim.X; on screen Z = OE
    scene_text_aligned(s, mark ? FONT_SANS_BOLD : FONT_SANS, fs * 1.05f, px, bottom + fs * 1.4f, 0.5f,
                       mark ? th->text : th->muted, label);
  }
  if (short_names)
    scene_text_aligned(s, FONT_SANS_ITALIC, fs * 0.9f, right, bottom + fs * 2.5f, 1.0f, th->muted,
                       "OE: token embeddings · Z = OE + P · 1, 2, …: after that layer");
  for (int k = 1; k < n; k++)
    scene_line(s, x0 + dx * (float)(k - 1), PY(sim->line[k - 1]), x0 + dx * (float)k, PY(sim->line[k]),
               3.0f * fs / 18.0f, th->accent);
  for (int k = 0; k < n; k++) {
    float px = x0 + dx * (float)k, py = PY(sim->line[k]);
    bool mark = k == mark_a || k == mark_b;
    float r = (mark ? 0.45f : 0.3f) * fs;
    scene_rect(s, px - r, py - r, 2 * r, 2 * r, mark ? th->highlight : th->accent);
    Cmd *c = scene_text_aligned(s, FONT_SANS_BOLD, fs * 1.15f, px, py - r - fs * 0.4f, 0.5f, th->text,
                                scene_strf(s, "%.2f", sim->line[k]));
    if (c) c->tag = scene_strf(s, "cos at %s = %.4f", sim->levels[k].label, sim->line[k]);
  }
#undef PY
}

// The matrices' share of the view's height (the line chart under them takes the rest, less a gap).
#define SIM_TOP 0.64f

// The windows of the two sentences' tokens: rows r0 .. r0 + rn - 1 of the first, columns c0 .. c0 +
// cn - 1 of the second (rn = a->L, cn = b->L: every token), each of at most `most` tokens around the
// word of the line, or from the window's moved start (ViewOptions.tok_first, the same for both).
typedef struct {
  int r0, rn, c0, cn;
} SimWin;

static void one_window(int L, int at, const ViewOptions *o, int most, int *first, int *n) {
  *first = 0, *n = L;
  if (L <= most) return;
  int f = o->tok_first >= 0 ? o->tok_first : at >= 0 ? at - most / 2 : 0;
  *first = f < 0 ? 0 : f > L - most ? L - most : f, *n = most;
}

// most 0: every token of both.
static void sim_window(const Sim *sim, const Trace *a, const Trace *b, const ViewOptions *o, int most,
                       SimWin *w) {
  if (most <= 0) most = a->L > b->L ? a->L : b->L;
  if (o->tok_count > 0) most = o->tok_count; // (export --tokens A-B: A-B of each, or its end)
  one_window(a->L, sim->word_a, o, most, &w->r0, &w->rn);
  one_window(b->L, sim->word_b, o, most, &w->c0, &w->cn);
}

// Operand o (L1 × L2) cut to the windows.
static Operand sim_cut(Operand o, const SimWin *w, int L1, int L2) {
  if (w->rn < L1) o.row0 = w->r0, o.rows = w->rn, o.row_win = L1;
  if (w->cn < L2) o.col0 = w->c0, o.cols = w->cn, o.col_win = L2;
  return o;
}

// The two matrices laid out in e and drawn.
static void sim_compose(Eq *e, Scene *s, ViewLayout *out, const Sim *sim, const Trace *a,
                        const ViewOptions *o, const SimWin *sw, int kl, int layer, const char *caption_a,
                        const char *caption_b, float top, float x, float y, float w, float h) {
  const Trace *b = sim->b;
  memset(e, 0, sizeof *e);
  e->s = s, e->t = a, e->o = o, e->lay = out;
  e->x = x, e->y = y, e->w = w, e->h = h * top;
  if (sw->rn < a->L || sw->cn < b->L) { // the line under the matrices names both windows
    e->win_first = sw->r0, e->win_n = sw->rn > sw->cn ? sw->rn : sw->cn;
    float nf = 26.0f * o->text_scale * 0.8f; // (eq_window_note's size: FS_MIN · 0.8)
    e->h -= nf * 1.8f, e->win_y = e->y + e->h;
    e->win_text = sw->cn < b->L
                      ? scene_strf(s, "rows: tokens %d–%d of %d shown · columns: tokens %d–%d of %d shown",
                                   sw->r0 + 1, sw->r0 + sw->rn, a->L, sw->c0 + 1, sw->c0 + sw->cn, b->L)
                  : sw->rn < a->L ? scene_strf(s, "rows: tokens %d–%d of %d shown · columns: every token",
                                               sw->r0 + 1, sw->r0 + sw->rn, a->L)
                                  : scene_strf(s, "rows: every token · columns: tokens %d–%d of %d shown",
                                               sw->c0 + 1, sw->c0 + sw->cn, b->L);
  }
  int kx =
      eq_op(e, sim_cut(operand_tensor(&sim->trace, 0, 0, false), sw, a->L, b->L), "\\cos_{OE}", LINK_NONE);
  int kr = eq_op(e, sim_cut(operand_tensor(&sim->trace, kl, 0, false), sw, a->L, b->L),
                 scene_strf(s, "\\cos_{\\text{layer } %d}", layer + 1), LINK_NONE);
  for (int k = 0; k < 2; k++) {
    int q = k ? kr : kx;
    e->deco[q].row_labels = true;
    e->deco[q].caption_row = true; // one line under the row says what is labelled, under the first
    e->deco[q].own_focus = true, e->deco[q].focus_row = sim->word_a, e->deco[q].focus_col = sim->word_b;
  }
  e->deco[kx].caption = scene_strf(s, "rows: %s · columns: %s", caption_a ? caption_a : "sentence 1",
                                   caption_b ? caption_b : "sentence 2");
  out->result = kr;
  out->ops[kr].result = true;
  eq_put(e, 0, kx);
  eq_tex(e, 0, "\\longrightarrow");
  eq_put(e, 0, kr);
  eq_layout_and_draw(e);
}

void view_render_sim(Scene *s, const Trace *a, const Trace *b, int step, const ViewOptions *o,
                     const char *caption_a, const char *caption_b, int focus_b, float x, float y, float w,
                     float h, ViewLayout *out) {
  lay_begin(out, o, x, y, w, h);
  const Theme *th = o->theme;
  float fs = view_text_size(o);
  size_t bytes = sim_bytes(a, b);
  Sim *sim = bytes ? sim_init(scene_alloc(s, bytes), bytes, a, b, &(Err){0}) : NULL;
  if (!sim) { // one line: what is missing and how to give it
    scene_text_aligned(
        s, FONT_SANS, fs * 1.1f, x + w / 2, y + h * 0.4f, 0.5f, th->warn,
        b ? "The similarity compares two sentences through an encoder: this model has a decoder."
          : "The similarity needs a second sentence: give one with --compare TEXT, or "
            "compare=\"...\" in the lesson step.");
    return;
  }
  sim_set_word(sim, o->focus_row, focus_b);
  // the matrices: at OE (level 0, file sim.X) and after the step's layer
  int layer = a->steps[step].layer, kl = -1;
  char want[16];
  snprintf(want, sizeof want, "l%d", layer < 0 ? 0 : layer);
  for (int k = 0; k < sim->n_levels; k++)
    if (!strcmp(sim->levels[k].name, want)) kl = k;
  if (kl < 0) kl = sim->n_levels - 1;
  // a long sentence: the most tokens (24 down to 8) whose labels are large enough, drawn and measured;
  // 25 to VIEW_TOKENS_READABLE tokens too when the whole picture leaves a distinct word unnamed
  // (39 tokens named 12 rows of 39, 7 of their words missing, issue 31)
  SimWin sw = {0};
  int most = AXL_ALL_UP_TO, longest = a->L > b->L ? a->L : b->L;
  bool whole = longest <= VIEW_TOKENS_READABLE || o->tok_count > 0;
  static _Thread_local ViewLayout lay;
  if (whole && longest > AXL_ALL_UP_TO && o->tok_count <= 0) {
    sim_window(sim, a, b, o, 0, &sw);
    Eq m;
    Scene scratch;
    scene_init(&scratch, s->width, s->height, 0);
    lay_begin(&lay, o, x, y, w, h);
    sim_compose(&m, &scratch, &lay, sim, a, o, &sw, kl, layer, caption_a, caption_b, SIM_TOP, x, y, w, h);
    whole = lay.words_missing == 0;
    scene_free(&scratch);
  }
  if (!whole)
    for (; most > 8; most--) {
      sim_window(sim, a, b, o, most, &sw);
      Eq m;
      Scene scratch;
      scene_init(&scratch, s->width, s->height, 0);
      lay_begin(&lay, o, x, y, w, h);
      sim_compose(&m, &scratch, &lay, sim, a, o, &sw, kl, layer, caption_a, caption_b, SIM_TOP, x, y, w, h);
      bool fits = m.cell >= eq_window_cell(&m) * 0.97f && // (its cells and its labels, as drawn)
                  eq_window_label_px(&m) >= eq_window_label(&m) * 0.995f;
      scene_free(&scratch);
      if (fits) break;
    }
  if (whole) most = 0;
  sim_window(sim, a, b, o, most, &sw);
  if (sw.rn < a->L || sw.cn < b->L) { // the app's < > move both windows (ViewOptions.tok_first)
    bool rows = sw.rn < a->L;
    out->tok_first = rows ? sw.r0 : sw.c0, out->tok_shown = rows ? sw.rn : sw.cn;
    out->tok_total = rows ? a->L : b->L;
  }
  // the matrices naming only some of up to about 24 tokens: the line chart gives them some height
  // (22 tokens against 6 named 5 of the 6 columns at 0.64 of the height)
  float top = SIM_TOP;
  for (int q = 0; q < 3; q++) {
    Eq m;
    Scene scratch;
    scene_init(&scratch, s->width, s->height, 0);
    lay_begin(&lay, o, x, y, w, h);
    sim_compose(&m, &scratch, &lay, sim, a, o, &sw, kl, layer, caption_a, caption_b, top, x, y, w, h);
    scene_free(&scratch);
    if (lay.labels_short == 0 && lay.words_missing == 0) break;
    top = q < 2 ? SIM_TOP + 0.04f * (float)(q + 1) : SIM_TOP; // none names them all: as it was
  }
  Eq e;
  sim_compose(&e, s, out, sim, a, o, &sw, kl, layer, caption_a, caption_b, top, x, y, w, h);
  draw_line(s, sim, o, 0, kl, x, y + h * (top + 0.02f), w, h * (0.98f - top));
}
