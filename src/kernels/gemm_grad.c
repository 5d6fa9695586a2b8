// gemm_grad.c -- see gemm_grad.h. A job is cut into tasks: blocks of GRAD_NB columns of y for
// a·b and a·wᵀ (each task packs its own columns of b, GRAD_KB terms at a time, and adds them in
// order), blocks of GRAD_MB rows of y for aᵀ·b (each task copies its columns of a as rows; b is
// packed once, before the tasks). Tasks write disjoint blocks of y.
//
// a·wᵀ with w taller than a (N > M: GPT-2's Conv1D weights [in, out] times a few tokens' dY, the
// tied embeddings [V, D] times dX) is turned around: yᵀ = w·aᵀ, so that the large w is read in
// place, row by row, as the kernel reads its x, and only the small a is packed (once, before the
// tasks); each task makes a block of GRAD_MB rows of yᵀ, from 0, and adds it to its columns of y.
#include "gemm_grad.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"  // defines: EXPECT
#include "gemm.h" // defines: GemmWeights, gemm_pack_into, gemm_pack_t_into, gemm_matmul_t_add
#include "par.h"  // defines: par_run, par_threads
#include "simd.h" // defines: F8, f8_load, f8_store, f8_transpose, SF_KERNEL

enum { SPLIT_MIN_MADDS = 1 << 18 }; // smaller products stay on one thread (a hand-off costs µs)

typedef enum {
  NN, // y += a·b
  NT, // y += a·wᵀ, packing w
  TN, // y += aᵀ·b
  WA, // y += (w·aᵀ)ᵀ: NT turned around, packing a
} Form;

typedef struct {
  Form form;
  Mat y, a, b;
  GemmWeights pb; // TN: b packed once (for y += at·b with at = aᵀ); WA: a packed once
  bool set;       // TN: y = at·b (written, not added)
} Job;

static int imin(int a, int b) { return a < b ? a : b; }

// A buffer of n floats, 64-byte aligned (gemm.h's packing wants 32).
static float *buffer(size_t n) {
  float *p = aligned_alloc(64, (n * sizeof(float) + 63) / 64 * 64 + 64);
  EXPECT(p);
  return p;
}

// dst[r, k] = a[k, c0 + r] for r < rows, k < K (dst contiguous [rows, K]): 8×8 blocks turned in
// registers where whole, element by element at the edges.
SF_KERNEL static void columns_as_rows(float *dst, Mat a, int c0, int rows) {
  int K = a.rows, r = 0;
  for (; r + 8 <= rows; r += 8) {
    int k = 0;
    for (; k + 8 <= K; k += 8) {
      F8 m[8];
      for (int q = 0; q < 8; q++) m[q] = f8_load(&MAT_AT(a, k + q, c0 + r));
      f8_transpose(m);
      for (int q = 0; q < 8; q++) f8_store(dst + (size_t)(r + q) * K + k, m[q]);
    }
    for (; k < K; k++)
      for (int q = 0; q < 8; q++) dst[(size_t)(r + q) * K + k] = MAT_AT(a, k, c0 + r + q);
  }
  for (; r < rows; r++)
    for (int k = 0; k < K; k++) dst[(size_t)r * K + k] = MAT_AT(a, k, c0 + r);
}

// y[i, c0 + r] += t[r, i] for r < rows, i < y.rows (t contiguous [rows, y.rows]): 8×8 blocks
// turned in registers where whole.
SF_KERNEL static void add_rows_as_columns(Mat y, int c0, const float *t, int rows) {
  int M = y.rows, i = 0;
  for (; i + 8 <= M; i += 8) {
    int r = 0;
    for (; r + 8 <= rows; r += 8) {
      F8 m[8];
      for (int q = 0; q < 8; q++) m[q] = f8_load(t + (size_t)(r + q) * M + i);
      f8_transpose(m); // m[q]: row i + q of y, columns c0 + r ..
      for (int q = 0; q < 8; q++) {
        float *p = &MAT_AT(y, i + q, c0 + r);
        f8_store(p, f8_load(p) + m[q]);
      }
    }
    for (; r < rows; r++)
      for (int q = 0; q < 8; q++) MAT_AT(y, i + q, c0 + r) += t[(size_t)r * M + i + q];
  }
  for (; i < M; i++)
    for (int r = 0; r < rows; r++) MAT_AT(y, i, c0 + r) += t[(size_t)r * M + i];
}

// One block of y: columns j0.. (NN, NT, WA) or rows j0.. (TN).
static void grad_task(void *ctx, int task) {
  Job *j = ctx;
  int M = j->y.rows, N = j->y.cols, K = j->form == TN ? j->a.rows : j->a.cols;
  if (j->form == WA) { // yᵀ[c0.., :] = w[c0.., :]·aᵀ, then added to y[:, c0..]
    int c0 = task * GRAD_MB, nb = imin(GRAD_MB, N - c0);
    float *yt = buffer((size_t)nb * M);
    gemm_matmul_t(mat_view(yt, nb, M), mat_sub(j->b, c0, 0, nb, K), &j->pb, 0, NULL, (Mat){0});
    add_rows_as_columns(j->y, c0, yt, nb);
    free(yt);
    return;
  }
  if (j->form == TN) {
    int i0 = task * GRAD_MB, mb = imin(GRAD_MB, M - i0);
    float *at = buffer((size_t)mb * K);
    columns_as_rows(at, j->a, i0, mb);
    if (j->set)
      gemm_matmul_t(mat_sub(j->y, i0, 0, mb, N), mat_view(at, mb, K), &j->pb, 0, NULL, (Mat){0});
    else
      gemm_matmul_t_add(mat_sub(j->y, i0, 0, mb, N), mat_view(at, mb, K), &j->pb, 0);
    free(at);
    return;
  }
  int c0 = task * GRAD_NB, nb = imin(GRAD_NB, N - c0);
  float *buf = buffer(gemm_packed_floats(nb, imin(GRAD_KB, K)));
  Mat y = mat_sub(j->y, 0, c0, M, nb);
  for (int k0 = 0; k0 < K; k0 += GRAD_KB) { // in order: the sums run k = 0, 1, … K−1
    int kb = imin(GRAD_KB, K - k0);
    GemmWeights p;
    if (j->form == NN) // b[k0.., c0..] [kb, nb]: its transpose packed
      gemm_pack_t_into(&p, buf, mat_sub(j->b, k0, c0, kb, nb));
    else // w[c0.., k0..] [nb, kb]
      gemm_pack_into(&p, buf, mat_sub(j->b, c0, k0, nb, kb));
    gemm_matmul_t_add(y, mat_sub(j->a, 0, k0, M, kb), &p, 0);
  }
  free(buf);
}

static bool run(Form form, Mat y, Mat a, Mat b, bool set, bool threads) {
  if (!gemm_supported()) return false;
  int M = y.rows, N = y.cols, K = form == TN ? a.rows : a.cols;
  EXPECT(form == TN ? a.cols == M : a.rows == M);
  EXPECT(form == NT ? b.rows == N && b.cols == K : b.rows == K && b.cols == N);
  if (set && K == 0)
    for (int i = 0; i < M; i++) memset(&MAT_AT(y, i, 0), 0, sizeof(float) * (size_t)N);
  if (M == 0 || N == 0 || K == 0) return true;
  if (form == NT && N > M) form = WA;
  Job j = {form, y, a, b, {0}, set};
  float *packed = NULL;
  int tasks = (N + GRAD_NB - 1) / GRAD_NB;
  if (form == TN) {
    packed = buffer(gemm_packed_floats(N, K));
    gemm_pack_t_into(&j.pb, packed, b); // b [K, N]: its transpose packed, [N, K]
    tasks = (M + GRAD_MB - 1) / GRAD_MB;
  } else if (form == WA) {
    packed = buffer(gemm_packed_floats(M, K));
    gemm_pack_into(&j.pb, packed, a); // a [M, K]
    tasks = (N + GRAD_MB - 1) / GRAD_MB;
  }
  if (threads && par_threads() > 1 && (long)M * N * K >= SPLIT_MIN_MADDS)
    par_run(tasks, grad_task, &j);
  else
    for (int t = 0; t < tasks; t++) grad_task(&j, t);
  free(packed);
  return true;
}

bool gemm_grad_nn(Mat y, Mat a, Mat b, bool threads) { return run(NN, y, a, b, false, threads); }
bool gemm_grad_nt(Mat y, Mat a, Mat w, bool threads) { return run(NT, y, a, w, false, threads); }
bool gemm_grad_tn(Mat y, Mat a, Mat b, bool threads) { return run(TN, y, a, b, false, threads); }
bool gemm_grad_tn_to(Mat y, Mat a, Mat b, bool threads) { return run(TN, y, a, b, true, threads); }
