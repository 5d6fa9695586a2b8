// model_source.h -- where the model and the sentence of a command or the window come from.
//
// The options every model-using command shares (--model, --random, --vocab, --text, --causal)
// are read into a ModelOpts the same way everywhere; model_source_open turns them into a Model:
// --model FILE, or --random SPEC (seeded weights; the vocabulary from --vocab or the words of
// the sentence), or, with neither, the shipped model found by model_find_shipped (core,
// model_find.h: the one search order, shared with the lesson layer), and a random stand-in with
// the default configuration and seed 42 when it is not there (a note on stderr says where it
// looked). The core's messages say what is
// wrong; this module adds the flag that brought the value in ("--random: D=abc is not ...").
// MODEL_SOURCE_MAX_TOKENS is the one limit on a sentence's length for dump, stages, export and
// the window; model_source_trace enforces it and its message names it.
//
// Errors: false / NULL with err set to one line; nothing is printed.
//
//     ModelOpts o = {0}; Err err = {0};
//     for (int i = 1; i < argc; i++) if (model_source_option(&o, argc, argv, &i, &err) < 0) ...;
//     Model *m = model_source_open(&o, &err);
//     Trace *t = m ? model_source_trace(m, o.text ? o.text : MODEL_SOURCE_DEFAULT_TEXT, &err) : NULL;
#ifndef SF_MODEL_SOURCE_H
#define SF_MODEL_SOURCE_H

#include <stdbool.h>

#include "err.h"      // defines: Err
#include "generate.h" // defines: Generation
#include "model.h"    // defines: Model
#include "trace.h"    // defines: Trace

#define MODEL_SOURCE_DEFAULT_TEXT "The cat walks by the bank"
#define MODEL_SOURCE_MAX_TOKENS 512 // tokens in a sentence, for every command and the window
#define MODEL_SOURCE_MAX_EDITS 32   // --edit (and --head-off) options on one command line

typedef struct {
  const char *model_path;  // --model FILE
  const char *random_spec; // --random D=..,H=..
  const char *vocab;       // --vocab w1,w2,...
  const char *text;        // --text "..."
  bool causal;             // --causal
  // --edit SPEC and --head-off L:H[:zero|:uniform], each repeatable (edits.h): what-if edits
  const char *edit[MODEL_SOURCE_MAX_EDITS], *head_off[MODEL_SOURCE_MAX_EDITS];
  int n_edit, n_head_off;
} ModelOpts;

// If argv[*i] is one of the shared options, consumes it (and its value) and returns 1; returns 0
// when it is not; -1 (with err) when it is but its value is missing or it was given before.
int model_source_option(ModelOpts *o, int argc, char **argv, int *i, Err *err);
// Options that do not go together: --model with --random, --vocab without --random.
bool model_source_check(const ModelOpts *o, Err *err);
// The model the options describe (see above); the caller frees it with model_free.
Model *model_source_open(const ModelOpts *o, Err *err);
// Tokenizes text against m (at most MODEL_SOURCE_MAX_TOKENS tokens) and runs the forward pass.
// The message does not name a flag: the text may come from --text, a lesson or the window.
// An encoder-decoder (model_is_seq2seq) gets its decoder fed "<bos>" alone.
Trace *model_source_trace(const Model *m, const char *text, Err *err);
// The same for an encoder-decoder: text is the source, target the decoder's input after "<bos>"
// (teacher forcing; "" gives "<bos>" alone). The message starts with "--text: " or "--target: ".
Trace *model_source_trace_seq2seq(const Model *m, const char *text, const char *target, Err *err);
// o's --edit and --head-off parsed against base (a trace of the model on the sentence) into *e
// (empty before; empty when there are none). False with "--edit "SPEC": what is wrong".
struct TraceEdits;
bool model_source_edits(const ModelOpts *o, const Trace *base, struct TraceEdits *e, Err *err);
// With --edit or --head-off, replaces *t by its edited trace (edits_trace; the unedited one is
// freed); without, leaves it. False with the message (and *t unchanged).
bool model_source_apply_edits(const ModelOpts *o, Trace **t, Err *err);
// Greedy generation (generate.h) from text (an encoder-decoder's source, a causal model's prompt),
// at most max_steps steps (<= 0: the default limit). The message starts with "--text: " when the
// text is bad, "--generate: " when the model cannot generate.
Generation *model_source_generate(const Model *m, const char *text, int max_steps, Err *err);
// The same with each word drawn as smp says (generate.h: gen_run_sampled; NULL: greedy).
Generation *model_source_generate_sampled(const Model *m, const char *text, int max_steps,
                                          const Sampling *smp, Err *err);

#endif
