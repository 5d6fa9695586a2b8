// test_glyphs.c -- lessons in the teacher's language (issue 31, group 10): no character is drawn as
// the missing-glyph box.
//
// Every character of every shipped lesson (its title, sentence, narration: the whole file), and
// titles and sentences in French, German, Greek, Russian and Chinese, must be provided -- by the
// interface faces or by a fallback font fontconfig finds (text.h) -- in the faces that draw
// narration, titles and labels (TTF_GlyphIsProvided32 per character, through the fallback chain).
// Two Chinese words draw different pixels (two missing-glyph boxes would not), and a string that
// mixes scripts is as wide as its pieces. The tokens of the French lesson's sentence are drawn as
// the matrices' labels, accents and all.
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "forward.h" // defines: model_forward
#include "lesson.h"  // defines: lesson_load, lesson_open_model
#include "canvas.h"  // defines: canvas_new, canvas_clear, canvas_free
#include "text.h"    // defines: text_provided, text_draw, text_width
#include "view.h"    // defines: view_render

static const FontFace FACES[] = {FONT_SANS, FONT_SANS_BOLD, FONT_SANS_ITALIC};

// Every character of s provided in the faces; returns how many were checked.
static int all_provided(const char *where, const char *s, bool mono_and_serif) {
  int n = 0;
  for (const char *p = s; *p;) {
    uint32_t cp = text_utf8_next(&p);
    if (cp < 0x20 || cp == 0xFE0F || cp == 0x200D) continue; // control characters, joiners
    n++;
    for (size_t f = 0; f < sizeof FACES / sizeof *FACES; f++)
      CHECK(text_provided(FACES[f], 24, cp), "%s: U+%04X (face %d) would be drawn as the missing-glyph box%s",
            where, (unsigned)cp, (int)FACES[f], cp >= 0x2E80 ? " (install fonts-droid-fallback)" : "");
    if (mono_and_serif) // cells' numbers and the \text{} of a worked equation
      CHECK(text_provided(FONT_MONO, 24, cp) && text_provided(FONT_SERIF, 24, cp),
            "%s: U+%04X missing in the mono or serif face", where, (unsigned)cp);
  }
  return n;
}

// The pixels of s drawn alone, as a checksum.
static unsigned long ink(const char *s) {
  Canvas c = canvas_new(200, 60);
  if (!c.px) return 0;
  canvas_clear(c, SF_RGBA(255, 255, 255, 255));
  text_draw(c, FONT_SANS, 32, 10, 44, SF_RGBA(0, 0, 0, 255), s);
  unsigned long h = 1469598103;
  for (int i = 0; i < c.w * c.h; i++)
    h = (h ^ SF_R(c.px[i])) * 16777619ul + (unsigned long)i * (SF_R(c.px[i]) != 255);
  canvas_free(&c);
  return h;
}

int main(void) {
  Err err = {0};
  if (!text_init(&err)) return fprintf(stderr, "%s\n", err.msg), 1;
  // the teacher's languages
  const char *samples[][2] = {
      {"fr", "Le chat marche près de la rive, pas à la banque — « l'attention » à la main, où ça ?"},
      {"de", "Die Katze läuft am Ufer entlang, nicht zur Bank: Größe, Straße, Übung"},
      {"el", "Η γάτα περπατά δίπλα στην όχθη του ποταμού, όχι στην τράπεζα"},
      {"ru", "Кошка идёт по берегу реки, а не в банк: внимание, ёж, щука"},
      {"zh", "猫沿着河岸走，不是去银行。注意力机制：查询、键和值"},
  };
  for (size_t k = 0; k < sizeof samples / sizeof *samples; k++)
    CHECK(all_provided(samples[k][0], samples[k][1], true) > 20, "%s: checked", samples[k][0]);
  // a fallback draws real glyphs: two Chinese words differ (two boxes would not)
  CHECK(ink("猫") != ink("狗"), "猫 and 狗 draw the same pixels: the missing-glyph box");
  CHECK(ink("河岸") != ink("银行"), "河岸 and 银行 draw the same pixels");
  float wa = text_width(FONT_SANS, 24, "chat "), wb = text_width(FONT_SANS, 24, "猫"),
        wab = text_width(FONT_SANS, 24, "chat 猫");
  CHECK(wb > 10 && wab > wa + wb * 0.8f && wab < wa + wb * 1.2f, "mixed scripts: %g + %g vs %g", wa, wb, wab);
  // every shipped lesson, every character
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/../lessons", check_test_dir());
  DIR *d = opendir(dir);
  CHECK(d != NULL, "cannot open %s", dir);
  int lessons = 0;
  for (struct dirent *e; d && (e = readdir(d));) {
    size_t n = strlen(e->d_name);
    if (n < 4 || strcmp(e->d_name + n - 3, ".md")) continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    FILE *f = fopen(path, "rb");
    if (!f) continue;
    static char text[1 << 20];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    all_provided(e->d_name, text, false);
    lessons++;
  }
  if (d) closedir(d);
  CHECK(lessons >= 9, "%d lessons read", lessons);
  // the French lesson: its sentence's words are the labels of its matrices
  char path[1024];
  snprintf(path, sizeof path, "%s/../lessons/fr-chat-banque.md", check_test_dir());
  Lesson l;
  LessonDiag ld = {0};
  bool loaded = lesson_load(&l, path, &ld);
  CHECK(loaded, "fr-chat-banque.md does not load");
  Model *m = loaded ? lesson_open_model(&l, NULL, &err) : NULL;
  CHECK(m != NULL, "%s", err.msg);
  if (m) {
    Tokens tok;
    CHECK(tokens_from_text(&tok, &m->vocab, l.sentence, 0, &err), "%s", err.msg);
    Trace *t = trace_new(m, &tok, &err);
    tokens_free(&tok);
    CHECK(t != NULL, "%s", err.msg);
    if (t) {
      model_forward(t);
      const char *words[] = {"près", "à", "banque", "rive", "chat"};
      bool seen[5] = {0};
      int st = trace_step_find(t, STEP_EMBED, -1);
      Scene s;
      scene_init(&s, 1280, 720, 0);
      ViewOptions o = view_options_default(theme_get(THEME_LIGHT));
      ViewLayout lay;
      view_render(&s, t, st, &o, 0, 0, 1280, 720, &lay);
      for (int c = 0; c < s.n; c++)
        for (int w = 0; w < 5; w++)
          if (s.cmds[c].kind == CMD_TEXT && s.cmds[c].text && strstr(s.cmds[c].text, words[w]))
            seen[w] = true;
      for (int w = 0; w < 5; w++) CHECK(seen[w], "the French token \"%s\" is not drawn as a label", words[w]);
      scene_free(&s);
      trace_free(t);
    }
    model_free(m);
  }
  lesson_free(&l);
  return check_exit("test_glyphs");
}
