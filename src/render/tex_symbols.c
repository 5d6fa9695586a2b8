// tex_symbols.c -- the commands the math layout knows, character classes, alphabets, colours,
// and the italic corrections and accent positions of Latin Modern Math's letters.
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "strdist.h" // defines: strdist
#include "tex_internal.h"

#define SYM(n, cl, c)                                                                                        \
  { n, K_SYM, cl, c, 0, NULL }
#define BIGOP(n, c, lim)                                                                                     \
  { n, K_SYM, C_OP, c, lim, NULL }
#define OPN(n, lim, t)                                                                                       \
  { n, K_OPNAME, C_OP, 0, lim, t }
#define CMD(n, k, a)                                                                                         \
  { n, k, C_ORD, 0, a, NULL }

static TexCmd CMDS[] = {
    // Greek: lowercase italic by default, capitals upright
    SYM("alpha", C_ORD, 0x3B1),
    SYM("beta", C_ORD, 0x3B2),
    SYM("gamma", C_ORD, 0x3B3),
    SYM("delta", C_ORD, 0x3B4),
    SYM("epsilon", C_ORD, 0x3F5),
    SYM("varepsilon", C_ORD, 0x3B5),
    SYM("zeta", C_ORD, 0x3B6),
    SYM("eta", C_ORD, 0x3B7),
    SYM("theta", C_ORD, 0x3B8),
    SYM("vartheta", C_ORD, 0x3D1),
    SYM("iota", C_ORD, 0x3B9),
    SYM("kappa", C_ORD, 0x3BA),
    SYM("varkappa", C_ORD, 0x3F0),
    SYM("lambda", C_ORD, 0x3BB),
    SYM("mu", C_ORD, 0x3BC),
    SYM("nu", C_ORD, 0x3BD),
    SYM("xi", C_ORD, 0x3BE),
    SYM("omicron", C_ORD, 0x3BF),
    SYM("pi", C_ORD, 0x3C0),
    SYM("varpi", C_ORD, 0x3D6),
    SYM("rho", C_ORD, 0x3C1),
    SYM("varrho", C_ORD, 0x3F1),
    SYM("sigma", C_ORD, 0x3C3),
    SYM("varsigma", C_ORD, 0x3C2),
    SYM("tau", C_ORD, 0x3C4),
    SYM("upsilon", C_ORD, 0x3C5),
    SYM("phi", C_ORD, 0x3D5),
    SYM("varphi", C_ORD, 0x3C6),
    SYM("chi", C_ORD, 0x3C7),
    SYM("psi", C_ORD, 0x3C8),
    SYM("omega", C_ORD, 0x3C9),
    SYM("Gamma", C_ORD, 0x393),
    SYM("Delta", C_ORD, 0x394),
    SYM("Theta", C_ORD, 0x398),
    SYM("Lambda", C_ORD, 0x39B),
    SYM("Xi", C_ORD, 0x39E),
    SYM("Pi", C_ORD, 0x3A0),
    SYM("Sigma", C_ORD, 0x3A3),
    SYM("Upsilon", C_ORD, 0x3A5),
    SYM("Phi", C_ORD, 0x3A6),
    SYM("Psi", C_ORD, 0x3A8),
    SYM("Omega", C_ORD, 0x3A9),
    SYM("varGamma", C_ORD, 0x1D6E4),
    SYM("varDelta", C_ORD, 0x1D6E5),
    SYM("varTheta", C_ORD, 0x1D6E9),
    SYM("varLambda", C_ORD, 0x1D6EC),
    SYM("varXi", C_ORD, 0x1D6EF),
    SYM("varPi", C_ORD, 0x1D6F1),
    SYM("varSigma", C_ORD, 0x1D6F4),
    SYM("varUpsilon", C_ORD, 0x1D6F6),
    SYM("varPhi", C_ORD, 0x1D6F7),
    SYM("varPsi", C_ORD, 0x1D6F9),
    SYM("varOmega", C_ORD, 0x1D6FA),
    // ordinary symbols
    SYM("infty", C_ORD, 0x221E),
    SYM("partial", C_ORD, 0x2202),
    SYM("nabla", C_ORD, 0x2207),
    SYM("emptyset", C_ORD, 0x2205),
    SYM("varnothing", C_ORD, 0x2205),
    SYM("ell", C_ORD, 0x2113),
    SYM("hbar", C_ORD, 0x210F),
    SYM("forall", C_ORD, 0x2200),
    SYM("exists", C_ORD, 0x2203),
    SYM("nexists", C_ORD, 0x2204),
    SYM("neg", C_ORD, 0xAC),
    SYM("lnot", C_ORD, 0xAC),
    SYM("prime", C_ORD, 0x2032),
    SYM("top", C_ORD, 0x22A4),
    SYM("bot", C_ORD, 0x22A5),
    SYM("aleph", C_ORD, 0x2135),
    SYM("Re", C_ORD, 0x211C),
    SYM("Im", C_ORD, 0x2111),
    SYM("wp", C_ORD, 0x2118),
    SYM("imath", C_ORD, 0x1D6A4),
    SYM("jmath", C_ORD, 0x1D6A5),
    SYM("angle", C_ORD, 0x2220),
    SYM("triangle", C_ORD, 0x25B3),
    SYM("surd", C_ORD, 0x221A),
    SYM("backslash", C_ORD, '\\'),
    SYM("vert", C_ORD, '|'),
    SYM("Vert", C_ORD, 0x2016),
    SYM("|", C_ORD, 0x2016),
    SYM("dag", C_ORD, 0x2020),
    SYM("ddag", C_ORD, 0x2021),
    SYM("S", C_ORD, 0xA7),
    SYM("P", C_ORD, 0xB6),
    SYM("checkmark", C_ORD, 0x2713),
    SYM("vdots", C_ORD, 0x22EE),
    SYM("#", C_ORD, '#'),
    SYM("$", C_ORD, '$'),
    SYM("%", C_ORD, '%'),
    SYM("&", C_ORD, '&'),
    SYM("_", C_ORD, '_'),
    SYM("degree", C_ORD, 0xB0),
    SYM("flat", C_ORD, 0x266D),
    SYM("sharp", C_ORD, 0x266F),
    SYM("natural", C_ORD, 0x266E),
    SYM("clubsuit", C_ORD, 0x2663),
    SYM("diamondsuit", C_ORD, 0x2662),
    SYM("heartsuit", C_ORD, 0x2661),
    SYM("spadesuit", C_ORD, 0x2660),
    // dots
    SYM("ldots", C_INNER, 0x2026),
    SYM("dots", C_INNER, 0x2026),
    SYM("dotsc", C_INNER, 0x2026),
    SYM("dotso", C_INNER, 0x2026),
    SYM("cdots", C_INNER, 0x22EF),
    SYM("dotsb", C_INNER, 0x22EF),
    SYM("dotsm", C_INNER, 0x22EF),
    SYM("dotsi", C_INNER, 0x22EF),
    SYM("ddots", C_INNER, 0x22F1),
    SYM("cdotp", C_PUNCT, 0x22C5),
    SYM("ldotp", C_PUNCT, '.'),
    SYM("colon", C_PUNCT, ':'),
    // binary operators
    SYM("pm", C_BIN, 0xB1),
    SYM("mp", C_BIN, 0x2213),
    SYM("times", C_BIN, 0xD7),
    SYM("div", C_BIN, 0xF7),
    SYM("cdot", C_BIN, 0x22C5),
    SYM("ast", C_BIN, 0x2217),
    SYM("star", C_BIN, 0x22C6),
    SYM("circ", C_BIN, 0x2218),
    SYM("bullet", C_BIN, 0x2219),
    SYM("oplus", C_BIN, 0x2295),
    SYM("ominus", C_BIN, 0x2296),
    SYM("otimes", C_BIN, 0x2297),
    SYM("oslash", C_BIN, 0x2298),
    SYM("odot", C_BIN, 0x2299),
    SYM("cap", C_BIN, 0x2229),
    SYM("cup", C_BIN, 0x222A),
    SYM("sqcap", C_BIN, 0x2293),
    SYM("sqcup", C_BIN, 0x2294),
    SYM("wedge", C_BIN, 0x2227),
    SYM("land", C_BIN, 0x2227),
    SYM("vee", C_BIN, 0x2228),
    SYM("lor", C_BIN, 0x2228),
    SYM("setminus", C_BIN, 0x2216),
    SYM("wr", C_BIN, 0x2240),
    SYM("diamond", C_BIN, 0x22C4),
    SYM("uplus", C_BIN, 0x228E),
    SYM("amalg", C_BIN, 0x2A3F),
    SYM("dagger", C_BIN, 0x2020),
    SYM("ddagger", C_BIN, 0x2021),
    SYM("bigtriangleup", C_BIN, 0x25B3),
    SYM("bigtriangledown", C_BIN, 0x25BD),
    SYM("triangleleft", C_BIN, 0x25C1),
    SYM("triangleright", C_BIN, 0x25B7),
    // relations and arrows
    SYM("leq", C_REL, 0x2264),
    SYM("le", C_REL, 0x2264),
    SYM("geq", C_REL, 0x2265),
    SYM("ge", C_REL, 0x2265),
    SYM("neq", C_REL, 0x2260),
    SYM("ne", C_REL, 0x2260),
    SYM("equiv", C_REL, 0x2261),
    SYM("approx", C_REL, 0x2248),
    SYM("cong", C_REL, 0x2245),
    SYM("sim", C_REL, 0x223C),
    SYM("simeq", C_REL, 0x2243),
    SYM("propto", C_REL, 0x221D),
    SYM("ll", C_REL, 0x226A),
    SYM("gg", C_REL, 0x226B),
    SYM("prec", C_REL, 0x227A),
    SYM("succ", C_REL, 0x227B),
    SYM("preceq", C_REL, 0x2AAF),
    SYM("succeq", C_REL, 0x2AB0),
    SYM("subset", C_REL, 0x2282),
    SYM("supset", C_REL, 0x2283),
    SYM("subseteq", C_REL, 0x2286),
    SYM("supseteq", C_REL, 0x2287),
    SYM("sqsubseteq", C_REL, 0x2291),
    SYM("sqsupseteq", C_REL, 0x2292),
    SYM("in", C_REL, 0x2208),
    SYM("ni", C_REL, 0x220B),
    SYM("owns", C_REL, 0x220B),
    SYM("notin", C_REL, 0x2209),
    SYM("vdash", C_REL, 0x22A2),
    SYM("dashv", C_REL, 0x22A3),
    SYM("models", C_REL, 0x22A8),
    SYM("mid", C_REL, 0x2223),
    SYM("parallel", C_REL, 0x2225),
    SYM("perp", C_REL, 0x27C2),
    SYM("asymp", C_REL, 0x224D),
    SYM("doteq", C_REL, 0x2250),
    SYM("leqslant", C_REL, 0x2A7D),
    SYM("geqslant", C_REL, 0x2A7E),
    SYM("lesssim", C_REL, 0x2272),
    SYM("gtrsim", C_REL, 0x2273),
    SYM("triangleq", C_REL, 0x225C),
    SYM("coloneqq", C_REL, 0x2254),
    SYM("smile", C_REL, 0x2323),
    SYM("frown", C_REL, 0x2322),
    SYM("leftarrow", C_REL, 0x2190),
    SYM("gets", C_REL, 0x2190),
    SYM("rightarrow", C_REL, 0x2192),
    SYM("to", C_REL, 0x2192),
    SYM("leftrightarrow", C_REL, 0x2194),
    SYM("Leftarrow", C_REL, 0x21D0),
    SYM("Rightarrow", C_REL, 0x21D2),
    SYM("Leftrightarrow", C_REL, 0x21D4),
    SYM("longleftarrow", C_REL, 0x27F5),
    SYM("longrightarrow", C_REL, 0x27F6),
    SYM("longleftrightarrow", C_REL, 0x27F7),
    SYM("Longleftarrow", C_REL, 0x27F8),
    SYM("Longrightarrow", C_REL, 0x27F9),
    SYM("Longleftrightarrow", C_REL, 0x27FA),
    SYM("implies", C_REL, 0x27F9),
    SYM("impliedby", C_REL, 0x27F8),
    SYM("iff", C_REL, 0x27FA),
    SYM("mapsto", C_REL, 0x21A6),
    SYM("longmapsto", C_REL, 0x27FC),
    SYM("uparrow", C_REL, 0x2191),
    SYM("downarrow", C_REL, 0x2193),
    SYM("updownarrow", C_REL, 0x2195),
    SYM("Uparrow", C_REL, 0x21D1),
    SYM("Downarrow", C_REL, 0x21D3),
    SYM("nearrow", C_REL, 0x2197),
    SYM("searrow", C_REL, 0x2198),
    SYM("swarrow", C_REL, 0x2199),
    SYM("nwarrow", C_REL, 0x2196),
    SYM("hookleftarrow", C_REL, 0x21A9),
    SYM("hookrightarrow", C_REL, 0x21AA),
    SYM("rightleftharpoons", C_REL, 0x21CC),
    // delimiters typed as commands
    SYM("{", C_OPEN, '{'),
    SYM("}", C_CLOSE, '}'),
    SYM("lbrace", C_OPEN, '{'),
    SYM("rbrace", C_CLOSE, '}'),
    SYM("lbrack", C_OPEN, '['),
    SYM("rbrack", C_CLOSE, ']'),
    SYM("langle", C_OPEN, 0x27E8),
    SYM("rangle", C_CLOSE, 0x27E9),
    SYM("lfloor", C_OPEN, 0x230A),
    SYM("rfloor", C_CLOSE, 0x230B),
    SYM("lceil", C_OPEN, 0x2308),
    SYM("rceil", C_CLOSE, 0x2309),
    SYM("lvert", C_OPEN, '|'),
    SYM("rvert", C_CLOSE, '|'),
    SYM("lVert", C_OPEN, 0x2016),
    SYM("rVert", C_CLOSE, 0x2016),
    SYM("lgroup", C_OPEN, 0x27EE),
    SYM("rgroup", C_CLOSE, 0x27EF),
    // large operators (arg 1: limits above and below in display style)
    BIGOP("sum", 0x2211, 1),
    BIGOP("prod", 0x220F, 1),
    BIGOP("coprod", 0x2210, 1),
    BIGOP("bigcup", 0x22C3, 1),
    BIGOP("bigcap", 0x22C2, 1),
    BIGOP("bigvee", 0x22C1, 1),
    BIGOP("bigwedge", 0x22C0, 1),
    BIGOP("bigoplus", 0x2A01, 1),
    BIGOP("bigotimes", 0x2A02, 1),
    BIGOP("bigodot", 0x2A00, 1),
    BIGOP("bigsqcup", 0x2A06, 1),
    BIGOP("biguplus", 0x2A04, 1),
    BIGOP("int", 0x222B, 0),
    BIGOP("iint", 0x222C, 0),
    BIGOP("iiint", 0x222D, 0),
    BIGOP("oint", 0x222E, 0),
    // operator names
    OPN("sin", 0, "sin"),
    OPN("cos", 0, "cos"),
    OPN("tan", 0, "tan"),
    OPN("cot", 0, "cot"),
    OPN("sec", 0, "sec"),
    OPN("csc", 0, "csc"),
    OPN("sinh", 0, "sinh"),
    OPN("cosh", 0, "cosh"),
    OPN("tanh", 0, "tanh"),
    OPN("coth", 0, "coth"),
    OPN("arcsin", 0, "arcsin"),
    OPN("arccos", 0, "arccos"),
    OPN("arctan", 0, "arctan"),
    OPN("exp", 0, "exp"),
    OPN("log", 0, "log"),
    OPN("ln", 0, "ln"),
    OPN("lg", 0, "lg"),
    OPN("deg", 0, "deg"),
    OPN("dim", 0, "dim"),
    OPN("hom", 0, "hom"),
    OPN("ker", 0, "ker"),
    OPN("arg", 0, "arg"),
    OPN("det", 1, "det"),
    OPN("gcd", 1, "gcd"),
    OPN("max", 1, "max"),
    OPN("min", 1, "min"),
    OPN("sup", 1, "sup"),
    OPN("inf", 1, "inf"),
    OPN("lim", 1, "lim"),
    OPN("liminf", 1, "lim\xE2\x80\x89inf"),
    OPN("limsup", 1, "lim\xE2\x80\x89sup"),
    OPN("Pr", 1, "Pr"),
    // alphabets (cp: TexAlphabet) and text (cp: FontFace)
    {"mathrm", K_ALPHA, C_ORD, AL_RM, 0, NULL},
    {"mathit", K_ALPHA, C_ORD, AL_IT, 0, NULL},
    {"mathbf", K_ALPHA, C_ORD, AL_BF, 0, NULL},
    {"boldsymbol", K_ALPHA, C_ORD, AL_BI, 0, NULL},
    {"bm", K_ALPHA, C_ORD, AL_BI, 0, NULL},
    {"mathbb", K_ALPHA, C_ORD, AL_BB, 0, NULL},
    {"mathcal", K_ALPHA, C_ORD, AL_CAL, 0, NULL},
    {"mathscr", K_ALPHA, C_ORD, AL_CAL, 0, NULL},
    {"mathfrak", K_ALPHA, C_ORD, AL_FRAK, 0, NULL},
    {"mathsf", K_ALPHA, C_ORD, AL_SF, 0, NULL},
    {"mathtt", K_ALPHA, C_ORD, AL_TT, 0, NULL},
    {"mathnormal", K_ALPHA, C_ORD, AL_MATH, 0, NULL},
    {"text", K_TEXT, C_ORD, FONT_SERIF, 0, NULL},
    {"textrm", K_TEXT, C_ORD, FONT_SERIF, 0, NULL},
    {"textnormal", K_TEXT, C_ORD, FONT_SERIF, 0, NULL},
    {"textup", K_TEXT, C_ORD, FONT_SERIF, 0, NULL},
    {"mbox", K_TEXT, C_ORD, FONT_SERIF, 0, NULL},
    {"hbox", K_TEXT, C_ORD, FONT_SERIF, 0, NULL},
    {"textbf", K_TEXT, C_ORD, FONT_SERIF_BOLD, 0, NULL},
    {"textit", K_TEXT, C_ORD, FONT_SERIF_ITALIC, 0, NULL},
    {"emph", K_TEXT, C_ORD, FONT_SERIF_ITALIC, 0, NULL},
    {"textsf", K_TEXT, C_ORD, FONT_SANS, 0, NULL},
    {"texttt", K_TEXT, C_ORD, FONT_MONO, 0, NULL},
    // structures
    CMD("frac", K_FRAC, 0xFF),
    CMD("dfrac", K_FRAC, ST_D),
    CMD("tfrac", K_FRAC, ST_T),
    CMD("cfrac", K_FRAC, ST_D),
    CMD("binom", K_BINOM, 0xFF),
    CMD("dbinom", K_BINOM, ST_D),
    CMD("tbinom", K_BINOM, ST_T),
    CMD("sqrt", K_SQRT, 0),
    CMD("left", K_LEFT, 0),
    CMD("right", K_RIGHT, 0),
    CMD("middle", K_MIDDLE, 0),
    {"big", K_BIG, C_ORD, 0, 1.2f, NULL},
    {"Big", K_BIG, C_ORD, 0, 1.8f, NULL},
    {"bigg", K_BIG, C_ORD, 0, 2.4f, NULL},
    {"Bigg", K_BIG, C_ORD, 0, 3.0f, NULL},
    {"bigl", K_BIG, C_OPEN, 0, 1.2f, NULL},
    {"Bigl", K_BIG, C_OPEN, 0, 1.8f, NULL},
    {"biggl", K_BIG, C_OPEN, 0, 2.4f, NULL},
    {"Biggl", K_BIG, C_OPEN, 0, 3.0f, NULL},
    {"bigr", K_BIG, C_CLOSE, 0, 1.2f, NULL},
    {"Bigr", K_BIG, C_CLOSE, 0, 1.8f, NULL},
    {"biggr", K_BIG, C_CLOSE, 0, 2.4f, NULL},
    {"Biggr", K_BIG, C_CLOSE, 0, 3.0f, NULL},
    {"bigm", K_BIG, C_REL, 0, 1.2f, NULL},
    {"Bigm", K_BIG, C_REL, 0, 1.8f, NULL},
    {"biggm", K_BIG, C_REL, 0, 2.4f, NULL},
    {"Biggm", K_BIG, C_REL, 0, 3.0f, NULL},
    {"hat", K_ACCENT, C_ORD, 0x302, 0, NULL},
    {"widehat", K_ACCENT, C_ORD, 0x302, 1, NULL},
    {"tilde", K_ACCENT, C_ORD, 0x303, 0, NULL},
    {"widetilde", K_ACCENT, C_ORD, 0x303, 1, NULL},
    {"bar", K_ACCENT, C_ORD, 0x304, 0, NULL},
    {"vec", K_ACCENT, C_ORD, 0x20D7, 0, NULL},
    {"dot", K_ACCENT, C_ORD, 0x307, 0, NULL},
    {"ddot", K_ACCENT, C_ORD, 0x308, 0, NULL},
    {"check", K_ACCENT, C_ORD, 0x30C, 0, NULL},
    {"breve", K_ACCENT, C_ORD, 0x306, 0, NULL},
    {"acute", K_ACCENT, C_ORD, 0x301, 0, NULL},
    {"grave", K_ACCENT, C_ORD, 0x300, 0, NULL},
    {"mathring", K_ACCENT, C_ORD, 0x30A, 0, NULL},
    CMD("overline", K_OVERLINE, 0),
    CMD("underline", K_UNDERLINE, 0),
    // spaces (mu)
    CMD(",", K_SPACE, 3),
    CMD(":", K_SPACE, 4),
    CMD(">", K_SPACE, 4),
    CMD(";", K_SPACE, 5),
    CMD("!", K_SPACE, -3),
    CMD(" ", K_SPACE, 6),
    CMD("quad", K_SPACE, 18),
    CMD("qquad", K_SPACE, 36),
    CMD("enspace", K_SPACE, 9),
    CMD("enskip", K_SPACE, 9),
    CMD("thinspace", K_SPACE, 3),
    CMD("medspace", K_SPACE, 4),
    CMD("thickspace", K_SPACE, 5),
    CMD("negthinspace", K_SPACE, -3),
    CMD("negmedspace", K_SPACE, -4),
    CMD("negthickspace", K_SPACE, -5),
    CMD("hspace", K_HSPACE, 0),
    CMD("kern", K_HSPACE, 1),
    CMD("mkern", K_HSPACE, 1),
    CMD("hskip", K_HSPACE, 1),
    CMD("mskip", K_HSPACE, 1),
    // colour, environments, styles, classes
    CMD("color", K_COLOR, 0),
    CMD("textcolor", K_TEXTCOLOR, 0),
    CMD("begin", K_BEGIN, 0),
    CMD("end", K_END, 0),
    CMD("displaystyle", K_STYLE, ST_D),
    CMD("textstyle", K_STYLE, ST_T),
    CMD("scriptstyle", K_STYLE, ST_S),
    CMD("scriptscriptstyle", K_STYLE, ST_SS),
    CMD("limits", K_LIMITS, 1),
    CMD("nolimits", K_LIMITS, 2),
    {"mathord", K_CLASS, C_ORD, 0, 0, NULL},
    {"mathop", K_CLASS, C_OP, 0, 0, NULL},
    {"mathbin", K_CLASS, C_BIN, 0, 0, NULL},
    {"mathrel", K_CLASS, C_REL, 0, 0, NULL},
    {"mathopen", K_CLASS, C_OPEN, 0, 0, NULL},
    {"mathclose", K_CLASS, C_CLOSE, 0, 0, NULL},
    {"mathpunct", K_CLASS, C_PUNCT, 0, 0, NULL},
    {"mathinner", K_CLASS, C_INNER, 0, 0, NULL},
    CMD("operatorname", K_OPERATORNAME, 0),
    CMD("overset", K_STACK, 1),
    CMD("underset", K_STACK, 2),
    {"stackrel", K_STACK, C_REL, 0, 3, NULL},
    CMD("phantom", K_PHANTOM, 1),
    CMD("hphantom", K_PHANTOM, 2),
    CMD("vphantom", K_PHANTOM, 3),
    CMD("not", K_NOT, 0),
    CMD("nonumber", K_IGNORE, 0),
    CMD("notag", K_IGNORE, 0),
    CMD("relax", K_IGNORE, 0),
    CMD("allowbreak", K_IGNORE, 0),
    CMD("nobreak", K_IGNORE, 0),
    CMD("displaylimits", K_IGNORE, 0),
};
enum { N_CMDS = sizeof CMDS / sizeof CMDS[0] };

// (code point, class) of every symbol, sorted by code point, for characters typed directly.
typedef struct {
  uint32_t cp;
  uint8_t cls;
} CpClass;
static CpClass CLASSES[N_CMDS];
static uint8_t CMD_LEN[N_CMDS];      // strlen of each name, for tex_cmd_nearest
static uint64_t CMD_LETTERS[N_CMDS]; // strdist_letters of each name
// The commands by the length of their names: BY_LEN[LEN_START[n] .. LEN_START[n + 1]) are the
// indices into CMDS of the names n bytes long, in table order. tex_cmd_nearest looks only at
// the lengths within reach (an unknown command meets a few dozen names instead of them all).
static uint16_t BY_LEN[N_CMDS];
_Static_assert(N_CMDS < 65536, "BY_LEN holds indices as uint16_t");
static int LEN_START[257];
static int n_classes;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int cmp_cmd(const void *a, const void *b) {
  return strcmp(((const TexCmd *)a)->name, ((const TexCmd *)b)->name);
}

static int cmp_cp(const void *a, const void *b) {
  uint32_t x = ((const CpClass *)a)->cp, y = ((const CpClass *)b)->cp;
  return x < y ? -1 : x > y;
}

static void init_tables(void) {
  qsort(CMDS, N_CMDS, sizeof CMDS[0], cmp_cmd);
  for (int i = 0; i < N_CMDS; i++) {
    size_t n = strlen(CMDS[i].name);
    CMD_LEN[i] = (uint8_t)(n > 255 ? 255 : n);
    CMD_LETTERS[i] = strdist_letters(CMDS[i].name, n);
    LEN_START[CMD_LEN[i] + 1]++;
  }
  for (int n = 1; n <= 256; n++) LEN_START[n] += LEN_START[n - 1];
  int next[256];
  memcpy(next, LEN_START, sizeof next);
  for (int i = 0; i < N_CMDS; i++) BY_LEN[next[CMD_LEN[i]]++] = (uint16_t)i;
  for (int i = 0; i < N_CMDS; i++)
    if (CMDS[i].kind == K_SYM && CMDS[i].cls != C_ORD && CMDS[i].cls != C_INNER && CMDS[i].cp > 0x7F)
      CLASSES[n_classes++] = (CpClass){CMDS[i].cp, CMDS[i].cls};
  qsort(CLASSES, (size_t)n_classes, sizeof CLASSES[0], cmp_cp);
}

const TexCmd *tex_cmd_find(const char *name, size_t n) {
  pthread_once(&once, init_tables);
  char key[32];
  if (n == 0 || n >= sizeof key) return NULL;
  memcpy(key, name, n);
  key[n] = 0;
  TexCmd k = {.name = key};
  return bsearch(&k, CMDS, N_CMDS, sizeof CMDS[0], cmp_cmd);
}

const char *tex_cmd_nearest(const char *name, size_t n) {
  pthread_once(&once, init_tables);
  if (n < 2) return NULL;
  int best = n <= 3 ? 2 : 3, best_i = -1; // one edit more than allowed: "none yet"
  uint64_t letters = strdist_letters(name, n);
  size_t reach = (size_t)best - 1, lo = n > reach ? n - reach : 0, hi = n + reach < 255 ? n + reach : 255;
  for (size_t len = lo; len <= hi; len++) {
    for (int k = LEN_START[len]; k < LEN_START[len + 1]; k++) { // the first of the nearest, in table order
      int i = BY_LEN[k];
      int limit = best_i >= 0 && i < best_i ? best : best - 1; // an earlier name wins a tie
      if ((len > n ? len - n : n - len) > (size_t)limit || strdist_bound(letters, CMD_LETTERS[i]) > limit)
        continue; // cannot be within reach: no need for the table
      int d = strdist(name, n, CMDS[i].name, len, limit, false);
      if (d <= limit) best = d, best_i = i;
    }
  }
  const char *out = best_i >= 0 ? CMDS[best_i].name : NULL;
  if (!out && n <= 255) { // \operatorName, \Frac: the same name in other letters' case
    for (int k = LEN_START[n]; k < LEN_START[n + 1] && !out; k++) // in table order, as above
      if (!strncasecmp(CMDS[BY_LEN[k]].name, name, n)) out = CMDS[BY_LEN[k]].name;
  }
  return out;
}

TexClass tex_char_class(uint32_t cp) {
  switch (cp) {
  case '+':
  case '-':
  case '*': return C_BIN;
  case '=':
  case '<':
  case '>':
  case ':': return C_REL;
  case '(':
  case '[':
  case '{': return C_OPEN;
  case ')':
  case ']':
  case '}':
  case '!':
  case '?': return C_CLOSE;
  case ',':
  case ';': return C_PUNCT;
  default: break;
  }
  if (cp < 0x80) return C_ORD;
  if (cp == 0x2211 || cp == 0x220F || cp == 0x2210 || (cp >= 0x222B && cp <= 0x222E) ||
      (cp >= 0x22C0 && cp <= 0x22C3) || (cp >= 0x2A00 && cp <= 0x2A06))
    return C_OP;
  pthread_once(&once, init_tables);
  CpClass k = {.cp = cp};
  const CpClass *e = bsearch(&k, CLASSES, (size_t)n_classes, sizeof k, cmp_cp);
  if (e) return (TexClass)e->cls;
  if ((cp >= 0x2190 && cp <= 0x21FF) || (cp >= 0x27F0 && cp <= 0x27FF)) return C_REL;
  return C_ORD;
}

uint32_t tex_delim_cp(const char *name, size_t n) {
  static const struct {
    const char *name;
    uint32_t cp;
  } D[] = {
      {"{", '{'},
      {"}", '}'},
      {"|", 0x2016},
      {"lbrace", '{'},
      {"rbrace", '}'},
      {"lbrack", '['},
      {"rbrack", ']'},
      {"langle", 0x27E8},
      {"rangle", 0x27E9},
      {"lfloor", 0x230A},
      {"rfloor", 0x230B},
      {"lceil", 0x2308},
      {"rceil", 0x2309},
      {"vert", '|'},
      {"Vert", 0x2016},
      {"lvert", '|'},
      {"rvert", '|'},
      {"lVert", 0x2016},
      {"rVert", 0x2016},
      {"backslash", '\\'},
      {"uparrow", 0x2191},
      {"downarrow", 0x2193},
      {"updownarrow", 0x2195},
      {"Uparrow", 0x21D1},
      {"Downarrow", 0x21D3},
      {"lgroup", 0x27EE},
      {"rgroup", 0x27EF},
      {"mid", '|'},
  };
  for (size_t i = 0; i < sizeof D / sizeof D[0]; i++)
    if (strlen(D[i].name) == n && !memcmp(D[i].name, name, n)) return D[i].cp;
  return 0;
}

uint32_t tex_not_cp(uint32_t cp) {
  static const uint32_t P[][2] = {
      {'=', 0x2260},    {0x2208, 0x2209}, {0x2261, 0x2262}, {0x2282, 0x2284}, {0x2283, 0x2285},
      {'<', 0x226E},    {'>', 0x226F},    {0x2264, 0x2270}, {0x2265, 0x2271}, {0x2223, 0x2224},
      {0x223C, 0x2241}, {0x2243, 0x2244}, {0x2248, 0x2249}, {0x2286, 0x2288}, {0x2287, 0x2289},
      {0x2225, 0x2226}, {0x220B, 0x220C}, {0x2192, 0x219B}, {0x2190, 0x219A},
  };
  for (size_t i = 0; i < sizeof P / sizeof P[0]; i++)
    if (P[i][0] == cp) return P[i][1];
  return 0;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "#RGB", "#RRGGBB", "RRGGBB" (the [HTML] model) or a CSS colour name.
bool tex_color_parse(const char *s, size_t n, uint32_t *rgba) {
  static const struct {
    const char *name;
    uint32_t rgb;
  } NAMED[] = {
      {"black", 0x000000},  {"white", 0xFFFFFF},  {"red", 0xFF0000},      {"green", 0x008000},
      {"blue", 0x0000FF},   {"cyan", 0x00FFFF},   {"magenta", 0xFF00FF},  {"yellow", 0xFFFF00},
      {"gray", 0x808080},   {"grey", 0x808080},   {"darkgray", 0x404040}, {"lightgray", 0xBFBFBF},
      {"orange", 0xFF8000}, {"purple", 0x800080}, {"brown", 0x8B4513},    {"teal", 0x008080},
      {"olive", 0x808000},  {"violet", 0x8000FF}, {"pink", 0xFF69B4},     {"lime", 0x00FF00},
  };
  uint32_t rgb = 0;
  bool ok = false;
  size_t h = n > 0 && s[0] == '#' ? 1 : 0;
  if (n - h == 6 || (h && n == 4)) {
    ok = true;
    for (size_t i = h; i < n; i++) {
      int v = hexval(s[i]);
      if (v < 0)
        ok = false;
      else if (n - h == 6)
        rgb = rgb << 4 | (uint32_t)v;
      else
        rgb = rgb << 8 | (uint32_t)(v * 17);
    }
  }
  for (size_t i = 0; !ok && i < sizeof NAMED / sizeof NAMED[0]; i++)
    if (strlen(NAMED[i].name) == n && !memcmp(NAMED[i].name, s, n)) rgb = NAMED[i].rgb, ok = true;
  if (ok) *rgba = SF_RGBA(rgb >> 16, (rgb >> 8) & 0xFF, rgb & 0xFF, 255);
  return ok;
}

// ---- alphabets: Unicode's Mathematical Alphanumeric Symbols

// Letters of an alphabet missing from the block, found elsewhere in Unicode.
static uint32_t hole(TexAlphabet al, uint32_t c) {
  static const char BB[] = "CHNPQRZ", CAL[] = "BEFHILMRego", FRAK[] = "CHIRZ";
  static const uint32_t BBU[] = {0x2102, 0x210D, 0x2115, 0x2119, 0x211A, 0x211D, 0x2124};
  static const uint32_t CALU[] = {0x212C, 0x2130, 0x2131, 0x210B, 0x2110, 0x2112,
                                  0x2133, 0x211B, 0x212F, 0x210A, 0x2134};
  static const uint32_t FRAKU[] = {0x212D, 0x210C, 0x2111, 0x211C, 0x2128};
  const char *p;
  if (al == AL_MATH && c == 'h') return 0x210E;
  if (al == AL_BB && (p = strchr(BB, (int)c))) return BBU[p - BB];
  if (al == AL_CAL && (p = strchr(CAL, (int)c))) return CALU[p - CAL];
  if (al == AL_FRAK && (p = strchr(FRAK, (int)c))) return FRAKU[p - FRAK];
  return 0;
}

static uint32_t greek(uint32_t cp, TexAlphabet al) {
  // lowercase italic block order: α..ω (25 with ς), ∂ ϵ ϑ ϰ ϕ ϱ ϖ
  static const uint32_t EXTRA[] = {0x2202, 0x3F5, 0x3D1, 0x3F0, 0x3D5, 0x3F1, 0x3D6};
  int lower = -1, upper = -1;
  if (cp >= 0x3B1 && cp <= 0x3C9) lower = (int)(cp - 0x3B1);
  for (int i = 0; i < 7; i++)
    if (cp == EXTRA[i]) lower = 25 + i;
  if (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2) upper = (int)(cp - 0x391);
  if (cp == 0x2202 && al == AL_MATH) return cp; // ∂ stays as typed
  uint32_t lo = al == AL_MATH ? 0x1D6FC : al == AL_BF ? 0x1D6C2 : al == AL_BI ? 0x1D736 : 0;
  uint32_t up = al == AL_BF ? 0x1D6A8 : al == AL_BI ? 0x1D71C : 0;
  if (lower >= 0 && lo) return lo + (uint32_t)lower;
  if (upper >= 0 && up) return up + (uint32_t)upper;
  return cp;
}

uint32_t tex_alpha_cp(uint32_t cp, TexAlphabet al) {
  // (capital A, small a, digit 0) of each alphabet; 0: not styled
  static const uint32_t BASE[][3] = {
      [AL_MATH] = {0x1D434, 0x1D44E, 0},     [AL_RM] = {0, 0, 0},
      [AL_IT] = {0x1D434, 0x1D44E, 0},       [AL_BF] = {0x1D400, 0x1D41A, 0x1D7CE},
      [AL_BI] = {0x1D468, 0x1D482, 0x1D7CE}, [AL_BB] = {0x1D538, 0x1D552, 0x1D7D8},
      [AL_CAL] = {0x1D49C, 0x1D4B6, 0},      [AL_FRAK] = {0x1D504, 0x1D51E, 0},
      [AL_SF] = {0x1D5A0, 0x1D5BA, 0x1D7E2}, [AL_TT] = {0x1D670, 0x1D68A, 0x1D7F6},
  };
  uint32_t h = cp < 0x80 ? hole(al, cp) : 0;
  if (h) return h;
  if (cp >= 'A' && cp <= 'Z' && BASE[al][0]) return BASE[al][0] + cp - 'A';
  if (cp >= 'a' && cp <= 'z' && BASE[al][1]) return BASE[al][1] + cp - 'a';
  if (cp >= '0' && cp <= '9' && BASE[al][2]) return BASE[al][2] + cp - '0';
  if (cp >= 0x391 && cp <= 0x3F5) return greek(cp, al);
  return cp;
}

// ---- Latin Modern Math's MathItalicsCorrectionInfo and MathTopAccentAttachment (1/1000 em)
// for the italic A–Z a–z (U+1D434...), italic Greek (U+1D6E2...) and bold italic (U+1D468...).
static const short IC_IT[52] = {0,   25, 73,  4,  54, 134, 0,   78,  85,  106, 68, 0,   102,
                                106, 5,  140, 0,  24, 60,  148, 105, 214, 132, 51, 209, 68,
                                0,   14, 25,  24, 0,  90,  25,  0,   0,   13,  15, 0,   0,
                                0,   12, 15,  34, 13, 0,   0,   0,   11,  3,   0,  28,  30};
static const short TA_IT[52] = {550, 420, 596, 427, 483, 475, 596, 542, 347, 487, 545, 360, 625,
                                542, 495, 416, 495, 398, 498, 398, 421, 413, 552, 528, 399, 485,
                                287, 165, 317, 442, 300, 464, 316, 213, 247, 359, 213, 184, 404,
                                265, 315, 246, 349, 247, 296, 225, 305, 294, 405, 329, 304, 336};
static const short IC_GR[58] = {0,   25,  134, 0,  54,  68,  78, 5,  85,  68, 0,  102, 106, 63, 5,
                                77,  140, 5,   54, 148, 146, 4,  51, 109, 42, 0,  0,   36,  53, 36,
                                0,   64,  27,  14, 0,   0,   0,  0,  58,  36, 12, 25,  13,  74, 24,
                                102, 12,  0,   0,  12,  10,  63, 0,  0,   0,  0,  5,   13};
static const short TA_GR[58] = {552, 457, 461, 586, 482, 481, 542, 498, 347, 545, 517, 625, 542, 494, 498,
                                541, 454, 498, 514, 394, 385, 415, 528, 392, 533, 420, 392, 437, 259, 335,
                                284, 313, 272, 310, 184, 331, 238, 349, 297, 285, 243, 328, 354, 182, 286,
                                269, 306, 355, 331, 469, 345, 361, 269, 411, 365, 423, 361, 453};
static const short IC_BI[52] = {0,   16, 66,  5,  43, 148, 0,   73,  83,  91,  60, 0,   102,
                                105, 6,  154, 0,  37, 49,  163, 105, 235, 142, 34, 228, 60,
                                0,   13, 26,  22, 0,  86,  17,  0,   0,   7,   0,  0,   0,
                                0,   12, 13,  29, 4,  0,   0,   0,   0,   0,   0,  20,  11};
static const short TA_BI[52] = {608, 477, 658, 465, 515, 507, 658, 616, 383, 516, 604, 396, 712,
                                616, 528, 468, 528, 457, 561, 434, 473, 476, 637, 584, 460, 533,
                                336, 225, 365, 512, 340, 516, 339, 228, 282, 398, 228, 196, 478,
                                318, 367, 296, 410, 282, 324, 254, 345, 332, 460, 359, 345, 379};

int tex_italic_corr(uint32_t cp) {
  if (cp >= 0x1D434 && cp < 0x1D434 + 52) return IC_IT[cp - 0x1D434];
  if (cp >= 0x1D6E2 && cp < 0x1D6E2 + 58) return IC_GR[cp - 0x1D6E2];
  if (cp >= 0x1D468 && cp < 0x1D468 + 52) return IC_BI[cp - 0x1D468];
  if (cp == 0x222B) return 332;
  return 0;
}

int tex_top_accent(uint32_t cp) {
  if (cp == 0x210E) return 213;
  if (cp >= 0x1D434 && cp < 0x1D434 + 52) return TA_IT[cp - 0x1D434];
  if (cp >= 0x1D6E2 && cp < 0x1D6E2 + 58) return TA_GR[cp - 0x1D6E2];
  if (cp >= 0x1D468 && cp < 0x1D468 + 52) return TA_BI[cp - 0x1D468];
  return -1;
}
