// lesson_markdown.c -- the body of a lesson: md4c events turned into steps and their Docs.
//
// Level-1 and level-2 headings (outside lists and quotes) start steps; everything else becomes
// the blocks and spans of the current step's narration. md4c hands text over as pointers into
// the input, so every block and span gets the line its first byte sits on. Before md4c runs,
// the line breaks inside a display formula that spans lines ($$ on one line ... $$ on a later
// one) become spaces in a copy of the input, so that a line of the formula starting with + or =
// cannot open a list or a heading; the copy keeps every byte offset, and lines are counted in
// the original.
#include <md4c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lesson_internal.h"

#define MAX_DEPTH 32

typedef struct {
  char *s;
  size_t n, cap;
} Buf;

typedef struct {
  size_t title_pos; // length of the title before this chunk
  size_t off;       // its offset in the input, or SIZE_MAX when it is not a slice of it
  size_t n;
} Chunk;

typedef struct {
  LessonCtx *c;
  const char *buf; // the copy md4c reads (same length and offsets as c->text)
  int step;        // index of the current step, -1 before the first
  // the open text block
  bool in_text;
  BlockKind kind;
  int level, number;
  bool ordered;
  int blk;           // index of the DocBlock being filled, or -1 until its first span
  bool item_pending; // the next block of the list item is its bullet block
  int lists, lis, quotes;
  struct {
    bool ordered;
    int next;
  } list[MAX_DEPTH];
  int em, strong, link;
  int math; // 0, or 1 inside $...$, 2 inside $$...$$
  bool code_span;
  Buf acc; // text of the math or code span being read
  int acc_line;
  // a step heading being read
  bool in_head;
  Buf title;
  Chunk *chunks;
  int n_chunks, cap_chunks;
  size_t raw_b, raw_e;
  bool raw_any;
  size_t last_off;   // end of the last text seen, for blocks without text
  int headings;      // step headings seen
  size_t dollars[8]; // a heading's $ that open no formula (reported if in its title)
  int n_dollars;
  int head_line; // line of the narration heading being read (0: none yet)
  bool in_thead; // the rows being read are a table's header rows
} Md;

static bool buf_add(Md *m, Buf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t nc = b->cap ? b->cap * 2 : 64;
    while (nc < b->n + n + 1) nc *= 2;
    char *p = realloc(b->s, nc);
    if (!p) return m->c->oom = true, false;
    b->s = p, b->cap = nc;
  }
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = 0;
  return true;
}

// md4c hands some text (soft breaks, replacement characters) from its own static strings.
static bool in_input(const Md *m, const char *s) {
  uintptr_t p = (uintptr_t)s, b = (uintptr_t)m->buf;
  return s && p >= b && p <= b + m->c->len;
}

static size_t offset_of(const Md *m, const char *s) { return (size_t)(s - m->buf); }

// The line of the next line at or after `from` whose first non-blank byte is one of `first`
// (a block that has no text, such as a rule or an empty heading).
static int line_of_next(const Md *m, size_t from, const char *first) {
  const LessonCtx *c = m->c;
  int start = lesson_line_of(c, from);
  for (int line = start; line <= c->n_lines; line++) {
    size_t p = line == start ? from : c->line_starts[line - 1];
    while (p < c->len && (c->text[p] == ' ' || c->text[p] == '\t' || c->text[p] == '>')) p++;
    if (p < c->len && c->text[p] && strchr(first, c->text[p])) return line;
  }
  return start;
}

static LessonStep *new_step(Md *m, int line) {
  Lesson *l = m->c->l;
  LessonStep *s = realloc(l->steps, sizeof *s * (size_t)(l->n_steps + 1));
  if (!s) return m->c->oom = true, NULL;
  l->steps = s;
  s = &l->steps[l->n_steps];
  memset(s, 0, sizeof *s);
  s->line = line;
  s->row = s->col = -1;
  m->step = l->n_steps++;
  return s;
}

// The Doc the narration goes to; text before the first heading opens an intro step.
static Doc *cur_doc(Md *m, int line) {
  if (m->step < 0) {
    LessonStep *s = new_step(m, line);
    if (!s) return NULL;
    const char *t = m->c->l->title ? m->c->l->title : "Introduction";
    s->title = lesson_strndup(t, strlen(t));
    if (!s->title) m->c->oom = true;
  }
  return &m->c->l->steps[m->step].narration;
}

static DocBlock *open_block(Md *m, int line) {
  Doc *d = cur_doc(m, line);
  if (!d) return NULL;
  if (m->blk >= 0) return &d->blocks[m->blk];
  BlockKind kind = m->item_pending ? BLOCK_ITEM : m->kind;
  DocBlock *b = doc_add_block(d, kind, line);
  if (!b) return m->c->oom = true, NULL;
  if (kind == BLOCK_ITEM) {
    b->level = m->lists;
    b->ordered = m->ordered;
    b->number = m->number;
    m->item_pending = false;
  } else if (kind == BLOCK_HEADING) {
    b->level = m->level;
  }
  m->blk = d->n - 1;
  return b;
}

// Ends the open block: trims trailing blanks, drops it when it holds nothing.
static void close_block(Md *m) {
  if (m->blk < 0) return;
  Doc *d = &m->c->l->steps[m->step].narration;
  DocBlock *b = &d->blocks[m->blk];
  m->blk = -1;
  while (b->n_spans > 0) {
    DocSpan *s = &b->spans[b->n_spans - 1];
    if (s->kind != SPAN_TEXT) break;
    size_t n = strlen(s->text);
    const char *blank = b->kind == BLOCK_CODE ? "\n\r" : " \t\n\r";
    while (n > 0 && strchr(blank, s->text[n - 1])) s->text[--n] = 0;
    if (n) break;
    free(s->text);
    b->n_spans--;
  }
  if (b->n_spans == 0) {
    free(b->spans);
    d->n--;
  }
}

static unsigned style(const Md *m) {
  return (m->em ? DOC_EM : 0) | (m->strong ? DOC_STRONG : 0) | (m->link ? DOC_LINK : 0);
}

static int line_at(Md *m, const char *s, MD_SIZE n) {
  if (in_input(m, s)) {
    size_t off = offset_of(m, s);
    if (off + n > m->last_off) m->last_off = off + n;
    return lesson_line_of(m->c, off);
  }
  return lesson_line_of(m->c, m->last_off);
}

static void title_add(Md *m, const char *s, size_t n, const char *src) {
  if (m->n_chunks == m->cap_chunks) {
    int nc = m->cap_chunks ? m->cap_chunks * 2 : 16;
    Chunk *c = realloc(m->chunks, sizeof *c * (size_t)nc);
    if (!c) {
      m->c->oom = true;
      return;
    }
    m->chunks = c, m->cap_chunks = nc;
  }
  bool slice = src && in_input(m, src);
  m->chunks[m->n_chunks++] = (Chunk){m->title.n, slice ? offset_of(m, src) : SIZE_MAX, n};
  if (slice) {
    size_t off = offset_of(m, src);
    if (!m->raw_any || off < m->raw_b) m->raw_b = off;
    if (!m->raw_any || off + n > m->raw_e) m->raw_e = off + n;
    m->raw_any = true;
  }
  buf_add(m, &m->title, s, n);
}

// True when the byte at off is escaped by an odd number of backslashes before it.
static bool escaped(const LessonCtx *c, size_t off) {
  size_t k = 0;
  while (k < off && c->text[off - 1 - k] == '\\') k++;
  return k % 2;
}

// md4c hands a $ over as text when it found no formula to close: the teacher forgot a $ or
// meant a dollar sign. Reports each (a heading's only when they are in its title, later).
static void stray_dollars(Md *m, const char *src, size_t n) {
  LessonCtx *c = m->c;
  if (!src || !in_input(m, src) || m->math || m->code_span || (m->in_text && m->kind == BLOCK_CODE)) return;
  size_t off = offset_of(m, src), end = off + n < c->len ? off + n : c->len;
  for (size_t i = off; i < end; i++) {
    const char *d = memchr(c->text + i, '$', end - i);
    if (!d) break;
    i = (size_t)(d - c->text);
    if (escaped(c, i)) continue;
    bool two = i + 1 < off + n && c->text[i + 1] == '$';
    if (m->in_head) {
      if (m->n_dollars < 8) m->dollars[m->n_dollars++] = i;
    } else if (two) {
      lesson_error_at(c, i,
                      "this $$ opens a displayed formula that is never closed: expected a closing $$ "
                      "before the next blank line (write \\$ for a dollar sign)");
    } else {
      lesson_error_at(c, i,
                      "this $ opens a formula that is never closed: expected a closing $ in the same "
                      "paragraph (write \\$ for a dollar sign)");
    }
    i += two;
  }
}

// Text of the current kind: src is where it came from (for its line), s/n what it says.
static void text(Md *m, SpanKind kind, const char *s, size_t n, const char *src) {
  int line = line_at(m, src, (MD_SIZE)n);
  if (kind == SPAN_TEXT) stray_dollars(m, src, n);
  if (m->in_head) {
    if (kind == SPAN_BREAK) {
      title_add(m, " ", 1, NULL);
      return;
    }
    // the title keeps its formulas between $...$; a dollar sign of the text (written \$, which
    // md4c hands over as a bare $) goes in as \$ again, so the title is read the same way later
    while (!m->math && n > 0) {
      const char *d = memchr(s, '$', n);
      if (!d) break;
      size_t k = (size_t)(d - s);
      if (k) title_add(m, s, k, src);
      title_add(m, "\\", 1, NULL);
      title_add(m, d, 1, src ? src + k : NULL);
      s += k + 1, n -= k + 1;
      if (src) src += k + 1;
    }
    if (n) title_add(m, s, n, src);
    return;
  }
  if (m->math || m->code_span) {
    if (!m->acc.n && !m->acc_line) m->acc_line = line;
    if (m->math && src && in_input(m, src) && offset_of(m, src) + n <= m->c->len) {
      // a formula keeps its own line breaks (joined for md4c only): TeX's % comments end at
      // them, and problems are reported on their own line
      const char *orig = m->c->text + offset_of(m, src);
      for (size_t i = 0; i < n; i++) {
        char ch = orig[i] == '\n' ? '\n' : orig[i] == '\r' ? ' ' : s[i];
        buf_add(m, &m->acc, &ch, 1);
      }
      return;
    }
    buf_add(m, &m->acc, s, n);
    return;
  }
  if (!m->in_text) return;
  if (m->kind == BLOCK_HEADING && !m->head_line && src) m->head_line = line;
  DocBlock *b = open_block(m, line);
  if (!b) return;
  if (kind == SPAN_TEXT && m->kind != BLOCK_CODE && b->n_spans == 0) {
    while (n > 0 && (*s == ' ' || *s == '\t')) s++, n--; // a block starts with its first word
    if (!n) return;
  }
  if (!doc_add_spann(&m->c->l->steps[m->step].narration, b, kind, style(m), s, (int)n, line))
    m->c->oom = true;
}

// Writes the UTF-8 encoding of code point u (U+FFFD for what is not a character) into o.
static size_t utf8(char *o, unsigned long u) {
  static const unsigned char lead[5] = {0, 0, 0xC0, 0xE0, 0xF0};
  if (u == 0 || u > 0x10FFFF || (u >= 0xD800 && u <= 0xDFFF)) u = 0xFFFD;
  size_t n = u < 0x80 ? 1 : u < 0x800 ? 2 : u < 0x10000 ? 3 : 4;
  for (size_t i = n - 1; i > 0; i--, u >>= 6) o[i] = (char)(0x80 | (u & 63));
  o[0] = (char)(lead[n] | u);
  return n;
}

// An entity (&amp; &#955; &#x3bb;) as UTF-8 into o (at least 8 bytes); 0 when not known.
static size_t entity(const char *s, size_t n, char *o) {
  static const struct {
    const char *name, *utf8;
  } named[] = {{"&amp;", "&"},  {"&lt;", "<"},     {"&gt;", ">"},    {"&quot;", "\""},
               {"&apos;", "'"}, {"&nbsp;", " "},   {"&times;", "×"}, {"&rarr;", "→"},
               {"&larr;", "←"}, {"&hellip;", "…"}, {"&mdash;", "—"}, {"&ndash;", "–"}};
  for (size_t i = 0; i < sizeof named / sizeof *named; i++)
    if (strlen(named[i].name) == n && !memcmp(named[i].name, s, n))
      return memcpy(o, named[i].utf8, strlen(named[i].utf8)), strlen(named[i].utf8);
  if (n < 4 || n > 12 || s[1] != '#') return 0;
  bool hex = s[2] == 'x' || s[2] == 'X';
  unsigned long u = 0;
  for (size_t i = hex ? 3 : 2; i + 1 < n; i++) {
    char ch = s[i];
    int dgt = ch >= '0' && ch <= '9'          ? ch - '0'
              : hex && ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
              : hex && ch >= 'A' && ch <= 'F' ? ch - 'A' + 10
                                              : -1;
    if (dgt < 0) return 0;
    u = u * (hex ? 16 : 10) + (unsigned long)dgt;
    if (u > 0x10FFFF) u = 0xFFFD;
  }
  return utf8(o, u);
}

static int on_text(MD_TEXTTYPE type, const MD_CHAR *s, MD_SIZE n, void *user) {
  Md *m = user;
  char tmp[16];
  size_t k;
  switch (type) {
  case MD_TEXT_NULLCHAR: text(m, SPAN_TEXT, "\xEF\xBF\xBD", 3, NULL); break;
  case MD_TEXT_BR:
    if (m->math || m->code_span)
      text(m, SPAN_TEXT, " ", 1, NULL);
    else
      text(m, SPAN_BREAK, "", 0, NULL);
    break;
  case MD_TEXT_SOFTBR: text(m, SPAN_TEXT, " ", 1, NULL); break;
  case MD_TEXT_ENTITY:
    k = entity(s, n, tmp);
    if (k)
      text(m, SPAN_TEXT, tmp, k, s);
    else
      text(m, SPAN_TEXT, s, n, s);
    break;
  default: text(m, SPAN_TEXT, s, n, s);
  }
  return m->c->oom ? -1 : 0;
}

// Starts a text block of a kind (its DocBlock is made at its first span).
static void begin_text(Md *m, BlockKind kind, int level) {
  close_block(m);
  m->in_text = true;
  m->kind = kind;
  m->level = level;
}

// After a block inside a list item ends, later text of the item is a plain paragraph.
static void after_block(Md *m) {
  close_block(m);
  m->in_text = m->lis > 0;
  m->kind = m->quotes ? BLOCK_QUOTE : BLOCK_PARA;
}

static void begin_step_heading(Md *m) {
  close_block(m);
  m->in_text = false;
  m->in_head = true;
  m->title.n = 0;
  if (m->title.s) m->title.s[0] = 0;
  m->n_chunks = 0;
  m->raw_any = false;
  m->n_dollars = 0;
}

static void end_step_heading(Md *m) {
  m->in_head = false;
  LessonCtx *c = m->c;
  int line = m->raw_any ? lesson_line_of(c, m->raw_b) : line_of_next(m, m->last_off, "#=-");
  LessonStep *s = new_step(m, line);
  if (!s) return;
  size_t cut = m->raw_e;
  m->headings++;
  if (m->raw_any) { // from the start of the heading's text: a title may open with a formula
    size_t b = c->line_starts[lesson_line_of(c, m->raw_b) - 1];
    while (b < m->raw_b && strchr(" \t#>", c->text[b])) b++;
    lesson_options_parse(c, s, b, m->raw_e, &cut);
  }
  for (int i = 0; i < m->n_dollars; i++)
    if (m->dollars[i] < cut)
      lesson_error_at(c, m->dollars[i],
                      "this $ opens a formula that is never closed: expected a closing $ in the "
                      "title (write \\$ for a dollar sign)");
  size_t tn = m->title.n;
  for (int i = 0; i < m->n_chunks; i++) {
    const Chunk *k = &m->chunks[i];
    if (k->off == SIZE_MAX || k->off + k->n <= cut) continue;
    tn = k->title_pos + (k->off < cut ? cut - k->off : 0);
    break;
  }
  const char *t = m->title.s ? m->title.s : "";
  while (tn > 0 && (t[tn - 1] == ' ' || t[tn - 1] == '\t')) tn--;
  size_t tb = 0;
  while (tb < tn && (t[tb] == ' ' || t[tb] == '\t')) tb++;
  if (tb == tn && s->has_stage) { // "## {stage=qkv}": the stage's name is the title
    t = stage_info(s->stage)->title;
    tb = 0, tn = strlen(t);
  } else if (tb == tn) {
    lesson_error_line(c, line, "empty heading: expected a step title (and {options}) after #");
  }
  s->title = lesson_strndup(t + tb, tn - tb);
  if (!s->title) c->oom = true;
  m->in_text = false;
  m->blk = -1;
}

// The start of a table's row (SPAN_ROW; a header row counts in the block's level) or of a cell
// (SPAN_CELL, its alignment in the style bits).
static void table_mark(Md *m, MD_BLOCKTYPE type, void *detail) {
  if (!m->in_text || m->kind != BLOCK_TABLE) return;
  int line = line_at(m, NULL, 0);
  DocBlock *b = open_block(m, line);
  if (!b) return;
  unsigned align = 0;
  if (type == MD_BLOCK_TR) {
    if (m->in_thead) b->level++;
  } else {
    MD_ALIGN a = ((MD_BLOCK_TD_DETAIL *)detail)->align;
    align = a == MD_ALIGN_CENTER ? DOC_ALIGN_CENTER : a == MD_ALIGN_RIGHT ? DOC_ALIGN_RIGHT : 0;
  }
  if (!doc_add_spann(&m->c->l->steps[m->step].narration, b, type == MD_BLOCK_TR ? SPAN_ROW : SPAN_CELL, align,
                     "", 0, line))
    m->c->oom = true;
}

static int on_enter_block(MD_BLOCKTYPE type, void *detail, void *user) {
  Md *m = user;
  switch (type) {
  case MD_BLOCK_QUOTE: close_block(m), m->quotes++; break;
  case MD_BLOCK_UL:
  case MD_BLOCK_OL:
    close_block(m);
    m->in_text = false;
    if (m->lists < MAX_DEPTH) {
      m->list[m->lists].ordered = type == MD_BLOCK_OL;
      m->list[m->lists].next = type == MD_BLOCK_OL ? (int)((MD_BLOCK_OL_DETAIL *)detail)->start : 0;
    }
    m->lists++;
    break;
  case MD_BLOCK_LI: {
    begin_text(m, BLOCK_ITEM, 0);
    m->lis++;
    int k = m->lists - 1 < MAX_DEPTH ? m->lists - 1 : MAX_DEPTH - 1;
    m->ordered = k >= 0 && m->list[k].ordered;
    m->number = k >= 0 ? m->list[k].next++ : 0;
    m->item_pending = true;
    break;
  }
  case MD_BLOCK_H: {
    int level = (int)((MD_BLOCK_H_DETAIL *)detail)->level;
    if (level <= 2 && !m->lis && !m->quotes)
      begin_step_heading(m);
    else
      begin_text(m, BLOCK_HEADING, level), m->item_pending = false, m->head_line = 0;
    break;
  }
  case MD_BLOCK_P: begin_text(m, m->quotes ? BLOCK_QUOTE : BLOCK_PARA, 0); break;
  case MD_BLOCK_CODE: begin_text(m, BLOCK_CODE, 0), m->item_pending = false; break;
  case MD_BLOCK_HR: {
    close_block(m);
    int line = line_of_next(m, m->last_off, "-*_");
    Doc *d = cur_doc(m, line);
    if (d && !doc_add_block(d, BLOCK_RULE, line)) m->c->oom = true;
    break;
  }
  case MD_BLOCK_TABLE: begin_text(m, BLOCK_TABLE, 0), m->item_pending = false; break;
  case MD_BLOCK_THEAD: m->in_thead = true; break;
  case MD_BLOCK_TR:
  case MD_BLOCK_TH:
  case MD_BLOCK_TD: table_mark(m, type, detail); break;
  default: break;
  }
  return m->c->oom ? -1 : 0;
}

// A heading that is narration (level 3 and below, or inside a list or quote) but ends with
// {key=value} options: the teacher meant a step.
static void options_out_of_place(Md *m, int level) {
  LessonCtx *c = m->c;
  int line = m->head_line;
  if (line <= 0 || line > c->n_lines) return;
  size_t b = c->line_starts[line - 1], e = line < c->n_lines ? c->line_starts[line] - 1 : c->len;
  while (e > b && strchr(" \t\r#", c->text[e - 1])) e--;
  if (e == b || c->text[e - 1] != '}') return;
  size_t open = e - 1;
  while (open > b && (c->text[open] != '{' || escaped(c, open))) open--;
  if (c->text[open] != '{' || !memchr(c->text + open, '=', e - open)) return;
  if (level <= 2)
    lesson_error_at(c, open,
                    "a heading inside a list or a quote is narration, not a step: its {options} are "
                    "shown as text; start the line with # or ## to make it a step");
  else
    lesson_error_at(c, open,
                    "a level-%d heading is narration, not a step: its {options} are shown as text; "
                    "write # or ## to make it a step",
                    level);
}

static int on_leave_block(MD_BLOCKTYPE type, void *detail, void *user) {
  Md *m = user;
  switch (type) {
  case MD_BLOCK_QUOTE:
    close_block(m);
    m->quotes--;
    after_block(m);
    break;
  case MD_BLOCK_UL:
  case MD_BLOCK_OL:
    m->lists--;
    after_block(m);
    break;
  case MD_BLOCK_LI:
    m->lis--;
    m->item_pending = false;
    after_block(m);
    break;
  case MD_BLOCK_H:
    if (m->in_head) {
      end_step_heading(m);
    } else {
      options_out_of_place(m, (int)((MD_BLOCK_H_DETAIL *)detail)->level);
      after_block(m);
    }
    break;
  case MD_BLOCK_P:
  case MD_BLOCK_CODE:
  case MD_BLOCK_TABLE: after_block(m); break;
  case MD_BLOCK_THEAD: m->in_thead = false; break;
  default: break;
  }
  return m->c->oom ? -1 : 0;
}

static int on_enter_span(MD_SPANTYPE type, void *detail, void *user) {
  Md *m = user;
  (void)detail;
  switch (type) {
  case MD_SPAN_EM: m->em++; break;
  case MD_SPAN_STRONG: m->strong++; break;
  case MD_SPAN_A: m->link++; break;
  case MD_SPAN_CODE:
    m->code_span = true;
    m->acc.n = 0, m->acc_line = 0;
    break;
  case MD_SPAN_LATEXMATH:
  case MD_SPAN_LATEXMATH_DISPLAY:
    m->math = type == MD_SPAN_LATEXMATH ? 1 : 2;
    m->acc.n = 0, m->acc_line = 0;
    if (m->in_head)
      title_add(m, "$", 1, NULL);
    else if (m->math == 2)
      close_block(m); // the formula becomes a block of its own
    break;
  default: break;
  }
  return 0;
}

static int on_leave_span(MD_SPANTYPE type, void *detail, void *user) {
  Md *m = user;
  (void)detail;
  const char *acc = m->acc.s ? m->acc.s : "";
  switch (type) {
  case MD_SPAN_EM: m->em--; break;
  case MD_SPAN_STRONG: m->strong--; break;
  case MD_SPAN_A: m->link--; break;
  case MD_SPAN_CODE: {
    m->code_span = false;
    if (m->in_head || !m->in_text) break; // (a heading's code went straight into its title)
    int line = m->acc_line ? m->acc_line : line_at(m, NULL, 0);
    DocBlock *blk = open_block(m, line);
    if (!blk || !doc_add_spann(&m->c->l->steps[m->step].narration, blk, SPAN_CODE, style(m), acc,
                               (int)m->acc.n, line))
      m->c->oom = true;
    break;
  }
  case MD_SPAN_LATEXMATH:
  case MD_SPAN_LATEXMATH_DISPLAY: {
    int kind = m->math;
    m->math = 0;
    size_t b = 0, e = m->acc.n;
    int line = m->acc_line ? m->acc_line : line_at(m, NULL, 0), first = line;
    for (; b < e && strchr(" \t\n", acc[b]); b++) first += acc[b] == '\n'; // its first line
    while (e > b && strchr(" \t\n", acc[e - 1])) e--;
    if (m->in_head) {
      title_add(m, "$", 1, NULL); // (the formula went straight into the title)
      // the closing $ belongs to the title too: the options are looked for after it
      size_t q = m->raw_any ? m->raw_e : m->last_off;
      while (q < m->c->len && m->c->text[q] != '$' && m->c->text[q] != '\n') q++;
      if (q < m->c->len && m->c->text[q] == '$' && m->raw_any) m->raw_e = q + (size_t)kind;
    } else if (kind == 2 && m->in_text) {
      Doc *d = cur_doc(m, line);
      DocBlock *blk = d ? doc_add_block(d, BLOCK_MATH, line) : NULL;
      if (!blk || !doc_add_spann(d, blk, SPAN_MATH, 0, acc + b, (int)(e - b), first)) m->c->oom = true;
      m->item_pending = false;
      m->blk = -1;
      if (m->kind == BLOCK_ITEM) m->kind = BLOCK_PARA;
    } else if (m->in_text) {
      DocBlock *blk = open_block(m, line);
      if (!blk || !doc_add_spann(&m->c->l->steps[m->step].narration, blk, SPAN_MATH, style(m), acc + b,
                                 (int)(e - b), first))
        m->c->oom = true;
    }
    break;
  }
  default: break;
  }
  return m->c->oom ? -1 : 0;
}

// Counts the `$$` of a line outside code spans and escapes.
static int count_display_marks(const char *t, size_t b, size_t e) {
  if (!memchr(t + b, '$', e - b)) return 0; // most lines
  int n = 0;
  bool code = false;
  for (size_t p = b; p < e; p++) {
    if (t[p] == '\\' && !code)
      p++;
    else if (t[p] == '`')
      code = !code;
    else if (!code && t[p] == '$' && p + 1 < e && t[p + 1] == '$')
      n++, p++;
  }
  return n;
}

// In buf (a copy of the input), joins the lines of display formulas that span lines.
static void join_display_lines(LessonCtx *c, char *buf, size_t body) {
  bool fence = false;
  int first = lesson_line_of(c, body);
  for (int line = first; line <= c->n_lines; line++) {
    size_t b = c->line_starts[line - 1];
    size_t e = line < c->n_lines ? c->line_starts[line] - 1 : c->len;
    if (b < body) continue;
    size_t s = b;
    while (s < e && (buf[s] == ' ' || buf[s] == '\t')) s++;
    if (e - s >= 3 && (!memcmp(buf + s, "```", 3) || !memcmp(buf + s, "~~~", 3))) fence = !fence;
    if (fence || count_display_marks(buf, b, e) % 2 == 0) continue;
    bool quoted = s < e && buf[s] == '>';
    int close = 0; // the line that closes the formula, within 64 lines and before a blank line
    for (int k = line + 1; k <= c->n_lines && k <= line + 64 && !close; k++) {
      size_t kb = c->line_starts[k - 1];
      size_t ke = k < c->n_lines ? c->line_starts[k] - 1 : c->len;
      size_t ks = kb;
      while (ks < ke && (buf[ks] == ' ' || buf[ks] == '\t' || buf[ks] == '>' || buf[ks] == '\r')) ks++;
      if (ks == ke) break;
      if (count_display_marks(buf, kb, ke) % 2) close = k;
    }
    if (!close) continue;
    for (int k = line; k < close; k++) {
      size_t nl = c->line_starts[k] - 1;
      buf[nl] = ' ';
      if (nl > 0 && buf[nl - 1] == '\r') buf[nl - 1] = ' ';
      if (quoted) // the > of the next line would land inside the formula
        for (size_t q = c->line_starts[k]; q < c->len && (buf[q] == ' ' || buf[q] == '>'); q++) buf[q] = ' ';
    }
    line = close; // (a closing line that opens another formula is left as it is)
  }
}

void lesson_markdown_parse(LessonCtx *c, size_t body) {
  Md m = {.c = c, .step = -1, .blk = -1, .last_off = body};
  char *buf = malloc(c->len + 1);
  if (!buf) {
    c->oom = true;
    return;
  }
  memcpy(buf, c->text, c->len);
  buf[c->len] = 0;
  join_display_lines(c, buf, body);
  m.buf = buf;
  MD_PARSER p = {0};
  p.flags = MD_FLAG_LATEXMATHSPANS | MD_FLAG_NOHTML | MD_FLAG_TABLES;
  p.enter_block = on_enter_block;
  p.leave_block = on_leave_block;
  p.enter_span = on_enter_span;
  p.leave_span = on_leave_span;
  p.text = on_text;
  if (body < c->len) md_parse(buf + body, (MD_SIZE)(c->len - body), &p, &m);
  if (m.step >= 0 && m.blk >= 0) close_block(&m);
  if (c->l->n_steps == 0 && !c->oom && !c->front_unclosed)
    lesson_error_line(c, lesson_line_of(c, body),
                      "the lesson has no steps: expected a heading "
                      "such as ## Tokens {stage=tokens}");
  else if (c->l->n_steps > 0 && m.headings == 0 && !c->oom)
    lesson_error_line(c, lesson_line_of(c, body),
                      "the lesson has no steps, only text before its first heading: a step starts "
                      "with a level-1 or level-2 heading such as ## Tokens {stage=tokens} (### and "
                      "below are narration)");
  free(m.acc.s);
  free(m.title.s);
  free(m.chunks);
  free(buf);
}
