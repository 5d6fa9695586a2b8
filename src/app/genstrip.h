// genstrip.h -- the generation strip of --generate: the words written so far, the word this
// generation step writes marked, and the five most probable next words with their probabilities
// as bars, drawn between the view and the footer (the page keeps PageSpec.footer_reserve =
// genstrip_height free for it). The window draws it under every step of a generation; export
// draws it in every picture of one. Sized for the back of a room at 1280×720.
//
//     p.footer_reserve = genstrip_height(h, scale);
//     page_render(scene, &p, &lay);
//     genstrip_draw(scene, gen, k, theme, w, h, scale, true);
#ifndef SF_GENSTRIP_H
#define SF_GENSTRIP_H

#include <stdbool.h>

#include "generate.h" // defines: Generation
#include "scene.h"    // defines: Scene
#include "colormap.h" // defines: Theme
#include "lesson.h"   // defines: Lesson

// The strip's height in pixels for a picture h pixels high at this text scale.
float genstrip_height(float h, float text_scale);
// Draws generation step k (0-based) of g above the footer of a W×H page; keys_hint adds the
// window's ", and ." line. hide_next: the word step k writes and its candidates are a "?" (the
// lesson asks for them later: genstrip_hides).
void genstrip_draw(Scene *s, const Generation *g, int k, const Theme *th, float W, float H, float text_scale,
                   bool keys_hint, bool hide_next);
// Whether lesson step `step` of l must not show what generation step k writes: a later step of
// the lesson asks for it (a prediction stage with gen= k), or this one does and has not been
// revealed yet (hidden_now: its reveal= still pending). False without a lesson (l NULL).
bool genstrip_hides(const Lesson *l, int step, int k, bool hidden_now);

#endif
