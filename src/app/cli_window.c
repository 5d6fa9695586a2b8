// cli_window.c -- `stepformer [LESSON.md] [options]`: the window (the main job).
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "datadir.h" // defines: datadir_find
#include "web.h"     // defines: web_active
#include "forward.h" // defines: forward_set_threads
#include "text.h"    // defines: text_init
#include "window.h"  // defines: window_run

static const char *USAGE =
    "usage: stepformer [LESSON.md] [--text TEXT] [--compare TEXT] [--model FILE | --random SPEC [--vocab "
    "LIST]]\n"
    "                  [--compare-model FILE]\n"
    "                  [--causal] [--target TEXT | --generate [--max-steps N]]\n"
    "                  [--edit SPEC]... [--head-off LAYER:HEAD[:zero|:uniform]]...\n"
    "                  [--step N] [--size WxH] [--fullscreen] [--theme dark|light] [--save-dir DIR]\n"
    "                  [--replay FILE [--screenshot DIR] [--realtime]] [--frame-stats]\n"
    "\n"
    "Opens the window on a lesson (default: lessons/cat-bank.md), or, with --text and no lesson,\n"
    "on every stage of a sentence of your own. Press ? in the window for the keys:\n"
    "→ Space PageDown next, ← Backspace PageUp back (a presentation clicker works), 1-9 heads,\n"
    "0 all heads, [ ] layers, < > a long sentence's window of tokens, hover or Shift+arrows to\n"
    "inspect a cell, E to type a sentence,\n"
    "F fullscreen, + − the picture's size (Ctrl + − the text's), T light theme, S save the view as PNG,\n"
    "Ctrl+E export every step.\n"
    "An encoder-decoder: --target TEXT feeds its decoder <bos> and TEXT's words; --generate writes\n"
    "the output word by word (the encoder's stages and memory, then each generation step's decoder\n"
    "stages; , and . jump to the same stage of the previous / next generation step).\n"
    "\n"
    "  --size WxH       window size (default 1600x900, or 90% of a smaller screen)\n"
    "  --save-dir DIR   where S and Ctrl+E write (default: the current folder)\n"
    "  --replay FILE    play scripted input (tests/replay/README.md) and print the state after\n"
    "                   each event; --screenshot DIR saves every frame; --realtime keeps the times\n"
    "  --frame-stats    print the median and 99th percentile frame time when the window closes\n"
    "  --edit SPEC, --head-off L:H  what-if edits from the start (stepformer dump --help)\n"
    "  --compare-model FILE  the same sentence through a second file of the same model (an F16\n"
    "                   GGUF beside a Q4 one) beside every step, with the difference; refused when\n"
    "                   the two files' tokenizers or shapes differ\n"
    "A quantized GGUF model: Shift+O's last view shows its weights as stored ([ ] another tensor,\n"
    "Shift+arrows another block).\n";

// Appends ' WORD' to buf, single-quoted for the shell when it holds anything but plain
// characters, so that the printed command can be pasted as it is.
static void append_word(char *buf, size_t cap, const char *word) {
  size_t n = strlen(buf);
  bool plain = word[0] != '\0';
  for (const char *c = word; *c; c++)
    if (!isalnum((unsigned char)*c) && !strchr("-_./=,:+@%", *c)) plain = false;
  n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, plain ? " %s" : " '", word);
  if (plain) return;
  for (const char *c = word; *c && n + 5 < cap; c++)
    n += (size_t)snprintf(buf + n, cap - n, *c == '\'' ? "'\\''" : "%c", *c);
  if (n + 1 < cap) strcat(buf, "'");
}

// The export command that makes the pictures the window would have shown: the same program (as
// it was invoked), lesson or sentence, model and mask, into ./slides.
static void export_hint(char *buf, size_t cap, const char *argv0, const SessionOpts *so) {
  snprintf(buf, cap, "%s", strchr(argv0, '/') ? argv0 : "stepformer");
  append_word(buf, cap, "export");
  const char *opt[][2] = {{"--lesson", so->lesson},          {"--text", so->model.text},
                          {"--model", so->model.model_path}, {"--random", so->model.random_spec},
                          {"--vocab", so->model.vocab},      {"--compare", so->compare},
                          {"--target", so->target},          {"--compare-model", so->compare_model}};
  for (size_t k = 0; k < sizeof opt / sizeof opt[0]; k++)
    if (opt[k][1]) append_word(buf, cap, opt[k][0]), append_word(buf, cap, opt[k][1]);
  if (so->model.causal) append_word(buf, cap, "--causal");
  if (so->generate) append_word(buf, cap, "--generate");
  if (so->max_steps) {
    char n[16];
    snprintf(n, sizeof n, "%d", so->max_steps);
    append_word(buf, cap, "--max-steps"), append_word(buf, cap, n);
  }
  append_word(buf, cap, "--out");
  append_word(buf, cap, "slides");
}

// The page (web.h): a dropped file opens with the options the page started with, as a lesson
// (.md) or as the model of the sentence shown (a model of other words starts on its own default).
static SessionOpts page_opts;

// The steps a lenient session broke (session.h: SessionOpts.lenient): their messages on stderr too,
// for the teacher at a terminal, and which steps show them.
static void broken_steps_note(const Session *s, const LessonDiag *d) {
  int n = 0;
  for (int i = 0; s->has_lesson && i < s->lesson.n_steps; i++) n += s->lesson.steps[i].broken != NULL;
  if (n == 0) return;
  for (int q = 0; q < d->n; q++)
    fprintf(stderr, "%s:%d: %s\n", d->items[q].file, d->items[q].line, d->items[q].msg);
  fprintf(stderr,
          "stepformer: %s: %d step%s with a mistake show%s its message instead of a picture "
          "(stepformer check lists every problem); the other steps work\n",
          s->lesson.path, n, n == 1 ? "" : "s", n == 1 ? "s" : "");
}

static bool page_reopen(const char *path, Session *out, Err *err) {
  SessionOpts so = page_opts;
  size_t n = strlen(path);
  if (n > 3 && !strcmp(path + n - 3, ".md"))
    so.lesson = path, so.model.model_path = NULL;
  else
    so.lesson = NULL, so.model.model_path = path, so.model.random_spec = NULL;
  LessonDiag diag = {0};
  so.lenient = true; // as the window opened its first lesson
  if (session_open(out, &so, &diag, err)) return broken_steps_note(out, &diag), true;
  lesson_diag_print(&diag, stderr); // FILE:LINE: what, as the command line prints them
  return false;
}

int cli_window(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) return fputs(USAGE, stdout), 0;
  SessionOpts so = {0};
  GenOpts gen = {0};
  AppOptions ao = {.save_dir = ".", .theme = THEME_DARK, .text_scale = 1.0f};
  WindowOptions wo = {0};
  Err err = {0};
  char msg[600];
  for (int i = 1; i < argc; i++) {
    int r = model_source_option(&so.model, argc, argv, &i, &err);
    if (!r) r = cli_target_option(&so.target, argc, argv, &i, &err);
    if (!r) r = cli_generate_option(&gen, argc, argv, &i, &err);
    if (r < 0) return cli_fail("window", err.msg);
    if (r) continue;
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    bool takes = !strcmp(a, "--size") || !strcmp(a, "--compare") || !strcmp(a, "--theme") ||
                 !strcmp(a, "--save-dir") || !strcmp(a, "--replay") || !strcmp(a, "--screenshot") ||
                 !strcmp(a, "--step") || !strcmp(a, "--compare-model");
    if (takes && !v) {
      snprintf(msg, sizeof msg, "%s needs a value (see stepformer --help)", a);
      return cli_fail("window", msg);
    }
    if (takes) i++;
    if (!strcmp(a, "--size")) {
      if (!cli_parse_size(v, &wo.width, &wo.height) || wo.width < 320 || wo.height < 240 ||
          wo.width > 16384 || wo.height > 16384)
        return cli_fail("window", "--size: give WIDTHxHEIGHT, from 320x240");
    } else if (!strcmp(a, "--theme")) {
      if (!strcmp(v, "dark"))
        ao.theme = THEME_DARK;
      else if (!strcmp(v, "light"))
        ao.theme = THEME_LIGHT;
      else
        return cli_fail("window", "--theme: use dark or light");
    } else if (!strcmp(a, "--step")) { // (the page's ?step=N)
      char *end;
      long n = strtol(v, &end, 10);
      if (*end || n < 1 || n > 100000) return cli_fail("window", "--step: give a step number, from 1");
      wo.start_step = (int)n;
    } else if (!strcmp(a, "--compare"))
      so.compare = v;
    else if (!strcmp(a, "--compare-model"))
      so.compare_model = v;
    else if (!strcmp(a, "--save-dir"))
      ao.save_dir = v;
    else if (!strcmp(a, "--replay"))
      wo.replay = v;
    else if (!strcmp(a, "--screenshot"))
      wo.screenshot = v;
    else if (!strcmp(a, "--realtime"))
      wo.realtime = true;
    else if (!strcmp(a, "--fullscreen"))
      wo.fullscreen = true;
    else if (!strcmp(a, "--frame-stats"))
      wo.frame_stats = true;
    else if (a[0] != '-' && !so.lesson)
      so.lesson = a;
    else {
      snprintf(msg, sizeof msg, "unknown option \"%s\" (see stepformer --help)", a);
      return cli_fail("window", msg);
    }
  }
  if (wo.screenshot && !wo.replay) return cli_fail("window", "--screenshot needs --replay FILE");
  if (web_active()) ao.save_dir = WEB_SAVE_DIR; // the page: what S and Ctrl+E write becomes downloads
  if (!cli_generate_check(&gen, so.target, &err)) return cli_fail("window", err.msg);
  so.generate = gen.on, so.max_steps = gen.max_steps, so.smp = gen.smp;
  // no lesson and no sentence of one's own: the cat/bank lesson
  char lesson_path[4096];
  if (!so.lesson && !so.model.text && !so.model.model_path && !so.model.random_spec) {
    char looked[1024];
    if (datadir_find(DATADIR_LESSONS, "cat-bank.md", lesson_path, sizeof lesson_path, looked, sizeof looked))
      so.lesson = lesson_path;
    else
      fprintf(
          stderr,
          "stepformer: note: the lesson cat-bank.md is not installed (looked in %s): showing its sentence\n",
          looked);
  } else if (so.lesson) {
    if (!cli_find_lesson(so.lesson, lesson_path, sizeof lesson_path, &err))
      return cli_fail("window", err.msg);
    so.lesson = lesson_path;
  }
  char hint[8192];
  export_hint(hint, sizeof hint, argv[0], &so);
  wo.export_hint = hint;
  if (!text_init(&err)) return cli_fail("window", err.msg);
  Session s;
  LessonDiag diag = {0};
  so.lenient = true; // a lesson step with a mistake shows its message there; the lecture goes on
  if (!session_open(&s, &so, &diag, &err)) {
    lesson_diag_print(&diag, stderr); // FILE:LINE: what, for each problem: the whole message
    return diag.n_errors ? 2 : cli_fail("window", err.msg);
  }
  broken_steps_note(&s, &diag);
  if (s.note.msg[0]) fprintf(stderr, "stepformer: note: %s\n", s.note.msg);
  // typing recomputes the whole pass at every key: for a large model use both cores
  const ModelConfig *mc = &s.model->cfg;
  // (not in the page: the web build has no threads)
  if ((long)mc->D * mc->F * mc->n_layers >= 512L * 2048 && !web_active()) forward_set_threads(2);
  page_opts = so, wo.reopen = page_reopen;
  int rc = window_run(&s, &ao, &wo);
  session_close(&s);
  text_shutdown();
  return rc;
}
