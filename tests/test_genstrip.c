// test_genstrip.c -- one probability is written one way on one slide (issue 31's remarks).
//
// The decoder's last generation step (decoder.md: "She puts money in the bank" → "… banque <eos>")
// drawn as the lesson draws it: the target prediction's page with its bars and, under it, the
// generation strip. The bars wrote "> 99.9 %" for <eos> while the strip wrote "> 0.999" (and
// "< 0.001" beside "0.0033 %"): every probability on the slide is a percentage, and the strip's
// number for a word is the bars' number for it.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli.h"      // links the app layer (genstrip.c)
#include "trace.h"    // defines: trace_step_find
#include "genstrip.h" // defines: genstrip_draw, genstrip_height
#include "model_load.h"
#include "page.h" // defines: page_render
#include "text.h" // defines: text_init

// A probability as the bars or the strip write it: "0.523", "> 0.999", "< 0.001", "52.3 %".
static bool probability(const char *t) {
  if (!strncmp(t, "> ", 2) || !strncmp(t, "< ", 2)) t += 2;
  if (t[0] < '0' || t[0] > '9' || !strchr(t, '.')) return false;
  return strspn(t, "0123456789.") == strlen(t) || !strcmp(t + strspn(t, "0123456789."), " %");
}

int main(void) {
  Err err = {0};
  if (!text_init(&err)) return fprintf(stderr, "%s\n", err.msg), 1;
  char path[1024];
  snprintf(path, sizeof path, "%s/../assets/models/translate.safetensors", check_test_dir());
  Model *m = model_load(path, &err);
  if (!m) return fprintf(stderr, "%s\n", err.msg), 1;
  Tokens src;
  CHECK(tokens_from_text(&src, &m->vocab, "She puts money in the bank", 0, &err), "%s", err.msg);
  Generation *g = gen_run(m, &src, 0, &err);
  CHECK(g && g->ended, "generation: %s", err.msg);
  if (!g) return check_exit("test_genstrip");
  int k = g->n_steps - 1; // <eos>, beside candidates above 0
  Trace *t = gen_step_trace(g, k, &err);
  CHECK(t != NULL, "%s", err.msg);
  if (t) {
    const float W = 1280, H = 720;
    ViewOptions vo = view_options_default(theme_get(THEME_LIGHT));
    PageSpec p = {.trace = t,
                  .step = trace_step_find(t, STEP_DEC_PREDICT, -1),
                  .view = &vo,
                  .sentence = "She puts money in the bank",
                  .footer_reserve = genstrip_height(H, 1),
                  .width = W,
                  .height = H};
    Scene s;
    scene_init(&s, (int)W, (int)H, 0);
    ViewLayout lay;
    page_render(&s, &p, &lay);
    int strip_from = s.n;
    genstrip_draw(&s, g, k, vo.theme, W, H, 1, false, false);
    int bars = 0, strip = 0;
    const char *eos_bar = NULL, *eos_strip = NULL;
    for (int c = 0; c < s.n; c++) {
      const char *x = s.cmds[c].kind == CMD_TEXT ? s.cmds[c].text : NULL;
      if (!x || !probability(x)) continue;
      // (the page's colour bars are scales, 0.00 … 1.00, no probability of a word)
      if (c < strip_from && !strstr(x, " %")) continue;
      CHECK(strstr(x, " %") != NULL, "the strip: \"%s\" is not a percentage like the bars' \"> 99.9 %%\"", x);
      if (c < strip_from) {
        bars++;
        if (!eos_bar) eos_bar = x;
      } else {
        strip++;
        if (!eos_strip) eos_strip = x;
      }
    }
    CHECK(bars >= 5 && strip == g->steps[k].n_top, "%d probabilities in the bars, %d in the strip", bars,
          strip);
    CHECK(eos_bar && eos_strip && !strcmp(eos_bar, eos_strip) && !strcmp(eos_bar, "> 99.9 %"),
          "<eos> reads \"%s\" in the bars and \"%s\" in the strip", eos_bar ? eos_bar : "",
          eos_strip ? eos_strip : "");
    scene_free(&s);
  }
  gen_free(g);
  tokens_free(&src);
  model_free(m);
  return check_exit("test_genstrip");
}
