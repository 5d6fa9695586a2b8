// tokjson_spm.c -- a SentencePiece BPE vocabulary given as tokens, scores and token types (GGUF's
// tokenizer.ggml.model = llama: Llama 2, TinyLlama, Mistral) made into a TokJson (tokjson.h), so that
// tokjson_encode gives the ids llama.cpp's llm_tokenizer_spm gives (src/llama-vocab.cpp):
//  - every token whose text splits into two tokens is the merge of that pair; a merge's priority is
//    the score of the token it makes (highest first; equal scores: the leftmost pair first, as
//    llama.cpp's queue) -- the merges rank of tokenizer.json, where the converter ordered the merges
//    by those scores, so a converted model gives tokenizer.json's ids;
//  - CONTROL and UNKNOWN tokens are special added tokens, USER_DEFINED ones plain added tokens: all
//    matched in the raw text before anything else (the others only when parse_special);
//  - the text between them: a space prepended when add_space_prefix (to each piece, as llama.cpp
//    does after every special token), then every space written as "▁", then merged as one word
//    from its characters; a character without a token is its bytes' <0xXX> tokens (BYTE tokens),
//    or the unknown token when the vocabulary has no byte tokens;
//  - BOS before the text when add_bos, EOS after it when add_eos;
//  - decoding: "▁" back to a space, <0xXX> to its byte, the leading space of the text dropped
//    when add_space_prefix (tokenizer.json's Replace, ByteFallback, Fuse, Strip decoders).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tokjson.h"
#include "unicode.h" // defines: uni_decode

#define SPM_MAX_ID (1 << 24)
#define SPM_SPACE "\xE2\x96\x81" // ▁ U+2581

size_t tokjson_pair_slot(const TokJson *t, uint64_t key); // tokjson_load.c

typedef struct {
  int left, right, joined;
  float score;
} SpmPair;

static int by_score(const void *a, const void *b) { // highest score first
  float x = ((const SpmPair *)a)->score, y = ((const SpmPair *)b)->score;
  return x > y ? -1 : x < y ? 1 : 0;
}

typedef struct {
  int id, len;
} SpmAdded;

static int longest_first(const void *a, const void *b) { // ties: by id
  const SpmAdded *x = a, *y = b;
  return x->len != y->len ? y->len - x->len : x->id - y->id;
}

static char *dup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  return d ? memcpy(d, s, n) : NULL;
}

static bool hex_digit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F') || (c >= 'a' && c <= 'f');
}

// The vocabulary's strings, its index and the added tokens.
static bool spm_vocab(TokJson *t, const TokJsonSpm *s, Err *err) {
  int V = s->n;
  size_t bytes = 1;
  for (int i = 0; i < V; i++) {
    if (s->lens[i] == 0 || s->lens[i] > 4096 || memchr(s->tokens[i], 0, s->lens[i]))
      return err_set(err, "%s: token %d is %s: %s", s->name, i,
                     s->lens[i] == 0     ? "empty"
                     : s->lens[i] > 4096 ? "longer than 4096 bytes"
                                         : "holding a 0 byte",
                     TOKJSON_SPM_FIX);
    const char *x = s->tokens[i];
    int shown = s->lens[i] < 40 ? (int)s->lens[i] : 40; // (x is not NUL-terminated)
    int ty = s->types ? s->types[i] : TJ_TOKEN_NORMAL;
    if (ty < TJ_TOKEN_NORMAL || ty > TJ_TOKEN_BYTE)
      return err_set(err, "%s: token %d (\"%.*s\") has type %d; types are 1 (normal) to 6 (byte): %s",
                     s->name, i, shown, x, ty, TOKJSON_SPM_FIX);
    if (ty == TJ_TOKEN_BYTE &&
        !(s->lens[i] == 6 && !memcmp(x, "<0x", 3) && hex_digit(x[3]) && hex_digit(x[4]) && x[5] == '>'))
      return err_set(err, "%s: token %d (\"%.*s\") is of type BYTE but not of the form <0xHH>: %s", s->name,
                     i, shown, x, TOKJSON_SPM_FIX);
    if (s->scores && isnan(s->scores[i]))
      return err_set(err, "%s: token %d (\"%.*s\") has a score that is not a number: %s", s->name, i, shown,
                     x, TOKJSON_SPM_FIX);
    bytes += s->lens[i] + 1;
  }
  t->n_vocab = V;
  t->tokens = calloc((size_t)V, sizeof *t->tokens);
  t->token_lens = calloc((size_t)V, sizeof *t->token_lens);
  t->special = calloc((size_t)V, sizeof *t->special);
  t->block = malloc(bytes);
  if (!t->tokens || !t->token_lens || !t->special || !t->block || !strtab_init(&t->index, (size_t)V))
    return err_set(err, "%s: out of memory for %d tokens", s->name, V);
  char *p = t->block;
  int n_added = 0;
  for (int i = 0; i < V; i++) {
    int k = (int)s->lens[i];
    memcpy(p, s->tokens[i], (size_t)k);
    p[k] = 0;
    int before = strtab_put(&t->index, p, k, i);
    if (before == -2) return err_set(err, "%s: out of memory for %d tokens", s->name, V);
    if (before != -1)
      return err_set(err, "%s: token \"%.80s\" is there twice (ids %d and %d): %s", s->name, p, before, i,
                     TOKJSON_SPM_FIX);
    t->tokens[i] = p, t->token_lens[i] = k;
    p += k + 1;
    int ty = s->types ? s->types[i] : TJ_TOKEN_NORMAL;
    if (ty == TJ_TOKEN_CONTROL || ty == TJ_TOKEN_UNKNOWN || ty == TJ_TOKEN_USER_DEFINED) n_added++;
  }
  // added tokens: CONTROL and UNKNOWN (special), USER_DEFINED; longest first
  SpmAdded *order = malloc(sizeof *order * (size_t)(n_added ? n_added : 1));
  t->added = calloc((size_t)(n_added ? n_added : 1), sizeof *t->added);
  if (!order || !t->added) return free(order), err_set(err, "%s: out of memory", s->name);
  int m = 0;
  for (int i = 0; s->types && i < V; i++) {
    int ty = s->types[i];
    if (ty == TJ_TOKEN_CONTROL || ty == TJ_TOKEN_UNKNOWN || ty == TJ_TOKEN_USER_DEFINED)
      order[m++] = (SpmAdded){i, t->token_lens[i]};
  }
  qsort(order, (size_t)m, sizeof *order, longest_first);
  for (int k = 0; k < m; k++) {
    TokJsonAdded *a = &t->added[k];
    int id = order[k].id;
    a->id = id, a->len = order[k].len;
    a->special = s->types[id] != TJ_TOKEN_USER_DEFINED;
    if (!(a->content = malloc((size_t)a->len + 1)))
      return free(order), err_set(err, "%s: out of memory", s->name);
    memcpy(a->content, t->tokens[id], (size_t)a->len + 1);
    t->n_added++;
    t->special[id] = a->special;
    t->added_first[(unsigned char)a->content[0]] = true;
  }
  free(order);
  return true;
}

// The merges: every token that splits into two tokens, ranked by its score.
static bool spm_merges(TokJson *t, const TokJsonSpm *s, Err *err) {
  size_t n = 0;
  for (int id = 0; id < t->n_vocab; id++) {
    const char *x = t->tokens[id];
    size_t len = (size_t)t->token_lens[id];
    int32_t cp;
    for (size_t j = (size_t)uni_decode(x, len, &cp); j < len; j += (size_t)uni_decode(x + j, len - j, &cp))
      if (strtab_get(&t->index, x, (int)j) >= 0 && strtab_get(&t->index, x + j, (int)(len - j)) >= 0) n++;
  }
  SpmPair *pairs = malloc(sizeof *pairs * (n ? n : 1));
  t->pair_cap = 16;
  while (t->pair_cap < 2 * n) t->pair_cap *= 2;
  t->pair_keys = calloc(t->pair_cap, sizeof *t->pair_keys);
  t->pair_rank = malloc(t->pair_cap * sizeof *t->pair_rank);
  t->pair_id = malloc(t->pair_cap * sizeof *t->pair_id);
  if (!pairs || !t->pair_keys || !t->pair_rank || !t->pair_id)
    return free(pairs), err_set(err, "%s: out of memory for %zu merges", s->name, n);
  size_t k = 0;
  for (int id = 0; id < t->n_vocab; id++) {
    const char *x = t->tokens[id];
    size_t len = (size_t)t->token_lens[id];
    int32_t cp;
    for (size_t j = (size_t)uni_decode(x, len, &cp); j < len; j += (size_t)uni_decode(x + j, len - j, &cp)) {
      int a = strtab_get(&t->index, x, (int)j), b = strtab_get(&t->index, x + j, (int)(len - j));
      if (a >= 0 && b >= 0) pairs[k++] = (SpmPair){a, b, id, s->scores ? s->scores[id] : 0.0f};
    }
  }
  qsort(pairs, n, sizeof *pairs, by_score);
  int rank = 0;
  for (size_t i = 0; i < n; i++) {
    if (i && pairs[i].score != pairs[i - 1].score) rank++; // equal scores, equal ranks: leftmost first
    uint64_t key = (((uint64_t)(uint32_t)pairs[i].left << 32) | (uint32_t)pairs[i].right) + 1;
    size_t slot = tokjson_pair_slot(t, key);
    t->pair_keys[slot] = key, t->pair_rank[slot] = rank, t->pair_id[slot] = pairs[i].joined;
  }
  t->n_merges = (int)n;
  free(pairs);
  return true;
}

bool tokjson_from_spm(TokJson *t, const TokJsonSpm *s, Err *err) {
  *t = (TokJson){0};
  t->unk = -1;
  if (s->n < 1 || s->n > SPM_MAX_ID)
    return err_set(err, "%s: %d tokens; a vocabulary has 1 to %d: %s", s->name, s->n, SPM_MAX_ID,
                   TOKJSON_SPM_FIX);
  const int *special[] = {&s->bos, &s->eos, &s->unk};
  const char *what[] = {"BOS", "EOS", "unknown"};
  for (int i = 0; i < 3; i++)
    if (*special[i] >= s->n || *special[i] < -1)
      return err_set(err, "%s: the %s token id %d is not a token (0..%d): %s", s->name, what[i], *special[i],
                     s->n - 1, TOKJSON_SPM_FIX);
  if ((s->add_bos && s->bos < 0) || (s->add_eos && s->eos < 0))
    return err_set(err, "%s: add_%s_token is set but the file names no %s token: %s", s->name,
                   s->add_bos && s->bos < 0 ? "bos" : "eos", s->add_bos && s->bos < 0 ? "BOS" : "EOS",
                   TOKJSON_SPM_FIX);
  bool ok = spm_vocab(t, s, err) && spm_merges(t, s, err);
  bool has_bytes = false;
  for (int i = 0; ok && s->types && i < s->n; i++) has_bytes |= s->types[i] == TJ_TOKEN_BYTE;
  for (int b = 0; ok && b < 256; b++) {
    char hex[8];
    snprintf(hex, sizeof hex, "<0x%02X>", b);
    t->fallback[b] = has_bytes ? strtab_get(&t->index, hex, 6) : -1;
    if (has_bytes && t->fallback[b] < 0)
      ok = err_set(err, "%s: the vocabulary has byte tokens but lacks %s (all 256 are needed): %s", s->name,
                   hex, TOKJSON_SPM_FIX);
  }
  if (ok) {
    t->unk = s->unk, t->fuse_unk = true;
    if (s->add_space_prefix) {
      t->norm[t->n_norm].kind = TJ_NORM_PREPEND;
      ok = (t->norm[t->n_norm++].to = dup(SPM_SPACE)) != NULL;
    }
    t->norm[t->n_norm].kind = TJ_NORM_REPLACE;
    t->norm[t->n_norm].from = dup(" "), t->norm[t->n_norm].to = dup(SPM_SPACE);
    ok = ok && t->norm[t->n_norm].from && t->norm[t->n_norm].to;
    t->n_norm++;
    if (s->add_bos) t->bos[t->n_bos++] = s->bos;
    if (s->add_eos) t->eos[t->n_eos++] = s->eos;
    t->dec_space = dup(SPM_SPACE);
    t->dec_fallback = true;
    t->dec_strip = s->add_space_prefix ? 1 : 0;
    ok = ok && t->dec_space;
    if (!ok) err_set(err, "%s: out of memory", s->name);
  }
  if (!ok) tokjson_free(t);
  return ok;
}
