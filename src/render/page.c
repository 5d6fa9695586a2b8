// page.c -- see page.h.
#include "page.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "docview.h" // defines: docview_render
#include "tex.h"     // defines: tex_layout, tex_draw
#include "version.h" // defines: version_string

bool page_step_has_heads(const Trace *t, int step) {
  return stage_info(t->steps[step].kind)->heads == STAGE_PER_HEAD;
}

float page_unit(const PageSpec *p) { return p->height / 1080.0f; }

const char *page_stage_label(const Trace *t, int step, int head, char *buf, int cap) {
  const TraceStep *st = &t->steps[step];
  int total, n = trace_stage_number(t, step, &total);
  int k = snprintf(buf, (size_t)cap, "Stage %d%s/%d · %s", n, stage_info(st->kind)->half ? "½" : "", total,
                   st->name);
  if (st->layer >= 0 && k < cap)
    k += snprintf(buf + k, (size_t)(cap - k), " · layer %d of %d", st->layer + 1, t->cfg.n_layers);
  if (page_step_has_heads(t, step) && k < cap) {
    if (head < 0)
      snprintf(buf + k, (size_t)(cap - k), " · all %d heads", t->cfg.H);
    else
      snprintf(buf + k, (size_t)(cap - k), " · head %d of %d", (head < t->cfg.H ? head : t->cfg.H - 1) + 1,
               t->cfg.H);
  }
  return buf;
}

const char *page_footer(const Trace *t, const char *sentence, char *buf, int cap) {
  const Model *m = t->model;
  const ModelConfig *c = &t->cfg;
  char shown[240]; // a sentence of any length fits: cut at a character boundary
  size_t n = strlen(sentence);
  if (n < sizeof shown) {
    memcpy(shown, sentence, n + 1);
  } else {
    n = sizeof shown - 8;
    while (n > 0 && ((unsigned char)sentence[n] & 0xC0) == 0x80) n--;
    snprintf(shown, sizeof shown, "%.*s…", (int)n, sentence);
  }
  int k = snprintf(buf, (size_t)cap, "“%s” · model %s (D=%d, H=%d, F=%d, %d layer%s%s%s)", shown, m->source,
                   c->D, c->H, c->F, c->n_layers, c->n_layers > 1 ? "s" : "",
                   c->norm_first ? ", pre-norm" : "", c->causal ? ", causal" : "");
  if (m->has_seed && k < cap && !strstr(m->source, "seed"))
    snprintf(buf + k, (size_t)(cap - k), " · seed %llu", (unsigned long long)m->seed);
  return buf;
}

// Shortens the sentence in a footer ("“...” · model ...") until the line fits in maxw.
static void fit_footer(char *buf, size_t cap, float size, float maxw) {
  if (text_width(FONT_SANS, size, buf) <= maxw) return;
  char *close = strstr(buf, "” ·");
  if (!close) return;
  char tail[512];
  snprintf(tail, sizeof tail, "%s", close);
  size_t keep = (size_t)(close - buf);
  while (keep > 4) {
    keep--;
    while (keep > 4 && ((unsigned char)buf[keep] & 0xC0) == 0x80) keep--; // whole UTF-8 characters
    char line[1024];
    int n = snprintf(line, sizeof line, "%.*s…%s", (int)keep, buf, tail);
    if (n > 0 && (size_t)n < cap && text_width(FONT_SANS, size, line) <= maxw) {
      memcpy(buf, line, (size_t)n + 1);
      return;
    }
  }
}

// Cuts text (UTF-8, in place) to fit in maxw, ending it with "…".
static void fit_text(char *buf, FontFace f, float size, float maxw) {
  size_t n = strlen(buf);
  if (text_width(f, size, buf) <= maxw) return;
  char line[512];
  while (n > 0) {
    n--;
    while (n > 0 && ((unsigned char)buf[n] & 0xC0) == 0x80) n--; // whole UTF-8 characters
    snprintf(line, sizeof line, "%.*s…", (int)n, buf);
    if (text_width(f, size, line) <= maxw) break;
  }
  memcpy(buf, line, strlen(line) + 1);
}

// A title with inline math: the parts between $...$ are typeset, the rest is bold text, where
// \$ is a dollar sign. Draws at (x, baseline y) when s is not NULL; returns the width.
static float rich_title(Scene *s, const char *title, float size, float x, float y, uint32_t color) {
  float w = 0;
  char part[512];
  bool math = false;
  for (const char *p = title; *p;) {
    const char *q = tex_next_dollar(p);
    size_t n = 0;
    for (const char *c = p; *c && c != q && n < sizeof part - 1; c++)
      if (math || c[0] != '\\' || c[1] != '$') part[n++] = *c; // text: \$ → $
    part[n] = 0;
    if (math && n) {
      TexBox *b = tex_layout(part, size * 1.05f, false, NULL);
      if (s) tex_emit(s, b, x + w, y, color);
      w += tex_metrics(b).width;
      tex_free(b);
    } else if (n) {
      if (s) scene_text(s, FONT_SANS_BOLD, size, x + w, y, color, part);
      w += text_width(FONT_SANS_BOLD, size, part);
    }
    if (!q) break;
    p = q + 1;
    math = !math;
  }
  return w;
}

// The tensor whose title and formula describe the step: for Q, K, V the projection shown.
static const TraceTensor *step_tensor(const Trace *t, int step, int part) {
  const TraceStep *st = &t->steps[step];
  if (st->kind == STEP_QKV && st->layer >= 0 && (part == 2 || part == 3)) {
    int k = part == 2 ? t->layers[st->layer].K : t->layers[st->layer].V;
    if (k >= 0) return &t->t[k];
  }
  int r = st->result;
  return r >= 0 ? &t->t[r] : NULL;
}

// A lesson step without a stage: its title large, its narration in a readable column.
static void title_slide(Scene *s, const PageSpec *p, float u) {
  const Theme *th = p->view->theme;
  float W = p->width, H = p->height, col = fminf(W * 0.62f, 1300 * u), x = (W - col) / 2;
  char buf[512];
  if (p->lesson_steps > 0) {
    snprintf(buf, sizeof buf, "%s%sstep %d of %d", p->lesson ? p->lesson : "", p->lesson ? " · " : "",
             p->lesson_step + 1, p->lesson_steps);
    scene_text_aligned(s, FONT_SANS, 20 * u, W - 24 * u - p->header_reserve, 40 * u, 1.0f, th->muted, buf);
  }
  float y = H * 0.2f;
  rich_title(s, p->title ? p->title : "", 44 * u, x, y, th->text);
  y += 30 * u;
  scene_rect(s, x, y, 120 * u, 4 * u, th->accent);
  y += 40 * u;
  if (p->show_text && p->narration) docview_render(s, p->narration, th, 26 * u, x, y, col, H - y - 80 * u);
  page_footer(p->trace, p->sentence, buf, sizeof buf);
  scene_text(s, FONT_SANS, 17 * u, 24 * u, H - 14 * u, th->muted, buf);
}

void page_render(Scene *s, const PageSpec *p, ViewLayout *out) {
  const ViewOptions *o = p->view;
  const Theme *th = o->theme;
  const Trace *t = p->trace;
  float u = page_unit(p) * o->text_scale, W = p->width, H = p->height;
  scene_reset(s, W, H, th->bg);
  char buf[512];
  if (p->step < 0) {
    out->n_ops = 0;
    out->result = -1;
    out->area[0] = out->area[1] = out->area[2] = out->area[3] = 0;
    title_slide(s, p, u);
    return;
  }

  // header: stage indicator left, lesson progress right
  float hh = 52 * u;
  scene_rect(s, 0, 0, W, hh, th->panel);
  scene_rect(s, 0, hh - 2 * u, W, 2 * u, th->grid);
  // The two never overlap: the lesson's title goes first, then the progress, then the label is cut.
  float room = W - 48 * u - p->header_reserve, gap = 32 * u;
  char progress[512] = "";
  if (p->lesson_steps > 0) {
    snprintf(progress, sizeof progress, "%s%sstep %d of %d", p->lesson ? p->lesson : "",
             p->lesson ? " · " : "", p->lesson_step + 1, p->lesson_steps);
    page_stage_label(t, p->step, o->head, buf, sizeof buf);
    float lw = text_width(FONT_SANS_BOLD, 24 * u, buf);
    if (lw + gap + text_width(FONT_SANS, 20 * u, progress) > room)
      snprintf(progress, sizeof progress, "step %d of %d", p->lesson_step + 1, p->lesson_steps);
    if (lw + gap + text_width(FONT_SANS, 20 * u, progress) > room) progress[0] = 0;
  }
  page_stage_label(t, p->step, o->head, buf, sizeof buf);
  fit_text(buf, FONT_SANS_BOLD, 24 * u, room);
  scene_text(s, FONT_SANS_BOLD, 24 * u, 24 * u, hh * 0.66f, th->text, buf);
  if (progress[0])
    scene_text_aligned(s, FONT_SANS, 20 * u, W - 24 * u - p->header_reserve, hh * 0.66f, 1.0f, th->muted,
                       progress);

  // title and formula
  const TraceTensor *x = step_tensor(t, p->step, o->part);
  const char *title = x ? x->title : "Tokens", *tex = x ? x->tex : NULL;
  const StageInfo *info = stage_info(t->steps[p->step].kind);
  if (info->group_title && view_qkv_all(t, o->part)) { // several tensors at once: the stage's heading
    title = info->group_title;
    tex = info->group_tex;
    if (info->kind == STEP_QKV && t->model->no_in_proj_bias) // attention without biases (model.h)
      tex = "Q = Z W^q,\\quad K = Z W^k,\\quad V = Z W^v";
  }
  if (p->title) title = p->title;
  float y = hh + 46 * u;
  float tw = rich_title(s, title, 32 * u, 24 * u, y, th->text);
  if (tex) {
    TexBox *b = tex_layout(tex, 30 * u, true, NULL);
    TexMetrics m = tex_metrics(b);
    float fx = fmaxf(24 * u + tw + 48 * u, W - 24 * u - m.width);
    float fy = fmaxf(y, hh + 10 * u + m.ascent); // a tall formula stays below the header bar
    if (fx + m.width > W - 12 * u) fx = 24 * u, fy = y + 14 * u + m.ascent + 8 * u; // below the title
    tex_emit(s, b, fx, fy, th->text);
    y = fmaxf(y + 12 * u, fy + m.descent + 8 * u);
    tex_free(b);
  } else {
    y += 12 * u;
  }

  // footer
  float fh = 38 * u, fy0 = H - fh;
  scene_rect(s, 0, fy0, W, fh, th->panel);
  char right[128];
  snprintf(right, sizeof right, "colour scale: %s · Stepformer %s", view_scale_name(o->scale),
           version_string());
  float rw = text_width(FONT_SANS, 17 * u, right);
  scene_text_aligned(s, FONT_SANS, 17 * u, W - 24 * u, fy0 + fh * 0.66f, 1.0f, th->muted, right);
  page_footer(t, p->sentence, buf, sizeof buf);
  fit_footer(buf, sizeof buf, 17 * u, W - 72 * u - rw); // a long sentence is shortened, never overlapping
  scene_text(s, FONT_SANS, 17 * u, 24 * u, fy0 + fh * 0.66f, th->muted, buf);

  // narration column
  float vx = 0, top = y + 14 * u, bottom = fy0 - 10 * u - p->footer_reserve;
  if (p->note) {
    scene_rect(s, 24 * u, top, W - 48 * u, 34 * u, th->panel);
    scene_text(s, FONT_SANS_BOLD, 19 * u, 36 * u, top + 23 * u, th->warn, p->note);
    top += 44 * u;
  }
  if (p->show_text && p->narration && p->narration->n > 0) {
    float nw = W * 0.30f;
    scene_rect(s, 0, top - 6 * u, nw, bottom - top + 6 * u, th->panel);
    docview_render(s, p->narration, th, 21 * u, 24 * u, top + 4 * u, nw - 40 * u, bottom - top - 10 * u);
    vx = nw + 8 * u;
  }
  ViewOptions vo = *o;
  vo.text_scale = u;
  if (p->compare && t->steps[p->step].kind != STEP_TOKENS) {
    char ca[300], cb[300];
    snprintf(ca, sizeof ca, "“%s”", p->sentence);
    snprintf(cb, sizeof cb, "“%s”", p->compare_sentence ? p->compare_sentence : "");
    view_render_compare(s, t, p->compare, p->step, &vo, ca, cb, p->compare_row, p->compare_col, vx + 16 * u,
                        top, W - vx - 32 * u, bottom - top, out);
  } else {
    view_render(s, t, p->step, &vo, vx + 16 * u, top, W - vx - 32 * u, bottom - top, out);
  }
}
