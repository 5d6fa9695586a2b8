// explain_check.h -- the worked-equation checks test_explain.c (encoders) and
// test_decoder_view.c (encoder-decoders) run on every view: explain_check_layout explains a spread
// of each operand's cells and checks that the equation ends with the cell's own value, and that
// every equation's printed operands reproduce its printed result (numfmt_reproduces).
//
//     view_render(&s, t, st, &o, 0, 0, 1600, 900, &lay);
//     explained += explain_check_layout("post-norm", t, st, &lay);
#ifndef SF_TEST_EXPLAIN_CHECK_H
#define SF_TEST_EXPLAIN_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "explain.h" // defines: explain_cell, Explanation
#include "numfmt.h"  // defines: numfmt_reproduces
#include "tex.h"     // defines: tex_check, TexDiag

// The number after the last '=' of a TeX line ("... = 0.31", "= -\infty", "= (-1.20)").
static bool last_number(const char *line, double *v) {
  const char *eq = strrchr(line, '=');
  if (!eq) return false;
  eq++;
  while (*eq == ' ' || *eq == '(') eq++;
  if (!strncmp(eq, "-\\infty", 7)) return *v = -INFINITY, true;
  char *end;
  *v = strtod(eq, &end);
  if (end == eq) return false;
  int e;
  if (sscanf(end, " \\cdot 10^{%d}", &e) == 1) { // a small value: 1.2 \cdot 10^{-4}
    *v *= pow(10, e);
    end = strchr(end, '}') + 1;
  }
  while (*end == ' ' || *end == ')') end++;
  return *end == 0; // the number ends the line: a result, not the start of a sum
}

// Every operand of one view, a spread of cells (about 5 × 5 of each): each gets a heading and lines
// whose TeX parses; an activation's last line that ends with a number ends with the cell's value
// (to the printed two decimals; a masked cell with −∞ or 0); the heading names the cell's own row
// word, a source or a target token. Returns how many cells were explained.
static int explain_check_layout(const char *name, const Trace *t, int st, const ViewLayout *lay_) {
  const ViewLayout lay = *lay_;
  int explained = 0;
  {
    for (int k = 0; k < lay.n_ops; k++) {
      const ViewOperand *v = &lay.ops[k];
      for (int i = 0; i < v->op.rows; i += 1 + v->op.rows / 4)
        for (int j = 0; j < v->op.cols; j += 1 + v->op.cols / 4) {
          Explanation ex;
          explain_cell(t, &lay, k, i, j, &ex);
          CHECK(ex.heading[0] && ex.n_lines >= 1, "%s step %d op %d (%d,%d): no explanation", name, st, k, i,
                j);
          // the TeX of every line parses without problems
          TexDiag d;
          CHECK(tex_check(ex.heading, &d), "%s: heading TeX: %s", name, ex.heading);
          for (int n = 0; n < ex.n_lines; n++)
            CHECK(tex_check(ex.lines[n], &d), "%s: line TeX: %s", name, ex.lines[n]);
          // issue 31: the printed operands of every worked equation give its printed result
          CHECK(numfmt_reproduces(ex.heading), "%s step %d: heading not reproducible: %s", name, st,
                ex.heading);
          for (int n = 0; n < ex.n_lines; n++)
            CHECK(numfmt_reproduces(ex.lines[n]), "%s step %d (%d,%d): not reproducible from its digits: %s",
                  name, st, i, j, ex.lines[n]);
          const TraceTensor *x = operand_src(&v->op);
          if (!x || x->is_weight || x->kind == T_ONEHOT || x->kind == T_LAYER_IN) continue;
          double got;
          const char *last = ex.lines[ex.n_lines - 1];
          // the explanation may end on a note line: find the last line that ends with a number
          bool found = false;
          for (int n = ex.n_lines - 1; n >= 0 && !found; n--)
            if (last_number(ex.lines[n], &got) && strncmp(ex.lines[n], "\\text", 5))
              found = true, last = ex.lines[n];
          CHECK(found, "%s step %d %s (%d,%d): no final number in: %s", name, st, x->name, i, j, last);
          float val = operand_at(&v->op, i, j);
          if (found && isfinite(val))
            CHECK(fabs(got - val) <= 0.006 + 0.001 * fabs(val) ||
                      fabs(got - val) <= 0.501 * pow(10, floor(log10(fabs(val))) - 2), // 3 digits: 12.3
                  "%s step %d %s[%d,%d] = %g but the equation ends with %g: %s", name, st, x->name, i, j, val,
                  got, last);
          // one number, one way: a line that ends with the heading's value prints it as the heading does
          // (issue 31.2: "A_1[loves, jane] = 0.09467" over "= 1.000/10.56 = 0.0947")
          double head;
          if (found && last_number(ex.heading, &head) && !ex.edited &&
              fabs(head - got) < 1e-12 + 1e-4 * fabs(got))
            CHECK(!strcmp(strrchr(ex.heading, '='), strrchr(last, '=')),
                  "%s step %d %s (%d,%d): the heading and the equation print the value alike: %s / %s", name,
                  st, x->name, i, j, ex.heading, last);
          if (found && !isfinite(val))
            CHECK(isinf(got) || got == 0, "%s: masked cell ends with %g", name, got);
          // the heading names the cell's own tokens (a compare view: its own sentence's)
          char word[96], want[128];
          if (v->op.row_axis == AXIS_TOKEN || v->op.row_axis == AXIS_TGT_TOKEN) {
            trace_axis_label(v->op.trace, v->op.row_axis, i, word, sizeof word);
            snprintf(want, sizeof want, "[\\text{%s},", word);
            CHECK(strstr(ex.heading, want) != NULL, "%s step %d %s row %d: heading %s, expected %s", name, st,
                  x->name, i, ex.heading, want);
          }
          explained++;
        }
    }
  }
  return explained;
}

#endif
