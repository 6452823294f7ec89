//===- DnnlMatmulInt8Test.cpp - kiln_dnnl_matmul's int8 products ----------===//
//
// backends/cpu/support/DnnlMatmul.c called as kiln-cpu-matmul-to-dnnl
// calls it for a product of 8-bit integers into i32: int8 or uint8 A and B
// (uint8 B runs as int8 B - 128 plus 128 times A's row sums), every byte
// value (255 * 127 pairs are what a saturating 16-bit intermediate gets
// wrong), against sums written out here. ctest runs these
// tests twice: as the host's oneDNN runs them (AMX or VNNI where the CPU has
// them: oneDNN's primitive), and with ONEDNN_MAX_CPU_ISA=AVX2, where
// kiln_dnnl_matmul must compute them in its own loops.
//
//===----------------------------------------------------------------------===//

#include "DnnlMatmulCall.h"

#include <dnnl.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

/// A batch of row-major byte matrices, each `rows` x `cols` with `ld` >=
/// cols bytes a row and `stride` bytes from one to the next.
struct Bytes {
  int64_t batch, rows, cols, ld, stride;
  std::vector<uint8_t> data;

  Bytes(int64_t batch, int64_t rows, int64_t cols, int64_t pad)
      : batch(batch), rows(rows), cols(cols), ld(cols + pad),
        stride(rows * (cols + pad)), data(batch * rows * (cols + pad), 0x5a) {}

  uint8_t &at(int64_t p, int64_t r, int64_t c) {
    return data[p * stride + r * ld + c];
  }

  /// Every byte value, the extremes often: the products that a 16-bit
  /// intermediate saturates are the largest ones.
  void fill(unsigned seed) {
    for (int64_t p = 0; p < batch; ++p)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          seed = seed * 1664525u + 1013904223u;
          unsigned pick = seed >> 24;
          at(p, r, c) = pick < 64    ? 0xff
                        : pick < 96  ? 0x80
                        : pick < 128 ? 0x7f
                                     : static_cast<uint8_t>(seed >> 8);
        }
  }
};

struct Product {
  int64_t flags, batch, m, n, k;
  Bytes a, b;
  std::vector<int32_t> c;
  int64_t ldc;

  Product(int64_t flags, int64_t batch, int64_t m, int64_t n, int64_t k,
          int64_t pad = 0)
      : flags(flags), batch(batch), m(m), n(n), k(k),
        a(batch, transposeA() ? k : m, transposeA() ? m : k, pad),
        b(batch, transposeB() ? n : k, transposeB() ? k : n, pad),
        c(batch * m * (n + pad), 0), ldc(n + pad) {
    a.fill(1);
    b.fill(2);
    for (size_t i = 0; i < c.size(); ++i)
      c[i] = static_cast<int32_t>(i * 2654435761u);
  }

  bool transposeA() const { return flags & KILN_DNNL_MATMUL_TRANSPOSE_A; }
  bool transposeB() const { return flags & KILN_DNNL_MATMUL_TRANSPOSE_B; }

  int64_t valueA(int64_t p, int64_t i, int64_t l) {
    uint8_t byte = transposeA() ? a.at(p, l, i) : a.at(p, i, l);
    return (flags & KILN_DNNL_MATMUL_UNSIGNED_A) ? int64_t(byte)
                                                 : int64_t(int8_t(byte));
  }
  int64_t valueB(int64_t p, int64_t l, int64_t j) {
    uint8_t byte = transposeB() ? b.at(p, j, l) : b.at(p, l, j);
    return (flags & KILN_DNNL_MATMUL_UNSIGNED_B) ? int64_t(byte)
                                                 : int64_t(int8_t(byte));
  }

  /// C as the call must leave it (the padding between rows untouched).
  std::vector<int32_t> expected() {
    std::vector<int32_t> result = c;
    for (int64_t p = 0; p < batch; ++p)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          int32_t &out = result[(p * m + i) * ldc + j];
          int64_t sum = (flags & KILN_DNNL_MATMUL_ACCUMULATE) ? out : 0;
          for (int64_t l = 0; l < k; ++l)
            sum += valueA(p, i, l) * valueB(p, l, j);
          out = static_cast<int32_t>(sum);
        }
    return result;
  }

  void call(void **slot) {
    bool batched = batch > 1;
    kiln_dnnl_matmul(slot, flags | KILN_DNNL_MATMUL_INT8, batch, m, n, k,
                     a.data.data(), a.ld, batched ? a.stride : 0,
                     b.data.data(), b.ld, batched ? b.stride : 0, c.data(),
                     ldc, batched ? m * ldc : 0, nullptr);
  }
};

/// The two calls of one site: the first creates its primitive (or settles
/// on the loops), the second runs from the cache.
void expectProduct(int64_t flags, int64_t batch, int64_t m, int64_t n,
                   int64_t k, int64_t pad = 0) {
  std::vector<int32_t> want = Product(flags, batch, m, n, k, pad).expected();
  void *slot = nullptr;
  for (int call = 0; call < 2; ++call) {
    Product fresh(flags, batch, m, n, k, pad);
    fresh.call(&slot);
    EXPECT_EQ(fresh.c, want) << "flags " << flags << ", call " << call;
  }
}

TEST(DnnlMatmulInt8, EveryFlagCombination) {
  int64_t flags[] = {KILN_DNNL_MATMUL_TRANSPOSE_A, KILN_DNNL_MATMUL_TRANSPOSE_B,
                     KILN_DNNL_MATMUL_ACCUMULATE, KILN_DNNL_MATMUL_CONSTANT_B,
                     KILN_DNNL_MATMUL_UNSIGNED_A, KILN_DNNL_MATMUL_UNSIGNED_B};
  for (int mask = 0; mask < 64; ++mask) {
    int64_t combined = 0;
    for (int bit = 0; bit < 6; ++bit)
      if (mask & (1 << bit))
        combined |= flags[bit];
    expectProduct(combined, 1, 37, 29, 131);
  }
}

/// A dynamically quantized transformer's projection: uint8 activations,
/// int8 (or uint8) weights packed once, K a few hundred.
TEST(DnnlMatmulInt8, ProjectionShape) {
  expectProduct(KILN_DNNL_MATMUL_UNSIGNED_A | KILN_DNNL_MATMUL_CONSTANT_B, 1,
                64, 96, 768);
  expectProduct(KILN_DNNL_MATMUL_UNSIGNED_A | KILN_DNNL_MATMUL_UNSIGNED_B |
                    KILN_DNNL_MATMUL_CONSTANT_B,
                1, 64, 96, 768);
}

TEST(DnnlMatmulInt8, PaddedRowsAndBatches) {
  for (int64_t flags :
       {int64_t(KILN_DNNL_MATMUL_UNSIGNED_A),
        int64_t(KILN_DNNL_MATMUL_TRANSPOSE_B | KILN_DNNL_MATMUL_ACCUMULATE),
        int64_t(KILN_DNNL_MATMUL_TRANSPOSE_A | KILN_DNNL_MATMUL_UNSIGNED_A),
        int64_t(KILN_DNNL_MATMUL_UNSIGNED_B | KILN_DNNL_MATMUL_ACCUMULATE),
        int64_t(KILN_DNNL_MATMUL_UNSIGNED_B | KILN_DNNL_MATMUL_TRANSPOSE_B |
                KILN_DNNL_MATMUL_CONSTANT_B)})
    expectProduct(flags, 3, 19, 24, 45, /*pad=*/5);
}

/// K = 0: C = A B is all zeros, C += A B leaves C as it was.
TEST(DnnlMatmulInt8, EmptySum) {
  for (int64_t flags :
       {int64_t(KILN_DNNL_MATMUL_UNSIGNED_A), int64_t(KILN_DNNL_MATMUL_ACCUMULATE),
        int64_t(KILN_DNNL_MATMUL_UNSIGNED_B | KILN_DNNL_MATMUL_ACCUMULATE)})
    expectProduct(flags, 1, 8, 6, 0);
}

/// Under ONEDNN_MAX_CPU_ISA=AVX2 (the second run), oneDNN must report an
/// ISA without VNNI, or that run would not test the loops.
TEST(DnnlMatmulInt8, IsaLimitHonoured) {
  const char *limit = std::getenv("ONEDNN_MAX_CPU_ISA");
  if (!limit || std::strcmp(limit, "AVX2") != 0)
    GTEST_SKIP() << "runs under ONEDNN_MAX_CPU_ISA=AVX2 only";
  dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
  EXPECT_NE(isa & dnnl_cpu_isa_avx512_core_vnni,
            int(dnnl_cpu_isa_avx512_core_vnni));
  EXPECT_NE(isa & dnnl_cpu_isa_avx2_vnni, int(dnnl_cpu_isa_avx2_vnni));
}

} // namespace
