// utf8.c -- see utf8.h.
#include "utf8.h"

int utf8_seq_len(const char *str) {
  const unsigned char *s = (const unsigned char *)str;
  unsigned c = s[0];
  if (c == 0) return 0;
  if (c < 0x80) return 1;
  int n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0) return 0; // a continuation byte, C0/C1 (overlong 2-byte forms) or F5..FF
  for (int i = 1; i < n; i++)
    if (!utf8_is_cont(s[i])) return 0;
  unsigned c1 = s[1];
  if ((c == 0xE0 && c1 < 0xA0) || (c == 0xF0 && c1 < 0x90)) return 0;   // overlong
  if ((c == 0xED && c1 >= 0xA0) || (c == 0xF4 && c1 >= 0x90)) return 0; // surrogate, past U+10FFFF
  return n;
}

long utf8_invalid_at(const char *s) {
  for (const char *p = s; *p;) {
    int n = utf8_seq_len(p);
    if (!n) return (long)(p - s);
    p += n;
  }
  return -1;
}
