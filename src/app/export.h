// export.h -- pictures of every step and data of every stage, written into a folder, headless.
//
// export_run draws one picture per step of the session's trace (per head for per-head stages,
// or per lesson step when the session has a lesson) as PNG and/or SVG, named NN-stage[-hH],
// and writes every stage's exact values as .npy and/or CSV with the token labels. Files go
// through an OutDir (outdir.h): all of them appear, replacing earlier files of the same names,
// or none. Used by `stepformer export` and by the window's Ctrl+E.
//
//     ExportSpec spec = export_spec_default();
//     if (!export_run(&session, "slides", &spec, &files, &pictures, &err)) ...
#ifndef SF_EXPORT_H
#define SF_EXPORT_H

#include <stdbool.h>

#include "session.h" // defines: Session
#include "view.h"    // defines: ViewOptions

enum { EXPORT_PNG = 1, EXPORT_SVG = 2, EXPORT_NPY = 4, EXPORT_CSV = 8 };

typedef struct {
  int formats;       // EXPORT_* bits
  int width, height; // picture size in pixels
  int head_opt;      // per-head stages: -2 every head, -1 the all-heads grid, else that head
  bool show_text;    // the lesson's narration in the pictures
  bool invariants;   // the invariants panel over each stage (--invariants, invariants.h)
  bool claims;       // the steps' claims, measured (--claims: the teacher's copy; not on students' slides)
  bool inside;       // also the views inside the pass (--inside): inside-lens, inside-saliency, and per
                     // layer inside-lN-rollout, -headview, -neurons (view_inside.c)
  ViewOptions view;  // theme, scale, colour map, numbers; view.model_view: one picture, model-view.png/svg,
                     // of every layer × head of the softmax stage (--model-view)
  int threads;       // drawing threads (1..8)
} ExportSpec;

bool export_run(Session *s, const char *out, const ExportSpec *spec, int *files, int *pictures, Err *err);

#endif
