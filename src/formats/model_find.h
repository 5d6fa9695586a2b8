// model_find.h -- where the shipped model is.
//
// A lesson's `model: default` and a command given neither --model nor --random both open the
// shipped trained model, bank.safetensors (assets/models/ in the source tree, models/ where
// Stepformer is installed). It is looked up in the data folders of datadir.h: $STEPFORMER_DATA,
// ../share/stepformer beside the program, the source tree of a developer's build, then
// $XDG_DATA_DIRS/stepformer. The search lives in the core because both the lesson layer and the
// app need it and lesson must not depend on app.
//
//     char path[4096], looked[1024];
//     if (model_find_shipped(path, sizeof path, looked, sizeof looked)) m = model_load(path, &err);
//     else ...; // not there: the caller builds a random stand-in and says where it looked
#ifndef SF_MODEL_FIND_H
#define SF_MODEL_FIND_H

#include <stdbool.h>
#include <stddef.h>

#define MODEL_FIND_SHIPPED "bank.safetensors" // the file name, in a data folder's models/

// Writes the path of the shipped model into out (cap bytes) and returns true; false when it is in
// none of the data folders. looked (lcap bytes, may be NULL) gets the folders searched, one line.
bool model_find_shipped(char *out, size_t cap, char *looked, size_t lcap);

#endif
