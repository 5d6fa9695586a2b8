// lesson_resolve.c -- a parsed lesson checked against its model and sentence (see lesson.h).
#include <stdlib.h>
#include <string.h>

#include "lesson.h"
#include "generate.h"        // defines: gen_supported
#include "lesson_internal.h" // defines: lesson_token_lookup
#include "stages.h"          // defines: stage_info

int lesson_find_token(const Tokens *tokens, const char *spec) {
  if (!tokens || !spec || tokens->n <= 0) return -1;
  return lesson_token_lookup(spec, (const char *const *)tokens->words, tokens->n);
}

static bool is_default_model(const Lesson *l) { return !l->model || !strcmp(l->model, "default"); }

static int resolve_token(const Lesson *l, const LessonStep *s, const Tokens *tk, const char *spec,
                         const char *key, LessonDiag *d) {
  int i = lesson_find_token(tk, spec);
  if (i >= 0) return i;
  // lesson_parse has already reported a token that is not in the lesson's own sentence
  char(*words)[TOKEN_MAX_BYTES + 1] = malloc(sizeof *words * LESSON_MAX_WORDS);
  const char *ws[LESSON_MAX_WORDS];
  int n = words && l->sentence ? tokenize_words(l->sentence, words, LESSON_MAX_WORDS) : 0;
  for (int k = 0; k < n; k++) ws[k] = words[k];
  bool reported = n > 0 && lesson_token_lookup(spec, ws, n) < 0;
  free(words);
  if (!reported)
    lesson_diag_add(d, l->path, s->line, 0, false,
                    "focus token %s=%s is not in the sentence "
                    "(%d tokens)",
                    key, spec, tk ? tk->n : 0);
  return i;
}

bool lesson_resolve(Lesson *l, const Model *m, const Tokens *tokens, LessonDiag *d) {
  LessonDiag local = {0};
  if (!d) d = &local;
  int before = d->n_errors;
  const ModelConfig *c = &m->cfg;
  const char *file = l->path;
  Err gerr = {0};
  if (l->generate && !gen_supported(m, &gerr))
    lesson_diag_add(d, file, 0, 0, false, "generate: on: %s", gerr.msg);
  if (l->target && !model_is_seq2seq(m))
    lesson_diag_add(d, file, 0, 0, false,
                    "target: the model is an encoder only, with no decoder to feed: remove target:");
  if (l->target && l->generate)
    lesson_diag_add(d, file, 0, 0, false,
                    "target: and generate: on do not go together: generation writes the target");
  for (int i = 0; i < l->n_steps; i++) {
    LessonStep *s = &l->steps[i];
    s->row = s->col = -1;
    if (s->has_stage) {
      const StageInfo *info = stage_info(s->stage);
      const char *name = info->name;
      bool dec = stage_is_decoder(s->stage); // an encoder-decoder's decoder: its own layers
      int nl = dec ? c->n_dec_layers : c->n_layers;
      if (info->in_layer && s->layer >= nl && (!dec || model_is_seq2seq(m)))
        lesson_diag_add(d, file, s->line, 0, false,
                        "layer=%d is out of range: the model's %s has %d "
                        "layer%s (layer=1..%d)",
                        s->layer + 1, dec ? "decoder" : "encoder", nl, nl == 1 ? "" : "s", nl);
      if (info->heads != STAGE_ONE_MATRIX && s->head != LESSON_ALL_HEADS && s->head >= c->H)
        lesson_diag_add(d, file, s->line, 0, false,
                        "head=%d is out of range: the model has %d "
                        "head%s (head=1..%d or head=all)",
                        s->head + 1, c->H, c->H == 1 ? "" : "s", c->H);
      if (info->needs == STAGE_IF_CAUSAL && !c->causal)
        lesson_diag_add(d, file, s->line, 0, false,
                        "stage=%s needs a causal model: add causal: "
                        "on to the front matter",
                        name);
      if (info->needs == STAGE_IF_PRE_NORM && !c->norm_first)
        lesson_diag_add(d, file, s->line, 0, false,
                        "stage=%s exists only in pre-norm models "
                        "(model: random ...,norm_first=1)",
                        name);
      if ((info->needs == STAGE_IF_DECODER || info->needs == STAGE_IF_DECODER_PRE_NORM) &&
          !model_is_seq2seq(m))
        lesson_diag_add(d, file, s->line, 0, false,
                        "stage=%s is a stage of an encoder-decoder, and this model is an encoder "
                        "only: choose one of its stages (tokens ... addnorm2, predict)",
                        name);
      if ((info->needs == STAGE_IF_EMBED_NORM && !m->has_embed_norm) ||
          (info->needs == STAGE_IF_HEAD_TRANSFORM && !m->has_head_transform) ||
          (info->needs == STAGE_IF_CLASSIFIER && !m->has_classifier))
        lesson_diag_add(d, file, s->line, 0, false, "stage=%s needs a model with %s; this one has none", name,
                        info->needs == STAGE_IF_EMBED_NORM       ? "an embedding LayerNorm (BERT)"
                        : info->needs == STAGE_IF_HEAD_TRANSFORM ? "a head transform (BERT)"
                                                                 : "a classifier");
      if ((info->needs == STAGE_IF_RMSNORM && !c->rms_norm) || (info->needs == STAGE_IF_ROPE && !c->rope) ||
          (info->needs == STAGE_IF_GATED && !c->gated))
        lesson_diag_add(d, file, s->line, 0, false,
                        "stage=%s is a stage of today's decoders (%s: a Llama, Qwen or SmolLM folder); this "
                        "model has none",
                        name,
                        info->needs == STAGE_IF_RMSNORM ? "RMSNorm"
                        : info->needs == STAGE_IF_ROPE  ? "rotary positions"
                                                        : "a gated feed-forward network");
      if (model_is_modern(c) && (s->stage == STEP_PRENORM || s->stage == STEP_ADDNORM1 ||
                                 (c->rope && (s->stage == STEP_POSENC || s->stage == STEP_ADDPOS))))
        lesson_diag_add(d, file, s->line, 0, false,
                        "stage=%s is the 2017 Transformer's; this model has stage=%s instead", name,
                        s->stage == STEP_PRENORM    ? "rmsnorm"
                        : s->stage == STEP_ADDNORM1 ? "rmsnorm2"
                                                    : "rope");
      if (info->needs == STAGE_IF_HEAD && !m->has_head)
        lesson_diag_add(d, file, s->line, 0, is_default_model(l),
                        "stage=%s needs a model with a "
                        "prediction head (the shipped trained model has one)%s",
                        name, is_default_model(l) ? "; this one has none" : "");
    }
    if (s->gen > 0 && !l->generate)
      lesson_diag_add(d, file, s->line, 0, false,
                      "gen=%d needs generation: add generate: on to the front matter", s->gen + 1);
    bool row = s->focus == FOCUS_ROW || s->focus == FOCUS_CELL;
    bool col = s->focus == FOCUS_COL || s->focus == FOCUS_CELL;
    if (s->has_stage && stage_is_after_memory(s->stage))
      continue; // the decoder's words: the session finds them
    if (row && s->row_spec) s->row = resolve_token(l, s, tokens, s->row_spec, "row", d);
    if (col && s->col_spec) s->col = resolve_token(l, s, tokens, s->col_spec, "col", d);
  }
  return d->n_errors == before;
}
