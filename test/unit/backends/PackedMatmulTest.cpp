//===- PackedMatmulTest.cpp - kiln's packed product against a reference ---===//
//
// kiln_packed_matmul_f32 (backends/cpu/support/PackedMatmul.c) against a
// double-precision product, on a B packed here by the layout that
// PackedMatmulAbi.h defines (the compiler's packing is checked by
// test/backends/cpu_matmul_to_dnnl.mlir and the e2e programs). Every
// case runs through the kernel as built for kiln (AVX-512, else AVX2,
// where the CPU has it), through a copy built with
// KILN_PACKED_MATMUL_NO_AVX512 (AVX2 where the CPU has it) and through
// one built with KILN_PACKED_MATMUL_PORTABLE_ONLY (the baseline-ISA
// kernel). Shapes cover every tile height (1 to 16 rows,
// split into tiles of up to 6 or 2), partial last panels, K = 0 and K not
// a multiple of the split sums' four ways, padded leading dimensions, A
// stored transposed, accumulation and the bias; calls on column chunks
// must give the whole call's bits, and non-finite values must propagate.
//
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

extern "C" {
#include "PackedMatmulAbi.h"

void kiln_packed_matmul_f32(int64_t flags, int64_t m, int64_t n, int64_t k,
                            const float *a, int64_t lda, const float *packed,
                            float *c, int64_t ldc, const float *bias);
// The copy built with KILN_PACKED_MATMUL_PORTABLE_ONLY (CMakeLists.txt).
void kiln_packed_matmul_portable_f32(int64_t flags, int64_t m, int64_t n,
                                     int64_t k, const float *a, int64_t lda,
                                     const float *packed, float *c, int64_t ldc,
                                     const float *bias);
// The copy built with KILN_PACKED_MATMUL_NO_AVX512.
void kiln_packed_matmul_no_avx512_f32(int64_t flags, int64_t m, int64_t n,
                                      int64_t k, const float *a, int64_t lda,
                                      const float *packed, float *c,
                                      int64_t ldc, const float *bias);
}

namespace {

constexpr int64_t kPanel = KILN_PACKED_MATMUL_PANEL;

using MatmulFn = decltype(&kiln_packed_matmul_f32);

struct Instance {
  const char *name;
  MatmulFn run;
};
const Instance kInstances[] = {{"linked", kiln_packed_matmul_f32},
                               {"no-avx512", kiln_packed_matmul_no_avx512_f32},
                               {"portable", kiln_packed_matmul_portable_f32}};

/// B (k x n, row-major) in the packed layout of PackedMatmulAbi.h.
std::vector<float> pack(const std::vector<float> &b, int64_t k, int64_t n) {
  int64_t panels = (n + kPanel - 1) / kPanel;
  std::vector<float> packed(panels * k * kPanel, 0.0f);
  for (int64_t q = 0; q < k; ++q)
    for (int64_t j = 0; j < n; ++j)
      packed[((j / kPanel) * k + q) * kPanel + j % kPanel] = b[q * n + j];
  return packed;
}

struct Problem {
  int64_t m, n, k;
  int64_t flags;
  int64_t lda, ldc;
  std::vector<float> a, b, packed, c, bias;
};

Problem makeProblem(int64_t m, int64_t n, int64_t k, int64_t flags,
                    unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  Problem p{m, n, k, flags, 0, n + 3, {}, {}, {}, {}, {}};
  bool transposeA = flags & KILN_PACKED_MATMUL_TRANSPOSE_A;
  // Padded leading dimensions: A's rows (or columns) and C's rows are not
  // contiguous with the next ones.
  p.lda = (transposeA ? m : k) + 2;
  p.a.resize((transposeA ? k : m) * p.lda);
  for (float &x : p.a)
    x = uniform(gen);
  p.b.resize(k * n);
  for (float &x : p.b)
    x = uniform(gen);
  p.packed = pack(p.b, k, n);
  p.c.resize(m * p.ldc);
  for (float &x : p.c)
    x = uniform(gen);
  p.bias.resize(n);
  for (float &x : p.bias)
    x = uniform(gen);
  return p;
}

float aAt(const Problem &p, int64_t i, int64_t q) {
  return (p.flags & KILN_PACKED_MATMUL_TRANSPOSE_A) ? p.a[q * p.lda + i]
                                                    : p.a[i * p.lda + q];
}

/// Checks `c` (the kernel's result from `p.c`) against the product in
/// double, within the rounding of a k-term f32 sum, and that the padding
/// of C's rows is untouched.
void expectProduct(const Problem &p, const std::vector<float> &c,
                   const char *instance) {
  bool accumulate = p.flags & KILN_PACKED_MATMUL_ACCUMULATE;
  bool bias = p.flags & KILN_PACKED_MATMUL_BIAS;
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.n; ++j) {
      double sum = 0, magnitude = 0;
      for (int64_t q = 0; q < p.k; ++q) {
        double term = double(aAt(p, i, q)) * p.b[q * p.n + j];
        sum += term;
        magnitude += std::fabs(term);
      }
      if (accumulate) {
        sum += p.c[i * p.ldc + j];
        magnitude += std::fabs(p.c[i * p.ldc + j]);
      }
      if (bias) {
        sum += p.bias[j];
        magnitude += std::fabs(p.bias[j]);
      }
      double tolerance = (p.k + 2) * 1.2e-7 * magnitude + 1e-30;
      ASSERT_NEAR(c[i * p.ldc + j], sum, tolerance)
          << instance << ": m " << p.m << " n " << p.n << " k " << p.k
          << " flags " << p.flags << " at (" << i << ", " << j << ")";
    }
    for (int64_t j = p.n; j < p.ldc; ++j)
      ASSERT_EQ(c[i * p.ldc + j], p.c[i * p.ldc + j])
          << instance << ": C's padding written at (" << i << ", " << j << ")";
  }
}

std::vector<float> run(const Instance &instance, const Problem &p) {
  std::vector<float> c = p.c;
  instance.run(p.flags, p.m, p.n, p.k, p.a.data(), p.lda, p.packed.data(),
               c.data(), p.ldc,
               (p.flags & KILN_PACKED_MATMUL_BIAS) ? p.bias.data() : nullptr);
  return c;
}

TEST(PackedMatmul, EveryTileHeightAndPanelWidth) {
  unsigned seed = 1;
  for (const Instance &instance : kInstances)
    for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 8, 11, 13, 16})
      for (int64_t n : {1, 15, 16, 17, 40})
        for (int64_t k : {1, 3, 4, 7, 37}) {
          Problem p = makeProblem(m, n, k, 0, seed++);
          expectProduct(p, run(instance, p), instance.name);
        }
}

TEST(PackedMatmul, EveryFlagCombination) {
  unsigned seed = 100;
  for (const Instance &instance : kInstances)
    for (int64_t flags = 0; flags < 8; ++flags)
      for (int64_t m : {1, 2, 8, 9})
        for (int64_t n : {5, 33}) {
          Problem p = makeProblem(m, n, 130, flags, seed++);
          expectProduct(p, run(instance, p), instance.name);
        }
}

// An empty sum: C keeps its values (accumulating) or becomes zero, plus
// the bias; no row of A or B is read.
TEST(PackedMatmul, EmptySum) {
  for (const Instance &instance : kInstances)
    for (int64_t flags = 0; flags < 8; ++flags) {
      Problem p = makeProblem(3, 20, 0, flags, 7);
      expectProduct(p, run(instance, p), instance.name);
    }
}

// The compiler splits a product's columns into chunks of whole panels, one
// call each: every chunking gives the bits of the whole call.
TEST(PackedMatmul, ColumnChunksGiveTheSameBits) {
  for (const Instance &instance : kInstances)
    for (int64_t flags : {0, 6, 7}) {
      Problem p = makeProblem(8, 100, 61, flags, 11);
      std::vector<float> whole = run(instance, p);
      for (int64_t chunk : {16, 32, 48}) {
        std::vector<float> c = p.c;
        for (int64_t j = 0; j < p.n; j += chunk)
          instance.run(p.flags, p.m, std::min(chunk, p.n - j), p.k, p.a.data(),
                       p.lda, p.packed.data() + j * p.k, c.data() + j, p.ldc,
                       (p.flags & KILN_PACKED_MATMUL_BIAS) ? p.bias.data() + j
                                                           : nullptr);
        ASSERT_EQ(std::memcmp(c.data(), whole.data(), c.size() * sizeof(float)),
                  0)
            << instance.name << ": chunks of " << chunk << ", flags " << flags;
      }
    }
}

// A NaN in A reaches its row, an infinity in B its column (inf - inf in a
// row that also meets -inf: NaN), whatever the tile and the way of the
// split sums that meet them.
TEST(PackedMatmul, NonFiniteValuesPropagate) {
  const float inf = std::numeric_limits<float>::infinity();
  for (const Instance &instance : kInstances)
    for (int64_t m : {1, 2, 7}) {
      Problem p = makeProblem(m, 35, 9, 0, 21);
      // A's row m - 1 gets a NaN at q = 5; B's column 33 an inf at q = 2
      // and column 34 an inf at q = 1 and a -inf at q = 8.
      p.a[(m - 1) * p.lda + 5] = std::nanf("");
      p.b[2 * p.n + 33] = inf;
      p.b[1 * p.n + 34] = inf;
      p.b[8 * p.n + 34] = -inf;
      for (float &x : p.a)
        if (!std::isnan(x))
          x = std::fabs(x) + 0.5f; // positive: inf * a stays inf
      p.packed = pack(p.b, p.k, p.n);
      std::vector<float> c = run(instance, p);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
          float x = c[i * p.ldc + j];
          if (i == m - 1 || j == 34)
            EXPECT_TRUE(std::isnan(x))
                << instance.name << " (" << i << ", " << j << ") = " << x;
          else if (j == 33)
            EXPECT_EQ(x, inf) << instance.name << " (" << i << ", " << j << ")";
          else
            EXPECT_TRUE(std::isfinite(x))
                << instance.name << " (" << i << ", " << j << ") = " << x;
        }
    }
}

} // namespace
