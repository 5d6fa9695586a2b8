// gguf_quant.h -- ggml's tensor types: their names and block sizes, and the dequantization of
// the ones Stepformer reads, bit for bit as ggml's reference dequantize_row_* (ggml-quants.c).
//
// A quantized tensor is a run of blocks, each holding `block` weights in `bytes` bytes: one or
// two half-precision scales and the weights' small integer codes (ggml-common.h's block_*):
//   Q8_0  32 weights: d (f16), 32 × int8 q            x = d·q
//   Q4_0  32: d, 16 bytes of nibbles (q[j] low, q[j+16] high)   x = d·(q − 8)
//   Q4_1  32: d, m, 16 bytes of nibbles                x = d·q + m
//   Q5_0  32: d, qh (u32: bit 4 of each code), nibbles x = d·(q − 16)
//   Q5_1  32: d, m, qh, nibbles                        x = d·q + m
//   Q4_K  256 = 8 sub-blocks of 32: d, dmin (f16), 12 bytes of 6-bit scales and mins, 128 bytes of
//         nibbles                                      x = d·sc_j·q − dmin·m_j
//   Q5_K  as Q4_K plus 32 bytes of fifth bits
//   Q6_K  256 = 16 sub-blocks of 16: 128 bytes low nibbles, 64 bytes high pairs, 16 × int8 scales,
//         d (f16)                                      x = d·sc_j·(q − 32)
//   F32, F16, BF16: one weight each, converted exactly.
// Contract: gguf_dequantize writes n floats from n/block blocks at src (n a multiple of the block,
// which the reader checks); it computes in float32 in ggml's order, so each value equals ggml's.
// Other types (IQ*, Q2_K, Q3_K, integers, ...) have a name and a size, and are refused by name.
#ifndef SF_GGUF_QUANT_H
#define SF_GGUF_QUANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"    // defines: Err
#include "stored.h" // defines: QuantBlock

enum {
  GGML_F32 = 0,
  GGML_F16 = 1,
  GGML_Q4_0 = 2,
  GGML_Q4_1 = 3,
  GGML_Q5_0 = 6,
  GGML_Q5_1 = 7,
  GGML_Q8_0 = 8,
  GGML_Q8_1 = 9,
  GGML_Q2_K = 10,
  GGML_Q3_K = 11,
  GGML_Q4_K = 12,
  GGML_Q5_K = 13,
  GGML_Q6_K = 14,
  GGML_Q8_K = 15,
  GGML_BF16 = 30,
  GGML_N_TYPES = 43
};

// The type's name ("Q4_K"), or NULL for a number ggml never gave a type (4, 5, 31..33, 36..38, ≥ 43).
const char *gguf_type_name(uint32_t type);
// Weights per block and bytes per block; false when the size is not known to Stepformer (the
// IQ types and others it does not read: the file is refused, naming the type).
bool gguf_type_size(uint32_t type, int *block, int *bytes);
// True for the types gguf_dequantize converts.
bool gguf_type_readable(uint32_t type);
// Bits per weight of the type (Q4_K: 4.5).
double gguf_type_bits(uint32_t type);
// n weights of the given type from src into dst; false (with err) for a type it does not read.
bool gguf_dequantize(uint32_t type, const void *src, float *dst, int64_t n, Err *err);
// One block as the file stores it ("weights as stored"): the codes, the scales and mins, and the
// values they make (core/stored.h's QuantBlock: weight i's value is
// (codes[i] - offset) · scale[i / sub] - min[i / sub], computed in float32 as ggml does).
typedef QuantBlock GgufBlock;

// Block b (0-based) of a tensor of `type` whose bytes start at data; false for a type without
// blocks Stepformer reads (F32, F16, BF16 and the unread types).
bool gguf_block(uint32_t type, const void *data, int64_t b, GgufBlock *out);

float gguf_f16(uint16_t h);  // IEEE half -> float, exactly
float gguf_bf16(uint16_t h); // bfloat16 -> float, exactly

#endif
