// cli_paths.c -- `stepformer info --paths`: where the shipped lessons and models are looked for,
// and what is found there (datadir.h holds the search order).
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "datadir.h"    // defines: datadir_roots, datadir_user_lessons, datadir_kind_dir
#include "model_find.h" // defines: MODEL_FIND_SHIPPED
#include "version.h"    // defines: version_string, version_commit

#define MAX_FILES 256

typedef struct {
  char name[256];
  char path[4400];
  bool yours; // in the teacher's folder
} Found;

static bool wanted(DatadirKind kind, const char *name) {
  size_t n = strlen(name);
  if (name[0] == '.') return false;
  if (kind == DATADIR_LESSONS) return n > 3 && !strcmp(name + n - 3, ".md") && strcmp(name, "README.md");
  return (n > 12 && !strcmp(name + n - 12, ".safetensors")) || (n > 3 && !strcmp(name + n - 3, ".pt"));
}

static int by_name(const void *a, const void *b) {
  return strcmp(((const Found *)a)->name, ((const Found *)b)->name);
}

// Counts the files of kind in dir; adds those not yet seen to list (the first one of a name is
// the one Stepformer opens).
static int scan(const char *dir, DatadirKind kind, bool yours, Found *list, int *n) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int count = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (!wanted(kind, e->d_name) || strlen(e->d_name) >= sizeof list[0].name) continue;
    count++;
    bool seen = false;
    for (int i = 0; i < *n && !seen; i++) seen = !strcmp(list[i].name, e->d_name);
    if (seen || *n >= MAX_FILES) continue;
    Found *f = &list[(*n)++];
    snprintf(f->name, sizeof f->name, "%s", e->d_name);
    snprintf(f->path, sizeof f->path, "%s/%s", dir, e->d_name);
    f->yours = yours;
  }
  closedir(d);
  return count;
}

int cli_info_paths(void) {
  static Found lessons[MAX_FILES], models[MAX_FILES];
  int n_lessons = 0, n_models = 0;
  char exe[4096] = "", dir[4400];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (len > 0) exe[len] = 0;
  printf("stepformer %s (commit %s)%s%s\n\n", version_string(), version_commit(), exe[0] ? " at " : "", exe);
  char user[4096];
  bool have_user = datadir_user_lessons(user, sizeof user);
  printf("Your own lessons (XDG_DATA_HOME), looked at first:\n  %s: ",
         have_user ? user : "(neither XDG_DATA_HOME nor HOME is set)");
  if (have_user && access(user, F_OK) == 0)
    printf("%d lessons\n", scan(user, DATADIR_LESSONS, true, lessons, &n_lessons));
  else
    printf("missing (make it and put .md lessons in it)\n");
  printf("\nData folders, searched in this order (the first that holds a file wins):\n");
  const char *env = getenv("STEPFORMER_DATA");
  int k = 1;
  if (!env || !*env) printf("  %d. %-20s not set\n", k++, "STEPFORMER_DATA");
  DatadirRoot roots[DATADIR_MAX_ROOTS];
  int n = datadir_roots(roots, DATADIR_MAX_ROOTS);
  for (int i = 0; i < n; i++, k++) {
    const DatadirRoot *r = &roots[i];
    printf("  %d. %-20s %s: ", k, r->from, r->path);
    if (!r->exists) {
      printf("missing\n");
    } else if (!r->used) {
      printf("not searched (this program runs outside the build folder of that tree)\n");
    } else {
      int nl = datadir_kind_dir(r->path, DATADIR_LESSONS, dir, sizeof dir)
                   ? scan(dir, DATADIR_LESSONS, false, lessons, &n_lessons)
                   : 0;
      int nm = datadir_kind_dir(r->path, DATADIR_MODELS, dir, sizeof dir)
                   ? scan(dir, DATADIR_MODELS, false, models, &n_models)
                   : 0;
      printf("%d lessons, %d models\n", nl, nm);
    }
  }
  qsort(lessons, (size_t)n_lessons, sizeof *lessons, by_name);
  qsort(models, (size_t)n_models, sizeof *models, by_name);
  printf("\nLessons (open one by name: stepformer NAME.md, stepformer export --lesson NAME.md):\n");
  if (!n_lessons) printf("  none found\n");
  for (int i = 0; i < n_lessons; i++)
    printf("  %-26s %s%s\n", lessons[i].name, lessons[i].path, lessons[i].yours ? "  (yours)" : "");
  printf("\nModels (a lesson's model: NAME.safetensors not beside the lesson is taken from here):\n");
  if (!n_models) printf("  none found: the commands use a random model instead of " MODEL_FIND_SHIPPED "\n");
  for (int i = 0; i < n_models; i++)
    printf("  %-26s %s%s\n", models[i].name, models[i].path,
           !strcmp(models[i].name, MODEL_FIND_SHIPPED) ? "  (the default)" : "");
  return 0;
}
