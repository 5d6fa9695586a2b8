// sampling.h -- how the next token is drawn: temperature, top-k, top-p (nucleus) and a seed.
//
// The stages follow Hugging Face transformers' logits warpers, in their order:
//   1. temperature T:   z / T                         (TemperatureLogitsWarper)
//   2. top-k K:         keep the tokens whose score is >= the K-th largest (ties kept), cut the
//                       rest to -inf                  (TopKLogitsWarper; K = 0: off)
//   3. top-p P:         sort ascending, cumulative softmax of what top-k kept; cut the tokens whose
//                       cumulative probability is <= 1 - P, always keeping the most probable
//                                                     (TopPLogitsWarper; P = 1: off)
//   4. renormalize:     q = softmax of the kept scores (0 where cut)
//   5. draw:            u = rng_uniform(seed's stream); the first id (in id order) whose running
//                       sum of q passes u (rng.h: the same draw on every machine)
// A greedy choice (argmax) is Sampling.on == false.
//
//     Sampling s = sampling_default();  s.on = true, s.top_k = 5, s.seed = 7;
//     SamplingPicture pic;  sampling_apply(logits, V, &s, &pic);  // pic.p, pic.q, pic.kept
//     uint64_t rng = rng_seed(s.seed);  int id = sampling_draw(pic.q, V, &rng);
#ifndef SF_SAMPLING_H
#define SF_SAMPLING_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h" // defines: Err

typedef struct {
  bool on;           // false: greedy (the argmax), the options below unused
  float temperature; // T > 0 (1: the model's own distribution)
  int top_k;         // K >= 1 keeps the K best; 0: off
  float top_p;       // P in (0, 1] keeps the nucleus; 1: off
  uint64_t seed;     // the generator's seed (rng_seed)
} Sampling;

Sampling sampling_default(void); // off, T 1, top-k off, top-p 1, seed RNG_DEFAULT_SEED

// What each stage does to one row of logits z[V]; the arrays are the caller's [V] each.
typedef struct {
  float *p;    // softmax(z / T): the prediction before any cut
  float *q;    // renormalized over the kept tokens (0 where cut): what is drawn from
  bool *kept;  // survived top-k and top-p
  int n_kept;  // how many were kept (>= 1)
  int n_top_k; // how many top-k kept (V when off)
  float kth;   // top-k's threshold: a score z < kth was cut by top-k (-inf when off)
} SamplingPicture;

// Fills pic (its arrays allocated by the caller, V each) from logits z[V]. s->temperature > 0.
void sampling_apply(const float *z, int V, const Sampling *s, SamplingPicture *pic);
// Draws an id from q[V] (sums to 1) with one uniform number from *rng.
int sampling_draw(const float *q, int V, uint64_t *rng);
// The options on the command line: --top-k K, --top-p P, --seed S, --temperature T. Consumes
// argv[*i] (and its value) into s and returns 1 (any of them turns sampling on); 0 for another
// option; -1 with one line in err for a missing or bad value.
int sampling_option(Sampling *s, int argc, char **argv, int *i, Err *err);

#endif
