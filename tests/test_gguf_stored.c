// test_gguf_stored.c -- "weights as stored" (gguf_stored.h) against the fixtures of
// tests/gen_gguf_fixtures.py: llama-wide-q4_k_m.gguf (Q4_K, Q6_K, Q5_0, Q8_0 matrices of one random
// Llama) and llama-wide-f16.gguf (the same weights in F16).
//
// For every block of every quantized tensor, the view's codes, scales and values equal gguf_block's,
// its values equal gguf_dequantize's (the whole row, bit for bit), and each value is recomputed from
// the view's own numbers, (q − offset)·scale − min in float32. blk.0.ffn_down.weight's values equal
// llama-wide-q4_k_m.npy, what gguf_py's dequantizer (ggml's dequantize_row_q4_K) computed from the
// same bytes. The default block holds the matrix's largest |weight|; the matrix's grid, half steps
// and, with the F16 file as reference, its error are recomputed here from the dequantized weights.
// A tensor not in the file, one not quantized and a file without quantized tensors: one line each.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gguf.h"        // defines: GgufFile, gguf_open
#include "gguf_quant.h"  // defines: gguf_block, gguf_dequantize
#include "gguf_stored.h" // defines: gguf_stored_view
#include "npy.h"         // defines: npy_read

static char path_buf[2][4096];
static const char *ref(int k, const char *name) {
  snprintf(path_buf[k], sizeof path_buf[k], "%s/ref/gguf/%s", check_test_dir(), name);
  return path_buf[k];
}

static float *dequantized(const GgufTensor *t) {
  float *y = malloc(sizeof(float) * (size_t)t->count);
  Err err = {0};
  if (y && !gguf_dequantize(t->type, t->data, y, t->count, &err)) free(y), y = NULL;
  return y;
}

// Every block of tensor t as the view shows it.
static void every_block(const char *path, const GgufTensor *t, StoredView *v) {
  float *all = dequantized(t);
  CHECK(all != NULL, "%s dequantizes", t->name);
  if (!all) return;
  StoredPick p = {.tensor = t->name, .which = -1, .block = 0, .weight = -1};
  Err err = {0};
  bool ok = gguf_stored_view(path, &p, v, &err);
  CHECK(ok, "%s: %s", t->name, err.msg);
  if (!ok) return free(all);
  long bad_block = 0, bad_value = 0, bad_formula = 0, bad_place = 0;
  for (int64_t b = 0; b < v->n_blocks; b++) {
    p.block = b, p.keep_matrix = true;
    if (!gguf_stored_view(path, &p, v, &err)) {
      CHECK(false, "%s block %lld: %s", t->name, (long long)b, err.msg);
      break;
    }
    QuantBlock k;
    gguf_block(t->type, t->data, b, &k);
    bad_block += v->block != b || memcmp(&k, &v->b, sizeof k) != 0;
    bad_place += v->row * v->cols + v->col != b * k.n;
    for (int i = 0; i < k.n; i++) {
      float want = all[b * k.n + i], got = v->b.values[i];
      int j = i / v->b.sub;
      float again = (float)(v->b.codes[i] - v->b.offset) * v->b.scale[j] - v->b.min[j];
      bad_value += memcmp(&want, &got, 4) != 0;
      bad_formula += memcmp(&again, &got, 4) != 0 && !(again == 0 && got == 0);
    }
  }
  CHECK(bad_block == 0, "%s: %ld blocks differ from gguf_block's", t->name, bad_block);
  CHECK(bad_place == 0, "%s: %ld blocks placed wrong (row, column)", t->name, bad_place);
  CHECK(bad_value == 0, "%s: %ld values differ from gguf_dequantize's", t->name, bad_value);
  CHECK(bad_formula == 0, "%s: %ld values are not (q - offset)·scale - min", t->name, bad_formula);
  free(all);
}

int main(void) {
  const char *q = ref(0, "llama-wide-q4_k_m.gguf"), *f16 = ref(1, "llama-wide-f16.gguf");
  GgufFile g;
  Err err = {0};
  StoredView *v = malloc(sizeof *v);
  if (!v || !gguf_open(&g, q, &err)) {
    CHECK(false, "opens: %s", err.msg);
    return check_exit("test_gguf_stored");
  }
  int n_quant = 0, types = 0;
  for (uint64_t i = 0; i < g.n_tensors; i++) {
    const GgufTensor *t = &g.tensors[i];
    if (t->type == GGML_F32) continue;
    every_block(q, t, v);
    n_quant++, types |= 1 << (t->type & 31);
  }
  CHECK(n_quant == 16 && types == (1 << GGML_Q4_K | 1 << GGML_Q6_K | 1 << GGML_Q5_0 | 1 << GGML_Q8_0),
        "16 quantized tensors of Q4_K, Q6_K, Q5_0, Q8_0 (%d, types %x)", n_quant, types);

  // the default: the first k-quant matrix, its block of the largest |weight|, the block's largest |value|
  StoredPick p = {.which = -1, .block = -1, .weight = -1};
  CHECK(gguf_stored_view(q, &p, v, &err), "default view: %s", err.msg);
  CHECK(!strcmp(v->tensor, "blk.0.ffn_down.weight") && !strcmp(v->type, "Q4_K") && v->bits == 4.5 &&
            v->which == 7 && v->count == 16 && v->rows == 32 && v->cols == 256 && v->n_blocks == 32 &&
            v->row_blocks == 1 && !strcmp(v->file, "llama-wide-q4_k_m.gguf"),
        "default tensor %s %s %.3g bits, %d of %d, %lldx%lld, %lld blocks", v->tensor, v->type, v->bits,
        v->which + 1, v->count, (long long)v->rows, (long long)v->cols, (long long)v->n_blocks);
  // the fixture's outlier, w[3, 40] = 1.5, is in block 3 (row 3), weight 40, sub-block 2
  CHECK(v->block == 3 && v->row == 3 && v->col == 0 && v->weight == 40 && v->b.n_sub == 8 && v->b.sub == 32,
        "default block %lld (row %lld), weight %d", (long long)v->block, (long long)v->row, v->weight);
  CHECK(fabsf(v->b.values[40] - 1.5f) < 0.05f, "the outlier dequantizes near 1.5: %g", v->b.values[40]);

  // ggml's reference dequantization (gguf_py's, from the same bytes)
  int nd, shape[4];
  float *npy = npy_read(ref(1, "llama-wide-q4_k_m.npy"), &nd, shape, &err);
  CHECK(npy && nd == 2 && shape[0] == 32 && shape[1] == 256, "reference .npy: %s", err.msg);
  long differ = 0;
  for (int64_t b = 0; npy && b < 32; b++) {
    p.block = b, p.keep_matrix = true;
    gguf_stored_view(q, &p, v, &err);
    for (int i = 0; i < 256; i++) differ += memcmp(&v->b.values[i], &npy[b * 256 + i], 4) != 0;
  }
  CHECK(differ == 0, "blk.0.ffn_down: %ld values differ from ggml's reference dequantization", differ);
  free(npy);

  // the matrix, its half steps and, against the F16 file, its error, recomputed
  const GgufTensor *t = gguf_find_tensor(&g, "blk.0.ffn_down.weight");
  GgufFile h;
  CHECK(gguf_open(&h, ref(1, "llama-wide-f16.gguf"), &err), "the F16 file opens: %s", err.msg);
  const GgufTensor *u = gguf_find_tensor(&h, "blk.0.ffn_down.weight");
  float *w = t ? dequantized(t) : NULL, *r = u ? dequantized(u) : NULL;
  p = (StoredPick){.which = -1, .block = -1, .weight = -1, .ref = f16};
  CHECK(w && r && gguf_stored_view(q, &p, v, &err), "view with a reference: %s", err.msg);
  CHECK(v->has_ref && !strcmp(v->ref_file, "llama-wide-f16.gguf") && !strcmp(v->ref_type, "F16") &&
            v->gh == 32 && v->gw == 64,
        "reference %s (%s), grid %dx%d", v->ref_file, v->ref_type, v->gh, v->gw);
  if (w && r) {
    double emax = 0, es = 0, ws = 0, gdiff = 0, hs_max = 0;
    for (int i = 0; i < 32; i++)
      for (int c = 0; c < 64; c++) { // cell (i, c): row i, columns 4c .. 4c + 3
        double sum = 0, cell_err = 0, cell_hs = 0;
        for (int k = 0; k < 4; k++) {
          int64_t at = (int64_t)i * 256 + 4 * c + k;
          double e = fabs((double)w[at] - r[at]);
          sum += w[at], cell_err = fmax(cell_err, e), es += e * e, emax = fmax(emax, e),
                        ws += (double)w[at] * w[at];
          QuantBlock b;
          gguf_block(t->type, t->data, i, &b);
          cell_hs = fmax(cell_hs, fabsf(b.scale[(4 * c + k) / 32]) * 0.5f);
        }
        hs_max = fmax(hs_max, cell_hs);
        gdiff = fmax(gdiff, fabs(v->w[i * 64 + c] - (float)(sum / 4)));
        gdiff = fmax(gdiff, fabs(v->err[i * 64 + c] - (float)cell_err));
        gdiff = fmax(gdiff, fabs(v->step[i * 64 + c] - (float)cell_hs));
      }
    CHECK(gdiff < 1e-7, "the grids (mean, error, half step) recomputed: largest difference %g", gdiff);
    CHECK_NEAR(v->err_max, emax, 1e-9, "largest error against the F16 file");
    CHECK_NEAR(v->err_rms, sqrt(es / (32 * 256)), 1e-9, "rms error");
    CHECK_NEAR(v->w_rms, sqrt(ws / (32 * 256)), 1e-9, "rms of the weights");
    CHECK_NEAR(v->half_step_max, hs_max, 1e-9, "largest half step");
    // rounding to the nearest code: every error within a step of its sub-block (half a step but where
    // clipped)
    CHECK(v->err_max <= 2 * v->half_step_max + 1e-3, "error %g within a step (%g)", v->err_max,
          2 * v->half_step_max);
  }
  free(w), free(r);
  gguf_close(&h);

  // [ ] in the window: which wraps around
  p = (StoredPick){.which = 16, .block = -1, .weight = -1};
  CHECK(gguf_stored_view(q, &p, v, &err) && v->which == 0 && !strcmp(v->tensor, "token_embd.weight") &&
            !strcmp(v->type, "Q8_0") && v->b.n == 32 && v->b.offset == 128,
        "which 16 wraps to token_embd (Q8_0): %s", v->tensor);
  p.which = -2;
  CHECK(gguf_stored_view(q, &p, v, &err) && v->which == 14 && !strcmp(v->tensor, "blk.1.ffn_down.weight") &&
            !strcmp(v->type, "Q6_K") && v->b.n_sub == 16,
        "which -2 is the 15th: %s", v->tensor);
  p = (StoredPick){.tensor = "output.weight", .which = -1, .block = 1000000, .weight = 999};
  CHECK(gguf_stored_view(q, &p, v, &err) && v->block == v->n_blocks - 1 && v->weight == 31,
        "block and weight clamped: %lld, %d", (long long)v->block, v->weight);

  // refusals
  p = (StoredPick){.tensor = "blk.9.attn_q.weight", .which = -1, .block = -1, .weight = -1};
  err.msg[0] = 0;
  CHECK(!gguf_stored_view(q, &p, v, &err) && strstr(err.msg, "blk.9.attn_q.weight is not in the file") &&
            strstr(err.msg, "its quantized tensors: token_embd.weight, blk.0.attn_q.weight") &&
            !strchr(err.msg, '\n'),
        "a missing tensor: %s", err.msg);
  p.tensor = "output_norm.weight";
  CHECK(!gguf_stored_view(q, &p, v, &err) && strstr(err.msg, "output_norm.weight is not quantized"),
        "an F32 tensor: %s", err.msg);
  p.tensor = NULL;
  CHECK(!gguf_stored_view(f16, &p, v, &err) && strstr(err.msg, "holds no quantized tensor"),
        "an F16 file: %s", err.msg);
  p = (StoredPick){.which = -1, .block = -1, .weight = -1, .ref = ref(1, "qwen2-f16.gguf")};
  CHECK(gguf_stored_view(q, &p, v, &err) && !v->has_ref &&
            strstr(v->note, "qwen2-f16.gguf's blk.0.ffn_down.weight has another shape"),
        "a reference of another model: no error, a note: %s", v->note);
  gguf_close(&g);
  free(v);
  return check_exit("test_gguf_stored");
}
