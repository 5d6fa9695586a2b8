// page.h -- a whole picture of one step: what the window shows and what export saves.
//
// page_render fills a Scene of spec->width × spec->height: a header with the stage indicator
// ("Stage 8/16 · softmax", layer and head), the step's title and its formula in the course
// notation (TeX); the narration of a lesson step in a column on the left (unless show_text is
// off); the stage view (view.h) in the rest; and a footer that says what the picture shows:
// the sentence, the model and its seed, the colour scale. All sizes follow the height
// (1080 px = 1), the text's times the view's text_scale and the stage picture's times its zoom,
// so a 4K export and a small window look alike.
//
//     PageSpec p = {.trace = t, .step = 8, .view = &opts, .width = 1920, .height = 1080, ...};
//     ViewLayout lay;
//     page_render(&scene, &p, &lay);
#ifndef SF_PAGE_H
#define SF_PAGE_H

#include <stdbool.h>

#include "doc.h"   // defines: Doc
#include "marks.h" // defines: Marks, Spotlight
#include "scene.h" // defines: Scene
#include "view.h"  // defines: ViewOptions, ViewLayout

// A claim of the lesson step (facts.h), measured: drawn under the narration, ✓ in green when it
// holds, ✗ in red when it does not, ? when it could not be measured.
typedef struct {
  char text[352]; // "A4[bank, by] > 0.95 (measured: 0.993)"
  int state;      // 1 holds, 0 fails, -1 not measured
} PageClaim;

typedef struct {
  const Trace *trace;
  int step;                      // index into trace->steps
  const ViewOptions *view;       // theme, head, scale, highlights ...
  const char *title;             // the lesson step's title, or NULL for the stage's own title
  const Doc *narration;          // the lesson step's narration, or NULL
  bool show_text;                // draw the narration column
  const char *sentence;          // as typed
  const char *lesson;            // lesson title for the footer, or NULL
  int lesson_step, lesson_steps; // "step 3 of 21" when lesson_steps > 0
  const char *note;              // a line of the app's (e.g. an error to show), or NULL
  // A broken lesson step (lesson.h: LessonStep.broken): its message "FILE:LINE: ...", shown in a
  // box where its picture would be (step is then -1), or NULL.
  const char *broken;
  // The lesson's own sentence when another one is shown (a sentence typed in the window), or
  // NULL: the narration was written for it, and the page says so above the narration.
  const char *written_for;
  const Trace *compare; // a second sentence shown beside the first (same model), or NULL
  const char *compare_sentence;
  int compare_row, compare_col; // the lesson's focus among the second sentence's tokens (-1 none)
  // The captions of the two sides of a compare view (NULL: the sentences in quotes): the window's
  // difference view of a what-if edit says "edited" and "the model's own".
  const char *caption_a, *caption_b;
  const PageClaim *claims; // the step's claims, measured (n_claims of them), or NULL
  int n_claims;
  int hide; // predict, then reveal: 0 shows all; 1 covers the step's result, 2 its focus row
            // (view->focus_row; compare_row in the compare sentence's result) with a "?"
  const Spotlight *spotlight; // dims all but a row, column or cell of the result (marks.h), or NULL
  const Marks *marks;         // the pen's strokes over the view (marks.h), or NULL
  // The invariants panel (the window's I, export --invariants): the facts the course states about
  // the stage on screen, measured on this pass (invariants.h); drawn over the view's top right.
  const PageClaim *invariants;
  int n_invariants;
  float header_reserve; // pixels at the right of the header kept free (the window's controls)
  float footer_reserve; // pixels above the footer kept free (the window's generation strip)
  float view_reserve;   // pixels at the foot of the view's area kept free of the picture (the window's
                        // worked equation of a pinned cell: read at full size under the picture)
  float footer_right;   // pixels at the right end of the footer line kept free (the web page's file button)
  // The narration is set at 30 px per 1080 lines (20 px at 720) times the text scale, never
  // smaller: a narration longer than its column goes on to more pages, this one shown (0-based;
  // page_render says how many in ViewLayout.text_pages, and the column says "page 1 of 2").
  int text_page;
  float width, height;
} PageSpec;

void page_render(Scene *s, const PageSpec *p, ViewLayout *out);
// "Stage 8/16 · softmax · layer 1 of 2 · head 1 of 2" for step `step`, into buf: stages counted
// in DESIGN.md's order among those the model has (no mask stage in an encoder).
const char *page_stage_label(const Trace *t, int step, int head, char *buf, int cap);
// The header of the "weights as stored" view, which is no stage of the pass (stored.h): "Weights as
// stored · blk.0.ffn_down.weight · Q4_K · block 4 of 32", or "Weights as stored" when v is NULL.
const char *page_stored_label(const StoredView *v, char *buf, int cap);
// The header of the picture of step `step` under o: page_stored_label's for the stored view (o's
// block), else page_stage_label's.
const char *page_header_label(const Trace *t, int step, const ViewOptions *o, char *buf, int cap);
// The footer text: sentence, model, seed (the version of Stepformer is at the footer's right).
const char *page_footer(const Trace *t, const char *sentence, char *buf, int cap);
// True when the step's stage has one matrix per head (S, A, AV ...).
bool page_step_has_heads(const Trace *t, int step);
// The scale of text and margins for a page of this height with this view's text_scale.
float page_unit(const PageSpec *p);

#endif
