// claims.c -- a lesson step's claims measured for its picture (see claims.h).
#include "claims.h"

#include <stdio.h>

int claims_measure(const LessonStep *s, const Trace *t, const Trace *compare, PageClaim *out, int max) {
  if (!s || !t) return 0;
  int n = 0;
  for (int i = 0; i < s->n_facts && n < max; i++) {
    const Fact *f = &s->facts[i];
    const Trace *on = f->compare ? compare : t;
    PageClaim *c = &out[n++];
    if (!on) {
      snprintf(c->text, sizeof c->text, "%s (no compare sentence)", f->text);
      c->state = -1;
      continue;
    }
    FactResult r;
    bool ok = facts_eval(f, on, s->layer, &r);
    c->state = ok ? r.holds : -1;
    if (ok)
      snprintf(c->text, sizeof c->text, "%s", r.statement);
    else
      snprintf(c->text, sizeof c->text, "%.100s: %.240s", f->text, r.statement);
  }
  return n;
}
