// cli_check.c -- `stepformer check LESSON.md...`: parse, resolve and lay out every lesson.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "lesson.h"       // defines: Lesson, lesson_load, lesson_resolve
#include "formulas.h"     // defines: formulas_check
#include "forward.h"      // defines: model_forward
#include "edits.h"        // defines: TraceEdits, edits_trace
#include "generate.h"     // defines: gen_run
#include "model_tokens.h" // defines: model_tokenize

static const char *USAGE =
    "usage: stepformer check LESSON.md...\n"
    "\n"
    "Checks lesson files (the format is in lessons/README.md): parses the front matter, the\n"
    "step headings and their {options} and the Markdown narration, opens the lesson's model,\n"
    "tokenizes its sentence and compare= sentences, checks every step's stage, layer, head and\n"
    "focus tokens against them, parses every $...$ and $$...$$ formula, and measures every\n"
    "claim of the steps (expect=\"A4[bank, river] > 0.9\") on the lesson's model: a claim that\n"
    "does not hold is an error that gives the value measured.\n"
    "\n"
    "Every problem is printed on stderr as FILE:LINE: message, one line each; warnings (a word\n"
    "the model does not know, the shipped model missing) do not fail the check. A README.md\n"
    "without a front matter is documentation, not a lesson: it is skipped (so that\n"
    "`stepformer check lessons/*.md` works). Exit status: 0 when every lesson is clean, 2\n"
    "otherwise.\n";

typedef struct {
  int steps, formulas, claims;
} Counts;

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

// A trace of the model on tokens tk (an encoder-decoder's decoder reads <bos> and the lesson's
// target), computed when `forward`; NULL with err.
static Trace *make_trace(const Lesson *l, const Model *m, const Tokens *tk, bool forward, Err *err) {
  Trace *t = NULL;
  if (model_is_seq2seq(m)) { // the decoder's input: <bos> and the lesson's target (<bos> alone without)
    Tokens dec;
    if (trace_decoder_tokens(&dec, m, l->target ? l->target : "", LESSON_MAX_WORDS, err)) {
      t = trace_new_seq2seq(m, tk, &dec, err);
      tokens_free(&dec);
    }
  } else
    t = trace_new(m, tk, err);
  if (t && forward) model_forward(t);
  return t;
}

// The step's edited pass of t (its edit= and heads-off=), or t itself when its edits do not
// parse: lesson_check_edits reports those. NULL with err set when the pass cannot be made.
static Trace *step_edited(const Lesson *l, const LessonStep *s, Trace *t, Err *err) {
  TraceEdits e = {0};
  LessonDiag quiet = {0};
  Trace *r = lesson_step_edits(l, s, t, &e, &quiet) ? edits_trace(t, &e, err) : t;
  edits_free(&e);
  return r;
}

// Measures every claim of the steps (expect=, facts.h) on the sentence or the step's compare
// sentence; a claim that does not hold is an error with its measured value. Returns the count.
// With generate: on, a step's claims are measured on the trace of its generation step (gen=).
static int check_claims(const Lesson *l, const Model *m, const Tokens *tk, Trace *main, LessonDiag *d) {
  int n = 0;
  bool computed = false;
  Generation *g = NULL;
  Err gerr = {0};
  for (int i = 0; i < l->n_steps; i++) {
    const LessonStep *s = &l->steps[i];
    Trace *other = NULL, *edited[2] = {NULL, NULL}; // the step's edited pass: sentence, compare
    for (int k = 0; k < s->n_facts; k++) {
      const Fact *f = &s->facts[k];
      Trace *t = main;
      Err err = {0};
      if (l->generate && !f->compare) {
        if (!g && !gerr.msg[0]) g = gen_run(m, tk, 0, &gerr);
        if (!g || s->gen >= g->n_steps) {
          lesson_diag_add(d, l->path, s->line, 0, false, "claim \"%s\": %s", f->text,
                          g ? "the generation stopped before this step's gen=" : gerr.msg);
          continue;
        }
        t = g->steps[s->gen].trace;
      } else if (f->compare) {
        if (!s->compare) continue; // lesson_parse has reported it
        Tokens ct;
        if (!other && model_tokenize(m, s->compare, LESSON_MAX_WORDS, &ct, &err)) {
          other = make_trace(l, m, &ct, true, &err);
          tokens_free(&ct);
        }
        if (!(t = other)) {
          lesson_diag_add(d, l->path, s->line, 0, false, "claim \"%s\": %s", f->text, err.msg);
          continue;
        }
      } else if (!computed) {
        model_forward(main);
        computed = true;
      }
      // a step that edits or switches heads off is measured on its edited pass, as it is shown
      // (made once per step and side)
      if ((s->edits || s->heads_off) && !l->generate) {
        Trace **ed = &edited[f->compare ? 1 : 0];
        if (!*ed && !(*ed = step_edited(l, s, t, &err))) {
          lesson_diag_add(d, l->path, s->line, 0, false, "claim \"%s\": %s", f->text, err.msg);
          continue;
        }
        t = *ed;
      }
      FactResult r;
      n++;
      if (!facts_eval(f, t, s->layer, &r))
        lesson_diag_add(d, l->path, s->line, 0, false, "bad claim \"%s\": %s", f->text, r.statement);
      else if (!r.holds)
        lesson_diag_add(d, l->path, s->line, 0, false, "claim does not hold: %s", r.statement);
    }
    for (int q = 0; q < 2; q++)
      if (edited[q] != main && edited[q] != other) trace_free(edited[q]);
    trace_free(other);
  }
  gen_free(g);
  return n;
}

// The stages of every step exist in a trace of this model (a cross-check of lesson_resolve), and
// the steps' claims hold. Returns the number of claims measured.
static int check_trace(const Lesson *l, const Model *m, const Tokens *tk, LessonDiag *d) {
  Err err = {0};
  Trace *t = make_trace(l, m, tk, false, &err);
  if (!t) {
    lesson_diag_add(d, l->path, l->sentence_line, 0, false, "%s", err.msg);
    return 0;
  }
  if (!model_is_seq2seq(m) && !trace_add_sim_steps(t)) // as the session has it when a step compares
    lesson_diag_add(d, l->path, 0, 0, false, "out of memory");
  for (int i = 0; i < l->n_steps; i++) {
    const LessonStep *s = &l->steps[i];
    if (!s->has_stage || (s->stage == STEP_SIM && model_is_seq2seq(m))) continue; // reported above
    bool found = false;
    for (int k = 0; k < t->n_steps && !found; k++)
      found = t->steps[k].kind == s->stage && (t->steps[k].layer < 0 || t->steps[k].layer == s->layer);
    if (!found)
      lesson_diag_add(d, l->path, s->line, 0, false,
                      "stage=%s (layer %d) is not a stage of this "
                      "model",
                      lesson_stage_name(s->stage), s->layer + 1);
  }
  if (t->T == 0) lesson_check_edits(l, t, d); // edit= and heads-off= against the model and sentence
  int n = check_claims(l, m, tk, t, d);
  trace_free(t);
  return n;
}

// Opens the model, tokenizes the sentences and resolves the steps.
static int check_model(Lesson *l, LessonDiag *d) {
  for (int i = 0; i < d->n; i++) // the model: line already has an error (a bad random spec)
    if (!d->items[i].warning && l->model_line && d->items[i].line == l->model_line) return 0;
  int mline = l->model_line ? l->model_line : 1;
  Err note = {0}, err = {0};
  Model *m = lesson_open_model(l, &note, &err);
  if (!m) {
    lesson_diag_add(d, l->path, mline, 0, false, "model: %s", err.msg);
    return 0;
  }
  if (note.msg[0]) lesson_diag_add(d, l->path, mline, 0, true, "%s", note.msg);
  bool random_vocab = note.msg[0] || (l->model && !strncmp(l->model, "random", 6));
  Tokens tk;
  if (!model_tokenize(m, l->sentence, LESSON_MAX_WORDS, &tk, &err)) {
    lesson_diag_add(d, l->path, l->sentence_line, 0, false, "sentence: %s", err.msg);
    model_free(m);
    return 0;
  }
  if (!random_vocab) check_words(l, l->sentence_line, &tk, d);
  for (int i = 0; i < l->n_steps; i++) {
    const LessonStep *s = &l->steps[i];
    if (s->has_stage && s->stage == STEP_SIM && !s->compare)
      lesson_diag_add(d, l->path, s->line, 0, false,
                      "stage=sim compares two sentences and this step has one: add compare=\"...\" with "
                      "the second sentence");
    if (s->has_stage && s->stage == STEP_SIM && model_is_seq2seq(m))
      lesson_diag_add(d, l->path, s->line, 0, false,
                      "stage=sim compares two sentences through an encoder, and this model is an "
                      "encoder-decoder: choose another stage");
    if (!s->compare) continue;
    Tokens ct;
    if (!model_tokenize(m, s->compare, LESSON_MAX_WORDS, &ct, &err)) {
      lesson_diag_add(d, l->path, s->line, 0, false, "compare: %s", err.msg);
      continue;
    }
    if (!random_vocab) check_words(l, s->line, &ct, d);
    tokens_free(&ct);
  }
  int claims = lesson_resolve(l, m, &tk, d) ? check_trace(l, m, &tk, d) : 0;
  tokens_free(&tk);
  model_free(m);
  return claims;
}

// Checks one file; returns true when it has no errors.
static bool check_file(const char *arg) {
  Lesson l;
  LessonDiag d = {0};
  char path[4096]; // a lesson by name: the teacher's or a shipped one (cli_find_lesson)
  Err err = {0};
  if (!cli_find_lesson(arg, path, sizeof path, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    printf("%s: 1 problem\n", arg);
    return false;
  }
  lesson_load(&l, path, &d);
  Counts n = {l.n_steps, 0, 0};
  bool readable = l.path && (l.n_steps > 0 || l.title || l.sentence);
  if (readable && l.sentence) n.claims = check_model(&l, &d);
  if (readable) n.formulas = formulas_check(&l, &d);
  sort_by_line(&d);
  lesson_diag_print(&d, stderr);
  if (d.n_errors == 0)
    printf("%s: ok (%d steps, %d formulas, %d claims%s)\n", path, n.steps, n.formulas, n.claims,
           d.n ? ", with warnings" : "");
  else
    printf("%s: %d problem%s\n", path, d.n_errors, d.n_errors == 1 ? "" : "s");
  fflush(stdout);
  lesson_free(&l);
  return d.n_errors == 0;
}

// A README.md that does not open with a front matter: the lessons folder's documentation.
static bool is_readme(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (strcasecmp(base, "README.md")) return false;
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  char head[8] = {0};
  size_t n = fread(head, 1, sizeof head - 1, f);
  fclose(f);
  const char *p = n >= 3 && !memcmp(head, "\xEF\xBB\xBF", 3) ? head + 3 : head;
  return strncmp(p, "---", 3) != 0;
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
  int bad = 0, lessons = 0;
  for (int i = 1; i < argc; i++) {
    if (is_readme(argv[i])) {
      printf("%s: skipped (a README without a front matter is not a lesson)\n", argv[i]);
      continue;
    }
    lessons++;
    bad += !check_file(argv[i]);
  }
  if (lessons > 1) printf("%d of %d lessons clean\n", lessons - bad, lessons);
  return bad ? 2 : 0;
}
