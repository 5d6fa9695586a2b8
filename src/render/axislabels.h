// axislabels.h -- which word labels an axis of a matrix gets, and where: decided in this one place
// for every view (the equations, the heads' grids, the compare views, the training view).
//
// The rule (issue 31): every row and column of a matrix up to about 24 tokens is labelled --
// in full across its column, else turned, else smaller down to `least`, else on two tiers (every
// other row further left, every other turned column raised above its neighbours). Past that (or in cells
// too small even for `least`), the labels kept are chosen: the focus entry, then the entries the
// caller prefers (the words a step names), then the first entry of every distinct word, then
// more entries spread along the axis while they do not touch; a label then carries its position
// with its word ("3 walks", 1-based, counted in the whole sentence when the axis is a window of its
// tokens: `first`), and `total - shown` says how many entries have none.
// A vocabulary too long to name (candidates given) names only the candidates, moved apart along
// the axis where they would touch, each with a leader line to its own cell (`spread`).
//
//     AxisSpec sp = {.trace = t, .axis = AXIS_TOKEN, .n = L, .len = 300, .fs = 17, .least = 12};
//     AxisLabels al;
//     axis_labels_plan(&sp, &al);
//     for (int k = 0; k < al.n; k++) draw(al.text[k] at al.at[k] ...);
#ifndef SF_AXISLABELS_H
#define SF_AXISLABELS_H

#include <stdbool.h>

#include "trace.h" // defines: Trace, TraceAxis

#define AXL_MAX 512      // labels an axis can carry at most (a vocabulary names only a few of its words)
#define AXL_ALL_UP_TO 24 // "about 24 tokens": below `floor`, still every label of an axis this long

typedef struct {
  const Trace *trace;
  TraceAxis axis;
  int n;           // entries along the axis
  int first;       // entry i is the trace axis's entry first + i (a window of a long sentence's tokens)
  bool cols;       // column labels (above the cells: horizontal or turned), else row labels (left)
  float len;       // the axis's length in pixels (n cells)
  float fs;        // the picture's label size: labels are never larger
  float floor;     // labels shrink to this before a turned or a chosen few (columns: then turned)
  float least;     // the smallest label at all: below it, a few labels are chosen
  int focus;       // the entry kept first (a lesson's focus), or -1
  bool vocab;      // a vocabulary: when its words do not all fit at `floor`, only `cand` are named
  const int *cand; // those words, best first (NULL with `vocab`: none; the depth needs no list)
  int n_cand;
  const char *const *prefer; // words labelled before the others (the step names them), or NULL
  int n_prefer;
  bool one_tier; // no second tier of turned column labels (the layout tries both: view_layout.c)
} AxisSpec;

typedef struct {
  float lf;           // the labels' size in pixels
  bool turned;        // column labels read upwards
  bool numbered;      // some entries have no label: the labels carry their positions ("3 walks")
  bool spread;        // labels moved along the axis off their cells: draw a leader to each cell
  int total;          // entries that should be named (n, or the candidates)
  int shown;          // entries named (n below)
  float depth;        // the room the labels take across the axis (turned labels' height, rows' width)
  bool words_missing; // some distinct word of the axis has no label (past about 24 entries in too
                      // short an axis: a window of the tokens names them, view_stages.c)
  float shift;        // entries of odd index drawn this much further left (rows) or higher (turned
                      // columns: a leader down to their cells), on a second tier (0: one tier)
  int n;              // labels: entry idx[k] named text[k], centred at at[k] pixels from the axis's start
  int idx[AXL_MAX];
  float at[AXL_MAX];
  char text[AXL_MAX][48];
} AxisLabels;

// Decides the labels of one axis (see the rule above). `out` is large: keep it off small stacks.
void axis_labels_plan(const AxisSpec *sp, AxisLabels *out);
// The room the labels take across the axis without placing them (margins: called often).
float axis_labels_depth(const AxisSpec *sp);
// True when a token axis names only some of its entries (the picture says so under the shape).
bool axis_labels_partial(const AxisSpec *sp);

#endif
