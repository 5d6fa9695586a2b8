// window.c -- see window.h. The only file that talks to SDL's video and event APIs.
#include "window.h"

#include <SDL.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h" // defines: dir_ensure
#include "pngio.h"  // defines: pngio_write
#include "replay.h" // defines: Replay
#include "tex.h"    // defines: tex_plain_title
#include "web.h"    // defines: web_active, web_main_loop, web_copy, web_request_paste

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long rss_kib(void) {
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
  }
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static bool have_display(void) {
  if (web_active()) return true; // the page's canvas
  const char *drv = getenv("SDL_VIDEODRIVER");
  if (drv && *drv) return true; // the caller chose (x11, wayland, offscreen, dummy ...)
  return (getenv("DISPLAY") && *getenv("DISPLAY")) ||
         (getenv("WAYLAND_DISPLAY") && *getenv("WAYLAND_DISPLAY"));
}

static AppKey map_key(SDL_Keycode k, uint32_t *ch) {
  *ch = 0;
  switch (k) {
  case SDLK_RIGHT: return KEY_RIGHT;
  case SDLK_LEFT: return KEY_LEFT;
  case SDLK_UP: return KEY_UP;
  case SDLK_DOWN: return KEY_DOWN;
  case SDLK_SPACE: return KEY_SPACE;
  case SDLK_BACKSPACE: return KEY_BACKSPACE;
  case SDLK_DELETE: return KEY_DELETE;
  case SDLK_PAGEUP: return KEY_PAGEUP;
  case SDLK_PAGEDOWN: return KEY_PAGEDOWN;
  case SDLK_HOME: return KEY_HOME;
  case SDLK_END: return KEY_END;
  case SDLK_RETURN:
  case SDLK_KP_ENTER: return KEY_ENTER;
  case SDLK_ESCAPE: return KEY_ESCAPE;
  case SDLK_TAB: return KEY_TAB;
  case SDLK_F1: return KEY_F1;
  case SDLK_F11: return KEY_F11;
  case SDLK_KP_PLUS:
  case SDLK_PLUS: return KEY_PLUS;
  case SDLK_KP_MINUS: return KEY_MINUS;
  default:
    if (k >= 32 && k < 127) {
      *ch = (uint32_t)k;
      return KEY_CHAR;
    }
    return KEY_NONE;
  }
}

typedef struct {
  SDL_Window *win;
  SDL_Renderer *ren;
  SDL_Texture *tex;
  Canvas page;   // the page of the step, rasterized when it changes
  Canvas canvas; // the frame: the page with the overlay drawn on it
  Scene scene, overlay;
  int dw, dh;     // drawable size in pixels
  float sx, sy;   // drawable pixels per window unit (high-DPI)
  double *frames; // frame times (ms), for --frame-stats: overlay-only frames (hovering) ...
  int n_frames, cap_frames;
  double *page_frames; // ... and frames that drew the page again (a step, a new sentence)
  int n_page_frames, cap_page_frames;
  double *events; // replay: the time of each event, handling and frame (ms)
  int n_events;
  char title[320]; // the title bar's text, as last set
} Shell;

// The title bar: "LESSON TITLE — Stepformer", its formulas as plain text (tex_plain_title: a
// title bar cannot typeset), or "Stepformer" without a lesson. Set only when it changes.
static void set_title(Shell *sh, const Session *s) {
  char plain[256], t[sizeof sh->title];
  if (s->has_lesson && s->lesson.title) {
    tex_plain_title(s->lesson.title, plain, sizeof plain);
    snprintf(t, sizeof t, "%s \xE2\x80\x94 Stepformer", plain);
  } else
    snprintf(t, sizeof t, "Stepformer");
  if (!strcmp(t, sh->title)) return;
  memcpy(sh->title, t, sizeof t);
  SDL_SetWindowTitle(sh->win, t);
}

// Keeps the canvas and the texture the size of the drawable.
static bool fit_drawable(Shell *sh) {
  int dw, dh, ww, wh;
  if (SDL_GetRendererOutputSize(sh->ren, &dw, &dh) != 0) return false;
  SDL_GetWindowSize(sh->win, &ww, &wh);
  sh->sx = ww > 0 ? (float)dw / ww : 1, sh->sy = wh > 0 ? (float)dh / wh : 1;
  if (dw == sh->dw && dh == sh->dh && sh->tex) return true;
  if (sh->tex) SDL_DestroyTexture(sh->tex);
  canvas_free(&sh->canvas);
  canvas_free(&sh->page);
  sh->dw = dw, sh->dh = dh;
  sh->canvas = canvas_new(dw, dh);
  sh->page = canvas_new(dw, dh);
  sh->tex = SDL_CreateTexture(sh->ren, SDL_PIXELFORMAT_RGBA32, SDL_TEXTUREACCESS_STREAMING, dw, dh);
  return sh->canvas.px && sh->page.px && sh->tex;
}

static void record(double **a, int *n, int *cap, double v) {
  if (*n == *cap) {
    int nc = *cap ? *cap * 2 : 1024;
    double *na = realloc(*a, sizeof(double) * (size_t)nc);
    if (!na) return;
    *a = na, *cap = nc;
  }
  (*a)[(*n)++] = v;
}

static void frame(Shell *sh, App *app) {
  double t0 = now_ms();
  bool page = app_draw(app, &sh->scene, &sh->overlay, (float)sh->dw, (float)sh->dh);
  if (page) scene_raster(&sh->scene, sh->page, 0);
  memcpy(sh->canvas.px, sh->page.px, sizeof(uint32_t) * (size_t)sh->dw * (size_t)sh->dh);
  scene_raster(&sh->overlay, sh->canvas, SCENE_NO_CLEAR);
  SDL_UpdateTexture(sh->tex, NULL, sh->canvas.px, sh->canvas.stride * 4);
  SDL_RenderClear(sh->ren);
  SDL_RenderCopy(sh->ren, sh->tex, NULL, NULL);
  double t1 = now_ms();
  SDL_RenderPresent(sh->ren);
  float box[4]; // an input method shows what it composes next to the caret
  if (app_caret_box(app, box))
    SDL_SetTextInputRect(&(SDL_Rect){(int)(box[0] / sh->sx), (int)(box[1] / sh->sy),
                                     (int)(box[2] / sh->sx) + 1, (int)(box[3] / sh->sy) + 1});
  // the work of a frame, without waiting for vsync
  if (page)
    record(&sh->page_frames, &sh->n_page_frames, &sh->cap_page_frames, t1 - t0);
  else
    record(&sh->frames, &sh->n_frames, &sh->cap_frames, t1 - t0);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void print_one(const char *what, double *t, int n, int w, int h) {
  if (n == 0) return;
  qsort(t, (size_t)n, sizeof(double), cmp_double);
  printf("%s %d: median %.2f ms, 99th percentile %.2f ms, max %.2f ms (%dx%d)\n", what, n, t[n / 2],
         t[(int)(n * 0.99)], t[n - 1], w, h);
}

static void print_stats(Shell *sh) {
  print_one("frames drawing the page (a step, a sentence)", sh->page_frames, sh->n_page_frames, sh->dw,
            sh->dh);
  print_one("frames drawing the overlay only (hovering)", sh->frames, sh->n_frames, sh->dw, sh->dh);
  print_one("events (input, recompute and frame)", sh->events, sh->n_events, sh->dw, sh->dh);
}

static void apply_requests(Shell *sh, App *app, bool *quit) {
  AppRequests r = app_take_requests(app);
  if (r.quit) *quit = true;
  if (r.fullscreen_changed)
    SDL_SetWindowFullscreen(sh->win, app_fullscreen(app) ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0);
  if (r.text_input_changed) {
    if (app_editing(app))
      SDL_StartTextInput();
    else
      SDL_StopTextInput();
  }
  if (r.copy) web_copy(app_clipboard(app)); // (the page: SDL has no system clipboard there)
  if (r.copy && SDL_SetClipboardText(app_clipboard(app)) != 0)
    fprintf(stderr, "stepformer: cannot copy to the clipboard: %s\n", SDL_GetError());
  if (r.paste && web_active()) {
    web_request_paste(); // asynchronous: the text arrives through paste_from_page
  } else if (r.paste) {
    char *text = SDL_GetClipboardText(); // "" (not NULL) when empty, in SDL 2
    app_paste(app, text);
    SDL_free(text);
  }
}

// Turns one SDL event into AppEvents.
static void translate(Shell *sh, App *app, const SDL_Event *e, bool *quit) {
  AppEvent ev = {.time_ms = now_ms()};
  switch (e->type) {
  case SDL_QUIT: *quit = true; return;
  case SDL_WINDOWEVENT:
    if (e->window.event == SDL_WINDOWEVENT_SIZE_CHANGED || e->window.event == SDL_WINDOWEVENT_EXPOSED) {
      fit_drawable(sh);
      ev.kind = EV_RESIZE, ev.w = sh->dw, ev.h = sh->dh;
      app_event(app, &ev);
      if (e->window.event == SDL_WINDOWEVENT_EXPOSED)
        app_event(app, &(AppEvent){.kind = EV_TICK}), frame(sh, app);
    } else if (e->window.event == SDL_WINDOWEVENT_LEAVE) {
      ev.kind = EV_MOUSE_LEAVE;
      app_event(app, &ev);
    }
    return;
  case SDL_KEYDOWN: {
    SDL_Keymod m = e->key.keysym.mod;
    ev.kind = EV_KEY;
    ev.mods =
        (m & KMOD_SHIFT ? MOD_SHIFT : 0) | (m & KMOD_CTRL ? MOD_CTRL : 0) | (m & KMOD_ALT ? MOD_ALT : 0);
    ev.key = map_key(e->key.keysym.sym, &ev.ch);
    if (ev.key == KEY_CHAR && ev.ch == '=' && (ev.mods & MOD_SHIFT)) ev.key = KEY_PLUS; // "+" on US keyboards
    if (ev.key == KEY_CHAR && ev.ch == '/' && (ev.mods & MOD_SHIFT)) ev.ch = '?';
    if (ev.key != KEY_NONE) app_event(app, &ev);
    return;
  }
  case SDL_TEXTINPUT:
    ev.kind = EV_TEXT;
    snprintf(ev.text, sizeof ev.text, "%s", e->text.text);
    app_event(app, &ev);
    return;
  case SDL_TEXTEDITING: // an input method composing: shown at the caret until it is typed
    ev.kind = EV_COMPOSE;
    snprintf(ev.text, sizeof ev.text, "%s", e->edit.text);
    app_event(app, &ev);
    return;
  case SDL_MOUSEWHEEL: {
    SDL_Keymod m = SDL_GetModState();
    ev.kind = EV_WHEEL, ev.wheel = e->wheel.direction == SDL_MOUSEWHEEL_FLIPPED ? -e->wheel.y : e->wheel.y;
    ev.mods =
        (m & KMOD_SHIFT ? MOD_SHIFT : 0) | (m & KMOD_CTRL ? MOD_CTRL : 0) | (m & KMOD_ALT ? MOD_ALT : 0);
    app_event(app, &ev);
    return;
  }
  case SDL_MOUSEMOTION:
    ev.kind = EV_MOUSE_MOVE, ev.x = e->motion.x * sh->sx, ev.y = e->motion.y * sh->sy;
    app_event(app, &ev);
    return;
  case SDL_MOUSEBUTTONDOWN:
  case SDL_MOUSEBUTTONUP:
    if (e->button.button != SDL_BUTTON_LEFT) return;
    ev.kind = e->type == SDL_MOUSEBUTTONDOWN ? EV_MOUSE_DOWN : EV_MOUSE_UP;
    ev.x = e->button.x * sh->sx, ev.y = e->button.y * sh->sy;
    ev.mods = SDL_GetModState() & KMOD_SHIFT ? MOD_SHIFT : 0; // Shift+click extends a selection
    ev.clicks = e->button.clicks;
    app_event(app, &ev);
    return;
  default: return;
  }
}

// Feeds replay item k; returns false when it could not (a cell that is not there).
static void replay_step(Shell *sh, App *app, const ReplayItem *it, int k, const WindowOptions *wo) {
  AppEvent ev = it->ev;
  ev.time_ms = now_ms();
  double t0 = ev.time_ms;
  if (it->kind == RP_HOVER || it->kind == RP_CLICK_CELL) {
    float x, y;
    if (!app_cell_center(app, it->op, it->i, it->j, &x, &y)) {
      printf("replay %d (line %d): no cell %d,%d in operand %d of this view\n", k + 1, it->line, it->i, it->j,
             it->op);
      return;
    }
    ev.kind = it->kind == RP_HOVER ? EV_MOUSE_MOVE : EV_MOUSE_DOWN, ev.x = x, ev.y = y;
  }
  if (it->kind == RP_CLIPBOARD && SDL_SetClipboardText(it->clipboard) != 0)
    printf("replay %d (line %d): cannot set the clipboard: %s\n", k + 1, it->line, SDL_GetError());
  if (it->kind == RP_EVENT || it->kind == RP_HOVER || it->kind == RP_CLICK_CELL) app_event(app, &ev);
  if (ev.kind == EV_RESIZE) { // a replay resize changes the window too
    SDL_SetWindowSize(sh->win, (int)(ev.w / sh->sx), (int)(ev.h / sh->sy));
    fit_drawable(sh);
    app_event(app, &(AppEvent){.kind = EV_RESIZE, .w = sh->dw, .h = sh->dh});
  }
  bool quit = false;
  apply_requests(sh, app, &quit);
  if (app_dirty(app) || it->kind == RP_WAIT) frame(sh, app);
  if (sh->events) sh->events[sh->n_events++] = now_ms() - t0;
  char line[2048];
  app_describe(app, line, sizeof line);
  printf("replay %d %s: %s%s%s", k + 1, it->label, line, app_status(app)[0] ? " status=" : "",
         app_status(app));
  if (wo->frame_stats && sh->events) printf(" time=%.2fms", sh->events[sh->n_events - 1]);
  printf("\n");
  if (wo->screenshot) {
    char path[4096];
    Err err = {0};
    snprintf(path, sizeof path, "%s/%03d-%s.png", wo->screenshot, k + 1, it->label);
    if (!pngio_write(sh->canvas, path, NULL, 0, &err)) fprintf(stderr, "stepformer: %s\n", err.msg);
  }
}

// The page (web.h): the browser calls one iteration of the loop per animation frame; it waits for
// nothing, since the browser sleeps between frames. What S and export wrote becomes downloads.
typedef struct {
  Shell sh;
  App *app;
  const AppOptions *ao;
  const WindowOptions *wo;
  Session *dropped; // the session of the last dropped file (heap), or NULL: the first one's
} PageLoop;

static void page_iteration(void *arg) {
  PageLoop *p = arg;
  SDL_Event e;
  bool quit = false; // (a page cannot quit: Q does nothing there)
  while (SDL_PollEvent(&e)) translate(&p->sh, p->app, &e, &quit);
  app_event(p->app, &(AppEvent){.kind = EV_TICK, .time_ms = now_ms()});
  apply_requests(&p->sh, p->app, &quit);
  if (app_dirty(p->app)) frame(&p->sh, p->app);
  web_offer_downloads();
}

static void paste_from_page(void *app, const char *text) { app_paste(app, text); }

// A file dropped on the page: its session replaces the one shown, or its message is printed
// (the page shows what the program prints on stderr) and nothing changes.
static void open_in_page(void *arg, const char *path) {
  PageLoop *p = arg;
  Session *s = calloc(1, sizeof *s);
  Err err = {0};
  if (!s || !p->wo->reopen || !p->wo->reopen(path, s, &err)) {
    if (err.msg[0]) fprintf(stderr, "stepformer: %s\n", err.msg);
    free(s);
    return;
  }
  App *app = app_new(s, p->ao, &err);
  if (!app) {
    fprintf(stderr, "stepformer: %s\n", err.msg);
    session_close(s), free(s);
    return;
  }
  app_free(p->app);
  if (p->dropped) session_close(p->dropped), free(p->dropped);
  p->app = app, p->dropped = s;
  web_set_paste(paste_from_page, app);
  app_event(app, &(AppEvent){.kind = EV_RESIZE, .w = p->sh.dw, .h = p->sh.dh});
  frame(&p->sh, app);
  fprintf(stderr, "stepformer: opened %s\n", path);
}
static void describe_for_page(void *arg, char *buf, int cap) { // the state, then any status message
  App *app = ((PageLoop *)arg)->app;
  app_describe(app, buf, cap);
  int n = (int)strlen(buf);
  if (app_status(app)[0] && n < cap) snprintf(buf + n, (size_t)(cap - n), " status=%s", app_status(app));
}

int window_run(Session *s, const AppOptions *ao, const WindowOptions *wo) {
  const char *hint =
      wo->export_hint ? wo->export_hint : "stepformer export --lesson lessons/cat-bank.md --out slides";
  if (!have_display()) {
    fprintf(stderr,
            "stepformer: no display to open a window on (DISPLAY is not set); to make the pictures without "
            "one, run:  %s\n",
            hint);
    return 2;
  }
  Replay replay = {0};
  Err err = {0};
  if (wo->replay && !replay_load(&replay, wo->replay, &err))
    return fprintf(stderr, "stepformer: %s\n", err.msg), 2;
  if (wo->screenshot) {
    Err derr = {0};
    bool created;
    if (!dir_ensure(wo->screenshot, &created, &derr)) {
      replay_free(&replay);
      return fprintf(stderr, "stepformer: --screenshot: %s\n", derr.msg), 2;
    }
  }
  SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1");
  if (SDL_Init(SDL_INIT_VIDEO | SDL_INIT_EVENTS) != 0) {
    fprintf(stderr, "stepformer: cannot open a window (%s); to make the pictures without one, run:  %s\n",
            SDL_GetError(), hint);
    replay_free(&replay);
    return 2;
  }
  Shell sh = {0};
  App *app = NULL;
  int rc = 1;
  scene_init(&sh.scene, 1, 1, 0);
  scene_init(&sh.overlay, 1, 1, 0);
  int w = wo->width > 0 ? wo->width : 1600, h = wo->height > 0 ? wo->height : 900;
  SDL_Rect usable;
  if (!wo->width && SDL_GetDisplayUsableBounds(0, &usable) == 0 && usable.w > 0) {
    if (w > usable.w * 9 / 10) w = usable.w * 9 / 10, h = w * 9 / 16;
    if (h > usable.h * 9 / 10) h = usable.h * 9 / 10, w = h * 16 / 9;
  }
  sh.win = SDL_CreateWindow("Stepformer", SDL_WINDOWPOS_CENTERED, SDL_WINDOWPOS_CENTERED, w, h,
                            SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI |
                                (wo->fullscreen ? SDL_WINDOW_FULLSCREEN_DESKTOP : 0));
  if (!sh.win) goto sdl_fail;
  sh.ren = SDL_CreateRenderer(sh.win, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_PRESENTVSYNC);
  if (!sh.ren) sh.ren = SDL_CreateRenderer(sh.win, -1, SDL_RENDERER_SOFTWARE);
  if (!sh.ren || !fit_drawable(&sh)) goto sdl_fail;
  SDL_StopTextInput(); // typed text only while editing the sentence
  app = app_new(s, ao, &err);
  if (!app) {
    fprintf(stderr, "stepformer: %s\n", err.msg);
    goto done;
  }
  app_event(app, &(AppEvent){.kind = EV_RESIZE, .w = sh.dw, .h = sh.dh});
  set_title(&sh, s);
  for (int k = 1; k < wo->start_step; k++) // --step N: N-1 steps forward, as the key would
    app_event(app, &(AppEvent){.kind = EV_KEY, .key = KEY_RIGHT});
  if (wo->fullscreen) {
    AppEvent f = {.kind = EV_KEY, .key = KEY_F11};
    app_event(app, &f);
    app_take_requests(app);
  }
  frame(&sh, app);
  sh.n_frames = sh.n_page_frames = 0; // the opening frame (fonts warming up) is start-up
  if (wo->replay) sh.events = calloc((size_t)replay.n + 1, sizeof(double));
  if (web_active() && !wo->replay) { // the page: the browser runs the loop from here on
    static PageLoop page;
    page = (PageLoop){sh, app, ao, wo, NULL};
    web_set_paste(paste_from_page, app);
    web_set_describe(describe_for_page, &page);
    web_set_open(open_in_page, &page);
    web_main_loop(page_iteration, &page); // (does not return)
  }
  long rss0 = rss_kib();
  double start = now_ms();
  bool quit = false;
  int next = 0;
  while (!quit) {
    SDL_Event e;
    if (wo->replay) {
      while (SDL_PollEvent(&e)) translate(&sh, app, &e, &quit);
      if (next >= replay.n) break;
      double due = start + replay.items[next].ev.time_ms;
      if (wo->realtime && now_ms() < due) {
        SDL_Delay((Uint32)(due - now_ms() > 5 ? 5 : 1));
        continue;
      }
      replay_step(&sh, app, &replay.items[next], next, wo);
      next++;
    } else {
      double wake = app_next_wake(app, now_ms());
      int got = wake < 0 ? SDL_WaitEvent(&e) : SDL_WaitEventTimeout(&e, (int)wake + 1);
      if (got) {
        translate(&sh, app, &e, &quit);
        while (SDL_PollEvent(&e)) translate(&sh, app, &e, &quit);
      }
      app_event(app, &(AppEvent){.kind = EV_TICK, .time_ms = now_ms()});
    }
    apply_requests(&sh, app, &quit);
    if (app_dirty(app)) set_title(&sh, s), frame(&sh, app);
  }
  if (wo->replay)
    printf("replay done: %d events, resident memory %ld KiB at the start, %ld KiB at the end\n", replay.n,
           rss0, rss_kib());
  if (wo->frame_stats) print_stats(&sh);
  rc = 0;
  goto done;
sdl_fail:
  fprintf(stderr, "stepformer: SDL: %s; to make the pictures without a window, run:  %s\n", SDL_GetError(),
          hint);
  rc = 2;
done:
  app_free(app);
  scene_free(&sh.scene);
  scene_free(&sh.overlay);
  canvas_free(&sh.canvas);
  canvas_free(&sh.page);
  free(sh.frames);
  free(sh.page_frames);
  free(sh.events);
  if (sh.tex) SDL_DestroyTexture(sh.tex);
  if (sh.ren) SDL_DestroyRenderer(sh.ren);
  if (sh.win) SDL_DestroyWindow(sh.win);
  SDL_Quit();
  replay_free(&replay);
  return rc;
}
