// sampling.c -- temperature, top-k, top-p and the seeded draw (sampling.h).
#include "sampling.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h" // defines: rng_uniform, RNG_DEFAULT_SEED

Sampling sampling_default(void) {
  return (Sampling){.on = false, .temperature = 1, .top_k = 0, .top_p = 1, .seed = RNG_DEFAULT_SEED};
}

// softmax over the ids with keep[id] (all when keep is NULL) of z[id] / T, into out[V] (0 elsewhere).
static void softmax_kept(const float *z, int V, float T, const bool *keep, float *out) {
  double mx = -INFINITY, sum = 0;
  for (int id = 0; id < V; id++)
    if (!keep || keep[id]) mx = fmax(mx, (double)z[id] / T);
  for (int id = 0; id < V; id++) {
    out[id] = !keep || keep[id] ? (float)exp((double)z[id] / T - mx) : 0;
    sum += out[id];
  }
  for (int id = 0; id < V; id++) out[id] = (float)(out[id] / sum);
}

static const float *sort_key; // qsort has no context argument: the scores being sorted
static int by_score_ascending(const void *a, const void *b) {
  int i = *(const int *)a, j = *(const int *)b;
  float x = sort_key[i], y = sort_key[j];
  return x < y ? -1 : x > y ? 1 : (i > j) - (i < j); // ties: the higher id counts as larger
}

void sampling_apply(const float *z, int V, const Sampling *s, SamplingPicture *pic) {
  float T = s->temperature > 0 ? s->temperature : 1;
  softmax_kept(z, V, T, NULL, pic->p);
  for (int id = 0; id < V; id++) pic->kept[id] = true;
  int *order = malloc(sizeof(int) * (size_t)V); // ids by ascending score
  if (!order) abort();
  for (int id = 0; id < V; id++) order[id] = id;
  sort_key = z; // z / T has the same order as z (T > 0)
  qsort(order, (size_t)V, sizeof(int), by_score_ascending);
  pic->n_top_k = V;
  pic->kth = -INFINITY;
  if (s->top_k > 0 && s->top_k < V) { // TopKLogitsWarper: score < the K-th largest -> -inf
    float kth = pic->kth = z[order[V - s->top_k]];
    pic->n_top_k = 0;
    for (int id = 0; id < V; id++) pic->kept[id] = z[id] >= kth, pic->n_top_k += pic->kept[id];
  }
  if (s->top_p < 1) { // TopPLogitsWarper: ascending cumulative softmax of what top-k kept
    softmax_kept(z, V, T, pic->kept, pic->q);
    double cum = 0;
    for (int r = 0; r < V - 1; r++) { // the last (most probable) is always kept
      int id = order[r];
      cum += pic->q[id];
      if (pic->kept[id] && cum <= 1.0 - s->top_p) pic->kept[id] = false;
    }
  }
  free(order);
  softmax_kept(z, V, T, pic->kept, pic->q);
  pic->n_kept = 0;
  for (int id = 0; id < V; id++) pic->n_kept += pic->kept[id];
}

int sampling_draw(const float *q, int V, uint64_t *rng) {
  double u = rng_uniform(rng), sum = 0;
  int last = 0;
  for (int id = 0; id < V; id++) {
    if (!(q[id] > 0)) continue;
    last = id;
    sum += q[id];
    if (sum > u) return id;
  }
  return last; // rounding left the sum just under u
}

int sampling_option(Sampling *s, int argc, char **argv, int *i, Err *err) {
  const char *o = argv[*i];
  bool k = !strcmp(o, "--top-k"), p = !strcmp(o, "--top-p"), seed = !strcmp(o, "--seed"),
       t = !strcmp(o, "--temperature");
  if (!k && !p && !seed && !t) return 0;
  const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
  char *end = NULL;
  if (k || seed) {
    long long n = v ? strtoll(v, &end, 10) : -1;
    bool ok = v && end != v && !*end && n >= (k ? 1 : 0) && (k ? n <= 1000000000LL : true);
    if (!ok)
      return err_set(err, k ? "--top-k needs a whole number of tokens to keep, 1 or more (e.g. --top-k 40)"
                            : "--seed needs a whole number, 0 or more (e.g. --seed 7): the same seed draws "
                              "the same tokens"),
             -1;
    if (k)
      s->top_k = (int)n;
    else
      s->seed = (uint64_t)n;
  } else {
    double x = v ? strtod(v, &end) : NAN;
    bool ok = v && end != v && !*end && (p ? x > 0 && x <= 1 : x > 0 && x <= 100);
    if (!ok)
      return err_set(err, p ? "--top-p needs a probability in (0, 1], e.g. --top-p 0.9 (1: off)"
                            : "--temperature needs a number above 0 and at most 100, e.g. --temperature 0.7"),
             -1;
    if (p)
      s->top_p = (float)x;
    else
      s->temperature = (float)x;
  }
  s->on = true;
  ++*i;
  return 1;
}
