// fileio.h -- whole-file reads and atomic writes.
//
// Every file Stepformer writes goes through an AtomicFile: the bytes go to a temporary file in
// the same folder ("NAME.tmp-PID"), which is renamed over NAME only when everything was written
// and flushed. A failure (disk full, a write error, a crash) leaves the old NAME untouched and
// no half-written file behind. Errors name the path and the system's reason.
//
//     AtomicFile af;
//     if (!atomic_open(&af, "out/l0.S.npy", &err)) return false;
//     fwrite(..., af.fp);
//     return atomic_commit(&af, &err); // or atomic_abort(&af) to give up
#ifndef SF_FILEIO_H
#define SF_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "err.h" // defines: Err

typedef struct {
  FILE *fp;
  char path[4096];
  char tmp[4200];
} AtomicFile;

bool atomic_open(AtomicFile *af, const char *path, Err *err);
bool atomic_commit(AtomicFile *af, Err *err); // flush, fsync-free close, rename; aborts on failure
void atomic_abort(AtomicFile *af);            // close and delete the temporary file
bool file_write_atomic(const char *path, const void *data, size_t len, Err *err);

// Reads a whole file into a malloc'd buffer (with a 0 byte after the end, not counted in *len).
// max_len bounds the size accepted; larger files are an error.
char *file_read_all(const char *path, size_t *len, size_t max_len, Err *err);

// Maps a whole file read-only (mmap): pages are read when first touched, from the page cache,
// so a large file of which little is used (a font) costs little. Release with file_unmap.
const void *file_map(const char *path, size_t *len, Err *err);
void file_unmap(const void *data, size_t len);
// Maps n files read-only into one region of the address space, one after the other, each starting on a
// page boundary: file i's bytes are at base + offsets[i], lens[i] of them. A sharded checkpoint's files
// (model-00001-of-00003.safetensors ...) so become one mapping, which one file_unmap(base, *total)
// releases. NULL with err naming the file when one cannot be opened or mapped.
const void *file_map_many(const char *const *paths, int n, size_t *lens, size_t *offsets, size_t *total,
                          Err *err);

// Creates dir (one level) if it does not exist; *created tells whether it did.
bool dir_ensure(const char *dir, bool *created, Err *err);
// Joins dir and name into out (size cap); false when it does not fit.
bool path_join(char *out, size_t cap, const char *dir, const char *name);

#endif
