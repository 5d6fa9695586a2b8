// no_window.h -- the render layer's window rule, checked by the compiler.
//
// CMake forces this header into every render source (-include). Render draws into memory
// (canvas.h) and never opens or drives a window: the SDL functions that would are poisoned, so a
// render file that calls one, or includes the SDL header that declares it, fails to compile.
// (Render also has no SDL include path: only sf_text, the glyph rasterizer, links SDL2_ttf.)
#ifndef SF_NO_WINDOW_H
#define SF_NO_WINDOW_H

#pragma GCC poison SDL_Init SDL_InitSubSystem SDL_CreateWindow SDL_CreateWindowAndRenderer
#pragma GCC poison SDL_CreateRenderer SDL_CreateTexture SDL_PollEvent SDL_WaitEvent

#endif
