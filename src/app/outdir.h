// outdir.h -- all-or-nothing output folders for commands that write many files.
//
// outdir_begin creates DIR (and missing parents, like mkdir -p) if needed and a hidden staging folder inside
// it; the command writes its files into the staging folder (outdir_path gives each file's staging path and
// remembers its name); outdir_commit then moves every file into DIR, replacing earlier files of the same
// names and touching nothing else: all of them or, when one move fails, none (old files return).
// outdir_abort deletes the staging folder, and DIR too if
// outdir_begin created it, so a failed command leaves no partial output behind.
//
// Again into the same folder: DIR/.stepformer-files lists the files Stepformer wrote there (with
// their size and time). A commit removes the listed files it did not write again when they are of
// a kind it writes (the same extension) and unchanged since: exporting a 2-head model's PNGs over a
// 4-head model's leaves no stale "-h3", "-h4" pictures, while CSV files, files a user changed,
// and every file Stepformer did not write stay. A staging folder a killed run left is removed.
//
// Interrupted: between outdir_begin and the commit or abort, SIGINT, SIGTERM and SIGHUP only
// mark the OutDir interrupted; outdir_path then fails ("interrupted"), the command aborts as on
// any error, and the abort raises the signal again once the staging folder is gone.
//
//     OutDir od;
//     if (!outdir_begin(&od, "out", &err)) return 2;
//     char path[4096];
//     if (!outdir_path(&od, "X.npy", path, sizeof path, &err) || !npy_write(path, ...)) {
//       outdir_abort(&od); return 2; }
//     if (!outdir_commit(&od, &err)) return 2;
#ifndef SF_OUTDIR_H
#define SF_OUTDIR_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h" // defines: Err

typedef struct {
  char dir[2048];
  char stage[2200];
  bool created_dir;
  char created_top[2048]; // the outermost folder outdir_begin made (DIR or a parent), or ""
  char **names;
  int n, cap;
} OutDir;

bool outdir_begin(OutDir *od, const char *dir, Err *err);
bool outdir_path(OutDir *od, const char *name, char *path, size_t cap, Err *err);
bool outdir_commit(OutDir *od, Err *err); // frees od either way
void outdir_abort(OutDir *od);            // frees od

#endif
