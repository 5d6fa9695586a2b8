// session.c -- see session.h.
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formulas.h"     // defines: formulas_check
#include "forward.h"      // defines: model_forward
#include "model_tokens.h" // defines: model_tokenize
#include "rng.h"          // defines: rng_seed, RNG_DEFAULT_SEED

// The lesson's focus on a decoder stage: rows are the decoder's input words (of the step's
// generation step), columns too, but cross-attention's columns are the source's words.
static void refocus_decoder(Session *s) {
  for (int i = 0; i < s->lesson.n_steps; i++) {
    LessonStep *st = &s->lesson.steps[i];
    if (!st->has_stage || !stage_is_after_memory(st->stage)) continue;
    const Trace *t = s->trace;
    if (s->gen) t = session_step_trace(s, i);
    bool cross = st->stage >= STEP_CROSS_QKV && st->stage <= STEP_CROSS_OUTPROJ;
    st->row = st->row_spec ? lesson_find_token(&t->dec_tokens, st->row_spec) : -1;
    st->col = st->col_spec ? lesson_find_token(cross ? &t->tokens : &t->dec_tokens, st->col_spec) : -1;
  }
}

// The similarity stage (STEP_SIM) is a step of the trace when the session compares two sentences
// (--compare, a step's compare="...") or a lesson step asks for it (it then says it needs a
// second sentence). An encoder only: an encoder-decoder and a generation have none.
static bool add_sim_steps(Session *s) {
  bool want = s->compare_all != NULL && !s->compare_model; // a second file: the same sentence
  for (int i = 0; s->has_lesson && i < s->lesson.n_steps; i++)
    want = want || s->lesson.steps[i].compare ||
           (s->lesson.steps[i].has_stage && s->lesson.steps[i].stage == STEP_SIM);
  if (!want || s->gen || model_is_seq2seq(s->model)) return true;
  return trace_add_sim_steps(s->trace);
}

// Why two models cannot be compared stage by stage, into why (cap bytes); "" when they can: the same
// shapes, the same kind of model and the same vocabulary, word for word.
static void compare_mismatch(const Model *a, const Model *b, char *why, size_t cap) {
  const ModelConfig *x = &a->cfg, *y = &b->cfg;
  why[0] = 0;
  struct {
    const char *name;
    long u, v;
  } dims[] = {{"D", x->D, y->D},
              {"H", x->H, y->H},
              {"F", x->F, y->F},
              {"layers", x->n_layers, y->n_layers},
              {"K/V heads", model_hkv(x), model_hkv(y)},
              {"d_k", model_dk(x), model_dk(y)},
              {"decoder layers", x->n_dec_layers, y->n_dec_layers},
              {"V", x->V, y->V}};
  for (size_t i = 0; i < sizeof dims / sizeof *dims; i++)
    if (dims[i].u != dims[i].v) {
      snprintf(why, cap, "their shapes differ (%s %ld and %ld)", dims[i].name, dims[i].u, dims[i].v);
      return;
    }
  if (x->activation != y->activation || x->norm_first != y->norm_first || x->causal != y->causal ||
      x->rms_norm != y->rms_norm || x->rope != y->rope || x->gated != y->gated ||
      x->learned_pos != y->learned_pos || a->has_head != b->has_head ||
      a->has_classifier != b->has_classifier) {
    snprintf(why, cap, "they are not the same kind of model (%s and %s)",
             model_features(a, (char[160]){0}, 160), model_features(b, (char[160]){0}, 160));
    return;
  }
  if (a->vocab.n != b->vocab.n) {
    snprintf(why, cap, "their tokenizers differ (%d and %d tokens)", a->vocab.n, b->vocab.n);
    return;
  }
  for (int i = 0; i < a->vocab.n; i++)
    if (strcmp(a->vocab.words[i], b->vocab.words[i])) {
      snprintf(why, cap, "their tokenizers differ (token %d is \"%.40s\" and \"%.40s\")", i,
               a->vocab.words[i], b->vocab.words[i]);
      return;
    }
}

// --compare-model FILE: the second file's model and its pass on the session's sentence (compare_all).
static bool open_compare_model(Session *s, const SessionOpts *o, Err *err) {
  if (o->compare)
    return err_set(err,
                   "--compare-model and --compare both put a second pass beside the first: give one of them");
  if (s->gen || model_is_seq2seq(s->model))
    return err_set(err, "--compare-model compares one pass of an encoder or a decoder: leave out %s",
                   s->gen ? "--generate" : "the encoder-decoder (or --compare-model)");
  ModelOpts mo = {.model_path = o->compare_model};
  Err e = {0};
  if (!(s->compare_model = model_source_open(&mo, &e))) return err_set(err, "--compare-model: %s", e.msg);
  char why[400];
  compare_mismatch(s->model, s->compare_model, why, sizeof why);
  if (why[0])
    return err_set(err, "--compare-model %.200s: %s and %.200s: %s; give a file of the same model",
                   o->compare_model, s->model->source, s->compare_model->source, why);
  if (!(s->compare_all = model_source_trace(s->compare_model, s->text, &e)))
    return err_set(err, "--compare-model: %s", e.msg);
  if (s->compare_all->L != s->trace->L ||
      memcmp(s->compare_all->tokens.ids, s->trace->tokens.ids, sizeof(int) * (size_t)s->trace->L))
    return err_set(
        err,
        "--compare-model %.200s: its tokenizer splits the sentence otherwise than %.200s's: give a "
        "file of the same model",
        o->compare_model, s->model->source);
  s->compare_model_path = o->compare_model;
  s->compare_text = s->compare_model->source;
  return true;
}

// The window (o->lenient): the steps d's errors are on become broken steps; true when no error is
// left. Elsewhere, true when d has no error.
static bool steps_sound(Session *s, const SessionOpts *o, LessonDiag *d) {
  if (o->lenient && d->n_errors > 0 && s->lesson.n_steps > 0) return lesson_break_steps(&s->lesson, d) == 0;
  return d->n_errors == 0;
}

bool session_open(Session *s, const SessionOpts *o, LessonDiag *d, Err *err) {
  memset(s, 0, sizeof *s);
  if (!model_source_check(&o->model, err)) return false;
  const char *text = o->model.text;
  if (o->lesson) {
    // a formula with a typo is an error of the lesson, as in `stepformer check`
    bool read = lesson_load(&s->lesson, o->lesson, d);
    if (read || (o->lenient && s->lesson.n_steps > 0)) formulas_check(&s->lesson, d);
    if (!steps_sound(s, o, d) || !s->lesson.sentence) {
      lesson_free(&s->lesson);
      return err_set(err, "%s: the lesson has errors", o->lesson);
    }
    s->has_lesson = true;
    if (!text) text = s->lesson.sentence;
  }
  if (!text) text = MODEL_SOURCE_DEFAULT_TEXT;
  // where the sentence came from, in front of what is wrong with it
  char where[300];
  if (o->model.text || !s->has_lesson)
    snprintf(where, sizeof where, "--text");
  else
    snprintf(where, sizeof where, "%.250s: the lesson's sentence", o->lesson);
  if (strlen(text) >= SESSION_MAX_TEXT) {
    session_close(s);
    return err_set(err, "%s: the sentence is too long (%zu bytes, at most %d): shorten it", where,
                   strlen(text), SESSION_MAX_TEXT - 1);
  }
  ModelOpts mo = o->model;
  if (!mo.text) mo.text = text; // a random model's vocabulary comes from the sentence
  if (s->has_lesson && !mo.model_path && !mo.random_spec) {
    s->model = lesson_open_model(&s->lesson, &s->note, err);
    if (s->model && mo.causal) s->model->cfg.causal = true;
  } else {
    s->model = model_source_open(&mo, err);
  }
  if (!s->model) {
    session_close(s);
    return false;
  }
  snprintf(s->text, sizeof s->text, "%s", text);
  s->prompt_len = strlen(s->text);
  s->temperature = 1.0f;
  s->seed = RNG_DEFAULT_SEED;
  s->rng = rng_seed(s->seed);
  s->append_smp = sampling_default();
  Err terr = {0};
  // the lesson's target: and generate: on, unless the command line says otherwise
  const char *target = o->target ? o->target : s->has_lesson && !o->generate ? s->lesson.target : NULL;
  bool generate = o->generate || (s->has_lesson && s->lesson.generate && !o->target);
  s->target = target;
  s->gen_max_steps = o->max_steps;
  s->gen_smp = o->smp;
  if (target && !model_is_seq2seq(s->model)) {
    err_set(err,
            "--target: %s is an encoder only, with no decoder to feed: leave --target out, or open an "
            "encoder-decoder (a file with n_decoder_layers)",
            s->model->source);
    session_close(s);
    return false;
  }
  if (generate) { // every generation step's trace; step 1's shown first
    s->gen = model_source_generate_sampled(s->model, s->text, o->max_steps, &o->smp, &terr);
    s->trace = s->gen ? s->gen->steps[0].trace : NULL;
  } else if (model_is_seq2seq(s->model))
    s->trace = model_source_trace_seq2seq(s->model, s->text, target ? target : "", &terr);
  else
    s->trace = model_source_trace(s->model, s->text, &terr);
  if (!s->trace) {
    session_close(s);
    return err_set(err, "%s: %s", where, terr.msg);
  }
  if (o->compare && !(s->compare_all = model_source_trace(s->model, o->compare, &terr))) {
    session_close(s);
    return err_set(err, "--compare: %s", terr.msg);
  }
  s->compare_text = o->compare;
  if (o->compare_model && !open_compare_model(s, o, err)) {
    session_close(s);
    return false;
  }
  if (s->has_lesson) {
    s->compare = calloc((size_t)s->lesson.n_steps + 1, sizeof(Trace *));
    if (!s->compare) {
      session_close(s);
      return err_set(err, "out of memory");
    }
    for (int i = 0; i < s->lesson.n_steps; i++) {
      const char *c = s->lesson.steps[i].compare;
      if (!c) continue;
      Err cerr = {0};
      if (!(s->compare[i] = model_source_trace(s->model, c, &cerr))) {
        if (o->lenient) { // the step shows the message, the others work
          lesson_diag_add(d, s->lesson.path, s->lesson.steps[i].line, 0, false, "compare=\"%s\": %s", c,
                          cerr.msg);
          lesson_break_steps(&s->lesson, d);
          continue;
        }
        err_set(err, "%s:%d: compare=\"%s\": %s", o->lesson, s->lesson.steps[i].line, c, cerr.msg);
        session_close(s);
        return false;
      }
    }
  }
  if (!add_sim_steps(s)) {
    session_close(s);
    return err_set(err, "out of memory");
  }
  if (s->has_lesson) {
    if (!o->model.text) { // the lesson's own sentence: its focus tokens must all be there
      if (!lesson_resolve(&s->lesson, s->model, &s->trace->tokens, d) && !steps_sound(s, o, d)) {
        session_close(s);
        return err_set(err, "%s: the lesson does not fit its model or sentence", o->lesson);
      }
      refocus_decoder(s);
    } else {
      session_refocus(s);
    }
  }
  if (s->has_lesson && o->lenient) { // a step's edit= that does not fit: that step shows why
    LessonDiag ed = {0};
    if (!lesson_check_edits(&s->lesson, s->trace, &ed)) {
      lesson_break_steps(&s->lesson, &ed);
      for (int q = 0; q < ed.n; q++)
        lesson_diag_add(d, ed.items[q].file, ed.items[q].line, ed.items[q].col, true, "%s", ed.items[q].msg);
    }
  }
  if (!session_edits_open(s, o, d, err)) { // --edit, --head-off, the steps' edit= / heads-off=
    session_close(s);
    return false;
  }
  return true;
}

void session_refocus(Session *s) {
  if (!s->has_lesson) return;
  for (int i = 0; i < s->lesson.n_steps; i++) {
    LessonStep *st = &s->lesson.steps[i];
    st->row = st->row_spec ? lesson_find_token(&s->trace->tokens, st->row_spec) : -1;
    st->col = st->col_spec ? lesson_find_token(&s->trace->tokens, st->col_spec) : -1;
  }
  refocus_decoder(s);
}

static bool set_text(Session *s, const char *text, Err *err);

// The edits come off around the change of sentence, and go on again after (session_edits.c).
bool session_set_text(Session *s, const char *text, Err *err) {
  session_edits_unapply(s);
  bool ok = set_text(s, text, err);
  session_edits_reapply(s);
  return ok;
}

static bool set_text(Session *s, const char *text, Err *err) {
  if (strlen(text) >= SESSION_MAX_TEXT)
    return err_set(err, "the sentence is too long (at most %d bytes)", SESSION_MAX_TEXT - 1);
  if (s->gen || model_is_seq2seq(s->model)) { // a new generation, or the decoder fed again
    Generation *g = NULL;
    Trace *t = NULL;
    if (s->gen) {
      if (!(g = model_source_generate_sampled(s->model, text, s->gen_max_steps, &s->gen_smp, err)))
        return false;
    } else if (!(t = model_source_trace_seq2seq(s->model, text, s->target ? s->target : "", err)))
      return false;
    if (s->gen) {
      gen_free(s->gen);
      s->gen = g, s->gen_step = 0, s->trace = g->steps[0].trace;
    } else {
      trace_free(s->trace);
      s->trace = t;
    }
    snprintf(s->text, sizeof s->text, "%s", text);
    session_refocus(s);
    return true;
  }
  Trace *c = NULL; // --compare-model: the second file's pass on the new sentence
  if (s->compare_model && !(c = model_source_trace(s->compare_model, text, err))) return false;
  Tokens tok;
  if (!model_tokenize(s->model, text, MODEL_SOURCE_MAX_TOKENS, &tok, err)) return trace_free(c), false;
  Err ignored = {0};
  if (tok.n == s->trace->L && trace_set_tokens(s->trace, &tok, &ignored)) { // same length: reuse
    tokens_free(&tok);
    model_forward(s->trace);
  } else {
    tokens_free(&tok);
    Trace *t = model_source_trace(s->model, text, err);
    if (!t) return trace_free(c), false;
    trace_free(s->trace);
    s->trace = t;
    if (!add_sim_steps(s)) return trace_free(c), err_set(err, "out of memory");
    if (s->temperature != 1.0f) forward_set_temperature(t, s->temperature);
  }
  if (c && s->temperature != 1.0f) forward_set_temperature(c, s->temperature);
  if (c) trace_free(s->compare_all), s->compare_all = c;
  snprintf(s->text, sizeof s->text, "%s", text);
  s->prompt_len = strlen(s->text);
  s->n_appended = 0;
  session_refocus(s);
  return true;
}

bool session_can_append(const Session *s, Err *err) {
  if (s->gen) return err_set(err, "the window generates with --generate already: step with , and .");
  if (!s->model->cfg.causal || !s->model->has_head || model_is_seq2seq(s->model))
    return err_set(err, "appending a token needs a causal model with a prediction head (GPT-2, --causal)");
  return true;
}

// The trace of the sentence's tokens and ids appended[0..n) (the shown trace's first L - n_appended
// ids are the sentence's), at the session's temperature; the text is rewritten to match.
static bool retrace(Session *s, int n, Err *err) {
  const Trace *old = s->trace;
  int base = old->L - s->n_appended, L = base + n;
  if (L > MODEL_SOURCE_MAX_TOKENS)
    return err_set(err, "at most %d tokens: type a shorter sentence (E)", MODEL_SOURCE_MAX_TOKENS);
  int *ids = malloc(sizeof(int) * (size_t)L);
  char *tail = ids ? gen_decode(s->model, s->appended, n) : NULL;
  if (!ids || !tail) {
    free(ids);
    free(tail);
    return err_set(err, "out of memory");
  }
  memcpy(ids, old->tokens.ids, sizeof(int) * (size_t)base);
  memcpy(ids + base, s->appended, sizeof(int) * (size_t)n);
  bool fits = s->prompt_len + strlen(tail) < sizeof s->text;
  Trace *t = fits ? gen_trace_ids(s->model, ids, L, s->temperature, err) : NULL;
  Trace *c = NULL; // --compare-model: the second file's pass on the same tokens
  if (t && s->compare_model && !(c = gen_trace_ids(s->compare_model, ids, L, s->temperature, err)))
    trace_free(t), t = NULL;
  free(ids);
  if (!t) {
    free(tail);
    return fits ? false : err_set(err, "the text would be too long (at most %d bytes)", SESSION_MAX_TEXT - 1);
  }
  trace_free(s->trace);
  s->trace = t;
  if (c) trace_free(s->compare_all), s->compare_all = c;
  s->n_appended = n;
  snprintf(s->text + s->prompt_len, sizeof s->text - s->prompt_len, "%s", tail);
  free(tail);
  session_refocus(s);
  return true;
}

// R with top-k or top-p (sampling.h): the last row's logits cut and renormalized, then one draw
// from *rng; *prob the id's probability before the cuts. -1 when out of memory.
static int draw_cut(const Session *s, uint64_t *rng, float *prob) {
  const TraceTensor *zt = &s->trace->t[s->trace->logits];
  int V = zt->cols, id = -1;
  SamplingPicture pic = {malloc(sizeof(float) * (size_t)V),
                         malloc(sizeof(float) * (size_t)V),
                         malloc(sizeof(bool) * (size_t)V),
                         0,
                         0,
                         0};
  if (pic.p && pic.q && pic.kept) {
    sampling_apply(zt->data + (size_t)(zt->rows - 1) * zt->stride, V, &s->append_smp, &pic);
    id = sampling_draw(pic.q, V, rng);
    *prob = pic.p[id];
  }
  free(pic.p), free(pic.q), free(pic.kept);
  return id;
}

int session_append(Session *s, bool sample, float *prob, Err *err) {
  if (!session_can_append(s, err)) return -1;
  if (s->n_appended >= SESSION_MAX_APPEND)
    return err_set(err, "at most %d tokens appended: remove some (U)", SESSION_MAX_APPEND), -1;
  uint64_t rng = s->rng;
  float p;
  int id = sample && s->append_smp.on ? draw_cut(s, &rng, &p) : gen_next(s->trace, sample ? &rng : NULL, &p);
  if (id < 0) return err_set(err, "out of memory"), -1;
  s->appended[s->n_appended] = id;
  if (!retrace(s, s->n_appended + 1, err)) return -1;
  if (sample) s->rng = rng, s->draws++;
  if (prob) *prob = p;
  return id;
}

bool session_undo_append(Session *s, Err *err) {
  if (!session_can_append(s, err)) return false;
  if (s->n_appended == 0) return err_set(err, "no appended token to remove: A or R appends one");
  return retrace(s, s->n_appended - 1, err);
}

void session_set_cuts(Session *s, int top_k, float top_p) {
  s->append_smp.top_k = top_k, s->append_smp.top_p = top_p;
  s->append_smp.temperature = s->temperature, s->append_smp.seed = s->seed;
  s->append_smp.on = top_k > 0 || top_p < 1;
}

void session_set_temperature(Session *s, float T) {
  s->temperature = T;
  s->append_smp.temperature = T;
  if (!s->gen) forward_set_temperature(s->trace, T);
  if (s->compare_model && s->compare_all) forward_set_temperature(s->compare_all, T); // --compare-model
}

const Trace *session_compare(const Session *s, int lesson_step, const char **text, int *row, int *col) {
  *row = *col = -1;
  const LessonStep *st = s->has_lesson && lesson_step >= 0 && lesson_step < s->lesson.n_steps
                             ? &s->lesson.steps[lesson_step]
                             : NULL;
  bool own = st && s->compare && s->compare[lesson_step];
  const Trace *t = own ? s->compare[lesson_step] : s->compare_all;
  if (!t) return NULL;
  *text = own ? st->compare : s->compare_text;
  if (st && st->row_spec) *row = lesson_find_token(&t->tokens, st->row_spec);
  if (st && st->col_spec) *col = lesson_find_token(&t->tokens, st->col_spec);
  return t;
}

void session_close(Session *s) {
  session_edits_close(s);
  if (s->compare)
    for (int i = 0; s->has_lesson && i < s->lesson.n_steps; i++) trace_free(s->compare[i]);
  free(s->compare);
  trace_free(s->compare_all);
  model_free(s->compare_model);
  if (s->gen)
    gen_free(s->gen); // it owns the trace shown
  else
    trace_free(s->trace);
  model_free(s->model);
  if (s->has_lesson) lesson_free(&s->lesson);
  memset(s, 0, sizeof *s);
}

void session_set_gen_step(Session *s, int k) {
  if (!s->gen) return;
  if (k >= s->gen->n_steps) k = s->gen->n_steps - 1;
  if (k < 0) k = 0;
  Trace *t = gen_step_trace(s->gen, k, &(Err){0});
  if (!t) return; // out of memory: the step shown stays
  s->gen_step = k;
  s->trace = t;
}

const Trace *session_step_trace(const Session *s, int lesson_step) {
  if (s->step_edits && lesson_step >= 0 && lesson_step < s->lesson.n_steps && s->step_edits[lesson_step])
    return s->step_edits[lesson_step];
  if (!s->gen || !s->has_lesson || lesson_step < 0 || lesson_step >= s->lesson.n_steps) return s->trace;
  int k = s->lesson.steps[lesson_step].gen;
  const Trace *t = gen_step_trace(s->gen, k < s->gen->n_steps ? k : s->gen->n_steps - 1, &(Err){0});
  return t ? t : s->trace;
}

int session_trace_step(const Session *s, int lesson_step) {
  if (!s->has_lesson || lesson_step < 0 || lesson_step >= s->lesson.n_steps) return -1;
  const LessonStep *st = &s->lesson.steps[lesson_step];
  if (!st->has_stage) return -1;
  return trace_step_find(session_step_trace(s, lesson_step), st->stage, st->layer);
}
