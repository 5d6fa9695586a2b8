// fuzz_course.c -- libFuzzer target for the course notebook's loader: NAME.json and the mapping of
// the notebook's tensor names onto the canonical ones (course_translate, course.h).
//
// An input is text: lines "NAME D0 D1 ..." give tensors (zeros, at most 4 dimensions of at most
// 64, 512 tensors), lines "@KEY=VALUE" metadata (a '|' in VALUE stands for a newline), and a line
// "---" ends them: what follows is the JSON config. Without "---" the config comes from the
// metadata, as for a .safetensors. A rejected input must come with one line that starts with the
// source's name and leave the output empty; an accepted one must hold tensors whose count is the
// product of their shape, found by st_find, and, for the notebook's names and its modules'
// (course_modules.c), in_proj_weight [3D, D] in every layer with D the d_model of the metadata, a
// position table exactly when pos_encoding is learned, a classifier only for the notebook's model.
// The seeds in tests/fuzz/corpus/course are written by tests/gen_course_ref.py from its cases
// (and modules-*.txt by tests/gen_course_modules_ref.py).
//
//   build-fuzz/tests/fuzz_course /tmp/corpus-course tests/fuzz/corpus/course -runs=300000 -seed=1
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "course.h" // defines: course_translate
#include "stfile.h" // defines: StFile, st_find, st_meta, st_free

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_course: broken promise: %s\n", #x);                                              \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

#define MAX_T 512
#define MAX_M 32

static int by_name_cmp_base(const StFile *f, int a, int b) {
  return strcmp(f->tensors[a].name, f->tensors[b].name);
}

// Builds f from the tensor and metadata lines; returns where the JSON starts (or NULL).
static const char *parse(StFile *f, char *text) {
  memset(f, 0, sizeof *f);
  f->tensors = calloc(MAX_T, sizeof(StTensor));
  f->by_name = calloc(MAX_T, sizeof(int));
  f->keys = calloc(MAX_M, sizeof(char *));
  f->values = calloc(MAX_M, sizeof(char *));
  for (char *line = text, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = 0;
    if (!strcmp(line, "---")) return next ? next : "";
    if (line[0] == '@') {
      char *eq = strchr(line, '=');
      if (!eq || f->n_meta >= MAX_M) continue;
      *eq = 0;
      for (char *p = eq + 1; *p; p++)
        if (*p == '|') *p = '\n';
      f->keys[f->n_meta] = strdup(line + 1);
      f->values[f->n_meta] = strdup(eq + 1);
      f->n_meta++;
      continue;
    }
    char *name = strtok(line, " ");
    if (!name || f->n >= MAX_T) continue;
    StTensor *t = &f->tensors[f->n];
    memset(t, 0, sizeof *t); // a line skipped below may have filled it
    t->count = 1;
    for (char *d; t->ndim < ST_MAX_DIMS && (d = strtok(NULL, " "));) {
      long v = strtol(d, NULL, 10);
      if (v < 0) v = 0;
      if (v > 64) v = 64;
      t->shape[t->ndim++] = v;
      t->count *= v;
    }
    bool dup = false;
    for (int i = 0; i < f->n; i++) dup |= !strcmp(f->tensors[i].name, name);
    if (dup) continue;
    t->name = strdup(name);
    t->data = t->count ? calloc((size_t)t->count, sizeof(float)) : NULL;
    int j = f->n;
    while (j > 0 && strcmp(f->tensors[f->by_name[j - 1]].name, name) > 0)
      f->by_name[j] = f->by_name[j - 1], j--;
    f->by_name[j] = f->n++;
  }
  return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = 0;
  StFile in, out;
  const char *json = parse(&in, text);
  bool notebook = course_is_notebook(&in); // else a canonical file, copied through with its metadata
  Err err = {0};
  bool ok = course_translate(&in, json, json ? "model.json" : NULL, "<fuzz input>", &out, &err);
  if (!ok) {
    PROMISE(err.msg[0] != 0 && strchr(err.msg, '\n') == NULL);
    PROMISE(!strncmp(err.msg, "<fuzz input>: ", 14));
    PROMISE(out.n == 0 && out.tensors == NULL && out.by_name == NULL && out.n_meta == 0);
  } else {
    for (int i = 0; i < out.n; i++) {
      const StTensor *t = &out.tensors[i];
      int64_t count = 1;
      for (int k = 0; k < t->ndim; k++) count *= t->shape[k];
      PROMISE(count == t->count && (count == 0 || t->data != NULL));
      PROMISE(st_find(&out, t->name) == t);
      if (i) PROMISE(by_name_cmp_base(&out, out.by_name[i - 1], out.by_name[i]) < 0);
    }
    const char *fmt = st_meta(&out, "format");
    // A notebook's file translated: the notebook's Transformer, or its modules (course-heads|einsum).
    // (A canonical file's "format" is whatever its config says: model_from_st checks it later.)
    if (notebook && fmt && !strncmp(fmt, "course", 6)) {
      long D = strtol(st_meta(&out, "d_model"), NULL, 10), L = strtol(st_meta(&out, "n_layers"), NULL, 10);
      const char *pe = st_meta(&out, "pos_encoding");
      bool learned = pe && !strcmp(pe, "learned");
      PROMISE(D > 0 && L > 0 && st_find(&out, "embed.weight") &&
              learned == (st_find(&out, "pos_embed.weight") != NULL));
      for (long l = 0; l < L; l++) {
        char n[64];
        snprintf(n, sizeof n, "layers.%ld.self_attn.in_proj_weight", l);
        const StTensor *w = st_find(&out, n);
        PROMISE(w && w->ndim == 2 && w->shape[0] == 3 * D && w->shape[1] == D);
      }
      PROMISE(st_meta(&out, "vocab") &&
              (st_find(&out, "classifier.weight") != NULL) == !strcmp(fmt, "course"));
    }
    st_free(&out);
  }
  st_free(&in);
  free(text);
  return 0;
}
