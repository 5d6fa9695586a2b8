// insidefiles.h -- looking inside a pass (inside.h) as files, for dump (issue 36).
//
// insidefiles_write writes into an output folder's staging area, for a trace with a prediction
// head or a classifier (an encoder-decoder: nothing yet):
//   lens.l0.npy ... lens.l{N-1}.npy  [L, V] the logit lens after each layer (0-based, as l0.out;
//                                    the last equals pred at temperature 1); a classifier: [1, C]
//   rollout.l0.npy ... rollout.l{N-1}.npy, rollout.npy (the last)   [L, L] attention rollout
//   saliency.npy [L] and saliency.txt: gradient × input of log p̂[position, token] over the input
//                tokens (a model with a head, an unedited pass): by default the last position's top
//                token; saliency.txt says which ("position 6 bank, token to (id 12)", 1-based)
//
//     InsideOpts io = {0};                           // --position N, --target-token WORD
//     insidefiles_option(&io, argc, argv, &i, &err); // 1: taken, 0: not ours, -1: bad (err set)
//     insidefiles_write(&od, t, &io, &err);
#ifndef SF_INSIDEFILES_H
#define SF_INSIDEFILES_H

#include <stdbool.h>

#include "err.h"    // defines: Err
#include "outdir.h" // defines: OutDir
#include "trace.h"  // defines: Trace

typedef struct {
  int position;      // 1-based position of the saliency's prediction; 0: the last
  const char *token; // the saliency's target word; NULL: the top token there
} InsideOpts;

int insidefiles_option(InsideOpts *o, int argc, char **argv, int *i, Err *err);
bool insidefiles_write(OutDir *od, const Trace *t, const InsideOpts *o, Err *err);
// The number of files insidefiles_write writes for t.
int insidefiles_count(const Trace *t);

#endif
