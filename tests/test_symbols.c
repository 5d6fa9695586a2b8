// test_symbols.c -- the stage equation's symbols say what they are (view_symbol_describe).
//
// For every shipped lesson (lessons/*.md but README.md): its model on its sentence (an
// encoder-decoder's decoder fed "<bos>" and its target, when the lesson has one), every step drawn
// at 1600×900; every operand drawn has its symbol's box recorded, and the window's hover text
// for it names the symbol, says what it is (the notation table's title) and gives its shape with
// the real numbers ("Z′: layer output, L×D = 6×64"). A hit test in the middle of the box finds
// that operand; a point far from every symbol finds none.
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "forward.h"      // defines: model_forward
#include "lesson.h"       // defines: Lesson, lesson_load, lesson_open_model
#include "model_tokens.h" // defines: model_tokenize
#include "text.h"         // defines: text_init
#include "scene.h"        // defines: Scene, scene_init, scene_free
#include "colormap.h"     // defines: theme_get
#include "trace.h"        // defines: Trace, trace_new, trace_new_seq2seq, trace_decoder_tokens
#include "view.h"         // defines: view_render, view_symbol_describe, view_symbol_hit

static const char *source_dir(void) {
  const char *d = getenv("SF_SOURCE_DIR");
  return d ? d : ".";
}

static Trace *lesson_trace(const Lesson *l, const Model *m, Err *err) {
  Tokens src, dec;
  if (!model_tokenize(m, l->sentence, 0, &src, err)) return NULL;
  Trace *t = NULL;
  if (model_is_seq2seq(m)) {
    if (trace_decoder_tokens(&dec, m, l->target ? l->target : "", 0, err)) {
      t = trace_new_seq2seq(m, &src, &dec, err);
      tokens_free(&dec);
    }
  } else {
    t = trace_new(m, &src, err);
  }
  tokens_free(&src);
  if (t) model_forward(t);
  return t;
}

// Every operand of every step of t; returns how many symbols were checked.
static int check_trace(const char *what, const Trace *t) {
  int n = 0;
  for (int st = 1; st < t->n_steps; st++) {
    ViewLayout lay;
    Scene s;
    scene_init(&s, 1600, 900, 0);
    ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
    view_render(&s, t, st, &o, 0, 0, 1600, 900, &lay);
    for (int k = 0; k < lay.n_ops; k++) {
      const ViewOperand *v = &lay.ops[k];
      if (v->w <= 0) continue; // not drawn (the model view's thumbnails)
      char d[256], shape[64];
      view_symbol_describe(&lay, k, d, sizeof d);
      snprintf(shape, sizeof shape, "%d×%d", v->op.rows, v->op.cols);
      const char *colon = strstr(d, ": ");
      CHECK(v->sym[2] > 0 && v->sym[3] > 0, "%s step %d op %d: no symbol box [%s]", what, st, k,
            v->symbol ? v->symbol : "NULL");
      CHECK(colon && colon > d && colon[2] && colon[2] != ',',
            "%s step %d op %d: [%s] has no symbol or title", what, st, k, d);
      CHECK(strstr(d, " = ") && strstr(d, shape), "%s step %d op %d: [%s] lacks the shape %s", what, st, k, d,
            shape);
      int hit = -1;
      CHECK(view_symbol_hit(&lay, v->sym[0] + v->sym[2] / 2, v->sym[1] + v->sym[3] / 2, &hit) && hit == k,
            "%s step %d op %d: the middle of its symbol finds operand %d", what, st, k, hit);
      n++;
    }
    int none = -1;
    CHECK(!view_symbol_hit(&lay, 1, 899, &none), "%s step %d: a corner finds symbol %d", what, st, none);
    scene_free(&s);
  }
  return n;
}

int main(void) {
  Err terr = {0};
  if (!text_init(&terr)) { // the symbols' boxes are measured with the fonts
    fprintf(stderr, "test_symbols: %s\n", terr.msg);
    return 1;
  }
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/lessons", source_dir());
  DIR *dp = opendir(dir);
  CHECK(dp != NULL, "cannot open %s", dir);
  int lessons = 0, symbols = 0;
  for (struct dirent *e; dp && (e = readdir(dp));) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".md") || !strcmp(e->d_name, "README.md")) continue;
    char path[8200];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    Lesson l;
    LessonDiag d = {0};
    Err err = {0};
    if (!lesson_load(&l, path, &d)) {
      CHECK(false, "%s does not parse", path);
      continue;
    }
    Model *m = lesson_open_model(&l, NULL, &err);
    Trace *t = m ? lesson_trace(&l, m, &err) : NULL;
    CHECK(t != NULL, "%s: %s", path, err.msg);
    if (t) {
      int n = check_trace(e->d_name, t);
      CHECK(n > 20, "%s: %d symbols", path, n);
      symbols += n, lessons++;
    }
    trace_free(t);
    model_free(m);
    lesson_free(&l);
  }
  if (dp) closedir(dp);
  CHECK(lessons >= 8, "%d lessons checked", lessons);
  printf("test_symbols: %d symbols of %d lessons\n", symbols, lessons);
  return check_exit("test_symbols");
}
