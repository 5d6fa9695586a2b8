// err.h -- error records and the assert macro for programmer errors.
//
// Input errors (a corrupt file, a bad option) are reported, not fatal: a function that can fail
// takes an `Err *` last, fills it with one line (what, where, how to fix) and returns false or
// NULL. The caller prints `err.msg` and decides whether to quit (CLI: exit code 2) or to show
// the message (window). Broken invariants (a shape mismatch, an index out of range) are bugs:
// EXPECT prints file, line and expression and aborts.
//
//     Err err = {0};
//     Model *m = model_load("bank.safetensors", &err);
//     if (!m) { fprintf(stderr, "stepformer: %s\n", err.msg); return 2; }
#ifndef SF_ERR_H
#define SF_ERR_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  char msg[512]; // one line, no trailing newline; empty when no error
} Err;

// Formats into err->msg (when err is not NULL) and returns false, so `return err_set(...)`. A
// message longer than err->msg (a long path in it) keeps its start and its end (what is wrong,
// and how to fix it) with "..." between, cut between characters. The message is always one
// line of valid UTF-8: control characters and bytes that are not UTF-8 become '?'.
bool err_set(Err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define EXPECT(x)                                                                                            \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "%s:%d: expectation failed: %s\n", __FILE__, __LINE__, #x);                            \
      abort();                                                                                               \
    }                                                                                                        \
  } while (0)

#endif
