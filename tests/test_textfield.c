// test_textfield.c -- the sentence field's editing model (src/app/textfield.c), without a window.
//
// Caret motion by characters (never inside a UTF-8 sequence) and by words, selections with
// Shift, select-all and a double click's word, typing and pasting over a selection, deletion forward,
// backward and by word, copy and cut, undo (typing undone a word at a time, a paste at once, the oldest
// levels dropped) and redo, pasted newlines and tabs, refused invalid UTF-8 and overlong text (the field is
// left as it was), and the history (most recent first, the draft kept while browsing). Then a seeded random
// walk of every call checks the invariants after each: valid UTF-8, caret and anchor at character starts
// within the text, len == strlen.
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rng.h"       // defines: rng_seed, rng_u32
#include "textfield.h" // defines: TextField, textfield_*
#include "utf8.h"      // defines: utf8_invalid_at, utf8_is_cont

static TextField *f;

static void reset(const char *text) {
  textfield_init(f);
  textfield_set(f, text);
}

#define TEXT_IS(want, what)                                                                                  \
  CHECK(strcmp(f->text, want) == 0, "%s: \"%s\", expected \"%s\"", what, f->text, want)

static void test_motion(void) {
  reset("naïve café");
  CHECK(f->caret == strlen("naïve café") && f->anchor == f->caret, "set puts the caret at the end");
  textfield_move(f, TF_LEFT, false);
  CHECK(f->caret == strlen("naïve caf"), "Left steps over the 2-byte é: caret %zu", f->caret);
  textfield_move(f, TF_HOME, false);
  for (int i = 0; i < 2; i++) textfield_move(f, TF_RIGHT, false);
  CHECK(f->caret == 2, "2 × Right: after \"na\"");
  textfield_move(f, TF_RIGHT, false);
  CHECK(f->caret == 4 && textfield_chars(f, f->caret) == 3, "Right over ï: byte 4, character 3 (%zu)",
        f->caret);
  textfield_place(f, 3, false); // inside ï
  CHECK(f->caret == 2, "placing inside a character moves to its start: %zu", f->caret);
  textfield_move(f, TF_END, false);
  textfield_move(f, TF_RIGHT, false);
  CHECK(f->caret == f->len, "Right at the end stays");

  reset("the cat, sat   on");
  textfield_move(f, TF_HOME, false);
  textfield_move(f, TF_WORD_RIGHT, false);
  CHECK(f->caret == 3, "Ctrl+Right: end of \"the\" (%zu)", f->caret);
  textfield_move(f, TF_WORD_RIGHT, false);
  CHECK(f->caret == 7, "Ctrl+Right: end of \"cat\" (%zu)", f->caret);
  textfield_move(f, TF_WORD_RIGHT, false);
  CHECK(f->caret == 8, "Ctrl+Right: the comma is a word of its own (%zu)", f->caret);
  textfield_move(f, TF_END, false);
  textfield_move(f, TF_WORD_LEFT, false);
  CHECK(f->caret == 15, "Ctrl+Left: start of \"on\" (%zu)", f->caret);
  textfield_move(f, TF_WORD_LEFT, false);
  CHECK(f->caret == 9, "Ctrl+Left over three spaces: start of \"sat\" (%zu)", f->caret);
  reset("chat très");
  textfield_move(f, TF_WORD_LEFT, false);
  CHECK(f->caret == 5, "non-ASCII letters are word characters (%zu)", f->caret);
}

static void test_selection(void) {
  size_t a, b;
  reset("the cat");
  CHECK(!textfield_selection(f, &a, &b), "no selection after set");
  textfield_move(f, TF_LEFT, true);
  textfield_move(f, TF_LEFT, true);
  textfield_move(f, TF_LEFT, true);
  CHECK(textfield_selection(f, &a, &b) && a == 4 && b == 7, "3 × Shift+Left selects \"cat\": %zu-%zu", a, b);
  char buf[64];
  CHECK(textfield_copy(f, buf, sizeof buf) == 3 && !strcmp(buf, "cat"), "copy: \"%s\"", buf);
  textfield_move(f, TF_LEFT, false);
  CHECK(f->caret == 4 && !textfield_selection(f, &a, &b), "Left with a selection goes to its start");
  textfield_move(f, TF_HOME, true);
  CHECK(textfield_selection(f, &a, &b) && a == 0 && b == 4, "Shift+Home selects to the start");
  textfield_move(f, TF_END, true);
  CHECK(textfield_selection(f, &a, &b) && a == 4 && b == 7, "Shift+End from the anchor: %zu-%zu", a, b);
  textfield_select_all(f);
  CHECK(textfield_selection(f, &a, &b) && a == 0 && b == 7, "select all");
  CHECK(textfield_insert(f, "a dog", TF_TYPE), "typing over a selection changes the text");
  TEXT_IS("a dog", "typing replaces the selection");
  CHECK(!textfield_selection(f, &a, &b) && f->caret == 5, "the caret after the typed text");
  // a double click selects the word under it
  reset("the naïve cat, sat");
  textfield_select_word(f, 6);
  CHECK(textfield_selection(f, &a, &b) && a == 4 && b == 10, "the word around byte 6: %zu-%zu", a, b);
  textfield_select_word(f, 13);
  CHECK(textfield_selection(f, &a, &b) && a == 11 && b == 14, "\"cat\" from its last letter: %zu-%zu", a, b);
  textfield_select_word(f, 14);
  CHECK(textfield_selection(f, &a, &b) && a == 14 && b == 15, "the comma alone: %zu-%zu", a, b);
  textfield_select_word(f, 99);
  CHECK(textfield_selection(f, &a, &b) && a == 16 && b == 19, "past the end: the last word: %zu-%zu", a, b);
  reset("");
  textfield_select_word(f, 0);
  CHECK(!textfield_selection(f, &a, &b), "nothing to select in an empty field");
  // cut
  reset("the big cat");
  textfield_place(f, 4, false);
  textfield_place(f, 8, true);
  CHECK(textfield_cut(f, buf, sizeof buf) && !strcmp(buf, "big "), "cut returns \"%s\"", buf);
  TEXT_IS("the cat", "cut removes the selection");
  CHECK(!textfield_cut(f, buf, sizeof buf) && buf[0] == 0, "cut without a selection does nothing");
  // copy into a small buffer: whole characters only
  reset("éé");
  textfield_select_all(f);
  CHECK(textfield_copy(f, buf, 4) == 2 && !strcmp(buf, "é"), "copy cut at a character: \"%s\"", buf);
}

static void test_edits(void) {
  reset("the cat");
  textfield_place(f, 4, false);
  textfield_insert(f, "big ", TF_TYPE);
  TEXT_IS("the big cat", "typing in the middle");
  CHECK(f->caret == 8, "caret after the insertion (%zu)", f->caret);
  textfield_delete(f, TF_FORWARD);
  TEXT_IS("the big at", "Delete deletes forward");
  textfield_delete(f, TF_BACK);
  TEXT_IS("the bigat", "Backspace deletes back");
  reset("the big cat");
  textfield_delete(f, TF_WORD_BACK);
  TEXT_IS("the big ", "Ctrl+Backspace deletes the word before");
  textfield_delete(f, TF_WORD_BACK);
  TEXT_IS("the ", "Ctrl+Backspace over a space and a word");
  textfield_move(f, TF_HOME, false);
  textfield_delete(f, TF_WORD_FORWARD);
  TEXT_IS(" ", "Ctrl+Delete deletes the word after");
  reset("café");
  textfield_delete(f, TF_BACK);
  TEXT_IS("caf", "Backspace deletes the whole é");
  CHECK(f->len == 3, "len follows (%zu)", f->len);
  textfield_move(f, TF_HOME, false);
  CHECK(!textfield_delete(f, TF_BACK), "Backspace at the start changes nothing");
  // pasted text: newlines and tabs become spaces, CR LF one space, other control characters go
  reset("");
  CHECK(textfield_insert(f, "The cat\r\nsleeps\tby\nthe\x01 bank", TF_PASTE), "paste");
  TEXT_IS("The cat sleeps by the bank", "pasted newlines and tabs become spaces");
  // invalid UTF-8 and overlong text are refused whole
  reset("the cat");
  textfield_select_all(f);
  CHECK(!textfield_insert(f, "bad \xff\xfe text", TF_PASTE), "invalid UTF-8 is refused");
  TEXT_IS("the cat", "a refused paste leaves the text");
  CHECK(strstr(f->error, "not UTF-8") != NULL, "and says why: \"%s\"", f->error);
  CHECK(textfield_selection(f, &(size_t){0}, &(size_t){0}), "and keeps the selection");
  CHECK(!textfield_insert(f, "\xc3(", TF_PASTE) && f->error[0], "a cut-off sequence too");
  textfield_move(f, TF_END, false);
  CHECK(!f->error[0], "the next call clears the message");
  char big[TEXTFIELD_CAP + 10];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = 0;
  CHECK(!textfield_insert(f, big, TF_PASTE) && strstr(f->error, "too long"), "overlong: \"%s\"", f->error);
  TEXT_IS("the cat", "an overlong paste leaves the text");
  big[TEXTFIELD_CAP - 1 - 7] = 0; // exactly fills the field
  CHECK(textfield_insert(f, big, TF_PASTE) && f->len == TEXTFIELD_CAP - 1, "a paste that just fits (%zu)",
        f->len);
  CHECK(!textfield_insert(f, "x", TF_TYPE) && strstr(f->error, "at most 2047 bytes"), "one more byte: \"%s\"",
        f->error);
  textfield_select_all(f);
  CHECK(textfield_insert(f, "short", TF_TYPE), "typing over a full selection fits again");
  TEXT_IS("short", "replaced");
}

static void test_undo(void) {
  reset("the cat");
  textfield_insert(f, " sleeps", TF_TYPE);
  textfield_insert(f, " by", TF_TYPE);
  textfield_insert(f, " the", TF_TYPE);
  textfield_insert(f, " ", TF_TYPE);
  textfield_insert(f, "b", TF_TYPE);
  textfield_insert(f, "a", TF_TYPE);
  textfield_insert(f, "nk", TF_TYPE);
  TEXT_IS("the cat sleeps by the bank", "typed");
  CHECK(textfield_undo(f), "undo");
  TEXT_IS("the cat sleeps by the", "undo takes back the last typed word");
  textfield_undo(f);
  TEXT_IS("the cat sleeps by", "and the word before");
  textfield_delete(f, TF_BACK);
  textfield_delete(f, TF_BACK);
  TEXT_IS("the cat sleeps ", "two Backspaces");
  textfield_undo(f);
  TEXT_IS("the cat sleeps by", "undo takes back the run of Backspaces");
  textfield_select_all(f);
  textfield_insert(f, "a\nb", TF_PASTE);
  textfield_undo(f);
  TEXT_IS("the cat sleeps by", "undo takes back a paste over a selection");
  size_t a, b;
  CHECK(textfield_selection(f, &a, &b) && a == 0 && b == f->len, "and brings the selection back");
  // redo takes undo back, until the next edit
  CHECK(textfield_redo(f), "redo");
  TEXT_IS("a b", "redo brings the paste back");
  CHECK(!textfield_redo(f), "nothing more to redo");
  textfield_undo(f);
  textfield_undo(f);
  TEXT_IS("the cat sleeps", "two undos: the paste, then the typed \" by\"");
  textfield_redo(f);
  TEXT_IS("the cat sleeps by", "redo one");
  textfield_insert(f, "x", TF_TYPE);
  CHECK(!textfield_redo(f), "an edit forgets what was undone");
  textfield_undo(f);
  while (textfield_undo(f)) {
  }
  TEXT_IS("the cat", "undo down to the text set");
  CHECK(!textfield_undo(f), "nothing more to undo");
  // more edits than levels: the oldest are dropped, the newest kept
  reset("");
  for (int i = 0; i < TEXTFIELD_UNDO + 5; i++) textfield_insert(f, "x", TF_PASTE);
  int n = 0;
  while (textfield_undo(f)) n++;
  CHECK(n == TEXTFIELD_UNDO, "%d undo levels, expected %d", n, TEXTFIELD_UNDO);
  CHECK(f->len == 5, "the oldest 5 pastes stay (%zu)", f->len);
}

static void test_history(void) {
  textfield_init(f);
  textfield_set(f, "one");
  CHECK(!textfield_history_up(f), "Up with no history does nothing");
  textfield_history_add(f, "The cat walks by the bank");
  textfield_history_add(f, "The cat sleeps by the river bank");
  textfield_history_add(f, "");
  CHECK(f->n_hist == 2, "empty lines are not kept (%d)", f->n_hist);
  textfield_set(f, "The cat sleeps by the river bank");
  CHECK(textfield_history_up(f), "Up");
  TEXT_IS("The cat walks by the bank", "Up skips the line equal to the field and shows the older one");
  CHECK(!textfield_history_up(f), "Up at the oldest does nothing");
  CHECK(textfield_history_down(f), "Down");
  TEXT_IS("The cat sleeps by the river bank", "Down comes back to what was being written");
  // an unfinished edit survives a trip through the history
  textfield_set(f, "a dog is");
  textfield_history_up(f);
  TEXT_IS("The cat sleeps by the river bank", "Up: the most recent first");
  textfield_history_up(f);
  TEXT_IS("The cat walks by the bank", "Up again: the one before");
  textfield_history_down(f);
  textfield_history_down(f);
  TEXT_IS("a dog is", "Down twice: the unfinished edit is back");
  CHECK(!textfield_history_down(f), "Down on the line being written does nothing");
  textfield_history_up(f);
  textfield_undo(f);
  TEXT_IS("a dog is", "undo after Up brings back the edit");
  // re-adding moves a line to the front; the history holds at most TEXTFIELD_HISTORY lines
  textfield_history_add(f, "The cat walks by the bank");
  CHECK(!strcmp(f->hist[0], "The cat walks by the bank") && f->n_hist == 2, "an equal line moves up");
  char line[32];
  for (int i = 0; i < TEXTFIELD_HISTORY + 3; i++) {
    snprintf(line, sizeof line, "line %d", i);
    textfield_history_add(f, line);
  }
  CHECK(f->n_hist == TEXTFIELD_HISTORY && !strcmp(f->hist[0], line), "full history: %d, newest \"%s\"",
        f->n_hist, f->hist[0]);
}

static bool invariants(const char *what) {
  bool ok = f->len == strlen(f->text) && f->caret <= f->len && f->anchor <= f->len &&
            utf8_invalid_at(f->text) < 0 && !utf8_is_cont((unsigned char)f->text[f->caret]) &&
            !utf8_is_cont((unsigned char)f->text[f->anchor]);
  CHECK(ok, "after %s: len %zu caret %zu anchor %zu text \"%s\"", what, f->len, f->caret, f->anchor, f->text);
  return ok;
}

static void test_random_walk(void) {
  static const char *const PIECES[] = {"a", "é", "猫", "🐈", " ", "the cat", "\n", "x\ty", "\xff", ", "};
  uint64_t rng = rng_seed(1234);
  reset("");
  char buf[TEXTFIELD_CAP];
  for (int step = 0; step < 20000; step++) {
    uint32_t r = rng_u32(&rng) % 12, s = rng_u32(&rng);
    switch (r) {
    case 0:
    case 1: textfield_insert(f, PIECES[s % 10], s & 1024 ? TF_PASTE : TF_TYPE); break;
    case 2: textfield_delete(f, (TfDelete)(s % 4)); break;
    case 3:
    case 4: textfield_move(f, (TfMove)(s % 6), s & 64); break;
    case 5: textfield_place(f, s % (f->len + 3), s & 64); break;
    case 6: s & 1 ? textfield_redo(f) : textfield_undo(f); break;
    case 7: textfield_cut(f, buf, s % 8); break;
    case 8: textfield_history_add(f, f->text); break;
    case 9: textfield_history_up(f); break;
    case 10: textfield_history_down(f); break;
    case 11:
      if (s % 50 == 0)
        textfield_select_all(f);
      else
        textfield_select_word(f, s % (f->len + 2));
      break;
    }
    char what[32];
    snprintf(what, sizeof what, "step %d (op %u)", step, r);
    if (!invariants(what)) break;
  }
}

int main(void) {
  f = malloc(sizeof *f);
  if (!f) return 1;
  test_motion();
  test_selection();
  test_edits();
  test_undo();
  test_history();
  test_random_walk();
  free(f);
  return check_exit("test_textfield");
}
