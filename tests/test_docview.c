// test_docview.c -- a lesson step's narration laid out in its column (docview.h): nothing leaves
// the column (a displayed formula too wide is broken at its \qquad, or set smaller), a line
// never starts with the punctuation that ends the previous one, code blocks keep their lines,
// code is shaded on the narration panel.
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "docview.h" // defines: docview_render
#include "scene.h"   // defines: Scene, Cmd

// fontconfig 2.14 (Debian 12) leaks once in FcInit; see test_tex.c.
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libfontconfig.so\n"; }

#define X0 24.0f
#define SIZE 21.0f

// The right edge of what a command draws.
static float right_edge(const Cmd *c) {
  switch (c->kind) {
  case CMD_TEXT: return c->x + text_width(c->font, c->size, c->text);
  case CMD_LINE: return fmaxf(c->x, c->x2) + c->width / 2;
  default: return c->x + c->w;
  }
}

static float rightmost(const Scene *s) {
  float r = 0;
  for (int i = 0; i < s->n; i++) r = fmaxf(r, right_edge(&s->cmds[i]));
  return r;
}

static const Cmd *find_text(const Scene *s, const char *t) {
  for (int i = 0; i < s->n; i++)
    if (s->cmds[i].kind == CMD_TEXT && !strcmp(s->cmds[i].text, t)) return &s->cmds[i];
  return NULL;
}

static Doc doc_math(const char *tex) {
  Doc d = {0};
  DocBlock *b = doc_add_block(&d, BLOCK_MATH, 1);
  doc_add_spann(&d, b, SPAN_MATH, 0, tex, -1, 1);
  return d;
}

static void render(Scene *s, const Doc *d, float w) {
  scene_reset(s, 1920, 1080, 0);
  docview_render(s, d, theme_get(THEME_LIGHT), SIZE, X0, 100, w, 900);
}

// cat-bank.md's positional encoding, in the narration column of a 1920×1080 picture (536 px).
static void test_wide_display_formula(Scene *s) {
  const char *pe = "p_{i,2k} = \\sin\\left(\\frac{i}{10000^{2k/D}}\\right), \\qquad\n"
                   "p_{i,2k+1} = \\cos\\left(\\frac{i}{10000^{2k/D}}\\right)";
  Doc d = doc_math(pe);
  render(s, &d, 536);
  CHECK(rightmost(s) <= X0 + 536 + 0.5f, "the formula reaches x = %.1f, past the column's edge %.1f",
        rightmost(s), X0 + 536);
  const Cmd *sin = find_text(s, "sin"), *cos = find_text(s, "cos");
  CHECK(sin && cos && cos->y > sin->y + SIZE, "broken at the \\qquad: cos on a line below sin");
  CHECK(sin && sin->size >= SIZE * 1.2f - 1, "at full display size (%.1f px), not shrunk",
        sin ? sin->size : 0);
  doc_free(&d);

  // nothing to break at: the formula is set smaller, within the column
  d = doc_math("\\mathrm{Attention}(Q, K, V) = \\operatorname{softmax}\\left(\\frac{Q K^\\top}{\\sqrt{d_k}}"
               "\\right) V");
  render(s, &d, 300);
  CHECK(rightmost(s) <= X0 + 300 + 0.5f, "a formula without \\quad reaches x = %.1f, past %.1f", rightmost(s),
        X0 + 300);
  doc_free(&d);

  // an inline formula wider than the column
  d = (Doc){0};
  DocBlock *b = doc_add_block(&d, BLOCK_PARA, 1);
  doc_add_spann(&d, b, SPAN_TEXT, 0, "Here ", -1, 1);
  doc_add_spann(&d, b, SPAN_MATH, 0, "a_1 + a_2 + a_3 + a_4 + a_5 + a_6 + a_7 + a_8", -1, 1);
  render(s, &d, 200);
  CHECK(rightmost(s) <= X0 + 200 + 0.5f, "an inline formula reaches x = %.1f, past %.1f", rightmost(s),
        X0 + 200);
  doc_free(&d);
}

// "an *id*." must not leave the full stop alone at the start of a line, at any width.
static bool starts_a_line(Scene *s, const Doc *d, const char *piece, float *at) {
  for (float w = 120; w < 900; w += 1) {
    render(s, d, w);
    const Cmd *c = find_text(s, piece);
    if (c && c->x < X0 + 1) return *at = w, true;
  }
  return false;
}

static void test_punctuation_stays(Scene *s) {
  Doc d = {0};
  DocBlock *b = doc_add_block(&d, BLOCK_PARA, 1);
  doc_add_spann(&d, b, SPAN_TEXT, 0, "Each word gets its number in the vocabulary, an ", -1, 1);
  doc_add_spann(&d, b, SPAN_TEXT, DOC_EM, "id", -1, 1);
  doc_add_spann(&d, b, SPAN_TEXT, 0, ". The two", -1, 1);
  float w = 0;
  CHECK(!starts_a_line(s, &d, ".", &w), "the full stop after *id* starts a line at width %.0f", w);
  doc_free(&d);

  d = (Doc){0}; // and the comma after a formula
  b = doc_add_block(&d, BLOCK_PARA, 1);
  doc_add_spann(&d, b, SPAN_TEXT, 0, "aaaa bbbb cccc dddd ", -1, 1);
  doc_add_spann(&d, b, SPAN_MATH, 0, "x_i", -1, 1);
  doc_add_spann(&d, b, SPAN_TEXT, 0, ", then", -1, 1);
  CHECK(!starts_a_line(s, &d, ",", &w), "the comma after $x_i$ starts a line at width %.0f", w);
  doc_free(&d);
}

static void test_code(Scene *s) {
  Doc d = {0};
  DocBlock *b = doc_add_block(&d, BLOCK_CODE, 1);
  doc_add_spann(&d, b, SPAN_TEXT, 0, "def f(q, k):\n    return q @ k.T", -1, 1);
  render(s, &d, 500);
  const Cmd *l1 = find_text(s, "def f(q, k):"), *l2 = find_text(s, "    return q @ k.T");
  CHECK(l1 && l2, "a code block keeps its lines and their indentation");
  CHECK(l1 && l1->font == FONT_MONO, "in the monospaced face");
  CHECK(l1 && l2 && l2->y > l1->y, "one below the other");
  doc_free(&d);

  d = (Doc){0};
  b = doc_add_block(&d, BLOCK_PARA, 1);
  doc_add_spann(&d, b, SPAN_TEXT, 0, "write ", -1, 1);
  doc_add_spann(&d, b, SPAN_CODE, 0, "<unk>", -1, 1);
  render(s, &d, 500);
  const Theme *th = theme_get(THEME_LIGHT);
  bool shaded = false;
  for (int i = 0; i < s->n; i++)
    shaded |= s->cmds[i].kind == CMD_RECT && s->cmds[i].color != th->panel && s->cmds[i].color != th->bg;
  CHECK(shaded, "inline code is shaded with a colour that shows on the narration panel");
  doc_free(&d);
}

// A table wider than its column: the columns narrow in proportion, their cells wrap, and nothing
// leaves the column; the header row is bold.
static void test_wide_table(Scene *s) {
  Doc d = {0};
  DocBlock *b = doc_add_block(&d, BLOCK_TABLE, 1);
  b->level = 1;
  const char *cells[2][3] = {{"kind", "meaning", "example"},
                             {"noun", "a thing, a person or a place that a sentence talks about",
                              "the museum in Paris, where Jane went"}};
  for (int r = 0; r < 2; r++) {
    doc_add_spann(&d, b, SPAN_ROW, 0, "", 0, 1 + r);
    for (int k = 0; k < 3; k++) {
      doc_add_spann(&d, b, SPAN_CELL, 0, "", 0, 1 + r);
      doc_add_spann(&d, b, SPAN_TEXT, 0, cells[r][k], -1, 1 + r);
    }
  }
  render(s, &d, 400);
  CHECK(rightmost(s) <= X0 + 400 + 0.5f, "the table reaches x = %.1f, past the column's edge %.1f",
        rightmost(s), X0 + 400);
  const Cmd *head = find_text(s, "meaning"), *a = find_text(s, "a"), *paris = find_text(s, "Paris,");
  CHECK(head && head->font == FONT_SANS_BOLD, "the header row is bold");
  CHECK(head && a && fabsf(head->x - a->x) < 0.5f, "a cell starts under its header");
  CHECK(paris && a && paris->y > a->y, "a long cell wraps inside its column");
  doc_free(&d);

  d = (Doc){0}; // more columns than the width holds: set smaller, and what is left out stays out
  b = doc_add_block(&d, BLOCK_TABLE, 1);
  for (int r = 0; r < 2; r++) {
    doc_add_spann(&d, b, SPAN_ROW, 0, "", 0, 1);
    for (int k = 0; k < 20; k++) {
      char t[8];
      snprintf(t, sizeof t, "%d", 10 + k);
      doc_add_spann(&d, b, SPAN_CELL, 0, "", 0, 1);
      doc_add_spann(&d, b, SPAN_TEXT, 0, t, -1, 1);
    }
  }
  render(s, &d, 300);
  CHECK(rightmost(s) <= X0 + 300 + 0.5f, "20 columns reach x = %.1f, past the column's edge %.1f",
        rightmost(s), X0 + 300);
  doc_free(&d);
}

int main(void) {
  Err err = {0};
  if (!text_init(&err)) {
    fprintf(stderr, "test_docview: %s\n", err.msg);
    return 1;
  }
  Scene s;
  scene_init(&s, 1920, 1080, 0);
  test_wide_display_formula(&s);
  test_punctuation_stays(&s);
  test_code(&s);
  test_wide_table(&s);
  scene_free(&s);
  text_shutdown();
  return check_exit("test_docview");
}
