// unicode.h -- the Unicode facts the tokenizers need, for any code point: general categories,
// simple lowercase, canonical normalization (NFC, NFD), and decoding UTF-8 that may be invalid.
// One wrapper around utf8proc (Debian's libutf8proc, Unicode 15), so that no other file includes it.
//
// Code points are int32_t; UNI_INVALID (-1) stands for one byte that does not start a valid UTF-8
// sequence (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, a cut
// sequence): uni_decode consumes exactly one byte for it, so every byte of any input is seen once.
//
//     int32_t cp;
//     for (size_t i = 0; i < n; i += uni_decode(s + i, n - i, &cp))
//       if (uni_is_letter(cp)) ...
#ifndef SF_UNICODE_H
#define SF_UNICODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UNI_INVALID (-1)

// General categories, as two letters ("Lu", "Mn", ...): uni_category returns one of these.
typedef enum {
  UNI_Cn,
  UNI_Lu,
  UNI_Ll,
  UNI_Lt,
  UNI_Lm,
  UNI_Lo,
  UNI_Mn,
  UNI_Mc,
  UNI_Me,
  UNI_Nd,
  UNI_Nl,
  UNI_No,
  UNI_Pc,
  UNI_Pd,
  UNI_Ps,
  UNI_Pe,
  UNI_Pi,
  UNI_Pf,
  UNI_Po,
  UNI_Sm,
  UNI_Sc,
  UNI_Sk,
  UNI_So,
  UNI_Zs,
  UNI_Zl,
  UNI_Zp,
  UNI_Cc,
  UNI_Cf,
  UNI_Cs,
  UNI_Co
} UniCategory;

// Decodes the character at s[0..n) (n >= 1): returns its byte length (1-4) and sets *cp, or
// returns 1 with *cp = UNI_INVALID.
int uni_decode(const char *s, size_t n, int32_t *cp);
// Writes cp as UTF-8 into out (4 bytes of room), returns the length (0 for an invalid cp).
int uni_encode(int32_t cp, char *out);

UniCategory uni_category(int32_t cp); // UNI_Cn (unassigned) for UNI_INVALID
bool uni_is_letter(int32_t cp);       // \p{L}: Lu Ll Lt Lm Lo
bool uni_is_number(int32_t cp);       // \p{N}: Nd Nl No
bool uni_is_punct(int32_t cp);        // \p{P}: Pc Pd Ps Pe Pi Pf Po
bool uni_is_cased(int32_t cp);        // Lu Ll Lt, or a letter with a case mapping
// Python's str.isspace: category Zs or bidirectional class WS, B or S.
bool uni_is_py_space(int32_t cp);
int32_t uni_tolower(int32_t cp); // the simple lowercase mapping (cp itself when none)

// Canonical composition / decomposition of the valid UTF-8 text s[0..n) (no NUL in it): a malloc'd,
// NUL-terminated string and its length in *out_len, or NULL when s is not valid or memory ran out.
char *uni_nfc(const char *s, size_t n, size_t *out_len);
char *uni_nfd(const char *s, size_t n, size_t *out_len);

#endif
