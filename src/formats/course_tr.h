// course_tr.h -- the building blocks of course_translate (course.h), shared by course.c (the
// notebook's Transformer) and course_modules.c (the notebooks' AttentionHead and einsum
// SelfAttention modules). Private to those two files: nothing else includes it. The two files are
// one module, course_translate, split for size: course.c defines these blocks and calls
// course_modules_translate, which builds with them (the one circle of src/formats).
//
// A CtConfig is what NAME.json (or a .safetensors' __metadata__) says; a CtTr is one translation
// under way: the input StFile, which of its tensors were taken, the canonical StFile being built.
// Every function that fails sets t->err to one line naming t->what and returns false / NULL.
//
//     StTensor *w = ct_need(t, "layers.0.norm1.weight", 1, D, 0, "D = 8 from word_embedding.weight");
//     if (!w || !ct_out_move(t, "layers.0.norm1.weight", w)) return false;
#ifndef SF_COURSE_TR_H
#define SF_COURSE_TR_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"         // defines: Err
#include "safetensors.h" // defines: StFile, StTensor

// The config keys the shapes decide: only compared with them (ct_agree), in this order.
enum { FX_D, FX_F, FX_LAYERS, FX_M, FX_V, FX_C, FX_N };

typedef struct {
  long H;
  bool has_H;
  char *vocab, *classes; // joined by newlines (malloc'd), or NULL
  int n_vocab, n_classes;
  double eps;
  bool has_eps;
  double embed_eps; // "embed_eps": the embedding LayerNorm's epsilon (course_modules.c)
  bool has_embed_eps;
  int norm_first; // "norm_first": 0 or 1; -1 when the config does not say
  char pos[16];   // "pos_encoding": "sinusoidal" | "none", or "" when the config does not say
  // "energy_scale": "head_dim" (softmax(energy/√d_k), the course notebook's einsum SelfAttention) |
  // "embed_size" (energy/√D, the "Transformer from scratch" tutorial's), or "" when not said
  char energy_scale[16];
  char act[16]; // "activation": "gelu" (erf) | "relu" | "gelu_tanh", or "" when not said
  long fixed[FX_N];
  bool has_fixed[FX_N];
  char src[160]; // "model.json" or "__metadata__", for messages
} CtConfig;

typedef struct {
  StFile *in;
  bool *used; // [in->n]: tensors the translation took
  StFile *out;
  int cap_t, cap_m;
  const char *config; // the config's name in messages
  const char *what;
  Err *err;
} CtTr;

// "8,16": the shape of x, for messages.
void ct_shape_str(char *buf, size_t cap, const StTensor *x);
// The input tensor `name`, marked as used; NULL when absent.
StTensor *ct_take(CtTr *t, const char *name);
// The input tensor `name` with shape [d0] (ndim 1) or [d0, d1], marked as used; missing or of
// another shape: NULL and a line naming it, its shape and `why` (where the sizes come from).
StTensor *ct_need(CtTr *t, const char *name, int ndim, int64_t d0, int64_t d1, const char *why);
// A new output tensor [d0] or [d0, d1], named, without data (the caller mallocs count floats).
StTensor *ct_out_new(CtTr *t, const char *name, int ndim, int64_t d0, int64_t d1);
// Moves x's values into the output under `name` (x keeps its name and shape, no data).
bool ct_out_move(CtTr *t, const char *name, StTensor *x);
// An output metadata key.
bool ct_out_meta(CtTr *t, const char *key, const char *value);
bool ct_out_meta_int(CtTr *t, const char *key, long v);
// The config key k (FX_*) against what the shapes give (`from` names the tensor): equal or absent.
bool ct_agree(CtTr *t, const CtConfig *c, int k, long have, const char *from);

// course_modules.c: true when f holds the names of one of the notebooks' module families; the
// translation of those names (c is the parsed config).
bool course_modules_is(const StFile *f);
bool course_modules_translate(CtTr *t, const CtConfig *c);

#endif
