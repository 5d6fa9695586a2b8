// app.c -- see app.h: state, navigation and input. Drawing is in app_draw.c.
#include "app_internal.h"
#include "utf8.h" // defines: utf8_floor

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void app_touch(App *a) { a->dirty = a->base_dirty = true; }

// ---------------------------------------------------------------- steps

// --generate without a lesson: the steps are the encoder's and memory (once, from generation step
// 1's trace), then for each generation step the decoder's steps of its trace (a causal model: all
// of its steps, each generation step). app_gen_split gives the shared steps and the repeated ones.
static bool gen_mode(const App *a) { return a->s->gen && !a->s->has_lesson; }

static void gen_split(const App *a, int *shared, int *per_step) {
  const Trace *t = a->s->gen->steps[0].trace;
  int k = a->s->gen->seq2seq ? trace_step_find(t, STEP_DEC_TOKENS, -1) : 0;
  *shared = k < 0 ? 0 : k;
  *per_step = t->n_steps - *shared;
}

void app_gen_locate(const App *a, int step, int *gen_step, int *trace_step) {
  int shared, per;
  gen_split(a, &shared, &per);
  if (step < shared)
    *gen_step = 0, *trace_step = step;
  else
    *gen_step = (step - shared) / per, *trace_step = shared + (step - shared) % per;
}

static int gen_virtual(const App *a, int gen_step, int trace_step) {
  int shared, per;
  gen_split(a, &shared, &per);
  if (trace_step < shared) return trace_step;
  return shared + gen_step * per + (trace_step - shared);
}

int app_n_steps(const App *a) {
  if (gen_mode(a)) {
    int shared, per;
    gen_split(a, &shared, &per);
    return shared + a->s->gen->n_steps * per;
  }
  return a->s->has_lesson ? a->s->lesson.n_steps : a->s->trace->n_steps;
}

const LessonStep *app_lesson_step(const App *a) {
  return a->s->has_lesson ? &a->s->lesson.steps[a->step] : NULL;
}

int app_trace_step(const App *a) {
  const Trace *t = a->s->trace;
  const LessonStep *ls = app_lesson_step(a);
  if (gen_mode(a)) {
    int k, j;
    app_gen_locate(a, a->step, &k, &j);
    return j;
  }
  if (!ls) return a->step;
  if (!ls->has_stage) return -1;
  int layer = ls->layer + a->layer_delta;
  int n_layers = stage_is_decoder(ls->stage) ? t->cfg.n_dec_layers : t->cfg.n_layers; // a decoder's
  if (layer >= n_layers) layer = n_layers - 1;
  if (layer < 0) layer = 0;
  return trace_step_find(t, ls->stage, layer);
}

static void clear_selection(App *a) {
  a->sel_op = -1;
  a->sym_op = -1;
  a->pinned = false;
  a->cursor = false;
  a->dirty = true;
}

void app_set_status(App *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(a->status, sizeof a->status, fmt, ap);
  va_end(ap);
  a->status_until = a->now + 4500;
  a->status_fresh = true; // its state: the one this event leaves (app_event)
  a->dirty = true;
}

// What a status message is about: the picture on screen. "revealed", "model view: arrows pick ...",
// "scores without 1/√d_k" are stale once the step, the head, the layer, the view or the overlay
// changes, and go then rather than after their 4.5 s.
static unsigned long status_state(const App *a) {
  const long parts[] = {a->step, a->head, app_trace_step(a), a->layer_delta,    a->model,   a->revealed,
                        a->part, a->diff, a->s->gen_step,    app_train_open(a), a->editing, a->s->n_appended};
  unsigned long k = 1469598103UL;
  for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) k = k * 1099511UL + (unsigned long)(parts[i] + 7);
  return k;
}

// Predict, then reveal: a step with reveal= opens with its result (or row) hidden; the next
// "forward" (→, Space, PageDown, the next button) shows it, the one after goes on.
bool app_reveal_pending(const App *a) {
  const LessonStep *ls = app_lesson_step(a);
  return ls && ls->reveal != REVEAL_NONE && !a->revealed;
}
static void reveal(App *a) {
  a->revealed = true;
  a->dirty = a->base_dirty = true; // the page itself changes
  app_set_status(a, "revealed");
}

// A cell that the reveal= step still hides (page.h: PageSpec.hide): hovering it shows nothing.
static bool hidden_cell(const App *a, int op, int i) {
  if (!app_reveal_pending(a) || op < 0 || op >= a->lay.n_ops || !a->lay.ops[op].result) return false;
  const LessonStep *ls = app_lesson_step(a);
  if (ls->reveal == REVEAL_RESULT) return true;
  const char *ct;
  int crow = -1, ccol;
  const Trace *cmp = session_compare(a->s, a->step, &ct, &crow, &ccol);
  i += a->lay.ops[op].op.row0; // (the matrix's row: a window of the tokens counts from its start)
  return i == (cmp && a->lay.ops[op].op.trace == cmp ? crow : ls->row);
}
static void relayout(App *a);
static void show_result(App *a);

static void enter_step(App *a, int step) {
  int n = app_n_steps(a);
  if (step < 0) step = 0;
  if (step >= n) step = n - 1;
  a->step = step;
  a->text_page = 0;    // a long narration opens on its first page
  a->revealed = false; // a reveal= step opens hidden
  app_marks_step(a);   // strokes and spotlight belong to the step they were drawn on
  a->layer_delta = 0;
  a->model = false; // the model view belongs to the step it was opened on
  const LessonStep *fs = app_lesson_step(a);
  if (fs && fs->row >= 0) a->tok_first = -1; // a long sentence's window: around the step's focus
  if (gen_mode(a)) {                         // the trace of the generation step this step belongs to
    int k, j;
    app_gen_locate(a, step, &k, &j);
    if (k != a->s->gen_step) a->global_stale = true;
    session_set_gen_step(a->s, k);
  }
  const LessonStep *ls = app_lesson_step(a);
  if (ls) {
    a->head = ls->head;
    a->part = (int)ls->show;
    a->inside = ls->inside; // stage=lens ...: the view inside the pass (i leaves it)
    if (a->s->gen) {        // the lesson step's generation step (gen=N)
      if (ls->gen != a->s->gen_step) a->global_stale = true;
      session_set_gen_step(a->s, ls->gen);
    }
  }
  clear_selection(a);
  app_touch(a);
  if (a->zoom > 1 && a->w > 0 && a->h > 0) { // a zoomed picture: the new step's result in view
    a->pan_x = a->pan_y = 0;
    relayout(a);
    show_result(a);
  }
}

// , and .: the same decoder stage one generation step back or on (--generate).
static void change_gen_step(App *a, int d) {
  if (!gen_mode(a)) {
    app_set_status(a, ", and . step through generation: open the window with --generate");
    return;
  }
  int k, j, n = a->s->gen->n_steps;
  app_gen_locate(a, a->step, &k, &j);
  int shared, per;
  gen_split(a, &shared, &per);
  if (j < shared)
    j = shared; // from the encoder: the decoder's first stage
  else if (k + d < 0 || k + d >= n) {
    app_set_status(a, "generation step %d is the %s (of %d)", k + 1, d < 0 ? "first" : "last", n);
    return;
  } else
    k += d;
  enter_step(a, gen_virtual(a, k, j));
  app_set_status(a, "generation step %d of %d", k + 1, n);
}

// [ and ]: the same stage one layer down or up.
static void change_layer(App *a, int d) {
  const Trace *t = a->s->trace;
  int k = app_trace_step(a);
  if (k < 0 || t->steps[k].layer < 0) return;
  int layer = t->steps[k].layer + d;
  int n_layers = stage_is_decoder(t->steps[k].kind) ? t->cfg.n_dec_layers : t->cfg.n_layers; // a decoder's
  if (layer < 0 || layer >= n_layers) {
    app_set_status(a, "layer %d is the %s layer", t->steps[k].layer + 1, d < 0 ? "first" : "last");
    return;
  }
  if (a->s->has_lesson)
    a->layer_delta += d;
  else {
    int j = trace_step_find(t, t->steps[k].kind, layer);
    if (j >= 0) a->step = gen_mode(a) ? gen_virtual(a, a->s->gen_step, j) : j;
  }
  clear_selection(a);
  app_touch(a);
}

static void set_head(App *a, int h) {
  int H = a->s->trace->cfg.H;
  if (h >= H) {
    app_set_status(a, "the model has %d head%s", H, H > 1 ? "s" : "");
    return;
  }
  a->head = h;
  clear_selection(a);
  app_touch(a);
}

// ---------------------------------------------------------------- the model view

// O: every layer × head of the softmax stage as thumbnails, the current layer and head selected.
static void toggle_model(App *a) {
  int k = app_trace_step(a);
  if (a->model) {
    a->model = false;
  } else if (k < 0 || !view_model_available(a->s->trace, k)) {
    app_set_status(a, "O shows every layer and head on a softmax step (A): go to one first");
    return;
  } else {
    a->model = true;
    a->model_layer = a->s->trace->steps[k].layer;
    a->model_head = a->head < 0 ? 0 : a->head;
    app_set_status(a, "model view: arrows pick a layer and head, Enter or a click opens it, Esc returns");
  }
  clear_selection(a);
  app_touch(a);
}

// Shift+O: the views inside the pass in turn (lens, rollout, head view, saliency, neurons, then the
// step's own picture again), skipping those the model cannot draw; the layer is the step's.
static void cycle_inside(App *a) {
  const Trace *t = a->s->trace;
  InsideView k = a->inside;
  do k = (InsideView)((k + 1) % INSIDE_COUNT);
  while (k != INSIDE_NONE && !inside_view_available(t, k));
  a->inside = k;
  a->model = false;
  clear_selection(a);
  if (k == INSIDE_NONE)
    app_set_status(a, "the step's own picture again");
  else if (k == INSIDE_STORED)
    app_set_status(a, "inside: %s (Shift+O: the next view; [ ] another tensor; Shift+arrows another block)",
                   view_inside_title(k));
  else
    app_set_status(a, "inside: %s (Shift+O: the next view; [ ] another layer; Shift+arrows a token)",
                   view_inside_title(k));
  app_touch(a);
}

const StoredView *app_stored(App *a) {
  const Model *m = a->s->model;
  if (!m->stored_path) return NULL;
  if (!a->stored && !(a->stored = calloc(1, sizeof *a->stored))) return NULL;
  if (a->stored_stale) {
    Err err = {0};
    a->stored_pick.ref = a->s->compare_model_path;
    if (!gguf_stored_view(m->stored_path, &a->stored_pick, a->stored, &err)) {
      app_set_status(a, "%s", err.msg);
      free(a->stored), a->stored = NULL;
      return NULL;
    }
    a->stored_stale = false;
    a->stored_pick.which = a->stored->which, a->stored_pick.block = a->stored->block;
    a->stored_pick.tensor = NULL, a->stored_pick.keep_matrix = false;
  }
  return a->stored;
}

// The stored view's keys: [ ] the previous or next quantized tensor, Shift+← → the previous or next
// block, Shift+↑ ↓ the block a row above or below. True when the key was one of them.
static bool stored_key(App *a, const AppEvent *e) {
  StoredView *v = a->stored;
  bool shift = e->mods & MOD_SHIFT;
  StoredPick *p = &a->stored_pick;
  if (!v) return false;
  bool bracket = e->key == KEY_CHAR && (e->ch == '[' || e->ch == ']');
  if (bracket) {
    p->which = v->which + (e->ch == ']' ? 1 : -1), p->block = -1, p->weight = -1, p->keep_matrix = false;
  } else if (shift && (e->key == KEY_LEFT || e->key == KEY_RIGHT || e->key == KEY_UP || e->key == KEY_DOWN)) {
    int64_t step = e->key == KEY_LEFT || e->key == KEY_RIGHT ? 1 : v->row_blocks > 0 ? v->row_blocks : 1;
    int64_t b = v->block + (e->key == KEY_LEFT || e->key == KEY_UP ? -step : step);
    if (b < 0 || b >= v->n_blocks) {
      app_set_status(a, "block %lld is the %s of %s's %lld", (long long)v->block + 1,
                     b < 0 ? "first" : "last", v->tensor, (long long)v->n_blocks);
      return true;
    }
    p->which = v->which, p->block = b, p->weight = -1, p->keep_matrix = true;
  } else {
    return false;
  }
  a->stored_stale = true;
  if (app_stored(a))
    app_set_status(a, "%s (%s): block %lld of %lld ([ ] another tensor; Shift+arrows another block)",
                   a->stored->tensor, a->stored->type, (long long)a->stored->block + 1,
                   (long long)a->stored->n_blocks);
  a->base_dirty = true;
  app_touch(a);
  return true;
}

// Enter or a click in the model view: the normal view of that layer's softmax and that head.
static void open_model_cell(App *a, int layer, int head) {
  int k = app_trace_step(a), d = layer - a->s->trace->steps[k].layer;
  a->model = false;
  if (d) change_layer(a, d);
  set_head(a, head);
}

// Arrows in the model view move its selection (↑ ↓ layers, ← → heads); true when the key was used.
static bool model_key(App *a, const AppEvent *e) {
  const Trace *t = a->s->trace;
  int dl = e->key == KEY_DOWN ? 1
           : e->key == KEY_UP ? -1
                              : 0,
      dh = e->key == KEY_RIGHT  ? 1
           : e->key == KEY_LEFT ? -1
                                : 0;
  if (e->key == KEY_ENTER) return open_model_cell(a, a->model_layer, a->model_head), true;
  if (e->key == KEY_ESCAPE && !a->help) return toggle_model(a), true;
  if (!dl && !dh) return false;
  int l = a->model_layer + dl, h = a->model_head + dh;
  if (l >= 0 && l < t->cfg.n_layers && h >= 0 && h < t->cfg.H) a->model_layer = l, a->model_head = h;
  const ViewGrid *g = &a->lay.grid;
  if (a->model_layer < g->l0 || a->model_layer >= g->l0 + g->layers || a->model_head < g->h0 ||
      a->model_head >= g->h0 + g->heads)
    app_touch(a); // past the page's edge: the page that holds the selection is drawn
  else
    a->dirty = true; // the selection is the overlay's: the grid under it is not drawn again
  return true;
}

// ---------------------------------------------------------------- the cell cursor

static void move_cursor(App *a, int di, int dj) {
  const ViewLayout *l = &a->lay;
  if (l->n_ops == 0) return;
  if (a->sel_op < 0 || a->sel_op >= l->n_ops) {
    a->sel_op = l->result >= 0 ? l->result : 0;
    a->sel_i = a->sel_j = 0;
  } else {
    const Operand *o = &l->ops[a->sel_op].op;
    a->sel_i = a->sel_i + di < 0 ? 0 : a->sel_i + di >= o->rows ? o->rows - 1 : a->sel_i + di;
    a->sel_j = a->sel_j + dj < 0 ? 0 : a->sel_j + dj >= o->cols ? o->cols - 1 : a->sel_j + dj;
  }
  a->cursor = true;
  a->dirty = true;
}

// ---------------------------------------------------------------- editing the sentence

static void recompute(App *a);

_Static_assert(TEXTFIELD_CAP == SESSION_MAX_TEXT, "the field holds the longest sentence a session takes");

static void set_editing(App *a, bool on) {
  if (a->editing == on) return;
  a->editing = on;
  a->compose[0] = 0;
  a->dragging = false;
  if (on) {
    textfield_set(&a->field, a->s->text);
    textfield_history_add(&a->field, a->s->text); // the sentence shown when editing began
    snprintf(a->before_edit, sizeof a->before_edit, "%s", a->s->text);
    a->edit_error[0] = 0;
  } else if (a->edit_error[0]) { // leaving with a sentence that did not work: keep the last good one
    a->edit_error[0] = 0;
    app_set_status(a, "kept the last sentence that worked: “%.60s%s”", a->s->text,
                   strlen(a->s->text) > 60 ? "…" : "");
  } else {
    textfield_history_add(&a->field, a->s->text); // Up brings it back next time
  }
  a->req.text_input_changed = true;
  a->dirty = true;
}

// Esc while typing: the sentence from before editing comes back.
static void cancel_editing(App *a) {
  if (strcmp(a->s->text, a->before_edit) != 0) {
    textfield_set(&a->field, a->before_edit);
    recompute(a);
  }
  a->edit_error[0] = 0;
  set_editing(a, false);
  app_set_status(a, "editing cancelled: the sentence is as it was");
}

static void recompute(App *a) {
  Err err = {0};
  if (session_set_text(a->s, a->field.text, &err)) {
    a->edit_error[0] = 0;
    a->tok_first = -1;      // a new sentence: its window of tokens from the start (or the focus)
    a->global_stale = true; // measured when the global scale is shown
    int n = app_n_steps(a);
    if (a->step >= n) a->step = n - 1;
    if (gen_mode(a)) { // the new generation's trace of this step
      int k, j;
      app_gen_locate(a, a->step, &k, &j);
      session_set_gen_step(a->s, k);
    }
  } else {
    snprintf(a->edit_error, sizeof a->edit_error, "%s", err.msg);
  }
  clear_selection(a);
  app_touch(a);
}

// After a call on the field: a new text is computed at once (recompute as you type); a moved
// caret or selection only needs a frame.
static void field_changed(App *a, bool changed) {
  if (changed) recompute(a);
  a->dirty = true;
}

static void copy_selection(App *a, bool cut) {
  TextField *f = &a->field;
  size_t from, to;
  if (!textfield_selection(f, &from, &to)) return;
  if (cut)
    field_changed(a, textfield_cut(f, a->clip, sizeof a->clip));
  else
    textfield_copy(f, a->clip, sizeof a->clip);
  a->req.copy = true;
}

// The keys of the sentence field (while editing); typed characters arrive as EV_TEXT.
static void field_key(App *a, const AppEvent *e) {
  TextField *f = &a->field;
  bool shift = e->mods & MOD_SHIFT, ctrl = e->mods & MOD_CTRL;
  switch (e->key) {
  case KEY_LEFT: textfield_move(f, ctrl ? TF_WORD_LEFT : TF_LEFT, shift); break;
  case KEY_RIGHT: textfield_move(f, ctrl ? TF_WORD_RIGHT : TF_RIGHT, shift); break;
  case KEY_HOME: textfield_move(f, TF_HOME, shift); break;
  case KEY_END: textfield_move(f, TF_END, shift); break;
  case KEY_UP: return field_changed(a, textfield_history_up(f));
  case KEY_DOWN: return field_changed(a, textfield_history_down(f));
  case KEY_BACKSPACE: return field_changed(a, textfield_delete(f, ctrl ? TF_WORD_BACK : TF_BACK));
  case KEY_DELETE: return field_changed(a, textfield_delete(f, ctrl ? TF_WORD_FORWARD : TF_FORWARD));
  case KEY_ENTER: return set_editing(a, false);
  case KEY_ESCAPE: return cancel_editing(a);
  case KEY_CHAR:
    if (!ctrl) return;
    switch (e->ch) {
    case 'a': textfield_select_all(f); break;
    case 'c': copy_selection(a, false); break;
    case 'x': copy_selection(a, true); break;
    case 'v': a->req.paste = true; break;
    case 'z': return field_changed(a, shift ? textfield_redo(f) : textfield_undo(f));
    case 'y': return field_changed(a, textfield_redo(f));
    case 'q': a->req.quit = true; break;
    default: return;
    }
    break;
  default: return;
  }
  a->dirty = true;
}

// ---------------------------------------------------------------- generating token by token

// The temperatures H and L step through (the prediction's softmax(logits / T)).
static const float TEMPERATURES[] = {0.1f, 0.2f, 0.3f, 0.5f, 0.7f, 1.0f, 1.5f, 2.0f, 3.0f, 5.0f};
enum { N_TEMPERATURES = (int)(sizeof TEMPERATURES / sizeof *TEMPERATURES) };

// After the trace changed under the same step: the global scale and the selection are stale.
static void trace_changed(App *a) {
  a->global_stale = true;
  clear_selection(a);
  app_touch(a);
}

// H and L: the next temperature up or down.
static void change_temperature(App *a, int d) {
  Err err = {0};
  if (!session_can_append(a->s, &err)) {
    app_set_status(a, "H and L change the temperature of the next token: %s", err.msg);
    return;
  }
  int k = 0;
  while (k + 1 < N_TEMPERATURES && TEMPERATURES[k] < a->s->temperature - 1e-4f) k++;
  if (k + d < 0 || k + d >= N_TEMPERATURES) {
    app_set_status(a, "temperature %g is the %s", a->s->temperature, d < 0 ? "lowest" : "highest");
    return;
  }
  session_set_temperature(a->s, TEMPERATURES[k + d]);
  trace_changed(a);
  app_set_status(a, "temperature %g: the prediction is softmax(logits / %g)", a->s->temperature,
                 a->s->temperature);
}

// Shift+K and Shift+P: R's top-k and top-p, each a step through a short list back to off.
static const int TOP_KS[] = {0, 50, 10, 5, 3, 1};
static const float TOP_PS[] = {1.0f, 0.95f, 0.9f, 0.8f, 0.5f};
static void change_cuts(App *a, bool k) {
  Err err = {0};
  if (!session_can_append(a->s, &err)) {
    app_set_status(a, "Shift+K and Shift+P cut the candidates R draws from: %s", err.msg);
    return;
  }
  Sampling *smp = &a->s->append_smp;
  int top_k = smp->top_k;
  float top_p = smp->top_p;
  if (k) {
    int i = 0, n = (int)(sizeof TOP_KS / sizeof *TOP_KS);
    while (i < n && TOP_KS[i] != top_k) i++;
    top_k = TOP_KS[(i + 1) % n];
  } else {
    int i = 0, n = (int)(sizeof TOP_PS / sizeof *TOP_PS);
    while (i < n && fabsf(TOP_PS[i] - top_p) > 1e-4f) i++;
    top_p = TOP_PS[(i + 1) % n];
  }
  session_set_cuts(a->s, top_k, top_p);
  app_touch(a);
  if (k)
    if (top_k)
      app_set_status(a, "top-k %d: R draws from the %d most probable words only (the chart shows the cut)",
                     top_k, top_k);
    else
      app_set_status(a, "top-k off");
  else if (top_p < 1)
    app_set_status(a, "top-p %g: R draws from the fewest words whose probability reaches %g", top_p, top_p);
  else
    app_set_status(a, "top-p off");
}

// A and R: append the most likely or a sampled token; U: remove the last one appended.
static void append_token(App *a, bool sample) {
  Err err = {0};
  float p = 0;
  int id = session_append(a->s, sample, &p, &err);
  if (id < 0) {
    app_set_status(a, "%s", err.msg);
    return;
  }
  trace_changed(a);
  const char *w = id < a->s->model->vocab.n ? a->s->model->vocab.words[id] : "?";
  if (sample)
    app_set_status(a, "appended %s (p = %.3f at T = %g; draw %d of seed %llu)", w, p, a->s->temperature,
                   a->s->draws, (unsigned long long)a->s->seed);
  else
    app_set_status(a, "appended %s, the most likely (p = %.3f at T = %g)", w, p, a->s->temperature);
}

static void undo_token(App *a) {
  Err err = {0};
  if (!session_undo_append(a->s, &err)) {
    app_set_status(a, "%s", err.msg);
    return;
  }
  trace_changed(a);
  app_set_status(a, "removed the last appended token (%d left)", a->s->n_appended);
}

// ---------------------------------------------------------------- keys

static void cycle_cmap(App *a) {
  // the order C steps through: every colour map once (a new one must be placed here to build)
  static const Colormap order[] = {CMAP_AUTO, CMAP_VIRIDIS, CMAP_CIVIDIS, CMAP_DIVERGING, CMAP_GREY};
  _Static_assert(sizeof order / sizeof *order == CMAP_COUNT,
                 "cycle_cmap: the order lists every colour map once");
  const int n = (int)(sizeof order / sizeof *order);
  int k = 0;
  while (k < n && order[k] != a->cmap) k++;
  a->cmap = order[(k + 1) % n];
  app_touch(a);
  app_set_status(a, "colours: %s%s", cmap_name(a->cmap),
                 a->cmap == CMAP_AUTO ? " (diverging for signed values, viridis for probabilities)" : "");
}

// The largest size whose page still has room: text and cells grow with the size but the window
// does not, so beyond this the labels, the header and the narration would run into each other
// (the page stays at least 1440 × 1080 units of a 100% page wide). Never below 100%.
static float max_text_scale(const App *a) {
  return fmaxf(1.0f, fminf(2.5f, floorf(a->w * 1080.0f / (1440.0f * a->h) * 10) / 10));
}

float app_text_scale(const App *a) { return fminf(a->text_scale, max_text_scale(a)); }

// + and −: the picture larger or smaller, through these sizes. Where it no longer fits its area it
// is moved by dragging or Alt + arrows; Z fits it again.
static const float ZOOMS[] = {0.5f, 0.67f, 0.8f, 0.9f, 1.0f, 1.1f, 1.25f, 1.5f, 1.75f, 2.0f, 2.5f, 3.0f};

static void zoom_status(App *a) {
  bool larger = a->lay.pan_max[0] > 0 || a->lay.pan_max[1] > 0;
  app_set_status(a, "picture %.0f%%%s", a->zoom * 100,
                 larger ? ": drag or Alt + arrows to move it, Z fits it" : "");
}

// The point of the picture that stays in place when it is zoomed: the selected cell, else the
// step's result (what the stage computes), else the area's centre; as fractions of the picture.
static void zoom_anchor(const App *a, float f[2], float at[2]) {
  const ViewLayout *l = &a->lay;
  at[0] = l->clip[0] + l->clip[2] / 2, at[1] = l->clip[1] + l->clip[3] / 2;
  int k = a->sel_op >= 0 && a->sel_op < l->n_ops ? a->sel_op : l->result;
  if (k >= 0 && k < l->n_ops) {
    const ViewOperand *v = &l->ops[k];
    float x = v->x + v->w / 2, y = v->y + v->h / 2;
    if (k == a->sel_op)
      x = v->x + v->w * (a->sel_j + 0.5f) / v->op.cols, y = v->y + v->h * (a->sel_i + 0.5f) / v->op.rows;
    at[0] = fminf(l->clip[0] + l->clip[2], fmaxf(l->clip[0], x));
    at[1] = fminf(l->clip[1] + l->clip[3], fmaxf(l->clip[1], y));
  }
  f[0] = l->pic[2] > 0 ? (at[0] - l->pic[0]) / l->pic[2] : 0.5f;
  f[1] = l->pic[3] > 0 ? (at[1] - l->pic[1]) / l->pic[3] : 0.5f;
}

static void relayout(App *a) { // the layout at once, so that the status can say whether it pans
  ViewOptions vo;
  PageSpec p;
  app_page_spec(a, &p, &vo, a->w, a->h, false);
  Scene s;
  scene_init(&s, a->w, a->h, 0);
  page_render(&s, &p, &a->lay);
  scene_free(&s);
}

// Pans a picture larger than the window so that the step's result is whole in view, when it can
// be (with its row labels and shape), moving as little as it must.
static void show_result(App *a) {
  const ViewLayout *l = &a->lay;
  if (l->result >= 0 && l->result < l->n_ops) {
    const ViewOperand *v = &l->ops[l->result];
    float fs = l->fs, box[4] = {v->x - 6 * fs, v->y - 5 * fs, v->x + v->w + 2 * fs, v->y + v->h + 2 * fs};
    float *pan[2] = {&a->pan_x, &a->pan_y};
    for (int d = 0; d < 2; d++) {
      float lo = l->clip[d], hi = l->clip[d] + l->clip[d + 2];
      if (box[d + 2] - box[d] > hi - lo) continue;
      if (box[d + 2] > hi) *pan[d] += box[d + 2] - hi;
      if (box[d] < lo) *pan[d] -= lo - box[d];
      *pan[d] = fminf(l->pan_max[d], fmaxf(0, *pan[d]));
    }
    relayout(a);
  }
}

static void zoom_to(App *a, float z) {
  float f[2], at[2];
  zoom_anchor(a, f, at);
  a->zoom = z;
  app_touch(a);
  if (a->w <= 0 || a->h <= 0) return;
  relayout(a);
  const ViewLayout *l = &a->lay; // pan so that the anchor's point of the picture stays where it was
  float x0 = l->pic[0] + l->pan[0], y0 = l->pic[1] + l->pan[1]; // the picture's place at pan 0
  a->pan_x = fminf(l->pan_max[0], fmaxf(0, x0 + f[0] * l->pic[2] - at[0]));
  a->pan_y = fminf(l->pan_max[1], fmaxf(0, y0 + f[1] * l->pic[3] - at[1]));
  relayout(a);
  show_result(a);
  zoom_status(a);
}

static void zoom_step(App *a, int d) {
  int n = (int)(sizeof ZOOMS / sizeof *ZOOMS), k = 0;
  while (k < n - 1 && ZOOMS[k] < a->zoom - 1e-3f) k++; // the listed size at or above the zoom
  if (d < 0 && k > 0) k--;
  if (d > 0 && ZOOMS[k] <= a->zoom + 1e-3f && k < n - 1) k++;
  if ((d > 0 && a->zoom >= ZOOMS[n - 1]) || (d < 0 && a->zoom <= ZOOMS[0])) {
    app_set_status(a, "picture %.0f%%: the %s size", a->zoom * 100, d > 0 ? "largest" : "smallest");
    return;
  }
  zoom_to(a, ZOOMS[k]);
}

static void pan_by(App *a, float dx, float dy) {
  if (a->lay.pan_max[0] <= 0 && a->lay.pan_max[1] <= 0) {
    app_set_status(a, "the picture fits the window: + enlarges it");
    return;
  }
  a->pan_x = fminf(a->lay.pan_max[0], fmaxf(0, a->pan_x + dx));
  a->pan_y = fminf(a->lay.pan_max[1], fmaxf(0, a->pan_y + dy));
  app_touch(a);
}

// Ctrl + and Ctrl −: larger or smaller text (header, narration), in steps of 10%.
static void scale_text(App *a, float d) {
  float mx = max_text_scale(a), was = app_text_scale(a);
  float s = roundf((was + d) * 10) / 10;
  s = s < 0.6f ? 0.6f : s > mx ? mx : s;
  a->text_scale = s;
  app_touch(a);
  if (d > 0 && s <= was)
    app_set_status(a, "text %.0f%%: the largest that fits this window", s * 100);
  else
    app_set_status(a, "text %.0f%%", s * 100);
}

// P on the Q, K, V step: all three (when they fit), then Q, K and V alone. Without room for all
// three the view shows Q for "all", so the cycle is Q, K, V: every press changes the picture.
static void cycle_part(App *a) {
  int k = app_trace_step(a);
  StepKind kind = k < 0 ? STEP_TOKENS : a->s->trace->steps[k].kind;
  if (kind != STEP_QKV && kind != STEP_DEC_QKV && kind != STEP_CROSS_QKV) {
    app_set_status(a, "P picks Q, K or V on the Q, K, V step");
    return;
  }
  bool all = view_qkv_all(a->s->trace, 0) && a->s->trace->T <= 12; // (a decoder's rule: view_decoder.c)
  int p = !all && a->part == 0 ? 1 : a->part;                      // without room, "all" shows Q alone
  p = (p + 1) % 4;
  a->part = !all && p == 0 ? 1 : p;
  static const char *const NAMES[] = {"Q, K and V", "Q: the queries", "K: the keys", "V: the values"};
  app_touch(a);
  app_set_status(a, "showing %s", NAMES[a->part]);
}

// < and >: a sentence longer than VIEW_TOKENS_READABLE shows a window of its tokens (view.h);
// move it by half its length (the tokens at its edge stay in sight), at most to the sentence's ends.
static void move_window(App *a, int dir) {
  const ViewLayout *l = &a->lay;
  if (l->tok_shown <= 0) {
    app_set_status(a, "every token is shown: a sentence of more than %d tokens shows a window of them",
                   VIEW_TOKENS_READABLE);
    return;
  }
  int step = l->tok_shown / 2 > 0 ? l->tok_shown / 2 : 1, last = l->tok_total - l->tok_shown;
  int f = l->tok_first + dir * step;
  f = f < 0 ? 0 : f > last ? last : f;
  if (f == l->tok_first) {
    app_set_status(a, "the window is at the %s of the sentence", dir < 0 ? "start" : "end");
    return;
  }
  a->tok_first = f;
  clear_selection(a); // (the cells count from the window's start)
  app_touch(a);
  app_set_status(a, "tokens %d–%d of %d", f + 1, f + l->tok_shown, l->tok_total);
}

static void key(App *a, const AppEvent *e) {
  bool shift = e->mods & MOD_SHIFT, ctrl = e->mods & MOD_CTRL;
  if (a->editing) return field_key(a, e);
  if (app_train_key(a, e)) return; // B: the training step's overlay (app_train.c)
  if (app_edits_key(a, e)) return; // V, Ctrl+↑ ↓, X, U, D and the value field (app_edits.c)
  if (app_marks_key(a, e)) return; // W, K, Shift+W, Y, I: pen, spotlight, invariants (app_marks.c)
  if (a->model && !ctrl && model_key(a, e)) return;
  if (a->inside == INSIDE_STORED && !ctrl && stored_key(a, e)) return;
  bool arrow = e->key == KEY_RIGHT || e->key == KEY_LEFT || e->key == KEY_UP || e->key == KEY_DOWN;
  if ((e->mods & MOD_ALT) && arrow) { // Alt + arrows move a zoomed picture by a fifth of the window
    float step = fminf(a->w, a->h) * 0.2f;
    pan_by(a,
           e->key == KEY_RIGHT  ? step
           : e->key == KEY_LEFT ? -step
                                : 0,
           e->key == KEY_DOWN ? step
           : e->key == KEY_UP ? -step
                              : 0);
    return;
  }
  if (shift && arrow) {
    move_cursor(a,
                e->key == KEY_DOWN ? 1
                : e->key == KEY_UP ? -1
                                   : 0,
                e->key == KEY_RIGHT  ? 1
                : e->key == KEY_LEFT ? -1
                                     : 0);
    return;
  }
  switch (e->key) {
  case KEY_RIGHT:
  case KEY_SPACE:
  case KEY_PAGEDOWN:
  case KEY_DOWN:
    if (app_reveal_pending(a))
      reveal(a);
    else if (a->text_page + 1 < a->lay.text_pages) // a long narration: its next page first
      a->text_page++, app_touch(a);
    else if (a->step + 1 >= app_n_steps(a))
      app_set_status(a, "this is the last step");
    else
      enter_step(a, a->step + 1);
    return;
  case KEY_LEFT:
  case KEY_BACKSPACE:
  case KEY_PAGEUP:
  case KEY_UP:
    if (a->text_page > 0) // back a page of a long narration
      a->text_page--, app_touch(a);
    else if (a->step == 0)
      app_set_status(a, "this is the first step");
    else
      enter_step(a, a->step - 1);
    return;
  case KEY_HOME: enter_step(a, 0); return;
  case KEY_END: enter_step(a, app_n_steps(a) - 1); return;
  case KEY_ENTER:
    if (a->sel_op >= 0) a->pinned = !a->pinned, a->dirty = true;
    return;
  case KEY_ESCAPE:
    if (a->help)
      a->help = false;
    else if (a->sel_op >= 0)
      clear_selection(a);
    else if (a->fullscreen)
      a->fullscreen = false, a->req.fullscreen_changed = true;
    a->dirty = true;
    return;
  case KEY_F1: a->help = !a->help, a->dirty = true; return;
  case KEY_F11: a->fullscreen = !a->fullscreen, a->req.fullscreen_changed = true, app_touch(a); return;
  case KEY_PLUS:
  case KEY_MINUS:
    if (ctrl)
      scale_text(a, e->key == KEY_PLUS ? 0.1f : -0.1f);
    else
      zoom_step(a, e->key == KEY_PLUS ? 1 : -1);
    return;
  case KEY_CHAR: break;
  default: return;
  }
  uint32_t c = e->ch;
  if (ctrl) {
    if (c == '=' || c == '+' || c == '-') scale_text(a, c == '-' ? -0.1f : 0.1f);
    if (c == 'q')
      a->req.quit = true;
    else if (c == 'e')
      app_export(a);
    return;
  }
  if (c >= '1' && c <= '9') return set_head(a, (int)(c - '1'));
  switch (c) {
  case '0':
  case 'g': set_head(a, -1); break;
  case '<':
  case '>': move_window(a, c == '>' ? 1 : -1); break;
  case ',':
  case '.': // Shift+, and Shift+. are < and > on a US keyboard
    if (shift)
      move_window(a, c == '.' ? 1 : -1);
    else
      change_gen_step(a, c == '.' ? 1 : -1);
    break;
  case '[': change_layer(a, -1); break;
  case ']': change_layer(a, +1); break;
  case 'e': set_editing(a, true); break;
  case 'f': a->fullscreen = !a->fullscreen, a->req.fullscreen_changed = true, app_touch(a); break;
  case 't':
    a->theme = a->theme == THEME_DARK ? THEME_LIGHT : THEME_DARK;
    app_touch(a);
    app_set_status(a, "%s theme", a->theme == THEME_LIGHT ? "light, high-contrast" : "dark");
    break;
  case 'c': cycle_cmap(a); break;
  case 'n':
    a->numbers = !a->numbers, app_touch(a),
    app_set_status(a, "numbers in cells %s", a->numbers ? "on" : "off");
    break;
  case 'm':
    a->scale = (ScaleMode)((a->scale + 1) % SCALE_COUNT), app_touch(a),
    app_set_status(a, "colour scale: %s", view_scale_name(a->scale));
    break;
  case 'p':
    if (shift)
      change_cuts(a, false);
    else
      cycle_part(a);
    break;
  case 'k':
    if (shift) change_cuts(a, true);
    break;
  case 'o': // Shift+O: the views inside the pass (every letter alone is taken)
    if (shift)
      cycle_inside(a);
    else
      toggle_model(a);
    break;
  case 'a': append_token(a, false); break;
  case 'r': append_token(a, true); break;
  case 'u': undo_token(a); break;
  case 'h': change_temperature(a, +1); break;
  case 'l': change_temperature(a, -1); break;
  case 's': app_save(a); break;
  case 'j': // the lesson's claims: the teacher's check, not the students' slide
    a->show_claims = !a->show_claims, app_touch(a);
    app_set_status(a, "claims %s", a->show_claims ? "shown (the teacher's: J hides them)" : "hidden");
    break;
  case '?':
  case '/': a->help = !a->help, a->dirty = true; break;
  case '=':
  case '+': zoom_step(a, 1); break;
  case '-': zoom_step(a, -1); break;
  case 'z':
    a->pan_x = a->pan_y = 0;
    zoom_to(a, 1.0f);
    break;
  default: break;
  }
}

// ---------------------------------------------------------------- the mouse

static void click_control(App *a, const Control *c) {
  switch (c->action) {
  case ACT_PREV:
    if (a->step > 0) enter_step(a, a->step - 1);
    break;
  case ACT_NEXT:
    if (app_reveal_pending(a))
      reveal(a);
    else if (a->step + 1 < app_n_steps(a))
      enter_step(a, a->step + 1);
    break;
  case ACT_HEAD: set_head(a, c->arg); break;
  case ACT_LAYER: change_layer(a, c->arg); break;
  case ACT_HELP: a->help = !a->help, a->dirty = true; break;
  case ACT_EDIT: set_editing(a, true); break;
  case ACT_THEME: a->theme = a->theme == THEME_DARK ? THEME_LIGHT : THEME_DARK, app_touch(a); break;
  case ACT_SAVE: app_save(a); break;
  }
}

int app_symbol_under(const App *a) {
  int k;
  return !a->model && !a->editing && view_symbol_hit(&a->lay, a->mx, a->my, &k) ? k : -1;
}

static void mouse(App *a, const AppEvent *e) {
  a->mx = e->x, a->my = e->y;
  int sym = app_symbol_under(a); // the symbol's tooltip follows the pointer
  if (sym != a->sym_op) a->sym_op = sym, a->dirty = true;
  if (app_marks_mouse(a, e)) return; // the pen draws (app_marks.c)
  size_t pos;
  if (e->kind == EV_MOUSE_UP) {
    a->dragging = a->panning = false;
    return;
  }
  if (a->panning && e->kind == EV_MOUSE_MOVE) { // a drag beside the cells moves a zoomed picture
    a->pan_x = fminf(a->lay.pan_max[0], fmaxf(0, a->pan_from[2] - (e->x - a->pan_from[0])));
    a->pan_y = fminf(a->lay.pan_max[1], fmaxf(0, a->pan_from[3] - (e->y - a->pan_from[1])));
    app_touch(a);
    return;
  }
  if (a->dragging && e->kind == EV_MOUSE_MOVE) { // a drag in the field selects
    app_field_hit(a, e->x, a->fld[1], &pos);
    textfield_place(&a->field, pos, true);
    a->dirty = true;
    return;
  }
  if (a->editing && e->kind == EV_MOUSE_DOWN && app_field_hit(a, e->x, e->y, &pos)) {
    if (e->clicks >= 2) { // a double click selects the word
      textfield_select_word(&a->field, pos);
      a->dirty = true;
      return;
    }
    textfield_place(&a->field, pos, e->mods & MOD_SHIFT); // Shift+click extends the selection
    a->dragging = true;
    a->dirty = true;
    return;
  }
  if (e->kind == EV_MOUSE_LEAVE) {
    if (!a->pinned && !a->cursor && a->sel_op >= 0) a->sel_op = -1, a->dirty = true;
    return;
  }
  if (e->kind == EV_MOUSE_DOWN) {
    for (int k = 0; k < a->n_ctl; k++) {
      const Control *c = &a->ctl[k];
      if (e->x >= c->x && e->y >= c->y && e->x < c->x + c->w && e->y < c->y + c->h)
        return click_control(a, c);
    }
    if (a->editing) return set_editing(a, false);
    int op, i, j;
    if (a->model) { // a click on a thumbnail opens it
      if (view_model_hit(&a->lay, e->x, e->y, &i, &j)) open_model_cell(a, i, j);
      return;
    }
    if (view_hit(&a->lay, e->x, e->y, &op, &i, &j) && !hidden_cell(a, op, i)) {
      bool same = a->pinned && op == a->sel_op && i == a->sel_i && j == a->sel_j;
      a->sel_op = op, a->sel_i = i, a->sel_j = j, a->pinned = !same, a->cursor = false;
    } else {
      clear_selection(a);
      const float *c = a->lay.clip;
      if ((a->lay.pan_max[0] > 0 || a->lay.pan_max[1] > 0) && e->x >= c[0] && e->y >= c[1] &&
          e->x < c[0] + c[2] && e->y < c[1] + c[3])
        a->panning = true, a->pan_from[0] = e->x, a->pan_from[1] = e->y, a->pan_from[2] = a->pan_x,
        a->pan_from[3] = a->pan_y;
    }
    a->dirty = true;
    return;
  }
  if (e->kind != EV_MOUSE_MOVE || a->pinned) return;
  int op, i, j;
  if (view_hit(&a->lay, e->x, e->y, &op, &i, &j) && !hidden_cell(a, op, i)) {
    if (op != a->sel_op || i != a->sel_i || j != a->sel_j || a->cursor) {
      a->sel_op = op, a->sel_i = i, a->sel_j = j, a->cursor = false;
      a->dirty = true;
    }
  } else if (a->sel_op >= 0 && !a->cursor) {
    a->sel_op = -1;
    a->dirty = true;
  }
}

// ---------------------------------------------------------------- the public API

App *app_new(Session *s, const AppOptions *o, Err *err) {
  App *a = calloc(1, sizeof *a);
  if (!a) return err_set(err, "out of memory"), NULL;
  a->s = s;
  a->save_dir = o->save_dir ? o->save_dir : ".";
  a->theme = o->theme;
  a->text_scale = o->text_scale > 0 ? o->text_scale : 1.0f;
  a->zoom = 1.0f;
  a->tok_first = -1;
  a->cmap = CMAP_AUTO;
  a->scale = SCALE_STAGE;
  a->numbers = true;
  a->w = 1280, a->h = 720;
  a->stored_pick = (StoredPick){.which = -1, .block = -1, .weight = -1};
  a->stored_stale = true;
  scene_init(&a->scratch, 1, 1, 0);
  a->global_stale = true;
  textfield_init(&a->field);
  enter_step(a, 0);
  app_touch(a);
  return a;
}

void app_free(App *a) {
  if (!a) return;
  free(a->stored);
  scene_free(&a->scratch);
  app_train_free(a);
  free(a);
}

static void app_event_one(App *a, const AppEvent *e);

void app_event(App *a, const AppEvent *e) {
  app_event_one(a, e);
  if (a->status_fresh) // said now: about the state this event leaves
    a->status_key = status_state(a), a->status_fresh = false;
  else if (a->status[0] && status_state(a) != a->status_key) // about a picture no longer shown
    a->status[0] = 0, a->dirty = true;
}

static void app_event_one(App *a, const AppEvent *e) {
  if (e->time_ms > a->now) a->now = e->time_ms;
  switch (e->kind) {
  case EV_KEY: key(a, e); break;
  case EV_TEXT:
    if (a->editing) a->compose[0] = 0, field_changed(a, textfield_insert(&a->field, e->text, TF_TYPE));
    break;
  case EV_COMPOSE:
    if (a->editing) snprintf(a->compose, sizeof a->compose, "%s", e->text), a->dirty = true;
    break;
  case EV_MOUSE_MOVE:
  case EV_MOUSE_DOWN:
  case EV_MOUSE_UP:
  case EV_MOUSE_LEAVE: mouse(a, e); break;
  case EV_WHEEL:
    if ((e->mods & MOD_CTRL) && e->wheel)
      zoom_step(a, e->wheel > 0 ? 1 : -1); // Ctrl + wheel: the picture's size
    break;
  case EV_RESIZE:
    if (e->w > 0 && e->h > 0 && (e->w != (int)a->w || e->h != (int)a->h))
      a->w = (float)e->w, a->h = (float)e->h, app_touch(a);
    break;
  case EV_TICK:
    if (a->status[0] && a->now >= a->status_until) a->status[0] = 0, a->dirty = true;
    break;
  }
}

bool app_cell_center(const App *a, int op, int i, int j, float *x, float *y) {
  if (op < 0) op = a->lay.result;
  if (op < 0 || op >= a->lay.n_ops) return false;
  const ViewOperand *v = &a->lay.ops[op];
  if (i < 0 || j < 0 || i >= v->op.rows || j >= v->op.cols) return false;
  *x = v->x + v->w * (j + 0.5f) / v->op.cols;
  *y = v->y + v->h * (i + 0.5f) / v->op.rows;
  return true;
}

bool app_dirty(const App *a) { return a->dirty; }
bool app_fullscreen(const App *a) { return a->fullscreen; }
bool app_editing(const App *a) { return a->editing; }
const char *app_status(const App *a) { return a->status; }
const char *app_clipboard(const App *a) { return a->clip; }

void app_paste(App *a, const char *text) {
  if (!a->editing || !text || !text[0]) return;
  field_changed(a, textfield_insert(&a->field, text, TF_PASTE));
}

AppRequests app_take_requests(App *a) {
  AppRequests r = a->req;
  memset(&a->req, 0, sizeof a->req);
  return r;
}

double app_next_wake(const App *a, double now_ms) {
  if (!a->status[0]) return -1;
  double d = a->status_until - now_ms;
  return d < 0 ? 0 : d;
}

void app_describe(const App *a, char *buf, int cap) {
  const Trace *t = app_shown_trace(a);
  int k = app_trace_step(a);
  const char *stage = k >= 0 ? lesson_stage_name(t->steps[k].kind) : "text";
  int layer = k >= 0 ? t->steps[k].layer + 1 : 0;
  char head[16];
  if (a->head < 0)
    snprintf(head, sizeof head, "all");
  else
    snprintf(head, sizeof head, "%d", a->head + 1);
  char cell[EXPLAIN_CAP] = "-";
  if (a->sel_op >= 0 && a->sel_op < a->lay.n_ops) {
    Explanation ex;
    explain_cell(t, &a->lay, a->sel_op, a->sel_i, a->sel_j, &ex);
    snprintf(cell, sizeof cell, "%s", ex.plain);
  }
  // A long sentence is shortened (its first 100 bytes and its length) so the line stays readable
  // and what follows it (an error, the status) is not cut off.
  const char *text = a->editing ? a->field.text : a->s->text;
  char shown[160];
  size_t n = strlen(text);
  if (n < sizeof shown) {
    memcpy(shown, text, n + 1);
  } else {
    size_t cut = utf8_floor(text, 100); // not inside a character
    snprintf(shown, sizeof shown, "%.*s… (%zu bytes)", (int)cut, text, n);
  }
  // the inspector box, and how many cells of the operands it hides (it should hide none)
  char insp[128] = "";
  if (a->insp[2] > 0 && a->sel_op >= 0) {
    int hidden = 0;
    for (int o = 0; o < a->lay.n_ops; o++) {
      const ViewOperand *v = &a->lay.ops[o];
      if (v->x < a->insp[0] + a->insp[2] && a->insp[0] < v->x + v->w && v->y < a->insp[1] + a->insp[3] &&
          a->insp[1] < v->y + v->h)
        hidden++;
    }
    // and how many things it covers that the class reads: symbols, the header and title above the
    // view, the colour bars right of it, the invariants panel (issue 31.4)
    const ViewLayout *l = &a->lay;
    float x = a->insp[0], y = a->insp[1], w = a->insp[2], h = a->insp[3];
    int titles = (y < l->area[1]) + (l->clip[2] > 0 && x + w > l->clip[0] + l->clip[2]) +
                 (l->panel[2] > 0 && x < l->panel[0] + l->panel[2] && l->panel[0] < x + w &&
                  y < l->panel[1] + l->panel[3] && l->panel[1] < y + h);
    for (int o = 0; o < l->n_ops; o++) {
      const float *b = l->ops[o].sym;
      titles += b[2] > 0 && x < b[0] + b[2] && b[0] < x + w && y < b[1] + b[3] && b[1] < y + h;
    }
    // and whether it lies over the narration column, and its size against its full size (read from
    // the back row: a pinned cell's worked equation has room kept for it under the picture)
    snprintf(insp, sizeof insp, " inspector=%.0f,%.0f,%.0fx%.0f covers=%d titles=%d narration=%d size=%.0f%%",
             a->insp[0], a->insp[1], a->insp[2], a->insp[3], hidden, titles, x < l->area[0] - 1,
             a->insp_size * 100.0f);
  }
  // while editing: the caret and the selection in characters, and an input method's text
  char field[128] = "";
  if (a->editing) {
    const TextField *f = &a->field;
    size_t from, to;
    textfield_selection(f, &from, &to);
    snprintf(field, sizeof field, " caret=%zu sel=%zu-%zu%s%s%s", textfield_chars(f, f->caret),
             textfield_chars(f, from), textfield_chars(f, to), a->compose[0] ? " compose=\"" : "", a->compose,
             a->compose[0] ? "\"" : "");
  }
  char model[96] = ""; // the model view, its selected thumbnail and its page
  if (a->model)
    snprintf(model, sizeof model, " model=l%d,h%d page=%d/%d", a->model_layer + 1, a->model_head + 1,
             a->lay.grid.page + 1, a->lay.grid.pages);
  char gen[96] = ""; // --generate: the generation step, its decoder input's length, the word written
  if (a->s->gen)
    snprintf(gen, sizeof gen, " gen=%d/%d T=%d wrote=%s", a->s->gen_step + 1, a->s->gen->n_steps, t->T,
             gen_word(a->s->gen, a->s->gen->steps[a->s->gen_step].token));
  char edits[96]; // what-if edits (app_edits.c): counts, the difference view, the value being typed
  app_edits_describe(a, edits, sizeof edits);
  char marks[160]; // the pen, the spotlight, the invariants panel (app_marks.c)
  app_marks_describe(a, marks, sizeof marks);
  if (app_reveal_pending(a)) // a reveal= step before its click
    strncat(gen, " hidden=1", sizeof gen - strlen(gen) - 1);
  const LessonStep *bls = app_lesson_step(a);
  if (bls && bls->broken) // a step with a mistake: its message instead of its picture
    snprintf(gen + strlen(gen), sizeof gen - strlen(gen), " broken=%d", bls->line);
  if (a->n_claims_shown > 0) // the teacher's claims on screen (J)
    snprintf(gen + strlen(gen), sizeof gen - strlen(gen), " claims=%d", a->n_claims_shown);
  // the picture: its zoom and pan, and the result's cells (width) and the numbers in them (size,
  // widest number: never wider than a cell)
  char pic[160];
  int pn = snprintf(pic, sizeof pic, " zoom=%.2f pan=%.0f,%.0f", a->zoom, a->lay.pan[0], a->lay.pan[1]);
  int wf = a->lay.tok_first, wn = a->lay.tok_shown, wt = a->lay.tok_total;
  if (app_train_open(a)) app_train_window(a, &wf, &wn, &wt); // (the training view's, while it is open)
  if (wn > 0)                                                // a long sentence's window of tokens
    pn += snprintf(pic + pn, sizeof pic - (size_t)pn, " tokens=%d-%d/%d", wf + 1, wf + wn, wt);
  if (a->lay.result >= 0 && a->lay.result < a->lay.n_ops) {
    const ViewOperand *r = &a->lay.ops[a->lay.result];
    snprintf(pic + pn, sizeof pic - (size_t)pn, " cellw=%.1f numpx=%.1f numw=%.1f", r->w / r->op.cols,
             r->number_px, r->number_w);
  }
  char sym[192] = ""; // the symbol under the pointer and what the tooltip says of it
  int so = app_symbol_under(a);
  if (so >= 0) {
    char d[160];
    view_symbol_describe(&a->lay, so, d, sizeof d);
    snprintf(sym, sizeof sym, " symbol=\"%s\"", d);
  }
  char tok[128] = ""; // a causal model with a head: the temperature, the seed, the tokens appended
  if (session_can_append(a->s, &(Err){0}))
    snprintf(tok, sizeof tok, " temp=%g seed=%llu draws=%d appended=%d", a->s->temperature,
             (unsigned long long)a->s->seed, a->s->draws, a->s->n_appended);
  if (a->s->compare_model && a->s->compare_all) // --compare-model: the second file's pass, its tokens
    snprintf(tok + strlen(tok), sizeof tok - strlen(tok), " compare_L=%d", a->s->compare_all->L);
  // the field's own message (a refused paste) comes first: it is about the last key
  const char *error = a->editing && a->field.error[0] ? a->field.error : a->edit_error;
  snprintf(
      buf, (size_t)cap,
      "step %d/%d stage=%s layer=%d head=%s cell=%s pinned=%d cursor=%d editing=%d%s%s%s theme=%s cmap=%s "
      "numbers=%d size=%.1f%s fullscreen=%d help=%d L=%d%s%s%s text=\"%s\"%s%s%s%s",
      a->step + 1, app_n_steps(a), stage, layer, head, cell, a->pinned, a->cursor, a->editing, field, edits,
      marks, theme_get(a->theme)->name, cmap_name(a->cmap), a->numbers, app_text_scale(a), pic, a->fullscreen,
      a->help, t->L, model, gen, tok, shown, error[0] ? " error=" : "", error, insp, sym);
}
