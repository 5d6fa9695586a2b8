// textfield.h -- a one-line text field as plain data: the text, a caret and a selection, undo,
// redo, a history of entered lines, word motion, and edits that never split a UTF-8 character.
//
// No SDL and no drawing: app.c maps keys onto these calls and app_draw.c draws the result, so
// tests/test_textfield.c drives it directly. It lives in src/app because only the window uses it;
// tests/CMakeLists.txt compiles src/app/textfield.c into that test (SF_APP_PURE_MODULES), since
// the app itself is an executable a test cannot link.
//
// Positions are byte offsets into `text`, always at a character start (0 .. len). The selection
// is the bytes between `anchor` and `caret` (empty when they are equal). Every edit replaces the
// selection; typed and pasted text has newlines and tabs turned into spaces and other control
// characters dropped; text that is not valid UTF-8, or that would not fit in TEXTFIELD_CAP - 1
// bytes, is refused whole, with a sentence in `error` (cleared by the next call).
// The caller allocates the TextField (about 70 KB: keep it in a heap struct) and zeroes it or
// calls textfield_init; nothing inside is allocated, so there is nothing to free.
//
//     TextField *f = calloc(1, sizeof *f);
//     textfield_set(f, "the cat");               // caret at the end, undo forgotten
//     textfield_select_all(f);
//     if (textfield_insert(f, "a dog", TF_TYPE)) recompute(f->text);
//     textfield_undo(f);                         // "the cat" again
#ifndef SF_TEXTFIELD_H
#define SF_TEXTFIELD_H

#include <stdbool.h>
#include <stddef.h>

#define TEXTFIELD_CAP 2048   // bytes, with the terminating NUL (the longest sentence + 1)
#define TEXTFIELD_UNDO 16    // undo levels
#define TEXTFIELD_HISTORY 16 // lines remembered by textfield_history_add

// Edits that follow each other and are of the same kind undo together (a typed word, a run of
// Backspaces); a paste, a cut or a word deletion is always an undo level of its own.
typedef enum { TF_TYPE, TF_PASTE } TfInsert;
typedef enum { TF_BACK, TF_FORWARD, TF_WORD_BACK, TF_WORD_FORWARD } TfDelete;
typedef enum { TF_LEFT, TF_RIGHT, TF_WORD_LEFT, TF_WORD_RIGHT, TF_HOME, TF_END } TfMove;

typedef struct {
  char text[TEXTFIELD_CAP];
  size_t caret, anchor;
} TfState;

typedef struct {
  char text[TEXTFIELD_CAP];
  size_t len, caret, anchor;
  char error[128];
  // undo: a ring of states from before each undo level
  TfState undo[TEXTFIELD_UNDO];
  int undo_top, n_undo;         // the newest level is undo[(undo_top - 1) mod N]; n_undo levels held
  int group;                    // the kind of the last edit while it may still grow (-1: none)
  TfState redo[TEXTFIELD_UNDO]; // states undone, the newest last; a new edit forgets them
  int n_redo;
  // history: hist[0] the most recent line; browse = -1 on the line being written
  char hist[TEXTFIELD_HISTORY][TEXTFIELD_CAP];
  int n_hist, browse;
  char draft[TEXTFIELD_CAP]; // the line being written, kept while browsing the history
} TextField;

void textfield_init(TextField *f);
// Replaces the whole text (caret at the end, no selection) and forgets undo; keeps the history.
// Text longer than the field is cut at a character boundary.
void textfield_set(TextField *f, const char *text);

// The selection as [from, to); false when it is empty.
bool textfield_selection(const TextField *f, size_t *from, size_t *to);
// The selected text into buf (cap bytes, cut at a character boundary); returns its length.
size_t textfield_copy(const TextField *f, char *buf, size_t cap);

// Moving the caret. With `select` the anchor stays where it was (Shift); without it, a left or
// right move with a selection goes to the selection's edge, as desktop fields do.
void textfield_move(TextField *f, TfMove m, bool select);
void textfield_select_all(TextField *f);
// Selects the word (or run of spaces, or of punctuation) at byte `pos`: a double click.
void textfield_select_word(TextField *f, size_t pos);
// The caret to byte `pos` (moved back to a character start, clamped to len); `select` extends.
void textfield_place(TextField *f, size_t pos, bool select);

// The edits return true when the text changed.
bool textfield_insert(TextField *f, const char *text, TfInsert kind);
bool textfield_delete(TextField *f, TfDelete d); // with a selection: deletes the selection
bool textfield_cut(TextField *f, char *buf, size_t cap);
bool textfield_undo(TextField *f);
bool textfield_redo(TextField *f); // takes back an undo, until the next edit

// The history: add a line that was used (the most recent first; an equal older one moves up;
// empty lines are not kept), and browse it. Up shows the next older line that differs from the
// text in the field; Down the next newer one, and past the newest the line that was being
// written before Up. Each returns true when the text changed (it can be undone).
void textfield_history_add(TextField *f, const char *line);
bool textfield_history_up(TextField *f);
bool textfield_history_down(TextField *f);

// Characters (not bytes) in text[0..pos): what the window's log reports.
size_t textfield_chars(const TextField *f, size_t pos);

#endif
