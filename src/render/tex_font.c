// tex_font.c -- glyph metrics for the math layout: a cache in front of text_glyph, the choice
// of a face that has a character (Latin Modern Math first, then text faces), and UTF-8.
#include <pthread.h>
#include <string.h>

#include "tex_internal.h"

enum { SLOTS = 4096 }; // (face, px, cp) → metrics; emptied when three quarters full

typedef struct {
  uint32_t cp;
  uint16_t px;
  uint8_t face, state; // state: 0 empty, 1 present, 2 absent
  GlyphInfo g;
} Slot;

static Slot slots[SLOTS];
static int n_used;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

SF_NO_COVERAGE static unsigned slot_of(FontFace f, int px, uint32_t cp) {
  uint32_t h = cp * 2654435761u ^ (uint32_t)px * 40503u ^ (uint32_t)f * 2246822519u;
  return (h ^ h >> 15) % SLOTS;
}

SF_NO_COVERAGE bool tex_glyph(FontFace f, int px, uint32_t cp, GlyphInfo *g) {
  unsigned i = slot_of(f, px, cp);
  pthread_mutex_lock(&lock);
  for (;; i = (i + 1) % SLOTS) {
    Slot *s = &slots[i];
    if (!s->state) break;
    if (s->cp == cp && s->px == px && s->face == f) {
      *g = s->g;
      bool ok = s->state == 1;
      pthread_mutex_unlock(&lock);
      return ok;
    }
  }
  pthread_mutex_unlock(&lock);
  GlyphInfo m = {0};
  bool ok = text_glyph(f, (float)px, cp, &m);
  *g = m;
  if (!ok && !tex_fonts_ready()) return false; // no fonts yet: do not remember the absence
  pthread_mutex_lock(&lock);
  if (n_used >= SLOTS * 3 / 4) {
    memset(slots, 0, sizeof slots);
    n_used = 0;
  }
  for (i = slot_of(f, px, cp); slots[i].state; i = (i + 1) % SLOTS)
    if (slots[i].cp == cp && slots[i].px == px && slots[i].face == f) break;
  if (!slots[i].state) n_used++;
  slots[i] = (Slot){cp, (uint16_t)px, (uint8_t)f, ok ? 1 : 2, m};
  pthread_mutex_unlock(&lock);
  return ok;
}

bool tex_fonts_ready(void) { return text_line_height(FONT_MATH, 16) > 0; }

bool tex_lm_math(void) {
  GlyphInfo g; // Latin Modern Math's radical bottom piece stands on the baseline, 1.82 em tall
  return tex_glyph(FONT_MATH, 100, 0x23B7, &g) && g.miny > -1 && g.maxy > 170;
}

static bool has(FontFace f, uint32_t cp) {
  GlyphInfo g;
  return tex_glyph(f, 16, cp, &g);
}

// A letter or digit of the Mathematical Alphanumeric Symbols block, unstyled: the plain code
// point and a text face of the same look (for fonts without the block, e.g. DejaVu Serif).
static uint32_t unstyle(uint32_t cp, FontFace *face) {
  static const FontFace LATIN[13] = {FONT_SERIF_BOLD, FONT_SERIF_ITALIC, FONT_SERIF_BOLD,  FONT_SERIF_ITALIC,
                                     FONT_SERIF_BOLD, FONT_SERIF,        FONT_SERIF_BOLD,  FONT_SERIF_BOLD,
                                     FONT_SANS,       FONT_SANS_BOLD,    FONT_SANS_ITALIC, FONT_SANS_ITALIC,
                                     FONT_MONO};
  static const FontFace GREEK[5] = {FONT_SERIF_BOLD, FONT_SERIF_ITALIC, FONT_SERIF_BOLD, FONT_SANS_BOLD,
                                    FONT_SANS_BOLD};
  static const FontFace DIGITS[5] = {FONT_SERIF_BOLD, FONT_SERIF_BOLD, FONT_SANS, FONT_SANS_BOLD, FONT_MONO};
  static const uint32_t GX[7] = {0x2202, 0x3F5, 0x3D1, 0x3F0, 0x3D5, 0x3F1, 0x3D6};
  if (cp == 0x210E) return *face = FONT_SERIF_ITALIC, 'h';
  if (cp >= 0x1D400 && cp < 0x1D6A4) {
    uint32_t k = (cp - 0x1D400) / 52, i = (cp - 0x1D400) % 52;
    *face = LATIN[k];
    return i < 26 ? 'A' + i : 'a' + i - 26;
  }
  if (cp >= 0x1D6A8 && cp < 0x1D7CA) {
    uint32_t k = (cp - 0x1D6A8) / 58, i = (cp - 0x1D6A8) % 58;
    *face = GREEK[k];
    if (i < 25) return i == 17 ? 0x3F4 : 0x391 + i;
    if (i == 25) return 0x2207;
    return i < 51 ? 0x3B1 + i - 26 : GX[i - 51];
  }
  if (cp >= 0x1D7CE && cp <= 0x1D7FF) {
    *face = DIGITS[(cp - 0x1D7CE) / 10];
    return '0' + (cp - 0x1D7CE) % 10;
  }
  return 0;
}

FontFace tex_face_for(uint32_t cp, uint32_t *out_cp) {
  *out_cp = cp;
  if (has(FONT_MATH, cp)) return FONT_MATH;
  FontFace f;
  uint32_t plain = unstyle(cp, &f);
  if (plain && has(f, plain)) return *out_cp = plain, f;
  static const FontFace ORDER[] = {FONT_SERIF, FONT_SANS, FONT_MONO, FONT_SERIF_ITALIC};
  for (size_t i = 0; i < sizeof ORDER / sizeof ORDER[0]; i++)
    if (has(ORDER[i], cp)) return ORDER[i];
  if (plain && has(FONT_MATH, plain)) return *out_cp = plain, FONT_MATH;
  return FONT_MATH; // absent everywhere: the caller reports it
}

SF_NO_COVERAGE int tex_utf8_put(uint32_t cp, char out[5]) {
  int n;
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80)
    out[0] = (char)cp, n = 1;
  else if (cp < 0x800)
    out[0] = (char)(0xC0 | cp >> 6), out[1] = (char)(0x80 | (cp & 0x3F)), n = 2;
  else if (cp < 0x10000) {
    out[0] = (char)(0xE0 | cp >> 12), out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
  } else {
    out[0] = (char)(0xF0 | cp >> 18), out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), out[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
  }
  out[n] = 0;
  return n;
}
