/*===- PackedMatmul.c - Products of few rows by a packed constant B -------===*\
 *
 * Linked (in the static, position-independent kiln_packed_matmul archive)
 * into the modules whose code calls kiln_packed_matmul_f32, which
 * kiln-cpu-matmul-to-dnnl emits for the f32 products of a few rows (an
 * LSTM or GRU step at a small batch) by a constant B that oneDNN reads
 * unpacked: below AVX-512 oneDNN 2.6's matmul primitive keeps B plain and
 * its GEMM packs the whole of B on every call, so a recurrence's 8 x 512
 * by 512 x 2048 step ran at 21 GFLOP/s on a core that reaches 61. Here B
 * was packed by the compiler (PackedMatmulAbi.h), and each panel of 16
 * columns is read once per call, in order, while a tile of rows of C
 * accumulates in registers over all of K. Plain C on libc: no oneDNN, no
 * LLVM.
 *
 * The kernel is written once with GCC's generic vectors and compiled three
 * times, the instance chosen at run time: for AVX-512 (tiles of up to 12
 * rows by two panels, one 16-float vector each, at most 24 of the 32
 * registers accumulating), for AVX2 with FMA (tiles of up to 6 rows x 16
 * columns: 12 of the 16 registers accumulate, two hold a row of the panel
 * and one the broadcast of A) and for the target's baseline ISA (tiles of
 * up to 2 rows, which SSE2's 16 registers hold), for correctness on any
 * CPU.
 * Defining KILN_PACKED_MATMUL_PORTABLE_ONLY leaves both wide instances
 * out, KILN_PACKED_MATMUL_NO_AVX512 the AVX-512 one (the unit tests build
 * all three).
 *
 * Every C[i, j] is the sum over q in order of A[i, q] * B[q, j] (fused
 * multiply-adds where the CPU has them), added to C's old value with
 * KILN_PACKED_MATMUL_ACCUMULATE and then to bias[j] with
 * KILN_PACKED_MATMUL_BIAS: the same order for every row and column, so
 * the result does not depend on how the compiler split the columns over
 * the threads. The kernel is serial and reentrant, allocates nothing and
 * keeps no state but the chosen instance.
 *
\*===----------------------------------------------------------------------===*/

#include "KernelMacros.h"
#include "PackedMatmulAbi.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && !defined(KILN_PACKED_MATMUL_PORTABLE_ONLY)
#define KILN_PACKED_MATMUL_AVX2 1
#define KILN_AVX2_TARGET __attribute__((target("avx2,fma")))
#ifndef KILN_PACKED_MATMUL_NO_AVX512
#define KILN_PACKED_MATMUL_AVX512 1
#define KILN_AVX512_TARGET __attribute__((target("avx512f,avx2,fma")))
#endif
#endif

enum { kPanel = KILN_PACKED_MATMUL_PANEL, kMaxTileRows = 6 };

/* The AVX-512 instance's tiles: up to 12 rows of one or two panels, each
 * panel's row one 16-float vector (wideTile). */
enum { kMaxWideTileRows = 12 };

/* How many rows of the panel ahead of the one being read are prefetched.
 * B is read once per call and does not fit in L2 at the sizes this kernel
 * is for (an LSTM layer's 512 x 2048 recurrence weights are 4 MB), so each
 * call streams it from L3, where the hardware prefetchers alone kept a
 * core at 100-105 GB/s on a Zen 5 host; asking 2 KB ahead reached 125 GB/s
 * on one core and 230-245 GB/s on two (1 x 512 by 512 x 2048: 40-42 ->
 * 33-34 us on one thread, 20 -> 18 us on two). */
enum { kPrefetchRows = 32 };

typedef float v8f __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));

KILN_INLINE v8f load8(const float *p) {
  v8f v;
  memcpy(&v, p, sizeof v);
  return v;
}

KILN_INLINE void store8(float *p, v8f v) { memcpy(p, &v, sizeof v); }

KILN_INLINE v16f load16(const float *p) {
  v16f v;
  memcpy(&v, p, sizeof v);
  return v;
}

KILN_INLINE void store16(float *p, v16f v) { memcpy(p, &v, sizeof v); }

/* C[j] (and the row's other columns up to `cols`) from the sums of a row
 * of a tile, its old value and the bias, for a partial last panel. */
KILN_INLINE void storePartialRow(const float *sums, float *row, int64_t cols,
                                 int accumulate, const float *bias) {
  for (int64_t j = 0; j < cols; ++j) {
    float value = accumulate ? row[j] + sums[j] : sums[j];
    row[j] = bias ? value + bias[j] : value;
  }
}

/* C's `rows` x `cols` (cols <= 16) tile at `c` from the accumulated
 * products, its old values and the bias (see the file header). */
KILN_INLINE void storeTile(int rows, v8f acc[][2], float *c, int64_t ldc,
                           int64_t cols, int accumulate, const float *bias) {
  for (int r = 0; r < rows; ++r) {
    float *row = c + r * ldc;
    if (cols == kPanel) {
      v8f lo = acc[r][0], hi = acc[r][1];
      if (accumulate) {
        lo = load8(row) + lo;
        hi = load8(row + 8) + hi;
      }
      if (bias) {
        lo = lo + load8(bias);
        hi = hi + load8(bias + 8);
      }
      store8(row, lo);
      store8(row + 8, hi);
      continue;
    }
    float sums[kPanel];
    store8(sums, acc[r][0]);
    store8(sums + 8, acc[r][1]);
    storePartialRow(sums, row, cols, accumulate, bias);
  }
}

/* The `rows` x 16 tile of C whose rows start at `a` (element (r, q) at
 * a[r * rs + q * cs]) over one panel of B, K deep. `rows` and `ways` are
 * constants wherever this is inlined, so that the accumulators live in
 * registers. With `ways` > 1, step q adds into accumulator set q % ways and
 * the sets are summed at the end: a tile of one or two rows has too few
 * independent sums to cover the latency of a fused multiply-add. */
KILN_INLINE void tile(int rows, int ways, int64_t k, const float *a, int64_t rs,
                      int64_t cs, const float *panel, float *c, int64_t ldc,
                      int64_t cols, int accumulate, const float *bias) {
  v8f acc[4][kMaxTileRows][2];
#pragma GCC unroll 4
  for (int w = 0; w < ways; ++w)
#pragma GCC unroll 6
    for (int r = 0; r < rows; ++r)
      acc[w][r][0] = acc[w][r][1] = (v8f){0};
  int64_t q = 0;
  for (; q + ways <= k; q += ways)
#pragma GCC unroll 4
    for (int w = 0; w < ways; ++w) {
      const float *row = panel + (q + w) * kPanel;
      /* A row of a panel is one cache line; the line kPrefetchRows ahead
       * (in this panel or the next, which follows it in memory) is asked
       * for now. Prefetching never faults, past B's end included. */
      __builtin_prefetch(row + kPrefetchRows * kPanel, 0, 3);
      v8f lo = load8(row), hi = load8(row + 8);
      const float *column = a + (q + w) * cs;
#pragma GCC unroll 6
      for (int r = 0; r < rows; ++r) {
        float x = column[r * rs];
        acc[w][r][0] += x * lo;
        acc[w][r][1] += x * hi;
      }
    }
  for (; q < k; ++q) {
    v8f lo = load8(panel + q * kPanel), hi = load8(panel + q * kPanel + 8);
    const float *column = a + q * cs;
#pragma GCC unroll 6
    for (int r = 0; r < rows; ++r) {
      float x = column[r * rs];
      acc[0][r][0] += x * lo;
      acc[0][r][1] += x * hi;
    }
  }
  if (ways == 4)
#pragma GCC unroll 6
    for (int r = 0; r < rows; ++r)
      for (int h = 0; h < 2; ++h)
        acc[0][r][h] =
            (acc[0][r][h] + acc[1][r][h]) + (acc[2][r][h] + acc[3][r][h]);
  else if (ways == 2)
#pragma GCC unroll 6
    for (int r = 0; r < rows; ++r)
      for (int h = 0; h < 2; ++h)
        acc[0][r][h] = acc[0][r][h] + acc[1][r][h];
  storeTile(rows, acc[0], c, ldc, cols, accumulate, bias);
}

/* tile() for AVX-512 over `panels` (1 or 2) adjacent panels: each row of
 * a panel is one 16-float vector, so a tile of `rows` rows holds rows x
 * panels x ways accumulators; two panels share each broadcast of A, so
 * that the loads do not bound the fused multiply-adds (8 rows: 150 GFLOP/s
 * on one panel, 260 on two, on a Zen 5 core). `cols` <= 16 x panels. */
KILN_INLINE void wideTile(int rows, int ways, int panels, int64_t k,
                          const float *a, int64_t rs, int64_t cs,
                          const float *panel, float *c, int64_t ldc,
                          int64_t cols, int accumulate, const float *bias) {
  v16f acc[4][kMaxWideTileRows][2];
#pragma GCC unroll 4
  for (int w = 0; w < ways; ++w)
#pragma GCC unroll 12
    for (int r = 0; r < rows; ++r)
      for (int h = 0; h < panels; ++h)
        acc[w][r][h] = (v16f){0};
  const float *second = panel + k * kPanel;
  int64_t q = 0;
  for (; q + ways <= k; q += ways)
#pragma GCC unroll 4
    for (int w = 0; w < ways; ++w) {
      const float *row = panel + (q + w) * kPanel;
      __builtin_prefetch(row + kPrefetchRows * kPanel, 0, 3);
      v16f b[2];
      b[0] = load16(row);
      if (panels == 2) {
        __builtin_prefetch(second + (q + w + kPrefetchRows) * kPanel, 0, 3);
        b[1] = load16(second + (q + w) * kPanel);
      }
      const float *column = a + (q + w) * cs;
#pragma GCC unroll 12
      for (int r = 0; r < rows; ++r) {
        float x = column[r * rs];
        for (int h = 0; h < panels; ++h)
          acc[w][r][h] += x * b[h];
      }
    }
  for (; q < k; ++q) {
    v16f b[2];
    b[0] = load16(panel + q * kPanel);
    if (panels == 2)
      b[1] = load16(second + q * kPanel);
    const float *column = a + q * cs;
#pragma GCC unroll 12
    for (int r = 0; r < rows; ++r) {
      float x = column[r * rs];
      for (int h = 0; h < panels; ++h)
        acc[0][r][h] += x * b[h];
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < rows; ++r)
    for (int h = 0; h < panels; ++h) {
      v16f sum = acc[0][r][h];
      if (ways == 4)
        sum = (acc[0][r][h] + acc[1][r][h]) + (acc[2][r][h] + acc[3][r][h]);
      else if (ways == 2)
        sum = acc[0][r][h] + acc[1][r][h];
      float *row = c + r * ldc + h * kPanel;
      const float *panelBias = bias ? bias + h * kPanel : NULL;
      int64_t width = cols - h * kPanel < kPanel ? cols - h * kPanel : kPanel;
      if (width == kPanel) {
        if (accumulate)
          sum = load16(row) + sum;
        if (panelBias)
          sum = sum + load16(panelBias);
        store16(row, sum);
        continue;
      }
      float sums[kPanel];
      store16(sums, sum);
      storePartialRow(sums, row, width, accumulate, panelBias);
    }
}

/* One tile of `rows` rows over `panels` panels: wideTile's where `wide`
 * (up to 12 rows; four ways of sums up to 2 rows and two up to 4, the
 * same for one panel as for two, so that a column's sums do not depend on
 * how the columns were split), else tile()'s over one panel (up to 6
 * rows; four ways for one row, two for two). */
KILN_INLINE void anyTile(int wide, int panels, int rows, int64_t k,
                         const float *a, int64_t rs, int64_t cs,
                         const float *panel, float *c, int64_t ldc,
                         int64_t cols, int accumulate, const float *bias) {
  if (wide) {
    switch (rows) {
#define KILN_TILE_CASE(R, WAYS)                                                \
  case R:                                                                      \
    if (panels == 2)                                                           \
      wideTile(R, WAYS, 2, k, a, rs, cs, panel, c, ldc, cols, accumulate,      \
               bias);                                                          \
    else                                                                       \
      wideTile(R, WAYS, 1, k, a, rs, cs, panel, c, ldc, cols, accumulate,      \
               bias);                                                          \
    return;
      KILN_TILE_CASE(1, 4)
      KILN_TILE_CASE(2, 4)
      KILN_TILE_CASE(3, 2)
      KILN_TILE_CASE(4, 2)
      KILN_TILE_CASE(5, 1)
      KILN_TILE_CASE(6, 1)
      KILN_TILE_CASE(7, 1)
      KILN_TILE_CASE(8, 1)
      KILN_TILE_CASE(9, 1)
      KILN_TILE_CASE(10, 1)
      KILN_TILE_CASE(11, 1)
      KILN_TILE_CASE(12, 1)
#undef KILN_TILE_CASE
    }
    return;
  }
  switch (rows) {
#define KILN_TILE_CASE(R, WAYS)                                                \
  case R:                                                                      \
    tile(R, WAYS, k, a, rs, cs, panel, c, ldc, cols, accumulate, bias);        \
    return;
    KILN_TILE_CASE(1, 4)
    KILN_TILE_CASE(2, 2)
    KILN_TILE_CASE(3, 1)
    KILN_TILE_CASE(4, 1)
    KILN_TILE_CASE(5, 1)
    KILN_TILE_CASE(6, 1)
#undef KILN_TILE_CASE
  }
}

/* The whole call with tiles of at most `maxRows` rows (kMaxWideTileRows
 * where `wide`, else kMaxTileRows): panel by panel (two by two where
 * `wide`), each panel's rows in tiles as even as possible (8 rows
 * as 4 + 4, not 6 + 2: a tile of few rows waits on its loads). */
KILN_INLINE void matmulBody(int wide, int maxRows, int64_t flags, int64_t m,
                            int64_t n, int64_t k, const float *a, int64_t lda,
                            const float *packed, float *c, int64_t ldc,
                            const float *bias) {
  int transposeA = (flags & KILN_PACKED_MATMUL_TRANSPOSE_A) != 0;
  int accumulate = (flags & KILN_PACKED_MATMUL_ACCUMULATE) != 0;
  if (!(flags & KILN_PACKED_MATMUL_BIAS))
    bias = NULL;
  int64_t rs = transposeA ? 1 : lda, cs = transposeA ? lda : 1;
  int64_t tiles = (m + maxRows - 1) / maxRows;
  for (int64_t j = 0; j < n;) {
    const float *panel = packed + j * k;
    /* The wide tiles take two panels at a time where two are left, but for
     * one row (one stream of B at a time reads it faster). */
    int panels = wide && m > 1 && n - j > kPanel ? 2 : 1;
    int64_t cols = n - j < panels * kPanel ? n - j : panels * kPanel;
    const float *panelBias = bias ? bias + j : NULL;
    int64_t i = 0;
    for (int64_t t = 0; t < tiles; ++t) {
      int64_t left = tiles - t;
      int rows = (int)((m - i + left - 1) / left);
      const float *rowsOfA = a + i * rs;
      float *rowsOfC = c + i * ldc + j;
      anyTile(wide, panels, rows, k, rowsOfA, rs, cs, panel, rowsOfC, ldc, cols,
              accumulate, panelBias);
      i += rows;
    }
    j += panels * kPanel;
  }
}

#define KILN_PACKED_PARAMS                                                     \
  (int64_t flags, int64_t m, int64_t n, int64_t k, const float *a,             \
   int64_t lda, const float *packed, float *c, int64_t ldc, const float *bias)

/* The baseline's tiles: two rows of two 8-float vectors are 8 of SSE2's
 * 16 registers. */
static void matmulBaseline KILN_PACKED_PARAMS {
  matmulBody(0, 2, flags, m, n, k, a, lda, packed, c, ldc, bias);
}

#ifdef KILN_PACKED_MATMUL_AVX2
KILN_AVX2_TARGET static void matmulAvx2 KILN_PACKED_PARAMS {
  matmulBody(0, kMaxTileRows, flags, m, n, k, a, lda, packed, c, ldc, bias);
}
#endif

#ifdef KILN_PACKED_MATMUL_AVX512
KILN_AVX512_TARGET static void matmulAvx512 KILN_PACKED_PARAMS {
  matmulBody(1, kMaxWideTileRows, flags, m, n, k, a, lda, packed, c, ldc, bias);
}
#endif

typedef void(*MatmulFn) KILN_PACKED_PARAMS;

static MatmulFn selectInstance(void) {
#ifdef KILN_PACKED_MATMUL_AVX512
  if (__builtin_cpu_supports("avx512f"))
    return matmulAvx512;
#endif
#ifdef KILN_PACKED_MATMUL_AVX2
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return matmulAvx2;
#endif
  return matmulBaseline;
}

KILN_HIDDEN void kiln_packed_matmul_f32(int64_t flags, int64_t m, int64_t n,
                                        int64_t k, const float *a, int64_t lda,
                                        const float *packed, float *c,
                                        int64_t ldc, const float *bias) {
  /* Chosen on the first call; threads that race there store the same
   * function. */
  static MatmulFn instance;
  MatmulFn chosen = __atomic_load_n(&instance, __ATOMIC_RELAXED);
  if (!chosen) {
    chosen = selectInstance();
    __atomic_store_n(&instance, chosen, __ATOMIC_RELAXED);
  }
  if (m <= 0 || n <= 0)
    return;
  chosen(flags, m, n, k, a, lda, packed, c, ldc, bias);
}
