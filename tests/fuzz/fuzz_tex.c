// fuzz_tex.c -- libFuzzer target for the math layout (tex.h): parse, lay out, emit, free.
//
// The bytes become a NUL-terminated formula. tex_check must agree with itself (true exactly
// when it found no problem) and its problems must point inside the source; tex_layout must
// return a box (NULL only when out of memory) whose metrics are finite, must report at least
// the parser's problems, and every command it emits must have finite coordinates. Short
// formulas are also rasterized, so glyph offsets and clipping get exercised.
// tex_check and tex_layout share one parse (tex_check_tree, then tex_layout_tree: the two
// halves of tex_layout, see tex_internal.h): a second parse of the same bytes was a sixth of
// the target's time and reached no other code.
// Build: CC=clang cmake -S . -B build-fuzz -DSF_FUZZ=ON -DSF_SANITIZE=ON
//        && cmake --build build-fuzz --target fuzz_tex
// Run:   build-fuzz/tests/fuzz_tex -max_total_time=120 tests/fuzz/corpus/tex
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tex.h"          // defines: tex_emit, tex_metrics, TexDiag
#include "tex_internal.h" // defines: tex_check_tree, tex_layout_tree

// fontconfig 2.14 (Debian 12) leaks ~5.7 kB once in FcInit's configuration parsing, even in a
// program that only matches one font; LeakSanitizer reads this to ignore that one library.
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libfontconfig.so\n"; }

#define PROMISE(x)                                                                                           \
  do {                                                                                                       \
    if (!(x)) {                                                                                              \
      fprintf(stderr, "fuzz_tex: broken promise: %s\n", #x);                                                 \
      __builtin_trap();                                                                                      \
    }                                                                                                        \
  } while (0)

static void check_diag(const TexDiag *d, size_t size) {
  PROMISE(d->count >= 0);
  for (int i = 0; i < d->count && i < TEX_DIAG_MAX; i++) {
    const TexProblem *p = &d->items[i];
    PROMISE(p->offset >= 0 && (size_t)p->offset <= size);
    PROMISE(p->line >= 1 && p->col >= 1 && p->msg[0]);
    char buf[200];
    PROMISE(tex_problem_str(p, buf, sizeof buf)[0]);
  }
}

static bool finite_cmd(const Cmd *c) {
  return isfinite(c->x) && isfinite(c->y) && isfinite(c->w) && isfinite(c->h) && isfinite(c->x2) &&
         isfinite(c->y2) && isfinite(c->size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static bool fonts;
  if (!fonts) {
    Err err = {0};
    if (!text_init(&err)) {
      fprintf(stderr, "fuzz_tex: %s\n", err.msg);
      abort();
    }
    fonts = true;
  }
  char *src = malloc(size + 1);
  if (!src) return 0;
  memcpy(src, data, size);
  src[size] = 0;
  size_t len = strlen(src); // the formula ends at the first NUL
  TexDiag parsed, laid;
  TexArena tree = {0};
  const TexNode *list;
  bool ok = tex_check_tree(&tree, src, len, &parsed, &list); // tex_check's parse and answer
  PROMISE(ok == (parsed.count == 0));
  check_diag(&parsed, len);
  bool display = size && (data[0] & 1);
  laid = parsed; // tex_layout's parse: the same
  TexBox *b = tex_layout_tree(&tree, list, src, size % 2 ? 24 : 37, display, &laid);
  PROMISE(b != NULL);
  check_diag(&laid, len);
  PROMISE(laid.count >= parsed.count);
  TexMetrics m = tex_metrics(b);
  PROMISE(isfinite(m.width) && isfinite(m.ascent) && isfinite(m.descent));
  PROMISE(m.ascent >= 0 && m.descent >= 0);
  // One scene and one canvas for every input, as the window keeps them from frame to frame: a
  // new 64 kB scene arena and 150 kB canvas per input cost ASan's allocator more than the input.
  static Scene s;
  scene_reset(&s, 320, 120, SF_RGBA(255, 255, 255, 255));
  tex_emit(&s, b, 10, 80, SF_RGBA(0, 0, 0, 255));
  for (int i = 0; i < s.n; i++) PROMISE(finite_cmd(&s.cmds[i]));
  static Canvas c;
  if (!c.px) c = canvas_new(320, 120);
  if (len < 96 && c.px) scene_raster(&s, c, 0);
  tex_free(b);
  free(src);
  return 0;
}
