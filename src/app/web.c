// web.c -- see web.h. The JavaScript is inline (EM_JS); the page itself is web/shell.html.
#include "web.h"

#ifdef __EMSCRIPTEN__
#include <dirent.h>
#include <emscripten.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool web_active(void) { return true; }

void web_main_loop(void (*iteration)(void *), void *arg) {
  mkdir(WEB_SAVE_DIR, 0755);
  emscripten_set_main_loop_arg(iteration, arg, 0, 1); // fps 0: the browser's animation frames
}

// Hands the browser the bytes of the file at path as a download named name.
EM_JS(void, js_download, (const char *path, const char *name), {
  var p = UTF8ToString(path), n = UTF8ToString(name);
  var bytes = FS.readFile(p);
  var type = n.endsWith('.png')   ? 'image/png'
             : n.endsWith('.svg') ? 'image/svg+xml'
                                  : 'application/octet-stream';
  var url = URL.createObjectURL(new Blob([bytes], {
    type:
      type
  }));
  var a = document.createElement('a');
  a.href = url, a.download = n;
  document.body.appendChild(a), a.click(), a.remove();
  setTimeout(
      function() { URL.revokeObjectURL(url); }, 10000);
  if (Module.sfDownloaded) Module.sfDownloaded(n, bytes.length); // (the browser test counts them)
});

// Every file under dir (folders too: an export writes one), as downloads named by their path
// below WEB_SAVE_DIR with '/' as '-', then removed.
static void offer_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char path[1024], name[512];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      offer_dir(path);
      rmdir(path);
      continue;
    }
    snprintf(name, sizeof name, "%s", path + strlen(WEB_SAVE_DIR) + 1);
    for (char *c = name; *c; c++)
      if (*c == '/') *c = '-';
    js_download(path, name);
    unlink(path);
  }
  closedir(d);
}

void web_offer_downloads(void) { offer_dir(WEB_SAVE_DIR); }

EM_JS(void, web_copy, (const char *text), {
  var t = UTF8ToString(text);
  if (navigator.clipboard) navigator.clipboard.writeText(t).catch(function(){});
});

static void (*paste_fn)(void *, const char *);
static void *paste_arg;

void web_set_paste(void (*paste)(void *arg, const char *text), void *arg) {
  paste_fn = paste, paste_arg = arg;
}

// Called by the JavaScript below with the clipboard's text.
EMSCRIPTEN_KEEPALIVE void sf_web_paste(const char *text) {
  if (paste_fn) paste_fn(paste_arg, text);
}

EM_JS(void, web_request_paste, (void), {
  if (!navigator.clipboard || !navigator.clipboard.readText) return;
  navigator.clipboard.readText()
      .then(function(t) { Module.ccall('sf_web_paste', null, ['string'], [t]); })
      .catch(function(){});
});

static void (*open_fn)(void *, const char *);
static void *open_arg;

void web_set_open(void (*open)(void *arg, const char *path), void *arg) { open_fn = open, open_arg = arg; }

EMSCRIPTEN_KEEPALIVE void sf_web_open(const char *path) {
  if (open_fn) open_fn(open_arg, path);
}

static void (*describe_fn)(void *, char *, int);
static void *describe_arg;

void web_set_describe(void (*describe)(void *arg, char *buf, int cap), void *arg) {
  describe_fn = describe, describe_arg = arg;
}

EMSCRIPTEN_KEEPALIVE const char *sf_web_describe(void) {
  static char line[4096];
  line[0] = 0;
  if (describe_fn) describe_fn(describe_arg, line, sizeof line);
  return line;
}

#else // the native build: none of this is needed

bool web_active(void) { return false; }
void web_main_loop(void (*iteration)(void *), void *arg) { (void)iteration, (void)arg; }
void web_offer_downloads(void) {}
void web_copy(const char *text) { (void)text; }
void web_set_paste(void (*paste)(void *arg, const char *text), void *arg) { (void)paste, (void)arg; }
void web_request_paste(void) {}
void web_set_describe(void (*describe)(void *arg, char *buf, int cap), void *arg) {
  (void)describe, (void)arg;
}
void web_set_open(void (*open)(void *arg, const char *path), void *arg) { (void)open, (void)arg; }

#endif
