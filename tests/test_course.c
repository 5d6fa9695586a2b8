// test_course.c -- the course notebook's names translated into the canonical model file (course.h).
//
// For every case of tests/ref/course/cases.txt (tests/gen_course_ref.py: 1-3 blocks, 1-4 heads,
// with and without attention biases, a .pt and a .safetensors, the Sanity naming) course_read
// must give the canonical names with the shapes of model.h, W_Q, W_K, W_V stacked in that order
// into in_proj_weight (compared value by value with the file's own tensors), biases exactly when
// the notebook had them, and the metadata of a pre-norm, learned-position, ReLU classifier.
// Then course_translate on configs that contradict the tensors, and on files of neither naming:
// one line each, naming both sides. Last, a .pt-like file with canonical names takes its metadata
// from the JSON.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "golden_ref.h"  // defines: golden_read_rows
#include "course.h"      // defines: course_read, course_translate
#include "fileio.h"      // defines: file_read_all, path_join
#include "ptfile.h"      // defines: pt_read
#include "safetensors.h" // defines: st_read
#include "stfile.h"      // defines: StFile, st_find, st_meta

typedef struct {
  char name[64], file[64], text[256];
} Case;

// "folder<TAB>file<TAB>sentence" lines (golden_ref.h).
static int read_cases(const char *path, Case *cases, int cap) {
  GoldenRow *rows = calloc((size_t)cap, sizeof *rows);
  int n = rows ? golden_read_rows(path, 3, rows, cap) : 0;
  for (int i = 0; i < n; i++) {
    snprintf(cases[i].name, sizeof cases[i].name, "%.*s", (int)sizeof cases[i].name - 1, rows[i].f[0]);
    snprintf(cases[i].file, sizeof cases[i].file, "%.*s", (int)sizeof cases[i].file - 1, rows[i].f[1]);
    snprintf(cases[i].text, sizeof cases[i].text, "%.*s", (int)sizeof cases[i].text - 1, rows[i].f[2]);
  }
  free(rows);
  return n;
}

static const StTensor *shaped(const StFile *f, const char *cname, const char *name, int ndim, long d0,
                              long d1) {
  const StTensor *t = st_find(f, name);
  CHECK(t != NULL, "%s: no tensor %s", cname, name);
  if (!t) return NULL;
  bool ok = t->ndim == ndim && t->shape[0] == d0 && (ndim == 1 || t->shape[1] == d1);
  CHECK(ok, "%s: %s is [%lld,%lld] ndim %d, expected [%ld,%ld] ndim %d", cname, name, (long long)t->shape[0],
        (long long)t->shape[1], t->ndim, d0, d1, ndim);
  return ok ? t : NULL;
}

static bool same_values(const float *a, const float *b, long n) {
  for (long i = 0; i < n; i++)
    if (a[i] != b[i]) return false;
  return true;
}

static void check_case(const char *dir, const Case *c) {
  char path[4096];
  path_join(path, sizeof path, dir, c->file);
  Err err = {0};
  StFile raw, f;
  bool pt = strstr(c->file, ".pt") != NULL;
  CHECK(pt ? pt_read(&raw, path, &err) : st_read(&raw, path, &err), "%s", err.msg);
  CHECK(course_read(path, &f, &err), "%s: %s", c->name, err.msg);
  if (!f.n) {
    st_free(&raw);
    return;
  }
  const StTensor *e = st_find(&raw, "encoder.tok_embed.weight");
  const StTensor *pos = st_find(&raw, "encoder.pos_embed");
  const StTensor *lin = st_find(&raw, "linear.weight");
  long V = (long)e->shape[0], D = (long)e->shape[1], M = (long)pos->shape[1], C = (long)lin->shape[0];
  int layers = atoi(st_meta(&f, "n_layers"));
  long F = atol(st_meta(&f, "d_ff"));
  CHECK(atol(st_meta(&f, "d_model")) == D, "%s: d_model", c->name);
  CHECK(!strcmp(st_meta(&f, "norm_first"), "1") && !strcmp(st_meta(&f, "activation"), "relu") &&
            !strcmp(st_meta(&f, "pos_encoding"), "learned") && !strcmp(st_meta(&f, "causal"), "0"),
        "%s: a pre-norm ReLU encoder with learned positions", c->name);
  CHECK(!strncmp(st_meta(&f, "vocab"), "<unk>\nthe\ncat", 13), "%s: vocab \"%s\"", c->name,
        st_meta(&f, "vocab"));
  const StTensor *x = shaped(&f, c->name, "embed.weight", 2, V, D);
  CHECK(x && same_values(x->data, e->data, V * D), "%s: embed.weight is encoder.tok_embed.weight", c->name);
  x = shaped(&f, c->name, "pos_embed.weight", 2, M, D);
  CHECK(x && same_values(x->data, pos->data, M * D), "%s: pos_embed.weight is encoder.pos_embed[0]", c->name);
  int counted = 4; // embed, pos_embed, classifier.weight|bias, norm.weight|bias below
  for (int i = 0; i < layers; i++) {
    char n[128], src[128];
    snprintf(n, sizeof n, "encoder.encoder_blocks.%d.mha.WQ.weight", i);
    bool sanity = st_find(&raw, n) != NULL;
    const char *q[4] = {"W_Q", "W_K", "W_V", "W_O"}, *s[4] = {"WQ", "WK", "WV", "linear"};
    snprintf(n, sizeof n, "layers.%d.self_attn.in_proj_weight", i);
    x = shaped(&f, c->name, n, 2, 3 * D, D);
    snprintf(n, sizeof n, "layers.%d.self_attn.in_proj_bias", i);
    const StTensor *b = st_find(&f, n);
    for (int k = 0; k < 4; k++) {
      snprintf(src, sizeof src, "encoder.encoder_blocks.%d.mha.%s.weight", i, sanity ? s[k] : q[k]);
      const StTensor *w = st_find(&raw, src);
      CHECK(w != NULL, "%s: the fixture has %s", c->name, src);
      if (!w) continue;
      if (k < 3)
        CHECK(x && same_values(x->data + k * D * D, w->data, D * D),
              "%s: rows %ld.. of in_proj_weight are %s", c->name, k * D, src);
      snprintf(src, sizeof src, "encoder.encoder_blocks.%d.mha.%s.bias", i, sanity ? s[k] : q[k]);
      const StTensor *wb = st_find(&raw, src);
      if (k < 3) {
        CHECK((b != NULL) == (wb != NULL), "%s: in_proj_bias exactly when %s exists", c->name, src);
        if (b && wb) CHECK(same_values(b->data + k * D, wb->data, D), "%s: in_proj_bias part %d", c->name, k);
      } else {
        snprintf(n, sizeof n, "layers.%d.self_attn.out_proj.bias", i);
        CHECK((st_find(&f, n) != NULL) == (wb != NULL), "%s: %s exactly when %s exists", c->name, n, src);
        counted += wb != NULL;
      }
    }
    counted += 2 + (b != NULL) + 8;
    snprintf(n, sizeof n, "layers.%d.self_attn.out_proj.weight", i);
    shaped(&f, c->name, n, 2, D, D);
    snprintf(n, sizeof n, "layers.%d.linear1.weight", i);
    shaped(&f, c->name, n, 2, F, D);
    snprintf(n, sizeof n, "layers.%d.linear2.weight", i);
    shaped(&f, c->name, n, 2, D, F);
    snprintf(n, sizeof n, "layers.%d.norm2.bias", i);
    x = shaped(&f, c->name, n, 1, D, 0);
    snprintf(src, sizeof src, "encoder.encoder_blocks.%d.residual2.norm.bias", i);
    CHECK(x && same_values(x->data, st_find(&raw, src)->data, D), "%s: %s is %s", c->name, n, src);
  }
  shaped(&f, c->name, "norm.weight", 1, D, 0);
  shaped(&f, c->name, "classifier.weight", 2, C, D);
  shaped(&f, c->name, "classifier.bias", 1, C, 0);
  CHECK(f.n == counted + 2, "%s: %d tensors, expected %d", c->name, f.n, counted + 2);
  printf("  %-20s %d blocks, D=%ld H=%s F=%ld M=%ld C=%ld: %d canonical tensors\n", c->name, layers, D,
         st_meta(&f, "n_heads"), F, M, C, f.n);
  st_free(&f);
  st_free(&raw);
}

// A file of the given tensors (zeros), indexed for st_find, for the error cases.
static void make_file(StFile *f, const char *const *names, const int (*shapes)[3], int n) {
  memset(f, 0, sizeof *f);
  f->tensors = calloc((size_t)n, sizeof(StTensor));
  f->by_name = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; i < n; i++) {
    StTensor *t = &f->tensors[i];
    t->name = strdup(names[i]);
    t->ndim = shapes[i][0];
    t->count = 1;
    for (int k = 0; k < t->ndim; k++) t->count *= t->shape[k] = shapes[i][k + 1];
    t->data = calloc((size_t)t->count, sizeof(float));
    int j = i;
    while (j > 0 && strcmp(f->tensors[f->by_name[j - 1]].name, names[i]) > 0)
      f->by_name[j] = f->by_name[j - 1], j--;
    f->by_name[j] = i;
  }
  f->n = n;
}

// course_read of a large file (st_map_min_bytes = 0 makes every file large): a canonical file stays
// mapped, its F32 tensors read in place; a notebook's is read again as copies, since the translation
// moves and rewrites its tensors. Either way the same tensors as the copying read at the default size.
static void check_mapped(const char *path, bool canonical) {
  StFile a, b;
  Err err = {0};
  CHECK(course_read(path, &a, &err), "%s: %s", path, err.msg);
  size_t min = st_map_min_bytes;
  st_map_min_bytes = 0;
  bool ok = course_read(path, &b, &err);
  st_map_min_bytes = min;
  CHECK(ok, "%s (mapped): %s", path, err.msg);
  if (!ok) return st_free(&a);
  CHECK((b.map != NULL) == canonical && b.map_owner == canonical, "%s: %s", path,
        canonical ? "a canonical file stays mapped" : "a notebook's file is read into copies");
  CHECK(a.n == b.n && a.n_meta == b.n_meta, "%s: %d/%d tensors, %d/%d metadata", path, a.n, b.n, a.n_meta,
        b.n_meta);
  int in_map = 0;
  for (int i = 0; i < a.n && i < b.n; i++) {
    const StTensor *x = &a.tensors[i], *y = st_find(&b, x->name);
    CHECK(y && y->count == x->count && same_values(x->data, y->data, x->count), "%s: tensor %s", path,
          x->name);
    in_map += y && st_mapped(&b, y->data);
  }
  CHECK(canonical ? in_map == b.n : in_map == 0, "%s: %d of %d tensors in the mapping", path, in_map, b.n);
  printf("  mapped read of %s: %d tensors, %d in the mapping\n", path, b.n, in_map);
  st_free(&a), st_free(&b);
}

// course_translate on the fixture's tensors with this config must fail with a line holding a and b.
static void refused(const char *pt, const char *json, const char *a, const char *b) {
  StFile in, out;
  Err err = {0};
  CHECK(pt_read(&in, pt, &err), "%s", err.msg);
  bool ok = course_translate(&in, json, "model.json", "m.pt", &out, &err);
  CHECK(!ok && strstr(err.msg, a) && strstr(err.msg, b) && !strchr(err.msg, '\n'),
        "config %s: got \"%s\", expected a line with \"%s\" and \"%s\"", json, err.msg, a, b);
  printf("  refused: %s\n", err.msg);
  if (ok) st_free(&out);
  st_free(&in);
}

int main(void) {
  const char *root = getenv("SF_TEST_DIR");
  char dir[4096], path[4096];
  snprintf(dir, sizeof dir, "%s/ref/course", root ? root : "tests");
  path_join(path, sizeof path, dir, "cases.txt");
  Case cases[32];
  int n = read_cases(path, cases, 32);
  CHECK(n >= 5, "%d cases", n);
  for (int i = 0; i < n; i++) {
    char cdir[4096];
    path_join(cdir, sizeof cdir, dir, cases[i].name);
    check_case(cdir, &cases[i]);
  }

  char file[4200];
  snprintf(file, sizeof file, "%s/l2-h2-safetensors/model.safetensors", dir);
  check_mapped(file, false);
  snprintf(file, sizeof file, "%s/../cat-bank/model.safetensors", dir);
  check_mapped(file, true);

  // configs that contradict the tensors (l1-h2-nobias: V=11, D=8, M=12, C=2, F=16, one block)
  char pt[4200];
  snprintf(pt, sizeof pt, "%s/l1-h2-nobias/model.pt", dir);
  const char *vocab =
      "\"vocab\": [\"<unk>\",\"the\",\"cat\",\"walks\",\"by\",\"bank\",\"river\",\"money\",\"sleeps\","
      "\"eats\",\"mouse\"]";
  char json[1024];
  snprintf(json, sizeof json, "{\"n_heads\": 3, %s}", vocab);
  refused(pt, json, "n_heads = 3", "d_model = 8");
  refused(pt, "{\"n_heads\": 2, \"vocab\": [\"<unk>\", \"the\"]}", "lists 2 words",
          "encoder.tok_embed.weight [11,8]");
  snprintf(json, sizeof json, "{\"n_heads\": 2, \"d_model\": 16, %s}", vocab);
  refused(pt, json, "d_model = 16", "encoder.tok_embed.weight [11,8] gives 8");
  snprintf(json, sizeof json, "{\"n_heads\": 2, \"max_seq_len\": 64, %s}", vocab);
  refused(pt, json, "max_seq_len = 64", "encoder.pos_embed (max_seq_len 12)");
  snprintf(json, sizeof json, "{\"n_heads\": 2, \"d_ff\": 64, %s}", vocab);
  refused(pt, json, "d_ff = 64", "feed_forward.0.weight (d_ff 16)");
  snprintf(json, sizeof json, "{\"n_heads\": 2, \"n_layers\": 2, %s}", vocab);
  refused(pt, json, "n_layers = 2", "encoder_blocks.0..0");
  snprintf(json, sizeof json, "{\"n_heads\": 2, \"classes\": [\"a\", \"b\", \"c\"], %s}", vocab);
  refused(pt, json, "names 3 classes", "linear.weight [2,8] scores 2");
  snprintf(json, sizeof json, "{%s}", vocab);
  refused(pt, json, "model.json has no \"n_heads\"", "add \"n_heads\"");
  refused(pt, "{\"n_heads\": 2}", "no \"vocab\"", "11 words");
  refused(pt, "{\"n_heads\": 2, ", "model.json is not valid JSON", "n_heads");
  snprintf(json, sizeof json, "{\"n_heads\": 2, \"eps\": -1, %s}", vocab);
  refused(pt, json, "\"eps\"", "between 0 and 1");

  // a tensor of neither naming; one the notebook's model does not hold
  {
    static const char *const names[] = {"fc.weight"};
    static const int shapes[][3] = {{2, 2, 2}};
    StFile in, out;
    Err err = {0};
    make_file(&in, names, shapes, 1);
    CHECK(!course_translate(&in, "{}", NULL, "x.pt", &out, &err) &&
              strstr(err.msg, "\"fc.weight\" is neither") && strstr(err.msg, "encoder.tok_embed.weight") &&
              strstr(err.msg, "embed.weight, layers.N.*"),
          "got \"%s\"", err.msg);
    st_free(&in);
  }
  {
    StFile in, out;
    Err err = {0};
    CHECK(pt_read(&in, pt, &err), "%s", err.msg);
    StFile more;
    const char *names[64];
    int shapes[64][3];
    int k = 0;
    for (int i = 0; i < in.n && k < 63; i++, k++) {
      names[k] = in.tensors[i].name;
      shapes[k][0] = in.tensors[i].ndim;
      for (int d = 0; d < 2; d++) shapes[k][d + 1] = (int)in.tensors[i].shape[d];
      if (in.tensors[i].ndim == 3)
        shapes[k][0] = 2, shapes[k][1] = 12, shapes[k][2] = 8; // pos_embed as [M, D]
    }
    names[k] = "encoder.encoder_blocks.0.mha.dropout.p";
    shapes[k][0] = 1, shapes[k][1] = 1, k++;
    make_file(&more, names, (const int(*)[3])shapes, k);
    snprintf(json, sizeof json, "{\"n_heads\": 2, %s}", vocab);
    CHECK(!course_translate(&more, json, NULL, "x.pt", &out, &err) &&
              strstr(err.msg, "\"encoder.encoder_blocks.0.mha.dropout.p\" is not one") &&
              strstr(err.msg, "Stepformer opens"),
          "got \"%s\"", err.msg);
    printf("  refused: %s\n", err.msg);
    st_free(&more);
    st_free(&in);
  }

  // canonical names from a .pt: the JSON becomes the metadata, d_model, d_ff, n_layers from the shapes
  {
    static const char *const names[] = {"embed.weight", "layers.0.linear1.weight", "layers.1.linear1.weight"};
    static const int shapes[][3] = {{2, 3, 4}, {2, 16, 4}, {2, 16, 4}};
    StFile in, out;
    Err err = {0};
    make_file(&in, names, shapes, 3);
    CHECK(course_translate(
              &in,
              "{\"n_heads\": 2, \"vocab\": [\"<unk>\", \"a\", \"b\"], \"norm_first\": true, \"eps\": 1e-6}",
              NULL, "x.pt", &out, &err),
          "%s", err.msg);
    if (out.n) {
      CHECK(!strcmp(st_meta(&out, "vocab"), "<unk>\na\nb") && !strcmp(st_meta(&out, "n_heads"), "2") &&
                !strcmp(st_meta(&out, "norm_first"), "1") &&
                !strcmp(st_meta(&out, "layer_norm_eps"), "1e-06") && !strcmp(st_meta(&out, "d_model"), "4") &&
                !strcmp(st_meta(&out, "d_ff"), "16") && !strcmp(st_meta(&out, "n_layers"), "2"),
            "canonical metadata");
      CHECK(out.n == 3 && st_find(&out, "layers.1.linear1.weight") && st_find(&out, "embed.weight"),
            "canonical tensors kept");
      st_free(&out);
    }
    st_free(&in);
  }
  return check_exit("test_course");
}
