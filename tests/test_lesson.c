// test_lesson.c -- the lesson parser: shipped lessons, errors with file:line, narration as a Doc.
//
// 1. Every lessons/*.md (but README.md) parses, opens its model, tokenizes its sentence and
//    resolves; so does the complete example of lessons/README.md.
// 2. Broken lessons: each case expects lesson_parse (or lesson_resolve) to fail with a problem
//    on an exact line whose message holds a key word.
// 3. The narration: emphasis, inline and display math, lists, code, quotes, the intro step, the
//    lines of blocks and spans; the options of headings; token specs; the model of a lesson.
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fileio.h"     // defines: file_read_all
#include "forward.h"    // defines: model_forward
#include "lesson.h"     // defines: Lesson, lesson_parse, lesson_resolve
#include "model_load.h" // defines: model_load, model_save
#include "trace.h"      // defines: Trace, trace_new, trace_find

static const char *source_dir(void) {
  const char *d = getenv("SF_SOURCE_DIR");
  return d ? d : ".";
}

static void print_diag(const LessonDiag *d) { lesson_diag_print(d, stderr); }

// Parses, opens the model, tokenizes and resolves; true when all of it is clean.
static bool load_and_resolve(Lesson *l, const char *what, LessonDiag *d) {
  Err err = {0}, note = {0};
  bool ok = true;
  Model *m = lesson_open_model(l, &note, &err);
  CHECK(m != NULL, "%s: lesson_open_model: %s", what, err.msg);
  if (!m) return false;
  if (note.msg[0]) fprintf(stderr, "%s: note: %s\n", what, note.msg);
  Tokens tk;
  ok = tokens_from_text(&tk, &m->vocab, l->sentence, LESSON_MAX_WORDS, &err);
  CHECK(ok, "%s: tokenizing the sentence: %s", what, err.msg);
  if (ok) {
    ok = lesson_resolve(l, m, &tk, d);
    CHECK(ok, "%s: lesson_resolve failed", what);
    for (int i = 0; ok && i < l->n_steps; i++) {
      const LessonStep *s = &l->steps[i];
      // a decoder stage's rows are the decoder's words, found when the lesson runs (after
      // generation or teacher forcing): lesson_resolve leaves them; its cross-attention columns too
      if (s->has_stage && s->stage > STEP_MEMORY) continue;
      if (s->focus == FOCUS_ROW || s->focus == FOCUS_CELL)
        CHECK(s->row >= 0 && s->row < tk.n, "%s: step %d row %d", what, i, s->row);
      if (s->focus == FOCUS_COL || s->focus == FOCUS_CELL)
        CHECK(s->col >= 0 && s->col < tk.n, "%s: step %d col %d", what, i, s->col);
    }
    tokens_free(&tk);
  }
  model_free(m);
  return ok;
}

static void test_shipped_lessons(void) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/lessons", source_dir());
  DIR *dp = opendir(dir);
  CHECK(dp != NULL, "cannot open %s", dir);
  if (!dp) return;
  int n = 0;
  for (struct dirent *e; (e = readdir(dp));) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".md") || !strcmp(e->d_name, "README.md")) continue;
    char path[8200];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    Lesson l;
    LessonDiag d = {0};
    bool ok = lesson_load(&l, path, &d);
    CHECK(ok, "%s does not parse", path);
    CHECK(l.n_steps >= 5 && l.title && l.sentence, "%s: %d steps", path, l.n_steps);
    if (ok) load_and_resolve(&l, path, &d);
    CHECK(d.n_errors == 0, "%s: %d problems", path, d.n_errors);
    if (d.n_errors) print_diag(&d);
    lesson_free(&l);
    n++;
  }
  closedir(dp);
  CHECK(n >= 4, "only %d lessons in %s", n, dir);
}

// The ```markdown example of lessons/README.md is a lesson that checks clean.
static void test_readme_example(void) {
  char path[4096];
  snprintf(path, sizeof path, "%s/lessons/README.md", source_dir());
  Err err = {0};
  size_t len;
  char *text = file_read_all(path, &len, 1 << 20, &err);
  CHECK(text != NULL, "%s", err.msg);
  if (!text) return;
  char *b = strstr(text, "```markdown\n"), *e = b ? strstr(b + 12, "\n```\n") : NULL;
  CHECK(b && e, "README.md has no ```markdown example");
  if (b && e) {
    Lesson l;
    LessonDiag d = {0};
    bool ok = lesson_parse(&l, b + 12, (size_t)(e + 1 - (b + 12)), "README example", &d);
    CHECK(ok, "the README example does not parse");
    if (ok) load_and_resolve(&l, "README example", &d);
    CHECK(d.n_errors == 0 && l.n_steps == 4, "README example: %d problems, %d steps", d.n_errors, l.n_steps);
    if (d.n_errors) print_diag(&d);
    lesson_free(&l);
  }
  free(text);
}

#define FRONT "---\ntitle: T\nsentence: The cat walks by the bank\n---\n" // lines 1-4

// a model by hand: HANDF is lines 1-3; HAND adds model: by hand (4), D (5), the three switches
// (6-8) and embeddings: | (9), so the table's rows start on line 10
#define HANDF "---\ntitle: T\nsentence: Jane loves art\n"
#define HAND                                                                                                 \
  HANDF "model: by hand\nD: 3\nprojections: none\npositions: none\nfeed-forward: none\nembeddings: |\n"

typedef struct {
  const char *name, *text;
  int line;         // the line of the expected problem
  const char *word; // a key word of its message
  bool at_resolve;  // found by lesson_resolve (with a random model: D=16, H=2, 2 layers)
} ErrCase;

static const ErrCase ERRORS[] = {
    {"unknown stage", FRONT "\n## Softmax {stage=softmx}\n", 6, "did you mean \"softmax\"", false},
    {"unknown stage lists them", FRONT "## S {stage=frobnicate}\n", 5, "stages: tokens", false},
    {"unknown option", FRONT "## S {stage=qkv colour=red}\n", 5, "unknown option \"colour\"", false},
    {"missing front matter", "# Title {stage=tokens}\n", 1, "missing front matter", false},
    {"front matter not closed", "---\ntitle: T\nsentence: a b\n## S\n", 1, "not closed", false},
    {"unknown front matter key", "---\ntitle: T\nsentense: a b\n---\n## S\n", 3,
     "unknown front matter key \"sentense\" (known keys: title, sentence, model, causal, target, generate, "
     "D, projections, positions, feed-forward, embeddings)",
     false},
    {"no title", "---\nsentence: a b\n---\n## S\n", 1, "no title", false},
    {"no sentence", "---\ntitle: T\n---\n## S\n", 1, "no sentence", false},
    {"not key: value", "---\ntitle: T\nsentence: a b\njust words\n---\n## S\n", 4, "key: value", false},
    {"repeated key", "---\ntitle: T\ntitle: U\nsentence: a b\n---\n## S\n", 3, "twice", false},
    {"bad causal", "---\ntitle: T\nsentence: a b\ncausal: maybe\n---\n## S\n", 4, "on or off", false},
    {"bad random model", "---\ntitle: T\nsentence: a b\nmodel: random D=15,H=2\n---\n## S\n", 4, "D=15",
     false},
    {"unknown random key", "---\ntitle: T\nsentence: a b\nmodel: random D=16,heads2\n---\n## S\n", 4,
     "KEY=VALUE", false},
    {"unclosed brace", FRONT "text\n\n## S {stage=qkv row=cat\n", 7, "unclosed brace", false},
    {"unclosed quote", FRONT "## S {compare=\"the cat}\n", 5, "unclosed quote", false},
    {"text after options", FRONT "## S {stage=qkv} more\n", 5, "must end the heading", false},
    {"bad layer", FRONT "## S {stage=qkv layer=0}\n", 5, "layer=0", false},
    {"bad head", FRONT "## S {stage=qkv head=two}\n", 5, "head=two", false},
    {"bad show", FRONT "## S {stage=qkv show=x}\n", 5, "show=x", false},
    {"show without qkv", FRONT "## S {stage=softmax show=q}\n", 5, "stage=qkv", false},
    {"repeated option", FRONT "## S {stage=qkv stage=av}\n", 5, "twice", false},
    {"not key=value", FRONT "## S {.class}\n", 5, "expected key=value", false},
    {"focus not in sentence", FRONT "\n\n## S {stage=softmax row=dog}\n", 7, "row=dog is not in the sentence",
     false},
    {"third the", FRONT "## S {stage=softmax col=the#3}\n", 5, "not in the sentence", false},
    {"position out of range", FRONT "## S {stage=softmax row=7}\n", 5, "not in the sentence", false},
    {"bad cell", FRONT "## S {stage=softmax cell=cat}\n", 5, "cell=ROW,COL", false},
    {"empty heading", FRONT "##\n\ntext\n", 5, "empty heading", false},
    {"no steps", FRONT "\n", 5, "no steps", false},
    {"unclosed $", FRONT "## S {stage=embed}\n\nIt costs $5, and $x_i$ is fine.\n", 7, "never closed", false},
    {"unclosed $ on a later line", FRONT "## S {stage=embed}\n\nFine $a$ then\nthe row $x_1 of Z.\n", 8,
     "expected a closing $", false},
    {"unclosed $$", FRONT "## S {stage=embed}\n\n$$\nx + y\n\nMore text.\n", 7, "closing $$", false},
    {"unclosed $ in a title", FRONT "## Cost $5 {stage=embed}\n", 5, "closing $ in the title", false},
    {"level-3 heading with options", FRONT "## S\n\n### T {stage=qkv}\n", 7, "level-3 heading is narration",
     false},
    {"heading in a list with options", FRONT "## S\n\n- ## T {stage=qkv row=cat}\n", 7, "inside a list",
     false},
    {"no step heading", FRONT "Only an introduction.\n\n### Then {stage=qkv}\n", 5, "only text before",
     false},
    {"col on a stage without token columns", FRONT "## S {stage=embed col=cat}\n", 5,
     "columns of stage=embed are features", false},
    {"cell on qkv", FRONT "## S {stage=qkv cell=cat,bank}\n", 5, "write row=cat", false},
    {"col on predict", FRONT "## S {stage=predict col=bank}\n", 5, "vocabulary", false},
    {"focus on tokens", FRONT "## S {stage=tokens row=cat}\n", 5, "nothing to highlight", false},
    {"focus without a stage", FRONT "## S {row=cat}\n", 5, "add stage=", false},
    {"not UTF-8", "---\ntitle: T\nsentence: caf\xE9 au lait\n---\n## S\n", 3, "byte 0xE9 at column 14",
     false},
    {"front matter key typo", "---\ntitle: T\nsentense: a b\n---\n## S\n", 3, "did you mean sentence:?",
     false},
    {"option key typo", FRONT "## S {stag=qkv}\n", 5, "did you mean stage=?", false},
    {"option with a colon", FRONT "## S {stage: qkv}\n", 5, "not key: value", false},
    {"option with spaces", FRONT "## S {stage = qkv}\n", 5, "no spaces around =", false},
    {"a brace in a title", FRONT "## Sets {a, b} {stage=qkv}\n", 5, "written \\{", false},
    {"layer out of range", FRONT "## S {stage=softmax layer=3}\n", 5, "layer=3 is out of range", true},
    {"head out of range", FRONT "\n## S {stage=scores head=3}\n", 6, "head=3 is out of range", true},
    {"mask without causal", FRONT "## S {stage=mask}\n", 5, "causal: on", true},
    {"prenorm in post-norm", FRONT "## S {stage=prenorm}\n", 5, "pre-norm", true},
    // model: by hand (lines 1-4 of HAND, then the table from line 5)
    {"hand: row of the wrong length", HAND "  jane 1 0 0\n  loves 0 1\n---\n## S\n", 11, "expected D = 3",
     false},
    {"hand: word twice", HAND "  jane 1 0 0\n  Jane 0 1 0\n---\n## S\n", 11, "twice", false},
    {"hand: not a number", HAND "  jane 1 0 0\n  loves 0 one 0\n---\n## S\n", 11,
     "\"one\" in the row of \"loves\" is not a number", false},
    {"hand: unknown switch", HANDF "model: by hand\nD: 3\nprojection: none\n---\n## S\n", 6,
     "did you mean projections:", false},
    {"hand: switch not none", HANDF "model: by hand\nD: 3\npositions: sinusoidal\n---\n## S\n", 6,
     "expected none", false},
    {"hand: D not a number", HANDF "model: by hand\nD: three\n---\n## S\n", 5, "bad value for D", false},
    {"hand: table without model", HANDF "D: 3\n---\n## S\n", 4, "add model: by hand", false},
    {"hand: missing switches", HANDF "model: by hand\nD: 3\nembeddings: |\n  a 1 0 0\n---\n## S\n", 4,
     "positions: none", false},
};

static bool has_problem(const LessonDiag *d, int line, const char *word) {
  for (int i = 0; i < d->n; i++)
    if (!d->items[i].warning && d->items[i].line == line && strstr(d->items[i].msg, word)) return true;
  return false;
}

static void test_errors(void) {
  for (size_t i = 0; i < sizeof ERRORS / sizeof *ERRORS; i++) {
    const ErrCase *c = &ERRORS[i];
    Lesson l;
    LessonDiag d = {0};
    bool ok = lesson_parse(&l, c->text, strlen(c->text), "broken.md", &d);
    if (c->at_resolve) {
      CHECK(ok, "%s: should parse", c->name);
      Err err = {0};
      free(l.model); // a model whose sizes the cases know: D=16, H=2, 2 layers, post-norm
      l.model = strdup("random D=16,H=2,F=32,layers=2,seed=1");
      Model *m = lesson_open_model(&l, NULL, &err);
      Tokens tk;
      CHECK(m != NULL, "%s: %s", c->name, err.msg);
      if (m && tokens_from_text(&tk, &m->vocab, l.sentence, 0, &err)) {
        CHECK(!lesson_resolve(&l, m, &tk, &d), "%s: lesson_resolve should fail", c->name);
        tokens_free(&tk);
      }
      model_free(m);
    } else {
      CHECK(!ok, "%s: lesson_parse should fail", c->name);
    }
    CHECK(has_problem(&d, c->line, c->word), "%s: expected broken.md:%d with \"%s\"", c->name, c->line,
          c->word);
    CHECK(d.n > 0 && !strcmp(d.items[0].file, "broken.md"), "%s: file name", c->name);
    if (!has_problem(&d, c->line, c->word)) print_diag(&d);
    lesson_free(&l);
  }
  // several problems at once, in one parse
  const char *many = "---\ntitle: T\nsentence: a b\ncolour: red\n---\n## A {stage=x}\n"
                     "## B {row=c}\n## C {head=0}\n";
  Lesson l;
  LessonDiag d = {0};
  CHECK(!lesson_parse(&l, many, strlen(many), "many.md", &d), "many problems");
  CHECK(d.n_errors == 5 && has_problem(&d, 4, "colour") && has_problem(&d, 6, "stage") &&
            has_problem(&d, 7, "row=c") && has_problem(&d, 7, "add stage=") && has_problem(&d, 8, "head=0"),
        "five problems, got %d", d.n_errors);
  CHECK(l.n_steps == 3, "the steps are kept after errors: %d", l.n_steps);
  lesson_free(&l);
  // a NUL byte: one problem, nothing parsed after it
  static const char nul[] = "---\ntitle: T\nsentence: a\n---\n## S {stage=x}\n\0\1\2 $\\bad$\n";
  LessonDiag dn = {0};
  CHECK(!lesson_parse(&l, nul, sizeof nul - 1, "nul.md", &dn) && dn.n_errors == 1 && dn.items[0].line == 6 &&
            strstr(dn.items[0].msg, "NUL"),
        "a binary file gets one problem: %d, %s", dn.n_errors, dn.n ? dn.items[0].msg : "");
  lesson_free(&l);
  // an unclosed front matter is one problem (not also "no steps")
  const char *unclosed = "---\ntitle: T\nsentence: a b\n## S\n";
  LessonDiag du = {0};
  CHECK(!lesson_parse(&l, unclosed, strlen(unclosed), "u.md", &du) && du.n_errors == 1,
        "unclosed front matter: %d problems", du.n_errors);
  lesson_free(&l);
  // messages hold no control characters, whatever the input held
  const char *esc = FRONT "## S {stage=\x1b[31mred}\n";
  LessonDiag de = {0};
  CHECK(!lesson_parse(&l, esc, strlen(esc), "e.md", &de) && de.n > 0 && !strchr(de.items[0].msg, '\x1b'),
        "no escape character in a message");
  lesson_free(&l);
  // a $ that is no formula: \$ is a dollar sign; formulas in titles keep their braces
  const char *fine =
      FRONT "## The space $\\mathbb{R}^{L \\times D}$ {stage=embed row=cat}\n\nIt costs \\$5.\n"
            "## $\\frac{a}{b}$ first\n\n```\nprice = $5\n```\n\n`$x`\n";
  LessonDiag df = {0};
  bool fine_ok = lesson_parse(&l, fine, strlen(fine), "fine.md", &df);
  CHECK(fine_ok && l.n_steps == 2, "\\$, $ in code and formulas with braces in titles are fine");
  if (!fine_ok) print_diag(&df);
  if (fine_ok && l.n_steps == 2) {
    CHECK(!strcmp(l.steps[0].title, "The space $\\mathbb{R}^{L \\times D}$") && l.steps[0].has_stage &&
              l.steps[0].stage == STEP_EMBED && l.steps[0].focus == FOCUS_ROW,
          "title [%s] and its options", l.steps[0].title);
    CHECK(!strcmp(l.steps[1].title, "$\\frac{a}{b}$ first") && !l.steps[1].has_stage, "title [%s]",
          l.steps[1].title);
  }
  lesson_free(&l);
  // a missing file
  LessonDiag d2 = {0};
  CHECK(!lesson_load(&l, "/nonexistent/lesson.md", &d2) && d2.n == 1 &&
            strstr(d2.items[0].msg, "cannot open"),
        "a missing file is reported");
  lesson_free(&l);
}

static const DocBlock *block(const Lesson *l, int step, int b) {
  if (step >= l->n_steps || b >= l->steps[step].narration.n) return NULL;
  return &l->steps[step].narration.blocks[b];
}

static bool span_is(const DocBlock *b, int k, SpanKind kind, unsigned style, const char *text, int line) {
  if (!b || k >= b->n_spans) return false;
  const DocSpan *s = &b->spans[k];
  return s->kind == kind && s->style == style && !strcmp(s->text, text) && s->line == line;
}

static const char *NARRATION =
    "---\n"                                                                                      // 1
    "title: Doc test\n"                                                                          // 2
    "sentence: The cat walks by the bank\n"                                                      // 3
    "model: random D=16,H=2,F=32,layers=2,seed=5\n"                                              // 4
    "causal: on   # a comment\n"                                                                 // 5
    "---\n"                                                                                      // 6
    "An *intro* with $x_i$.\n"                                                                   // 7
    "\n"                                                                                         // 8
    "## Who does \"cat\" listen to? {stage=softmax layer=2 head=2 row=cat}\n"                    // 9
    "\n"                                                                                         // 10
    "Rows are **queries**, `code` and $A_h = QK^\\top$\n"                                        // 11
    "go on.\n"                                                                                   // 12
    "\n"                                                                                         // 13
    "$$\n"                                                                                       // 14
    "A = \\operatorname{softmax}(S)\n"                                                           // 15
    "  + M\n"                                                                                    // 16
    "$$\n"                                                                                       // 17
    "\n"                                                                                         // 18
    "- first *item*\n"                                                                           // 19
    "- second $a$\n"                                                                             // 20
    "  1. nested\n"                                                                              // 21
    "\n"                                                                                         // 22
    "### A sub heading\n"                                                                        // 23
    "\n"                                                                                         // 24
    "> quoted &amp; said\n"                                                                      // 25
    "\n"                                                                                         // 26
    "---\n"                                                                                      // 27
    "\n"                                                                                         // 28
    "```\n"                                                                                      // 29
    "## not a step\n"                                                                            // 30
    "```\n"                                                                                      // 31
    "# {stage=qkv show=k head=all row=the#2}\n"                                                  // 32
    "## Compare {stage=mask cell=bank,3 compare=\"The cat sleeps by the \\\"river\\\" bank\"}\n" // 33
    "Text with $$x$$ inside.\n";                                                                 // 34

// A dollar sign written \$ in a step title stays a dollar sign (md4c hands it over bare): the
// title keeps it as \$, apart from the title's formulas, and its options are still found.
static void test_title_dollar(void) {
  const char *src = "---\ntitle: t\nsentence: a b\nmodel: random D=16,H=2,F=8,layers=1,seed=1\n---\n"
                    "## Cost \\$5 for $x^2$ and `$y` {stage=tokens}\n\nText.\n";
  Lesson l;
  LessonDiag d = {0};
  bool ok = lesson_parse(&l, src, strlen(src), "dollar.md", &d);
  if (!ok) print_diag(&d);
  CHECK(ok && l.n_steps == 1, "a title with \\$ parses");
  if (ok && l.n_steps == 1) {
    const LessonStep *s = &l.steps[0];
    CHECK(!strcmp(s->title, "Cost \\$5 for $x^2$ and \\$y"), "title [%s]", s->title);
    CHECK(s->has_stage && s->stage == STEP_TOKENS, "its options");
  }
  lesson_free(&l);
}

static void test_narration(void) {
  Lesson l;
  LessonDiag d = {0};
  bool ok = lesson_parse(&l, NARRATION, strlen(NARRATION), "doc.md", &d);
  CHECK(ok, "the narration test parses");
  if (!ok) print_diag(&d);
  CHECK(!strcmp(l.title, "Doc test") && !strcmp(l.sentence, "The cat walks by the bank"), "front matter");
  CHECK(l.causal && l.causal_set && l.sentence_line == 3 && l.model_line == 4, "causal, lines");
  CHECK(l.n_steps == 4, "intro + 3 steps, got %d", l.n_steps);
  if (l.n_steps != 4) return lesson_free(&l);
  // the intro
  const LessonStep *s = &l.steps[0];
  CHECK(!s->has_stage && !strcmp(s->title, "Doc test") && s->line == 7, "intro step");
  CHECK(span_is(block(&l, 0, 0), 1, SPAN_TEXT, DOC_EM, "intro", 7), "intro emphasis");
  CHECK(span_is(block(&l, 0, 0), 3, SPAN_MATH, 0, "x_i", 7), "intro math");
  // step 1: heading options
  s = &l.steps[1];
  CHECK(!strcmp(s->title, "Who does \"cat\" listen to?") && s->line == 9, "title [%s]", s->title);
  CHECK(s->has_stage && s->stage == STEP_SOFTMAX && s->layer == 1 && s->head == 1, "options");
  CHECK(s->focus == FOCUS_ROW && !strcmp(s->row_spec, "cat") && s->show == SHOW_ALL, "focus");
  // its narration
  const DocBlock *p = block(&l, 1, 0);
  CHECK(p && p->kind == BLOCK_PARA && p->line == 11, "paragraph at line 11");
  CHECK(span_is(p, 0, SPAN_TEXT, 0, "Rows are ", 11), "plain text");
  CHECK(span_is(p, 1, SPAN_TEXT, DOC_STRONG, "queries", 11), "strong");
  CHECK(span_is(p, 3, SPAN_CODE, 0, "code", 11), "inline code");
  CHECK(span_is(p, 5, SPAN_MATH, 0, "A_h = QK^\\top", 11), "inline math span");
  CHECK(span_is(p, 6, SPAN_TEXT, 0, " go on.", 11), "a soft break is a space [%s]",
        p && p->n_spans > 6 ? p->spans[6].text : "");
  const DocBlock *m = block(&l, 1, 1);
  CHECK(m && m->kind == BLOCK_MATH && m->line == 14 && m->n_spans == 1, "display math block");
  CHECK(span_is(m, 0, SPAN_MATH, 0, "A = \\operatorname{softmax}(S)\n  + M", 15),
        "display math keeps its lines, and a line starting with + stays in it: [%s]",
        m && m->n_spans ? m->spans[0].text : "");
  const DocBlock *i1 = block(&l, 1, 2), *i2 = block(&l, 1, 3), *i3 = block(&l, 1, 4);
  CHECK(i1 && i1->kind == BLOCK_ITEM && i1->level == 1 && i1->line == 19, "first item");
  CHECK(span_is(i1, 1, SPAN_TEXT, DOC_EM, "item", 19), "emphasis in an item");
  CHECK(i2 && i2->kind == BLOCK_ITEM && span_is(i2, 1, SPAN_MATH, 0, "a", 20), "second item");
  CHECK(i3 && i3->kind == BLOCK_ITEM && i3->level == 2 && i3->ordered && i3->number == 1 && i3->line == 21,
        "nested ordered item");
  const DocBlock *h = block(&l, 1, 5), *q = block(&l, 1, 6), *r = block(&l, 1, 7), *c = block(&l, 1, 8);
  CHECK(h && h->kind == BLOCK_HEADING && h->level == 3 && h->line == 23, "level-3 heading");
  CHECK(q && q->kind == BLOCK_QUOTE && span_is(q, 0, SPAN_TEXT, 0, "quoted & said", 25), "quote");
  CHECK(r && r->kind == BLOCK_RULE && r->line == 27, "rule at line 27 (%d)", r ? r->line : 0);
  CHECK(c && c->kind == BLOCK_CODE && span_is(c, 0, SPAN_TEXT, 0, "## not a step", 30),
        "a heading inside a code block is code");
  CHECK(l.steps[1].narration.n == 9, "nine blocks, got %d", l.steps[1].narration.n);
  // step 2: a title from the stage's name, head=all, a cell
  s = &l.steps[2];
  CHECK(s->line == 32 && s->has_stage && s->stage == STEP_QKV && s->show == SHOW_K &&
            s->head == LESSON_ALL_HEADS && !strcmp(s->title, stage_info(STEP_QKV)->title),
        "options-only heading");
  CHECK(s->focus == FOCUS_ROW && !strcmp(s->row_spec, "the#2") && !s->col_spec, "row");
  // step 3: a quoted compare value with escapes; display math inside a paragraph splits it
  s = &l.steps[3];
  CHECK(s->compare && !strcmp(s->compare, "The cat sleeps by the \"river\" bank"), "compare [%s]",
        s->compare ? s->compare : "");
  CHECK(s->focus == FOCUS_CELL && !strcmp(s->row_spec, "bank") && !strcmp(s->col_spec, "3"),
        "a cell, its column by position");
  const DocBlock *a = block(&l, 3, 0), *b = block(&l, 3, 1), *e = block(&l, 3, 2);
  CHECK(a && b && e && a->kind == BLOCK_PARA && b->kind == BLOCK_MATH && e->kind == BLOCK_PARA &&
            span_is(a, 0, SPAN_TEXT, 0, "Text with", 34) && span_is(b, 0, SPAN_MATH, 0, "x", 34) &&
            span_is(e, 0, SPAN_TEXT, 0, "inside.", 34),
        "display math in a paragraph becomes a block between two paragraphs");
  // resolve against the model
  Err err = {0};
  Model *model = lesson_open_model(&l, NULL, &err);
  CHECK(model && model->cfg.causal && model->cfg.D == 16 && model->cfg.n_layers == 2 && model->has_seed &&
            model->seed == 5,
        "random model with the lesson's causal");
  CHECK(model && vocab_find(&model->vocab, "river") > 0, "compare words are in the vocabulary");
  Tokens tk;
  if (model && tokens_from_text(&tk, &model->vocab, l.sentence, 0, &err)) {
    CHECK(lesson_resolve(&l, model, &tk, &d), "resolves");
    CHECK(l.steps[1].row == 1, "row=cat is token 1");
    CHECK(l.steps[2].row == 4 && l.steps[2].col == -1, "row=the#2 is token 4");
    CHECK(l.steps[3].row == 5 && l.steps[3].col == 2, "cell=bank,3 is (5, 2)");
    tokens_free(&tk);
  }
  model_free(model);
  lesson_free(&l);
}

static void test_tokens_and_stages(void) {
  Vocab v;
  Err err = {0};
  Tokens tk;
  CHECK(vocab_from_text(&v, "the cat walks by bank", &err), "vocab");
  CHECK(tokens_from_text(&tk, &v, "The cat walks by the bank", 0, &err), "tokens");
  CHECK(lesson_find_token(&tk, "the") == 0 && lesson_find_token(&tk, "THE") == 0, "the");
  CHECK(lesson_find_token(&tk, "the#2") == 4 && lesson_find_token(&tk, "the#3") == -1, "the#2");
  CHECK(lesson_find_token(&tk, "3") == 2 && lesson_find_token(&tk, "0") == -1 &&
            lesson_find_token(&tk, "7") == -1,
        "positions");
  CHECK(lesson_find_token(&tk, "dog") == -1 && lesson_find_token(&tk, "") == -1 &&
            lesson_find_token(&tk, "#2") == -1 && lesson_find_token(&tk, "the#") == -1 &&
            lesson_find_token(&tk, "the#0") == -1,
        "bad specs");
  tokens_free(&tk);
  vocab_free(&v);
  for (int k = STEP_TOKENS; k <= STEP_PRENORM; k++) {
    StepKind back;
    const char *name = lesson_stage_name((StepKind)k);
    CHECK(*name && lesson_stage_from_name(name, &back) && back == (StepKind)k, "stage %d", k);
  }
  // what a teacher types from the titles `stepformer stages` prints, in any case (issue 10)
  StepKind k;
  CHECK(lesson_stage_from_name("Softmax", &k) && k == STEP_SOFTMAX, "stage names in any case");
  CHECK(lesson_stage_from_name("weighted", &k) && k == STEP_AV, "stage=weighted is av");
  CHECK(lesson_stage_from_name("weighted values", &k) && k == STEP_AV, "the title of av");
  CHECK(lesson_stage_from_name("Q, K, V projections", &k) && k == STEP_QKV, "the title of qkv");
  CHECK(lesson_stage_from_name("residual + LayerNorm: layer output", &k) && k == STEP_ADDNORM2,
        "the title of addnorm2");
  CHECK(lesson_stage_from_name("feed-forward hidden", &k) && k == STEP_FFN_HIDDEN, "the title of ffn_hidden");
  CHECK(!lesson_stage_from_name("x", &k) && !lesson_stage_from_name("", &k) &&
            !lesson_stage_from_name("-", &k),
        "no stage is a letter, or nothing");
  CHECK(!lesson_stage_from_name("projection", &k) && !lesson_stage_from_name("residual", &k),
        "no alias means two stages");
}

// A model path is relative to the lesson's folder; a missing file is an error.
static void test_model_paths(void) {
  char dir[] = "/tmp/sf-test-lesson.XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  char sub[64], path[128];
  snprintf(sub, sizeof sub, "%s/lessons", dir);
  CHECK(mkdir(sub, 0700) == 0, "mkdir %s", sub);
  Err err = {0};
  Vocab v;
  CHECK(vocab_from_text(&v, "a b c", &err), "vocab");
  ModelConfig mc = model_config_default();
  Model *m = model_random(&mc, &v, 9, &err);
  vocab_free(&v);
  snprintf(path, sizeof path, "%s/tiny.safetensors", dir);
  CHECK(m && model_save(m, path, &err), "save: %s", err.msg);
  model_free(m);
  const char *text = "---\ntitle: T\nsentence: a b c\nmodel: ../tiny.safetensors\n---\n## S\n";
  snprintf(path, sizeof path, "%s/lesson.md", sub);
  Lesson l;
  LessonDiag d = {0};
  CHECK(lesson_parse(&l, text, strlen(text), path, &d), "parses");
  m = lesson_open_model(&l, NULL, &err);
  CHECK(m && m->cfg.D == mc.D && m->seed == 9, "the model next to the lessons folder: %s", err.msg);
  model_free(m);
  lesson_free(&l);
  const char *missing = "---\ntitle: T\nsentence: a\nmodel: nothere.safetensors\n---\n## S\n";
  CHECK(lesson_parse(&l, missing, strlen(missing), path, &d), "parses");
  m = lesson_open_model(&l, NULL, &err);
  CHECK(!m && strstr(err.msg, "nothere.safetensors"), "a missing model: %s", err.msg);
  lesson_free(&l);
  snprintf(path, sizeof path, "%s/tiny.safetensors", dir);
  remove(path);
  rmdir(sub);
  rmdir(dir);
}

// lessons/intuition.md: the model by hand gives the notebook's numbers, computed here by hand:
// nouns (1,0,0), verbs (0,1,0), who/the/in zeros; S = ZZᵀ/√3, A = softmax(S), AV = A·Z.
static void test_intuition_numbers(void) {
  char path[4200];
  snprintf(path, sizeof path, "%s/lessons/intuition.md", source_dir());
  Lesson l;
  LessonDiag d = {0};
  bool ok = lesson_load(&l, path, &d);
  CHECK(ok && l.by_hand && l.hand_D == 3 && l.n_hand == 9 && l.no_projections && l.no_positions &&
            l.no_feed_forward,
        "intuition.md: the model by hand");
  if (!ok) print_diag(&d);
  Err err = {0};
  Model *m = ok ? lesson_open_model(&l, NULL, &err) : NULL;
  CHECK(m != NULL, "intuition.md model: %s", err.msg);
  // its name once: the footer adds "(D=3, H=1, F=1, 1 layer)" (issue 31.9)
  CHECK(!m || !strcmp(m->source, "by hand"), "the model by hand is named \"by hand\": %s",
        m ? m->source : "");
  Tokens tk;
  if (!m || !tokens_from_text(&tk, &m->vocab, l.sentence, 0, &err)) {
    model_free(m);
    lesson_free(&l);
    return;
  }
  CHECK(m->cfg.D == 3 && m->cfg.H == 1 && m->cfg.n_layers == 1 && m->cfg.no_pos && m->cfg.V == 10,
        "D=3, H=1, one layer, no positions, V=10 (<unk> + 9 words)");
  Trace *t = trace_new(m, &tk, &err);
  CHECK(t != NULL, "trace: %s", err.msg);
  if (t) {
    model_forward(t);
    // jane who loves art visited the museum in paris: the commas are dropped
    static const float Zw[9][3] = {{1, 0, 0}, {0, 0, 0}, {0, 1, 0}, {1, 0, 0}, {0, 1, 0},
                                   {0, 0, 0}, {1, 0, 0}, {0, 0, 0}, {1, 0, 0}};
    CHECK(t->L == 9, "nine tokens: %d", t->L);
    const TraceTensor *P = trace_find(t, "P"), *Z = trace_find(t, "Z"), *S = trace_find(t, "l0.S");
    const TraceTensor *A = trace_find(t, "l0.A"), *AV = trace_find(t, "l0.AV");
    CHECK(P && Z && S && A && AV, "the stages are there");
    if (t->L == 9 && P && Z && S && A && AV) {
      const double s1 = 0.57735026918962576; // 1/√3: two nouns (or two verbs)
      const double e = 1.7813121741108027;   // exp(1/√3)
      double maxd = 0;
      for (int i = 0; i < 9; i++) {
        double kind_i = Zw[i][0] ? 0 : Zw[i][1] ? 1 : 2; // noun, verb, nothing
        double sum_a = 0, row_den = kind_i == 0 ? 4 * e + 5 : kind_i == 1 ? 2 * e + 7 : 9;
        double av[3] = {0, 0, 0};
        for (int c = 0; c < 3; c++) {
          maxd = fmax(maxd, fabs(P->data[i * P->stride + c]));
          maxd = fmax(maxd, fabs(Z->data[i * Z->stride + c] - Zw[i][c]));
        }
        for (int j = 0; j < 9; j++) {
          double dot = Zw[i][0] * Zw[j][0] + Zw[i][1] * Zw[j][1] + Zw[i][2] * Zw[j][2];
          maxd = fmax(maxd, fabs(S->data[i * S->stride + j] - dot * s1));
          double a = (dot > 0 ? e : 1.0) / row_den;
          maxd = fmax(maxd, fabs(A->data[i * A->stride + j] - a));
          sum_a += A->data[i * A->stride + j];
          for (int c = 0; c < 3; c++) av[c] += a * Zw[j][c];
        }
        CHECK(fabs(sum_a - 1) < 1e-6, "row %d of A sums to %.8f", i, sum_a);
        for (int c = 0; c < 3; c++) maxd = fmax(maxd, fabs(AV->data[i * AV->stride + c] - av[c]));
      }
      CHECK(maxd < 1e-6, "P = 0, Z = table, S = ZZ^T/sqrt(3), A, AV by hand: max |diff| %.3g", maxd);
      // the notebook's numbers as the lesson writes them: Jane (0.588, 0.165, 0), who (4/9, 2/9, 0)
      CHECK(fabs(AV->data[0] - 0.5876373) < 1e-6 && fabs(AV->data[1] - 0.1649451) < 1e-6 &&
                fabs(AV->data[AV->stride] - 4.0 / 9) < 1e-6,
            "Jane's and who's rows of AV");
    }
    // "no positions" is said on screen: the stage notation of P and Z
    bool said = false;
    for (int i = 0; i < t->n; i++)
      if (!strcmp(t->t[i].name, "Z") && t->t[i].title && strstr(t->t[i].title, "No positions")) said = true;
    CHECK(said, "the Z stage is titled \"No positions: Z = OE\"");
    trace_free(t);
  }
  // pos_encoding=none survives a save and a load (an odd D is fine without the sinusoid), and a
  // learned table beside it is refused
  char tmp[] = "/tmp/sf-hand-XXXXXX";
  int fd = mkstemp(tmp);
  if (fd >= 0) close(fd);
  Err e2 = {0};
  CHECK(fd >= 0 && model_save(m, tmp, &e2), "saving the model by hand: %s", e2.msg);
  Model *back = model_load(tmp, &e2);
  CHECK(back && back->cfg.no_pos && !back->cfg.learned_pos && back->cfg.D == 3,
        "pos_encoding=none round trip: %s", e2.msg);
  char feats[256];
  CHECK(back && strstr(model_features(back, feats, sizeof feats), "no positions"), "info says no positions");
  model_free(back);
  unlink(tmp);
  tokens_free(&tk);
  model_free(m);
  lesson_free(&l);
}

int main(void) {
  test_intuition_numbers();
  test_shipped_lessons();
  test_readme_example();
  test_errors();
  test_narration();
  test_title_dollar();
  test_tokens_and_stages();
  test_model_paths();
  return check_exit("test_lesson");
}
