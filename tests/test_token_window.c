// test_token_window.c -- a long sentence's window of tokens in the views the equations do not draw
// (issue 31.8: "above the readable size a picture shows a window of the tokens with a way to move
// it, and says so"), read from the scene's text items at 1280×720 (page_render, no pixels):
//   - the KV cache of a causal model (modern.safetensors), the model view's thumbnails (O), the
//     training view's softmax page and a stage page (B), the similarity of two long sentences;
//   - each, for a 55-token sentence: shows 8 to 24 tokens (ViewLayout.tok_*, GradWindow), names
//     every one of them (a label per token of the window, every distinct word among them) with
//     labels of at least 17 px (capitals 12.4 px high: read at half size), says "tokens A–B of 55" on the
//     picture;
//   - moved (ViewOptions.tok_first = 20, GradWindow.first = 20, as < > and export --tokens do):
//     the window starts at token 21 and says so.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli.h"       // links the app layer (session.c)
#include "page.h"      // defines: page_render
#include "session.h"   // defines: session_open
#include "text.h"      // defines: text_init
#include "view_grad.h" // defines: view_grad_softmax, view_grad_stage, GradWindow

#define W 1280
#define H 720
#define LEAST 17.0f // px: capitals 12.4 px high (0.73 of the size), read at half size

static const char *S55 =
    "the cat walks by the river bank and the cat sleeps by the bank the cat walks by the bank "
    "the river flows by the bank the cat walks by the bank and the money is in the bank the "
    "cat sleeps by the river bank the cat walks by the bank and the river";
static const char *C48 =
    "the money is in the bank and the cat walks by the river bank the cat sleeps by the bank "
    "the river flows by the bank the cat walks by the bank and the money is in the bank the "
    "cat sleeps by the river the cat walks";

// Text items of the scene that are a word of t (labels), at least LEAST px: how many, and
// whether every distinct word of tokens first .. first + n - 1 is among them (the first missing).
static int named(const Scene *sc, const Trace *t, TraceAxis axis, int L, int first, int n, char *missing,
                 int cap) {
  char a[96], b[96];
  int labels = 0;
  for (int c = 0; c < sc->n; c++) {
    const Cmd *m = &sc->cmds[c];
    if (m->kind != CMD_TEXT || m->size < LEAST - 0.05f) continue;
    for (int i = 0; i < L; i++)
      if (!strcmp(m->text, trace_axis_label(t, axis, i, a, sizeof a))) {
        labels++;
        break;
      }
  }
  missing[0] = 0;
  for (int i = first; i < first + n && !missing[0]; i++) {
    trace_axis_label(t, axis, i, a, sizeof a);
    bool found = false;
    for (int c = 0; c < sc->n && !found; c++) {
      const Cmd *m = &sc->cmds[c];
      found = m->kind == CMD_TEXT && m->size >= LEAST - 0.05f && !strcmp(m->text, a);
    }
    if (!found) snprintf(missing, (size_t)cap, "%s", a);
  }
  (void)b;
  return labels;
}

static bool says(const Scene *sc, const char *want) {
  for (int c = 0; c < sc->n; c++)
    if (sc->cmds[c].kind == CMD_TEXT && strstr(sc->cmds[c].text, want)) return true;
  return false;
}

// One window: shown tokens from first (0-based) of L, its labels, the line naming it.
static void check_window(const char *what, const Scene *sc, const Trace *t, TraceAxis axis, int first,
                         int shown, int L, int want_first) {
  CHECK(shown >= 8 && shown <= 24, "%s: a window of 8 to 24 of the %d tokens (%d shown)", what, L, shown);
  if (want_first >= 0)
    CHECK(first == want_first, "%s: the window moved to token %d starts there (%d)", what, want_first + 1,
          first + 1);
  char line[64], miss[96];
  snprintf(line, sizeof line, "tokens %d–%d of %d", first + 1, first + shown, L);
  CHECK(says(sc, line), "%s: the picture says \"%s\"", what, line);
  int labels = named(sc, t, axis, L, first, shown, miss, sizeof miss);
  CHECK(!miss[0], "%s: every word of the window named at %.0f px or more (missing: %s)", what, LEAST, miss);
  CHECK(labels >= shown, "%s: a label of %.0f px or more for each of the %d tokens shown (%d)", what, LEAST,
        shown, labels);
}

static bool open_session(Session *s, const char *model, const char *compare) {
  memset(s, 0, sizeof *s);
  SessionOpts o = {.compare = compare};
  o.model.text = S55, o.model.model_path = model;
  static LessonDiag d;
  memset(&d, 0, sizeof d);
  Err err = {0};
  bool ok = session_open(s, &o, &d, &err);
  CHECK(ok, "%s opens: %s", model, err.msg);
  return ok;
}

static int step_of(const Trace *t, StepKind k) {
  for (int i = 0; i < t->n_steps; i++)
    if (t->steps[i].kind == k) return i;
  return -1;
}

// The KV cache and the model view of a causal model; with moved = true, from token 21.
static void kv_and_model(const char *model, bool moved) {
  Session s;
  if (!open_session(&s, model, NULL)) return;
  const Trace *t = s.trace;
  Scene sc;
  scene_init(&sc, W, H, 0);
  for (int view = 0; view < 2; view++) {
    ViewOptions vo = view_options_default(theme_get(THEME_LIGHT));
    vo.tok_first = moved ? 20 : -1;
    int step = view ? step_of(t, STEP_SOFTMAX) : t->n_steps - 1;
    if (view)
      vo.model_view = true;
    else
      vo.inside = INSIDE_KVCACHE;
    PageSpec p = {.view = &vo, .sentence = s.text, .width = W, .height = H, .trace = t, .step = step};
    ViewLayout lay;
    scene_reset(&sc, W, H, 0);
    page_render(&sc, &p, &lay);
    char what[96];
    snprintf(what, sizeof what, "%s%s", view ? "the model view" : "the KV cache", moved ? ", moved" : "");
    check_window(what, &sc, t, AXIS_TOKEN, lay.tok_first, lay.tok_shown, t->L, moved ? 20 : -1);
    if (!view && !moved)
      CHECK(lay.tok_first + lay.tok_shown == t->L, "the KV cache's window ends at the last token (%d of %d)",
            lay.tok_first + lay.tok_shown, t->L);
  }
  scene_free(&sc);
  session_close(&s);
}

// The training view's softmax page and the first stage page with a token axis.
static void training(const char *model, bool moved) {
  Session s;
  if (!open_session(&s, model, NULL)) return;
  const Trace *t = s.trace;
  Err err = {0};
  TraceGrad *g = backward_new(t, NULL, 0, &err);
  CHECK(g != NULL, "the backward: %s", err.msg);
  if (!g) return session_close(&s);
  backward_run(g);
  int head, row, col, ks[512], n = view_grad_stages(t, g, ks, 512);
  view_grad_pick(t, g, &head, &row, &col);
  Scene sc;
  scene_init(&sc, W, H, 0);
  GradWindow win = {.first = moved ? 20 : -1, .keys = "< > move the window"};
  view_grad_softmax(&sc, t, g, 0, head, row, col, "footer", theme_get(THEME_DARK), W, H, &win);
  check_window(moved ? "training view, softmax page, moved" : "training view, softmax page", &sc, t,
               AXIS_TOKEN, win.first, win.shown, t->L, moved ? 20 : -1);
  CHECK(win.total == t->L, "training view: the window counts the %d tokens (%d)", t->L, win.total);
  for (int p = 0; p < n; p++) {
    const TraceTensor *x = &t->t[ks[p]];
    if (x->row_axis != AXIS_TOKEN) continue;
    scene_reset(&sc, W, H, 0);
    win.first = moved ? 20 : -1;
    view_grad_stage(&sc, t, g, ks[p], 0, p + 1, n, "footer", theme_get(THEME_DARK), W, H, &win);
    char what[96];
    snprintf(what, sizeof what, "training view, %s%s", x->name, moved ? ", moved" : "");
    check_window(what, &sc, t, AXIS_TOKEN, win.first, win.shown, t->L, moved ? 20 : -1);
    break;
  }
  scene_free(&sc);
  backward_free(g);
  session_close(&s);
}

// The similarity of two long sentences: rows a window of the first, columns of the second.
static void similarity(const char *model, bool moved) {
  Session s;
  if (!open_session(&s, model, C48)) return;
  const Trace *t = s.trace, *b = s.compare_all;
  CHECK(b != NULL, "--compare gives the second sentence's pass");
  int step = step_of(t, STEP_SIM);
  CHECK(step >= 0, "a stage compares the two sentences");
  if (!b || step < 0) return session_close(&s);
  Scene sc;
  scene_init(&sc, W, H, 0);
  ViewOptions vo = view_options_default(theme_get(THEME_LIGHT));
  vo.tok_first = moved ? 20 : -1;
  PageSpec p = {.view = &vo,
                .sentence = s.text,
                .width = W,
                .height = H,
                .trace = t,
                .step = step,
                .compare = b,
                .compare_sentence = C48,
                .compare_row = -1,
                .compare_col = -1};
  ViewLayout lay;
  page_render(&sc, &p, &lay);
  const char *what = moved ? "the similarity, moved" : "the similarity";
  check_window(what, &sc, t, AXIS_TOKEN, lay.tok_first, lay.tok_shown, t->L, moved ? 20 : -1);
  // the columns: the second sentence's window, named the same way
  const ViewOperand *r = &lay.ops[lay.result];
  int c0 = r->op.col0, cn = r->op.cols;
  char line[64], miss[96];
  snprintf(line, sizeof line, "columns: tokens %d–%d of %d", c0 + 1, c0 + cn, b->L);
  CHECK(cn >= 8 && cn <= 24 && says(&sc, line),
        "%s: the columns a window of the second sentence, said (\"%s\")", what, line);
  named(&sc, r->op.trace, AXIS_TOKEN2, b->L, c0, cn, miss, sizeof miss);
  CHECK(!miss[0], "%s: every word of the columns' window named (missing: %s)", what, miss);
  scene_free(&sc);
  session_close(&s);
}

int main(void) {
  Err err = {0};
  if (!text_init(&err)) {
    fprintf(stderr, "test_token_window: %s\n", err.msg);
    return 1;
  }
  const char *src = getenv("SF_SOURCE_DIR");
  char modern[4096], bank[4096];
  snprintf(modern, sizeof modern, "%s/assets/models/modern.safetensors", src ? src : ".");
  snprintf(bank, sizeof bank, "%s/assets/models/bank.safetensors", src ? src : ".");
  for (int moved = 0; moved < 2; moved++) {
    kv_and_model(modern, moved);
    training(bank, moved);
    similarity(bank, moved);
  }
  text_shutdown();
  return check_exit("test_token_window");
}
