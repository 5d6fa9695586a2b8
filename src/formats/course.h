// course.h -- opens the course notebook's Transformer as the canonical model file (issue 20).
//
// The notebook saves its classifier with torch.save(model.state_dict(), "NAME.pt") and its
// config in NAME.json beside it: {"n_heads": H, "vocab": ["<unk>", ...], "classes": [...],
// "eps": 1e-5} (classes and eps optional; a .safetensors may carry the same keys as strings in
// __metadata__, vocab and classes as a JSON list or joined by newlines). Everything else comes
// from the tensors, named as its state_dict() names them (D model width, V vocabulary, F
// feed-forward width, M max_seq_len, C classes):
//   encoder.tok_embed.weight [V, D]              -> embed.weight
//   encoder.pos_embed [1, M, D]                  -> pos_embed.weight [M, D], pos_encoding=learned
//   encoder.encoder_blocks.{i}.mha.W_Q|W_K|W_V.weight [D, D] (.bias [D] all three or none)
//                                                -> layers.{i}.self_attn.in_proj_weight [3D, D]
//                                                   (rows Q, K, V) and in_proj_bias [3D]
//   ....mha.W_O.weight [D, D] (.bias [D])        -> layers.{i}.self_attn.out_proj.weight|bias
//     (MultiHeadedAttentionSanity's mha.WQ|WK|WV|linear, with biases, in their place)
//   ....feed_forward.0.weight|bias [F, D], [F]   -> layers.{i}.linear1.weight|bias
//   ....feed_forward.3.weight|bias [D, F], [D]   -> layers.{i}.linear2.weight|bias
//   ....residual1.norm.weight|bias [D]           -> layers.{i}.norm1.*  (pre-norm: norm_first=1)
//   ....residual2.norm.weight|bias [D]           -> layers.{i}.norm2.*
//   encoder.norm.weight|bias [D]                 -> norm.*  (the encoder's final LayerNorm)
//   linear.weight|bias [C, D], [C]               -> classifier.weight|bias
// with metadata d_model, n_heads, d_ff, n_layers, activation=relu, norm_first=1, causal=0,
// layer_norm_eps, vocab and classes (joined by newlines), pos_encoding=learned (model.h). A
// config key that the shapes decide (d_model, d_ff, n_layers, max_seq_len, vocab_size,
// num_classes, the length of vocab or classes) and contradicts them, or an H that does not divide
// D, is refused in one line naming both. So is a tensor of neither naming: the line names it and
// says what Stepformer opens.
// A .pt holding the canonical names (embed.weight, layers.N.*: the repository's own encoder)
// opens too: its NAME.json's keys become the metadata (lists joined by newlines, eps as
// layer_norm_eps), d_model, d_ff and n_layers taken from the tensors when the JSON lacks them.
//
// The notebooks' own modules open too (course_modules.c has the full table): the per-head
// MultiHeadAttention (layers.{i}.attention.heads.{h}.q|k|v, output_linear, feed_forward.linear_1|2,
// layer_norm_1|2, embeddings.token_embeddings / position_embeddings / layer_norm; GELU, pre-norm)
// and the einsum SelfAttention / TransformerBlock (word_embedding, position_embedding,
// layers.{i}.attention.queries|keys|values|fc_out, norm1|2, feed_forward.0|2; post-norm; the
// notebook's energy/√d_k and GELU, or the tutorial's energy/√D (carried by the queries map, scaled
// by 1/√H) and ReLU where its weights show it), with the prefix "encoder." or none. The config
// gives vocab (and n_heads where the shapes cannot say it); norm_first, pos_encoding ("sinusoidal"
// or "none" without a position table), embed_eps (the embedding LayerNorm's ε, 1e-12 by default),
// energy_scale ("head_dim" | "embed_size") and activation ("gelu" | "relu" | "gelu_tanh") are
// optional. The output adds format course-heads | course-einsum and course_module, course_note for
// the rescaled queries and course_assumed for what the file could not tell, which `stepformer
// info` prints (and the footer of every picture: course_assumed).
//
// course_read takes any model file: a torch.save file (pt_sniff on its first bytes, whatever its
// extension) or a .safetensors; one with canonical names passes through unchanged, and when large
// stays mapped (st_read_mapped: its F32 tensors point into the mapping, which *out owns).
// The StFile it fills is freed with st_free. Errors: one line, false, *out empty.
//
//     StFile f;
//     if (!course_read("bank-sense.pt", &f, &err)) { puts(err.msg); return 2; }
//     Model *m = model_from_st(&f, "bank-sense.pt", &err);
#ifndef SF_COURSE_H
#define SF_COURSE_H

#include <stdbool.h>

#include "err.h"         // defines: Err
#include "safetensors.h" // defines: StFile

bool course_read(const char *path, StFile *out, Err *err);

// The translation alone (what course_read does after reading): `in` holds the file's tensors
// (and a .safetensors' metadata); config_json is NAME.json's text or NULL (then the config comes
// from in's metadata); `what` names the source in messages. The tensors' data move from *in to
// *out (in is left to st_free). A file already canonical (embed.weight) with no config is copied
// through as it is.
// config_name names the config in messages ("model.json"; NULL: "its config").
bool course_translate(StFile *in, const char *config_json, const char *config_name, const char *what,
                      StFile *out, Err *err);

// True when f holds the notebook's names (encoder.tok_embed.weight or encoder.encoder_blocks.*) or
// those of its modules (course_modules.c).
bool course_is_notebook(const StFile *f);

#endif
