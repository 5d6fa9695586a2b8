// test_lib.c -- libstepformer's API on its own (stepformer.h, linked against the shared library):
// every stage of a reference case equals PyTorch's (tests/ref/*, gen_ref.py), the same model from
// bytes in memory gives the same bits, a course notebook's .safetensors opens from bytes, the
// gradients after sf_backward equal gen_grad_ref.py's, the pictures are a PNG of the size asked and
// an SVG document, and every bad input gives one line of error, never a crash.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "stepformer.h"

static char dir[4096];

static void *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *b = malloc(n > 0 ? (size_t)n : 1);
  *len = b ? fread(b, 1, (size_t)n, f) : 0;
  fclose(f);
  return b;
}

// A float32 .npy (version 1 or 2, C order): its floats and shape; NULL when missing.
static float *read_npy(const char *path, int *nd, int shape[4], long *count) {
  size_t len;
  unsigned char *b = read_all(path, &len);
  if (!b || len < 12) return free(b), NULL;
  size_t hl = b[6] == 1 ? (size_t)(b[8] | b[9] << 8) : (size_t)(b[8] | b[9] << 8 | b[10] << 16);
  size_t off = (b[6] == 1 ? 10 : 12) + hl;
  char *h = strndup((char *)b + (b[6] == 1 ? 10 : 12), hl);
  char *s = strstr(h, "'shape': (");
  *nd = 0, *count = 1;
  for (char *p = s ? s + 10 : NULL; p && *p && *p != ')';) {
    if (*p >= '0' && *p <= '9') {
      long v = strtol(p, &p, 10);
      shape[(*nd)++] = (int)v, *count *= v;
    } else
      p++;
  }
  free(h);
  float *out = malloc(sizeof(float) * (size_t)*count);
  if (off + sizeof(float) * (size_t)*count <= len) memcpy(out, b + off, sizeof(float) * (size_t)*count);
  free(b);
  return out;
}

// Every stage file of folder `ref` (tests/ref/...) against the pass, relative tolerance tol.
static int compare_case(const sf_pass *p, const char *ref, const char *prefix, double tol) {
  int compared = 0;
  for (int k = 0; k < sf_stage_count(p); k++) {
    const char *name = sf_stage_name(p, k);
    if (strncmp(name, prefix, strlen(prefix))) continue;
    char path[8192];
    snprintf(path, sizeof path, "%s/%s/%s.npy", dir, ref, name);
    int nd, shape[4], s[3];
    long count;
    float *want = read_npy(path, &nd, shape, &count);
    if (!want) continue; // a stage of Stepformer's own that the reference has no file for
    compared++;
    int snd = sf_stage_shape(p, name, s);
    CHECK(snd == nd && sf_stage_size(p, name) == count, "%s/%s: shape", ref, name);
    if (snd != nd || sf_stage_size(p, name) != count) {
      free(want);
      continue;
    }
    for (int i = 0; i < nd; i++)
      CHECK(s[i] == shape[i], "%s/%s: dimension %d is %d, PyTorch's %d", ref, name, i, s[i], shape[i]);
    float *got = malloc(sizeof(float) * (size_t)count);
    CHECK(sf_stage_read(p, name, got, count) == count, "%s/%s: read", ref, name);
    double worst = 0;
    long at = 0;
    for (long i = 0; i < count; i++) {
      if (isinf(want[i]) || isinf(got[i])) {
        if (got[i] != want[i]) worst = INFINITY, at = i;
        continue;
      }
      double d = fabs((double)got[i] - want[i]) / (1.0 + fabs(want[i]));
      if (d > worst) worst = d, at = i;
    }
    CHECK(worst <= tol, "%s/%s: element %ld is %.9g, PyTorch's %.9g", ref, name, at, got[at], want[at]);
    free(got);
    free(want);
  }
  return compared;
}

static void test_reference(void) {
  char path[8192];
  snprintf(path, sizeof path, "%s/ref/cat-bank/model.safetensors", dir);
  sf_model *m = sf_model_open(path);
  CHECK(m != NULL, "open %s: %s", path, sf_error());
  if (!m) return;
  CHECK(sf_model_dim(m, "D") == 16 && sf_model_dim(m, "H") == 2 && sf_model_dim(m, "layers") == 2, "sizes");
  CHECK(sf_model_dim(m, "nonsense") == -1, "an unknown key");
  CHECK(strstr(sf_model_describe(m), "D=16") != NULL, "describe: %s", sf_model_describe(m));
  sf_pass *p = sf_run(m, "The cat walks by the bank");
  CHECK(p != NULL, "run: %s", sf_error());
  if (!p) return sf_model_free(m);
  CHECK(sf_pass_tokens(p) == 6, "6 tokens, got %d", sf_pass_tokens(p));
  CHECK(!strcmp(sf_pass_token(p, 1), "cat"), "token 1 is %s", sf_pass_token(p, 1));
  int n = compare_case(p, "ref/cat-bank", "", 1e-4);
  CHECK(n >= 38, "compared %d stage files of cat-bank", n);

  // the same sentence as ids, and the same model from its bytes: the same bits
  int ids[16];
  int L = sf_tokenize(m, "The cat walks by the bank", ids, 16);
  CHECK(L == 6 && ids[1] == sf_pass_token_id(p, 1), "tokenize: %d ids", L);
  size_t len;
  void *bytes = read_all(path, &len);
  sf_model *mb = sf_model_open_bytes(bytes, len, NULL, "cat-bank in memory");
  free(bytes); // the library keeps its own copy
  CHECK(mb != NULL, "open bytes: %s", sf_error());
  sf_pass *q = mb ? sf_run_ids(mb, ids, L) : NULL;
  CHECK(q != NULL, "run ids: %s", sf_error());
  for (int k = 0; q && k < sf_stage_count(p); k++) {
    const char *name = sf_stage_name(p, k);
    long c = sf_stage_size(p, name);
    float *a = malloc(sizeof(float) * (size_t)c), *b = malloc(sizeof(float) * (size_t)c);
    CHECK(sf_stage_read(q, name, b, c) == c && sf_stage_read(p, name, a, c) == c, "%s in both", name);
    CHECK(!memcmp(a, b, sizeof(float) * (size_t)c), "%s: ids from bytes give other bits", name);
    free(a), free(b);
  }

  // pictures: a PNG of the size asked, an SVG document, a per-head grid
  int k = sf_step_find(p, "softmax", 1);
  CHECK(k > 0 && sf_step_layer(p, k) == 1 && !strcmp(sf_step_stage(p, k), "l1.A"),
        "softmax of layer 2: %d %s", k, sf_error());
  CHECK(sf_step_find(p, "l0.A", 7) >= 0 && sf_step_heads(p, k) == 2, "by dump name; heads");
  void *png = NULL;
  size_t plen = 0;
  CHECK(sf_render(p, k, 1, 1280, 720, SF_PNG, 0, &png, &plen) == 1, "render png: %s", sf_error());
  const unsigned char *u = png;
  CHECK(plen > 1000 && u && !memcmp(u + 1, "PNG", 3), "a PNG (%zu bytes)", plen);
  if (plen > 24)
    CHECK((u[16] << 24 | u[17] << 16 | u[18] << 8 | u[19]) == 1280 &&
              (u[20] << 24 | u[21] << 16 | u[22] << 8 | u[23]) == 720,
          "1280x720");
  sf_free_bytes(png);
  void *svg = NULL;
  CHECK(sf_render(p, k, -1, 1280, 720, SF_SVG, SF_RENDER_DARK, &svg, &plen) == 1, "render svg: %s",
        sf_error());
  CHECK(svg && strstr((char *)svg, "<svg") && strstr((char *)svg, "</svg>"), "an SVG document");
  sf_free_bytes(svg);
  for (int s = 0; s < sf_step_count(p); s++) { // every step draws
    CHECK(sf_render(p, s, 0, 640, 360, SF_PNG, SF_RENDER_NO_NUMBERS, &png, &plen) == 1, "step %d (%s): %s", s,
          sf_step_name(p, s), sf_error());
    sf_free_bytes(png);
  }
  CHECK(strstr(sf_step_label(p, k, 0), "softmax") != NULL, "label: %s", sf_step_label(p, k, 0));

  // bad input: one line each, nothing returned
  CHECK(sf_render(p, k, 5, 1280, 720, SF_PNG, 0, &png, &plen) == 0 && strstr(sf_error(), "head"),
        "head 5: %s", sf_error());
  CHECK(sf_render(p, 999, 0, 1280, 720, SF_PNG, 0, &png, &plen) == 0 && png == NULL, "step 999");
  CHECK(sf_render(p, k, 0, 10, 10, SF_PNG, 0, &png, &plen) == 0 && strstr(sf_error(), "size"), "10x10: %s",
        sf_error());
  float f;
  CHECK(sf_stage_read(p, "l9.A", &f, 1) == -1 && strstr(sf_error(), "l9.A"), "no stage: %s", sf_error());
  CHECK(sf_stage_read(p, "l0.A", &f, 1) == -1 && strstr(sf_error(), "room"), "too small: %s", sf_error());
  CHECK(sf_step_find(p, "nonsense", 0) == -1 && strstr(sf_error(), "softmax"), "no step: %s", sf_error());
  int bad[2] = {0, 999};
  CHECK(sf_run_ids(m, bad, 2) == NULL && strstr(sf_error(), "999"), "id 999: %s", sf_error());
  CHECK(sf_run(m, "   ") == NULL && sf_error()[0], "empty sentence: %s", sf_error());
  CHECK(sf_backward(p, NULL, 0, &f) == 0 && !strchr(sf_error(), '\n') && sf_error()[0], "no head: %s",
        sf_error());
  sf_pass_free(q);
  sf_model_free(mb);
  sf_pass_free(p);
  sf_model_free(m);
}

// A course notebook's einsum encoder, its config in the .safetensors' __metadata__, from bytes.
static void test_course_bytes(void) {
  char path[8192];
  snprintf(path, sizeof path, "%s/ref/course-modules/einsum-nb-l1-h2-sin-enc-st/model.safetensors", dir);
  size_t len;
  void *bytes = read_all(path, &len);
  CHECK(bytes != NULL, "%s", path);
  if (!bytes) return;
  sf_model *m = sf_model_open_bytes(bytes, len, NULL, "einsum notebook");
  free(bytes);
  CHECK(m != NULL, "course bytes: %s", sf_error());
  sf_pass *p = m ? sf_run(m, "the mouse sleeps by the river bank") : NULL;
  CHECK(p != NULL, "run: %s", sf_error());
  if (p) CHECK(compare_case(p, "ref/course-modules/einsum-nb-l1-h2-sin-enc-st", "", 1e-4) >= 15, "compared");
  sf_pass_free(p);
  sf_model_free(m);
  unsigned char junk[64] = {1, 2, 3};
  CHECK(sf_model_open_bytes(junk, sizeof junk, NULL, "junk") == NULL && strstr(sf_error(), "junk"),
        "junk: %s", sf_error());
  CHECK(sf_model_open("/nonexistent/model.safetensors") == NULL && strstr(sf_error(), "nonexistent"), "%s",
        sf_error());
}

// One training step's gradients against gen_grad_ref.py's (tests/ref/grad/post-relu-1).
static void test_backward(void) {
  char path[8192];
  snprintf(path, sizeof path, "%s/ref/grad/post-relu-1/model.safetensors", dir);
  sf_model *m = sf_model_open(path);
  CHECK(m != NULL, "%s: %s", path, sf_error());
  sf_pass *p = m ? sf_run(m, "The cat walks by the bank") : NULL;
  float loss = NAN;
  CHECK(p && sf_backward(p, NULL, 0, &loss) == 1, "backward: %s", sf_error());
  if (p) {
    float got;
    CHECK(sf_stage_read(p, "loss", &got, 1) == 1 && got == loss && isfinite(loss), "loss %g", loss);
    CHECK(compare_case(p, "ref/grad/post-relu-1", "grad.", 1e-4) >= 20, "compared the gradients");
  }
  sf_pass_free(p);
  sf_model_free(m);
}

int main(void) {
  const char *t = getenv("SF_TEST_DIR");
  snprintf(dir, sizeof dir, "%s", t ? t : "tests");
  CHECK(sf_api_version() == SF_API_VERSION, "the library's API version %d, the header's %d", sf_api_version(),
        SF_API_VERSION);
  CHECK(sf_version()[0] != 0, "version");
  test_reference();
  test_course_bytes();
  test_backward();
  return check_exit("test_lib");
}
