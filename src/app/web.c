// web.c -- see web.h. The JavaScript is inline (EM_JS); the page itself is web/shell.html.
#include "web.h"

#ifdef __EMSCRIPTEN__
#include <dirent.h>
#include <emscripten.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

// ---------------------------------------------------------------- a folder as one .zip
// An export writes a folder of pictures: the page offers it as one zip archive, its files stored
// as they are (PNG and SVG compress little more). The format (PKWARE's APPNOTE 4.3): for each
// file a local header, the name and the bytes; then a central directory entry for each; then the
// end record. Sizes stay below 4 GB (no zip64): a page's export is a few MB.

static uint32_t crc32_of(const uint8_t *p, size_t n) { // the CRC-32 of zip (and PNG), bit by bit
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; i++) {
    c ^= p[i];
    for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0xedb88320u : c >> 1;
  }
  return ~c;
}

static void put16(FILE *f, unsigned v) { fputc((int)(v & 255), f), fputc((int)(v >> 8 & 255), f); }
static void put32(FILE *f, uint32_t v) { put16(f, v & 0xffff), put16(f, v >> 16); }

typedef struct {
  char name[256];
  uint32_t crc, size, offset;
} ZipEntry;

// Appends the files of dir (its sub-folders too, named "sub/file") to zip; false on an error.
static bool zip_add_dir(FILE *zip, const char *dir, const char *prefix, ZipEntry *e, int *n, int cap) {
  DIR *d = opendir(dir);
  if (!d) return false;
  struct dirent *de;
  bool ok = true;
  while (ok && (de = readdir(d))) {
    if (de->d_name[0] == '.') continue;
    char path[1024], name[256];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    snprintf(name, sizeof name, "%s%s", prefix, de->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      char sub[256];
      snprintf(sub, sizeof sub, "%s/", name);
      ok = zip_add_dir(zip, path, sub, e, n, cap);
      continue;
    }
    FILE *in = fopen(path, "rb");
    uint8_t *buf = malloc(st.st_size ? (size_t)st.st_size : 1);
    ok = in && buf && *n < cap && fread(buf, 1, (size_t)st.st_size, in) == (size_t)st.st_size;
    if (ok) {
      ZipEntry *z = &e[(*n)++];
      snprintf(z->name, sizeof z->name, "%s", name);
      z->crc = crc32_of(buf, (size_t)st.st_size), z->size = (uint32_t)st.st_size;
      z->offset = (uint32_t)ftell(zip);
      put32(zip, 0x04034b50), put16(zip, 20), put16(zip, 0), put16(zip, 0); // version, flags, stored
      put16(zip, 0), put16(zip, 0x21);                                      // time, date (1980-01-01)
      put32(zip, z->crc), put32(zip, z->size), put32(zip, z->size);
      put16(zip, (unsigned)strlen(z->name)), put16(zip, 0);
      fwrite(z->name, 1, strlen(z->name), zip);
      fwrite(buf, 1, z->size, zip);
    }
    if (in) fclose(in);
    free(buf);
  }
  closedir(d);
  return ok;
}

// Writes the folder dir as the zip archive zip_path (its files under "NAME/", NAME the folder's).
static bool zip_dir(const char *dir, const char *name, const char *zip_path) {
  enum { CAP = 4096 };
  ZipEntry *e = calloc(CAP, sizeof *e);
  FILE *zip = fopen(zip_path, "wb");
  int n = 0;
  char prefix[256];
  snprintf(prefix, sizeof prefix, "%s/", name);
  bool ok = e && zip && zip_add_dir(zip, dir, prefix, e, &n, CAP);
  if (ok) {
    uint32_t start = (uint32_t)ftell(zip);
    for (int i = 0; i < n; i++) {
      put32(zip, 0x02014b50), put16(zip, 20), put16(zip, 20), put16(zip, 0), put16(zip, 0);
      put16(zip, 0), put16(zip, 0x21);
      put32(zip, e[i].crc), put32(zip, e[i].size), put32(zip, e[i].size);
      put16(zip, (unsigned)strlen(e[i].name)), put16(zip, 0), put16(zip, 0); // name, extra, comment
      put16(zip, 0), put16(zip, 0), put32(zip, 0), put32(zip, e[i].offset);  // disk, attributes
      fwrite(e[i].name, 1, strlen(e[i].name), zip);
    }
    uint32_t size = (uint32_t)ftell(zip) - start;
    put32(zip, 0x06054b50), put16(zip, 0), put16(zip, 0), put16(zip, (unsigned)n), put16(zip, (unsigned)n);
    put32(zip, size), put32(zip, start), put16(zip, 0);
  }
  if (zip && fclose(zip) != 0) ok = false;
  free(e);
  return ok;
}

// Removes dir and everything in it.
static void remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
      remove_tree(path);
    else
      unlink(path);
  }
  closedir(d);
  rmdir(dir);
}

// Each file in WEB_SAVE_DIR as a download, then removed; each folder (an export) as one .zip.
static void offer_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue; // ".", "..", and files still being written (.stepformer-*)
    char path[1024], zip[1100], name[300];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      snprintf(zip, sizeof zip, "/tmp/%s.zip", e->d_name);
      snprintf(name, sizeof name, "%s.zip", e->d_name);
      if (zip_dir(path, e->d_name, zip)) js_download(zip, name);
      unlink(zip);
      remove_tree(path);
      continue;
    }
    js_download(path, e->d_name);
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
