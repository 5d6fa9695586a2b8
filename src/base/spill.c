// spill.c -- see spill.h.
#define _GNU_SOURCE // O_TMPFILE, fallocate, statfs
#include "spill.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

enum { TMPFS_MAGIC_ = 0x01021994, RAMFS_MAGIC_ = 0x858458f6 };

// An unlinked file of `bytes` in dir with its blocks reserved, or -1: dir is in memory (tmpfs,
// ramfs), lacks the room (a tenth kept free beside it), or refuses O_TMPFILE or fallocate.
static int open_in(const char *dir, size_t bytes) {
  struct statfs fs;
  struct statvfs vs;
  if (!dir || !dir[0] || statfs(dir, &fs) != 0 || statvfs(dir, &vs) != 0) return -1;
  if ((uint32_t)fs.f_type == TMPFS_MAGIC_ || (uint32_t)fs.f_type == RAMFS_MAGIC_) return -1;
  uint64_t room = (uint64_t)vs.f_bavail * vs.f_frsize;
  if (room < (uint64_t)bytes + (uint64_t)bytes / 10) return -1;
  int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  int rc;
  do rc = fallocate(fd, 0, 0, (off_t)bytes);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) return close(fd), -1;
  return fd;
}

bool spill_open(Spill *s, size_t bytes) {
  s->fd = -1, s->len = bytes;
  const char *env = getenv("SF_SPILL"); // SF_SPILL=0: in memory (comparisons, BENCHMARKS.md)
  if (bytes == 0 || (env && !strcmp(env, "0"))) return false;
  const char *dirs[] = {getenv("TMPDIR"), "/var/tmp", "/tmp"};
  for (size_t i = 0; i < sizeof dirs / sizeof *dirs && s->fd < 0; i++) s->fd = open_in(dirs[i], bytes);
  return s->fd >= 0;
}

bool spill_write(Spill *s, size_t off, const void *p, size_t n, Err *err) {
  const uint8_t *b = p;
  while (n > 0) {
    ssize_t w = pwrite(s->fd, b, n, (off_t)off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      return err_set(err, "cannot write the dequantized weights to a temporary file: %s",
                     w < 0 ? strerror(errno) : "nothing written");
    b += w, off += (size_t)w, n -= (size_t)w;
  }
  return true;
}

void *spill_map(Spill *s, Err *err) {
  void *p = mmap(NULL, s->len, PROT_READ, MAP_PRIVATE, s->fd, 0);
  int e = errno;
  spill_close(s);
  if (p == MAP_FAILED)
    return err_set(err, "cannot map the dequantized weights' temporary file: %s", strerror(e)), NULL;
  return p;
}

void spill_close(Spill *s) {
  if (s->fd >= 0) close(s->fd);
  s->fd = -1;
}

#else // no O_TMPFILE here (or the web build): the numbers stay in memory

bool spill_open(Spill *s, size_t bytes) {
  s->fd = -1, s->len = bytes;
  return false;
}

bool spill_write(Spill *s, size_t off, const void *p, size_t n, Err *err) {
  (void)s, (void)off, (void)p, (void)n;
  return err_set(err, "no temporary file here");
}

void *spill_map(Spill *s, Err *err) {
  (void)s;
  return err_set(err, "no temporary file here"), NULL;
}

void spill_close(Spill *s) { s->fd = -1; }

#endif
