// rng.h -- a small seeded random number generator (xorshift64*), state passed by pointer.
//
// The same seed gives the same numbers on every machine and compiler: only integer arithmetic
// decides the stream; floats are made from the top 24 bits. There is no global state and no
// clock: the caller owns the uint64_t. The default seed of the project is RNG_DEFAULT_SEED.
//
//     uint64_t rng = rng_seed(42);
//     float u = rng_uniform(&rng);          // [0, 1)
//     rng_xavier_uniform(&rng, w, out, in); // fills w[out*in]
#ifndef SF_RNG_H
#define SF_RNG_H

#include <stdint.h>

#define RNG_DEFAULT_SEED 42

uint64_t rng_seed(uint64_t seed); // scrambles the seed into a non-zero state
uint32_t rng_u32(uint64_t *state);
float rng_uniform(uint64_t *state); // uniform in [0, 1), 24-bit resolution
float rng_normal(uint64_t *state);  // standard normal (Box-Muller)
// Xavier/Glorot uniform for a weight W[out, in]: U(-a, a) with a = sqrt(6 / (in + out)).
void rng_xavier_uniform(uint64_t *state, float *w, int out, int in);
void rng_fill_normal(uint64_t *state, float *w, long n);

#endif
