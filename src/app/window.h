// window.h -- the SDL shell: a window showing the App, driven by the keyboard, a presentation
// clicker, the mouse, or a replay file.
//
// window_run opens an SDL window (resizable, high-DPI aware), creates one streaming texture in
// the canvas's pixel format (SDL_PIXELFORMAT_RGBA32, so uploading is a copy), and loops: SDL
// events become AppEvents, and only when the App is dirty is a frame drawn (page → Scene →
// Canvas → texture). When nothing changes it sleeps in SDL_WaitEvent, so an idle window uses
// no CPU. Without a display it prints one line saying so and the `stepformer export` command
// to use instead, and returns 2. All SDL failures go to one cleanup path that prints
// SDL_GetError(). Returns the process exit code.
//
//     WindowOptions w = {.width = 1600, .height = 900};
//     return window_run(&session, &app_options, &w);
#ifndef SF_WINDOW_H
#define SF_WINDOW_H

#include <stdbool.h>

#include "app.h"     // defines: AppOptions
#include "session.h" // defines: Session

typedef struct {
  int width, height; // window size in screen units (0: 1600 × 900, clamped to the display)
  bool fullscreen;
  const char *replay;      // a replay file (replay.h), or NULL
  const char *screenshot;  // with replay: save the frame after each event into this folder
  bool realtime;           // with replay: wait for each event's time (default: as fast as possible)
  bool frame_stats;        // print frame-time statistics at the end
  const char *export_hint; // the export command printed when there is no display
  int start_step;          // --step N: open at step N (1-based; 0 or 1: the first)
  // The page: opens the dropped file at path (a lesson .md, else a model) into *out, the way the
  // command line would; false, with the command line's message in err, for a bad one.
  bool (*reopen)(const char *path, Session *out, Err *err);
} WindowOptions;

int window_run(Session *s, const AppOptions *ao, const WindowOptions *wo);

#endif
