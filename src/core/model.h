// model.h -- the model: its configuration, vocabulary and weights.
//
// Shapes (DESIGN.md): V vocabulary, D model width, H heads, d_k = D/H, F feed-forward width.
// Weights follow PyTorch's nn.Embedding + nn.TransformerEncoder state_dict, stored
// W[out_features, in_features] as nn.Linear stores them (a linear layer is Y = X·Wᵀ + b):
//   embed.weight                         [V, D]
//   layers.{i}.self_attn.in_proj_weight  [3D, D]  rows 0..D-1 give Q, D..2D-1 K, 2D..3D-1 V
//   layers.{i}.self_attn.in_proj_bias    [3D]
//   layers.{i}.self_attn.out_proj.weight [D, D]  (and .bias [D])
//   layers.{i}.linear1.weight [F, D], linear1.bias [F], linear2.weight [D, F], linear2.bias [D]
//   layers.{i}.norm1.weight|bias, layers.{i}.norm2.weight|bias  [D]
// and, for a trained model with a prediction head (optional, both or neither of the norm):
//   norm.weight|bias [D]   a final LayerNorm after the last layer (nn.TransformerEncoder's norm)
//   head.weight [V, D], head.bias [V]   logits = out·headᵀ + bias, prediction = softmax(logits)
// The configuration and vocabulary ride in the safetensors __metadata__ as strings: d_model,
// n_heads, d_ff, n_layers, activation (relu|gelu), norm_first (0|1), causal (0|1), vocab (words
// joined by newlines, "<unk>" first), and optionally layer_norm_eps and seed. model_load refuses
// a file that holds any other tensor (a layer beyond n_layers, a final norm without a head, a
// learned position table: ignoring it would change the numbers silently) or a weight that is
// NaN or infinite.
//
// An encoder-decoder (PyTorch nn.Transformer, batch_first; issue 11) is a file whose __metadata__
// has n_decoder_layers (and tgt_vocab: the target words joined by newlines, "<unk>" first,
// holding "<bos>" and "<eos>"; `vocab` is then the source vocabulary). Its tensors keep
// nn.Transformer's state_dict names (V_s source and V_t target vocabulary):
//   src_embed.weight [V_s, D], tgt_embed.weight [V_t, D]
//   encoder.layers.{i}.*  as layers.{i}.* above;  encoder.norm.weight|bias [D]
//   decoder.layers.{j}.self_attn.*, .multihead_attn.in_proj_weight [3D, D] (rows 0..D-1 give the
//     cross-attention's Q, D..3D-1 its K and V, from memory), .multihead_attn.in_proj_bias [3D],
//     .multihead_attn.out_proj.weight [D, D] (and .bias), .linear1.*, .linear2.*,
//     .norm1|norm2|norm3.weight|bias [D];  decoder.norm.weight|bias [D]
//   head.weight [V_t, D], head.bias [V_t]   (required)
// Every one must be there and no other. cfg.V is V_s, cfg.V_t and cfg.n_dec_layers are 0 for an
// encoder.
//
// The canonical extensions (GPT-2, BERT and the course's classifier; every loader of another format
// translates into this form; all optional, absent = the behaviour above):
//   metadata pos_encoding = sinusoidal (default) | learned | none (P = 0: Z = OE); learned needs
//     pos_embed.weight [max_pos, D]: P = its rows 0..L-1 (a longer sentence is refused by trace_new)
//   metadata activation = relu | gelu | gelu_tanh (GPT-2's 0.5x(1 + tanh(√(2/π)(x + 0.044715x³))))
//   token_type.weight [n_types, D]   BERT's segment embeddings: row 0 is added, X + P + t₀
//   embed_norm.weight|bias [D]       Z = LayerNorm(X + P (+ t₀)), the first layer's input;
//     metadata embed_norm_eps: its ε when it is not layer_norm_eps (the course's 1e-12)
//   layers.{i}.self_attn.in_proj_bias and/or .out_proj.bias may be absent (in every layer alike):
//     no bias (the pointers are NULL)
//   head: head.weight [V, D], or metadata tie_head=1 and no head.weight (head_weight then points
//     at embed, not copied); head.bias [V] optional (GPT-2 has none, BERT one)
//   head_transform.weight [D, D] + .bias [D] and head_norm.weight|bias [D] (BERT's masked-LM
//     transform; with a head only): h = LayerNorm(act(x·Wᵀ + b)) before the head
//   classifier.weight [C, D] + classifier.bias [C] (the course's model), metadata classes (C names
//     joined by newlines; default "class 1".."class C"); norm.weight|bias is then the encoder's
//     final LayerNorm; the class scores are those of the mean over positions. A model has a head
//     or a classifier or neither, never both.
//   metadata tokenizer = words (default) | chars (every non-space character a token) | bpe |
//     wordpiece (the hub's tokenizers read their own files); with bpe or wordpiece the vocab need
//     not start with "<unk>" (its words must still be distinct).
// Today's decoders (Llama, Qwen, SmolLM, Gemma; issue 34), metadata keys all optional:
//   norm = layernorm (default) | rmsnorm   every norm x / sqrt(mean(x²) + eps) · g, no bias tensors
//     (norm1|norm2|norm.weight only); rms_offset=1: · (1 + g) (Gemma)
//   pos_encoding = rope   rotary positions on Q and K, nothing added to X (Z = OE); rope_theta
//     (10000), rope_style = half (default: Hugging Face's, j with j + d_k/2) | pairs (2j, 2j+1: the
//     paper's, llama.cpp's); rope_scaling = llama3 with rope_factor, rope_low_freq_factor,
//     rope_high_freq_factor, rope_original_max_pos (Llama 3.1+)
//   n_kv_heads   grouped-query attention: query head h reads K/V head h / (H / n_kv_heads);
//     head_dim     d_k when it is not D/H; in_proj_weight is [(H + 2·n_kv_heads)·d_k, D] (rows Q,
//     K, V), in_proj_bias the same length (Qwen 2) or absent, out_proj.weight [D, H·d_k]
//   ffn = gated   layers.{i}.gate.weight [F, D]: hidden = act(x·W_gᵀ) ⊙ (x·W_1ᵀ), out = hidden·W_2ᵀ,
//     no FFN biases; activation = silu (SwiGLU) | gelu_tanh (Gemma's GeGLU)
//   layers.{i}.self_attn.q_norm.weight, .k_norm.weight [d_k]   QK-norm before RoPE (Qwen 3)
//   such a model is pre-norm and causal (norm_first=1, causal=1) with a head (norm.weight, head).
// Anything contradictory (a head and a classifier, tie_head=1 with head.weight, pos_embed.weight
// without pos_encoding=learned or the reverse, a wrong shape) is refused in one line naming the
// tensor or key.
//
// A Model owns one parameter block (every float above, carved into named pointers), its
// vocabulary and, where gemm_supported(), a packed copy of each layer's four weight matrices,
// made by model_load and model_random (the weights must not change afterwards); model_free
// releases all of it.
//
// Memory of a large checkpoint (a 500 MB GPT-2, issue 12; a large canonical .safetensors too, as
// `dump` writes it): a canonical StFile may hold tensors that point into a file mapping (StFile.map,
// st_read_mapped) and 2-D tensors marked `transposed`
// (GPT-2's Conv1D [in, out], the hub loader). model_from_st keeps mapped tensors where they are
// (no copy; their pages are given back to the page cache once checked and packed, and come back
// when read), keeps a mapped transposed layer matrix in place as LayerWeights' *_xw (packed straight
// from it), and transposes any other transposed tensor into a buffer of its own. The process then
// holds the packed copies and what it reads, not the file twice. What needs the canonical layout
// of such a layer matrix (the forward without packed weights, what-if edits, model_tensor_list)
// calls model_canonical first; model_save, model_weights_flat, model_param_offset and the backward
// (backward.c, a transposed product) read either layout. The file must not be rewritten in place while such a
// model is open (a writer that truncates it and writes again): the mapping would show the new bytes, or stop
// the process (SIGBUS) past a shorter end — which the command line turns into one line and exit code 2
// (cli.h, cli_catch_sigbus; test_sigbus). A writer that puts a new file in its place by a rename
// (Stepformer's own, atomic_commit) leaves the mapping the old file's. Only large files are kept mapped
// (st_map_min_bytes); a small checkpoint is copied and transposed as before.
//
// Core reads no file: model_load (src/formats/model_load.h) reads a file of any format into an
// StFile of canonical names and metadata (stfile.h) and hands it to model_from_st, which validates
// it and builds the Model; model_save writes what model_write hands it.
//
//     Err err = {0};
//     Model *m = model_load("assets/models/bank.safetensors", &err);     // model_load.h
//     ModelConfig c = model_config_default(); c.D = 64; ...
//     Model *r = model_random(&c, &vocab, 42, &err);   // seeded Xavier-uniform
//     model_save(m, "copy.safetensors", &err);                          // model_load.h
//     model_free(m);
#ifndef SF_MODEL_H
#define SF_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"       // defines: Err
#include "gemm.h"      // defines: GemmWeights
#include "stfile.h"    // defines: StFile
#include "tokenizer.h" // defines: Vocab

typedef enum { ACT_RELU, ACT_GELU, ACT_GELU_TANH, ACT_SILU } Activation;

// How RoPE pairs a head's dimensions (issue 34): Hugging Face's Llama/Qwen code rotates halves
// (dimension j with j + d_k/2), the RoPE paper and llama.cpp adjacent pairs (2j with 2j + 1).
typedef enum { ROPE_NONE, ROPE_HALF, ROPE_PAIRS } RopeStyle;

// How a sentence becomes tokens (metadata `tokenizer`). The model records it; the hub loader reads
// the bpe / wordpiece / tokenizer.json files themselves.
typedef enum { TOK_WORDS, TOK_CHARS, TOK_BPE, TOK_WORDPIECE, TOK_TOKJSON } ModelTokenizerKind;

typedef struct {
  int V, D, H, F, n_layers;
  Activation activation;
  bool norm_first;  // pre-norm (x + SA(LN(x))) instead of post-norm (LN(x + SA(x)))
  bool causal;      // mask keys after the query (a decoder's self-attention)
  float ln_eps;     // LayerNorm epsilon, 1e-5 as PyTorch
  int n_dec_layers; // decoder layers of an encoder-decoder; 0: an encoder only
  int V_t;          // the decoder's (target) vocabulary; 0 for an encoder only
  bool learned_pos; // positions from the learned table pos_embed [max_pos, D], not the sinusoid
  int max_pos;      // rows of that table (0 when sinusoidal): the longest sentence the model takes
  bool no_pos;      // pos_encoding=none: no positions at all, P = 0 and Z = OE (a lesson's model by hand)
  // Today's decoders (Llama, Qwen, SmolLM; issue 34), all off for the models above:
  bool rms_norm;             // every norm is RMSNorm x / sqrt(mean(x²) + eps) · g (no mean, no bias)
  bool rms_offset;           // Gemma's gain: · (1 + g)
  RopeStyle rope;            // rotary positions on Q and K (then no_pos: nothing is added to X)
  float rope_theta;          // base of the angles, 10000 by default
  float rope_factor;         // Llama 3's rope_scaling (type llama3): factor (0: no scaling), low and
  float rope_low, rope_high; // high frequency factors, original context length
  int rope_orig;             //
  int H_kv;                  // K/V heads of grouped-query attention (0 or H: one per query head)
  int d_k;                   // width of a head (0: D/H; Qwen 3's head_dim may differ)
  bool gated;                // FFN = (act(x·W_gᵀ) ⊙ x·W_1ᵀ)·W_2ᵀ (SwiGLU with act SiLU), no biases
  bool qk_norm;              // per-head RMSNorm of q and k over d_k before RoPE (Qwen 3)
} ModelConfig;

// The width of a head (cfg.d_k, or D/H), the number of K/V heads (cfg.H_kv, or H).
static inline int model_dk(const ModelConfig *c) { return c->d_k > 0 ? c->d_k : c->D / c->H; }
static inline int model_hkv(const ModelConfig *c) { return c->H_kv > 0 ? c->H_kv : c->H; }
// True for a model in the form of today's decoders (RMSNorm, RoPE or a gated FFN).
static inline bool model_is_modern(const ModelConfig *c) { return c->rms_norm || c->rope || c->gated; }

typedef struct {
  float *in_proj_weight, *in_proj_bias;   // [3D, D], [3D] (bias NULL: no bias)
  float *out_proj_weight, *out_proj_bias; // [D, D], [D]   (bias NULL: no bias)
  float *linear1_weight, *linear1_bias;   // [F, D], [F]
  float *linear2_weight, *linear2_bias;   // [D, F], [D]
  float *norm1_weight, *norm1_bias;       // [D]
  float *norm2_weight, *norm2_bias;       // [D]
  // The four weight matrices packed once for gemm_matmul_t (gemm.h), on machines with AVX2 and
  // FMA; empty (panels NULL) elsewhere, and the forward then multiplies with BLAS.
  GemmWeights in_proj_packed, out_proj_packed, linear1_packed, linear2_packed;
  // A GPT-2 checkpoint's four matrices as its file stores them, GPT-2's Conv1D layout [in, out]
  // (y = x·W: the transpose of the four above), read in place from the file mapping; NULL for every
  // other model. When set, the packed copies are made from them, the trace's weight views read
  // them, and in_proj_weight .. linear2_weight stay NULL until model_canonical makes them.
  float *in_proj_xw, *out_proj_xw, *linear1_xw, *linear2_xw; // [D, 3D], [D, D], [D, F], [F, D]
  // Today's decoders (model_is_modern): in_proj_weight is then [(H + 2·H_kv)·d_k, D] (rows: Q's
  // H·d_k, K's H_kv·d_k, V's H_kv·d_k), out_proj_weight [D, H·d_k]; norm*_bias NULL under RMSNorm.
  float *gate_weight;                   // [F, D] the gated FFN's gate (linear1 is then its "up")
  float *q_norm_weight, *k_norm_weight; // [d_k] QK-norm gains, or NULL
  GemmWeights gate_packed;
} LayerWeights;

// A decoder layer of nn.Transformer: masked self-attention, cross-attention over memory, FFN.
typedef struct {
  LayerWeights self; // self_attn.*, linear1/2, norm1, norm2: what an encoder layer has too
  float *cross_in_proj_weight, *cross_in_proj_bias;   // multihead_attn.in_proj [3D, D], [3D]
  float *cross_out_proj_weight, *cross_out_proj_bias; // multihead_attn.out_proj [D, D], [D]
  float *norm3_weight, *norm3_bias;                   // [D]
  // packed as the encoder's (gemm.h), or empty: the cross-attention's W^{qc} (rows 0..D-1 of
  // its in_proj), W^{kc}|W^{vc} (rows D..3D-1, applied to memory) and its out_proj
  GemmWeights cross_q_packed, cross_kv_packed, cross_out_packed;
} DecLayerWeights;

typedef struct Model {
  ModelConfig cfg;
  Vocab vocab;
  float *embed;                   // [V, D]
  LayerWeights *layers;           // [n_layers]
  bool has_head;                  // prediction head present
  bool has_final_norm;            // final LayerNorm before the head present
  float *norm_weight, *norm_bias; // [D] final LayerNorm, or NULL
  float *head_weight, *head_bias; // [V, D], [V]; an encoder-decoder's: [V_t, D], [V_t]
                                  // head_bias NULL: none; head_weight == embed when tie_head
  // head_weight packed (a decoder-only model converted from F16/BF16, model_pack; else empty: the
  // forward packs the head block by block per product, gemm_blocks.h)
  GemmWeights head_packed;
  // The canonical extensions (see the top of this file; NULL / 0 / false when absent):
  float *pos_embed;                                       // [cfg.max_pos, D] learned positions
  float *token_type;                                      // [n_types, D]; row 0 is added to X + P
  int n_types;                                            //
  float *embed_norm_weight, *embed_norm_bias;             // [D] Z = LayerNorm(X + P (+ t₀))
  float embed_norm_eps;                                   // its ε (metadata embed_norm_eps; 0: cfg.ln_eps)
  bool no_in_proj_bias, no_out_proj_bias;                 // attention without b^q,b^k,b^v / b^o (every layer)
  bool has_embed_norm, has_head_transform, has_head_bias; // which of the optional tensors are there
  bool tie_head;                                          // head_weight is embed (not a copy)
  float *head_transform_weight, *head_transform_bias;     // [D, D], [D] BERT's transform before the head
  float *head_norm_weight, *head_norm_bias;               // [D] its LayerNorm
  bool has_classifier;                                    // classifier instead of a head
  int n_classes;                                          // C
  char **class_names;                                     // [C], owned
  float *classifier_weight, *classifier_bias;             // [C, D], [C]
  ModelTokenizerKind tok_kind;                            // metadata tokenizer
  // An encoder-decoder only (cfg.n_dec_layers > 0; else all empty / NULL):
  Vocab tgt_vocab;                        // the target vocabulary, "<unk>" first
  int bos, eos;                           // ids of "<bos>" and "<eos>" in tgt_vocab
  float *tgt_embed;                       // [V_t, D]
  DecLayerWeights *dec_layers;            // [n_dec_layers]
  float *enc_norm_weight, *enc_norm_bias; // [D] encoder.norm: memory = LN(last encoder output)
  float *dec_norm_weight, *dec_norm_bias; // [D] decoder.norm, before the head
  float *params;                          // the one block all weight pointers point into (a random model)
  float **owned;                          // a loaded model's instead: each tensor's own buffer, taken
  int n_owned;                            // over from the file read (model_from_st), not copied
  uint8_t *map;                           // or the file mapping its F32 tensors point into (a hub
  size_t map_len;                         // folder's checkpoint, st_read_mapped); model_free unmaps it
  long n_params;
  bool has_seed;
  uint64_t seed;                   // the seed of a random model (or the one recorded in the file)
  char source[160];                // what it is, for captions: "bank.safetensors" or "random, seed 42"
  char **meta_keys, **meta_values; // the file's metadata, kept so a saved copy keeps it all
  int n_meta;
  struct ModelTokenizer *tokenizer; // a hub folder's BPE or WordPiece (model_tokens.h), or NULL
  // A model dequantized from a GGUF file with quantized tensors: the file's path (owned), so that
  // "weights as stored" (stored.h) can read its blocks again; NULL for every other model.
  char *stored_path;
  // Its floats were converted from a safetensors file's F16 or BF16 (model_from_st): its layer
  // matrices get packed copies whatever their size (model_pack_converted).
  bool converted;
} Model;

ModelConfig model_config_default(void); // D=16, H=2, F=64, 2 layers, relu, post-norm, eps 1e-5
// Checks that a configuration can be built: positive sizes, D divisible by H, D even (the
// sinusoidal encoding pairs dimensions), sizes below sane limits (at most mem_max_floats()
// parameters, counting a prediction head: whether they fit in this machine is model_memory_check's).
// `what` prefixes the message.
bool model_config_check(const ModelConfig *c, const char *what, Err *err);

// Parses "D=16,H=2,F=64,layers=2,seed=42[,activation=gelu|gelu_tanh][,norm_first=1][,causal=1]
// [,pos=learned[,max_pos=64]]" (a random model's learned positions: a table of max_pos rows, 64 by
// default).
// Unset fields keep their values in *c and *seed. The message says what is wrong with the spec
// ("D=abc is not a width in 1..8192"); the caller names where the spec came from.
bool model_config_parse(ModelConfig *c, uint64_t *seed, const char *spec, Err *err);

// Reading a model from a path and writing one to a file are the formats' (src/formats/model_load.h:
// model_load, model_save); core builds the Model from the canonical form they read.
// Validates a canonical StFile (tensor names and metadata of this header) and builds the Model.
// `path` names the source in messages. The StFile is consumed either way: on return (success or
// failure) *f has been released with st_free (the model keeps the metadata arrays, taken over)
// and must not be used again except to call st_free on it once more (harmless).
Model *model_from_st(StFile *f, const char *path, Err *err);
// Seeded random weights; a configuration model_config_check refuses fails with "random model: ...".
Model *model_random(const ModelConfig *c, const Vocab *vocab, uint64_t seed, Err *err);
// The canonical form of m handed to a writer (formats/safetensors.h: st_write_mapped, through
// model_save): every tensor in param order (a Conv1D-layout matrix marked transposed), the metadata
// (the configuration, the vocabulary, the loaded file's other keys, written_by), and the file mapping
// m's tensors may lie in. Returns what the writer returns.
typedef bool (*ModelWriteFn)(const char *path, const StTensor *tensors, int n, const char *const *keys,
                             const char *const *values, int n_meta, const void *map, size_t map_len,
                             Err *err);
bool model_write(const Model *m, const char *path, ModelWriteFn writer, Err *err);
// Every weight of m, tensor after tensor in the order of the file model_save writes (n_params
// floats; a tied head once): a random model's parameter block as it is, a loaded model's tensors
// gathered (tests compare models with it). malloc'd; NULL when out of memory.
float *model_weights_flat(const Model *m);
// The index of the weight element x in that flat order (a pointer into any tensor of m, a view
// such as a tied head included), or -1 when x is not a weight of m. Gradients (backward.h) are
// kept in this order.
long model_param_offset(const Model *m, const float *x);
void model_free(Model *m);
// Makes the canonical [out, in] copies of the layer matrices kept in GPT-2's Conv1D layout (*_xw),
// once (later calls return at once; thread-safe); true when there are none. False when out of memory.
// m is const as a cache is: its numbers do not change.
bool model_canonical(const Model *m);
// The element of a layer matrix that p points at, in its canonical copy when p lies in a Conv1D
// layout (*_xw; model_canonical must have made the copy), else p itself.
const float *model_canonical_elem(const Model *m, const float *p);
// Parameters of a model of this configuration (an encoder-decoder: always with its norms and head),
// learned positions included. A loaded model's exact count is m->n_params (the parameter block:
// a tied head counts once; biases that are absent do not count).
// 64-bit: Llama 3.1 8B has 8 030 261 248.
int64_t model_param_count(const ModelConfig *c, bool with_head, bool with_norm);
// The floats of every layer's weight matrices (Q/K/V, output, the FFN's two or three): what the
// packed copies for the GEMM kernel take (model_pack), about 79 % of Llama 3.2 1B.
int64_t model_layer_matrix_floats(const ModelConfig *c);
// Layer matrices held in memory of the model's own (dequantized from GGUF, random weights) get packed
// copies only up to this size: beyond it the copies would double the weights' memory (SmolLM2-135M's
// 425 MB are packed, Llama 3.2 1B's 3.6 GiB from GGUF are not, as issue 35's memory rule wants: at
// most the dequantized floats and the file's pages; the forward then packs block by block per
// product). Matrices read from a file mapping are packed whatever their size (the copy takes the
// place of the file's pages), when the copies fit in the memory available. Matrices converted from
// a safetensors file's F16/BF16 (Model.converted) are packed whatever their size too, while the
// copies leave at least as much memory free as they take: a 1B hub folder in BF16 then holds its
// floats and their packed copies (4.6 + 3.6 GiB), for a forward that does not pack 3.6 GiB at every
// pass (BENCHMARKS.md, "Today's LLMs"). model_pack_own_max is that size in bytes (1 GiB; tests set
// 0 to take the unpacked path); model_pack_converted (true) false treats converted ones as the others.
extern int64_t model_pack_own_max;
extern bool model_pack_converted;
bool model_packs_own(const ModelConfig *c);
// Refuses in one line ("WHAT: its N parameters take 4.60 GiB as float32 but 3.10 GiB of memory are
// available: ...") when n_params floats do not fit in mem_available() (memsize.h); `packed` says
// that n_params counts the packed copies too.
bool model_memory_check(int64_t n_params, bool packed, const char *what, Err *err);
// The parameters m's tensors take by its table (every tensor its flags and configuration name, tied
// head once, absent biases not at all): what m->n_params is once the weights are read. Reads only
// m's configuration, flags and layer array (no weights need be there); -1 out of memory.
int64_t model_table_floats(const Model *m);
// What an open model holds, in bytes: weights in its file mapping (page cache: read when needed,
// given back after), weights in memory of its own, and the packed copies of its layer matrices.
void model_memory(const Model *m, uint64_t *mapped, uint64_t *own, uint64_t *packed);
// Gives the pages of the layer matrices that lie in the file mapping back to the page cache (they
// come back when read): the window calls it once a picture is drawn, so that walking through every
// layer's weights does not keep them all resident beside the packed copies. The embedding (read by
// every forward as the tied head) stays.
void model_release_pages(const Model *m);
// "learned positions, GELU (tanh), tied head, ..." -- the model's extensions for `stepformer info`,
// written into buf (cap bytes); "" for a model without any.
const char *model_features(const Model *m, char *buf, int cap);
const char *model_tokenizer_name(ModelTokenizerKind k);
// True for an encoder-decoder (cfg.n_dec_layers > 0).
bool model_is_seq2seq(const Model *m);
// True for the course's einsum module, whose energy is divided by √D: its loader keeps that in
// W^q (its queries map ÷ √H) and says so in the metadata course_note, which the notation shows.
bool model_q_scaled(const Model *m);
// The file's metadata value of key (the canonical form's, after translation), or NULL.
const char *model_meta(const Model *m, const char *key);
const char *model_activation_name(Activation a);

// Training (issue 21). Every parameter tensor of m in file order, under its file name
// ("layers.0.self_attn.in_proj_weight"), pointing into m->params; at most cap (room:
// model_tensor_cap(m)). Returns the count.
typedef struct {
  char name[64];
  const float *data;
  int ndim;
  long shape[2];
} ModelTensor;
int model_tensor_list(const Model *m, ModelTensor *out, int cap);
int model_tensor_cap(const Model *m);
// A copy of encoder m whose parameter block is `params` (m->n_params floats, laid out as m->params:
// the weights after a training step), sharing m's vocabulary, metadata and tokenizer (m must
// outlive it); m itself is not changed. Freed by model_with_params_free, never model_free.
Model *model_with_params(const Model *m, const float *params, Err *err);
void model_with_params_free(Model *m);

#endif
