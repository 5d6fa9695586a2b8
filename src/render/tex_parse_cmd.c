// tex_parse_cmd.c -- the parser's commands (\frac, \left, \textcolor, ...), text mode
// (\text{...}) and environments (matrices, cases, aligned). See tex_parse.h.
#include <stdlib.h>
#include <string.h>

#include "tex_parse.h"
#include "utf8.h" // defines: utf8_ceil

// ---- text mode (\text{...}): runs of characters in one face

typedef struct {
  char *buf;
  size_t len, cap;
} Buf;

static void buf_put(Buf *b, const char *s, size_t n) {
  if (b->len + n + 1 > b->cap) {
    size_t cap = (b->len + n + 1) * 2;
    char *nb = realloc(b->buf, cap);
    if (!nb) return;
    b->buf = nb, b->cap = cap;
  }
  memcpy(b->buf + b->len, s, n);
  b->len += n;
}

static void flush_run(P *p, List *l, Buf *b, FontFace face, size_t pos) {
  if (!b->len) return;
  TexNode *r = tex_p_node(p, N_RUN, pos);
  if (r) r->face = (uint8_t)face, r->text = tex_p_clean_dup(p->A, b->buf, b->len);
  tex_p_append(l, r);
  b->len = 0;
}

static void text_body(P *p, List *l, FontFace face, size_t end_level_pos);

// A text-mode command at p->i (after the backslash was seen); false when it ends the text.
static void text_command(P *p, List *l, Buf *b, FontFace face) {
  size_t pos = p->i++;
  size_t k = tex_p_name_len(p, p->i);
  const char *name = p->s + p->i;
  p->i += k;
  if (k == 1 && strchr("{}_%$&#", name[0])) {
    buf_put(b, name, 1);
    return;
  }
  static const struct {
    const char *name, *text;
  } SPACES[] = {{" ", " "},
                {",", "\xE2\x80\x89"},
                {";", "\xE2\x80\x84"},
                {":", "\xE2\x80\x85"},
                {"quad", "\xE2\x80\x83"},
                {"qquad", "\xE2\x80\x83\xE2\x80\x83"},
                {"textbackslash", "\\"},
                {"!", ""}};
  for (size_t i = 0; i < sizeof SPACES / sizeof SPACES[0]; i++)
    if (strlen(SPACES[i].name) == k && !memcmp(SPACES[i].name, name, k)) {
      buf_put(b, SPACES[i].text, strlen(SPACES[i].text));
      return;
    }
  if (k && is_letter(name[0])) tex_p_skip_ws(p);
  const TexCmd *c = tex_cmd_find(name, k);
  if (c && (c->kind == K_TEXT || c->kind == K_TEXTCOLOR || c->kind == K_COLOR)) {
    flush_run(p, l, b, face, pos);
    uint32_t color = p->color;
    if (c->kind != K_TEXT && tex_p_color_arg(p, pos, &p->color) && c->kind == K_COLOR) return;
    tex_p_skip_ws(p);
    if (peek(p) == '{' && tex_p_enter(p, pos)) {
      p->i++;
      text_body(p, l, c->kind == K_TEXT ? (FontFace)c->cp : face, pos);
      tex_p_leave(p);
    }
    p->color = color;
    return;
  }
  flush_run(p, l, b, face, pos);
  ERR(p, pos, "unknown command \\%.*s in text", (int)(k > 40 ? 40 : k), name);
  TexNode *e = tex_p_error_node(p, pos, name - 1, k + 1);
  if (e) e->face = (uint8_t)face;
  tex_p_append(l, e);
}

// The characters up to the matching }, which is consumed.
static void text_body(P *p, List *l, FontFace face, size_t open) {
  Buf b = {0};
  int level = 0;
  size_t start = p->i;
  while (p->i < p->n) {
    char c = p->s[p->i];
    if (c == '}' && level-- == 0) break;
    if (c == '{') {
      level++, p->i++;
    } else if (c == '}') {
      p->i++;
    } else if (c == '\\') {
      text_command(p, l, &b, face);
    } else if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '~') {
      while (p->i < p->n && strchr(" \n\t\r~", p->s[p->i])) p->i++;
      buf_put(&b, " ", 1);
    } else {
      size_t k = utf8_ceil(p->s, p->i + 1, p->n) - p->i; // one whole character
      buf_put(&b, p->s + p->i, k);
      p->i += k;
    }
  }
  flush_run(p, l, &b, face, start);
  free(b.buf);
  if (peek(p) == '}')
    p->i++;
  else
    ERR(p, open, "missing } for this {");
}

static TexNode *parse_text(P *p, FontFace face, size_t pos, const char *cmd) {
  tex_p_skip_ws(p);
  List l = {0};
  if (peek(p) != '{') {
    ERR(p, pos, "\\%s needs an argument in braces", cmd);
    return tex_p_group_of(p, NULL, pos);
  }
  if (!tex_p_enter(p, pos)) {
    tex_p_skip_token(p);
    return tex_p_error_node(p, pos, "\xE2\x80\xA6", 3);
  }
  p->i++;
  uint32_t color = p->color;
  text_body(p, &l, face, pos);
  p->color = color;
  tex_p_leave(p);
  if (l.head && !l.head->next) return l.head;
  return tex_p_group_of(p, l.head, pos);
}

// ---- environments

static bool env_delims(const char *name, size_t n, uint32_t *l, uint32_t *r, uint8_t *align) {
  static const struct {
    const char *name;
    uint32_t l, r;
    char align;
  } E[] = {
      {"matrix", 0, 0, 'c'},      {"pmatrix", '(', ')', 'c'}, {"bmatrix", '[', ']', 'c'},
      {"Bmatrix", '{', '}', 'c'}, {"vmatrix", '|', '|', 'c'}, {"Vmatrix", 0x2016, 0x2016, 'c'},
      {"smallmatrix", 0, 0, 'c'}, {"cases", '{', 0, 'l'},     {"aligned", 0, 0, 'a'},
      {"gathered", 0, 0, 'c'},    {"array", 0, 0, 'c'},       {"split", 0, 0, 'a'},
  };
  for (size_t i = 0; i < sizeof E / sizeof E[0]; i++)
    if (strlen(E[i].name) == n && !memcmp(E[i].name, name, n)) {
      *l = E[i].l, *r = E[i].r, *align = (uint8_t)E[i].align;
      return true;
    }
  *l = *r = 0, *align = 'c';
  return false;
}

typedef struct {
  TexNode **cells;
  int n, cap, rows, cols, in_row;
} Cells;

static void cell_add(P *p, Cells *c, TexNode *list) {
  if (c->n == c->cap) {
    int cap = c->cap ? c->cap * 2 : 16;
    TexNode **nc = tex_alloc(p->A, sizeof *nc * (size_t)cap);
    if (!nc) return;
    if (c->n) memcpy(nc, c->cells, sizeof *nc * (size_t)c->n);
    c->cells = nc, c->cap = cap;
  }
  c->cells[c->n++] = list;
  if (++c->in_row > c->cols) c->cols = c->in_row;
}

// Cells were stored row after row with ragged lengths; lay them out rows × cols.
static void cells_square(P *p, TexNode *m, Cells *c, const int *row_len) {
  m->rows = c->rows, m->cols = c->cols;
  m->cells = tex_alloc(p->A, sizeof(TexNode *) * (size_t)(c->rows * c->cols + 1));
  if (!m->cells) return;
  for (int r = 0, k = 0; r < c->rows; r++)
    for (int j = 0; j < row_len[r]; j++) m->cells[r * c->cols + j] = c->cells[k++];
}

static TexNode *parse_env(P *p, size_t pos, int term) {
  const char *name;
  size_t n = tex_p_word_arg(p, &name);
  TexNode *m = tex_p_node(p, N_MATRIX, pos);
  if (!m) return NULL;
  if (!env_delims(name, n, &m->ldelim, &m->rdelim, &m->align))
    ERR(p, pos, "unknown environment \"%.*s\" (matrix, pmatrix, bmatrix, vmatrix, cases, aligned)",
        (int)(n > 30 ? 30 : n), n ? name : "");
  if (n == 5 && !memcmp(name, "array", 5)) { // column spec: skipped
    const char *spec;
    tex_p_word_arg(p, &spec);
  }
  if (!tex_p_enter(p, pos)) return m;
  Cells c = {0};
  int *row_len = NULL, rows_cap = 0;
  uint32_t color = p->color;
  for (bool done = false; !done;) {
    TexNode *cell = tex_p_parse_list(p, term | T_ENV);
    p->color = color;
    cell_add(p, &c, cell);
    bool row_end = true;
    if (peek(p) == '&')
      p->i++, row_end = false;
    else if (tex_p_at_cmd(p, "\\"))
      p->i += 2;
    else
      done = true;
    if (!row_end) continue;
    if (c.rows == rows_cap) {
      rows_cap = rows_cap ? rows_cap * 2 : 8;
      int *nr = realloc(row_len, sizeof *nr * (size_t)rows_cap);
      if (!nr) break;
      row_len = nr;
    }
    row_len[c.rows++] = c.in_row;
    c.in_row = 0;
  }
  if (c.rows > 1 && row_len && row_len[c.rows - 1] == 1 && !c.cells[c.n - 1]) c.rows--, c.n--;
  if (row_len) cells_square(p, m, &c, row_len);
  free(row_len);
  tex_p_leave(p);
  if (tex_p_at_cmd(p, "end")) {
    p->i += 4;
    const char *end;
    size_t k = tex_p_word_arg(p, &end);
    if (k != n || (n && memcmp(end, name, n)))
      ERR(p, pos, "\\begin{%.*s} ended by \\end{%.*s}", (int)(n > 30 ? 30 : n), name, (int)(k > 30 ? 30 : k),
          k ? end : "");
  } else {
    ERR(p, pos, "missing \\end{%.*s}", (int)(n > 30 ? 30 : n), n ? name : "");
  }
  m->cls = m->ldelim || m->rdelim ? C_INNER : C_ORD;
  return m;
}

// ---- commands

static TexNode *parse_left(P *p, size_t pos, int term) {
  TexNode *lr = tex_p_node(p, N_LEFTRIGHT, pos);
  if (!lr) return NULL;
  uint32_t d = tex_p_parse_delim(p, "left", pos);
  lr->ldelim = d == ~0u ? 0 : d, lr->cls = C_INNER;
  if (!tex_p_enter(p, pos)) return lr;
  uint32_t color = p->color;
  TexNode *outer = p->cur_left;
  p->cur_left = lr;
  lr->a = tex_p_parse_list(p, term | T_RIGHT);
  p->cur_left = outer, p->color = color;
  tex_p_leave(p);
  if (tex_p_at_cmd(p, "right")) {
    size_t rpos = p->i;
    p->i += 6;
    d = tex_p_parse_delim(p, "right", rpos);
    lr->rdelim = d == ~0u ? 0 : d;
  } else {
    ERR(p, pos, "missing \\right for this \\left");
  }
  return lr;
}

static void parse_frac(P *p, List *l, const TexCmd *c, size_t pos) {
  TexNode *f = tex_p_node(p, N_FRAC, pos);
  if (!f) return;
  f->style = (uint8_t)c->arg;
  f->rule = c->kind == K_FRAC;
  if (c->kind == K_BINOM) f->ldelim = '(', f->rdelim = ')';
  f->a = tex_p_parse_arg(p);
  f->b = tex_p_parse_arg(p);
  if (!f->a || !f->b) ERR(p, pos, "\\%s needs two arguments", c->name);
  if (!f->a) f->a = tex_p_group_of(p, NULL, pos);
  if (!f->b) f->b = tex_p_group_of(p, NULL, pos);
  tex_p_append(l, f);
}

static void parse_sqrt(P *p, List *l, size_t pos) {
  TexNode *r = tex_p_node(p, N_SQRT, pos);
  if (!r) return;
  tex_p_skip_ws(p);
  if (peek(p) == '[' && tex_p_enter(p, pos)) {
    p->i++;
    r->b = tex_p_parse_list(p, T_BRACKET);
    if (peek(p) == ']')
      p->i++;
    else
      ERR(p, pos, "missing ] after \\sqrt[");
    tex_p_leave(p);
  }
  r->a = tex_p_need_arg(p, pos, "sqrt", "an argument");
  tex_p_append(l, r);
}

// hspace{1em}, \kern3mu, \mkern-2mu: the length in mu.
static void parse_hspace(P *p, List *l, size_t pos, const char *cmd) {
  tex_p_skip_ws(p);
  if (peek(p) == '*') p->i++;
  tex_p_skip_ws(p);
  bool brace = peek(p) == '{';
  if (brace) p->i++;
  tex_p_skip_ws(p);
  char num[32];
  size_t k = 0;
  while (p->i < p->n && k < sizeof num - 1 && strchr("+-.0123456789", p->s[p->i])) num[k++] = p->s[p->i++];
  num[k] = 0;
  tex_p_skip_ws(p);
  static const struct {
    const char *unit;
    float mu;
  } U[] = {{"em", 18},    {"ex", 7.74f}, {"mu", 1},     {"pt", 1.8f},  {"px", 1.8f},
           {"bp", 1.81f}, {"mm", 5.12f}, {"cm", 51.2f}, {"in", 130.1f}};
  float mu = 0;
  bool ok = false;
  for (size_t i = 0; i < sizeof U / sizeof U[0] && k; i++)
    if (p->i + 2 <= p->n && !memcmp(p->s + p->i, U[i].unit, 2)) {
      mu = strtof(num, NULL) * U[i].mu, ok = true;
      p->i += 2;
      break;
    }
  if (brace) {
    while (p->i < p->n && p->s[p->i] != '}') p->i++;
    if (p->i < p->n) p->i++;
  }
  if (!ok) {
    ERR(p, pos, "\\%s needs a length such as 1em, 3mu or 2pt", cmd);
    return;
  }
  TexNode *s = tex_p_node(p, N_SPACE, pos);
  if (s) s->amount = mu > 1000 ? 1000 : mu < -1000 ? -1000 : mu;
  tex_p_append(l, s);
}

static void parse_textcolor(P *p, List *l, size_t pos) {
  uint32_t c = p->color, old = p->color;
  tex_p_color_arg(p, pos, &c);
  p->color = c;
  TexNode *a = tex_p_need_arg(p, pos, "textcolor", "a colour and an argument");
  p->color = old;
  tex_p_skip_ws(p);
  if (a && a->next && (peek(p) == '^' || peek(p) == '_')) a = tex_p_group_of(p, a, pos);
  tex_p_append(l, a);
}

static void parse_limits(P *p, List *l, const TexCmd *c, size_t pos) {
  TexNode *t = l->tail;
  if (t && t->cls == C_OP)
    t->limits = (uint8_t)c->arg;
  else
    ERR(p, pos, "\\%s must follow an operator such as \\sum", c->name);
}

static void parse_not(P *p, List *l, size_t pos) {
  List t = {0};
  tex_p_skip_ws(p);
  if (!at_end(p)) tex_p_parse_atom(p, &t, 0, true);
  uint32_t neg = t.head && t.head->kind == N_CHAR ? tex_not_cp(t.head->cp) : 0;
  if (neg)
    t.head->cp = neg;
  else
    ERR(p, pos, "\\not works before = < > \\in \\equiv \\subset ... only");
  tex_p_append(l, t.head);
}

static void parse_operatorname(P *p, List *l, size_t pos) {
  bool star = peek(p) == '*';
  if (star) p->i++;
  uint8_t alpha = p->alpha;
  p->alpha = AL_RM;
  TexNode *a = tex_p_need_arg(p, pos, "operatorname", "a name in braces");
  p->alpha = alpha;
  TexNode *op = a && !a->next && a->kind == N_RUN ? a : tex_p_group_of(p, a, pos);
  if (!op) return;
  op->cls = C_OP, op->amount = star;
  tex_p_append(l, op);
}

static void parse_alpha(P *p, List *l, const TexCmd *c, size_t pos) {
  uint8_t alpha = p->alpha;
  p->alpha = (uint8_t)c->cp;
  TexNode *a = tex_p_need_arg(p, pos, c->name, "an argument");
  p->alpha = alpha;
  if (a && !a->next && a->cls == C_ORD)
    tex_p_append(l, a);
  else
    tex_p_append(l, tex_p_group_of(p, a, pos));
}

static void parse_wrapped(P *p, List *l, const TexCmd *c, size_t pos) {
  TexNode *a = tex_p_need_arg(p, pos, c->name, "an argument");
  TexNode *w = NULL;
  switch (c->kind) {
  case K_ACCENT:
    if ((w = tex_p_node(p, N_ACCENT, pos))) w->cp = c->cp, w->wide = c->arg > 0;
    break;
  case K_OVERLINE: w = tex_p_node(p, N_OVERLINE, pos); break;
  case K_UNDERLINE: w = tex_p_node(p, N_UNDERLINE, pos); break;
  case K_PHANTOM:
    if ((w = tex_p_node(p, N_PHANTOM, pos))) w->phantom = (uint8_t)c->arg;
    break;
  default:
    if ((w = tex_p_node(p, N_GROUP, pos))) w->cls = c->cls;
    break;
  }
  if (w) w->a = a;
  tex_p_append(l, w);
}

static void parse_stack(P *p, List *l, const TexCmd *c, size_t pos) {
  TexNode *s = tex_p_node(p, N_STACK, pos);
  if (!s) return;
  TexNode *over = tex_p_parse_arg(p), *base = tex_p_parse_arg(p);
  if (!over || !base) ERR(p, pos, "\\%s needs two arguments", c->name);
  s->a = base ? base : tex_p_group_of(p, NULL, pos);
  if (c->arg == 2)
    s->c = over;
  else
    s->b = over;
  s->cls = c->arg == 3 ? C_REL : s->a && !s->a->next ? s->a->cls : C_ORD;
  tex_p_append(l, s);
}

static void parse_big(P *p, List *l, const TexCmd *c, size_t pos) {
  uint32_t d = tex_p_parse_delim(p, c->name, pos);
  TexNode *n = tex_p_node(p, N_DELIM, pos);
  if (!n) return;
  n->cp = d == ~0u ? 0 : d, n->cls = c->cls, n->amount = c->arg;
  if (c->kind == K_MIDDLE) {
    n->amount = -1, n->cls = C_REL;
    if (p->cur_left)
      p->cur_left->has_middle = true;
    else
      ERR(p, pos, "\\middle outside \\left ... \\right");
  }
  tex_p_append(l, n);
}

void tex_p_parse_command(P *p, List *l, int term) {
  size_t pos = p->i++;
  size_t k = tex_p_name_len(p, p->i);
  const char *name = p->s + p->i;
  p->i += k;
  if (!k) {
    ERR(p, pos, "a lone \\ at the end");
    return;
  }
  if (is_letter(name[0])) tex_p_skip_ws(p);
  const TexCmd *c = tex_cmd_find(name, k);
  if (!c) {
    // a suggestion only where it will be read: past TEX_DIAG_MAX problems only the count is kept
    const char *near = p->diag && p->diag->count < TEX_DIAG_MAX ? tex_cmd_nearest(name, k) : NULL;
    if (near)
      ERR(p, pos, "unknown command \\%.*s (did you mean \\%s?)", (int)(k > 40 ? 40 : k), name, near);
    else
      ERR(p, pos, "unknown command \\%.*s (it is drawn in red)", (int)(k > 40 ? 40 : k), name);
    tex_p_append(l, tex_p_error_node(p, pos, name - 1, k + 1));
    return;
  }
  if (!tex_p_enter(p, pos)) return;
  TexNode *n = NULL;
  switch ((TexCmdKind)c->kind) {
  case K_SYM:
    if ((n = tex_p_node(p, N_CHAR, pos))) n->cp = c->cp, n->cls = c->cls, n->alpha = p->alpha;
    if (n && c->cls == C_OP) n->amount = c->arg;
    tex_p_append(l, n);
    break;
  case K_OPNAME:
    if ((n = tex_p_node(p, N_RUN, pos)))
      n->text = c->text, n->face = FONT_SERIF, n->cls = C_OP, n->amount = c->arg;
    tex_p_append(l, n);
    break;
  case K_ALPHA: parse_alpha(p, l, c, pos); break;
  case K_TEXT: tex_p_append(l, parse_text(p, (FontFace)c->cp, pos, c->name)); break;
  case K_FRAC:
  case K_BINOM: parse_frac(p, l, c, pos); break;
  case K_SQRT: parse_sqrt(p, l, pos); break;
  case K_LEFT: tex_p_append(l, parse_left(p, pos, term)); break;
  case K_RIGHT:
    ERR(p, pos, "\\right without \\left");
    tex_p_parse_delim(p, "right", pos);
    break;
  case K_MIDDLE:
  case K_BIG: parse_big(p, l, c, pos); break;
  case K_ACCENT:
  case K_OVERLINE:
  case K_UNDERLINE:
  case K_PHANTOM:
  case K_CLASS: parse_wrapped(p, l, c, pos); break;
  case K_SPACE:
    if ((n = tex_p_node(p, N_SPACE, pos))) n->amount = c->arg;
    tex_p_append(l, n);
    break;
  case K_HSPACE: parse_hspace(p, l, pos, c->name); break;
  case K_COLOR: tex_p_color_arg(p, pos, &p->color); break;
  case K_TEXTCOLOR: parse_textcolor(p, l, pos); break;
  case K_BEGIN: tex_p_append(l, parse_env(p, pos, term)); break;
  case K_END: {
    const char *w;
    tex_p_word_arg(p, &w);
    ERR(p, pos, "\\end without \\begin");
    break;
  }
  case K_STYLE:
    if ((n = tex_p_node(p, N_STYLE, pos))) n->style = (uint8_t)c->arg, n->cls = C_NONE;
    tex_p_append(l, n);
    break;
  case K_LIMITS: parse_limits(p, l, c, pos); break;
  case K_OPERATORNAME: parse_operatorname(p, l, pos); break;
  case K_STACK: parse_stack(p, l, c, pos); break;
  case K_NOT: parse_not(p, l, pos); break;
  case K_IGNORE: break;
  }
  tex_p_leave(p);
}
