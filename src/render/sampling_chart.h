// sampling_chart.h -- what temperature, top-k and top-p do to the prediction's bars (sampling.h).
//
// Under a caption naming the settings and the seed, the most probable next words of one row of
// logits, best first: for each, its probability softmax(z / T) as a thin grey bar, and under it,
// when the word survives top-k and top-p, its renormalized probability as a bold bar ("12.3 % →
// 25.1 %"); a cut word is greyed, struck through and labelled "cut by top-k" or "cut by top-p".
// The word the seeded draw picks (u = the generator's next uniform number) is marked "◀ drawn",
// and a last line says how many of the V words were kept and which one was drawn.
//
//     float fs = sampling_chart_draw(scene, theme, trace, row, &smp, rng, x, y, w, h, 40);
#ifndef SF_SAMPLING_CHART_H
#define SF_SAMPLING_CHART_H

#include <stdint.h>

#include "colormap.h" // defines: Theme
#include "sampling.h" // defines: Sampling
#include "scene.h"    // defines: Scene
#include "trace.h"    // defines: Trace

// Draws the chart of row `row` of t's logits in x, y, w, h (text at most max_fs pixels) with the
// draw the generator state `rng` makes next (it is not advanced: a copy is drawn from). Returns the
// text size used; 0 when t has no logits.
float sampling_chart_draw(Scene *s, const Theme *th, const Trace *t, int row, const Sampling *smp,
                          uint64_t rng, float x, float y, float w, float h, float max_fs);

#endif
