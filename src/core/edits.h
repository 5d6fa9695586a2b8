// edits.h -- what-if edits: change one number the model uses, or switch a head off, and run the
// forward again (issue 13, items 1 and 2).
//
// A TraceEdits is a list of edits and a per-(layer, head) switch (editlist.h: the data, which the
// trace holds and the forward applies; here: edits against a trace, the edited forward). An edit
// sets one element of
//   - a weight of the model: E[word, dim], a projection's W^q, W^k, W^v, W^o and biases, the FFN's
//     W_1, b_1, W_2, b_2, a LayerNorm's gain γ and shift β (per layer): applied to a copy of the
//     one array that holds it (re-packed for gemm.h when the model's was packed), so the model
//     itself never changes;
//   - a score before the softmax, S_h[i, j] of a layer (the scores before the mask when the model
//     is causal; a masked score cannot be edited): written by model_forward right after the
//     scores are computed, so the softmax and everything after it see it.
// A head switched off either gives zeros where its columns of the concatenation were (HEAD_ZERO:
// "zeroed"; its A and A·V stay as computed) or attends uniformly (HEAD_UNIFORM: every row of A_h
// is 1/(number of keys the query may see): 1/L, or 1/(i+1) with a causal mask), and everything
// after recomputes. Encoders (and decoder-only models) only: an encoder-decoder's trace refuses
// edits with a message.
//
// edits_trace runs the forward of a trace's sentence with the edits: the new trace owns a copy of
// the list and the edited copy of the model (freed by trace_free), so the caller's TraceEdits and
// the unedited trace may change or go. Names are those a learner sees: layers and heads 1-based,
// tokens by their word ("the#2" for the second "the", or a position 1..L), dimensions as d1 … dD
// (counted from 1, as the axes label them; a bare number, the old 0-based form, is refused with a
// message that gives the new one), vocabulary rows of E by the word.
//
//     TraceEdits e = {0};
//     TraceEdit x;
//     if (!edits_parse_edit(base, "S4[bank, river]=6", &x, &err) || !edits_add(&e, &x, &err)) ...
//     edits_set_head(&e, base, 0, 3, HEAD_UNIFORM);         // layer 1 head 4
//     Trace *t = edits_trace(base, &e, &err);               // base: the unedited trace
//     char note[256];
//     edits_describe(t, note, sizeof note);  // "edited: S₄[bank, river] = 6; heads off: layer 1 head 4
//     (uniform)" trace_free(t); edits_free(&e);
#ifndef SF_EDITS_H
#define SF_EDITS_H

#include <stdbool.h>

#include "editlist.h" // defines: TraceEdits, TraceEdit, HeadOff, edits_add, edits_free
#include "err.h"      // defines: Err
#include "trace.h"    // defines: Trace

// Switches head h of layer l (0-based) of t's model on or off.
bool edits_set_head(TraceEdits *e, const Trace *t, int l, int h, HeadOff mode, Err *err);

// Parses "[LAYER:]NAME[HEAD][ROW, COL]=VALUE" against t's model and sentence: LAYER 1-based (1
// when left out; none for E), NAME one of E, S (with its head: S4), Wq Wk Wv Wo bq bk bv bo W1 b1
// W2 b2 gamma1 beta1 gamma2 beta2 (LayerNorm 1 and 2 of the layer); a one-row tensor (a bias, a
// gain) takes one index: "b1[5]=0". Spaces are ignored around the parts. The message says what
// is wrong ("S9: the model has 4 heads"); the caller says where the spec came from.
bool edits_parse_edit(const Trace *t, const char *spec, TraceEdit *out, Err *err);
// The edit that sets element (i, j) of head h of tensor `index` of t (as trace_at reads it) to
// value: the window's edit of a selected cell. A masked score S_h + M names the score before the
// mask. False with a message when the tensor cannot be edited (an activation other than the
// scores, a weight outside the list above) or the cell is masked.
bool edits_for_cell(const Trace *t, int index, int h, int i, int j, float value, TraceEdit *out, Err *err);
// Parses "LAYER:HEAD[:zero|:uniform]" (1-based; zero when left out) against t's model.
bool edits_parse_head_off(const Trace *t, const char *spec, int *layer, int *head, HeadOff *mode, Err *err);

// The edit as a learner reads it, against t's sentence: "S₄[bank, river] = 6", with
// "layer 2 " before it for a model of more than one layer. Writes into buf (cap bytes), returns it.
const char *edits_label(const Trace *t, const TraceEdit *x, char *buf, int cap);
// What makes t differ from the model's own trace, for footers and dumps: "edited: A; B; heads
// off: layer 1 head 4 (zeroed)" (either part alone when the other is empty); "" for a trace
// without edits. Returns buf.
const char *edits_describe(const Trace *t, char *buf, int cap);

// The forward of base's sentence with e applied (a trace that owns copies of e and of the edited
// model; base itself is not changed, and must be a trace of the model's own weights). With an
// empty e the result equals base bit for bit. NULL with a message on memory, an edit that does
// not fit base's model or sentence, or an encoder-decoder.
Trace *edits_trace(const Trace *base, const TraceEdits *e, Err *err);

// Frees the edited copy of a model made by edits_trace (trace_free calls it, through the trace's
// own_model_free); NULL does nothing.
void edits_model_free(struct Model *m);

#endif
