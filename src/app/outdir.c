// outdir.c -- see outdir.h.
#include "outdir.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h" // defines: file_read_all, file_write_atomic

#define STAGE_PREFIX ".stepformer-tmp-"
#define MANIFEST ".stepformer-files"

// ---------------------------------------------------------------- interruption

// While an OutDir is open, SIGINT, SIGTERM and SIGHUP only set od_signal: outdir_path then
// refuses every further file, so the command stops at its next file and aborts, and once the
// staging folder is gone the signal is raised again with the handler that was there before.
static volatile sig_atomic_t od_signal;
static int od_depth; // open OutDirs (commands open them from one thread)
static const int OD_SIGNALS[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction od_old[3];

static void od_on_signal(int sig) { od_signal = sig; }

static void catch_signals(void) {
  if (od_depth++ > 0) return;
  od_signal = 0;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = od_on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int i = 0; i < 3; i++) sigaction(OD_SIGNALS[i], &sa, &od_old[i]);
}

static void release_signals(void) {
  if (od_depth == 0 || --od_depth > 0) return;
  for (int i = 0; i < 3; i++) sigaction(OD_SIGNALS[i], &od_old[i], NULL);
  int sig = od_signal;
  od_signal = 0;
  if (sig) raise(sig);
}

// Removes the staging folders that killed runs left in dir (".stepformer-tmp-PID" of a process
// that no longer exists): the files in them were never moved into place.
static void remove_stale_stages(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char stage[2400], p[2700];
  while ((e = readdir(d))) {
    if (strncmp(e->d_name, STAGE_PREFIX, strlen(STAGE_PREFIX))) continue;
    char *end;
    long pid = strtol(e->d_name + strlen(STAGE_PREFIX), &end, 10);
    if (*end || pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
    snprintf(stage, sizeof stage, "%s/%s", dir, e->d_name);
    DIR *sd = opendir(stage);
    if (!sd) continue;
    struct dirent *f;
    while ((f = readdir(sd)))
      if (f->d_name[0] != '.' || (f->d_name[1] && strcmp(f->d_name, ".."))) {
        snprintf(p, sizeof p, "%s/%s", stage, f->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISREG(st.st_mode)) unlink(p);
      }
    closedir(sd);
    rmdir(stage);
  }
  closedir(d);
}

// Removes the folders outdir_begin made, innermost first (only while they are empty).
static void remove_created(OutDir *od) {
  if (!od->created_top[0]) return;
  char p[2048];
  snprintf(p, sizeof p, "%s", od->dir);
  for (;;) {
    rmdir(p);
    if (!strcmp(p, od->created_top)) break;
    char *slash = strrchr(p, '/');
    if (!slash || slash == p) break;
    *slash = 0;
  }
}

// Makes every missing folder of od->dir, outermost first, remembering the first one made.
static bool make_dirs(OutDir *od, Err *err) {
  char p[2048];
  snprintf(p, sizeof p, "%s", od->dir);
  for (char *q = p + 1;; q++) {
    bool end = *q == 0;
    if (*q != '/' && !end) continue;
    *q = 0;
    struct stat st;
    if (stat(p, &st) != 0) {
      if (mkdir(p, 0777) != 0) {
        err_set(err, "%s: cannot create folder %s: %s", od->dir, p, strerror(errno));
        remove_created(od);
        return false;
      }
      if (!od->created_top[0]) snprintf(od->created_top, sizeof od->created_top, "%s", p);
    } else if (!S_ISDIR(st.st_mode)) {
      err_set(err, "%s: %s is a file, not a folder", od->dir, p);
      remove_created(od);
      return false;
    }
    if (end) break;
    *q = '/';
  }
  od->created_dir = od->created_top[0] != 0;
  return true;
}

bool outdir_begin(OutDir *od, const char *dir, Err *err) {
  memset(od, 0, sizeof *od);
  if (!dir || !*dir) return err_set(err, "--out needs a folder");
  if (strlen(dir) >= sizeof od->dir - 64)
    return err_set(err, "%s: the path is too long (%zu bytes, at most %zu): choose a shorter folder", dir,
                   strlen(dir), sizeof od->dir - 65);
  snprintf(od->dir, sizeof od->dir, "%s", dir);
  if (!make_dirs(od, err)) return false;
  remove_stale_stages(dir);
  snprintf(od->stage, sizeof od->stage, "%s/" STAGE_PREFIX "%ld", dir, (long)getpid());
  if (mkdir(od->stage, 0777) != 0) {
    err_set(err, "%s: cannot write in this folder: %s", dir, strerror(errno));
    remove_created(od);
    return false;
  }
  catch_signals();
  return true;
}

bool outdir_path(OutDir *od, const char *name, char *path, size_t cap, Err *err) {
  if (od_signal) return err_set(err, "interrupted");
  if (strchr(name, '/')) return err_set(err, "%s: file names may not contain '/'", name);
  if (od->n == od->cap) {
    int nc = od->cap ? od->cap * 2 : 64;
    char **nn = realloc(od->names, sizeof(char *) * (size_t)nc);
    if (!nn) return err_set(err, "out of memory");
    od->names = nn;
    od->cap = nc;
  }
  int k = snprintf(path, cap, "%s/%s", od->stage, name);
  if (k < 0 || (size_t)k >= cap) return err_set(err, "%s: path too long", name);
  size_t len = strlen(name) + 1;
  if (!(od->names[od->n] = malloc(len))) return err_set(err, "out of memory");
  memcpy(od->names[od->n++], name, len);
  return true;
}

static void od_free(OutDir *od) {
  for (int i = 0; i < od->n; i++) free(od->names[i]);
  free(od->names);
  od->names = NULL;
  od->n = od->cap = 0;
}

static void abort_files(OutDir *od) {
  char p[2600];
  for (int i = 0; i < od->n; i++) {
    snprintf(p, sizeof p, "%s/%s", od->stage, od->names[i]);
    remove(p);
  }
  rmdir(od->stage);
  remove_created(od);
  od_free(od);
}

void outdir_abort(OutDir *od) {
  abort_files(od);
  release_signals();
}

// ---------------------------------------------------------------- the manifest

// DIR/.stepformer-files lists the files Stepformer wrote into DIR, each with the size and
// modification time it left them with: "SIZE SECONDS.NANOSECONDS NAME" per line.
typedef struct {
  long long size, sec, nsec;
  char *name;
} Entry;

static bool same_file(const char *path, const Entry *e) {
  struct stat st;
  return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (long long)st.st_size == e->size &&
         (long long)st.st_mtim.tv_sec == e->sec && (long long)st.st_mtim.tv_nsec == e->nsec;
}

static const char *extension(const char *name) {
  const char *dot = strrchr(name, '.');
  return dot ? dot + 1 : "";
}

// Reads the manifest's entries into *out (names point into *text); returns the count.
static int read_manifest(const char *dir, char **text, Entry **out) {
  char path[2200];
  snprintf(path, sizeof path, "%s/" MANIFEST, dir);
  size_t len;
  *out = NULL;
  *text = file_read_all(path, &len, (size_t)16 << 20, NULL);
  if (!*text) return 0;
  int lines = 1;
  for (size_t i = 0; i < len; i++) lines += (*text)[i] == '\n';
  Entry *e = calloc((size_t)lines, sizeof(Entry));
  if (!e) return 0;
  int n = 0;
  for (char *save = NULL, *line = strtok_r(*text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    int at = 0;
    Entry x = {0};
    if (sscanf(line, "%lld %lld.%lld %n", &x.size, &x.sec, &x.nsec, &at) != 3 || !at) continue;
    x.name = line + at;
    // only plain names of this folder, never the manifest or a staging folder
    if (!*x.name || strchr(x.name, '/') || !strncmp(x.name, ".stepformer", 11) || !strcmp(x.name, ".."))
      continue;
    e[n++] = x;
  }
  *out = e;
  return n;
}

// After the files of od are in place: removes the files an earlier run wrote into the folder
// that this one did not write again, when they are of a kind this run writes (its extensions)
// and nobody changed them since; then records what the folder now holds of Stepformer's.
static void update_manifest(const OutDir *od) {
  char *text, path[2600];
  Entry *old;
  int n_old = read_manifest(od->dir, &text, &old);
  size_t cap = 256, len = 0;
  char *out = malloc(cap);
  for (int pass = 0; out && pass < 2; pass++) {
    int n = pass == 0 ? n_old : od->n;
    for (int i = 0; i < n; i++) {
      const char *name = pass == 0 ? old[i].name : od->names[i];
      snprintf(path, sizeof path, "%s/%s", od->dir, name);
      if (pass == 0) {
        bool rewritten = false, same_kind = false;
        for (int k = 0; k < od->n && !rewritten; k++) {
          rewritten = !strcmp(od->names[k], name);
          same_kind = same_kind || !strcmp(extension(od->names[k]), extension(name));
        }
        if (rewritten || !same_file(path, &old[i])) continue; // listed below, or the user's now
        if (same_kind && unlink(path) == 0) continue;         // an earlier export's, not redone
      }
      struct stat st;
      if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) continue;
      if (len + strlen(name) + 80 > cap) {
        char *grown = realloc(out, cap = 2 * cap + strlen(name) + 80);
        if (!grown) {
          free(out);
          out = NULL;
          break;
        }
        out = grown;
      }
      len += (size_t)snprintf(out + len, cap - len, "%lld %lld.%09lld %s\n", (long long)st.st_size,
                              (long long)st.st_mtim.tv_sec, (long long)st.st_mtim.tv_nsec, name);
    }
  }
  if (out) { // best effort: without it, the next run only replaces files of the same names
    snprintf(path, sizeof path, "%s/" MANIFEST, od->dir);
    file_write_atomic(path, out, len, NULL);
  }
  free(out);
  free(old);
  free(text);
}

// Moving the files in is all or nothing: an old file of the same name is first moved aside into
// the staging folder ("NAME.old"); if any move fails, every move is undone in reverse order.
bool outdir_commit(OutDir *od, Err *err) {
  char from[2600], to[2600], old[2700];
  struct stat st;
  // 1. every target must be free or a regular file we may replace
  for (int i = 0; i < od->n; i++) {
    snprintf(to, sizeof to, "%s/%s", od->dir, od->names[i]);
    if (lstat(to, &st) == 0 && !S_ISREG(st.st_mode)) {
      err_set(err, "%s: exists and is not a file; move it away and run again", to);
      outdir_abort(od);
      return false;
    }
  }
  // 2. move aside, then in; remember how far we got
  int done = 0, e = 0;
  if (od_signal) {
    outdir_abort(od); // raises the signal again: the command ends here
    return err_set(err, "interrupted");
  }
  bool *had_old = calloc((size_t)od->n + 1, sizeof(bool));
  if (!had_old) {
    outdir_abort(od);
    return err_set(err, "out of memory");
  }
  for (; done < od->n; done++) {
    snprintf(from, sizeof from, "%s/%s", od->stage, od->names[done]);
    snprintf(to, sizeof to, "%s/%s", od->dir, od->names[done]);
    snprintf(old, sizeof old, "%s/%s.old", od->stage, od->names[done]);
    if (access(from, F_OK) != 0) continue; // reserved but never written
    if (lstat(to, &st) == 0) {
      if (rename(to, old) != 0) break;
      had_old[done] = true;
    }
    if (rename(from, to) != 0) {
      e = errno;
      if (had_old[done]) rename(old, to), had_old[done] = false;
      break;
    }
  }
  if (done < od->n) { // 3. undo: new files back to staging, old files back in place
    if (!e) e = errno;
    snprintf(to, sizeof to, "%s/%s", od->dir, od->names[done]);
    err_set(err, "%s: cannot move into place: %s; nothing was changed", to, strerror(e));
    for (int i = done - 1; i >= 0; i--) {
      snprintf(from, sizeof from, "%s/%s", od->stage, od->names[i]);
      snprintf(to, sizeof to, "%s/%s", od->dir, od->names[i]);
      snprintf(old, sizeof old, "%s/%s.old", od->stage, od->names[i]);
      if (access(to, F_OK) == 0 && access(from, F_OK) != 0) rename(to, from);
      if (had_old[i]) rename(old, to);
    }
    free(had_old);
    outdir_abort(od);
    return false;
  }
  for (int i = 0; i < od->n; i++) // the replaced files
    if (had_old[i]) {
      snprintf(old, sizeof old, "%s/%s.old", od->stage, od->names[i]);
      remove(old);
    }
  free(had_old);
  rmdir(od->stage);
  update_manifest(od);
  od_free(od);
  release_signals();
  return true;
}
