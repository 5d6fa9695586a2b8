// view_inside.c -- the views that look inside a pass (issue 36), drawn from inside.h's numbers:
//   lens      layers × positions, each cell the top token after that layer and its probability
//             (colour = probability), the last row the model's own prediction; under it, the rank
//             of the model's final answer at the chosen position after every layer
//   rollout   mean_h A_ℓ beside R_ℓ, the rollout up to layer ℓ (which input reaches which position)
//   headview  BertViz's head view: the tokens in two columns, a line from query to key with opacity =
//             weight, one colour per head (all heads, or the chosen one); a focused token keeps its
//             lines only
//   saliency  the sentence's words with gradient × input above each, for the prediction at the
//             chosen position (the last by default): which word drove it
//   neurons   layer ℓ's FFN units that fire most at the chosen position, each with the tokens it
//             promotes, and the first unit's activation over every token
// The layer is the step's (the last layer before the layers' steps or after them), the position
// ViewOptions.focus_row (−1: the last), the head ViewOptions.head (−1: all).
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inside.h" // defines: inside_*
#include "tex.h"    // defines: tex_draw
#include "view_internal.h"

static const char *const TITLES[INSIDE_COUNT] = {"",
                                                 "Logit lens: the prediction after every layer",
                                                 "Attention rollout: what reaches each position",
                                                 "Head view: who looks at whom",
                                                 "Saliency: which word drove the prediction",
                                                 "Neurons: the feed-forward units that fire",
                                                 "The KV cache: what generation keeps",
                                                 "Weights as stored: a quantized block"};
static const char *const TEX[INSIDE_COUNT] = {
    "",
    "\\hat p_\\ell = \\operatorname{softmax}(\\mathrm{norm}_f(h_\\ell)\\, W_{out} + b_{out})",
    "\\hat A_\\ell = \\tfrac12 \\bar A_\\ell + \\tfrac12 I,\\quad R_\\ell = \\hat A_\\ell R_{\\ell-1}",
    "A_h[i, j]:\\ \\text{line } i \\to j,\\ \\text{opacity } A_h[i, j]",
    "s_j = \\lVert \\partial \\log \\hat p[i, y] / \\partial x_j \\odot x_j \\rVert_2",
    "h = \\mathrm{act}(x W_1 + b_1),\\quad \\text{unit } n \\text{ writes } h_n W_2[n, :]",
    "\\text{bytes} = 2 \\cdot N \\cdot L \\cdot H_{kv} \\cdot d_k \\cdot 4",
    "w_k = s_j\\,(q_k - o) - m_j,\\quad j = \\lfloor k / \\text{sub} \\rfloor"};

const char *view_inside_title(InsideView k) { return k > 0 && k < INSIDE_COUNT ? TITLES[k] : ""; }
const char *view_inside_tex(InsideView k) { return k > 0 && k < INSIDE_COUNT ? TEX[k] : ""; }

// ---------------------------------------------------------------- pieces
static float label_px(const ViewOptions *o, float h) { return fmaxf(view_text_size(o) * 1.25f, h / 34); }

// A word shortened with "…" to fit maxw at size fs (into buf).
static const char *fit_word(const char *w, float fs, float maxw, char *buf, int cap) {
  snprintf(buf, (size_t)cap, "%s", w);
  if (text_width(FONT_SANS, fs, buf) <= maxw) return buf;
  int n = (int)strlen(buf);
  while (n > 1) {
    n--;
    while (n > 0 && ((unsigned char)buf[n] & 0xC0) == 0x80) n--; // a character boundary
    snprintf(buf + n, (size_t)(cap - n), "…");
    if (text_width(FONT_SANS, fs, buf) <= maxw) return buf;
  }
  return buf;
}

static const char *token(const Trace *t, int i, char *buf, int cap) {
  return trace_axis_label(t, AXIS_TOKEN, i, buf, cap);
}

// A probability as a teacher reads it: "52 %", "0.4 %", "< 0.1 %".
static const char *percent(Scene *s, float p) {
  if (p >= 0.0995f) return scene_strf(s, "%.0f %%", p * 100);
  if (p >= 0.000995f) return scene_strf(s, "%.1f %%", p * 100);
  return "< 0.1 %";
}

// A heatmap of rows × cols values v (row-major) at (x, y) with cells of cw × ch, colour by scale,
// the numbers in the cells when they fit (two significant digits).
static void heat(Scene *s, const ViewOptions *o, const float *v, int rows, int cols, float x, float y,
                 float cw, float ch, ColorScale sc) {
  uint32_t *c = scene_cells(s, x, y, cw * cols, ch * rows, rows, cols);
  if (c)
    for (int i = 0; i < rows * cols; i++) c[i] = scale_color(&sc, v[i]);
  scene_frame(s, x, y, cw * cols, ch * rows, 1, o->theme->frame);
  float nf = fminf(ch * 0.4f, cw / 2.7f); // two decimals: "0.75", "0.00" for what rounds to nothing
  if (!o->numbers || nf < 9) return;
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) {
      float val = v[i * cols + j];
      scene_text_aligned(s, FONT_SANS, nf, x + (j + 0.5f) * cw, y + (i + 0.5f) * ch + nf * 0.36f, 0.5f,
                         cmap_ink_on(scale_color(&sc, val)), scene_strf(s, "%.2f", val));
    }
}

// Token labels left of rows and above columns (turned when they do not fit flat).
static void token_axes(Scene *s, const Trace *t, const ViewOptions *o, float x, float y, float cw, float ch,
                       int i0, int L, bool rows, bool cols, float fs) { // (tokens i0 .. i0 + L - 1)
  char w[96], f[96];
  const Theme *th = o->theme;
  if (rows)
    for (int i = 0; i < L; i++)
      scene_text_aligned(s, FONT_SANS, fminf(fs, ch * 0.8f), x - fs * 0.4f, y + (i + 0.5f) * ch + fs * 0.33f,
                         1.0f, i0 + i == o->focus_row ? th->accent : th->text, token(t, i0 + i, w, sizeof w));
  if (!cols) return;
  float cf = fminf(fs, cw * 0.8f);
  bool turn = false;
  for (int j = 0; j < L; j++) turn |= text_width(FONT_SANS, cf, token(t, i0 + j, w, sizeof w)) > cw * 0.95f;
  for (int j = 0; j < L; j++) {
    token(t, i0 + j, w, sizeof w);
    if (turn)
      scene_text_turned(s, FONT_SANS, fminf(cf, cw * 0.7f), x + (j + 0.5f) * cw + cf * 0.35f, y - fs * 0.4f,
                        th->text, fit_word(w, cf, fs * 7, f, sizeof f));
    else
      scene_text_aligned(s, FONT_SANS, cf, x + (j + 0.5f) * cw, y - fs * 0.4f, 0.5f, th->text, w);
  }
}

// A view's heading at size fs, set smaller (down to 0.7 fs) when it is wider than w: never cut.
static void heading(Scene *s, const ViewOptions *o, float fs, float x, float y, float w, const char *text) {
  float tw = text_width(FONT_SANS, fs, text);
  scene_text(s, FONT_SANS, tw > w ? fmaxf(fs * 0.7f, fs * w / tw) : fs, x, y, o->theme->text, text);
}

static void caption(Scene *s, const ViewOptions *o, float fs, float x, float y, const char *text) {
  scene_text(s, FONT_SANS, fs, x, y, o->theme->muted, text);
}

static int layer_of(const Trace *t, int step) {
  int l = step >= 0 && step < t->n_steps ? t->steps[step].layer : -1;
  return l >= 0 && l < t->cfg.n_layers ? l : t->cfg.n_layers - 1;
}

static int position_of(const Trace *t, const ViewOptions *o) {
  return o->focus_row >= 0 && o->focus_row < t->L ? o->focus_row : t->L - 1;
}

static void message(Scene *s, const ViewOptions *o, float x, float y, float fs, const char *text) {
  scene_text(s, FONT_SANS, fs, x, y + fs * 2, o->theme->warn, text);
}

// ---------------------------------------------------------------- the lens, computed once per pass
// The lens is N·L·V probabilities from N products of [L, D] by the head's [D, V] (GPT-2 small at 32
// tokens: 15 GFLOP, about a quarter of a second): the window redraws on every pointer move, so the
// last lens is kept, with a key of the pass it came from — its shape and a hash of every layer's
// output and of the logits (an edit of anything the lens reads changes one of them; a pointer could
// be reused by the next pass). One entry, behind a lock: export threads may draw lenses at once.
static struct {
  pthread_mutex_t mu;
  int N, L, cols;
  uint64_t key;
  float *p;
} lens_cache = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, NULL};

static uint64_t hash_floats(uint64_t h, const TraceTensor *x) {
  const uint32_t *w = (const uint32_t *)(const void *)x->data;
  size_t n = (size_t)x->heads * x->rows * x->cols;
  for (size_t i = 0; i < n; i++) h = (h ^ w[i]) * 0x100000001b3ULL; // FNV-1a, a float at a time
  return h;
}

static uint64_t lens_key(const Trace *t) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int l = 0; l < t->cfg.n_layers; l++) h = hash_floats(h, &t->t[t->layers[l].out]);
  int z = t->logits >= 0 ? t->logits : t->class_logits;
  return z >= 0 ? hash_floats(h, &t->t[z]) : h;
}

// The lens of t, from the cache or computed into it; returns it with the cache locked (the caller
// calls lens_release when done drawing), or NULL (unlocked) with a message.
static const float *lens_get(const Trace *t, Err *err) {
  int N = t->cfg.n_layers, L = t->L, cols = inside_lens_cols(t);
  uint64_t key = lens_key(t);
  pthread_mutex_lock(&lens_cache.mu);
  if (lens_cache.p && lens_cache.N == N && lens_cache.L == L && lens_cache.cols == cols &&
      lens_cache.key == key)
    return lens_cache.p;
  free(lens_cache.p);
  lens_cache.p = malloc(sizeof(float) * (size_t)inside_lens_floats(t));
  lens_cache.N = lens_cache.L = lens_cache.cols = 0;
  if (!lens_cache.p || !inside_lens(t, lens_cache.p, err)) {
    if (!lens_cache.p) err_set(err, "out of memory");
    free(lens_cache.p);
    lens_cache.p = NULL;
    pthread_mutex_unlock(&lens_cache.mu);
    return NULL;
  }
  lens_cache.N = N, lens_cache.L = L, lens_cache.cols = cols, lens_cache.key = key;
  return lens_cache.p;
}
static void lens_release(void) { pthread_mutex_unlock(&lens_cache.mu); }

// ---------------------------------------------------------------- the logit lens
static void lens(Scene *s, const Trace *t, const ViewOptions *o, int i0, int n, float x, float y, float w,
                 float h) {
  const Theme *th = o->theme;
  int N = t->cfg.n_layers, L = t->L, cols = inside_lens_cols(t);
  float fs = label_px(o, h);
  Err err = {0};
  const float *p = lens_get(t, &err);
  if (!p) {
    message(s, o, x, y, fs, err.msg);
    return;
  }
  int pos = position_of(t, o);
  char wbuf[96], fbuf[96];
  if (t->pred < 0) { // a classifier: layers × classes
    float lw = fs * 6, cw = fminf((w - lw) / cols, fs * 9), ch = fminf((h - fs * 6) / N, fs * 3.2f);
    float gx = x + lw, gy = y + fs * 2.5f;
    // the formula typeset: W_c and b_c have no Unicode subscript c to write them in plain text
    const char *words = "the class scores read after each layer: ";
    caption(s, o, fs, x, y + fs, words);
    tex_draw(s, "\\mathrm{softmax}(W_c \\cdot \\mathrm{mean}(\\mathrm{LN}(h_\\ell)) + b_c)", fs * 1.05f,
             false, x + text_width(FONT_SANS, fs, words), y + fs, o->theme->muted);
    ViewOptions on = *o;
    on.numbers = true;
    float *v = malloc(sizeof(float) * (size_t)N * cols);
    for (int l = 0; v && l < N; l++)
      memcpy(v + (size_t)(N - 1 - l) * cols, p + (size_t)l * cols, sizeof(float) * cols);
    if (v) heat(s, &on, v, N, cols, gx, gy, cw, ch, scale_for(CMAP_VIRIDIS, 0, 1));
    free(v);
    for (int l = 0; l < N; l++)
      scene_text_aligned(s, FONT_SANS, fs, gx - fs * 0.4f, gy + (N - 1 - l + 0.5f) * ch + fs * 0.33f, 1.0f,
                         th->text, scene_strf(s, "layer %d", l + 1));
    for (int c = 0; c < cols; c++)
      scene_text_aligned(s, FONT_SANS, fs, gx + (c + 0.5f) * cw, gy - fs * 0.4f, 0.5f, th->text,
                         t->model->class_names ? t->model->class_names[c] : scene_strf(s, "class %d", c + 1));
    lens_release();
    return;
  }
  // rows: layer N at the top, layer 1 at the bottom (reading up the stack)
  int shown = N < 8 ? N : 8; // the bars below: the last layers' top words at the chosen position
  float lw = text_width(FONT_SANS, fs, "layer 00") + fs, bottom = fs * 5.5f + shown * fs * 1.6f;
  float cw = fminf((w - lw - fs) / n, fs * 8), ch = fminf((h - bottom - fs * 3) / N, fs * 4.2f);
  float gx = x + lw, gy = y + fs * 2.2f;
  caption(s, o, fs * 0.9f, x, y + fs,
          "each cell: the likeliest next word after that layer, through the model's own final norm and head");
  float word_fs = fminf(fs * 1.2f, ch * 0.42f), pct_fs = word_fs * 0.85f;
  for (int l = 0; l < N; l++) {
    float ry = gy + (N - 1 - l) * ch;
    for (int i = i0; i < i0 + n; i++) { // (the window of a long sentence's tokens)
      const float *row = p + ((size_t)l * L + i) * cols;
      int best = 0;
      for (int v = 1; v < cols; v++)
        if (row[v] > row[best]) best = v;
      uint32_t c = cmap_color(CMAP_VIRIDIS, row[best]), ink = cmap_ink_on(c);
      float cx = gx + (i - i0) * cw;
      scene_rect(s, cx, ry, cw, ch, c);
      scene_frame(s, cx, ry, cw, ch, i == pos ? 3 : 1, i == pos ? th->accent : th->bg);
      const char *word = fit_word(t->model->vocab.words[best], word_fs, cw * 0.92f, fbuf, sizeof fbuf);
      bool two = ch > word_fs * 2.4f;
      scene_text_aligned(s, FONT_SANS, word_fs, cx + cw / 2,
                         ry + (two ? ch * 0.45f : ch * 0.5f + word_fs * 0.35f), 0.5f, ink, word);
      if (two)
        scene_text_aligned(s, FONT_SANS, pct_fs, cx + cw / 2, ry + ch * 0.45f + pct_fs * 1.3f, 0.5f, ink,
                           percent(s, row[best]));
    }
    scene_text_aligned(s, FONT_SANS, fs, gx - fs * 0.5f, ry + ch / 2 + fs * 0.33f, 1.0f, th->text,
                       scene_strf(s, "layer %d", l + 1));
  }
  // the positions' tokens under the grid
  float ty = gy + N * ch + fs * 1.3f;
  for (int i = i0; i < i0 + n; i++)
    scene_text_aligned(
        s, FONT_SANS, fminf(fs, cw * 0.45f), gx + (i - i0 + 0.5f) * cw, ty, 0.5f,
        i == pos ? th->accent : th->text,
        fit_word(token(t, i, wbuf, sizeof wbuf), fminf(fs, cw * 0.45f), cw * 0.95f, fbuf, sizeof fbuf));
  // the rank of the final answer at pos after every layer
  const float *fin = p + ((size_t)(N - 1) * L + pos) * cols;
  int ans = 0;
  for (int v = 1; v < cols; v++)
    if (fin[v] > fin[ans]) ans = v;
  char line[512];
  int k = snprintf(line, sizeof line, "after “%s” the model says “%s”; its rank after each layer:",
                   token(t, pos, wbuf, sizeof wbuf), t->model->vocab.words[ans]);
  for (int l = 0; l < N && k < (int)sizeof line - 16; l++) {
    const float *row = p + ((size_t)l * L + pos) * cols;
    int rank = 1;
    for (int v = 0; v < cols; v++) rank += row[v] > row[ans];
    k += snprintf(line + k, sizeof line - (size_t)k, "%s %d", l ? "," : "", rank);
  }
  scene_text(s, FONT_SANS, fs, x, ty + fs * 2.2f, th->text, line);
  // the chosen position's three most likely words after each of the last `shown` layers, as bars
  float by = ty + fs * 3.6f, colw = (w - lw) / 3, bw = fminf(colw * 0.45f, fs * 12);
  for (int r = 0; r < shown; r++) {
    int l = N - shown + r;
    const float *row = p + ((size_t)l * L + pos) * cols;
    int top3[3] = {-1, -1, -1};
    for (int v = 0; v < cols; v++)
      for (int q = 0; q < 3; q++)
        if (top3[q] < 0 || row[v] > row[top3[q]]) {
          for (int z = 2; z > q; z--) top3[z] = top3[z - 1];
          top3[q] = v;
          break;
        }
    float ry = by + r * fs * 1.6f;
    scene_text_aligned(s, FONT_SANS, fs * 0.9f, x + lw - fs * 0.5f, ry + fs * 0.9f, 1.0f, th->text,
                       scene_strf(s, "layer %d", l + 1));
    for (int q = 0; q < 3 && top3[q] >= 0; q++) {
      float bx = x + lw + q * colw, pr = row[top3[q]];
      scene_rect(s, bx, ry + fs * 0.25f, fmaxf(1, bw * pr), fs * 0.9f, cmap_color(CMAP_VIRIDIS, pr));
      scene_frame(s, bx, ry + fs * 0.25f, bw, fs * 0.9f, 1, th->frame);
      scene_text(s, FONT_SANS, fs * 0.9f, bx + bw + fs * 0.4f, ry + fs * 0.95f, th->text,
                 scene_strf(s, "%.14s %s", t->model->vocab.words[top3[q]], percent(s, pr)));
    }
  }
  lens_release();
}

// ---------------------------------------------------------------- rollout
static void rollout(Scene *s, const Trace *t, const ViewOptions *o, int l, int i0, int n, float x, float y,
                    float w, float h) {
  int L = t->L, N = t->cfg.n_layers, H = t->cfg.H;
  float fs = label_px(o, h);
  float *R = malloc(sizeof(float) * (size_t)N * L * L), *mean = malloc(sizeof(float) * (size_t)L * L);
  Err err = {0};
  if (!R || !mean || !inside_rollout(t, R, &err)) {
    message(s, o, x, y, fs, R && mean ? err.msg : "out of memory");
    free(R), free(mean);
    return;
  }
  const TraceTensor *A = &t->t[t->layers[l].A];
  for (int i = 0; i < L; i++)
    for (int j = 0; j < L; j++) {
      double m = 0;
      for (int hh = 0; hh < H; hh++) m += trace_at(A, hh, i, j);
      mean[i * L + j] = (float)(m / H);
    }
  // a window of a long sentence's tokens: its rows and columns of both (a row sums to 1 over all L)
  float *Rl = R + (size_t)l * L * L;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      mean[i * n + j] = mean[(i0 + i) * L + i0 + j], Rl[i * n + j] = Rl[(i0 + i) * L + i0 + j];
  char wbuf[96];
  float longest = 0;
  for (int i = i0; i < i0 + n; i++)
    longest = fmaxf(longest, text_width(FONT_SANS, fs, token(t, i, wbuf, sizeof wbuf)));
  float lw = longest + fs, top = fs * 6;
  float side = fminf((w - 2 * lw - fs * 3) / 2, h - top - fs * 3), cell = side / n;
  float ax = x + lw, bx = ax + side + fs * 3 + lw, gy = y + top;
  ColorScale sc = scale_for(CMAP_VIRIDIS, 0, 1);
  scene_text(s, FONT_SANS, fs * 1.1f, ax, y + fs * 1.4f, o->theme->text,
             scene_strf(s, "Ā of layer %d (mean of its %d head%s)", l + 1, H, H == 1 ? "" : "s"));
  scene_text(s, FONT_SANS, fs * 1.1f, bx, y + fs * 1.4f, o->theme->text,
             scene_strf(s, "R after layer %d: the rollout up to it", l + 1));
  caption(
      s, o, fs * 0.85f, ax, y + fs * 2.8f,
      n < L
          ? scene_strf(s,
                       "rows: the position; columns: the input token whose information reaches it; "
                       "every row sums to 1 over all %d columns",
                       L)
          : "rows: the position; columns: the input token whose information reaches it; every row sums to 1");
  heat(s, o, mean, n, n, ax, gy, cell, cell, sc);
  heat(s, o, Rl, n, n, bx, gy, cell, cell, sc);
  token_axes(s, t, o, ax, gy, cell, cell, i0, n, true, true, fminf(fs, fmaxf(cell * 0.8f, 9)));
  token_axes(s, t, o, bx, gy, cell, cell, i0, n, true, true, fminf(fs, fmaxf(cell * 0.8f, 9)));
  free(R), free(mean);
}

// ---------------------------------------------------------------- head view
static void headview(Scene *s, const Trace *t, const ViewOptions *o, int l, int i0, int L, float x, float y,
                     float w, float h) { // (tokens i0 .. i0 + L - 1: a window of a long sentence's)
  const Theme *th = o->theme;
  int H = t->cfg.H;
  float fs = label_px(o, h);
  const TraceTensor *A = &t->t[t->layers[l].A];
  int h0 = o->head >= 0 && o->head < H ? o->head : 0, h1 = o->head >= 0 && o->head < H ? o->head + 1 : H;
  float rowh = fminf((h - fs * 8) / L, fs * 3), tf = fminf(fs * 1.2f, rowh * 0.75f);
  char wbuf[96];
  float longest = 0;
  for (int i = 0; i < L; i++)
    longest = fmaxf(longest, text_width(FONT_SANS, tf, token(t, i0 + i, wbuf, sizeof wbuf)));
  float gap = fminf(w * 0.4f, fs * 26), lx = x + (w - gap) / 2, rx = lx + gap, gy = y + fs * 4.5f;
  scene_text(
      s, FONT_SANS, fs * 1.1f, x, y + fs * 1.4f, th->text,
      o->head >= 0
          ? scene_strf(s, "layer %d, head %d: each token (left) to the tokens it attends to", l + 1, h0 + 1)
          : scene_strf(
                s, "layer %d, all %d heads (a colour each): each token (left) to the tokens it attends to",
                l + 1, H));
  caption(s, o, fs * 0.85f, x, y + fs * 2.8f,
          "a line as opaque as the weight Aₕ[i, j]; weights under 0.01 not drawn");
  for (int hh = h0; hh < h1; hh++) {
    uint32_t c = theme_head(th, hh) & 0x00FFFFFFu;
    for (int i = 0; i < L; i++) {
      if (o->focus_row >= 0 && i0 + i != o->focus_row) continue;
      for (int j = 0; j < L; j++) {
        float a = trace_at(A, hh, i0 + i, i0 + j);
        if (!(a > 0.01f)) continue; // masked or negligible: no line
        unsigned alpha = (unsigned)fminf(255, a * 255 + 0.5f);
        scene_line(s, lx + fs * 0.4f, gy + (i + 0.5f) * rowh, rx - fs * 0.4f, gy + (j + 0.5f) * rowh,
                   fmaxf(1.5f, fs * 0.18f), c | alpha << 24);
      }
    }
  }
  for (int i = 0; i < L; i++) {
    uint32_t ink = i0 + i == o->focus_row ? th->accent : th->text;
    token(t, i0 + i, wbuf, sizeof wbuf);
    scene_text_aligned(s, FONT_SANS, tf, lx, gy + (i + 0.5f) * rowh + tf * 0.33f, 1.0f, ink, wbuf);
    scene_text_aligned(s, FONT_SANS, tf, rx, gy + (i + 0.5f) * rowh + tf * 0.33f, 0.0f, th->text, wbuf);
  }
  // the heads' colours, as a key
  float ky = gy + L * rowh + fs * 1.6f, kx = x;
  for (int hh = h0; hh < h1; hh++) {
    const char *lab = scene_strf(s, "head %d", hh + 1);
    scene_rect(s, kx, ky - fs * 0.7f, fs * 1.4f, fs * 0.35f, theme_head(th, hh));
    scene_text(s, FONT_SANS, fs * 0.9f, kx + fs * 1.7f, ky, th->text, lab);
    kx += fs * 2.4f + text_width(FONT_SANS, fs * 0.9f, lab);
  }
  caption(s, o, fs * 0.85f, x, ky + fs * 1.6f,
          o->focus_row >= 0 ? "the focused token's lines only (Shift+arrows move it)"
                            : "keys 1–9 pick a head, g all heads; Shift+arrows keep one token's lines");
}

// ---------------------------------------------------------------- saliency
// The saliency is a backward pass through the whole model: kept for the last pass and position as
// the lens is (a copy out: L floats), so that moving the pointer does not run it again.
static struct {
  pthread_mutex_t mu;
  int L, pos, pos_out, tok;
  uint64_t key;
  float *sal;
} sal_cache = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, 0, NULL};

static bool saliency_get(const Trace *t, int pos, float *sal, int *pos_out, int *tok, Err *err) {
  uint64_t key = lens_key(t);
  pthread_mutex_lock(&sal_cache.mu);
  bool hit = sal_cache.sal && sal_cache.L == t->L && sal_cache.pos == pos && sal_cache.key == key;
  if (!hit) {
    float *keep = realloc(sal_cache.sal, sizeof(float) * (size_t)t->L);
    if (keep) sal_cache.sal = keep;
    sal_cache.L = 0;
    if (!keep || !inside_saliency(t, pos, -1, sal_cache.sal, &sal_cache.pos_out, &sal_cache.tok, err)) {
      if (!keep) err_set(err, "out of memory");
      pthread_mutex_unlock(&sal_cache.mu);
      return false;
    }
    sal_cache.L = t->L, sal_cache.pos = pos, sal_cache.key = key;
  }
  memcpy(sal, sal_cache.sal, sizeof(float) * (size_t)t->L);
  *pos_out = sal_cache.pos_out, *tok = sal_cache.tok;
  pthread_mutex_unlock(&sal_cache.mu);
  return true;
}

static void saliency(Scene *s, const Trace *t, const ViewOptions *o, int i0, int n, float x, float y, float w,
                     float h) {
  const Theme *th = o->theme;
  int L = t->L, pos = position_of(t, o), tok = -1;
  float fs = label_px(o, h);
  float *sal = malloc(sizeof(float) * (size_t)L);
  Err err = {0};
  if (!sal || !saliency_get(t, pos, sal, &pos, &tok, &err)) {
    message(s, o, x, y, fs, sal ? err.msg : "out of memory");
    free(sal);
    return;
  }
  char wbuf[96], fbuf[96];
  heading(s, o, fs * 1.2f, x, y + fs * 1.6f, w,
          scene_strf(s, "after “%s” the model says “%s” (%s): how much each input word pushed it there",
                     token(t, pos, wbuf, sizeof wbuf), t->model->vocab.words[tok],
                     percent(s, t->t[t->pred].data[(size_t)pos * t->cfg.V + tok])));
  caption(s, o, fs * 0.85f, x, y + fs * 3.0f,
          "gradient × input: ‖∂ log p̂ / ∂xⱼ ⊙ xⱼ‖ over the embedding of word j, the shares summing to 100 %");
  float top = 0;
  for (int j = 0; j < L; j++) top = fmaxf(top, sal[j]);
  float cw = fminf(w / n, fs * 9), bx = x + (w - cw * n) / 2, base = y + h - fs * 4,
        barh = base - (y + fs * 6);
  for (int j = i0; j < i0 + n; j++) { // (the window of a long sentence's tokens; shares of all L)
    float v = top > 0 ? sal[j] / top : 0, bh = barh * v, cx = bx + (j - i0) * cw;
    uint32_t c = cmap_color(CMAP_VIRIDIS, v);
    scene_rect(s, cx + cw * 0.12f, base - bh, cw * 0.76f, bh, c);
    scene_text_aligned(s, FONT_SANS, fminf(fs, cw * 0.3f), cx + cw / 2, base - bh - fs * 0.4f, 0.5f, th->text,
                       percent(s, sal[j]));
    float wf = fminf(fs * 1.15f, cw * 0.4f);
    scene_rect(s, cx + 2, base + fs * 0.4f, cw - 4, fs * 1.9f, c);
    scene_text_aligned(s, FONT_SANS, wf, cx + cw / 2, base + fs * 1.7f, 0.5f, cmap_ink_on(c),
                       fit_word(token(t, j, wbuf, sizeof wbuf), wf, cw * 0.9f, fbuf, sizeof fbuf));
    if (j == pos) scene_frame(s, cx + 2, base + fs * 0.4f, cw - 4, fs * 1.9f, 3, th->accent);
  }
  free(sal);
}

// ---------------------------------------------------------------- neurons
static void neurons(Scene *s, const Trace *t, const ViewOptions *o, int l, int i0, int wn, float x, float y,
                    float w, float h) {
  const Theme *th = o->theme;
  enum { K = 8, P = 4 };
  int pos = position_of(t, o), idx[K], ids[P];
  float act[K], lg[P], fs = label_px(o, h);
  int n = inside_top_neurons(t, l, pos, K, idx, act);
  char wbuf[96];
  heading(s, o, fs * 1.2f, x, y + fs * 1.6f, w,
          scene_strf(s, "layer %d: the feed-forward units that fire most for “%s” (of %d)", l + 1,
                     token(t, pos, wbuf, sizeof wbuf), t->cfg.F));
  caption(s, o, fs * 0.85f, x, y + fs * 3.0f,
          t->pred >= 0
              ? "each unit's value hₙ, and the tokens its row of W₂ promotes through the final norm and "
                "head"
              : "each unit's value hₙ");
  float top = n > 0 ? fmaxf(fabsf(act[0]), 1e-6f) : 1, rowh = fminf((h * 0.62f - fs * 4) / K, fs * 2.3f);
  float lw = text_width(FONT_SANS, fs, "unit 0000") + fs, barw = w * 0.32f, gy = y + fs * 4.5f;
  for (int k = 0; k < n; k++) {
    float ry = gy + k * rowh, v = act[k] / top;
    scene_text_aligned(s, FONT_SANS, fs, x + lw - fs * 0.5f, ry + rowh * 0.5f + fs * 0.33f, 1.0f, th->text,
                       scene_strf(s, "unit %d", idx[k] + 1));
    scene_rect(s, x + lw, ry + rowh * 0.15f, fmaxf(1, barw * fabsf(v)), rowh * 0.7f, theme_head(th, 0));
    scene_text(s, FONT_SANS, fs, x + lw + barw * fabsf(v) + fs * 0.4f, ry + rowh * 0.5f + fs * 0.33f,
               th->text, scene_strf(s, "%.3g", act[k]));
    int m = inside_neuron_tokens(t, l, idx[k], P, ids, lg);
    if (m > 0) {
      char line[256];
      int at = snprintf(line, sizeof line, "promotes:");
      for (int q = 0; q < m && at < (int)sizeof line - 40; q++)
        at += snprintf(line + at, sizeof line - (size_t)at, "%s %.24s", q ? "," : "",
                       t->model->vocab.words[ids[q]]);
      scene_text(s, FONT_SANS, fs, x + lw + barw + fs * 4, ry + rowh * 0.5f + fs * 0.33f, th->muted, line);
    }
  }
  if (n == 0) return;
  // the first unit over every token of the sentence
  const TraceTensor *hid = &t->t[t->layers[l].ffn_hidden];
  int L = t->L; // (the bars: the window of a long sentence's tokens, on the scale of all L)
  float by = gy + K * rowh + fs * 2.5f, base = y + h - fs * 2.2f, bh = base - by - fs * 2;
  scene_text(s, FONT_SANS, fs, x, by, th->text, scene_strf(s, "unit %d over the sentence:", idx[0] + 1));
  float mx = 1e-6f;
  for (int i = 0; i < L; i++) mx = fmaxf(mx, fabsf(trace_at(hid, 0, i, idx[0])));
  float cw = fminf((w - lw) / wn, fs * 8);
  for (int i = i0; i < i0 + wn; i++) {
    float v = trace_at(hid, 0, i, idx[0]) / mx, cx = x + lw + (i - i0) * cw, hb = bh * fabsf(v) * 0.8f;
    scene_rect(s, cx + cw * 0.15f, base - fs * 1.4f - hb, cw * 0.7f, hb,
               i == pos ? th->accent : theme_head(th, 0));
    scene_text_aligned(s, FONT_SANS, fminf(fs, cw * 0.4f), cx + cw / 2, base, 0.5f, th->text,
                       token(t, i, wbuf, sizeof wbuf));
  }
}

void view_inside_render(Scene *s, const Trace *t, int step, const ViewOptions *o, float x, float y, float w,
                        float h, ViewLayout *out) {
  lay_begin(out, o, x, y, w, h);
  out->result = -1;
  float fs = label_px(o, h);
  if (!inside_view_available(t, o->inside)) {
    message(s, o, x, y, fs,
            scene_strf(s, "the %s view needs %s", inside_view_name(o->inside),
                       o->inside == INSIDE_SALIENCY ? "a model with a prediction head and an unedited pass"
                       : o->inside == INSIDE_KVCACHE
                           ? "a causal model with a prediction head (one that generates)"
                       : o->inside == INSIDE_STORED
                           ? "a model read from a quantized GGUF file (Q8_0, Q4_0, Q4_K ...)"
                       : t->T > 0 ? "an encoder: an encoder-decoder's is not drawn yet"
                                  : "a prediction head or a classifier"));
    return;
  }
  int l = layer_of(t, step);
  float px = x + fs, pw = w - 2 * fs;
  // a sentence of more than VIEW_TOKENS_READABLE tokens: a window of them around the position the
  // view is about (the focus, else the last token), said on a line under the view
  ViewOptions wo = *o;
  if (wo.tok_first < 0) wo.focus_row = position_of(t, o);
  int i0, n;
  float nf = label_px(o, h) * 0.85f;
  view_token_window(t, &wo, &i0, &n);
  if (o->inside == INSIDE_KVCACHE) // a row per token: as many as it has room to label (rows 14 px)
    view_token_window_fit(t, &wo, view_kvcache_rows(o, h - nf * 1.8f), &i0, &n);
  if (n > 0) {
    h -= nf * 1.8f;
    out->tok_first = i0, out->tok_shown = n, out->tok_total = t->L;
    const char *note = scene_strf(s, "tokens %d–%d of %d shown%s%s", i0 + 1, i0 + n, t->L,
                                  o->tok_keys ? " · " : "", o->tok_keys ? o->tok_keys : "");
    scene_text_aligned(s, FONT_SANS, nf, x + w / 2, y + h + nf * 1.3f, 0.5f, o->theme->text, note);
  } else {
    i0 = 0, n = t->L;
  }
  switch (o->inside) {
  case INSIDE_LENS: lens(s, t, o, i0, n, px, y, pw, h); break;
  case INSIDE_ROLLOUT: rollout(s, t, o, l, i0, n, px, y, pw, h); break;
  case INSIDE_HEADVIEW: headview(s, t, o, l, i0, n, px, y, pw, h); break;
  case INSIDE_SALIENCY: saliency(s, t, o, i0, n, px, y, pw, h); break;
  case INSIDE_NEURONS: neurons(s, t, o, l, i0, n, px, y, pw, h); break;
  case INSIDE_KVCACHE: view_kvcache(s, t, o, i0, n, px, y, pw, h); break;
  case INSIDE_STORED: view_stored(s, o, px, y, pw, h); break;
  default: break;
  }
}
