// test_render.c -- the render layer: colours of cells, PNG and SVG writers, golden images.
//
// Golden images (tests/golden/*.png) are views of reference models drawn WITHOUT text
// (SCENE_NO_TEXT), so they do not depend on the font rasterizer, compared with a small
// tolerance. When a view changes on purpose, regenerate them and look at them:
//     SF_UPDATE_GOLDEN=1 ./build/tests/test_render      (or: SF_UPDATE_GOLDEN=1 ctest -R test_render)
// On a mismatch the actual picture and a diff are written next to the test binary.
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bars.h" // defines: bars_draw, Bar
#include "check.h"
#include "docview.h"
#include "edits.h" // defines: edits_parse_edit, edits_trace
#include "forward.h"
#include "lesson.h"       // defines: lesson_load, lesson_free
#include "model_load.h"   // defines: model_load
#include "model_tokens.h" // defines: model_tokenize
#include "page.h"
#include "pngio.h"
#include <png.h>
#include "svg.h"
#include "utf8.h" // defines: utf8_invalid_at
#include "view.h"
#include "numfmt.h"    // defines: numfmt_reproduces
#include "view_grad.h" // defines: view_grad_stages, view_grad_shown, view_grad_stage

static Trace *load_trace(const char *ref, const char *text, bool causal, Model **m) {
  char path[1024];
  snprintf(path, sizeof path, "%s/ref/%s/model.safetensors", check_test_dir(), ref);
  Err err = {0};
  *m = model_load(path, &err);
  CHECK(*m != NULL, "%s", err.msg);
  if (!*m) exit(1);
  if (causal) (*m)->cfg.causal = true;
  Tokens tok;
  CHECK(tokens_from_text(&tok, &(*m)->vocab, text, 0, &err), "%s", err.msg);
  Trace *t = trace_new(*m, &tok, &err);
  tokens_free(&tok);
  model_forward(t);
  return t;
}

// The pixel at the centre of cell (i, j) of operand k is the colour of its value.
static void test_cell_colours(const Trace *t, int step, int head) {
  Scene s;
  scene_init(&s, 1920, 1080, 0);
  ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
  o.numbers = false;
  o.head = head;
  ViewLayout lay;
  view_render(&s, t, step, &o, 0, 0, 1920, 1080, &lay);
  Canvas c = canvas_new(1920, 1080);
  scene_raster(&s, c, SCENE_NO_TEXT);
  int checked = 0;
  for (int k = 0; k < lay.n_ops; k++) {
    const ViewOperand *v = &lay.ops[k];
    if (v->drows != v->op.rows || v->dcols != v->op.cols || v->op.index < 0) continue; // exact cells only
    float cw = v->w / v->op.cols, ch = v->h / v->op.rows;
    if (cw < 3 || ch < 3) continue;
    for (int i = 0; i < v->op.rows; i += 1 + v->op.rows / 5)
      for (int j = 0; j < v->op.cols; j += 1 + v->op.cols / 5) {
        float val = operand_at(&v->op, i, j);
        if (!isfinite(val)) continue;
        uint32_t want = scale_color(&v->scale, val);
        uint32_t got = canvas_get(c, (int)(v->x + (j + 0.5f) * cw), (int)(v->y + (i + 0.5f) * ch));
        CHECK(abs((int)SF_R(got) - (int)SF_R(want)) <= 1 && abs((int)SF_G(got) - (int)SF_G(want)) <= 1 &&
                  abs((int)SF_B(got) - (int)SF_B(want)) <= 1,
              "step %d operand %d cell (%d,%d) = %g: pixel %08x, colour map %08x", step, k, i, j, val, got,
              want);
        checked++;
      }
  }
  CHECK(checked > 0, "step %d: no cell was checked", step);
  canvas_free(&c);
  scene_free(&s);
}

// Masked cells of the causal scores are hatched (two colours inside the cell), not flat.
static void test_masked_hatched(const Trace *t) {
  int step = trace_step_find(t, STEP_MASK, 0);
  CHECK(step >= 0, "causal trace has a mask step");
  if (step < 0) return;
  Scene s;
  scene_init(&s, 1280, 720, 0);
  ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
  o.numbers = false;
  ViewLayout lay;
  view_render(&s, t, step, &o, 0, 0, 1280, 720, &lay);
  Canvas c = canvas_new(1280, 720);
  scene_raster(&s, c, SCENE_NO_TEXT);
  const ViewOperand *r = &lay.ops[lay.result];
  float cw = r->w / r->op.cols, ch = r->h / r->op.rows;
  // cell (0, L-1) is masked: count distinct colours in it
  int x0 = (int)(r->x + (r->op.cols - 1) * cw + 2), y0 = (int)(r->y + 2);
  uint32_t first = canvas_get(c, x0, y0);
  int different = 0;
  for (int y = y0; y < (int)(r->y + ch - 2); y++)
    for (int x = x0; x < (int)(r->x + r->op.cols * cw - 2); x++) different += canvas_get(c, x, y) != first;
  CHECK(different > 10, "masked cell is hatched (%d pixels differ from the first)", different);
  CHECK(!isfinite(operand_at(&r->op, 0, r->op.cols - 1)), "cell (0, L-1) is -inf");
  canvas_free(&c);
  scene_free(&s);
}

// The value of text chunk `key` in a PNG file, as libpng reads it (tEXt or iTXt), or "".
static void png_text_of(const char *path, const char *key, char *out, size_t cap) {
  out[0] = 0;
  FILE *fp = fopen(path, "rb");
  png_structp p = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = p ? png_create_info_struct(p) : NULL;
  if (fp && p && info && !setjmp(png_jmpbuf(p))) {
    png_init_io(p, fp);
    png_read_info(p, info);
    png_textp t;
    int n = 0;
    png_get_text(p, info, &t, &n);
    for (int i = 0; i < n; i++)
      if (strcmp(t[i].key, key) == 0) snprintf(out, cap, "%s", t[i].text);
  }
  png_destroy_read_struct(&p, &info, NULL);
  if (fp) fclose(fp);
}

static void test_png_roundtrip(void) {
  Canvas c = canvas_new(97, 61); // odd sizes on purpose
  for (int y = 0; y < c.h; y++)
    for (int x = 0; x < c.w; x++) c.px[y * c.stride + x] = SF_RGBA(x * 2, y * 4, (x * y) & 255, 255);
  char path[] = "/tmp/sf-test-XXXXXX.png";
  int fd = mkstemps(path, 4);
  CHECK(fd >= 0, "temp file");
  Err err = {0};
  const char *kv[] = {"Sentence", "Le chat marche près de la banque", "Model", "bank.safetensors"};
  CHECK(pngio_write(c, path, kv, 2, &err), "%s", err.msg);
  char text[256];
  png_text_of(path, "Sentence", text, sizeof text); // UTF-8: an iTXt chunk
  CHECK(strcmp(text, kv[1]) == 0, "the sentence reads back: '%s'", text);
  png_text_of(path, "Model", text, sizeof text); // ASCII: a tEXt chunk
  CHECK(strcmp(text, kv[3]) == 0, "the model reads back: '%s'", text);
  // bytes that are not UTF-8 (a Latin-1 file name) become U+FFFD: iTXt must be UTF-8
  const char *latin1[] = {"Model", "caf\xE9.safetensors"};
  CHECK(pngio_write(c, path, latin1, 1, &err), "%s", err.msg);
  png_text_of(path, "Model", text, sizeof text);
  CHECK(strcmp(text, "caf\xEF\xBF\xBD.safetensors") == 0, "a Latin-1 value reads back as UTF-8: '%s'", text);
  Canvas back;
  CHECK(pngio_read(&back, path, &err), "%s", err.msg);
  CHECK(back.w == c.w && back.h == c.h, "size %dx%d", back.w, back.h);
  int bad = 0;
  for (int i = 0; i < c.w * c.h && back.px; i++) bad += back.px[i] != c.px[i];
  CHECK(bad == 0, "%d pixels differ after PNG write+read", bad);
  // a failed write leaves nothing behind and says why
  CHECK(!pngio_write(c, "/nonexistent-dir/x.png", NULL, 0, &err), "write into a missing folder fails");
  CHECK(strstr(err.msg, "/nonexistent-dir/x.png") != NULL, "message names the file: %s", err.msg);
  remove(path);
  close(fd);
  canvas_free(&back);
  canvas_free(&c);
}

// The SVG of a view has exactly one <rect> per heatmap cell, and is well-formed enough to count.
static void test_svg_cells(const Trace *t, int step) {
  Scene s;
  scene_init(&s, 1280, 720, 0);
  ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
  ViewLayout lay;
  view_render(&s, t, step, &o, 0, 0, 1280, 720, &lay);
  long cells = 0;
  for (int k = 0; k < s.n; k++)
    if (s.cmds[k].kind == CMD_CELLS) cells += (long)s.cmds[k].rows * s.cmds[k].cols;
  long operand_cells = 0;
  for (int k = 0; k < lay.n_ops; k++) operand_cells += (long)lay.ops[k].drows * lay.ops[k].dcols;
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  svg_fprint(&s, f, "title", "desc");
  fclose(f);
  long rects = 0;
  const char *p = buf, *g;
  while ((g = strstr(p, "<g shape-rendering=\"crispEdges\">"))) { // heatmap groups
    const char *end = strstr(g, "</g>");
    for (const char *r = g; r && r < end; r++) {
      r = strstr(r, "<rect ");
      if (!r || r > end) break;
      rects++;
    }
    p = end;
  }
  CHECK(rects == cells, "step %d: %ld <rect> in heatmaps, %ld cells", step, rects, cells);
  CHECK(cells >= operand_cells, "every operand cell is in a heatmap (%ld vs %ld)", cells, operand_cells);
  CHECK(strstr(buf, "<text") != NULL, "text is text");
  CHECK(strstr(buf, "<image") == NULL, "no embedded bitmap");
  CHECK(strncmp(buf, "<?xml", 5) == 0 && strstr(buf, "</svg>") != NULL, "an XML document");
  free(buf);
  // text that is not UTF-8 (a Latin-1 file name in the caption) is written as U+FFFD: the SVG
  // declares UTF-8, and one stray byte would make it unreadable
  f = open_memstream(&buf, &len);
  svg_fprint(&s, f, "caf\xE9 <\xFF\xFE>", "\xEF\xBF\xBF \xED\xA0\x80");
  fclose(f);
  CHECK(utf8_invalid_at(buf) == -1, "the SVG is UTF-8 throughout");
  CHECK(strstr(buf, "<title>caf\xEF\xBF\xBD &lt;\xEF\xBF\xBD\xEF\xBF\xBD&gt;</title>") != NULL,
        "the title: %.200s", strstr(buf, "<title>"));
  CHECK(strstr(buf, "\xEF\xBF\xBF") == NULL, "no U+FFFF (not an XML character)");
  free(buf);
  scene_free(&s);
}

// ---------------------------------------------------------------- golden images

static int golden_failures;

static void golden(const char *name, const Trace *t, int step, int head, int W, int H) {
  Scene s;
  scene_init(&s, (float)W, (float)H, 0);
  ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
  o.head = head;
  o.numbers = false;
  PageSpec p = {
      .trace = t, .step = step, .view = &o, .sentence = "golden", .width = (float)W, .height = (float)H};
  ViewLayout lay;
  page_render(&s, &p, &lay);
  Canvas c = canvas_new(W, H);
  scene_raster(&s, c, SCENE_NO_TEXT);
  char path[1024];
  snprintf(path, sizeof path, "%s/golden/%s.png", check_test_dir(), name);
  Err err = {0};
  if (getenv("SF_UPDATE_GOLDEN")) {
    CHECK(pngio_write(c, path, NULL, 0, &err), "%s", err.msg);
    printf("updated %s\n", path);
  } else {
    Canvas want;
    bool have = pngio_read(&want, path, &err);
    CHECK(have, "%s (make it with SF_UPDATE_GOLDEN=1)", err.msg);
    if (have) {
      long differ = 0;
      int worst = 0;
      Canvas diff = canvas_new(W, H);
      for (int i = 0; i < W * H && want.w == W && want.h == H; i++) {
        uint32_t a = c.px[i], b = want.px[i];
        int d = abs((int)SF_R(a) - (int)SF_R(b)) + abs((int)SF_G(a) - (int)SF_G(b)) +
                abs((int)SF_B(a) - (int)SF_B(b));
        worst = d > worst ? d : worst;
        differ += d > 24;
        diff.px[i] = d > 24 ? SF_RGBA(255, 0, 0, 255) : SF_RGBA(255 - d, 255 - d, 255 - d, 255);
      }
      bool ok = want.w == W && want.h == H && differ <= (long)W * H / 500; // 0.2 % of pixels
      CHECK(ok,
            "golden %s: %ld pixels differ (worst %d); see %s-actual.png and %s-diff.png; update with "
            "SF_UPDATE_GOLDEN=1",
            name, differ, worst, name, name);
      if (!ok) {
        char out[512];
        snprintf(out, sizeof out, "%s-actual.png", name);
        pngio_write(c, out, NULL, 0, &err);
        snprintf(out, sizeof out, "%s-diff.png", name);
        pngio_write(diff, out, NULL, 0, &err);
        golden_failures++;
      }
      canvas_free(&diff);
      canvas_free(&want);
    }
  }
  canvas_free(&c);
  scene_free(&s);
}

// The same stage for two sentences: two panels, and their difference when the lengths agree.
static void test_compare(const Trace *a, Model *m) {
  Err err = {0};
  Tokens tb, tc;
  CHECK(tokens_from_text(&tb, &m->vocab, "The mouse walks by the bank", 0, &err), "%s", err.msg);
  CHECK(tokens_from_text(&tc, &m->vocab, "The cat sleeps by the river bank", 0, &err), "%s", err.msg);
  Trace *b = trace_new(m, &tb, &err), *c = trace_new(m, &tc, &err);
  model_forward(b), model_forward(c);
  int st = trace_step_find(a, STEP_SOFTMAX, 0);
  Scene s;
  scene_init(&s, 1920, 1080, 0);
  ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
  o.head = 1;
  ViewLayout lay;
  view_render_compare(&s, a, b, st, &o, "a", "b", -1, -1, 0, 0, 1920, 1000, &lay);
  CHECK(lay.n_ops == 3, "same length: two panels and their difference (%d)", lay.n_ops);
  if (lay.n_ops == 3) {
    const Operand *d = &lay.ops[2].op;
    int bad = 0;
    for (int i = 0; i < d->rows; i++)
      for (int j = 0; j < d->cols; j++)
        bad += operand_at(d, i, j) != operand_at(&lay.ops[0].op, i, j) - operand_at(&lay.ops[1].op, i, j);
    CHECK(bad == 0, "the difference panel is left minus right (%d cells differ)", bad);
    CHECK(lay.ops[1].op.trace == b && lay.ops[1].op.head == 1,
          "the right panel is the second sentence, head 2");
  }
  // at 1280x720, the scores of two sentences and their difference: no text starts left of the
  // picture (issue 31.3: the left panel's "queries ↓" read "ueries ↓")
  scene_reset(&s, 1280, 720, 0);
  o.head = 0;
  view_render_compare(&s, a, b, trace_step_find(a, STEP_SCORES, 0), &o, "a", "b", -1, -1, 0, 0, 1280, 640,
                      &lay);
  for (int i = 0; i < s.n; i++)
    if (s.cmds[i].kind == CMD_TEXT && !s.cmds[i].turned)
      CHECK(s.cmds[i].x >= -0.5f, "\"%s\" starts at x = %.1f, left of the picture", s.cmds[i].text,
            s.cmds[i].x);
  o.head = 1;
  scene_reset(&s, 1920, 1080, 0);
  view_render_compare(&s, a, c, st, &o, "a", "c", -1, -1, 0, 0, 1920, 1000, &lay);
  CHECK(lay.n_ops == 2, "different lengths: no difference panel (%d)", lay.n_ops);
  o.head = -1;
  view_render_compare(&s, a, c, st, &o, "a", "c", -1, -1, 0, 0, 1920, 1000, &lay);
  CHECK(lay.n_ops == 2 * a->cfg.H, "all heads: every head of both sentences (%d)", lay.n_ops);
  scene_free(&s);
  trace_free(b), trace_free(c);
  tokens_free(&tb), tokens_free(&tc);
}

// Texts of a scene whose baseline is in [y0, y1]: their left and right edges.
static int texts_between(const Scene *s, float y0, float y1, float *l, float *r, const char **txt, int cap) {
  int n = 0;
  for (int i = 0; i < s->n && n < cap; i++) {
    const Cmd *c = &s->cmds[i];
    if (c->kind != CMD_TEXT || c->y < y0 || c->y > y1) continue;
    l[n] = c->x, r[n] = c->x + text_width(c->font, c->size, c->text), txt[n] = c->text, n++;
  }
  return n;
}

// Two files of one model (--compare-model) at the prediction: a third column of differences, whose
// heading stays in its column, left of the colour bar's "values" (it ran under it at 1280x720), and
// whose differences under 0.05 points keep a significant digit (never "-0.0").
// The GPT-2 fixture (tests/ref/hub/gpt2-tiny) with "The cat walks by the", NULL on failure.
static Trace *gpt2_tiny(Model **m) {
  char path[1024];
  snprintf(path, sizeof path, "%s/ref/hub/gpt2-tiny", check_test_dir());
  Err err = {0};
  Tokens tok;
  *m = model_load(path, &err);
  Trace *t =
      *m && model_tokenize(*m, "The cat walks by the", 0, &tok, &err) ? trace_new(*m, &tok, &err) : NULL;
  CHECK(t, "gpt2-tiny: %s", err.msg);
  if (t) tokens_free(&tok), model_forward(t);
  return t;
}

static void test_compare_models(void) {
  Model *m1 = NULL, *m2 = NULL;
  Trace *a = gpt2_tiny(&m1), *b = gpt2_tiny(&m2);
  if (!a || !b) return;
  CHECK(trace_step_find(a, STEP_PREDICT, -1) >= 0, "a prediction step");
  Scene s;
  scene_init(&s, 1280, 720, 0);
  ViewOptions o = view_options_default(theme_get(THEME_DARK));
  ViewLayout lay;
  view_render_compare(&s, a, b, trace_step_find(a, STEP_PREDICT, -1), &o, "a", "b", -1, -1, 0, 0, 1280, 640,
                      &lay);
  float head_r = -1, values_l = -1;
  int zeros = 0;
  for (int i = 0; i < s.n; i++) {
    const Cmd *c = &s.cmds[i];
    if (c->kind != CMD_TEXT) continue;
    if (!strncmp(c->text, "left → right", 12)) head_r = c->x + text_width(c->font, c->size, c->text);
    if (!strcmp(c->text, "values")) values_l = c->x;
    zeros += !strcmp(c->text, "-0.0") || !strcmp(c->text, "+0.0");
  }
  CHECK(head_r > 0 && values_l > 0, "the difference column's heading and the colour bar (%g, %g)", head_r,
        values_l);
  CHECK(head_r <= values_l, "the heading reaches the colour bar's label (%g > %g)", head_r, values_l);
  CHECK(zeros == 0, "%d differences written as 0.0 with a sign", zeros);
  scene_free(&s);
  trace_free(a), trace_free(b);
  model_free(m1), model_free(m2);
}

// A difference too small for two decimals (a what-if moving S₁[cat, walks] by 0.002, as two files
// of one model differ): its colour bar's ends keep a significant digit ("0.002"), never "0.00" or
// "-0.00" for a value that is not 0 (--compare-model's F16 against Q8_0 wrote "±0.00").
static void test_small_difference_bar(const Trace *base) {
  const TraceTensor *x = trace_find(base, "l0.S");
  CHECK(x != NULL, "l0.S in the cat/bank trace");
  if (!x) return;
  char spec[64];
  snprintf(spec, sizeof spec, "S1[cat, walks]=%.6f", trace_at(x, 0, 1, 2) + 0.002f);
  TraceEdits e = {0};
  TraceEdit ed;
  Err err = {0};
  bool ok = edits_parse_edit(base, spec, &ed, &err) && edits_add(&e, &ed, &err);
  CHECK(ok, "%s: %s", spec, err.msg);
  Trace *t = ok ? edits_trace(base, &e, &err) : NULL;
  CHECK(t != NULL, "edits_trace: %s", err.msg);
  if (t) {
    Scene s;
    scene_init(&s, 1280, 720, 0);
    ViewOptions o = view_options_default(theme_get(THEME_DARK));
    o.head = 0;
    ViewLayout lay;
    view_render_compare(&s, t, base, trace_step_find(base, STEP_SCORES, 0), &o, "edited", "own", -1, -1, 0, 0,
                        1280, 640, &lay);
    int zeros = 0, ends = 0;
    for (int i = 0; i < s.n; i++) {
      const Cmd *c = &s.cmds[i];
      if (c->kind != CMD_TEXT) continue;
      zeros += !strcmp(c->text, "-0.00");
      ends += !strcmp(c->text, "0.002") || !strcmp(c->text, "-0.002");
    }
    CHECK(zeros == 0, "%d colour-bar ends written -0.00", zeros);
    CHECK(ends == 2, "the difference's colour bar ends at -0.002 and 0.002 (%d of 2 found)", ends);
    scene_free(&s);
    trace_free(t);
  }
  edits_free(&e);
}

// The page header: the stage label and the lesson's progress never overlap, nor reach the
// window's controls (header_reserve), however long the lesson title and narrow the page.
static void test_header_fits(const Trace *t) {
  int st = trace_step_find(t, STEP_SOFTMAX, 0);
  for (float W = 700; W <= 1920; W += 245) {
    Scene s;
    scene_init(&s, W, 720, 0);
    ViewOptions o = view_options_default(theme_get(THEME_DARK));
    o.text_scale = 1.3f;
    PageSpec p = {.trace = t,
                  .step = st,
                  .view = &o,
                  .sentence = "x",
                  .lesson = "A lesson with a rather long title about attention heads",
                  .lesson_step = 12,
                  .lesson_steps = 25,
                  .header_reserve = W * 0.3f,
                  .width = W,
                  .height = 720};
    ViewLayout lay;
    page_render(&s, &p, &lay);
    float l[64], r[64];
    const char *txt[64];
    int n = texts_between(&s, -1e9f, 52 * 720 / 1080.0f * 1.3f, l, r, txt, 64);
    CHECK(n >= 1, "a stage label in the header");
    for (int i = 0; i < n; i++) {
      CHECK(r[i] <= W - p.header_reserve + 1, "W=%g: \"%s\" reaches the controls (%g > %g)", W, txt[i], r[i],
            W - p.header_reserve);
      for (int j = i + 1; j < n; j++)
        CHECK(r[i] <= l[j] || r[j] <= l[i], "W=%g: \"%s\" overlaps \"%s\"", W, txt[i], txt[j]);
    }
    scene_free(&s);
  }
}

// The footer line: its two parts never overlap nor reach the space kept at its right end (the web
// page's "Open a file…" button, footer_right), on a stage page and on the title slide, with a long
// sentence and a narrow page (the web page's button covered "made from seed" before).
static void test_footer_fits(const Trace *t) {
  for (int title = 0; title < 2; title++)
    for (float W = 700; W <= 1920; W += 245) {
      Scene s;
      scene_init(&s, W, 720, 0);
      ViewOptions o = view_options_default(theme_get(THEME_DARK));
      PageSpec p = {.trace = t,
                    .step = title ? -1 : trace_step_find(t, STEP_SOFTMAX, 0),
                    .view = &o,
                    .sentence = "the cat walks by the bank of the river where the fish swim all day long",
                    .lesson = "A lesson",
                    .title = title ? "A title slide" : NULL,
                    .footer_right = 112,
                    .width = W,
                    .height = 720};
      ViewLayout lay;
      page_render(&s, &p, &lay);
      float l[64], r[64];
      const char *txt[64];
      int n = texts_between(&s, 720 - 20, 1e9f, l, r, txt, 64);
      CHECK(n >= 1, "W=%g: a footer line", W);
      for (int i = 0; i < n; i++) {
        CHECK(r[i] <= W - p.footer_right + 1, "W=%g title=%d: \"%s\" reaches the button (%g > %g)", W, title,
              txt[i], r[i], W - p.footer_right);
        for (int j = i + 1; j < n; j++)
          CHECK(r[i] <= l[j] || r[j] <= l[i], "W=%g: \"%s\" overlaps \"%s\"", W, txt[i], txt[j]);
      }
      scene_free(&s);
    }
}

// The Q, K, V step's title names the projection shown (P in the window, show= in a lesson).
static void test_qkv_title(const Trace *t) {
  int st = trace_step_find(t, STEP_QKV, 0);
  const char *want[] = {"Queries, keys and values", "Queries", "Keys", "Values"};
  for (int part = 0; part < 4; part++) {
    Scene s;
    scene_init(&s, 1280, 720, 0);
    ViewOptions o = view_options_default(theme_get(THEME_DARK));
    o.part = part;
    PageSpec p = {.trace = t, .step = st, .view = &o, .sentence = "x", .width = 1280, .height = 720};
    ViewLayout lay;
    page_render(&s, &p, &lay);
    bool found = false;
    for (int i = 0; i < s.n; i++)
      if (s.cmds[i].kind == CMD_TEXT && !strcmp(s.cmds[i].text, want[part])) found = true;
    CHECK(found, "part %d: the title is \"%s\"", part, want[part]);
    scene_free(&s);
  }
}

// A step title's \$ is a dollar sign in the text; its $...$ is typeset.
static void test_title_dollar(const Trace *t) {
  Scene s;
  scene_init(&s, 1280, 720, 0);
  ViewOptions o = view_options_default(theme_get(THEME_DARK));
  PageSpec p = {.trace = t,
                .step = 1,
                .view = &o,
                .sentence = "x",
                .title = "Cost \\$5 for $x^2$",
                .width = 1280,
                .height = 720};
  ViewLayout lay;
  page_render(&s, &p, &lay);
  bool text = false, math = false;
  for (int i = 0; i < s.n; i++)
    if (s.cmds[i].kind == CMD_TEXT) {
      text |= !strcmp(s.cmds[i].text, "Cost $5 for ");
      math |= !strcmp(s.cmds[i].text, "2"); // the superscript, typeset apart
    }
  CHECK(text && math, "the title's text says \"Cost $5 for \" (%d) and its formula is typeset (%d)", text,
        math);
  scene_free(&s);
}

// A broken lesson step (lesson_break_steps): its message where its picture would be, inside the page.
static void test_broken_step(const Trace *t) {
  Scene s;
  scene_init(&s, 1280, 720, 0);
  ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
  PageSpec p = {.trace = t,
                .step = -1,
                .view = &o,
                .sentence = "x",
                .title = "From scores to attention",
                .broken = "typo.md:121: unknown stage \"sofmax\" (did you mean \"softmax\"?)",
                .width = 1280,
                .height = 720};
  ViewLayout lay;
  page_render(&s, &p, &lay);
  bool where = false, fix = false, said = false, inside = true;
  for (int i = 0; i < s.n; i++)
    if (s.cmds[i].kind == CMD_TEXT) {
      where |= strstr(s.cmds[i].text, "typo.md:121:") != NULL;
      fix |= strstr(s.cmds[i].text, "\"softmax\"?)") != NULL;
      said |= strstr(s.cmds[i].text, "This step has a mistake") != NULL;
      inside &= s.cmds[i].x + text_width(s.cmds[i].font, s.cmds[i].size, s.cmds[i].text) <= 1280;
    }
  CHECK(where && fix && said && inside,
        "the broken step's page says FILE:LINE (%d), the fix (%d), that it has a "
        "mistake (%d), inside the page (%d)",
        where, fix, said, inside);
  scene_free(&s);
}

// A narration written for the lesson's sentence, shown on another one (a sentence typed in the
// window): the page says so above it, and not when the sentence is the lesson's (issue 31.8).
static void test_written_for(const Trace *t) {
  Scene s;
  scene_init(&s, 1280, 720, 0);
  ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
  Doc d = {0};
  DocBlock *b = doc_add_block(&d, BLOCK_PARA, 0);
  doc_add_spann(&d, b, SPAN_TEXT, 0, "Here L = 6.", -1, 1);
  bool said[2] = {false, false};
  for (int v = 0; v < 2; v++) {
    PageSpec p = {.trace = t,
                  .view = &o,
                  .sentence = "The cat walks by the river bank",
                  .narration = &d,
                  .show_text = true,
                  .written_for = v ? "The cat walks by the bank" : NULL,
                  .width = 1280,
                  .height = 720};
    p.step = trace_step_find(t, STEP_SOFTMAX, 0);
    ViewLayout lay;
    page_render(&s, &p, &lay);
    for (int i = 0; i < s.n; i++)
      if (s.cmds[i].kind == CMD_TEXT)
        said[v] |= strstr(s.cmds[i].text, "“The cat walks by the bank”:") != NULL;
  }
  CHECK(!said[0] && said[1], "the narration says which sentence it was written for (%d), only then (%d)",
        said[1], !said[0]);
  doc_free(&d);
  scene_free(&s);
}

// The footer of a model file with a seed in its metadata says what the seed made, and a model by
// hand is not described twice (issue 31.9: "seed 1" on a trained model; "by hand, D=3 (D=3, ...)").
static void test_footer_seed(const Trace *t) {
  char buf[512];
  Model *m = (Model *)t->model;
  char source[sizeof m->source];
  memcpy(source, m->source, sizeof source);
  bool had = m->has_seed;
  m->has_seed = true;
  page_footer(t, "x", buf, sizeof buf);
  CHECK(strstr(buf, " · made from seed ") && !strstr(buf, " · seed "), "a file's seed: %s", buf);
  snprintf(m->source, sizeof m->source, "random weights, seed 3");
  page_footer(t, "x", buf, sizeof buf);
  CHECK(!strstr(buf, "made from seed"), "a random model's seed is in its name only: %s", buf);
  memcpy(m->source, source, sizeof source);
  m->has_seed = had;
}

// A title slide's long title wraps inside the page (issue 31.9: intuition.md's ran off the edge).
static void test_long_title(const Trace *t) {
  Scene s;
  scene_init(&s, 1280, 720, 0);
  ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
  PageSpec p = {.trace = t,
                .step = -1,
                .view = &o,
                .sentence = "x",
                .title = "The intuition of attention, with numbers you can check by hand",
                .width = 1280,
                .height = 720};
  ViewLayout lay;
  page_render(&s, &p, &lay);
  int lines = 0;
  bool inside = true;
  for (int i = 0; i < s.n; i++)
    if (s.cmds[i].kind == CMD_TEXT && s.cmds[i].font == FONT_SANS_BOLD) {
      lines += strstr(s.cmds[i].text, "intuition") || strstr(s.cmds[i].text, "hand");
      inside &= s.cmds[i].x + text_width(s.cmds[i].font, s.cmds[i].size, s.cmds[i].text) <= 1280;
    }
  CHECK(inside && lines == 2, "the long title on two lines (%d) inside the page (%d)", lines, inside);
  scene_free(&s);
}

// A title slide's narration pages fill their room (issue 31's remarks): intuition.md's title slide
// put its table on a page of its own although page 1 had room for it -- a page's last block needs
// no room for the space after it.
static void test_title_table_page(const Trace *t) {
  char path[1024];
  snprintf(path, sizeof path, "%s/../lessons/intuition.md", check_test_dir());
  Lesson l;
  LessonDiag d = {0};
  CHECK(lesson_load(&l, path, &d), "intuition.md does not load");
  if (l.n_steps < 1) return lesson_free(&l);
  ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
  PageSpec p = {.trace = t,
                .step = -1,
                .view = &o,
                .sentence = "x",
                .title = l.steps[0].title,
                .narration = &l.steps[0].narration,
                .show_text = true,
                .width = 1280,
                .height = 720};
  Scene s;
  scene_init(&s, 1280, 720, 0);
  ViewLayout lay;
  page_render(&s, &p, &lay);
  bool before = false, table = false;
  for (int i = 0; i < s.n; i++)
    if (s.cmds[i].kind == CMD_TEXT) {
      before |= strstr(s.cmds[i].text, "Before") != NULL;
      table |= !strcmp(s.cmds[i].text, "adjective");
    }
  CHECK(before && table && lay.text_pages == 2,
        "intuition.md's title slide: its first paragraph (%d) and its table (%d) on page 1, of %d pages (2 "
        "wanted)",
        before, table, lay.text_pages);
  scene_free(&s);
  lesson_free(&l);
}

// The page's title follows the trace: with the scale taken out (the training view's √d_k
// experiment, Trace.no_scale) the scores are no "Scaled scores" (issue 31.8).
static void test_unscaled_title(Trace *t) {
  Scene s;
  scene_init(&s, 1280, 720, 0);
  ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
  PageSpec p = {.trace = t, .view = &o, .sentence = "x", .width = 1280, .height = 720};
  p.step = trace_step_find(t, STEP_SCORES, 0);
  ViewLayout lay;
  bool before = t->no_scale, scaled[2] = {false, false}, without[2] = {false, false};
  for (int v = 0; v < 2; v++) {
    t->no_scale = v == 1;
    page_render(&s, &p, &lay);
    for (int i = 0; i < s.n; i++)
      if (s.cmds[i].kind == CMD_TEXT) {
        scaled[v] |= strstr(s.cmds[i].text, "Scaled scores") != NULL;
        without[v] |= strstr(s.cmds[i].text, "without 1/√dₖ") != NULL;
      }
  }
  t->no_scale = before;
  CHECK(scaled[0] && !without[0] && !scaled[1] && without[1],
        "the scores' title: \"Scaled scores\" with the scale (%d %d), \"without 1/√dₖ\" without it (%d %d)",
        scaled[0], without[0], scaled[1], without[1]);
  scene_free(&s);
}

// Display math wider than the narration column is set smaller, inside the column.
static void test_display_math_fits(void) {
  Doc d = {0};
  DocBlock *b = doc_add_block(&d, BLOCK_MATH, 1);
  const char *m =
      "M = \\begin{pmatrix} 0 & -\\infty & -\\infty & -\\infty & -\\infty \\\\ 0 & 0 & -\\infty & "
      "-\\infty & -\\infty \\end{pmatrix} = "
      "\\operatorname{softmax}\\left(\\frac{QK^\\top}{\\sqrt{d_k}}\\right)V";
  CHECK(b && doc_add_spann(&d, b, SPAN_MATH, 0, m, (int)strlen(m), 1), "a display formula");
  Scene s;
  scene_init(&s, 800, 600, 0);
  float x = 20, w = 240;
  docview_render(&s, &d, theme_get(THEME_DARK), 21, x, 10, w, 500);
  float right = 0;
  for (int i = 0; i < s.n; i++) {
    const Cmd *c = &s.cmds[i];
    float r = c->kind == CMD_TEXT   ? c->x + text_width(c->font, c->size, c->text)
              : c->kind == CMD_LINE ? fmaxf(c->x, c->x2)
                                    : c->x + c->w;
    right = fmaxf(right, r);
  }
  CHECK(s.n > 0 && right <= x + w + 1, "the formula ends at %g, the column at %g", right, x + w);
  scene_free(&s);
  doc_free(&d);
}

// The stage indicator counts the stages of the model's first layer 1, 2, 3 … without a gap, and
// its total is how many there are: an encoder has no mask stage, a causal model has one, and a
// model with a prediction head one more.
static void test_stage_numbers(const Trace *t, int want_total) {
  int expect = 0;
  for (int st = 0; st < t->n_steps; st++) {
    const TraceStep *s = &t->steps[st];
    if (s->layer > 0 || s->kind == STEP_PRENORM) continue;
    char buf[200], want[40];
    page_stage_label(t, st, 0, buf, sizeof buf);
    snprintf(want, sizeof want, "Stage %d/%d · %s", ++expect, want_total, s->name);
    CHECK(!strncmp(buf, want, strlen(want)), "step %d: \"%s\", expected \"%s…\"", st, buf, want);
  }
  CHECK(expect == want_total, "%d stages counted, the label says %d", expect, want_total);
}

// Scales whose range overflows a float (±3e38, a model that overflows) still spread the colours.
static void test_huge_scale(void) {
  ColorScale sc = scale_for(CMAP_VIRIDIS, -3e38f, 3e38f);
  CHECK(fabsf(scale_t(&sc, 0) - 0.5f) < 1e-6f && scale_t(&sc, 3e38f) == 1 && scale_t(&sc, -3e38f) == 0,
        "a ±3e38 scale: 0 at %g, the ends at %g and %g", scale_t(&sc, 0), scale_t(&sc, -3e38f),
        scale_t(&sc, 3e38f));
}

// The walk backwards (issue 21 item 4): every activation with a gradient buffer of its own is a page,
// the logits first; the gradient each page shows is the TraceGrad's (the same numbers as a second,
// independent backward run), head by head; every page draws with its formula.
static void test_grad_stages(const char *ref, const char *text) {
  Model *m;
  Trace *t = load_trace(ref, text, false, &m);
  Err err = {0};
  TraceGrad *g = backward_new(t, NULL, 0, &err), *g2 = backward_new(t, NULL, 0, &err);
  CHECK(g && g2, "%s", err.msg);
  if (!g || !g2) exit(1);
  backward_run(g), backward_run(g2);
  int ks[512], n = view_grad_stages(t, g, ks, 512);
  CHECK(n > 10 && ks[0] == t->logits, "%s: %d stages, the first %d (logits %d)", ref, n, n ? ks[0] : -1,
        t->logits);
  for (int k = 0; k < t->n; k++) {
    if (t->t[k].is_weight || !g->d[k] || !g->d_own[k]) continue;
    bool listed = false;
    for (int p = 0; p < n; p++) listed |= ks[p] == k;
    CHECK(listed, "%s: %s has a gradient of its own but no page", ref, t->t[k].name);
  }
  Scene s;
  scene_init(&s, 1280, 720, 0);
  for (int p = 0; p < n; p++) {
    const TraceTensor *x = &t->t[ks[p]];
    long rc = (long)x->rows * x->cols;
    for (int h = 0; h < (x->per_head ? x->heads : 1); h++) {
      const float *d = view_grad_shown(t, g, ks[p], h), *r = g2->d[ks[p]] + h * rc;
      long bad = 0;
      for (long q = 0; q < rc; q++) bad += memcmp(&d[q], &r[q], sizeof *d) != 0;
      CHECK(bad == 0, "%s: page %d (%s head %d) shows %ld numbers that are not the gradient's", ref, p + 1,
            x->name, h + 1, bad);
    }
    CHECK(view_grad_formula(t, ks[p])[0] != 0, "%s: %s has no formula", ref, x->name);
    // issue 31: every worked cell the pages can print gives its printed result from its printed digits
    for (int h = 0; h < (x->per_head ? x->heads : 1); h++)
      for (int i = 0; i < x->rows; i++)
        for (int j = 0; j < x->cols; j += 1 + x->cols / 16) {
          scene_reset(&s, 1280, 720, 0);
          const char *eq = view_grad_worked(&s, t, g, ks[p], h, i, j);
          CHECK(!eq || numfmt_reproduces(eq), "%s: %s head %d [%d, %d]: not reproducible: %s", ref, x->name,
                h + 1, i + 1, j + 1, eq);
        }
    scene_reset(&s, 1280, 720, 0);
    view_grad_stage(&s, t, g, ks[p], 1, p + 1, n, "footer", theme_get(THEME_LIGHT), 1280, 720, NULL);
    CHECK(s.n > 5, "%s: page %d (%s) draws nothing", ref, p + 1, x->name);
    // issue 31's remarks: "the largest gradient: [the, 6]" names a column the picture numbers -- a
    // dimension axis has no words, so the framed column's number is drawn over both matrices
    TraceAxis ca = x->col_axis;
    if (ca != AXIS_TOKEN && ca != AXIS_TGT_TOKEN && ca != AXIS_VOCAB && ca != AXIS_TGT_VOCAB && x->cols > 1) {
      const float *d = view_grad_shown(t, g, ks[p], 1);
      int bj = 0;
      for (long q = 0; q < rc; q++)
        if (fabsf(d[q]) > fabsf(d[bj])) bj = (int)q;
      char want[16];
      snprintf(want, sizeof want, "%d", bj % x->cols + 1);
      int seen = 0;
      for (int c = 0; c < s.n; c++)
        seen +=
            s.cmds[c].kind == CMD_TEXT && s.cmds[c].font == FONT_SANS_BOLD && !strcmp(s.cmds[c].text, want);
      CHECK(seen == 2,
            "%s: page %d (%s): the largest gradient's column %s is numbered over %d matrices, not 2", ref,
            p + 1, x->name, want, seen);
    }
  }
  for (int h = 0; h < t->cfg.H; h++) // the softmax page's worked cell, every cell of every head
    for (int i = 0; i < t->L; i++)
      for (int j = 0; j < t->L; j++) {
        scene_reset(&s, 1280, 720, 0);
        const char *eq = view_grad_softmax_worked(&s, t, g, 0, h, i, j);
        CHECK(numfmt_reproduces(eq), "%s: softmax page head %d [%d, %d]: not reproducible: %s", ref, h + 1,
              i + 1, j + 1, eq);
      }
  scene_free(&s);
  backward_free(g2);
  backward_free(g);
  trace_free(t);
  model_free(m);
}

// A text command of the scene equal to t, else NULL.
static const Cmd *text_cmd(const Scene *s, const char *t) {
  for (int i = 0; i < s->n; i++)
    if (s->cmds[i].kind == CMD_TEXT && !strcmp(s->cmds[i].text, t)) return &s->cmds[i];
  return NULL;
}

// The tokens stage of t at 1280x720, light theme, into s (scene_free it).
static void render_tokens(Scene *s, const Trace *t) {
  scene_init(s, 1280, 720, 0);
  ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
  PageSpec p = {.trace = t,
                .step = trace_step_find(t, STEP_TOKENS, -1),
                .view = &o,
                .sentence = "x",
                .width = 1280,
                .height = 720};
  ViewLayout lay;
  page_render(s, &p, &lay);
}

// The tokens stage (view_tokens.c): the caption says how this model tokenizes; a vocabulary that
// fits is listed whole, as large as the page allows (at least 0.55 of the tokens' size), inside the
// page above the footer; one that does not (20 000 words) lists the rows of the text's tokens with
// their neighbours and "…".
static void test_tokens_stage(const Trace *t, const char *caption, const char *first, const char *last,
                              const char *absent) {
  Scene s;
  render_tokens(&s, t);
  const Cmd *cap = text_cmd(&s, caption);
  CHECK(cap != NULL, "tokens: the caption \"%s\"", caption);
  const Cmd *a = text_cmd(&s, first), *b = text_cmd(&s, last);
  CHECK(a && b, "tokens: the vocabulary shows \"%s\" and \"%s\"", first, last);
  CHECK(!absent || !text_cmd(&s, absent), "tokens: \"%s\" is not listed", absent);
  float fs = cap ? cap->size / 0.8f : 0; // the caption is 0.8 of the tokens' size
  if (a && b) {
    CHECK(a->size >= 0.55f * fs - 0.01f && b->size == a->size, "tokens: the vocabulary at %g (tokens %g)",
          a->size, fs);
    CHECK(b->y < 720 - 40 * 720 / 1080.0f && b->x + text_width(b->font, b->size, b->text) <= 1280,
          "tokens: \"%s\" is inside the page (%g, %g)", last, b->x, b->y);
  }
  scene_free(&s);
}

// Stage step of t at 1280x720 (light, no numbers) into s and its pixels into the returned canvas
// (canvas_free and scene_free them).
static Canvas render_pixels(Scene *s, const Trace *t, int step, ViewLayout *lay) {
  scene_init(s, 1280, 720, 0);
  ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
  o.numbers = false;
  view_render(s, t, step, &o, 0, 0, 1280, 720, lay);
  Canvas c = canvas_new(1280, 720);
  scene_raster(s, c, SCENE_NO_TEXT);
  return c;
}

// The one-hot O of a 20 000-word vocabulary at 1280x720 is drawn by block maxima: the pixel over
// the column of the second token (id `id`) in its row is the colour of 1, not of 1/(columns a pixel
// covers) as a mean would make it; and its caption says so.
static void test_onehot_max(const Trace *t, int id) {
  Scene s;
  ViewLayout lay;
  Canvas c = render_pixels(&s, t, trace_step_find(t, STEP_ONEHOT, -1), &lay);
  CHECK(lay.n_ops == 1 && lay.ops[0].dcols < lay.ops[0].op.cols, "one-hot: one operand, averaged (%d)",
        lay.n_ops);
  if (lay.n_ops == 1) {
    const ViewOperand *v = &lay.ops[0];
    int j = (int)((long)id * v->dcols / v->op.cols); // the block that holds column id
    uint32_t got =
        canvas_get(c, (int)(v->x + (j + 0.5f) * v->w / v->dcols), (int)(v->y + 1.5f * v->h / v->drows));
    uint32_t want = scale_color(&v->scale, 1.0f);
    CHECK(abs((int)SF_R(got) - (int)SF_R(want)) <= 1 && abs((int)SF_G(got) - (int)SF_G(want)) <= 1,
          "one-hot: the 1 of row 2 shows: pixel %08x, the colour of 1 %08x", got, want);
    CHECK(text_cmd(&s, "area maximum: every 1 shows") != NULL, "one-hot: the caption names the maximum");
  }
  canvas_free(&c);
  scene_free(&s);
}

// The prediction of the GPT-2 fixture (293 tokens, L = 5) at 1280x720 is narrower than its
// columns: each pixel block shows its largest probability, so the last row's most likely token
// keeps its colour (a mean with its neighbours would not), and the caption says so.
static void test_pred_max(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s/ref/hub/gpt2-tiny", check_test_dir());
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m, "gpt2-tiny: %s", err.msg);
  if (!m) return;
  Tokens tok;
  Trace *t = model_tokenize(m, "The cat walks by the", 0, &tok, &err) ? trace_new(m, &tok, &err) : NULL;
  CHECK(t, "gpt2-tiny: %s", err.msg);
  if (t) {
    model_forward(t);
    Scene s;
    ViewLayout lay;
    Canvas c = render_pixels(&s, t, trace_step_find(t, STEP_PREDICT, -1), &lay);
    const ViewOperand *p = NULL;
    for (int k = 0; k < lay.n_ops; k++)
      if (lay.ops[k].op.index == t->pred) p = &lay.ops[k];
    CHECK(p && p->dcols < p->op.cols, "gpt2-tiny: the prediction is drawn by blocks");
    if (p && p->dcols < p->op.cols) {
      int i = p->op.rows - 1, best = 0;
      for (int j = 1; j < p->op.cols; j++)
        if (operand_at(&p->op, i, j) > operand_at(&p->op, i, best)) best = j;
      int b = 0, c0 = 0, c1 = 0; // the block of columns [c0, c1) that holds best, as draw_cells cuts them
      for (; b < p->dcols; b++) {
        c0 = (int)((long)b * p->op.cols / p->dcols), c1 = (int)((long)(b + 1) * p->op.cols / p->dcols);
        if (best >= c0 && best < c1) break;
      }
      uint32_t got = canvas_get(c, (int)(p->x + (b + 0.5f) * p->w / p->dcols),
                                (int)(p->y + (i + 0.5f) * p->h / p->drows));
      uint32_t want = scale_color(&p->scale, operand_at(&p->op, i, best)),
               mean = scale_color(&p->scale, operand_block_mean(&p->op, i, i + 1, c0, c1));
      CHECK(got == want && want != mean,
            "gpt2-tiny: the best token's block %08x, its p %08x (the mean's %08x)", got, want, mean);
      CHECK(text_cmd(&s, "area maximum: every peak shows") != NULL,
            "gpt2-tiny: the caption names the maximum");
    }
    canvas_free(&c);
    scene_free(&s);
    // its tokens stage on a small page: the BPE caption (on two lines) and every text inside it
    scene_init(&s, 640, 480, 0);
    ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
    view_render(&s, t, trace_step_find(t, STEP_TOKENS, -1), &o, 0, 0, 640, 480, &lay);
    int outside = 0, bpe = 0;
    for (int i = 0; i < s.n; i++) {
      const Cmd *x = &s.cmds[i];
      if (x->kind != CMD_TEXT || x->turned) continue;
      bool out = x->x < 0 || x->x + text_width(x->font, x->size, x->text) > 640.5f;
      if (out)
        printf("  outside the 640-pixel page: \"%s\" at %g, %g wide\n", x->text, x->x,
               text_width(x->font, x->size, x->text));
      outside += out;
      bpe += strstr(x->text, "GPT-2's byte-level BPE") != NULL;
    }
    CHECK(outside == 0 && bpe == 1, "gpt2-tiny at 640x480: %d texts outside the page, BPE caption %d",
          outside, bpe);
    scene_free(&s);
    trace_free(t);
    tokens_free(&tok);
  }
  model_free(m);
}

static void test_tokens_stages(const Trace *cat) {
  test_tokens_stage(cat,
                    "the sentence, lowercased and split into words; each word gets its row in the vocabulary",
                    "0 <unk>", "10 mouse", NULL);
  // 20 000 words: w1 … w19999 after <unk>
  size_t cap = 20000 * 8;
  char *lines = malloc(cap);
  int k = snprintf(lines, cap, "<unk>");
  for (int i = 1; i < 20000; i++) k += snprintf(lines + k, cap - (size_t)k, "\nw%d", i);
  Vocab v;
  Err err = {0};
  CHECK(vocab_from_lines(&v, lines, &err), "%s", err.msg);
  free(lines);
  ModelConfig c = model_config_default();
  c.D = 8, c.H = 2, c.F = 16, c.n_layers = 1;
  Model *m = model_random(&c, &v, 1, &err);
  CHECK(m, "%s", err.msg);
  Tokens tok;
  CHECK(m && tokens_from_text(&tok, &m->vocab, "w5 w12000 w19999", 0, &err), "%s", err.msg);
  Trace *t = m ? trace_new(m, &tok, &err) : NULL;
  if (t) {
    model_forward(t);
    test_tokens_stage(
        t, "the sentence, lowercased and split into words; each word gets its row in the vocabulary",
        "11998 w11998", "19999 w19999", "100 w100");
    Scene s;
    render_tokens(&s, t);
    int gaps = 0;
    for (int i = 0; i < s.n; i++) gaps += s.cmds[i].kind == CMD_TEXT && !strcmp(s.cmds[i].text, "…");
    CHECK(gaps == 3, "tokens: 20 000 words: \"…\" before w3, after w7 and before w11998 (%d)", gaps);
    CHECK(text_cmd(&s, "3 w3") && text_cmd(&s, "7 w7") && !text_cmd(&s, "8 w8") &&
              text_cmd(&s, "12002 w12002"),
          "tokens: 20 000 words: each token's row with two neighbours on each side");
    scene_free(&s);
    test_onehot_max(t, 12000);
    trace_free(t);
  }
  tokens_free(&tok);
  model_free(m);
  vocab_free(&v);
}

// The bars' percentages: one decimal from 0.1 %, two significant digits below it, "< 0.001 %" under
// that (a flat prediction over 50 257 tokens must not read "0.0 %" on every bar).
static void test_bar_percents(void) {
  Scene s;
  scene_init(&s, 1280, 720, 0);
  Bar b[6] = {{"a", 0.62f, true},      {"b", 0.001f, false}, {"c", 0.00018f, false},
              {"d", 0.000021f, false}, {"e", 4e-6f, false},  {"f", 0.0f, false}};
  bars_draw(&s, theme_get(THEME_LIGHT), b, 6, 0, 0, 1280, 600, 40);
  const char *want[] = {"62.0 %", "0.1 %", "0.018 %", "0.0021 %", "< 0.001 %", "0.0 %"};
  for (int i = 0; i < 6; i++)
    CHECK(text_cmd(&s, want[i]) != NULL, "bars: p = %g reads \"%s\"", b[i].p, want[i]);
  scene_free(&s);
}

// The lens is kept between redraws (view_inside.c's cache): each pass drawn shows its own lens, the
// likeliest word of every cell being the one inside_lens computes for that pass (not the last
// pass's: two sentences of the same words in another order have the same labels and lengths).
static void check_lens_words(const Trace *t, const char *what) {
  Scene s;
  scene_init(&s, 1280, 720, 0);
  ViewOptions o = view_options_default(theme_get(THEME_DARK));
  o.inside = INSIDE_LENS;
  ViewLayout lay;
  view_render(&s, t, trace_step_find(t, STEP_PREDICT, -1), &o, 0, 0, 1280, 720, &lay);
  float *p = malloc(sizeof(float) * (size_t)inside_lens_floats(t));
  Err err = {0};
  CHECK(p && inside_lens(t, p, &err), "%s: %s", what, err.msg);
  int N = t->cfg.n_layers, L = t->L, V = t->cfg.V, k = 0, found = 0;
  for (int l = N - 1; p && l >= 0; l--) // drawn from the top row (the last layer) down
    for (int i = 0; i < L; i++) {
      const float *row = p + ((size_t)l * L + i) * V;
      int best = 0;
      for (int v = 1; v < V; v++)
        if (row[v] > row[best]) best = v;
      for (; k < s.n; k++)
        if (s.cmds[k].kind == CMD_TEXT && !strcmp(s.cmds[k].text, t->model->vocab.words[best])) break;
      found += k < s.n;
    }
  CHECK(found == N * L, "%s: %d of the lens's %d cells show the pass's own likeliest word", what, found,
        N * L);
  free(p);
  scene_free(&s);
}

// The saliency is kept for the last pass too: the percentages drawn for a pass are its own (two
// sentences of the same words in another order do not share them), and the same again when redrawn.
static void saliency_percents(const Trace *t, char *out, size_t cap) {
  Scene s;
  scene_init(&s, 1280, 720, 0);
  ViewOptions o = view_options_default(theme_get(THEME_DARK));
  o.inside = INSIDE_SALIENCY;
  ViewLayout lay;
  view_render(&s, t, trace_step_find(t, STEP_PREDICT, -1), &o, 0, 0, 1280, 720, &lay);
  out[0] = 0;
  for (int k = 0; k < s.n; k++)
    if (s.cmds[k].kind == CMD_TEXT && strchr(s.cmds[k].text, '%') && strlen(s.cmds[k].text) < 12 &&
        strlen(out) + strlen(s.cmds[k].text) + 2 < cap)
      strcat(out, s.cmds[k].text), strcat(out, "|");
  scene_free(&s);
}

static Trace *bank_trace(const char *text, Model **m) {
  char path[1024];
  snprintf(path, sizeof path, "%s/../assets/models/bank.safetensors", check_test_dir());
  Err err = {0};
  *m = model_load(path, &err);
  CHECK(*m != NULL, "%s", err.msg);
  if (!*m) exit(1);
  Tokens tok;
  CHECK(tokens_from_text(&tok, &(*m)->vocab, text, 0, &err), "%s", err.msg);
  Trace *t = trace_new(*m, &tok, &err);
  tokens_free(&tok);
  model_forward(t);
  return t;
}

static void test_lens_cache(void) {
  Model *ma, *mb;
  // the same words in another order: the same labels, another lens (the trained bank model)
  Trace *a = bank_trace("the cat walks by the bank", &ma);
  Trace *b = bank_trace("the bank walks by the cat", &mb);
  check_lens_words(a, "first sentence");
  check_lens_words(b, "the same words in another order");
  check_lens_words(a, "the first again");
  char sa[2048], sb[2048], sa2[2048];
  saliency_percents(a, sa, sizeof sa), saliency_percents(b, sb, sizeof sb),
      saliency_percents(a, sa2, sizeof sa2);
  CHECK(sa[0] && strcmp(sa, sb) && !strcmp(sa, sa2), "saliency: %s / %s / %s", sa, sb, sa2);
  trace_free(a), trace_free(b), model_free(ma), model_free(mb);
}

// A title slide's narration stays above what is reserved over its footer (decoder.md's first page
// ran under the generation strip: its last line cut at 1280x720).
static void test_title_reserve(const Trace *t) {
  Scene s;
  scene_init(&s, 1280, 720, 0);
  ViewOptions o = view_options_default(theme_get(THEME_DARK));
  const char *text = "The encoder of the other lessons reads a sentence and gives every word a vector that "
                     "knows its neighbours. A translation model needs a second half, the decoder: it writes "
                     "the output sentence, one word at a time, and before each word it looks back at the "
                     "English sentence. The model here is small (two encoder layers, two decoder layers, "
                     "four heads), trained on simple sentences about cats, fish, money and banks. Its French "
                     "drops the apostrophe, because the tokenizer drops punctuation.";
  Doc d = {0};
  doc_add_spann(&d, doc_add_block(&d, BLOCK_PARA, 0), SPAN_TEXT, 0, text, -1, 1);
  doc_add_spann(&d, doc_add_block(&d, BLOCK_PARA, 0), SPAN_TEXT, 0, text, -1, 2); // more than a page
  doc_add_spann(&d, doc_add_block(&d, BLOCK_PARA, 0), SPAN_TEXT, 0,
                "Keep one question in mind: banque or rive?", -1, 2);
  PageSpec p = {.trace = t,
                .step = -1,
                .view = &o,
                .sentence = "x",
                .title = "The decoder writes French, one word at a time",
                .narration = &d,
                .show_text = true,
                .footer_reserve = 107,
                .width = 1280,
                .height = 720};
  ViewLayout lay;
  page_render(&s, &p, &lay);
  float lowest = 0;
  for (int i = 0; i < s.n; i++)
    if (s.cmds[i].kind == CMD_TEXT && s.cmds[i].size > 20) lowest = fmaxf(lowest, s.cmds[i].y);
  CHECK(lay.text_pages > 1 && lowest > 300 && lowest <= 720 - 107 - 8,
        "the title slide's narration (%d pages) ends at %g, over the strip at %d", lay.text_pages, lowest,
        720 - 107);
  doc_free(&d);
  scene_free(&s);
}

int main(void) {
  Err err = {0};
  if (!text_init(&err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  Model *m1, *m2, *m3;
  Trace *cat = load_trace("cat-bank", "The cat walks by the bank", false, &m1);
  Trace *causal = load_trace("causal", "the cat eats the mouse", true, &m2);
  Trace *deep = load_trace("deep-d64-h8", "The cat walks by the river bank and the mouse sleeps by the money",
                           false, &m3);

  for (int st = 1; st < cat->n_steps; st++) test_cell_colours(cat, st, 0);
  test_grad_stages("grad/post-relu-1", "The cat walks by the bank");
  test_grad_stages("grad/pre-gelu-causal-2", "the mouse eats the money by the river");
  test_cell_colours(causal, trace_step_find(causal, STEP_SOFTMAX, 0), 1);
  test_masked_hatched(causal);
  test_png_roundtrip();
  test_huge_scale();
  test_compare(cat, m1);
  test_compare_models();
  test_small_difference_bar(cat);
  test_header_fits(cat);
  test_footer_fits(cat);
  test_tokens_stages(cat);
  test_bar_percents();
  test_pred_max();
  test_qkv_title(causal);
  test_title_dollar(cat);
  test_display_math_fits();
  test_broken_step(cat);
  test_unscaled_title(cat);
  test_written_for(cat);
  test_footer_seed(cat);
  test_long_title(cat);
  test_title_table_page(cat);
  test_title_reserve(cat);
  test_lens_cache();
  test_stage_numbers(cat, 15);    // no mask, no prediction
  test_stage_numbers(causal, 16); // a mask
  Model *mh;
  Trace *head = load_trace("head-nonorm", "the mouse eats the money", false, &mh);
  test_stage_numbers(head, 16); // a prediction
  trace_free(head), model_free(mh);
  for (int st = 1; st < cat->n_steps; st++) test_svg_cells(cat, st);
  test_svg_cells(deep, trace_step_find(deep, STEP_FFN_HIDDEN, 2));

  golden("cat-bank-softmax-h1", cat, trace_step_find(cat, STEP_SOFTMAX, 0), 0, 960, 540);
  golden("cat-bank-qkv", cat, trace_step_find(cat, STEP_QKV, 1), 1, 960, 540);
  golden("cat-bank-embed", cat, trace_step_find(cat, STEP_EMBED, -1), 0, 960, 540);
  golden("causal-mask-h2", causal, trace_step_find(causal, STEP_MASK, 0), 1, 960, 540);
  golden("deep-softmax-all", deep, trace_step_find(deep, STEP_SOFTMAX, 1), -1, 960, 540);
  golden("deep-ffn", deep, trace_step_find(deep, STEP_FFN_HIDDEN, 2), 0, 960, 540);

  trace_free(cat), trace_free(causal), trace_free(deep);
  model_free(m1), model_free(m2), model_free(m3);
  text_shutdown();
  return check_exit("test_render");
}
