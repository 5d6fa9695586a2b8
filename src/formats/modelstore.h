// modelstore.h -- the models a laptop already has (issue 35): Ollama's store and the Hugging Face
// cache, found where those tools keep them, so that `--model ollama:NAME[:TAG]` opens a pulled
// model and `stepformer info --models` lists what Stepformer can open.
//
// Ollama keeps a model as a manifest, $OLLAMA_MODELS (else ~/.ollama/models) /manifests/HOST/NS/
// NAME/TAG, a JSON list of layers whose one of media type application/vnd.ollama.image.model names
// the GGUF blob by its digest: blobs/sha256-<64 hex>. NAME alone is registry.ollama.ai/library/
// NAME; USER/NAME is registry.ollama.ai/USER/NAME; HOST/NS/NAME as written; TAG defaults to
// "latest". The Hugging Face cache, $HF_HUB_CACHE (else $HF_HOME/hub, else
// ~/.cache/huggingface/hub), holds models--ORG--NAME/snapshots/REVISION/ folders with config.json.
//
//     char path[4096];
//     if (modelstore_is_ollama(spec) && !modelstore_ollama_path(spec, path, sizeof path, &err)) ...
#ifndef SF_MODELSTORE_H
#define SF_MODELSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "err.h" // defines: Err

// True for "ollama:..." (the rest is not checked).
bool modelstore_is_ollama(const char *spec);
// The path of the GGUF blob of "ollama:NAME[:TAG]" in the store; false with one line (no such
// model, a manifest that is not JSON or names no model layer, a blob missing).
bool modelstore_ollama_path(const char *spec, char *path, size_t cap, Err *err);
// The digest's 64 hex digits of the model layer of manifest json (len bytes), into hex[65]; false
// with one line naming `what` (the manifest's path) when it has none or is not a manifest.
bool modelstore_manifest_model(const char *json, size_t len, const char *what, char hex[65], Err *err);
// Writes one line per model Ollama and the Hugging Face cache hold ("ollama:smollm2:135m  <blob>"
// and "hf:HuggingFaceTB/SmolLM2-135M  <snapshot folder>  LlamaForCausalLM"); returns how many.
int modelstore_list(FILE *out);

#endif
