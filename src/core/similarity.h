// similarity.h -- how alike two sentences' contextual vectors are: cos(z_i, z'_j) at every level.
//
// Two traces a and b of the same model (two sentences, L1 and L2 tokens) give at each level of
// the pass -- the token embeddings X = OE, Z = X + P (when the model has positions), the output
// of every layer, the final LayerNorm (when the model has one) -- an L1 × L2 matrix
//     C[i, j] = cos(z_i, z'_j) = (z_i · z'_j) / (‖z_i‖ ‖z'_j‖),   z_i row i of a's [L1, D],
//                                                                  z'_j row j of b's [L2, D]
// (0 when either vector is all zeros), and the line across the levels of one word's cell,
// cos(bank in a, bank in b): exactly 1 at X for the same word (one row of E, twice), lower
// once attention has mixed in the neighbours. Sums are in double; the matrices are float.
//
// The matrices are kept as a Trace (the first member of Sim) so that the render layer draws,
// labels and explains them as any other stage: sim->trace.t[k] is level k's matrix, named
// "sim.X", "sim.Z", "sim.l0" ... "sim.final" (the dump names), kind T_SIM, rows AXIS_TOKEN
// (a's tokens, trace.tokens), columns AXIS_TOKEN2 (b's tokens, kept in trace.dec_tokens). That
// trace has no steps, no layers and no weights; its tokens are borrowed from a and b, which
// must outlive the Sim. Everything lives in one block of sim_bytes(a, b) bytes, so a view can
// place it in its scene's memory (freed with the picture); sim_new / sim_free use malloc.
//
//     Sim *s = sim_new(a, b, &err);
//     sim_set_word(s, -1, -1);                  // the last word both sentences have ("bank")
//     float c = s->line[0];                     // 1 at X for the same word
//     const TraceTensor *m = &s->trace.t[s->n_levels - 1];   // the last level, [L1, L2]
//     sim_free(s);
#ifndef SF_SIMILARITY_H
#define SF_SIMILARITY_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"   // defines: Err
#include "trace.h" // defines: Trace, TraceTensor

typedef struct {
  char name[16];    // after "sim.": "X", "Z", "l0" (after layer 1, 0-based as DESIGN's dump names), "final"
  char label[24];   // the x axis of the line: "X: token embeddings", "after layer 1", "final LayerNorm"
  int src_a, src_b; // index in a->t and b->t of the level's [L, D] vectors
} SimLevel;

typedef struct {
  Trace trace; // first: the matrices as a trace (see above); trace.t[k] is level k's [L1, L2]
  const Trace *a, *b;
  int n_levels;
  SimLevel *levels; // [n_levels]
  // The line: the word whose cell each level gives, row word_a of a and column word_b of b
  // (-1 when none: the sentences share no word), and whether it is the default choice.
  int word_a, word_b;
  bool word_default;
  float *line; // [n_levels]: C_k[word_a, word_b] of each level k (0s without a word)
} Sim;

// Bytes of one block holding the Sim of a and b (0 when a and b are not two encoder traces of
// the same model, or the sizes overflow).
size_t sim_bytes(const Trace *a, const Trace *b);
// Builds the Sim of a and b in mem (bytes from sim_bytes, 16-byte aligned) and chooses the
// default word. NULL with a message when a and b cannot be compared.
Sim *sim_init(void *mem, size_t bytes, const Trace *a, const Trace *b, Err *err);
Sim *sim_new(const Trace *a, const Trace *b, Err *err);
void sim_free(Sim *s);
// The line's word: row ia of a and column ib of b; with either < 0, the default: the last token
// of a (not <unk>) that b has too, at its last place in b. Recomputes s->line.
void sim_set_word(Sim *s, int ia, int ib);
// The Sim whose trace t is (a T_SIM tensor's trace), or NULL for any other trace.
const Sim *sim_of_trace(const Trace *t);
// Level of the matrix with index k in s->trace.t (k itself), or -1.
int sim_level_of(const Sim *s, int k);
// cos of rows i of x and j of y (both [., D] with D columns), with its parts: the dot product
// and the two norms, in double.
double sim_cos(const TraceTensor *x, int i, const TraceTensor *y, int j, double *dot, double *na, double *nb);

#endif
