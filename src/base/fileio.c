// fileio.c -- see fileio.h.
#define _DEFAULT_SOURCE // MAP_ANONYMOUS, MAP_NORESERVE (file_map_many)
#include "fileio.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

bool atomic_open(AtomicFile *af, const char *path, Err *err) {
  memset(af, 0, sizeof *af);
  if (strlen(path) >= sizeof af->path) return err_set(err, "%s: path too long", path);
  strcpy(af->path, path);
  snprintf(af->tmp, sizeof af->tmp, "%s.tmp-%ld", path, (long)getpid());
  af->fp = fopen(af->tmp, "wb");
  if (!af->fp) return err_set(err, "%s: cannot write: %s", path, strerror(errno));
  return true;
}

bool atomic_commit(AtomicFile *af, Err *err) {
  if (!af->fp) return err_set(err, "%s: not open", af->path);
  bool ok = !ferror(af->fp);
  int e = errno;
  if (fflush(af->fp) != 0) ok = false, e = errno;
  if (fclose(af->fp) != 0) ok = false, e = errno;
  af->fp = NULL;
  if (!ok) {
    remove(af->tmp);
    return err_set(err, "%s: write failed: %s", af->path, strerror(e));
  }
  if (rename(af->tmp, af->path) != 0) {
    e = errno;
    remove(af->tmp);
    return err_set(err, "%s: cannot replace: %s", af->path, strerror(e));
  }
  return true;
}

void atomic_abort(AtomicFile *af) {
  if (af->fp) fclose(af->fp);
  af->fp = NULL;
  if (af->tmp[0]) remove(af->tmp);
}

bool file_write_atomic(const char *path, const void *data, size_t len, Err *err) {
  AtomicFile af;
  if (!atomic_open(&af, path, err)) return false;
  if (len && fwrite(data, 1, len, af.fp) != len) {
    int e = errno;
    atomic_abort(&af);
    return err_set(err, "%s: write failed: %s", path, strerror(e));
  }
  return atomic_commit(&af, err);
}

char *file_read_all(const char *path, size_t *len, size_t max_len, Err *err) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return err_set(err, "%s: cannot open: %s", path, strerror(errno)), NULL;
  struct stat st;
  if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(fp);
    return err_set(err, "%s: not a regular file", path), NULL;
  }
  if ((unsigned long long)st.st_size > max_len) {
    fclose(fp);
    return err_set(err, "%s: too large (%lld bytes, at most %zu)", path, (long long)st.st_size, max_len),
           NULL;
  }
  size_t n = (size_t)st.st_size;
  char *buf = malloc(n + 1);
  if (!buf) {
    fclose(fp);
    return err_set(err, "%s: out of memory (%zu bytes)", path, n), NULL;
  }
  size_t got = fread(buf, 1, n, fp);
  int bad = ferror(fp);
  fclose(fp);
  if (got != n || bad) {
    free(buf);
    return err_set(err, "%s: read failed", path), NULL;
  }
  buf[n] = 0;
  *len = n;
  return buf;
}

bool dir_ensure(const char *dir, bool *created, Err *err) {
  struct stat st;
  if (created) *created = false;
  if (stat(dir, &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return err_set(err, "%s: exists and is not a folder", dir);
    if (access(dir, W_OK) != 0) return err_set(err, "%s: folder is not writable", dir);
    return true;
  }
  if (mkdir(dir, 0777) != 0) return err_set(err, "%s: cannot create folder: %s", dir, strerror(errno));
  if (created) *created = true;
  return true;
}

bool path_join(char *out, size_t cap, const char *dir, const char *name) {
  int n = snprintf(out, cap, "%s/%s", dir, name);
  return n > 0 && (size_t)n < cap;
}

const void *file_map(const char *path, size_t *len, Err *err) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return err_set(err, "%s: cannot open: %s", path, strerror(errno)), NULL;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    close(fd);
    return err_set(err, "%s: not a regular, non-empty file", path), NULL;
  }
  void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd); // the mapping stays valid
  if (p == MAP_FAILED) return err_set(err, "%s: cannot map: %s", path, strerror(errno)), NULL;
  *len = (size_t)st.st_size;
  return p;
}

const void *file_map_many(const char *const *paths, int n, size_t *lens, size_t *offsets, size_t *total,
                          Err *err) {
  long page = sysconf(_SC_PAGE_SIZE);
  size_t pg = page > 0 ? (size_t)page : 4096, sum = 0;
  int *fds = calloc((size_t)(n > 0 ? n : 1), sizeof(int));
  if (!fds) return err_set(err, "out of memory"), NULL;
  for (int i = 0; i < n; i++) fds[i] = -1;
  uint8_t *base = NULL;
  bool ok = n > 0;
  for (int i = 0; ok && i < n; i++) { // each file's size, its place in the region (page-aligned)
    struct stat st;
    fds[i] = open(paths[i], O_RDONLY);
    if (fds[i] < 0) {
      ok = err_set(err, "%s: cannot open: %s", paths[i], strerror(errno));
    } else if (fstat(fds[i], &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
      ok = err_set(err, "%s: not a regular, non-empty file", paths[i]);
    } else if ((uint64_t)st.st_size > SIZE_MAX / 2 - sum) {
      ok = err_set(err, "%s: too large to map", paths[i]);
    } else {
      lens[i] = (size_t)st.st_size, offsets[i] = sum;
      sum += (lens[i] + pg - 1) / pg * pg;
    }
  }
  if (ok) { // one reservation, then every file mapped into its slice of it
    void *r = mmap(NULL, sum, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
      ok =
          err_set(err, "cannot reserve %zu bytes of address space for %d files: %s", sum, n, strerror(errno));
    else
      base = r;
  }
  for (int i = 0; ok && i < n; i++)
    if (mmap(base + offsets[i], lens[i], PROT_READ, MAP_PRIVATE | MAP_FIXED, fds[i], 0) == MAP_FAILED)
      ok = err_set(err, "%s: cannot map: %s", paths[i], strerror(errno));
  for (int i = 0; i < n; i++)
    if (fds[i] >= 0) close(fds[i]); // the mappings stay valid
  free(fds);
  if (!ok) {
    if (base) munmap(base, sum);
    return NULL;
  }
  *total = sum;
  return base;
}

void file_unmap(const void *data, size_t len) {
  if (data) munmap((void *)data, len);
}
