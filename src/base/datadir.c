// datadir.c -- see datadir.h.
#include "datadir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

// CMakeLists.txt compiles both in for a developer's build; without them (a packaged build,
// -DSF_DEV_TREE=OFF) there is no source tree to fall back on.
#ifndef SF_SOURCE_DIR
#define SF_SOURCE_DIR ""
#endif
#ifndef SF_BINARY_DIR
#define SF_BINARY_DIR ""
#endif

static bool is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

// The folder of the running program, or false (not Linux, or the link cannot be read).
static bool exe_dir(char *out, size_t cap) {
  ssize_t n = readlink("/proc/self/exe", out, cap - 1);
  if (n <= 0 || (size_t)n >= cap - 1) return false;
  out[n] = 0;
  char *slash = strrchr(out, '/');
  if (!slash) return false;
  *slash = 0;
  return true;
}

// True when path is dir or inside it (textually: both are absolute, without "..").
static bool inside(const char *path, const char *dir) {
  size_t n = strlen(dir);
  return n > 0 && !strncmp(path, dir, n) && (path[n] == '/' || path[n] == 0);
}

static void add(DatadirRoot *out, int cap, int *n, const char *path, const char *from, bool allowed) {
  if (*n >= cap) return;
  DatadirRoot *r = &out[(*n)++];
  snprintf(r->path, sizeof r->path, "%s", path);
  r->from = from;
  r->exists = is_dir(path);
  r->used = r->exists && allowed;
}

int datadir_roots(DatadirRoot *out, int cap) {
  int n = 0;
  char buf[4096], exe[4096];
  const char *env = getenv("STEPFORMER_DATA");
  if (env && *env) add(out, cap, &n, env, "STEPFORMER_DATA", true);
  bool have_exe = exe_dir(exe, sizeof exe);
  if (have_exe) {
    snprintf(buf, sizeof buf, "%s", exe);
    char *slash = strrchr(buf, '/'); // EXE/.. without "..": /usr/bin -> /usr
    if (slash) *slash = 0;
    if (strlen(buf) + 20 < sizeof buf) strcat(buf, "/share/stepformer");
    add(out, cap, &n, buf, "next to the program", true);
  }
  if (SF_SOURCE_DIR[0]) // a program that cannot tell where it runs keeps the developer's fallback
    add(out, cap, &n, SF_SOURCE_DIR, "the source tree", !have_exe || inside(exe, SF_BINARY_DIR));
  const char *xdg = getenv("XDG_DATA_DIRS");
  if (!xdg || !*xdg) xdg = "/usr/local/share:/usr/share";
  for (const char *p = xdg; *p && n < cap;) {
    size_t len = strcspn(p, ":");
    if (len > 0 && p[0] == '/' && len < sizeof buf - 20) { // XDG: relative entries are ignored
      snprintf(buf, sizeof buf, "%.*s/stepformer", (int)len, p);
      add(out, cap, &n, buf, "XDG_DATA_DIRS", true);
    }
    p += len + (p[len] == ':');
  }
  return n;
}

bool datadir_user_lessons(char *out, size_t cap) {
  const char *home = getenv("XDG_DATA_HOME");
  if (home && home[0] == '/') return snprintf(out, cap, "%s/stepformer/lessons", home) < (int)cap;
  home = getenv("HOME");
  if (home && home[0] == '/')
    return snprintf(out, cap, "%s/.local/share/stepformer/lessons", home) < (int)cap;
  return false;
}

bool datadir_kind_dir(const char *root, DatadirKind kind, char *out, size_t cap) {
  if (kind == DATADIR_LESSONS) {
    snprintf(out, cap, "%.4096s/lessons", root);
    return is_dir(out);
  }
  snprintf(out, cap, "%.4096s/models", root);
  if (is_dir(out)) return true;
  char src[4200];
  snprintf(src, sizeof src, "%.4096s/assets/models", root);
  if (!is_dir(src)) return false;
  snprintf(out, cap, "%s", src);
  return true;
}

// Appends "SEP text" to looked (cap bytes), ending in "..." when it no longer fits.
static void note(char *looked, size_t cap, const char *text) {
  if (!looked || !cap) return;
  size_t n = strlen(looked);
  if (n + 4 >= cap) return;
  int k = snprintf(looked + n, cap - n, "%s%s", n ? ", " : "", text);
  if (k < 0 || (size_t)k >= cap - n) snprintf(looked + (cap > 4 ? cap - 4 : 0), cap > 4 ? 4 : 0, "...");
}

// Tries dir/name: true (out set) when readable; adds dir to looked either way.
static bool try_in(const char *dir, const char *name, char *out, size_t cap, char *looked, size_t lcap) {
  char path[8300];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  note(looked, lcap, dir);
  if (access(path, R_OK) != 0) return false;
  return snprintf(out, cap, "%s", path) < (int)cap;
}

bool datadir_find(DatadirKind kind, const char *name, char *out, size_t cap, char *looked, size_t lcap) {
  if (looked && lcap) looked[0] = 0;
  char dir[4200];
  if (kind == DATADIR_LESSONS && datadir_user_lessons(dir, sizeof dir)) { // the teacher's own first
    if (is_dir(dir) && try_in(dir, name, out, cap, looked, lcap)) return true;
    if (!is_dir(dir)) {
      char miss[4300];
      snprintf(miss, sizeof miss, "%.4200s (missing)", dir);
      note(looked, lcap, miss);
    }
  }
  DatadirRoot roots[DATADIR_MAX_ROOTS];
  int n = datadir_roots(roots, DATADIR_MAX_ROOTS);
  const char *env = getenv("STEPFORMER_DATA");
  if (!(env && *env)) note(looked, lcap, "$STEPFORMER_DATA (not set)");
  for (int i = 0; i < n; i++) {
    if (roots[i].used && datadir_kind_dir(roots[i].path, kind, dir, sizeof dir)) {
      if (try_in(dir, name, out, cap, looked, lcap)) return true;
    } else if (roots[i].used || !roots[i].exists) { // a root without that folder, or none at all
      char miss[4300];
      snprintf(miss, sizeof miss, "%.4200s (%s)", roots[i].used ? dir : roots[i].path,
               roots[i].used ? "no such folder" : "missing");
      note(looked, lcap, miss);
    }
  }
  return false;
}
