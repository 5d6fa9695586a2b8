// web.h -- what the page does where a desktop program would use the operating system: the few
// places where the web build (scripts/web, emscripten) differs from the native one.
//
// In the native build these do nothing (web_active() is false) and the window keeps its own loop.
// In the page:
//   - the browser owns the main loop: web_main_loop hands it one iteration, called once per
//     animation frame, and never returns;
//   - files cannot be written where the user sees them: what S and export write into
//     WEB_SAVE_DIR (a folder of the page's memory file system) is offered as a download and removed
//     (web_offer_downloads): a file as it is, a folder (Ctrl+E's export) as one .zip archive;
//   - a model file or lesson dropped on the page opens (web_set_open);
//   - SDL 2.26 has no system clipboard in the browser: web_copy writes it with
//     navigator.clipboard, web_request_paste reads it and hands the text to the callback set with
//     web_set_paste.
#ifndef SF_WEB_H
#define SF_WEB_H

#include <stdbool.h>

#define WEB_SAVE_DIR "/downloads"

bool web_active(void); // true in the page
void web_main_loop(void (*iteration)(void *), void *arg);
void web_offer_downloads(void);
void web_copy(const char *text);
void web_set_paste(void (*paste)(void *arg, const char *text), void *arg);
void web_request_paste(void);
// A file dropped on the page (web/shell.html writes it into the page's file system and calls
// sf_web_open(path)) goes to the callback set here.
void web_set_open(void (*open)(void *arg, const char *path), void *arg);
// What the page's sf_web_describe() returns to JavaScript (the browser test reads the state
// through it): describe(arg, buf, cap) writes one line, as app_describe does.
void web_set_describe(void (*describe)(void *arg, char *buf, int cap), void *arg);

#endif
