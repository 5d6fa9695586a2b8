// stages.h -- DESIGN.md's stage table and the course's notation, written once.
//
// Every fact about a stage that more than one module needs lives in one row of STAGE_TABLE
// (stages.c): its lesson name and the other names a teacher may type, its title, its row in the
// table, whether it repeats in every layer, whether it has one matrix per head, its axes, and
// what a model needs for it to exist. Every tensor of the trace takes its kind, axes, title,
// symbol and TeX from one row of the notation table (stages.c), chosen by the tensor's dump name
// and the model's variant (pre- or post-norm, causal, ReLU or GELU, first layer or later).
// trace.c builds the trace from them; the lesson's stage names and "did you mean", the page's
// stage indicator, `stepformer stages`, the export file names all read them. Adding a stage is
// adding a StepKind, a row here, its compute in forward.c and its view in view_stages.c.
//
//     const StageInfo *s = stage_info(STEP_SOFTMAX);   // s->name "softmax", s->number 9
//     StepKind k;
//     stage_from_name("weighted values", &k);           // true, k == STEP_AV (an alias)
//     stage_nearest("sotfmax")                          // "softmax" (for "did you mean")
#ifndef SF_STAGES_H
#define SF_STAGES_H

#include <stdbool.h>

// What the rows or columns of a matrix stand for.
typedef enum {
  AXIS_TOKEN,     // one per token: labelled with the word ("cat")
  AXIS_VOCAB,     // one per vocabulary word
  AXIS_MODEL,     // model dimension 0..D-1
  AXIS_HEADDIM,   // dimension within a head 0..d_k-1 (column block h·d_k.. of the model dims)
  AXIS_FFN,       // hidden unit of the feed-forward layer 0..F-1
  AXIS_QKV,       // model dimension of a projection output, banded by head (W^q's columns)
  AXIS_TGT_TOKEN, // an encoder-decoder's decoder input: one per target token ("<bos>", "le", ...)
  AXIS_TGT_VOCAB, // one per target vocabulary word
  AXIS_ONE,       // a single row: the mean over positions ("mean")
  AXIS_CLASS,     // one per class of a classifier (its name)
  AXIS_TOKEN2,    // one per token of the second sentence of a comparison (similarity.h)
} TraceAxis;

// What a tensor is; views and the inspector pick their drawing and worked equation by kind.
typedef enum {
  T_ONEHOT,     // O [L,V]
  T_EMBED_W,    // E [V,D] (weight)
  T_EMBED,      // X = O·E [L,D]
  T_POSENC,     // P [L,D]
  T_ADDPOS,     // Z = X + P [L,D]
  T_LAYER_IN,   // input of a layer [L,D]
  T_NORM_IN,    // pre-norm: LN1(in), the attention input [L,D]
  T_PROJ_W,     // W^q, W^k, W^v [D,D] (weights, transposed view)
  T_PROJ_B,     // b^q, b^k, b^v [1,D]
  T_PROJ,       // Q, K, V [H,L,d_k]
  T_SCORES,     // S = Q Kᵀ/√d_k [H,L,L] (unmasked; "S" itself when there is no mask)
  T_MASKED,     // S + M [H,L,L], -inf where masked ("S" when causal)
  T_ATTN,       // A = softmax(S) [H,L,L]
  T_AV,         // A·V [H,L,d_k]
  T_CONCAT,     // [head_1 … head_H] [L,D]
  T_OUT_W,      // W^o [D,D] (weight)
  T_OUT_B,      // b^o [1,D]
  T_ATTN_OUT,   // Concat·W^o + b^o [L,D]
  T_RESIDUAL,   // a residual sum [L,D]
  T_NORM,       // a LayerNorm output [L,D]
  T_NORM_W,     // LayerNorm gain γ or shift β [1,D] (weight)
  T_FFN1_W,     // W_1 [D,F] (weight)
  T_FFN1_B,     // b_1 [1,F]
  T_FFN_PRE,    // x·W_1 + b_1 [L,F]
  T_FFN_HIDDEN, // ReLU/GELU of it [L,F]
  T_FFN2_W,     // W_2 [F,D] (weight)
  T_FFN2_B,     // b_2 [1,D]
  T_FFN_OUT,    // ·W_2 + b_2 [L,D]
  T_HEAD_W,     // W_out [D,V] (weight, prediction head)
  T_LOGITS,     // [L,V]
  T_PRED,       // softmax over the vocabulary [L,V]
  T_MEMORY,     // an encoder-decoder's memory: LayerNorm of the encoder's output [S,D]
  // the canonical extensions (model.h)
  T_POS_W,        // a learned position table's rows, or token type row t₀ [.,D] (weight)
  T_HEAD_HIDDEN,  // BERT's transform act(x·W_t + b_t) [L,D]
  T_POOL,         // mean over positions z̄ [1,D]
  T_CLASS_W,      // classifier weights W_c [D,C] (weight) and bias b_c [1,C]
  T_CLASS_LOGITS, // class scores z̄·W_c + b_c [1,C]
  T_CLASS_PRED,   // their softmax [1,C]
  T_SIM,          // cos(z_i, z'_j) of two sentences' vectors at one level [L1,L2] (similarity.h)
  // today's decoders (issue 34)
  T_RMSNORM, // RMSNorm x / rms(x) · g [L,D] (QK-norm's per head: T_PROJ with its gain)
  T_ROPE,    // Q or K after RoPE [H or H_kv, L, d_k]
  T_GATE,    // the gated FFN's two products: gate x·W_g, up x·W_1 [L,F]
  T_GATED,   // act(gate) ⊙ up [L,F]
} TensorKind;

// The stages. The values are stable (lessons' tests and the fuzzers loop over them); the order
// a learner walks is STAGE_TABLE's, where the pre-norm LayerNorm comes right after Z + P.
typedef enum {
  STEP_TOKENS = 1,
  STEP_ONEHOT,
  STEP_EMBED,
  STEP_POSENC,
  STEP_ADDPOS,
  STEP_QKV,
  STEP_SCORES,
  STEP_MASK,
  STEP_SOFTMAX,
  STEP_AV,
  STEP_CONCAT,
  STEP_OUTPROJ,
  STEP_ADDNORM1,
  STEP_FFN_HIDDEN,
  STEP_FFN_OUT,
  STEP_ADDNORM2,
  STEP_PREDICT,
  STEP_PRENORM, // pre-norm models only: LN1 before attention (stage 5½ of each layer)
  // An encoder-decoder (issue 11): after the encoder's layers, memory, then the decoder.
  STEP_MEMORY,     // memory = LayerNorm(encoder output) [S,D]
  STEP_DEC_TOKENS, // the decoder's input: <bos> and the target's tokens (T of them)
  STEP_DEC_ONEHOT,
  STEP_DEC_EMBED,
  STEP_DEC_POSENC,
  STEP_DEC_ADDPOS,
  STEP_DEC_PRENORM, // pre-norm: LN1 before the masked self-attention
  STEP_DEC_QKV,     // masked self-attention over the target [H,T,T]
  STEP_DEC_SCORES,
  STEP_DEC_MASK,
  STEP_DEC_SOFTMAX,
  STEP_DEC_AV,
  STEP_DEC_CONCAT,
  STEP_DEC_OUTPROJ,
  STEP_DEC_ADDNORM1,
  STEP_CROSS_QKV, // cross-attention: Q from the decoder, K and V from memory [H,T,S]
  STEP_CROSS_SCORES,
  STEP_CROSS_SOFTMAX,
  STEP_CROSS_AV,
  STEP_CROSS_CONCAT,
  STEP_CROSS_OUTPROJ,
  STEP_DEC_ADDNORM2,
  STEP_DEC_FFN_HIDDEN,
  STEP_DEC_FFN_OUT,
  STEP_DEC_ADDNORM3, // the decoder layer's output
  STEP_DEC_PREDICT,  // softmax over the target vocabulary [T,V_t]
  // The canonical extensions (model.h): BERT's embedding LayerNorm and masked-LM transform, the
  // course's classifier tail.
  STEP_EMBED_NORM,     // Z = LayerNorm(X + P + t₀) [L,D]
  STEP_HEAD_TRANSFORM, // h = LayerNorm(act(Z'·W_t + b_t)) [L,D], before the prediction
  STEP_ENC_NORM,       // a classifier's final LayerNorm [L,D]
  STEP_POOL,           // z̄ = mean over positions [1,D]
  STEP_CLASS_SCORES,   // z̄·W_c + b_c [1,C]
  STEP_CLASS_PRED,     // softmax over the classes [1,C]
  // Two sentences (a comparison): the cosine similarity of their vectors after each layer
  // [L1,L2], and the line of one word across the levels (similarity.h). A trace has these steps
  // only when the session compares (trace_add_sim_steps).
  STEP_SIM,
  // Today's decoders (issue 34: Llama, Qwen, SmolLM): RMSNorm before attention, RoPE on Q and K,
  // residual + RMSNorm before the FFN, the gated FFN's gate and up products.
  STEP_RMSNORM1,
  STEP_ROPE,
  STEP_RMSNORM2,
  STEP_GATE,
  STEP_UP,
} StepKind;
// One past the last kind: an array indexed by StepKind has this many entries.
#define STEP_KIND_END (STEP_UP + 1)

// An encoder-decoder's stages: memory and the decoder's (their rows are the decoder's words, their
// layers the decoder's). The kinds after STEP_DEC_PREDICT are the encoder's again.
static inline bool stage_is_decoder(StepKind k) { return k >= STEP_MEMORY && k <= STEP_DEC_PREDICT; }
// The decoder's own stages, after memory.
static inline bool stage_is_after_memory(StepKind k) { return k > STEP_MEMORY && k <= STEP_DEC_PREDICT; }

// How a stage treats the heads.
typedef enum {
  STAGE_ONE_MATRIX, // one matrix for all heads (or none)
  STAGE_PER_HEAD,   // one matrix per head: shown one head at a time, or all heads in a grid
  STAGE_HEAD_BANDS, // per-head tensors side by side, each head a band of columns (Q, K, V)
} StageHeads;

// What a model must have for the stage to exist.
typedef enum {
  STAGE_ALWAYS,
  STAGE_IF_CAUSAL,           // the mask
  STAGE_IF_PRE_NORM,         // the LayerNorm before attention
  STAGE_IF_HEAD,             // the prediction (a model with a prediction head)
  STAGE_IF_DECODER,          // an encoder-decoder's stages (memory, the decoder's)
  STAGE_IF_DECODER_PRE_NORM, // a pre-norm encoder-decoder: LN1 before the decoder's self-attention
  STAGE_IF_EMBED_NORM,       // a model with an embedding LayerNorm (BERT)
  STAGE_IF_HEAD_TRANSFORM,   // a head with BERT's transform
  STAGE_IF_CLASSIFIER,       // a classifier's stages (final LayerNorm, mean, scores, prediction)
  STAGE_IF_COMPARE,          // a second sentence (compare="..." or --compare) and an encoder
  STAGE_IF_RMSNORM,          // RMSNorm (today's decoders)
  STAGE_IF_ROPE,             // rotary positions
  STAGE_IF_GATED,            // the gated FFN (SwiGLU)
} StageNeeds;

typedef struct {
  StepKind kind;
  const char *name;    // the lesson's stage= value and the export files' name: "softmax"
  const char *aliases; // more names a teacher may type, space-separated, in stage_key form
  const char *title;   // what `stepformer stages` and the stage indicator print: "softmax"
  int number;          // the row of DESIGN.md's table (the pre-norm LayerNorm: 5, shown 5½)
  bool half;           // shown as number½: a stage between two rows of the table
  bool in_layer;       // repeated in every layer: layer= applies
  StageHeads heads;
  StageNeeds needs;
  TraceAxis rows, cols;                // the axes of the stage's matrix (tokens: none; rows are the tokens)
  const char *group_title, *group_tex; // a stage that shows several tensors at once (Q, K and
                                       // V): its heading then; NULL for a one-tensor stage
} StageInfo;

// The rows in the order a learner walks them; stage_info(k) for one kind (never NULL for a
// valid kind).
extern const StageInfo STAGE_TABLE[];
extern const int STAGE_COUNT;
const StageInfo *stage_info(StepKind k);

// The stage a name means: its name, one of its aliases or its title, compared in stage_key form
// (ASCII letters lowercased, every run of other characters than a-z and 0-9 one '_', none at
// either end: "Weighted values" and "weighted-values" are "weighted_values"). False when none.
bool stage_from_name(const char *name, StepKind *k);
// The name of the stage nearest to a typo (within a few edits of a name, alias or title), or
// NULL. For "did you mean".
const char *stage_nearest(const char *name);
// Every stage name, comma-separated, in the learner's order (for messages).
const char *stage_name_list(void);
// Writes name in stage_key form into out (cap bytes); returns out.
char *stage_key(const char *name, char *out, int cap);

// A tensor's notation. Conditions on the model pick among rows of the same name.
typedef enum {
  WHEN_ANY = 0,
  WHEN_POST_NORM = 1 << 0,
  WHEN_PRE_NORM = 1 << 1,
  WHEN_CAUSAL = 1 << 2,
  WHEN_NOT_CAUSAL = 1 << 3,
  WHEN_RELU = 1 << 4,
  WHEN_GELU = 1 << 5,
  WHEN_FIRST_LAYER = 1 << 6,
  WHEN_LATER_LAYER = 1 << 7,
  WHEN_DECODER = 1 << 8, // a tensor of an encoder-decoder's decoder (or its memory)
  // the canonical extensions: where their notation differs
  WHEN_LEARNED_POS = 1 << 9,     // P is rows of a learned table
  WHEN_SINUSOIDAL = 1 << 10,     // P is the sinusoid
  WHEN_EMBED_NORM = 1 << 11,     // Z = LayerNorm(X + P + t₀)
  WHEN_NO_BIAS = 1 << 12,        // attention without biases (Q = Z W^q)
  WHEN_NO_OUT_BIAS = 1 << 13,    // attention's output projection without a bias (Concat W^o)
  WHEN_GELU_TANH = 1 << 14,      // GELU's tanh form
  WHEN_TOKEN_TYPE = 1 << 15,     // token type row t₀ added
  WHEN_NO_TOKEN_TYPE = 1 << 16,  // none
  WHEN_TIED_HEAD = 1 << 17,      // the head is the embedding table: W_out = Eᵀ
  WHEN_NO_HEAD_BIAS = 1 << 18,   // the head has no bias (GPT-2)
  WHEN_NO_POS = 1 << 19,         // pos_encoding=none: P = 0, Z = OE
  WHEN_Q_SCALED = 1 << 20,       // the course's einsum module: W^q is its queries map ÷ √H (metadata
                                 // course_note), so that S = QKᵀ/√d_k is its energy/√D
  WHEN_HEAD_READS_Z = 1 << 21,   // no final LayerNorm nor head transform: the head reads the last
                                 // layer's output Z′ itself (else y, introduced by the stage before)
  WHEN_MODERN = 1 << 22,         // today's decoders (model_is_modern): RMSNorm, RoPE, GQA, gated FFN
  WHEN_QK_NORM = 1 << 23,        // q and k normalized per head before RoPE (Qwen 3)
  WHEN_SILU = 1 << 24,           // the gated FFN's activation is SiLU (SwiGLU)
  WHEN_ROPE = 1 << 25,           // rotary positions
  WHEN_RMSNORM_OFFSET = 1 << 26, // RMSNorm's gain is 1 + g (Gemma)
} StageWhen;

typedef struct {
  const char *name; // dump name without the layer's "l0." or "d0." prefix: "A", "Wq", "norm1.gamma"
  int when;         // StageWhen flags that must all hold (WHEN_ANY: always)
  TensorKind kind;
  TraceAxis rows, cols;
  bool extra; // dumped, but not one of the required stage files
  const char *title, *symbol, *tex;
} TensorNotation;

// The notation row of tensor `name` for a model whose variant is `holds` (the StageWhen flags
// that are true of it). NULL when the table has none: a programmer's error in trace.c.
const TensorNotation *stage_notation(const char *name, int holds);

#endif
