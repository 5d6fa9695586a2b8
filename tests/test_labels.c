// test_labels.c -- labels never lie (issue 31, group 3): read from the scene's text items of the
// pictures at 1280×720 (page_render, no pixels):
//   - a 22-token sentence: at every step of the pass, every matrix with a token axis names every
//     word of the sentence on that axis, every token position in fact (up to about 24 tokens,
//     every row and column is labelled);
//   - a 45-token sentence: a window of its tokens (more than 40, issue 31.8), every distinct word
//     of the window named on each token axis, and the picture says which tokens it shows;
//   - a 66-token sentence: at every step a window of the tokens, each token of it labelled (no
//     positions needed), its rows at least 13 px and its labels 17 px (capitals 12.4 px: read at half
//     size; 15.5 in a window at its least, 8 tokens, where the picture is crowded),
//     the picture saying "tokens A–B of 66 shown";
//   - the cat/bank lesson with its compare step (step 15): river is named on the 7×7 columns;
//   - intuition.md: "who" is named on the 9×9 softmax;
//   - beside a lesson's narration (cat/bank): a 22-token sentence typed in names every position at
//     every step (the grids of heads, the two sentences' compare step, the predictions beside their
//     charts too, the similarity's columns of the second sentence), a 39-token one every distinct
//     word of what each step shows (a window when the whole names only some); the French lesson
//     names every word at every step, banque on the softmax's S₁ too;
//   - the training view (B): the softmax backward page and the walk's pages of a 22-token sentence
//     name every distinct word on the rows and above the columns, no two labels overlapping;
//   - bank-sense.pt (the course's classifier): its class scores and prediction name both classes,
//     river and money, above every matrix with a class axis (W_c's two columns are narrow);
//   - no two labels (texts of words of the sentence) overlap anywhere in any of these pictures;
//   - the lines under the matrices (their shapes "L×L = 20×20", "area-averaged", the notes
//     "labelled: 7 of 20 rows, …") never overlap one another: the compare step (cat-bank step 15)
//     after a long sentence is typed (its 20×20 grids beside the 7×7 ones) wrote four notes over
//     one another.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli.h"       // links the app layer (session.c)
#include "page.h"      // defines: page_render
#include "session.h"   // defines: session_open
#include "text.h"      // defines: text_init, text_width
#include "view_grad.h" // defines: view_grad_softmax, view_grad_stage

#define W 1280
#define H 720

typedef struct {
  float x0, y0, x1, y1;
} Box;

static Box text_box(const Cmd *c) {
  float w = text_width(c->font, c->size, c->text), a = text_ascent(c->font, c->size) * 0.8f,
        d = text_descent(c->font, c->size) * 0.5f;
  if (c->turned) return (Box){c->x - a, c->y - w, c->x + d, c->y};
  return (Box){c->x, c->y - a, c->x + w, c->y + d};
}

static bool overlap(Box a, Box b) {
  return a.x0 < b.x1 - 0.5f && b.x0 < a.x1 - 0.5f && a.y0 < b.y1 - 0.5f && b.y0 < a.y1 - 0.5f;
}

// The word a label names: "walks" or "3 walks" -> "walks"; NULL when the text is no entry of axis
// ax of t (n entries: the sentence's tokens, or a second sentence's, AXIS_TOKEN2).
static const char *label_word_of(const Trace *t, TraceAxis ax, int n, const char *text) {
  const char *s = text;
  if (*s >= '0' && *s <= '9') {
    while (*s >= '0' && *s <= '9') s++;
    if (*s != ' ') return NULL;
    s++;
  }
  char buf[96];
  for (int i = 0; i < n; i++)
    if (!strcmp(trace_axis_label(t, ax, i, buf, sizeof buf), s)) return s;
  return NULL;
}

static const char *label_word(const Trace *t, const char *text) {
  return label_word_of(t, AXIS_TOKEN, t->L, text);
}

// Every distinct word of t named among the labels drawn left of operand v's rows (rows) or above
// its columns (cols), and whether some label carries a position.
static void axis_words(const Scene *sc, const ViewLayout *lay, const ViewOperand *v, bool cols,
                       const Trace *t, TraceAxis ax, int nw, bool *named, bool *numbered) {
  char buf[96];
  for (int k = 0; k < sc->n; k++) {
    const Cmd *c = &sc->cmds[k];
    if (c->kind != CMD_TEXT || !label_word_of(t, ax, nw, c->text)) continue;
    Box b = text_box(c);
    bool at = cols ? (b.y1 <= v->y + 1 && b.y1 > v->y - 10 * c->size && (b.x0 + b.x1) / 2 >= v->x - 2 &&
                      (b.x0 + b.x1) / 2 <= v->x + v->w + 2)
                   : (b.x1 <= v->x + 1 && b.x1 > v->x - 14 * c->size && (b.y0 + b.y1) / 2 >= v->y - 2 &&
                      (b.y0 + b.y1) / 2 <= v->y + v->h + 2);
    for (int q = 0; q < lay->n_ops && at && !cols; q++) { // not another operand's column label
      const ViewOperand *o = &lay->ops[q];
      at = b.x1 <= o->x || b.x0 >= o->x + o->w || b.y1 > o->y + 1 || b.y1 < o->y - 10 * c->size;
      // nor another operand's row label: one whose cells lie between the label and v's (E's
      // vocabulary rows left of E, head_1's rows left of head_1, are not Z's or head_2's)
      float mid = (b.y0 + b.y1) / 2;
      if (at && o != v && o->x >= b.x1 - 1 && o->x + o->w <= v->x + 1 && mid >= o->y - 2 &&
          mid <= o->y + o->h + 2)
        at = false;
    }
    if (!at) continue;
    const char *w = label_word_of(t, ax, nw, c->text);
    if (w != c->text) *numbered = true;
    for (int i = 0; i < nw; i++)
      if (!strcmp(trace_axis_label(t, ax, i, buf, sizeof buf), w)) named[i] = true;
  }
}

// Marks as named every position whose word is named (a word named once counts for all its places),
// among the positions lo .. hi - 1 the picture shows (a window of a long sentence's tokens).
static int missing_words_of(const Trace *t, TraceAxis ax, int nw, const bool *named, int lo, int hi,
                            char *which, int cap) {
  char a[96], b[96];
  int miss = 0;
  which[0] = 0;
  for (int i = lo; i < hi; i++) {
    bool any = false;
    for (int j = 0; j < nw && !any; j++)
      any = named[j] &&
            !strcmp(trace_axis_label(t, ax, i, a, sizeof a), trace_axis_label(t, ax, j, b, sizeof b));
    if (!any) {
      miss++;
      size_t n = strlen(which);
      snprintf(which + n, (size_t)cap - n, " %s", a);
    }
  }
  return miss;
}

static int missing_words(const Trace *t, const bool *named, int lo, int hi, char *which, int cap) {
  return missing_words_of(t, AXIS_TOKEN, t->L, named, lo, hi, which, cap);
}

static int overlaps(const Scene *sc, const Trace *t, char *where, int cap) {
  int n = 0;
  for (int a = 0; a < sc->n; a++) {
    const Cmd *c = &sc->cmds[a];
    if (c->kind != CMD_TEXT || !label_word(t, c->text)) continue;
    for (int b = a + 1; b < sc->n; b++) {
      const Cmd *d = &sc->cmds[b];
      if (d->kind != CMD_TEXT || !label_word(t, d->text)) continue;
      if (overlap(text_box(c), text_box(d))) {
        if (!n)
          snprintf(where, (size_t)cap, "'%s' at (%.0f, %.0f) and '%s' at (%.0f, %.0f)", c->text, c->x, c->y,
                   d->text, d->x, d->y);
        n++;
      }
    }
  }
  return n;
}

typedef struct {
  const char *lesson, *text, *compare;
  bool every_position; // up to about 24 tokens: every position labelled, no numbers
  int only_step;       // a lesson's step (1-based) to check alone, or 0 for all
  const char *must;    // a word that must be named on the result's columns, or NULL
  bool window;         // more than 40 tokens: each step shows a window of them, every one labelled
  bool notes_only;     // only the lines under the matrices (and the labels' overlaps) checked
} Case;

// The lines under the matrices: shapes, "area-averaged", "labelled: …".
static bool under_line(const Cmd *c) {
  return c->kind == CMD_TEXT && (!strncmp(c->text, "labelled", 8) || !strncmp(c->text, "area-", 5) ||
                                 !strncmp(c->text, "area maximum", 12) ||
                                 (strstr(c->text, "×") && strstr(c->text, " = ") && !c->turned));
}

// Pairs of those lines whose boxes overlap (the first pair into where).
static int under_overlaps(const Scene *sc, char *where, int cap) {
  int n = 0;
  for (int a = 0; a < sc->n; a++) {
    if (!under_line(&sc->cmds[a])) continue;
    for (int b = a + 1; b < sc->n; b++)
      if (under_line(&sc->cmds[b]) && overlap(text_box(&sc->cmds[a]), text_box(&sc->cmds[b]))) {
        if (!n)
          snprintf(where, (size_t)cap, "'%s' at (%.0f, %.0f) and '%s' at (%.0f, %.0f)", sc->cmds[a].text,
                   sc->cmds[a].x, sc->cmds[a].y, sc->cmds[b].text, sc->cmds[b].x, sc->cmds[b].y);
        n++;
      }
  }
  return n;
}

static void run(const Case *cs) {
  Session s;
  memset(&s, 0, sizeof s);
  SessionOpts o = {.lesson = cs->lesson, .compare = cs->compare};
  o.model.text = cs->text;
  static LessonDiag d;
  memset(&d, 0, sizeof d);
  Err err = {0};
  bool ok = session_open(&s, &o, &d, &err);
  CHECK(ok, "%s opens: %s", cs->lesson ? cs->lesson : cs->text, err.msg);
  if (!ok) return;
  Scene sc;
  scene_init(&sc, W, H, 0);
  int steps = s.has_lesson ? s.lesson.n_steps : s.trace->n_steps;
  const char *name = cs->lesson ? cs->lesson : "sentence";
  for (int k = 0; k < steps; k++) {
    if (cs->only_step && k + 1 != cs->only_step) continue;
    ViewOptions vo = view_options_default(theme_get(THEME_LIGHT));
    PageSpec p = {.view = &vo, .sentence = s.text, .width = W, .height = H, .show_text = true};
    const Trace *t = s.trace;
    int step = k;
    if (s.has_lesson) {
      const LessonStep *ls = &s.lesson.steps[k];
      step = session_trace_step(&s, k);
      if (step < 0) continue;
      t = session_step_trace(&s, k);
      vo.head = ls->head == LESSON_ALL_HEADS ? -1 : ls->head;
      vo.part = (int)ls->show;
      vo.focus_row = ls->row, vo.focus_col = ls->col;
      p.title = ls->title, p.narration = &ls->narration;
      p.compare = session_compare(&s, k, &p.compare_sentence, &p.compare_row, &p.compare_col);
    }
    p.trace = t, p.step = step;
    ViewLayout lay;
    page_render(&sc, &p, &lay);
    char where[256];
    int ov = overlaps(&sc, t, where, sizeof where);
    if (p.compare) ov += overlaps(&sc, p.compare, where, sizeof where);
    CHECK(ov == 0, "%s step %d: %d pairs of labels overlap (%s)", name, k + 1, ov, where);
    for (int c = 0; c < sc.n && lay.clip[2] > 0; c++) { // the notes stay left of the colour bars
      const Cmd *m = &sc.cmds[c];
      if (m->kind != CMD_TEXT || strncmp(m->text, "labelled", 8)) continue;
      Box b = text_box(m);
      CHECK(b.x1 <= lay.clip[0] + lay.clip[2] + 1, "%s step %d: \"%s\" ends at %.0f, past the picture (%.0f)",
            name, k + 1, m->text, b.x1, lay.clip[0] + lay.clip[2]);
    }
    int uo = under_overlaps(&sc, where, sizeof where);
    CHECK(uo == 0, "%s step %d%s: %d pairs of lines under the matrices overlap (%s)", name, k + 1,
          cs->text && s.has_lesson ? " (a long sentence typed)" : "", uo, where);
    // a caption naming the sentences is whole ("columns: “The cat sleeps by the river ban…”" hid
    // the word the similarity step is about)
    for (int c = 0; c < sc.n; c++) {
      const char *tx = sc.cmds[c].text;
      if (sc.cmds[c].kind != CMD_TEXT || strncmp(tx, "rows: “", strlen("rows: “"))) continue;
      size_t n = strlen(tx);
      CHECK(n >= 3 && !strcmp(tx + n - 3, "”"), "%s step %d: the caption \"%s\" is cut", name, k + 1, tx);
    }
    if (cs->notes_only) continue;
    for (int q = 0; q < lay.n_ops; q++) {
      const ViewOperand *v = &lay.ops[q];
      const Trace *ot = v->op.trace;
      for (int cols = 0; cols < 2; cols++) {
        TraceAxis a = cols ? v->op.col_axis : v->op.row_axis;
        int n = cols ? v->op.cols : v->op.rows;
        if ((a != AXIS_TOKEN && a != AXIS_TOKEN2) || n < 2) continue;
        // the entries of the whole axis (a window shows some): the sentence's, or the second's
        int nw = (cols ? v->op.col_win : v->op.row_win) > 0 ? (cols ? v->op.col_win : v->op.row_win) : n;
        if (a == AXIS_TOKEN) nw = ot->L;
        if (!cols && v->x - lay.area[0] < 5) continue;
        bool named[512] = {false}, numbered = false;
        axis_words(&sc, &lay, v, cols, ot, a, nw, named, &numbered);
        bool any = false;
        for (int i = 0; i < nw; i++) any |= named[i];
        if (!any) continue; // an axis without labels (a summand beside a labelled one)
        char which[512];
        // the tokens the operand shows: a window of them (its own, as the similarity's trace has)
        int win = cols ? v->op.col_win : v->op.row_win, lo = 0, hi = nw;
        if (win > 0)
          lo = cols ? v->op.col0 : v->op.row0, hi = lo + n;
        else if (lay.tok_shown > 0 && ot == t)
          lo = lay.tok_first, hi = lo + lay.tok_shown;
        int miss = missing_words_of(ot, a, nw, named, lo, hi, which, sizeof which);
        CHECK(miss == 0, "%s step %d, %s's %s: every distinct word named (missing:%s)", name, k + 1,
              v->symbol, cols ? "columns" : "rows", which);
        if (cs->every_position || cs->window) {
          CHECK(!numbered, "%s step %d, %s's %s: no positions written (every one labelled)", name, k + 1,
                v->symbol, cols ? "columns" : "rows");
        }
      }
    }
    if (!cs->every_position && !s.has_lesson && t->steps[step].kind == STEP_SCORES) {
      bool note = false;
      for (int c = 0; c < sc.n; c++)
        note |= sc.cmds[c].kind == CMD_TEXT &&
                (!strncmp(sc.cmds[c].text, "labelled:", 9) || !strncmp(sc.cmds[c].text, "tokens ", 7));
      CHECK(note, "%s step %d: the picture says that labels were skipped", name, k + 1);
    }
    if (cs->window && t->L > VIEW_TOKENS_READABLE) { // the window: named, and cells large enough
      char want[64];
      snprintf(want, sizeof want, "tokens %d–%d of %d shown", lay.tok_first + 1,
               lay.tok_first + lay.tok_shown, t->L);
      bool note = false;
      for (int c = 0; c < sc.n; c++) note |= sc.cmds[c].kind == CMD_TEXT && strstr(sc.cmds[c].text, want);
      CHECK(lay.tok_shown >= 8 && lay.tok_shown <= VIEW_TOKENS_READABLE && note,
            "%s step %d: a window of the tokens, named on the picture (%d shown, \"%s\" %s)", name, k + 1,
            lay.tok_shown, want, note ? "found" : "not found");
      if (t->steps[step].kind == STEP_SCORES) { // the shape under S is the matrix's, then the window's
        char shape[64];
        snprintf(shape, sizeof shape, "L×L = %d×%d, %d×%d shown", t->L, t->L, lay.tok_shown, lay.tok_shown);
        bool said = false;
        for (int c = 0; c < sc.n; c++) said |= sc.cmds[c].kind == CMD_TEXT && !strcmp(sc.cmds[c].text, shape);
        CHECK(said, "%s step %d: the shape under S says \"%s\"", name, k + 1, shape);
      }
      for (int q = 0; q < lay.n_ops; q++) {
        const ViewOperand *v = &lay.ops[q];
        if (v->op.row_axis == AXIS_TOKEN && v->op.rows > 1 && t->steps[step].kind != STEP_TOKENS)
          CHECK(v->h / (float)v->op.rows >= 13.0f, "%s step %d: %s's rows %.1f px, at least 13", name, k + 1,
                v->symbol, v->h / (float)v->op.rows);
        // the window's labels are read at half size: 17.3 px at 1280x720, capitals 12.6 px (17: the
        // search's tolerance); a window at its least (8 tokens) in a picture that other things crowd
        // (the prediction's chart takes half the height) at least 15.5 (it drew 12.9 px for 24 tokens)
        float least = lay.tok_shown > 8 ? 17.0f : 15.5f;
        if ((v->op.row_win || v->op.col_win) && v->token_px > 0)
          CHECK(v->token_px >= least,
                "%s step %d: %s's token labels %.1f px, at least %.1f (%d tokens shown)", name, k + 1,
                v->symbol, v->token_px, least, lay.tok_shown);
      }
    }
    if (cs->must) {
      bool found = false;
      for (int c = 0; c < sc.n; c++)
        found |= sc.cmds[c].kind == CMD_TEXT && sc.cmds[c].turned && !strcmp(sc.cmds[c].text, cs->must);
      for (int c = 0; c < sc.n && !found; c++)
        found |= sc.cmds[c].kind == CMD_TEXT && !strcmp(sc.cmds[c].text, cs->must);
      CHECK(found, "%s step %d: '%s' is named", name, k + 1, cs->must);
    }
  }
  scene_free(&sc);
  session_close(&s);
}

// The training view's pages (view_grad.h) of sentence text: every word named, nothing overlapping.
static void training(const char *text) {
  Session s;
  memset(&s, 0, sizeof s);
  SessionOpts o = {0};
  o.model.text = text;
  static LessonDiag d;
  memset(&d, 0, sizeof d);
  Err err = {0};
  bool ok = session_open(&s, &o, &d, &err);
  CHECK(ok, "%s opens: %s", text, err.msg);
  if (!ok) return;
  const Trace *t = s.trace;
  TraceGrad *g = backward_new(t, NULL, 0, &err);
  CHECK(g != NULL, "the backward of \"%s\": %s", text, err.msg);
  if (!g) return session_close(&s);
  backward_run(g);
  int head, row, col, ks[512], n = view_grad_stages(t, g, ks, 512);
  view_grad_pick(t, g, &head, &row, &col);
  Scene sc;
  scene_init(&sc, W, H, 0);
  for (int p = -1; p < n; p++) { // -1: the softmax's page; then the walk's pages with a token axis
    const char *what = "the softmax backward";
    if (p < 0) {
      view_grad_softmax(&sc, t, g, 0, head, row, col, "footer", theme_get(THEME_DARK), W, H, NULL);
    } else {
      const TraceTensor *x = &t->t[ks[p]];
      if (x->col_axis != AXIS_TOKEN && x->row_axis != AXIS_TOKEN) continue;
      scene_reset(&sc, W, H, 0);
      view_grad_stage(&sc, t, g, ks[p], 0, p + 1, n, "footer", theme_get(THEME_DARK), W, H, NULL);
      what = x->name;
    }
    char where[256];
    int ov = overlaps(&sc, t, where, sizeof where);
    CHECK(ov == 0, "training view, %s: %d pairs of labels overlap (%s)", what, ov, where);
    bool named[512] = {false};
    char buf[96];
    for (int c = 0; c < sc.n; c++) {
      const Cmd *m = &sc.cmds[c];
      const char *w = m->kind == CMD_TEXT ? label_word(t, m->text) : NULL;
      for (int i = 0; w && i < t->L; i++)
        if (!strcmp(trace_axis_label(t, AXIS_TOKEN, i, buf, sizeof buf), w)) named[i] = true;
    }
    char which[512];
    CHECK(missing_words(t, named, 0, t->L, which, sizeof which) == 0,
          "training view, %s: every word named (missing:%s)", what, which);
  }
  scene_free(&sc);
  backward_free(g);
  session_close(&s);
}

// bank-sense's class steps: every operand with a class axis names every class above its columns.
static void classes(const char *model) {
  Session s;
  memset(&s, 0, sizeof s);
  SessionOpts o = {0};
  o.model.model_path = model;
  static LessonDiag d;
  memset(&d, 0, sizeof d);
  Err err = {0};
  bool ok = session_open(&s, &o, &d, &err);
  CHECK(ok, "%s opens: %s", model, err.msg);
  if (!ok) return;
  Scene sc;
  scene_init(&sc, W, H, 0);
  int checked = 0;
  for (int k = 0; k < s.trace->n_steps; k++) {
    StepKind kind = s.trace->steps[k].kind;
    if (kind != STEP_CLASS_SCORES && kind != STEP_CLASS_PRED) continue;
    ViewOptions vo = view_options_default(theme_get(THEME_LIGHT));
    PageSpec p = {.view = &vo, .sentence = s.text, .width = W, .height = H, .trace = s.trace, .step = k};
    ViewLayout lay;
    page_render(&sc, &p, &lay);
    for (int q = 0; q < lay.n_ops; q++) {
      const ViewOperand *v = &lay.ops[q];
      if (v->op.col_axis != AXIS_CLASS || v->w <= 0) continue;
      for (int c = 0; c < v->op.cols; c++) {
        char want[96];
        trace_axis_label(s.trace, AXIS_CLASS, c, want, sizeof want);
        bool found = false;
        for (int m = 0; m < sc.n && !found; m++) {
          const Cmd *t = &sc.cmds[m];
          if (t->kind != CMD_TEXT) continue;
          const char *w = t->text;
          while (*w >= '0' && *w <= '9') w++; // "2 money"
          if (w != t->text && *w == ' ') w++;
          Box b = text_box(t);
          found = !strcmp(w, want) && b.y1 <= v->y + 1 && b.y1 > v->y - 10 * t->size &&
                  (b.x0 + b.x1) / 2 >= v->x - 2 * t->size && (b.x0 + b.x1) / 2 <= v->x + v->w + 2 * t->size;
        }
        CHECK(found, "%s step %d (%s), %s: class '%s' named above its columns", model, k + 1,
              s.trace->steps[k].name, v->symbol, want);
        checked++;
      }
    }
  }
  CHECK(checked >= 6, "%s: the class axes of W_c, b_c, s and p-hat checked (%d names)", model, checked);
  scene_free(&sc);
  session_close(&s);
}

int main(void) {
  Err err = {0};
  if (!text_init(&err)) {
    fprintf(stderr, "test_labels: %s\n", err.msg);
    return 1;
  }
  const char *src = getenv("SF_SOURCE_DIR");
  char cat_bank[4096], intuition[4096];
  snprintf(cat_bank, sizeof cat_bank, "%s/lessons/cat-bank.md", src ? src : ".");
  snprintf(intuition, sizeof intuition, "%s/lessons/intuition.md", src ? src : ".");
  const char *t22 =
      "the cat walks by the bank the cat walks by the bank the cat walks by the bank and the river bank";
  const char *t39 = "the cat walks by the bank and the dog sleeps by the river while the bird sings in the "
                    "tree and the fish swims in the water near the old house where the man reads a book "
                    "about it";
  const char *t24 =
      "the cat walks by the bank the cat walks by the bank the cat walks by the bank and the river "
      "bank is wide";
  const char *t12 = "the cat walks by the bank and the dog sleeps by the river";
  const char *t29 = "the cat walks by the bank and the dog sleeps by the river while the bird sings in the "
                    "tree and the fish swims in the water";
  const char *fr19 = "le chat marche au bord de la banque et le chien dort au bord de la rivière pendant que "
                     "l'oiseau chante";
  char t45[1024], t66[1024], fr[4096];
  snprintf(fr, sizeof fr, "%s/lessons/fr-chat-banque.md", src ? src : ".");
  snprintf(t45, sizeof t45, "%s %s flows", t22, t22);
  snprintf(t66, sizeof t66, "%s %s %s", t22, t22, t22);
  Case cases[] = {
      {NULL, t22, NULL, true, 0, NULL, false, false},
      {NULL, t45, NULL, false, 0, NULL, false, false},
      {cat_bank, NULL, NULL, false, 15, "river", false, false},
      {cat_bank, NULL, NULL, false, 0, NULL, false, false},
      {intuition, NULL, NULL, true, 9, "who", false, false},
      {NULL, t66, NULL, false, 0, NULL, true, false},
      {cat_bank, t22, NULL, false, 15, NULL, false, true}, // the compare step after E and a long sentence
      // beside a lesson's narration: the 22 tokens typed into cat/bank, every position named on its
      // one-head steps, the scores (Q, Kᵀ and S: its 22×22 scores named 7 of 22 columns) and the
      // softmax; 39 tokens, every distinct word of what the scores show (9 of 27 were named); the
      // French lesson, every word at every step (its 11×11 softmax named 4 of 11 beside the grown A₁)
      {cat_bank, t22, NULL, true, 11, NULL, false, false},
      {cat_bank, t22, NULL, true, 13, NULL, false, false},
      {cat_bank, t39, NULL, false, 11, NULL, false, false},
      {fr, NULL, NULL, true, 0, "banque", false, false},
      // every step of the lesson: 22 tokens, every position (the grids of heads of steps 14 and 15,
      // the predictions beside their charts of 24 and 27 named 7 of 22); 39, every distinct word
      {cat_bank, t22, NULL, true, 0, NULL, false, false},
      {cat_bank, t39, NULL, false, 0, NULL, false, false},
      // other lengths beside the narrations: 12 and 29 tokens in cat/bank, 22 in intuition.md (its
      // 22×22 softmax named 9 of 22 columns), 19 in the French lesson
      {cat_bank, t12, NULL, true, 0, NULL, false, false},
      {cat_bank, t24, NULL, true, 13, NULL, false, false}, // 24: softmax(S) = A named 9 of 24 columns,
      {cat_bank, t24, NULL, true, 14, NULL, false, false}, // the grid of heads as many, the prediction
      {cat_bank, t24, NULL, true, 23, NULL, false, false}, // beside its chart 9 of 24 rows of Z′
      {cat_bank, t24, NULL, false, 15, NULL, false, true}, // (its compare step names 9 of 24: its notes)
      {cat_bank, t29, NULL, false, 0, NULL, false, false},
      {intuition, t22, NULL, true, 0, NULL, false, false},
      {fr, fr19, NULL, false, 0, NULL, false, false},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) run(&cases[c]);
  training(t22);
  char bank_sense[4096];
  snprintf(bank_sense, sizeof bank_sense, "%s/assets/models/bank-sense.pt", src ? src : ".");
  classes(bank_sense);
  text_shutdown();
  return check_exit("test_labels");
}
