// textfield.c -- see textfield.h.
#include "textfield.h"

#include <stdio.h>
#include <string.h>

#include "utf8.h" // defines: utf8_floor, utf8_ceil, utf8_invalid_at, utf8_lead_len

enum { GROUP_NONE = -1, GROUP_TYPE, GROUP_BACK, GROUP_FORWARD };

void textfield_init(TextField *f) {
  memset(f, 0, sizeof *f);
  f->group = GROUP_NONE;
  f->browse = -1;
}

// ---------------------------------------------------------------- positions

static size_t next_char(const TextField *f, size_t i) {
  if (i >= f->len) return f->len;
  int n = utf8_lead_len((unsigned char)f->text[i]);
  return utf8_ceil(f->text, i + (n > 0 ? (size_t)n : 1), f->len);
}

static size_t prev_char(const TextField *f, size_t i) { return i == 0 ? 0 : utf8_floor(f->text, i - 1); }

// Three kinds of character for word motion: spaces, word characters (letters, digits, ' and _,
// and every non-ASCII character) and punctuation. A word is a run of one kind.
static int char_class(unsigned char c) {
  if (c == ' ') return 0;
  if (c >= 0x80 || c == '\'' || c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z'))
    return 1;
  return 2;
}

static size_t word_right(const TextField *f, size_t i) {
  while (i < f->len && f->text[i] == ' ') i++;
  if (i >= f->len) return f->len;
  int k = char_class((unsigned char)f->text[i]);
  while (i < f->len && char_class((unsigned char)f->text[i]) == k) i = next_char(f, i);
  return i;
}

static size_t word_left(const TextField *f, size_t i) {
  while (i > 0 && f->text[i - 1] == ' ') i--;
  if (i == 0) return 0;
  int k = char_class((unsigned char)f->text[prev_char(f, i)]);
  while (i > 0 && char_class((unsigned char)f->text[prev_char(f, i)]) == k) i = prev_char(f, i);
  return i;
}

bool textfield_selection(const TextField *f, size_t *from, size_t *to) {
  *from = f->anchor < f->caret ? f->anchor : f->caret;
  *to = f->anchor < f->caret ? f->caret : f->anchor;
  return *from < *to;
}

size_t textfield_chars(const TextField *f, size_t pos) {
  size_t n = 0;
  for (size_t i = 0; i < pos && i < f->len; i++) n += !utf8_is_cont((unsigned char)f->text[i]);
  return n;
}

// ---------------------------------------------------------------- undo

static void save_state(const TextField *f, TfState *s);

static void push_undo(TextField *f) {
  save_state(f, &f->undo[f->undo_top]);
  f->undo_top = (f->undo_top + 1) % TEXTFIELD_UNDO;
  if (f->n_undo < TEXTFIELD_UNDO) f->n_undo++;
}

// Before an edit of kind `group`: a new undo level unless it continues the last edit (typing a
// word goes on until a space follows a non-space).
static void begin_edit(TextField *f, int group, bool word_break) {
  if (group == GROUP_NONE || group != f->group || word_break) push_undo(f);
  f->group = group;
  f->browse = -1; // an edit makes the shown line the one being written
  f->n_redo = 0;  // and what was undone cannot come back
}

static void save_state(const TextField *f, TfState *s) {
  memcpy(s->text, f->text, f->len + 1);
  s->caret = f->caret, s->anchor = f->anchor;
}

static void load_state(TextField *f, const TfState *s) {
  f->len = strlen(s->text);
  memcpy(f->text, s->text, f->len + 1);
  f->caret = s->caret, f->anchor = s->anchor;
}

bool textfield_undo(TextField *f) {
  f->error[0] = 0;
  f->group = GROUP_NONE;
  if (f->n_undo == 0) return false;
  if (f->n_redo < TEXTFIELD_UNDO) save_state(f, &f->redo[f->n_redo++]);
  f->undo_top = (f->undo_top + TEXTFIELD_UNDO - 1) % TEXTFIELD_UNDO;
  f->n_undo--;
  load_state(f, &f->undo[f->undo_top]);
  return true;
}

bool textfield_redo(TextField *f) {
  f->error[0] = 0;
  f->group = GROUP_NONE;
  if (f->n_redo == 0) return false;
  push_undo(f);
  load_state(f, &f->redo[--f->n_redo]);
  return true;
}

// ---------------------------------------------------------------- whole text

void textfield_set(TextField *f, const char *text) {
  size_t n = strlen(text);
  if (n >= TEXTFIELD_CAP) n = utf8_floor(text, TEXTFIELD_CAP - 1);
  memcpy(f->text, text, n);
  f->text[n] = 0;
  f->len = f->caret = f->anchor = n;
  f->n_undo = f->undo_top = f->n_redo = 0;
  f->group = GROUP_NONE;
  f->browse = -1;
  f->error[0] = 0;
}

// ---------------------------------------------------------------- moving

void textfield_place(TextField *f, size_t pos, bool select) {
  f->caret = pos > f->len ? f->len : utf8_floor(f->text, pos);
  if (!select) f->anchor = f->caret;
  f->group = GROUP_NONE;
  f->error[0] = 0;
}

void textfield_move(TextField *f, TfMove m, bool select) {
  size_t from, to, p = f->caret;
  bool sel = textfield_selection(f, &from, &to);
  switch (m) {
  case TF_LEFT: p = sel && !select ? from : prev_char(f, p); break;
  case TF_RIGHT: p = sel && !select ? to : next_char(f, p); break;
  case TF_WORD_LEFT: p = word_left(f, p); break;
  case TF_WORD_RIGHT: p = word_right(f, p); break;
  case TF_HOME: p = 0; break;
  case TF_END: p = f->len; break;
  }
  textfield_place(f, p, select);
}

void textfield_select_all(TextField *f) {
  f->anchor = 0, f->caret = f->len;
  f->group = GROUP_NONE;
  f->error[0] = 0;
}

void textfield_select_word(TextField *f, size_t pos) {
  textfield_place(f, pos, false);
  size_t from = f->caret, to = f->caret;
  if (to == f->len && from > 0) from = prev_char(f, from); // past the end: the last word
  if (from == f->len) return;
  int k = char_class((unsigned char)f->text[from]);
  while (from > 0 && char_class((unsigned char)f->text[prev_char(f, from)]) == k) from = prev_char(f, from);
  to = from;
  while (to < f->len && char_class((unsigned char)f->text[to]) == k) to = next_char(f, to);
  f->anchor = from, f->caret = to;
}

// ---------------------------------------------------------------- editing

// Replaces bytes [from, to) with `add` (n bytes, already clean and known to fit); caret after it.
static void splice(TextField *f, size_t from, size_t to, const char *add, size_t n) {
  memmove(f->text + from + n, f->text + to, f->len - to + 1);
  memcpy(f->text + from, add, n);
  f->len = f->len - (to - from) + n;
  f->caret = f->anchor = from + n;
}

bool textfield_insert(TextField *f, const char *text, TfInsert kind) {
  f->error[0] = 0;
  long bad = utf8_invalid_at(text);
  if (bad >= 0) {
    snprintf(f->error, sizeof f->error, "%s text is not UTF-8 (byte %ld): nothing was inserted",
             kind == TF_PASTE ? "the pasted" : "the typed", bad + 1);
    return false;
  }
  // newlines and tabs become spaces (a CR LF pair one space), other control characters go
  char clean[TEXTFIELD_CAP];
  size_t n = 0, in = strlen(text);
  for (size_t i = 0; i < in; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c == '\r' && text[i + 1] == '\n') continue;
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
    if (c < 0x20 || c == 0x7f) continue;
    if (n + 1 >= sizeof clean) {
      n = sizeof clean; // too long for the field whatever is selected
      break;
    }
    clean[n++] = (char)c;
  }
  size_t from, to;
  textfield_selection(f, &from, &to);
  if (f->len - (to - from) + n >= TEXTFIELD_CAP) {
    snprintf(f->error, sizeof f->error, "the sentence is too long: at most %d bytes", TEXTFIELD_CAP - 1);
    return false;
  }
  if (n == 0 && from == to) return false;
  bool word_break = kind == TF_TYPE && n > 0 && clean[0] == ' ' && from > 0 && f->text[from - 1] != ' ';
  begin_edit(f, kind == TF_TYPE && from == to ? GROUP_TYPE : GROUP_NONE, word_break);
  splice(f, from, to, clean, n);
  return true;
}

bool textfield_delete(TextField *f, TfDelete d) {
  f->error[0] = 0;
  size_t from, to;
  if (textfield_selection(f, &from, &to)) {
    begin_edit(f, GROUP_NONE, false);
    splice(f, from, to, "", 0);
    return true;
  }
  size_t p = f->caret;
  switch (d) {
  case TF_BACK: from = prev_char(f, p), to = p; break;
  case TF_FORWARD: from = p, to = next_char(f, p); break;
  case TF_WORD_BACK: from = word_left(f, p), to = p; break;
  case TF_WORD_FORWARD: from = p, to = word_right(f, p); break;
  }
  if (from == to) return false;
  begin_edit(f, d == TF_BACK ? GROUP_BACK : d == TF_FORWARD ? GROUP_FORWARD : GROUP_NONE, false);
  splice(f, from, to, "", 0);
  return true;
}

size_t textfield_copy(const TextField *f, char *buf, size_t cap) {
  size_t from, to;
  if (cap == 0) return 0;
  textfield_selection(f, &from, &to);
  size_t n = to - from;
  if (n >= cap) n = utf8_floor(f->text + from, cap - 1);
  memcpy(buf, f->text + from, n);
  buf[n] = 0;
  return n;
}

bool textfield_cut(TextField *f, char *buf, size_t cap) {
  size_t from, to;
  if (!textfield_selection(f, &from, &to)) {
    if (cap) buf[0] = 0;
    return false;
  }
  textfield_copy(f, buf, cap);
  return textfield_delete(f, TF_BACK);
}

// ---------------------------------------------------------------- history

void textfield_history_add(TextField *f, const char *line) {
  if (!line[0]) return;
  int k = 0; // an equal line already held moves to the front
  while (k < f->n_hist && strcmp(f->hist[k], line) != 0) k++;
  if (k == f->n_hist) k = f->n_hist < TEXTFIELD_HISTORY ? f->n_hist++ : TEXTFIELD_HISTORY - 1;
  memmove(f->hist[1], f->hist[0], sizeof f->hist[0] * (size_t)k);
  snprintf(f->hist[0], sizeof f->hist[0], "%s", line);
  f->browse = -1;
}

// Shows line `text` as a new undo level, caret at the end.
static void show_line(TextField *f, const char *text) {
  f->error[0] = 0;
  push_undo(f);
  f->group = GROUP_NONE;
  f->n_redo = 0;
  size_t n = strlen(text);
  memcpy(f->text, text, n + 1);
  f->len = f->caret = f->anchor = n;
}

bool textfield_history_up(TextField *f) {
  int k = f->browse + 1;
  while (k < f->n_hist && strcmp(f->hist[k], f->text) == 0) k++;
  if (k >= f->n_hist) return false;
  if (f->browse < 0) memcpy(f->draft, f->text, f->len + 1);
  f->browse = k;
  show_line(f, f->hist[k]);
  return true;
}

bool textfield_history_down(TextField *f) {
  if (f->browse < 0) return false;
  int k = f->browse - 1;
  while (k >= 0 && strcmp(f->hist[k], f->text) == 0) k--;
  f->browse = k;
  show_line(f, k >= 0 ? f->hist[k] : f->draft);
  return true;
}
