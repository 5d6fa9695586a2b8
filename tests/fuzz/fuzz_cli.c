// fuzz_cli.c -- libFuzzer target for the command line: the options of `stages`, `info` and
// `check`, the sub-commands that read and print but write no file.
//
// The input is an argument list, one argument a line: the first line names the sub-command, the
// others are its arguments exactly as a shell would pass them (an empty line is an empty
// argument; a newline at the end ends the last one). Each run must end with exit code 0 (done) or 2 (bad
// input, one line on stderr), never 1 ("unexpected"), a crash, a sanitizer report or a leak. To keep every
// input fast and inside the test's folder, an input is skipped when an argument holds '/' or "..", or a
// number of three digits or more (a --random model of a million parameters would take a second per input),
// or is the SPEC of --random with a number above 16, or the sentence of --text or --target longer than
// MAX_TEXT bytes. (A random model of 48 layers of D=64 costs 30 ms a forward under ASan, a sentence of 100
// words 6 ms: left free, a campaign drifts to such inputs and its rate falls from 17 000 to 300 a second,
// spent in the forward, which test_golden checks, not in the options. Other arguments stay long, to reach
// the messages that quote them.)
// The command's standard output goes to /dev/null; stderr stays, so a report is seen.
// Build and run as fuzz_lesson.c says (target fuzz_cli).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "cli.h" // defines: cli_stages, cli_info, cli_check

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_cli: broken promise: %s\n", #x);                                                 \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

#define MAX_ARGS 16
#define MAX_TEXT 128
// `check` takes at most this many lesson names: a name like "heads" finds a real lesson of 12 steps
// and 50 formulas (20 ms under ASan), and a campaign learnt to name it four times an input (2 500
// runs a second). Two still reach the loop over files and its summary.
#define MAX_CHECKED 2

// `prev`: the argument before `a` (NULL for the first).
static bool allowed(const char *a, const char *prev) {
  bool spec = prev && !strcmp(prev, "--random");
  bool text = prev && (!strcmp(prev, "--text") || !strcmp(prev, "--target"));
  if (strchr(a, '/') || strstr(a, "..") || (text && strlen(a) > MAX_TEXT)) return false;
  int digits = 0, value = 0;
  for (const char *p = a; *p; p++) {
    bool digit = *p >= '0' && *p <= '9';
    digits = digit ? digits + 1 : 0;
    value = digit ? value * 10 + (*p - '0') : 0;
    if (digits >= 3 || (spec && value > 16)) return false;
  }
  return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int devnull = -2, out = -1;
  if (devnull == -2) devnull = open("/dev/null", O_WRONLY), out = dup(1);
  if (size > 4096 || memchr(data, 0, size)) return 0; // a shell cannot pass a NUL byte
  char *buf = malloc(size + 1);
  if (!buf) return 0;
  memcpy(buf, data, size);
  buf[size] = 0;
  if (size && buf[size - 1] == '\n') buf[size - 1] = 0; // a newline ends the last argument
  char *argv[MAX_ARGS + 1];
  int argc = 0;
  bool ok = true;
  for (char *p = buf; ok && p; argc++) {
    if (argc == MAX_ARGS) {
      ok = false;
      break;
    }
    argv[argc] = p;
    p = strchr(p, '\n');
    if (p) *p++ = 0;
    ok = allowed(argv[argc], argc ? argv[argc - 1] : NULL);
  }
  if (ok && argc >= 1) {
    argv[argc] = NULL;
    int (*run)(int, char **) = !strcmp(argv[0], "stages")  ? cli_stages
                               : !strcmp(argv[0], "info")  ? cli_info
                               : !strcmp(argv[0], "check") ? cli_check
                                                           : NULL;
    if (run == cli_check && argc > 1 + MAX_CHECKED) run = NULL; // see MAX_CHECKED
    if (run && devnull >= 0 && out >= 0) {
      fflush(stdout);
      dup2(devnull, 1); // the command's output, not the replay driver's summary
      int rc = run(argc, argv);
      fflush(stdout);
      dup2(out, 1);
      PROMISE(rc == 0 || rc == 2);
    }
  }
  free(buf);
  return 0;
}
