// outdir.c -- see outdir.h.
#include "outdir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h" // defines: dir_ensure

// Removes the folders outdir_begin made, innermost first (only while they are empty).
static void remove_created(OutDir *od) {
  if (!od->created_top[0]) return;
  char p[2048];
  snprintf(p, sizeof p, "%s", od->dir);
  for (;;) {
    rmdir(p);
    if (!strcmp(p, od->created_top)) break;
    char *slash = strrchr(p, '/');
    if (!slash || slash == p) break;
    *slash = 0;
  }
}

// Makes every missing folder of od->dir, outermost first, remembering the first one made.
static bool make_dirs(OutDir *od, Err *err) {
  char p[2048];
  snprintf(p, sizeof p, "%s", od->dir);
  for (char *q = p + 1;; q++) {
    bool end = *q == 0;
    if (*q != '/' && !end) continue;
    *q = 0;
    struct stat st;
    if (stat(p, &st) != 0) {
      if (mkdir(p, 0777) != 0) {
        err_set(err, "%s: cannot create folder %s: %s", od->dir, p, strerror(errno));
        remove_created(od);
        return false;
      }
      if (!od->created_top[0]) snprintf(od->created_top, sizeof od->created_top, "%s", p);
    } else if (!S_ISDIR(st.st_mode)) {
      err_set(err, "%s: %s is a file, not a folder", od->dir, p);
      remove_created(od);
      return false;
    }
    if (end) break;
    *q = '/';
  }
  od->created_dir = od->created_top[0] != 0;
  return true;
}

bool outdir_begin(OutDir *od, const char *dir, Err *err) {
  memset(od, 0, sizeof *od);
  if (!dir || !*dir) return err_set(err, "--out needs a folder");
  if (strlen(dir) >= sizeof od->dir - 64) return err_set(err, "%s: path too long", dir);
  snprintf(od->dir, sizeof od->dir, "%s", dir);
  if (!make_dirs(od, err)) return false;
  snprintf(od->stage, sizeof od->stage, "%s/.stepformer-tmp-%ld", dir, (long)getpid());
  if (mkdir(od->stage, 0777) != 0) {
    err_set(err, "%s: cannot write in this folder: %s", dir, strerror(errno));
    remove_created(od);
    return false;
  }
  return true;
}

bool outdir_path(OutDir *od, const char *name, char *path, size_t cap, Err *err) {
  if (strchr(name, '/')) return err_set(err, "%s: file names may not contain '/'", name);
  if (od->n == od->cap) {
    int nc = od->cap ? od->cap * 2 : 64;
    char **nn = realloc(od->names, sizeof(char *) * (size_t)nc);
    if (!nn) return err_set(err, "out of memory");
    od->names = nn;
    od->cap = nc;
  }
  int k = snprintf(path, cap, "%s/%s", od->stage, name);
  if (k < 0 || (size_t)k >= cap) return err_set(err, "%s: path too long", name);
  size_t len = strlen(name) + 1;
  if (!(od->names[od->n] = malloc(len))) return err_set(err, "out of memory");
  memcpy(od->names[od->n++], name, len);
  return true;
}

static void od_free(OutDir *od) {
  for (int i = 0; i < od->n; i++) free(od->names[i]);
  free(od->names);
  od->names = NULL;
  od->n = od->cap = 0;
}

void outdir_abort(OutDir *od) {
  char p[2600];
  for (int i = 0; i < od->n; i++) {
    snprintf(p, sizeof p, "%s/%s", od->stage, od->names[i]);
    remove(p);
  }
  rmdir(od->stage);
  remove_created(od);
  od_free(od);
}

// Moving the files in is all or nothing: an old file of the same name is first moved aside into
// the staging folder ("NAME.old"); if any move fails, every move is undone in reverse order.
bool outdir_commit(OutDir *od, Err *err) {
  char from[2600], to[2600], old[2700];
  struct stat st;
  // 1. every target must be free or a regular file we may replace
  for (int i = 0; i < od->n; i++) {
    snprintf(to, sizeof to, "%s/%s", od->dir, od->names[i]);
    if (lstat(to, &st) == 0 && !S_ISREG(st.st_mode)) {
      err_set(err, "%s: exists and is not a file; move it away and run again", to);
      outdir_abort(od);
      return false;
    }
  }
  // 2. move aside, then in; remember how far we got
  int done = 0, e = 0;
  bool *had_old = calloc((size_t)od->n + 1, sizeof(bool));
  if (!had_old) {
    outdir_abort(od);
    return err_set(err, "out of memory");
  }
  for (; done < od->n; done++) {
    snprintf(from, sizeof from, "%s/%s", od->stage, od->names[done]);
    snprintf(to, sizeof to, "%s/%s", od->dir, od->names[done]);
    snprintf(old, sizeof old, "%s/%s.old", od->stage, od->names[done]);
    if (access(from, F_OK) != 0) continue; // reserved but never written
    if (lstat(to, &st) == 0) {
      if (rename(to, old) != 0) break;
      had_old[done] = true;
    }
    if (rename(from, to) != 0) {
      e = errno;
      if (had_old[done]) rename(old, to), had_old[done] = false;
      break;
    }
  }
  if (done < od->n) { // 3. undo: new files back to staging, old files back in place
    if (!e) e = errno;
    snprintf(to, sizeof to, "%s/%s", od->dir, od->names[done]);
    err_set(err, "%s: cannot move into place: %s; nothing was changed", to, strerror(e));
    for (int i = done - 1; i >= 0; i--) {
      snprintf(from, sizeof from, "%s/%s", od->stage, od->names[i]);
      snprintf(to, sizeof to, "%s/%s", od->dir, od->names[i]);
      snprintf(old, sizeof old, "%s/%s.old", od->stage, od->names[i]);
      if (access(to, F_OK) == 0 && access(from, F_OK) != 0) rename(to, from);
      if (had_old[i]) rename(old, to);
    }
    free(had_old);
    outdir_abort(od);
    return false;
  }
  for (int i = 0; i < od->n; i++) // the replaced files
    if (had_old[i]) {
      snprintf(old, sizeof old, "%s/%s.old", od->stage, od->names[i]);
      remove(old);
    }
  free(had_old);
  rmdir(od->stage);
  od_free(od);
  return true;
}
