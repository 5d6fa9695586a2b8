// doc.h -- rich text as plain data: the narration of a lesson step, between parser and drawing.
//
// The lesson layer fills a Doc from Markdown (md4c); the render layer lays it out beside the
// stage view. A Doc is a list of blocks (paragraph, heading, list item, display math, code,
// quote, rule, table); the blocks that hold text are lists of spans (text with emphasis bits, inline
// math as TeX source, inline code, a hard line break). Every block and span remembers the line
// of the source it came from, so a bad formula is reported as file:line.
//
// A Doc owns its blocks, spans and strings; doc_free releases them. doc_add_* build one (the
// lesson parser uses them; so can the app for built-in text).
//
// Layer: its own small target, sf_doc (libc only), below lesson and render. Both of them use it
// and neither may depend on the other; it is not the transformer, so it is not in the core.
//
//     Doc d = {0};
//     DocBlock *p = doc_add_block(&d, BLOCK_PARA, 3);
//     doc_add_spann(&d, p, SPAN_TEXT, DOC_EM, "the keys are name tags ", -1, 3);
//     doc_add_spann(&d, p, SPAN_MATH, 0, "K = Z W^k", -1, 3);
//     doc_free(&d);
#ifndef SF_DOC_H
#define SF_DOC_H

#include <stdbool.h>

typedef enum {
  SPAN_TEXT,  // plain words (with style bits)
  SPAN_MATH,  // inline TeX source, without the $ delimiters
  SPAN_CODE,  // `code`
  SPAN_BREAK, // hard line break
  SPAN_ROW,   // (in a BLOCK_TABLE) starts a row; empty text
  SPAN_CELL,  // (in a BLOCK_TABLE) starts a cell of the row; empty text; DOC_ALIGN_* in style
} SpanKind;

enum { DOC_EM = 1, DOC_STRONG = 2, DOC_LINK = 4 };   // span style bits
enum { DOC_ALIGN_CENTER = 8, DOC_ALIGN_RIGHT = 16 }; // a SPAN_CELL's alignment (else left)

typedef struct {
  SpanKind kind;
  unsigned style;
  char *text;
  int line;
} DocSpan;

typedef enum {
  BLOCK_PARA,
  BLOCK_HEADING, // level 1..6 (step titles are not blocks: they are the step's title)
  BLOCK_ITEM,    // a list item: level = nesting depth from 1, ordered/number for "3."
  BLOCK_MATH,    // display math $$...$$: one SPAN_MATH span
  BLOCK_CODE,    // a code block: one SPAN_TEXT span with newlines
  BLOCK_QUOTE,   // a paragraph inside a block quote
  BLOCK_RULE,    // a horizontal rule
  BLOCK_TABLE,   // a table: SPAN_ROW, then per cell SPAN_CELL and its spans; level = header rows
} BlockKind;

typedef struct {
  BlockKind kind;
  int level;
  bool ordered;
  int number;
  DocSpan *spans;
  int n_spans, cap_spans;
  int line;
} DocBlock;

typedef struct {
  DocBlock *blocks;
  int n, cap;
} Doc;

DocBlock *doc_add_block(Doc *d, BlockKind kind, int line); // NULL when out of memory
// Appends a span with a copy of text (len bytes, or strlen when len < 0); merges into the
// previous span when kind and style match and both are SPAN_TEXT. False when out of memory.
bool doc_add_spann(Doc *d, DocBlock *b, SpanKind kind, unsigned style, const char *text, int len, int line);
void doc_free(Doc *d);

#endif
