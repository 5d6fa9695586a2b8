// cli_common.c -- what every sub-command shares (see cli.h).
#define _POSIX_C_SOURCE 200809L // sigaction
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "datadir.h" // defines: datadir_find

#if defined(SIGBUS) && !defined(__EMSCRIPTEN__)
static void on_sigbus(int sig) {
  (void)sig;
  // only async-signal-safe calls here: write and _exit
  ssize_t r = write(2, CLI_SIGBUS_MESSAGE, sizeof CLI_SIGBUS_MESSAGE - 1);
  (void)r;
  _exit(2);
}

void cli_catch_sigbus(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigbus;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGBUS, &sa, NULL);
}
#else
void cli_catch_sigbus(void) {} // the web build maps no file
#endif

bool cli_parse_size(const char *s, int *w, int *h) {
  char *end;
  if (*s < '0' || *s > '9') return false;
  long a = strtol(s, &end, 10);
  if (*end != 'x' || end[1] < '0' || end[1] > '9') return false;
  long b = strtol(end + 1, &end, 10);
  if (*end || a > 1 << 20 || b > 1 << 20) return false;
  *w = (int)a, *h = (int)b;
  return true;
}

Trace *cli_build_trace(const Model *m, const char *text, Err *err) {
  Err terr = {0};
  Trace *t = model_source_trace(m, text, &terr);
  if (!t) err_set(err, "--text: %s", terr.msg);
  return t;
}

int cli_target_option(const char **target, int argc, char **argv, int *i, Err *err) {
  if (strcmp(argv[*i], "--target")) return 0;
  if (*i + 1 >= argc) return err_set(err, "--target needs a value (the target sentence)"), -1;
  if (*target) return err_set(err, "--target is given twice: give it once"), -1;
  *target = argv[++*i];
  return 1;
}

Trace *cli_build_any_trace(const Model *m, const char *text, const char *target, Err *err) {
  if (!model_is_seq2seq(m)) {
    if (target)
      return err_set(err,
                     "--target: %s is an encoder only, with no decoder to feed: leave --target out, or open "
                     "an encoder-decoder (a file with n_decoder_layers)",
                     m->source),
             NULL;
    return cli_build_trace(m, text, err);
  }
  return model_source_trace_seq2seq(m, text, target ? target : "", err);
}

int cli_generate_option(GenOpts *g, int argc, char **argv, int *i, Err *err) {
  if (!strcmp(argv[*i], "--generate")) {
    if (g->on) return err_set(err, "--generate is given twice: give it once"), -1;
    g->on = true;
    return 1;
  }
  if (strcmp(argv[*i], "--max-steps")) {
    if (!g->smp.temperature) g->smp = sampling_default(); // a zeroed GenOpts: greedy until an option
    return sampling_option(&g->smp, argc, argv, i, err);
  }
  if (g->max_steps) return err_set(err, "--max-steps is given twice: give it once"), -1;
  char *end = NULL;
  long n = *i + 1 < argc ? strtol(argv[*i + 1], &end, 10) : 0;
  if (*i + 1 >= argc || !end || *end || end == argv[*i + 1] || n < 1 || n > GEN_MAX_STEPS)
    return err_set(err, "--max-steps needs a whole number from 1 to %d (the most words to generate)",
                   GEN_MAX_STEPS),
           -1;
  g->max_steps = (int)n;
  ++*i;
  return 1;
}

bool cli_generate_check(const GenOpts *g, const char *target, Err *err) {
  if (g->max_steps && !g->on)
    return err_set(err, "--max-steps limits --generate: add --generate, or leave --max-steps out");
  if (g->smp.on && !g->on)
    return err_set(err,
                   "--top-k, --top-p, --seed and --temperature choose how --generate draws each word: add "
                   "--generate, or leave them out");
  if (g->on && target)
    return err_set(err, "--generate writes the target itself: leave --target out (or leave --generate out to "
                        "feed the target's words)");
  return true;
}

bool cli_find_lesson(const char *arg, char *out, size_t cap, Err *err) {
  if (access(arg, R_OK) == 0 || strchr(arg, '/')) // a path: lesson_load says what is wrong with it
    return snprintf(out, cap, "%s", arg) < (int)cap || err_set(err, "%.200s: the path is too long", arg);
  char name[300], looked[1024];
  size_t n = strlen(arg);
  snprintf(name, sizeof name, "%.280s%s", arg, n > 3 && !strcmp(arg + n - 3, ".md") ? "" : ".md");
  if (datadir_find(DATADIR_LESSONS, name, out, cap, looked, sizeof looked)) return true;
  return err_set(err,
                 "%.280s: no such lesson here, nor among the lessons (looked in %s); stepformer info --paths "
                 "lists them",
                 arg, looked);
}

int cli_fail(const char *cmd, const char *msg) {
  fprintf(stderr, "stepformer %s: %s\n", cmd, msg);
  return 2;
}

bool cli_wants_help(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return true;
  return false;
}

bool cli_stored_view(const Model *m, const StoredPick *pick, StoredView **out, Err *err) {
  *out = NULL;
  bool asked = pick->tensor || pick->block >= 0 || pick->weight >= 0;
  if (!m->stored_path)
    return !asked ||
           err_set(err,
                   "--tensor, --block and --weight choose a block of a quantized GGUF file's weights "
                   "(Q8_0, Q4_K ...), and %s is not one: open such a file with --model",
                   m->source);
  StoredView *v = malloc(sizeof *v);
  if (!v) return err_set(err, "out of memory");
  if (!gguf_stored_view(m->stored_path, pick, v, err)) {
    free(v);
    return false;
  }
  *out = v;
  return true;
}
