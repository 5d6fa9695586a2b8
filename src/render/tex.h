// tex.h -- a TeX-subset math layout engine: formula source → box tree → Scene commands.
//
// tex_layout parses a formula (the body between $...$, without the dollars) and lays it out
// with TeX's rules (styles D/T/S/SS, spacing classes, scripts, fractions, radicals, limits,
// growing delimiters, matrices) using the metrics of Latin Modern Math through text.h
// (DejaVu when fonts-lmodern is missing). Sizes are pixels: size_px is the font size of the
// text style, rounded and kept within 4..200; scripts are 70% and 50% of it. Metrics are in
// pixels, ascent above and descent below the baseline, both positive.
// tex_emit appends glyphs, rules and lines to a Scene at a pen position (x, baseline y, y down),
// so the same box draws into pixels and SVG alike. The caller owns the TexBox (tex_free).
//
// Errors never stop layout: an unknown command is drawn in red as typed, a missing brace is
// closed, a missing argument is left empty; each problem is counted in a TexDiag (optional,
// may be NULL) with its byte offset, line and column in the source. tex_layout returns NULL
// only when out of memory. Nesting deeper than TEX_MAX_DEPTH is cut off and reported.
// tex_check parses only (no fonts needed), for `stepformer check`. Thread-safe.
//
//     TexDiag diag;
//     TexBox *b = tex_layout("A = \\operatorname{softmax}(QK^\\top/\\sqrt{d_k})", 32, true, &diag);
//     TexMetrics m = tex_metrics(b);   // centre it, frame it, ...
//     tex_emit(&scene, b, x, y + m.ascent, SF_RGBA(0, 0, 0, 255));
//     tex_free(b);
//
// Understood: letters (math italic), digits, + - * / = < > ( ) [ ] | , ; : ! ' and Unicode
// typed as such (α, →, ℝ); ^ _ and primes; {groups}; \frac \dfrac \tfrac \binom \sqrt[n];
// \left \middle \right with ( ) [ ] \{ \} | \| \langle \rangle \lfloor ... and .; \big \Big
// \bigg \Bigg (l r m); \mathbf \mathrm \mathit \mathbb \mathcal \mathfrak \mathsf \mathtt
// \boldsymbol \bm; \text \textbf \textit \mbox; \operatorname(*) and \sin \cos \exp \log
// \max \min \lim ...; \sum \prod \int ... with \limits \nolimits; Greek (\epsilon
// \varepsilon ...); relations, arrows, operators and dots (\ldots \cdots \vdots \ddots);
// \hat \tilde \bar \vec \dot \ddot \widehat \widetilde \overline \underline;
// \overset \underset \stackrel \not; spaces \, \: \; \! \quad \qquad \hspace{..} ~;
// \textcolor{#RRGGBB or name}{...} and \color; \displaystyle ...; \phantom; environments
// matrix pmatrix bmatrix Bmatrix vmatrix Vmatrix cases aligned (& and \\); % comments.
#ifndef SF_TEX_H
#define SF_TEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "scene.h" // defines: Scene

enum {
  TEX_DIAG_MAX = 8,   // problems kept with their text (all are counted)
  TEX_MAX_DEPTH = 48, // deepest nesting of groups, scripts and arguments
};

typedef struct {
  int offset;    // byte offset in the source, 0-based
  int line, col; // 1-based; col counts code points from the start of the line
  char msg[112]; // e.g. "unknown command \mathbff", "missing } for { opened here"
} TexProblem;

typedef struct {
  int count; // every problem found; the first TEX_DIAG_MAX are in items
  TexProblem items[TEX_DIAG_MAX];
} TexDiag;

typedef struct {
  float width, ascent, descent; // pixels; ascent above, descent below the baseline
} TexMetrics;

typedef struct TexBox TexBox; // a laid-out formula (opaque)

// Parses and lays out src (NUL-terminated UTF-8). display selects display style (limits above
// and below \sum, bigger fractions). diag (may be NULL) is cleared, then filled.
TexBox *tex_layout(const char *src, float size_px, bool display, TexDiag *diag);
// The same for the first len bytes of src (no NUL needed), e.g. a $...$ inside a lesson line.
TexBox *tex_layout_n(const char *src, size_t len, float size_px, bool display, TexDiag *diag);
TexMetrics tex_metrics(const TexBox *b); // zeros for NULL
// Appends the formula with its pen at (x, baseline_y); parts without a colour of their own
// (\textcolor, \color, unknown commands in red) take `color`.
void tex_emit(Scene *s, const TexBox *b, float x, float baseline_y, uint32_t color);
void tex_free(TexBox *b); // NULL is fine

// The next '$' of s that opens or closes inline math in running text (a step title), or NULL:
// a '$' written \$ is a dollar sign, not a delimiter.
const char *tex_next_dollar(const char *s);
// The plain Unicode text of a formula (the body between dollars), for what cannot typeset: a
// window's title bar, a file's metadata. \sqrt{d_k} → √d_k, QK^\top → QKᵀ, \mathbb{R} → ℝ,
// \frac{a}{b} → a/b, x^2 → x², \alpha → α; an unknown command stays as typed. Writes at most cap
// bytes with the NUL (cut at a character boundary) and returns the length.
size_t tex_plain(const char *src, char *out, size_t cap);
// A title with $...$ formulas as plain text: each formula through tex_plain, \$ as $, the rest as
// it is ("Why $\sqrt{d_k}$?" → "Why √d_k?").
size_t tex_plain_title(const char *title, char *out, size_t cap);

// Layout + emit + free in one call; returns the metrics of what it drew.
TexMetrics tex_draw(Scene *s, const char *src, float size_px, bool display, float x, float baseline_y,
                    uint32_t color);

// Parses only (no fonts needed); returns true when there was no problem.
bool tex_check(const char *src, TexDiag *diag);
bool tex_check_n(const char *src, size_t len, TexDiag *diag);

// A formula's top-level parts, split where it holds \quad, \qquad or a wider space outside any
// group, \left...\right or environment: where a displayed formula too wide for its column may be
// broken into lines. Each part is a byte range [start, end) of src without the space; a part
// keeps its punctuation ("Z = OE," of "Z = OE, \qquad Z \in \mathbb{R}^{L \times D}").
// Writes at most max parts and returns how many; 0 for an empty formula, 1 when there is
// nothing to split at.
typedef struct {
  size_t start, end;
} TexPart;
int tex_parts(const char *src, size_t len, TexPart *parts, int max);

// "unknown command \mathbff at column 3" (line too when the source has several lines).
// Returns buf.
const char *tex_problem_str(const TexProblem *p, char *buf, size_t cap);

#endif
