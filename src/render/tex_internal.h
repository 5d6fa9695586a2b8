// tex_internal.h -- what the tex_*.c files share: the arena, the parse tree (TexNode), the box
// tree (TexBoxNode), the symbol tables and the font helpers. Not for use outside tex_*.c (and
// tests/fuzz/fuzz_tex.c, which parses once for tex_check and tex_layout: tex_check_tree).
//
// The parser (tex_parse.c) turns source into a tree of TexNodes allocated from an arena; the
// layout (tex_layout.c, tex_delim.c) turns the nodes into TexBoxNodes from another arena;
// tex_emit.c walks the boxes. Box coordinates: x right, y UP from the parent's baseline, pixels.
#ifndef SF_TEX_INTERNAL_H
#define SF_TEX_INTERNAL_H

#include "tex.h"
#include "nocov.h" // defines: SF_NO_COVERAGE
#include "text.h"  // defines: FontFace, GlyphInfo

// ---- arena: zeroed allocations freed all at once
typedef struct TexChunk TexChunk;
typedef struct {
  TexChunk *head;
  bool oom; // an allocation failed
} TexArena;

void *tex_alloc(TexArena *a, size_t bytes); // zeroed; NULL (and a->oom) when out of memory
char *tex_strndup(TexArena *a, const char *s, size_t n);
void tex_arena_free(TexArena *a);

// ---- diagnostics
void tex_diag_add(TexDiag *d, const char *src, int offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

// ---- atom classes (TeX's spacing classes) and styles
typedef enum { C_ORD, C_OP, C_BIN, C_REL, C_OPEN, C_CLOSE, C_PUNCT, C_INNER, C_NONE } TexClass;
typedef enum { ST_D, ST_T, ST_S, ST_SS } TexStyle;

// Alphabets: how letters and digits of a N_CHAR are drawn.
typedef enum {
  AL_MATH, // default: italic letters and lowercase Greek, upright digits and capital Greek
  AL_RM,   // \mathrm, \operatorname: upright (runs of letters become N_RUN)
  AL_IT,   // \mathit: text italic (runs)
  AL_BF,   // \mathbf: bold upright
  AL_BI,   // \boldsymbol, \bm: bold italic
  AL_BB,   // \mathbb: double-struck
  AL_CAL,  // \mathcal: script
  AL_FRAK, // \mathfrak
  AL_SF,   // \mathsf
  AL_TT,   // \mathtt
} TexAlphabet;

// ---- parse tree
typedef enum {
  N_CHAR,      // one math character cp drawn in alphabet `alpha`
  N_RUN,       // a run of text (\text, operator names, numbers): text in face
  N_GROUP,     // {a...}: a list laid out as one atom
  N_FRAC,      // a over b; rule (0 for \binom), ldelim/rdelim, style override
  N_SQRT,      // radical over a, index b (or NULL)
  N_LEFTRIGHT, // \left ldelim a \right rdelim (has_middle when a \middle is inside)
  N_DELIM,     // a fixed-size delimiter cp (\big...: amount = height in em; \middle: -1)
  N_ACCENT,    // accent cp over a; wide for \widehat...
  N_OVERLINE,  // a with a rule above
  N_UNDERLINE, // a with a rule below
  N_STACK,     // a with b set above (\overset) and/or c below (\underset)
  N_MATRIX,    // rows × cols cells (lists), inside ldelim/rdelim
  N_SPACE,     // horizontal space: amount in mu (18 mu = 1 em)
  N_STYLE,     // switch to `style` for the rest of the list
  N_PHANTOM,   // invisible a; phantom: 1 full, 2 h-only (width), 3 v-only (height)
  N_ERROR,     // text drawn in red as typed (unknown command, stray character)
} TexNodeKind;

typedef struct TexNode TexNode;
struct TexNode {
  uint8_t kind, cls, alpha, style;          // style: N_STYLE, N_FRAC override (0xFF none)
  uint8_t limits;                           // 0 default, 1 \limits, 2 \nolimits
  uint8_t face;                             // N_RUN
  uint8_t rule;                             // N_FRAC: 1 with a fraction bar
  uint8_t wide, phantom, has_middle, align; // align: matrix columns 'c' or 'l'
  bool primes;                              // sup holds primes only (so ^ may still follow)
  int pos;                                  // byte offset in the source
  uint32_t cp, color;                       // color 0: inherit
  uint32_t ldelim, rdelim;                  // 0: none ('.')
  float amount;
  const char *text;   // N_RUN, N_ERROR (arena)
  TexNode *a, *b, *c; // operands (lists)
  TexNode *sup, *sub; // scripts (lists)
  TexNode *next;      // next in its list
  int rows, cols;
  TexNode **cells; // N_MATRIX: rows*cols lists (NULL for an empty cell)
};

// Parses src[0..len) into a list; always returns something unless out of memory (a->oom).
TexNode *tex_parse(TexArena *a, const char *src, size_t len, TexDiag *diag);

// tex_check_n and tex_layout_n in two halves, for a caller that wants both answers from one
// parse (the TeX fuzz target, where a parse was a sixth of the time). tex_check_tree parses as
// tex_check_n does (diag cleared, then filled; the same answer) and leaves the tree in *a and
// *list (list may be NULL); tex_layout_tree lays that tree out as tex_layout_n does, adding its
// problems to those diag (may be NULL) holds, and frees *a.
bool tex_check_tree(TexArena *a, const char *src, size_t len, TexDiag *diag, const TexNode **list);
TexBox *tex_layout_tree(TexArena *parse, const TexNode *list, const char *src, float size_px, bool display,
                        TexDiag *diag);

// ---- symbol tables (tex_symbols.c)
typedef enum {
  K_SYM,
  K_OPNAME,
  K_ALPHA,
  K_TEXT,
  K_FRAC,
  K_BINOM,
  K_SQRT,
  K_LEFT,
  K_RIGHT,
  K_MIDDLE,
  K_BIG,
  K_ACCENT,
  K_OVERLINE,
  K_UNDERLINE,
  K_SPACE,
  K_HSPACE,
  K_COLOR,
  K_TEXTCOLOR,
  K_BEGIN,
  K_END,
  K_STYLE,
  K_LIMITS,
  K_CLASS,
  K_OPERATORNAME,
  K_STACK,
  K_PHANTOM,
  K_NOT,
  K_IGNORE,
} TexCmdKind;

typedef struct {
  const char *name; // without the backslash
  uint8_t kind, cls;
  uint32_t cp;      // K_SYM, K_ACCENT: the character; K_ALPHA/K_TEXT: alphabet or face
  float arg;        // K_SPACE: mu; K_BIG: size in em; K_OPNAME: 1 with limits; K_STYLE: style
  const char *text; // K_OPNAME: the name drawn
} TexCmd;

const TexCmd *tex_cmd_find(const char *name, size_t n);
// A known command within an edit or two of a typo (\mathbff → mathbf), or NULL.
const char *tex_cmd_nearest(const char *name, size_t n);
TexClass tex_char_class(uint32_t cp);              // class of a character typed or named
uint32_t tex_delim_cp(const char *name, size_t n); // \langle → U+27E8, 0 when not a delimiter
uint32_t tex_not_cp(uint32_t cp);                  // \not= → ≠, 0 when unknown
bool tex_color_parse(const char *s, size_t n, uint32_t *rgba);
uint32_t tex_alpha_cp(uint32_t cp, TexAlphabet al); // the styled code point (𝑥 for x, ...)
int tex_italic_corr(uint32_t cp);                   // italic correction in 1/1000 em (Latin Modern Math)
int tex_top_accent(uint32_t cp);                    // top accent attachment in 1/1000 em, -1 unknown

// ---- fonts (tex_font.c): glyph metrics cached by (face, px, cp)
bool tex_glyph(FontFace f, int px, uint32_t cp, GlyphInfo *g);
// Finds a face that has cp (the math face first), else maps a styled letter back to a plain
// one in a text face (𝑥 → x in the italic face); returns the face and writes the code point.
FontFace tex_face_for(uint32_t cp, uint32_t *out_cp);
int tex_utf8_put(uint32_t cp, char out[5]); // returns the length
bool tex_fonts_ready(void);
bool tex_lm_math(void); // Latin Modern Math is the math face (else DejaVu fallback)

// ---- box tree
typedef enum { B_GLYPH, B_RULE, B_LINE, B_GROUP } TexBoxKind;

typedef struct TexBoxNode TexBoxNode;
struct TexBoxNode {
  uint8_t kind, face;
  bool hidden;              // phantoms: measured, not drawn
  bool soft;                // B_RULE continuing a glyph's stroke: exact edges, not whole pixels
  float w, h, d;            // width, height above and depth below the origin
  float x, y;               // origin in the parent (y up)
  uint32_t color;           // 0 inherit
  float size;               // B_GLYPH font size (whole pixels)
  const char *text;         // B_GLYPH
  GlyphInfo g;              // B_GLYPH: ink of its (first) glyph
  float x2, y2, lw;         // B_LINE: end point from the origin, line width
  TexBoxNode *first, *last; // B_GROUP children
  TexBoxNode *next;
};

struct TexBox {
  TexArena arena;
  TexBoxNode *root;
};

// Layout context shared by tex_layout.c and tex_delim.c.
typedef struct {
  TexArena *arena;
  TexDiag *diag;
  const char *src;
  float base;         // font size of the text style, pixels
  bool lm;            // Latin Modern Math is there (else DejaVu: no stretchy pieces)
  float mid_h, mid_d; // \middle delimiters cover this (0, 0: measuring pass, draw nothing)
  int measuring;      // inside a first pass of \left...\middle...\right: one pass suffices
} TexLay;

TexBoxNode *tex_lay_formula(TexLay *L, const TexNode *list, bool display);

float tex_style_size(const TexLay *L, TexStyle st); // font size in whole pixels
TexBoxNode *tex_box_new(TexLay *L, TexBoxKind k);
void tex_box_add(TexBoxNode *parent, TexBoxNode *child, float x, float y); // grows parent
TexBoxNode *tex_box_glyph(TexLay *L, FontFace f, float size, uint32_t cp);
TexBoxNode *tex_box_run(TexLay *L, FontFace f, float size, const char *utf8);
TexBoxNode *tex_box_rule(TexLay *L, float w, float h, float d);
TexBoxNode *tex_box_line(TexLay *L, float x0, float y0, float x1, float y1, float lw);

// Delimiters and radicals (tex_delim.c). `em` is the font size of the style; the result's
// height + depth is at least `total` and it is centred on the math axis (delimiters).
TexBoxNode *tex_delim(TexLay *L, uint32_t cp, float em, float total);
TexBoxNode *tex_delim_around(TexLay *L, uint32_t cp, float em, float h, float d);
// A radical sign whose ink is at least `total` tall. Its top (the box's height) is the top of
// the vinculum, which starts at *rule_x.
TexBoxNode *tex_radical(TexLay *L, float em, float total, float *rule_x);
TexBoxNode *tex_bigop(TexLay *L, uint32_t cp, float em, bool display);

// ---- constants of Latin Modern Math, in em (the MATH table's values / 1000)
#define TEX_AXIS 0.250f
#define TEX_RULE 0.040f
#define TEX_XHEIGHT 0.450f

#endif
