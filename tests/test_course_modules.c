// test_course_modules.c -- the course notebooks' own modules (issue 12), opened as torch.save or a
// .safetensors writes them, against PyTorch stage by stage; and their bad inputs, refused in one line.
//
// For every case of tests/ref/course-modules/cases.txt (tests/gen_course_modules_ref.py, from the
// modules of tests/course_modules.py: the per-head MultiHeadAttention of AttentionHeads with
// PositionWiseFeedForward, pre- and post-norm, with and without biases, learned and sinusoidal
// positions, with and without the embedding LayerNorm; the einsum SelfAttention / TransformerBlock
// with a shared d_k×d_k map or D×D maps; 1-4 heads, 1-3 layers, with and without the "encoder."
// prefix) the model opens through model_load, the sentence runs through model_forward, and every
// .npy of the folder equals the trace tensor of its name (golden_ref.h: |c - r| <= 1e-5·max(1, |r|)).
// tokens.txt must match, the embedding LayerNorm's ε must be the module's (1e-12 unless the config
// says); the course notebook's einsum module (√d_k, GELU) is read as it computes, what was assumed
// is said ("course_assumed"), and the tutorial's (√D) carries its note on the rescaled queries.
// Then course_translate on the fixtures' tensors changed in memory: a head missing, a head of
// another shape, heads that do not make D, a config whose n_heads contradicts the shapes or does
// not divide D, a decoder's or a classifier's tensor, a bias where the module has none -- each
// refused in one line naming what is wrong; and the config's pos_encoding and norm_first obeyed.
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "course.h"      // defines: course_translate
#include "fileio.h"      // defines: file_read_all
#include "forward.h"     // defines: model_forward
#include "golden_ref.h"  // defines: golden_read_rows, golden_compare
#include "model.h"       // defines: Model
#include "model_load.h"  // defines: model_load
#include "ptfile.h"      // defines: pt_read
#include "safetensors.h" // defines: st_read
#include "stfile.h"      // defines: StFile, st_find, st_meta, st_index
#include "trace.h"       // defines: Trace, trace_new

static const char *VOCAB =
    "\"vocab\": [\"<unk>\",\"the\",\"cat\",\"walks\",\"by\",\"bank\",\"river\",\"money\","
    "\"sleeps\",\"eats\",\"mouse\"]";

static const char *meta(const Model *m, const char *key) {
  for (int i = 0; i < m->n_meta; i++)
    if (!strcmp(m->meta_keys[i], key)) return m->meta_values[i];
  return NULL;
}

// Opens dir/file, runs text, compares every .npy of dir.
static void run_case(const char *name, const char *dir, const char *file, const char *text) {
  char path[4200];
  CHECK(path_join(path, sizeof path, dir, file), "path too long");
  Err err = {0};
  Model *m = model_load(path, &err);
  CHECK(m != NULL, "%s: %s", name, err.msg);
  if (!m) return;
  bool heads = !strncmp(name, "heads", 5);
  const char *fmt = meta(m, "format");
  CHECK(fmt && !strcmp(fmt, heads ? "course-heads" : "course-einsum"), "%s: format %s", name,
        fmt ? fmt : "none");
  if (m->has_embed_norm) {
    float want = strstr(name, "post-st") ? 1e-5f : 1e-12f; // the config's embed_eps, else the module's
    CHECK(m->embed_norm_eps == want, "%s: embedding LayerNorm eps %g, expected %g", name,
          (double)m->embed_norm_eps, (double)want);
  }
  // the einsum family: the course notebook's own module (-nb-) divides by √d_k and has GELU, said as
  // assumed; the tutorial's (a shared map, or fc_out's bias) divides by √D, carried on Q and noted;
  // a config that says both (-json-) leaves nothing assumed
  bool notebook = strstr(name, "-nb-") || strstr(name, "shared-json"), json = strstr(name, "-json") != NULL;
  bool scaled = !heads && !notebook && m->cfg.H > 1;
  CHECK((meta(m, "course_note") && strstr(meta(m, "course_note"), "sqrt(H)")) == scaled, "%s: the note on Q",
        name);
  if (!heads) {
    const char *as = meta(m, "course_assumed");
    CHECK(json ? !as : as && strstr(as, notebook ? "energy/sqrt(d_k), GELU" : "energy/sqrt(D), ReLU"),
          "%s: what was assumed: %s", name, as ? as : "nothing");
    CHECK(m->cfg.activation == (notebook ? ACT_GELU : ACT_RELU), "%s: activation %s", name,
          model_activation_name(m->cfg.activation));
  }
  Tokens tok;
  CHECK(tokens_from_text(&tok, &m->vocab, text, 0, &err), "%s: tokens", name);
  // tokens.txt: the words PyTorch saw
  char tpath[4200];
  CHECK(path_join(tpath, sizeof tpath, dir, "tokens.txt"), "path too long");
  size_t len;
  char *want = file_read_all(tpath, &len, 1 << 16, &err), *w = want;
  for (int i = 0; want && i < tok.n; i++) {
    char *nl = strchr(w, '\n');
    CHECK(nl != NULL, "%s: tokens.txt has fewer than %d tokens", name, tok.n);
    if (!nl) break;
    *nl = 0;
    CHECK(!strcmp(w, m->vocab.words[tok.ids[i]]), "%s: token %d is %s, PyTorch %s", name, i,
          m->vocab.words[tok.ids[i]], w);
    w = nl + 1;
  }
  free(want);
  Trace *t = trace_new(m, &tok, &err);
  CHECK(t != NULL, "%s: %s", name, err.msg);
  if (t) {
    model_forward(t);
    // the screen says what Q is: the einsum module's queries ÷ √H (its energy/√D), else Z W^q
    const TraceTensor *q = trace_find(t, "l0.Q");
    CHECK(q && (strstr(q->tex, "queries") != NULL) == scaled, "%s: Q's notation %s", name,
          q ? q->tex : "none");
    DIR *d = opendir(dir);
    int nf = 0;
    double worst = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
      size_t n = strlen(e->d_name);
      if (n <= 4 || strcmp(e->d_name + n - 4, ".npy")) continue;
      char stage[80];
      snprintf(stage, sizeof stage, "%.*s", (int)(n - 4), e->d_name);
      double md = golden_compare(name, dir, stage, t);
      if (md > worst) worst = md;
      nf++;
    }
    if (d) closedir(d);
    CHECK(nf >= 4 + 17 * m->cfg.n_layers + m->has_embed_norm, "%s: %d reference files", name, nf);
    printf("  %-24s H=%d %2d stages equal PyTorch, max |diff| %.3g\n", name, m->cfg.H, nf, worst);
    trace_free(t);
  }
  tokens_free(&tok);
  model_free(m);
}

// ---------------------------------------------------------------- refusals
static bool read_any(StFile *f, const char *path, Err *err) {
  size_t n = strlen(path);
  return n > 3 && !strcmp(path + n - 3, ".pt") ? pt_read(f, path, err) : st_read(f, path, err);
}

static StTensor *find_mut(StFile *f, const char *name) { return (StTensor *)st_find(f, name); }

// Renames tensor `from` of f to `to` (and re-indexes f).
static void rename_tensor(StFile *f, const char *from, const char *to) {
  StTensor *x = find_mut(f, from);
  CHECK(x != NULL, "no tensor %s to rename", from);
  if (!x) return;
  free(x->name);
  x->name = strdup(to);
  Err err = {0};
  CHECK(st_index(f, "test", &err), "%s", err.msg);
}

// A smaller shape for `name` (count shrinks: its data stays large enough).
static void shrink(StFile *f, const char *name, int ndim, int64_t d0, int64_t d1) {
  StTensor *x = find_mut(f, name);
  CHECK(x != NULL && d0 * (ndim == 2 ? d1 : 1) <= x->count, "cannot shrink %s", name);
  if (!x) return;
  x->ndim = ndim, x->shape[0] = d0, x->shape[1] = ndim == 2 ? d1 : 0;
  x->count = d0 * (ndim == 2 ? d1 : 1);
}

typedef enum { EDIT_NONE, EDIT_RENAME, EDIT_SHRINK } Edit;

// The fixture file of case `c`, edited, translated with `json`: must fail with a line holding a
// and b (b may be NULL); ok_meta: must succeed instead, with metadata key ok_meta = a.
static void expect(const char *root, const char *c, const char *file, Edit edit, const char *name,
                   const char *to, int64_t d0, int64_t d1, const char *json, const char *a, const char *b,
                   const char *ok_meta) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s/%s", root, c, file);
  StFile in, out;
  Err err = {0};
  CHECK(read_any(&in, path, &err), "%s", err.msg);
  if (edit == EDIT_RENAME) rename_tensor(&in, name, to);
  if (edit == EDIT_SHRINK) shrink(&in, name, d1 ? 2 : 1, d0, d1);
  bool ok = course_translate(&in, json, json ? "model.json" : NULL, "m.pt", &out, &err);
  if (ok_meta) {
    const char *v = ok ? st_meta(&out, ok_meta) : NULL;
    CHECK(ok && v && !strcmp(v, a), "%s: expected %s = %s, got %s (%s)", c, ok_meta, a, v ? v : "none",
          ok ? "" : err.msg);
    printf("  %s: %s = %s\n", c, ok_meta, v ? v : "?");
  } else {
    CHECK(!ok && strstr(err.msg, a) && (!b || strstr(err.msg, b)) && !strchr(err.msg, '\n'),
          "%s: got \"%s\", expected a line with \"%s\" and \"%s\"", c, ok ? "(accepted)" : err.msg, a,
          b ? b : "");
    printf("  refused: %s\n", err.msg);
  }
  if (ok) st_free(&out);
  st_free(&in);
}

static void refusals(const char *root) {
  char j2[1024], j3[1024], j4[1024];
  snprintf(j2, sizeof j2, "{\"n_heads\": 2, %s}", VOCAB);
  snprintf(j3, sizeof j3, "{\"n_heads\": 3, %s}", VOCAB);
  snprintf(j4, sizeof j4, "{\"n_heads\": 4, %s}", VOCAB);
  const char *H2 = "heads-l2-h2", *E3 = "einsum-l2-h3-shared", *EF = "einsum-l2-h4-full-enc";
  // the per-head family (heads-l2-h2: D=8, 2 heads of d_k = 4, biases)
  expect(root, H2, "model.pt", EDIT_RENAME, "layers.1.attention.heads.1.k.weight", "gone", 0, 0, j2,
         "\"layers.1.attention.heads.1.k.weight\" [4,8] is missing", NULL, NULL);
  expect(root, H2, "model.pt", EDIT_SHRINK, "layers.0.attention.heads.1.v.weight", NULL, 3, 8, j2,
         "\"layers.0.attention.heads.1.v.weight\" has shape [3,8], expected [4,8]", "2 heads of d_k = 4",
         NULL);
  expect(root, H2, "model.pt", EDIT_SHRINK, "layers.0.attention.heads.0.q.weight", NULL, 3, 8, j2,
         "2 heads of d_k = 3 rows", "is not D = 8", NULL);
  expect(root, H2, "model.pt", EDIT_NONE, NULL, NULL, 0, 0, j3, "n_heads = 3", "layer 0 has 2 heads", NULL);
  expect(root, H2, "model.pt", EDIT_RENAME, "layers.0.attention.heads.1.v.bias", "gone", 0, 0, j2,
         "heads.1.v.bias\" is missing", "a bias or none", NULL);
  expect(root, H2, "model.pt", EDIT_RENAME, "layers.0.attention.output_linear.bias", "classifier.bias", 0, 0,
         j2, "\"classifier.bias\"", "model.encoder.state_dict()", NULL);
  expect(root, H2, "model.pt", EDIT_RENAME, "layers.1.attention.output_linear.bias",
         "layers.1.attention.extra", 0, 0, j2,
         "\"layers.1.attention.extra\" is not one of the per-head modules", "see README", NULL);
  expect(root, H2, "model.pt", EDIT_NONE, NULL, NULL, 0, 0,
         "{\"n_heads\": 2, \"vocab\": [\"<unk>\", \"the\"]}", "lists 2 words",
         "embeddings.token_embeddings.weight [11,8]", NULL);
  expect(root, H2, "model.pt", EDIT_NONE, NULL, NULL, 0, 0, "{\"n_heads\": 2}", "no \"vocab\"", "11 words",
         NULL);
  char j[1200];
  snprintf(j, sizeof j, "{\"pos_encoding\": \"none\", %s}", VOCAB);
  expect(root, H2, "model.pt", EDIT_NONE, NULL, NULL, 0, 0, j, "pos_encoding \"none\"", "position table",
         NULL);
  snprintf(j, sizeof j, "{\"norm_first\": 0, %s}", VOCAB); // n_heads from the shapes; post-norm asked
  expect(root, H2, "model.pt", EDIT_NONE, NULL, NULL, 0, 0, j, "0", NULL, "norm_first");
  snprintf(j, sizeof j, "{\"pos_encoding\": \"none\", %s}", VOCAB);
  expect(root, "heads-l3-h4-nobias-sin", "model.pt", EDIT_NONE, NULL, NULL, 0, 0, j, "none", NULL,
         "pos_encoding");
  expect(root, "heads-l3-h4-nobias-sin", "model.pt", EDIT_NONE, NULL, NULL, 0, 0, j, "course-heads", NULL,
         "format");
  // the einsum family (einsum-l2-h3-shared: D=12, queries|keys|values [4,4] shared by 3 heads)
  expect(root, E3, "model.pt", EDIT_NONE, NULL, NULL, 0, 0, j2, "n_heads = 2", "H = 12/4 = 3", NULL);
  expect(root, E3, "model.pt", EDIT_RENAME, "layers.1.attention.keys.weight", "gone", 0, 0, j3,
         "\"layers.1.attention.keys.weight\" [4,4] is missing", NULL, NULL);
  expect(root, E3, "model.pt", EDIT_SHRINK, "layers.1.attention.values.weight", NULL, 2, 2, j3,
         "\"layers.1.attention.values.weight\" has shape [2,2], expected [4,4]", NULL, NULL);
  expect(root, E3, "model.pt", EDIT_RENAME, "layers.0.attention.fc_out.bias", "decoder.layers.0.x", 0, 0, j3,
         "decoder", "save model.encoder.state_dict()", NULL);
  expect(root, E3, "model.pt", EDIT_RENAME, "layers.0.attention.fc_out.bias",
         "layers.0.attention.queries.bias", 0, 0, j3, "queries.bias", "has no bias", NULL);
  expect(root, "einsum-l1-h2-sin-st", "model.safetensors", EDIT_SHRINK, "layers.0.attention.queries.weight",
         NULL, 3, 3, NULL, "width 3 does not divide D = 8", NULL, NULL);
  expect(root, E3, "model.pt", EDIT_NONE, NULL, NULL, 0, 0, j3, "3", NULL, "n_heads");
  // D x D maps (einsum-l2-h4-full-enc: D=16): H only from the config
  expect(root, EF, "model.pt", EDIT_NONE, NULL, NULL, 0, 0, j3, "n_heads = 3", "does not divide d_model = 16",
         NULL);
  snprintf(j, sizeof j, "{%s}", VOCAB);
  expect(root, EF, "model.pt", EDIT_NONE, NULL, NULL, 0, 0, j, "no \"n_heads\"", "cannot say it", NULL);
  expect(root, EF, "model.pt", EDIT_RENAME, "encoder.word_embedding.weight", "encoder.gone", 0, 0, j4,
         "\"encoder.word_embedding.weight\" [V, D] is missing", NULL, NULL);
  expect(root, EF, "model.pt", EDIT_NONE, NULL, NULL, 0, 0, j4, "learned", NULL, "pos_encoding");
  // the energy scale and the activation: the config's word, checked
  const char *NB = "einsum-nb-l2-h4";
  snprintf(j, sizeof j, "{\"n_heads\": 4, \"activation\": \"relu\", %s}", VOCAB);
  expect(root, NB, "model.pt", EDIT_NONE, NULL, NULL, 0, 0, j, "relu", NULL, "activation");
  snprintf(j, sizeof j, "{\"n_heads\": 4, \"energy_scale\": \"sqrt_d\", %s}", VOCAB);
  expect(root, NB, "model.pt", EDIT_NONE, NULL, NULL, 0, 0, j, "\"energy_scale\" must be \"head_dim\"",
         "\"embed_size\"", NULL);
  snprintf(j, sizeof j, "{\"n_heads\": 4, \"activation\": \"swish\", %s}", VOCAB);
  expect(root, NB, "model.pt", EDIT_NONE, NULL, NULL, 0, 0, j, "\"activation\" must be \"gelu\"", "relu",
         NULL);
  snprintf(j, sizeof j, "{\"energy_scale\": \"embed_size\", %s}", VOCAB);
  expect(root, H2, "model.pt", EDIT_NONE, NULL, NULL, 0, 0, j, "per-head AttentionHead divides", "head_dim",
         NULL);
}

// model_from_st on the translation of `c` with metadata key = value (replaced or added): must fail
// naming it.
static void bad_meta(const char *root, const char *c, const char *key, const char *value, const char *json) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s/model.pt", root, c);
  StFile in, out;
  Err err = {0};
  CHECK(pt_read(&in, path, &err), "%s", err.msg);
  bool ok = course_translate(&in, json, "model.json", "m.pt", &out, &err);
  CHECK(ok, "%s: %s", c, err.msg);
  st_free(&in);
  if (!ok) return;
  int k = 0;
  while (k < out.n_meta && strcmp(out.keys[k], key)) k++;
  if (k == out.n_meta) out.keys[out.n_meta++] = strdup(key); // course.c leaves room for more keys
  free(out.values[k]);
  out.values[k] = strdup(value);
  Model *m = model_from_st(&out, "m.safetensors", &err);
  CHECK(!m && strstr(err.msg, key) && strstr(err.msg, value), "%s with %s=%s: got \"%s\"", c, key, value,
        m ? "(accepted)" : err.msg);
  printf("  refused: %s\n", err.msg);
  model_free(m);
  st_free(&out);
}

// A module saved alone (zeros of the given names, all [2, 2]): refused, naming a tensor of it.
static void alone(const char *const *names, int n, const char *want) {
  StFile in, out;
  memset(&in, 0, sizeof in);
  in.tensors = calloc((size_t)n, sizeof(StTensor));
  for (int i = 0; i < n; i++) {
    StTensor *x = &in.tensors[i];
    x->name = strdup(names[i]), x->ndim = 2, x->shape[0] = x->shape[1] = 2, x->count = 4;
    x->data = calloc(4, sizeof(float));
  }
  in.n = n;
  Err err = {0};
  CHECK(st_index(&in, "test", &err), "%s", err.msg);
  bool ok = course_translate(&in, "{\"n_heads\": 1}", "model.json", "m.pt", &out, &err);
  CHECK(!ok && strstr(err.msg, want) && strstr(err.msg, "saved alone") && !strchr(err.msg, '\n'),
        "got \"%s\"", ok ? "(accepted)" : err.msg);
  printf("  refused: %s\n", err.msg);
  if (ok) st_free(&out);
  st_free(&in);
}

int main(void) {
  const char *tdir = getenv("SF_TEST_DIR");
  char root[2048], path[4200];
  snprintf(root, sizeof root, "%s/ref/course-modules", tdir ? tdir : "tests");
  snprintf(path, sizeof path, "%s/cases.txt", root);
  GoldenRow rows[16];
  int n = golden_read_rows(path, 3, rows, 16);
  CHECK(n >= 6, "%d cases", n);
  for (int i = 0; i < n; i++) {
    char dir[4200];
    CHECK(path_join(dir, sizeof dir, root, rows[i].f[0]), "path too long");
    run_case(rows[i].f[0], dir, rows[i].f[1], rows[i].f[2]);
  }
  refusals(root);
  static const char *const mha[] = {"heads.0.q.weight", "heads.0.k.weight", "output_linear.weight"};
  static const char *const block[] = {"attention.queries.weight", "attention.fc_out.weight", "norm1.weight"};
  alone(mha, 3, "\"heads.0.q.weight\"");
  alone(block, 3, "\"attention.queries.weight\"");
  // the embedding LayerNorm's ε: a number in (0, 1), and only with that LayerNorm
  char j[1024];
  snprintf(j, sizeof j, "{%s}", VOCAB);
  bad_meta(root, "heads-l3-h4-nobias-sin", "embed_norm_eps", "1e-12", j); // no embeddings.layer_norm
  bad_meta(root, "heads-l2-h2", "embed_norm_eps", "tiny", j);             // replaces its 1e-12
  return check_exit("test_course_modules");
}
