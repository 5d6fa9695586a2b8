// unicode.c -- see unicode.h. Everything goes through utf8proc.
#include "unicode.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

// utf8proc's category enum is in the same order as UniCategory (Cn = 0 ... Co = 29).
_Static_assert(UTF8PROC_CATEGORY_CN == 0 && UTF8PROC_CATEGORY_LU == 1 && UTF8PROC_CATEGORY_MN == 6 &&
                   UTF8PROC_CATEGORY_ND == 9 && UTF8PROC_CATEGORY_PC == 12 && UTF8PROC_CATEGORY_ZS == 23 &&
                   UTF8PROC_CATEGORY_CC == 26 && UTF8PROC_CATEGORY_CO == 29,
               "utf8proc category order");

int uni_decode(const char *s, size_t n, int32_t *cp) {
  utf8proc_int32_t c;
  utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s, n > 4 ? 4 : (utf8proc_ssize_t)n, &c);
  if (k <= 0 || !utf8proc_codepoint_valid(c)) {
    *cp = UNI_INVALID;
    return 1;
  }
  *cp = c;
  return (int)k;
}

int uni_encode(int32_t cp, char *out) {
  if (cp < 0 || !utf8proc_codepoint_valid(cp)) return 0;
  return (int)utf8proc_encode_char(cp, (utf8proc_uint8_t *)out);
}

UniCategory uni_category(int32_t cp) {
  if (cp < 0 || cp > 0x10FFFF) return UNI_Cn;
  return (UniCategory)utf8proc_category(cp);
}

bool uni_is_letter(int32_t cp) {
  UniCategory c = uni_category(cp);
  return c >= UNI_Lu && c <= UNI_Lo;
}

bool uni_is_number(int32_t cp) {
  UniCategory c = uni_category(cp);
  return c >= UNI_Nd && c <= UNI_No;
}

bool uni_is_punct(int32_t cp) {
  UniCategory c = uni_category(cp);
  return c >= UNI_Pc && c <= UNI_Po;
}

bool uni_is_cased(int32_t cp) {
  UniCategory c = uni_category(cp);
  if (c == UNI_Lu || c == UNI_Ll || c == UNI_Lt) return true;
  return cp >= 0 && cp <= 0x10FFFF && (utf8proc_tolower(cp) != cp || utf8proc_toupper(cp) != cp);
}

bool uni_is_py_space(int32_t cp) {
  if (cp < 0 || cp > 0x10FFFF) return false;
  const utf8proc_property_t *p = utf8proc_get_property(cp);
  return p->category == UTF8PROC_CATEGORY_ZS || p->bidi_class == UTF8PROC_BIDI_CLASS_WS ||
         p->bidi_class == UTF8PROC_BIDI_CLASS_B || p->bidi_class == UTF8PROC_BIDI_CLASS_S;
}

int32_t uni_tolower(int32_t cp) { return cp < 0 || cp > 0x10FFFF ? cp : utf8proc_tolower(cp); }

static char *uni_map(const char *s, size_t n, size_t *out_len, utf8proc_option_t opt) {
  utf8proc_uint8_t *out = NULL;
  utf8proc_ssize_t k = utf8proc_map((const utf8proc_uint8_t *)s, (utf8proc_ssize_t)n, &out, opt);
  if (k < 0) return NULL;
  *out_len = (size_t)k;
  return (char *)out;
}

char *uni_nfc(const char *s, size_t n, size_t *out_len) {
  return uni_map(s, n, out_len, UTF8PROC_STABLE | UTF8PROC_COMPOSE);
}

char *uni_nfd(const char *s, size_t n, size_t *out_len) {
  return uni_map(s, n, out_len, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE);
}
