// app_draw.c -- the frame: the page of the current step, then the window's own layer on top
// (controls, the inspector, the sentence field, status, help).
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "app_internal.h"
#include "gemm.h" // defines: gemm_kernel, gemm_kernel_name, gemm_kernel_about
#include "tex.h"  // defines: tex_layout, tex_emit
#include "utf8.h" // defines: utf8_ceil, utf8_floor

void app_page_spec(App *a, PageSpec *p, ViewOptions *vo, float w, float h, bool window_layer) {
  if (a->scale == SCALE_GLOBAL && a->global_stale) {
    view_global_range(a->s->trace, &a->global_lo, &a->global_hi);
    a->global_stale = false;
  }
  const LessonStep *ls = app_lesson_step(a);
  *vo = view_options_default(theme_get(a->theme));
  vo->cmap = a->cmap;
  vo->scale = a->scale;
  vo->head = a->head;
  vo->part = a->part;
  vo->model_view = a->model;
  vo->inside = a->inside;
  if (a->inside == INSIDE_STORED) vo->stored = app_stored(a);
  if (a->model) vo->head = -1; // the header says "all 12 heads": the grid shows every one
  vo->model_layer = a->model_layer, vo->model_head = a->model_head; // its page is drawn
  vo->numbers = a->numbers;
  vo->text_scale = app_text_scale(a);
  vo->zoom = a->zoom, vo->pan_x = a->pan_x, vo->pan_y = a->pan_y;
  vo->tok_first = a->tok_first, vo->tok_keys = "< > move the window"; // (a long sentence's tokens)
  vo->global_lo = a->global_lo, vo->global_hi = a->global_hi;
  if (ls) vo->focus_row = ls->row, vo->focus_col = ls->col;
  *p = (PageSpec){.trace = a->s->trace,
                  .step = app_trace_step(a),
                  .view = vo,
                  .title = ls ? ls->title : NULL,
                  .narration = ls ? &ls->narration : NULL,
                  .show_text = true,
                  .sentence = a->s->text,
                  .lesson = a->s->has_lesson ? a->s->lesson.title : NULL,
                  .lesson_step = ls ? a->step : 0,
                  .lesson_steps = ls ? a->s->lesson.n_steps : 0,
                  .text_page = a->text_page,
                  .width = w,
                  .height = h};
  if (!ls) { // free mode: say where we are in the whole pass
    p->lesson_step = a->step;
    p->lesson_steps = app_n_steps(a);
  }
  if (!ls && a->s->gen) { // --generate: the stage of this generation step's pass, and which step
    // ("generation step 9 of 9 · step 24 of 40", not "step 404 of 404" over every pass at once)
    int k, j;
    app_gen_locate(a, a->step, &k, &j);
    snprintf(a->progress, sizeof a->progress, "generation step %d of %d", k + 1, a->s->gen->n_steps);
    p->lesson = a->progress;
    p->lesson_step = j;
    p->lesson_steps = a->s->gen->steps[k].trace->n_steps;
    if (a->s->gen->sampling.on) // the step's own draw (sampling_chart.h)
      vo->sampling = &a->s->gen->sampling, vo->sampling_rng = a->s->gen->steps[k].rng_before;
  } else if (!a->s->gen && a->s->append_smp.on) { // what R draws next, with Shift+K / Shift+P's cuts
    vo->sampling = &a->s->append_smp, vo->sampling_rng = a->s->rng;
  }
  if (a->s->gen) p->footer_reserve = app_strip_height(a, h);
#ifdef __EMSCRIPTEN__
  // the page's "Open a file…" button sits at the footer's right end (web/shell.html, #open: 12 px
  // text, at most about 100 CSS pixels wide; the canvas is drawn at CSS pixels)
  p->footer_right = 112;
#endif
  if (a->s->note.msg[0] && window_layer) p->note = a->s->note.msg;
  if (ls) p->broken = ls->broken; // a step with a mistake: its message instead of its picture
  if (ls && a->s->lesson.sentence && strcmp(a->s->text, a->s->lesson.sentence))
    p->written_for = a->s->lesson.sentence; // a typed sentence: the narration is the lesson's
  p->compare =
      session_compare(a->s, ls ? a->step : -1, &p->compare_sentence, &p->compare_row, &p->compare_col);
  if (p->compare && a->s->compare_model) // --compare-model: the same sentence, two files
    p->caption_a = a->s->model->source, p->caption_b = a->s->compare_model->source;
  app_edits_page(a, p); // a lesson step's own edits; D: edited against the model's own
  p->hide = ls && !a->revealed ? (int)ls->reveal : 0; // REVEAL_RESULT 1, REVEAL_ROW 2 (page.h)
  // the claims are the teacher's (J shows them): they answer the narration's question, and
  // hidden, they would give the answer away
  p->n_claims =
      p->hide || !a->show_claims ? 0 : claims_measure(ls, p->trace, p->compare, a->claims, CLAIMS_MAX);
  p->claims = a->claims;
  a->n_claims_shown = p->n_claims;
  app_marks_page(a, p); // the spotlight, the pen's strokes, the invariants panel (app_marks.c)
}

// ---------------------------------------------------------------- the generation strip

float app_strip_height(const App *a, float h) { return genstrip_height(h, app_text_scale(a)); }

static void generation_strip(App *a, Scene *s, float W, float H) {
  if (a->s->gen)
    genstrip_draw(s, a->s->gen, a->s->gen_step, theme_get(a->theme), W, H, app_text_scale(a), true,
                  genstrip_hides(a->s->has_lesson ? &a->s->lesson : NULL, a->step, a->s->gen_step,
                                 app_reveal_pending(a)));
}

// ---------------------------------------------------------------- controls

static void control(App *a, Scene *s, float x, float y, float w, float h, const char *label, bool selected,
                    uint32_t tint, Action act, int arg) {
  const Theme *th = theme_get(a->theme);
  bool hover = a->mx >= x && a->my >= y && a->mx < x + w && a->my < y + h;
  uint32_t bg = selected ? (tint ? tint : th->accent) : hover ? th->grid : th->bg;
  scene_rect(s, x, y, w, h, bg);
  scene_frame(s, x, y, w, h, 1.5f, tint && !selected ? tint : th->frame);
  uint32_t ink = selected ? SF_RGBA(255, 255, 255, 255) : th->text;
  float fs = h * 0.5f;
  scene_text_aligned(s, FONT_SANS_BOLD, fs, x + w / 2, y + h / 2 + fs * 0.36f, 0.5f, ink, label);
  if (a->n_ctl < APP_MAX_CONTROLS) a->ctl[a->n_ctl++] = (Control){x, y, w, h, act, arg};
}

// Lays the controls out from the right edge of the header; returns the width they take.
static float header_controls(App *a, Scene *s, float W, float u, bool draw) {
  const Trace *t = a->s->trace;
  int k = app_trace_step(a);
  float h = 34 * u, y = (52 * u - h) / 2, x = W - 16 * u, gap = 6 * u;
  const Theme *th = theme_get(a->theme);
#define PUT(wid, label, sel, tint, act, arg)                                                                 \
  do {                                                                                                       \
    x -= (wid);                                                                                              \
    if (draw) control(a, s, x, y, (wid), h, label, sel, tint, act, arg);                                     \
    x -= gap;                                                                                                \
  } while (0)
  PUT(h, "?", a->help, 0, ACT_HELP, 0);
  PUT(h * 1.3f, "▶", false, 0, ACT_NEXT, 0);
  PUT(h * 1.3f, "◀", false, 0, ACT_PREV, 0);
  x -= gap * 2;
  if (k >= 0 && page_step_has_heads(t, k) && t->cfg.H > 1) {
    PUT(h * 1.5f, "all", a->head < 0, 0, ACT_HEAD, -1);
    for (int hd = (t->cfg.H < 12 ? t->cfg.H : 12) - 1; hd >= 0; hd--) {
      char buf[16];
      snprintf(buf, sizeof buf, "%d", hd + 1);
      PUT(h, draw ? scene_strf(s, "%s", buf) : "", a->head == hd, theme_head(th, hd), ACT_HEAD, hd);
    }
    x -= gap * 2;
  }
  if (k >= 0 && t->steps[k].layer >= 0 && t->cfg.n_layers > 1) {
    PUT(h, "]", false, 0, ACT_LAYER, +1);
    PUT(h, "[", false, 0, ACT_LAYER, -1);
  }
#undef PUT
  return W - x;
}

// ---------------------------------------------------------------- the inspector

// A corner of the view's area (bottom right first) where a w × h box hides no operand's cells.
static bool free_corner(const App *a, float w, float h, float floor_y, float ceil_y, float *x, float *y) {
  const float *r = a->lay.area;
  float right = r[0] + r[2] - w, left = r[0], bottom = floor_y - h, top = ceil_y;
  const float corners[4][2] = {{right, bottom}, {right, top}, {left, bottom}, {left, top}};
  for (int c = 0; c < 4; c++) {
    float bx = corners[c][0], by = corners[c][1];
    bool hides = bx < 0 || by < ceil_y;
    for (int k = 0; k < a->lay.n_ops && !hides; k++) {
      const ViewOperand *v = &a->lay.ops[k];
      hides = v->x < bx + w && bx < v->x + v->w && v->y < by + h && by < v->y + v->h;
    }
    if (!hides) return *x = bx, *y = by, true;
  }
  return false;
}

// Whether a box x, y, w, h covers something the class reads on the picture: an operand with its
// symbol, labels and shape, the page's header and title (above the view's area), the colour bars
// (right of the view's clip), the invariants panel, the narration column (left of the area).
static bool covers(const App *a, float x, float y, float w, float h, int pass) {
  bool over_text = pass >= 1, over_cells = pass >= 2;
  const ViewLayout *l = &a->lay;
  float g = 6, fs = l->fs;
  if (y < l->area[1] || (x < l->area[0] && !over_text)) return true;
  if (l->clip[2] > 0 && x + w > l->clip[0] + l->clip[2]) return true; // the colour bars
  if (l->panel[2] > 0 && x < l->panel[0] + l->panel[2] && l->panel[0] < x + w &&
      y < l->panel[1] + l->panel[3] && l->panel[1] < y + h)
    return true;
  for (int k = 0; k < l->n_ops; k++) {
    const ViewOperand *v = &l->ops[k];
    const float *b = v->sym;
    if (b[2] > 0 && x < b[0] + b[2] + g && b[0] - g < x + w && y < b[1] + b[3] + g && b[1] - g < y + h)
      return true;
    if (over_cells && k != a->sel_op) continue; // a zoomed picture: another matrix's cells, not its title
    float top = v->sym[2] > 0 ? fminf(v->y, v->sym[1]) : v->y - fs * 5, x0 = v->x - fs * 5;
    float x1 = v->x + v->w + fs * 0.8f, y1 = v->y + v->h + fs * 2.4f;
    if (l->clip[2] > 0) { // a zoomed picture is drawn only inside its clip: what lies past it is free
      x0 = fmaxf(x0, l->clip[0]), x1 = fminf(x1, l->clip[0] + l->clip[2]);
      top = fmaxf(top, l->clip[1] + fs), y1 = fminf(y1, l->clip[1] + l->clip[3]);
      if (x0 >= x1 || top - fs >= y1) continue;
    }
    if (x < x1 + g && x0 - g < x + w && y < y1 + g && top - fs - g < y + h) return true;
  }
  return false;
}

// The free place for a w × h box nearest to the cell (cx, cy), above floor_y: pass 0 in the view's
// area, pass 1 over the narration column too, pass 2 (a zoomed picture filling its area) over the
// cells of another matrix -- never over the picture's titles, bars or panels, nor the selected
// matrix; none when every place covers something (covers).
static bool clear_spot(const App *a, float w, float h, float cx, float cy, float floor_y, int pass, float *x,
                       float *y) {
  const float *r = a->lay.area;
  float best = 1e30f, step = 12;
  for (float by = r[1]; by + h <= fminf(floor_y, r[1] + r[3] + a->reserve); by += step)
    for (float bx = pass ? 8 : r[0]; bx + w <= r[0] + r[2]; bx += step) {
      float dx = bx + w / 2 - cx, dy = by + h / 2 - cy, d = dx * dx + dy * dy;
      if (d < best && !covers(a, bx, by, w, h, pass)) best = d, *x = bx, *y = by;
    }
  return best < 1e30f;
}

static void inspector(App *a, Scene *s, float u) {
  a->insp[2] = 0, a->insp_h0 = 0;
  if (a->sel_op < 0 || a->sel_op >= a->lay.n_ops) return;
  const Theme *th = theme_get(a->theme);
  Explanation ex;
  explain_cell(app_shown_trace(a), &a->lay, a->sel_op, a->sel_i, a->sel_j, &ex);
  float fs = 24 * u * a->zoom, pad = 14 * u; // the worked equation is part of the picture: zoomed
  TexBox *boxes[EXPLAIN_LINES + 1];
  TexMetrics m[EXPLAIN_LINES + 1];
  int n = 0;
  const ViewOperand *v = &a->lay.ops[a->sel_op];
  float cx = v->x + v->w * (a->sel_j + 1) / v->op.cols, cy = v->y + v->h * (a->sel_i + 1) / v->op.rows;
  float us = u * app_text_scale(a), floor_y = a->h - (a->editing ? 64 : 38) * us - 8 * u; // the footer
  float w = 0, h = 0, fx = 0, fy = 0;
  bool clear = false;
  // the worked equation where it covers nothing the class reads (clear_spot); smaller, down to
  // 60 %, before it covers a title, a colour bar or a panel
  float fs0 = fs;
  for (int pass = 0; pass < 3 && !clear; pass++) {
    fs = fs0;
    for (int tries = 0; tries < 5 && !clear; tries++, fs *= 0.88f) {
      for (int i = 0; i < n; i++) tex_free(boxes[i]);
      n = 0;
      boxes[n] = tex_layout(ex.heading, fs * 1.1f, false, NULL);
      m[n] = tex_metrics(boxes[n]), n++;
      for (int i = 0; i < ex.n_lines; i++) { // display style: fractions as large as in the lessons
        boxes[n] = tex_layout(ex.lines[i], fs, true, NULL);
        m[n] = tex_metrics(boxes[n]), n++;
      }
      w = 0, h = pad;
      for (int i = 0; i < n; i++) w = fmaxf(w, m[i].width), h += m[i].ascent + m[i].descent + 8 * u;
      w += 2 * pad, h += pad;
      if (!pass && !tries) a->insp_h0 = h + 8 * u; // (its room at full size, and a gap)
      clear = clear_spot(a, w, h, cx, cy, floor_y, pass, &fx, &fy);
    }
  }
  float vfs = a->lay.fs; // the picture's label size
  float top = 1e9f, bottom = -1e9f, left = 1e9f;
  for (int k = 0; k < a->lay.n_ops; k++) {
    const ViewOperand *o = &a->lay.ops[k];
    top = fminf(top, o->y), bottom = fmaxf(bottom, o->y + o->h), left = fminf(left, o->x);
  }
  top -= vfs * 5.0f;                                        // symbol, caption, column labels
  bottom += vfs * (a->scale == SCALE_MATRIX ? 4.0f : 2.2f); // the shape (and a matrix's colour bar)
  float ceil_y = a->lay.area[1];                            // the title
  float lo = w + 16 < a->w - left ? left : 8;
  float x = fminf(fmaxf(lo, cx - w / 2), a->w - 8 - w), y = 0;
  if (clear) {
    x = fx, y = fy; // the nearest place to the cell that covers no matrix, title, colour bar or panel
  } else if (bottom + 8 * u + h <= floor_y) {
    y = bottom + 8 * u;
  } else if (top - 8 * u - h >= ceil_y) {
    y = top - 8 * u - h;
  } else if (left - vfs * 8 - w >= 8) { // left of the equation, low (a lesson's text is at the top)
    x = left - vfs * 8 - w, y = floor_y - h;
  } else if (free_corner(a, w, h, floor_y, ceil_y, &x, &y)) {
    // a picture that fills the window: a corner of its area that hides no cell (the colour bars)
  } else { // beside the cell (keyboard, pinned) or the pointer, inside the window
    x = a->cursor || a->pinned ? cx + 16 * u : a->mx + 22 * u;
    y = a->cursor || a->pinned ? cy + 8 * u : a->my + 22 * u;
    if (x + w > a->w - 8)
      x = fmaxf(8, (a->cursor || a->pinned ? v->x + v->w * a->sel_j / v->op.cols : a->mx) - w - 16 * u);
    if (y + h > a->h - 8) y = fmaxf(8, a->h - 8 - h);
  }
  a->insp[0] = x, a->insp[1] = y, a->insp[2] = w, a->insp[3] = h, a->insp_size = fs / fs0;
  scene_rect(s, x + 4 * u, y + 4 * u, w, h, SF_RGBA(0, 0, 0, 60)); // shadow
  scene_rect(s, x, y, w, h, th->panel);
  scene_frame(s, x, y, w, h, 2, a->pinned ? th->highlight : th->frame);
  float by = y + pad;
  for (int i = 0; i < n; i++) {
    by += m[i].ascent;
    tex_emit(s, boxes[i], x + pad, by, th->text);
    by += m[i].descent + 8 * u;
    tex_free(boxes[i]);
  }
}

// The symbol under the pointer (Z′, Q_h …): what it stands for and its shape, in a small box
// below the pointer (above it near the bottom), inside the window.
static void symbol_tip(App *a, Scene *s, float u) {
  int k = app_symbol_under(a);
  if (k < 0) return;
  const Theme *th = theme_get(a->theme);
  char d[160];
  view_symbol_describe(&a->lay, k, d, sizeof d);
  float fs = 22 * u * app_text_scale(a), pad = 8 * u;
  float w = text_width(FONT_SANS, fs, d) + 2 * pad, h = fs * 1.5f + 2 * pad;
  float x = fminf(fmaxf(8, a->mx - w / 2), a->w - 8 - w), y = a->my + 24 * u;
  if (y + h > a->h - 8) y = fmaxf(8, a->my - 16 * u - h);
  scene_rect(s, x + 3 * u, y + 3 * u, w, h, SF_RGBA(0, 0, 0, 60)); // shadow
  scene_rect(s, x, y, w, h, th->panel);
  scene_frame(s, x, y, w, h, 1.5f * u, th->frame);
  scene_text(s, FONT_SANS, fs, x + pad, y + pad + fs * 1.05f, th->text, d);
}

// ---------------------------------------------------------------- sentence, status, help

// The width of text[from, to) of the field.
static float span_width(const App *a, size_t from, size_t to, float fs) {
  char buf[TEXTFIELD_CAP];
  if (to <= from) return 0;
  memcpy(buf, a->field.text + from, to - from);
  buf[to - from] = 0;
  return text_width(FONT_SANS, fs, buf);
}

static const char ELLIPSIS[] = "…";

// The field's text in [x, x + avail) on the baseline by + 54u: the part around the caret (a
// longer text shows "…" where it goes on), the selection behind it, an input method's text at
// the caret (underlined), and the caret. Remembers what it showed for app_field_hit. Returns the
// width drawn.
static float field_text(App *a, Scene *s, float x, float by, float avail, float fs, float u) {
  const Theme *th = theme_get(a->theme);
  const TextField *f = &a->field;
  size_t n = f->len, caret = f->caret;
  float dots = text_width(FONT_SANS, fs, ELLIPSIS), cw = text_width(FONT_SANS, fs, a->compose);
  // the first byte shown: where it was last frame if the caret is still in view, else the
  // smallest start from which the caret (and the composed text) fits
  size_t start = utf8_floor(f->text, a->fld_start < caret ? a->fld_start : caret);
  if (start > 0 && span_width(a, 0, caret, fs) + cw <= avail - dots) start = 0;
  if (span_width(a, start, caret, fs) + cw > avail - (start > 0 ? dots : 0) - dots) {
    size_t lo = start, hi = caret; // width from a start to the caret falls as the start grows
    while (lo < hi) {
      size_t mid = utf8_ceil(f->text, (lo + hi) / 2, caret);
      if (mid >= hi) mid = hi;
      if (span_width(a, mid, caret, fs) + cw <= avail - 2 * dots)
        hi = mid;
      else
        lo = utf8_ceil(f->text, mid + 1, caret);
    }
    start = lo < caret ? lo : caret;
  }
  float x0 = x + (start > 0 ? dots : 0), room = avail - (x0 - x) - cw;
  // the last byte shown: the whole rest if it fits, else as much as fits before a "…"
  size_t end = n;
  if (span_width(a, start, n, fs) > room) {
    size_t lo = caret, hi = n;
    while (lo < hi) {
      size_t mid = utf8_ceil(f->text, (lo + hi + 1) / 2, n);
      if (mid > hi) mid = hi;
      if (mid <= lo) break;
      if (span_width(a, start, mid, fs) <= room - dots)
        lo = mid;
      else
        hi = utf8_floor(f->text, mid - 1);
    }
    end = lo;
  }
  a->fld_start = start, a->fld_x0 = x0, a->fld_fs = fs;
  a->fld[0] = x, a->fld[1] = by, a->fld[2] = avail, a->fld[3] = a->h - by;
#define POS_X(p) (x0 + span_width(a, start, (p), fs) + ((p) > caret ? cw : 0))
  float y = by + 54 * u, top = by + 32 * u, h = fs * 1.25f;
  size_t from, to;
  if (textfield_selection(f, &from, &to) && to > start && from < end) { // the selection behind
    float sx0 = POS_X(from < start ? start : from), sx1 = POS_X(to > end ? end : to);
    scene_rect(s, sx0, top, sx1 - sx0, h, (th->accent & 0x00FFFFFFu) | 0x80000000u);
  }
  if (start > 0) scene_text(s, FONT_SANS, fs, x, y, th->muted, ELLIPSIS);
  char buf[TEXTFIELD_CAP];
  memcpy(buf, f->text + start, caret - start), buf[caret - start] = 0;
  scene_text(s, FONT_SANS, fs, x0, y, th->text, buf);
  float cx = x0 + span_width(a, start, caret, fs);
  if (a->compose[0]) { // composed, not yet typed: underlined at the caret
    scene_text(s, FONT_SANS, fs, cx, y, th->accent, a->compose);
    scene_rect(s, cx, y + 4 * u, cw, fmaxf(2, 2 * u), th->accent);
  }
  memcpy(buf, f->text + caret, end - caret), buf[end - caret] = 0;
  scene_text(s, FONT_SANS, fs, cx + cw, y, th->text, buf);
  if (end < n) scene_text(s, FONT_SANS, fs, POS_X(end), y, th->muted, ELLIPSIS);
  float bar = fmaxf(2, 3 * u); // the caret: a bar as tall as the selection, after composed text
  scene_rect(s, cx + cw - bar / 2, top, bar, h, th->text);
  a->caret_box[0] = cx, a->caret_box[1] = top, a->caret_box[2] = cw + bar, a->caret_box[3] = h;
  float drawn = POS_X(end) - x + (end < n ? dots : 0);
#undef POS_X
  return drawn;
}

bool app_caret_box(const App *a, float box[4]) {
  if (!a->editing || a->fld[2] <= 0) return false;
  memcpy(box, a->caret_box, sizeof a->caret_box);
  return true;
}

bool app_field_hit(App *a, float x, float y, size_t *pos) {
  const TextField *f = &a->field;
  size_t best = a->fld_start;
  float bx = 1e30f;
  for (size_t p = a->fld_start;; p = utf8_ceil(f->text, p + 1, f->len)) {
    float d = fabsf(a->fld_x0 + span_width(a, a->fld_start, p, a->fld_fs) - x);
    if (d < bx)
      bx = d, best = p;
    else
      break; // past the nearest boundary
    if (p >= f->len) break;
  }
  *pos = best;
  return a->editing && a->fld[2] > 0 && x >= 0 && x < a->fld[0] + a->fld[2] + 20 && y >= a->fld[1] &&
         y < a->fld[1] + a->fld[3];
}

static void sentence_field(App *a, Scene *s, float W, float H, float u) {
  const Theme *th = theme_get(a->theme);
  float fh = 38 * u, y = H - fh;
  if (!a->editing) { // the footer's sentence is a button that starts editing
    if (a->n_ctl < APP_MAX_CONTROLS) a->ctl[a->n_ctl++] = (Control){0, y, W * 0.6f, fh, ACT_EDIT, 0};
    return;
  }
  float bh = 64 * u, by = H - bh;
  scene_rect(s, 0, by, W, bh, th->panel);
  scene_rect(s, 0, by, W, 3 * u, th->accent);
  float fs = 24 * u, x = 24 * u;
  scene_text(s, FONT_SANS_BOLD, fs * 0.8f, x, by + 26 * u, th->accent,
             "Type a sentence — Enter when done, Esc to cancel, ↑ ↓ earlier sentences");
  float tw = field_text(a, s, x, by, W * 0.5f - x - 40 * u, fs, u);
  // the tokens the model sees, unknown words in their own colour
  const Trace *t = a->s->trace;
  float tx = fmaxf(W * 0.5f, x + tw + 40 * u), fs2 = fs * 0.75f;
  const char *error = a->field.error[0] ? a->field.error : a->edit_error;
  if (error[0]) {
    scene_text(s, FONT_SANS_BOLD, fs2, tx, by + 54 * u, th->warn, error);
    return;
  }
  scene_text(s, FONT_SANS, fs2 * 0.9f, tx, by + 26 * u, th->muted, "tokens:");
  for (int i = 0; i < t->L && tx < W - 60 * u; i++) {
    const char *w = t->tokens.unknown[i] ? "<unk>" : t->tokens.words[i];
    uint32_t c = t->tokens.unknown[i] ? th->unk : th->text;
    scene_text(s, t->tokens.unknown[i] ? FONT_SANS_BOLD : FONT_SANS, fs2, tx, by + 54 * u, c, w);
    tx += text_width(FONT_SANS_BOLD, fs2, w) + 12 * u;
  }
}

// The status ("appended …", "saved …", an error) for its 4.5 s: a band in the text colour over the
// footer's own line (sentence, model), which it hides for that time, so that it covers no picture
// (a toast above the footer hid the prediction's last bar). Above the sentence or value field
// while one is open: they take the footer's place.
static void status_toast(App *a, Scene *s, float W, float H, float u) {
  if (!a->status[0] || app_train_open(a)) return; // the training overlay shows it in its panel
  const Theme *th = theme_get(a->theme);
  float fs = 22 * u, h = 38 * u, y = H - h;
  if (a->editing || a->value_editing) y = H - 64 * u - h; // the fields are 64 high (sentence_field)
  scene_rect(s, 0, y, W, h, th->text);
  scene_text_aligned(s, FONT_SANS_BOLD, fs, W / 2, y + h / 2 + fs * 0.36f, 0.5f, th->bg, a->status);
}

static const char *const HELP[][2] = {
    {"→  Space  PageDown", "next step"},
    {"←  Backspace  PageUp", "previous step"},
    {"Home  End", "first / last step"},
    {"1 … 9", "show head 1 … 9"},
    {"0  or  G", "all heads side by side"},
    {"[  ]", "previous / next layer"},
    {",  .", "--generate: previous / next generation step"},
    {"<  >", "over 40 tokens: move the window of tokens"},
    {"hover, click", "inspect a cell or a symbol; click pins"},
    {"Shift + arrows", "move the cell cursor"},
    {"Enter", "pin / unpin the cell"},
    {"E, or click the sentence", "type a new sentence"},
    {"Ctrl + A  C  X  V  Z  Y", "typing: select all, copy, cut, paste, undo, redo"},
    {"↑  ↓  while typing", "the sentences used before"},
    {"F  or  F11", "fullscreen"},
    {"+  −,  Ctrl + wheel", "picture larger / smaller (50 … 300 %)"},
    {"Alt + arrows, drag", "move a picture larger than the window"},
    {"Z", "fit the picture to the window"},
    {"Ctrl +  Ctrl −", "text larger / smaller"},
    {"T", "light high-contrast theme"},
    {"C", "cycle the colour maps"},
    {"M", "colour scale per matrix / stage / all"},
    {"N", "numbers in cells"},
    {"P", "Q, K, V: all or one"},
    {"O", "model view: all layers × heads"},
    {"Shift+O", "inside: lens, rollout, head view, saliency, neurons, KV cache, weights as stored"},
    {"V  (a cell selected)", "what-if: type a new value for it"},
    {"Ctrl + ↑  ↓", "what-if: nudge the selected value up / down"},
    {"X", "switch the head shown off: zeroed, uniform, on"},
    {"U  /  Shift + U", "undo the last edit / all edits (no edits: the last token)"},
    {"D", "difference view: edited against the model's own"},
    {"A  R  U", "next token: top / sampled / U undo it"},
    {"H  L", "its temperature higher / lower"},
    {"Shift+K  /  Shift+P", "R's top-k / top-p: what they cut, on the prediction"},
    {"W  /  K  /  Shift + W", "pen: freehand, arrow, circle, off / colour / clear"},
    {"Y", "spotlight the selected cell's row, column, cell, off"},
    {"I", "invariants of this stage, measured"},
    {"J", "the teacher's claims (✓ ✗) under the narration"},
    {"B", "the backward pass: → ← stages, Space a step"},
    {"S", "save this view as PNG"},
    {"Ctrl + E", "export every step as PNG"},
    {"?  or  F1", "this help"},
    {"Esc", "close, unpin, cancel typing, leave fullscreen"},
    {"Ctrl + Q", "quit"},
};

static void help(App *a, Scene *s, float W, float H, float u) {
  if (!a->help) return;
  const Theme *th = theme_get(a->theme);
  int n = (int)(sizeof HELP / sizeof *HELP);
  float fs = 22 * u, w = fminf(W - 60 * u, 1600 * u);
  // each column as wide as its widest key plus its widest text: the font shrinks until both
  // columns fit side by side, so that no text runs into the next column or out of the box
  float need = 0;
  for (int c = 0; c < 2; c++) {
    float kw = 0, dw = 0;
    for (int i = c; i < n; i += 2)
      kw = fmaxf(kw, text_width(FONT_SANS_BOLD, fs * 0.85f, HELP[i][0])),
      dw = fmaxf(dw, text_width(FONT_SANS, fs * 0.85f, HELP[i][1]));
    need = fmaxf(need, kw + 18 * u + dw);
  }
  if (need > w / 2 - 60 * u) fs *= (w / 2 - 60 * u) / need;
  float lh = fs * 1.55f, h = lh * ((n + 1) / 2) + 140 * u;
  float x = (W - w) / 2, y = fmaxf(20 * u, (H - h) / 2);
  scene_rect(s, 0, 0, W, H, SF_RGBA(0, 0, 0, 110));
  scene_rect(s, x, y, w, h, th->panel);
  scene_frame(s, x, y, w, h, 2, th->accent);
  scene_text(s, FONT_SANS_BOLD, fs * 1.3f, x + 30 * u, y + 50 * u, th->text, "Keys");
  scene_text_aligned(s, FONT_SANS, fs * 0.8f, x + w - 30 * u, y + 50 * u, 1.0f, th->muted,
                     "a presentation clicker sends → and ←");
  float keyw[2] = {0, 0}; // each column's keys are as wide as its widest
  for (int i = 0; i < n; i++)
    keyw[i % 2] = fmaxf(keyw[i % 2], text_width(FONT_SANS_BOLD, fs * 0.85f, HELP[i][0]));
  for (int i = 0; i < n; i++) {
    float cx = x + 30 * u + (i % 2) * w / 2, cy = y + 100 * u + (i / 2) * lh;
    scene_text(s, FONT_SANS_BOLD, fs * 0.85f, cx, cy, th->accent, HELP[i][0]);
    scene_text(s, FONT_SANS, fs * 0.85f, cx + keyw[i % 2] + 18 * u, cy, th->text, HELP[i][1]);
  }
  char kernel[160]; // which kernel computes the products (as `stepformer info` says): the page's is wasm's
  snprintf(kernel, sizeof kernel, "matrix products: %s kernel (%s)", gemm_kernel_name(gemm_kernel()),
           gemm_kernel_about(gemm_kernel()));
  scene_text(s, FONT_SANS, fs * 0.75f, x + 30 * u, y + h - 22 * u, th->muted, kernel);
}

bool app_draw(App *a, Scene *base, Scene *overlay, float w, float h) {
  bool redraw = a->base_dirty || w != a->w || h != a->h;
  a->w = w, a->h = h;
  float u = h / 1080.0f, us = u * app_text_scale(a);
  PageSpec p;
  ViewOptions vo;
  app_page_spec(a, &p, &vo, w, h, true);
  float room = a->sel_op >= 0 && (a->pinned || a->cursor) ? fmaxf(a->reserve, a->insp_h0) : 0;
  if (fabsf(room - a->reserve) > 0.5f) a->reserve = room, redraw = true;
  p.view_reserve = a->reserve;
  if (redraw) {
    p.header_reserve = header_controls(a, base, w, us, false);
    page_render(base, &p, &a->lay);
    model_release_pages(a->s->model); // the weights drawn from a file mapping go back (model.h)
    a->pan_x = a->lay.pan[0], a->pan_y = a->lay.pan[1]; // a pan past the picture's edge is not kept
    generation_strip(a, base, w, h);
  }
  scene_reset(overlay, w, h, 0);
  a->n_ctl = 0;
  if (a->sel_op >= 0) { // the selected cell and the cells that produced it
    vo.hover_op = a->sel_op, vo.hover_i = a->sel_i, vo.hover_j = a->sel_j;
    vo.pinned = a->pinned || a->cursor;
    vo.text_scale = us;
    view_draw_selection(overlay, &a->lay, &vo);
  }
  if (a->model && a->lay.grid.layers > 0) { // the model view's selected thumbnail
    float r[4], m = 3 * us;
    view_model_cell(&a->lay, a->model_layer, a->model_head, r);
    if (r[2] > 0)
      scene_frame(overlay, r[0] - m, r[1] - m, r[2] + 2 * m, r[3] + 2 * m, 3 * us,
                  theme_get(a->theme)->highlight);
  }
  header_controls(a, overlay, w, us, true);
  sentence_field(a, overlay, w, h, us);
  inspector(a, overlay, u);
  symbol_tip(a, overlay, u);
  app_edits_draw(a, overlay, w, h, us);
  app_train_draw(a, overlay, w, h, us);
  status_toast(a, overlay, w, h, us);
  help(a, overlay, w, h, us);
  a->dirty = a->base_dirty = false;
  // a cell just pinned: the page again, with room for its worked equation at full size (once)
  bool more = a->sel_op >= 0 && (a->pinned || a->cursor) && a->insp_h0 > a->reserve + 0.5f;
  if (more && !a->reserving) {
    a->reserving = true;
    app_draw(a, base, overlay, w, h);
    a->reserving = false;
    return true;
  }
  return redraw;
}
