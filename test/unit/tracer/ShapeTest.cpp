//===- ShapeTest.cpp - Shapes, reductions, matmul, compositions -----------===//
//
// Shape manipulation, gathers, reductions, matrix products, the composite
// layers and constants, each checked against a reference computed with
// loops over row-major indices.
//
//===----------------------------------------------------------------------===//

#include "TracerTestSupport.h"

#include <cmath>
#include <numeric>

using kiln::DType;
using kiln::Tensor;
using kiln::Tensors;
using namespace tracertest;

namespace {

std::vector<double> range(int n, double start = 0) {
  std::vector<double> v(n);
  std::iota(v.begin(), v.end(), start);
  return v;
}

TEST(Shapes, ReshapeAndTranspose) {
  auto f = kiln::trace("rt", {kiln::f32({2, 3, 4}, "x")}, [](const Tensor &x) {
    return Tensors{kiln::reshape(x, {6, -1}), kiln::transpose(x),
                   kiln::transpose(x, {1, -1, 0}),
                   kiln::transpose(kiln::reshape(x, {4, 6}))};
  });
  std::vector<double> x = range(24);
  auto out = run(f, {f32Data({2, 3, 4}, x)});
  ASSERT_EQ(out.size(), 4u);
  expectTensor(out[0], DType::F32, {6, 4}, x);
  std::vector<double> reversed, permuted, matrixT;
  // reversed[k][j][i] = x[i][j][k]
  for (int k = 0; k < 4; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 2; ++i)
        reversed.push_back(x[(i * 3 + j) * 4 + k]);
  // permuted[j][k][i] = x[i][j][k] (perm {1, 2, 0})
  for (int j = 0; j < 3; ++j)
    for (int k = 0; k < 4; ++k)
      for (int i = 0; i < 2; ++i)
        permuted.push_back(x[(i * 3 + j) * 4 + k]);
  for (int c = 0; c < 6; ++c)
    for (int r = 0; r < 4; ++r)
      matrixT.push_back(x[r * 6 + c]);
  expectTensor(out[1], DType::F32, {4, 3, 2}, reversed);
  expectTensor(out[2], DType::F32, {3, 4, 2}, permuted);
  expectTensor(out[3], DType::F32, {6, 4}, matrixT);
}

TEST(Shapes, Slice) {
  auto f = kiln::trace("slice", {kiln::i32({4, 5})}, [](const Tensor &x) {
    return Tensors{kiln::slice(x, {1, 0}, {3, 5}, {1, 2}),
                   kiln::slice(x, {-2}, {4}),      // last two rows, all cols
                   kiln::slice(x, {0, 1}, {4, -1}, {3, 1})};
  });
  std::vector<double> x = range(20);
  auto out = run(f, {i32Data({4, 5}, x)});
  ASSERT_EQ(out.size(), 3u);
  std::vector<double> e0, e1, e2;
  for (int i = 1; i < 3; ++i)
    for (int j = 0; j < 5; j += 2)
      e0.push_back(x[idx2(i, j, 5)]);
  for (int i = 2; i < 4; ++i)
    for (int j = 0; j < 5; ++j)
      e1.push_back(x[idx2(i, j, 5)]);
  for (int i = 0; i < 4; i += 3)
    for (int j = 1; j < 4; ++j)
      e2.push_back(x[idx2(i, j, 5)]);
  expectTensor(out[0], DType::I32, {2, 3}, e0);
  expectTensor(out[1], DType::I32, {2, 5}, e1);
  expectTensor(out[2], DType::I32, {2, 3}, e2);
}

TEST(Shapes, ConcatPromotesAndJoins) {
  auto f = kiln::trace("concat", {kiln::f32({2, 2}), kiln::i32({2, 1})},
                       [](const Tensor &a, const Tensor &b) {
                         return Tensors{kiln::concat({a, b}, -1),
                                        kiln::concat({a, a, a}, 0)};
                       });
  std::vector<double> a = {1.5, 2.5, 3.5, 4.5}, b = {7, 8};
  auto out = run(f, {f32Data({2, 2}, a), i32Data({2, 1}, b)});
  ASSERT_EQ(out.size(), 2u);
  expectTensor(out[0], DType::F32, {2, 3}, {1.5, 2.5, 7, 3.5, 4.5, 8});
  std::vector<double> stacked;
  for (int k = 0; k < 3; ++k)
    stacked.insert(stacked.end(), a.begin(), a.end());
  expectTensor(out[1], DType::F32, {6, 2}, stacked);
}

TEST(Shapes, IotaAndGather) {
  auto f = kiln::trace(
      "gather", {kiln::f32({4, 2}, "table"), kiln::i32({2, 2}, "ids")},
      [](const Tensor &table, const Tensor &ids) {
        return Tensors{kiln::iota({2, 3}, 1), kiln::iota({3}, 0, DType::F32),
                       kiln::gather(table, ids),
                       kiln::gather(table, kiln::constant(int64_t(2), DType::I64))};
      });
  std::vector<double> table = {0, 1, 10, 11, 20, 21, 30, 31};
  std::vector<double> ids = {0, 3, 5, -1};
  auto out = run(f, {f32Data({4, 2}, table), i32Data({2, 2}, ids)});
  ASSERT_EQ(out.size(), 4u);
  expectTensor(out[0], DType::I64, {2, 3}, {0, 1, 2, 0, 1, 2});
  expectTensor(out[1], DType::F32, {3}, {0, 1, 2});
  std::vector<double> gathered;
  for (double id : ids) {
    int row = std::min(3, std::max(0, static_cast<int>(id))); // kiln clamps
    gathered.push_back(table[row * 2]);
    gathered.push_back(table[row * 2 + 1]);
  }
  expectTensor(out[2], DType::F32, {2, 2, 2}, gathered);
  expectTensor(out[3], DType::F32, {2}, {20, 21});
}

TEST(Shapes, ScatterAddClampsAndAccumulates) {
  auto f = kiln::trace(
      "scatter",
      {kiln::f32({4, 2}, "table"), kiln::i32({3}, "ids"),
       kiln::f32({3, 2}, "rows")},
      [](const Tensor &table, const Tensor &ids, const Tensor &rows) {
        return Tensors{kiln::scatter_add(table, ids, rows)};
      });
  // Ids 1, 9 (row 3) and -2 (row 0): the rows add into those rows.
  auto out = run(f, {f32Data({4, 2}, {0, 1, 10, 11, 20, 21, 30, 31}),
                     i32Data({3}, {1, 9, -2}),
                     f32Data({3, 2}, {100, 200, 300, 400, 500, 600})});
  ASSERT_EQ(out.size(), 1u);
  expectTensor(out[0], DType::F32, {4, 2},
               {500, 601, 110, 211, 20, 21, 330, 431});
}

TEST(Reductions, SumMaxMeanOverAxes) {
  auto f = kiln::trace("reduce", {kiln::f32({2, 3, 2})}, [](const Tensor &x) {
    return Tensors{kiln::sum(x),
                   kiln::sum(x, 1),
                   kiln::max(x, {0, -1}),
                   kiln::mean(x, -1, /*keepdims=*/true),
                   kiln::max(x, kiln::Axes::all(), /*keepdims=*/true),
                   kiln::sum(x, {})};
  });
  std::vector<double> x = {3, -1, 4, 1, -5, 9, 2, 6, -5, 3, 5, -8};
  auto out = run(f, {f32Data({2, 3, 2}, x)});
  ASSERT_EQ(out.size(), 6u);
  auto at = [&](int i, int j, int k) { return x[(i * 3 + j) * 2 + k]; };
  double total = 0, overall = -1e9;
  std::vector<double> sum1, max02, mean2;
  for (double v : x) {
    total += v;
    overall = std::max(overall, v);
  }
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 2; ++k) {
      double s = 0;
      for (int j = 0; j < 3; ++j)
        s += at(i, j, k);
      sum1.push_back(s);
    }
  for (int j = 0; j < 3; ++j) {
    double m = -1e9;
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 2; ++k)
        m = std::max(m, at(i, j, k));
    max02.push_back(m);
  }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      mean2.push_back((at(i, j, 0) + at(i, j, 1)) / 2);
  expectTensor(out[0], DType::F32, {}, {total});
  expectTensor(out[1], DType::F32, {2, 2}, sum1);
  expectTensor(out[2], DType::F32, {3}, max02);
  expectTensor(out[3], DType::F32, {2, 3, 1}, mean2);
  expectTensor(out[4], DType::F32, {1, 1, 1}, {overall});
  expectTensor(out[5], DType::F32, {2, 3, 2}, x);
}

TEST(Reductions, IntegerSumAndMax) {
  auto f = kiln::trace("ireduce", {kiln::i64({2, 3})}, [](const Tensor &x) {
    return Tensors{kiln::sum(x, 0), kiln::max(x, 1)};
  });
  auto out = run(f, {i64Data({2, 3}, {1, 7, -3, 4, 2, 9})});
  ASSERT_EQ(out.size(), 2u);
  expectTensor(out[0], DType::I64, {3}, {5, 9, 6});
  expectTensor(out[1], DType::I64, {2}, {7, 9});
}

TEST(Reductions, ArgMaxArgMinAndCumsumAlongAnAxis) {
  auto f = kiln::trace("scans", {kiln::f32({2, 3}), kiln::i32({2, 3})},
                       [](const Tensor &x, const Tensor &i) {
                         return Tensors{kiln::argmax(x, -1),
                                        kiln::argmin(i, 0, true),
                                        kiln::cumsum(x, 1),
                                        kiln::cumsum(i, -2, true, true)};
                       });
  auto out = run(f, {f32Data({2, 3}, {1, 5, 5, -2, -3, 0.5}),
                     i32Data({2, 3}, {4, -1, 2, 4, 7, -1})});
  ASSERT_EQ(out.size(), 4u);
  expectTensor(out[0], DType::I64, {2}, {1, 2});
  expectTensor(out[1], DType::I64, {3}, {1, 0, 1});
  expectTensor(out[2], DType::F32, {2, 3}, {1, 6, 11, -2, -5, -4.5});
  expectTensor(out[3], DType::I32, {2, 3}, {4, 7, -1, 0, 0, 0});
}

TEST(Reductions, ArgMaxRejectsBoolAndEmptyAxes) {
  std::string boolError = expectTraceError([] {
    kiln::trace("bool_argmax", {kiln::i1({3})},
                [](const Tensor &x) { return kiln::argmax(x, 0); });
  });
  EXPECT_NE(boolError.find("kiln::argmax is not defined for bool"),
            std::string::npos)
      << boolError;
  std::string emptyError = expectTraceError([] {
    kiln::trace("empty_argmin", {kiln::f32({2, 0})},
                [](const Tensor &x) { return kiln::argmin(x, 1); });
  });
  EXPECT_NE(emptyError.find("axis 1 has size 0"), std::string::npos)
      << emptyError;
  std::string axisError = expectTraceError([] {
    kiln::trace("bad_axis", {kiln::f32({2, 3})},
                [](const Tensor &x) { return kiln::cumsum(x, 2); });
  });
  EXPECT_NE(axisError.find("kiln::cumsum"), std::string::npos) << axisError;
}

/// Reference matrix product of row-major [m,k] and [k,n].
std::vector<double> matmulRef(const std::vector<double> &a,
                              const std::vector<double> &b, int m, int k,
                              int n) {
  std::vector<double> c(m * n, 0.0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p)
        c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}

TEST(Matmul, TwoDBatchedBroadcastAndVectors) {
  auto f = kiln::trace(
      "matmul",
      {kiln::f32({2, 3}, "a"), kiln::f32({3, 4}, "b"),
       kiln::f32({2, 2, 3}, "ba"), kiln::f32({3}, "v")},
      [](const Tensors &in) {
        const Tensor &a = in[0], &b = in[1], &ba = in[2], &v = in[3];
        return Tensors{kiln::matmul(a, b),
                       kiln::matmul(ba, kiln::transpose(ba, {0, 2, 1})),
                       kiln::matmul(ba, b),    // rank 3 x rank 2
                       kiln::matmul(a, v),     // matrix x vector
                       kiln::matmul(v, b),     // vector x matrix
                       kiln::matmul(kiln::cast(a, DType::I32),
                                    kiln::cast(b, DType::I32))};
      });
  std::vector<double> a = {1, 2, 3, 4, 5, 6};
  std::vector<double> b = range(12, -3);
  std::vector<double> ba = {1, 0, 2, -1, 3, 1, 2, 2, 0, 1, -2, 4};
  std::vector<double> v = {2, -1, 0.5};
  auto out = run(f, {f32Data({2, 3}, a), f32Data({3, 4}, b),
                     f32Data({2, 2, 3}, ba), f32Data({3}, v)});
  ASSERT_EQ(out.size(), 6u);
  expectTensor(out[0], DType::F32, {2, 4}, matmulRef(a, b, 2, 3, 4));
  std::vector<double> batched, broadcast;
  for (int bi = 0; bi < 2; ++bi) {
    std::vector<double> m(ba.begin() + bi * 6, ba.begin() + bi * 6 + 6);
    std::vector<double> mt = {m[0], m[3], m[1], m[4], m[2], m[5]};
    auto r = matmulRef(m, mt, 2, 3, 2);
    batched.insert(batched.end(), r.begin(), r.end());
    auto s = matmulRef(m, b, 2, 3, 4);
    broadcast.insert(broadcast.end(), s.begin(), s.end());
  }
  expectTensor(out[1], DType::F32, {2, 2, 2}, batched);
  expectTensor(out[2], DType::F32, {2, 2, 4}, broadcast);
  expectTensor(out[3], DType::F32, {2}, matmulRef(a, v, 2, 3, 1));
  expectTensor(out[4], DType::F32, {4}, matmulRef(v, b, 1, 3, 4));
  expectTensor(out[5], DType::I32, {2, 4}, matmulRef(a, b, 2, 3, 4));
}

TEST(Compositions, SoftmaxAndLogSoftmax) {
  auto f = kiln::trace("softmax", {kiln::f32({2, 3})}, [](const Tensor &x) {
    return Tensors{kiln::softmax(x), kiln::log_softmax(x, 0)};
  });
  std::vector<double> x = {1, 2, 3, -1, 0, 1000};
  auto out = run(f, {f32Data({2, 3}, x)});
  ASSERT_EQ(out.size(), 2u);
  std::vector<double> soft(6), logSoft(6);
  for (int i = 0; i < 2; ++i) {
    double m = -1e300, s = 0;
    for (int j = 0; j < 3; ++j)
      m = std::max(m, x[idx2(i, j, 3)]);
    for (int j = 0; j < 3; ++j)
      s += std::exp(x[idx2(i, j, 3)] - m);
    for (int j = 0; j < 3; ++j)
      soft[idx2(i, j, 3)] = std::exp(x[idx2(i, j, 3)] - m) / s;
  }
  for (int j = 0; j < 3; ++j) {
    double m = std::max(x[j], x[3 + j]);
    double s = std::exp(x[j] - m) + std::exp(x[3 + j] - m);
    for (int i = 0; i < 2; ++i)
      logSoft[idx2(i, j, 3)] = x[idx2(i, j, 3)] - m - std::log(s);
  }
  expectTensor(out[0], DType::F32, {2, 3}, soft, 1e-5);
  expectTensor(out[1], DType::F32, {2, 3}, logSoft, 1e-5);
}

TEST(Compositions, LayerNorm) {
  auto f = kiln::trace(
      "ln", {kiln::f32({2, 4}), kiln::f32({4}), kiln::f32({4})},
      [](const Tensor &x, const Tensor &g, const Tensor &b) {
        return kiln::layer_norm(x, g, b, 1e-5);
      });
  std::vector<double> x = {1, 2, 3, 4, -2, 0, 2, 10};
  std::vector<double> g = {1, 0.5, 2, -1}, b = {0, 1, -1, 0.25};
  auto out = run(f, {f32Data({2, 4}, x), f32Data({4}, g), f32Data({4}, b)});
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> expected;
  for (int i = 0; i < 2; ++i) {
    double mu = 0, var = 0;
    for (int j = 0; j < 4; ++j)
      mu += x[idx2(i, j, 4)] / 4;
    for (int j = 0; j < 4; ++j)
      var += (x[idx2(i, j, 4)] - mu) * (x[idx2(i, j, 4)] - mu) / 4;
    for (int j = 0; j < 4; ++j)
      expected.push_back((x[idx2(i, j, 4)] - mu) / std::sqrt(var + 1e-5) *
                             g[j] +
                         b[j]);
  }
  expectTensor(out[0], DType::F32, {2, 4}, expected, 1e-5);
}

TEST(Constants, HostDataOfEveryType) {
  auto f = kiln::trace("consts", {kiln::f32({})}, [](const Tensor &x) {
    return Tensors{
        kiln::constant(std::vector<float>{1.5f, -2, 3, 4}, {2, 2}) * x,
        kiln::constant(std::vector<double>{0.1, 0.2}),
        kiln::constant(std::vector<int32_t>{1, -2, 3}, {3, 1}),
        kiln::constant(std::vector<int64_t>{10000000000LL}, {1}),
        kiln::constant(std::vector<bool>{true, false, true}),
        kiln::full({2}, 7, DType::I64),
        kiln::zeros({2, 1}),
        kiln::ones({3}, DType::F64)};
  });
  auto out = run(f, {f32Data({}, {2})});
  ASSERT_EQ(out.size(), 8u);
  expectTensor(out[0], DType::F32, {2, 2}, {3, -4, 6, 8});
  expectTensor(out[1], DType::F64, {2}, {0.1, 0.2}, 0);
  expectTensor(out[2], DType::I32, {3, 1}, {1, -2, 3});
  expectTensor(out[3], DType::I64, {1}, {10000000000.0});
  expectTensor(out[4], DType::I1, {3}, {1, 0, 1});
  expectTensor(out[5], DType::I64, {2}, {7, 7});
  expectTensor(out[6], DType::F32, {2, 1}, {0, 0});
  expectTensor(out[7], DType::F64, {3}, {1, 1, 1});
}

} // namespace
