// modern_rows.h -- the row-wise stages of today's decoders (issue 34) on 8-float vectors:
// RMSNorm, the SiLU-gated product of SwiGLU, and the RoPE rotation.
//
// Each works row by row on Mats (mat.h: row-major, any stride), writes every element of its
// output and allocates nothing; output and input may be the same matrix. Every element of a row
// gets the same arithmetic whatever its place (the last, partial vector of a row goes through a
// vector too, or through the same scalar formula), so the result does not depend on how the rows
// are cut into blocks or shared between threads. Within float rounding of PyTorch's
// (transformers' LlamaRMSNorm, F.silu, apply_rotary_pos_emb): tests/test_modern_rows.c.
//
//     rmsnorm_rows(y, x, g, 1e-5f, false, NULL);  // y = x / sqrt(mean(x²) + eps) · g
//     silu_mul_rows(h, gate, up);                 // h = SiLU(gate) ⊙ up
//     rope_rows(q, q, cs, ROPE_ROWS_HALVES);      // q's rows turned by their angles
#ifndef SF_MODERN_ROWS_H
#define SF_MODERN_ROWS_H

#include <stdbool.h>

#include "mat.h" // defines: Mat

// y = x / sqrt(mean(x²) + eps) · g, or · (1 + g) with offset (Gemma), row by row [rows, n]. The
// sum of squares in double, the scale 1/sqrt(.) rounded to float once, then (x·scale)·g in float
// (LlamaRMSNorm computes in float32 with rsqrt). rms, when given, receives each row's
// sqrt(mean(x²) + eps) [rows] (the view shows it).
void rmsnorm_rows(Mat y, Mat x, const float *g, float eps, bool offset, float *rms);

// h = SiLU(gate) ⊙ up = gate / (1 + e^(-gate)) · up [rows, n], in float, the exponential of
// simd.h's f8_exp_neg (of -|gate|, so it never overflows): within a few ulp of F.silu(gate) · up.
// SiLU(+inf) = +inf, SiLU(-inf) = NaN and NaN stays NaN, as in PyTorch.
void silu_mul_rows(Mat h, Mat gate, Mat up);

// How RoPE pairs a head's d_k dimensions: dimension k with k + d_k/2 (rotate_half: Hugging Face's
// Llama and Qwen) or 2k with 2k + 1 (the paper, llama.cpp).
typedef enum { ROPE_ROWS_HALVES, ROPE_ROWS_PAIRS } RopeRowsStyle;

// y [rows, d_k] = x rotated by the angles of each row: cs [rows, d_k] holds, per row, the d_k/2
// cosines then the d_k/2 sines. Pair (a, b) becomes (a·cos - b·sin, b·cos + a·sin).
void rope_rows(Mat y, Mat x, const float *cs, RopeRowsStyle style);

#endif
