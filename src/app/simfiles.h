// simfiles.h -- the similarity of two sentences (similarity.h) as files, for dump and export.
//
// simfiles_write writes into an output folder's staging area:
//   sim.X.npy, sim.Z.npy (a model with positions), sim.l0.npy ... sim.l{N-1}.npy (after layer
//   1 ... N, 0-based as DESIGN's dump names l0.out ...), sim.final.npy (a model with a final
//   LayerNorm): [L1, L2] float32, cos(z_i, z'_j), rows the tokens of tokens.txt, columns those of
//   compare_tokens.txt;
//   sim.line.npy [n_levels]: the line's word's cell at every level, in the order above;
//   compare_tokens.txt: the second sentence's tokens, one a line;
//   sim.txt: the levels in order and the line's word with its row and column (0-based):
//       levels X Z l0 l1 final
//       word bank 6 5
//
//     Sim *s = sim_new(a, b, &err);
//     if (!simfiles_write(&od, s, &err)) ...
#ifndef SF_SIMFILES_H
#define SF_SIMFILES_H

#include <stdbool.h>

#include "outdir.h"     // defines: OutDir
#include "similarity.h" // defines: Sim

bool simfiles_write(OutDir *od, const Sim *s, Err *err);
// The number of files simfiles_write writes for s.
int simfiles_count(const Sim *s);

#endif
