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

// The strip's height in pixels for a picture h pixels high at this text scale.
float genstrip_height(float h, float text_scale);
// Draws generation step k (0-based) of g above the footer of a W×H page; keys_hint adds the
// window's ", and ." line.
void genstrip_draw(Scene *s, const Generation *g, int k, const Theme *th, float W, float H, float text_scale,
                   bool keys_hint);

#endif
