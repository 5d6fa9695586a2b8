// gguf_stored.c -- see gguf_stored.h: one quantized block as the file holds it, and its matrix.
#include "gguf_stored.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"       // defines: GgufFile, gguf_open, gguf_find_tensor
#include "gguf_quant.h" // defines: gguf_block, gguf_dequantize, gguf_type_name

static bool quantized(const GgufTensor *t) {
  int block, bytes;
  return gguf_type_readable(t->type) && gguf_type_size(t->type, &block, &bytes) && block > 1;
}

static bool kquant(uint32_t type) { return type == GGML_Q4_K || type == GGML_Q5_K || type == GGML_Q6_K; }

static const char *base_name(const char *path) {
  const char *b = strrchr(path, '/');
  return b ? b + 1 : path;
}

// The quantized tensors' names, comma-separated (at most cap bytes), for a message.
static void list_quantized(const GgufFile *g, char *out, size_t cap) {
  size_t n = 0;
  out[0] = 0;
  for (uint64_t i = 0; i < g->n_tensors && n + 80 < cap; i++)
    if (quantized(&g->tensors[i]))
      n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? ", " : "", g->tensors[i].name);
}

// The tensor pick asks for, and its ordinal among the quantized ones.
static const GgufTensor *choose(const GgufFile *g, const StoredPick *pick, int *which, int *count, Err *err) {
  int n = 0, first = -1, first_k = -1, want = -1;
  for (uint64_t i = 0; i < g->n_tensors; i++) {
    const GgufTensor *t = &g->tensors[i];
    if (!quantized(t)) continue;
    if (first < 0) first = n;
    if (first_k < 0 && kquant(t->type) && t->ndim >= 2) first_k = n;
    if (pick->tensor && !strcmp(t->name, pick->tensor)) want = n;
    n++;
  }
  *count = n;
  if (n == 0)
    return err_set(err,
                   "%s holds no quantized tensor (Q8_0, Q4_0, Q4_K ...): its weights are stored as they are",
                   g->what),
           NULL;
  if (pick->tensor && want < 0) {
    char names[512];
    list_quantized(g, names, sizeof names);
    const GgufTensor *t = gguf_find_tensor(g, pick->tensor);
    return err_set(err, "%s: tensor %s %s; its quantized tensors: %s", g->what, pick->tensor,
                   t ? "is not quantized" : "is not in the file", names),
           NULL;
  }
  if (want < 0)
    want = pick->which >= 0 || pick->which < -1 ? ((pick->which % n) + n) % n
           : first_k >= 0                       ? first_k
                                                : first;
  *which = want;
  for (uint64_t i = 0, k = 0; i < g->n_tensors; i++)
    if (quantized(&g->tensors[i]) && (int)k++ == want) return &g->tensors[i];
  return NULL; // not reached
}

// The reference file's same tensor as rows of floats, or NULL (out->note says why).
static const GgufTensor *ref_tensor(const GgufFile *r, const GgufTensor *t, StoredView *out) {
  const GgufTensor *u = gguf_find_tensor(r, t->name);
  int block, bytes;
  if (!u)
    snprintf(out->note, sizeof out->note, "%.120s has no tensor %.64s: no error shown", out->ref_file,
             t->name);
  else if (u->count != t->count || u->ne[0] != t->ne[0])
    snprintf(out->note, sizeof out->note, "%.120s's %.64s has another shape: no error shown", out->ref_file,
             t->name);
  else if (!gguf_type_readable(u->type) || !gguf_type_size(u->type, &block, &bytes) || u->ne[0] % block)
    snprintf(out->note, sizeof out->note, "%.120s's %.64s is of a type not read: no error shown",
             out->ref_file, t->name);
  else
    return u;
  return NULL;
}

// The whole matrix: w, step and err grids, ranges, and the default block (the largest |weight|'s).
static bool read_matrix(const GgufTensor *t, const GgufTensor *u, StoredView *v, int64_t *big_block,
                        Err *err) {
  const int64_t rows = v->rows, cols = v->cols, n = v->b.n;
  const int gh = v->gh, gw = v->gw;
  double *sum = calloc((size_t)gh * gw, sizeof *sum);
  long *cnt = calloc((size_t)gh * gw, sizeof *cnt);
  float *ref = u ? malloc(sizeof(float) * (size_t)cols) : NULL;
  if (!sum || !cnt || (u && !ref)) {
    free(sum), free(cnt), free(ref);
    return err_set(err, "out of memory for the matrix of %s", t->name);
  }
  for (int k = 0; k < gh * gw; k++) v->step[k] = 0, v->err[k] = 0;
  v->w_lo = INFINITY, v->w_hi = -INFINITY, v->half_step_max = 0;
  double ss = 0, es = 0, big = -1;
  v->err_max = 0, v->err_max_at = 0;
  int ublock = 1, ubytes = 0;
  if (u) gguf_type_size(u->type, &ublock, &ubytes);
  QuantBlock b;
  for (int64_t blk = 0; blk < v->n_blocks; blk++) {
    gguf_block(t->type, t->data, blk, &b);
    int64_t at = blk * n, r = at / cols, c0 = at % cols;
    if (u && c0 == 0) { // a new row: the reference's row
      Err e = {0};
      gguf_dequantize(u->type, u->data + (size_t)(r * (cols / ublock)) * (size_t)ubytes, ref, cols, &e);
    }
    int i = (int)(r * gh / rows);
    for (int k = 0; k < n; k++) {
      float w = b.values[k];
      int64_t c = c0 + k;
      int j = (int)(c * gw / cols), cell = i * gw + j;
      float hs = fabsf(b.scale[k / b.sub]) * 0.5f;
      sum[cell] += w, cnt[cell]++;
      if (hs > v->step[cell]) v->step[cell] = hs;
      if (hs > v->half_step_max) v->half_step_max = hs;
      if (w < v->w_lo) v->w_lo = w;
      if (w > v->w_hi) v->w_hi = w;
      if (fabs(w) > big) big = fabs(w), *big_block = blk;
      ss += (double)w * w;
      if (u) {
        double e = fabs((double)w - ref[c]);
        es += e * e;
        if (e > v->err[cell]) v->err[cell] = (float)e;
        if (e > v->err_max) v->err_max = e, v->err_max_at = r * cols + c;
      }
    }
  }
  for (int k = 0; k < gh * gw; k++) v->w[k] = cnt[k] ? (float)(sum[k] / cnt[k]) : 0;
  double count = (double)rows * cols;
  v->w_rms = sqrt(ss / count);
  v->err_rms = u ? sqrt(es / count) : 0;
  free(sum), free(cnt), free(ref);
  return true;
}

static void read_block(const GgufTensor *t, StoredView *v, int64_t block, int weight) {
  if (block < 0) block = 0;
  if (block >= v->n_blocks) block = v->n_blocks - 1;
  v->block = block;
  gguf_block(t->type, t->data, block, &v->b);
  v->row = block * v->b.n / v->cols, v->col = block * v->b.n % v->cols;
  if (weight < 0) {
    weight = 0;
    for (int k = 1; k < v->b.n; k++)
      if (fabsf(v->b.values[k]) > fabsf(v->b.values[weight])) weight = k;
  }
  v->weight = weight < v->b.n ? weight : v->b.n - 1;
}

bool gguf_stored_view(const char *path, const StoredPick *pick, StoredView *out, Err *err) {
  GgufFile g, r;
  bool have_r = false, ok = false;
  if (!gguf_open(&g, path, err)) return false;
  int which = 0, count = 0;
  const GgufTensor *t = choose(&g, pick, &which, &count, err);
  if (!t) goto done;
  if (pick->keep_matrix && !strcmp(out->tensor, t->name) && !strcmp(out->file, base_name(path))) {
    read_block(t, out, pick->block, pick->weight);
    ok = true;
    goto done;
  }
  memset(out, 0, sizeof *out);
  snprintf(out->file, sizeof out->file, "%s", base_name(path));
  snprintf(out->tensor, sizeof out->tensor, "%s", t->name);
  snprintf(out->type, sizeof out->type, "%s", gguf_type_name(t->type));
  out->bits = gguf_type_bits(t->type);
  out->which = which, out->count = count;
  out->cols = (int64_t)t->ne[0];
  out->rows = t->count / out->cols;
  int block, bytes;
  gguf_type_size(t->type, &block, &bytes);
  out->n_blocks = t->count / block;
  out->row_blocks = out->cols % block == 0 ? out->cols / block : 0;
  out->b.n = block;
  out->gh = (int)(out->rows < STORED_GRID ? out->rows : STORED_GRID);
  out->gw = (int)(out->cols < STORED_GRID ? out->cols : STORED_GRID);
  const GgufTensor *u = NULL;
  if (pick->ref) {
    Err rerr = {0};
    snprintf(out->ref_file, sizeof out->ref_file, "%s", base_name(pick->ref));
    if (!(have_r = gguf_open(&r, pick->ref, &rerr)))
      snprintf(out->note, sizeof out->note, "%.300s", rerr.msg);
    else if ((u = ref_tensor(&r, t, out)))
      snprintf(out->ref_type, sizeof out->ref_type, "%s", gguf_type_name(u->type));
  }
  out->has_ref = u != NULL;
  int64_t big_block = 0;
  if (!read_matrix(t, u, out, &big_block, err)) goto done;
  read_block(t, out, pick->block >= 0 ? pick->block : big_block, pick->weight);
  ok = true;
done:
  if (have_r) gguf_close(&r);
  gguf_close(&g);
  return ok;
}
