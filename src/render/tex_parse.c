// tex_parse.c -- formula source → TexNode tree: lists, groups, arguments, characters and
// scripts (commands, text mode and environments are in tex_parse_cmd.c); the arena and the
// diagnostics; tex_check.
//
// A recursive-descent parser over bytes. Lists end at what their context allows (`}` in a
// group, `&`, `\\` and \end in an environment, \right after \left, `]` in \sqrt[...]); the
// terminator is left for the context to consume, so a missing one is reported where it is
// noticed. Every recursion goes through tex_p_enter()/tex_p_leave(), which cap the depth.
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tex_parse.h"
#include "utf8.h" // defines: utf8_is_cont, utf8_ceil, utf8_lead_len

// ---- arena

// Under AddressSanitizer a spare chunk is poisoned, so that a pointer kept into a freed arena is
// still reported when it is used, as it would be after free().
#if defined(__SANITIZE_ADDRESS__)
#define SF_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SF_ASAN 1
#endif
#endif
#ifdef SF_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define CHUNK 8192 // bytes of a chunk; a bigger allocation gets a chunk of its own size
#define SPARES 16  // chunks of CHUNK bytes kept for the next formulas (128 kB at most)

struct TexChunk {
  TexChunk *next;
  size_t used, cap;
  _Alignas(16) char data[];
};

// Freed chunks of CHUNK bytes, reused by the next arena: a formula takes 2 to 4 of them (the
// parse, the boxes, tex_check's parse), and a window or an export lays out thousands of
// formulas, so most arenas never call malloc. Shared by the threads that draw at once.
static struct {
  pthread_mutex_t lock;
  TexChunk *list[SPARES];
  int n;
} spare = {PTHREAD_MUTEX_INITIALIZER, {0}, 0};

static TexChunk *chunk_new(size_t cap) {
  TexChunk *c = NULL;
  if (cap == CHUNK) {
    pthread_mutex_lock(&spare.lock);
    if (spare.n > 0) c = spare.list[--spare.n];
    pthread_mutex_unlock(&spare.lock);
    if (c) UNPOISON(c->data, CHUNK);
  }
  if (!c && (c = malloc(sizeof *c + cap))) c->cap = cap;
  return c;
}

static void chunk_free(TexChunk *c) {
  bool kept = false;
  if (c->cap == CHUNK) {
    pthread_mutex_lock(&spare.lock);
    if ((kept = spare.n < SPARES)) {
      POISON(c->data, CHUNK); // before another thread can take it
      spare.list[spare.n++] = c;
    }
    pthread_mutex_unlock(&spare.lock);
  }
  if (!kept) free(c);
}

SF_NO_COVERAGE void *tex_alloc(TexArena *a, size_t bytes) {
  bytes = (bytes + 15) & ~(size_t)15;
  TexChunk *c = a->head;
  if (!c || c->used + bytes > c->cap) {
    c = chunk_new(bytes > CHUNK ? bytes : CHUNK);
    if (!c) {
      a->oom = true;
      return NULL;
    }
    c->used = 0, c->next = a->head;
    a->head = c;
  }
  void *p = c->data + c->used;
  c->used += bytes;
  memset(p, 0, bytes);
  return p;
}

SF_NO_COVERAGE char *tex_strndup(TexArena *a, const char *s, size_t n) {
  char *p = tex_alloc(a, n + 1);
  if (p) memcpy(p, s, n);
  return p;
}

void tex_arena_free(TexArena *a) {
  for (TexChunk *c = a->head, *next; c; c = next) next = c->next, chunk_free(c);
  a->head = NULL;
}

// ---- diagnostics

void tex_diag_add(TexDiag *d, const char *src, int offset, const char *fmt, ...) {
  if (!d) return;
  if (d->count++ >= TEX_DIAG_MAX) return;
  TexProblem *p = &d->items[d->count - 1];
  p->offset = offset, p->line = 1, p->col = 1;
  for (int i = 0; src && i < offset; i++) {
    if (src[i] == '\n')
      p->line++, p->col = 1;
    else if (!utf8_is_cont((unsigned char)src[i]))
      p->col++;
  }
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->msg, sizeof p->msg, fmt, ap);
  va_end(ap);
}

const char *tex_problem_str(const TexProblem *p, char *buf, size_t cap) {
  if (p->line > 1)
    snprintf(buf, cap, "%s at line %d, column %d", p->msg, p->line, p->col);
  else
    snprintf(buf, cap, "%s at column %d", p->msg, p->col);
  return buf;
}

// The code point at s[i], never reading past n; *len gets its length. Invalid: U+FFFD, *bad.
uint32_t tex_p_utf8_at(const char *str, size_t i, size_t n, size_t *len, bool *bad) {
  const unsigned char *s = (const unsigned char *)str + i;
  uint32_t c = s[0];
  size_t k = (size_t)utf8_lead_len((unsigned char)c);
  *len = 1, *bad = true;
  if (k == 0 || k > n - i) return 0xFFFD;
  if (k == 1) return *bad = false, c;
  c &= 0x7Fu >> k;
  for (size_t j = 1; j < k; j++) {
    if (!utf8_is_cont(s[j])) return *len = j, 0xFFFD;
    c = c << 6 | (s[j] & 0x3F);
  }
  *len = k;
  static const uint32_t MIN[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (c < MIN[k] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0xFFFD;
  return *bad = false, c;
}

// A copy of s[0..n) with invalid UTF-8 replaced by U+FFFD (the text goes to SDL_ttf).
char *tex_p_clean_dup(TexArena *a, const char *s, size_t n) {
  char *out = tex_alloc(a, n * 3 + 1);
  if (!out) return NULL;
  size_t o = 0;
  for (size_t i = 0, k; i < n; i += k) {
    bool bad;
    tex_p_utf8_at(s, i, n, &k, &bad);
    if (bad)
      memcpy(out + o, "\xEF\xBF\xBD", 3), o += 3;
    else
      memcpy(out + o, s + i, k), o += k;
  }
  return out;
}

void tex_p_skip_ws(P *p) {
  while (p->i < p->n) {
    char c = p->s[p->i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
      p->i++;
    else if (c == '%') // a comment, to the end of the line
      while (p->i < p->n && p->s[p->i] != '\n') p->i++;
    else
      break;
  }
}

bool tex_p_enter(P *p, size_t pos) {
  if (p->depth >= TEX_MAX_DEPTH) {
    if (!p->deep_reported) ERR(p, pos, "formula nested deeper than %d levels", TEX_MAX_DEPTH);
    p->deep_reported = true;
    return false;
  }
  p->depth++;
  return true;
}
void tex_p_leave(P *p) { p->depth--; }

TexNode *tex_p_node(P *p, TexNodeKind k, size_t pos) {
  TexNode *n = tex_alloc(p->A, sizeof *n);
  if (!n) return NULL;
  n->kind = (uint8_t)k, n->pos = (int)pos, n->color = p->color, n->style = 0xFF;
  n->cls = C_ORD;
  return n;
}

void tex_p_append(List *l, TexNode *n) {
  if (!n) return;
  if (l->tail)
    l->tail->next = n;
  else
    l->head = n;
  l->tail = n;
  while (l->tail->next) l->tail = l->tail->next;
}

TexNode *tex_p_group_of(P *p, TexNode *body, size_t pos) {
  TexNode *g = tex_p_node(p, N_GROUP, pos);
  if (g) g->a = body;
  return g;
}

TexNode *tex_p_error_node(P *p, size_t pos, const char *text, size_t n) {
  TexNode *e = tex_p_node(p, N_ERROR, pos);
  if (e) e->text = tex_p_clean_dup(p->A, text, n);
  return e;
}

// Length of the command name at s[i] (just after the backslash).
size_t tex_p_name_len(const P *p, size_t i) {
  if (i >= p->n) return 0;
  if (!is_letter(p->s[i])) {
    return utf8_ceil(p->s, i + 1, p->n) - i; // one character, whole if UTF-8
  }
  size_t k = 0;
  while (i + k < p->n && is_letter(p->s[i + k])) k++;
  return k;
}

bool tex_p_at_cmd(const P *p, const char *name) {
  size_t k = strlen(name);
  return p->i + 1 + k <= p->n && p->s[p->i] == '\\' && !memcmp(p->s + p->i + 1, name, k) &&
         tex_p_name_len(p, p->i + 1) == k;
}

// Skips a balanced {...} or one token (used past the depth limit).
void tex_p_skip_token(P *p) {
  tex_p_skip_ws(p);
  if (peek(p) == '\\') {
    p->i++;
    p->i += tex_p_name_len(p, p->i);
    return;
  }
  if (peek(p) != '{') {
    if (!at_end(p)) p->i++;
    return;
  }
  for (int level = 0; p->i < p->n; p->i++) {
    char c = p->s[p->i];
    if (c == '\\')
      p->i++;
    else if (c == '{')
      level++;
    else if (c == '}' && --level == 0) {
      p->i++;
      return;
    }
  }
}

// ---- arguments

// Contents of {...} after the brace; reports a missing }.
TexNode *tex_p_group_body(P *p, size_t open) {
  uint32_t color = p->color;
  TexNode *left = p->cur_left;
  p->cur_left = NULL;
  TexNode *body = tex_p_parse_list(p, T_BRACE);
  p->color = color, p->cur_left = left;
  if (peek(p) == '}')
    p->i++;
  else
    ERR(p, open, "missing } for this {");
  return body;
}

// A mandatory argument: {list} or one token. NULL when missing; an empty group for {}.
TexNode *tex_p_parse_arg(P *p) {
  tex_p_skip_ws(p);
  size_t pos = p->i;
  char c = peek(p);
  if (!c || c == '}' || c == '&' || c == '^' || c == '_' || (c == '\\' && tex_p_at_cmd(p, "\\")) ||
      tex_p_at_cmd(p, "right") || tex_p_at_cmd(p, "end"))
    return NULL;
  if (!tex_p_enter(p, pos)) {
    tex_p_skip_token(p);
    return tex_p_error_node(p, pos, "\xE2\x80\xA6", 3);
  }
  TexNode *r;
  if (c == '{') {
    p->i++;
    TexNode *body = tex_p_group_body(p, pos);
    r = body ? body : tex_p_group_of(p, NULL, pos);
  } else {
    List l = {0};
    tex_p_parse_atom(p, &l, 0, true);
    r = l.head ? l.head : tex_p_group_of(p, NULL, pos);
  }
  tex_p_leave(p);
  return r;
}

TexNode *tex_p_need_arg(P *p, size_t pos, const char *cmd, const char *what) {
  TexNode *a = tex_p_parse_arg(p);
  if (!a) {
    ERR(p, pos, "\\%s needs %s", cmd, what);
    a = tex_p_group_of(p, NULL, pos);
  }
  return a;
}

// A braced word ({bmatrix}, {red}); returns its length and start, or 0.
size_t tex_p_word_arg(P *p, const char **start) {
  *start = "";
  tex_p_skip_ws(p);
  if (peek(p) != '{') return 0;
  size_t b = ++p->i;
  while (p->i < p->n && p->s[p->i] != '}') p->i++;
  size_t len = p->i - b;
  if (p->i < p->n) p->i++;
  *start = p->s + b;
  while (len && p->s[b + len - 1] == ' ') len--;
  while (len && **start == ' ') (*start)++, len--;
  return len;
}

// [HTML]{FF0000}, {#ff0000} or {red}; false (reported) when not understood.
bool tex_p_color_arg(P *p, size_t pos, uint32_t *c) {
  tex_p_skip_ws(p);
  if (peek(p) == '[')
    while (p->i < p->n && p->s[p->i++] != ']') {
    }
  const char *w;
  size_t n = tex_p_word_arg(p, &w);
  if (n && tex_color_parse(w, n, c)) return true;
  ERR(p, pos, "unknown colour \"%.*s\" (use #RRGGBB or a name such as red)", (int)(n > 40 ? 40 : n),
      n ? w : "");
  return false;
}

// The delimiter after \left, \right, \middle or \big: 0 for '.', ~0u when missing.
uint32_t tex_p_parse_delim(P *p, const char *cmd, size_t pos) {
  tex_p_skip_ws(p);
  char c = peek(p);
  const char *simple = "()[]|/<>.";
  if (c && strchr(simple, c)) {
    p->i++;
    return c == '.' ? 0 : c == '<' ? 0x27E8 : c == '>' ? 0x27E9 : (uint32_t)c;
  }
  if (c == '\\') {
    size_t k = tex_p_name_len(p, p->i + 1);
    uint32_t cp = tex_delim_cp(p->s + p->i + 1, k);
    if (cp) {
      p->i += 1 + k;
      return cp;
    }
  } else if ((unsigned char)c >= 0x80) {
    size_t k;
    bool bad;
    uint32_t cp = tex_p_utf8_at(p->s, p->i, p->n, &k, &bad);
    if (cp == 0x27E8 || cp == 0x27E9 || cp == 0x2016 || (cp >= 0x2308 && cp <= 0x230B)) {
      p->i += k;
      return cp;
    }
  }
  ERR(p, pos, "\\%s needs a delimiter such as ( [ \\{ | or .", cmd);
  return ~0u;
}

// ---- characters and scripts

static TexNode *char_node(P *p, size_t pos, uint32_t cp) {
  TexNode *n = tex_p_node(p, N_CHAR, pos);
  if (!n) return NULL;
  n->cp = cp == '-' ? 0x2212 : cp == '*' ? 0x2217 : cp;
  n->cls = (uint8_t)tex_char_class(cp);
  n->alpha = p->alpha;
  return n;
}

// 3.21, 10000: one run of upright digits (TeX would space them as ordinary atoms: none).
static TexNode *number_node(P *p, size_t pos) {
  size_t b = p->i;
  while (p->i < p->n &&
         (is_digit(p->s[p->i]) || (p->s[p->i] == '.' && p->i + 1 < p->n && is_digit(p->s[p->i + 1]))))
    p->i++;
  TexNode *n = tex_p_node(p, N_RUN, pos);
  if (n) n->face = FONT_MATH, n->text = tex_strndup(p->A, p->s + b, p->i - b);
  return n;
}

// Letters in \mathrm or \mathit: one run in the text face.
static TexNode *word_node(P *p, size_t pos, bool single) {
  size_t b = p->i++;
  while (!single && p->i < p->n && (is_letter(p->s[p->i]) || is_digit(p->s[p->i]))) p->i++;
  TexNode *n = tex_p_node(p, N_RUN, pos);
  if (n) {
    n->face = p->alpha == AL_IT ? FONT_SERIF_ITALIC : FONT_SERIF;
    n->text = tex_strndup(p->A, p->s + b, p->i - b);
  }
  return n;
}

static bool scriptable(const TexNode *t) { return t && t->kind != N_SPACE && t->kind != N_STYLE; }

static TexNode *prime_node(P *p, size_t pos) {
  TexNode *n = tex_p_node(p, N_CHAR, pos);
  if (n) n->cp = 0x2032, n->cls = C_ORD;
  return n;
}

static void parse_script(P *p, List *l) {
  size_t pos = p->i;
  char c = p->s[p->i++];
  TexNode *t = l->tail;
  if (!scriptable(t)) tex_p_append(l, t = tex_p_group_of(p, NULL, pos));
  if (!t) return;
  if (c == '\'') { // primes: x' is x^{\prime}, x'' x^{\prime\prime}, x'^2 x^{\prime 2}
    if (t->sup && !t->primes) {
      ERR(p, pos, "double superscript");
      tex_p_append(l, t = tex_p_group_of(p, NULL, pos));
      if (!t) return;
    }
    List s = {t->sup, t->sup};
    while (s.tail && s.tail->next) s.tail = s.tail->next;
    if (s.tail && s.tail->kind == N_CHAR && (s.tail->cp == 0x2032 || s.tail->cp == 0x2033))
      s.tail->cp++; // ″ and ‴ are drawn closer than two or three ′
    else
      tex_p_append(&s, prime_node(p, pos));
    t->sup = s.head, t->primes = true;
    return;
  }
  TexNode **slot = c == '^' ? &t->sup : &t->sub;
  if (*slot && !(c == '^' && t->primes)) {
    ERR(p, pos, c == '^' ? "double superscript" : "double subscript");
    tex_p_append(l, t = tex_p_group_of(p, NULL, pos));
    if (!t) return;
    slot = c == '^' ? &t->sup : &t->sub;
  }
  TexNode *arg = tex_p_parse_arg(p);
  if (!arg) {
    ERR(p, pos, "%c needs something to raise or lower, e.g. x%c{2}", c, c);
    arg = tex_p_group_of(p, NULL, pos);
  }
  if (c == '^' && t->primes) {
    List s = {t->sup, t->sup};
    while (s.tail && s.tail->next) s.tail = s.tail->next;
    tex_p_append(&s, arg);
    t->sup = s.head, t->primes = false;
  } else {
    *slot = arg;
  }
}

void tex_p_parse_atom(P *p, List *l, int term, bool single) {
  size_t pos = p->i;
  char c = p->s[p->i];
  TexNode *n = NULL;
  bool plain = p->alpha == AL_MATH || p->alpha == AL_RM || p->alpha == AL_IT;
  if (c == '{') {
    p->i++;
    if (tex_p_enter(p, pos)) {
      n = tex_p_group_of(p, tex_p_group_body(p, pos), pos);
      tex_p_leave(p);
    } else {
      p->i--;
      tex_p_skip_token(p);
      n = tex_p_error_node(p, pos, "\xE2\x80\xA6", 3);
    }
  } else if (c == '\\') {
    tex_p_parse_command(p, l, term);
  } else if (c == '~') {
    if ((n = tex_p_node(p, N_SPACE, p->i++))) n->amount = 6;
  } else if ((unsigned char)c < 0x20) {
    p->i++;
    ERR(p, pos, "control character 0x%02X", c);
  } else if (strchr("$#&}^_", c)) {
    p->i++;
    ERR(p, pos, "unexpected %c", c);
    n = tex_p_error_node(p, pos, &c, 1);
  } else if (is_digit(c) && plain && !single) {
    n = number_node(p, pos);
  } else if (is_letter(c) && (p->alpha == AL_RM || p->alpha == AL_IT)) {
    n = word_node(p, pos, single);
  } else {
    size_t k;
    bool bad;
    uint32_t cp = tex_p_utf8_at(p->s, p->i, p->n, &k, &bad);
    p->i += k;
    if (bad) ERR(p, pos, "invalid UTF-8");
    n = char_node(p, pos, cp);
  }
  tex_p_append(l, n);
}

// One item of a list (an atom, a script, a stray character); false at the end of the list.
static bool parse_item(P *p, List *l, int term) {
  tex_p_skip_ws(p);
  if (at_end(p)) return false;
  size_t pos = p->i;
  char c = p->s[p->i];
  if (c == '}') {
    if (term & T_BRACE) return false;
    ERR(p, pos, "unexpected } (no { to close)");
    p->i++;
  } else if (c == ']' && (term & T_BRACKET)) {
    return false;
  } else if (c == '&' || tex_p_at_cmd(p, "\\")) {
    if (term & T_ENV) return false;
    ERR(p, pos, c == '&' ? "& outside a matrix" : "\\\\ outside a matrix");
    p->i += c == '&' ? 1 : 2;
  } else if (tex_p_at_cmd(p, "end") && (term & T_ENV)) {
    return false;
  } else if (tex_p_at_cmd(p, "right") && (term & T_RIGHT)) {
    return false;
  } else if (c == '^' || c == '_' || c == '\'') {
    parse_script(p, l);
  } else {
    tex_p_parse_atom(p, l, term, false);
  }
  return true;
}

TexNode *tex_p_parse_list(P *p, int term) {
  List l = {0};
  while (parse_item(p, &l, term)) {
  }
  return l.head;
}

TexNode *tex_parse(TexArena *a, const char *src, size_t len, TexDiag *diag) {
  P p = {.s = src, .n = len, .A = a, .diag = diag, .alpha = AL_MATH};
  const char *nul = memchr(src, 0, len); // stop at a NUL inside the given length
  if (nul) p.n = (size_t)(nul - src);
  return tex_p_parse_list(&p, 0);
}

bool tex_check_tree(TexArena *a, const char *src, size_t len, TexDiag *diag, const TexNode **list) {
  memset(diag, 0, sizeof *diag);
  const TexNode *l = tex_parse(a, src ? src : "", src ? len : 0, diag);
  if (list) *list = l;
  return diag->count == 0 && !a->oom;
}

bool tex_check_n(const char *src, size_t len, TexDiag *diag) {
  TexDiag local;
  TexArena a = {0};
  bool ok = tex_check_tree(&a, src, len, diag ? diag : &local, NULL);
  tex_arena_free(&a);
  return ok;
}

bool tex_check(const char *src, TexDiag *diag) { return tex_check_n(src, src ? strlen(src) : 0, diag); }

int tex_parts(const char *src, size_t len, TexPart *parts, int max) {
  TexArena a = {0};
  P p = {.s = src ? src : "", .n = src ? len : 0, .A = &a, .alpha = AL_MATH};
  for (size_t i = 0; i < p.n; i++)
    if (!p.s[i]) p.n = i;
  List l = {0};
  int n = 0;
  size_t start = 0, end = 0; // the part being read: [start, end) holds its items so far
  for (;;) {
    tex_p_skip_ws(&p);
    size_t pos = p.i;
    TexNode *before = l.tail;
    if (!parse_item(&p, &l, 0)) break;
    TexNode *added = before ? before->next : l.head;
    if (added && !added->next && added->kind == N_SPACE && added->amount >= 18) { // \quad or wider
      if (end > start && n < max) parts[n++] = (TexPart){start, end};
      start = end = p.i;
    } else {
      if (end == start) start = pos;
      end = p.i;
    }
  }
  if (end > start && n < max) parts[n++] = (TexPart){start, end};
  tex_arena_free(&a);
  return n;
}
