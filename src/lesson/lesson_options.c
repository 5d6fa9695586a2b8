// lesson_options.c -- the {options} at the end of a step heading, the stage names, token specs.
//
//     ## Who does "cat" listen to? {stage=softmax layer=1 head=2 row=cat}
//
// Options are key=value pairs separated by spaces; a value is bare (no spaces, quotes or braces)
// or "double-quoted" (\" and \\ escape). Keys: stage, layer, head, row, col, cell, show, compare, gen,
// expect (claims, facts.h: may be given more than once, and holds claims separated by ;).
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "generate.h" // defines: GEN_MAX_STEPS
#include "lesson_internal.h"
#include "inside.h"  // defines: inside_view_parse
#include "stages.h"  // defines: stage_info, stage_from_name, stage_nearest, stage_name_list
#include "strdist.h" // defines: strdist_nearest

#define KEY_LIST                                                                                             \
  "stage, layer, head, row, col, cell, show, compare, gen, edit, heads-off, expect, reveal, spotlight"

const char *lesson_stage_name(StepKind k) {
  const StageInfo *s = stage_info(k);
  return s ? s->name : "";
}

bool lesson_stage_from_name(const char *name, StepKind *k) { return stage_from_name(name, k); }

const char *lesson_nearest(const char *s, const char *const *names, int n) {
  size_t len = strlen(s);
  return strdist_nearest(s, len, names, n, len > 5 ? 3 : 2, true);
}

bool lesson_token_spec_ok(const char *spec) {
  if (!*spec) return false;
  const char *hash = strrchr(spec, '#');
  if (!hash) return true;
  if (hash == spec || !hash[1]) return false;
  for (const char *p = hash + 1; *p; p++)
    if (!isdigit((unsigned char)*p)) return false;
  return strlen(hash + 1) < 6 && atoi(hash + 1) >= 1;
}

int lesson_token_lookup(const char *spec, const char *const *words, int n) {
  if (!lesson_token_spec_ok(spec)) return -1;
  bool digits = true;
  for (const char *p = spec; *p; p++) digits = digits && isdigit((unsigned char)*p);
  if (digits) {
    if (strlen(spec) > 6) return -1;
    int pos = atoi(spec);
    return pos >= 1 && pos <= n ? pos - 1 : -1;
  }
  const char *hash = strrchr(spec, '#');
  size_t wl = hash ? (size_t)(hash - spec) : strlen(spec);
  int want = hash ? atoi(hash + 1) : 1, seen = 0;
  for (int i = 0; i < n; i++) {
    const char *w = words[i];
    if (strlen(w) != wl) continue;
    size_t k = 0;
    while (k < wl && tolower((unsigned char)spec[k]) == (unsigned char)w[k]) k++;
    if (k == wl && ++seen == want) return i;
  }
  return -1;
}

typedef struct {
  LessonCtx *c;
  LessonStep *s;
  size_t pos, end; // scanning [pos, end) of the input
  bool seen[14];
  bool failed;            // a syntax error: stop reading this heading's options
  bool first;             // reading the first option (a brace in a title, if it fails)
  bool reveal_prediction; // reveal=prediction: only on a prediction stage
  bool stage_refused;     // stage= named no stage: the checks of what goes with a stage wait for it
} Opts;

// Checks a focus token against the sentence's words (when the sentence is known).
static void check_token(Opts *o, size_t off, const char *spec, const char *key) {
  LessonCtx *c = o->c;
  if (!lesson_token_spec_ok(spec)) {
    lesson_error_at(c, off,
                    "bad %s token \"%s\": expected a word of the sentence (cat), its n-th "
                    "occurrence (the#2) or a position (3)",
                    key, spec);
    return;
  }
  if (c->n_words == 0) return;
  // a decoder stage's words are the target's (target:, or written by generate: on): the session
  // looks them up in the decoder's input of the step's generation step
  if ((c->l->target || c->l->generate) && o->s->has_stage && stage_is_after_memory(o->s->stage)) return;
  const char *ws[LESSON_MAX_WORDS];
  for (int i = 0; i < c->n_words; i++) ws[i] = c->words[i];
  if (lesson_token_lookup(spec, ws, c->n_words) >= 0) return;
  char list[400];
  size_t n = 0;
  list[0] = 0;
  for (int i = 0; i < c->n_words && n + 80 < sizeof list; i++)
    n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? " " : "", c->words[i]);
  const char *hash = strrchr(spec, '#'); // the word of "bnak#2" is "bnak"
  char word[TOKEN_MAX_BYTES + 1];
  snprintf(word, sizeof word, "%.*s", (int)(hash ? hash - spec : (long)strlen(spec)), spec);
  const char *near = lesson_nearest(word, ws, c->n_words);
  char hint[TOKEN_MAX_BYTES + 24] = "";
  if (near) snprintf(hint, sizeof hint, " (did you mean %s?)", near);
  lesson_error_at(c, off,
                  "focus token %s=%s is not in the sentence%s (its tokens: %s; write the#2 "
                  "for a second \"the\", or a position 1..%d)",
                  key, spec, hint, list, c->n_words);
}

// expect="CLAIM; CLAIM": each claim parsed (facts.h) and kept; names are checked against a trace
// by `stepformer check`. The offset of a claim's error is that of its value (escapes aside).
static void add_claims(Opts *o, const char *v, size_t voff) {
  LessonStep *s = o->s;
  const char *p = v;
  for (;;) {
    const char *semi = strchr(p, ';');
    size_t n = semi ? (size_t)(semi - p) : strlen(p);
    char one[FACT_TEXT_MAX + 1], why[200];
    if (n >= sizeof one) {
      lesson_error_at(o->c, voff + (size_t)(p - v), "claim too long in expect= (at most %d bytes a claim)",
                      FACT_TEXT_MAX - 1);
    } else {
      memcpy(one, p, n);
      one[n] = 0;
      Fact f;
      if (!facts_parse(&f, one, why, sizeof why)) {
        const char *shown = one;
        while (*shown == ' ') shown++;
        lesson_error_at(o->c, voff + (size_t)(shown - one + p - v), "bad claim in expect=\"%s\": %s", shown,
                        why);
      } else {
        Fact *nf = realloc(s->facts, sizeof *nf * (size_t)(s->n_facts + 1));
        if (!nf) {
          o->c->oom = true;
          return;
        }
        s->facts = nf;
        s->facts[s->n_facts++] = f;
      }
    }
    if (!semi) return;
    p = semi + 1;
  }
}

static void set_string(Opts *o, char **slot, const char *v) {
  free(*slot);
  *slot = lesson_strndup(v, strlen(v));
  if (!*slot) o->c->oom = true;
}

static bool parse_index(const char *v, int *out) {
  if (!*v || strlen(v) > 4) return false;
  for (const char *p = v; *p; p++)
    if (!isdigit((unsigned char)*p)) return false;
  *out = atoi(v);
  return *out >= 1;
}

// edit="SPEC; SPEC" and heads-off=L:H,L:H:uniform (edits.h): kept as written; the model and the
// sentence check them (lesson_check_edits). Here only what needs neither: a value that is there.
static void apply_edit_option(Opts *o, bool edit, const char *v, size_t voff) {
  const char *p = v;
  while (isspace((unsigned char)*p) || *p == ';' || *p == ',') p++;
  if (!*p) {
    lesson_error_at(
        o->c, voff,
        edit ? "empty edit=: expected edit=\"NAME[ROW, COL]=VALUE\" such as edit=\"S2[bank, river]=6\""
             : "empty heads-off=: expected heads-off=LAYER:HEAD such as heads-off=1:2 or 1:2:uniform");
    return;
  }
  set_string(o, edit ? &o->s->edits : &o->s->heads_off, v);
}

// spotlight=row:bank, col:river or cell:bank,river: the kind, then the token(s) as row= and col=
// check them (did you mean ...).
static void apply_spotlight(Opts *o, const char *v, size_t voff) {
  static const char *kinds[] = {"row", "col", "cell"};
  const char *colon = strchr(v, ':');
  char kind[16] = "";
  if (colon && colon - v < (long)sizeof kind) snprintf(kind, sizeof kind, "%.*s", (int)(colon - v), v);
  int k = 0;
  while (k < 3 && strcmp(kinds[k], kind)) k++;
  if (k == 3 || !colon[1]) {
    const char *near = NULL; // "cel" is cell, "column" col: a prefix first, then the nearest name
    for (int q = 0; q < 3 && kind[0] && !near; q++)
      if (!strncmp(kinds[q], kind, strlen(kind)) || !strncmp(kinds[q], kind, strlen(kinds[q])))
        near = kinds[q];
    if (!near && kind[0]) near = lesson_nearest(kind, kinds, 3);
    char hint[48] = "";
    if (near) snprintf(hint, sizeof hint, " (did you mean %s:?)", near);
    lesson_error_at(o->c, voff,
                    "bad value spotlight=%s%s: expected row:TOKEN, col:TOKEN or cell:ROW,COL "
                    "(spotlight=row:bank)",
                    v, hint);
    return;
  }
  const char *a = colon + 1, *comma = strchr(a, ',');
  size_t aoff = voff + (size_t)(a - v);
  if ((k == 2) != (comma != NULL) || (comma && (comma == a || !comma[1] || strchr(comma + 1, ',')))) {
    lesson_error_at(o->c, voff, "bad value spotlight=%s: %s", v,
                    k == 2 ? "expected cell:ROW,COL, two tokens (spotlight=cell:bank,river)"
                           : "expected one token after row: or col: (spotlight=row:bank)");
    return;
  }
  LessonStep *s = o->s;
  s->spot = k + 1;
  if (k == 2) {
    char *row = lesson_strndup(a, (size_t)(comma - a));
    if (!row) {
      o->c->oom = true;
      return;
    }
    check_token(o, aoff, row, "spotlight");
    check_token(o, aoff + (size_t)(comma - a) + 1, comma + 1, "spotlight");
    free(s->spot_row);
    s->spot_row = row;
    set_string(o, &s->spot_col, comma + 1);
    return;
  }
  check_token(o, aoff, a, "spotlight");
  set_string(o, k == 0 ? &s->spot_row : &s->spot_col, a);
}

// Applies key=value (value starts at voff in the input).
static void apply(Opts *o, const char *key, size_t koff, const char *v, size_t voff) {
  static const char *keys[] = {"stage",   "layer", "head", "row",       "col",    "cell",   "show",
                               "compare", "gen",   "edit", "heads-off", "expect", "reveal", "spotlight"};
  enum { N_KEYS = sizeof keys / sizeof keys[0] };
  int k = 0;
  while (k < N_KEYS && strcmp(keys[k], key)) k++;
  if (k == 11) { // expect="CLAIM; CLAIM" may be repeated
    add_claims(o, v, voff);
    return;
  }
  if (k == N_KEYS) {
    const char *near = lesson_nearest(key, keys, N_KEYS);
    char hint[48] = "";
    if (near) snprintf(hint, sizeof hint, " (did you mean %s=?)", near);
    lesson_error_at(o->c, koff, "unknown option \"%s\" in the heading%s; options: " KEY_LIST, key, hint);
    return;
  }
  if (o->seen[k]) {
    lesson_error_at(o->c, koff, "option %s is given twice", key);
    return;
  }
  o->seen[k] = true;
  LessonStep *s = o->s;
  int n;
  switch (k) {
  case 0: // stage
    if (lesson_stage_from_name(v, &s->stage)) {
      s->has_stage = true;
    } else if ((s->inside = inside_view_parse(v)) != INSIDE_NONE) { // a view inside the pass
      s->has_stage = true;
      s->stage = s->inside == INSIDE_LENS || s->inside == INSIDE_SALIENCY ? STEP_PREDICT
                 : s->inside == INSIDE_NEURONS                            ? STEP_FFN_HIDDEN
                 : s->inside == INSIDE_STORED ? STEP_EMBED // where weights come in
                                              : STEP_SOFTMAX;
    } else {
      const char *near = stage_nearest(v);
      char hint[64] = "";
      if (near) snprintf(hint, sizeof hint, " (did you mean \"%s\"?)", near);
      o->stage_refused = true;
      if (near) // the likely fix alone: a list of 30 stages would hide it
        lesson_error_at(o->c, voff, "unknown stage \"%s\"%s", v, hint);
      else
        lesson_error_at(
            o->c, voff,
            "unknown stage \"%s\"; stages: %s; views inside: lens, rollout, headview, saliency, neurons, "
            "kvcache, stored",
            v, stage_name_list());
    }
    return;
  case 1: // layer
    if (parse_index(v, &n))
      s->layer = n - 1;
    else
      lesson_error_at(o->c, voff, "bad value layer=%s: expected a layer number from 1", v);
    return;
  case 2: // head
    if (!strcmp(v, "all"))
      s->head = LESSON_ALL_HEADS;
    else if (parse_index(v, &n))
      s->head = n - 1;
    else
      lesson_error_at(o->c, voff, "bad value head=%s: expected a head number from 1, or all", v);
    return;
  case 3: // row
  case 4: // col
    check_token(o, voff, v, key);
    set_string(o, k == 3 ? &s->row_spec : &s->col_spec, v);
    return;
  case 5: { // cell=ROW,COL
    const char *comma = strchr(v, ',');
    if (!comma || comma == v || !comma[1] || strchr(comma + 1, ',')) {
      lesson_error_at(o->c, voff,
                      "bad value cell=%s: expected cell=ROW,COL, two tokens of the "
                      "sentence (cell=cat,bank)",
                      v);
      return;
    }
    char *row = lesson_strndup(v, (size_t)(comma - v));
    if (!row) {
      o->c->oom = true;
      return;
    }
    check_token(o, voff, row, "cell");
    check_token(o, voff + (size_t)(comma - v) + 1, comma + 1, "cell");
    free(s->row_spec);
    s->row_spec = row;
    set_string(o, &s->col_spec, comma + 1);
    return;
  }
  case 6: // show
    if (!strcmp(v, "q"))
      s->show = SHOW_Q;
    else if (!strcmp(v, "k"))
      s->show = SHOW_K;
    else if (!strcmp(v, "v"))
      s->show = SHOW_V;
    else
      lesson_error_at(o->c, voff, "bad value show=%s: expected q, k or v", v);
    return;
  case 9:  // edit="..."
  case 10: // heads-off=...
    apply_edit_option(o, k == 9, v, voff);
    return;
  case 12: // reveal: what stays hidden until the next click
    if (!strcmp(v, "result") || !strcmp(v, "prediction"))
      s->reveal = REVEAL_RESULT;
    else if (!strcmp(v, "row"))
      s->reveal = REVEAL_ROW;
    else
      lesson_error_at(
          o->c, voff,
          "bad value reveal=%s: expected result (the whole result), row (the focus row) or prediction", v);
    if (!strcmp(v, "prediction")) o->reveal_prediction = true;
    return;
  case 13: // spotlight=row:TOKEN, col:TOKEN, cell:ROW,COL
    apply_spotlight(o, v, voff);
    return;
  case 8: // gen: the generation step (generate: on in the front matter)
    if (parse_index(v, &n) && n <= GEN_MAX_STEPS)
      s->gen = n - 1;
    else
      lesson_error_at(o->c, voff, "bad value gen=%s: expected a generation step from 1 to %d", v,
                      GEN_MAX_STEPS);
    return;
  default: { // compare
    char w[2][TOKEN_MAX_BYTES + 1];
    if (tokenize_words(v, w, 2) == 0)
      lesson_error_at(o->c, voff,
                      "bad value compare=\"%s\": expected a sentence in double "
                      "quotes",
                      v);
    else
      set_string(o, &s->compare, v);
  }
  }
}

// Reads one key=value at o->pos. The value is copied (unescaped) into buf.
static void one_option(Opts *o, char *buf, size_t cap) {
  const char *t = o->c->text;
  size_t kb = o->pos;
  while (o->pos < o->end && (isalnum((unsigned char)t[o->pos]) || t[o->pos] == '_' || t[o->pos] == '-'))
    o->pos++;
  size_t ke = o->pos;
  if (ke == kb || o->pos >= o->end || t[o->pos] != '=') {
    size_t bad = ke == kb ? kb : ke, q = ke;
    while (q < o->end && (t[q] == ' ' || t[q] == '\t')) q++;
    const char *hint = ke > kb && q < o->end && (t[q] == '=' || t[q] == ':')
                           ? t[q] == ':' ? " (write key=value, not key: value)" : " (no spaces around =)"
                       : o->first ? " (a { in a title is written \\{)"
                                  : "";
    lesson_error_at(o->c, bad,
                    "expected key=value such as stage=softmax in the heading's options, found \"%.*s\"%s; "
                    "options: " KEY_LIST,
                    (int)(ke - kb + (ke < o->end)), t + kb, hint);
    o->failed = true;
    return;
  }
  char key[32];
  snprintf(key, sizeof key, "%.*s", (int)(ke - kb < 31 ? ke - kb : 31), t + kb);
  size_t voff = ++o->pos, n = 0;
  if (o->pos < o->end && t[o->pos] == '"') {
    o->pos++;
    while (o->pos < o->end && t[o->pos] != '"') {
      if (t[o->pos] == '\\' && o->pos + 1 < o->end) o->pos++;
      if (n + 1 < cap) buf[n++] = t[o->pos];
      o->pos++;
    }
    if (o->pos >= o->end) {
      lesson_error_at(o->c, voff, "unclosed quote in the value of %s: expected a closing '\"'", key);
      o->failed = true;
      return;
    }
    o->pos++;
  } else {
    while (o->pos < o->end && !isspace((unsigned char)t[o->pos]) && t[o->pos] != '}' && t[o->pos] != '"') {
      if (n + 1 < cap) buf[n++] = t[o->pos];
      o->pos++;
    }
    if (o->pos < o->end && t[o->pos] == '"') {
      lesson_error_at(o->c, o->pos,
                      "a quote inside the value of %s: put the whole value in "
                      "double quotes",
                      key);
      o->failed = true;
      return;
    }
  }
  buf[n] = 0;
  if (strlen(buf) < n) { // a NUL byte inside: not a usable value
    lesson_error_at(o->c, voff, "bad value for %s: it holds a NUL byte", key);
    return;
  }
  if (!n && voff < o->end && t[voff] != '"') {
    lesson_error_at(o->c, voff, "empty value for %s: expected %s=VALUE", key, key);
    return;
  }
  apply(o, key, kb, buf, voff);
  LessonStep *s = o->s; // row and col together name a cell, as cell= does
  s->focus = s->row_spec && s->col_spec ? FOCUS_CELL
             : s->row_spec              ? FOCUS_ROW
             : s->col_spec              ? FOCUS_COL
                                        : FOCUS_NONE;
}

// The focus must have something to highlight: a stage with a matrix, and for a column, a stage
// whose columns are tokens (the keys of scores, mask and softmax).
static void check_focus(LessonCtx *c, const LessonStep *s, size_t open) {
  const char *key = s->row_spec && s->col_spec ? "cell" : s->row_spec ? "row" : "col";
  if (!s->row_spec && !s->col_spec) return;
  if (!s->has_stage) {
    lesson_error_at(c, open,
                    "%s= highlights a token in a stage's matrix, and this step shows none: add "
                    "stage=... (a step without stage= shows only its narration)",
                    key);
    return;
  }
  const char *name = lesson_stage_name(s->stage);
  if (s->stage == STEP_TOKENS) {
    lesson_error_at(c, open,
                    "stage=tokens shows the tokens, not a matrix: %s= has nothing to highlight "
                    "(try stage=onehot or stage=embed)",
                    key);
    return;
  }
  const StageInfo *info = stage_info(s->stage);
  bool keys = info->cols == AXIS_TOKEN || info->cols == AXIS_TGT_TOKEN; // scores, mask, softmax: the keys
  if (s->col_spec && !keys)
    lesson_error_at(c, open,
                    "%s=%s%s%s: the columns of stage=%s are %s, not tokens; col= and cell= go with scores, "
                    "mask and softmax, whose columns are the keys%s%s",
                    key, s->row_spec ? s->row_spec : "", s->row_spec ? "," : "", s->col_spec, name,
                    info->cols == AXIS_VOCAB || info->cols == AXIS_TGT_VOCAB
                        ? "the words of the vocabulary"
                        : "features (numbers of each token's vector)",
                    s->row_spec ? "; write row=" : "", s->row_spec ? s->row_spec : "");
}

void lesson_options_parse(LessonCtx *c, LessonStep *s, size_t b, size_t e, size_t *cut) {
  const char *t = c->text;
  size_t open = e;
  for (size_t p = b; p < e; p++) {
    if (t[p] == '\\') {
      p++;
    } else if (t[p] == '$') { // the braces of a formula in the title are the formula's
      size_t n = p + 1 < e && t[p + 1] == '$' ? 2 : 1, q = p + n;
      while (q + n <= e && (memcmp(t + q, n == 2 ? "$$" : "$", n) || t[q - 1] == '\\')) q++;
      if (q + n <= e) p = q + n - 1;
    } else if (t[p] == '{') {
      open = p;
      break;
    }
  }
  *cut = open;
  if (open >= e) return;
  Opts o = {.c = c, .s = s, .pos = open + 1, .end = e, .first = true};
  char buf[1024];
  while (!o.failed) {
    while (o.pos < e && isspace((unsigned char)t[o.pos])) o.pos++;
    if (o.pos >= e) {
      lesson_error_at(c, open, "unclosed brace: expected '}' at the end of the heading's options");
      return;
    }
    if (t[o.pos] == '}') break;
    one_option(&o, buf, sizeof buf);
    o.first = false;
  }
  if (o.failed) return;
  size_t after = o.pos + 1;
  while (after < e && isspace((unsigned char)t[after])) after++;
  if (after < e)
    lesson_error_at(c, after,
                    "text after the options: the {...} must end the heading (write \\{ "
                    "for a brace in a title)");
  for (int i = 0; i < s->n_facts; i++)
    if (s->facts[i].compare && !s->compare)
      lesson_error_at(c, open, "the claim \"%s\" is measured on a compare= sentence, and this step has none",
                      s->facts[i].text);
  // one mistake, one message: a stage= refused (stage=sofmax) would make every check below report
  // its consequences (no stage: no row=, no expect=, no spotlight=)
  if (o.stage_refused) return;
  if (s->reveal && (!s->has_stage || s->stage == STEP_TOKENS))
    lesson_error_at(c, open,
                    "reveal= hides a part of the stage's result: this step shows no matrix (add stage=...)");
  else if (s->spot && (!s->has_stage || s->stage == STEP_TOKENS))
    lesson_error_at(
        c, open,
        "spotlight= dims all but a part of the stage's result: this step shows no matrix (add stage=...)");
  else if (s->reveal == REVEAL_ROW && !s->row_spec)
    lesson_error_at(c, open, "reveal=row hides the focus row: add row=TOKEN (reveal=row row=bank)");
  else if (o.reveal_prediction && s->stage != STEP_PREDICT && s->stage != STEP_DEC_PREDICT)
    lesson_error_at(c, open, "reveal=prediction goes with stage=predict (elsewhere write reveal=result)");
  if (s->n_facts && !s->has_stage)
    lesson_error_at(c, open, "expect= claims need a model's numbers: add stage=... to this step");
  if (s->show != SHOW_ALL && (!s->has_stage || s->stage != STEP_QKV))
    lesson_error_at(c, open, "show=q|k|v goes with stage=qkv");
  check_focus(c, s, open);
}
