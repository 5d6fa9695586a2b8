// app_files.c -- the window's S (save the view as a new numbered PNG) and Ctrl+E (export every
// step into a new numbered folder). Nothing the user has is ever overwritten: a picture is
// written to a temporary name and hard-linked to its final name, which fails if that name
// exists (then the next number is tried); a folder is made with mkdir, which does the same.
#define _XOPEN_SOURCE 700 // realpath
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app_internal.h"
#include "export.h"  // defines: export_run
#include "pngio.h"   // defines: pngio_write
#include "version.h" // defines: version_string, version_commit
#include "web.h"     // defines: web_active

static const char *absolute(const char *path, char *buf, size_t cap) {
  char *r = realpath(path, NULL);
  snprintf(buf, cap, "%s", r ? r : path);
  free(r);
  return buf;
}

// Gives the finished file tmp the new name path, never replacing a file there (false, errno
// EEXIST): a hard link, then tmp removed. The page's file system (emscripten's MEMFS) has no hard
// links; there nothing but this program writes, so a rename after a check is as safe.
static bool place_new(const char *tmp, const char *path) {
#ifdef __EMSCRIPTEN__
  if (access(path, F_OK) == 0) return errno = EEXIST, false;
  return rename(tmp, path) == 0;
#else
  if (link(tmp, path) != 0) return false;
  unlink(tmp);
  return true;
#endif
}

// The folder S and Ctrl+E write into (--save-dir): when it is not a folder one can write in, the
// status says so plainly, in its own words (not a temporary file's name), and how to fix it.
static bool save_dir_ok(App *a, const char *what) {
  struct stat st;
  if (stat(a->save_dir, &st) != 0) {
    app_set_status(a, "cannot %s: the folder %s does not exist (--save-dir): create it or give another", what,
                   a->save_dir);
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    app_set_status(a, "cannot %s: %s is not a folder (--save-dir): give a folder", what, a->save_dir);
    return false;
  }
  if (access(a->save_dir, W_OK) != 0) {
    app_set_status(a, "cannot %s: the folder %s is not writable (--save-dir): give another", what,
                   a->save_dir);
    return false;
  }
  return true;
}

void app_save(App *a) {
  int w = (int)a->w, h = (int)a->h;
  PageSpec p;
  ViewOptions vo;
  app_page_spec(a, &p, &vo, (float)w, (float)h, false); // the view without the window's layer
  ViewLayout lay;
  page_render(&a->scratch, &p, &lay);
  bool train = app_train_open(a); // the training overlay is the picture (its footer: after N steps, η)
  if (train) {
    scene_reset(&a->scratch, (float)w, (float)h, 0);
    app_train_draw(a, &a->scratch, (float)w, (float)h, 1);
    p.step = -1;
  }
  if (!save_dir_ok(a, "save")) return;
  Canvas c = canvas_new(w, h);
  if (!c.px) return app_set_status(a, "cannot save: out of memory");
  scene_raster(&a->scratch, c, 0);
  char tmp[PATH_MAX], path[PATH_MAX], shown[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s/.stepformer-save-%ld.png", a->save_dir, (long)getpid());
  Err err = {0};
  char label[256];
  if (train)
    app_train_caption(a, label, sizeof label);
  else if (p.step >= 0)
    page_header_label(a->s->trace, p.step, &vo, label, sizeof label);
  else
    snprintf(label, sizeof label, "%s", p.title ? p.title : "");
  char edits[1024]; // a what-if picture says so in its metadata too (edits.h)
  edits_describe(p.trace, edits, sizeof edits);
  char software[96];
  snprintf(software, sizeof software, "Stepformer %s (commit %s)", version_string(), version_commit());
  const char *kv[] = {"Title",    label,    "Sentence", a->s->text, "Model", a->s->model->source,
                      "Software", software, "Edits",    edits};
  if (!pngio_write(c, tmp, kv, edits[0] ? 5 : 4, &err)) {
    canvas_free(&c);
    return app_set_status(a, "cannot save: %s", err.msg);
  }
  canvas_free(&c);
  const char *stage = p.step >= 0 ? lesson_stage_name(a->s->trace->steps[p.step].kind)
                      : train     ? "backward"
                                  : "text";
  for (int n = 1; n < 10000; n++) {
    snprintf(path, sizeof path, "%s/stepformer-%03d-%s.png", a->save_dir, n, stage);
    if (place_new(tmp, path)) {
      if (web_active()) // the page hands the file to the browser as a download (web.h)
        return app_set_status(a, "saved %s (downloaded by the browser)", strrchr(path, '/') + 1);
      return app_set_status(a, "saved %s", absolute(path, shown, sizeof shown));
    }
    if (errno != EEXIST) break;
  }
  int e = errno;
  unlink(tmp);
  app_set_status(a, "cannot save in %s: %s", a->save_dir, strerror(e));
}

void app_export(App *a) {
  if (!save_dir_ok(a, "export")) return;
  char dir[PATH_MAX], shown[PATH_MAX];
  int n = 1;
  for (; n < 10000; n++) {
    snprintf(dir, sizeof dir, "%s/stepformer-export-%03d", a->save_dir, n);
    if (mkdir(dir, 0777) == 0) break;
    if (errno != EEXIST) return app_set_status(a, "cannot export into %s: %s", a->save_dir, strerror(errno));
  }
  PageSpec p;
  ViewOptions vo;
  app_page_spec(a, &p, &vo, 1920, 1080, false);
  vo.hover_op = -1;
  ExportSpec spec = {.formats = EXPORT_PNG,
                     .width = 1920,
                     .height = 1080,
                     .head_opt = a->s->has_lesson ? -2 : a->head,
                     .show_text = true,
                     .view = vo,
                     .threads = 2};
  if (!a->s->has_lesson && a->head < 0) spec.head_opt = -1;
  int files = 0, pictures = 0;
  Err err = {0};
  bool ok = true;
  if (a->s->gen && !a->s->has_lesson) { // --generate: every generation step into DIR/stepK, as export does
    int shown_step = a->s->gen_step;
    char sub[PATH_MAX + 16];
    for (int k = 0; ok && k < a->s->gen->n_steps; k++) {
      int f = 0, pc = 0;
      session_set_gen_step(a->s, k);
      snprintf(sub, sizeof sub, "%s/step%d", dir, k + 1);
      ok = export_run(a->s, sub, &spec, &f, &pc, &err);
      files += f, pictures += pc;
    }
    session_set_gen_step(a->s, shown_step);
  } else
    ok = export_run(a->s, dir, &spec, &files, &pictures, &err);
  if (!ok) {
    rmdir(dir); // (step folders already written stay)
    return app_set_status(a, "export failed: %s", err.msg);
  }
  if (web_active()) // the page offers the folder as one zip archive (web.h)
    return app_set_status(a, "exported %d pictures, downloaded as %s.zip", pictures, strrchr(dir, '/') + 1);
  app_set_status(a, "exported %d pictures to %s", pictures, absolute(dir, shown, sizeof shown));
}
