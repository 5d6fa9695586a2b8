// test_backrow.c -- the back row reads it (issue 31, group 4), measured in the scene of every step
// of every shipped lesson at 1280×720 (page_render, no pixels):
//   - the narration's text (DejaVu faces in the narration column) is at least 20 px, and the
//     title slides' at least 24 px; a narration longer than its column goes on to more pages
//     (ViewLayout.text_pages), each page showing text the others do not, never shrunk;
//   - cat-bank's 6×6 steps among 10-13 (the scores and the softmax) carry a number in every cell
//     of their result, at least 14 px (12 px for a 9×9: the back row reads them, the equation
//     grown into the stage's empty area); so do intuition.md's 9×9 of scores (step 8: its values
//     are 0 and 0.577, with no sign to make room for) and its 9×9 softmax (step 9: two S and A
//     side by side, where the narration column gives up width for it); every such number has two
//     significant digits at least and agrees with the inspector's heading for its cell (the one
//     rounding policy: within half a unit of the cell's last digit and of the heading's);
//   - the page's title and every matrix stay clear of the narration column, which keeps at least
//     a quarter of the width;
//   - the model view (O) of GPT-2 small's shape (12 layers × 12 heads) and of cat-bank's model:
//     every thumbnail at least 64 px, its layer and head named at least 20 px; a model too large
//     for that shows pages that say which layers they hold, and every thumbnail is on one page.
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli.h"     // links the app layer (session.c)
#include "explain.h" // defines: explain_cell
#include "page.h"    // defines: page_render
#include "session.h" // defines: session_open
#include "text.h"    // defines: text_init

#define W 1280
#define H 720

static bool sans(FontFace f) { return f == FONT_SANS || f == FONT_SANS_BOLD || f == FONT_SANS_ITALIC; }

typedef struct {
  float least_body, least_title; // the smallest narration text, the smallest title-slide text
  char where_body[256], where_title[256];
  int paged, numbered; // steps with more than one page; result matrices with their numbers
  int numbered_9;      // intuition.md's 9×9 scores and softmax with their numbers
  int narrowed;        // steps whose narration column gave up width for the picture
  char where_narrowed[512];
} Worst;

static void render(Scene *sc, Session *s, int k, int page, ViewLayout *lay) {
  const LessonStep *ls = &s->lesson.steps[k];
  static ViewOptions vo;
  vo = view_options_default(theme_get(THEME_LIGHT));
  vo.head = ls->head == LESSON_ALL_HEADS ? -1 : ls->head;
  vo.part = (int)ls->show;
  vo.focus_row = ls->row, vo.focus_col = ls->col;
  int step = session_trace_step(s, k);
  PageSpec p = {.trace = session_step_trace(s, k),
                .step = step,
                .view = &vo,
                .title = ls->title,
                .narration = &ls->narration,
                .show_text = true,
                .sentence = s->text,
                .lesson_step = k,
                .lesson_steps = s->lesson.n_steps,
                .text_page = page,
                .width = W,
                .height = H};
  if (step >= 0) p.compare = session_compare(s, k, &p.compare_sentence, &p.compare_row, &p.compare_col);
  page_render(sc, &p, lay);
}

// The texts of the narration column (or of the whole title slide), joined, into buf; the
// smallest size among them into *least. The column ends left of the view's area (view_x).
static void narration_text(const Scene *sc, bool slide, float view_x, float *least, char *buf, size_t cap) {
  buf[0] = 0;
  for (int c = 0; c < sc->n; c++) {
    const Cmd *m = &sc->cmds[c];
    if (m->kind != CMD_TEXT || !sans(m->font)) continue;
    bool in = slide ? m->y > 60 && m->y < H - 30 : m->x < view_x - 16 && m->y > 105 && m->y < H - 40;
    if (!in || !strncmp(m->text, "page ", 5)) continue; // "page 1 of 2 · → goes on": a note
    if (m->size < *least) *least = m->size;
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, "%s ", m->text);
  }
}

// A printed number ("-.15", "0.082473", "3.199 \cdot 10^{-4}"): its value, the half unit of its last
// digit, and its digits but a lone leading zero ("0.8": 1; ".08", "-9.8", "15": 2). False when it is
// not one.
static bool printed(const char *t, double *v, double *half, int *digits) {
  char buf[64], *end;
  snprintf(buf, sizeof buf, "%s", t + strspn(t, " "));
  char *minus = strstr(buf, "−"); // (a typographic minus, if one is printed)
  if (minus) minus[0] = '-', memmove(minus + 1, minus + 3, strlen(minus + 3) + 1);
  *v = strtod(buf, &end);
  if (end == buf) return false;
  const char *dot = memchr(buf, '.', (size_t)(end - buf));
  int dec = dot ? (int)(end - dot - 1) : 0, exp10 = 0;
  *digits = 0;
  for (const char *p = buf; p < end; p++) *digits += *p >= '0' && *p <= '9';
  const char *z = buf + (*buf == '-');
  if (z[0] == '0' && z[1] == '.') --*digits;
  if (!strncmp(end, " \\cdot 10^{", 11)) exp10 = (int)strtol(end + 11, &end, 10), end += *end == '}';
  *v *= pow(10, exp10), *half = 0.5 * pow(10, exp10 - dec);
  return *end == 0;
}

// Whether the number printed in cell (i, j) of operand k has two digits at least (".15", ".08",
// "-9.8"; or is the "0" of a value under 0.005, never "0.8") and agrees with the inspector's heading
// for the cell ("A_1[jane, jane] = 0.147"): the two differ by no more than half a unit of the last
// digit of each.
static bool number_agrees(const Trace *t, const ViewLayout *lay, int k, int i, int j, const char *text,
                          const char *name, int step) {
  static Explanation ex;
  explain_cell(t, lay, k, i, j, &ex);
  const char *eq = strrchr(ex.heading, '=');
  double c, hc, h, hh;
  int dc, dh;
  bool ok = eq && printed(text, &c, &hc, &dc) && printed(eq + 1, &h, &hh, &dh) && (dc >= 2 || c == 0) &&
            fabs(c - h) <= hc + hh + 1e-9;
  if (!ok)
    fprintf(stderr, "%s step %d: cell [%d, %d] prints \"%s\", the inspector \"%s\"\n", name, step, i + 1,
            j + 1, text, ex.heading);
  return ok;
}

// Page pg of a model view whose first page was drawn into lay (ViewGrid: pages_h pages across).
static void render_model_page(Scene *sc, PageSpec *p, ViewOptions *vo, ViewLayout *lay, int pg) {
  ViewLayout first;
  vo->model_layer = vo->model_head = 0;
  page_render(sc, p, &first);
  vo->model_layer = pg / first.grid.pages_h * first.grid.layers;
  vo->model_head = pg % first.grid.pages_h * first.grid.heads;
  page_render(sc, p, lay);
}

static void measure(const char *path, const char *name, Worst *w) {
  Session s;
  memset(&s, 0, sizeof s);
  SessionOpts o = {.lesson = path};
  static LessonDiag d;
  memset(&d, 0, sizeof d);
  Err err = {0};
  bool ok = session_open(&s, &o, &d, &err);
  CHECK(ok, "%s opens: %s", path, err.msg);
  if (!ok) return;
  Scene sc;
  scene_init(&sc, W, H, 0);
  static char text[2][16384];
  for (int k = 0; k < s.lesson.n_steps; k++) {
    ViewLayout lay;
    render(&sc, &s, k, 0, &lay);
    bool slide = session_trace_step(&s, k) < 0;
    float least = 1e9f;
    narration_text(&sc, slide, lay.area[0], &least, text[0], sizeof text[0]);
    float *wl = slide ? &w->least_title : &w->least_body;
    if (least < *wl)
      *wl = least,
      snprintf(slide ? w->where_title : w->where_body, sizeof w->where_body, "%s step %d", name, k + 1);
    CHECK(least >= (slide ? 24.0f : 20.0f) - 0.05f, "%s step %d: its narration at least %d px (%.1f)", name,
          k + 1, slide ? 24 : 20, least);
    if (lay.text_pages > 1) { // every page shows text of its own, at the same size
      w->paged++;
      for (int pg = 1; pg < lay.text_pages; pg++) {
        ViewLayout l2;
        render(&sc, &s, k, pg, &l2);
        float l = 1e9f;
        narration_text(&sc, slide, l2.area[0], &l, text[1], sizeof text[1]);
        CHECK(l >= (slide ? 24.0f : 20.0f) - 0.05f, "%s step %d page %d: at least 20 px (%.1f)", name, k + 1,
              pg + 1, l);
        CHECK(text[1][0] && strcmp(text[0], text[1]), "%s step %d page %d: text of its own", name, k + 1,
              pg + 1);
      }
      render(&sc, &s, k, 0, &lay);
    }
    if (!slide && lay.area[0] < W * 0.32f + 16 - 1) {
      size_t n = strlen(w->where_narrowed);
      snprintf(w->where_narrowed + n, sizeof w->where_narrowed - n, "%s%s step %d", w->narrowed ? ", " : "",
               name, k + 1);
      w->narrowed++;
    }
    if (!slide) // the narration column keeps a quarter of the width (it gives up at most 0.06 W)
      CHECK(lay.area[0] >= W * 0.26f + 16 - 1,
            "%s step %d: the narration column at least %.0f px (the view at %.0f)", name, k + 1, W * 0.26f,
            lay.area[0]);
    for (int q = 0; q < lay.n_ops; q++) // nothing of the picture under the narration column
      CHECK(lay.ops[q].x >= lay.area[0] - 1,
            "%s step %d: operand %s right of the narration (x %.0f, the view at %.0f)", name, k + 1,
            lay.ops[q].symbol, lay.ops[q].x, lay.area[0]);
    const ViewOperand *v = lay.result >= 0 ? &lay.ops[lay.result] : NULL;
    bool cat_bank = !strcmp(name, "cat-bank.md") && k + 1 >= 10 && k + 1 <= 13;
    bool intuition = !strcmp(name, "intuition.md") && (k + 1 == 8 || k + 1 == 9);
    if ((cat_bank || intuition) && v && v->op.rows <= 12 && v->op.cols <= 12) {
      int cells = 0, agree = 0;
      for (int c = 0; c < sc.n; c++) {
        const Cmd *m = &sc.cmds[c];
        if (m->kind != CMD_TEXT || m->font != FONT_MONO || m->x < v->x || m->x > v->x + v->w || m->y < v->y ||
            m->y > v->y + v->h)
          continue;
        cells++;
        int i = (int)((m->y - v->y) / (v->h / v->op.rows)), j = (int)((m->x - v->x) / (v->w / v->op.cols));
        agree += number_agrees(s.trace, &lay, lay.result, i, j, m->text, name, k + 1);
      }
      CHECK(agree == cells, "%s step %d: %d of %s's %d numbers agree with the inspector", name, k + 1, agree,
            v->symbol, cells);
      // the back row's sizes: 14 px for up to 6×6, 12 px for 9×9 (the stage's empty area given to them)
      int n = v->op.rows > v->op.cols ? v->op.rows : v->op.cols;
      float want = n <= 6 ? 14.0f : n <= 9 ? 12.0f : 9.5f;
      CHECK(cells >= v->op.rows * v->op.cols && v->number_px >= want,
            "%s step %d: a number in each of %s's %d cells, at least %.1f px (%d, %.1f px)", name, k + 1,
            v->symbol, v->op.rows * v->op.cols, want, cells, v->number_px);
      printf("%s step %d: %s %dx%d, numbers at %.1f px in cells %.0fx%.0f\n", name, k + 1, v->symbol,
             v->op.rows, v->op.cols, v->number_px, v->w / v->op.cols, v->h / v->op.rows);
      *(cat_bank ? &w->numbered : &w->numbered_9) += cells >= v->op.rows * v->op.cols;
    }
  }
  scene_free(&sc);
  session_close(&s);
}

// The model view of the first softmax step, page by page (ViewOptions.model_layer picks the page).
static void model_view(const char *random, const char *lesson, int want_pages) {
  Session s;
  memset(&s, 0, sizeof s);
  SessionOpts o = {.lesson = lesson};
  o.model.random_spec = random;
  static LessonDiag d;
  memset(&d, 0, sizeof d);
  Err err = {0};
  const char *name = random ? random : lesson;
  bool ok = session_open(&s, &o, &d, &err);
  CHECK(ok, "%s opens: %s", name, err.msg);
  if (!ok) return;
  const Trace *t = s.trace;
  int step = trace_step_find(t, STEP_SOFTMAX, 0), NL = t->cfg.n_layers, NH = t->t[t->layers[0].A].heads;
  Scene sc;
  scene_init(&sc, W, H, 0);
  static int seen[64][64];
  memset(seen, 0, sizeof seen);
  int pages = 1;
  for (int pg = 0; pg < pages; pg++) {
    ViewOptions vo = view_options_default(theme_get(THEME_LIGHT));
    vo.model_view = true, vo.head = -1;
    PageSpec p = {.trace = t, .step = step, .view = &vo, .sentence = s.text, .width = W, .height = H};
    ViewLayout lay;
    if (pg > 0) { // the page after: one past the last layer (and head) of the page before
      render_model_page(&sc, &p, &vo, &lay, pg);
    } else {
      page_render(&sc, &p, &lay);
      pages = lay.grid.pages;
    }
    const ViewGrid *g = &lay.grid;
    CHECK(g->page == pg, "%s: page %d drawn (%d)", name, pg + 1, g->page + 1);
    CHECK(g->side >= 64.0f, "%s page %d: thumbnails at least 64 px (%.0f)", name, pg + 1, g->side);
    for (int r = 0; r < g->layers; r++)
      for (int c = 0; c < g->heads; c++) seen[g->l0 + r][g->h0 + c]++;
    int layer_labels = 0, head_labels = 0;
    bool note = pages == 1;
    char want[64];
    for (int k = 0; k < sc.n; k++) {
      const Cmd *m = &sc.cmds[k];
      if (m->kind != CMD_TEXT) continue;
      for (int r = 0; r < g->layers; r++) {
        snprintf(want, sizeof want, "layer %d", g->l0 + r + 1);
        if (!strcmp(m->text, want) && m->x < g->x && m->size >= 19.95f) layer_labels++;
      }
      for (int c = 0; c < g->heads; c++) {
        char alt[32];
        snprintf(want, sizeof want, "head %d", g->h0 + c + 1);
        snprintf(alt, sizeof alt, "%d", g->h0 + c + 1);
        if ((!strcmp(m->text, want) || !strcmp(m->text, alt)) && m->y < g->y && m->size >= 19.95f)
          head_labels++;
      }
      snprintf(want, sizeof want, "page %d of %d: layers %d–%d of %d", pg + 1, pages, g->l0 + 1,
               g->l0 + g->layers, NL);
      if (!strncmp(m->text, want, strlen(want))) note = true;
    }
    CHECK(layer_labels == g->layers && head_labels == g->heads,
          "%s page %d: every layer and head named at least 20 px (%d of %d layers, %d of %d heads)", name,
          pg + 1, layer_labels, g->layers, head_labels, g->heads);
    CHECK(note, "%s page %d: the page says which layers it shows", name, pg + 1);
  }
  CHECK(pages == want_pages, "%s: %d page(s) at 1280x720 (%d)", name, want_pages, pages);
  int once = 0;
  for (int l = 0; l < NL && l < 64; l++)
    for (int h = 0; h < NH && h < 64; h++) once += seen[l][h] == 1;
  CHECK(once == NL * NH, "%s: every thumbnail on exactly one page (%d of %d)", name, once, NL * NH);
  scene_free(&sc);
  session_close(&s);
}

int main(void) {
  Err err = {0};
  if (!text_init(&err)) {
    fprintf(stderr, "test_backrow: %s\n", err.msg);
    return 1;
  }
  const char *src = getenv("SF_SOURCE_DIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/lessons", src ? src : ".");
  Worst w = {1e9f, 1e9f, "", "", 0, 0, 0, 0, ""};
  DIR *dp = opendir(dir);
  CHECK(dp != NULL, "the lessons folder %s", dir);
  for (struct dirent *de; dp && (de = readdir(dp));) {
    size_t n = strlen(de->d_name);
    if (n < 4 || strcmp(de->d_name + n - 3, ".md") || !strcmp(de->d_name, "README.md")) continue;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    measure(path, de->d_name, &w);
  }
  if (dp) closedir(dp);
  CHECK(w.paged >= 1, "some long narration goes on to a second page (%d)", w.paged);
  model_view("D=48,H=12,F=64,layers=12,seed=1", NULL, 2); // GPT-2 small's shape
  char cat_bank[8192];
  snprintf(cat_bank, sizeof cat_bank, "%s/cat-bank.md", dir);
  model_view(NULL, cat_bank, 1);
  CHECK(w.numbered == 3, "cat-bank's 6x6 steps 11-13 carry their numbers (%d of 3)", w.numbered);
  CHECK(w.numbered_9 == 2, "intuition.md's 9x9 scores and softmax carry their numbers (%d of 2)",
        w.numbered_9);
  printf(
      "1280x720: narration at least %.1f px (%s); title slides at least %.1f px (%s); %d steps on more than "
      "one page; the narration column narrower on %d (%s)\n",
      w.least_body, w.where_body, w.least_title, w.where_title, w.paged, w.narrowed, w.where_narrowed);
  text_shutdown();
  return check_exit("test_backrow");
}
