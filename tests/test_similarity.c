// test_similarity.c -- the cosine similarity of two sentences (similarity.h) against numpy, and
// its view and worked equation.
//
// For every case of tests/ref/sim/cases.txt (tests/gen_sim_ref.py: two sentences through a
// course model or a golden nn.TransformerEncoder -- pre- and post-norm, learned and sinusoidal
// positions, with and without a final LayerNorm -- cos computed with numpy from the checked stages): the
// levels' names and order, each [L1, L2] matrix and the line against the reference, the line's word (the last
// one both sentences share, <unk> skipped), the line exactly 1 at X; then a chosen word, a zero vector, the
// trace's sim steps, the view (two matrices, or one line without a second sentence) and a cell's explanation
// (dot product over the two norms, ending with its value).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "numfmt.h"       // defines: numfmt_reproduces
#include "explain.h"      // defines: explain_cell
#include "forward.h"      // defines: model_forward
#include "model_load.h"   // defines: model_load
#include "model_tokens.h" // defines: model_tokenize
#include "npy.h"          // defines: npy_read
#include "similarity.h"   // defines: Sim, sim_new
#include "text.h"         // defines: text_init, text_width
#include "view.h"         // defines: view_render_sim

static Trace *trace_of(const Model *m, const char *text) {
  Tokens tk;
  Err err = {0};
  if (!model_tokenize(m, text, 64, &tk, &err)) return NULL;
  Trace *t = trace_new(m, &tk, &err);
  tokens_free(&tk);
  if (t) model_forward(t);
  return t;
}

// Compares s with the reference folder dir; returns the number of levels checked.
static int check_case(const char *dir, const Sim *s, int row, int col, const char *levels) {
  char path[1400], want[512] = "", *p = want;
  for (int k = 0; k < s->n_levels; k++) p += sprintf(p, "%s%s", k ? " " : "", s->levels[k].name);
  CHECK(!strcmp(want, levels), "%s: levels \"%s\", expected \"%s\"", dir, want, levels);
  CHECK(s->word_a == row && s->word_b == col && s->word_default, "%s: word (%d, %d), expected (%d, %d)", dir,
        s->word_a, s->word_b, row, col);
  for (int k = 0; k < s->n_levels; k++) {
    const TraceTensor *m = &s->trace.t[k];
    snprintf(path, sizeof path, "%s/sim.%s.npy", dir, s->levels[k].name);
    int nd, shape[NPY_MAX_DIMS];
    Err err = {0};
    float *ref = npy_read(path, &nd, shape, &err);
    CHECK(ref != NULL, "%s: %s", path, err.msg);
    if (!ref) continue;
    char name[32];
    snprintf(name, sizeof name, "sim.%s", s->levels[k].name);
    CHECK(!strcmp(m->name, name), "%s: tensor named %s", path, m->name);
    CHECK(nd == 2 && shape[0] == m->rows && shape[1] == m->cols && m->rows == s->a->L && m->cols == s->b->L,
          "%s: shape [%d, %d] against the reference's %d dims [%d, %d]", path, m->rows, m->cols, nd, shape[0],
          shape[1]);
    double worst = 0;
    for (int i = 0; nd == 2 && i < m->rows && i < shape[0]; i++)
      for (int j = 0; j < m->cols && j < shape[1]; j++) {
        double d = fabs((double)m->data[(size_t)i * m->stride + j] - ref[(size_t)i * shape[1] + j]);
        worst = d > worst ? d : worst;
      }
    CHECK(worst <= 2e-5, "%s: max |C - numpy| = %g", path, worst);
    free(ref);
  }
  snprintf(path, sizeof path, "%s/sim.line.npy", dir);
  int nd, shape[NPY_MAX_DIMS];
  Err err = {0};
  float *line = npy_read(path, &nd, shape, &err);
  CHECK(line && nd == 1 && shape[0] == s->n_levels, "%s: %s", path, err.msg);
  for (int k = 0; line && k < s->n_levels && k < shape[0]; k++)
    CHECK_NEAR(s->line[k], line[k], 2e-5, "%s: level %s", path, s->levels[k].name);
  free(line);
  // the same word at the token embeddings: the same row of E twice, cos exactly 1
  CHECK(s->word_a < 0 || s->line[0] == 1.0f, "%s: line at X = %.9g, expected exactly 1", dir, s->line[0]);
  return s->n_levels;
}

// The view: two matrices of T_SIM and a line; without a second sentence, one line of text.
static void check_view(const Trace *a, const Trace *b) {
  Scene sc;
  scene_init(&sc, 1280, 720, 0);
  ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
  ViewLayout lay;
  int step = trace_step_find(a, STEP_SIM, 0);
  CHECK(step >= 0, "the trace has its sim step");
  if (step < 0) return scene_free(&sc);
  view_render_sim(&sc, a, b, step, &o, "a", "b", -1, 0, 0, 1280, 620, &lay);
  CHECK(lay.n_ops == 2 && lay.result == 1, "the view has two matrices (%d), the result the second",
        lay.n_ops);
  for (int k = 0; k < lay.n_ops; k++)
    CHECK(operand_src(&lay.ops[k].op) && operand_src(&lay.ops[k].op)->kind == T_SIM, "operand %d is a T_SIM",
          k);
  int values = 0; // the line's values are written at its points ("1.00" at X)
  for (int c = 0; c < sc.n; c++)
    values += sc.cmds[c].kind == CMD_TEXT && sc.cmds[c].tag && !strncmp(sc.cmds[c].tag, "cos at ", 7);
  const Sim *s = lay.n_ops ? sim_of_trace(lay.ops[0].op.trace) : NULL;
  CHECK(s && values == s->n_levels, "a value at each of the line's points (%d)", values);
  if (s && lay.n_ops == 2) { // a cell's worked equation: the dot product over the two norms
    Explanation ex;
    int i = s->word_a >= 0 ? s->word_a : 0, j = s->word_b >= 0 ? s->word_b : 0;
    explain_cell(a, &lay, 1, i, j, &ex);
    const TraceTensor *m = operand_src(&lay.ops[1].op);
    CHECK(ex.value == m->data[(size_t)i * m->stride + j], "the explanation's value is the cell's");
    CHECK(ex.n_lines == 3 && strstr(ex.lines[0], "\\frac{z_{") && strstr(ex.lines[0], "\\lVert"),
          "a fraction of norms: %s", ex.lines[0]);
    const char *last = strrchr(ex.lines[1], '='); // numfmt.h's digits: 3 or more
    CHECK(last && fabs(strtod(last + 1, NULL) - ex.value) < 0.005 && numfmt_reproduces(ex.lines[1]),
          "the numbers end with the value, reproducibly: %s", ex.lines[1]);
    CHECK(strstr(ex.heading, "bank") != NULL || s->word_a < 0, "the heading names the words: %s", ex.heading);
  }
  // issue 31's remarks: at 1280×720 (the text scale of a 720-line page) the chart's title and the line
  // under it that says how to read it are 12 px at least, and inside the view's area (its place on
  // the page beside the narration: 860 px from x = 410)
  scene_reset(&sc, 1280, 720, 0);
  ViewOptions o7 = o;
  o7.text_scale = 720.0f / 1080.0f;
  view_render_sim(&sc, a, b, step, &o7, "a", "b", -1, 410, 100, 860, 570, &lay);
  int read = 0;
  for (int c = 0; c < sc.n; c++) {
    const Cmd *m = &sc.cmds[c];
    if (m->kind != CMD_TEXT || (strncmp(m->text, "cos(", 4) && !strstr(m->text, "1 = the same direction")))
      continue;
    read++;
    float w = text_width(m->font, m->size, m->text);
    CHECK(m->size >= 12 && m->x >= 410 && m->x + w <= 1270, "the chart's \"%s\": %.1f px, x %.0f … %.0f",
          m->text, m->size, m->x, m->x + w);
  }
  CHECK(read == 2 || !b, "the chart's title and the line under it (%d)", read);
  scene_reset(&sc, 1280, 720, 0);
  view_render_sim(&sc, a, NULL, step, &o, "a", NULL, -1, 0, 0, 1280, 620, &lay);
  int says = 0;
  for (int c = 0; c < sc.n; c++)
    says += sc.cmds[c].kind == CMD_TEXT && strstr(sc.cmds[c].text, "needs a second sentence") != NULL;
  CHECK(lay.n_ops == 0 && says == 1, "without a second sentence: one line says so (%d), no matrix", says);
  scene_free(&sc);
}

int main(void) {
  Err terr = {0};
  if (!text_init(&terr)) return fprintf(stderr, "%s\n", terr.msg), 1; // the chart's text measured
  const char *root = getenv("SF_TEST_DIR");
  char dir[1024], path[4200], line[2048];
  snprintf(dir, sizeof dir, "%s/ref/sim", root ? root : "tests");
  snprintf(path, sizeof path, "%s/cases.txt", dir);
  FILE *f = fopen(path, "r");
  CHECK(f != NULL, "cannot open %s", path);
  int cases = 0;
  while (f && fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    line[strcspn(line, "\n")] = 0;
    char *fld[7];
    int n = 0;
    for (char *p = line; n < 7 && p; n++) {
      fld[n] = p;
      p = strchr(p, '\t');
      if (p) *p++ = 0;
    }
    CHECK(n == 7, "%s: a line of %d fields", path, n);
    if (n != 7) continue;
    char mpath[1200], cdir[1100];
    snprintf(mpath, sizeof mpath, "%s/%s", root ? root : "tests", fld[1]);
    snprintf(cdir, sizeof cdir, "%s/%s", dir, fld[0]);
    Err err = {0};
    Model *m = model_load(mpath, &err);
    CHECK(m != NULL, "%s: %s", mpath, err.msg);
    if (!m) continue;
    Trace *a = trace_of(m, fld[2]), *b = trace_of(m, fld[3]);
    CHECK(a && b, "%s: the two sentences trace", cdir);
    Sim *s = a && b ? sim_new(a, b, &err) : NULL;
    CHECK(s != NULL, "%s: %s", cdir, err.msg);
    if (s) {
      check_case(cdir, s, atoi(fld[4]), atoi(fld[5]), fld[6]);
      CHECK(sim_of_trace(&s->trace) == s && sim_of_trace(a) == NULL, "a Sim's trace is known by its kind");
      // a chosen word: the line follows the cell (row 0, column 0) at every level
      sim_set_word(s, 0, 0);
      CHECK(!s->word_default && s->word_a == 0 && s->word_b == 0, "row 0, column 0 chosen");
      for (int k = 0; k < s->n_levels; k++) CHECK(s->line[k] == s->trace.t[k].data[0], "line at level %d", k);
      sim_set_word(s, -1, 3);
      CHECK(s->word_default, "a missing row falls back to the default word");
      // the steps: one per layer, once
      int before = a->n_steps;
      CHECK(trace_add_sim_steps(a) && a->n_steps == before + m->cfg.n_layers, "a sim step per layer");
      CHECK(trace_add_sim_steps(a) && a->n_steps == before + m->cfg.n_layers, "added once");
      check_view(a, b);
      sim_free(s);
      cases++;
    }
    trace_free(a);
    trace_free(b);
    model_free(m);
  }
  if (f) fclose(f);
  CHECK(cases >= 5, "%d cases checked", cases);
  // a zero vector has similarity 0 (no direction), not NaN
  float zero[4] = {0, 0, 0, 0}, one[4] = {1, 2, 3, 4};
  TraceTensor tz = {.rows = 1, .cols = 4, .heads = 1, .stride = 4, .data = zero};
  TraceTensor to = {.rows = 1, .cols = 4, .heads = 1, .stride = 4, .data = one};
  double dot, na, nb;
  CHECK(sim_cos(&tz, 0, &to, 0, &dot, &na, &nb) == 0.0 && na == 0 && dot == 0, "cos with a zero vector is 0");
  CHECK(sim_cos(&to, 0, &to, 0, NULL, NULL, NULL) == 1.0 ||
            fabs(sim_cos(&to, 0, &to, 0, NULL, NULL, NULL) - 1) < 1e-15,
        "a vector with itself");
  StepKind k;
  CHECK(stage_from_name("sim", &k) && k == STEP_SIM && stage_from_name("cosine similarity", &k) &&
            k == STEP_SIM,
        "the stage's names");
  return check_exit("test_similarity");
}
