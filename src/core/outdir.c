// outdir.c -- see outdir.h.
#include "outdir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h" // defines: dir_ensure

bool outdir_begin(OutDir *od, const char *dir, Err *err) {
  memset(od, 0, sizeof *od);
  if (!dir || !*dir) return err_set(err, "--out needs a folder");
  if (strlen(dir) >= sizeof od->dir - 64) return err_set(err, "%s: path too long", dir);
  snprintf(od->dir, sizeof od->dir, "%s", dir);
  if (!dir_ensure(dir, &od->created_dir, err)) return false;
  snprintf(od->stage, sizeof od->stage, "%s/.stepformer-tmp-%ld", dir, (long)getpid());
  if (mkdir(od->stage, 0777) != 0) {
    err_set(err, "%s: cannot write in this folder: %s", dir, strerror(errno));
    if (od->created_dir) rmdir(od->dir);
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
  if (od->created_dir) rmdir(od->dir);
  od_free(od);
}

bool outdir_commit(OutDir *od, Err *err) {
  char from[2600], to[2600];
  for (int i = 0; i < od->n; i++) {
    snprintf(from, sizeof from, "%s/%s", od->stage, od->names[i]);
    snprintf(to, sizeof to, "%s/%s", od->dir, od->names[i]);
    if (access(from, F_OK) != 0) continue; // reserved but never written
    if (rename(from, to) != 0) {
      err_set(err, "%s: cannot move into place: %s", to, strerror(errno));
      outdir_abort(od);
      return false;
    }
  }
  rmdir(od->stage);
  od_free(od);
  return true;
}
