// simfiles.c -- see simfiles.h.
#include "simfiles.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h" // defines: file_write_atomic
#include "npy.h"    // defines: npy_write

static bool write_text(OutDir *od, const char *name, const char *text, size_t len, Err *err) {
  char path[4096];
  return outdir_path(od, name, path, sizeof path, err) && file_write_atomic(path, text, len, err);
}

int simfiles_count(const Sim *s) { return s->n_levels + 3; }

bool simfiles_write(OutDir *od, const Sim *s, Err *err) {
  char path[4096], name[64];
  for (int k = 0; k < s->n_levels; k++) {
    const TraceTensor *m = &s->trace.t[k];
    int shape[2] = {m->rows, m->cols};
    snprintf(name, sizeof name, "%s.npy", m->name);
    if (!outdir_path(od, name, path, sizeof path, err) || !npy_write(path, m->data, 2, shape, err))
      return false;
  }
  int n = s->n_levels;
  if (!outdir_path(od, "sim.line.npy", path, sizeof path, err) || !npy_write(path, s->line, 1, &n, err))
    return false;
  size_t len;
  char *tokens = trace_tokens_lines(s->b, &len);
  if (!tokens) return err_set(err, "out of memory");
  bool ok = write_text(od, "compare_tokens.txt", tokens, len, err);
  free(tokens);
  if (!ok) return false;
  char meta[1024];
  int m = snprintf(meta, sizeof meta, "levels");
  for (int k = 0; k < s->n_levels && m < (int)sizeof meta; k++)
    m += snprintf(meta + m, sizeof meta - (size_t)m, " %s", s->levels[k].name);
  char wa[96] = "-";
  if (s->word_a >= 0) trace_axis_label(&s->trace, AXIS_TOKEN, s->word_a, wa, sizeof wa);
  if (m < (int)sizeof meta)
    m += snprintf(meta + m, sizeof meta - (size_t)m, "\nword %s %d %d\n", wa, s->word_a, s->word_b);
  if (m >= (int)sizeof meta) return err_set(err, "sim.txt: too many levels");
  return write_text(od, "sim.txt", meta, strlen(meta), err);
}
