// simd.h -- an 8-float vector for the hand-written kernels of mat.c, and a fast exp on it.
//
// F8 is a GCC/Clang vector extension type: plain arithmetic operators work on it lane by lane
// (and a scalar operand is broadcast), so a kernel reads like the scalar loop it replaces. The
// compiler maps it onto whatever the target has: two SSE registers on baseline x86-64, one AVX
// register in the SF_KERNEL clone for x86-64-v3 (AVX2), NEON pairs on ARM. Loads and stores go
// through memcpy, so pointers need no alignment.
//
// SF_KERNEL on a function compiles it twice on x86-64 with GCC, for baseline x86-64 and for
// x86-64-v3, and picks one when the program loads (GCC's target_clones). The clones do the same
// arithmetic in the same order: ISO C mode (-std=c11) does not contract a*b+c into a fused
// multiply-add, so results do not depend on the machine. SF_AVX2_FMA (below) compiles a function
// for AVX2 + FMA only, with no twin, for kernels whose callers check the CPU first (gemm.c, and
// the softmax's exp in FMA form, f8_exp_neg_fma: its bits differ from f8_exp_neg's in the last
// place, which issue 15's decision allows between machines; gemm.h).
//
//     SF_KERNEL static void add(float *y, const float *a, const float *b, int n) {
//       int j = 0;
//       for (; j + 8 <= n; j += 8) f8_store(y + j, f8_load(a + j) + f8_load(b + j));
//       for (; j < n; j++) y[j] = a[j] + b[j];
//     }
#ifndef SF_SIMD_H
#define SF_SIMD_H

#include <stdint.h>
#include <string.h>

// Returning a 32-byte vector from an (always inlined) helper draws a warning that the AVX calling
// convention differs: no call is ever made, so it does not apply.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wunknown-warning-option"
#pragma clang diagnostic ignored "-Wpsabi"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(SF_NO_CLONES)
#define SF_KERNEL __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define SF_KERNEL
#endif

#define SF_INLINE static inline __attribute__((always_inline))

// SF_AVX2_FMA on a function compiles it for AVX2 + FMA whatever the build's baseline, with the
// intrinsics of <immintrin.h> (x86-64, GCC or Clang; SF_HAVE_AVX2_FMA is 0 elsewhere). Unlike an
// SF_KERNEL, such a function has no baseline twin: it may run only after a run-time check that
// the CPU has both (gemm_supported()), and its caller keeps another path for the CPUs without.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SF_HAVE_AVX2_FMA 1
#define SF_AVX2_FMA __attribute__((target("avx2,fma")))
#else
#define SF_HAVE_AVX2_FMA 0
#define SF_AVX2_FMA
#endif

// Unroll the next loop completely (its count is a small constant), so that arrays of vectors
// indexed by its counter (a kernel's accumulators) live in registers rather than in memory.
#if defined(__clang__)
#define SF_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define SF_UNROLL _Pragma("GCC unroll 16")
#else
#define SF_UNROLL
#endif

typedef float F8 __attribute__((vector_size(32)));
typedef int32_t I8 __attribute__((vector_size(32)));
typedef uint32_t U8 __attribute__((vector_size(32))); // wrapping lane arithmetic (no UB)

// Helpers that take a vector take it by pointer or are macros: a 32-byte vector parameter makes
// GCC print a note about the AVX calling convention in every file, though all of them inline.
SF_INLINE F8 f8_load(const float *p) {
  F8 v;
  memcpy(&v, p, sizeof v);
  return v;
}
SF_INLINE F8 f8_set(float x) { return (F8){x, x, x, x, x, x, x, x}; }
#define f8_store(p, v)                                                                                       \
  do {                                                                                                       \
    F8 f8_store_v = (v);                                                                                     \
    memcpy((p), &f8_store_v, sizeof f8_store_v);                                                             \
  } while (0)
// mask ? a : b, lane by lane (mask lanes are 0 or -1, as comparisons give them)
#define f8_select(mask, a, b) ((F8)((((I8)(a)) & (mask)) | (((I8)(b)) & ~(mask))))
#define f8_max(a, b) f8_select((a) > (b), (a), (b)) // evaluates its arguments twice
// Lanes of a and b (b's numbered 8..15) picked by the eight constant indexes.
#if defined(__clang__)
#define f8_shuffle(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define f8_shuffle(a, b, ...) __builtin_shuffle(a, b, (I8){__VA_ARGS__})
#endif

// Transposes the 8x8 block whose rows are m[0..7]: afterwards m[i][j] is the old m[j][i].
SF_INLINE void f8_transpose(F8 m[8]) {
  F8 t[8], u[8];
  SF_UNROLL for (int i = 0; i < 8; i += 2) { // pairs of rows interleaved
    t[i] = f8_shuffle(m[i], m[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[i + 1] = f8_shuffle(m[i], m[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  SF_UNROLL for (int i = 0; i < 8; i += 4) { // then pairs of pairs
    u[i] = f8_shuffle(t[i], t[i + 2], 0, 1, 8, 9, 4, 5, 12, 13);
    u[i + 1] = f8_shuffle(t[i], t[i + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    u[i + 2] = f8_shuffle(t[i + 1], t[i + 3], 0, 1, 8, 9, 4, 5, 12, 13);
    u[i + 3] = f8_shuffle(t[i + 1], t[i + 3], 2, 3, 10, 11, 6, 7, 14, 15);
  }
  SF_UNROLL for (int i = 0; i < 4; i++) { // then the halves of four rows
    m[i] = f8_shuffle(u[i], u[i + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    m[i + 4] = f8_shuffle(u[i], u[i + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

SF_INLINE float f8_sum(const F8 *v) {
  float s[8];
  memcpy(s, v, sizeof s);
  return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}
SF_INLINE float f8_hmax(const F8 *v) {
  float s[8];
  memcpy(s, v, sizeof s);
  float m = s[0];
  for (int i = 1; i < 8; i++) m = s[i] > m ? s[i] : m;
  return m;
}

// exp(x) for x <= 0, as softmax needs it after subtracting the row maximum; exactly 0 for
// x < -87.3 (where expf leaves the normal range), for -inf and for NaN. x = n·ln2 + r with
// |r| <= ln2/2 (ln2 in two parts, so n·ln2_hi is exact), e^r = 1 + r + r²·q(r) with q a cubic
// fitted for least relative error, and 2^n put into the exponent bits. Relative error below
// 2e-7 (about 1.5 ulp; glibc's expf has 0.5), exp(0) = 1 exactly.
SF_INLINE F8 f8_exp_neg(const F8 *xp) {
  const float log2e = 1.44269504088896341f, ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
  const float round = 12582912.0f; // 1.5·2^23 (bits 0x4b400000): adding it rounds to an integer
  F8 x = *xp;
  I8 live = x >= -87.3f;    // -1 where the result is a normal float, 0 elsewhere
  F8 t = x * log2e + round; // the low bits of t hold n = round(x / ln2), for live lanes
  F8 n = t - round;         // (dead lanes compute garbage, even NaN, that `live` clears)
  F8 r = x - n * ln2_hi - n * ln2_lo;
  F8 q = f8_set(8.312525227665901e-3f);
  q = q * r + 4.1890114545822144e-2f;
  q = q * r + 1.6667114198207855e-1f;
  q = q * r + 4.99992311000824e-1f;
  F8 p = q * (r * r) + r + 1.0f;
  // the bits of the float 2^n, in unsigned lanes: a dead lane's garbage may overflow, and
  // unsigned arithmetic wraps where signed overflow is undefined (UBSan found it, fuzz_hub)
  U8 two_n = ((U8)t - (0x4b400000u - 127u)) << 23;
  return (F8)((I8)(p * (F8)two_n) & live);
}

#if SF_HAVE_AVX2_FMA
#include <immintrin.h>

// f8_exp_neg with fused multiply-adds (one rounding each instead of two) for n, r and the
// polynomial: 6 FMAs replace 6 multiplies and 6 adds. Same range, same zeros, exp(0) = 1 exactly,
// relative error below 2e-7 too, but not the same bits as f8_exp_neg: for SF_AVX2_FMA functions
// only, called after a run-time check that the CPU has FMA (mat.c's softmax). Its constants
// are _mm256_set1_ps, not f8_set: GCC builds f8_set lane by lane in a function of another target.
SF_AVX2_FMA SF_INLINE F8 f8_exp_neg_fma(const F8 *xp) {
  const float round = 12582912.0f; // 1.5·2^23, as in f8_exp_neg
  F8 x = *xp;
  I8 live = x >= -87.3f;
  F8 t = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), _mm256_set1_ps(round)); // n in the low bits
  F8 n = t - round;
  F8 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x); // x - n·ln2_hi, then - n·ln2_lo
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  F8 q = _mm256_fmadd_ps(_mm256_set1_ps(8.312525227665901e-3f), r, _mm256_set1_ps(4.1890114545822144e-2f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(1.6667114198207855e-1f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(4.99992311000824e-1f));
  F8 p = _mm256_fmadd_ps(q, r * r, r) + 1.0f;
  U8 two_n = ((U8)t - (0x4b400000u - 127u)) << 23;
  return (F8)((I8)(p * (F8)two_n) & live);
}
#endif

#endif
