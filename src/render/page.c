// page.c -- see page.h.
#include "page.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "docview.h" // defines: docview_render
#include "edits.h"   // defines: edits_describe
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

const char *page_stored_label(const StoredView *v, char *buf, int cap) {
  if (!v)
    snprintf(buf, (size_t)cap, "Weights as stored");
  else
    snprintf(buf, (size_t)cap, "Weights as stored · %s · %s · block %lld of %lld", v->tensor, v->type,
             (long long)v->block + 1, (long long)v->n_blocks);
  return buf;
}

const char *page_header_label(const Trace *t, int step, const ViewOptions *o, char *buf, int cap) {
  if (o->inside == INSIDE_STORED) return page_stored_label(o->stored, buf, cap);
  return page_stage_label(t, step, o->head, buf, cap);
}

// The footer line without the edits: sentence, model, seed.
static const char *footer_line(const Trace *t, const char *sentence, char *buf, int cap) {
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
  const char *assumed = model_meta(m, "course_assumed"); // "assumed energy/sqrt(d_k), GELU (...)"
  if (assumed && k < cap) { // what the file could not tell: said, up to its parenthesis
    const char *par = strstr(assumed, " (");
    k += snprintf(buf + k, (size_t)(cap - k), " · %.*s", par ? (int)(par - assumed) : 80, assumed);
  }
  // a file's seed is the one its weights were made from (trained, or drawn and saved), not a seed of
  // this picture: "seed 1" alone would read as random weights (issue 31.9)
  if (m->has_seed && k < cap && !strstr(m->source, "seed"))
    k += snprintf(buf + k, (size_t)(cap - k), " · made from seed %llu", (unsigned long long)m->seed);
  if (t->pred >= 0 && t->T == 0 && c->causal && k < cap) // the prediction's softmax(logits / T)
    snprintf(buf + k, (size_t)(cap - k), " · temperature %g", t->temperature > 0 ? t->temperature : 1.0);
  return buf;
}

const char *page_footer(const Trace *t, const char *sentence, char *buf, int cap) {
  footer_line(t, sentence, buf, cap);
  char edits[400];
  size_t n = strlen(buf);
  if (edits_describe(t, edits, sizeof edits)[0] && n + 4 < (size_t)cap)
    snprintf(buf + n, (size_t)cap - n, " · %s", edits);
  return buf;
}

static void fit_text(char *buf, FontFace f, float size, float maxw);

// Shortens the sentence in a footer ("“...” · model ...") until the line fits in maxw; on a page
// too narrow for the rest of the line even then, the line's end is cut with "…".
static void fit_footer(char *buf, size_t cap, float size, float maxw) {
  if (text_width(FONT_SANS, size, buf) <= maxw) return;
  char *close = strstr(buf, "” ·");
  if (!close) {
    fit_text(buf, FONT_SANS, size, maxw);
    return;
  }
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
  fit_text(buf, FONT_SANS, size, maxw);
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

// A title with inline math: the parts between $...$ are typeset, the rest is text in face f, where
// \$ is a dollar sign. Draws at (x, baseline y) when s is not NULL; returns the width.
static float rich_text(Scene *s, FontFace f, const char *title, float size, float x, float y,
                       uint32_t color) {
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
      if (s) scene_text(s, f, size, x + w, y, color, part);
      w += text_width(f, size, part);
    }
    if (!q) break;
    p = q + 1;
    math = !math;
  }
  return w;
}

static float rich_title(Scene *s, const char *title, float size, float x, float y, uint32_t color) {
  return rich_text(s, FONT_SANS_BOLD, title, size, x, y, color);
}

// The lesson's progress at the right of the header, right-aligned at x_right: "TITLE · step 3 of
// 21", the title typeset (its formulas too); without the title when it does not fit in room,
// nothing when neither fits. Returns the width drawn.
static float header_progress(Scene *s, const PageSpec *p, float size, float x_right, float y, float room,
                             uint32_t color) {
  if (p->lesson_steps <= 0) return 0;
  char step[64];
  snprintf(step, sizeof step, "%sstep %d of %d", p->lesson ? " · " : "", p->lesson_step + 1, p->lesson_steps);
  float tw = p->lesson ? rich_text(NULL, FONT_SANS, p->lesson, size, 0, 0, color) : 0;
  float sw = text_width(FONT_SANS, size, step);
  if (tw + sw > room) { // the step alone
    snprintf(step, sizeof step, "step %d of %d", p->lesson_step + 1, p->lesson_steps);
    sw = text_width(FONT_SANS, size, step), tw = 0;
    if (sw > room) return 0;
  } else if (tw > 0)
    rich_text(s, FONT_SANS, p->lesson, size, x_right - sw - tw, y, color);
  scene_text(s, FONT_SANS, size, x_right - sw, y, color, step);
  return tw + sw;
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

// Draws text (UTF-8) in lines of at most w pixels, cut at spaces (a word wider than w on a line of
// its own), from baseline y; returns the baseline after the last line.
static float wrapped(Scene *s, FontFace f, float size, float x, float y, float w, uint32_t color,
                     const char *text) {
  char line[1024];
  size_t n = 0;
  const char *p = text;
  while (*p) {
    const char *sp = strchr(p, ' ');
    size_t wl = sp ? (size_t)(sp - p) : strlen(p);
    if (n + wl + 2 >= sizeof line) wl = sizeof line - n - 2;
    char trial[1024];
    snprintf(trial, sizeof trial, "%.*s%s%.*s", (int)n, line, n ? " " : "", (int)wl, p);
    if (n && text_width(f, size, trial) > w) { // this word starts the next line
      scene_text(s, f, size, x, y, color, line);
      y += size * 1.35f;
      n = (size_t)snprintf(line, sizeof line, "%.*s", (int)wl, p);
    } else {
      n = (size_t)snprintf(line, sizeof line, "%s", trial);
    }
    p += wl;
    while (*p == ' ') p++;
  }
  if (n) scene_text(s, f, size, x, y, color, line), y += size * 1.35f;
  return y;
}

// A broken lesson step's message (PageSpec.broken) in a box x, y, w wide, in the warning colour:
// what is wrong and where, the lecture going on around it. Returns the height it takes.
static float broken_box(Scene *s, const PageSpec *p, const Theme *th, float u, float x, float y, float w) {
  float size = 22 * u, pad = 18 * u, head = y + pad + size;
  float end = wrapped(s, FONT_SANS, size, x + pad, head + size * 1.6f, w - 2 * pad, th->text, p->broken);
  float h = end - y + pad * 0.4f; // a frame round the lines, its height theirs
  scene_frame(s, x, y, w, h, 3 * u, th->warn);
  scene_rect(s, x, y, 8 * u, h, th->warn);
  scene_text(s, FONT_SANS_BOLD, size, x + pad, head, th->warn,
             "This step has a mistake: its picture is not shown (the other steps work)");
  return h;
}

// The narration in the box (x, y, w, h) at `size`, never smaller: when it is longer, page
// p->text_page of it, and under it "page 1 of 2 · → goes on". Returns the number of pages.
static int narration(Scene *s, const PageSpec *p, const Theme *th, float size, float x, float y, float w,
                     float h) {
  if (docview_measure(p->narration, size, w) <= h) {
    docview_render(s, p->narration, th, size, x, y, w, h);
    return 1;
  }
  float line = size * 1.6f;
  int pages = docview_pages(p->narration, size, w, h - line);
  int page = p->text_page < 0 ? 0 : p->text_page >= pages ? pages - 1 : p->text_page;
  docview_render_page(s, p->narration, th, size, x, y, w, h - line, page);
  char note[96];
  snprintf(note, sizeof note, "page %d of %d%s", page + 1, pages,
           page + 1 < pages ? " · → goes on" : " · ← goes back");
  scene_text(s, FONT_SANS_ITALIC, size * 0.75f, x, y + h - size * 0.4f, th->muted, note);
  return pages;
}

// Above a narration written for another sentence (PageSpec.written_for), in the warning colour:
// its numbers and words are that sentence's. Draws from the top y in w; returns the y below it.
static float written_for_note(Scene *s, const PageSpec *p, const Theme *th, float size, float x, float y,
                              float w) {
  if (!p->written_for || !p->show_text || !p->narration || p->narration->n == 0) return y;
  char line[600];
  snprintf(line, sizeof line, "Written for “%.200s”: what it says of the numbers is that sentence's.",
           p->written_for);
  return wrapped(s, FONT_SANS_ITALIC, size, x, y + size, w, th->warn, line) - size * 0.35f + size * 0.5f;
}

// A lesson step without a stage: its title large, its narration in a readable column.
static int title_slide(Scene *s, const PageSpec *p, float u) {
  const Theme *th = p->view->theme;
  float W = p->width, H = p->height, col = fminf(W * 0.84f, 1600 * u), x = (W - col) / 2;
  char buf[512];
  header_progress(s, p, 20 * u, W - 24 * u - p->header_reserve, 40 * u, W - 48 * u - p->header_reserve,
                  th->muted);
  // the whole screen, read from the back row: the title 48 px and the text 28 px at 720 lines
  float y = H * 0.1f + 72 * u, ts = 72 * u;
  const char *title = p->title ? p->title : "";
  float tw = rich_title(NULL, title, ts, 0, 0, th->text);
  if (tw > col && !strchr(title, '$')) // a long title wraps at its spaces, never past the edge
    y = wrapped(s, FONT_SANS_BOLD, ts, x, y, col, th->text, title) - ts * 1.35f;
  else // a formula in it does not wrap: the title smaller, as far as it must
    rich_title(s, title, tw > col ? ts * col / tw : ts, x, y, th->text);
  y += 40 * u;
  scene_rect(s, x, y, 180 * u, 6 * u, th->accent);
  y += 70 * u;
  if (p->broken) y += broken_box(s, p, th, u, x, y, col) + 30 * u; // where the picture would be
  y = written_for_note(s, p, th, 28 * u, x, y, col);
  int pages = 1;
  // above the footer and anything reserved over it (the decoder lessons' generation strip)
  if (p->show_text && p->narration)
    pages = narration(s, p, th, 42 * u, x, y, col, H - y - 70 * u - p->footer_reserve);
  page_footer(p->trace, p->sentence, buf, sizeof buf);
  fit_footer(buf, sizeof buf, 17 * u, W - 48 * u - p->footer_right); // never under the web's button
  scene_text(s, FONT_SANS, 17 * u, 24 * u, H - 14 * u, th->muted, buf);
  return pages;
}

// The step's claims at the foot of the narration column, bottom at `bottom`, w wide: one line
// each, ✓ green / ✗ red / ? muted, set smaller (down to 12 px at 1080) until the widest fits;
// a line still too wide is cut with "…". Returns the height used (0 without claims).
static float claims_draw(Scene *s, const PageSpec *p, const Theme *th, float u, float x, float bottom,
                         float w) {
  if (p->n_claims <= 0) return 0;
  float size = 17 * u;
  for (int i = 0; i < p->n_claims; i++)
    while (size > 12 * u && text_width(FONT_SANS, size, p->claims[i].text) + 1.6f * size > w) size -= u;
  float lh = size * 1.35f, h = lh * (float)p->n_claims + 14 * u;
  float y = bottom - h;
  scene_rect(s, x - 8 * u, y, w + 16 * u, 1.5f * u, th->grid);
  for (int i = 0; i < p->n_claims; i++) {
    const PageClaim *c = &p->claims[i];
    bool dark = th->id == THEME_DARK;
    uint32_t good = dark ? SF_RGBA(95, 212, 122, 255) : SF_RGBA(20, 130, 50, 255);
    uint32_t col = c->state == 1 ? good : c->state == 0 ? th->warn : th->muted;
    float ly = y + 10 * u + lh * (float)i + size;
    scene_text(s, FONT_SANS_BOLD, size, x, ly, col,
               c->state == 1   ? "\xE2\x9C\x93"
               : c->state == 0 ? "\xE2\x9C\x97"
                               : "?");
    char buf[sizeof c->text];
    snprintf(buf, sizeof buf, "%s", c->text);
    fit_text(buf, FONT_SANS, size, w - 1.6f * size);
    scene_text(s, FONT_SANS, size, x + 1.6f * size, ly, c->state == 0 ? col : th->text, buf);
  }
  return h;
}

// Marks what the step hides until the next click (PageSpec.hide) with a "?": every result operand
// of the layout (one per head in the grid, one per sentence side by side), whole or its focus row.
// The view drew none of its values (ViewOptions.hide): the cover is the sign, not the secret.
static void cover_hidden(Scene *s, const PageSpec *p, const ViewLayout *lay, const Theme *th, float u) {
  for (int k = 0; k < lay->n_ops; k++) {
    const ViewOperand *v = &lay->ops[k];
    if (!v->result || v->op.minus_trace || v->drows <= 0) continue;
    float x = v->x, y = v->y, w = v->w, h = v->h;
    if (p->hide == 2) {
      int r = v->op.trace == p->compare ? p->compare_row : p->view->focus_row;
      if (r < 0 || r >= v->op.rows) continue;
      int dr = (int)((long)r * v->drows / v->op.rows);
      h = v->h / (float)v->drows;
      y = v->y + h * (float)dr;
    }
    scene_rect(s, x, y, w, h, th->panel);
    scene_rect(s, x, y, w, fmaxf(1, u), th->frame);
    scene_rect(s, x, y + h - fmaxf(1, u), w, fmaxf(1, u), th->frame);
    float size = fminf(h * 0.8f, 48 * u);
    scene_text_aligned(s, FONT_SANS_BOLD, size, x + w / 2, y + h / 2 + size * 0.36f, 0.5f, th->muted, "?");
  }
}

// The invariants panel: a box across the foot of the view's area (x, bottom, w), one line per
// fact with ✓ (green), ✗ (the warning colour) or · (a value, nothing claimed), in two columns
// when they fit; the text shrinks until the longest line fits its column. Returns the height it
// takes (the view is drawn above it); draw = false only measures.
static float invariants_panel(Scene *s, const PageSpec *p, const Theme *th, float u, float x, float bottom,
                              float w, bool draw) {
  int n = p->n_invariants;
  float size = 19 * u, pad = 10 * u, widest = 0;
  int cols = 2;
  for (int i = 0; i < n; i++)
    widest = fmaxf(widest, rich_text(NULL, FONT_SANS, p->invariants[i].text, size, 0, 0, 0));
  if (n < 3 || widest + 2 * size > (w - 2 * pad) / 2 - 16 * u) cols = 1;
  float colw = (w - 2 * pad) / (float)cols - (cols > 1 ? 16 * u : 0);
  while (size > 11 * u && widest + 1.6f * size > colw) widest *= (size - u) / size, size -= u;
  float lh = size * 1.4f;
  int per = (n + cols - 1) / cols;
  float h = lh * (float)(per + 1) + 2 * pad;
  if (!draw) return h;
  bool dark = th->id == THEME_DARK;
  uint32_t good = dark ? SF_RGBA(95, 212, 122, 255) : SF_RGBA(20, 130, 50, 255);
  float y = bottom - h;
  scene_rect(s, x, y, w, h, th->panel);
  scene_frame(s, x, y, w, h, fmaxf(1, 2 * u), th->frame);
  scene_text(s, FONT_SANS_BOLD, size, x + pad, y + pad + lh * 0.75f, th->text, "Invariants of this stage");
  for (int i = 0; i < n; i++) {
    const PageClaim *c = &p->invariants[i];
    float cx = x + pad + (float)(i / per) * (colw + 16 * u),
          ty = y + pad + lh * (0.75f + 1 + (float)(i % per));
    uint32_t col = c->state == 1 ? good : c->state == 0 ? th->warn : th->muted;
    scene_text(s, FONT_SANS_BOLD, size, cx, ty, col, c->state == 1 ? "✓" : c->state == 0 ? "✗" : "·");
    // a line's symbols are inline TeX ("shapes: $W_c$ 32×2"); a line too long for its column is cut
    // as plain text (tex_plain_title), never in the middle of a formula
    uint32_t ink = c->state == 0 ? th->warn : th->text;
    if (rich_text(NULL, FONT_SANS, c->text, size, 0, 0, ink) <= colw - 1.6f * size) {
      rich_text(s, FONT_SANS, c->text, size, cx + 1.6f * size, ty, ink);
      continue;
    }
    char line[352];
    tex_plain_title(c->text, line, sizeof line);
    fit_text(line, FONT_SANS, size, colw - 1.6f * size);
    scene_text(s, FONT_SANS, size, cx + 1.6f * size, ty, ink, line);
  }
  return h;
}
// A projections heading for a pre-norm model: "Q = Z W^q …" becomes "Q = LN_1(Z) W^q …" (and Y's
// for a decoder), as the picture multiplies the LayerNorm's output. In this thread's buffer.
static const char *prenorm_tex(const char *tex) {
  static _Thread_local char buf[512];
  size_t n = 0;
  for (const char *c = tex; *c && n + 20 < sizeof buf; c++) {
    if ((c[0] == 'Z' || c[0] == 'Y') && c[1] == ' ' && c[2] == 'W' && (c == tex || c[-1] == ' ')) {
      n += (size_t)snprintf(buf + n, sizeof buf - n, "\\mathrm{LN}_1(%c)", c[0]);
      continue;
    }
    buf[n++] = *c;
  }
  buf[n] = 0;
  return buf;
}

// The narration column, nw wide (0: none), and the stage's view right of it, between top and
// bottom; *vx: where the column ends, *bottom_all: the foot of the area (the invariants panel's).
// Returns the narration's number of pages.
static int column_and_view(Scene *s, const PageSpec *p, float u, float nw, float top, float bottom, float *vx,
                           float *bottom_all, ViewLayout *out) {
  const ViewOptions *o = p->view;
  const Theme *th = o->theme;
  const Trace *t = p->trace;
  float W = p->width;
  int text_pages = 1;
  *vx = 0;
  if (nw > 0) {
    scene_rect(s, 0, top - 6 * u, nw, bottom - top + 6 * u, th->panel);
    float ch = claims_draw(s, p, th, u, 24 * u, bottom, nw - 40 * u);
    top = written_for_note(s, p, th, 22 * u, 24 * u, top, nw - 40 * u); // another sentence typed
    if (p->narration) // 20 px at 720 lines: body text the back row reads
      text_pages = narration(s, p, th, 30 * u, 24 * u, top + 4 * u, nw - 40 * u, bottom - top - 10 * u - ch);
    *vx = nw + 8 * u;
  }
  *bottom_all = bottom; // the invariants panel takes the foot of the view's area
  if (p->n_invariants > 0)
    bottom -= invariants_panel(s, p, th, u, *vx + 16 * u, bottom, W - *vx - 32 * u, false) + 8 * u;
  bottom -= fminf(p->view_reserve, (bottom - top) * 0.4f); // (the picture keeps most of its area)
  ViewOptions vo = *o;
  vo.text_scale = page_unit(p); // the picture has its own size (vo.zoom), the text its own (u)
  vo.hide = p->hide;            // a reveal= step: the view draws none of what it hides
  float x = *vx + 16 * u, w = W - *vx - 32 * u, h = bottom - top;
  if (t->steps[p->step].kind == STEP_SIM && !vo.inside) { // two sentences' vectors compared (view_sim.c)
    char ca[300], cb[300];
    snprintf(ca, sizeof ca, "“%s”", p->sentence);
    snprintf(cb, sizeof cb, "“%s”", p->compare_sentence ? p->compare_sentence : "");
    view_render_sim(s, t, p->compare, p->step, &vo, ca, cb, p->compare_row, x, top, w, h, out);
  } else if (p->compare && t->steps[p->step].kind != STEP_TOKENS) {
    char ca[300], cb[300];
    snprintf(ca, sizeof ca, "“%s”", p->sentence);
    snprintf(cb, sizeof cb, "“%s”", p->compare_sentence ? p->compare_sentence : "");
    if (p->caption_a) snprintf(ca, sizeof ca, "%s", p->caption_a);
    if (p->caption_b) snprintf(cb, sizeof cb, "%s", p->caption_b);
    view_render_compare(s, t, p->compare, p->step, &vo, ca, cb, p->compare_row, p->compare_col, x, top, w, h,
                        out);
  } else {
    view_render(s, t, p->step, &vo, x, top, w, h, out);
  }
  return text_pages;
}

// Whether the view's result is a small matrix (up to 12×12, a cell per value) drawn without the
// numbers asked for, or with numbers smaller than the back row reads (view_layout.c's size for
// them): a slide that shows colours, or specks, where the narration asks for numbers.
static bool numbers_short(const ViewOptions *o, const ViewLayout *l) {
  if (!o->numbers || l->result < 0 || l->result >= l->n_ops) return false;
  const ViewOperand *v = &l->ops[l->result];
  return v->op.rows <= 12 && v->op.cols <= 12 && v->op.index >= 0 && v->drows == v->op.rows &&
         v->dcols == v->op.cols && (v->number_px <= 0 || v->number_px < v->number_want - 0.05f);
}

static float numbers_px(const ViewLayout *l) { return l->result >= 0 ? l->ops[l->result].number_px : 0; }

// Whether a narrower narration column could make the picture readable: a small result's numbers
// under the back row's size, or a sentence of up to about 24 tokens not named on every row and
// column (issue 31: the 22-token scores beside a lesson's narration named 7 of 22 columns).
static bool view_short(const ViewOptions *o, const ViewLayout *l) {
  return numbers_short(o, l) || l->labels_short > 0;
}

// Whether layout a reads better than b: fewer axes short of labels, then larger numbers.
static bool reads_better(const ViewLayout *a, float a_px, int b_short, float b_px) {
  return a->labels_short != b_short ? a->labels_short < b_short : a_px > b_px;
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
    memset(out->panel, 0, sizeof out->panel);
    out->text_pages = title_slide(s, p, u);
    return;
  }

  // header: stage indicator left, lesson progress right
  float hh = 52 * u;
  scene_rect(s, 0, 0, W, hh, th->panel);
  scene_rect(s, 0, hh - 2 * u, W, 2 * u, th->grid);
  // The two never overlap: the lesson's title goes first, then the progress, then the label is cut.
  float room = W - 48 * u - p->header_reserve, gap = 32 * u;
  page_header_label(t, p->step, o, buf, sizeof buf);
  float lw = text_width(FONT_SANS_BOLD, 24 * u, buf);
  float pw =
      header_progress(s, p, 20 * u, W - 24 * u - p->header_reserve, hh * 0.66f, room - lw - gap, th->muted);
  fit_text(buf, FONT_SANS_BOLD, 24 * u, room - (pw > 0 ? pw + gap : 0));
  scene_text(s, FONT_SANS_BOLD, 24 * u, 24 * u, hh * 0.66f, th->text, buf);

  // title and formula
  const TraceTensor *x = step_tensor(t, p->step, o->part);
  const char *title = x ? view_tensor_title(t, x) : "Tokens", *tex = x ? view_tensor_tex(t, x) : NULL;
  if (t->steps[p->step].kind == STEP_SIM) // no tensor of its own: two sentences' (similarity.h)
    title = "Cosine similarity of two sentences",
    tex = "\\cos(z_i, z'_j) = \\frac{z_i \\cdot z'_j}{\\lVert z_i \\rVert\\, \\lVert z'_j \\rVert}";
  const StageInfo *info = stage_info(t->steps[p->step].kind);
  if (info->group_title && view_qkv_all(t, o->part)) { // several tensors at once: the stage's heading
    title = info->group_title;
    tex = info->group_tex;
    if (info->kind == STEP_QKV && t->model->no_in_proj_bias) // attention without biases (model.h)
      tex = model_q_scaled(t->model) // the course's einsum module: its energy/√D is QKᵀ/√d_k
                ? "Q = Z W^q,\\ W^q = W^{\\text{queries}} / \\sqrt{H};\\quad K = Z W^k,\\quad V = Z W^v"
                : "Q = Z W^q,\\quad K = Z W^k,\\quad V = Z W^v";
  }
  if (info->group_title && view_qkv_all(t, o->part) && t->cfg.norm_first && tex && !model_is_modern(&t->cfg))
    tex = prenorm_tex(tex); // the picture multiplies LN_1(Z): so does the header
  if (info->group_title && view_qkv_all(t, o->part) && model_is_modern(&t->cfg) && info->kind == STEP_QKV)
    tex = t->model->no_in_proj_bias // today's decoders: x̄ = RMSNorm(x), K and V with H_kv heads
              ? "Q = \\bar{x} W^q,\\quad K = \\bar{x} W^k,\\quad V = \\bar{x} W^v"
              : "Q = \\bar{x} W^q + b^q,\\quad K = \\bar{x} W^k + b^k,\\quad V = \\bar{x} W^v + b^v";
  if (o->inside) // a view inside the pass (view_inside.c) instead of the step's equation
    title = view_inside_title(o->inside), tex = view_inside_tex(o->inside);
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

  // footer; above it, on a what-if pass, the edits and heads off in the warning colour (edits.h), so
  // that an edited picture never passes for the model's own
  float fh = 38 * u, fy0 = H - fh;
  char edits[600];
  if (edits_describe(t, edits, sizeof edits)[0]) {
    float eh = 34 * u;
    fy0 -= eh;
    scene_rect(s, 0, fy0, W, fh + eh, th->panel);
    scene_rect(s, 0, fy0, 6 * u, eh, th->warn);
    char line[700];
    snprintf(line, sizeof line, "what-if · %s", edits);
    fit_text(line, FONT_SANS_BOLD, 18 * u, W - 48 * u);
    scene_text(s, FONT_SANS_BOLD, 18 * u, 24 * u, fy0 + eh * 0.68f, th->warn, line);
  } else {
    scene_rect(s, 0, fy0, W, fh, th->panel);
  }
  float fyl = H - fh; // the footer line's band
  char right[128];
  // the similarity's cosines are always on [-1, 1] (view_sim.c), whatever the scale mode
  const char *scale =
      p->step >= 0 && t->steps[p->step].kind == STEP_SIM ? "fixed, -1 to 1" : view_scale_name(o->scale);
  if (o->zoom > 0 && fabsf(o->zoom - 1.0f) > 0.005f) // the window's zoomed picture says its size
    snprintf(right, sizeof right, "picture %.0f %% · colour scale: %s · Stepformer %s", o->zoom * 100.0f,
             scale, version_string());
  else
    snprintf(right, sizeof right, "colour scale: %s · Stepformer %s", scale, version_string());
  float rw = text_width(FONT_SANS, 17 * u, right);
  scene_text_aligned(s, FONT_SANS, 17 * u, W - 24 * u - p->footer_right, fyl + fh * 0.66f, 1.0f, th->muted,
                     right);
  footer_line(t, p->sentence, buf, sizeof buf);
  if (!p->show_text && p->n_claims > 0) { // no narration column: the claims' tally in the footer
    int held = 0;
    for (int i = 0; i < p->n_claims; i++) held += p->claims[i].state == 1;
    size_t n = strlen(buf);
    snprintf(buf + n, sizeof buf - n, " · claims: %d of %d hold", held, p->n_claims);
  }
  // a long sentence is shortened, never overlapping the right part
  fit_footer(buf, sizeof buf, 17 * u, W - 72 * u - rw - p->footer_right);
  scene_text(s, FONT_SANS, 17 * u, 24 * u, fyl + fh * 0.66f, th->muted, buf);

  // narration column
  float top = y + 14 * u, bottom = fy0 - 10 * u - p->footer_reserve;
  if (p->note) {
    scene_rect(s, 24 * u, top, W - 48 * u, 34 * u, th->panel);
    scene_text(s, FONT_SANS_BOLD, 19 * u, 36 * u, top + 23 * u, th->warn, p->note);
    top += 44 * u;
  }
  // the narration column takes a third of the width; on a step whose small result would show
  // colours only, or whose matrices of a sentence of up to about 24 tokens would name only some of
  // their words, it gives up to a fifth (labels: a third) of that to the picture so that the cells
  // carry their numbers (issue 31: intuition.md's 9×9 softmax) and every word is named, when its
  // narration needs no more pages for it
  bool column = p->show_text && ((p->narration && p->narration->n > 0) || p->n_claims > 0);
  float vx, bottom_all;
  SceneMark mark = scene_mark(s);
  int text_pages = column_and_view(s, p, u, column ? W * 0.32f : 0, top, bottom, &vx, &bottom_all, out);
  if (column && !p->compare && (o->zoom <= 0 || fabsf(o->zoom - 1.0f) < 0.005f) && view_short(o, out)) {
    // the widest narrower column that reads in full, else the one that reads best (and the column
    // as it was when none reads better)
    float best_px = numbers_px(out) + 0.05f;
    int best = 0, best_short = out->labels_short, most = out->labels_short > 0 ? 5 : 3;
    bool found = false;
    for (int k = 1; k <= most && !found; k++) {
      scene_rewind(s, mark);
      int pages =
          column_and_view(s, p, u, W * (0.32f - 0.02f * (float)k), top, bottom, &vx, &bottom_all, out);
      if (pages > text_pages) continue;
      found = !view_short(o, out);
      if (found || reads_better(out, numbers_px(out), best_short, best_px))
        best = k, best_px = numbers_px(out), best_short = out->labels_short;
    }
    if (!found) { // none reads in full: the best of them
      scene_rewind(s, mark);
      column_and_view(s, p, u, W * (0.32f - 0.02f * (float)best), top, bottom, &vx, &bottom_all, out);
    }
  }
  if (p->hide) cover_hidden(s, p, out, th, u);
  if ((p->spotlight && p->spotlight->kind != SPOT_OFF) || (p->marks && p->marks->n > 0))
    marks_draw(s, out, p->marks, p->spotlight, th, u);
  memset(out->panel, 0, sizeof out->panel);
  if (p->n_invariants > 0) {
    float ih = invariants_panel(s, p, th, u, vx + 16 * u, bottom_all, W - vx - 32 * u, true);
    out->panel[0] = vx + 16 * u, out->panel[1] = bottom_all - ih, out->panel[2] = W - vx - 32 * u;
    out->panel[3] = ih;
  }
  out->text_pages = text_pages;
}
