// tokjson_load.c -- reading tokenizer.json (tokjson.h): the model's vocabulary and merges, the
// added tokens, and which normalizer, pre-tokenizer, post-processor and decoder the file names.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "bpe.h"    // defines: bpe_byte_char
#include "fileio.h" // defines: file_read_all, path_join
#include "nocov.h"  // defines: SF_NO_COVERAGE
#include "tokjson.h"
#include "unicode.h" // defines: uni_encode

#define TJ_FIX "use the tokenizer.json of a BPE model as the Hugging Face hub has it"

void tokjson_free(TokJson *t) {
  for (int i = 0; i < t->n_added; i++) free(t->added[i].content);
  free(t->added);
  free(t->tokens);
  free(t->token_lens);
  free(t->special);
  free(t->block);
  strtab_free(&t->index);
  free(t->pair_keys);
  free(t->pair_rank);
  free(t->pair_id);
  for (int i = 0; i < t->n_norm; i++) {
    free(t->norm[i].from);
    free(t->norm[i].to);
  }
  free(t->dec_space);
  *t = (TokJson){0};
}

// ---- small readers of the JSON tree

static const cJSON *item(const cJSON *o, const char *key) {
  return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}

static const char *str(const cJSON *o, const char *key) {
  const cJSON *v = item(o, key);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool flag(const cJSON *o, const char *key, bool dflt) {
  const cJSON *v = item(o, key);
  return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

static bool is_null(const cJSON *v) { return !v || cJSON_IsNull(v); }

// A whole number in 0..max as an int, or -1.
static int whole(const cJSON *v, int max) {
  if (!cJSON_IsNumber(v)) return -1;
  double d = v->valuedouble;
  return d >= 0 && d <= max && d == (double)(int)d ? (int)d : -1;
}

// ---- the model: vocabulary and merges

#define TJ_MAX_ID (1 << 24)

static uint64_t pair_key(int a, int b) { return (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1; }

size_t tokjson_pair_slot(const TokJson *t, uint64_t key); // tokjson.c
// SF_NO_COVERAGE (nocov.h): a hash probe, run for every adjacent pair of every word encoded (6 to
// 8 % of the tokjson fuzzer's time); pair_rank's found / not found keeps its coverage.
SF_NO_COVERAGE size_t tokjson_pair_slot(const TokJson *t, uint64_t key) {
  uint64_t h = key * 0x9E3779B97F4A7C15ull;
  size_t mask = t->pair_cap - 1, i = (size_t)(h >> 20) & mask;
  while (t->pair_keys[i] && t->pair_keys[i] != key) i = (i + 1) & mask;
  return i;
}

static bool read_vocab(TokJson *t, const cJSON *vocab, const cJSON *added, const char *name, Err *err) {
  if (!cJSON_IsObject(vocab))
    return err_set(err, "%s: model.vocab is not an object of token -> id: %s", name, TJ_FIX);
  int n = 0, top = -1;
  size_t bytes = 0;
  for (const cJSON *v = vocab->child; v; v = v->next) {
    int id = whole(v, TJ_MAX_ID);
    if (id < 0)
      return err_set(err, "%s: model.vocab: the id of \"%.80s\" is not a whole number in 0..%d: %s", name,
                     v->string, TJ_MAX_ID, TJ_FIX);
    if (id > top) top = id;
    bytes += strlen(v->string) + 1, n++;
  }
  int n_added = cJSON_GetArraySize(added);
  for (const cJSON *a = cJSON_IsArray(added) ? added->child : NULL; a; a = a->next) {
    int id = whole(item(a, "id"), TJ_MAX_ID);
    if (id < 0 || !str(a, "content") || !*str(a, "content"))
      return err_set(
          err, "%s: added_tokens: an entry without a whole \"id\" in 0..%d or a non-empty \"content\": %s",
          name, TJ_MAX_ID, TJ_FIX);
    if (id > top) top = id;
  }
  if (top < 0) return err_set(err, "%s: model.vocab is empty: %s", name, TJ_FIX);
  if (top >= 2 * (n + n_added) + 256)
    return err_set(err, "%s: ids reach %d for %d tokens: ids should be 0..V-1 with few gaps: %s", name, top,
                   n + n_added, TJ_FIX);
  t->n_vocab = top + 1;
  t->tokens = calloc((size_t)t->n_vocab, sizeof *t->tokens);
  t->token_lens = calloc((size_t)t->n_vocab, sizeof *t->token_lens);
  t->special = calloc((size_t)t->n_vocab, sizeof *t->special);
  t->block = malloc(bytes + 1);
  if (!t->tokens || !t->token_lens || !t->special || !t->block || !strtab_init(&t->index, (size_t)n))
    return err_set(err, "%s: out of memory for %d tokens", name, n);
  char *p = t->block;
  for (const cJSON *v = vocab->child; v; v = v->next) {
    int id = whole(v, TJ_MAX_ID), k = (int)strlen(v->string);
    if (t->tokens[id])
      return err_set(err, "%s: model.vocab: \"%.80s\" and \"%.80s\" share id %d: each id once: %s", name,
                     t->tokens[id], v->string, id, TJ_FIX);
    memcpy(p, v->string, (size_t)k + 1);
    if (strtab_put(&t->index, p, k, id) != -1)
      return err_set(err, "%s: model.vocab: \"%.80s\" appears twice: %s", name, p, TJ_FIX);
    t->tokens[id] = p, t->token_lens[id] = k;
    p += k + 1;
  }
  // added tokens: longest first, as the matcher wants them
  t->added = calloc((size_t)(n_added ? n_added : 1), sizeof *t->added);
  if (!t->added) return err_set(err, "%s: out of memory", name);
  for (const cJSON *a = cJSON_IsArray(added) ? added->child : NULL; a; a = a->next) {
    TokJsonAdded *x = &t->added[t->n_added];
    const char *content = str(a, "content");
    x->id = whole(item(a, "id"), TJ_MAX_ID);
    x->len = (int)strlen(content);
    if (!(x->content = malloc((size_t)x->len + 1))) return err_set(err, "%s: out of memory", name);
    memcpy(x->content, content, (size_t)x->len + 1);
    t->n_added++;
    x->special = flag(a, "special", false), x->lstrip = flag(a, "lstrip", false);
    x->rstrip = flag(a, "rstrip", false);
    if (flag(a, "single_word", false))
      return err_set(err, "%s: added token \"%.80s\" is single_word, which this reader does not support: %s",
                     name, content, TJ_FIX);
    t->tokens[x->id] = x->content, t->token_lens[x->id] = x->len;
    t->added_first[(unsigned char)content[0]] = true;
    t->special[x->id] = x->special;
  }
  for (int i = 1; i < t->n_added; i++) // insertion sort by length, longest first (stable)
    for (int j = i; j > 0 && t->added[j - 1].len < t->added[j].len; j--) {
      TokJsonAdded s = t->added[j];
      t->added[j] = t->added[j - 1], t->added[j - 1] = s;
    }
  return true;
}

// One merge, as "a b" or ["a", "b"]: its two halves.
static bool merge_halves(const cJSON *m, const char **a, size_t *na, const char **b, size_t *nb, char **tmp) {
  if (cJSON_IsString(m)) {
    const char *s = m->valuestring, *sp = strchr(s, ' ');
    if (!sp) return false;
    *a = s, *na = (size_t)(sp - s), *b = sp + 1, *nb = strlen(sp + 1);
    (void)tmp;
    return *na > 0 && *nb > 0;
  }
  if (cJSON_GetArraySize(m) != 2 || !cJSON_IsString(m->child) || !cJSON_IsString(m->child->next))
    return false;
  *a = m->child->valuestring, *na = strlen(*a);
  *b = m->child->next->valuestring, *nb = strlen(*b);
  return *na > 0 && *nb > 0;
}

static bool read_merges(TokJson *t, const cJSON *merges, const char *name, Err *err) {
  if (!cJSON_IsArray(merges)) return err_set(err, "%s: model.merges is not a list: %s", name, TJ_FIX);
  int n = cJSON_GetArraySize(merges);
  t->pair_cap = 16;
  while (t->pair_cap < 2 * (size_t)n) t->pair_cap *= 2;
  t->pair_keys = calloc(t->pair_cap, sizeof *t->pair_keys);
  t->pair_rank = malloc(t->pair_cap * sizeof *t->pair_rank);
  t->pair_id = malloc(t->pair_cap * sizeof *t->pair_id);
  if (!t->pair_keys || !t->pair_rank || !t->pair_id)
    return err_set(err, "%s: out of memory for %d merges", name, n);
  char *joined = NULL;
  size_t cap = 0;
  int rank = 0;
  for (const cJSON *m = merges->child; m; m = m->next, rank++) {
    const char *a, *b;
    size_t na, nb;
    if (!merge_halves(m, &a, &na, &b, &nb, NULL)) {
      free(joined);
      return err_set(err, "%s: model.merges[%d] is neither \"a b\" nor [\"a\", \"b\"]: %s", name, rank,
                     TJ_FIX);
    }
    if (na + nb > cap) {
      char *more = realloc(joined, cap = 2 * (na + nb));
      if (!more) {
        free(joined);
        return err_set(err, "%s: out of memory", name);
      }
      joined = more;
    }
    memcpy(joined, a, na);
    memcpy(joined + na, b, nb);
    int ia = strtab_get(&t->index, a, (int)na), ib = strtab_get(&t->index, b, (int)nb);
    int ab = strtab_get(&t->index, joined, (int)(na + nb));
    if (ia < 0 || ib < 0 || ab < 0) {
      free(joined);
      return err_set(err,
                     "%s: model.merges[%d] (\"%.40s\" \"%.40s\") uses or makes a token model.vocab lacks: %s",
                     name, rank, a, b, TJ_FIX);
    }
    size_t slot = tokjson_pair_slot(t, pair_key(ia, ib));
    t->pair_keys[slot] = pair_key(ia, ib);
    t->pair_rank[slot] = rank, t->pair_id[slot] = ab;
  }
  free(joined);
  t->n_merges = rank;
  return true;
}

static bool read_model(TokJson *t, const cJSON *model, const cJSON *added, const char *name, Err *err) {
  if (!cJSON_IsObject(model)) return err_set(err, "%s: no \"model\" object: %s", name, TJ_FIX);
  const char *type = str(model, "type");
  if (type && strcmp(type, "BPE"))
    return err_set(err, "%s: the model is %s; this reader knows BPE models only (Llama, Qwen, SmolLM, GPT-2)",
                   name, type);
  const cJSON *dropout = item(model, "dropout");
  if (!is_null(dropout) && !(cJSON_IsNumber(dropout) && dropout->valuedouble == 0))
    return err_set(err, "%s: model.dropout is set: a tokenizer for inference has none: %s", name, TJ_FIX);
  const char *cont = str(model, "continuing_subword_prefix"), *eow = str(model, "end_of_word_suffix");
  if ((cont && *cont) || (eow && *eow))
    return err_set(err, "%s: model.continuing_subword_prefix and end_of_word_suffix are not supported: %s",
                   name, TJ_FIX);
  if (!read_vocab(t, item(model, "vocab"), added, name, err) ||
      !read_merges(t, item(model, "merges"), name, err))
    return false;
  t->ignore_merges = flag(model, "ignore_merges", false);
  t->fuse_unk = flag(model, "fuse_unk", false);
  const char *unk = str(model, "unk_token");
  t->unk = unk ? tokjson_find(t, unk) : -1;
  if (unk && t->unk < 0)
    return err_set(err, "%s: model.unk_token \"%.80s\" is not a token: %s", name, unk, TJ_FIX);
  bool fallback = flag(model, "byte_fallback", false);
  for (int b = 0; b < 256; b++) {
    char hex[8];
    snprintf(hex, sizeof hex, "<0x%02X>", b);
    t->fallback[b] = fallback ? strtab_get(&t->index, hex, 6) : -1;
    if (fallback && t->fallback[b] < 0)
      return err_set(err, "%s: model.byte_fallback is set but the vocabulary lacks %s: %s", name, hex,
                     TJ_FIX);
  }
  return true;
}

// ---- normalizer, pre-tokenizer, post-processor, decoder

// A Replace's or Split's pattern as a plain string ({"String": "x"}), or NULL.
static const char *pattern_string(const cJSON *o) { return str(item(o, "pattern"), "String"); }

static char *dup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  return d ? memcpy(d, s, n) : NULL;
}

static bool read_normalizer(TokJson *t, const cJSON *o, const char *name, Err *err) {
  if (is_null(o)) return true;
  const char *type = str(o, "type");
  if (type && !strcmp(type, "Sequence")) {
    const cJSON *list = item(o, "normalizers");
    for (const cJSON *x = cJSON_IsArray(list) ? list->child : NULL; x; x = x->next)
      if (!read_normalizer(t, x, name, err)) return false;
    return true;
  }
  if (t->n_norm == (int)(sizeof t->norm / sizeof t->norm[0]))
    return err_set(err, "%s: the normalizer has more than 8 steps: %s", name, TJ_FIX);
  TokJsonNorm *s = &t->norm[t->n_norm];
  if (type && (!strcmp(type, "NFC") || !strcmp(type, "NFD"))) {
    s->kind = type[2] == 'C' ? TJ_NORM_NFC : TJ_NORM_NFD;
  } else if (type && !strcmp(type, "Prepend") && str(o, "prepend")) {
    s->kind = TJ_NORM_PREPEND;
    if (!(s->to = dup(str(o, "prepend")))) return err_set(err, "%s: out of memory", name);
  } else if (type && !strcmp(type, "Replace") && pattern_string(o) && *pattern_string(o) &&
             str(o, "content")) {
    s->kind = TJ_NORM_REPLACE;
    s->from = dup(pattern_string(o)), s->to = dup(str(o, "content"));
    if (!s->from || !s->to) {
      free(s->from), free(s->to);
      return err_set(err, "%s: out of memory", name);
    }
  } else {
    return err_set(err,
                   "%s: normalizer %s is not supported (NFC, NFD, Prepend, Replace of a string, and Sequence "
                   "are): %s",
                   name, type ? type : "(without a type)", TJ_FIX);
  }
  t->n_norm++;
  return true;
}

static int prepend_scheme(const cJSON *o) {
  const char *s = str(o, "prepend_scheme");
  if (s) return !strcmp(s, "never") ? 0 : !strcmp(s, "first") ? 1 : 2;
  return flag(o, "add_prefix_space", true) ? 2 : 0;
}

static bool read_pre(TokJson *t, const cJSON *o, const char *name, Err *err) {
  if (is_null(o)) return true;
  const char *type = str(o, "type");
  if (type && !strcmp(type, "Sequence")) {
    const cJSON *list = item(o, "pretokenizers");
    for (const cJSON *x = cJSON_IsArray(list) ? list->child : NULL; x; x = x->next)
      if (!read_pre(t, x, name, err)) return false;
    return true;
  }
  if (t->n_pre == (int)(sizeof t->pre / sizeof t->pre[0]))
    return err_set(err, "%s: the pre-tokenizer has more than 8 steps: %s", name, TJ_FIX);
  TokJsonPre *s = &t->pre[t->n_pre];
  if (type && !strcmp(type, "Split")) {
    const char *re = str(item(o, "pattern"), "Regex"), *behavior = str(o, "behavior");
    s->kind = TJ_PRE_SPLIT;
    s->pattern = re ? pretok_pattern(re) : 0;
    if (!s->pattern)
      return err_set(
          err,
          "%s: the pre-tokenizer's Split pattern %.200s%s is not one this reader knows (GPT-2's, Llama "
          "3's, Qwen 2's): %s",
          name, re ? re : "(not a regular expression)", re && strlen(re) > 200 ? "..." : "", TJ_FIX);
    if (!behavior || strcmp(behavior, "Isolated") || flag(o, "invert", false))
      return err_set(
          err, "%s: a Split pre-tokenizer with behavior %s%s: only Isolated, not inverted, is supported",
          name, behavior ? behavior : "(none)", flag(o, "invert", false) ? " (inverted)" : "");
  } else if (type && !strcmp(type, "ByteLevel")) {
    s->kind = TJ_PRE_BYTELEVEL;
    s->pattern = flag(o, "use_regex", true) ? PRETOK_GPT2 : 0;
    s->prefix_space = flag(o, "add_prefix_space", true);
    t->byte_level = true;
  } else if (type && !strcmp(type, "Digits")) {
    s->kind = TJ_PRE_DIGITS;
    s->individual = flag(o, "individual_digits", false);
  } else if (type && !strcmp(type, "Metaspace") && str(o, "replacement") && *str(o, "replacement")) {
    s->kind = TJ_PRE_METASPACE;
    s->prepend = prepend_scheme(o);
    s->split = flag(o, "split", true);
    if (strlen(str(o, "replacement")) >= sizeof t->meta)
      return err_set(
          err, "%s: the Metaspace replacement \"%.40s\" is longer than 7 bytes (it is one character, ▁): %s",
          name, str(o, "replacement"), TJ_FIX);
    if (t->meta[0] && strcmp(t->meta, str(o, "replacement")))
      return err_set(err, "%s: two Metaspace pre-tokenizers with different replacements: %s", name, TJ_FIX);
    snprintf(t->meta, sizeof t->meta, "%s", str(o, "replacement"));
  } else {
    return err_set(
        err,
        "%s: pre-tokenizer %s is not supported (Split, ByteLevel, Digits, Metaspace and Sequence are): %s",
        name, type ? type : "(without a type)", TJ_FIX);
  }
  t->n_pre++;
  return true;
}

// The ids of a TemplateProcessing's special token named id.
static bool template_ids(const TokJson *t, const cJSON *o, const char *id, int *out, int *n, const char *name,
                         Err *err) {
  const cJSON *ids = item(item(item(o, "special_tokens"), id), "ids");
  if (!cJSON_IsArray(ids))
    return err_set(err, "%s: post_processor: special token %.80s is not in its special_tokens: %s", name, id,
                   TJ_FIX);
  for (const cJSON *x = ids->child; x; x = x->next) {
    int v = whole(x, t->n_vocab - 1);
    if (v < 0 || *n == 4)
      return err_set(
          err, "%s: post_processor: special token %.80s has an id outside the vocabulary or more than 4: %s",
          name, id, TJ_FIX);
    out[(*n)++] = v;
  }
  return true;
}

static bool read_post(TokJson *t, const cJSON *o, const char *name, Err *err) {
  if (is_null(o)) return true;
  const char *type = str(o, "type");
  if (type && !strcmp(type, "Sequence")) {
    const cJSON *list = item(o, "processors");
    for (const cJSON *x = cJSON_IsArray(list) ? list->child : NULL; x; x = x->next)
      if (!read_post(t, x, name, err)) return false;
    return true;
  }
  if (type && !strcmp(type, "ByteLevel")) return true; // offsets only
  if (type && !strcmp(type, "TemplateProcessing")) {
    const cJSON *single = item(o, "single");
    bool after = false;
    for (const cJSON *x = cJSON_IsArray(single) ? single->child : NULL; x; x = x->next) {
      const char *sp = str(item(x, "SpecialToken"), "id");
      if (sp) {
        if (!template_ids(t, o, sp, after ? t->eos : t->bos, after ? &t->n_eos : &t->n_bos, name, err))
          return false;
      } else if (item(x, "Sequence")) {
        after = true;
      } else {
        return err_set(
            err, "%s: post_processor.single holds an item that is neither SpecialToken nor Sequence: %s",
            name, TJ_FIX);
      }
    }
    return true;
  }
  return err_set(
      err, "%s: post-processor %s is not supported (TemplateProcessing, ByteLevel and Sequence are): %s",
      name, type ? type : "(without a type)", TJ_FIX);
}

static bool read_decoder(TokJson *t, const cJSON *o, const char *name, Err *err) {
  if (is_null(o)) return true;
  const char *type = str(o, "type");
  if (type && !strcmp(type, "Sequence")) {
    const cJSON *list = item(o, "decoders");
    for (const cJSON *x = cJSON_IsArray(list) ? list->child : NULL; x; x = x->next)
      if (!read_decoder(t, x, name, err)) return false;
    return true;
  }
  const char *content = str(o, "content");
  if (type && !strcmp(type, "ByteLevel")) {
    t->dec_bytelevel = true;
  } else if (type && !strcmp(type, "ByteFallback")) {
    t->dec_fallback = true;
  } else if (type && !strcmp(type, "Fuse")) {
  } else if (type && !strcmp(type, "Replace") && pattern_string(o) && content && !strcmp(content, " ") &&
             *pattern_string(o)) {
    free(t->dec_space);
    if (!(t->dec_space = dup(pattern_string(o)))) return err_set(err, "%s: out of memory", name);
  } else if (type && !strcmp(type, "Strip") && content && !strcmp(content, " ")) {
    t->dec_strip = whole(item(o, "start"), 1 << 20);
    if (t->dec_strip < 0 || whole(item(o, "stop"), 0) != 0)
      return err_set(err, "%s: a Strip decoder that strips at the end: only leading spaces are supported: %s",
                     name, TJ_FIX);
  } else if (type && !strcmp(type, "Metaspace") && str(o, "replacement") && *str(o, "replacement")) {
    free(t->dec_space);
    if (!(t->dec_space = dup(str(o, "replacement")))) return err_set(err, "%s: out of memory", name);
    t->dec_meta = prepend_scheme(o) != 0;
  } else {
    return err_set(
        err,
        "%s: decoder %s is not supported (ByteLevel, ByteFallback, Fuse, Replace by a space, Strip, "
        "Metaspace and Sequence are): %s",
        name, type ? type : "(without a type)", TJ_FIX);
  }
  return true;
}

bool tokjson_load(TokJson *t, const char *json, size_t len, const char *name, Err *err) {
  *t = (TokJson){0};
  t->unk = -1;
  cJSON *root = cJSON_ParseWithLength(json, len);
  if (!root) {
    const char *at = cJSON_GetErrorPtr();
    long off = at && at >= json && at <= json + len ? (long)(at - json) : -1;
    return err_set(err, "%s: not valid JSON (near byte %ld): %s", name, off, TJ_FIX);
  }
  const cJSON *added = item(root, "added_tokens");
  bool ok = cJSON_IsObject(root);
  if (!ok) err_set(err, "%s: not a JSON object: %s", name, TJ_FIX);
  if (ok && !is_null(added) && !cJSON_IsArray(added))
    ok = err_set(err, "%s: added_tokens is not a list: %s", name, TJ_FIX);
  ok = ok && read_model(t, item(root, "model"), added, name, err) &&
       read_normalizer(t, item(root, "normalizer"), name, err) &&
       read_pre(t, item(root, "pre_tokenizer"), name, err) &&
       read_post(t, item(root, "post_processor"), name, err) &&
       read_decoder(t, item(root, "decoder"), name, err);
  if (ok && t->byte_level)
    for (int b = 0; b < 256; b++) {
      char ch[5] = {0};
      int k = uni_encode(bpe_byte_char(b), ch);
      t->byte_id[b] = strtab_get(&t->index, ch, k);
    }
  cJSON_Delete(root);
  if (!ok) tokjson_free(t);
  return ok;
}

bool tokjson_load_file(TokJson *t, const char *path, Err *err) {
  *t = (TokJson){0};
  char file[4096];
  size_t n = strlen(path);
  struct stat st;
  bool dir = n == 0 || path[n - 1] == '/' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode));
  if (dir && !path_join(file, sizeof file, path, "tokenizer.json"))
    return err_set(err, "%s: path too long", path);
  if (!dir) snprintf(file, sizeof file, "%s", path);
  size_t len;
  char *json = file_read_all(file, &len, TOKJSON_MAX_FILE, err);
  if (!json) {
    char why[sizeof err->msg];
    snprintf(why, sizeof why, "%s", err->msg);
    return err_set(err, "%s: give a tokenizer.json, or the hub folder that holds one", why);
  }
  bool ok = tokjson_load(t, json, len, file, err);
  free(json);
  return ok;
}
