// cli_export.c -- `stepformer export`: the command line of export.h's export_run.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "export.h" // defines: export_run, ExportSpec

static const char *USAGE =
    "usage: stepformer export [--lesson FILE] [--text TEXT] [--model FILE | --random SPEC [--vocab LIST]]\n"
    "                         [--causal] [--compare TEXT] --out DIR [--format png|svg|npy|csv|all] [--size "
    "WxH]\n"
    "                         [--theme light|dark] [--head H|all] [--scale matrix|stage|global]\n"
    "                         [--no-text] [--no-numbers] [--threads N] [--model-view]\n"
    "                         [--invariants] [--claims] [--inside [--tensor NAME] [--block N] [--weight N]]\n"
    "                         [--compare-model FILE]\n"
    "                         [--target TEXT | --generate [--max-steps N]]\n"
    "                         [--edit SPEC]... [--head-off LAYER:HEAD[:zero|:uniform]]... [--tokens A-B]\n"
    "\n"
    "Writes, without a display, one picture per step of the pass (or per lesson step with\n"
    "--lesson, narration included unless --no-text) as PNG and/or SVG, named NN-stage[-hH],\n"
    "and the exact values of every stage as .npy and/or CSV with the token labels.\n"
    "Files of the same names in DIR are replaced, and an earlier run's files of the same kinds\n"
    "that this one does not write again are removed (not those changed since); nothing else in\n"
    "DIR is touched.\n"
    "\n"
    "  --lesson FILE   export the lesson's steps (its sentence and model unless overridden)\n"
    "  --text TEXT     the sentence (default: the lesson's, or \"" MODEL_SOURCE_DEFAULT_TEXT "\")\n"
    "  --compare TEXT  a second sentence, shown beside the first at every step, with the\n"
    "                  difference when both have as many words, then the cosine similarity of\n"
    "                  the two sentences' vectors (stage sim; with npy: sim.X.npy ... sim.line.npy,\n"
    "                  as dump --compare writes them)\n"
    "  --model FILE    a safetensors model; --random SPEC a seeded random one (see dump --help)\n"
    "  --format F      png (default), svg, npy, csv, or all; several with commas: png,svg\n"
    "  --size WxH      picture size in pixels (default 1920x1080)\n"
    "  --theme T       light (default, for slides and paper) or dark\n"
    "  --head H        per-head stages: only head H (1-based), or all = the grid of all heads;\n"
    "                  default: one picture per head\n"
    "  --scale S       colour scale per matrix, per stage (default) or global\n"
    "  --model-view    one picture, DIR/model-view.png (or .svg): the attention weights A of\n"
    "                  every layer (rows) and head (columns) as a grid of small heatmaps; a model\n"
    "                  too large to read at once (12 x 12 at 1280x720) adds model-view-page2 ...\n"
    "  --inside        also the views inside the pass: inside-lens (the prediction read after\n"
    "                  every layer), inside-saliency (which word drove the prediction) and per\n"
    "                  layer inside-lN-rollout, inside-lN-headview (BertViz's lines), inside-lN-neurons;\n"
    "                  a causal model's inside-kvcache (the K and V rows generation keeps, in bytes);\n"
    "                  a quantized GGUF model's inside-stored (its weights as the file holds them:\n"
    "                  one block's codes, scales and values, one weight worked out, the matrix)\n"
    "  --tensor NAME, --block N, --weight N   the stored view's tensor (a quantized one of the file:\n"
    "                  `info` lists them), block and weight in it, from 1 (default: the first\n"
    "                  Q4_K/Q5_K/Q6_K matrix, the block of its largest |weight|, the block's largest)\n"
    "  --compare-model FILE  the same sentence through a second file of the same model (the F16\n"
    "                  file beside a Q4 one) beside every step, with the difference; the stored view\n"
    "                  shows the error against its tensor. Files whose tokenizers or shapes differ\n"
    "                  are refused\n"
    "  --no-text       pictures without the lesson's narration\n"
    "  --no-numbers    no values printed in the cells\n"
    "  --tokens A-B    show only tokens A to B (counted from 1) of the sentence on every token axis,\n"
    "                  as the window's < > do; the pictures say which (\"tokens 21–40 of 66\"), and the\n"
    "                  numbers stay those of the whole pass (a softmax row sums over every column).\n"
    "                  Default: a sentence of more than 40 tokens shows as many as can each be named,\n"
    "                  around a lesson step's focus (else from the first)\n"
    "  --claims        the teacher's copy: each step's expect= claims under its narration,\n"
    "                  measured (✓ / ✗); students' slides leave them out (they answer the\n"
    "                  narration's questions)\n"
    "  --invariants    the invariants panel over each stage: softmax rows summing to 1, masked\n"
    "                  weights 0, S = QKᵀ/√d_k and why the shapes fit, LayerNorm rows' mean and\n"
    "                  variance, the residual's norms (✗ where a what-if edit breaks one)\n"
    "  --threads N     pictures drawn at once, 1 to 8 (default 2)\n"
    "  --vocab LIST    the words of a --random model (default: <unk> and the words of TEXT)\n"
    "  --causal        mask keys after each query (a decoder's self-attention)\n" CLI_EDIT_HELP
    "  --target TEXT   an encoder-decoder's target: the decoder reads <bos> and its words\n"
    "  --generate      greedy generation: DIR/step1/, DIR/step2/ ... each hold the pictures and\n"
    "                  data of that generation step (an encoder-decoder, or a causal model with a head)\n"
    "  --max-steps N   at most N generation steps (default 2·L + 10, at most 64)\n"
    "  --top-k K, --top-p P, --seed S, --temperature T   with --generate: draw each word instead of\n"
    "                  the argmax: softmax(logits / T), keep the K best, then the smallest set whose\n"
    "                  probability reaches P (as transformers' warpers), renormalize, draw with seed S\n"
    "                  (the same words on every machine; default seed 42)\n";

// "png,svg": each item one of the names, none empty.
static bool parse_formats(const char *s, int *out) {
  static const struct {
    const char *name;
    int bits;
  } NAMES[] = {{"png", EXPORT_PNG},
               {"svg", EXPORT_SVG},
               {"npy", EXPORT_NPY},
               {"csv", EXPORT_CSV},
               {"all", EXPORT_PNG | EXPORT_SVG | EXPORT_NPY | EXPORT_CSV}};
  *out = 0;
  for (;;) {
    size_t n = strcspn(s, ","), k = 0;
    while (k < sizeof NAMES / sizeof *NAMES && (strlen(NAMES[k].name) != n || strncmp(s, NAMES[k].name, n)))
      k++;
    if (k == sizeof NAMES / sizeof *NAMES) return false;
    *out |= NAMES[k].bits;
    if (!s[n]) return true;
    s += n + 1;
  }
}

int cli_export(int argc, char **argv) {
  if (cli_wants_help(argc, argv)) return fputs(USAGE, stdout), 0;
  SessionOpts so = {0};
  GenOpts gen = {0};
  const char *out = NULL;
  int formats = EXPORT_PNG, width = 1920, height = 1080, head_opt = -2, threads = 2;
  bool show_text = true, invariants = false, claims = false, inside = false;
  ViewOptions view = view_options_default(theme_get(THEME_LIGHT));
  StoredPick pick = {.which = -1, .block = -1, .weight = -1}; // --tensor, --block, --weight
  Err err = {0};
  char msg[600];
  const char *seen[16];
  int n_seen = 0;
  for (int i = 1; i < argc; i++) {
    int r = model_source_option(&so.model, argc, argv, &i, &err);
    if (!r) r = cli_target_option(&so.target, argc, argv, &i, &err);
    if (!r) r = cli_generate_option(&gen, argc, argv, &i, &err);
    if (r < 0) return cli_fail("export", err.msg);
    if (r) continue;
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    bool takes = !strcmp(a, "--out") || !strcmp(a, "--compare") || !strcmp(a, "--lesson") ||
                 !strcmp(a, "--format") || !strcmp(a, "--size") || !strcmp(a, "--theme") ||
                 !strcmp(a, "--head") || !strcmp(a, "--scale") || !strcmp(a, "--threads") ||
                 !strcmp(a, "--tensor") || !strcmp(a, "--block") || !strcmp(a, "--weight") ||
                 !strcmp(a, "--compare-model") || !strcmp(a, "--tokens");
    if (takes && !v) {
      snprintf(msg, sizeof msg, "%s needs a value (see stepformer export --help)", a);
      return cli_fail("export", msg);
    }
    if (takes || !strcmp(a, "--no-text") || !strcmp(a, "--no-numbers") || !strcmp(a, "--model-view") ||
        !strcmp(a, "--invariants") || !strcmp(a, "--claims") || !strcmp(a, "--inside")) { // each option once
      for (int k = 0; k < n_seen; k++)
        if (!strcmp(seen[k], a)) {
          snprintf(msg, sizeof msg, "%s is given twice: give it once", a);
          return cli_fail("export", msg);
        }
      if (n_seen < (int)(sizeof seen / sizeof *seen)) seen[n_seen++] = a;
    }
    if (takes) i++;
    if (!strcmp(a, "--out"))
      out = v;
    else if (!strcmp(a, "--compare"))
      so.compare = v;
    else if (!strcmp(a, "--compare-model"))
      so.compare_model = pick.ref = v;
    else if (!strcmp(a, "--lesson"))
      so.lesson = v;
    else if (!strcmp(a, "--format")) {
      if (!parse_formats(v, &formats)) {
        snprintf(msg, sizeof msg,
                 "--format %.400s: use png, svg, npy, csv or all (several with commas: png,svg)", v);
        return cli_fail("export", msg);
      }
    } else if (!strcmp(a, "--size")) {
      // under 640x360 the header, the formula and the labels of a slide no longer fit beside each other
      if (!cli_parse_size(v, &width, &height) || width < 640 || height < 360 || width > 8192 ||
          height > 8192) {
        snprintf(msg, sizeof msg, "--size %s: give WIDTHxHEIGHT in pixels, from 640x360 to 8192x8192", v);
        return cli_fail("export", msg);
      }
    } else if (!strcmp(a, "--theme")) {
      if (!strcmp(v, "light"))
        view.theme = theme_get(THEME_LIGHT);
      else if (!strcmp(v, "dark"))
        view.theme = theme_get(THEME_DARK);
      else
        return cli_fail("export", "--theme: use light or dark");
    } else if (!strcmp(a, "--head")) {
      char *end;
      long h = strtol(v, &end, 10);
      if (!strcmp(v, "all"))
        head_opt = -1;
      else if (end != v && !*end && h >= 1 && h <= 4096)
        head_opt = (int)h - 1;
      else
        return cli_fail("export", "--head: give a head number from 1, or all");
    } else if (!strcmp(a, "--scale")) {
      if (!strcmp(v, "matrix"))
        view.scale = SCALE_MATRIX;
      else if (!strcmp(v, "stage"))
        view.scale = SCALE_STAGE;
      else if (!strcmp(v, "global"))
        view.scale = SCALE_GLOBAL;
      else
        return cli_fail("export", "--scale: use matrix, stage or global");
    } else if (!strcmp(a, "--tokens")) {
      int from, to, used = 0;
      if (sscanf(v, "%d-%d%n", &from, &to, &used) != 2 || v[used] || from < 1 || to < from) {
        snprintf(msg, sizeof msg,
                 "--tokens %.100s: give the first and the last token, counted from 1: --tokens 21-40", v);
        return cli_fail("export", msg);
      }
      view.tok_first = from - 1, view.tok_count = to - from + 1;
    } else if (!strcmp(a, "--threads")) {
      char *end;
      long t = strtol(v, &end, 10);
      if (end == v || *end || t < 1 || t > 8)
        return cli_fail("export", "--threads: give a number from 1 to 8");
      threads = (int)t;
    } else if (!strcmp(a, "--no-text"))
      show_text = false;
    else if (!strcmp(a, "--no-numbers"))
      view.numbers = false;
    else if (!strcmp(a, "--model-view"))
      view.model_view = true;
    else if (!strcmp(a, "--invariants"))
      invariants = true;
    else if (!strcmp(a, "--claims"))
      claims = true;
    else if (!strcmp(a, "--inside"))
      inside = true;
    else if (!strcmp(a, "--tensor"))
      pick.tensor = v;
    else if (!strcmp(a, "--block") || !strcmp(a, "--weight")) {
      char *end;
      long long n = strtoll(v, &end, 10);
      if (end == v || *end || n < 1 || n > (1LL << 40)) {
        snprintf(msg, sizeof msg, "%s %.100s: give a number from 1 (the first %s)", a, v,
                 a[2] == 'b' ? "block of the tensor" : "weight of the block");
        return cli_fail("export", msg);
      }
      if (a[2] == 'b')
        pick.block = n - 1;
      else
        pick.weight = (int)(n > 256 ? 256 : n) - 1;
    } else {
      snprintf(msg, sizeof msg, "unknown option \"%s\" (see stepformer export --help)", a);
      return cli_fail("export", msg);
    }
  }
  if (!out) return cli_fail("export", "--out DIR is required (the folder to write into)");
  if (view.model_view && head_opt != -2)
    return cli_fail("export", "--model-view shows every head: leave out --head");
  if (!cli_generate_check(&gen, so.target, &err)) return cli_fail("export", err.msg);
  so.generate = gen.on, so.max_steps = gen.max_steps, so.smp = gen.smp;
  char lesson_path[4096]; // a lesson by name: the teacher's or a shipped one (cli_find_lesson)
  if (so.lesson && !cli_find_lesson(so.lesson, lesson_path, sizeof lesson_path, &err))
    return cli_fail("export", err.msg);
  if (so.lesson) so.lesson = lesson_path;
  if ((formats & (EXPORT_PNG | EXPORT_SVG)) && !text_init(&err)) return cli_fail("export", err.msg);

  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  Session s;
  LessonDiag diag = {0};
  if (!session_open(&s, &so, &diag, &err)) {
    lesson_diag_print(&diag, stderr); // FILE:LINE: what, for each problem: the whole message
    return diag.n_errors ? 2 : cli_fail("export", err.msg);
  }
  if (s.note.msg[0]) fprintf(stderr, "stepformer export: note: %s\n", s.note.msg);
  StoredView *stored = NULL; // a quantized GGUF model's weights as stored (the stored view, --inside)
  if (!cli_stored_view(s.model, &pick, &stored, &err)) {
    session_close(&s);
    return cli_fail("export", err.msg);
  }
  view.stored = stored;
  if (view.tok_count > 0 && view.tok_first + view.tok_count > s.trace->L) {
    snprintf(msg, sizeof msg, "--tokens %d-%d: the sentence has %d tokens", view.tok_first + 1,
             view.tok_first + view.tok_count, s.trace->L);
    session_close(&s);
    return cli_fail("export", msg);
  }
  ExportSpec spec = {.formats = formats,
                     .width = width,
                     .height = height,
                     .head_opt = head_opt,
                     .show_text = show_text,
                     .invariants = invariants,
                     .claims = claims,
                     .inside = inside,
                     .view = view,
                     .threads = threads};
  int rc = 0, files = 0, pictures = 0;
  bool ok = true;
  if (s.gen && !s.has_lesson) { // every generation step into its folder (a lesson: its steps, once)
    char dir[4096];
    for (int k = 0; ok && k < s.gen->n_steps; k++) {
      int f = 0, p = 0;
      session_set_gen_step(&s, k);
      if (snprintf(dir, sizeof dir, "%s/step%d", out, k + 1) >= (int)sizeof dir)
        ok = err_set(&err, "--out %s: the path is too long", out);
      else
        ok = export_run(&s, dir, &spec, &f, &p, &err);
      files += f, pictures += p;
    }
  } else
    ok = export_run(&s, out, &spec, &files, &pictures, &err);
  if (!ok) {
    rc = cli_fail("export", err.msg);
  } else {
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    printf("wrote %d files (%d picture%s) for \"%s\" to %s in %.0f ms\n", files, pictures,
           pictures == 1 ? "" : "s", s.text, out, ms);
  }
  session_close(&s);
  free(stored);
  return rc;
}
