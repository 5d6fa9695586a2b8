// model_load.c -- see model_load.h.
#include "model_load.h"

#include <stdio.h>
#include <string.h>
#include <strings.h> // strcasecmp

#include "course.h"      // defines: course_read
#include "gguf.h"        // defines: gguf_sniff
#include "gguf_model.h"  // defines: gguf_model_load
#include "hub.h"         // defines: hub_is_dir, hub_model_load
#include "modelstore.h"  // defines: modelstore_is_ollama, modelstore_ollama_path
#include "safetensors.h" // defines: st_write_mapped

// A lesson (a Markdown file) given where a model goes (--model lessons/cat-bank.md): its name ends
// in .md or .markdown, or its text starts with a front matter's "---".
static bool is_markdown(const char *path) {
  size_t n = strlen(path);
  if ((n > 3 && !strcasecmp(path + n - 3, ".md")) || (n > 9 && !strcasecmp(path + n - 9, ".markdown")))
    return true;
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  char head[4] = {0};
  size_t got = fread(head, 1, 4, f);
  fclose(f);
  return got == 4 && !memcmp(head, "---", 3) && (head[3] == '\n' || head[3] == '\r');
}

Model *model_load(const char *path, Err *err) {
  if (is_markdown(path))
    return err_set(err, "%s is a Markdown file (a lesson), not a model: did you mean `stepformer %s`?", path,
                   path),
           NULL;
  // ---- Other formats: dispatch here, before the safetensors reader. A loader translates its
  // format into a canonical StFile (model.h) and returns model_from_st(&f, path, err):
  //   a directory (config.json + model.safetensors + tokenizer files) -> the hub loader;
  //   a torch.save file (NAME.pt with NAME.json beside it)           -> the course loader;
  //   a GGUF file (llama.cpp, Ollama: "GGUF" at its start)            -> the GGUF loader.
  if (modelstore_is_ollama(path)) { // ollama:NAME[:TAG]: the GGUF blob its manifest names (modelstore.h)
    char blob[4096];
    return modelstore_ollama_path(path, blob, sizeof blob, err) ? model_load(blob, err) : NULL;
  }
  if (hub_is_dir(path)) return hub_model_load(path, err);
  if (gguf_sniff(path)) return gguf_model_load(path, err);
  // ---- end of the dispatch
  StFile f;
  // a torch.save file (pt_sniff by content) or the course notebook's names: course.h
  if (!course_read(path, &f, err)) return NULL;
  return model_from_st(&f, path, err);
}

bool model_save(const Model *m, const char *path, Err *err) {
  return model_write(m, path, st_write_mapped, err);
}
