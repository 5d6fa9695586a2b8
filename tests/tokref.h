// tokref.h -- reads the tokenizers' reference files (tests/ref/gpt2/ref_ids.txt, ref/bert/ref_ids.txt,
// written by tests/gen_tokenizer_ref.js): one sentence a line, "escaped text<TAB>id id id", with
// \\ \n \r \t and \xHH escaped; '#' starts a comment line.
//
//     TokRef r;
//     if (tokref_load(&r, path)) for (int i = 0; i < r.n; i++) use(r.text[i], r.len[i], r.ids[i],
//     r.n_ids[i]); tokref_free(&r);
#ifndef SF_TEST_TOKREF_H
#define SF_TEST_TOKREF_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int n;
  char **text; // [n] unescaped sentences (NUL added; they may hold a NUL: use len)
  size_t *len; // [n]
  int **ids;   // [n] reference ids
  int *n_ids;  // [n]
} TokRef;

static int tokref_hex(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

// Reads path; returns 0 (with a message on stderr) when it cannot be read or a line is malformed.
static int tokref_load(TokRef *r, const char *path) {
  memset(r, 0, sizeof *r);
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    fprintf(stderr, "tokref: cannot open %s\n", path);
    return 0;
  }
  static char line[1 << 16];
  int cap = 0, lineno = 0;
  while (fgets(line, sizeof line, fp)) {
    lineno++;
    size_t n = strlen(line);
    if (n && line[n - 1] == '\n') line[--n] = 0;
    if (line[0] == '#') continue;
    char *tab = strchr(line, '\t');
    if (!tab) {
      fprintf(stderr, "tokref: %s:%d: no tab\n", path, lineno);
      fclose(fp);
      return 0;
    }
    if (r->n == cap) {
      cap = cap ? 2 * cap : 512;
      r->text = realloc(r->text, (size_t)cap * sizeof *r->text);
      r->len = realloc(r->len, (size_t)cap * sizeof *r->len);
      r->ids = realloc(r->ids, (size_t)cap * sizeof *r->ids);
      r->n_ids = realloc(r->n_ids, (size_t)cap * sizeof *r->n_ids);
    }
    char *t = malloc((size_t)(tab - line) + 1);
    size_t k = 0;
    for (char *p = line; p < tab; p++) {
      if (*p != '\\') {
        t[k++] = *p;
        continue;
      }
      p++;
      if (*p == 'n')
        t[k++] = '\n';
      else if (*p == 'r')
        t[k++] = '\r';
      else if (*p == 't')
        t[k++] = '\t';
      else if (*p == 'x' && p + 2 < tab)
        t[k++] = (char)(tokref_hex(p[1]) * 16 + tokref_hex(p[2])), p += 2;
      else
        t[k++] = *p;
    }
    t[k] = 0;
    int *ids = malloc((strlen(tab) / 2 + 1) * sizeof *ids), m = 0;
    for (char *p = tab + 1, *end; *p; p = end) {
      long v = strtol(p, &end, 10);
      if (end == p) break;
      ids[m++] = (int)v;
    }
    r->text[r->n] = t, r->len[r->n] = k, r->ids[r->n] = ids, r->n_ids[r->n] = m;
    r->n++;
  }
  fclose(fp);
  return r->n > 0;
}

static void tokref_free(TokRef *r) {
  for (int i = 0; i < r->n; i++) free(r->text[i]), free(r->ids[i]);
  free(r->text), free(r->len), free(r->ids), free(r->n_ids);
  memset(r, 0, sizeof *r);
}

#endif
