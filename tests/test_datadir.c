// test_datadir.c -- the search order of datadir.h, on folders made here: STEPFORMER_DATA wins over
// the other roots, a missing folder is skipped (and named in the "looked in" line), a source tree's
// assets/models counts as models/, XDG_DATA_DIRS is searched in its order (relative entries are
// ignored), and a teacher's lesson in XDG_DATA_HOME comes before every shipped one.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "datadir.h" // defines: datadir_find, datadir_roots, DatadirRoot, DATADIR_MAX_ROOTS

static char T[64] = "/tmp/sf-datadir-XXXXXX";

// Makes T/rel (and its folders) holding the text rel.
static void put(const char *rel) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", T, rel);
  for (char *p = path + strlen(T) + 1; *p; p++)
    if (*p == '/') *p = 0, mkdir(path, 0755), *p = '/';
  FILE *f = fopen(path, "w");
  CHECK(f != NULL, "cannot write %s", path);
  if (f) fputs(rel, f), fclose(f);
}

// datadir_find of kind and name: the path found relative to T ("" when not found); looked into lk.
static const char *find(DatadirKind kind, const char *name, char *lk, size_t lcap) {
  static char out[4400];
  if (!datadir_find(kind, name, out, sizeof out, lk, lcap)) return "";
  return strncmp(out, T, strlen(T)) ? out : out + strlen(T) + 1;
}

static void env(const char *name, const char *rel) {
  char v[512];
  snprintf(v, sizeof v, "%s%s%s", rel[0] == '/' || !rel[0] ? "" : T, rel[0] == '/' || !rel[0] ? "" : "/",
           rel);
  setenv(name, v, 1);
}

int main(void) {
  CHECK(mkdtemp(T) != NULL, "mkdtemp");
  put("a/models/x.safetensors");
  put("a/lessons/l.md");
  put("xdg1/stepformer/models/x.safetensors");
  put("xdg1/stepformer/models/y.safetensors");
  put("xdg2/stepformer/models/z.safetensors");
  put("xdg2/stepformer/lessons/l.md");
  put("src/assets/models/s.safetensors");
  put("home/stepformer/lessons/l.md");
  put("home/stepformer/lessons/mine.md");
  char lk[2048], v[512];
  snprintf(v, sizeof v, "%s/nothere:relative/dir:%s/xdg1:%s/xdg2", T, T, T);
  setenv("XDG_DATA_DIRS", v, 1);
  env("XDG_DATA_HOME", "nohome");
  unsetenv("STEPFORMER_DATA");

  // without STEPFORMER_DATA: XDG_DATA_DIRS in order, a missing entry skipped, a relative one ignored
  CHECK(!strcmp(find(DATADIR_MODELS, "x.safetensors", lk, sizeof lk), "xdg1/stepformer/models/x.safetensors"),
        "x from the first XDG folder that has it: %s", lk);
  CHECK(!strcmp(find(DATADIR_MODELS, "z.safetensors", lk, sizeof lk), "xdg2/stepformer/models/z.safetensors"),
        "z from the second: %s", lk);
  CHECK(strstr(lk, "nothere/stepformer (missing)") && !strstr(lk, "relative"),
        "the missing folder is named, the relative one is not searched: %s", lk);
  // STEPFORMER_DATA wins
  env("STEPFORMER_DATA", "a");
  CHECK(!strcmp(find(DATADIR_MODELS, "x.safetensors", lk, sizeof lk), "a/models/x.safetensors"),
        "STEPFORMER_DATA wins: %s", lk);
  CHECK(!strcmp(find(DATADIR_MODELS, "y.safetensors", lk, sizeof lk), "xdg1/stepformer/models/y.safetensors"),
        "what STEPFORMER_DATA lacks comes from the next folders: %s", lk);
  CHECK(!strcmp(find(DATADIR_LESSONS, "l.md", lk, sizeof lk), "a/lessons/l.md"), "a lesson too: %s", lk);
  CHECK(strstr(lk, "nohome/stepformer/lessons (missing), ") == lk + strlen(T) + 1,
        "the teacher's folder is looked in first: %s", lk);
  // a source tree as STEPFORMER_DATA: assets/models
  env("STEPFORMER_DATA", "src");
  CHECK(!strcmp(find(DATADIR_MODELS, "s.safetensors", lk, sizeof lk), "src/assets/models/s.safetensors"),
        "a source tree's assets/models: %s", lk);
  // a missing STEPFORMER_DATA is skipped, and named
  env("STEPFORMER_DATA", "gone");
  CHECK(!strcmp(find(DATADIR_MODELS, "x.safetensors", lk, sizeof lk), "xdg1/stepformer/models/x.safetensors"),
        "a missing STEPFORMER_DATA is skipped: %s", lk);
  CHECK(!strcmp(find(DATADIR_MODELS, "nothing.safetensors", lk, sizeof lk), ""), "not found");
  CHECK(strstr(lk, "gone (missing)") && strstr(lk, "xdg2/stepformer/models") && !strstr(lk, "not set"),
        "the line names every folder: %s", lk);
  // the teacher's lessons come first
  env("XDG_DATA_HOME", "home");
  env("STEPFORMER_DATA", "a");
  CHECK(!strcmp(find(DATADIR_LESSONS, "l.md", lk, sizeof lk), "home/stepformer/lessons/l.md"),
        "the teacher's l.md before the shipped one: %s", lk);
  CHECK(!strcmp(find(DATADIR_LESSONS, "mine.md", lk, sizeof lk), "home/stepformer/lessons/mine.md"),
        "mine.md");
  // the roots, in order: STEPFORMER_DATA first, then beside the program, ..., XDG last
  DatadirRoot r[DATADIR_MAX_ROOTS];
  int n = datadir_roots(r, DATADIR_MAX_ROOTS);
  CHECK(n >= 4 && !strcmp(r[0].from, "STEPFORMER_DATA") && !strcmp(r[1].from, "next to the program") &&
            !strcmp(r[n - 1].from, "XDG_DATA_DIRS") && r[0].used && !r[n - 3].exists,
        "%d roots in order", n);
  // an unset STEPFORMER_DATA is named as such
  unsetenv("STEPFORMER_DATA");
  find(DATADIR_MODELS, "nothing.safetensors", lk, sizeof lk);
  CHECK(strstr(lk, "$STEPFORMER_DATA (not set)") != NULL, "%s", lk);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", T);
  CHECK(system(cmd) == 0, "cleanup");
  return check_exit("test_datadir");
}
