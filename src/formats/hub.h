// hub.h -- a checkpoint folder as downloaded from the Hugging Face hub (GPT-2, BERT), translated
// into the canonical model file of model.h.
//
// A folder holds config.json, model.safetensors (F32, F16 or BF16) and the tokenizer's files:
// GPT-2 vocab.json + merges.txt, BERT vocab.txt (and tokenizer_config.json for do_lower_case,
// default true). config.json's model_type picks the family:
//   gpt2  (gpt2, distilgpt2, gpt2-medium) names, with or without a "transformer." prefix:
//           wte [V,D] -> embed.weight, wpe [P,D] -> pos_embed.weight, ln_f -> norm.*,
//           h.{i}.ln_1|ln_2 -> layers.{i}.norm1|norm2, and the Conv1D layers (weight [in, out],
//           y = x·W + b) transposed into nn.Linear's [out, in]:
//           h.{i}.attn.c_attn -> self_attn.in_proj_*, h.{i}.attn.c_proj -> self_attn.out_proj.*,
//           h.{i}.mlp.c_fc -> linear1.*, h.{i}.mlp.c_proj -> linear2.*;
//           the head tied to wte (lm_head.weight equal to wte ties too; a different one is
//           head.weight); the buffers h.{i}.attn.bias|masked_bias are ignored.
//           Pre-norm, causal, GELU per activation_function (gelu_new: tanh form), learned
//           positions; n_embd, n_head, n_layer, n_inner (default 4·D), layer_norm_epsilon.
//   bert  names with or without a "bert." prefix: embeddings.word_embeddings|
//           position_embeddings|token_type_embeddings|LayerNorm -> embed.weight, pos_embed.weight,
//           token_type.weight, embed_norm.*; encoder.layer.{i}.attention.self.query|key|value
//           stacked (rows Q, K, V) into self_attn.in_proj_*, attention.output.dense|LayerNorm ->
//           out_proj.*, norm1.*, intermediate.dense -> linear1.*, output.dense|LayerNorm ->
//           linear2.*, norm2.* (LayerNorm.gamma|beta, as old checkpoints name them, too); the
//           masked-LM head cls.predictions.transform.dense|LayerNorm -> head_transform.*,
//           head_norm.*, cls.predictions.bias -> head.bias, its decoder tied to the word
//           embeddings. Post-norm, hidden_act (gelu: erf form), layer_norm_eps, learned positions.
// Tensors the model does not use (BERT's pooler and next-sentence head, GPT-2's mask buffers,
// position_ids) are left out and named in metadata "hub_unused" (one line, layer numbers folded:
// "h.{i}.attn.bias ×12"), which `stepformer info` prints; "hub_architecture" holds "GPT-2" or
// "BERT". A sharded checkpoint (model.safetensors.index.json) is refused with how to merge it.
// Every refusal is one line naming the file: config.json missing or not JSON, an unknown
// model_type, a config value that disagrees with a tensor's shape (both named), a missing
// tokenizer file, a tokenizer whose size disagrees with the embedding rows.
//
//     StFile f; ModelTokenizer *tk; Err err = {0};
//     if (!hub_read("gpt2", &f, &tk, &err)) ...   // f: canonical tensors + metadata
//     Model *m = hub_model_load("gpt2", &err);     // the same, validated into a Model
#ifndef SF_HUB_H
#define SF_HUB_H

#include <stdbool.h>

#include "err.h"          // defines: Err
#include "llama_config.h" // defines: LlamaConfig
#include "model_tokens.h" // defines: ModelTokenizer
#include "safetensors.h"  // defines: StFile

struct Model;

// A Llama / Qwen 2 / Qwen 3 config.json as hub_read reads it, before any tensor is looked at.
typedef enum { HUB_LLAMA, HUB_QWEN2, HUB_QWEN3 } HubFamily;
typedef struct {
  LlamaConfig c;    // sizes, epsilon, RoPE, activation ("silu", "gelu_tanh", "gelu"), tied head
  int V;            // vocab_size: the embedding's rows
  HubFamily family; // model_type llama, qwen2 (Q/K/V biases) or qwen3 (QK-norm)
  bool attn_bias;   // attention_bias: Q/K/V and output biases
} HubLlama;

// True when path is a folder (a hub checkpoint; model_load dispatches on it).
bool hub_is_dir(const char *path);
// Reads the folder into a canonical StFile *out (st_free it) and its tokenizer *tk
// (model_tokenizer_free it). On failure both are empty and err holds one line.
bool hub_read(const char *dir, StFile *out, ModelTokenizer **tk, Err *err);
// config.json's text (len bytes; path names it in messages) of a model_type llama, qwen2 or qwen3
// read into *out with the checks hub_read makes before it opens the weights. False with one line
// in err. (hub_read's own step; tests/fuzz/fuzz_llama_config.c calls it on its own.)
bool hub_llama_config(const char *text, size_t len, const char *path, HubLlama *out, Err *err);
// hub_read, then the model loader's validation (model_from_st); the Model owns the tokenizer and
// its vocabulary is the tokenizer's labels.
struct Model *hub_model_load(const char *dir, Err *err);

#endif
