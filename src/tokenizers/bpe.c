// bpe.c -- see bpe.h. Loading (vocab.json, merges.txt), the pre-tokenizing pattern, merging by
// rank with a heap, decoding and labels.
#include "bpe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fileio.h"  // defines: file_read_all, path_join
#include "ids.h"     // defines: Ids, ids_push
#include "unicode.h" // defines: uni_decode, uni_is_letter, uni_is_number

#define BPE_MAX_FILE (64u << 20) // a larger vocab.json or merges.txt is refused

// ---- the byte alphabet (GPT-2's bytes_to_unicode)

static bool bpe_byte_printable(int b) {
  return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
}

// The code point that stands for byte b: the 68 others are numbered from U+0100 in byte order,
// 0x00-0x20 (33 bytes), 0x7F-0xA0 (34 bytes), then 0xAD.
int32_t bpe_byte_char(int b) {
  if (bpe_byte_printable(b)) return b;
  return b <= 32 ? 256 + b : b <= 160 ? 256 + 33 + (b - 127) : 256 + 67;
}

// The byte that code point cp stands for, or -1.
int bpe_char_byte(int32_t cp) {
  if (cp >= 0 && cp < 256) return bpe_byte_printable(cp) ? cp : -1;
  if (cp < 256 + 33) return cp - 256;
  if (cp < 256 + 67) return cp - 256 - 33 + 127;
  return cp == 256 + 67 ? 173 : -1;
}

// ---- the merge table: (left id, right id) -> rank and joined id

static uint64_t bpe_pair_key(int a, int b) { return (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) + 1; }

static size_t bpe_pair_slot(const Bpe *b, uint64_t key) {
  uint64_t h = key * 0x9E3779B97F4A7C15ull;
  size_t mask = b->pair_cap - 1, i = (size_t)(h >> 20) & mask;
  while (b->pair_keys[i] && b->pair_keys[i] != key) i = (i + 1) & mask;
  return i;
}

// The rank of the pair (a, c) and the joined token's id in *joined, or -1 when they do not merge.
static int bpe_pair_rank(const Bpe *b, int a, int c, int *joined) {
  size_t i = bpe_pair_slot(b, bpe_pair_key(a, c));
  if (!b->pair_keys[i]) return -1;
  *joined = b->pair_id[i];
  return b->pair_rank[i];
}

// ---- loading

void bpe_free(Bpe *b) {
  free(b->tokens);
  free(b->token_lens);
  free(b->block);
  strtab_free(&b->index);
  free(b->pair_keys);
  free(b->pair_rank);
  free(b->pair_id);
  *b = (Bpe){0};
}

// vocab.json as the list of its (token, id) in file order, which bpe_read_vocab checks and keeps.
typedef struct {
  const char *token; // NUL-terminated
  double id;         // 0.5 when the value is not a number
} VocabItem;

static bool json_space(char c) { return (unsigned char)c <= 32; } // as cJSON skips it

// A plain vocab.json without cJSON, whose tree costs two allocations per token (most of the hub
// fuzzer's time under AddressSanitizer): one flat object of "token": id, the tokens without
// control characters and without escapes but \" \\ \/ (UTF-8 as it is), the ids one to nine
// digits. Anything else returns false, and cJSON reads the file (GPT-2's own, whose tokens are
// \u escapes, goes there too): the same list (cJSON keeps repeated keys, stops at the object's
// end, and reads "007" as 7), or its own error.
static bool vocab_items_fast(const char *json, size_t len, VocabItem **items, int *count, char **block) {
  size_t i = 0;
  while (i < len && json_space(json[i])) i++;
  if (i >= len || json[i] != '{') return false; // (also a UTF-8 byte order mark, which cJSON skips)
  i++;
  char *out = malloc(len + 1), *o = out;
  VocabItem *v = NULL;
  int n = 0, cap = 0;
  for (bool first = true;; first = false) {
    while (i < len && json_space(json[i])) i++;
    if (first && i < len && json[i] == '}') break; // {}
    if (i >= len || json[i] != '"' || !out) goto slow;
    const char *token = o;
    for (i++; i < len && json[i] != '"'; i++) {
      char c = json[i];
      if ((unsigned char)c < 32) goto slow;
      if (c == '\\') {
        if (i + 1 >= len || (json[i + 1] != '"' && json[i + 1] != '\\' && json[i + 1] != '/')) goto slow;
        c = json[++i];
      }
      *o++ = c;
    }
    if (i >= len) goto slow;
    *o++ = 0;
    for (i++; i < len && json_space(json[i]); i++) {
    }
    if (i >= len || json[i] != ':') goto slow;
    for (i++; i < len && json_space(json[i]); i++) {
    }
    long id = 0;
    int digits = 0;
    for (; i < len && json[i] >= '0' && json[i] <= '9' && digits < 10; i++, digits++)
      id = id * 10 + (json[i] - '0');
    if (digits == 0 || digits > 9 || (i < len && strchr("0123456789+-eE.", json[i]) && json[i])) goto slow;
    if (n == cap) {
      VocabItem *more = realloc(v, sizeof *v * (size_t)(cap = cap ? 2 * cap : 1024));
      if (!more) goto slow;
      v = more;
    }
    v[n++] = (VocabItem){token, (double)id};
    while (i < len && json_space(json[i])) i++;
    if (i < len && json[i] == ',') {
      i++;
      continue;
    }
    if (i < len && json[i] == '}') break;
    goto slow;
  }
  *items = v, *count = n, *block = out;
  return true;
slow:
  free(v);
  free(out);
  return false;
}

static bool bpe_read_vocab(Bpe *b, const char *json, size_t len, const char *name, Err *err) {
  const char *fix = "use the vocab.json of a GPT-2 (byte-level BPE) tokenizer";
  VocabItem *items = NULL;
  char *keys = NULL;
  cJSON *root = NULL;
  int n = 0;
  if (!vocab_items_fast(json, len, &items, &n, &keys)) {
    root = cJSON_ParseWithLength(json, len);
    if (!root) {
      const char *at = cJSON_GetErrorPtr();
      long off = at && at >= json && at <= json + len ? (long)(at - json) : -1;
      return err_set(err, "%s: not valid JSON (near byte %ld): %s", name, off, fix);
    }
    if (!cJSON_IsObject(root)) {
      cJSON_Delete(root);
      return err_set(err, "%s: not a JSON object of token -> id: %s", name, fix);
    }
    for (cJSON *it = root->child; it; it = it->next) n++;
    if (!(items = malloc(sizeof *items * (size_t)(n ? n : 1)))) {
      cJSON_Delete(root);
      return err_set(err, "%s: out of memory for %d tokens", name, n);
    }
    n = 0;
    for (cJSON *it = root->child; it; it = it->next)
      items[n++] = (VocabItem){it->string, cJSON_IsNumber(it) ? it->valuedouble : 0.5};
  }
  bool ok = false;
  size_t bytes = 0;
  for (int i = 0; i < n; i++) {
    double id = items[i].id; // a cast to int only within its range
    if (!(id >= -1e9 && id <= 1e9) || id != (double)(long)id) {
      err_set(err, "%s: the id of token \"%.80s\" is not a whole number below 1e9: %s", name, items[i].token,
              fix);
      goto done;
    }
    bytes += strlen(items[i].token) + 1;
  }
  if (n == 0) {
    err_set(err, "%s: the vocabulary is empty: %s", name, fix);
    goto done;
  }
  b->n_vocab = n;
  b->tokens = calloc((size_t)n, sizeof *b->tokens);
  b->token_lens = calloc((size_t)n, sizeof *b->token_lens);
  b->block = malloc(bytes);
  if (!b->tokens || !b->token_lens || !b->block || !strtab_init(&b->index, (size_t)n)) {
    err_set(err, "%s: out of memory for %d tokens", name, n);
    goto done;
  }
  char *p = b->block;
  for (int i = 0; i < n; i++) {
    const char *token = items[i].token;
    int id = (int)items[i].id, k = (int)strlen(token);
    if (id < 0 || id >= n) {
      err_set(err, "%s: token \"%.80s\" has id %d, outside 0..%d: ids must be 0..V-1, each once", name, token,
              id, n - 1);
      goto done;
    }
    if (b->tokens[id]) {
      err_set(err, "%s: tokens \"%.80s\" and \"%.80s\" share id %d: ids must be 0..V-1, each once", name,
              b->tokens[id], token, id);
      goto done;
    }
    memcpy(p, token, (size_t)k + 1);
    b->tokens[id] = p, b->token_lens[id] = k;
    int was = strtab_put(&b->index, p, k, id);
    if (was != -1) {
      err_set(err, "%s: token \"%.80s\" appears twice: %s", name, p, fix);
      goto done;
    }
    p += k + 1;
  }
  for (int c = 0; c < 256; c++) {
    char ch[5] = {0};
    int k = uni_encode(bpe_byte_char(c), ch);
    b->byte_id[c] = strtab_get(&b->index, ch, k);
    if (b->byte_id[c] < 0) {
      err_set(err, "%s: no token for byte 0x%02X (\"%s\"): not a byte-level BPE vocabulary: %s", name, c, ch,
              fix);
      goto done;
    }
  }
  ok = true;
done:
  free(items);
  free(keys);
  cJSON_Delete(root);
  return ok;
}

static bool bpe_read_merges(Bpe *b, const char *text, size_t len, const char *name, Err *err) {
  const char *fix = "use the merges.txt that came with this vocab.json";
  size_t lines = 1;
  for (size_t i = 0; i < len; i++) lines += text[i] == '\n';
  b->pair_cap = 16;
  while (b->pair_cap < 2 * lines) b->pair_cap *= 2;
  b->pair_keys = calloc(b->pair_cap, sizeof *b->pair_keys);
  b->pair_rank = malloc(b->pair_cap * sizeof *b->pair_rank);
  b->pair_id = malloc(b->pair_cap * sizeof *b->pair_id);
  if (!b->pair_keys || !b->pair_rank || !b->pair_id) return err_set(err, "%s: out of memory", name);
  char *joined = NULL;
  size_t joined_cap = 0;
  int rank = 0, line = 0;
  for (size_t i = 0; i < len;) {
    size_t end = i;
    while (end < len && text[end] != '\n') end++;
    size_t next = end + 1, n = end - i;
    line++;
    if (n > 0 && text[i + n - 1] == '\r') n--; // CRLF files
    const char *s = text + i;
    i = next;
    if (n == 0 || (line == 1 && n >= 8 && memcmp(s, "#version", 8) == 0)) continue;
    const char *sp = memchr(s, ' ', n);
    size_t na = sp ? (size_t)(sp - s) : 0, nb = sp ? n - na - 1 : 0;
    if (!sp || na == 0 || nb == 0 || memchr(sp + 1, ' ', nb)) {
      free(joined);
      return err_set(err, "%s:%d: expected two tokens separated by one space: %s", name, line, fix);
    }
    int a = strtab_get(&b->index, s, (int)na), c = strtab_get(&b->index, sp + 1, (int)nb);
    if (na + nb > joined_cap) {
      char *more = realloc(joined, joined_cap = 2 * (na + nb));
      if (!more) {
        free(joined);
        return err_set(err, "%s: out of memory", name);
      }
      joined = more;
    }
    memcpy(joined, s, na);
    memcpy(joined + na, sp + 1, nb);
    int ab = strtab_get(&b->index, joined, (int)(na + nb));
    if (a < 0 || c < 0 || ab < 0) {
      free(joined);
      return err_set(err, "%s:%d: \"%.*s\" uses or makes a token that vocab.json lacks: %s", name, line,
                     (int)(n > 80 ? 80 : n), s, fix);
    }
    size_t slot = bpe_pair_slot(b, bpe_pair_key(a, c));
    b->pair_keys[slot] = bpe_pair_key(a, c);
    b->pair_rank[slot] = rank++;
    b->pair_id[slot] = ab;
  }
  free(joined);
  b->n_merges = rank;
  return true;
}

bool bpe_load(Bpe *b, const char *vocab_json, size_t vocab_len, const char *vocab_name, const char *merges,
              size_t merges_len, const char *merges_name, Err *err) {
  *b = (Bpe){0};
  if (bpe_read_vocab(b, vocab_json, vocab_len, vocab_name, err) &&
      bpe_read_merges(b, merges, merges_len, merges_name, err))
    return true;
  bpe_free(b);
  return false;
}

bool bpe_load_dir(Bpe *b, const char *dir, Err *err) {
  *b = (Bpe){0};
  const char *names[2] = {"vocab.json", "merges.txt"};
  char path[2][4096];
  char *data[2] = {0};
  size_t len[2] = {0};
  for (int k = 0; k < 2; k++) {
    if (!path_join(path[k], sizeof path[k], dir, names[k])) {
      free(data[0]);
      return err_set(err, "%s: folder name too long", dir);
    }
    data[k] = file_read_all(path[k], &len[k], BPE_MAX_FILE, err);
    if (!data[k]) {
      char why[sizeof err->msg];
      snprintf(why, sizeof why, "%s", err->msg);
      free(data[0]);
      return err_set(err, "%s: a GPT-2 tokenizer folder holds vocab.json and merges.txt, as the hub has them",
                     why);
    }
  }
  bool ok = bpe_load(b, data[0], len[0], path[0], data[1], len[1], path[1], err);
  free(data[0]);
  free(data[1]);
  return ok;
}

int bpe_find(const Bpe *b, const char *token) { return strtab_get(&b->index, token, (int)strlen(token)); }

// ---- encoding

// A candidate merge: the symbols at pos (left) and its next, with the ids they had when it was
// made (it is stale when they changed since).
typedef struct {
  int rank, pos, left, right;
} BpeCand;

typedef struct {
  int *id, *next, *prev; // [m] symbols of one piece: a linked list; id -1 once merged into the left
  int cap;
  BpeCand *heap; // min-heap by (rank, pos)
  int n_heap, cap_heap;
  BpeCand *round; // the candidates of one rank, by position
  int n_round, cap_round;
} BpeWork;

static void bpe_work_free(BpeWork *w) {
  free(w->id);
  free(w->next);
  free(w->prev);
  free(w->heap);
  free(w->round);
}

static bool bpe_grow(void **p, int *cap, int need, size_t size) {
  if (need <= *cap) return true;
  int c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  void *more = realloc(*p, (size_t)c * size);
  if (!more) return false;
  *p = more, *cap = c;
  return true;
}

static bool bpe_cand_less(BpeCand a, BpeCand b) { return a.rank != b.rank ? a.rank < b.rank : a.pos < b.pos; }

static bool bpe_heap_push(BpeWork *w, BpeCand c) {
  if (!bpe_grow((void **)&w->heap, &w->cap_heap, w->n_heap + 1, sizeof *w->heap)) return false;
  int i = w->n_heap++;
  while (i > 0 && bpe_cand_less(c, w->heap[(i - 1) / 2])) {
    w->heap[i] = w->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  w->heap[i] = c;
  return true;
}

static BpeCand bpe_heap_pop(BpeWork *w) {
  BpeCand top = w->heap[0], last = w->heap[--w->n_heap];
  int i = 0, n = w->n_heap;
  for (;;) {
    int k = 2 * i + 1;
    if (k >= n) break;
    if (k + 1 < n && bpe_cand_less(w->heap[k + 1], w->heap[k])) k++;
    if (!bpe_cand_less(w->heap[k], last)) break;
    w->heap[i] = w->heap[k];
    i = k;
  }
  if (n > 0) w->heap[i] = last;
  return top;
}

// Queues the pair at pos (with its next symbol) when the two merge.
static bool bpe_offer(const Bpe *b, BpeWork *w, int pos) {
  if (pos < 0 || w->next[pos] < 0) return true;
  int joined, r = bpe_pair_rank(b, w->id[pos], w->id[w->next[pos]], &joined);
  if (r < 0) return true;
  return bpe_heap_push(w, (BpeCand){r, pos, w->id[pos], w->id[w->next[pos]]});
}

static bool bpe_cand_live(const BpeWork *w, BpeCand c) {
  return w->id[c.pos] == c.left && w->next[c.pos] >= 0 && w->id[w->next[c.pos]] == c.right;
}

// Merges the m bytes of one piece and appends their ids to out. The reference merges the
// lowest-ranked pair at every place it occurs, left to right, and only then looks again: so all
// candidates of one rank are taken off the heap before the pairs their merges make are queued.
static bool bpe_merge_piece(const Bpe *b, BpeWork *w, const unsigned char *s, int m, Ids *out) {
  int cap = w->cap;
  if (!bpe_grow((void **)&w->id, &cap, m, sizeof *w->id)) return false;
  cap = w->cap;
  if (!bpe_grow((void **)&w->next, &cap, m, sizeof *w->next)) return false;
  cap = w->cap;
  if (!bpe_grow((void **)&w->prev, &cap, m, sizeof *w->prev)) return false;
  w->cap = cap;
  for (int i = 0; i < m; i++) {
    w->id[i] = b->byte_id[s[i]];
    w->next[i] = i + 1 < m ? i + 1 : -1;
    w->prev[i] = i - 1;
  }
  w->n_heap = 0;
  for (int i = 0; i + 1 < m; i++)
    if (!bpe_offer(b, w, i)) return false;
  while (w->n_heap > 0) {
    int rank = w->heap[0].rank;
    w->n_round = 0;
    while (w->n_heap > 0 && w->heap[0].rank == rank) {
      BpeCand c = bpe_heap_pop(w);
      if (!bpe_cand_live(w, c)) continue;
      if (!bpe_grow((void **)&w->round, &w->cap_round, w->n_round + 1, sizeof *w->round)) return false;
      w->round[w->n_round++] = c;
    }
    for (int k = 0; k < w->n_round; k++) { // left to right; a merge may use up the next one's left half
      BpeCand d = w->round[k];
      if (!bpe_cand_live(w, d)) continue;
      int joined, right = w->next[d.pos];
      bpe_pair_rank(b, d.left, d.right, &joined);
      w->id[d.pos] = joined, w->id[right] = -1;
      w->next[d.pos] = w->next[right];
      if (w->next[right] >= 0) w->prev[w->next[right]] = d.pos;
    }
    for (int k = 0; k < w->n_round; k++) { // the pairs the new symbols make (stale ones are skipped later)
      int pos = w->round[k].pos;
      if (w->id[pos] < 0) continue;
      if (!bpe_offer(b, w, w->prev[pos]) || !bpe_offer(b, w, pos)) return false;
    }
  }
  for (int i = 0; i >= 0; i = w->next[i])
    if (!ids_push(out, w->id[i])) return false;
  return true;
}

// ---- the pre-tokenizing pattern

enum { BPE_SPACE, BPE_LETTER, BPE_NUMBER, BPE_OTHER };

// JavaScript's \s (the reference runs in Node): not quite Unicode's White_Space (no U+0085, but U+FEFF).
static bool bpe_is_space(int32_t c) {
  return (c >= 9 && c <= 13) || c == ' ' || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
         c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000 || c == 0xFEFF;
}

static int bpe_class(int32_t c) {
  if (c >= 0 && c < 128) { // ASCII without a table lookup
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return BPE_LETTER;
    if (c >= '0' && c <= '9') return BPE_NUMBER;
    return c == ' ' || (c >= 9 && c <= 13) ? BPE_SPACE : BPE_OTHER;
  }
  if (c == UNI_INVALID) return BPE_OTHER;
  if (bpe_is_space(c)) return BPE_SPACE;
  if (uni_is_letter(c)) return BPE_LETTER;
  if (uni_is_number(c)) return BPE_NUMBER;
  return BPE_OTHER;
}

// The length of a contraction ('s 't 're 've 'm 'll 'd, lowercase only) at s[0..n), or 0.
static int bpe_contraction(const char *s, size_t n) {
  if (n < 2 || s[0] != '\'') return 0;
  if (strchr("stmd", s[1])) return 2;
  if (n >= 3 &&
      ((s[1] == 'r' && s[2] == 'e') || (s[1] == 'v' && s[2] == 'e') || (s[1] == 'l' && s[2] == 'l')))
    return 3;
  return 0;
}

bool bpe_encode(const Bpe *b, const char *text, size_t len, int **ids, int *n, Err *err) {
  Ids out = {0};
  BpeWork w = {0};
  // characters: start offsets [nc + 1] and classes [nc]
  size_t *at = malloc((len + 1) * sizeof *at);
  unsigned char *cls = malloc(len + 1);
  bool ok = at && cls;
  size_t nc = 0;
  for (size_t i = 0; ok && i < len; nc++) {
    int32_t cp;
    at[nc] = i;
    i += (size_t)uni_decode(text + i, len - i, &cp);
    cls[nc] = (unsigned char)bpe_class(cp);
  }
  if (ok) at[nc] = len;
  for (size_t i = 0; ok && i < nc;) { // i, j: character indices of the piece [i, j)
    size_t j;
    int k = bpe_contraction(text + at[i], len - at[i]);
    if (k) {
      j = i + (size_t)k;
    } else if (text[at[i]] == ' ' && i + 1 < nc && cls[i + 1] != BPE_SPACE) { // " ?" and a run
      for (j = i + 2; j < nc && cls[j] == cls[i + 1];) j++;
    } else if (cls[i] != BPE_SPACE) {
      for (j = i + 1; j < nc && cls[j] == cls[i];) j++;
    } else { // \s+(?!\S) leaves the last space to the next piece when a non-space follows; else \s+
      for (j = i + 1; j < nc && cls[j] == BPE_SPACE;) j++;
      if (j < nc && j - 1 > i) j--;
    }
    size_t m = at[j] - at[i];
    if (m > (size_t)1 << 30)
      ok = false;
    else
      ok = bpe_merge_piece(b, &w, (const unsigned char *)text + at[i], (int)m, &out);
    i = j;
  }
  free(at);
  free(cls);
  bpe_work_free(&w);
  if (ok && !out.v) ok = (out.v = malloc(sizeof *out.v)) != NULL;
  if (!ok) {
    free(out.v);
    *ids = NULL, *n = 0;
    return err_set(err, "bpe: out of memory encoding %zu bytes of text", len);
  }
  *ids = out.v, *n = out.n;
  return true;
}

// ---- decoding

// Appends the bytes token id stands for to out (room for token_lens[id] bytes); returns their count.
static size_t bpe_token_bytes(const Bpe *b, int id, char *out) {
  const char *s = b->tokens[id];
  size_t n = (size_t)b->token_lens[id], k = 0;
  for (size_t i = 0; i < n;) {
    int32_t cp;
    i += (size_t)uni_decode(s + i, n - i, &cp);
    int byte = bpe_char_byte(cp);
    if (byte >= 0) out[k++] = (char)byte; // a character outside the byte alphabet is dropped
  }
  return k;
}

char *bpe_decode(const Bpe *b, const int *ids, int n, size_t *len) {
  size_t cap = 1;
  for (int i = 0; i < n; i++) {
    EXPECT(ids[i] >= 0 && ids[i] < b->n_vocab);
    cap += (size_t)b->token_lens[ids[i]];
  }
  char *out = malloc(cap);
  if (!out) return NULL;
  size_t k = 0;
  for (int i = 0; i < n; i++) k += bpe_token_bytes(b, ids[i], out + k);
  out[k] = 0;
  if (len) *len = k;
  return out;
}

size_t bpe_label_bytes(const char *bytes, size_t n, bool mark_space, char *out, size_t cap) {
  EXPECT(cap > 0);
  size_t k = 0;
  for (size_t i = 0; i < n;) {
    int32_t cp;
    int step = uni_decode(bytes + i, n - i, &cp);
    char piece[8];
    int m;
    if (cp == ' ' && mark_space)
      m = snprintf(piece, sizeof piece, "\u2423");
    else if (cp == '\n')
      m = snprintf(piece, sizeof piece, "\u21B5");
    else if (cp == '\t')
      m = snprintf(piece, sizeof piece, "\u21E5");
    else if (cp == UNI_INVALID || cp < 32 || cp == 127)
      m = snprintf(piece, sizeof piece, "\\x%02X", (unsigned char)bytes[i]);
    else
      m = uni_encode(cp, piece);
    if (k + (size_t)m + 1 > cap) break;
    memcpy(out + k, piece, (size_t)m);
    k += (size_t)m;
    i += (size_t)step;
  }
  out[k] = 0;
  return k;
}

size_t bpe_label(const Bpe *b, int id, char *out, size_t cap) {
  EXPECT(id >= 0 && id < b->n_vocab && cap > 0);
  char *bytes = malloc((size_t)b->token_lens[id] + 1);
  size_t k = bpe_label_bytes(bytes, bytes ? bpe_token_bytes(b, id, bytes) : 0, true, out, cap);
  free(bytes);
  return k;
}
