// cli.h -- the command line: sub-commands and the options they share.
//
// Every sub-command is `int cli_NAME(int argc, char **argv)` with argv[0] the sub-command's
// name; it returns the process exit code: 0 done, 2 bad input (one line on stderr saying what,
// where and how to fix), 1 an unexpected failure. The options that choose the model and the
// sentence are model_source.h's; this header holds what every command shares besides.
#ifndef SF_CLI_H
#define SF_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"          // defines: Err
#include "gguf_stored.h"  // defines: StoredPick, StoredView
#include "model_source.h" // defines: ModelOpts, model_source_option, MODEL_SOURCE_DEFAULT_TEXT

// "WIDTHxHEIGHT", digits only ("1920x1080"); false for anything else, trailing bytes included.
bool cli_parse_size(const char *s, int *w, int *h);
// model_source_trace with "--text: " in front of its message (dump and stages).
Trace *cli_build_trace(const Model *m, const char *text, Err *err);
// --target TEXT (dump and stages): consumes it into *target and returns 1, 0 when argv[*i] is
// another option, -1 (err set) when its value is missing or it was given before.
int cli_target_option(const char **target, int argc, char **argv, int *i, Err *err);
// The trace of dump and stages: an encoder's (cli_build_trace; a target is refused: it has no
// decoder), or an encoder-decoder's with the decoder's input "<bos>" + target ("<bos>" alone when
// target is NULL).
Trace *cli_build_any_trace(const Model *m, const char *text, const char *target, Err *err);
// --generate and --max-steps N (dump, stages, export, the window).
typedef struct {
  bool on;       // --generate: greedy generation, every step shown
  int max_steps; // --max-steps N (0: the default limit, generate.h)
  Sampling smp;  // --top-k K, --top-p P, --seed S, --temperature T (sampling.h); zero: greedy
} GenOpts;
// Consumes --generate, --max-steps N or a sampling option (sampling_option) into g and returns 1; 0 for
// another option; -1 (err set) when the value is missing or not a number from 1 to GEN_MAX_STEPS, or the
// option is repeated.
int cli_generate_option(GenOpts *g, int argc, char **argv, int *i, Err *err);
// The options that do not go with --generate, checked before the model opens: --max-steps
// without --generate, --generate with --target.
bool cli_generate_check(const GenOpts *g, const char *target, Err *err);
// The lesson file `arg` names: arg itself when it is readable; else, for a bare file name
// ("cat-bank.md", or "cat-bank"), the lesson of that name in the teacher's folder or the data
// folders (datadir.h). Writes the path into out (cap bytes) and returns true; false with err
// saying where it looked, in one line.
bool cli_find_lesson(const char *arg, char *out, size_t cap, Err *err);
// "Weights as stored" for export and the window: the StoredView of m's GGUF file (m->stored_path) as
// pick says (--tensor, --block, --weight, a --compare-model file as its reference), malloc'd into
// *out; *out NULL for a model not read from a quantized GGUF file. False with one line: a pick given
// for such a model, a tensor not in the file or not quantized.
bool cli_stored_view(const Model *m, const StoredPick *pick, StoredView **out, Err *err);
// Prints "stepformer CMD: msg" and returns 2.
int cli_fail(const char *cmd, const char *msg);
// A large checkpoint stays mapped from its file (safetensors.h, st_map_min_bytes): if another
// program rewrites that file in place while Stepformer runs (a notebook saving the model again to
// the same path), the next read of a weight page raises SIGBUS. cli_catch_sigbus (main calls it
// first) turns that into one line on stderr and exit code 2 instead of a crash; nothing is being
// written by Stepformer at that moment except an export's temporary file, which is left behind.
void cli_catch_sigbus(void);
#define CLI_SIGBUS_MESSAGE                                                                                   \
  "stepformer: a model file changed on disk while it was open (rewritten in place, perhaps saved "           \
  "again by a notebook): open it again\n"
bool cli_wants_help(int argc, char **argv);

int cli_dump(int argc, char **argv);
int cli_info(int argc, char **argv);
// `stepformer info --paths` (cli_paths.c): the data folders searched, the lessons and models found.
int cli_info_paths(void);
int cli_stages(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_export(int argc, char **argv);
int cli_window(int argc, char **argv);

// The --help lines of --edit and --head-off (dump and export; stages and the window point to them).
#define CLI_EDIT_HELP                                                                                        \
  "  --edit SPEC     a what-if edit (repeatable): [LAYER:]NAME[ROW, COL]=VALUE, NAME one of E, S1..\n"       \
  "                  (a head's score before the softmax), Wq Wk Wv Wo bq bk bv bo W1 b1 W2 b2,\n"            \
  "                  gamma1 beta1 gamma2 beta2; LAYER 1-based (1 when left out); rows and\n"                 \
  "                  columns as the views label them (cat, the#2, 3): --edit \"S2[bank, river]=6\"\n"        \
  "  --head-off L:H[:zero|:uniform]  switch head H of layer L off (repeatable): its columns of\n"            \
  "                  the concatenation zeroed (the default), or its attention made uniform\n"

#endif
