// test_decoder_view.c -- every stage of an encoder-decoder's decoder is drawn and explained.
//
// For two reference encoder-decoders (post-norm ReLU, pre-norm GELU with 4 heads and 3 decoder
// layers), every step of the trace, one head and the all-heads grid: the view has operands and a
// result (the tokens' steps excepted); every operand's cells get a worked equation whose last
// number is the cell (as test_explain.c checks the encoder's), whose heading names the cell's own
// row word (a target word on the decoder's rows); the cross-attention score's equation names q
// from the decoder's row and k from memory's row, with the target and the source word.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "explain_check.h" // defines: explain_check_layout
#include "explain.h"
#include "forward.h"
#include "model_load.h" // defines: model_load
#include "page.h"       // defines: page_step_has_heads
#include "tex.h"

static Trace *load(const char *ref, const char *text, const char *target, Model **m) {
  char path[1024];
  snprintf(path, sizeof path, "%s/ref/%s/model.safetensors", check_test_dir(), ref);
  Err err = {0};
  *m = model_load(path, &err);
  if (!*m) {
    fprintf(stderr, "%s\n", err.msg);
    exit(1);
  }
  Tokens src, dec;
  CHECK(tokens_from_text(&src, &(*m)->vocab, text, 0, &err), "%s", err.msg);
  CHECK(trace_decoder_tokens(&dec, *m, target, 0, &err), "%s", err.msg);
  Trace *t = trace_new_seq2seq(*m, &src, &dec, &err);
  tokens_free(&src);
  tokens_free(&dec);
  if (!t) {
    fprintf(stderr, "%s\n", err.msg);
    exit(1);
  }
  model_forward(t);
  return t;
}

static void check_trace(const char *name, Trace *t) {
  int explained = 0, decoder_steps = 0;
  for (int st = 0; st < t->n_steps; st++) {
    bool decoder = t->steps[st].kind >= STEP_MEMORY;
    decoder_steps += decoder;
    for (int head = 0; head >= -1; head--) { // head 1, then the grid of all heads
      if (head < 0 && !page_step_has_heads(t, st)) break;
      ViewLayout lay;
      Scene s;
      scene_init(&s, 1600, 900, 0);
      ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
      o.head = head;
      view_render(&s, t, st, &o, 0, 0, 1600, 900, &lay);
      bool tokens = t->steps[st].result < 0;
      CHECK(tokens || (lay.n_ops > 0 && lay.result >= 0), "%s step %d (%s) head %d: nothing drawn", name, st,
            t->steps[st].name, head);
      if (head < 0) CHECK(lay.n_ops == t->cfg.H, "%s step %d: %d panels in the grid", name, st, lay.n_ops);
      if (decoder) explained += explain_check_layout(name, t, st, &lay);
      scene_free(&s);
    }
  }
  CHECK(decoder_steps > 20 && explained > 200, "%s: %d decoder steps, %d cells explained", name,
        decoder_steps, explained);
}

int main(void) {
  Err err = {0};
  if (!text_init(&err)) return fprintf(stderr, "%s\n", err.msg), 1;
  Model *m1, *m2;
  Trace *a = load("seq2seq-post", "The cat walks by the bank", "le chat marche près de la banque", &m1);
  Trace *b = load("seq2seq-pre-gelu", "She puts money in the bank.", "elle met argent dans la banque", &m2);
  check_trace("seq2seq-post", a);
  check_trace("seq2seq-pre-gelu", b);
  // the cross score of "chat" (decoder row 2) against "bank" (source column 5), spelled out
  int st = trace_step_find(a, STEP_CROSS_SCORES, 0);
  ViewLayout lay;
  Scene s;
  scene_init(&s, 1600, 900, 0);
  ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
  view_render(&s, a, st, &o, 0, 0, 1600, 900, &lay);
  Explanation ex;
  explain_cell(a, &lay, lay.result, 2, 5, &ex);
  CHECK(strstr(ex.heading, "\\text{chat}") && strstr(ex.heading, "\\text{bank}"), "heading: %s", ex.heading);
  bool decoder = false, memory = false;
  for (int n = 0; n < ex.n_lines; n++) {
    decoder |= strstr(ex.lines[n], "\\text{chat} \\text{ of } Q^c_{1} \\text{ (the decoder)}") != NULL;
    memory |= strstr(ex.lines[n], "\\text{bank} \\text{ of } K^c_{1} \\text{ (memory") != NULL;
  }
  CHECK(decoder && memory, "the cross score names q from the decoder and k from memory: %s / %s", ex.lines[0],
        ex.n_lines > 2 ? ex.lines[2] : "");
  char want[64];
  snprintf(want, sizeof want, "%.2f", trace_at(&a->t[a->dec_layers[0].cS], 0, 2, 5));
  CHECK(strstr(ex.lines[0], want) != NULL, "the score %s is in %s", want, ex.lines[0]);
  scene_free(&s);
  trace_free(a);
  trace_free(b);
  model_free(m1);
  model_free(m2);
  return check_exit("test_decoder_view");
}
