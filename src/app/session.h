// session.h -- what the window and `export` work on: a lesson (optional), a model, a sentence
// and its trace, kept consistent as the sentence changes.
//
// session_open reads the lesson (when given), opens the model (--model / --random override the
// lesson's own), tokenizes the sentence (--text overrides the lesson's) and runs the forward
// pass. session_set_text re-runs everything for a new sentence and keeps the previous trace when
// the new one cannot be made (empty, or over MODEL_SOURCE_MAX_TOKENS tokens: the message is in err).
// An encoder-decoder's trace feeds its decoder "<bos>" and --target's words ("<bos>" alone without);
// with --generate, every generation step has its trace (s->gen) and `trace` is the one shown. Lesson
// steps map to trace steps with session_trace_step. A Session owns all of it; session_close frees it.
//
//     Session s; LessonDiag d = {0};
//     if (!session_open(&s, &opts, &d, &err)) { lesson_diag_print(&d, stderr); ... }
//     session_set_text(&s, "She puts money in the bank", &err);
//     session_close(&s);
#ifndef SF_SESSION_H
#define SF_SESSION_H

#include <stdbool.h>

#include "lesson.h"       // defines: Lesson, LessonDiag
#include "edits.h"        // defines: TraceEdits
#include "model_source.h" // defines: ModelOpts, MODEL_SOURCE_MAX_TOKENS

#define SESSION_MAX_TEXT 2048
#define SESSION_MAX_APPEND 256 // tokens appended one at a time in the window (session_append)

typedef struct {
  ModelOpts model;     // --model / --random / --vocab / --text / --causal
  const char *lesson;  // a lesson file, or NULL
  const char *compare; // --compare TEXT: a second sentence beside every step, or NULL
  // --compare-model FILE: the same sentence through a second file of the same model (the F16 file
  // beside a Q4 one) beside every step; refused in one line when the two files' tokenizers or
  // shapes differ
  const char *compare_model;
  const char *target; // --target TEXT: an encoder-decoder's target (teacher forcing), or NULL
  bool generate;      // --generate: greedy generation, every step's trace (generate.h)
  int max_steps;      // --max-steps N (0: the default limit)
  Sampling smp;       // --top-k, --top-p, --seed, --temperature with --generate (zero: greedy)
  // The window's: a lesson step with a mistake becomes a broken step that shows its message
  // (lesson_break_steps) and the rest opens; the problems stay in d, as warnings. Check and
  // export leave it false: there a mistake stops the lesson.
  bool lenient;
} SessionOpts;

typedef struct {
  bool has_lesson;
  Lesson lesson;
  Model *model;
  Trace *trace;
  char text[SESSION_MAX_TEXT];    // the sentence of the trace
  Err note;                       // something the user should know (e.g. stand-in model), or empty
  Trace *compare_all;             // --compare: the second sentence's trace, or NULL
  Trace **compare;                // [lesson.n_steps]: the trace of a step's compare="...", or NULL
  const char *compare_text;       // --compare's sentence (borrowed from the options)
  const char *target;             // --target (borrowed), or NULL
  const char *compare_model_path; // --compare-model's file (borrowed), or NULL
  Model *compare_model;           // --compare-model's model: compare_all is its pass on `text`
  // --generate: the generation (it owns the steps' traces; `trace` is then the trace of
  // generation step gen_step, borrowed from it), or NULL
  Generation *gen;
  int gen_step;
  int gen_max_steps;
  Sampling gen_smp; // how --generate draws its words (sampling.h)
  // What-if edits (edits.h, session_edits.c): the live list (--edit, --head-off, the window's keys).
  // While it changes anything, `trace` is the edited pass and `base` the model's own (else NULL).
  TraceEdits edits;
  Trace *base;
  Trace **step_edits; // [lesson.n_steps]: a step's own edit= / heads-off= pass (on the model's own), or NULL
  // A causal model with a head, without --generate: the window appends tokens one at a time
  // (session_append). `text` is then the sentence (its first prompt_len bytes) followed by the
  // appended ids decoded (gen_decode); the trace is the sentence's tokens and the appended ids.
  // Typing a new sentence starts again from it.
  int appended[SESSION_MAX_APPEND];
  int n_appended;
  size_t prompt_len;
  float temperature; // the prediction's: pred = softmax(logits / temperature); 1 by default
  uint64_t seed;     // of the draws of sampled tokens (RNG_DEFAULT_SEED)
  uint64_t rng;      // the generator's state after `draws` draws
  int draws;
  // R's cuts (sampling.h), the window's Shift+K and Shift+P: on when top-k or top-p is set; its
  // temperature and seed follow the session's. The prediction's chart then shows them.
  Sampling append_smp;
} Session;

bool session_open(Session *s, const SessionOpts *o, LessonDiag *d, Err *err);
bool session_set_text(Session *s, const char *text, Err *err);
void session_close(Session *s);
// Whether session_append can append (a causal model with a prediction head, not --generate);
// false with one line saying why.
bool session_can_append(const Session *s, Err *err);
// Appends the next token after the trace, the most probable (sample false) or one drawn at the
// session's temperature from s->rng, and recomputes the trace. Returns its id (and *prob its
// probability at that temperature), or -1 with a message (the model's positions are all used,
// the text would be too long, out of memory); the session is then unchanged.
int session_append(Session *s, bool sample, float *prob, Err *err);
// Removes the last appended token and recomputes; false with a message when none is left.
bool session_undo_append(Session *s, Err *err);
// The prediction's temperature T > 0, applied to the trace shown (and every later one).
void session_set_temperature(Session *s, float T);
// R's top-k (0: off) and top-p (1: off): sampling_apply's cuts before the draw.
void session_set_cuts(Session *s, int top_k, float top_p);
// --generate: shows generation step k (0-based, clamped): `trace` becomes its trace.
void session_set_gen_step(Session *s, int k);
// The trace a lesson step shows: with generation, its generation step's (gen=N), else `trace`.
const Trace *session_step_trace(const Session *s, int lesson_step);
// The trace step a lesson step shows, or -1 for a narration-only step.
int session_trace_step(const Session *s, int lesson_step);
// Re-resolves the lesson's focus tokens against the current sentence (unknown ones become -1).
void session_refocus(Session *s);
// The second sentence shown beside lesson step `lesson_step` (or beside every step with
// --compare), its text, and the step's focus among its tokens; NULL when there is none.
const Trace *session_compare(const Session *s, int lesson_step, const char **text, int *row, int *col);

// What-if edits (session_edits.c). session_edits_open parses the options' --edit / --head-off
// into s->edits and the lesson steps' edit= / heads-off= (problems FILE:LINE in d), and runs the
// edited passes; with --generate or an encoder-decoder, edits are refused. session_edits_apply
// runs s->edits again after the list changed (false with the message, the shown trace unchanged).
// session_edits_unapply / _reapply put the model's own trace back as `trace` around a change of
// sentence, and edit it again after (an edit that no longer fits is dropped, said in s->note).
bool session_edits_open(Session *s, const SessionOpts *o, LessonDiag *d, Err *err);
bool session_edits_apply(Session *s, Err *err);
void session_edits_unapply(Session *s);
void session_edits_reapply(Session *s);
void session_edits_close(Session *s);
// The model's own trace of what `trace` shows (base while edits hold, else trace).
const Trace *session_unedited(const Session *s);

#endif
