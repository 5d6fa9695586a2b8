// editlist.h -- the what-if edits as data (edits.h): the list of edits and the per-(layer, head)
// switches, and what the forward reads of them. Below the trace and the forward, which hold and
// apply a TraceEdits; edits.h, above both, parses edits against a trace and runs the edited
// forward.
//
//     TraceEdits e = {0};
//     edits_add(&e, &x, &err);                   // x: a TraceEdit (edits_parse_edit, edits.h)
//     HeadOff o = edits_head(&e, 0, 3);          // HEAD_ON unless switched off
//     edits_free(&e);
#ifndef SF_EDITLIST_H
#define SF_EDITLIST_H

#include <stdbool.h>

#include "err.h" // defines: Err

typedef enum { EDIT_WEIGHT, EDIT_SCORE } EditKind;

typedef struct {
  EditKind kind;
  char tensor[40]; // the trace's dump name: "E", "l0.Wq", "l0.norm1.gamma", "l0.S" ("l0.S_raw" causal)
  int layer;       // 0-based, -1 for E
  int head;        // 0-based for a score, else 0
  int i, j;        // row and column of the displayed matrix (trace_at)
  float value;
} TraceEdit;

typedef enum { HEAD_ON = 0, HEAD_ZERO, HEAD_UNIFORM } HeadOff;

typedef struct TraceEdits {
  TraceEdit *e; // the edits in the order made; a later edit of the same element wins
  int n, cap;
  unsigned char *off; // HeadOff of layer l, head h at [l·H + h]; NULL: every head on
  int n_layers, H;    // the shape of off
} TraceEdits;

void edits_free(TraceEdits *e); // releases the list; *e is then empty
// Appends one edit (no check against a trace: edits_parse_edit did that). False on memory.
bool edits_add(TraceEdits *e, const TraceEdit *x, Err *err);
bool edits_undo(TraceEdits *e);  // drops the last edit; false when none
void edits_clear(TraceEdits *e); // drops every edit and switches every head on
bool edits_copy(TraceEdits *dst, const TraceEdits *src, Err *err); // dst empty before
HeadOff edits_head(const TraceEdits *e, int l, int h);             // HEAD_ON outside the mask
// True when the list changes nothing: no edit and every head on.
bool edits_empty(const TraceEdits *e);
// Applied by model_forward (forward.c) to head h of layer l: the score edits of rows r0..r1-1 of
// S_h (row i at s + i·stride); nothing when e is NULL.
void edits_apply_scores(const TraceEdits *e, int l, int h, float *s, int stride, int r0, int r1);

#endif
