// test_gguf_model.c -- GPT-2 from a GGUF file (tests/gen_gguf_fixtures.py wrote tests/ref/hub's
// GPT-2 folders as llama.cpp's converter does) opened as `stepformer --model FILE.gguf` opens it
// (model_load), tokenized by the tokenizer inside the file, traced, and every reference stage of
// the hub folder's sentences compared: the GGUF model's stages are the hub model's, F32 and F16
// (|c - r| <= 1e-5·max(1, |r|), golden_ref.h). The Q8_0/Q4_0 file: its two quantized matrices
// are ggml's dequantized values (the C dequantizer, bit-exact in test_gguf), the rest F32, so its
// logits are near the F32 file's and not equal. llama.cpp itself on the F32 file
// (tests/gen_gguf_llamacpp_ref.mjs, once): the same token ids, the next-token probabilities within
// 5e-4 (llama.cpp's GELU goes through a half-precision table). A large model's layer matrices in a
// temporary file (spill.h; st_map_min_bytes 0 makes the fixtures large): they are in that file's
// mapping, not in the process's memory, and every stage has the bits of the weights kept in memory.
// Refusals: an architecture Stepformer does not open, a model larger than the memory
// (mem_available_override), a tokenizer of another size.
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fileio.h"       // defines: file_read_all
#include "forward.h"      // defines: model_forward
#include "gguf.h"         // defines: GgufFile, gguf_open
#include "gguf_model.h"   // defines: gguf_estimate_bytes
#include "memsize.h"      // defines: mem_available_override
#include "golden_ref.h"   // defines: golden_compare
#include "gemm.h"         // defines: gemm_supported
#include "safetensors.h"  // defines: st_map_min_bytes
#include "model.h"        // defines: Model
#include "model_load.h"   // defines: model_load
#include "model_tokens.h" // defines: model_tokenize
#include "npy.h"          // defines: npy_read
#include "trace.h"        // defines: Trace, trace_find

static const char *SENTENCES[2] = {"The cat walks by the bank", "a bank, the river's bank!"};

static Trace *run(const Model *m, const char *text, Tokens *tok) {
  Err err = {0};
  bool ok = model_tokenize(m, text, 0, tok, &err);
  CHECK(ok, "%s: %s", text, err.msg);
  Trace *t = ok ? trace_new(m, tok, &err) : NULL;
  CHECK(!ok || t, "%s", err.msg);
  if (t) model_forward(t);
  return t;
}

// Every stage the hub folder's sentence s has equals the GGUF model's; the ids equal the reference's.
static void golden(const char *gguf, const char *hub) {
  char path[4200];
  snprintf(path, sizeof path, "%s/ref/gguf/%s", check_test_dir(), gguf);
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "%s: %s", gguf, err.msg);
  if (!m) return;
  CHECK(!strcmp(model_meta(m, "gguf_architecture"), "GPT-2"), "%s: GPT-2", gguf);
  for (int s = 0; s < 2; s++) {
    Tokens tok;
    Trace *t = run(m, SENTENCES[s], &tok);
    if (!t) continue;
    char dir[4300], cname[128];
    snprintf(dir, sizeof dir, "%s/ref/hub/%s/s%d", check_test_dir(), hub, s);
    snprintf(cname, sizeof cname, "%s/s%d", gguf, s);
    size_t len;
    char ids_path[4400];
    snprintf(ids_path, sizeof ids_path, "%s/ids.txt", dir);
    char *ids = file_read_all(ids_path, &len, 1 << 16, &err), *p = ids;
    int i = 0;
    for (; ids && i < tok.n; i++) {
      char *end;
      long id = strtol(p, &end, 10);
      if (end == p || id != tok.ids[i]) break;
      p = end;
    }
    CHECK(ids && i == tok.n && strtol(p, NULL, 10) == 0, "%s: the ids differ from the hub tokenizer's at %d",
          cname, i);
    free(ids);
    static const char *stages[] = {"X",    "P",      "Z",          "l0.Q",    "l0.K",   "l0.V",
                                   "l0.S", "l0.A",   "l0.AV",      "l0.attn", "l0.out", "l1.Q",
                                   "l1.A", "l1.out", "final_norm", "logits",  "pred"};
    double worst = 0;
    for (size_t k = 0; k < sizeof stages / sizeof *stages; k++) {
      double d = golden_compare(cname, dir, stages[k], t);
      worst = d > worst ? d : worst;
    }
    printf("%-26s %zu stages, max |diff| %.3g\n", cname, sizeof stages / sizeof *stages, worst);
    trace_free(t);
    tokens_free(&tok);
  }
  model_free(m);
}

// A quantized file: logits near the F32 file's (the two matrices' quantization error), not equal.
static void quantized(const char *full, const char *quant, const char *types) {
  char p32[4200], pq[4200];
  snprintf(p32, sizeof p32, "%s/ref/gguf/%s.gguf", check_test_dir(), full);
  snprintf(pq, sizeof pq, "%s/ref/gguf/%s.gguf", check_test_dir(), quant);
  Err err = {0};
  Model *a = model_load(p32, &err), *b = a ? model_load(pq, &err) : NULL;
  CHECK(a && b, "%s", err.msg);
  if (a && b) {
    CHECK(strstr(model_meta(b, "gguf_types"), types) != NULL, "types: %s", model_meta(b, "gguf_types"));
    Tokens ta, tb;
    Trace *x = run(a, SENTENCES[0], &ta), *y = run(b, SENTENCES[0], &tb);
    const TraceTensor *lx = x ? trace_find(x, "logits") : NULL, *ly = y ? trace_find(y, "logits") : NULL;
    CHECK(lx && ly, "logits");
    double worst = 0, top = 0;
    for (int i = 0; lx && ly && i < lx->rows; i++)
      for (int j = 0; j < lx->cols; j++) {
        worst = fmax(worst, fabs(trace_at(lx, 0, i, j) - trace_at(ly, 0, i, j)));
        top = fmax(top, fabs(trace_at(lx, 0, i, j)));
      }
    CHECK(worst > 0 && worst < 0.05 * top, "%s: logits within 5%% of F32's largest (%g), not equal: %g",
          quant, top, worst);
    printf("%-26s logits max |diff| from F32's %.3g (largest |logit| %.3g)\n", quant, worst, top);
    trace_free(x), trace_free(y);
    if (x) tokens_free(&ta);
    if (y) tokens_free(&tb);
  }
  model_free(a), model_free(b);
}

// The quantized file opened as a large one is (st_map_min_bytes 0): its layer matrices go into a
// temporary file in the test's folder (TMPDIR, on a disk) and the model holds none of them; every
// tensor of the pass has the bits of the same file opened with the weights in memory.
static void spilled(const char *name) {
  char path[4200];
  snprintf(path, sizeof path, "%s/ref/gguf/%s", check_test_dir(), name);
  Err err = {0};
  Model *a = model_load(path, &err);
  size_t map_min = st_map_min_bytes;
  const char *tmpdir = getenv("TMPDIR");
  char *old = tmpdir ? strdup(tmpdir) : NULL;
  setenv("TMPDIR", ".", 1);
  st_map_min_bytes = 0;
  Model *b = a ? model_load(path, &err) : NULL;
  st_map_min_bytes = map_min;
  if (old)
    setenv("TMPDIR", old, 1), free(old);
  else
    unsetenv("TMPDIR");
  CHECK(a && b, "%s: %s", name, err.msg);
  if (!a || !b) {
    model_free(a), model_free(b);
    return;
  }
  uint64_t mapped, own, packed;
  model_memory(b, &mapped, &own, &packed);
  uint64_t matrices = sizeof(float) * (uint64_t)model_layer_matrix_floats(&b->cfg);
  if (gemm_supported()) // the packed kernel: the layer matrices are read again only by the pictures
    CHECK(mapped == matrices && own == sizeof(float) * (uint64_t)b->n_params - matrices && packed > 0,
          "%s: spilled: %llu B mapped (the layer matrices: %llu B), %llu B own, %llu B packed", name,
          (unsigned long long)mapped, (unsigned long long)matrices, (unsigned long long)own,
          (unsigned long long)packed);
  else // no packed copies: the forward multiplies the floats, which stay in memory
    CHECK(mapped == 0 && own > 0, "%s: without packed copies the weights stay in memory", name);
  Tokens ta, tb;
  Trace *x = run(a, SENTENCES[1], &ta), *y = run(b, SENTENCES[1], &tb);
  int differ = 0;
  for (int i = 0; x && y && i < x->n; i++) {
    const TraceTensor *p = &x->t[i], *q = &y->t[i];
    for (int h = 0; h < p->heads && p->data && q->data; h++)
      for (int r = 0; r < p->rows; r++)
        for (int c = 0; c < p->cols; c++) {
          float u = trace_at(p, h, r, c), v = trace_at(q, h, r, c);
          differ += memcmp(&u, &v, sizeof u) != 0;
        }
  }
  CHECK(x && y && differ == 0, "%s: %d numbers of the pass differ with the weights in a temporary file", name,
        differ);
  printf("%-26s spilled: %llu B in the temporary file's mapping, %llu B packed; the pass bit for bit\n", name,
         (unsigned long long)mapped, (unsigned long long)packed);
  trace_free(x), trace_free(y);
  if (x) tokens_free(&ta);
  if (y) tokens_free(&tb);
  model_free(a), model_free(b);
}

// llama.cpp's ids and probabilities for the F32 file's sentences.
static void llama_cpp(void) {
  char path[4200];
  snprintf(path, sizeof path, "%s/ref/gguf/gpt2-tiny-f32.gguf", check_test_dir());
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "%s", err.msg);
  for (int s = 0; m && s < 2; s++) {
    Tokens tok;
    Trace *t = run(m, SENTENCES[s], &tok);
    if (!t) continue;
    size_t len;
    snprintf(path, sizeof path, "%s/ref/gguf/llama-cpp/s%d/ids.txt", check_test_dir(), s);
    char *ids = file_read_all(path, &len, 1 << 16, &err), *p = ids;
    int i = 0;
    for (; ids && i < tok.n; i++) {
      char *end;
      if (strtol(p, &end, 10) != tok.ids[i] || end == p) break;
      p = end;
    }
    CHECK(ids && i == tok.n && strtol(p, NULL, 10) == 0, "s%d: llama.cpp's ids differ at %d", s, i);
    free(ids);
    snprintf(path, sizeof path, "%s/ref/gguf/llama-cpp/s%d/pred.npy", check_test_dir(), s);
    int nd, shape[4];
    float *ref = npy_read(path, &nd, shape, &err);
    const TraceTensor *pred = trace_find(t, "pred");
    CHECK(ref && pred && nd == 2 && shape[0] == pred->rows && shape[1] == pred->cols, "s%d: pred shape %s", s,
          err.msg);
    double worst = 0;
    for (int r = 0; ref && pred && nd == 2 && shape[0] == pred->rows && r < pred->rows; r++)
      for (int c = 0; c < pred->cols && c < shape[1]; c++)
        worst = fmax(worst, fabs(trace_at(pred, 0, r, c) - ref[r * shape[1] + c]));
    CHECK(ref && worst < 5e-4, "s%d: probabilities %g from llama.cpp's", s, worst);
    printf("llama.cpp s%d                ids equal, probabilities max |diff| %.3g\n", s, worst);
    free(ref);
    trace_free(t);
    tokens_free(&tok);
  }
  model_free(m);
}

// Today's decoders (tests/ref/llama's folders written as llama.cpp's converter writes them, Llama's
// Q/K rows permuted): the file's tokenizer gives the reference ids (cases.txt), and every reference
// stage of the folder (tests/gen_llama_ref.py, torch) equals the GGUF model's; llama.cpp's ids and
// next-token probabilities on the same file (made once) are ours within 1e-4 (2e-2 for BF16
// weights, which llama.cpp multiplies in BF16). Llama 3's RoPE scaling comes from rope_freqs.weight.
static void modern(const char *name, double llama_tol) {
  static const char *text[2] = {"The cat walks by the bank",
                                "a bank, the river's bank! The cat sat by the river."};
  char path[4200], cases[4200];
  snprintf(path, sizeof path, "%s/ref/gguf/%s.gguf", check_test_dir(), name);
  snprintf(cases, sizeof cases, "%s/ref/llama/cases.txt", check_test_dir());
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "%s: %s", name, err.msg);
  size_t len;
  char *lines = file_read_all(cases, &len, 1 << 16, &err);
  CHECK(lines != NULL, "%s", err.msg);
  int s = 0;
  for (char *line = lines ? strtok(lines, "\n") : NULL; m && line; line = strtok(NULL, "\n")) {
    size_t k = strlen(name);
    if (strncmp(line, name, k) || line[k] != '\t') continue;
    Tokens tok;
    Trace *t = run(m, text[s], &tok);
    char *p = line + k + 1;
    int i = 0;
    for (; t && i < tok.n; i++) {
      char *end;
      if (strtol(p, &end, 10) != tok.ids[i] || end == p) break;
      p = end;
    }
    CHECK(t && i == tok.n && strtol(p, NULL, 10) == 0, "%s s%d: the ids differ from the reference at %d",
          name, s, i);
    char dir[4400], cname[96];
    snprintf(dir, sizeof dir, "%s/ref/llama/%s/s%d", check_test_dir(), name, s);
    snprintf(cname, sizeof cname, "%s.gguf/s%d", name, s);
    DIR *d = opendir(dir);
    int n = 0;
    double worst = 0;
    for (struct dirent *e; t && d && (e = readdir(d));) {
      size_t el = strlen(e->d_name);
      if (el < 5 || strcmp(e->d_name + el - 4, ".npy")) continue;
      char stage[64];
      snprintf(stage, sizeof stage, "%.*s", (int)(el - 4), e->d_name);
      worst = fmax(worst, golden_compare(cname, dir, stage, t));
      n++;
    }
    if (d) closedir(d);
    CHECK(n >= 20, "%s: %d stages compared", cname, n);
    printf("%-26s %d stages, max |diff| %.3g\n", cname, n, worst);
    // llama.cpp on the same file (tests/gen_gguf_llamacpp_ref.mjs): the same ids and probabilities
    char lpath[4400];
    snprintf(lpath, sizeof lpath, "%s/ref/gguf/llama-cpp/%s/s%d/ids.txt", check_test_dir(), name, s);
    char *lids = file_read_all(lpath, &len, 1 << 16, &err), *q = lids;
    int li = 0;
    for (; t && lids && li < tok.n; li++) {
      char *end;
      if (strtol(q, &end, 10) != tok.ids[li] || end == q) break;
      q = end;
    }
    CHECK(lids && li == tok.n && strtol(q, NULL, 10) == 0, "%s: llama.cpp's ids differ at %d", cname, li);
    free(lids);
    snprintf(lpath, sizeof lpath, "%s/ref/gguf/llama-cpp/%s/s%d/pred.npy", check_test_dir(), name, s);
    int nd, shape[4];
    float *ref = npy_read(lpath, &nd, shape, &err);
    const TraceTensor *pred = t ? trace_find(t, "pred") : NULL;
    bool same_shape = ref && pred && nd == 2 && shape[0] == pred->rows && shape[1] == pred->cols;
    CHECK(same_shape, "%s: llama.cpp's pred: %s", cname, err.msg);
    double lw = 0;
    for (int r = 0; same_shape && r < pred->rows; r++)
      for (int c = 0; c < pred->cols; c++)
        lw = fmax(lw, fabs(trace_at(pred, 0, r, c) - ref[r * shape[1] + c]));
    CHECK(same_shape && lw < llama_tol, "%s: probabilities %g from llama.cpp's", cname, lw);
    printf("%-26s llama.cpp: ids equal, probabilities max |diff| %.3g\n", cname, lw);
    free(ref);
    trace_free(t);
    if (t) tokens_free(&tok);
    s++;
  }
  CHECK(!m || s == 2, "%s: %d sentences", name, s);
  free(lines);
  model_free(m);
}

static void refusals(void) {
  char path[4200];
  Err err = {0};
  snprintf(path, sizeof path, "%s/ref/gguf/types.gguf", check_test_dir());
  Model *m = model_load(path, &err);
  CHECK(!m && strstr(err.msg, "architecture \"test\" is not one Stepformer opens"), "types.gguf: %s",
        err.msg);
  model_free(m);
  snprintf(path, sizeof path, "%s/ref/gguf/gpt2-tiny-f16.gguf", check_test_dir());
  GgufFile g;
  CHECK(gguf_open(&g, path, &err), "%s", err.msg);
  uint64_t need = g.kv ? gguf_estimate_bytes(&g, &err) : 0;
  CHECK(need == 4ull * 11792, "the estimate is the float32 parameters: %llu", (unsigned long long)need);
  if (g.kv) gguf_close(&g);
  mem_available_override = 40000;
  err.msg[0] = 0;
  m = model_load(path, &err);
  CHECK(!m && strstr(err.msg, "the model takes 47.2 kB once dequantized to float32") &&
            strstr(err.msg, "but 40.0 kB of memory are available"),
        "memory refusal: %s", err.msg);
  model_free(m);
  mem_available_override = 0;
}

int main(void) {
  golden("gpt2-tiny-f32.gguf", "gpt2-tiny");
  golden("gpt2-tiny-f16.gguf", "gpt2-tiny-f16");
  quantized("gpt2-tiny-f32", "gpt2-tiny-q8", "Q8_0 ×1 (8.5 bits)");
  quantized("llama-gqa2", "llama-gqa2-q8_0", "Q8_0 ×16 (8.5 bits), F32 ×5");
  llama_cpp();
  modern("llama-gqa2", 1e-4);
  modern("qwen2-f16", 1e-4);
  modern("qwen3-sharded", 1e-4);
  // llama.cpp multiplies BF16 weights with activations rounded to BF16 (8 bits of mantissa): the same
  // file in F32 gave 1.4e-6 (its rope_freqs.weight read as Hugging Face's rope_scaling)
  modern("llama3-bf16", 2e-2);
  spilled("llama-wide-q4_k_m.gguf");
  spilled("gpt2-tiny-q8.gguf");
  refusals();
  return check_exit("test_gguf_model");
}
