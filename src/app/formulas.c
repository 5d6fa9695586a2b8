// formulas.c -- see formulas.h.
#include "formulas.h"

#include <stdlib.h>
#include <string.h>

#include "tex.h" // defines: tex_check, TexDiag

// Parses one formula; every problem becomes FILE:LINE (the formula's line, plus the problem's
// line within a formula that spans lines) and a message.
static void check_formula(const char *file, const DocSpan *span, LessonDiag *d) {
  TexDiag td;
  if (tex_check(span->text, &td)) return;
  const char *more = strlen(span->text) > 60 ? "..." : "";
  for (int i = 0; i < td.count && i < TEX_DIAG_MAX; i++) {
    const TexProblem *p = &td.items[i];
    lesson_diag_add(d, file, span->line + (p->line > 1 ? p->line - 1 : 0), p->col, false,
                    "formula $%.60s%s$: %s at column %d", span->text, more, p->msg, p->col);
  }
  if (td.count > TEX_DIAG_MAX)
    lesson_diag_add(d, file, span->line, 0, false, "formula $%.60s%s$: %d more problems", span->text, more,
                    td.count - TEX_DIAG_MAX);
}

// The $...$ formulas of a step's title (its heading keeps them as typed); returns how many.
static int check_title(const Lesson *l, const LessonStep *s, LessonDiag *d) {
  const char *t = s->title ? s->title : "";
  int n = 0;
  for (const char *open = tex_next_dollar(t); open; open = tex_next_dollar(open)) {
    const char *close = tex_next_dollar(open + 1);
    if (!close) break;
    char *tex = malloc((size_t)(close - open));
    if (!tex) return n;
    memcpy(tex, open + 1, (size_t)(close - open - 1));
    tex[close - open - 1] = 0;
    DocSpan span = {SPAN_MATH, 0, tex, s->line};
    check_formula(l->path, &span, d);
    free(tex);
    n++;
    open = close + 1;
  }
  return n;
}

int formulas_check(const Lesson *l, LessonDiag *d) {
  int n = 0;
  for (int i = 0; i < l->n_steps; i++) {
    const Doc *doc = &l->steps[i].narration;
    n += check_title(l, &l->steps[i], d);
    for (int b = 0; b < doc->n; b++)
      for (int k = 0; k < doc->blocks[b].n_spans; k++)
        if (doc->blocks[b].spans[k].kind == SPAN_MATH) {
          check_formula(l->path, &doc->blocks[b].spans[k], d);
          n++;
        }
  }
  return n;
}
