// view_tokens.c -- the tokens stages (the encoder's and the decoder's): the tokens as boxes with
// their symbols and ids, and the vocabulary below them with the tokens' rows marked (view_internal.h,
// eq_token_row). Shared so that both sides draw a token and a vocabulary the same way.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_tokens.h" // defines: ModelTokenizer (WordPiece's lower)
#include "tex.h"          // defines: tex_draw
#include "view_internal.h"

const char *view_tokens_caption(const Model *m) {
  switch (m->tok_kind) {
  case TOK_CHARS:
    return "the sentence, one token per character as typed (spaces dropped); each token gets its row in "
           "the vocabulary";
  case TOK_BPE:
    return "GPT-2's byte-level BPE: bytes merged into frequent pieces, a space kept at the front of the next "
           "token (␣); each token gets its row in the vocabulary";
  case TOK_TOKJSON: {
    bool bos = m->tokenizer && m->tokenizer->tj.n_bos > 0;
    if (m->tokenizer && !m->tokenizer->tj.byte_level)
      return bos ? "SentencePiece-style BPE (tokenizer.json): the BOS token first, a space written as ▁, "
                   "pieces "
                   "merged by rank, a character the vocabulary lacks as its bytes; each token gets its row"
                 : "SentencePiece-style BPE (tokenizer.json): a space written as ▁, pieces merged by rank, a "
                   "character the vocabulary lacks as its bytes; each token gets its row in the vocabulary";
    return bos ? "byte-level BPE (tokenizer.json): the BOS token first, then bytes merged into frequent "
                 "pieces "
                 "within the words the model's own pattern cuts; each token gets its row in the vocabulary"
               : "byte-level BPE (tokenizer.json): bytes merged into frequent pieces within the words the "
                 "model's own pattern cuts; each token gets its row in the vocabulary";
  }
  case TOK_WORDPIECE:
    if (m->tokenizer && !m->tokenizer->wp.lower) // a cased BERT
      return "BERT's WordPiece: [CLS] … [SEP] around the text, a word the vocabulary lacks cut into "
             "pieces (## goes on a word); each token gets its row";
    return "BERT's WordPiece: lowercased, [CLS] … [SEP] around the text, a word the vocabulary lacks "
           "cut into pieces (## goes on a word); each token gets its row";
  default: return "the sentence, lowercased and split into words; each word gets its row in the vocabulary";
  }
}

void eq_tokens_note(Eq *e, const char *text, float y) {
  float fs = view_text_size(e->o) * 1.3f * 0.8f, maxw = e->w * 0.95f, cx = e->x + e->w / 2;
  uint32_t ink = e->o->theme->muted;
  float w = text_width(FONT_SANS, fs, text);
  const char *cut = strstr(text, "; ");
  if (w > maxw && cut) { // two lines: the part before "; " above, the rest on the baseline y
    char first[256];
    snprintf(first, sizeof first, "%.*s;", (int)(cut - text), text);
    const char *second = cut + 2;
    float wide = fmaxf(text_width(FONT_SANS, fs, first), text_width(FONT_SANS, fs, second));
    float size = wide > maxw ? fs * maxw / wide : fs;
    scene_text_aligned(e->s, FONT_SANS, size, cx, y - size * 1.4f, 0.5f, ink, first);
    scene_text_aligned(e->s, FONT_SANS, size, cx, y, 0.5f, ink, second);
    return;
  }
  scene_text_aligned(e->s, FONT_SANS, w > maxw ? fs * maxw / w : fs, cx, y, 0.5f, ink, text);
}

// The text of a vocabulary entry: "id word", or "…" for a gap (id -1).
static const char *entry(char *buf, size_t cap, const Vocab *v, int id) {
  if (id < 0) return "…";
  snprintf(buf, cap, "%d %s", id, v->words[id]);
  return buf;
}

// How many lines the entries of ids[0..n) (-1: "…") take at size lf in a width w (the wrap of
// vocab_draw); stops counting past max_lines.
static int lines_needed(const Vocab *v, const int *ids, int n, float lf, float w, int max_lines) {
  char buf[160];
  float x = 0;
  int lines = 1;
  for (int k = 0; k < n && lines <= max_lines; k++) {
    float iw = text_width(FONT_SANS, lf, entry(buf, sizeof buf, v, ids[k])) + lf;
    if (x > 0 && x + iw > w) x = 0, lines++;
    x += iw;
  }
  return lines;
}

// The largest size from 0.85 fs down to 0.55 fs at which the entries fit between y and bottom; 0
// when none does.
static float fit_size(const Vocab *v, const int *ids, int n, float fs, float w, float y, float bottom) {
  for (int k = 0; k <= 6; k++) {
    float size = fs * (0.85f - 0.05f * (float)k);
    int room = (int)((bottom - y - size * 1.8f) / (size * 1.6f)) + 1;
    if (room >= 1 && lines_needed(v, ids, n, size, w, room) <= room) return size;
  }
  return 0;
}

// The vocabulary from y down to the bottom of the area, as large as it fits (at most 0.85 of the
// token size fs): every word when they fit at 0.55 fs or more; else (GPT-2's 50 257) the tokens'
// rows with two neighbours on each side, "…" between the runs, so that the marked rows show.
static void vocab_draw(Eq *e, const Tokens *tok, int n, const Vocab *v, float y, float fs,
                       const char *title) {
  const Theme *th = e->o->theme;
  float x0 = e->x + fs, w = e->w - 2 * fs, bottom = e->y + e->h - fs * 0.3f;
  int *ids = malloc(sizeof(int) * (size_t)(v->n + 2)); // the entries shown (sparse: gaps need no more room)
  bool *used = calloc((size_t)v->n + 2, sizeof(bool)); // [V + 2]: the rows of the tokens, 2 past the end
  if (!ids || !used) {
    free(ids), free(used);
    return;
  }
  for (int i = 0; i < n; i++)
    if (tok->ids[i] >= 0 && tok->ids[i] < v->n) used[tok->ids[i]] = true;
  for (int id = 0; id < v->n; id++) ids[id] = id;
  int m = v->n;
  float lf = fit_size(v, ids, m, fs, w, y, bottom);
  bool sparse = lf == 0;
  if (sparse) { // the tokens' rows and their neighbours, in order, -1 for a gap ("…")
    m = 0;
    for (int id = 0; id < v->n; id++) {
      bool near =
          used[id] || used[id + 1] || used[id + 2] || (id >= 1 && used[id - 1]) || (id >= 2 && used[id - 2]);
      if (near) {
        if (m == 0 ? id > 0 : ids[m - 1] != id - 1) ids[m++] = -1;
        ids[m++] = id;
      }
    }
    if (m > 0 && ids[m - 1] < v->n - 1) ids[m++] = -1;
    lf = fit_size(v, ids, m, fs, w, y, bottom);
    if (lf == 0) lf = fs * 0.55f; // a long text: its rows as far as they go
  }
  char buf[200];
  if (sparse)
    snprintf(buf, sizeof buf, "%s = %d tokens: the rows of this text's tokens, with their neighbours", title,
             v->n);
  else
    snprintf(buf, sizeof buf, "%s = %d %s%s", title, v->n,
             e->t->model->tok_kind == TOK_WORDS ? "word" : "token", v->n == 1 ? "" : "s");
  float tw = text_width(FONT_SANS_BOLD, lf, buf); // the title, smaller if it is wider than the area
  scene_text(e->s, FONT_SANS_BOLD, tw > w ? lf * w / tw : lf, x0, y, th->text, buf);
  float vx = x0, vy = y + lf * 1.8f;
  for (int k = 0; k < m && vy < bottom; k++) {
    const char *text = entry(buf, sizeof buf, v, ids[k]);
    float iw = text_width(FONT_SANS, lf, text) + lf;
    if (vx > x0 && vx + iw > x0 + w) {
      vx = x0, vy += lf * 1.6f;
      if (vy >= bottom) break;
    }
    bool mark = ids[k] >= 0 && used[ids[k]];
    if (mark) scene_rect(e->s, vx - 3, vy - lf, iw - lf + 6, lf * 1.35f, th->highlight);
    scene_text(e->s, FONT_SANS, lf, vx, vy, mark ? SF_RGBA(0, 0, 0, 255) : th->muted, text);
    vx += iw;
  }
  free(ids);
  free(used);
}

void eq_token_row(Eq *e, const Tokens *tok, const Vocab *v, const char *sym, int first, float y,
                  const char *vocab_title) {
  const Theme *th = e->o->theme;
  float fs = view_text_size(e->o) * 1.3f, pad = fs * 0.6f, gap = fs * 0.8f;
  enum { MAX_SHOWN = 1024 };
  // a long sentence: the window of its tokens the other stages show (eq_window), tokens i0 ..
  int i0 = 0, n = tok->n < MAX_SHOWN ? tok->n : MAX_SHOWN;
  if (tok == &e->t->tokens && e->win_n) i0 = e->win_first, n = e->win_n;
  tok = &(Tokens){.n = n, .ids = tok->ids + i0, .words = tok->words + i0, .unknown = tok->unknown + i0};
  first += i0;
  float *widths = malloc(sizeof(float) * (size_t)(n + 1)), total = 0;
  if (!widths) return;
  char buf[160];
  for (int i = 0; i < n; i++) { // a box as wide as its word or its id line, whichever is wider
    if (tok->unknown[i])
      snprintf(buf, sizeof buf, "<unk> · id %d", tok->ids[i]);
    else
      snprintf(buf, sizeof buf, "id %d", tok->ids[i]);
    widths[i] =
        fmaxf(text_width(FONT_SANS_BOLD, fs, tok->words[i]), text_width(FONT_SANS, fs * 0.7f, buf)) + 2 * pad;
    total += widths[i] + (i ? gap : 0);
  }
  // one line of boxes while it fits at 0.6 of the size (a phrase); else lines of boxes at that size
  // or larger (40 words at 1280×720 were 7 px words on one 25 px strip), at most 4, then smaller
  float room = e->w * 0.95f, scale = total > room ? room / total : 1.0f;
  int lines = 1;
  // a line's step: the box, the id under it, the next line's symbol above its box
  if (scale < 0.6f) {
    float sc = 1.0f;
    for (;; sc *= 0.92f) {
      float lx = 0;
      lines = 1;
      for (int i = 0; i < n; i++) {
        float bw = widths[i] * sc + (lx > 0 ? gap * sc : 0);
        if (lx > 0 && lx + bw > room)
          lines++, lx = widths[i] * sc;
        else
          lx += bw;
      }
      if ((lines <= 4 && (float)lines * (fs * 2.2f * sc + fs * 2.6f) <= e->h * 0.5f) || sc < 0.3f) break;
    }
    scale = sc;
  }
  float bh = fs * 2.2f * scale;
  for (int i = 0, line = 0; i < n; line++) { // line by line, each centred
    int end = i;
    float lw = 0;
    while (end < n && (end == i || lw + (gap + widths[end]) * scale <= room))
      lw += (end > i ? gap * scale : 0) + widths[end] * scale, end++;
    float x = e->x + (e->w - lw) / 2, ly = y + (float)line * (bh + fs * 2.6f);
    for (; i < end; i++) {
      float w = widths[i] * scale;
      bool unk = tok->unknown[i];
      scene_rect(e->s, x, ly, w, bh, th->panel);
      scene_frame(e->s, x, ly, w, bh, 2, unk ? th->unk : th->frame);
      scene_text_aligned(e->s, FONT_SANS_BOLD, fs * scale, x + w / 2, ly + bh * 0.68f, 0.5f,
                         unk ? th->unk : th->text, tok->words[i]);
      snprintf(buf, sizeof buf, "%s_{%d}", sym, first + i);
      tex_draw(e->s, buf, fs * 0.9f * scale, false, x + w / 2 - fs * 0.5f * scale, ly - fs * 0.5f, th->muted);
      if (unk)
        snprintf(buf, sizeof buf, "<unk> · id %d", tok->ids[i]);
      else
        snprintf(buf, sizeof buf, "id %d", tok->ids[i]);
      scene_text_aligned(e->s, FONT_SANS, fs * 0.7f * scale, x + w / 2, ly + bh + fs * 1.1f, 0.5f,
                         unk ? th->unk : th->muted, buf);
      x += w + gap * scale;
    }
  }
  y += (float)(lines - 1) * (bh + fs * 2.6f);
  free(widths);
  vocab_draw(e, tok, n, v, y + bh + fs * 2.8f, fs, vocab_title);
  e->lay->result = -1;
}
