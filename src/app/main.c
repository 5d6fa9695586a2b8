// main.c -- the `stepformer` command: dispatches to a sub-command (cli.h) or opens the window.
// COMMANDS is the one list of sub-commands: dispatch, --help and the unknown-command message
// all read it.
#include <stdio.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h> // mallopt
#endif

#include "cli.h"
#include "version.h" // defines: version_string, version_commit

typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *summary;
} Command;

static const Command COMMANDS[] = {
    {"dump", cli_dump, "write every stage as .npy, the tokens and the model into a folder"},
    {"info", cli_info, "print a model file's configuration and size"},
    {"stages", cli_stages, "print every stage of a sentence: shape, formula, range"},
    {"bench", cli_bench, "time the traced forward pass against this machine's sgemm peak"},
    {"export", cli_export, "write pictures (PNG, SVG) of every step and data (.npy, CSV) of every stage"},
    {"check", cli_check, "check lesson files: steps, focus tokens, formulas (FILE:LINE: problems)"},
};
#define N_COMMANDS (int)(sizeof COMMANDS / sizeof *COMMANDS)

static void usage(FILE *f) {
  fprintf(
      f,
      "Stepformer: step through a Transformer encoder, one stage at a time.\n\n"
      "usage: stepformer [LESSON.md] [OPTIONS]  opens the window (stepformer --text x --help: its options)\n"
      "       stepformer COMMAND [OPTIONS]      (stepformer COMMAND --help for its options)\n"
      "       stepformer --version              the version and the commit it was built from\n\n");
  for (int i = 0; i < N_COMMANDS; i++) fprintf(f, "  %-8s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
  fprintf(f, "\nThe shipped lessons and models: stepformer info --paths says where they were found.\n");
}

int main(int argc, char **argv) {
#ifdef __GLIBC__
  // Keep freed memory for reuse instead of returning it to the kernel: the pictures of an
  // export and the frames of the window allocate the same large buffers again and again, and
  // each page handed back costs a page fault when it is touched again (BENCHMARKS.md).
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 128 << 20);
#endif
  cli_catch_sigbus(); // a mapped model file rewritten under us: one line, exit 2 (cli.h)
  if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help"))) {
    usage(stdout);
    return 0;
  }
  if (argc >= 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))) {
    printf("stepformer %s (commit %s)\n", version_string(), version_commit());
    return 0;
  }
  for (int i = 0; argc >= 2 && i < N_COMMANDS; i++)
    if (!strcmp(argv[1], COMMANDS[i].name)) return COMMANDS[i].run(argc - 1, argv + 1);
  // no command: the window, on a lesson file or with options
  size_t n = argc >= 2 ? strlen(argv[1]) : 0;
  if (argc < 2 || argv[1][0] == '-' || (n > 3 && !strcmp(argv[1] + n - 3, ".md")))
    return cli_window(argc, argv);
  fprintf(stderr, "stepformer: unknown command \"%s\" (commands:", argv[1]);
  for (int i = 0; i < N_COMMANDS; i++) fprintf(stderr, "%s %s", i ? "," : "", COMMANDS[i].name);
  fprintf(stderr, "; see stepformer --help)\n");
  return 2;
}
