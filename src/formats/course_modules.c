// course_modules.c -- see course.h: the two module families of the course notebooks, translated
// into the canonical StFile (model.h). Shapes: V vocabulary, D width, H heads, d_k = D/H, F
// feed-forward width, M position rows. Every name may carry the prefix "encoder." (the encoder of
// a whole model saved with model.state_dict()), the same for all.
//
// The per-head family (MultiHeadAttention of AttentionHeads, PositionWiseFeedForward):
//   embeddings.token_embeddings.weight [V, D]     -> embed.weight
//   embeddings.position_embeddings.weight [M, D]  -> pos_embed.weight (optional: learned positions)
//   embeddings.layer_norm.weight|bias [D]         -> embed_norm.* (optional), ε "embed_eps" (1e-12)
//   layers.{i}.attention.heads.{h}.q|k|v.weight [d_k, D] (.bias [d_k]: every one or none)
//       -> in_proj_weight [3D, D]: Q's rows h·d_k.. are head h's q (torch.cat of the heads)
//   layers.{i}.attention.output_linear.weight [D, D] (.bias)  -> out_proj.*
//   layers.{i}.feed_forward.linear_1|linear_2.weight|bias     -> linear1|linear2.*, GELU (erf)
//   layers.{i}.layer_norm_1|layer_norm_2.weight|bias          -> norm1|norm2.*, pre-norm
// The einsum family (SelfAttention, TransformerBlock), as the course notebook writes it:
//   word_embedding.weight [V, D]                  -> embed.weight
//   position_embedding.weight [M, D]              -> pos_embed.weight (optional: learned positions)
//   layers.{i}.attention.queries|keys|values.weight [D, D], no biases -> in_proj_weight [3D, D]
//   layers.{i}.attention.fc_out.weight [D, D], no bias                -> out_proj.weight
//   layers.{i}.norm1|norm2.weight|bias        -> norm1|norm2.*, post-norm: norm1(attention + x)
//   layers.{i}.feed_forward.0|2.weight|bias   -> linear1|linear2.*
// The notebook computes softmax(energy/√head_dim) and puts nn.GELU() (erf) between the linear
// layers. The "Transformer from scratch" tutorial it resembles divides by √D (embed_size) and uses
// ReLU; its first form shares one [d_k, d_k] map between the heads (each head's slice of x goes
// through it: expanded here into the block-diagonal D×D) and its fc_out has a bias. So:
//   a [d_k, d_k] map, or an fc_out bias  -> the tutorial's √D and ReLU (the notebook has neither);
//   [D, D] maps and fc_out without bias  -> the notebook's √d_k and GELU;
// and the config's "energy_scale" ("head_dim" | "embed_size") and "activation" ("gelu" | "relu")
// say otherwise. What came from neither the weights' proof nor the config is written in the
// metadata "course_assumed" (`info`'s note, the window's footer). For √D Stepformer multiplies the
// queries map by √(d_k/D) = 1/√H at load, so that S = QKᵀ/√d_k is the module's energy/√D and every
// stage from S on is the module's; the Q shown is queries(x)/√H ("course_note", said by `info`).
// A module saved alone (heads.{h}.q.weight, queries.weight, with or without "attention.") is
// refused in one line that says to save the whole encoder.
// Without a position table the positions are sinusoidal, or none when the config says
// pos_encoding "none"; the config's norm_first overrides either family's norm placement.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "course_tr.h" // defines: CtTr, CtConfig, ct_need, ct_out_move, ...

#define MAX_LAYERS 4096 // layers.{i}: an index beyond is no model's
#define MAX_HEADS 8192

typedef enum { FAM_NONE, FAM_HEADS, FAM_EINSUM, FAM_BARE } Family; // BARE: one module, no embeddings

// The name without its "encoder." prefix.
static const char *unprefixed(const char *s) { return strncmp(s, "encoder.", 8) ? s : s + 8; }

// The layer index of "layers.{i}.REST" (REST returned), or -1.
static int layer_of(const char *s, const char **rest) {
  s = unprefixed(s);
  if (strncmp(s, "layers.", 7) || s[7] < '0' || s[7] > '9') return -1;
  char *end;
  long i = strtol(s + 7, &end, 10);
  if (*end != '.' || i >= MAX_LAYERS) return -1;
  if (rest) *rest = end + 1;
  return (int)i;
}

// A module saved alone: heads.{h}.q.weight (MultiHeadAttention), attention.heads.* (an encoder
// layer), queries.weight (SelfAttention), attention.queries.weight (TransformerBlock).
static bool bare_module(const char *s) {
  if (!strncmp(s, "attention.", 10)) s += 10;
  return (!strncmp(s, "heads.", 6) && s[6] >= '0' && s[6] <= '9') || !strcmp(s, "queries.weight");
}

static Family family_of(const StFile *f) {
  bool bare = false;
  for (int i = 0; i < f->n; i++) {
    bare |= bare_module(f->tensors[i].name);
    const char *s = f->tensors[i].name, *rest;
    const char *u = unprefixed(s);
    if (!strcmp(u, "embeddings.token_embeddings.weight")) return FAM_HEADS;
    if (!strcmp(u, "word_embedding.weight")) return FAM_EINSUM;
    if (layer_of(s, &rest) >= 0) {
      if (!strncmp(rest, "attention.heads.", 16)) return FAM_HEADS;
      if (!strncmp(rest, "attention.queries.", 18) || !strncmp(rest, "attention.fc_out.", 17))
        return FAM_EINSUM;
    }
  }
  return bare ? FAM_BARE : FAM_NONE;
}

bool course_modules_is(const StFile *f) { return family_of(f) != FAM_NONE; }

static const char *const OPENS_MODULES =
    "Stepformer opens the course's per-head modules (embeddings.token_embeddings, "
    "layers.N.attention.heads.H.q|k|v, ...) and its einsum modules (word_embedding, "
    "layers.N.attention.queries|keys|values, ...): see README";

// The translation under way: the prefix, the sizes found so far, why they are what they are.
typedef struct {
  CtTr *t;
  const char *pre; // "encoder." or ""
  int64_t D, H, dk, F;
  bool sqrt_D; // einsum: the energy is divided by √D (embed_size), not √d_k
  bool
      tutorial; // einsum: the weights are the tutorial's (a shared map, or fc_out's bias), not the notebook's
  char why[160]; // "D = 8 from word_embedding.weight"
} Mod;

// pre + layers.{i}. + s, in buf.
static const char *lname(const Mod *m, char *buf, size_t cap, int i, const char *s) {
  snprintf(buf, cap, "%slayers.%d.%s", m->pre, i, s);
  return buf;
}

static bool oom(const Mod *m) { return err_set(m->t->err, "%s: out of memory", m->t->what); }

// A [d0] or [d0, d1] tensor of layer i moved to layers.{i}.to; `optional`: absent is fine.
static bool move_layer(Mod *m, int i, const char *from, const char *to, int nd, int64_t d0, int64_t d1,
                       bool optional, const char *why) {
  char n[160], o[160];
  lname(m, n, sizeof n, i, from);
  if (optional && !st_find(m->t->in, n)) return true;
  StTensor *x = ct_need(m->t, n, nd, d0, d1, why);
  snprintf(o, sizeof o, "layers.%d.%s", i, to);
  return x && ct_out_move(m->t, o, x);
}

// The two LayerNorms and the feed-forward of layer i, under the family's names.
static bool norms_and_ffn(Mod *m, int i, const char *const names[8]) {
  static const char *const to[8] = {"norm1.weight",   "norm1.bias",   "norm2.weight",   "norm2.bias",
                                    "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"};
  char whyf[224];
  snprintf(whyf, sizeof whyf, "%s, F = %lld from layer 0's first feed-forward weight", m->why,
           (long long)m->F);
  for (int k = 0; k < 8; k++) {
    bool f0 = k == 4 || k == 5, f1 = k == 6;
    if (!move_layer(m, i, names[k], to[k], k == 4 || k == 6 ? 2 : 1, f0 ? m->F : m->D, f1 ? m->F : m->D,
                    false, f0 || f1 ? whyf : m->why))
      return false;
  }
  return true;
}

// F: the rows of layer 0's first feed-forward weight (then checked in every layer by ct_need).
static void find_F(Mod *m, const char *first) {
  char n[160];
  const StTensor *x = st_find(m->t->in, lname(m, n, sizeof n, 0, first));
  m->F = x && x->ndim == 2 && x->shape[0] > 0 ? x->shape[0] : 1;
}

// ---------------------------------------------------------------- the per-head family
// H: one more than the largest h of layers.0.attention.heads.{h}.*; d_k: head 0's q rows.
static bool heads_sizes(Mod *m, const CtConfig *c) {
  CtTr *t = m->t;
  int H = 0;
  for (int j = 0; j < t->in->n; j++) {
    const char *rest;
    if (layer_of(t->in->tensors[j].name, &rest) != 0 || strncmp(rest, "attention.heads.", 16)) continue;
    char *end;
    long h = strtol(rest + 16, &end, 10);
    if (end != rest + 16 && *end == '.' && h < MAX_HEADS && h + 1 > H) H = (int)h + 1;
  }
  char n[160];
  const StTensor *q = H ? st_find(t->in, lname(m, n, sizeof n, 0, "attention.heads.0.q.weight")) : NULL;
  if (!q || q->ndim != 2 || q->shape[1] != m->D || q->shape[0] < 1) {
    char got[64] = "";
    if (q) ct_shape_str(got, sizeof got, q);
    return err_set(t->err, "%s: tensor \"%s\" %s%s%s, expected [d_k,%lld] (the first head's query map; %s)",
                   t->what, lname(m, n, sizeof n, 0, "attention.heads.0.q.weight"),
                   q ? "has shape [" : "is missing", got, q ? "]" : "", (long long)m->D, m->why);
  }
  m->H = H, m->dk = q->shape[0];
  if (m->H * m->dk != m->D)
    return err_set(
        t->err,
        "%s: layer 0 has %lld heads of d_k = %lld rows (%s [%lld,%lld]): %lld·%lld is not D = %lld "
        "(%s); every head has D/H rows",
        t->what, (long long)m->H, (long long)m->dk, n, (long long)m->dk, (long long)m->D, (long long)m->H,
        (long long)m->dk, (long long)m->D, m->why);
  if (c->has_H && c->H != m->H)
    return err_set(t->err,
                   "%s: %s says n_heads = %ld, but layer 0 has %lld heads (attention.heads.0..%lld): give "
                   "\"n_heads\": %lld or leave it out",
                   t->what, c->src, c->H, (long long)m->H, (long long)m->H - 1, (long long)m->H);
  return true;
}

static bool heads_layer(Mod *m, int i, bool bias) {
  CtTr *t = m->t;
  int64_t D = m->D, dk = m->dk;
  char n[160], s[96], why[224];
  snprintf(why, sizeof why, "%s, %lld heads of d_k = %lld from layer 0", m->why, (long long)m->H,
           (long long)dk);
  StTensor *o = NULL, *ob = NULL;
  snprintf(n, sizeof n, "layers.%d.self_attn.in_proj_weight", i);
  if (!(o = ct_out_new(t, n, 2, 3 * D, D)) || !(o->data = malloc(sizeof(float) * (size_t)(3 * D * D))))
    return oom(m);
  if (bias) {
    snprintf(n, sizeof n, "layers.%d.self_attn.in_proj_bias", i);
    if (!(ob = ct_out_new(t, n, 1, 3 * D, 0)) || !(ob->data = malloc(sizeof(float) * (size_t)(3 * D))))
      return oom(m);
  }
  static const char qkv[3] = {'q', 'k', 'v'};
  for (int part = 0; part < 3; part++)
    for (int h = 0; h < m->H; h++) {
      snprintf(s, sizeof s, "attention.heads.%d.%c.weight", h, qkv[part]);
      const StTensor *w = ct_need(t, lname(m, n, sizeof n, i, s), 2, dk, D, why);
      if (!w) return false;
      // Q = cat_h(x q_hᵀ): head h's rows are rows h·d_k.. of the stacked map
      memcpy(o->data + (part * D + h * dk) * D, w->data, sizeof(float) * (size_t)(dk * D));
      snprintf(s, sizeof s, "attention.heads.%d.%c.bias", h, qkv[part]);
      lname(m, n, sizeof n, i, s);
      const StTensor *b = ct_take(t, n);
      if ((b != NULL) != bias)
        return err_set(t->err,
                       "%s: tensor \"%s\" is %s, but the first head's query map has %s: every q, k, v of "
                       "every head has a bias or none does",
                       t->what, n, b ? "there" : "missing", bias ? "one" : "none");
      if (b && !(b = ct_need(t, n, 1, dk, 0, why))) return false;
      if (b) memcpy(ob->data + part * D + h * dk, b->data, sizeof(float) * (size_t)dk);
    }
  static const char *const names[8] = {"layer_norm_1.weight",          "layer_norm_1.bias",
                                       "layer_norm_2.weight",          "layer_norm_2.bias",
                                       "feed_forward.linear_1.weight", "feed_forward.linear_1.bias",
                                       "feed_forward.linear_2.weight", "feed_forward.linear_2.bias"};
  return move_layer(m, i, "attention.output_linear.weight", "self_attn.out_proj.weight", 2, D, D, false,
                    m->why) &&
         move_layer(m, i, "attention.output_linear.bias", "self_attn.out_proj.bias", 1, D, 0, true, m->why) &&
         norms_and_ffn(m, i, names);
}

// ---------------------------------------------------------------- the einsum family
// The queries / keys / values map of layer i as rows part·D.. of o [3D, D]: a [D, D] map copied,
// a [d_k, d_k] one (shared by the heads: each head's slice of x goes through it) as the
// block-diagonal D×D it amounts to; every value times `scale`.
static bool einsum_map(Mod *m, int i, const char *which, float *o, float scale) {
  char n[160], s[64], why[224];
  snprintf(s, sizeof s, "attention.%s.weight", which);
  int64_t D = m->D, k = m->dk == D ? D : m->dk;
  snprintf(why, sizeof why, "%s, as layer 0's queries map", m->why);
  const StTensor *w = ct_need(m->t, lname(m, n, sizeof n, i, s), 2, k, k, why);
  if (!w) return false;
  memset(o, 0, sizeof(float) * (size_t)(D * D));
  for (int64_t b = 0; b < D / k; b++) // the diagonal blocks (one for a [D, D] map)
    for (int64_t r = 0; r < k; r++)
      for (int64_t j = 0; j < k; j++) o[(b * k + r) * D + b * k + j] = w->data[r * k + j] * scale;
  snprintf(s, sizeof s, "attention.%s.bias", which);
  if (st_find(m->t->in, lname(m, n, sizeof n, i, s)))
    return err_set(m->t->err,
                   "%s: tensor \"%s\": the einsum SelfAttention's %s map has no bias (nn.Linear(..., "
                   "bias=False)); this file is another module",
                   m->t->what, n, which);
  return true;
}

// The form of layer 0's queries map: [D, D] (H from the config) or [d_k, d_k] shared (H = D/d_k).
static bool einsum_sizes(Mod *m, const CtConfig *c) {
  CtTr *t = m->t;
  char n[160];
  const StTensor *q = st_find(t->in, lname(m, n, sizeof n, 0, "attention.queries.weight"));
  if (!q || q->ndim != 2 || q->shape[0] != q->shape[1] || q->shape[0] < 1) {
    char got[64] = "";
    if (q) ct_shape_str(got, sizeof got, q);
    return err_set(t->err, "%s: tensor \"%s\" %s%s%s, expected [D,D] or [d_k,d_k] (%s)", t->what, n,
                   q ? "has shape [" : "is missing", got, q ? "]" : "", m->why);
  }
  int64_t k = q->shape[0], D = m->D;
  if (k == D) { // the later form: H only from the config
    if (!c->has_H)
      return err_set(
          t->err, "%s: %s has no \"n_heads\" (queries.weight [%lld,%lld] cannot say it): add \"n_heads\": H",
          t->what, c->src, (long long)D, (long long)D);
    m->H = c->H;
    if (D % m->H)
      return err_set(t->err,
                     "%s: %s says n_heads = %ld, which does not divide d_model = %lld (%s): give the "
                     "number of heads the model was built with",
                     t->what, c->src, c->H, (long long)D, m->why);
    m->dk = D; // the map is D×D (einsum_map); the heads' width is D/H
    return true;
  }
  if (D % k)
    return err_set(
        t->err,
        "%s: tensor \"%s\" [%lld,%lld] is one head's map, but its width %lld does not divide D = %lld "
        "(%s)",
        t->what, n, (long long)k, (long long)k, (long long)k, (long long)D, m->why);
  m->H = D / k, m->dk = k;
  if (c->has_H && c->H != m->H)
    return err_set(t->err,
                   "%s: %s says n_heads = %ld, but %s [%lld,%lld] is the map of one head of d_k = %lld: H = "
                   "%lld/%lld = %lld: give \"n_heads\": %lld or leave it out",
                   t->what, c->src, c->H, n, (long long)k, (long long)k, (long long)k, (long long)D,
                   (long long)k, (long long)m->H, (long long)m->H);
  return true;
}

static bool einsum_layer(Mod *m, int i) {
  CtTr *t = m->t;
  int64_t D = m->D;
  char n[160];
  snprintf(n, sizeof n, "layers.%d.self_attn.in_proj_weight", i);
  StTensor *o = ct_out_new(t, n, 2, 3 * D, D);
  if (!o || !(o->data = malloc(sizeof(float) * (size_t)(3 * D * D)))) return oom(m);
  // energy/√D = (Q/√H)Kᵀ/√d_k: the 1/√H rides on the queries map
  float qscale = m->sqrt_D ? (float)(1.0 / sqrt((double)m->H)) : 1.0f;
  if (!einsum_map(m, i, "queries", o->data, qscale) || !einsum_map(m, i, "keys", o->data + D * D, 1.0f) ||
      !einsum_map(m, i, "values", o->data + 2 * D * D, 1.0f))
    return false;
  static const char *const names[8] = {
      "norm1.weight",          "norm1.bias",          "norm2.weight",          "norm2.bias",
      "feed_forward.0.weight", "feed_forward.0.bias", "feed_forward.2.weight", "feed_forward.2.bias"};
  return move_layer(m, i, "attention.fc_out.weight", "self_attn.out_proj.weight", 2, D, D, false, m->why) &&
         move_layer(m, i, "attention.fc_out.bias", "self_attn.out_proj.bias", 1, D, 0, true, m->why) &&
         norms_and_ffn(m, i, names);
}

// ---------------------------------------------------------------- both
static int count_layers(const StFile *f) {
  int n = 0;
  for (int i = 0; i < f->n; i++) {
    int k = layer_of(f->tensors[i].name, NULL);
    if (k + 1 > n) n = k + 1;
  }
  return n;
}

// A tensor no translation took: the decoder or a classifier get their own advice.
static bool refuse_unused(Mod *m, Family fam, int n_layers) {
  CtTr *t = m->t;
  for (int i = 0; i < t->in->n; i++) {
    if (t->used[i]) continue;
    const char *s = t->in->tensors[i].name;
    if (!strncmp(s, "decoder.", 8))
      return err_set(t->err,
                     "%s: tensor \"%.80s\": the Transformer's decoder is not opened, only its encoder: save "
                     "model.encoder.state_dict()",
                     t->what, s);
    if (!strncmp(s, "classifier.", 11))
      return err_set(t->err,
                     "%s: tensor \"%.80s\": a classifier on the first position is not opened (Stepformer's "
                     "classifier takes the mean over positions): save model.encoder.state_dict()",
                     t->what, s);
    return err_set(t->err, "%s: tensor \"%.80s\" is not one of the %s modules (%d layers): %s", t->what, s,
                   fam == FAM_HEADS ? "per-head" : "einsum", n_layers, OPENS_MODULES);
  }
  return true;
}

bool course_modules_translate(CtTr *t, const CtConfig *c) {
  Family fam = family_of(t->in);
  if (fam == FAM_BARE) {
    const char *s = "";
    for (int i = 0; i < t->in->n && !*s; i++)
      if (bare_module(t->in->tensors[i].name)) s = t->in->tensors[i].name;
    return err_set(t->err,
                   "%s: tensor \"%.80s\": one attention module saved alone, without the token embedding "
                   "and the layers around it: save the whole encoder's state_dict() (see README)",
                   t->what, s);
  }
  Mod m = {.t = t, .pre = ""};
  for (int i = 0; i < t->in->n; i++)
    if (!strncmp(t->in->tensors[i].name, "encoder.", 8)) m.pre = "encoder.";
  const char *emb_name = fam == FAM_HEADS ? "embeddings.token_embeddings.weight" : "word_embedding.weight";
  const char *pos_name =
      fam == FAM_HEADS ? "embeddings.position_embeddings.weight" : "position_embedding.weight";
  char en[96], pn[96], n[160], from[200];
  snprintf(en, sizeof en, "%s%s", m.pre, emb_name);
  snprintf(pn, sizeof pn, "%s%s", m.pre, pos_name);
  StTensor *e = ct_take(t, en);
  if (!e || e->ndim != 2 || e->shape[0] < 1 || e->shape[1] < 1) {
    char got[64] = "";
    if (e) ct_shape_str(got, sizeof got, e);
    return err_set(t->err, "%s: the %s modules' names, but the token embedding \"%s\" [V, D] %s%s%s", t->what,
                   fam == FAM_HEADS ? "per-head" : "einsum", en, e ? "has shape [" : "is missing", got,
                   e ? "]" : "");
  }
  int64_t V = e->shape[0], D = m.D = e->shape[1];
  snprintf(m.why, sizeof m.why, "D = %lld from %s", (long long)D, en);
  int n_layers = count_layers(t->in);
  if (n_layers == 0)
    return err_set(t->err, "%s: no tensor %slayers.0.*: the encoder has at least one layer", t->what, m.pre);
  // the config: vocab always; n_heads where the shapes cannot say it
  if (!c->vocab)
    return err_set(t->err, "%s: %s has no \"vocab\": add the %lld words of %s, \"<unk>\" first", t->what,
                   c->src, (long long)V, en);
  if (c->n_vocab != V)
    return err_set(t->err,
                   "%s: %s lists %d words in \"vocab\", but %s [%lld,%lld] has %lld rows: make the two agree",
                   t->what, c->src, c->n_vocab, en, (long long)V, (long long)D, (long long)V);
  snprintf(from, sizeof from, "%s [%lld,%lld]", en, (long long)V, (long long)D);
  if (!ct_agree(t, c, FX_D, (long)D, from) || !ct_agree(t, c, FX_V, (long)V, from)) return false;
  snprintf(from, sizeof from, "%slayers.0..%d", m.pre, n_layers - 1);
  if (!ct_agree(t, c, FX_LAYERS, n_layers, from)) return false;
  if (c->has_fixed[FX_C])
    return err_set(t->err, "%s: %s gives num_classes, but the %s modules have no classifier", t->what, c->src,
                   fam == FAM_HEADS ? "per-head" : "einsum");
  if (!(fam == FAM_HEADS ? heads_sizes(&m, c) : einsum_sizes(&m, c))) return false;
  // the einsum module's energy scale and activation: the config, else what the weights prove
  char assumed[400] = "";
  const char *act = c->act[0] ? c->act : "gelu";
  if (fam == FAM_HEADS && !strcmp(c->energy_scale, "embed_size"))
    return err_set(t->err,
                   "%s: %s says energy_scale \"embed_size\", but the per-head AttentionHead divides its "
                   "scores by sqrt(d_k) = sqrt(k.size(-1)): leave the key out or write \"head_dim\"",
                   t->what, c->src);
  if (fam == FAM_EINSUM) {
    bool shared = m.dk != D, fc_bias = st_find(t->in, lname(&m, n, sizeof n, 0, "attention.fc_out.bias"));
    bool tutorial = m.tutorial = shared || fc_bias; // the notebook's maps are [D, D], fc_out without bias
    const char *proof = shared    ? "one d_k x d_k map shared by the heads"
                        : fc_bias ? "fc_out has a bias"
                                  : "D x D maps, fc_out without bias";
    m.sqrt_D = c->energy_scale[0] ? !strcmp(c->energy_scale, "embed_size") : tutorial;
    if (!c->act[0]) act = tutorial ? "relu" : "gelu";
    char guess[64] = ""; // what neither the config nor the weights said
    if (!c->energy_scale[0])
      snprintf(guess, sizeof guess, "%s", m.sqrt_D ? "energy/sqrt(D)" : "energy/sqrt(d_k)");
    if (!c->act[0])
      snprintf(guess + strlen(guess), sizeof guess - strlen(guess), "%s%s", guess[0] ? ", " : "",
               tutorial ? "ReLU" : "GELU");
    if (guess[0])
      snprintf(assumed, sizeof assumed,
               "assumed %s (%s: the %s form); %s's \"energy_scale\", \"activation\" say otherwise", guess,
               proof, tutorial ? "\"Transformer from scratch\" tutorial's" : "course notebook's", c->src);
  }
  find_F(&m, fam == FAM_HEADS ? "feed_forward.linear_1.weight" : "feed_forward.0.weight");

  if (!ct_out_move(t, "embed.weight", e)) return false;
  // positions: the table, or sinusoidal / none as the config says
  StTensor *pos = ct_take(t, pn);
  const char *pos_enc = c->pos[0] ? c->pos : "sinusoidal";
  if (pos) {
    if (!(pos = ct_need(t, pn, 2, pos->shape[0] > 0 ? pos->shape[0] : 1, D, m.why))) return false;
    if (c->pos[0] && strcmp(c->pos, "learned"))
      return err_set(t->err, "%s: %s says pos_encoding \"%s\", but the file has the position table %s",
                     t->what, c->src, c->pos, pn);
    snprintf(from, sizeof from, "%s (max_seq_len %lld)", pn, (long long)pos->shape[0]);
    if (!ct_agree(t, c, FX_M, (long)pos->shape[0], from) || !ct_out_move(t, "pos_embed.weight", pos))
      return false;
    pos_enc = "learned";
  } else if (!strcmp(pos_enc, "learned"))
    return err_set(t->err,
                   "%s: %s says pos_encoding \"learned\", but the position table %s [M,%lld] is missing",
                   t->what, c->src, pn, (long long)D);
  // the per-head family's embedding LayerNorm (optional)
  bool embed_norm = false;
  if (fam == FAM_HEADS) {
    snprintf(n, sizeof n, "%sembeddings.layer_norm.weight", m.pre);
    if (st_find(t->in, n)) {
      StTensor *g = ct_need(t, n, 1, D, 0, m.why), *b = NULL;
      snprintf(n, sizeof n, "%sembeddings.layer_norm.bias", m.pre);
      if (!g || !(b = ct_need(t, n, 1, D, 0, m.why)) || !ct_out_move(t, "embed_norm.weight", g) ||
          !ct_out_move(t, "embed_norm.bias", b))
        return false;
      embed_norm = true;
    }
  }
  // the layers
  bool bias = false;
  if (fam == FAM_HEADS) {
    lname(&m, n, sizeof n, 0, "attention.heads.0.q.bias");
    bias = st_find(t->in, n) != NULL;
  }
  for (int i = 0; i < n_layers; i++)
    if (!(fam == FAM_HEADS ? heads_layer(&m, i, bias) : einsum_layer(&m, i))) return false;
  snprintf(from, sizeof from, "layer 0's first feed-forward weight (d_ff %lld)", (long long)m.F);
  if (!ct_agree(t, c, FX_F, (long)m.F, from) || !refuse_unused(&m, fam, n_layers)) return false;

  // the metadata of the canonical form
  char eps[32], eeps[32], scale[200];
  snprintf(eps, sizeof eps, "%.9g", c->has_eps ? c->eps : 1e-5);
  snprintf(eeps, sizeof eeps, "%.9g", c->has_embed_eps ? c->embed_eps : 1e-12);
  bool nf = c->norm_first >= 0 ? c->norm_first : fam == FAM_HEADS;
  if (!ct_out_meta_int(t, "d_model", (long)D) || !ct_out_meta_int(t, "n_heads", (long)m.H) ||
      !ct_out_meta_int(t, "d_ff", (long)m.F) || !ct_out_meta_int(t, "n_layers", n_layers) ||
      !ct_out_meta(t, "activation", act) || !ct_out_meta(t, "norm_first", nf ? "1" : "0") ||
      !ct_out_meta(t, "causal", "0") || !ct_out_meta(t, "layer_norm_eps", eps) ||
      !ct_out_meta(t, "pos_encoding", pos_enc) || !ct_out_meta(t, "vocab", c->vocab) ||
      !ct_out_meta(t, "format", fam == FAM_HEADS ? "course-heads" : "course-einsum"))
    return false;
  if (embed_norm && !ct_out_meta(t, "embed_norm_eps", eeps)) return false;
  if (assumed[0] && !ct_out_meta(t, "course_assumed", assumed)) return false;
  if (fam == FAM_HEADS)
    return ct_out_meta(t, "course_module",
                       "the course's MultiHeadAttention of AttentionHeads + PositionWiseFeedForward");
  snprintf(scale, sizeof scale,
           "the module divides the energy by sqrt(D) = %.4g, not sqrt(d_k): Q is shown as queries(x)/sqrt(H) "
           "so that S = QK^T/sqrt(d_k) is its energy/sqrt(D)",
           sqrt((double)D));
  return ct_out_meta(t, "course_module",
                     !m.tutorial ? "the course notebook's einsum SelfAttention (D x D maps, no biases) + "
                                   "TransformerBlock"
                     : m.dk == D
                         ? "the tutorial's einsum SelfAttention (D x D maps, fc_out with a bias) + "
                           "TransformerBlock"
                         : "the tutorial's einsum SelfAttention (one d_k x d_k map shared by the heads, "
                           "shown as its block-diagonal D x D) + TransformerBlock") &&
         (m.H == 1 || !m.sqrt_D || ct_out_meta(t, "course_note", scale));
}
