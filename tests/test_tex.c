// test_tex.c -- the math layout: geometry that TeX guarantees (fractions, scripts, radicals,
// growing delimiters, limits, matrices), diagnostics with columns, hostile input, speed.
//
// With SF_TEX_GALLERY=<folder> it also writes the notebooks' formulas as PNGs (display style
// at 24, 32 and 48 px, text style at 24 px) for a person to look at.
#include <string.h>
#include <time.h>

#include "check.h"
#include "pngio.h" // defines: pngio_write
#include "tex.h"   // defines: tex_layout, tex_emit, TexDiag

// fontconfig 2.14 (Debian 12) leaks ~5.7 kB once in FcInit's configuration parsing, even in a
// program that only matches one font; LeakSanitizer reads this to ignore that one library.
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libfontconfig.so\n"; }

#define BLACK SF_RGBA(0, 0, 0, 255)

static TexMetrics met(const char *src, bool display) {
  TexBox *b = tex_layout(src, 32, display, NULL);
  TexMetrics m = tex_metrics(b);
  tex_free(b);
  return m;
}

static float total(TexMetrics m) { return m.ascent + m.descent; }

// Lays src out into s at pen (100, 200).
static void draw(Scene *s, const char *src, bool display) {
  scene_reset(s, 1000, 1000, 0);
  TexBox *b = tex_layout(src, 32, display, NULL);
  tex_emit(s, b, 100, 200, BLACK);
  tex_free(b);
}

// The n-th text command whose text is t (UTF-8), or NULL.
static const Cmd *find_text(const Scene *s, const char *t, int n) {
  for (int i = 0; i < s->n; i++)
    if (s->cmds[i].kind == CMD_TEXT && !strcmp(s->cmds[i].text, t) && n-- == 0) return &s->cmds[i];
  return NULL;
}

static int count_kind(const Scene *s, CmdKind k) {
  int n = 0;
  for (int i = 0; i < s->n; i++) n += s->cmds[i].kind == k;
  return n;
}

#define X_IT "\xF0\x9D\x91\xA5" // 𝑥 U+1D465
#define A_IT "\xF0\x9D\x91\x8E" // 𝑎
#define L_IT "\xF0\x9D\x90\xBF" // 𝐿 U+1D43F
#define SUM "\xE2\x88\x91"

static void test_fraction_and_scripts(Scene *s) {
  CHECK(total(met("\\frac{a}{b}", true)) > total(met("a", true)) * 2, "a fraction is taller");
  CHECK(met("\\frac{a}{b}", true).ascent > met("a", true).ascent, "numerator raised");
  CHECK(total(met("\\frac{a}{b}", true)) > total(met("\\frac{a}{b}", false)), "display is bigger");
  draw(s, "x^2", false);
  const Cmd *x = find_text(s, X_IT, 0), *two = find_text(s, "2", 0);
  CHECK(x && two, "x^2 draws x and 2");
  if (x && two) {
    CHECK(two->y < x->y - 5, "the superscript sits above the baseline (%g vs %g)", two->y, x->y);
    CHECK(two->size < x->size && two->size >= 0.65f * x->size, "superscript at ~70%% (%g)", two->size);
    CHECK(two->x > x->x, "superscript to the right");
  }
  draw(s, "x_2", false);
  x = find_text(s, X_IT, 0), two = find_text(s, "2", 0);
  CHECK(x && two && two->y > x->y + 3, "the subscript sits below the baseline");
  draw(s, "x^{a^{2}}", false);
  two = find_text(s, "2", 0);
  const Cmd *a = find_text(s, A_IT, 0);
  CHECK(a && two && two->size < a->size && two->size >= 0.45f * 32, "scriptscript at ~50%%");
}

static void test_radical_and_delimiters(Scene *s) {
  TexMetrics r = met("\\sqrt{x}", true), x = met("x", true);
  CHECK(r.width > x.width && r.ascent > x.ascent, "a radical covers its radicand");
  draw(s, "\\sqrt{x}", true);
  CHECK(count_kind(s, CMD_RECT) == 1, "the vinculum is a rule");
  for (const char *big = "\\sqrt{\\frac{\\frac{a}{b}}{\\frac{c}{d}}}"; big; big = NULL) {
    TexMetrics m = met(big, true), in = met("\\frac{\\frac{a}{b}}{\\frac{c}{d}}", true);
    CHECK(m.ascent > in.ascent && m.descent >= in.descent - 1, "a tall radical covers it all");
  }
  TexMetrics grown = met("\\left( \\frac{a}{b} \\right)", true), plain = met("( a )", true);
  CHECK(total(grown) > total(plain) * 1.5f, "\\left( grows: %g vs %g", total(grown), total(plain));
  TexMetrics m3 = met("\\left[\\begin{matrix}1\\\\2\\\\3\\\\4\\end{matrix}\\right]", true);
  CHECK(total(m3) > 4 * 32, "brackets around four rows: %g px", total(m3));
  CHECK(total(met("\\left\\{\\begin{matrix}1\\\\2\\\\3\\\\4\\end{matrix}\\right.", true)) > 4 * 32,
        "a brace around four rows");
  CHECK(total(met("\\Bigg(", true)) > 2.9f * 32, "\\Bigg( is 3 em");
}

static void test_limits(Scene *s) {
  draw(s, "\\sum_{j=1}^{L} A_{ij}", true);
  const Cmd *sum = find_text(s, SUM, 0), *l = find_text(s, L_IT, 0);
  CHECK(sum && l, "sum and L drawn");
  if (sum && l) {
    CHECK(l->y < sum->y - 20, "display: the upper limit is above the sum");
    CHECK(l->x > sum->x && l->x < sum->x + sum->size, "display: limit over the sum (%g, %g)", l->x, sum->x);
  }
  draw(s, "\\sum_{j=1}^{L} A_{ij}", false);
  sum = find_text(s, SUM, 0), l = find_text(s, L_IT, 0);
  if (sum && l) CHECK(l->x > sum->x + 0.8f * sum->size, "text: the limit beside the sum");
  CHECK(total(met("\\sum_{j=1}^{L}", true)) > total(met("\\sum_{j=1}^{L}", false)), "stacked");
}

static void test_matrix(Scene *s) {
  draw(s, "\\begin{bmatrix} 1 & 2 & 3 \\\\ 4 & 5 & 6 \\end{bmatrix}", true);
  const char *d[6] = {"1", "2", "3", "4", "5", "6"};
  const Cmd *c[6];
  for (int i = 0; i < 6; i++) c[i] = find_text(s, d[i], 0);
  CHECK(c[0] && c[1] && c[2] && c[3] && c[4] && c[5], "six cells drawn");
  if (c[0] && c[5]) {
    CHECK(c[0]->y == c[1]->y && c[1]->y == c[2]->y && c[3]->y == c[5]->y, "two rows");
    CHECK(c[3]->y > c[0]->y + 20, "second row below");
    CHECK(c[0]->x < c[1]->x && c[1]->x < c[2]->x, "three columns");
    CHECK(fabsf(c[0]->x - c[3]->x) < 1 && fabsf(c[2]->x - c[5]->x) < 1, "columns aligned");
  }
  CHECK(count_kind(s, CMD_RECT) >= 6, "brackets drawn as rules");
  TexDiag dg;
  TexBox *b = tex_layout("\\begin{pmatrix} a & b \\\\ c & d \\\\ \\end{pmatrix}", 32, true, &dg);
  CHECK(b && dg.count == 0, "a trailing \\\\ is fine");
  tex_free(b);
}

static void test_glyphs_and_classes(Scene *s) {
  draw(s, "h + \\mathbf{W} + \\mathbb{R} + \\boldsymbol{x} + \\alpha + 2", false);
  CHECK(find_text(s, "\xE2\x84\x8E", 0), "h is U+210E");
  CHECK(find_text(s, "\xF0\x9D\x90\x96", 0), "\\mathbf{W} is U+1D416");
  CHECK(find_text(s, "\xE2\x84\x9D", 0), "\\mathbb{R} is U+211D");
  CHECK(find_text(s, "\xF0\x9D\x92\x99", 0), "\\boldsymbol{x} is U+1D499");
  CHECK(find_text(s, "\xF0\x9D\x9B\xBC", 0), "\\alpha is italic U+1D6FC");
  // a binary minus at the start is unary: no medium space after it
  float unary = met("-x", false).width, binary = met("a-x", false).width - met("a", false).width;
  CHECK(binary > unary + 32 * 7.0f / 18, "a-x has two medium spaces, -x none (%g, %g)", binary, unary);
  draw(s, "\\textcolor{#ff0000}{x} + \\color{blue} y", false);
  const Cmd *x = find_text(s, X_IT, 0), *y = find_text(s, "\xF0\x9D\x91\xA6", 0);
  CHECK(x && x->color == SF_RGBA(255, 0, 0, 255), "\\textcolor{#ff0000}");
  CHECK(y && y->color == SF_RGBA(0, 0, 255, 255), "\\color{blue}");
  const Cmd *plus = find_text(s, "+", 0);
  CHECK(plus && plus->color == BLACK, "the rest keeps the caller's colour");
  draw(s, "S[\\text{cat}, \\text{bank}]", false);
  CHECK(find_text(s, "cat", 0) && find_text(s, "bank", 0), "\\text runs drawn as words");
}

static void test_diagnostics(Scene *s) {
  TexDiag d;
  TexBox *b = tex_layout("x + \\mathbff{W}", 32, false, &d);
  CHECK(b && tex_metrics(b).width > 100, "an unknown command still produces a box");
  CHECK(d.count == 1 && d.items[0].col == 5 && d.items[0].offset == 4, "reported at column 5");
  CHECK(strstr(d.items[0].msg, "\\mathbff") != NULL, "names the command: %s", d.items[0].msg);
  char buf[160];
  CHECK(!strcmp(tex_problem_str(&d.items[0], buf, sizeof buf),
                "unknown command \\mathbff (did you mean \\mathbf?) at column 5"),
        "%s", buf);
  static const char *TYPOS[][2] = {{"\\fracc{a}{b}", "\\frac?"},  {"\\sqr{x}", "\\sqrt?"},
                                   {"\\lamda", "\\lambda?"},      {"\\operatorName{f}", "\\operatorname?"},
                                   {"\\mathbbb{R}", "\\mathbb?"}, {"\\lefft(", "\\left?"}};
  for (size_t i = 0; i < sizeof TYPOS / sizeof TYPOS[0]; i++) {
    tex_check(TYPOS[i][0], &d);
    CHECK(d.count >= 1 && strstr(d.items[0].msg, TYPOS[i][1]), "%s: a hint to %s, got \"%s\"", TYPOS[i][0],
          TYPOS[i][1], d.count ? d.items[0].msg : "");
  }
  // the scripts of an unknown command sit where they would on a known word
  draw(s, "\\foo_1", false);
  const Cmd *one = find_text(s, "1", 0);
  float y_unknown = one ? one->y : 0;
  draw(s, "\\mathrm{foo}_1", false);
  one = find_text(s, "1", 0);
  CHECK(one && fabsf(one->y - y_unknown) < 0.5f, "\\foo_1 lowers its 1 as \\mathrm{foo}_1 does: %.1f, %.1f",
        y_unknown, one ? one->y : 0);
  tex_check("\\zzqqxx", &d);
  CHECK(d.count == 1 && !strstr(d.items[0].msg, "did you mean"), "no hint far from every command: %s",
        d.items[0].msg);
  scene_reset(s, 100, 100, 0);
  tex_emit(s, b, 0, 50, BLACK);
  const Cmd *red = find_text(s, "\\mathbff", 0);
  CHECK(red && SF_R(red->color) > 200 && SF_G(red->color) < 50, "drawn in red as typed");
  tex_free(b);
  CHECK(!tex_check("\\frac{a}{b", &d) && strstr(d.items[0].msg, "missing }") && d.items[0].col == 9,
        "missing } at its {: %s col %d", d.items[0].msg, d.items[0].col);
  CHECK(!tex_check("\\frac{a}", &d) && strstr(d.items[0].msg, "\\frac needs two arguments"), "%s",
        d.items[0].msg);
  CHECK(!tex_check("x^a^b", &d) && strstr(d.items[0].msg, "double superscript"), "double ^");
  CHECK(!tex_check("\\left( x", &d) && strstr(d.items[0].msg, "missing \\right"), "no \\right");
  CHECK(!tex_check("a}", &d) && d.count == 1, "stray }");
  CHECK(!tex_check("\\begin{foo} a \\end{foo}", &d) && strstr(d.items[0].msg, "foo"), "env");
  CHECK(!tex_check("a\n  \\foo", &d) && d.items[0].line == 2 && d.items[0].col == 3,
        "line 2 column 3 (%d:%d)", d.items[0].line, d.items[0].col);
  CHECK(!tex_check("\\textcolor{nocolour}{x}", &d), "unknown colour");
  CHECK(tex_check("\\textcolor[HTML]{FF8800}{x} \\color{gray} y", &d), "colour models");
  CHECK(!tex_check("\xC3(", &d) && strstr(d.items[0].msg, "UTF-8"), "invalid UTF-8");
  const char *ok[] = {"",
                      "Q = Z W^q",
                      "\\mathrm{FFN}(x) = \\max(0, x W_1 + b_1) W_2 + b_2",
                      "p_{i,2k} = \\sin\\left(\\frac{i}{10000^{2k/D}}\\right)",
                      "x'' + y'^2_i",
                      "\\begin{cases} 0 & x < 0 \\\\ x & \\text{otherwise} \\end{cases}",
                      "\\left\\{ x \\middle| x > 0 \\right\\}",
                      "\\hat{x} \\widetilde{abc} \\,\\;\\!"};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    CHECK(tex_check(ok[i], &d), "%s: %d problems (%s)", ok[i], d.count, d.count ? d.items[0].msg : "");
}

// Where a displayed formula may be broken: at top-level \quad and \qquad only.
static void test_parts(void) {
  TexPart p[8];
  const char *f = "Z = OE, \\qquad Z \\in \\mathbb{R}^{L \\times D}";
  int n = tex_parts(f, strlen(f), p, 8);
  CHECK(n == 2, "two parts, got %d", n);
  if (n == 2) {
    CHECK(!strncmp(f + p[0].start, "Z = OE,", p[0].end - p[0].start) && p[0].end - p[0].start == 7,
          "first part \"%.*s\"", (int)(p[0].end - p[0].start), f + p[0].start);
    CHECK(!strcmp(f + p[1].start, "Z \\in \\mathbb{R}^{L \\times D}") && p[1].end == strlen(f),
          "second part \"%.*s\"", (int)(p[1].end - p[1].start), f + p[1].start);
  }
  const char *inner =
      "a^{x \\quad y} + \\left( b \\quad c \\right) + \\begin{cases} 0 & \\quad 1 \\end{cases} "
      "\\text{and \\quad so}";
  CHECK(tex_parts(inner, strlen(inner), p, 8) == 1,
        "no part break inside groups, \\left, environments, text");
  const char *three = "\\qquad a, \\quad \\mathbf{b}, \\quad\\quad c \\qquad";
  n = tex_parts(three, strlen(three), p, 8);
  CHECK(n == 3, "leading, repeated and trailing spaces make no empty part: %d parts", n);
  if (n == 3) CHECK(!strncmp(three + p[1].start, "\\mathbf{b},", 10), "a part starts at its command");
  CHECK(tex_parts("", 0, p, 8) == 0 && tex_parts(NULL, 0, p, 8) == 0, "an empty formula has no part");
  CHECK(tex_parts(f, strlen(f), p, 1) == 1, "at most max parts");
}

static void test_hostile_input(void) {
  static char deep[8192];
  const char *unit[] = {"{",
                        "x^{",
                        "\\frac{",
                        "\\sqrt{",
                        "\\left(",
                        "\\begin{matrix}",
                        "\\hat{",
                        "\\text{",
                        "\\left( x \\middle| ",
                        "\\sqrt",
                        "\\frac",
                        "x^",
                        "\\not",
                        "\\textcolor{red}{"};
  for (size_t u = 0; u < sizeof unit / sizeof unit[0]; u++) {
    size_t k = strlen(unit[u]), n = 0;
    while (n + k < sizeof deep - 1 && n / k < 1000) memcpy(deep + n, unit[u], k), n += k;
    deep[n] = 0;
    TexDiag d;
    TexBox *b = tex_layout(deep, 24, true, &d);
    CHECK(b != NULL, "%s x1000: still a box", unit[u]);
    CHECK(d.count > 0, "%s x1000: reported", unit[u]);
    bool deep_msg = false;
    for (int i = 0; i < d.count && i < TEX_DIAG_MAX; i++)
      deep_msg |= strstr(d.items[i].msg, "nested deeper") != NULL;
    if (u < 9) CHECK(deep_msg, "%s x1000: 'nested deeper' reported", unit[u]);
    Scene s;
    scene_init(&s, 100, 100, 0);
    tex_emit(&s, b, 0, 50, BLACK);
    scene_free(&s);
    tex_free(b);
  }
  TexDiag d;
  TexBox *e = tex_layout("", 32, true, &d);
  CHECK(e && d.count == 0 && tex_metrics(e).width == 0, "empty input: an empty box");
  tex_free(e);
  CHECK(tex_check("", &d) && tex_check(NULL, &d), "empty and NULL check fine");
  TexBox *n = tex_layout_n("x^2 \\bogus", 3, 32, false, &d);
  CHECK(n && d.count == 0 && fabsf(tex_metrics(n).width - met("x^2", false).width) < 0.01f,
        "tex_layout_n stops at len");
  tex_free(n);
  tex_free(NULL);
  CHECK(tex_metrics(NULL).width == 0, "NULL box");
}

// Mean x of the ink in rows [y0, y1) of c.
static float ink_centre(Canvas c, int y0, int y1) {
  double sum = 0, n = 0;
  for (int y = y0; y < y1; y++)
    for (int x = 0; x < c.w; x++) {
      int a = 255 - (int)SF_R(canvas_get(c, x, y)); // black on white
      sum += (double)a * x, n += a;
    }
  return n > 0 ? (float)(sum / n) : -1;
}

// A combining accent has its ink left of its pen; text_draw must still put the pen where the
// scene says (SVG does), so the hat lands over the x, not beside it.
static void test_accent_raster(void) {
  Scene s;
  scene_init(&s, 200, 200, SF_RGBA(255, 255, 255, 255));
  TexBox *b = tex_layout("\\hat{x}", 96, false, NULL);
  tex_emit(&s, b, 50, 150, BLACK);
  Canvas c = canvas_new(200, 200);
  scene_raster(&s, c, 0);
  float hat = ink_centre(c, 0, 150 - 48), x = ink_centre(c, 150 - 40, 150);
  CHECK(hat > 0 && x > 0 && fabsf(hat - x) < 6, "the hat is over the x (%g vs %g)", hat, x);
  canvas_free(&c);
  scene_free(&s);
  tex_free(b);
}

// tex_plain and tex_plain_title: the plain text of formulas and titles (a window's title bar).
static void plain_is(const char *src, bool title, const char *want) {
  char out[256];
  if (title)
    tex_plain_title(src, out, sizeof out);
  else
    tex_plain(src, out, sizeof out);
  CHECK(!strcmp(out, want), "plain text of \"%s\": \"%s\", want \"%s\"", src, out, want);
}

static void test_plain(void) {
  plain_is("\\sqrt{d_k}", false, "√dₖ");
  plain_is("S_1", false, "S₁"); // issue 31: a tooltip never shows a raw '_'
  plain_is("S_{12}", false, "S₁₂");
  plain_is("S = QK^\\top", false, "S = QKᵀ");
  plain_is("Why $\\sqrt{d_k}$ scales $S = QK^\\top$", true, "Why √dₖ scales S = QKᵀ");
  plain_is("Embeddings: $Z = OE \\in \\mathbb{R}^{L \\times D}$", true, "Embeddings: Z = OE ∈ ℝ^(L × D)");
  plain_is("Three projections: $Q$, $K$ and $V$", true, "Three projections: Q, K and V");
  plain_is("$A_h = \\operatorname{softmax}(S_h)$", true, "Aₕ = softmax(Sₕ)");
  plain_is("\\frac{Q K^\\top}{\\sqrt{d_k}}", false, "(Q Kᵀ)/√dₖ");
  plain_is("x^2 + \\alpha_{i,j}", false, "x² + α_(i,j)");
  plain_is("Costs \\$5, not $x^{10}$", true, "Costs $5, not x¹⁰");
  plain_is("\\sqrt{a+b} \\le \\hat{y}", false, "√(a+b) ≤ y\xCC\x82");
  plain_is("\\mathrm{LayerNorm}(x + \\mathrm{FFN}(x))", false, "LayerNorm(x + FFN(x))");
  plain_is("\\textcolor{red}{W^o} \\foo", false, "W^o \\foo");
  plain_is("\\left( a \\right)", false, "( a )");
  char small[8];
  tex_plain("\\alpha\\beta\\gamma\\delta", small, sizeof small); // cut at a character boundary
  CHECK(!strcmp(small, "αβγ"), "cut plain text: \"%s\"", small);
}

static void test_speed(void) {
  const char *f = "A[\\text{cat},\\text{bank}] = \\frac{e^{1.13}}{\\sum_j e^{S[\\text{cat},j]}}"
                  " = 0.31"
                  " + \\operatorname{softmax}\\left(\\frac{QK^\\top}{\\sqrt{d_k}}\\right)";
  tex_free(tex_layout(f, 32, true, NULL)); // warm the caches
  enum { N = 2000 };
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < N; i++) tex_free(tex_layout(f, 32, true, NULL));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / N / 1e3;
  printf("layout of a %zu-byte formula: %.1f us\n", strlen(f), us);
#if defined(__SANITIZE_ADDRESS__) || defined(__OPTIMIZE__) == 0
  CHECK(us < 2000, "layout under 2 ms in a debug or sanitizer build (%.1f us)", us);
#else
  CHECK(us < 100, "layout under 100 us (%.1f us)", us);
#endif
}

static const char *GALLERY[] = {
    "Q = Z W^q",
    "Q_h = Z W_h^q",
    "W^q = [W_1^q \\cdots W_H^q]",
    "A = \\operatorname{softmax}\\left(\\frac{QK^\\top}{\\sqrt{d_k}}\\right)",
    "\\mathrm{Attention}(Q,K,V) = AV",
    "p_{i,2k} = \\sin\\left(\\frac{i}{10000^{2k/D}}\\right)",
    "O \\in \\mathbb{R}^{L \\times V}",
    "Z = OE",
    "Z \\leftarrow Z + P",
    "\\mathrm{FFN}(x) = W_2 \\cdot \\mathrm{ReLU}(W_1 x + b_1) + b_2",
    "\\mathrm{LayerNorm}(x) = \\gamma \\cdot \\frac{x - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}}"
    " + \\beta",
    "\\sum_{j=1}^{L} A_{ij} = 1",
    "d_k = D/H",
    "\\begin{bmatrix} a_{11} & \\cdots & a_{1n} \\\\ \\vdots & \\ddots & \\vdots \\\\ "
    "a_{m1} & \\cdots & a_{mn} \\end{bmatrix}",
    "S[\\text{cat}, \\text{bank}] = \\frac{q_{\\text{cat}} \\cdot k_{\\text{bank}}}{\\sqrt{d_k}} = "
    "\\frac{3.21}{2.83} = 1.13",
    "A[\\text{cat},\\text{bank}] = \\frac{e^{1.13}}{\\sum_j e^{S[\\text{cat},j]}} = 0.31",
};

static void write_gallery(const char *dir, float size, bool display) {
  enum { N = sizeof GALLERY / sizeof GALLERY[0] };
  TexBox *b[N];
  float w = 0, h = 0, gap = size * 0.8f;
  for (int i = 0; i < N; i++) {
    b[i] = tex_layout(GALLERY[i], size, display, NULL);
    TexMetrics m = tex_metrics(b[i]);
    w = fmaxf(w, m.width), h += m.ascent + m.descent + gap;
  }
  Scene s;
  scene_init(&s, w + 2 * gap, h + gap, SF_RGBA(255, 255, 255, 255));
  float y = gap;
  for (int i = 0; i < N; i++) {
    TexMetrics m = tex_metrics(b[i]);
    tex_emit(&s, b[i], gap, y + m.ascent, BLACK);
    y += m.ascent + m.descent + gap;
    tex_free(b[i]);
  }
  Canvas c = canvas_new((int)s.width, (int)s.height);
  scene_raster(&s, c, 0);
  char path[512];
  snprintf(path, sizeof path, "%s/tex-%s-%d.png", dir, display ? "display" : "text", (int)size);
  Err err = {0};
  CHECK(pngio_write(c, path, NULL, 0, &err), "%s", err.msg);
  printf("wrote %s\n", path);
  canvas_free(&c);
  scene_free(&s);
}

int main(void) {
  TexDiag d;
  CHECK(tex_check("\\frac{a}{b} + \\sqrt{x}", &d), "tex_check works without fonts");
  Err err = {0};
  if (!text_init(&err)) {
    fprintf(stderr, "test_tex: %s\n", err.msg);
    return 1;
  }
  Scene s;
  scene_init(&s, 1000, 1000, 0);
  test_fraction_and_scripts(&s);
  test_radical_and_delimiters(&s);
  test_limits(&s);
  test_matrix(&s);
  test_glyphs_and_classes(&s);
  test_diagnostics(&s);
  test_hostile_input();
  test_parts();
  test_accent_raster();
  test_plain();
  test_speed();
  scene_free(&s);
  const char *dir = getenv("SF_TEX_GALLERY");
  if (dir) {
    write_gallery(dir, 24, true), write_gallery(dir, 32, true), write_gallery(dir, 48, true);
    write_gallery(dir, 24, false);
  }
  text_shutdown();
  return check_exit("test_tex");
}
