// stored.h -- "weights as stored" (issue 35): what the view of a quantized weight matrix shows, as
// plain data. The formats fill it from a GGUF file (gguf_stored.h: gguf_stored_view), the render
// layer draws it (view_stored.c), the window and `export` hand one to the view (ViewOptions.stored).
// Core reads no file: a Model loaded from a quantized GGUF file only records where it came from
// (Model.stored_path), so that the view can read the file's blocks again.
//
// A quantized matrix is a run of blocks of 32 or 256 weights, each a few half-precision scales and
// one small integer code per weight (4, 5, 6 or 8 bits). QuantBlock is one block as the file holds
// it; for every type, weight i's value is
//   values[i] = (codes[i] - offset) · scale[i / sub] - min[i / sub]
// computed in float32 as ggml's dequantize_row_* does (Q4_0: d·(q − 8); Q4_1: d·q + m, min = −m;
// Q4_K: d·sc_j·q − dmin·m_j; Q6_K: d·sc_j·(q − 32); Q8_0: d·q, its int8 codes stored + 128).
//
// What a teacher can honestly show of the error: the file keeps no original. Each block's step
// (its effective scale) bounds the rounding: a weight rounded to the nearest code lies within half
// a step of the number the quantizer was given (a code clipped at the end of its range, up to one
// step). So the view shows the dequantized matrix and each block's half step; only when a second
// file of the same model is given (--compare-model, an F16 or F32 GGUF) is the real error shown,
// |w_q − w_ref| against that file's same tensor.
#ifndef SF_STORED_H
#define SF_STORED_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
  uint32_t type;  // ggml's type number (gguf_quant.h)
  int n;          // weights in the block: 32 or 256
  int n_sub, sub; // sub-blocks and weights in each (1 × 32; Q4_K, Q5_K 8 × 32; Q6_K 16 × 16)
  int bits;       // bits per code: 4, 5, 6 or 8
  int offset; // subtracted from a code: Q4_0 8, Q5_0 16, Q6_K 32, Q8_0 128 (its codes are int8 + 128), else 0
  float d, dmin;      // the block's scale (and Q4_1/Q5_1's m, the k-quants' dmin), as floats
  int sc[16], mn[16]; // Q4_K, Q5_K: the 6-bit scale and min of each sub-block; Q6_K: int8 scales
  float scale[16];    // each sub-block's effective scale: d (or d·sc_j)
  float min[16];      // each sub-block's effective minimum subtracted: dmin·mn_j (Q4_1/Q5_1: -m; else 0)
  uint8_t codes[256]; // each weight's code, unsigned, in the weights' order
  float values[256];  // the dequantized weights (gguf_dequantize's, bit for bit)
} QuantBlock;

#define STORED_GRID 64 // the matrix pictures' cells a side, at most (a larger matrix is area-reduced)

typedef struct {
  char file[128];     // the GGUF file's name (no folder)
  char tensor[64];    // the tensor's name in the file: "blk.0.ffn_down.weight"
  char type[12];      // "Q4_K"
  double bits;        // bits per weight of the type (Q4_K: 4.5)
  int which, count;   // the tensor is quantized tensor `which` (0-based, file order) of `count`
  int64_t rows, cols; // PyTorch's shape [out, in] (a 1-D tensor: one row)
  int64_t block, n_blocks, row_blocks; // the block shown (0-based), of n_blocks, row_blocks a row
  int64_t row, col;                    // where it lies: row `row`, columns col .. col + b.n − 1
  QuantBlock b;                        //
  int weight;                          // the weight worked out (0 .. b.n − 1)
  // The whole matrix, area-reduced to gh × gw cells (cell (i, j) covers rows i·rows/gh .., columns
  // j·cols/gw ..): w the mean of its dequantized weights, step the largest half step of the blocks
  // it touches, err (has_ref) the largest |w_q − w_ref| in it.
  int gh, gw;
  float w[STORED_GRID * STORED_GRID], step[STORED_GRID * STORED_GRID], err[STORED_GRID * STORED_GRID];
  float w_lo, w_hi;        // the dequantized matrix's range
  double half_step_max;    // the largest half step of any block
  double w_rms;            // the root mean square of the dequantized weights
  bool has_ref;            // an F16/F32 file of the same model was given (--compare-model)
  char ref_file[128];      // its name
  char ref_type[12];       // its tensor's type ("F16")
  double err_rms, err_max; // against it, over the whole matrix
  int64_t err_max_at;      // the weight (row·cols + col) of the largest error
  char note[320];          // why there is no reference (a file given whose tensor differs), or ""
} StoredView;

#endif
