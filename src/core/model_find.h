// model_find.h -- where the shipped model is: one search order for every part of Stepformer.
//
// A lesson's `model: default` and a command given neither --model nor --random both open the
// shipped trained model, assets/models/bank.safetensors. The search lives in the core because
// both the lesson layer and the app need it and lesson must not depend on app; it uses nothing
// but libc (getenv, access). The order, the first readable file wins:
//   1. $SF_SOURCE_DIR/assets/models/bank.safetensors   (the environment: tests, a moved tree)
//   2. NEAR/../assets/models/bank.safetensors          (NEAR: a lesson's folder, when given)
//   3. ./assets/models/bank.safetensors                (the working folder)
//   4. the same path in the source tree Stepformer was built from (SF_SOURCE_DIR at build time)
//
//     char path[4400];
//     if (model_find_shipped(NULL, path, sizeof path)) m = model_load(path, &err);
//     else ...; // not there: the caller builds a random stand-in and says so
#ifndef SF_MODEL_FIND_H
#define SF_MODEL_FIND_H

#include <stdbool.h>
#include <stddef.h>

#define MODEL_FIND_SHIPPED "assets/models/bank.safetensors" // relative to a Stepformer tree

// Writes the path of the shipped model into out (cap bytes) and returns true; false when no
// candidate is readable or the path does not fit. near: a folder to look beside, or NULL.
bool model_find_shipped(const char *near, char *out, size_t cap);

#endif
