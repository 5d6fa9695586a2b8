// gguf_quant.c -- ggml's tensor types and their dequantization (see gguf_quant.h). Each dequantizer
// follows ggml-quants.c's dequantize_row_* step by step, in float32, so that the products and
// sums round as ggml's do (this file is compiled without floating-point contraction: C11 mode).
#include "gguf_quant.h"

#include <string.h>

#include "nocov.h"       // defines: SF_NO_COVERAGE
#include "safetensors.h" // defines: st_f16_to_f32, st_bf16_to_f32

typedef struct {
  const char *name;
  int block, bytes; // 0: a type whose layout Stepformer does not know
  bool readable;
} TypeInfo;

static const TypeInfo TYPES[GGML_N_TYPES] = {
    [0] = {"F32", 1, 4, true},        [1] = {"F16", 1, 2, true},        [2] = {"Q4_0", 32, 18, true},
    [3] = {"Q4_1", 32, 20, true},     [6] = {"Q5_0", 32, 22, true},     [7] = {"Q5_1", 32, 24, true},
    [8] = {"Q8_0", 32, 34, true},     [9] = {"Q8_1", 32, 36, false},    [10] = {"Q2_K", 256, 84, false},
    [11] = {"Q3_K", 256, 110, false}, [12] = {"Q4_K", 256, 144, true},  [13] = {"Q5_K", 256, 176, true},
    [14] = {"Q6_K", 256, 210, true},  [15] = {"Q8_K", 256, 292, false}, [16] = {"IQ2_XXS", 0, 0, false},
    [17] = {"IQ2_XS", 0, 0, false},   [18] = {"IQ3_XXS", 0, 0, false},  [19] = {"IQ1_S", 0, 0, false},
    [20] = {"IQ4_NL", 0, 0, false},   [21] = {"IQ3_S", 0, 0, false},    [22] = {"IQ2_S", 0, 0, false},
    [23] = {"IQ4_XS", 0, 0, false},   [24] = {"I8", 1, 1, false},       [25] = {"I16", 1, 2, false},
    [26] = {"I32", 1, 4, false},      [27] = {"I64", 1, 8, false},      [28] = {"F64", 1, 8, false},
    [29] = {"IQ1_M", 0, 0, false},    [30] = {"BF16", 1, 2, true},      [34] = {"TQ1_0", 256, 54, false},
    [35] = {"TQ2_0", 256, 66, false}, [39] = {"MXFP4", 32, 17, false},  [40] = {"NVFP4", 0, 0, false},
    [41] = {"Q1_0", 0, 0, false},     [42] = {"Q2_0", 0, 0, false},
};

const char *gguf_type_name(uint32_t type) { return type < GGML_N_TYPES ? TYPES[type].name : NULL; }

bool gguf_type_size(uint32_t type, int *block, int *bytes) {
  if (type >= GGML_N_TYPES || !TYPES[type].block) return false;
  *block = TYPES[type].block, *bytes = TYPES[type].bytes;
  return true;
}

bool gguf_type_readable(uint32_t type) { return type < GGML_N_TYPES && TYPES[type].readable; }

double gguf_type_bits(uint32_t type) {
  int block, bytes;
  return gguf_type_size(type, &block, &bytes) ? 8.0 * bytes / block : 0;
}

float gguf_f16(uint16_t h) { return st_f16_to_f32(h); }
float gguf_bf16(uint16_t h) { return st_bf16_to_f32(h); }

static uint16_t u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static float half(const uint8_t *p) { return st_f16_to_f32(u16(p)); }
static uint32_t u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

// ---- the 32-weight blocks
// The block kernels and the loops over every weight are SF_NO_COVERAGE (nocov.h): arithmetic on the
// file's numbers, no decision about what its bytes mean; instrumented, they were a quarter of the
// GGUF fuzzer's time. ASan and UBSan still check them.

SF_NO_COVERAGE static void q8_0(const uint8_t *b, float *y) { // d, qs[32] (int8)
  const float d = half(b);
  for (int j = 0; j < 32; j++) y[j] = (int8_t)b[2 + j] * d;
}

SF_NO_COVERAGE static void q4_0(const uint8_t *b, float *y) { // d, qs[16]: weight j low nibble, j + 16 high
  const float d = half(b);
  for (int j = 0; j < 16; j++) {
    const int x0 = (b[2 + j] & 0x0F) - 8, x1 = (b[2 + j] >> 4) - 8;
    y[j] = x0 * d, y[j + 16] = x1 * d;
  }
}

SF_NO_COVERAGE static void q4_1(const uint8_t *b, float *y) { // d, m, qs[16]
  const float d = half(b), m = half(b + 2);
  for (int j = 0; j < 16; j++) {
    const int x0 = b[4 + j] & 0x0F, x1 = b[4 + j] >> 4;
    y[j] = x0 * d + m, y[j + 16] = x1 * d + m;
  }
}

SF_NO_COVERAGE static void q5_0(const uint8_t *b, float *y) { // d, qh (bit j: weight j's fifth bit), qs[16]
  const float d = half(b);
  const uint32_t qh = u32(b + 2);
  for (int j = 0; j < 16; j++) {
    const uint8_t h0 = ((qh >> j) << 4) & 0x10, h1 = (qh >> (j + 12)) & 0x10;
    const int32_t x0 = ((b[6 + j] & 0x0F) | h0) - 16, x1 = ((b[6 + j] >> 4) | h1) - 16;
    y[j] = x0 * d, y[j + 16] = x1 * d;
  }
}

SF_NO_COVERAGE static void q5_1(const uint8_t *b, float *y) { // d, m, qh, qs[16]
  const float d = half(b), m = half(b + 2);
  const uint32_t qh = u32(b + 4);
  for (int j = 0; j < 16; j++) {
    const uint8_t h0 = ((qh >> j) << 4) & 0x10, h1 = (qh >> (j + 12)) & 0x10;
    const int x0 = (b[8 + j] & 0x0F) | h0, x1 = (b[8 + j] >> 4) | h1;
    y[j] = x0 * d + m, y[j + 16] = x1 * d + m;
  }
}

// ---- the 256-weight k-quant blocks

// Sub-block j's 6-bit scale and min from the 12 bytes q (ggml's get_scale_min_k4): j < 4 in the
// low 6 bits of q[j] and q[j + 4]; j >= 4 in q[j + 4]'s nibbles with the top 2 bits of q[j - 4]
// and q[j].
SF_NO_COVERAGE static void scale_min_k4(int j, const uint8_t *q, uint8_t *d, uint8_t *m) {
  if (j < 4) {
    *d = q[j] & 63, *m = q[j + 4] & 63;
  } else {
    *d = (uint8_t)((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = (uint8_t)((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
  }
}

SF_NO_COVERAGE static void q4_k(const uint8_t *b, float *y) { // d, dmin, scales[12], qs[128]
  const float d = half(b), min = half(b + 2);
  const uint8_t *sc12 = b + 4, *q = b + 16;
  uint8_t sc, m;
  for (int j = 0, is = 0; j < 256; j += 64, is += 2, q += 32) {
    scale_min_k4(is, sc12, &sc, &m);
    const float d1 = d * sc, m1 = min * m;
    scale_min_k4(is + 1, sc12, &sc, &m);
    const float d2 = d * sc, m2 = min * m;
    for (int l = 0; l < 32; l++) *y++ = d1 * (q[l] & 0xF) - m1;
    for (int l = 0; l < 32; l++) *y++ = d2 * (q[l] >> 4) - m2;
  }
}

SF_NO_COVERAGE static void q5_k(const uint8_t *b, float *y) { // d, dmin, scales[12], qh[32], qs[128]
  const float d = half(b), min = half(b + 2);
  const uint8_t *sc12 = b + 4, *qh = b + 16, *ql = b + 48;
  uint8_t sc, m, u1 = 1, u2 = 2;
  for (int j = 0, is = 0; j < 256; j += 64, is += 2, ql += 32) {
    scale_min_k4(is, sc12, &sc, &m);
    const float d1 = d * sc, m1 = min * m;
    scale_min_k4(is + 1, sc12, &sc, &m);
    const float d2 = d * sc, m2 = min * m;
    for (int l = 0; l < 32; l++) *y++ = d1 * ((ql[l] & 0xF) + (qh[l] & u1 ? 16 : 0)) - m1;
    for (int l = 0; l < 32; l++) *y++ = d2 * ((ql[l] >> 4) + (qh[l] & u2 ? 16 : 0)) - m2;
    u1 = (uint8_t)(u1 << 2), u2 = (uint8_t)(u2 << 2);
  }
}

SF_NO_COVERAGE static void q6_k(const uint8_t *b, float *y) { // ql[128], qh[64], scales[16] (int8), d
  const float d = half(b + 208);
  const uint8_t *ql = b, *qh = b + 128;
  const int8_t *sc = (const int8_t *)(b + 192);
  for (int n = 0; n < 256; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
    for (int l = 0; l < 32; l++) {
      const int is = l / 16;
      const int8_t q1 = (int8_t)((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int8_t q2 = (int8_t)((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int8_t q3 = (int8_t)((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int8_t q4 = (int8_t)((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l + 0] = d * sc[is + 0] * q1;
      y[l + 32] = d * sc[is + 2] * q2;
      y[l + 64] = d * sc[is + 4] * q3;
      y[l + 96] = d * sc[is + 6] * q4;
    }
  }
}

// n weights of a float type (F32, F16, BF16) at p into dst.
SF_NO_COVERAGE static void floats(uint32_t type, const uint8_t *p, float *dst, int64_t n) {
  if (type == GGML_F32)
    for (int64_t i = 0; i < n; i++) {
      const uint32_t u = u32(p + 4 * i);
      memcpy(&dst[i], &u, 4);
    }
  else if (type == GGML_F16)
    for (int64_t i = 0; i < n; i++) dst[i] = st_f16_to_f32(u16(p + 2 * i));
  else
    for (int64_t i = 0; i < n; i++) dst[i] = st_bf16_to_f32(u16(p + 2 * i));
}

// n / block blocks of `bytes` bytes at p through block_fn into dst.
SF_NO_COVERAGE static void blocks(void (*block_fn)(const uint8_t *, float *), int block, int bytes,
                                  const uint8_t *p, float *dst, int64_t n) {
  for (int64_t i = 0; i < n / block; i++) block_fn(p + (size_t)i * (size_t)bytes, dst + i * block);
}

bool gguf_dequantize(uint32_t type, const void *src, float *dst, int64_t n, Err *err) {
  const uint8_t *p = src;
  void (*block_fn)(const uint8_t *, float *) = NULL;
  switch (type) {
  case GGML_F32:
  case GGML_F16:
  case GGML_BF16: floats(type, p, dst, n); return true;
  case GGML_Q8_0: block_fn = q8_0; break;
  case GGML_Q4_0: block_fn = q4_0; break;
  case GGML_Q4_1: block_fn = q4_1; break;
  case GGML_Q5_0: block_fn = q5_0; break;
  case GGML_Q5_1: block_fn = q5_1; break;
  case GGML_Q4_K: block_fn = q4_k; break;
  case GGML_Q5_K: block_fn = q5_k; break;
  case GGML_Q6_K: block_fn = q6_k; break;
  default: {
    const char *name = gguf_type_name(type);
    return err_set(err,
                   "tensor type %s is not one Stepformer dequantizes (F32, F16, BF16, Q8_0, Q4_0, Q4_1, "
                   "Q5_0, Q5_1, Q4_K, Q5_K, Q6_K): requantize the file with llama-quantize",
                   name ? name : "?");
  }
  }
  blocks(block_fn, TYPES[type].block, TYPES[type].bytes, p, dst, n);
  return true;
}

// ---- one block as stored

bool gguf_block(uint32_t type, const void *data, int64_t b, GgufBlock *o) {
  void (*fn)(const uint8_t *, float *) = NULL;
  switch (type) {
  case GGML_Q8_0: fn = q8_0; break;
  case GGML_Q4_0: fn = q4_0; break;
  case GGML_Q4_1: fn = q4_1; break;
  case GGML_Q5_0: fn = q5_0; break;
  case GGML_Q5_1: fn = q5_1; break;
  case GGML_Q4_K: fn = q4_k; break;
  case GGML_Q5_K: fn = q5_k; break;
  case GGML_Q6_K: fn = q6_k; break;
  default: return false;
  }
  memset(o, 0, sizeof *o);
  const uint8_t *p = (const uint8_t *)data + (size_t)b * (size_t)TYPES[type].bytes;
  o->type = type, o->n = TYPES[type].block, o->n_sub = 1, o->sub = o->n;
  fn(p, o->values);
  switch (type) {
  case GGML_Q8_0:
    o->bits = 8, o->offset = 128, o->d = half(p);
    for (int j = 0; j < 32; j++) o->codes[j] = (uint8_t)((int8_t)p[2 + j] + 128);
    break;
  case GGML_Q4_0:
  case GGML_Q4_1: {
    const uint8_t *q = p + (type == GGML_Q4_0 ? 2 : 4);
    o->bits = 4, o->offset = type == GGML_Q4_0 ? 8 : 0, o->d = half(p);
    if (type == GGML_Q4_1) o->dmin = half(p + 2), o->min[0] = -o->dmin;
    for (int j = 0; j < 16; j++) o->codes[j] = q[j] & 0xF, o->codes[j + 16] = q[j] >> 4;
    break;
  }
  case GGML_Q5_0:
  case GGML_Q5_1: {
    const int k = type == GGML_Q5_0 ? 2 : 4;
    const uint32_t qh = u32(p + k);
    o->bits = 5, o->offset = type == GGML_Q5_0 ? 16 : 0, o->d = half(p);
    if (type == GGML_Q5_1) o->dmin = half(p + 2), o->min[0] = -o->dmin;
    for (int j = 0; j < 16; j++) {
      o->codes[j] = (uint8_t)((p[k + 4 + j] & 0xF) | (((qh >> j) & 1) << 4));
      o->codes[j + 16] = (uint8_t)((p[k + 4 + j] >> 4) | (((qh >> (j + 16)) & 1) << 4));
    }
    break;
  }
  case GGML_Q4_K:
  case GGML_Q5_K: {
    o->bits = type == GGML_Q4_K ? 4 : 5, o->n_sub = 8, o->sub = 32, o->d = half(p), o->dmin = half(p + 2);
    const uint8_t *qh = p + 16, *ql = p + (type == GGML_Q4_K ? 16 : 48);
    for (int j = 0; j < 8; j++) {
      uint8_t sc, m;
      scale_min_k4(j, p + 4, &sc, &m);
      o->sc[j] = sc, o->mn[j] = m, o->scale[j] = o->d * sc, o->min[j] = o->dmin * m;
    }
    for (int c = 0; c < 4; c++) // chunk c: weights 64c..64c+31 low nibbles, 64c+32.. high
      for (int l = 0; l < 32; l++) {
        int lo = ql[32 * c + l] & 0xF, hi = ql[32 * c + l] >> 4;
        if (type == GGML_Q5_K) lo += (qh[l] >> (2 * c) & 1) << 4, hi += (qh[l] >> (2 * c + 1) & 1) << 4;
        o->codes[64 * c + l] = (uint8_t)lo, o->codes[64 * c + 32 + l] = (uint8_t)hi;
      }
    break;
  }
  case GGML_Q6_K: {
    o->bits = 6, o->offset = 32, o->n_sub = 16, o->sub = 16, o->d = half(p + 208);
    const int8_t *sc = (const int8_t *)(p + 192);
    for (int j = 0; j < 16; j++) o->sc[j] = sc[j], o->scale[j] = o->d * sc[j];
    for (int h = 0; h < 2; h++) // half h: weights 128h.. from ql[64h..], qh[32h..]
      for (int l = 0; l < 32; l++) {
        const uint8_t *ql = p + 64 * h, *qh = p + 128 + 32 * h;
        o->codes[128 * h + l] = (uint8_t)((ql[l] & 0xF) | ((qh[l] >> 0 & 3) << 4));
        o->codes[128 * h + 32 + l] = (uint8_t)((ql[l + 32] & 0xF) | ((qh[l] >> 2 & 3) << 4));
        o->codes[128 * h + 64 + l] = (uint8_t)((ql[l] >> 4) | ((qh[l] >> 4 & 3) << 4));
        o->codes[128 * h + 96 + l] = (uint8_t)((ql[l + 32] >> 4) | ((qh[l] >> 6 & 3) << 4));
      }
    break;
  }
  }
  if (o->n_sub == 1) o->scale[0] = o->d;
  return true;
}
