// cli_check.c -- `stepformer check LESSON.md...`: parse, resolve and lay out every lesson.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lesson.h" // defines: Lesson, lesson_load, lesson_resolve
#include "tex.h"    // defines: tex_check

static const char *USAGE =
    "usage: stepformer check LESSON.md...\n"
    "\n"
    "Checks lesson files (the format is in lessons/README.md): parses the front matter, the\n"
    "step headings and their {options} and the Markdown narration, opens the lesson's model,\n"
    "tokenizes its sentence and compare= sentences, checks every step's stage, layer, head and\n"
    "focus tokens against them, and parses every $...$ and $$...$$ formula.\n"
    "\n"
    "Every problem is printed on stderr as FILE:LINE: message, one line each; warnings (a word\n"
    "the model does not know, the shipped model missing) do not fail the check. Exit status:\n"
    "0 when every lesson is clean, 2 otherwise.\n";

typedef struct {
  int steps, formulas;
} Counts;

// Parses one formula with the layout engine's parser; every problem becomes FILE:LINE (the
// formula's line, plus the problem's line within a formula that spans lines) and a message.
static void check_formula(const char *file, const DocSpan *span, LessonDiag *d, Counts *n) {
  n->formulas++;
  TexDiag td;
  if (tex_check(span->text, &td)) return;
  for (int i = 0; i < td.count && i < TEX_DIAG_MAX; i++) {
    const TexProblem *p = &td.items[i];
    lesson_diag_add(d, file, span->line + (p->line > 1 ? p->line - 1 : 0), p->col, false,
                    "formula $%.60s%s$: %s at column %d", span->text, strlen(span->text) > 60 ? "..." : "",
                    p->msg, p->col);
  }
  if (td.count > TEX_DIAG_MAX)
    lesson_diag_add(d, file, span->line, 0, false, "formula $%.60s%s$: %d more problems", span->text,
                    strlen(span->text) > 60 ? "..." : "", td.count - TEX_DIAG_MAX);
}

// The $...$ formulas of a step's title (its heading keeps them as typed).
static void check_title(const Lesson *l, const LessonStep *s, LessonDiag *d, Counts *n) {
  const char *t = s->title ? s->title : "";
  for (const char *open = strchr(t, '$'); open; open = strchr(open, '$')) {
    const char *close = strchr(open + 1, '$');
    if (!close) break;
    char *tex = malloc((size_t)(close - open));
    if (!tex) return;
    memcpy(tex, open + 1, (size_t)(close - open - 1));
    tex[close - open - 1] = 0;
    DocSpan span = {SPAN_MATH, 0, tex, s->line};
    check_formula(l->path, &span, d, n);
    free(tex);
    open = close + 1;
  }
}

static void check_formulas(const Lesson *l, LessonDiag *d, Counts *n) {
  for (int i = 0; i < l->n_steps; i++) {
    const Doc *doc = &l->steps[i].narration;
    check_title(l, &l->steps[i], d, n);
    for (int b = 0; b < doc->n; b++)
      for (int k = 0; k < doc->blocks[b].n_spans; k++)
        if (doc->blocks[b].spans[k].kind == SPAN_MATH) check_formula(l->path, &doc->blocks[b].spans[k], d, n);
  }
}

// Orders the problems by line (stable: the same line keeps the order of discovery).
static void sort_by_line(LessonDiag *d) {
  for (int i = 1; i < d->n; i++) {
    LessonDiagItem it = d->items[i];
    int j = i;
    for (; j > 0 && d->items[j - 1].line > it.line; j--) d->items[j] = d->items[j - 1];
    d->items[j] = it;
  }
}

// Warns about the words of text that the model does not know (they become <unk>).
static void check_words(const Lesson *l, int line, const Tokens *tk, LessonDiag *d) {
  for (int i = 0; i < tk->n; i++)
    if (tk->unknown[i])
      lesson_diag_add(d, l->path, line, 0, true,
                      "\"%s\" is not in the model's vocabulary: it "
                      "is shown as <unk>",
                      tk->words[i]);
}

// The stages of every step exist in a trace of this model (a cross-check of lesson_resolve).
static void check_trace(const Lesson *l, const Model *m, const Tokens *tk, LessonDiag *d) {
  Err err = {0};
  Trace *t = trace_new(m, tk, &err);
  if (!t) {
    lesson_diag_add(d, l->path, l->sentence_line, 0, false, "%s", err.msg);
    return;
  }
  for (int i = 0; i < l->n_steps; i++) {
    const LessonStep *s = &l->steps[i];
    if (!s->has_stage) continue;
    bool found = false;
    for (int k = 0; k < t->n_steps && !found; k++)
      found = t->steps[k].kind == s->stage && (t->steps[k].layer < 0 || t->steps[k].layer == s->layer);
    if (!found)
      lesson_diag_add(d, l->path, s->line, 0, false,
                      "stage=%s (layer %d) is not a stage of this "
                      "model",
                      lesson_stage_name(s->stage), s->layer + 1);
  }
  trace_free(t);
}

// Opens the model, tokenizes the sentences and resolves the steps.
static void check_model(Lesson *l, LessonDiag *d) {
  for (int i = 0; i < d->n; i++) // the model: line already has an error (a bad random spec)
    if (!d->items[i].warning && l->model_line && d->items[i].line == l->model_line) return;
  int mline = l->model_line ? l->model_line : 1;
  Err note = {0}, err = {0};
  Model *m = lesson_open_model(l, &note, &err);
  if (!m) {
    lesson_diag_add(d, l->path, mline, 0, false, "model: %s", err.msg);
    return;
  }
  if (note.msg[0]) lesson_diag_add(d, l->path, mline, 0, true, "%s", note.msg);
  bool random_vocab = note.msg[0] || (l->model && !strncmp(l->model, "random", 6));
  Tokens tk;
  if (!tokens_from_text(&tk, &m->vocab, l->sentence, LESSON_MAX_WORDS, &err)) {
    lesson_diag_add(d, l->path, l->sentence_line, 0, false, "sentence: %s", err.msg);
    model_free(m);
    return;
  }
  if (!random_vocab) check_words(l, l->sentence_line, &tk, d);
  for (int i = 0; i < l->n_steps; i++) {
    const LessonStep *s = &l->steps[i];
    if (!s->compare) continue;
    Tokens ct;
    if (!tokens_from_text(&ct, &m->vocab, s->compare, LESSON_MAX_WORDS, &err)) {
      lesson_diag_add(d, l->path, s->line, 0, false, "compare: %s", err.msg);
      continue;
    }
    if (!random_vocab) check_words(l, s->line, &ct, d);
    tokens_free(&ct);
  }
  if (lesson_resolve(l, m, &tk, d)) check_trace(l, m, &tk, d);
  tokens_free(&tk);
  model_free(m);
}

// Checks one file; returns true when it has no errors.
static bool check_file(const char *path) {
  Lesson l;
  LessonDiag d = {0};
  lesson_load(&l, path, &d);
  Counts n = {l.n_steps, 0};
  bool readable = l.path && (l.n_steps > 0 || l.title || l.sentence);
  if (readable && l.sentence) check_model(&l, &d);
  if (readable) check_formulas(&l, &d, &n);
  sort_by_line(&d);
  lesson_diag_print(&d, stderr);
  if (d.n_errors == 0)
    printf("%s: ok (%d steps, %d formulas%s)\n", path, n.steps, n.formulas, d.n ? ", with warnings" : "");
  else
    printf("%s: %d problem%s\n", path, d.n_errors, d.n_errors == 1 ? "" : "s");
  fflush(stdout);
  lesson_free(&l);
  return d.n_errors == 0;
}

int cli_check(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) return fputs(USAGE, stdout), 0;
  if (argc < 2) return cli_fail("check", "give the lesson files to check (stepformer check lessons/*.md)");
  for (int i = 1; i < argc; i++)
    if (argv[i][0] == '-' && argv[i][1]) {
      char msg[300];
      snprintf(msg, sizeof msg, "unknown option \"%.200s\" (stepformer check takes lesson files only)",
               argv[i]);
      return cli_fail("check", msg);
    }
  int bad = 0;
  for (int i = 1; i < argc; i++) bad += !check_file(argv[i]);
  if (argc > 2) printf("%d of %d lessons clean\n", argc - 1 - bad, argc - 1);
  return bad ? 2 : 0;
}
