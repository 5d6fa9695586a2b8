// test_captions.c -- plain-text captions write subscripts the way the tooltip does (issue 31's
// remarks): "L×dₖ", "D×Vₜ", "shapes: Qₕ 6×16", "Aₕ[i, j]", "scⱼ", never the TeX source "L×d_k",
// "V_t", "Q_h", "A_h", "sc_j". A subscript Unicode has no character for (W_c, b_c of the class
// scores) is typeset by the TeX renderer instead. Every text item of every step's picture, of every
// view inside the pass, of the invariants panel's lines and of the stored view of a quantized GGUF
// model is read for a letter followed by "_" and one letter or digit (a one-character TeX
// subscript); a word subscript (W_out, H_kv) is the tooltip's form too (tex_plain) and allowed.
// Every character of those items is a glyph of its face (no missing-glyph box for ₖ, ₜ, ⱼ).
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "trace_util.h"  // defines: trace_sentence
#include "forward.h"     // defines: model_forward
#include "gguf_stored.h" // defines: gguf_stored_view
#include "invariants.h"  // defines: invariants_measure
#include "model_load.h"  // defines: model_load
#include "page.h"        // defines: page_render, PageSpec
#include "text.h"        // defines: text_provided, text_utf8_next
#include "view.h"        // defines: view_render

static int n_items;

// A one-character TeX subscript written raw: "d_k", "V_t" (not "W_out", "sqrt_dk.txt").
static const char *raw_subscript(const char *s) {
  for (const char *p = s; *p; p++)
    if (p > s && p[0] == '_' && (isalpha((unsigned char)p[-1]) || (unsigned char)p[-1] >= 0x80) &&
        isalnum((unsigned char)p[1]) && !isalnum((unsigned char)p[2]) && p[2] != '_')
      return p - 1;
  return NULL;
}

static void check_text(const char *where, FontFace face, const char *text) {
  n_items++;
  const char *raw = raw_subscript(text);
  CHECK(!raw, "%s: \"%s\" writes the TeX subscript \"%.3s\" raw", where, text, raw ? raw : "");
  for (const char *p = text; *p;) {
    uint32_t cp = text_utf8_next(&p);
    if (cp >= 0x2080 && cp <= 0x209C) // the subscript block: a glyph, not the missing-glyph box
      CHECK(text_provided(face, 20, cp), "%s: U+%04X of \"%s\" has no glyph in face %d", where, (unsigned)cp,
            text, (int)face);
    else if (cp == 0x2C7C || cp == 0x1D62 || cp == 0x1D63 || cp == 0x1D64 || cp == 0x1D65)
      CHECK(text_provided(face, 20, cp), "%s: U+%04X of \"%s\" has no glyph in face %d", where, (unsigned)cp,
            text, (int)face);
  }
}

static void check_scene(const char *where, const Scene *s) {
  for (int c = 0; c < s->n; c++)
    if (s->cmds[c].kind == CMD_TEXT && s->cmds[c].text) check_text(where, s->cmds[c].font, s->cmds[c].text);
}

static void render(const char *name, const Trace *t, int st, InsideView inside, const StoredView *stored) {
  Scene s;
  scene_init(&s, 1280, 720, 0);
  ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
  o.inside = inside;
  o.stored = stored;
  ViewLayout lay;
  view_render(&s, t, st, &o, 0, 0, 1280, 720, &lay);
  char where[200];
  snprintf(where, sizeof where, "%s step %d (%s)%s%s", name, st + 1, t->steps[st].name,
           inside ? ", inside " : "", inside ? inside_view_name(inside) : "");
  check_scene(where, &s);
  scene_free(&s);
}

// Step st's page with the invariants panel (the window's I, export --invariants), for head (-1: all).
static void render_page(const char *name, const Trace *t, int st, int head) {
  ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
  o.head = head;
  InvFact f[INV_MAX];
  PageClaim inv[INV_MAX];
  int n = invariants_measure(t, st, head, f, INV_MAX);
  for (int k = 0; k < n; k++) {
    memcpy(inv[k].text, f[k].text, sizeof f[k].text);
    inv[k].state = f[k].state;
    if (!strncmp(f[k].text, "shapes: ", 8)) // its symbols are TeX the panel typesets
      CHECK(strchr(f[k].text, '$') != NULL, "%s: the shapes line typesets its symbols: %s", name, f[k].text);
  }
  PageSpec p = {.trace = t,
                .step = st,
                .view = &o,
                .sentence = "",
                .invariants = inv,
                .n_invariants = n,
                .width = 1280,
                .height = 720};
  Scene s;
  scene_init(&s, 1280, 720, 0);
  ViewLayout lay;
  page_render(&s, &p, &lay);
  char where[200];
  snprintf(where, sizeof where, "%s step %d (%s), head %d, the page with its invariants", name, st + 1,
           t->steps[st].name, head + 1);
  check_scene(where, &s);
  scene_free(&s);
}

// Every step's page with its invariants (all heads and the first), every view inside the pass at
// the last step.
static void check_trace(const char *name, const Trace *t, const StoredView *stored) {
  for (int st = 0; st < t->n_steps; st++) {
    render_page(name, t, st, -1);
    if (page_step_has_heads(t, st)) render_page(name, t, st, 0);
  }
  for (int k = INSIDE_NONE + 1; k < INSIDE_COUNT; k++)
    if (k != INSIDE_STORED || stored) render(name, t, t->n_steps - 1, (InsideView)k, stored);
}

static Trace *load(const char *path, const char *text, const char *target, Model **m) {
  Err err = {0};
  *m = model_load(path, &err);
  if (!*m) {
    fprintf(stderr, "%s: %s\n", path, err.msg);
    exit(1);
  }
  return trace_sentence(*m, text, target, path);
}

int main(void) {
  Err err = {0};
  if (!text_init(&err)) return fprintf(stderr, "%s\n", err.msg), 1;
  const char *dir = check_test_dir();
  char path[1024];
  const struct {
    const char *path, *text, *target;
  } cases[] = {
      {"../assets/models/bank.safetensors", "The cat walks by the bank", NULL},
      {"../assets/models/bank-sense.pt", "She puts money in the bank", NULL}, // the class scores: W_c
      {"ref/seq2seq-post/model.safetensors", "The cat walks by the bank", "le chat marche près de la banque"},
      {"ref/gguf/llama-gqa2.gguf", "the cat walks by the bank", NULL}, // H·dₖ, H_kv·dₖ, the K/V cache
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    snprintf(path, sizeof path, "%s/%s", dir, cases[c].path);
    Model *m;
    Trace *t = load(path, cases[c].text, cases[c].target, &m);
    check_trace(cases[c].path, t, NULL);
    trace_free(t);
    model_free(m);
  }
  // a quantized model's weights as stored: Q4_K's scales scⱼ and mins mⱼ
  snprintf(path, sizeof path, "%s/ref/gguf/llama-wide-q4_k_m.gguf", dir);
  StoredView *v = malloc(sizeof *v);
  StoredPick p = {.tensor = NULL, .which = -1, .block = -1, .weight = -1};
  bool ok = v && gguf_stored_view(path, &p, v, &err);
  CHECK(ok, "%s: %s", path, err.msg);
  if (ok) {
    Model *m;
    Trace *t = load(path, "the cat walks by the bank", NULL, &m);
    render("llama-wide-q4_k_m", t, t->n_steps - 1, INSIDE_STORED, v);
    trace_free(t);
    model_free(m);
  }
  free(v);
  CHECK(n_items > 5000, "%d text items read", n_items);
  return check_exit("test_captions");
}
