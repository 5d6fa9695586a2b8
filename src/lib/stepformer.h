// stepformer.h -- libstepformer: Stepformer's model, forward pass and pictures from C, without a
// window (issue 37). The one public header of the library; the Python package (python/stepformer)
// calls it through ctypes.
//
// What it does: opens a model (a file or folder the program opens: canonical or course .safetensors,
// a torch.save .pt with its NAME.json, a hub folder; or the bytes of a .safetensors or .pt held in
// memory), runs the forward pass on a sentence (tokenized as the program does) or on token ids,
// gives every stage by its dump name as float32 with its shape (exactly the files of
// `stepformer dump`: "O", "X", "P", "Z", "l0.Q" ... "l0.out", per-head stages [H, rows, cols]),
// runs one training step's backward (gradients "grad.<stage>", the loss), and draws any step of
// the pass (stage, layer, head) as PNG or SVG bytes of a given size, as `stepformer export` draws it.
//
// Names: sf_* functions, SF_* constants; opaque handles sf_model and sf_pass. A pass keeps its
// model: free the pass before the model. Handles are not shared between threads while in use;
// different handles may be used on different threads.
// Errors: a function that fails returns NULL, -1 or 0 (as it says) and sets the calling thread's
// error, one line of text (what, where, how to fix) read with sf_error(); nothing is printed.
// Memory: buffers returned by sf_render are freed with sf_free_bytes; strings returned by the
// accessors belong to their handle and live as long as it does.
// Versions: SF_API_VERSION grows when a function is added or changed; sf_api_version() tells the
// loaded library's, so a caller built against another header can refuse it in one line.
//
//     sf_model *m = sf_model_open("assets/models/bank.safetensors");
//     if (!m) { fprintf(stderr, "%s\n", sf_error()); return 2; }
//     sf_pass *p = sf_run(m, "The cat walks by the bank");
//     int shape[3], nd = sf_stage_shape(p, "l0.A", shape);        // 3: H, L, L
//     float *a = malloc(sizeof(float) * sf_stage_size(p, "l0.A"));
//     sf_stage_read(p, "l0.A", a, sf_stage_size(p, "l0.A"));
//     void *png; size_t n;
//     int k = sf_step_find(p, "softmax", 0);                       // layer 1's softmax step
//     if (sf_render(p, k, 0, 1280, 720, SF_PNG, 0, &png, &n)) fwrite(png, 1, n, f), sf_free_bytes(png);
//     sf_pass_free(p); sf_model_free(m);
#ifndef STEPFORMER_H
#define STEPFORMER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SF_API_VERSION 1

#if defined(__GNUC__)
#define SF_API __attribute__((visibility("default")))
#else
#define SF_API
#endif

typedef struct sf_model sf_model; // a model, as loaded (its weights never change)
typedef struct sf_pass sf_pass;   // one forward pass of a model on one sentence

// ---- the library
SF_API int sf_api_version(void);     // SF_API_VERSION of the library as built
SF_API const char *sf_version(void); // "0.1 (commit abc1234)"
SF_API const char *sf_error(void);   // the calling thread's last error, "" when none
SF_API void sf_free_bytes(void *p);  // frees what sf_render returned

// ---- models
// A file or folder, as `stepformer --model` takes it. NULL with sf_error().
SF_API sf_model *sf_model_open(const char *path);
// The bytes of a .safetensors (canonical names, or a course notebook's with its config in
// __metadata__) or of a torch.save .pt. config_json: the NAME.json of a .pt or of a .safetensors
// without metadata ({"n_heads": 2, "vocab": [...]}), else NULL. name: what messages and pictures
// call the model ("my-notebook"; NULL: "<memory>"). The bytes are copied: free them when it returns.
SF_API sf_model *sf_model_open_bytes(const void *bytes, size_t len, const char *config_json,
                                     const char *name);
SF_API void sf_model_free(sf_model *m);
// The model's sizes: key one of "V" (vocabulary), "D", "H", "F", "layers", "classes" (0 without a
// classifier), "max_pos" (0: any length), "seq2seq" (1 for an encoder-decoder). -1 for another key.
SF_API int sf_model_dim(const sf_model *m, const char *key);
// What the program's `info` says on its first lines: the source, the sizes, its features.
SF_API const char *sf_model_describe(sf_model *m);
// Vocabulary word `id` (0 .. V-1), NULL out of range.
SF_API const char *sf_model_word(const sf_model *m, int id);
// The ids of text as the model tokenizes it: writes min(n, cap) ids and returns n, the number of
// tokens; -1 with sf_error() on a bad text.
SF_API int sf_tokenize(const sf_model *m, const char *text, int *ids, int cap);

// ---- the forward pass
// Tokenizes text and runs the forward (an encoder-decoder's decoder gets "<bos>" alone). NULL with
// sf_error() (an empty sentence, more tokens than the model takes ...).
SF_API sf_pass *sf_run(sf_model *m, const char *text);
// The same from n token ids (each 0 .. V-1; shown by their vocabulary words). An encoder only.
SF_API sf_pass *sf_run_ids(sf_model *m, const int *ids, int n);
SF_API void sf_pass_free(sf_pass *p);
SF_API int sf_pass_tokens(const sf_pass *p);          // L
SF_API const char *sf_pass_token(sf_pass *p, int i);  // token i as tokens.txt writes it
SF_API int sf_pass_token_id(const sf_pass *p, int i); // its id, -1 out of range

// ---- stages, by their dump names
SF_API int sf_stage_count(const sf_pass *p);               // the stages (and, after sf_backward, grads)
SF_API const char *sf_stage_name(const sf_pass *p, int k); // k-th name, NULL out of range
// ndim (2 or 3; 1 for "loss") and the shape of stage `name`, -1 with sf_error() when there is none.
SF_API int sf_stage_shape(const sf_pass *p, const char *name, int shape[3]);
SF_API long sf_stage_size(const sf_pass *p, const char *name); // floats in it, -1 when none
// Copies the stage's floats (C order of its shape; masked scores -inf) into out (room for cap
// floats). Returns the count, -1 with sf_error() when there is no such stage or cap is too small.
SF_API long sf_stage_read(const sf_pass *p, const char *name, float *out, long cap);

// ---- one training step's backward
// The loss and the gradient of every stage: afterwards "grad.<stage>" (its stage's shape) and
// "loss" [1] read as stages. targets: for a model with a head, L ids (-1: no target at that
// position); for a classifier, one class index (0 .. C-1); NULL and 0: the next token (a model with
// a head). Returns 1, or 0 with sf_error() (no head or classifier, an encoder-decoder ...).
SF_API int sf_backward(sf_pass *p, const int *targets, int n_targets, float *loss);

// ---- the steps of the pass, and their pictures
SF_API int sf_step_count(const sf_pass *p);
// Step k's stage name ("tokens", "embedding", "softmax" ... as `stepformer stages` lists them),
// NULL out of range.
SF_API const char *sf_step_name(const sf_pass *p, int k);
SF_API int sf_step_layer(const sf_pass *p, int k);         // 0-based, -1 outside the layers
SF_API int sf_step_heads(const sf_pass *p, int k);         // H when the step has one picture per head, else 1
SF_API const char *sf_step_stage(const sf_pass *p, int k); // the dump name of its result ("l0.A"), or ""
SF_API const char *sf_step_label(sf_pass *p, int k, int head); // "Stage 8/16 · softmax · layer 1 of 2 ..."
// The step named `name` (a step name as above, or the dump name of its result) in layer `layer`
// (0-based; ignored outside the layers). -1 with sf_error() when there is none.
SF_API int sf_step_find(const sf_pass *p, const char *name, int layer);

enum { SF_PNG = 1, SF_SVG = 2 };
enum {
  SF_RENDER_DARK = 1,       // the dark theme
  SF_RENDER_NO_NUMBERS = 2, // no values in the cells
  SF_RENDER_MODEL_VIEW = 4, // the softmax step as every layer × head (step: any softmax step)
};
// Draws step k of the pass (head: 0-based for a per-head step, -1 every head as a grid) as the
// window and `stepformer export` draw it, width × height pixels (320 .. 8192), into a new buffer
// of *len bytes: a PNG, or an SVG document. Returns 1, or 0 with sf_error().
SF_API int sf_render(sf_pass *p, int k, int head, int width, int height, int format, int flags, void **bytes,
                     size_t *len);

#ifdef __cplusplus
}
#endif

#endif
