// sf_internal.h -- what the library's two sources share (not installed): the handles behind the
// opaque types of stepformer.h and the thread's error.
#ifndef SF_LIB_INTERNAL_H
#define SF_LIB_INTERNAL_H

#include <stdbool.h>

#include "backward.h" // defines: TraceGrad
#include "model.h"    // defines: Model
#include "stepformer.h"
#include "trace.h" // defines: Trace

struct sf_model {
  Model *m;
  char describe[768]; // sf_model_describe's line
};

typedef struct {
  char name[32]; // "l0.A", "grad.l0.A", "loss"
  int index;     // the trace tensor, -1 for the loss
  bool grad;     // its gradient, not its value
} SfName;

struct sf_pass {
  sf_model *model;
  Trace *t;
  TraceGrad *grad; // after sf_backward, else NULL
  SfName *names;   // the stage names, made on first use (remade by sf_backward)
  int n_names;
  char text[2048]; // the sentence, for the pictures' footers
  char label[256]; // sf_pass_token's and sf_step_label's buffer
};

// Sets the thread's error (sf_error) to msg; returns false.
bool sf_fail(const char *msg);

#endif
