// replay.c -- runs a fuzz target over saved inputs without libFuzzer, so that every build (the
// plain one, the sanitizer one, gcc or clang) replays every corpus file and every crash ever
// found, on every ctest run; and, with --mutate, fuzzes deterministically around them.
//
// Linked with one tests/fuzz/fuzz_*.c in place of libFuzzer's main: every argument is a file or
// a folder (its files, in name order, not recursive), each file's bytes go once to
// LLVMFuzzerTestOneInput. A broken promise traps, a sanitizer report aborts: either fails the
// test. Exits 1 when no input was found at all (a replay of nothing checks nothing), 2 when a
// file cannot be read.
//
// --mutate N [--seed S]: after the replay, N more inputs, each a corpus file changed by 1 to 8
// seeded mutations (bit flips, interesting bytes and integers, bytes inserted, erased, copied
// or repeated, a splice with another file). No coverage feedback, no clock, no threads: the
// same corpus, N and S give the same inputs on every machine, so scripts/test's fuzzing result
// depends on the code alone. (libFuzzer's coverage-guided runs, which depend on timing when
// the machine is loaded, are for the long campaigns of scripts/fuzz.) --save DIR writes each
// mutant to DIR/current before it runs: after a crash, that file is the input that crashed.
//
//     replay_safetensors tests/fuzz/corpus/safetensors
//     replay_safetensors --mutate 20000 --seed 1 tests/fuzz/corpus/safetensors
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
static void keep_input(const uint8_t *data, size_t size); // the corpus the mutants come from

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
  keep_input(exact, n); // before the run: the target may change nothing, but take no chances
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

// ---------------------------------------------------------------- deterministic mutation

typedef struct {
  uint8_t *data;
  size_t size;
} Input;

static Input *inputs;
static size_t n_inputs, cap_inputs;

static void keep_input(const uint8_t *data, size_t size) {
  if (n_inputs == cap_inputs) {
    Input *more = realloc(inputs, (cap_inputs = cap_inputs ? 2 * cap_inputs : 64) * sizeof *inputs);
    if (!more) return;
    inputs = more;
  }
  uint8_t *copy = malloc(size ? size : 1);
  if (!copy) return;
  memcpy(copy, data, size);
  inputs[n_inputs++] = (Input){copy, size};
}

static uint64_t rng_state;
static uint32_t next(void) { // splitmix64: small, seedable, the same everywhere
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (uint32_t)((z ^ (z >> 31)) >> 32);
}
static size_t below(size_t n) { return n ? next() % n : 0; }

enum { MAX_MUTANT = 1 << 16 };

// One mutation of buf[0..*n) in place (capacity MAX_MUTANT).
static void mutate_once(uint8_t *buf, size_t *n) {
  static const uint8_t interesting[] = {0,   1,   0x7F, 0x80, 0xFF, '0', '9', '"', '\\', '{',  '}', '[',
                                        ']', ',', ':',  '$',  '\n', ' ', '=', '-', 0xC3, 0xE2, 0xF0};
  static const uint32_t ints[] = {0,     1,      2,      0x7F,       0x80,        0xFF,
                                  0x100, 0x7FFF, 0xFFFF, 0x7FFFFFFF, 0x80000000u, 0xFFFFFFFFu};
  size_t len = *n;
  switch (next() % 8) {
  case 0: // flip a bit
    if (len) buf[below(len)] ^= (uint8_t)(1u << (next() % 8));
    break;
  case 1: // an interesting byte
    if (len) buf[below(len)] = interesting[below(sizeof interesting)];
    break;
  case 2: // an interesting little-endian integer (safetensors' header length, npy's sizes)
    if (len >= 4) {
      uint32_t v = ints[below(sizeof ints / sizeof ints[0])];
      size_t at = below(len - 3);
      for (int k = 0; k < 4; k++) buf[at + k] = (uint8_t)(v >> (8 * k));
    }
    break;
  case 3: { // insert random bytes
    size_t k = 1 + below(16), at = below(len + 1);
    if (len + k > MAX_MUTANT) break;
    memmove(buf + at + k, buf + at, len - at);
    for (size_t i = 0; i < k; i++) buf[at + i] = (uint8_t)next();
    *n = len + k;
    break;
  }
  case 4: { // erase a range
    if (!len) break;
    size_t at = below(len), k = 1 + below(len - at < 64 ? len - at : 64);
    memmove(buf + at, buf + at + k, len - at - k);
    *n = len - k;
    break;
  }
  case 5: { // copy a range over another place
    if (len < 2) break;
    size_t from = below(len), to = below(len), k = 1 + below(32);
    if (from + k > len) k = len - from;
    if (to + k > len) k = len - to;
    memmove(buf + to, buf + from, k);
    break;
  }
  case 6: { // repeat a range (long names, deep nesting)
    if (!len) break;
    size_t at = below(len), k = 1 + below(8), times = 1 + below(64);
    if (at + k > len) k = len - at;
    if (len + k * times > MAX_MUTANT) break;
    memmove(buf + at + k * times, buf + at, len - at);
    for (size_t t = 0; t < times; t++) memcpy(buf + at + k * t, buf + at + k * times, k);
    *n = len + k * times;
    break;
  }
  default: { // splice: the head of this input, the tail of another
    const Input *o = &inputs[below(n_inputs)];
    size_t cut = below(len + 1), from = below(o->size + 1), k = o->size - from;
    if (cut + k > MAX_MUTANT) k = MAX_MUTANT - cut;
    memcpy(buf + cut, o->data + from, k);
    *n = cut + k;
    break;
  }
  }
}

static const char *save_dir;

static void run_mutants(long count, uint64_t seed) {
  static uint8_t buf[MAX_MUTANT];
  rng_state = seed;
  for (long i = 0; i < count; i++) {
    const Input *in = &inputs[below(n_inputs)];
    size_t n = in->size < MAX_MUTANT ? in->size : MAX_MUTANT;
    memcpy(buf, in->data, n);
    int rounds = 1 + (int)below(8);
    for (int r = 0; r < rounds; r++) mutate_once(buf, &n);
    if (save_dir) {
      char path[4096];
      snprintf(path, sizeof path, "%s/current", save_dir);
      FILE *fp = fopen(path, "wb");
      if (fp) fwrite(buf, 1, n, fp), fclose(fp);
    }
    uint8_t *exact = malloc(n ? n : 1); // exact size: a read past the input is a report
    if (!exact) continue;
    memcpy(exact, buf, n);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
  }
}

int main(int argc, char **argv) {
  int count = 0;
  long mutate = 0;
  uint64_t seed = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--mutate") && i + 1 < argc) {
      mutate = strtol(argv[++i], NULL, 10);
      continue;
    }
    if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
      seed = strtoull(argv[++i], NULL, 10);
      continue;
    }
    if (!strcmp(argv[i], "--save") && i + 1 < argc) {
      save_dir = argv[++i];
      continue;
    }
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
  if (mutate > 0 && n_inputs > 0) run_mutants(mutate, seed);
  printf("replay: %d inputs%s, no crash\n", count, mutate > 0 ? " and their mutants" : "");
  if (mutate > 0) printf("replay: %ld mutants from seed %llu\n", mutate, (unsigned long long)seed);
  return 0;
}
