// gguf_model.h -- a GGUF file (llama.cpp, Ollama) translated into the canonical model form of
// model.h, its tensors dequantized (gguf_quant.h) and its tokenizer read from the file.
//
// Architectures (general.architecture):
//   gpt2  keys gpt2.embedding_length (D), .attention.head_count (H), .block_count (L),
//         .feed_forward_length (F, default 4·D), .context_length (positions), and
//         .attention.layer_norm_epsilon (default 1e-5); llama.cpp's names (its converter has
//         already turned the Conv1D weights into nn.Linear's [out, in]):
//           token_embd -> embed.weight, position_embd -> pos_embed.weight, output_norm -> norm.*,
//           blk.{i}.attn_norm|ffn_norm -> layers.{i}.norm1|norm2, blk.{i}.attn_qkv ->
//           self_attn.in_proj_weight|bias, blk.{i}.attn_output -> self_attn.out_proj.*,
//           blk.{i}.ffn_up|ffn_down -> linear1.*|linear2.*; output.weight (if there and not equal
//           to token_embd) -> head.weight, else the head is tied. Pre-norm, causal, GELU (tanh
//           form, as ggml_gelu), learned positions.
//   llama, qwen2, qwen3  keys {arch}.embedding_length, .attention.head_count, .head_count_kv,
//         .block_count, .feed_forward_length, .attention.key_length (head_dim, default D/H),
//         .attention.layer_norm_rms_epsilon, .rope.freq_base; names token_embd, output_norm,
//         output (absent: tied), blk.{i}.attn_norm|ffn_norm -> norm1|norm2, attn_q, attn_k, attn_v
//         (and their .bias, Qwen 2) stacked into self_attn.in_proj_*, attn_output -> out_proj,
//         attn_q_norm|attn_k_norm -> q_norm|k_norm (Qwen 3), ffn_gate|ffn_up|ffn_down ->
//         gate|linear1|linear2. RMSNorm, SwiGLU, grouped-query attention, RoPE: llama.cpp's
//         converter permutes Llama's Q and K rows (each head's two halves interleaved, for its
//         adjacent-pairs RoPE); they are permuted back, so rope_style half gives Hugging Face's Q
//         and K, stage for stage (Qwen's are written as they are). Llama 3.1+'s scaled RoPE: the
//         converter's rope_freqs.weight (each frequency's divisor) read back into rope_scaling
//         llama3's factor, low/high frequency factors and original context, the values Llama 3.x
//         uses tried until every divisor is reproduced; rope.scaling.type linear or yarn is refused.
//   Others are refused by name.
// Tokenizer: tokenizer.ggml.model "gpt2" -- tokenizer.ggml.tokens (in id order, GPT-2's byte
// alphabet) and tokenizer.ggml.merges ("a b", by rank); its token count must equal token_embd's
// rows. GPT-2: the byte-level BPE of bpe.h. Llama/Qwen: the tokenizer.json these keys describe,
// read by tokjson.h (token_type 3 and 4 are added tokens; tokenizer.ggml.pre names the split, one
// of llama.cpp's names for GPT-2's, SmolLM's, Llama 3's or Qwen 2's split, others refused with the
// list; add_bos_token + bos_token_id the BOS). "llama" (SentencePiece: Llama 2, TinyLlama, Mistral):
// tokenizer.ggml.tokens, .scores (one per token) and .token_type made into a tokjson_from_spm
// tokenizer (merges by score as llama.cpp's, byte fallback, control tokens matched first,
// add_bos_token, add_eos_token, add_space_prefix; llama.cpp's defaults when absent).
// Memory: before any tensor is converted, the floats the model needs are counted (the estimate,
// gguf_estimate_bytes) and a model larger than the memory available is refused in one line;
// each tensor is then dequantized into its own buffer and the file's pages it came from given back.
// Metadata for `stepformer info`: gguf_architecture ("GPT-2"), gguf_file ("version 3, 1.2 MB,
// 5.50 bits per weight"), gguf_types ("Q4_K ×13, F32 ×15"), gguf_tensors (one line per tensor
// with layer numbers folded: "blk.{i}.attn_qkv.weight Q4_K [48, 16] ×2"), gguf_unused.
//
//     Model *m = gguf_model_load("gpt2.Q8_0.gguf", &err);   // model_load dispatches here
#ifndef SF_GGUF_MODEL_H
#define SF_GGUF_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"          // defines: Err
#include "gguf.h"         // defines: GgufFile
#include "model_tokens.h" // defines: ModelTokenizer
#include "safetensors.h"  // defines: StFile

struct Model;

// Translates an open GGUF file into a canonical StFile *out (st_free it) and its tokenizer *tk
// (model_tokenizer_free it). On failure both are empty and err holds one line. g stays open.
bool gguf_to_canonical(const GgufFile *g, StFile *out, ModelTokenizer **tk, Err *err);
// gguf_to_canonical, then the model loader's validation (model_from_st); the Model owns the
// tokenizer and its vocabulary is the tokenizer's labels. path names it in messages and captions.
struct Model *gguf_model_from(const GgufFile *g, const char *path, Err *err);
// Opens path, translates it and builds the Model (gguf_model_from), then closes the file.
struct Model *gguf_model_load(const char *path, Err *err);
// The bytes of the float32 weights the canonical model takes from g (its used tensors
// dequantized), or 0 with err when the architecture is not one Stepformer reads.
uint64_t gguf_estimate_bytes(const GgufFile *g, Err *err);

#endif
