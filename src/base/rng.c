// rng.c -- see rng.h.
#include "rng.h"

#include <math.h>

uint64_t rng_seed(uint64_t seed) {
  // splitmix64 of the seed: nearby seeds give unrelated streams, and the state is never 0.
  uint64_t z = seed + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return z ? z : 0x2545F4914F6CDD1Dull;
}

uint32_t rng_u32(uint64_t *state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return (uint32_t)((x * 0x2545F4914F6CDD1Dull) >> 32);
}

float rng_uniform(uint64_t *state) { return (float)(rng_u32(state) >> 8) / 16777216.0f; }

float rng_normal(uint64_t *state) {
  float u1 = ((float)(rng_u32(state) >> 8) + 1.0f) / 16777217.0f; // (0, 1): log is finite
  float u2 = rng_uniform(state);
  return sqrtf(-2.0f * logf(u1)) * cosf(6.2831853071795864f * u2);
}

void rng_xavier_uniform(uint64_t *state, float *w, int out, int in) {
  float a = sqrtf(6.0f / (float)(in + out));
  for (long i = 0; i < (long)out * in; i++) w[i] = (2.0f * rng_uniform(state) - 1.0f) * a;
}

void rng_fill_normal(uint64_t *state, float *w, long n) {
  for (long i = 0; i < n; i++) w[i] = rng_normal(state);
}
