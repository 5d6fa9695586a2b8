// llama_config.h -- today's decoders (Llama, Qwen 2, Qwen 3) as the canonical form's metadata: the
// one step the hub loader (config.json, hub.c) and the GGUF loader ({arch}.* keys, gguf_model.c)
// share once each has read its own keys and checked them against its tensors.
//
// The canonical keys (model.h reads them): d_model, n_heads, n_kv_heads, head_dim, d_ff, n_layers,
// activation, norm_first 1, causal 1, layer_norm_eps, norm rmsnorm, ffn gated, pos_encoding rope,
// rope_theta, rope_style half (Hugging Face's rotate-half; the GGUF loader undoes llama.cpp's
// permutation of Q and K), Llama 3's rope_scaling with its four numbers when rope_factor > 0, and
// tie_head 1 when the head is the embedding.
//
//     LlamaConfig c = {.D = 576, .H = 9, .Hk = 3, .dk = 64, .F = 1536, .L = 30, .activation = "silu",
//                      .eps = 1e-5, .theta = 100000, .tie = true};
//     if (!llama_config_meta(&file, cap, &c)) ... // out of memory
#ifndef SF_LLAMA_CONFIG_H
#define SF_LLAMA_CONFIG_H

#include <stdbool.h>

#include "stfile.h" // defines: StFile

#define LLAMA_CONFIG_KEYS 21 // the most keys llama_config_meta adds

typedef struct {
  int D, H, Hk, dk, F, L;                // width, query heads, K/V heads, head width, FFN width, layers
  const char *activation;                // the gate's: "silu", "gelu_tanh" or "gelu"
  double eps, theta;                     // RMSNorm's epsilon, RoPE's base
  double rope_factor;                    // Llama 3's rope_scaling: 0 for none
  double rope_low, rope_high, rope_orig; // its low/high frequency factors and original context
  bool tie;                              // the head is the embedding
} LlamaConfig;

// Appends the keys above to f's metadata (keys and values malloc'd; f has room for cap keys in all,
// at least LLAMA_CONFIG_KEYS more). False only when memory runs out.
bool llama_config_meta(StFile *f, int cap, const LlamaConfig *c);

#endif
