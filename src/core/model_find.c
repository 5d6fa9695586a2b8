// model_find.c -- see model_find.h.
#include "model_find.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef SF_SOURCE_DIR
#define SF_SOURCE_DIR "."
#endif

bool model_find_shipped(const char *near, char *out, size_t cap) {
  const char *env = getenv("SF_SOURCE_DIR");
  char cand[4][4300];
  int n = 0;
  if (env && *env) snprintf(cand[n++], sizeof cand[0], "%s/" MODEL_FIND_SHIPPED, env);
  if (near && *near) snprintf(cand[n++], sizeof cand[0], "%s/../" MODEL_FIND_SHIPPED, near);
  snprintf(cand[n++], sizeof cand[0], MODEL_FIND_SHIPPED);
  snprintf(cand[n++], sizeof cand[0], SF_SOURCE_DIR "/" MODEL_FIND_SHIPPED);
  for (int i = 0; i < n; i++)
    if (access(cand[i], R_OK) == 0) return snprintf(out, cap, "%s", cand[i]) < (int)cap;
  return false;
}
