// test_notation.c -- the notation agrees with itself on every slide (issue 31, group 7).
//
// README.md's "Notation" table (symbol → meaning → where it appears) is held against every view:
// for the post-norm, pre-norm, causal, course-like, GPT-2-like and BERT-like encoders and the two
// encoder-decoders of tests/ref, every tensor's symbol, and every symbol drawn above a matrix of
// every step's picture (head numbers read as h: Q_{2} is Q_h), must be a row of the table. And the
// slips the teacher's dry run found must not come back: a pre-norm model's projections multiply
// LN_1(Z) in the header as in the picture; no picture reads "Z + P = Z" (a result named as one of
// its operands); the similarity step does not call OE "X"; no ASCII "sqrt(" in a header; the
// layer output of a pre-norm model is written out, not "Z + … + FFN(x)". A lesson's narration writes
// the positional encoding as the posenc header does, row i for token x_i at position i - 1 and
// columns from 1 (cat-bank's narration kept p_{i,2k} = sin(i/10000^{2k/D}) under a header of
// p_{i,2k+1} = sin((i-1)/10000^{2k/D})).
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "trace_util.h" // defines: trace_sentence
#include "forward.h"
#include "model_load.h" // defines: model_load
#include "similarity.h" // defines: Sim, sim_new, sim_free
#include "view.h"

#define MAX_SYMS 256
static char table[MAX_SYMS][96];
static int n_table;
static bool used[MAX_SYMS];

// README's table: the rows after "## Notation" whose first cell is $TeX$.
static void read_table(void) {
  char path[1024];
  snprintf(path, sizeof path, "%s/../README.md", check_test_dir());
  FILE *f = fopen(path, "r");
  CHECK(f != NULL, "cannot open %s", path);
  if (!f) exit(1);
  char line[2048];
  bool in = false;
  while (fgets(line, sizeof line, f)) {
    if (!strncmp(line, "## ", 3)) in = !strncmp(line, "## Notation", 11);
    if (!in || strncmp(line, "| $", 3)) continue;
    char *a = line + 3, *b = strstr(a, " | "); // the first cell, when it is all formulas
    if (!b || b[-1] != '$' || n_table >= MAX_SYMS) continue;
    b--;
    // a cell may name several spellings of one symbol: "$Q_h$, $Q$"
    *b = 0;
    for (char *s = a; s && n_table < MAX_SYMS;) {
      char *next = strstr(s, "$, $");
      if (next) *next = 0;
      size_t len = strlen(s) < sizeof table[0] - 1 ? strlen(s) : sizeof table[0] - 1;
      memcpy(table[n_table], s, len), table[n_table++][len] = 0;
      s = next ? next + 4 : NULL;
    }
  }
  fclose(f);
  CHECK(n_table > 20, "README's Notation table has %d symbols", n_table);
}

// s with head numbers as h: "Q_{2}" → "Q_h", "A^c_{1}" → "A^c_h"; layer-free otherwise.
static void normalize(const char *s, char *out, size_t cap) {
  size_t n = 0;
  for (const char *p = s; *p && n + 4 < cap; p++) {
    if (p[0] == '_' && p[1] == '{' && p[2] >= '1' && p[2] <= '9') {
      const char *q = p + 2;
      while (*q >= '0' && *q <= '9') q++;
      if (*q == '}') {
        out[n++] = '_', out[n++] = 'h';
        p = q;
        continue;
      }
    }
    out[n++] = *p;
  }
  out[n] = 0;
  // a head of a symbol with a script: "{V^c}_h" is V^c_h, "{\mathrm{head}}_h" is \mathrm{head}_h
  char *close = out[0] == '{' ? strstr(out, "}_h") : NULL;
  if (close && !memchr(out, '^', (size_t)(close - out)) && !memchr(out, '_', (size_t)(close - out))) {
    memmove(close, close + 1, strlen(close + 1) + 1);
    memmove(out, out + 1, strlen(out + 1) + 1);
  }
}

static void in_table(const char *where, const char *sym) {
  if (!sym || !sym[0]) return;
  char s[128];
  normalize(sym, s, sizeof s);
  for (int k = 0; k < n_table; k++)
    if (!strcmp(table[k], s)) {
      used[k] = true;
      return;
    }
  CHECK(false, "%s: the symbol $%s$ is not in README's Notation table", where, s);
}

static const char *const FORBIDDEN[] = {"sqrt(", "X = OE", "W^{q}_c", "W^q_c", "Z + \\ldots", "Y + \\ldots"};

static void check_trace(const char *name, Trace *t) {
  for (int k = 0; k < t->n; k++) {
    const TraceTensor *x = &t->t[k];
    in_table(name, x->symbol);
    for (size_t f = 0; f < sizeof FORBIDDEN / sizeof *FORBIDDEN; f++)
      CHECK(!x->tex || !strstr(x->tex, FORBIDDEN[f]), "%s: %s's header has \"%s\": %s", name, x->name,
            FORBIDDEN[f], x->tex);
    // a pre-norm model's projections multiply LN_1 of their input, in the header as in the picture
    if (t->cfg.norm_first && x->kind == T_PROJ && strchr("QKV", x->name[strlen(x->name) - 1]) &&
        !strstr(x->name, ".c"))
      CHECK(x->tex && strstr(x->tex, "\\mathrm{LN}_1("), "%s: pre-norm %s: %s", name, x->name, x->tex);
  }
  for (int st = 0; st < t->n_steps; st++) {
    ViewLayout lay;
    Scene s;
    scene_init(&s, 1280, 720, 0);
    ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
    view_render(&s, t, st, &o, 0, 0, 1280, 720, &lay);
    char where[160];
    snprintf(where, sizeof where, "%s step %d (%s)", name, st + 1, t->steps[st].name);
    for (int k = 0; k < lay.n_ops; k++) {
      in_table(where, lay.ops[k].symbol);
      // a result is never named as one of its operands ("Z + P = Z")
      if (k == lay.result)
        for (int q = 0; q < lay.n_ops; q++)
          CHECK(q == k || !lay.ops[q].symbol || !lay.ops[k].symbol ||
                    strcmp(lay.ops[q].symbol, lay.ops[k].symbol) || lay.ops[q].op.minus_trace ||
                    lay.ops[k].op.trace != lay.ops[q].op.trace,
                "%s: the result and an operand are both $%s$", where, lay.ops[k].symbol);
    }
    for (int c = 0; c < s.n; c++)
      if (s.cmds[c].kind == CMD_TEXT && s.cmds[c].text)
        for (size_t f = 0; f < sizeof FORBIDDEN / sizeof *FORBIDDEN; f++)
          CHECK(!strstr(s.cmds[c].text, FORBIDDEN[f]), "%s: drawn text has \"%s\": %s", where, FORBIDDEN[f],
                s.cmds[c].text);
    scene_free(&s);
  }
}

// Every shipped lesson's positional-encoding formulas (a line with "10000^{2k") count as the header
// does: p_{i,2k+1} and p_{i,2k+2} of (i-1), never the 0-based p_{i,2k} of i.
static void check_lessons_posenc(void) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/../lessons", check_test_dir());
  DIR *d = opendir(dir);
  CHECK(d != NULL, "cannot open %s", dir);
  if (!d) return;
  int n_formulas = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".md")) continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    char line[4096], flat[4096];
    for (int ln = 1; fgets(line, sizeof line, f); ln++) {
      if (!strstr(line, "10000^{2k") || !strstr(line, "p_{i")) continue;
      size_t n = 0; // the line without spaces and thin spaces ("\,")
      for (const char *c = line; *c && n + 1 < sizeof flat; c++) {
        if (c[0] == '\\' && c[1] == ',') {
          c++;
          continue;
        }
        if (*c != ' ' && *c != '\n') flat[n++] = *c;
      }
      flat[n] = 0;
      n_formulas++;
      CHECK(!strstr(flat, "p_{i,2k}") && !strstr(flat, "{i}{10000"),
            "%s:%d: the positional encoding counts from 0 where the posenc header writes p_{i,2k+1} = "
            "sin((i-1)/10000^{2k/D}): %s",
            e->d_name, ln, line);
      CHECK(strstr(flat, "i-1"),
            "%s:%d: the positional encoding's position is i - 1 (row i is token x_i): %s", e->d_name, ln,
            line);
    }
    fclose(f);
  }
  closedir(d);
  CHECK(n_formulas >= 2, "the lessons write the positional encoding %d times (cat-bank, positions-layernorm)",
        n_formulas);
}

static Trace *load(const char *ref, const char *text, const char *target, bool causal, Model **m) {
  char path[1024];
  if (!strcmp(ref, "bank"))
    snprintf(path, sizeof path, "%s/../assets/models/bank.safetensors", check_test_dir());
  else
    snprintf(path, sizeof path, "%s/ref/%s/model.safetensors", check_test_dir(), ref);
  Err err = {0};
  *m = model_load(path, &err);
  if (!*m) {
    fprintf(stderr, "%s\n", err.msg);
    exit(1);
  }
  if (causal) (*m)->cfg.causal = true;
  return trace_sentence(*m, text, target, path);
}

int main(void) {
  Err err = {0};
  if (!text_init(&err)) return fprintf(stderr, "%s\n", err.msg), 1;
  read_table();
  check_lessons_posenc();
  const char *cases[][4] = {
      {"cat-bank", "The cat walks by the bank", NULL, ""},
      {"gelu-prenorm", "The cat sleeps by the river bank.", NULL, ""},
      {"causal", "the cat eats the mouse", NULL, "causal"},
      {"bank", "The cat walks by the bank", NULL, ""},
      {"ext/gpt2-like", "The cat walks by the river bank", NULL, ""},
      {"ext/bert-like", "the mouse eats by the money bank", NULL, ""},
      {"ext/course-like", "the cat sleeps by the bank", NULL, ""},
      {"seq2seq-post", "The cat walks by the bank", "le chat marche près de la banque", ""},
      {"seq2seq-pre-gelu", "She puts money in the bank.", "elle met argent dans la banque", ""},
  };
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    Model *m;
    Trace *t = load(cases[c][0], cases[c][1], cases[c][2], cases[c][3][0] != 0, &m);
    check_trace(cases[c][0], t);
    trace_free(t);
    model_free(m);
  }
  // the similarity step names its levels as step 4 did: OE, then Z = OE + P
  {
    Model *m;
    Trace *a = load("bank", "The cat walks by the bank", NULL, false, &m);
    Tokens tb;
    CHECK(tokens_from_text(&tb, &m->vocab, "She puts money in the bank", 0, &err), "%s", err.msg);
    Trace *b = trace_new(m, &tb, &err);
    tokens_free(&tb);
    model_forward(b);
    Sim *sim = sim_new(a, b, &err);
    CHECK(sim != NULL, "%s", err.msg);
    for (int k = 0; sim && k < sim->n_levels; k++)
      CHECK(strncmp(sim->levels[k].label, "X", 1), "similarity level %d is called \"%s\"", k,
            sim->levels[k].label);
    sim_free(sim);
    trace_free(b);
    trace_free(a);
    model_free(m);
  }
  for (int k = 0; k < n_table; k++) // every row of the table is a symbol some view shows
    CHECK(used[k], "README's Notation table lists $%s$, which no view shows", table[k]);
  return check_exit("test_notation");
}
