//===- DnnlMatmulTest.cpp - kiln_dnnl_matmul against plain sums -----------===//
//
// backends/cpu/support/DnnlMatmul.c called directly, as the code that
// kiln-cpu-matmul-to-dnnl emits calls it: products of integer-valued
// matrices (exact in f32 and bf16, so every path must give the same bits)
// against sums written out here, for each flag, views with padded rows and
// batches, a call site reached with other strides than its first call's,
// and an empty product.
//
//===----------------------------------------------------------------------===//

#include "ConcurrentCalls.h"
#include "DnnlMatmulCall.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

/// A batch of row-major matrices, each `rows` x `cols` with `ld` >= cols
/// elements a row and `stride` elements from one to the next; the padding
/// holds a sentinel that no product reads.
struct Matrices {
  int64_t batch, rows, cols, ld, stride;
  std::vector<float> data;

  Matrices(int64_t batch, int64_t rows, int64_t cols, int64_t pad,
           int64_t batchPad, float fill = -1e30f)
      : batch(batch), rows(rows), cols(cols), ld(cols + pad),
        stride(rows * (cols + pad) + batchPad),
        data(batch * (rows * (cols + pad) + batchPad), fill) {}

  float &at(int64_t p, int64_t r, int64_t c) {
    return data[p * stride + r * ld + c];
  }

  /// Small integers from a simple generator: exact in bf16 and f32.
  void fillIntegers(unsigned seed) {
    for (int64_t p = 0; p < batch; ++p)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          seed = seed * 1664525u + 1013904223u;
          at(p, r, c) = static_cast<float>(int((seed >> 16) % 9) - 4);
        }
  }

  /// The bf16 bits of every element (exact for these values).
  std::vector<uint16_t> bf16() const {
    std::vector<uint16_t> bits(data.size());
    for (size_t i = 0; i < data.size(); ++i) {
      uint32_t word;
      std::memcpy(&word, &data[i], sizeof(word));
      bits[i] = static_cast<uint16_t>(word >> 16);
    }
    return bits;
  }
};

/// One product of the flags' form: A stored as [m, k] (or its transpose
/// [k, m]), B as [k, n] (or [n, k]), C [m, n], and a bias row of n values
/// where the flags have one.
struct Product {
  int64_t flags, batch, m, n, k;
  Matrices a, b, c;
  std::vector<float> bias;

  Product(int64_t flags, int64_t batch, int64_t m, int64_t n, int64_t k,
          int64_t pad = 0, int64_t batchPad = 0)
      : flags(flags), batch(batch), m(m), n(n), k(k),
        a(batch, transposeA() ? k : m, transposeA() ? m : k, pad, batchPad),
        b(batch, transposeB() ? n : k, transposeB() ? k : n, pad, batchPad),
        c(batch, m, n, pad, batchPad, 0.0f) {
    a.fillIntegers(1);
    b.fillIntegers(2);
    if (flags & KILN_DNNL_MATMUL_ACCUMULATE)
      c.fillIntegers(3);
    if (flags & KILN_DNNL_MATMUL_BIAS)
      for (int64_t j = 0; j < n; ++j)
        bias.push_back(static_cast<float>((j * 7) % 11) - 5);
  }

  bool transposeA() const { return flags & KILN_DNNL_MATMUL_TRANSPOSE_A; }
  bool transposeB() const { return flags & KILN_DNNL_MATMUL_TRANSPOSE_B; }

  /// C as the call must leave it, from the inputs as they are now.
  std::vector<float> expected() {
    Matrices result = c;
    for (int64_t p = 0; p < batch; ++p)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = (flags & KILN_DNNL_MATMUL_ACCUMULATE) ? c.at(p, i, j) : 0;
          for (int64_t l = 0; l < k; ++l)
            sum += double(transposeA() ? a.at(p, l, i) : a.at(p, i, l)) *
                   double(transposeB() ? b.at(p, j, l) : b.at(p, l, j));
          if (flags & KILN_DNNL_MATMUL_BIAS)
            sum += bias[j];
          result.at(p, i, j) = static_cast<float>(sum);
        }
    return result.data;
  }

  void call(void **slot) {
    std::vector<uint16_t> a16, b16;
    const void *pa = a.data.data(), *pb = b.data.data();
    if (flags & KILN_DNNL_MATMUL_BFLOAT16) {
      a16 = a.bf16();
      b16 = b.bf16();
      pa = a16.data();
      pb = b16.data();
    }
    int64_t strides[3] = {batch > 1 ? a.stride : 0, batch > 1 ? b.stride : 0,
                          batch > 1 ? c.stride : 0};
    kiln_dnnl_matmul(slot, flags, batch, m, n, k, pa, a.ld, strides[0], pb,
                     b.ld, strides[1], c.data.data(), c.ld, strides[2],
                     bias.empty() ? nullptr : bias.data());
  }
};

void expectProduct(int64_t flags, int64_t batch, int64_t m, int64_t n,
                   int64_t k, int64_t pad, int64_t batchPad) {
  Product product(flags, batch, m, n, k, pad, batchPad);
  std::vector<float> want = product.expected();
  void *slot = nullptr;
  // The first call creates the site's primitive, the second runs it from
  // the cache.
  for (int call = 0; call < 2; ++call) {
    Product fresh(flags, batch, m, n, k, pad, batchPad);
    fresh.call(&slot);
    EXPECT_EQ(fresh.c.data, want) << "flags " << flags << ", call " << call;
  }
  EXPECT_NE(slot, nullptr);
}

TEST(DnnlMatmul, EveryFlagCombination) {
  for (int64_t flags = 0; flags < 64; ++flags)
    expectProduct(flags, 1, 37, 29, 53, /*pad=*/0, /*batchPad=*/0);
}

/// One site called from two threads at once, each with its own C (the
/// site's primitive running concurrently, as DnnlConv.ConcurrentCalls):
/// products with and without a constant B, a bias, accumulation, and
/// bf16 operands; every call must give the expected values.
TEST(DnnlMatmul, ConcurrentCalls) {
  for (int64_t flags :
       {int64_t(0), int64_t(KILN_DNNL_MATMUL_CONSTANT_B),
        int64_t(KILN_DNNL_MATMUL_BIAS | KILN_DNNL_MATMUL_ACCUMULATE),
        int64_t(KILN_DNNL_MATMUL_CONSTANT_B | KILN_DNNL_MATMUL_BFLOAT16)}) {
    SCOPED_TRACE("flags " + std::to_string(flags));
    std::vector<float> want = Product(flags, 2, 64, 48, 80, 0, 0).expected();
    void *slot = nullptr;
    EXPECT_EQ(wrongConcurrentCalls([&] {
                Product product(flags, 2, 64, 48, 80, 0, 0);
                product.call(&slot);
                return product.c.data == want;
              }),
              0);
  }
}

/// Calls one site `steps` times with the same constant B and a new A each
/// time: B is packed on the first call and read packed by the later ones.
void expectConstantBAcrossCalls(int64_t flags, int64_t m, int64_t n,
                                int64_t k, unsigned steps) {
  Product product(flags, 1, m, n, k);
  void *slot = nullptr;
  for (unsigned step = 0; step < steps; ++step) {
    product.a.fillIntegers(10 + step);
    std::vector<float> want = product.expected();
    product.call(&slot);
    EXPECT_EQ(product.c.data, want) << "flags " << flags << ", step " << step;
  }
}

/// One row, as in an RNN step, where the compiler passes the flag for a
/// recurrence's weights.
TEST(DnnlMatmul, ConstantBAcrossCalls) {
  for (int64_t flags :
       {int64_t(KILN_DNNL_MATMUL_CONSTANT_B),
        int64_t(KILN_DNNL_MATMUL_CONSTANT_B | KILN_DNNL_MATMUL_TRANSPOSE_B),
        int64_t(KILN_DNNL_MATMUL_CONSTANT_B | KILN_DNNL_MATMUL_ACCUMULATE),
        int64_t(KILN_DNNL_MATMUL_CONSTANT_B | KILN_DNNL_MATMUL_BFLOAT16)})
    expectConstantBAcrossCalls(flags, 1, 96, 64, 4);
}

/// Many rows (a transformer's projection of a sequence, where the compiler
/// passes the flag for products of 2^24 multiply-adds and more): the packed
/// B serves every row block.
TEST(DnnlMatmul, ConstantBManyRows) {
  for (int64_t flags :
       {int64_t(KILN_DNNL_MATMUL_CONSTANT_B),
        int64_t(KILN_DNNL_MATMUL_CONSTANT_B | KILN_DNNL_MATMUL_ACCUMULATE),
        int64_t(KILN_DNNL_MATMUL_CONSTANT_B | KILN_DNNL_MATMUL_BIAS)})
    expectConstantBAcrossCalls(flags, 128, 80, 96, 3);
}

TEST(DnnlMatmul, PaddedRowsAndBatches) {
  for (int64_t flags : {int64_t(KILN_DNNL_MATMUL_TRANSPOSE_B),
                        int64_t(KILN_DNNL_MATMUL_TRANSPOSE_B |
                                KILN_DNNL_MATMUL_ACCUMULATE),
                        int64_t(KILN_DNNL_MATMUL_BFLOAT16 |
                                KILN_DNNL_MATMUL_TRANSPOSE_A),
                        int64_t(KILN_DNNL_MATMUL_BIAS |
                                KILN_DNNL_MATMUL_ACCUMULATE),
                        int64_t(KILN_DNNL_MATMUL_BIAS |
                                KILN_DNNL_MATMUL_CONSTANT_B)})
    expectProduct(flags, 3, 41, 24, 37, /*pad=*/5, /*batchPad=*/7);
}

/// A site whose first call fixed its primitive, reached with other views:
/// those calls run the GEMM, and the first views still run right after.
TEST(DnnlMatmul, SiteReachedWithOtherStrides) {
  for (int64_t flags : {int64_t(KILN_DNNL_MATMUL_TRANSPOSE_B),
                        int64_t(KILN_DNNL_MATMUL_TRANSPOSE_B |
                                KILN_DNNL_MATMUL_BIAS)}) {
    void *slot = nullptr;
    for (int64_t pad : {0, 3, 0, 11}) {
      Product product(flags, 1, 33, 20, 45, pad);
      std::vector<float> want = product.expected();
      product.call(&slot);
      EXPECT_EQ(product.c.data, want) << "flags " << flags << ", pad " << pad;
    }
  }
}

/// K = 0: C = A B is all zeros, C += A B leaves C as it was (plus the
/// bias where there is one).
TEST(DnnlMatmul, EmptySum) {
  for (int64_t flags : {int64_t(KILN_DNNL_MATMUL_TRANSPOSE_B),
                        int64_t(KILN_DNNL_MATMUL_TRANSPOSE_B |
                                KILN_DNNL_MATMUL_ACCUMULATE),
                        int64_t(KILN_DNNL_MATMUL_BIAS),
                        int64_t(KILN_DNNL_MATMUL_BIAS |
                                KILN_DNNL_MATMUL_ACCUMULATE)}) {
    Product product(flags, 1, 8, 6, 0);
    std::fill(product.c.data.begin(), product.c.data.end(), 5.0f);
    std::vector<float> want = product.expected();
    void *slot = nullptr;
    product.call(&slot);
    EXPECT_EQ(product.c.data, want) << "flags " << flags;
  }
}

} // namespace
