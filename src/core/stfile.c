// stfile.c -- see stfile.h.
#define _DEFAULT_SOURCE // madvise (MADV_DONTNEED)
#include "stfile.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef struct {
  const char *name;
  int index;
} Named;

static int name_cmp(const void *a, const void *b) {
  return strcmp(((const Named *)a)->name, ((const Named *)b)->name);
}

bool st_mapped(const StFile *f, const void *p) {
  const uint8_t *b = p;
  return f->map && b >= f->map && b < f->map + f->map_len;
}

void st_free(StFile *f) {
  for (int i = 0; i < f->n; i++) {
    free(f->tensors[i].name);
    if (!st_mapped(f, f->tensors[i].data)) free(f->tensors[i].data);
  }
  if (f->map && f->map_owner) munmap(f->map, f->map_len);
  for (int i = 0; i < f->n_meta; i++) {
    free(f->keys[i]);
    free(f->values[i]);
  }
  free(f->tensors);
  free(f->by_name);
  free(f->keys);
  free(f->values);
  memset(f, 0, sizeof *f);
}

bool st_index(StFile *f, const char *what, Err *err) {
  // names sorted once: a repeated name is caught here, and st_find searches by halves
  free(f->by_name);
  f->by_name = malloc(sizeof(int) * (size_t)(f->n + 1));
  Named *named = malloc(sizeof(Named) * (size_t)(f->n + 1));
  if (!f->by_name || !named) {
    free(named);
    return err_set(err, "%s: out of memory", what);
  }
  for (int i = 0; i < f->n; i++) named[i] = (Named){f->tensors[i].name, i};
  qsort(named, (size_t)f->n, sizeof(Named), name_cmp);
  for (int i = 0; i < f->n; i++) f->by_name[i] = named[i].index;
  for (int i = 1; i < f->n; i++)
    if (!strcmp(named[i - 1].name, named[i].name)) {
      err_set(err, "%s: tensor \"%.80s\" appears twice", what, named[i].name);
      free(named);
      return false;
    }
  free(named);
  return true;
}

// Gives the pages wholly inside [p, p + n) of a file mapping back to the kernel: a tensor's bytes,
// once converted, are not needed again, so the process does not hold the file and its floats at
// once (the pages are the page cache's; reading them again would fetch them again).
void st_release_pages(const void *p, size_t n) {
  uintptr_t page = 4096, lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + n) & ~(page - 1);
  if (hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

const StTensor *st_find(const StFile *f, const char *name) {
  int lo = 0, hi = f->by_name ? f->n : 0;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2, c = strcmp(f->tensors[f->by_name[mid]].name, name);
    if (c == 0) return &f->tensors[f->by_name[mid]];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

const char *st_meta(const StFile *f, const char *key) {
  for (int i = 0; i < f->n_meta; i++)
    if (!strcmp(f->keys[i], key)) return f->values[i];
  return NULL;
}
