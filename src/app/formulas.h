// formulas.h -- the formulas of a lesson, checked with the layout engine's parser.
//
// A lesson's $…$ and $$…$$ formulas (in the narration and in the step titles) go through
// tex_check; every problem becomes a LessonDiag error at the formula's FILE:LINE. `check`
// reports them with the lesson's other problems; the window and `export` refuse a lesson that
// has any, as they refuse its other errors, instead of drawing the formula in red.
//
//     int n = formulas_check(&lesson, &diag); // diag gains an error per problem
#ifndef SF_FORMULAS_H
#define SF_FORMULAS_H

#include "lesson.h" // defines: Lesson, LessonDiag

// Checks every formula of the lesson; returns how many formulas it has.
int formulas_check(const Lesson *l, LessonDiag *d);

#endif
