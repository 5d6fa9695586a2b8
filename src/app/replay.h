// replay.h -- scripted input for the window: a text file of timed events.
//
// One event per line, `#` starts a comment:
//   MS key NAME          a key: Right Left Up Down space BackSpace Delete Prior Next Home End
//                        Return Escape Tab F1 F11 plus minus, or one character (a 1 [ ? ...);
//                        modifiers in front: shift+Right, ctrl+e (names in any case: shift+left)
//   MS text WORDS...     typed text (the rest of the line, UTF-8)
//   MS compose WORDS...  an input method's text being composed (nothing after it: it ends)
//   MS clipboard TEXT    the system clipboard now holds TEXT (the rest of the line; \n \t \\ and
//                        \xHH stand for a newline, a tab, a backslash and any byte but 0)
//   MS move X Y          the pointer moves to pixel (X, Y) of the drawing
//   MS click X Y         press the mouse button at (X, Y); "release X Y" lets it go;
//                        "dblclick X Y" is the second press of a double click
//   MS hover OP I J      move to the centre of cell (I, J) of operand OP of the current view
//                        (OP: a number, or "result"); "click-cell OP I J" presses there
//   MS leave             the pointer leaves the window
//   MS resize W H        the drawable becomes W × H pixels
//   MS wait              nothing: one more frame
// MS is the time in milliseconds from the start. replay_load reports a bad line as FILE:LINE.
// A Replay owns its events (and their clipboard texts); replay_free releases them.
//
//     Replay r;
//     if (!replay_load(&r, "tests/replay/step.txt", &err)) ...
#ifndef SF_REPLAY_H
#define SF_REPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h" // defines: AppEvent
#include "err.h" // defines: Err

typedef enum { RP_EVENT, RP_HOVER, RP_CLICK_CELL, RP_WAIT, RP_CLIPBOARD } ReplayKind;

typedef struct {
  ReplayKind kind;
  AppEvent ev;     // RP_EVENT
  int op, i, j;    // RP_HOVER, RP_CLICK_CELL: op -1 = the result
  char *clipboard; // RP_CLIPBOARD: the text (owned)
  char label[48];  // short description for screenshot names ("key-Right")
  int line;
} ReplayItem;

typedef struct {
  ReplayItem *items;
  int n;
} Replay;

bool replay_load(Replay *r, const char *path, Err *err);
// The same from len bytes of text in memory (a NUL byte ends it); `what` names it in messages.
bool replay_parse(Replay *r, const char *text, size_t len, const char *what, Err *err);
void replay_free(Replay *r);

#endif
