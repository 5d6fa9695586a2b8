// test_gguf.c -- the GGUF reader and dequantizer against the fixtures of tests/gen_gguf_fixtures.py.
//
// types.gguf: every metadata value type (arrays, strings, nested arrays) read back; for each type
// the reader dequantizes, the tensor quantized by the project's ggml-following quantizer and a
// tensor of random blocks, each dequantized bit for bit as the Python dequantizer (ggml's
// dequantize_row_*) did. v2-align64.gguf: version 2, alignment 64. bad/: each lying file refused
// with its one line. Every prefix of types.gguf's header is refused too (a copy of exactly that
// many bytes, so that ASan sees any read past it).
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fileio.h"     // defines: file_read_all
#include "gguf.h"       // defines: GgufFile, gguf_open, gguf_parse
#include "gguf_quant.h" // defines: gguf_dequantize

static char path_buf[4096];
static const char *ref(const char *name) {
  snprintf(path_buf, sizeof path_buf, "%s/ref/gguf/%s", check_test_dir(), name);
  return path_buf;
}

// The tensor's values, dequantized (malloc'd), or NULL.
static float *values(const GgufTensor *t) {
  float *y = malloc(sizeof(float) * (size_t)t->count);
  Err err = {0};
  if (y && !gguf_dequantize(t->type, t->data, y, t->count, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    free(y);
    return NULL;
  }
  return y;
}

// Tensor name equals expected (an F32 tensor) bit for bit.
static void same_bits(const GgufFile *g, const char *name, const char *expected) {
  const GgufTensor *t = gguf_find_tensor(g, name), *x = gguf_find_tensor(g, expected);
  CHECK(t && x && t->count == x->count && x->type == GGML_F32, "%s and %s are there", name, expected);
  if (!t || !x || t->count != x->count) return;
  float *a = values(t), *b = values(x);
  CHECK(a && b, "%s dequantizes", name);
  int64_t diff = 0, first = -1;
  for (int64_t i = 0; a && b && i < t->count; i++)
    if (memcmp(&a[i], &b[i], 4)) diff++, first = first < 0 ? i : first;
  CHECK(diff == 0, "%s: %lld of %lld values differ from gguf_py's (first at %lld: %.9g vs %.9g)", name,
        (long long)diff, (long long)t->count, (long long)first, first >= 0 ? a[first] : 0.0,
        first >= 0 ? b[first] : 0.0);
  free(a), free(b);
}

// Every block of tensor name as stored (gguf_block): its values are the dequantized tensor's, and
// (code - offset) · scale - min of its codes, sub-block by sub-block, gives them again.
static void blocks(const GgufFile *g, const char *name) {
  const GgufTensor *t = gguf_find_tensor(g, name);
  float *y = t ? values(t) : NULL;
  if (!y) return;
  int block, bytes, bad = 0;
  gguf_type_size(t->type, &block, &bytes);
  for (int64_t b = 0; b < t->count / block; b++) {
    GgufBlock k;
    if (!gguf_block(t->type, t->data, b, &k)) {
      bad++;
      continue;
    }
    bad += k.n != block || k.n_sub * k.sub != k.n ||
           memcmp(k.values, y + b * block, sizeof(float) * (size_t)block);
    for (int i = 0; i < k.n; i++) {
      float v = (float)(k.codes[i] - k.offset) * k.scale[i / k.sub] - k.min[i / k.sub];
      bad += memcmp(&v, &k.values[i], 4) != 0 || k.codes[i] >= 1u << k.bits;
    }
  }
  CHECK(bad == 0, "%s: %d mismatches between the blocks as stored and the dequantized values", name, bad);
  free(y);
}

static void types_file(void) {
  GgufFile g;
  Err err = {0};
  CHECK(gguf_open(&g, ref("types.gguf"), &err), "types.gguf opens: %s", err.msg);
  if (!g.kv) return;
  CHECK(g.version == 3 && g.alignment == 32, "version %u alignment %u", g.version, g.alignment);
  uint64_t u;
  double f;
  bool b;
  const char *s;
  size_t n;
  CHECK(gguf_get_str(&g, "general.architecture", &s, &n) && n == 4 && !memcmp(s, "test", 4), "architecture");
  CHECK(gguf_get_uint(&g, "t.u8", &u) && u == 200, "u8");
  CHECK(gguf_get_float(&g, "t.i8", &f) && f == -100 && !gguf_get_uint(&g, "t.i8", &u),
        "i8 (negative: no uint)");
  CHECK(gguf_get_uint(&g, "t.u16", &u) && u == 60000, "u16");
  CHECK(gguf_get_float(&g, "t.i16", &f) && f == -30000, "i16");
  CHECK(gguf_get_uint(&g, "t.u32", &u) && u == 4000000000u, "u32");
  CHECK(gguf_get_float(&g, "t.i32", &f) && f == -2000000000, "i32");
  CHECK(gguf_get_float(&g, "t.f32", &f) && f == 0.5, "f32");
  CHECK(gguf_get_bool(&g, "t.bool", &b) && b, "bool");
  CHECK(gguf_get_str(&g, "t.str", &s, &n) && n == 6 && !memcmp(s, "h\xc3\xa9llo", 6), "string");
  CHECK(gguf_get_uint(&g, "t.u64", &u) && u == 1ull << 60, "u64");
  CHECK(gguf_get_float(&g, "t.i64", &f) && f == -1099511627776.0, "i64");
  CHECK(gguf_get_float(&g, "t.f64", &f) && f == 0.1, "f64");
  CHECK(!gguf_get_str(&g, "t.u8", &s, &n) && !gguf_get_uint(&g, "t.str", &u) &&
            !gguf_get_uint(&g, "nope", &u),
        "wrong kinds and absent keys are refused");
  const GgufKV *kv = gguf_find(&g, "t.arr_i32");
  CHECK(kv && kv->type == GGUF_ARRAY && kv->elem_type == GGUF_I32 && kv->n == 3, "array of i32");
  CHECK(kv && gguf_arr_number(kv, 1, &f) && f == -2 && !gguf_arr_number(kv, 3, &f),
        "element 1 is -2; 3 is out");
  kv = gguf_find(&g, "t.arr_str");
  const char *ss[3];
  size_t ls[3];
  CHECK(kv && kv->n == 3 && gguf_arr_strings(kv, ss, ls), "array of strings");
  if (kv && kv->n == 3)
    CHECK(ls[0] == 1 && ss[0][0] == 'a' && ls[1] == 0 && ls[2] == 3 && !memcmp(ss[2], "ccc", 3),
          "its strings");
  kv = gguf_find(&g, "t.arr_nested");
  CHECK(kv && kv->elem_type == GGUF_ARRAY && kv->n == 3 && !gguf_arr_number(kv, 0, &f), "nested arrays");
  kv = gguf_find(&g, "t.arr_empty");
  CHECK(kv && kv->elem_type == GGUF_F64 && kv->n == 0 && kv->size == 0, "an empty array");
  static const char *types[] = {"F32",  "F16",  "BF16", "Q8_0", "Q4_0", "Q4_1",
                                "Q5_0", "Q5_1", "Q4_K", "Q5_K", "Q6_K"};
  for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
    char q[32], x[32];
    snprintf(q, sizeof q, "q.%s", types[i]);
    snprintf(x, sizeof x, "x.q.%s", types[i]);
    const GgufTensor *t = gguf_find_tensor(&g, q);
    CHECK(t && t->ndim == 2 && t->shape[0] == 2 && t->shape[1] == 256 && t->ne[0] == 256 && t->ne[1] == 2,
          "%s has PyTorch shape [2, 256], ne {256, 2}", q);
    CHECK(t && !strcmp(gguf_type_name(t->type), types[i]), "%s's type", q);
    same_bits(&g, q, x);
    if (i >= 3) {
      snprintf(q, sizeof q, "r.%s", types[i]);
      snprintf(x, sizeof x, "x.r.%s", types[i]);
      same_bits(&g, q, x);
      blocks(&g, q);
      snprintf(q, sizeof q, "q.%s", types[i]);
      blocks(&g, q);
    }
  }
  GgufBlock k;
  const GgufTensor *q4k = gguf_find_tensor(&g, "q.Q4_K");
  CHECK(q4k && gguf_block(q4k->type, q4k->data, 0, &k) && k.n_sub == 8 && k.sub == 32 && k.bits == 4 &&
            k.sc[0] > 0,
        "Q4_K's block 0: 8 sub-blocks of 32, 4-bit codes, 6-bit scales");
  CHECK(!gguf_block(GGML_F16, q4k ? q4k->data : NULL, 0, &k), "no blocks for F16");
  CHECK(gguf_type_bits(GGML_Q4_K) == 4.5 && gguf_type_bits(GGML_Q8_0) == 8.5 &&
            gguf_type_bits(GGML_Q6_K) == 6.5625,
        "bits per weight");
  // every prefix of the header (and a little of the data) is refused, with one line
  size_t header_end = (size_t)g.data_offset + 64;
  uint8_t *copy = malloc(header_end);
  int refused = 0;
  for (size_t len = 0; copy && len < header_end; len++) {
    memcpy(copy, g.bytes, len);
    GgufFile h;
    Err e = {0};
    bool ok = gguf_parse(&h, copy, len, "prefix", &e);
    if (ok) gguf_close(&h);
    refused += !ok && e.msg[0] && !strchr(e.msg, '\n');
  }
  CHECK(refused == (int)header_end, "every one of the %zu prefixes is refused with one line (%d were)",
        header_end, refused);
  free(copy);
  gguf_close(&g);
}

static void v2_file(void) {
  GgufFile g;
  Err err = {0};
  CHECK(gguf_open(&g, ref("v2-align64.gguf"), &err), "v2-align64.gguf opens: %s", err.msg);
  if (!g.kv) return;
  CHECK(g.version == 2 && g.alignment == 64 && g.data_offset % 64 == 0, "version 2, alignment 64");
  const GgufTensor *a = gguf_find_tensor(&g, "a"), *b = gguf_find_tensor(&g, "b");
  CHECK(a && a->ndim == 3 && a->shape[0] == 3 && a->shape[1] == 2 && a->shape[2] == 32 && a->ne[0] == 32 &&
            a->ne[2] == 3 && a->offset % 64 == 0,
        "a: [3, 2, 32]");
  same_bits(&g, "a", "x.a");
  float *y = b ? values(b) : NULL;
  CHECK(y && b->count == 5 && y[0] == -2 && y[4] == 2, "b: F16 -2..2");
  free(y);
  gguf_close(&g);
}

static void bad_files(void) {
  size_t len;
  Err err = {0};
  char *cases = file_read_all(ref("bad/cases.txt"), &len, 1 << 20, &err);
  CHECK(cases, "bad/cases.txt: %s", err.msg);
  int n = 0;
  for (char *line = cases ? strtok(cases, "\n") : NULL; line; line = strtok(NULL, "\n")) {
    if (line[0] == '#') continue;
    char *tab = strchr(line, '\t');
    if (!tab) continue;
    *tab = 0;
    char name[256];
    snprintf(name, sizeof name, "bad/%s", line);
    GgufFile g;
    Err e = {0};
    bool ok = gguf_open(&g, ref(name), &e);
    if (ok) gguf_close(&g);
    CHECK(!ok && strstr(e.msg, tab + 1) && !strchr(e.msg, '\n'), "%s: refused with \"%s\": got \"%s\"", line,
          tab + 1, e.msg);
    n++;
  }
  CHECK(n >= 20, "%d bad files", n);
  free(cases);
}

int main(void) {
  types_file();
  v2_file();
  bad_files();
  return check_exit("test_gguf");
}
