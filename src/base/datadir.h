// datadir.h -- where Stepformer's shipped files are (lessons, models): one search order for the
// whole program, so that a copy installed anywhere (a .deb in /usr, `cmake --install` into any
// prefix) finds them without the source tree it was built from. libc only (getenv, access,
// readlink of /proc/self/exe).
//
// A data folder ("root") holds lessons/ and models/ (an installed share/stepformer) or lessons/
// and assets/models/ (a source tree). The roots, searched in this order (the first readable file
// wins; a root that does not exist is skipped):
//   1. $STEPFORMER_DATA                               (set by hand: it wins over everything)
//   2. EXE/../share/stepformer, EXE the folder of the running program (/proc/self/exe): where
//      `cmake --install` and the .deb put the data beside bin/stepformer
//   3. the source tree the program was built from (SF_SOURCE_DIR, compiled in), used only while
//      the program runs from inside its build folder (SF_BINARY_DIR): a developer's build/stepformer
//      and the tests; an installed copy never reads it
//   4. every DIR of $XDG_DATA_DIRS (default /usr/local/share:/usr/share): DIR/stepformer
// A teacher's own lessons live in $XDG_DATA_HOME/stepformer/lessons (default
// ~/.local/share/stepformer/lessons): a lesson asked for by name is looked for there first, and
// the lists of lessons show them beside the shipped ones.
//
//     char path[4096], looked[1024];
//     if (!datadir_find(DATADIR_MODELS, "bank.safetensors", path, sizeof path, looked, sizeof looked))
//       fprintf(stderr, "bank.safetensors not found (looked in %s)\n", looked);
#ifndef SF_DATADIR_H
#define SF_DATADIR_H

#include <stdbool.h>
#include <stddef.h>

#define DATADIR_MAX_ROOTS 16

typedef enum { DATADIR_LESSONS, DATADIR_MODELS } DatadirKind;

typedef struct {
  char path[4096];  // the folder
  const char *from; // why it is searched: "STEPFORMER_DATA", "next to the program", ...
  bool exists;      // it is a folder
  bool used;        // searched (false: missing, or the source tree of a program outside its build)
} DatadirRoot;

// Every root in search order, existing or not (DatadirRoot.used says which are searched); returns
// how many were written (at most cap).
int datadir_roots(DatadirRoot *out, int cap);
// The teacher's lessons folder ($XDG_DATA_HOME/stepformer/lessons, or
// $HOME/.local/share/stepformer/lessons); false when neither variable is set.
bool datadir_user_lessons(char *out, size_t cap);
// The folder of kind in root: root/lessons, root/models, or root/assets/models in a source tree.
// Writes out (cap bytes); returns false when that folder does not exist (out then holds the path
// it would have).
bool datadir_kind_dir(const char *root, DatadirKind kind, char *out, size_t cap);
// Finds file `name` of kind (lessons: the teacher's folder first, then the roots). Returns true
// with its path in out; false otherwise. looked (may be NULL) always gets the folders searched,
// in order, separated by ", " -- one line for a "not found" message.
bool datadir_find(DatadirKind kind, const char *name, char *out, size_t cap, char *looked, size_t lcap);

#endif
