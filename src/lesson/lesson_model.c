// lesson_model.c -- opening the model a lesson names (see lesson_open_model in lesson.h).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lesson.h"
#include "lesson_internal.h" // defines: lesson_random_spec
#include "datadir.h"         // defines: datadir_find
#include "model_find.h"      // defines: model_find_shipped, MODEL_FIND_SHIPPED
#include "model_load.h"      // defines: model_load

int lesson_random_spec(const char *model, ModelConfig *mc, uint64_t *seed, Err *err) {
  *mc = model_config_default();
  *seed = 42;
  if (!model || strncmp(model, "random", 6) || (model[6] && model[6] != ' ' && model[6] != '\t')) return 0;
  char compact[512]; // "D=16, H=2" reads as "D=16,H=2"
  size_t n = 0;
  for (const char *p = model + 6; *p; p++) {
    if (*p == ' ' || *p == '\t') continue;
    if (n + 1 >= sizeof compact) return err_set(err, "the random model's spec is too long"), -1;
    compact[n++] = *p;
  }
  compact[n] = 0;
  Err e = {0};
  if (n && !model_config_parse(mc, seed, compact, &e)) {
    return err_set(err,
                   "bad random model \"%s\": %s (expected random D=16,H=2,F=64,layers=2,"
                   "seed=42[,activation=gelu][,norm_first=1])",
                   compact, e.msg),
           -1;
  }
  ModelConfig check = *mc;
  check.V = 2; // the vocabulary comes from the sentence; check the rest
  if (!model_config_check(&check, "random model", err)) return -1;
  return 1;
}

// The folder of the lesson file ("." when it has none), into dir.
static void lesson_dir(const Lesson *l, char *dir, size_t cap) {
  const char *p = l->path ? l->path : "";
  const char *slash = strrchr(p, '/');
  if (!slash)
    snprintf(dir, cap, ".");
  else if (slash == p)
    snprintf(dir, cap, "/");
  else
    snprintf(dir, cap, "%.*s", (int)(slash - p), p);
}

// A random model over the words of the sentence and of every compare sentence.
static Model *random_model(const Lesson *l, const ModelConfig *mc, uint64_t seed, Err *err) {
  size_t len = strlen(l->sentence ? l->sentence : "") + 2;
  for (int i = 0; i < l->n_steps; i++)
    if (l->steps[i].compare) len += strlen(l->steps[i].compare) + 1;
  char *text = malloc(len);
  if (!text) return err_set(err, "out of memory"), NULL;
  strcpy(text, l->sentence ? l->sentence : "");
  for (int i = 0; i < l->n_steps; i++)
    if (l->steps[i].compare) strcat(strcat(text, " "), l->steps[i].compare);
  Vocab v;
  bool ok = vocab_from_text(&v, text, err);
  free(text);
  if (!ok) return NULL;
  Model *m = model_random(mc, &v, seed, err);
  vocab_free(&v);
  return m;
}

Model *lesson_open_model(const Lesson *l, Err *note, Err *err) {
  if (note) note->msg[0] = 0;
  ModelConfig mc;
  uint64_t seed;
  if (l->by_hand) return lesson_hand_model(l, err); // the front matter's table (lesson_hand.c)
  int r = lesson_random_spec(l->model, &mc, &seed, err);
  if (r < 0) return NULL;
  Model *m = NULL;
  char path[4400];
  if (r > 0) {
    m = random_model(l, &mc, seed, err);
  } else if (!l->model || !strcmp(l->model, "default")) {
    char looked[600];
    if (model_find_shipped(path, sizeof path, looked, sizeof looked)) {
      m = model_load(path, err);
    } else {
      m = random_model(l, &mc, seed, err);
      if (m && note)
        err_set(note,
                "the shipped model " MODEL_FIND_SHIPPED " is not installed (looked in %s): using a random "
                "model (D=%d, H=%d, %d layers, seed %llu) instead",
                looked, mc.D, mc.H, mc.n_layers, (unsigned long long)seed);
    }
  } else {
    char dir[4096];
    lesson_dir(l, dir, sizeof dir);
    if (l->model[0] == '/')
      snprintf(path, sizeof path, "%s", l->model);
    else
      snprintf(path, sizeof path, "%s/%s", dir, l->model);
    bool there = access(path, R_OK) == 0;
    // Not beside the lesson (a shipped lesson's "../assets/models/x.safetensors" once installed,
    // or a teacher's copy of it): the shipped model of that file name, from the data folders.
    char shipped[4400], looked[600] = "";
    const char *base = strrchr(l->model, '/') ? strrchr(l->model, '/') + 1 : l->model;
    if (!there && l->model[0] != '/' && *base &&
        datadir_find(DATADIR_MODELS, base, shipped, sizeof shipped, looked, sizeof looked)) {
      snprintf(path, sizeof path, "%s", shipped);
      there = true;
    }
    if (!there && l->model[0] != '/' && err) { // one line: where it looked, how to fix
      err_set(err,
              "model: %s is not beside the lesson (%s) nor among the shipped models (looked in %s); model: "
              "takes a .safetensors path relative to the lesson's folder, default, or random "
              "D=16,H=2,F=64,layers=2,seed=42",
              l->model, path, looked);
      return NULL;
    }
    m = model_load(path, err);
    if (!m && !there && err && strlen(err->msg) < sizeof err->msg - 130)
      snprintf(err->msg + strlen(err->msg), sizeof err->msg - strlen(err->msg),
               " (model: takes a .safetensors path relative to the lesson's folder, default, "
               "or random D=16,H=2,F=64,layers=2,seed=42)");
  }
  if (m && l->causal_set) m->cfg.causal = l->causal;
  return m;
}
