// view_stored.c -- "weights as stored" (view_inside.c's "stored" view; issue 35): one block of a
// quantized weight matrix as the GGUF file holds it, drawn from a StoredView (core/stored.h).
//
//   left   the block's scales as stored -- d (and dmin, or m) in half precision, the k-quants'
//          sub-block scales sc_j and mins m_j with the step d·sc_j and the min dmin·m_j they make --
//          then every code of the block, 16 a row, each sub-block's rows labelled j, the worked
//          weight's sub-block framed
//   right  that sub-block's codes and the values they give (code above, value below), the worked
//          equation of one weight with the file's numbers, and the whole matrix beside its error:
//          the dequantized weights (area-averaged, the block framed) and either each block's half
//          step (the rounding bound: the original is not in the file) or, with a reference file of
//          the same model, |w_q − w_ref| against it
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "view_internal.h"

// ggml's type numbers (formats/gguf_quant.h, which the render layer does not include).
enum { Q4_0 = 2, Q4_1 = 3, Q5_0 = 6, Q5_1 = 7, Q8_0 = 8, Q4_K = 12, Q5_K = 13, Q6_K = 14 };

// What a type stores, in a line, and its equation with names only.
static const char *type_line(const StoredView *v) {
  switch (v->b.type) {
  case Q8_0: return "32 weights a block: one scale d (f16) and 32 codes q of 8 bits (int8)";
  case Q4_0: return "32 weights a block: one scale d (f16) and 32 codes q of 4 bits, centred on 8";
  case Q4_1: return "32 weights a block: a scale d and a minimum m (f16), 32 codes q of 4 bits";
  case Q5_0: return "32 weights a block: one scale d (f16) and 32 codes q of 5 bits, centred on 16";
  case Q5_1: return "32 weights a block: a scale d and a minimum m (f16), 32 codes q of 5 bits";
  case Q4_K:
  case Q5_K:
    return v->b.bits == 4 ? "256 weights a block: d and dmin (f16), 8 sub-blocks of 32 with a 6-bit scale "
                            "scⱼ and min mⱼ, 4-bit codes"
                          : "256 weights a block: d and dmin (f16), 8 sub-blocks of 32 with a 6-bit scale "
                            "scⱼ and min mⱼ, 5-bit codes";
  case Q6_K:
    return "256 weights a block: d (f16), 16 sub-blocks of 16 with an 8-bit scale scⱼ, 6-bit codes centred "
           "on 32";
  default: return "";
  }
}

static const char *equation(const StoredView *v) {
  switch (v->b.type) {
  case Q8_0: return "w = d · q";
  case Q4_0: return "w = d · (q − 8)";
  case Q5_0: return "w = d · (q − 16)";
  case Q4_1:
  case Q5_1: return "w = d · q + m";
  case Q4_K:
  case Q5_K: return "w = d · scⱼ · q − dmin · mⱼ";
  case Q6_K: return "w = d · scⱼ · (q − 32)";
  default: return "";
  }
}

// Weight k's equation with the file's numbers: "= 0.00213 · 41 · 9 − 0.00102 · 12 = 0.0663".
static const char *worked(Scene *s, const StoredView *v, int k) {
  const QuantBlock *b = &v->b;
  int j = k / b->sub, q = b->codes[k];
  float w = b->values[k];
  switch (b->type) {
  case Q8_0: return scene_strf(s, "= %.5g · (%d) = %.4g", b->d, q - 128, w);
  case Q4_0:
  case Q5_0: return scene_strf(s, "= %.5g · (%d − %d) = %.4g", b->d, q, b->offset, w);
  case Q4_1:
  case Q5_1: return scene_strf(s, "= %.5g · %d + %.5g = %.4g", b->d, q, -b->min[0], w);
  case Q4_K:
  case Q5_K:
    return scene_strf(s, "= %.5g · %d · %d − %.5g · %d = %.4g", b->d, b->sc[j], q, b->dmin, b->mn[j], w);
  case Q6_K: return scene_strf(s, "= %.5g · %d · (%d − 32) = %.4g", b->d, b->sc[j], q, w);
  default: return "";
  }
}

// Text at most `maxw` wide: set smaller (down to 0.6 fs) rather than cut.
static void fit_text(Scene *s, FontFace f, float fs, float x, float y, float maxw, float align, uint32_t col,
                     const char *text) {
  float tw = text_width(f, fs, text);
  if (tw > maxw && tw > 0) fs = fmaxf(fs * 0.6f, fs * maxw / tw);
  scene_text_aligned(s, f, fs, x, y, align, col, text);
}

// The sub-blocks' table: its rows (sc_j, m_j, step, min) over j = 1 .. n_sub; returns its height.
static float scales_table(Scene *s, const StoredView *v, const ViewOptions *o, float x, float y, float w,
                          float fs, int hot) {
  const Theme *th = o->theme;
  const QuantBlock *b = &v->b;
  float lh = fs * 1.35f;
  bool mins = b->type == Q4_K || b->type == Q5_K, one = b->n_sub == 1;
  // the block's own scales
  const char *head = b->type == Q4_1 || b->type == Q5_1
                         ? scene_strf(s, "d = %.5g,  m = %.5g  (half precision)", b->d, -b->min[0])
                     : mins ? scene_strf(s, "d = %.5g,  dmin = %.5g  (half precision)", b->d, b->dmin)
                            : scene_strf(s, "d = %.5g  (half precision)", b->d);
  fit_text(s, FONT_MONO, fs, x, y + fs, w, 0, th->text, head);
  if (one) return lh;
  const char *names[3] = {"scⱼ", mins ? "mⱼ" : NULL, "step d·scⱼ"};
  float lw = text_width(FONT_SANS, fs * 0.85f, "step d·scⱼ") + fs * 0.6f, cw = (w - lw) / b->n_sub;
  float ty = y + lh;
  float nf = fminf(fs * 0.85f, cw / 4.2f);
  for (int j = 0; j < b->n_sub; j++) {
    float cx = x + lw + j * cw;
    if (j == hot) scene_rect(s, cx, ty + fs * 0.25f, cw, lh * (mins ? 4 : 3) - fs * 0.2f, th->highlight);
    scene_text_aligned(s, FONT_SANS, nf, cx + cw / 2, ty + fs, 0.5f,
                       j == hot ? cmap_ink_on(th->highlight) : th->muted, scene_strf(s, "j=%d", j + 1));
  }
  for (int r = 0, row = 1; r < 3; r++) {
    if (!names[r]) continue;
    float ry = ty + lh * row++;
    scene_text(s, FONT_SANS, fs * 0.85f, x, ry + fs, th->text, names[r]);
    for (int j = 0; j < b->n_sub; j++) {
      const char *t = r == 0   ? scene_strf(s, "%d", b->sc[j])
                      : r == 1 ? scene_strf(s, "%d", b->mn[j])
                               : scene_strf(s, "%.3g", b->scale[j]);
      fit_text(s, FONT_MONO, nf, x + lw + (j + 0.5f) * cw, ry + fs, cw * 0.94f, 0.5f,
               j == hot ? cmap_ink_on(th->highlight) : th->text, t);
    }
  }
  return lh * (mins ? 5 : 4) + fs * 0.1f;
}

// The codes shown: whole sub-blocks around the worked one (hot), as many as have codes of CODE_PX in
// rows of 8, all of a 32-weight block. Writes the first sub-block and their count.
#define CODE_PX 33.0f // a code's digits per 1080 lines: 22 px at 720, 16 px high (8 at half size)
static void codes_shown(const QuantBlock *b, const ViewOptions *o, float h, int hot, int *s0, int *ns) {
  int C = 8, rows_per = b->sub > C ? b->sub / C : 1, per_row = b->sub < C ? C / b->sub : 1;
  int rows = (int)(h / (CODE_PX * o->text_scale / 0.66f)); // (a code's size: 0.66 of its row)
  int n = rows / rows_per * per_row;
  *ns = n < 1 ? 1 : n > b->n_sub ? b->n_sub : n;
  int f = hot - (*ns - 1) / 2;
  *s0 = f < 0 ? 0 : f > b->n_sub - *ns ? b->n_sub - *ns : f;
}

// The block's codes shown (codes_shown), 8 a row; each sub-block's first row labelled j. Returns the
// height used.
static float codes_grid(Scene *s, const StoredView *v, const ViewOptions *o, float x, float y, float w,
                        float h, float fs, int hot) {
  const Theme *th = o->theme;
  const QuantBlock *b = &v->b;
  const int C = 8;
  int s0, ns, maxq = (1 << b->bits) - 1;
  codes_shown(b, o, h, hot, &s0, &ns);
  int k0 = s0 * b->sub, n = ns * b->sub, rows = (n + C - 1) / C;
  float lw = text_width(FONT_SANS, fs * 0.85f, "j=16") + fs * 0.5f;
  float cw = fminf((w - lw) / C, fs * 4.2f), ch = fminf(h / rows, cw);
  ColorScale sc = scale_for(CMAP_VIRIDIS, 0, (float)maxq);
  uint32_t *cells = scene_cells(s, x + lw, y, cw * C, ch * rows, rows, C);
  if (cells)
    for (int k = 0; k < rows * C; k++) cells[k] = k < n ? scale_color(&sc, b->codes[k0 + k]) : th->bg;
  float nf = fminf(ch * 0.66f, cw / 1.45f);
  for (int k = 0; k < n; k++)
    scene_text_aligned(s, FONT_MONO, nf, x + lw + (k % C + 0.5f) * cw, y + (k / C + 0.5f) * ch + nf * 0.36f,
                       0.5f, cmap_ink_on(scale_color(&sc, b->codes[k0 + k])),
                       scene_strf(s, "%d", b->codes[k0 + k]));
  for (int j = s0; j < s0 + ns && b->n_sub > 1; j++) {
    float ry = y + (float)((j - s0) * b->sub / C) * ch, rh = (float)b->sub / C * ch;
    scene_text_aligned(s, FONT_SANS, fminf(fs * 0.85f, fmaxf(rh, ch) * 0.8f), x + lw - fs * 0.3f,
                       ry + fminf(rh, ch) * 0.5f + fs * 0.3f, 1.0f, j == hot ? th->accent : th->muted,
                       scene_strf(s, "j=%d", j + 1));
    if (j > s0) scene_line(s, x + lw, ry, x + lw + cw * C, ry, 2, th->bg);
  }
  // the worked weight's sub-block, and the weight itself
  int r0 = (hot - s0) * b->sub / C, wk = v->weight - k0;
  float rh = fmaxf(1.0f, (float)b->sub / C) * ch;
  float sw = b->sub < C ? cw * b->sub : cw * C;
  float sx = x + lw + (b->sub < C ? (float)((hot - s0) * b->sub % C) * cw : 0);
  scene_frame(s, sx, y + r0 * ch, sw, rh, 2, th->accent);
  scene_frame(s, x + lw + (wk % C) * cw, y + (wk / C) * ch, cw, ch, 3, th->text);
  return ch * rows;
}

// The worked sub-block: code above, value below, in cells of up to 8 a row.
static float sub_values(Scene *s, const StoredView *v, const ViewOptions *o, float x, float y, float w,
                        float fs, int hot) {
  const Theme *th = o->theme;
  const QuantBlock *b = &v->b;
  int n = b->sub, first = hot * b->sub, per = n > 8 ? 8 : n, rows = (n + per - 1) / per;
  float cw = w / per, ch = fminf(fs * 2.5f, cw * 0.8f); // (its numbers 18 px at 720: read at half size)
  float lo = 0, hi = 0;
  for (int k = 0; k < b->n; k++) lo = fminf(lo, b->values[k]), hi = fmaxf(hi, b->values[k]);
  ColorScale sc = scale_for(CMAP_DIVERGING, lo, hi);
  float nf = fminf(ch * 0.42f, cw / 4.4f);
  for (int k = 0; k < n; k++) {
    float cx = x + (k % per) * cw, cy = y + (k / per) * ch;
    uint32_t c = scale_color(&sc, b->values[first + k]);
    scene_rect(s, cx, cy, cw, ch, c);
    uint32_t ink = cmap_ink_on(c);
    scene_text_aligned(s, FONT_MONO, nf, cx + cw / 2, cy + ch * 0.42f, 0.5f, ink,
                       scene_strf(s, "q=%d", b->codes[first + k]));
    scene_text_aligned(s, FONT_MONO, nf, cx + cw / 2, cy + ch * 0.82f, 0.5f, ink,
                       scene_strf(s, "%.3g", b->values[first + k] + 0.0f)); // -0 as 0
    if (first + k == v->weight) scene_frame(s, cx, cy, cw, ch, 3, th->text);
  }
  scene_frame(s, x, y, cw * per, ch * rows, 1, th->frame);
  return ch * rows;
}

// A matrix of gh × gw cells stretched over (x, y, w, h), its title above, the shown block framed.
static void matrix(Scene *s, const StoredView *v, const ViewOptions *o, const float *m, ColorScale sc,
                   float x, float y, float w, float h, float fs, const char *title, const char *range) {
  const Theme *th = o->theme;
  fit_text(s, FONT_SANS_BOLD, fs * 0.9f, x, y - fs * 1.55f, w, 0, th->text, title);
  fit_text(s, FONT_SANS, fs * 0.8f, x, y - fs * 0.4f, w, 0, th->muted, range);
  uint32_t *cells = scene_cells(s, x, y, w, h, v->gh, v->gw);
  if (cells)
    for (int k = 0; k < v->gh * v->gw; k++) cells[k] = scale_color(&sc, m[k]);
  scene_frame(s, x, y, w, h, 1, th->frame);
  // the block: rows row .. (one row), columns col .. col + n
  float bx = x + (float)((double)v->col / v->cols * w), bw = fmaxf(3, (float)((double)v->b.n / v->cols * w));
  float by = y + (float)((double)v->row / v->rows * h), bh = fmaxf(3, (float)(h / v->rows));
  scene_frame(s, bx - 1, by - 1, bw + 2, bh + 2, 2, th->accent);
  scene_text(
      s, FONT_SANS, fs * 0.75f, x, y + h + fs * 1.0f, th->muted,
      scene_strf(s, "%lld × %lld%s", (long long)v->rows, (long long)v->cols,
                 v->rows > v->gh || v->cols > v->gw ? scene_strf(s, " in %d × %d cells", v->gh, v->gw) : ""));
}

void view_stored(Scene *s, const ViewOptions *o, float x, float y, float w, float h) {
  const Theme *th = o->theme;
  const StoredView *v = o->stored;
  float fs = fmaxf(view_text_size(o) * 1.25f, h / 34);
  if (!v) {
    scene_text(s, FONT_SANS, fs, x, y + fs * 2, th->warn,
               "the weights-as-stored view reads the model's GGUF file: none was read for this picture");
    return;
  }
  const QuantBlock *b = &v->b;
  int hot = v->weight / b->sub;
  // heading: which tensor, type and block; what the type stores
  fit_text(s, FONT_SANS_BOLD, fs * 1.15f, x, y + fs * 1.4f, w, 0, th->text,
           scene_strf(s, "%s  ·  %s, %.3g bits a weight  ·  block %lld of %lld (row %lld, columns %lld–%lld)",
                      v->tensor, v->type, v->bits, (long long)v->block + 1, (long long)v->n_blocks,
                      (long long)v->row + 1, (long long)v->col + 1, (long long)(v->col + b->n)));
  fit_text(s, FONT_SANS, fs * 0.9f, x, y + fs * 2.8f, w, 0, th->muted,
           scene_strf(s, "%s  ·  quantized tensor %d of %d", type_line(v), v->which + 1, v->count));
  float top = y + fs * 3.6f, lw = w * 0.42f, rx = x + w * 0.46f, rw = w - (rx - x);
  // left: the codes of the block, whole sub-blocks around the worked one as large as read at half
  // size (all of them when they fit: a 32-weight block); which, said above them
  float gh = y + h - top - fs * 4.4f;
  int s0, ns;
  codes_shown(b, o, gh, hot, &s0, &ns);
  fit_text(s, FONT_SANS_BOLD, fs, x, top + fs, lw, 0, th->text,
           ns == b->n_sub
               ? scene_strf(s, "its %d codes q (%d bits: 0 … %d)", b->n, b->bits, (1 << b->bits) - 1)
               : scene_strf(s, "its codes q (%d bits: 0 … %d), sub-blocks %d–%d of %d", b->bits,
                            (1 << b->bits) - 1, s0 + 1, s0 + ns, b->n_sub));
  codes_grid(s, v, o, x, top + fs * 1.6f, lw, gh, fs, hot);
  // right: the scales as stored, the worked sub-block and weight
  scene_text(s, FONT_SANS_BOLD, fs, rx, top + fs, th->text, "its scales as the file holds them");
  float ry = top + fs * 1.3f;
  ry += scales_table(s, v, o, rx, ry, rw, fs, hot) + fs * 0.4f;
  scene_text(s, FONT_SANS_BOLD, fs, rx, ry + fs, th->text,
             b->n_sub > 1 ? scene_strf(s, "sub-block j = %d: codes → values", hot + 1) : "codes → values");
  ry += fs * 1.5f;
  ry += sub_values(s, v, o, rx, ry, rw, fs, hot) + fs * 0.3f;
  int k = v->weight;
  fit_text(s, FONT_SANS, fs, rx, ry + fs * 1.1f, rw, 0, th->text,
           scene_strf(s, "weight %d of the block, w[%lld, %lld]:  %s", k + 1, (long long)v->row + 1,
                      (long long)(v->col + k + 1), equation(v)));
  fit_text(s, FONT_MONO, fs * 1.05f, rx + fs, ry + fs * 2.4f, rw - fs, 0, th->accent, worked(s, v, k));
  ry += fs * 3.3f;
  // the whole matrix and its error (or its rounding bound)
  float mh = y + h - ry - fs * 3.3f, mw = (rw - fs * 1.5f) / 2;
  if (mh < fs * 2) return;
  float my = ry + fs * 1.9f, wm = 1e-12f;
  for (int c = 0; c < v->gh * v->gw; c++) wm = fmaxf(wm, fabsf(v->w[c]));
  matrix(s, v, o, v->w, scale_for(CMAP_DIVERGING, -wm, wm), rx, my, mw, mh, fs, "the dequantized matrix",
         scene_strf(s, "weights %.3g … %.3g, rms %.3g", v->w_lo, v->w_hi, v->w_rms));
  if (v->has_ref)
    matrix(s, v, o, v->err, scale_for(CMAP_VIRIDIS, 0, (float)fmax(v->err_max, 1e-12)), rx + mw + fs * 1.5f,
           my, mw, mh, fs, scene_strf(s, "|w − w_ref|, w_ref: %s (%s)", v->ref_file, v->ref_type),
           scene_strf(s, "rms %.3g, largest %.3g", v->err_rms, v->err_max));
  else
    matrix(s, v, o, v->step, scale_for(CMAP_VIRIDIS, 0, (float)fmax(v->half_step_max, 1e-12)),
           rx + mw + fs * 1.5f, my, mw, mh, fs, "each block's half step",
           scene_strf(s, "the rounding bound; largest %.3g", v->half_step_max));
  const char *foot1 = v->has_ref   ? "each cell: the largest error of its weights against the other file"
                      : v->note[0] ? v->note
                                   : "the file keeps no original: each weight lies within half a step of it",
             *foot2 = v->has_ref ? "the mean of each cell's weights on the left"
                      : v->note[0]
                          ? ""
                          : "(a step where its code was clipped); --compare-model F16.gguf: the real error";
  fit_text(s, FONT_SANS, fs * 0.8f, x, y + h - fs * 1.3f, lw, 0, th->muted, foot1);
  fit_text(s, FONT_SANS, fs * 0.8f, x, y + h - fs * 0.2f, lw, 0, th->muted, foot2);
}
