// test_model_size.c -- the size arithmetic of large models (issues 34-35): parameter counts, the
// trace's block and the refusals, on the shapes of Llama 3.2 1B and Llama 3.1 8B.
//
// A test with shaped-but-tiny weights cannot show that a size past 2^31 is computed without
// overflow, and the real models are gigabytes. So the models here have their configuration, flags and
// layer array but no weights (a trace is sized before any weight is read):
//   - model_table_floats gives the published parameter counts: Llama 3.2 1B 1 235 814 400 (tied head),
//     Llama 3.1 8B 8 030 261 248 (separate lm_head), past 2^31 both as floats and as bytes;
//     model_param_count (the configuration's upper bound: every bias counted) is not below them;
//   - model_config_check takes both and refuses a configuration past mem_max_floats() in one line;
//   - the trace's block: every stage is rows × cols with rows and cols L, L², a width or 1, so its
//     floats are a·L² + b·L + c. a, b, c are measured on traces of 1, 2 and 3 tokens, checked on 4 and
//     32 (the 1B's 32-token trace is made, and its block has exactly the predicted floats), and then
//     predicted where they pass 2^31 and 2^34: 8B at 1024 tokens (26 GB) and 1B at its 131 072, which
//     trace_new must refuse in one line that names the predicted size (no overflow on the way), with
//     mem_available_override fixing the machine at 16 GiB;
//   - model_memory_check refuses the 8B's float32 weights on that machine and takes the 1B's.
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "memsize.h" // defines: mem_available_override, mem_max_floats
#include "model.h"   // defines: Model, model_table_floats, model_param_count, model_memory_check
#include "trace.h"   // defines: trace_new, Trace

// A Llama-architecture model without weights: configuration, flags, layers (all pointers NULL).
static Model *shape_only(int layers, int D, int H, int Hkv, int F, int V, bool tied) {
  Model *m = calloc(1, sizeof *m);
  m->cfg = model_config_default();
  ModelConfig *c = &m->cfg;
  c->V = V, c->D = D, c->H = H, c->H_kv = Hkv, c->F = F, c->n_layers = layers;
  c->norm_first = c->causal = c->rms_norm = c->gated = c->no_pos = true;
  c->rope = ROPE_HALF, c->rope_theta = 500000, c->activation = ACT_SILU;
  m->no_in_proj_bias = m->no_out_proj_bias = true;
  m->has_head = m->has_final_norm = true;
  m->tie_head = tied;
  m->layers = calloc((size_t)layers, sizeof(LayerWeights));
  return m;
}

static void shape_free(Model *m) {
  free(m->layers);
  free(m);
}

// L tokens, all id 0 ("a").
static Tokens tokens(int L) {
  Tokens t = {L, calloc((size_t)L, sizeof(int)), calloc((size_t)L, sizeof(char *)), calloc((size_t)L, 1),
              NULL};
  for (int i = 0; i < L; i++) t.words[i] = "a";
  return t;
}

static void tokens_done(Tokens *t) { free(t->ids), free(t->words), free(t->unknown); }

// The trace's block for L tokens, or -1 with the refusal in err.
static int64_t block_floats(const Model *m, int L, Err *err) {
  Tokens tk = tokens(L);
  Trace *t = trace_new(m, &tk, err);
  int64_t n = t ? (int64_t)t->block_floats : -1;
  trace_free(t);
  tokens_done(&tk);
  return n;
}

typedef struct {
  int64_t a, b, c; // floats = a·L² + b·L + c
} Quad;

static int64_t quad_at(Quad q, int64_t L) { return q.a * L * L + q.b * L + q.c; }

// Measures the polynomial on 1, 2, 3 tokens and checks it on 4 and 32.
static Quad trace_quad(const Model *m, const char *name) {
  Err err = {0};
  int64_t f1 = block_floats(m, 1, &err), f2 = block_floats(m, 2, &err), f3 = block_floats(m, 3, &err);
  CHECK(f1 > 0 && f2 > 0 && f3 > 0, "%s: traces of 1-3 tokens: %s", name, err.msg);
  Quad q;
  q.a = (f3 - 2 * f2 + f1) / 2;
  q.b = f2 - f1 - 3 * q.a;
  q.c = f1 - q.a - q.b;
  CHECK((f3 - 2 * f2 + f1) % 2 == 0 && q.a > 0, "%s: a = %" PRId64, name, q.a);
  int64_t f4 = block_floats(m, 4, &err);
  CHECK(f4 == quad_at(q, 4), "%s: 4 tokens: %" PRId64 " floats, predicted %" PRId64, name, f4, quad_at(q, 4));
  int64_t f32 = block_floats(m, 32, &err);
  CHECK(f32 == quad_at(q, 32), "%s: 32 tokens: %" PRId64 " floats, predicted %" PRId64 " (%s)", name, f32,
        quad_at(q, 32), err.msg);
  return q;
}

// trace_new refuses L tokens in one line naming the predicted size in GiB.
static void refused(const Model *m, int L, Quad q, const char *name) {
  Err err = {0};
  int64_t n = block_floats(m, L, &err);
  char want[64];
  snprintf(want, sizeof want, "make %.1f GiB of stages", (double)quad_at(q, L) * 4 / (1 << 30));
  CHECK(n < 0 && strstr(err.msg, want) && strstr(err.msg, "shorten the sentence") && !strchr(err.msg, '\n'),
        "%s at %d tokens (%s): %s", name, L, want, err.msg);
}

int main(void) {
  Model *one = shape_only(16, 2048, 32, 8, 8192, 128256, true);     // Llama 3.2 1B
  Model *eight = shape_only(32, 4096, 32, 8, 14336, 128256, false); // Llama 3.1 8B
  int64_t n1 = model_table_floats(one), n8 = model_table_floats(eight);
  CHECK(n1 == 1235814400, "Llama 3.2 1B: %" PRId64 " parameters", n1);
  CHECK(n8 == 8030261248, "Llama 3.1 8B: %" PRId64 " parameters", n8);
  CHECK(model_param_count(&one->cfg, false, true) >= n1 && model_param_count(&eight->cfg, true, true) >= n8,
        "model_param_count is an upper bound: %" PRId64 ", %" PRId64,
        model_param_count(&one->cfg, false, true), model_param_count(&eight->cfg, true, true));
  CHECK(model_layer_matrix_floats(&one->cfg) == 16LL * (3072 * 2048 + 2048 * 2048 + 3 * 8192 * 2048),
        "the 1B's layer matrices: %" PRId64, model_layer_matrix_floats(&one->cfg));
  CHECK(!model_packs_own(&one->cfg), "the 1B's own layer matrices (3.6 GiB) are not packed");
  Err err = {0};
  CHECK(model_config_check(&one->cfg, "1B", &err) && model_config_check(&eight->cfg, "8B", &err), "%s",
        err.msg);

  // a configuration past mem_max_floats (64 layers of D 8192, F 32768: 69 billion) in one line
  ModelConfig huge = eight->cfg;
  huge.n_layers = 64, huge.D = 8192, huge.H = 64, huge.F = 32768;
  err.msg[0] = 0;
  CHECK(!model_config_check(&huge, "huge", &err) && strstr(err.msg, "parameters, more than the") &&
            !strchr(err.msg, '\n'),
        "huge: %s", err.msg);

  // the machine: 16 GiB available
  mem_available_override = (uint64_t)16 << 30;
  err.msg[0] = 0;
  CHECK(model_memory_check(n1, false, "1B", &err), "the 1B's 4.6 GiB fit in 16 GiB: %s", err.msg);
  CHECK(!model_memory_check(n8, false, "8B", &err) &&
            strstr(err.msg, "8B: its 8030261248 parameters take 29.9 GiB") &&
            strstr(err.msg, "16.0 GiB of memory are available"),
        "the 8B's 29.9 GiB do not: %s", err.msg);

  Quad q1 = trace_quad(one, "1B"), q8 = trace_quad(eight, "8B");
  printf("1B: trace floats = %" PRId64 "·L² + %" PRId64 "·L + %" PRId64 " (32 tokens: %.1f MiB)\n", q1.a,
         q1.b, q1.c, (double)quad_at(q1, 32) * 4 / (1 << 20));
  printf("8B: trace floats = %" PRId64 "·L² + %" PRId64 "·L + %" PRId64 "\n", q8.a, q8.b, q8.c);
  CHECK(q1.a >= 16LL * 32 * 2, "1B: at least the scores and weights, H·L² each per layer: %" PRId64, q1.a);
  CHECK(quad_at(q8, 1024) > ((int64_t)1 << 31) && quad_at(q8, 1024) < mem_max_floats() &&
            quad_at(q8, 1024) * 4 > ((int64_t)16 << 30),
        "8B at 1024 tokens passes 2^31 floats and 16 GiB, not mem_max_floats");
  refused(eight, 1024, q8, "8B");
  CHECK(quad_at(q1, 131072) > mem_max_floats(), "1B at 131072 tokens passes mem_max_floats");
  refused(one, 131072, q1, "1B");
  mem_available_override = 0;
  shape_free(one);
  shape_free(eight);
  return check_exit("test_model_size");
}
