// generate.h -- greedy generation, one word at a time, every step a full Trace.
//
// An encoder-decoder (model_is_seq2seq) writes its output sentence from "<bos>": step k runs the
// decoder on "<bos>" and the k-1 words written so far (teacher forcing on its own output) and
// appends the most probable word of the last row of pred, until it writes "<eos>" or the limit.
// The encoder, memory and each decoder layer's K^c, V^c of memory depend on the source only: they
// are computed once, by step 1, and copied into the later steps' traces (trace.h: memory_ready),
// which compute the decoder alone. A causal model with a prediction head (GPT-style) is served by
// the same calls: step k runs the whole model on the prompt and the k-1 words generated so far and
// appends the argmax of the last row; it stops at its "<eos>" or "<|endoftext|>" when its
// vocabulary has one, else at the limit.
//
// Each step has its Trace (every stage of that step can be shown, dumped and exported), the
// chosen word and the five most probable words with their probabilities. Ties go to the lower id.
//
// A causal model chooses its words with a per-layer key/value cache (forward.h: KVCache): step 1
// is a full trace of the prompt, whose keys and values fill the cache; every later step pushes
// the word before it through the cache (one row per stage instead of the whole trace again) and
// chooses from those logits. The full trace of a later step is computed only when it is asked
// for (gen_step_trace: the window's step shown, each step of a dump or an export) and then kept
// (gen_step_release drops it again). The cached logits equal the full trace's last row to float
// rounding (bit for bit on the test fixtures; tests/test_generate.c), so the words are the
// same unless two candidates tie within that rounding. An encoder-decoder computes every step's
// trace at once, as before (its encoder part is shared, below).
//
//     Generation *g = gen_run(model, &source, 0, &err);  // 0: gen_default_limit(source.n)
//     for (int k = 0; k < g->n_steps; k++)
//       printf("%s ", gen_word(g, g->steps[k].token));
//     gen_free(g);
#ifndef SF_GENERATE_H
#define SF_GENERATE_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"       // defines: Err
#include "model.h"     // defines: Model
#include "sampling.h"  // defines: Sampling
#include "tokenizer.h" // defines: Tokens
#include "trace.h"     // defines: Trace

#define GEN_TOP 5        // candidates recorded per step
#define GEN_MAX_STEPS 64 // the largest limit a caller may ask for

typedef struct {
  Trace *trace;         // this step's forward pass (decoder input: <bos> and the words before);
                        // a causal model's steps after the first: NULL until gen_step_trace
  int token;            // the word written: the argmax of the last row of pred
  float prob;           // its probability
  int top[GEN_TOP];     // the most probable words, best first
  float top_p[GEN_TOP]; // their probabilities
  int n_top;            // min(GEN_TOP, output vocabulary)
  uint64_t rng_before;  // sampling: the generator's state before this step's draw
} GenStep;

typedef struct {
  const Model *model;
  bool seq2seq;   // an encoder-decoder (else a causal model with a head)
  int limit;      // the most steps it could take
  int end_token;  // the id that ends generation (-1: none, only the limit)
  bool ended;     // the last step wrote end_token
  GenStep *steps; // [n_steps]
  int n_steps;
  int *ids;          // a causal model's prompt and words written: step k's input is ids[0..base + k)
  int base;          // the prompt's length (seq2seq: 1, <bos>)
  Sampling sampling; // off: greedy; on: each word drawn (sampling.h) from the last row's logits
  uint64_t rng;      // the generator's state after the last draw
} Generation;

// The default limit for a source of S tokens: 2·S + 10, at most GEN_MAX_STEPS.
int gen_default_limit(int S);
// Whether the model can generate; false with one line saying why (an encoder without a causal
// prediction head).
bool gen_supported(const Model *m, Err *err);
// Greedy generation from source (the encoder's tokens, or a causal model's prompt), at most
// max_steps steps (<= 0: gen_default_limit(source->n); more than GEN_MAX_STEPS fails). NULL with
// a message on failure (unsupported model, out of memory, a trace too large).
Generation *gen_run(const Model *m, const Tokens *source, int max_steps, Err *err);
// The same with each word drawn as smp says (NULL or smp->on false: greedy, as gen_run): the
// seed's stream gives the same words on every machine.
Generation *gen_run_sampled(const Model *m, const Tokens *source, int max_steps, const Sampling *smp,
                            Err *err);
void gen_free(Generation *g);
// Step k's trace, computed the first time it is asked for and kept in g->steps[k].trace (g is
// const for its readers: only that memo changes). NULL with a message when it cannot be made
// (out of memory).
Trace *gen_step_trace(const Generation *g, int k, Err *err);
// Frees step k's trace when it can be made again (a causal model's step after the first).
void gen_step_release(const Generation *g, int k);
// The word of an output id: the target vocabulary's (seq2seq) or the vocabulary's.
const char *gen_word(const Generation *g, int id);
// ---- one token at a time (the window's keys; gen_run's causal steps use the same calls)
//
// A causal model's trace on token ids (the prompt's and the tokens appended), computed at
// temperature T (forward_set_temperature; 1 for torch's plain softmax). The tokens' labels are
// the vocabulary's. NULL with a message (out of memory, more tokens than the model's positions).
Trace *gen_trace_ids(const Model *m, const int *ids, int n, float T, Err *err);
// The most probable id of p[0..V) (ties go to the lower id).
int gen_argmax(const float *p, int V);
// An id drawn from p[0..V) (p sums to 1 up to rounding): one u = rng_uniform(rng), then the first
// id whose cumulative probability (summed in double) exceeds u; rounding left over goes to the
// last id of non-zero probability. The same seed gives the same ids on every machine.
int gen_sample(const float *p, int V, uint64_t *rng);
// The next token after a causal trace: from the last row of pred (softmax(logits / T) at the
// trace's temperature), the argmax (rng NULL) or a draw (gen_sample); *prob its probability.
int gen_next(const Trace *t, uint64_t *rng, float *prob);
// The text of ids as the model's tokenizer writes it: GPT-2's bytes (bpe_decode: " cat"), the
// words tokenizer's words each after a space, the characters tokenizer's characters as they are.
// malloc'd (NUL-terminated); NULL when out of memory.
char *gen_decode(const Model *m, const int *ids, int n);

// The words generated, space-separated, without the final end word ("<eos>"): the content of a
// dump's generated.txt (with a newline). malloc'd; NULL when out of memory.
char *gen_sentence(const Generation *g);

#endif
