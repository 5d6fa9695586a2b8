// gguf_stored.h -- "weights as stored" (issue 35): the StoredView (core/stored.h) of one block of one
// quantized tensor of a GGUF file -- its codes, scales, mins and values as gguf_block reads them --
// with the whole matrix area-reduced beside it, and, when a second GGUF file of the same model is
// given (an F16 or F32 one), the error of every weight against that file's same tensor.
//
// The quantized tensors are those of a block type (Q8_0 .. Q6_K), counted in the file's order.
// Without a tensor named, the first k-quant matrix (Q4_K, Q5_K, Q6_K) is shown, else the first
// quantized one; without a block, the block that holds the matrix's largest |weight| (a trained
// matrix's outlier, which sets its block's scale); without a weight, the block's largest |value|.
// The matrix is read block by block (no copy of it is made); a refusal is one line.
//
//     StoredPick p = {.tensor = "blk.0.ffn_down.weight", .which = -1, .block = 3, .weight = -1};
//     StoredView *v = malloc(sizeof *v);
//     if (!gguf_stored_view("model-q4_k_m.gguf", &p, v, &err)) ...;   // v->b.codes, v->w, ...
#ifndef SF_GGUF_STORED_H
#define SF_GGUF_STORED_H

#include <stdbool.h>
#include <stdint.h>

#include "err.h"    // defines: Err
#include "stored.h" // defines: StoredView

typedef struct {
  const char *tensor; // the tensor's name, or NULL: `which`
  int which;          // the quantized tensor's ordinal, any integer (taken modulo their count); -1 with
                      // tensor NULL: the default tensor
  int64_t block;      // 0-based, clamped to the tensor's blocks; -1: the default block
  int weight;         // 0-based in the block, clamped; -1: the block's largest |value|
  const char *ref;    // a GGUF file of the same model in F16/F32 (--compare-model), or NULL
  // The window moves from block to block of one tensor: with keep_matrix, *out already holds this
  // tensor's view and only the block (and its weight) is read again.
  bool keep_matrix;
} StoredPick;

// Fills *out; false with one line (a file that is not GGUF or has no quantized tensor, a tensor
// that is not there or not quantized: the message names the quantized ones).
bool gguf_stored_view(const char *path, const StoredPick *pick, StoredView *out, Err *err);

#endif
