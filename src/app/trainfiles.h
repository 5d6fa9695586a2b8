// trainfiles.h -- the files of `stepformer dump --train` (issue 21): loss.npy, grad.<stage>.npy for
// every stage of the trace, grad.<tensor>.npy for every weight under its file name, loss_after.npy.
//
//     TrainOpts o = {.on = true, .lr = TRAIN_DEFAULT_LR, .labels = NULL};
//     char line[256];
//     if (!trainfiles_write(&od, t, &o, line, sizeof line, &err)) ...   // line: "loss 2.31 -> 2.05 ..."
#ifndef SF_TRAINFILES_H
#define SF_TRAINFILES_H

#include <stdbool.h>

#include "outdir.h" // defines: OutDir
#include "trace.h"  // defines: Trace

typedef struct {
  bool on;            // --train
  float lr;           // --lr (TRAIN_DEFAULT_LR when not given)
  bool lr_set;        //
  const char *labels; // --labels, or NULL: the next token
  bool no_scale; // --no-scale: the √d_k experiment (the caller sets Trace.no_scale and runs the forward)
} TrainOpts;

// Parses --train, --lr X and --labels SPEC at argv[*i] (dump): 1 when consumed (i moved on), 0 when
// not one of them, -1 with a message.
int trainfiles_option(TrainOpts *o, int argc, char **argv, int *i, Err *err);
// Computes the loss, the gradients and one SGD step of t (forward done) and writes their files
// into od; summary gets one line for the terminal. False with a message (no head, one token, bad
// --labels...).
bool trainfiles_write(OutDir *od, const Trace *t, const TrainOpts *o, char *summary, int cap, Err *err);

#endif
