// model_load.h -- a model from whatever a path is, and a model into a file.
//
// model_load is the one dispatch on what a path is. Each format, asked in turn, translates its
// bytes into a canonical StFile (core's stfile.h; the names and metadata of model.h) and hands it
// to model_from_st, which checks it and builds the Model:
//   ollama:NAME[:TAG] (a model in Ollama's store)              -> modelstore.h, then its blob
//   a folder with config.json (a Hugging Face hub checkpoint)  -> hub.h
//   a GGUF file ("GGUF" at its start: llama.cpp, Ollama)        -> gguf_model.h
//   a torch.save file (by its content) or the course's names   -> course.h (ptfile.h)
//   anything else                                              -> safetensors.h
// A new format adds its test here (src/formats/README.md). model_save writes model_write's
// canonical form (model.h) as safetensors, atomically (fileio.h): model_load reads it back.
//
//     Err err = {0};
//     Model *m = model_load("assets/models/bank.safetensors", &err);
//     if (!m || !model_save(m, "copy.safetensors", &err)) fprintf(stderr, "%s\n", err.msg);
#ifndef SF_MODEL_LOAD_H
#define SF_MODEL_LOAD_H

#include <stdbool.h>

#include "err.h"   // defines: Err
#include "model.h" // defines: Model

// Reads path and validates it (model_from_st).
Model *model_load(const char *path, Err *err);
bool model_save(const Model *m, const char *path, Err *err);

#endif
