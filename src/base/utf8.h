// utf8.h -- the few UTF-8 facts the rest of Stepformer needs: how long a sequence is, whether
// text is valid, and where to cut text so that no character is split.
//
// Every cut of text into a fixed buffer goes through utf8_floor (a prefix: keep s[0..k) with
// k = utf8_floor(s, i) <= i) or utf8_ceil (a suffix: keep s[k..n) with k = utf8_ceil(s, i, n) >= i),
// so the kept bytes are never more than asked for. Moving a suffix's start *back* to a character
// start makes the suffix longer than the room left: that was the err_set overflow of issue 14.
#ifndef SF_UTF8_H
#define SF_UTF8_H

#include <stdbool.h>
#include <stddef.h>

// True for a continuation byte (10xxxxxx): never the first byte of a character.
static inline bool utf8_is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

// The largest character start k <= i in s (0 when none): s[0..k) is whole characters.
static inline size_t utf8_floor(const char *s, size_t i) {
  while (i > 0 && utf8_is_cont((unsigned char)s[i])) i--;
  return i;
}

// The smallest character start k >= i in s[0..n) (n when none): s[k..n) is whole characters.
static inline size_t utf8_ceil(const char *s, size_t i, size_t n) {
  while (i < n && utf8_is_cont((unsigned char)s[i])) i++;
  return i;
}

// The length (1-4) a sequence starting with byte c claims, from its first byte alone; 0 for a
// continuation byte and for 0xF8-0xFF, which start none. The bytes after it are not looked at.
static inline int utf8_lead_len(unsigned char c) {
  return c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
}

// The byte length of the valid UTF-8 sequence at s (1-4), or 0 at the terminating NUL or at
// an invalid sequence (stray continuation byte, overlong form, surrogate, past U+10FFFF).
int utf8_seq_len(const char *s);

// The byte offset of the first invalid sequence in NUL-terminated s, or -1 if it is valid UTF-8.
long utf8_invalid_at(const char *s);

#endif
