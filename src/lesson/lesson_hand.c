// lesson_hand.c -- `model: by hand`: a tiny model written in a lesson's front matter.
//
//     model: by hand
//     D: 3
//     projections: none     # q = k = v = Z: one head, d_k = D
//     positions: none       # P = 0: Z = OE
//     feed-forward: none    # the steps stop at AV
//     embeddings: |
//       jane     1 0 0
//       loves    0 1 0
//
// lesson_front.c hands each indented line under `embeddings: |` to lesson_hand_row and calls
// lesson_hand_finish after the front matter; every problem is an error at its FILE:LINE.
// lesson_hand_model builds the canonical model (model.h) through model_from_st.
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lesson_internal.h"

#define HAND_MAX_D 64      // a table a teacher writes by hand
#define HAND_MAX_WORDS 256 // rows of the table

// One row [b, e) (already trimmed): a word, then numbers separated by spaces or tabs.
void lesson_hand_row(LessonCtx *c, size_t b, size_t e) {
  Lesson *l = c->l;
  const char *t = c->text;
  int line = lesson_line_of(c, b);
  size_t we = b;
  while (we < e && t[we] != ' ' && t[we] != '\t') we++;
  if (we - b > TOKEN_MAX_BYTES) {
    lesson_error_at(c, b, "the word \"%.*s...\" is too long for a token (at most %d bytes)", 16, t + b,
                    TOKEN_MAX_BYTES);
    return;
  }
  if (l->hand_D <= 0) { // said once: the rows are checked against D
    if (l->hand_D == 0) lesson_error_at(c, b, "D: must come before the embeddings: table (D: 3)");
    l->hand_D = -1;
    return;
  }
  char word[TOKEN_MAX_BYTES + 1];
  for (size_t i = 0; i < we - b; i++) word[i] = (char)tolower((unsigned char)t[b + i]);
  word[we - b] = 0;
  for (int i = 0; i < l->n_hand; i++)
    if (!strcmp(l->hand_words[i], word)) {
      lesson_error_at(c, b, "the word \"%s\" is in the embeddings table twice: keep one row per word", word);
      return;
    }
  if (!strcmp(word, "<unk>")) {
    lesson_error_at(c, b, "<unk> is not written in the table: it is always there, with D zeros");
    return;
  }
  if (l->n_hand >= HAND_MAX_WORDS) {
    lesson_error_at(c, b, "the embeddings table has more than %d words", HAND_MAX_WORDS);
    return;
  }
  float v[HAND_MAX_D];
  int n = 0;
  for (size_t p = we; p < e;) {
    while (p < e && (t[p] == ' ' || t[p] == '\t')) p++;
    if (p >= e || t[p] == '#') break; // a comment ends the row
    size_t q = p;
    while (q < e && t[q] != ' ' && t[q] != '\t') q++;
    char num[48];
    snprintf(num, sizeof num, "%.*s", (int)(q - p < 47 ? q - p : 47), t + p);
    char *end;
    float x = strtof(num, &end);
    if (q - p > 47 || *end || end == num || !isfinite(x)) {
      lesson_error_at(c, p,
                      "\"%.*s\" in the row of \"%s\" is not a number: expected numbers like 1, 0 or -0.5",
                      (int)(q - p < 40 ? q - p : 40), t + p, word);
      return;
    }
    if (n >= HAND_MAX_D) {
      lesson_error_at(c, p, "the row of \"%s\" has more than %d numbers", word, HAND_MAX_D);
      return;
    }
    v[n++] = x;
    p = q;
  }
  if (n != l->hand_D) {
    lesson_error_line(c, line, "the row of \"%s\" has %d number%s: expected D = %d (one per dimension)", word,
                      n, n == 1 ? "" : "s", l->hand_D);
    return;
  }
  char **words = realloc(l->hand_words, sizeof(char *) * (size_t)(l->n_hand + 1));
  if (!words) return (void)(c->oom = true);
  l->hand_words = words;
  float *emb = realloc(l->hand_embed, sizeof(float) * (size_t)(l->n_hand + 1) * (size_t)l->hand_D);
  if (!emb) return (void)(c->oom = true);
  l->hand_embed = emb;
  if (!(words[l->n_hand] = lesson_strndup(word, strlen(word)))) return (void)(c->oom = true);
  memcpy(emb + (size_t)l->n_hand * (size_t)l->hand_D, v, sizeof(float) * (size_t)l->hand_D);
  l->n_hand++;
}

void lesson_hand_finish(LessonCtx *c, int switch_line) {
  Lesson *l = c->l;
  if (!l->by_hand) {
    if (switch_line)
      lesson_error_line(c, switch_line,
                        "D:, projections:, positions:, feed-forward: and embeddings: describe a model "
                        "written by hand: add model: by hand");
    return;
  }
  int line = l->model_line;
  if (l->hand_D == 0) lesson_error_line(c, line, "model: by hand needs D: (the width, 1..%d)", HAND_MAX_D);
  if (l->n_hand == 0)
    lesson_error_line(c, line, "model: by hand needs an embeddings: | table (one word and D numbers a line)");
  if (!l->no_projections || !l->no_positions || !l->no_feed_forward)
    lesson_error_line(c, line,
                      "model: by hand is the notebook's model without learned parts: say so with "
                      "projections: none, positions: none and feed-forward: none");
}

// A tensor of f: name, shape [s0] or [s0, s1] (s1 = 0), its floats copied from v (NULL: zeros).
static bool put(StFile *f, const char *name, int64_t s0, int64_t s1, const float *v) {
  StTensor *x = &f->tensors[f->n];
  memset(x, 0, sizeof *x);
  x->ndim = s1 ? 2 : 1;
  x->shape[0] = s0, x->shape[1] = s1;
  x->count = s0 * (s1 ? s1 : 1);
  snprintf(x->dtype, sizeof x->dtype, "F32");
  x->name = lesson_strndup(name, strlen(name));
  x->data = calloc((size_t)x->count, sizeof(float));
  f->n++;
  if (!x->name || !x->data) return false;
  if (v) memcpy(x->data, v, sizeof(float) * (size_t)x->count);
  return true;
}

static bool meta(StFile *f, const char *k, const char *v) {
  f->keys[f->n_meta] = lesson_strndup(k, strlen(k));
  f->values[f->n_meta] = lesson_strndup(v, strlen(v));
  f->n_meta++;
  return f->keys[f->n_meta - 1] && f->values[f->n_meta - 1];
}

Model *lesson_hand_model(const Lesson *l, Err *err) {
  int D = l->hand_D, V = l->n_hand + 1;
  if (!l->by_hand || D < 1 || D > HAND_MAX_D || l->n_hand < 1)
    return err_set(err, "%s: model: by hand needs D: and an embeddings: table", l->path ? l->path : "lesson"),
           NULL;
  StFile f = {0};
  f.tensors = calloc(12, sizeof(StTensor));
  f.keys = calloc(12, sizeof(char *));
  f.values = calloc(12, sizeof(char *));
  size_t vlen = 8;
  for (int i = 0; i < l->n_hand; i++) vlen += strlen(l->hand_words[i]) + 1;
  char *vocab = malloc(vlen);
  float *E = calloc((size_t)V * D, sizeof(float));      // [V, D], row 0 is <unk>: zeros
  float *I3 = calloc((size_t)3 * D * D, sizeof(float)); // [3D, D] = [I; I; I]
  float *ones = malloc(sizeof(float) * (size_t)D);      // LayerNorm gains
  bool ok = f.tensors && f.keys && f.values && vocab && E && I3 && ones;
  if (ok) {
    strcpy(vocab, "<unk>");
    for (int i = 0; i < l->n_hand; i++) strcat(strcat(vocab, "\n"), l->hand_words[i]);
    memcpy(E + D, l->hand_embed, sizeof(float) * (size_t)l->n_hand * D);
    for (int r = 0; r < 3 * D; r++) I3[(size_t)r * D + r % D] = 1.0f;
    for (int i = 0; i < D; i++) ones[i] = 1.0f;
    char d[16];
    snprintf(d, sizeof d, "%d", D);
    // the FFN stays (the canonical layer has one) with F = 1 and zero weights: it adds 0
    ok = put(&f, "embed.weight", V, D, E) && put(&f, "layers.0.self_attn.in_proj_weight", 3 * D, D, I3) &&
         put(&f, "layers.0.self_attn.out_proj.weight", D, D, I3) &&
         put(&f, "layers.0.linear1.weight", 1, D, NULL) && put(&f, "layers.0.linear1.bias", 1, 0, NULL) &&
         put(&f, "layers.0.linear2.weight", D, 1, NULL) && put(&f, "layers.0.linear2.bias", D, 0, NULL) &&
         put(&f, "layers.0.norm1.weight", D, 0, ones) && put(&f, "layers.0.norm1.bias", D, 0, NULL) &&
         put(&f, "layers.0.norm2.weight", D, 0, ones) && put(&f, "layers.0.norm2.bias", D, 0, NULL) &&
         meta(&f, "d_model", d) && meta(&f, "n_heads", "1") && meta(&f, "d_ff", "1") &&
         meta(&f, "n_layers", "1") && meta(&f, "pos_encoding", "none") && meta(&f, "vocab", vocab);
  }
  free(vocab), free(E), free(I3), free(ones);
  Model *m = NULL;
  if (!ok || !st_index(&f, "model: by hand", err)) {
    if (!ok) err_set(err, "out of memory");
    st_free(&f);
    return NULL;
  }
  m = model_from_st(&f, "model: by hand", err);
  if (m) snprintf(m->source, sizeof m->source, "by hand"); // the footer adds (D=3, H=1, ...)
  return m;
}
