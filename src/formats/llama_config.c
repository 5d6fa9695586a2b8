// llama_config.c -- see llama_config.h.
#include "llama_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h" // defines: EXPECT

static bool put(StFile *f, int cap, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool put(StFile *f, int cap, const char *key, const char *fmt, ...) {
  EXPECT(f->n_meta < cap);
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *v = malloc((size_t)n + 1), *k = malloc(strlen(key) + 1);
  if (!v || !k) return free(v), free(k), false;
  va_start(ap, fmt);
  vsnprintf(v, (size_t)n + 1, fmt, ap);
  va_end(ap);
  memcpy(k, key, strlen(key) + 1);
  f->keys[f->n_meta] = k, f->values[f->n_meta] = v, f->n_meta++;
  return true;
}

bool llama_config_meta(StFile *f, int cap, const LlamaConfig *c) {
  return put(f, cap, "d_model", "%d", c->D) && put(f, cap, "n_heads", "%d", c->H) &&
         put(f, cap, "n_kv_heads", "%d", c->Hk) && put(f, cap, "head_dim", "%d", c->dk) &&
         put(f, cap, "d_ff", "%d", c->F) && put(f, cap, "n_layers", "%d", c->L) &&
         put(f, cap, "activation", "%s", c->activation) && put(f, cap, "norm_first", "1") &&
         put(f, cap, "causal", "1") && put(f, cap, "layer_norm_eps", "%.9g", c->eps) &&
         put(f, cap, "norm", "rmsnorm") && put(f, cap, "ffn", "gated") &&
         put(f, cap, "pos_encoding", "rope") && put(f, cap, "rope_theta", "%.17g", c->theta) &&
         put(f, cap, "rope_style", "half") &&
         (c->rope_factor <= 0 ||
          (put(f, cap, "rope_scaling", "llama3") && put(f, cap, "rope_factor", "%.17g", c->rope_factor) &&
           put(f, cap, "rope_low_freq_factor", "%.17g", c->rope_low) &&
           put(f, cap, "rope_high_freq_factor", "%.17g", c->rope_high) &&
           put(f, cap, "rope_original_max_pos", "%d", (int)c->rope_orig))) &&
         (!c->tie || put(f, cap, "tie_head", "1"));
}
