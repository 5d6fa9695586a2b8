// test_llama_views.c -- the views of today's decoders (issue 34) on the fixtures of tests/ref/llama/:
// every step of a Qwen 3 trace (4 query heads on 1 K/V head, QK-norm, head_dim != D/H), a Qwen 2
// (6 on 2, biases) and the canonical adjacent-pairs model drawn at 1280x720 with every head
// selected, and a spread of each operand's cells explained (explain_check.h): every worked equation
// ends with its cell's value, RMSNorm's and RoPE's and SwiGLU's too.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "explain_check.h" // defines: explain_check_layout
#include "forward.h"       // defines: model_forward
#include "model_load.h"    // defines: model_load
#include "model_tokens.h"  // defines: model_tokenize
#include "colormap.h"      // defines: theme_get
#include "explain.h"       // defines: explain_cell
#include "view.h"          // defines: view_render, ViewOptions

static void check_model(const char *name, const char *text) {
  char path[4200];
  snprintf(path, sizeof path, "%s/ref/llama/%s", check_test_dir(), name);
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "%s: %s", name, err.msg);
  if (!m) return;
  Tokens tok;
  bool ok = model_tokenize(m, text, 0, &tok, &err);
  CHECK(ok, "%s: %s", name, err.msg);
  Trace *t = ok ? trace_new(m, &tok, &err) : NULL;
  CHECK(!ok || t, "%s: %s", name, err.msg);
  if (t) {
    model_forward(t);
    int explained = 0, modern = 0;
    for (int h = 0; h < t->cfg.H; h++)
      for (int st = 1; st < t->n_steps; st++) {
        StepKind k = t->steps[st].kind;
        bool per_head = stage_info(k)->heads == STAGE_PER_HEAD || k == STEP_ROPE;
        if (h > 0 && !per_head) continue; // one picture is enough
        ViewLayout lay;
        Scene s;
        scene_init(&s, 1280, 720, 0);
        ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
        o.head = h;
        view_render(&s, t, st, &o, 0, 0, 1280, 720, &lay);
        CHECK(lay.n_ops > 0, "%s step %d (%s): nothing drawn", name, st, stage_info(k)->name);
        int n = explain_check_layout(name, t, st, &lay);
        explained += n;
        if (k == STEP_RMSNORM1 || k == STEP_ROPE || k == STEP_FFN_HIDDEN || k == STEP_GATE) modern += n;
        scene_free(&s);
      }
    printf("%-16s %d cells explained, %d of them in RMSNorm, RoPE, gate and SwiGLU\n", name, explained,
           modern);
    CHECK(explained > 200 && modern > 40, "%s: %d cells explained (%d modern)", name, explained, modern);
  }
  trace_free(t);
  if (ok) tokens_free(&tok);
  model_free(m);
}

// RoPE's promise in the scores' inspector (issue 34, item 4): the score under the pointer, with q and
// k moved 100 places on, is the same number: the line says so with the distance and the value.
static void check_rope_hover(const char *name, const char *text, int i, int j) {
  char path[4200];
  snprintf(path, sizeof path, "%s/ref/llama/%s", check_test_dir(), name);
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "%s: %s", name, err.msg);
  if (!m) return;
  Tokens tok;
  CHECK(model_tokenize(m, text, 0, &tok, &err), "%s: %s", name, err.msg);
  Trace *t = trace_new(m, &tok, &err);
  model_forward(t);
  for (int h = 0; h < t->cfg.H; h++) {
    ViewLayout lay;
    Scene s;
    scene_init(&s, 1280, 720, 0);
    ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
    o.head = h;
    view_render(&s, t, trace_step_find(t, STEP_SCORES, 0), &o, 0, 0, 1280, 720, &lay);
    Explanation ex;
    explain_cell(t, &lay, lay.result, i, j, &ex);
    const char *line = NULL;
    for (int n = 0; n < ex.n_lines; n++)
      if (strstr(ex.lines[n], "only the distance")) line = ex.lines[n];
    CHECK(line != NULL, "%s head %d: no RoPE distance line under S[%d, %d]", name, h + 1, i + 1, j + 1);
    if (line) {
      char want[32];
      snprintf(want, sizeof want, "distance } %d", i - j);
      const char *eq = strstr(line, "}} = ");
      double v = eq ? strtod(eq + 5, NULL) : NAN;
      double cell = trace_at(&t->t[t->layers[0].S_raw >= 0 ? t->layers[0].S_raw : t->layers[0].S], h, i, j);
      CHECK(strstr(line, want) && strstr(line, "R_{") && fabs(v - cell) <= 0.006 + 0.006 * fabs(cell),
            "%s head %d: %s (the cell is %.4f)", name, h + 1, line, cell);
    }
    scene_free(&s);
  }
  trace_free(t);
  tokens_free(&tok);
  model_free(m);
}

int main(void) {
  check_model("qwen3-sharded", "The cat walks by the bank");
  check_model("qwen2-f16", "a bank, the river's bank!");
  check_model("canon-pairs.safetensors", "w1 w2 w3 w4 w5");
  check_rope_hover("qwen3-sharded", "The cat walks by the bank", 4, 1);
  check_rope_hover("canon-pairs.safetensors", "w1 w2 w3 w4 w5", 3, 0);
  return check_exit("test_llama_views");
}
