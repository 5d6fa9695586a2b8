// model_find.c -- see model_find.h.
#include "model_find.h"

#include "datadir.h" // defines: datadir_find

bool model_find_shipped(char *out, size_t cap, char *looked, size_t lcap) {
  return datadir_find(DATADIR_MODELS, MODEL_FIND_SHIPPED, out, cap, looked, lcap);
}
