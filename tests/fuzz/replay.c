// replay.c -- runs a fuzz target over saved inputs without libFuzzer, so that every build (the
// plain one, the sanitizer one, gcc or clang) replays every corpus file and every crash ever
// found, on every ctest run.
//
// Linked with one tests/fuzz/fuzz_*.c in place of libFuzzer's main: every argument is a file or
// a folder (its files, in name order, not recursive), each file's bytes go once to
// LLVMFuzzerTestOneInput. A broken promise traps, a sanitizer report aborts: either fails the
// test. Exits 1 when no input was found at all (a replay of nothing checks nothing), 2 when a
// file cannot be read.
//
//     replay_safetensors tests/fuzz/corpus/safetensors tests/fuzz/regressions
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    fprintf(stderr, "replay: cannot open %s\n", path);
    return 2;
  }
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  for (size_t got; buf && (got = fread(buf + n, 1, cap - n, fp)) > 0;) {
    n += got;
    if (n == cap) {
      uint8_t *bigger = realloc(buf, cap *= 2);
      if (!bigger) free(buf);
      buf = bigger;
    }
  }
  int bad = ferror(fp) || !buf;
  fclose(fp);
  if (bad) {
    free(buf);
    fprintf(stderr, "replay: cannot read %s\n", path);
    return 2;
  }
  // An exact-size copy, so that a read one byte past the input is a sanitizer report, as under
  // libFuzzer.
  uint8_t *exact = malloc(n ? n : 1);
  if (!exact) {
    free(buf);
    return 2;
  }
  memcpy(exact, buf, n);
  free(buf);
  LLVMFuzzerTestOneInput(exact, n);
  free(exact);
  return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

// Runs every regular file in dir, in name order; adds their number to *count.
static int run_dir(const char *dir, int *count) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "replay: cannot open folder %s\n", dir);
    return 2;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue; // ".", "..", and hidden files (README.md is not hidden: see below)
    if (n == cap) {
      char **more = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
      if (!more) break;
      names = more;
    }
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, by_name);
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    if (!rc && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
      rc = run_file(path);
      *count += rc == 0;
    }
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  int count = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "replay: no such file or folder: %s\n", argv[i]);
      return 2;
    }
    int rc = S_ISDIR(st.st_mode) ? run_dir(argv[i], &count) : (count += 1, run_file(argv[i]));
    if (rc) return rc;
  }
  if (count == 0) {
    fprintf(stderr, "replay: no inputs in the folders given: nothing was checked\n");
    return 1;
  }
  printf("replay: %d inputs, no crash\n", count);
  return 0;
}
