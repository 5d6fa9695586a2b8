// test_sigbus.c -- a mapped checkpoint rewritten in place under a running Stepformer (cli.h,
// cli_catch_sigbus): one line on stderr and exit code 2, not a crash.
//
// A child process copies the GPT-2 fixture into a temporary folder (hub_fixture.h), opens it mapped
// (st_map_min_bytes = 0: the fixture is small), then truncates model.safetensors, as a notebook
// saving the model again to the same path does, and reads the weights (model_save reads every
// tensor from the mapping): the read raises SIGBUS. The parent checks the child's exit code and
// its stderr. A control child does the same without the truncation and must save normally.
#define _POSIX_C_SOURCE 200809L // mkdtemp, fileno
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "hub_fixture.h" // defines: hub_fixture_copy, hub_fixture_remove
#include "cli.h"         // defines: cli_catch_sigbus, CLI_SIGBUS_MESSAGE
#include "fileio.h"      // defines: file_read_all, file_write_atomic
#include "model.h"       // defines: model_free
#include "model_load.h"  // defines: model_load, model_save
#include "safetensors.h" // defines: st_map_min_bytes

// Runs a child that opens dir's model mapped, truncates its file when `truncate_it`, then saves
// it; returns the child's wait status, with its stderr in err_path.
static pid_t last_child; // its save's temporary file (saved.safetensors.tmp-PID) stays behind

static int run_child(const char *dir, bool truncate_it, const char *err_path) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen(err_path, "w", stderr)) _exit(90);
    cli_catch_sigbus();
    st_map_min_bytes = 0;
    Err err = {0};
    Model *m = model_load(dir, &err);
    if (!m) {
      fprintf(stderr, "load: %s\n", err.msg);
      _exit(91);
    }
    char file[4200], out[4200];
    snprintf(file, sizeof file, "%s/model.safetensors", dir);
    snprintf(out, sizeof out, "%s/saved.safetensors", dir);
    if (truncate_it && truncate(file, 0) != 0) _exit(92);
    bool ok = model_save(m, out, &err); // reads every weight page from the mapping
    if (!ok) fprintf(stderr, "save: %s\n", err.msg);
    model_free(m);
    _exit(ok ? 0 : 93);
  }
  int status = -1;
  if (pid > 0) waitpid(pid, &status, 0);
  last_child = pid;
  return status;
}

int main(void) {
  char dir[64], err_path[256];
  hub_fixture_copy("gpt2-tiny", dir);
  snprintf(err_path, sizeof err_path, "%s/stderr.txt", dir);

  int st = run_child(dir, false, err_path);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "control: the mapped model saves (status %d)", st);

  st = run_child(dir, true, err_path);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 2, "rewritten in place: exit code 2, no crash (status %d%s%d)",
        st, WIFSIGNALED(st) ? ", signal " : ", exit ", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
  size_t len = 0;
  Err err = {0};
  char *msg = file_read_all(err_path, &len, 1 << 20, &err);
  CHECK(msg && !strcmp(msg, CLI_SIGBUS_MESSAGE), "rewritten in place: the one line on stderr, got \"%s\"",
        msg ? msg : err.msg);
  free(msg);
  char tmp[64]; // the save the signal cut short leaves its temporary file, as cli.h says
  snprintf(tmp, sizeof tmp, "saved.safetensors.tmp-%d", (int)last_child);
  hub_fixture_remove(dir, (const char *const[]){"saved.safetensors", "stderr.txt", tmp, NULL});
  return check_exit("test_sigbus");
}
