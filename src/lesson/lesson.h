// lesson.h -- lesson files: a teacher's Markdown that pairs narration with the stages.
//
// A lesson (lessons/README.md documents the format) is a front matter between `---` lines
// (title, sentence, model, causal) and Markdown whose level-1 and level-2 headings start steps.
// A heading's options ride at its end in braces: `## Who does "cat" listen to? {stage=softmax
// layer=1 head=2 row=cat}`. The narration of a step (everything up to the next step heading) is
// parsed with md4c into a Doc (doc.h); text before the first heading becomes a first,
// narration-only step titled by the front matter's title.
//
// Errors are reported, never fatal: every problem goes into a LessonDiag (may be NULL) as
// file:line plus one line saying what was expected, and parsing carries on so that one run
// reports them all. A Lesson owns all its strings, steps and Docs; lesson_free releases it,
// after a failed parse too (the lesson then holds what could be read). Indices in a LessonStep
// are 0-based, although the file writes layers, heads and positions 1-based.
//
//     Lesson l; LessonDiag d = {0}; Err err = {0}; Tokens tk;
//     if (lesson_load(&l, "lessons/cat-bank.md", &d)) {
//       Model *m = lesson_open_model(&l, NULL, &err);           // NULL: err.msg says why
//       if (m && tokens_from_text(&tk, &m->vocab, l.sentence, 0, &err))
//         lesson_resolve(&l, m, &tk, &d);                       // fills steps[i].row / .col
//     }
//     lesson_diag_print(&d, stderr); lesson_free(&l);
#ifndef SF_LESSON_H
#define SF_LESSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "doc.h"       // defines: Doc
#include "err.h"       // defines: Err
#include "facts.h"     // defines: Fact
#include "inside.h"    // defines: InsideView
#include "model.h"     // defines: Model
#include "tokenizer.h" // defines: Tokens
#include "trace.h"     // defines: StepKind

#define LESSON_ALL_HEADS (-1) // head=all: the grid of all heads
#define LESSON_MAX_WORDS 256  // words in a lesson's sentence or a compare sentence
#define LESSON_MAX_BYTES (1 << 20)

typedef enum { FOCUS_NONE, FOCUS_ROW, FOCUS_COL, FOCUS_CELL } LessonFocus;
typedef enum { SHOW_ALL, SHOW_Q, SHOW_K, SHOW_V } LessonShow; // show= of the qkv stage
// reveal= : what the step hides until the next click (predict, then reveal)
typedef enum { REVEAL_NONE, REVEAL_RESULT, REVEAL_ROW } LessonReveal;

typedef struct {
  char *title;    // the heading's text without its {options}
  int line;       // 1-based line of the heading (of the first text for the intro step)
  bool has_stage; // false: a narration-only step (a title slide)
  StepKind stage;
  // stage=lens, rollout, headview, saliency or neurons (inside.h): the view inside the pass, drawn
  // at `stage` (the prediction, the layer's softmax or its FFN); INSIDE_NONE for the stage's own picture
  InsideView inside;
  int layer; // 0-based (layer=1 in the file is 0); 0 by default
  int head;  // 0-based, or LESSON_ALL_HEADS; 0 by default
  LessonFocus focus;
  char *row_spec; // the token as written ("the#2", "cat", "3"): ROW and CELL focus
  char *col_spec; // COL and CELL focus
  int row, col;   // 0-based token positions, filled by lesson_resolve (-1 before)
  LessonShow show;
  char *compare; // compare="..." : a second sentence shown side by side, or NULL
  int gen;       // gen=N: the generation step shown (0-based; the front matter's generate: on), 0 by default
  // What-if edits of the step (edits.h), as written, or NULL: edit="S2[bank, river]=6; E[cat, d4]=0"
  // (edits separated by ';') and heads-off=1:2,1:3:uniform (LAYER:HEAD[:zero|:uniform], separated
  // by ','). They apply to the step's sentence and to its compare= sentence. Checked against the
  // model and both sentences by lesson_check_edits.
  char *edits, *heads_off;
  LessonReveal
      reveal; // reveal=result|row|prediction: hidden until the next click (a second picture in exports)
  // spotlight=row:TOKEN | col:TOKEN | cell:ROW,COL : all but that row, column or cell of the
  // result dimmed (marks.h); spot is 0 none, 1 row, 2 column, 3 cell (SpotKind), the tokens as
  // written (found in the trace's tokens when drawn, as row=)
  int spot;
  char *spot_row, *spot_col;
  Fact *facts; // expect="CLAIM; CLAIM": what the step claims about its numbers (facts.h)
  int n_facts;
  Doc narration;
  // A broken step (lesson_break_steps, the window's): its first problem as "FILE:LINE: message",
  // shown where its picture would be; its stage and options are gone. NULL for a sound step.
  char *broken;
} LessonStep;

typedef struct {
  char *path; // the file name given to lesson_load / lesson_parse
  char *title, *sentence;
  char *model;     // as written: NULL or "default", "random D=..", or a path (see below)
  bool causal;     // causal: on
  bool causal_set; // the front matter said causal: on or off (else the model's own setting)
  char *target;    // target: an encoder-decoder's target sentence (teacher forcing), or NULL
  bool generate;   // generate: on -- greedy generation; a step's gen=N picks the generation step
  int title_line, sentence_line, model_line;
  // model: by hand (lessons/README.md): a one-layer, one-head model written in the front matter.
  // Its words (lowercase) and their D numbers; the switches say what the model leaves out.
  bool by_hand;
  int hand_D;           // D: (0 when not given)
  int n_hand;           // rows of the embeddings: table
  char **hand_words;    // [n_hand]
  float *hand_embed;    // [n_hand, hand_D]
  bool no_projections;  // projections: none -- q = k = v = Z (identity W^q, W^k, W^v, W^o)
  bool no_positions;    // positions: none -- P = 0, Z = OE
  bool no_feed_forward; // feed-forward: none -- the FFN's weights are zero (its output is 0)
  LessonStep *steps;
  int n_steps;
} Lesson;

#define LESSON_DIAG_MAX 32

typedef struct {
  char file[256];
  int line;     // 1-based; 0 when the problem is not on a line (a missing file)
  int col;      // 1-based byte column, 0 when unknown
  bool warning; // a warning does not make the lesson fail
  char msg[320];
} LessonDiagItem;

typedef struct {
  int n;         // items kept (at most LESSON_DIAG_MAX)
  int n_errors;  // errors reported, including the ones that did not fit
  int n_dropped; // items that did not fit
  LessonDiagItem items[LESSON_DIAG_MAX];
} LessonDiag;

// Reads and parses a lesson file. False when the file could not be read or has errors (in d).
bool lesson_load(Lesson *l, const char *path, LessonDiag *d);
// Parses len bytes (any bytes: no NUL terminator needed); name is the file name for messages.
bool lesson_parse(Lesson *l, const char *text, size_t len, const char *name, LessonDiag *d);
void lesson_free(Lesson *l);

// Checks the steps against the model and the sentence's tokens: layer and head in range, the
// stage present in this model (mask needs causal, prenorm a pre-norm model, predict a prediction
// head), focus tokens in the sentence; fills row/col. False when it added an error to d.
bool lesson_resolve(Lesson *l, const Model *m, const Tokens *tokens, LessonDiag *d);
// The position of a token spec ("cat", "the#2", "3") in tokens, or -1.
int lesson_find_token(const Tokens *tokens, const char *spec);

// Opens the lesson's model: `default` (or no model key) is the shipped trained model
// assets/models/bank.safetensors, found by model_find_shipped (model_find.h: $SF_SOURCE_DIR,
// beside the lesson's folder, the working folder, the source tree, in that order); a path is relative to the
// lesson file's folder; `random SPEC` builds a seeded random model whose vocabulary is the words of the
// sentence and compare sentences. When the shipped model is not there, returns a random stand-in (seed 42)
// and says so in *note (when note is not NULL; note->msg stays empty otherwise). The lesson's causal: setting
// is applied. `by hand` builds the front matter's model (lesson_hand_model). NULL with err on failure.
Model *lesson_open_model(const Lesson *l, Err *note, Err *err);
// The model of `model: by hand`: D = hand_D, H = 1 (d_k = D), one post-norm layer, vocabulary
// "<unk>" (zeros) then the table's words, E = the table, in_proj = [I; I; I] and out_proj = I
// without biases (q = k = v = Z), pos_encoding=none, F = 1 with zero weights (the FFN adds 0).
Model *lesson_hand_model(const Lesson *l, Err *err);

// The stage's name as a lesson writes it ("softmax"), or "" for an unknown kind; and the stage a
// lesson's stage= value means (a name, an alias or a title of stages.h, any case: "weighted
// values" is av). Both read the stage table of stages.h.
const char *lesson_stage_name(StepKind k);
bool lesson_stage_from_name(const char *name, StepKind *k);

// A lesson with a mistake still gives the lecture (the window; check and export stay strict):
// every error of d on a line of a step (its heading or its narration) turns that step into a
// broken step -- its first message kept in `broken`, its stage and options dropped, so that it
// shows its title, its narration and the message -- and becomes a warning of d. Returns how many
// errors are left (the front matter's, the file's): with any, the lesson cannot open.
int lesson_break_steps(Lesson *l, LessonDiag *d);

// Adds a problem (printf format); keeps the first LESSON_DIAG_MAX and counts the rest.
void lesson_diag_add(LessonDiag *d, const char *file, int line, int col, bool warning, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
// Prints every item as "FILE:LINE: message" ("FILE:LINE: warning: message"), one per line.
void lesson_diag_print(const LessonDiag *d, FILE *f);
// The edits of step s (edit=, heads-off=) parsed against t (a trace of the lesson's model on its
// sentence) into *e (empty when the step has none). False with a problem FILE:LINE in d (and *e
// freed) when one does not fit: an unknown matrix, a head the model lacks, a word not in the
// sentence, a bad number.
struct TraceEdits;
bool lesson_step_edits(const Lesson *l, const LessonStep *s, const Trace *t, struct TraceEdits *e,
                       LessonDiag *d);
// Every step's edits checked against t (lesson_step_edits), and against its compare= sentence
// (a step's edits apply to both sides); false when one has a problem.
bool lesson_check_edits(const Lesson *l, const Trace *t, LessonDiag *d);

#endif
