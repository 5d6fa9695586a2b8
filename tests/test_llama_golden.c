// test_llama_golden.c -- today's decoders (issue 34) against tests/ref/llama/ (tests/gen_llama_ref.py:
// plain torch after transformers' modeling_llama / qwen2 / qwen3 on random weights): Llama with
// grouped-query attention (2 query heads per K/V head), Llama 3 in BF16 with rope_scaling llama3 and a
// tied head, Qwen 3 with QK-norm, head_dim != D/H, 4 query heads on 1 and a sharded folder, Qwen 2
// with Q/K/V biases in F16, and a canonical file with adjacent-pairs RoPE, Gemma's 1 + g and a
// GELU-gated FFN. Each is opened as `stepformer --model` opens it (model_load), fed the ids of ids.txt,
// traced, and every reference stage compared (|c - r| <= 1e-5·max(1, |r|), -inf exactly) on every
// kernel path of golden_ref.h. Also: the stage list of such a trace, and a contradicting config.
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fileio.h"       // defines: file_read_all, file_write_atomic
#include "forward.h"      // defines: model_forward, forward_use_gemm
#include "gemm.h"         // defines: gemm_kernel
#include "golden_ref.h"   // defines: golden_read_rows, golden_compare, golden_path
#include "mat.h"          // defines: mat_naive_max_madds
#include "model.h"        // defines: Model
#include "model_load.h"   // defines: model_load
#include "model_tokens.h" // defines: model_tokenize
#include "safetensors.h"  // defines: st_map_min_bytes
#include "trace.h"        // defines: Trace, trace_new

enum { N_CASES = 10 };

// Tokens of the ids "270 265 277" (labels the vocabulary's).
static Tokens ids_tokens(const Model *m, const char *ids) {
  Tokens t = {0};
  int cap = 64;
  t.ids = calloc((size_t)cap, sizeof(int));
  t.words = calloc((size_t)cap, sizeof(char *));
  t.unknown = calloc((size_t)cap, sizeof(bool));
  for (const char *p = ids; t.n < cap;) {
    char *end;
    long id = strtol(p, &end, 10);
    if (end == p) break;
    CHECK(id >= 0 && id < m->cfg.V, "id %ld out of the vocabulary", id);
    t.ids[t.n] = (int)id;
    t.words[t.n] = m->vocab.words[id];
    t.n++;
    p = end;
  }
  return t;
}

static int compare_refs(const char *cname, const char *dir, const Trace *t) {
  int n = 0;
  double worst = 0;
  char worst_name[64] = "";
  DIR *d = opendir(dir);
  CHECK(d != NULL, "%s: cannot open %s", cname, dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".npy")) continue;
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(len - 4), e->d_name);
    double diff = golden_compare(cname, dir, name, t);
    if (diff >= worst) worst = diff, snprintf(worst_name, sizeof worst_name, "%s", name);
    n++;
  }
  if (d) closedir(d);
  printf("%-22s %2d stages, L=%2d, max |diff| %.3g (%s)\n", cname, n, t->L, worst, worst_name);
  return n;
}

// Every case once on the current path; returns the stages compared.
static int run_cases(const char *refdir, GoldenRow *rows, int n) {
  int stages = 0;
  for (int i = 0; i < n; i++) {
    const char *name = rows[i].f[0];
    int s = 0;
    for (int j = 0; j < i; j++) s += !strcmp(rows[j].f[0], name);
    char dir[4200], sdir[4300], cname[96], model_path[4300];
    snprintf(dir, sizeof dir, "%.4000s/%.60s", refdir, name);
    snprintf(sdir, sizeof sdir, "%s/s%d", dir, s);
    snprintf(cname, sizeof cname, "%.60s/s%d", name, s);
    // the canonical fixture is a file beside its stages' folder
    snprintf(model_path, sizeof model_path, "%s.safetensors", dir);
    if (access(model_path, F_OK) != 0) snprintf(model_path, sizeof model_path, "%s", dir);
    Err err = {0};
    Model *m = model_load(model_path, &err);
    CHECK(m != NULL, "%s: %s", cname, err.msg);
    if (!m) continue;
    Tokens tok = ids_tokens(m, rows[i].f[1]);
    if (m->tokenizer) { // a hub folder's tokenizer.json gives the generator's ids for its text
      char tpath[4400];
      size_t len;
      snprintf(tpath, sizeof tpath, "%s/text.txt", sdir);
      char *text = file_read_all(tpath, &len, 1 << 16, &err);
      CHECK(text != NULL, "%s", err.msg);
      if (text && len && text[len - 1] == '\n') text[len - 1] = 0;
      Tokens tt;
      bool ok = text && model_tokenize(m, text, 0, &tt, &err);
      CHECK(ok, "%s: %s", cname, err.msg);
      bool same = ok && tt.n == tok.n;
      for (int k = 0; same && k < tt.n; k++) same = tt.ids[k] == tok.ids[k];
      CHECK(same, "%s: the tokenizer's ids for \"%s\" differ from the generator's", cname, text ? text : "");
      if (ok) tokens_free(&tt);
      free(text);
    }
    Trace *t = trace_new(m, &tok, &err);
    CHECK(t != NULL, "%s: %s", cname, err.msg);
    if (t) {
      model_forward(t);
      stages += compare_refs(cname, sdir, t);
    }
    trace_free(t);
    free(tok.ids), free(tok.words), free(tok.unknown);
    model_free(m);
  }
  return stages;
}

// The paths of a large model (issues 34-35), on the fixtures: every file mapped as a 1B checkpoint's
// is (st_map_min_bytes 0; the shards of a sharded folder into one region, F32 tensors read in place),
// and layer matrices of the model's own (BF16, F16, the canonical file's) left unpacked as a 1B's
// from GGUF are (model_pack_own_max 0 and model_pack_converted false: the forward packs block by
// block, gemm_blocks.h, with every product on the packed kernels: mat_naive_max_madds and
// mat_loop_max_rows 0). The same stages either way. A converted model is packed whatever its size
// by default, its head too (model.h).
static void check_large_paths(const char *refdir, GoldenRow *rows, int n) {
  size_t map_min = st_map_min_bytes;
  int64_t own_max = model_pack_own_max;
  long naive = mat_naive_max_madds;
  int loop_rows = mat_loop_max_rows;
  st_map_min_bytes = 0, model_pack_own_max = 0, mat_naive_max_madds = 0, mat_loop_max_rows = 0;
  char dir[4200];
  Err err = {0};
  snprintf(dir, sizeof dir, "%.4000s/llama3-bf16", refdir);
  Model *m = model_load(dir, &err);
  CHECK(m && m->converted &&
            (!gemm_supported() || (m->layers[0].in_proj_packed.panels && m->layers[1].linear2_packed.panels &&
                                   m->head_packed.panels)),
        "llama3-bf16: converted, so packed, its head too, whatever model_pack_own_max: %s", err.msg);
  model_free(m);
  model_pack_converted = false;
  printf("== mapped files, own layer matrices unpacked (block by block)\n");
  snprintf(dir, sizeof dir, "%.4000s/qwen3-sharded", refdir);
  m = model_load(dir, &err);
  CHECK(m && m->map && (const uint8_t *)m->embed >= m->map && (const uint8_t *)m->embed < m->map + m->map_len,
        "qwen3-sharded: its shards mapped, the embedding read in place: %s", err.msg);
  model_free(m);
  snprintf(dir, sizeof dir, "%.4000s/llama3-bf16", refdir);
  m = model_load(dir, &err);
  CHECK(m && !m->map && !m->layers[0].in_proj_packed.panels && !m->layers[1].linear2_packed.panels &&
            !m->head_packed.panels,
        "llama3-bf16: converted, so its own; not packed with model_pack_own_max 0: %s", err.msg);
  model_free(m);
  int stages = run_cases(refdir, rows, n);
  CHECK(stages >= N_CASES * 40, "%d stages compared, mapped and unpacked", stages);
  st_map_min_bytes = map_min, model_pack_own_max = own_max, mat_naive_max_madds = naive;
  model_pack_converted = true;
  mat_loop_max_rows = loop_rows;
}

// The stages a learner steps through in one layer of a Qwen 3 model, in order.
static void check_steps(const char *refdir) {
  char dir[4200];
  snprintf(dir, sizeof dir, "%.4000s/qwen3-sharded", refdir);
  Err err = {0};
  Model *m = model_load(dir, &err);
  CHECK(m != NULL, "qwen3: %s", err.msg);
  if (!m) return;
  CHECK(m->cfg.H == 4 && model_hkv(&m->cfg) == 1 && model_dk(&m->cfg) == 16 && m->cfg.qk_norm && m->tie_head,
        "qwen3: H=%d H_kv=%d d_k=%d", m->cfg.H, model_hkv(&m->cfg), model_dk(&m->cfg));
  Tokens tok = ids_tokens(m, "1 2 3");
  Trace *t = trace_new(m, &tok, &err);
  CHECK(t != NULL, "%s", err.msg);
  static const StepKind want[] = {STEP_TOKENS,     STEP_ONEHOT,  STEP_EMBED,    STEP_RMSNORM1, STEP_QKV,
                                  STEP_ROPE,       STEP_SCORES,  STEP_MASK,     STEP_SOFTMAX,  STEP_AV,
                                  STEP_CONCAT,     STEP_OUTPROJ, STEP_RMSNORM2, STEP_GATE,     STEP_UP,
                                  STEP_FFN_HIDDEN, STEP_FFN_OUT, STEP_ADDNORM2};
  for (size_t i = 0; t && i < sizeof want / sizeof want[0]; i++)
    CHECK(t->steps[i].kind == want[i], "step %zu is %s, expected %s", i, stage_info(t->steps[i].kind)->name,
          stage_info(want[i])->name);
  StepKind k;
  CHECK(stage_from_name("rope", &k) && k == STEP_ROPE, "stage=rope");
  CHECK(stage_from_name("rmsnorm", &k) && k == STEP_RMSNORM1, "stage=rmsnorm");
  CHECK(stage_from_name("gate", &k) && k == STEP_GATE, "stage=gate");
  const TraceTensor *K = t ? trace_find(t, "l0.K") : NULL;
  CHECK(K && K->heads == 1 && K->cols == 16, "l0.K has H_kv = 1 head of 16");
  trace_free(t);
  free(tok.ids), free(tok.words), free(tok.unknown);
  model_free(m);
}

// The key/value cache (forward.h): the first token's trace fills it, each further token is pushed,
// and its logits equal the last row of a full trace of the longer sentence (RoPE at that position,
// grouped K/V heads, QK-norm). The longer sentence of every fixture, every length from 2 to L.
static void check_kv_cache(const char *refdir, GoldenRow *rows, int n) {
  double worst = 0;
  int pushed = 0;
  for (int i = 1; i < n; i += 2) { // s1: the longer sentence of each model
    const GoldenRow *row = &rows[i];
    char dir[4200], model_path[4300];
    snprintf(dir, sizeof dir, "%.4000s/%.60s", refdir, row->f[0]);
    snprintf(model_path, sizeof model_path, "%s.safetensors", dir);
    if (access(model_path, F_OK) != 0) snprintf(model_path, sizeof model_path, "%s", dir);
    Err err = {0};
    Model *m = model_load(model_path, &err);
    CHECK(m != NULL, "%s: %s", row->f[0], err.msg);
    if (!m) continue;
    Tokens tok = ids_tokens(m, row->f[1]);
    KVCache c;
    bool ok = kv_init(&c, m, tok.n, &err);
    CHECK(ok, "%s: %s", row->f[0], err.msg);
    Tokens first = tok;
    first.n = 1;
    Trace *t1 = ok ? trace_new(m, &first, &err) : NULL;
    if (t1) {
      model_forward(t1);
      kv_fill(&c, t1);
      trace_free(t1);
    }
    for (int L = 2; t1 && L <= tok.n; L++) {
      kv_push(&c, tok.ids[L - 1]);
      Tokens part = tok;
      part.n = L;
      Trace *t = trace_new(m, &part, &err);
      model_forward(t);
      const TraceTensor *z = trace_find(t, "logits");
      for (int v = 0; v < m->cfg.V; v++) {
        double r = trace_at(z, 0, L - 1, v), d = fabs(c.logits[v] - r);
        if (d > worst) worst = d;
        CHECK(d <= 1e-5 * fmax(1, fabs(r)), "%s: cached logit %d at L=%d is %g, the trace's %g", row->f[0], v,
              L, c.logits[v], r);
      }
      trace_free(t);
      pushed++;
    }
    if (ok) kv_free(&c);
    free(tok.ids), free(tok.words), free(tok.unknown);
    model_free(m);
  }
  printf("key/value cache: %d tokens pushed, logits within %.3g of the full traces'\n", pushed, worst);
  CHECK(pushed >= 60, "%d tokens pushed", pushed);
}

// A config whose architectures and model_type disagree, and one without hidden_size: one line each.
static void check_bad_configs(const char *refdir) {
  static const char *const bad[][2] = {
      {"\"LlamaForCausalLM\"", "\"Qwen2ForCausalLM\""},
      {"\"hidden_size\": 32,", ""},
      {"\"num_key_value_heads\": 2,", "\"num_key_value_heads\": 3,"},
  };
  static const char *const says[] = {"contradicts", "\"hidden_size\" is missing", "does not divide"};
  for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
    char tmp[] = "/tmp/sf-llama-XXXXXX", src[4300], dst[4300];
    CHECK(mkdtemp(tmp) != NULL, "mkdtemp");
    const char *files[] = {"config.json", "model.safetensors", "tokenizer.json"};
    for (int f = 0; f < 3; f++) {
      size_t len;
      Err err = {0};
      snprintf(src, sizeof src, "%.4000s/llama-gqa2/%s", refdir, files[f]);
      snprintf(dst, sizeof dst, "%s/%s", tmp, files[f]);
      char *d = file_read_all(src, &len, 1 << 24, &err);
      CHECK(d != NULL, "%s", err.msg);
      if (!d) continue;
      if (f == 0) { // config.json, edited
        char *at = strstr(d, bad[b][0]);
        CHECK(at != NULL, "config has no %s", bad[b][0]);
        if (at) {
          size_t ol = strlen(bad[b][0]), nl = strlen(bad[b][1]);
          memmove(at + nl, at + ol, len - (size_t)(at - d) - ol + 1);
          memcpy(at, bad[b][1], nl);
          len = len - ol + nl;
        }
      }
      CHECK(file_write_atomic(dst, d, len, &err), "%s", err.msg);
      free(d);
    }
    Err err = {0};
    Model *m = model_load(tmp, &err);
    CHECK(m == NULL && strstr(err.msg, says[b]) && !strchr(err.msg, '\n'), "bad config %zu: \"%s\"", b,
          err.msg);
    model_free(m);
    for (int f = 0; f < 3; f++) {
      snprintf(dst, sizeof dst, "%s/%s", tmp, files[f]);
      unlink(dst);
    }
    rmdir(tmp);
  }
}

int main(void) {
  char refdir[4096], path[4200];
  snprintf(refdir, sizeof refdir, "%s/ref/llama", check_test_dir());
  snprintf(path, sizeof path, "%s/cases.txt", refdir);
  GoldenRow rows[N_CASES + 1];
  int n = golden_read_rows(path, 2, rows, N_CASES + 1);
  CHECK(n == N_CASES, "%d cases, expected %d", n, N_CASES);
  GemmKernel was = gemm_kernel();
  long saved = mat_naive_max_madds;
  for (int p = 0; p < GOLDEN_PATHS; p++) {
    const GoldenPath *gp = golden_path(p);
    if (!golden_path_use(gp, was)) continue;
    mat_naive_max_madds = gp->threshold < 0 ? saved : gp->threshold;
    forward_use_gemm = gp->gemm;
    int stages = run_cases(refdir, rows, n);
    CHECK(stages >= N_CASES * 40, "%d stages compared", stages);
  }
  mat_naive_max_madds = saved;
  forward_use_gemm = true;
  gemm_use(was);
  check_large_paths(refdir, rows, n);
  check_steps(refdir);
  check_kv_cache(refdir, rows, n);
  check_bad_configs(refdir);
  return check_exit("test_llama_golden");
}
