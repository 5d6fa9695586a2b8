// app.h -- the window's behaviour without the window: state, input, and what to draw.
//
// The App walks a Session (a lesson's steps, or every step of the pass for a free sentence),
// reacts to input events (keys, typed text, the mouse, a resize) and draws a frame into a
// Scene: the page of the current step (page.h) plus the window's own layer on top -- the
// controls in the header, the inspector box with the hovered cell's worked equation, the
// sentence field while editing, status messages and the key help. It never calls SDL: the
// shell (window.c) turns SDL events into AppEvents and shows the Scene; the replay driver
// (replay.c) feeds AppEvents from a file. Because input is data, tests drive it headless.
//
// An App borrows its Session (which must outlive it) and owns everything else; app_free
// releases it. Keys: → Space PageDown next, ← Backspace PageUp previous, Home End, 1-9 head,
// 0 or G all heads, [ ] layer, Shift+arrows cell cursor, Enter pin, E edit the sentence,
// F/F11 fullscreen, + − size, T theme, C colours, N numbers, M scale, P Q/K/V, S save,
// O the model view of a softmax step (arrows, Enter or a click open a layer × head),
// Ctrl+E export, ?/F1 help, Esc close/unpin, Ctrl+Q quit. What-if edits (app_edits.c): V types a
// new value for the selected cell, Ctrl+↑ ↓ nudge it, X switches the head shown off (zeroed,
// uniform, on), U undoes the last edit and Shift+U all, D the difference view. While editing, the sentence
// field (textfield.h) takes the keys: ← → Home End (Shift selects, Ctrl by word), Backspace Delete (Ctrl: a
// word), Ctrl+A select all, Ctrl+Z undo, Ctrl+Y or Ctrl+Shift+Z redo, Ctrl+C/X/V the clipboard, ↑ ↓ the
// sentences used before in this run, Enter done, Esc cancel; a click places the caret, a drag selects, a
// double click selects a word.
//
//     App *app = app_new(&session, &opts, &err);
//     app_event(app, &(AppEvent){.kind = EV_KEY, .key = KEY_RIGHT});
//     if (app_dirty(app)) app_draw(app, &scene, 1920, 1080);
//     app_free(app);
#ifndef SF_APP_H
#define SF_APP_H

#include <stdbool.h>
#include <stdint.h>

#include "colormap.h" // defines: ThemeId
#include "scene.h"    // defines: Scene
#include "session.h"  // defines: Session

typedef enum {
  KEY_NONE,
  KEY_CHAR, // KEY_CHAR: a printable key, in `ch` (lower case, unshifted)
  KEY_RIGHT,
  KEY_LEFT,
  KEY_UP,
  KEY_DOWN,
  KEY_SPACE,
  KEY_BACKSPACE,
  KEY_DELETE,
  KEY_PAGEUP,
  KEY_PAGEDOWN,
  KEY_HOME,
  KEY_END,
  KEY_ENTER,
  KEY_ESCAPE,
  KEY_TAB,
  KEY_F1,
  KEY_F11,
  KEY_PLUS,
  KEY_MINUS, // keypad or main keyboard
} AppKey;

enum { MOD_SHIFT = 1, MOD_CTRL = 2, MOD_ALT = 4 };

typedef enum {
  EV_KEY,
  EV_TEXT,
  EV_COMPOSE, // an input method's text being composed, in `text` ("" when it ends)
  EV_MOUSE_MOVE,
  EV_MOUSE_DOWN,
  EV_MOUSE_UP,
  EV_MOUSE_LEAVE,
  EV_RESIZE,
  EV_TICK,
  EV_WHEEL // the mouse wheel turned `wheel` notches (positive: away from the user), with `mods`
} AppEventKind;

typedef struct {
  AppEventKind kind;
  AppKey key;
  uint32_t ch;    // KEY_CHAR
  int mods;       // MOD_* bits
  char text[64];  // EV_TEXT, EV_COMPOSE: UTF-8 typed text
  float x, y;     // mouse position in drawing pixels
  int clicks;     // EV_MOUSE_DOWN: 2 for a double click
  int wheel;      // EV_WHEEL: notches
  int w, h;       // EV_RESIZE: drawable size in pixels
  double time_ms; // every event: the time it happened (for status messages that fade)
} AppEvent;

typedef struct {
  const char *save_dir; // where S and Ctrl+E write (default ".")
  ThemeId theme;
  float text_scale;
} AppOptions;

// What the shell must do after an event.
typedef struct {
  bool quit;
  bool fullscreen_changed; // then read app_fullscreen
  bool text_input_changed; // then read app_editing (start or stop SDL text input)
  bool copy;               // put app_clipboard on the system clipboard (Ctrl+C, Ctrl+X)
  bool paste;              // call app_paste with the system clipboard's text (Ctrl+V)
} AppRequests;

typedef struct App App;

App *app_new(Session *s, const AppOptions *o, Err *err);
void app_free(App *a);
void app_event(App *a, const AppEvent *e);
bool app_dirty(const App *a);
// Draws the frame for a w × h drawable in two layers: `base`, the page of the step, only when
// it changed (then returns true: rasterize it again), and `overlay`, always (reset, then the
// selection, inspector, controls, status and help, to draw over the page without clearing).
// Hovering redraws only the overlay, so it stays fast at any model size. Clears the dirty flag.
bool app_draw(App *a, Scene *base, Scene *overlay, float w, float h);
AppRequests app_take_requests(App *a);
bool app_fullscreen(const App *a);
bool app_editing(const App *a);
// Milliseconds until the app needs a frame without input (a status message fading), or -1.
double app_next_wake(const App *a, double now_ms);
// One line describing the state, for replay logs and tests:
// "step 9/25 stage=softmax layer=1 head=2 cursor=1,5 pinned=0 editing=0 text=\"...\"".
void app_describe(const App *a, char *buf, int cap);
// The centre of cell (i, j) of operand op (-1: the result) of the last frame's view, in
// drawing pixels; false when there is no such cell (for replays that hover a given cell).
bool app_cell_center(const App *a, int op, int i, int j, float *x, float *y);
// The last message shown to the user (saved file, error), or "".
const char *app_status(const App *a);
// While editing: the caret's box (x, y, w, h in drawing pixels) in the last frame, where an input
// method shows its candidates; false when not editing.
bool app_caret_box(const App *a, float box[4]);
// The text Ctrl+C or Ctrl+X copied (after a `copy` request).
const char *app_clipboard(const App *a);
// After a `paste` request: the clipboard's text (NULL or "" when empty) goes into the field.
// Newlines and tabs become spaces; text that is not UTF-8 is refused with a message.
void app_paste(App *a, const char *text);

#endif
