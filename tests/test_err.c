// test_err.c -- err_set keeps every message inside Err.msg, whole characters only.
//
// Messages of every length around the buffer's size (a few bytes under it to twice over it),
// written in characters of 1, 2, 3 and 4 bytes placed at every alignment against both cuts (the
// end of the kept head, the start of the kept tail). Each result must fit (a guard after the Err
// stays untouched, and under ASan any write past it is a report), be valid UTF-8, be the message
// itself when it fits, and otherwise be a prefix of it, "...", and a suffix of it. This is the
// bug of issue 14: the tail's start was moved back to a character start, so a tail that began
// inside a character was copied longer than the room left.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "err.h"  // defines: Err, err_set
#include "utf8.h" // defines: utf8_invalid_at

// An Err with a guard after it, so that a write past msg is seen without a sanitizer too.
typedef struct {
  Err err;
  unsigned char guard[64];
} Guarded;

// Builds a message of `len` bytes: `lead` ASCII letters, then characters of `width` bytes
// (the last one shortened to ASCII letters when it would not fit).
static void make_message(char *buf, size_t len, size_t lead, int width) {
  static const char *chars[] = {"", "a", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80"}; // a é € 😀
  size_t n = 0;
  while (n < lead && n < len) buf[n++] = 'x';
  while (n + (size_t)width <= len) {
    memcpy(buf + n, chars[width], (size_t)width);
    n += (size_t)width;
  }
  while (n < len) buf[n++] = 'z';
  buf[n] = 0;
}

static int failures_for(const char *what) {
  static int reported;
  if (check_failures > reported) {
    reported = check_failures;
    fprintf(stderr, "  (while checking %s)\n", what);
    return 1;
  }
  return 0;
}

static void check_one(const char *full) {
  Guarded g;
  memset(&g, 0xAB, sizeof g);
  CHECK(!err_set(&g.err, "%s", full), "err_set returns false");
  size_t len = strlen(full), got = strnlen(g.err.msg, sizeof g.err.msg);
  int guard_ok = 1;
  for (size_t i = 0; i < sizeof g.guard; i++) guard_ok &= g.guard[i] == 0xAB;
  CHECK(guard_ok, "a message of %zu bytes wrote past Err.msg", len);
  CHECK(got < sizeof g.err.msg, "a message of %zu bytes is not NUL-terminated inside Err.msg", len);
  if (got >= sizeof g.err.msg) return;
  CHECK(utf8_invalid_at(g.err.msg) == -1, "a message of %zu bytes was cut inside a character", len);
  if (len < sizeof g.err.msg) {
    CHECK(!strcmp(g.err.msg, full), "a message of %zu bytes that fits is kept as it is", len);
    return;
  }
  const char *dots = strstr(g.err.msg, "...");
  CHECK(dots != NULL, "a long message (%zu bytes) shows where it was cut", len);
  if (!dots) return;
  size_t head = (size_t)(dots - g.err.msg), tail = got - head - 3;
  CHECK(head >= 150 && !memcmp(g.err.msg, full, head), "the head of a %zu-byte message is its start", len);
  CHECK(tail >= 300 && !memcmp(dots + 3, full + len - tail, tail + 1),
        "the tail of a %zu-byte message is its end (%zu bytes kept)", len, tail);
  CHECK(got >= sizeof g.err.msg - 1 - 3, "a %zu-byte message uses the room (%zu of %zu bytes)", len, got,
        sizeof g.err.msg - 1);
}

static void test_lengths(void) {
  static char msg[2 * sizeof(((Err *)0)->msg) + 8];
  size_t cap = sizeof(((Err *)0)->msg);
  for (int width = 1; width <= 4; width++)
    for (size_t lead = 0; lead < 4; lead++)
      for (size_t len = cap - 8; len <= 2 * cap; len++) {
        make_message(msg, len, lead, width);
        check_one(msg);
        char what[64];
        snprintf(what, sizeof what, "width %d, lead %zu, length %zu", width, lead, len);
        if (failures_for(what)) return; // one report per broken case is enough
      }
}

// The message of the fuzzer's input: a long path followed by a reason with many é.
static void test_path_like(void) {
  char path[1200], reason[1200];
  for (size_t plen = 1; plen < 700; plen += 7) {
    memset(path, 'p', plen);
    path[plen] = 0;
    make_message(reason, 300, plen % 3, 2);
    Guarded g;
    memset(&g, 0xAB, sizeof g);
    err_set(&g.err, "%s: metadata \"%s\" is not a whole number", path, reason);
    int guard_ok = 1;
    for (size_t i = 0; i < sizeof g.guard; i++) guard_ok &= g.guard[i] == 0xAB;
    CHECK(guard_ok && strlen(g.err.msg) < sizeof g.err.msg, "path of %zu bytes", plen);
    CHECK(utf8_invalid_at(g.err.msg) == -1, "path of %zu bytes: whole characters", plen);
  }
}

static void test_one_line(void) {
  Err e;
  err_set(&e, "a\nb\tc\x7f"
              "d");
  CHECK(!strcmp(e.msg, "a?b?c?d"), "control characters become '?': \"%s\"", e.msg);
  err_set(&e, "x\xFF\xC3y\xC3\xA9z");
  CHECK(!strcmp(e.msg, "x??y\xC3\xA9z"), "bytes that are not UTF-8 become '?', é stays: \"%s\"", e.msg);
  CHECK(!err_set(NULL, "no record"), "a NULL Err is allowed");
}

int main(void) {
  test_lengths();
  test_path_like();
  test_one_line();
  return check_exit("test_err");
}
