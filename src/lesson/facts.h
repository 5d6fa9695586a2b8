// facts.h -- claims about the numbers of a trace: parsed from text, measured on a Trace.
//
// A lesson step states what its stage shows as claims (lessons/README.md, "Claims"), and
// `stepformer check`, the window and the exports measure them on the lesson's model. The same
// evaluator serves any caller that wants a fact checked (an invariants panel). A claim reads
//
//     A4[bank, river] > 0.9          one cell: head 4 of the attention weights, row bank, column river
//     argmax A4[bank] = river        the largest entry of a row (also written A4[bank] = river)
//     predict[bank] = where          the most probable next word after bank
//     sum A4[bank] = 1 ± 0.001       an aggregate of a row (sum, max, min, mean) against a number
//     A2[cat, walks] in [0.2, 0.5]   a value range (of one cell, a row: every entry, or the matrix)
//     compare: argmax A4[bank] = river   measured on the step's compare= sentence
//
// The matrix is a stage name of stages.h (softmax, scores, ffn_hidden, predict ...) or a symbol
// (A, S, Q, K, V, AV; p for predict), followed by a head number for a per-head stage, counted from
// 1 as on screen; the layer is the step's. Or a view inside the pass (inside.h), followed by a
// layer number: lens2[bank] = to (the top token after layer 2), rollout1[bank, by] > 0.2,
// saliency[bank, by] > 0.3 (the share of "by" in the top word after "bank"); without a number,
// the step's layer (the last outside the layers). Rows are tokens of the sentence ("cat", "the#2", "3");
// columns are tokens, vocabulary words (predict) or feature numbers from 1. Operators: < <= > >=
// = != (also ≤ ≥ ≠); `=` with a number holds within ± its tolerance (0.0005 unless given).
//
// facts_parse checks the syntax only; facts_eval resolves the names against a trace and measures.
// facts_parse does not allocate (a Fact is plain data); facts_eval does only for the inside views. Errors are
// one line in a caller's buffer.
//
//     Fact f; char why[160];
//     if (!facts_parse(&f, "A4[bank, river] > 0.9", why, sizeof why)) puts(why);
//     FactResult r;
//     if (facts_eval(&f, trace, 0, &r)) printf("%s %s\n", r.holds ? "holds" : "fails", r.statement);
//     else puts(r.statement);                     // what could not be resolved
#ifndef SF_FACTS_H
#define SF_FACTS_H

#include <stdbool.h>
#include <stddef.h>

#include "trace.h" // defines: Trace, StepKind

#define FACT_TEXT_MAX 160
#define FACT_WORD_MAX 64

typedef enum { FACT_VALUE, FACT_SUM, FACT_MAX, FACT_MIN, FACT_MEAN, FACT_ARGMAX } FactWhat;
typedef enum { FACT_LT, FACT_LE, FACT_GT, FACT_GE, FACT_EQ, FACT_NE, FACT_IN } FactOp;

typedef struct {
  char text[FACT_TEXT_MAX]; // the claim as written, spaces trimmed
  bool compare;             // "compare:": measured on the step's compare sentence
  FactWhat what;
  char matrix[32]; // the matrix as written without its head ("A", "softmax", "predict")
  int head;        // 0-based head, or -1 when none was written
  char row[FACT_WORD_MAX], col[FACT_WORD_MAX]; // token / word / number specs; "" when not given
  FactOp op;
  double a, b;              // the number (a) and its tolerance (b) for =; the range [a, b] for in
  char word[FACT_WORD_MAX]; // argmax: the word (column label) claimed
} Fact;

typedef struct {
  bool holds;
  double value;                        // the measured number (argmax: the largest entry's value)
  double lo, hi;                       // FACT_IN over several entries: their smallest and largest
  char word[FACT_WORD_MAX];            // argmax: the label of the largest entry
  char statement[FACT_TEXT_MAX + 192]; // "A4[bank, river] = 0.973 > 0.9", or why it could not be measured
} FactResult;

// Parses one claim. False with a one-line reason in why (cap bytes) on a syntax error (unknown
// operator, missing bracket, bad number); names are checked by facts_eval.
bool facts_parse(Fact *f, const char *text, char *why, size_t cap);

// Measures f on t, the matrices of layer `layer` (0-based). False when a name does not resolve
// (unknown stage or matrix, head out of range, a token not in the sentence -- with "did you mean"
// when one is near); r->statement then says why. True otherwise, with r->holds.
bool facts_eval(const Fact *f, const Trace *t, int layer, FactResult *r);

// The operator as written in statements ("<", ">=", "=", "in").
const char *facts_op_name(FactOp op);

#endif
