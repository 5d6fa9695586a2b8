// fuzz_replay.c -- libFuzzer target for replay_parse, the reader of the window's scripted input.
//
// Every input goes through replay_parse as the bytes of a replay file (tests/replay/*.txt are the
// seeds). A rejected file must come with one line that names "fuzz.txt:LINE"; an accepted one
// must hold events whose fields are what the header promises: a kind the driver knows, a time
// that is a number at least 0, a line inside the file, a NUL-terminated label and typed text,
// a clipboard text only on clipboard events. Any crash, sanitizer report or leak is a bug.
// Build and run as fuzz_lesson.c says (target fuzz_replay).
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lesson.h" // (replay.h includes app.h, which needs the lesson and render headers)
#include "replay.h" // defines: Replay, replay_parse, replay_free
#include "scene.h"

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_replay: broken promise: %s\n", #x);                                              \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > (1u << 20)) return 0;
  int lines = 1;
  for (size_t i = 0; i < size; i++) lines += data[i] == '\n';
  Replay r;
  Err err = {0};
  bool ok = replay_parse(&r, (const char *)data, size, "fuzz.txt", &err);
  if (!ok) {
    PROMISE(err.msg[0] && !strchr(err.msg, '\n') && r.n == 0 && r.items == NULL);
    PROMISE(!strncmp(err.msg, "fuzz.txt:", 9) || !strcmp(err.msg, "out of memory"));
    return 0;
  }
  for (int k = 0; k < r.n; k++) {
    const ReplayItem *it = &r.items[k];
    PROMISE(it->kind >= RP_EVENT && it->kind <= RP_CLIPBOARD);
    PROMISE(it->line >= 1 && it->line <= lines);
    PROMISE(isfinite(it->ev.time_ms) && it->ev.time_ms >= 0);
    PROMISE(memchr(it->label, 0, sizeof it->label) && it->label[0]);
    PROMISE(memchr(it->ev.text, 0, sizeof it->ev.text));
    PROMISE((it->kind == RP_CLIPBOARD) == (it->clipboard != NULL));
    if (it->kind == RP_EVENT) PROMISE(it->ev.kind >= EV_KEY && it->ev.kind <= EV_WHEEL);
    if (it->kind == RP_EVENT && it->ev.kind == EV_RESIZE)
      PROMISE(it->ev.w >= 1 && it->ev.w <= 16384 && it->ev.h >= 1 && it->ev.h <= 16384);
    if (it->kind == RP_EVENT && it->ev.kind == EV_WHEEL)
      PROMISE(it->ev.wheel >= -1000 && it->ev.wheel <= 1000);
  }
  replay_free(&r);
  return 0;
}
