// cli.h -- the command line: sub-commands and the options they share.
//
// Every sub-command is `int cli_NAME(int argc, char **argv)` with argv[0] the sub-command's
// name; it returns the process exit code: 0 done, 2 bad input (one line on stderr saying what,
// where and how to fix), 1 an unexpected failure. Options that choose the model and sentence are
// shared through ModelOpts so every command reads them the same way.
#ifndef SF_CLI_H
#define SF_CLI_H

#include <stdbool.h>

#include "err.h"   // defines: Err
#include "model.h" // defines: Model
#include "trace.h" // defines: Trace

#define CLI_DEFAULT_TEXT "The cat walks by the bank"
#define CLI_MAX_TOKENS 1024

typedef struct {
  const char *model_path;  // --model FILE
  const char *random_spec; // --random D=..,H=..
  const char *vocab;       // --vocab w1,w2,...
  const char *text;        // --text "..."
  bool causal;             // --causal
} ModelOpts;

// If argv[*i] is one of the shared options, consumes it (and its value) and returns 1; returns 0
// when it is not; -1 (with err) when it is but its value is missing or it was given before.
int cli_model_option(ModelOpts *o, int argc, char **argv, int *i, Err *err);
// Options that do not go together: --model with --random, --vocab without --random.
bool cli_model_opts_check(const ModelOpts *o, Err *err);
// "WIDTHxHEIGHT", digits only ("1920x1080"); false for anything else, trailing bytes included.
bool cli_parse_size(const char *s, int *w, int *h);
// The model the options describe: --model FILE, or --random SPEC with --vocab (or the words of
// the text), or, with neither, the shipped default model (a random cat/bank model if absent).
Model *cli_build_model(const ModelOpts *o, Err *err);
// Tokenizes o->text against the model and runs the forward pass.
Trace *cli_build_trace(const Model *m, const char *text, Err *err);
// Prints "stepformer CMD: msg" and returns 2.
int cli_fail(const char *cmd, const char *msg);
bool cli_wants_help(int argc, char **argv);

int cli_dump(int argc, char **argv);
int cli_info(int argc, char **argv);
int cli_stages(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_export(int argc, char **argv);
int cli_window(int argc, char **argv);

#endif
