// app_internal.h -- the App's state, shared by app.c (input), app_draw.c (drawing) and
// app_files.c (save and export). Not part of the app's API.
#ifndef SF_APP_INTERNAL_H
#define SF_APP_INTERNAL_H

#include <stdarg.h>

#include "app.h"
#include "claims.h"      // defines: claims_measure, CLAIMS_MAX
#include "gguf_stored.h" // defines: StoredView, StoredPick, gguf_stored_view
#include "explain.h"     // defines: Explanation, explain_cell
#include "genstrip.h"    // defines: genstrip_draw, genstrip_height
#include "invariants.h"  // defines: InvFact, invariants_measure
#include "page.h"        // defines: PageSpec
#include "textfield.h"   // defines: TextField
#include "view.h"        // defines: ViewLayout

typedef enum { ACT_PREV, ACT_NEXT, ACT_HEAD, ACT_LAYER, ACT_HELP, ACT_EDIT, ACT_THEME, ACT_SAVE } Action;

// A clickable control drawn in the last frame (immediate mode: rebuilt by every app_draw).
typedef struct {
  float x, y, w, h;
  Action action;
  int arg;
} Control;

#define APP_MAX_CONTROLS 48
#define APP_MAX_UNDO 64

// What U undoes (app_edits.c): an edit added (kind 0), or a head switched (kind 1) from `before`.
typedef struct {
  int kind, layer, head;
  HeadOff before;
} AppUndo;

struct App {
  Session *s;
  const char *save_dir;
  int step;                    // lesson step (with a lesson) or trace step
  int text_page;               // the page of a long narration shown (→ turns it before the step)
  int layer_delta;             // [ ] on a lesson step: layers away from the step's own
  int head;                    // 0-based, -1 all heads
  int part;                    // Q, K, V stage: 0 all, 1 Q, 2 K, 3 V
  bool model;                  // O on a softmax step: the model view, every layer × head (view_model.c)
  InsideView inside;           // i: a view inside the pass (view_inside.c), INSIDE_NONE for the step's own
  int model_layer, model_head; // its selected thumbnail (0-based): arrows move it, Enter opens it
  ThemeId theme;
  Colormap cmap;
  ScaleMode scale;
  bool numbers, help, fullscreen, editing;
  float text_scale;   // the text's size: header, narration (Ctrl + and Ctrl −)
  float zoom;         // the picture's size (+ and −, Ctrl + wheel): ViewOptions.zoom
  float pan_x, pan_y; // how far a picture larger than its area is moved (ViewOptions.pan_x/y)
  int tok_first;      // a long sentence's window of tokens (< >): its first token, -1 around the focus
  bool panning;       // the mouse button went down beside the cells: a drag moves the picture
  float pan_from[4];  // where the drag began (x, y) and the pan then
  float global_lo, global_hi;
  bool global_stale;                  // the range of the global colour scale must be measured again
  TextField field;                    // the sentence being typed (caret, selection, undo, history)
  char before_edit[SESSION_MAX_TEXT]; // the sentence when editing began: Esc brings it back
  char edit_error[512];               // why the typed sentence did not work (session_set_text)
  char clip[TEXTFIELD_CAP];           // what Ctrl+C or Ctrl+X copied
  char compose[64];                   // an input method's text being composed
  bool dragging;                      // the mouse button went down in the field
  // the field's text in the last frame: area (x, y, w, h), first byte shown, where it starts
  float fld[4], fld_x0, fld_fs, caret_box[4];
  size_t fld_start;
  // the selected cell: hovered, pinned (click or Enter) or the keyboard cursor's
  int sel_op, sel_i, sel_j;
  bool pinned, cursor;
  float mx, my;
  int sym_op;    // the operand whose symbol the pointer is on (app_symbol_under), for the redraw
  float insp[4]; // the inspector box of the last frame (x, y, w, h), w = 0 when none
  // a pinned cell's worked equation is read at full size: the page keeps room for it under the
  // picture (PageSpec.view_reserve), as tall as the inspector at full size (insp_h0, last frame),
  // only growing while a cell stays pinned so that the picture does not jump from cell to cell
  float insp_h0, reserve;
  float insp_size; // the inspector's text against its full size (1: full; down to 0.6 when no room)
  bool reserving;  // app_draw is drawing again with the room it found it needs
  // the last frame
  float w, h;
  ViewLayout lay;
  PageClaim claims[CLAIMS_MAX]; // the current step's claims, measured (app_page_spec)
  bool revealed;                // a reveal= step: the next click has shown what it hid
  bool show_claims;             // J: the lesson's claims under the narration (the teacher's; off)
  int n_claims_shown;           // the claims on the last page (app_describe's claims=)
  // the pen, the spotlight and the invariants panel (app_marks.c)
  Marks marks;            // the strokes over this step (cell coordinates: they follow the layout)
  PenShape pen_shape;     // W cycles: off, freehand, arrow, circle
  bool pen_on, pen_down;  // the pen is the mouse's tool; a stroke is being drawn
  int pen_color;          // K cycles the colours (marks_color)
  long marks_view;        // the view the strokes were drawn on (app_marks.c: view_key)
  Spotlight spot;         // Y cycles row, column, cell, off on the selected cell
  bool spot_user;         // Y was pressed on this step: the lesson's spotlight= gives way
  Spotlight lesson_spot;  // the lesson step's spotlight=, found in the shown trace's tokens
  bool invariants;        // I: the invariants panel
  PageClaim inv[INV_MAX]; // its lines, measured (app_page_spec)
  int n_inv;
  Control ctl[APP_MAX_CONTROLS];
  int n_ctl;
  char status[512];
  char progress[64];        // the header's "generation step 9 of 9" (app_page_spec, --generate)
  unsigned long status_key; // the state the status was said in (status_state): it goes when that changes
  bool status_fresh;        // said during this event: its state is taken when the event is done
  double status_until, now;
  bool dirty;      // a frame is needed (the overlay: selection, inspector, controls ...)
  bool base_dirty; // the page under it must be drawn again too (step, sentence, options ...)
  AppRequests req;
  Scene scratch; // for saving pictures
  // what-if edits (app_edits.c): the difference view, the value being typed for a cell, the undo
  // history of the session's edit list
  bool diff, value_editing, value_fresh;
  char value[32];
  TraceEdit value_target;
  float value_now;
  AppUndo undo[APP_MAX_UNDO];
  int n_undo;
  struct AppTrain *train; // the training step's overlay (app_train.c), or NULL before B
  // "weights as stored" (the stored view, Shift+O on a quantized GGUF model): the block shown, read
  // from the file when the view opens and again when [ ] (tensor) or Shift+arrows (block) move it
  StoredView *stored;
  StoredPick stored_pick;
  bool stored_stale;
};
// The stored view's block for the next frame (read again when stale); NULL with the reason in the
// status line when the file cannot be read.
const StoredView *app_stored(App *a);

int app_n_steps(const App *a);
// --generate: the generation step (0-based) and the step of its trace that app step `step` shows.
void app_gen_locate(const App *a, int step, int *gen_step, int *trace_step);
// --generate: the height of the generation strip above the footer, for a window h pixels high.
float app_strip_height(const App *a, float h);
const LessonStep *app_lesson_step(const App *a);
// A reveal= step before its click: it still hides what it asks for (app.c).
bool app_reveal_pending(const App *a);
int app_trace_step(const App *a);   // -1 for a narration-only lesson step
float app_text_scale(const App *a); // + and −, at most what the window has room for
// The page of the current step, as export would draw it (no selection: that is the overlay's).
void app_page_spec(App *a, PageSpec *p, ViewOptions *vo, float w, float h, bool window_layer);
void app_touch(App *a);  // the page changed: draw it again
void app_save(App *a);   // S: a new numbered PNG of the current view
void app_export(App *a); // Ctrl+E: every step into a new numbered folder
// The byte of the field's text nearest to x in the last frame (a click places the caret there);
// false when (x, y) is not on the field.
bool app_field_hit(App *a, float x, float y, size_t *pos);
void app_set_status(App *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

// What-if edits (app_edits.c): the keys (true when the key was theirs), the page's trace and its
// difference view, the value field, and the state for app_describe.
bool app_edits_key(App *a, const AppEvent *e);
const Trace *app_shown_trace(const App *a); // a lesson step's own edited pass, else the session's trace
void app_edits_page(const App *a, PageSpec *p);
void app_edits_draw(App *a, Scene *s, float W, float H, float u);
// app_marks.c: W, K, Shift+W, Y, I and the pen's drag; the step's spotlight, strokes and invariants
bool app_marks_key(App *a, const AppEvent *e);
bool app_marks_mouse(App *a, const AppEvent *e);
// The operand of the last frame whose symbol (Z′, Q_h …) is under the pointer, or -1: the window
// shows what it is and its shape (view_symbol_describe).
int app_symbol_under(const App *a);
void app_marks_page(App *a, PageSpec *p);
void app_marks_step(App *a); // a new step: its strokes and spotlight start empty
// " pen=arrow/red strokes=2 at=640,360 spot=row:2 invariants=3/3" for app_describe ("" when unused);
// at= is where the last stroke starts, in the window's pixels now
void app_marks_describe(const App *a, char *buf, int cap);
void app_edits_describe(const App *a, char *buf, int cap);

// The training step (app_train.c, issue 21): B opens the backward pass over the page; its keys
// (true when the key was theirs: every key while it is open), its drawing, and freeing it.
typedef struct AppTrain AppTrain;
bool app_train_key(App *a, const AppEvent *e);
void app_train_draw(App *a, Scene *s, float W, float H, float u);
void app_train_free(App *a);
bool app_train_open(const App *a);
// The window of a long sentence's tokens the training view drew last (view_grad.h: GradWindow):
// first (0-based), shown (0: every token), total.
void app_train_window(const App *a, int *first, int *shown, int *total);
void app_train_caption(const App *a, char *buf,
                       size_t cap); // "Backward pass: after N training steps, η = …" // the overlay is shown
                                    // (its panel holds the status line)

#endif
