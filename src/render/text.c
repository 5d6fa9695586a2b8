// text.c -- see text.h.
#include "text.h"

#include "fileio.h" // defines: file_map
#include "nocov.h"  // defines: SF_NO_COVERAGE
#include "utf8.h"   // defines: utf8_is_cont, utf8_lead_len

#include <SDL.h>
#include <SDL_ttf.h>
#if !SF_WEB
#include <fontconfig/fontconfig.h>
#endif
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PX 400       // largest font size kept open
#define CACHE_SLOTS 8192 // rasterized strings kept; the table is emptied when it fills up
#define MAX_FALLBACK 12  // fonts fontconfig found for characters the faces lack (Chinese, …)
#define MAX_MISSES 64    // characters no installed font has, remembered so as not to ask again
#define MAX_RUNS 64      // pieces of one string drawn from different fonts

typedef struct {
  const char *pattern; // fontconfig pattern
  const char *family;  // the family fontconfig must answer with (else: not installed)
  const char *fallback_pattern, *fallback_family;
  const char *package;
  const char *svg_family, *svg_style;
} FaceSpec;

static const FaceSpec SPECS[FONT_COUNT] = {
    [FONT_SANS] = {"DejaVu Sans:style=Book", "DejaVu Sans", NULL, NULL, "fonts-dejavu-core",
                   "DejaVu Sans, sans-serif", ""},
    [FONT_SANS_BOLD] = {"DejaVu Sans:style=Bold", "DejaVu Sans", NULL, NULL, "fonts-dejavu-core",
                        "DejaVu Sans, sans-serif", "font-weight:bold"},
    [FONT_SANS_ITALIC] = {"DejaVu Sans:style=Oblique", "DejaVu Sans", NULL, NULL, "fonts-dejavu-core",
                          "DejaVu Sans, sans-serif", "font-style:oblique"},
    [FONT_MONO] = {"DejaVu Sans Mono:style=Book", "DejaVu Sans Mono", NULL, NULL, "fonts-dejavu-core",
                   "DejaVu Sans Mono, monospace", ""},
    [FONT_MATH] = {"Latin Modern Math", "Latin Modern Math", "DejaVu Serif:style=Book", "DejaVu Serif",
                   "fonts-lmodern", "Latin Modern Math, STIX Two Math, Cambria Math, serif", ""},
    [FONT_SERIF] = {"Latin Modern Roman:style=10 Regular", "Latin Modern Roman", "DejaVu Serif:style=Book",
                    "DejaVu Serif", "fonts-lmodern", "Latin Modern Roman, Computer Modern, serif", ""},
    [FONT_SERIF_ITALIC] = {"Latin Modern Roman:style=10 Italic", "Latin Modern Roman",
                           "DejaVu Serif:style=Italic", "DejaVu Serif", "fonts-lmodern",
                           "Latin Modern Roman, Computer Modern, serif", "font-style:italic"},
    [FONT_SERIF_BOLD] = {"Latin Modern Roman:style=10 Bold", "Latin Modern Roman", "DejaVu Serif:style=Bold",
                         "DejaVu Serif", "fonts-lmodern", "Latin Modern Roman, Computer Modern, serif",
                         "font-weight:bold"},
};

typedef struct {
  uint64_t hash;
  int face, px;
  char *text;
  float width;
  uint8_t *mask; // NULL until first drawn
  int mw, mh, ascent;
  int xoff, yoff; // where SDL_ttf put the pen inside the mask, beyond (0, ascent)
  bool used;
} Entry;

// A font: one of the faces (0 .. FONT_COUNT-1) or a fallback (FONT_COUNT + k).
#define N_FONTS (FONT_COUNT + MAX_FALLBACK)

static struct {
  bool ready;
  char files[N_FONTS][1024];
  const void *data[N_FONTS]; // each font file mapped once: FreeType then reads glyphs from
  size_t size[N_FONTS];      // memory instead of seeking the file for every size opened
  TTF_Font *fonts[N_FONTS][MAX_PX + 1];
  int n_fallback;              // fallbacks found so far, in files[FONT_COUNT ..]
  uint32_t misses[MAX_MISSES]; // characters no font has
  int n_misses;
  char warning[256];
  Entry *cache;
  int cache_n;
  int drawing;         // threads blending a cached mask outside the lock: the cache must wait
  pthread_cond_t idle; // signalled when drawing drops to 0
  pthread_mutex_t lock;
} T = {.lock = PTHREAD_MUTEX_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER};

#if SF_WEB
// The web page has no fontconfig: scripts/web puts these files in the page's data (/fonts), and
// a pattern is found when its file is there.
static const struct {
  const char *pattern, *file;
} WEB_FONTS[] = {
    {"DejaVu Sans:style=Book", "/fonts/DejaVuSans.ttf"},
    {"DejaVu Sans:style=Bold", "/fonts/DejaVuSans-Bold.ttf"},
    {"DejaVu Sans:style=Oblique", "/fonts/DejaVuSans-Oblique.ttf"},
    {"DejaVu Sans Mono:style=Book", "/fonts/DejaVuSansMono.ttf"},
    {"DejaVu Serif:style=Book", "/fonts/DejaVuSerif.ttf"},
    {"DejaVu Serif:style=Italic", "/fonts/DejaVuSerif-Italic.ttf"},
    {"DejaVu Serif:style=Bold", "/fonts/DejaVuSerif-Bold.ttf"},
    {"Latin Modern Math", "/fonts/latinmodern-math.otf"},
    {"Latin Modern Roman:style=10 Regular", "/fonts/lmroman10-regular.otf"},
    {"Latin Modern Roman:style=10 Italic", "/fonts/lmroman10-italic.otf"},
    {"Latin Modern Roman:style=10 Bold", "/fonts/lmroman10-bold.otf"},
};

static bool find_font(const char *pattern, const char *family, char *file, size_t cap) {
  (void)family;
  for (size_t i = 0; i < sizeof WEB_FONTS / sizeof *WEB_FONTS; i++) {
    FILE *f = strcmp(pattern, WEB_FONTS[i].pattern) ? NULL : fopen(WEB_FONTS[i].file, "rb");
    if (!f) continue;
    fclose(f);
    snprintf(file, cap, "%s", WEB_FONTS[i].file);
    return true;
  }
  return false;
}
#define FcInit() 1
// No fontconfig in the page: its fallback is the one file scripts/web puts there when it can
// (font_for then checks that it has the character).
static bool find_fallback(FontFace f, uint32_t cp, char *file, size_t cap) {
  (void)f, (void)cp;
  static const char *const WEB_FALLBACKS[] = {"/fonts/DroidSansFallbackFull.ttf"};
  for (size_t i = 0; i < sizeof WEB_FALLBACKS / sizeof *WEB_FALLBACKS; i++) {
    FILE *fp = fopen(WEB_FALLBACKS[i], "rb");
    if (!fp) continue;
    fclose(fp);
    snprintf(file, cap, "%s", WEB_FALLBACKS[i]);
    return true;
  }
  return false;
}
#else
// Asks fontconfig for pattern; returns true and the file when the answer is of `family`.
static bool find_font(const char *pattern, const char *family, char *file, size_t cap) {
  FcPattern *p = FcNameParse((const FcChar8 *)pattern);
  if (!p) return false;
  FcConfigSubstitute(NULL, p, FcMatchPattern);
  FcDefaultSubstitute(p);
  FcResult r;
  FcPattern *m = FcFontMatch(NULL, p, &r);
  FcPatternDestroy(p);
  bool ok = false;
  if (m) {
    FcChar8 *f = NULL, *fam = NULL;
    bool family_ok = false;
    for (int i = 0; FcPatternGetString(m, FC_FAMILY, i, &fam) == FcResultMatch; i++)
      if (!strcmp((const char *)fam, family)) family_ok = true;
    if (family_ok && FcPatternGetString(m, FC_FILE, 0, &f) == FcResultMatch) {
      snprintf(file, cap, "%s", (const char *)f);
      ok = true;
    }
    FcPatternDestroy(m);
  }
  return ok;
}

// Asks fontconfig for a font of the face's kind (sans-serif, serif, monospace) that has cp: its
// file, when it really holds cp (fontconfig answers its best match, which may not).
static bool find_fallback(FontFace f, uint32_t cp, char *file, size_t cap) {
  const char *kind = f == FONT_MONO ? "monospace" : f >= FONT_MATH ? "serif" : "sans-serif";
  FcPattern *p = FcNameParse((const FcChar8 *)kind);
  FcCharSet *cs = FcCharSetCreate();
  if (!p || !cs) {
    if (p) FcPatternDestroy(p);
    if (cs) FcCharSetDestroy(cs);
    return false;
  }
  FcCharSetAddChar(cs, cp);
  FcPatternAddCharSet(p, FC_CHARSET, cs);
  if (f == FONT_SANS_BOLD || f == FONT_SERIF_BOLD) FcPatternAddInteger(p, FC_WEIGHT, FC_WEIGHT_BOLD);
  FcConfigSubstitute(NULL, p, FcMatchPattern);
  FcDefaultSubstitute(p);
  FcResult r;
  FcPattern *m = FcFontMatch(NULL, p, &r);
  FcPatternDestroy(p);
  FcCharSetDestroy(cs);
  bool ok = false;
  if (m) {
    FcChar8 *fl = NULL;
    FcCharSet *have = NULL;
    if (FcPatternGetCharSet(m, FC_CHARSET, 0, &have) == FcResultMatch && FcCharSetHasChar(have, cp) &&
        FcPatternGetString(m, FC_FILE, 0, &fl) == FcResultMatch) {
      snprintf(file, cap, "%s", (const char *)fl);
      ok = true;
    }
    FcPatternDestroy(m);
  }
  return ok;
}
#endif

bool text_init(Err *err) {
  pthread_mutex_lock(&T.lock);
  if (T.ready) {
    pthread_mutex_unlock(&T.lock);
    return true;
  }
  bool ok = false;
  if (!FcInit()) {
    err_set(err, "fontconfig could not start (install fontconfig)");
    goto done;
  }
  for (int f = 0; f < FONT_COUNT; f++) {
    const FaceSpec *s = &SPECS[f];
    if (find_font(s->pattern, s->family, T.files[f], sizeof T.files[f])) continue;
    if (s->fallback_pattern &&
        find_font(s->fallback_pattern, s->fallback_family, T.files[f], sizeof T.files[f])) {
      snprintf(T.warning, sizeof T.warning,
               "font \"%s\" not found: notation uses %s instead (install %s for the look of the papers)",
               s->family, s->fallback_family, s->package);
      continue;
    }
    err_set(err, "font \"%s\" not found: install the Debian package %s (apt-get install %s)", s->family,
            s->package, s->package);
    goto done;
  }
  if (!TTF_WasInit() && TTF_Init() != 0) {
    err_set(err, "SDL2_ttf could not start: %s", TTF_GetError());
    goto done;
  }
  T.cache = calloc(CACHE_SLOTS, sizeof(Entry));
  if (!T.cache) {
    err_set(err, "out of memory for the glyph cache");
    goto done;
  }
  T.ready = ok = true;
done:
  pthread_mutex_unlock(&T.lock);
  return ok;
}

static void cache_clear(void) {
  for (int i = 0; i < CACHE_SLOTS; i++)
    if (T.cache[i].used) {
      free(T.cache[i].text);
      free(T.cache[i].mask);
    }
  memset(T.cache, 0, sizeof(Entry) * CACHE_SLOTS);
  T.cache_n = 0;
}

void text_shutdown(void) {
  pthread_mutex_lock(&T.lock);
  if (T.ready) {
    cache_clear();
    free(T.cache);
    T.cache = NULL;
    for (int f = 0; f < N_FONTS; f++)
      for (int p = 0; p <= MAX_PX; p++)
        if (T.fonts[f][p]) TTF_CloseFont(T.fonts[f][p]), T.fonts[f][p] = NULL;
    for (int f = 0; f < N_FONTS; f++) file_unmap(T.data[f], T.size[f]), T.data[f] = NULL;
    T.n_fallback = T.n_misses = 0;
    TTF_Quit();
    T.ready = false;
  }
  pthread_mutex_unlock(&T.lock);
}

const char *text_warning(void) { return T.warning[0] ? T.warning : NULL; }

static int px_of(float size) {
  int px = (int)lrintf(size);
  return px < 4 ? 4 : px > MAX_PX ? MAX_PX : px;
}

// The open font for (font, px), a face or a fallback (N_FONTS); caller holds the lock.
static TTF_Font *font(int f, int px) {
  if (!T.ready) return NULL;
  TTF_Font **slot = &T.fonts[f][px];
  if (!*slot) {
    if (!T.data[f]) { // first use of this face: map its file
      Err ignored = {0};
      T.data[f] = file_map(T.files[f], &T.size[f], &ignored);
      if (T.size[f] > INT32_MAX) file_unmap(T.data[f], T.size[f]), T.data[f] = NULL; // SDL_RWops: int
    }
    SDL_RWops *rw = T.data[f] ? SDL_RWFromConstMem(T.data[f], (int)T.size[f]) : NULL;
    *slot = rw ? TTF_OpenFontDPIRW(rw, 1, px, 72, 72) : TTF_OpenFontDPI(T.files[f], px, 72, 72);
    if (*slot) TTF_SetFontHinting(*slot, TTF_HINTING_LIGHT);
  }
  return *slot;
}

// The font that draws cp for face f at px: the face itself, else a fallback that has it (found
// through fontconfig the first time), else the face (which draws its missing-glyph box). Caller
// holds the lock.
static int font_for(FontFace f, int px, uint32_t cp) {
  TTF_Font *own = font(f, px);
  if (!own || cp < 0x80 || TTF_GlyphIsProvided32(own, cp)) return f;
  for (int k = 0; k < T.n_fallback; k++) {
    TTF_Font *fb = font(FONT_COUNT + k, px);
    if (fb && TTF_GlyphIsProvided32(fb, cp)) return FONT_COUNT + k;
  }
  for (int k = 0; k < T.n_misses; k++)
    if (T.misses[k] == cp) return f;
  char file[1024];
  if (T.n_fallback < MAX_FALLBACK && find_fallback(f, cp, file, sizeof file)) {
    int k = 0;
    while (k < T.n_fallback && strcmp(T.files[FONT_COUNT + k], file)) k++;
    if (k == T.n_fallback) snprintf(T.files[FONT_COUNT + T.n_fallback++], sizeof T.files[0], "%s", file);
    TTF_Font *fb = font(FONT_COUNT + k, px);
    if (fb && TTF_GlyphIsProvided32(fb, cp)) return FONT_COUNT + k;
  }
  T.misses[T.n_misses++ % MAX_MISSES] = cp;
  if (T.n_misses > MAX_MISSES) T.n_misses = MAX_MISSES;
  return f;
}

// s cut where the font that draws it changes: run k is [start[k], start[k + 1]) in font[k].
// Returns the number of runs (1 for a string the face draws alone). Caller holds the lock.
static int runs_of(FontFace f, int px, const char *s, int *fonts, int *start) {
  int n = 0;
  const char *p = s;
  while (*p) {
    const char *at = p;
    uint32_t cp = text_utf8_next(&p);
    // a combining mark stays with the character before it
    int fo = n > 0 && cp >= 0x300 && cp < 0x370 ? fonts[n - 1] : font_for(f, px, cp);
    if (n == 0 || fonts[n - 1] != fo) {
      if (n == MAX_RUNS - 1) break; // the rest in the last run's font
      fonts[n] = fo, start[n] = (int)(at - s), n++;
    }
  }
  start[n] = (int)strlen(s);
  return n;
}

static uint64_t hash_key(int face, int px, const char *s) {
  uint64_t h = 1469598103934665603ull ^ (uint64_t)(face * 1000 + px);
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h ? h : 1;
}

// The cache entry of (face, px, s), created (with its width) when missing; caller holds the lock.
static Entry *entry(FontFace f, int px, const char *s) {
  uint64_t h = hash_key(f, px, s);
  unsigned i = (unsigned)(h % CACHE_SLOTS);
  for (;; i = (i + 1) % CACHE_SLOTS) {
    Entry *e = &T.cache[i];
    if (!e->used) break;
    if (e->hash == h && e->face == (int)f && e->px == px && !strcmp(e->text, s)) return e;
  }
  if (T.cache_n >= CACHE_SLOTS * 3 / 4) { // full enough: start over, once no mask is in use
    while (T.drawing > 0) pthread_cond_wait(&T.idle, &T.lock);
    cache_clear();
    i = (unsigned)(h % CACHE_SLOTS);
  }
  TTF_Font *fo = font(f, px);
  size_t n = strlen(s) + 1;
  char *copy = malloc(n);
  if (!fo || !copy) {
    free(copy);
    return NULL;
  }
  memcpy(copy, s, n);
  Entry *e = &T.cache[i];
  *e = (Entry){.hash = h, .face = f, .px = px, .text = copy, .used = true};
  int fonts[MAX_RUNS], start[MAX_RUNS + 1], nr = runs_of(f, px, s, fonts, start);
  for (int k = 0; k < nr; k++) { // each piece in its own font
    char piece[1024];
    int len =
        start[k + 1] - start[k] < (int)sizeof piece - 1 ? start[k + 1] - start[k] : (int)sizeof piece - 1;
    memcpy(piece, s + start[k], (size_t)len), piece[len] = 0;
    TTF_Font *fk = font(fonts[k], px);
    int w = 0, hh = 0;
    bool whole = nr == 1 && fonts[0] == (int)f; // the common case: the face draws it all
    if (whole) fk = fo;
    if (fk && *piece && TTF_SizeUTF8(fk, whole ? s : piece, &w, &hh) == 0) e->width += (float)w;
  }
  T.cache_n++;
  return e;
}

float text_width(FontFace f, float size, const char *utf8) {
  if (!utf8 || !*utf8) return 0;
  pthread_mutex_lock(&T.lock);
  Entry *e = T.ready ? entry(f, px_of(size), utf8) : NULL;
  float w = e ? e->width : 0; // measured at the pixel size it is drawn at, so the two agree
  pthread_mutex_unlock(&T.lock);
  return w;
}

static float metric(FontFace f, float size, int which) {
  pthread_mutex_lock(&T.lock);
  TTF_Font *fo = font(f, px_of(size));
  float v = 0;
  if (fo)
    v = (float)(which == 0 ? TTF_FontAscent(fo) : which == 1 ? -TTF_FontDescent(fo) : TTF_FontLineSkip(fo));
  pthread_mutex_unlock(&T.lock);
  return v;
}

float text_ascent(FontFace f, float size) { return metric(f, size, 0); }
float text_descent(FontFace f, float size) { return metric(f, size, 1); }
float text_line_height(FontFace f, float size) { return metric(f, size, 2); }

bool text_glyph(FontFace f, float size, uint32_t cp, GlyphInfo *g) {
  pthread_mutex_lock(&T.lock);
  int px = px_of(size);
  TTF_Font *fo = T.ready ? font(font_for(f, px, cp), px) : NULL; // through the fallbacks
  int minx, maxx, miny, maxy, adv;
  bool ok = fo && TTF_GlyphIsProvided32(fo, cp) &&
            TTF_GlyphMetrics32(fo, cp, &minx, &maxx, &miny, &maxy, &adv) == 0;
  pthread_mutex_unlock(&T.lock);
  if (!ok) return false;
  *g = (GlyphInfo){(float)adv, (float)minx, (float)maxx, (float)miny, (float)maxy}; // at the drawn size
  return true;
}

bool text_provided(FontFace f, float size, uint32_t cp) {
  pthread_mutex_lock(&T.lock);
  int px = px_of(size);
  TTF_Font *fo = T.ready ? font(font_for(f, px, cp), px) : NULL;
  bool ok = fo && TTF_GlyphIsProvided32(fo, cp);
  pthread_mutex_unlock(&T.lock);
  return ok;
}

const char *text_svg_family(FontFace f) { return SPECS[f].svg_family; }
const char *text_svg_style(FontFace f) { return SPECS[f].svg_style; }

// SDL_ttf starts its surface at the leftmost ink when that lies left of the pen (a combining
// accent, an italic j) and at the highest ink when that rises above the ascent (a tall
// delimiter piece): the pen is then xoff right of and yoff below (0, ascent) in the mask.
// As in SDL_ttf 2.20's TTF_Size_Internal, with the first glyph standing for the leftmost.
static void pen_offsets(TTF_Font *fo, const char *s, int *xoff, int *yoff) {
  int top = 0, first = 1, minx, maxx, miny, maxy, adv;
  *xoff = 0;
  while (*s) {
    uint32_t cp = text_utf8_next(&s);
    if (TTF_GlyphMetrics32(fo, cp, &minx, &maxx, &miny, &maxy, &adv) != 0) continue;
    if (first && minx < 0) *xoff = -minx;
    first = 0;
    if (maxy > top) top = maxy;
  }
  *yoff = top > TTF_FontAscent(fo) ? top - TTF_FontAscent(fo) : 0;
}

// Renders e's text into its coverage mask; caller holds the lock.
// A glyph string drawn by SDL_ttf, its alpha copied into a mask: no outside bytes decided here
// (nocov.h).
// A string of several fonts (a Chinese word in a French sentence): each piece rendered by its own
// font, side by side on one baseline, into one mask. Caller holds the lock.
SF_NO_COVERAGE static bool rasterize_runs(Entry *e, const int *fonts, const int *start, int n) {
  SDL_Color white = {255, 255, 255, 255};
  SDL_Surface *part[MAX_RUNS] = {0};
  int asc[MAX_RUNS] = {0}, top = 0, below = 0, width = 0;
  bool ok = true;
  for (int k = 0; k < n && ok; k++) {
    char piece[1024];
    int len =
        start[k + 1] - start[k] < (int)sizeof piece - 1 ? start[k + 1] - start[k] : (int)sizeof piece - 1;
    memcpy(piece, e->text + start[k], (size_t)len), piece[len] = 0;
    TTF_Font *fk = font(fonts[k], e->px);
    SDL_Surface *s = fk && *piece ? TTF_RenderUTF8_Blended(fk, piece, white) : NULL;
    part[k] = s ? SDL_ConvertSurfaceFormat(s, SDL_PIXELFORMAT_ARGB8888, 0) : NULL;
    if (s) SDL_FreeSurface(s);
    ok = part[k] != NULL;
    if (!ok) break;
    asc[k] = TTF_FontAscent(fk);
    top = asc[k] > top ? asc[k] : top;
    below = part[k]->h - asc[k] > below ? part[k]->h - asc[k] : below;
    width += part[k]->w;
  }
  if (ok) {
    e->mw = width, e->mh = top + below, e->ascent = top, e->xoff = e->yoff = 0;
    e->mask = calloc((size_t)e->mw * (size_t)e->mh + 1, 1);
    ok = e->mask != NULL;
  }
  for (int k = 0, x = 0; k < n; k++) {
    if (!part[k]) continue;
    if (ok) {
      SDL_LockSurface(part[k]);
      for (int y = 0; y < part[k]->h; y++) {
        int my = top - asc[k] + y;
        if (my < 0 || my >= e->mh) continue;
        const uint32_t *row =
            (const uint32_t *)((const uint8_t *)part[k]->pixels + (size_t)y * part[k]->pitch);
        for (int px = 0; px < part[k]->w; px++)
          e->mask[(size_t)my * e->mw + x + px] = (uint8_t)(row[px] >> 24);
      }
      SDL_UnlockSurface(part[k]);
      x += part[k]->w;
    }
    SDL_FreeSurface(part[k]);
  }
  return ok;
}

SF_NO_COVERAGE static bool rasterize(Entry *e) {
  TTF_Font *fo = font(e->face, e->px);
  if (!fo) return false;
  int fonts[MAX_RUNS], start[MAX_RUNS + 1], n = runs_of((FontFace)e->face, e->px, e->text, fonts, start);
  if (n > 1 || fonts[0] != e->face) return rasterize_runs(e, fonts, start, n);
  SDL_Color white = {255, 255, 255, 255};
  SDL_Surface *s = TTF_RenderUTF8_Blended(fo, e->text, white);
  if (!s) return false;
  SDL_Surface *c = SDL_ConvertSurfaceFormat(s, SDL_PIXELFORMAT_ARGB8888, 0);
  SDL_FreeSurface(s);
  if (!c) return false;
  e->mw = c->w, e->mh = c->h, e->ascent = TTF_FontAscent(fo);
  pen_offsets(fo, e->text, &e->xoff, &e->yoff);
  e->mask = malloc((size_t)c->w * (size_t)c->h + 1);
  if (e->mask) {
    SDL_LockSurface(c);
    for (int y = 0; y < c->h; y++) {
      const uint32_t *row = (const uint32_t *)((const uint8_t *)c->pixels + (size_t)y * c->pitch);
      for (int x = 0; x < c->w; x++) e->mask[(size_t)y * c->w + x] = (uint8_t)(row[x] >> 24);
    }
    SDL_UnlockSurface(c);
  }
  SDL_FreeSurface(c);
  return e->mask != NULL;
}

// The mask is found (or rendered) under the lock and blended outside it, so that threads
// drawing pictures at once only wait for each other on strings drawn for the first time.
void text_draw(Canvas c, FontFace f, float size, float x, float y, uint32_t color, const char *utf8) {
  if (!utf8 || !*utf8) return;
  pthread_mutex_lock(&T.lock);
  Entry *e = T.ready ? entry(f, px_of(size), utf8) : NULL;
  Entry m = {0};
  if (e && (e->mask || rasterize(e))) m = *e, T.drawing++;
  pthread_mutex_unlock(&T.lock);
  if (!m.mask) return;
  canvas_blend_mask(c, (int)lrintf(x) - m.xoff, (int)lrintf(y) - m.ascent - m.yoff, m.mask, m.mw, m.mh, m.mw,
                    color);
  pthread_mutex_lock(&T.lock);
  if (--T.drawing == 0) pthread_cond_broadcast(&T.idle);
  pthread_mutex_unlock(&T.lock);
}

uint32_t text_utf8_next(const char **sp) {
  const unsigned char *s = (const unsigned char *)*sp;
  uint32_t c = s[0];
  int n = utf8_lead_len((unsigned char)c);
  if (n == 0) {
    *sp += 1;
    return 0xFFFD;
  }
  if (n == 1) {
    *sp += 1;
    return c;
  }
  c &= 0x7F >> n;
  for (int i = 1; i < n; i++) {
    if (!utf8_is_cont(s[i])) {
      *sp += i;
      return 0xFFFD;
    }
    c = (c << 6) | (s[i] & 0x3F);
  }
  *sp += n;
  return c;
}
