// axislabels.c -- the word labels of a matrix axis: their size, their direction, which entries
// are named and where (see axislabels.h for the rule).
#include "axislabels.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "text.h" // defines: text_width

#define ALL_UP_TO AXL_ALL_UP_TO

static const char *word(const AxisSpec *sp, int i, char *buf, int cap) {
  return trace_axis_label(sp->trace, sp->axis, sp->first + i, buf, cap);
}

// The widest label at size fs among the first 512 entries, measured.
static float measure_widest(const AxisSpec *sp, float fs) {
  char buf[96];
  float w = 0;
  for (int k = 0; k < sp->n && k < AXL_MAX; k++)
    w = fmaxf(w, text_width(FONT_SANS, fs, word(sp, k, buf, sizeof buf)));
  return w;
}

// The widest label at size fs, remembered: the margins ask for it thousands of times per picture
// (the layout tries sizes), and measuring up to 512 labels each time was a quarter of an export.
// An answer is keyed by the axis, its length, the size and, for an axis of words, a fingerprint
// of its words (FNV-1a over the words, cheap next to formatting and measuring them), so a new sentence or
// model at the same address is measured anew. Per thread: exports draw pictures on several.
static uint64_t words_print(const AxisSpec *sp) {
  uint64_t h = (1469598103934665603ull ^ (uint64_t)sp->first) * 1099511628211ull;
  for (int k = 0; k < sp->n && k < AXL_MAX; k++) { // (nothing for a numbered axis: n says it all)
    const char *c = trace_axis_word(sp->trace, sp->axis, sp->first + k);
    if (!c) break;
    for (; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    h = (h ^ 0xFF) * 1099511628211ull; // (0xFF is never a byte of UTF-8: labels stay apart)
  }
  return h;
}

static float widest(const AxisSpec *sp, float fs) {
  uint64_t h = words_print(sp);
  enum { SLOTS = 64 };
  static _Thread_local struct {
    uint64_t h;
    TraceAxis axis;
    int n;
    float fs, w;
    bool used;
  } memo[SLOTS];
  static _Thread_local int next;
  for (int i = 0; i < SLOTS; i++)
    if (memo[i].used && memo[i].h == h && memo[i].axis == sp->axis && memo[i].n == sp->n && memo[i].fs == fs)
      return memo[i].w;
  float w = measure_widest(sp, fs);
  memo[next].h = h, memo[next].axis = sp->axis, memo[next].n = sp->n, memo[next].fs = fs, memo[next].w = w;
  memo[next].used = true;
  next = (next + 1) % SLOTS;
  return w;
}

typedef struct {
  float lf;
  bool turned, all; // all: every entry at its own cell
  bool stagger;     // every other label on a second tier: rows' further left, columns' turned ones
                    // raised above the first tier's tops (the 22 columns of a 150-pixel matrix)
} Size;

// The size and direction of the labels, and whether every entry gets one at its cell.
static Size decide(const AxisSpec *sp) {
  float pitch = sp->len / (float)(sp->n > 0 ? sp->n : 1), fs = sp->fs;
  float floor = fminf(fs, sp->floor), least = fminf(floor, sp->least);
  // a vocabulary's chosen words: horizontal, moved apart where they touch
  Size chosen = {fmaxf(floor, fs * (sp->cols ? 0.85f : 0.8f)), false, false, false};
  if (sp->cols) {
    if (sp->n <= AXL_MAX && widest(sp, fs) <= pitch * 0.95f) return (Size){fs, false, true, false};
    float lf = fminf(fs, pitch / 1.15f);
    if (lf >= floor && sp->n <= AXL_MAX) return (Size){lf, true, true, false};
    if (sp->vocab) return chosen;
    if (lf >= least && sp->n <= ALL_UP_TO) return (Size){lf, true, true, false};
    // two tiers of turned labels: twice the room each (not for three columns or fewer: those are
    // named side by side past the matrix's ends, below)
    float lf2 = fminf(floor, 2 * pitch / 1.05f);
    if (lf2 >= least && sp->n <= ALL_UP_TO && sp->n >= 4 && !sp->one_tier)
      return (Size){lf2, true, true, true};
    return (Size){floor, true, false, false};
  }
  float lf = fminf(fs, fmaxf(pitch * 0.8f, fminf(floor, pitch / 1.05f)));
  if (lf >= floor && sp->n <= AXL_MAX) return (Size){lf, false, true, false};
  if (sp->vocab) return chosen;
  if (lf >= least && sp->n <= ALL_UP_TO) return (Size){lf, false, true, false};
  float lf2 = fminf(floor, 2 * pitch / 1.05f); // two columns of labels: twice the room each
  if (lf2 >= least && sp->n <= ALL_UP_TO) return (Size){lf2, false, true, true};
  return (Size){floor, false, false, false};
}

bool axis_labels_partial(const AxisSpec *sp) { return !sp->vocab && !decide(sp).all; }

static void plan(const AxisSpec *sp, AxisLabels *out);

// The room a few turned column labels take: the longest of those placed (at the size they are
// placed at, which may be `least`), and their leaders' room. Placing them is what measures them:
// the widest word of the whole axis at `floor` reserved a third more than they took (a compare
// view's grids of a long sentence lost their height to it).
// (Remembered: the layout asks for the same axis many times while it fits a picture.)
static float turned_few_depth(const AxisSpec *sp) {
  // (keyed as widest's answers are, with what else decides the plan: the length, the sizes, the focus;
  // the words a step prefers make no key: with them, measured each time)
  typedef struct {
    uint64_t h;
    TraceAxis axis;
    int n, first, focus;
    float len, fs, floor, least;
  } Key;
  enum { SLOTS = 32 };
  static _Thread_local struct {
    Key key;
    float depth;
    bool used;
  } memo[SLOTS];
  static _Thread_local int next;
  Key key;
  memset(&key, 0, sizeof key); // (padding too: keys compare as bytes)
  key.h = words_print(sp), key.axis = sp->axis, key.n = sp->n, key.first = sp->first, key.focus = sp->focus;
  key.len = sp->len, key.fs = sp->fs, key.floor = sp->floor, key.least = sp->least;
  bool keyed = sp->n_prefer == 0;
  for (int k = 0; keyed && k < SLOTS; k++)
    if (memo[k].used && !memcmp(&memo[k].key, &key, sizeof key)) return memo[k].depth;
  static _Thread_local AxisLabels al;
  plan(sp, &al);
  float w = 0; // (measured: the labels of the most characters, and of one fewer)
  size_t most = 0;
  for (int k = 0; k < al.n; k++) most = strlen(al.text[k]) > most ? strlen(al.text[k]) : most;
  for (int k = 0; k < al.n; k++)
    if (strlen(al.text[k]) + 1 >= most) w = fmaxf(w, text_width(FONT_SANS, al.lf, al.text[k]));
  float depth = fminf(w, 7 * sp->fs) + sp->fs * 1.2f;
  if (keyed) {
    memo[next].key = key, memo[next].depth = depth, memo[next].used = true;
    next = (next + 1) % SLOTS;
  }
  return depth;
}

float axis_labels_depth(const AxisSpec *sp) {
  Size z = decide(sp);
  if (sp->cols && z.turned && !z.all && !sp->vocab) return turned_few_depth(sp);
  float w = widest(sp, z.lf);
  if (!z.all && !sp->vocab) w += text_width(FONT_SANS, z.lf, "00 "); // "12 walks"
  if (!sp->cols) return (z.stagger ? 2 : 1) * fminf(w, 12 * sp->fs) + (z.stagger ? z.lf * 0.6f : 0) + 10;
  if (!z.turned) return sp->fs * 1.35f;
  if (z.stagger) return 2 * fminf(w, 7 * sp->fs) + z.lf * 0.6f + sp->fs * 0.5f;
  return fminf(w, 7 * sp->fs) + sp->fs * (z.all ? 0.5f : 1.2f); // leaders' room when a few are named
}

// The room a label takes along the axis.
static float size_along(const AxisSpec *sp, const Size *z, const char *s) {
  if (sp->cols && !z->turned) return text_width(FONT_SANS, z->lf, s) + z->lf * 0.6f;
  return z->lf * 1.15f;
}

// Entry i labelled at its cell ("3 walks") when that is clear of the labels placed; true if it is.
static bool place(const AxisSpec *sp, AxisLabels *out, int i, float pitch, float slot) {
  float a = (i + 0.5f) * pitch;
  if (out->n >= AXL_MAX) return false;
  for (int k = 0; k < out->n; k++)
    if (out->idx[k] == i)
      return true;
    else if (fabsf(out->at[k] - a) < slot)
      return false;
  char buf[96];
  out->idx[out->n] = i, out->at[out->n] = a;
  snprintf(out->text[out->n], sizeof out->text[0], "%d %s", sp->first + i + 1, word(sp, i, buf, sizeof buf));
  out->n++;
  return true;
}

// Entry i named for spreading: its cell's centre, its room along the axis.
static void add(const AxisSpec *sp, AxisLabels *out, int i, float pitch, float slot, float *anchor,
                float *size) {
  char buf[96];
  anchor[out->n] = (i + 0.5f) * pitch, size[out->n] = slot, out->idx[out->n] = i;
  snprintf(out->text[out->n], sizeof out->text[0], "%d %s", sp->first + i + 1, word(sp, i, buf, sizeof buf));
  out->n++;
}

// Word w labelled at the first of its places that is clear; false when it finds none.
static bool place_word(const AxisSpec *sp, AxisLabels *out, const char *w, float pitch, float slot) {
  char buf[96];
  for (int k = 0; k < out->n; k++)
    if (!strcmp(word(sp, out->idx[k], buf, sizeof buf), w)) return true;
  for (int i = 0; i < sp->n; i++)
    if (!strcmp(word(sp, i, buf, sizeof buf), w) && place(sp, out, i, pitch, slot)) return true;
  return false;
}

// The candidates' labels moved apart where they touch: runs of touching labels are packed side by
// side and centred on their cells' mean, within [lo, hi]; runs that then touch are merged.
static void spread(AxisLabels *out, const float *anchor, const float *size, float lo, float hi) {
  int n = out->n, order[AXL_MAX], start[AXL_MAX], nc = 0;
  for (int k = 0; k < n; k++) order[k] = k;
  for (int a = 1; a < n; a++) // by anchor (insertion sort: n is small)
    for (int b = a; b > 0 && anchor[order[b]] < anchor[order[b - 1]]; b--) {
      int q = order[b];
      order[b] = order[b - 1], order[b - 1] = q;
    }
  float left[AXL_MAX]; // each run's left end
  for (int k = 0; k < n; k++) start[nc] = k, nc++;
  for (bool merged = true; merged;) {
    merged = false;
    for (int c = 0; c < nc; c++) { // place each run
      int e = c + 1 < nc ? start[c + 1] : n;
      float total = 0, off = 0, sum = 0;
      for (int k = start[c]; k < e; k++) total += size[order[k]];
      for (int k = start[c]; k < e; k++) // the run's left end that centres its labels on their cells
        sum += anchor[order[k]] - off - size[order[k]] / 2, off += size[order[k]];
      float l = sum / (float)(e - start[c]);
      left[c] = fminf(fmaxf(l, lo), hi - total);
    }
    for (int c = 0; c + 1 < nc && !merged; c++) {
      int e = start[c + 1];
      float right = left[c];
      for (int k = start[c]; k < e; k++) right += size[order[k]];
      if (right > left[c + 1] + 0.01f) { // touching: one run
        for (int q = c + 1; q + 1 < nc; q++) start[q] = start[q + 1];
        nc--, merged = true;
      }
    }
  }
  for (int c = 0; c < nc; c++) {
    int e = c + 1 < nc ? start[c + 1] : n;
    float x = left[c];
    for (int k = start[c]; k < e; k++) {
      out->at[order[k]] = x + size[order[k]] / 2, x += size[order[k]];
      if (fabsf(out->at[order[k]] - anchor[order[k]]) > 0.5f) out->spread = true;
    }
  }
}

// The entries named when not all can be, at size lf: the focus, the preferred words, every
// distinct word (at the first of its places that is clear), then more, left to right while they do
// not touch. False when some distinct word found no place.
static bool choose(const AxisSpec *sp, AxisLabels *out, float pitch, float lf) {
  float slot = lf * 1.15f;
  if (sp->focus >= 0 && sp->focus < sp->n) place(sp, out, sp->focus, pitch, slot);
  for (int w = 0; w < sp->n_prefer; w++) place_word(sp, out, sp->prefer[w], pitch, slot);
  // distinct words, the rarest first (a word met once has one place; "the" has many)
  static _Thread_local int first[AXL_MAX], count[AXL_MAX];
  int nd = 0;
  bool all = true;
  for (int i = 0; i < sp->n && i < AXL_MAX; i++) {
    char wi[96], wj[96];
    word(sp, i, wi, sizeof wi);
    int d = 0;
    while (d < nd && strcmp(wi, word(sp, first[d], wj, sizeof wj))) d++;
    if (d == nd) first[nd] = i, count[nd++] = 0;
    count[d]++;
  }
  for (int c = 1; c <= sp->n; c++)
    for (int d = 0; d < nd; d++)
      if (count[d] == c) {
        char wi[96];
        all &= place_word(sp, out, word(sp, first[d], wi, sizeof wi), pitch, slot);
      }
  for (int i = 0; i < sp->n; i++) place(sp, out, i, pitch, slot);
  return all;
}

// Whether every distinct word of the axis is among its labels.
static bool every_word(const AxisSpec *sp, const AxisLabels *out) {
  for (int i = 0; i < sp->n && i < AXL_MAX; i++) {
    char wi[96], wj[96];
    word(sp, i, wi, sizeof wi);
    bool named = false;
    for (int k = 0; k < out->n && !named; k++) named = !strcmp(wi, word(sp, out->idx[k], wj, sizeof wj));
    if (!named) return false;
  }
  return true;
}

void axis_labels_plan(const AxisSpec *sp, AxisLabels *out) {
  plan(sp, out);
  out->depth = axis_labels_depth(sp);
}

static void plan(const AxisSpec *sp, AxisLabels *out) {
  Size z = decide(sp);
  out->lf = z.lf, out->turned = z.turned, out->numbered = false, out->spread = false;
  out->shift = z.stagger ? fminf(widest(sp, z.lf), (sp->cols ? 7 : 12) * sp->fs) + z.lf * 0.6f : 0;
  out->n = 0, out->shown = 0, out->total = sp->vocab && !z.all ? sp->n_cand : sp->n;
  out->words_missing = false;
  out->depth = 0;
  if (sp->n <= 0) return;
  float pitch = sp->len / (float)sp->n;
  char buf[96];
  if (z.all) {
    for (int i = 0; i < sp->n && out->n < AXL_MAX; i++) {
      out->idx[out->n] = i, out->at[out->n] = (i + 0.5f) * pitch;
      snprintf(out->text[out->n], sizeof out->text[0], "%s", word(sp, i, buf, sizeof buf));
      out->n++;
    }
    out->shown = out->n;
    return;
  }
  if (sp->vocab) { // the best candidates that fit side by side, each near its cell
    // columns' labels may reach a little past the matrix's ends (O's 6×89 one-hot named the, cat,
    // walks, by and left bank out by 5 px, issue 31); rows' stay along the matrix
    float slack = sp->cols ? fminf(sp->len * 0.15f, 2.5f * sp->fs) : 0;
    float anchor[AXL_MAX], size[AXL_MAX], used = 0;
    for (int k = 0; sp->cand && k < sp->n_cand && out->n < AXL_MAX; k++) {
      int i = sp->cand[k];
      const char *s = word(sp, i, buf, sizeof buf);
      float sz = size_along(sp, &z, s);
      if (used + sz > sp->len + 2 * slack) continue; // no room left for this one
      used += sz;
      anchor[out->n] = (i + 0.5f) * pitch, size[out->n] = sz, out->idx[out->n] = i;
      snprintf(out->text[out->n], sizeof out->text[0], "%s", s);
      out->n++;
    }
    out->shown = out->n;
    spread(out, anchor, size, -slack, sp->len + slack);
    return;
  }
  // a few entries at their cells; when that leaves a word unnamed, at the smallest size the focus
  // and every distinct word, moved apart along the axis, each with a leader to its cell
  // (the columns of an axis shorter than four labels may reach one label past each end: W_c's two
  // narrow class columns named only river, issue 31); words that still find no room are missing
  if (!choose(sp, out, pitch, z.lf)) {
    out->n = 0, out->lf = fminf(z.lf, sp->least);
    float slot = out->lf * 1.15f, anchor[AXL_MAX], size[AXL_MAX],
          past = sp->cols && sp->len < 4 * slot ? slot : 0;
    if (sp->focus >= 0 && sp->focus < sp->n) add(sp, out, sp->focus, pitch, slot, anchor, size);
    for (int i = 0; i < sp->n && (float)(out->n + 1) * slot <= sp->len + 2 * past; i++) {
      char wi[96], wj[96];
      bool first = true;
      word(sp, i, wi, sizeof wi);
      for (int k = 0; k < out->n && first; k++) first = strcmp(wi, word(sp, out->idx[k], wj, sizeof wj)) != 0;
      if (first) add(sp, out, i, pitch, slot, anchor, size);
    }
    spread(out, anchor, size, -past, sp->len + past);
    out->words_missing = !every_word(sp, out);
  }
  out->shown = out->n;
  out->numbered = out->shown < sp->n;
  for (int k = 0; k < out->n && !out->numbered; k++) // every entry named: the words alone
    snprintf(out->text[k], sizeof out->text[0], "%s", word(sp, out->idx[k], buf, sizeof buf));
}
