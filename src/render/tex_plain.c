// tex_plain.c -- a formula as plain Unicode text, for places that cannot typeset (see tex.h).
//
// The same command table as the layout (tex_symbols.c) names the characters: \alpha is α, \top
// ⊤, \mathbb{R} ℝ. Structure becomes the usual linear notation: \sqrt{d_k} → √d_k (√(a+b) when
// the radicand is more than a word), \frac{a}{b} → a/b ((a+b)/c), a superscript of digits, signs
// or n, i, T, ⊤ → superscript characters (x², Kᵀ), another → ^x or ^(…); subscripts stay _k,
// _(…) when longer than a word. Colours, styles, spacing and phantoms drop out; an unknown
// command stays as typed.
#include <string.h>

#include "tex.h"
#include "tex_internal.h"

typedef struct {
  const char *s; // the source, NUL-terminated
  size_t i;
  char *out;
  size_t n, cap; // bytes written (without the NUL), capacity
  int depth;
} Plain;

static void put(Plain *p, const char *t, size_t n) {
  if (p->n + n + 1 > p->cap) { // cut, at a character boundary
    n = p->cap > p->n + 1 ? p->cap - p->n - 1 : 0;
    while (n > 0 && ((unsigned char)t[n] & 0xC0) == 0x80) n--;
  }
  memcpy(p->out + p->n, t, n);
  p->n += n;
  p->out[p->n] = 0;
}
static void puts_(Plain *p, const char *t) { put(p, t, strlen(t)); }
static void putcp(Plain *p, uint32_t cp) {
  char u[5];
  put(p, u, (size_t)tex_utf8_put(cp, u));
}

static void group(Plain *p, char close);

// One argument (a {group}, a command or a character) converted into buf (cap bytes).
static void arg(Plain *p, char *buf, size_t cap) {
  Plain q = {p->s, p->i, buf, 0, cap, p->depth + 1};
  buf[0] = 0;
  while (p->s[q.i] == ' ') q.i++;
  if (q.depth > 32 || !p->s[q.i]) {
    p->i = q.i;
    return;
  }
  if (p->s[q.i] == '{') {
    q.i++;
    group(&q, '}');
  } else {
    size_t b = q.i;
    if (p->s[q.i] == '\\') {
      q.i++;
      while ((p->s[q.i] >= 'a' && p->s[q.i] <= 'z') || (p->s[q.i] >= 'A' && p->s[q.i] <= 'Z')) q.i++;
      if (q.i == b + 1 && p->s[q.i]) q.i++;
      char tmp[64]; // the command alone, converted as a formula of its own
      size_t n = q.i - b < sizeof tmp - 1 ? q.i - b : sizeof tmp - 1;
      memcpy(tmp, p->s + b, n);
      tmp[n] = 0;
      Plain one = {tmp, 0, buf, 0, cap, q.depth};
      group(&one, 0);
    } else {
      q.i++;
      while (((unsigned char)p->s[q.i] & 0xC0) == 0x80) q.i++; // a whole UTF-8 character
      put(&q, p->s + b, q.i - b);
    }
  }
  p->i = q.i;
}

// More than one "word": anything but letters, digits and UTF-8 characters.
static bool compound(const char *t) {
  int n = 0;
  for (const unsigned char *c = (const unsigned char *)t; *c; c++) {
    if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c >= 0x80 ||
          *c == '_'))
      return true;
    n++;
  }
  return false;
}

static void put_wrapped(Plain *p, const char *t) {
  bool w = compound(t);
  if (w) puts_(p, "(");
  puts_(p, t);
  if (w) puts_(p, ")");
}

// A superscript: as superscript characters when every character has one, else ^x or ^(…).
static void superscript(Plain *p, const char *t) {
  static const char *digits[] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
  char buf[256] = "";
  size_t n = 0;
  bool ok = *t != 0;
  for (const char *c = t; *c && ok; c++) {
    const char *u = NULL;
    if (*c >= '0' && *c <= '9')
      u = digits[*c - '0'];
    else if (*c == '+')
      u = "⁺";
    else if (*c == '-')
      u = "⁻";
    else if (*c == 'n')
      u = "ⁿ";
    else if (*c == 'i')
      u = "ⁱ";
    else if (*c == 'T')
      u = "ᵀ";
    else if (!strncmp(c, "⊤", strlen("⊤")))
      u = "ᵀ", c += strlen("⊤") - 1;
    else if (!strncmp(c, "′", strlen("′")))
      u = "′", c += strlen("′") - 1;
    else if (!strncmp(c, "−", strlen("−")))
      u = "⁻", c += strlen("−") - 1;
    ok = u && n + strlen(u) < sizeof buf;
    if (ok) memcpy(buf + n, u, strlen(u)), n += strlen(u), buf[n] = 0;
  }
  if (ok) {
    puts_(p, buf);
    return;
  }
  puts_(p, "^");
  put_wrapped(p, t);
}

// A subscript as Unicode subscript characters: a number or one letter that has one ("S_1" → "S₁",
// "S_{12}" → "S₁₂", "d_k" → "dₖ": a tooltip never shows a raw "S_1"), else "_" and the argument
// ("α_(i,j)", "W_out").
static void subscript(Plain *p, const char *t) {
  static const char *digits[] = {"₀", "₁", "₂", "₃", "₄", "₅", "₆", "₇", "₈", "₉"};
  static const char letters[] = "aehijklmnoprstuvx";
  static const char *small[] = {"ₐ", "ₑ", "ₕ", "ᵢ", "ⱼ", "ₖ", "ₗ", "ₘ", "ₙ",
                                "ₒ", "ₚ", "ᵣ", "ₛ", "ₜ", "ᵤ", "ᵥ", "ₓ"};
  char buf[256] = "";
  size_t n = 0;
  bool ok = *t != 0, digits_only = strspn(t, "0123456789") == strlen(t);
  if (!digits_only && strlen(t) > 1) ok = false; // a word ("out") stays "_out": tiny letters read badly
  for (const char *c = t; *c && ok; c++) {
    const char *u = NULL, *l = *c ? strchr(letters, *c) : NULL;
    if (*c >= '0' && *c <= '9')
      u = digits[*c - '0'];
    else if (*c == '+')
      u = "₊";
    else if (*c == '-')
      u = "₋";
    else if (l)
      u = small[l - letters];
    ok = u && n + strlen(u) < sizeof buf;
    if (ok) memcpy(buf + n, u, strlen(u)), n += strlen(u), buf[n] = 0;
  }
  if (ok) {
    puts_(p, buf);
    return;
  }
  puts_(p, "_");
  put_wrapped(p, t);
}

static void command(Plain *p) {
  size_t b = ++p->i;
  while ((p->s[p->i] >= 'a' && p->s[p->i] <= 'z') || (p->s[p->i] >= 'A' && p->s[p->i] <= 'Z')) p->i++;
  if (p->i == b) { // a one-character command: \{ \$ \, \\ ...
    char c = p->s[p->i];
    if (!c) return;
    p->i++;
    if (c == ',' || c == '!' || c == ':' || c == ';' || c == '>')
      puts_(p, c == '!' ? "" : " ");
    else if (c == '\\')
      puts_(p, " ");
    else if (c == '|')
      puts_(p, "‖");
    else
      put(p, &c, 1);
    return;
  }
  size_t n = p->i - b;
  const TexCmd *c = tex_cmd_find(p->s + b, n);
  char a[512], a2[512];
  if (!c) {
    uint32_t d = tex_delim_cp(p->s + b, n);
    if (d)
      putcp(p, d);
    else
      put(p, p->s + b - 1, n + 1); // unknown: as typed
    return;
  }
  switch ((TexCmdKind)c->kind) {
  case K_SYM: putcp(p, c->cp); return;
  case K_OPNAME: puts_(p, c->text); return;
  case K_OPERATORNAME:
    if (p->s[p->i] == '*') p->i++;
    arg(p, a, sizeof a);
    puts_(p, a);
    return;
  case K_ALPHA:
    arg(p, a, sizeof a);
    if (c->cp == AL_BB || c->cp == AL_CAL || c->cp == AL_FRAK) {
      for (const char *t = a; *t; t++) // letters get the alphabet's characters (ℝ, 𝒩)
        if ((*t >= 'A' && *t <= 'Z') || (*t >= 'a' && *t <= 'z'))
          putcp(p, tex_alpha_cp((uint32_t)*t, (TexAlphabet)c->cp));
        else
          put(p, t, 1);
    } else
      puts_(p, a);
    return;
  case K_TEXT:
  case K_CLASS:
  case K_OVERLINE:
  case K_UNDERLINE:
    arg(p, a, sizeof a);
    puts_(p, a);
    return;
  case K_ACCENT:
    arg(p, a, sizeof a);
    puts_(p, a);
    if (!compound(a) && strlen(a) <= 4) putcp(p, c->cp); // x̂: the combining accent after a letter
    return;
  case K_SQRT:
    while (p->s[p->i] == ' ') p->i++;
    if (p->s[p->i] == '[') { // \sqrt[n]{x}: ⁿ√x
      size_t e = p->i;
      while (p->s[e] && p->s[e] != ']') e++;
      char idx[64];
      size_t k = e - p->i - 1 < sizeof idx - 1 ? e - p->i - 1 : sizeof idx - 1;
      memcpy(idx, p->s + p->i + 1, k);
      idx[k] = 0;
      p->i = p->s[e] ? e + 1 : e;
      superscript(p, idx);
    }
    arg(p, a, sizeof a);
    puts_(p, "√");
    put_wrapped(p, a);
    return;
  case K_FRAC:
  case K_BINOM:
    arg(p, a, sizeof a);
    arg(p, a2, sizeof a2);
    if (c->kind == K_BINOM) {
      puts_(p, "C(");
      puts_(p, a);
      puts_(p, ", ");
      puts_(p, a2);
      puts_(p, ")");
      return;
    }
    put_wrapped(p, a);
    puts_(p, "/");
    put_wrapped(p, a2);
    return;
  case K_STACK: // \overset{a}{b}: b
    arg(p, a, sizeof a);
    arg(p, a2, sizeof a2);
    puts_(p, a2);
    return;
  case K_TEXTCOLOR:
    arg(p, a, sizeof a);
    arg(p, a2, sizeof a2);
    puts_(p, a2);
    return;
  case K_COLOR:
  case K_PHANTOM:
  case K_HSPACE:
  case K_BEGIN:
  case K_END:
    arg(p, a, sizeof a);
    if (c->kind == K_HSPACE) puts_(p, " ");
    return;
  case K_SPACE:
    if (c->arg >= 18) puts_(p, " "); // \quad, \qquad; thin spaces vanish
    return;
  case K_NOT: {
    arg(p, a, sizeof a);
    puts_(p, a);
    putcp(p, 0x338); // a combining long solidus: ≠ for =
    return;
  }
  default: // \left \right \middle \big ...: the delimiter that follows is drawn as itself
    return;
  }
}

// Converts until `close` (or the end); consumes the closing brace.
static void group(Plain *p, char close) {
  while (p->s[p->i]) {
    char c = p->s[p->i];
    if (c == close && close) {
      p->i++;
      return;
    }
    if (c == '\\') {
      command(p);
    } else if (c == '{') {
      p->i++;
      Plain q = *p;
      q.depth++;
      if (q.depth > 32) return;
      group(&q, '}');
      p->i = q.i, p->n = q.n;
    } else if (c == '^' || c == '_') {
      p->i++;
      char a[512];
      arg(p, a, sizeof a);
      if (c == '^')
        superscript(p, a);
      else
        subscript(p, a);
    } else if (c == '\'') {
      p->i++;
      puts_(p, "′");
    } else if (c == '~' || c == '&') {
      p->i++;
      puts_(p, " ");
    } else if (c == '%') { // a comment, to the end of the line
      while (p->s[p->i] && p->s[p->i] != '\n') p->i++;
    } else if (c == '-') {
      p->i++;
      puts_(p, "−");
    } else {
      size_t b = p->i++;
      while (((unsigned char)p->s[p->i] & 0xC0) == 0x80) p->i++;
      if (c != '}') put(p, p->s + b, p->i - b);
    }
  }
}

size_t tex_plain(const char *src, char *out, size_t cap) {
  if (!cap) return 0;
  out[0] = 0;
  Plain p = {src ? src : "", 0, out, 0, cap, 0};
  group(&p, 0);
  // collapse runs of spaces and trim
  size_t w = 0;
  for (size_t r = 0; r < p.n; r++)
    if (out[r] != ' ' || (w > 0 && out[w - 1] != ' ')) out[w++] = out[r];
  while (w > 0 && out[w - 1] == ' ') w--;
  out[w] = 0;
  return w;
}

size_t tex_plain_title(const char *title, char *out, size_t cap) {
  if (!cap) return 0;
  size_t n = 0;
  out[0] = 0;
  bool math = false;
  for (const char *p = title ? title : ""; *p;) {
    const char *q = tex_next_dollar(p);
    char part[1024];
    size_t k = 0;
    for (const char *c = p; *c && c != q && k < sizeof part - 1; c++)
      if (math || c[0] != '\\' || c[1] != '$') part[k++] = *c; // text: \$ → $
    part[k] = 0;
    char plain[1024];
    const char *t = part;
    if (math) tex_plain(part, plain, sizeof plain), t = plain;
    size_t l = strlen(t);
    if (n + l + 1 > cap) l = cap - n - 1;
    while (l > 0 && ((unsigned char)t[l] & 0xC0) == 0x80) l--; // whole characters when cut
    memcpy(out + n, t, l);
    n += l;
    out[n] = 0;
    if (!q) break;
    p = q + 1;
    math = !math;
  }
  return n;
}
