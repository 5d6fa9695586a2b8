// stepformer.c -- see stepformer.h: models, passes and their stages. The pictures are in
// stepformer_render.c; both share sf_internal.h.
#include "stepformer.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backward.h"     // defines: TraceGrad, backward_new, backward_run
#include "course.h"       // defines: course_translate, course_is_notebook
#include "forward.h"      // defines: model_forward
#include "model_load.h"   // defines: model_load
#include "model_tokens.h" // defines: model_tokenize
#include "ptfile.h"       // defines: pt_sniff, pt_parse
#include "sf_internal.h"
#include "version.h" // defines: version_string, version_commit

#define SF_MAX_TOKENS 512 // as the program's MODEL_SOURCE_MAX_TOKENS

static _Thread_local char last_error[sizeof(((Err *)0)->msg)];

bool sf_fail(const char *msg) {
  snprintf(last_error, sizeof last_error, "%s", msg);
  return false;
}

static bool fail_f(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static bool fail_f(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return false;
}

int sf_api_version(void) { return SF_API_VERSION; }

const char *sf_version(void) {
  static char buf[128];
  if (!buf[0]) snprintf(buf, sizeof buf, "%s (commit %s)", version_string(), version_commit());
  return buf;
}

const char *sf_error(void) { return last_error; }

void sf_free_bytes(void *p) { free(p); }

// ---------------------------------------------------------------- models
static sf_model *wrap(Model *m) {
  sf_model *w = m ? calloc(1, sizeof *w) : NULL;
  if (m && !w) {
    model_free(m);
    sf_fail("out of memory");
  }
  if (w) w->m = m;
  return w;
}

sf_model *sf_model_open(const char *path) {
  last_error[0] = 0;
  if (!path || !path[0]) return sf_fail("sf_model_open: no path given (a model file or folder)"), NULL;
  Err err = {0};
  Model *m = model_load(path, &err);
  if (!m) sf_fail(err.msg);
  return wrap(m);
}

sf_model *sf_model_open_bytes(const void *bytes, size_t len, const char *config_json, const char *name) {
  last_error[0] = 0;
  const char *what = name && name[0] ? name : "<memory>";
  if (!bytes || len == 0)
    return fail_f("%s: no bytes given (a .safetensors or .pt held in memory)", what), NULL;
  const uint8_t *b = bytes;
  // as course_read: a safetensors header opens with '{' at byte 8, whose length's low byte may be
  // 0x80, which alone would look like a pickle's PROTO
  bool pt = pt_sniff(b, len) && !(len > 8 && b[8] == '{');
  StFile in, f;
  Err err = {0};
  if (pt ? !pt_parse(&in, b, len, what, &err) : !st_parse(&in, b, len, what, &err))
    return sf_fail(err.msg), NULL;
  if (!pt && !config_json && !course_is_notebook(&in))
    f = in; // canonical names: as they are
  else {
    bool ok = course_translate(&in, config_json, config_json ? "the config" : NULL, what, &f, &err);
    st_free(&in);
    if (!ok) return sf_fail(err.msg), NULL;
  }
  Model *m = model_from_st(&f, what, &err);
  if (!m) sf_fail(err.msg);
  return wrap(m);
}

void sf_model_free(sf_model *m) {
  if (!m) return;
  model_free(m->m);
  free(m);
}

int sf_model_dim(const sf_model *w, const char *key) {
  if (!w || !key) return -1;
  const Model *m = w->m;
  const ModelConfig *c = &m->cfg;
  if (!strcmp(key, "V")) return c->V;
  if (!strcmp(key, "D")) return c->D;
  if (!strcmp(key, "H")) return c->H;
  if (!strcmp(key, "F")) return c->F;
  if (!strcmp(key, "layers")) return c->n_layers;
  if (!strcmp(key, "classes")) return m->has_classifier ? m->n_classes : 0;
  if (!strcmp(key, "max_pos")) return c->learned_pos ? c->max_pos : 0;
  if (!strcmp(key, "seq2seq")) return model_is_seq2seq(m) ? 1 : 0;
  if (!strcmp(key, "head")) return m->has_head ? 1 : 0;
  return -1;
}

const char *sf_model_describe(sf_model *w) {
  if (!w) return "";
  const Model *m = w->m;
  char feat[512];
  model_features(m, feat, sizeof feat);
  snprintf(w->describe, sizeof w->describe, "%s: V=%d D=%d H=%d F=%d layers=%d%s%s", m->source, m->cfg.V,
           m->cfg.D, m->cfg.H, m->cfg.F, m->cfg.n_layers, feat[0] ? "; " : "", feat);
  return w->describe;
}

const char *sf_model_word(const sf_model *w, int id) {
  if (!w || id < 0 || id >= w->m->vocab.n) return NULL;
  return w->m->vocab.words[id];
}

int sf_tokenize(const sf_model *w, const char *text, int *ids, int cap) {
  last_error[0] = 0;
  if (!w || !text) return sf_fail("sf_tokenize: no model or no text"), -1;
  Tokens t;
  Err err = {0};
  if (!model_tokenize(w->m, text, SF_MAX_TOKENS, &t, &err)) return sf_fail(err.msg), -1;
  for (int i = 0; i < t.n && i < cap; i++) ids[i] = t.ids[i];
  int n = t.n;
  tokens_free(&t);
  return n;
}

// ---------------------------------------------------------------- passes
static sf_pass *pass_new(sf_model *w, Trace *t) {
  sf_pass *p = calloc(1, sizeof *p);
  if (!p) {
    trace_free(t);
    return sf_fail("out of memory"), NULL;
  }
  p->model = w;
  p->t = t;
  return p;
}

sf_pass *sf_run(sf_model *w, const char *text) {
  last_error[0] = 0;
  if (!w || !text) return sf_fail("sf_run: no model or no text"), NULL;
  const Model *m = w->m;
  Err err = {0};
  Trace *t = NULL;
  if (model_is_seq2seq(m)) { // the decoder fed "<bos>" alone, as the program does
    Tokens src, dec;
    if (!model_tokenize(m, text, SF_MAX_TOKENS, &src, &err)) return sf_fail(err.msg), NULL;
    if (!trace_decoder_tokens(&dec, m, "", SF_MAX_TOKENS, &err)) {
      tokens_free(&src);
      return sf_fail(err.msg), NULL;
    }
    t = trace_new_seq2seq(m, &src, &dec, &err);
    tokens_free(&src);
    tokens_free(&dec);
  } else {
    Tokens tok;
    if (!model_tokenize(m, text, SF_MAX_TOKENS, &tok, &err)) return sf_fail(err.msg), NULL;
    t = trace_new(m, &tok, &err);
    tokens_free(&tok);
  }
  if (!t) return sf_fail(err.msg), NULL;
  model_forward(t);
  sf_pass *p = pass_new(w, t);
  if (p) snprintf(p->text, sizeof p->text, "%s", text);
  return p;
}

sf_pass *sf_run_ids(sf_model *w, const int *ids, int n) {
  last_error[0] = 0;
  if (!w || (!ids && n > 0)) return sf_fail("sf_run_ids: no model or no ids"), NULL;
  const Model *m = w->m;
  if (model_is_seq2seq(m))
    return fail_f("sf_run_ids: %s is an encoder-decoder: give its source as text (sf_run)", m->source), NULL;
  if (n < 1 || n > SF_MAX_TOKENS)
    return fail_f("sf_run_ids: %d ids: give 1 to %d token ids", n, SF_MAX_TOKENS), NULL;
  for (int i = 0; i < n; i++)
    if (ids[i] < 0 || ids[i] >= m->vocab.n)
      return fail_f("sf_run_ids: id %d (position %d) is outside the vocabulary of %s: give 0 to %d", ids[i],
                    i + 1, m->source, m->vocab.n - 1),
             NULL;
  Tokens tok = {.n = n};
  tok.ids = malloc(sizeof(int) * (size_t)n);
  tok.words = malloc(sizeof(char *) * (size_t)n);
  tok.unknown = calloc((size_t)n, sizeof(bool));
  if (!tok.ids || !tok.words || !tok.unknown) {
    free(tok.ids), free(tok.words), free(tok.unknown);
    return sf_fail("out of memory"), NULL;
  }
  for (int i = 0; i < n; i++) tok.ids[i] = ids[i], tok.words[i] = m->vocab.words[ids[i]];
  Err err = {0};
  Trace *t = trace_new(m, &tok, &err);
  free(tok.ids), free(tok.words), free(tok.unknown);
  if (!t) return sf_fail(err.msg), NULL;
  model_forward(t);
  sf_pass *p = pass_new(w, t);
  if (!p) return NULL;
  // the sentence the pictures' footers give: the words of the ids
  size_t len = 0;
  for (int i = 0; i < n && len + 2 < sizeof p->text; i++) {
    int k = snprintf(p->text + len, sizeof p->text - len, "%s%s", i ? " " : "", m->vocab.words[ids[i]]);
    if (k < 0) break;
    len += (size_t)k;
  }
  if (len >= sizeof p->text) p->text[sizeof p->text - 1] = 0;
  return p;
}

void sf_pass_free(sf_pass *p) {
  if (!p) return;
  backward_free(p->grad);
  free(p->names);
  trace_free(p->t);
  free(p);
}

int sf_pass_tokens(const sf_pass *p) { return p ? p->t->L : 0; }

const char *sf_pass_token(sf_pass *p, int i) {
  if (!p || i < 0 || i >= p->t->L) return NULL;
  return trace_axis_label(p->t, AXIS_TOKEN, i, p->label, sizeof p->label);
}

int sf_pass_token_id(const sf_pass *p, int i) {
  return p && i >= 0 && i < p->t->L ? p->t->tokens.ids[i] : -1;
}

// ---------------------------------------------------------------- stages
// The list of names: every dumped stage (the trace's activations, in its order), then with a
// backward "loss" and "grad.<stage>" for each stage that has a gradient. Remade after sf_backward.
static bool list_names(sf_pass *p) {
  const Trace *t = p->t;
  free(p->names);
  p->names = calloc((size_t)(2 * t->n + 1), sizeof *p->names);
  if (!p->names) return sf_fail("out of memory");
  int n = 0;
  for (int k = 0; k < t->n; k++)
    if (!t->t[k].is_weight) p->names[n++] = (SfName){.index = k, .grad = false};
  if (p->grad) {
    p->names[n++] = (SfName){.index = -1, .grad = true}; // loss
    for (int k = 0; k < t->n; k++)
      if (!t->t[k].is_weight && p->grad->d[k]) p->names[n++] = (SfName){.index = k, .grad = true};
  }
  for (int i = 0; i < n; i++) {
    SfName *x = &p->names[i];
    if (x->index < 0)
      snprintf(x->name, sizeof x->name, "loss");
    else
      snprintf(x->name, sizeof x->name, "%s%s", x->grad ? "grad." : "", t->t[x->index].name);
  }
  p->n_names = n;
  return true;
}

static const SfName *find_name(const sf_pass *p, const char *name) {
  if (!p || !name) return NULL;
  if (!p->names && !list_names((sf_pass *)p)) return NULL;
  for (int i = 0; i < p->n_names; i++)
    if (!strcmp(p->names[i].name, name)) return &p->names[i];
  return NULL;
}

int sf_stage_count(const sf_pass *p) {
  if (!p || (!p->names && !list_names((sf_pass *)p))) return 0;
  return p->n_names;
}

const char *sf_stage_name(const sf_pass *p, int k) {
  if (k < 0 || k >= sf_stage_count(p)) return NULL;
  return p->names[k].name;
}

static int shape_of(const sf_pass *p, const SfName *x, int shape[3]) {
  if (x->index < 0) {
    shape[0] = 1;
    return 1;
  }
  return trace_dump_shape(&p->t->t[x->index], shape);
}

static bool no_stage(const sf_pass *p, const char *name) {
  return fail_f("no stage \"%s\" in this pass: the names are those of `stepformer dump` (\"O\", \"Z\", "
                "\"l0.A\" ...; \"grad.l0.A\" after sf_backward); sf_stage_name lists them",
                name ? name : "(null)");
}

int sf_stage_shape(const sf_pass *p, const char *name, int shape[3]) {
  const SfName *x = find_name(p, name);
  if (!x) return no_stage(p, name), -1;
  return shape_of(p, x, shape);
}

long sf_stage_size(const sf_pass *p, const char *name) {
  int shape[3];
  int nd = sf_stage_shape(p, name, shape);
  if (nd < 0) return -1;
  long n = 1;
  for (int i = 0; i < nd; i++) n *= shape[i];
  return n;
}

long sf_stage_read(const sf_pass *p, const char *name, float *out, long cap) {
  const SfName *x = find_name(p, name);
  if (!x) return no_stage(p, name), -1;
  int shape[3], nd = shape_of(p, x, shape);
  long n = 1;
  for (int i = 0; i < nd; i++) n *= shape[i];
  if (!out || cap < n) return fail_f("stage \"%s\" holds %ld floats: give room for them", name, n), -1;
  if (x->index < 0)
    out[0] = p->grad->loss;
  else if (x->grad)
    memcpy(out, p->grad->d[x->index], sizeof(float) * (size_t)n);
  else // the dump's bytes: npy_write writes the tensor's data as it is, in its dump shape
    memcpy(out, p->t->t[x->index].data, sizeof(float) * (size_t)n);
  return n;
}

int sf_backward(sf_pass *p, const int *targets, int n_targets, float *loss) {
  last_error[0] = 0;
  if (!p) return sf_fail("sf_backward: no pass"), 0;
  Err err = {0};
  TraceGrad *g = backward_new(p->t, targets, n_targets, &err);
  if (!g) return sf_fail(err.msg), 0;
  backward_run(g);
  backward_free(p->grad);
  p->grad = g;
  if (!list_names(p)) return 0;
  if (loss) *loss = g->loss;
  return 1;
}

// ---------------------------------------------------------------- steps
int sf_step_count(const sf_pass *p) { return p ? p->t->n_steps : 0; }

const char *sf_step_name(const sf_pass *p, int k) {
  if (!p || k < 0 || k >= p->t->n_steps) return NULL;
  return stage_info(p->t->steps[k].kind)->name;
}

int sf_step_layer(const sf_pass *p, int k) {
  if (!p || k < 0 || k >= p->t->n_steps) return -1;
  return p->t->steps[k].layer;
}

const char *sf_step_stage(const sf_pass *p, int k) {
  if (!p || k < 0 || k >= p->t->n_steps || p->t->steps[k].result < 0) return "";
  return p->t->t[p->t->steps[k].result].name;
}

int sf_step_find(const sf_pass *p, const char *name, int layer) {
  if (!p || !name) return sf_fail("sf_step_find: no pass or no name"), -1;
  const Trace *t = p->t;
  for (int k = 0; k < t->n_steps; k++) {
    const TraceStep *s = &t->steps[k];
    if (s->result >= 0 && !strcmp(t->t[s->result].name, name)) return k; // a dump name says its layer
    if (!strcmp(stage_info(s->kind)->name, name) && (s->layer < 0 || s->layer == layer)) return k;
  }
  char list[1024] = "";
  size_t n = 0;
  for (int k = 0; k < t->n_steps && n + 40 < sizeof list; k++) {
    const char *s = stage_info(t->steps[k].kind)->name;
    if (strstr(list, s)) continue;
    n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", s);
  }
  return fail_f("no step \"%s\" in layer %d of this pass: the steps are %s", name, layer, list), -1;
}
