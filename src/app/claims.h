// claims.h -- a lesson step's claims (expect=, facts.h) measured for its picture (page.h).
//
// The window and the exports draw what `stepformer check` measures: each claim of the step
// evaluated on the trace the picture shows (or on the compare= sentence's trace, for a
// "compare:" claim), as a line with its measured value and whether it holds.
//
//     PageClaim c[CLAIMS_MAX];
//     spec.claims = c;
//     spec.n_claims = claims_measure(step, spec.trace, spec.compare, c, CLAIMS_MAX);
#ifndef SF_CLAIMS_H
#define SF_CLAIMS_H

#include "lesson.h" // defines: LessonStep
#include "page.h"   // defines: PageClaim

#define CLAIMS_MAX 16 // claims drawn for one step; the rest are left out of the picture

// Fills out[0..max) and returns the count (0 for a NULL step or a step without claims).
int claims_measure(const LessonStep *s, const Trace *t, const Trace *compare, PageClaim *out, int max);

#endif
