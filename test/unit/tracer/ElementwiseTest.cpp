//===- ElementwiseTest.cpp - Arithmetic, math, comparisons, promotion -----===//
//
// Elementwise ops, the operators, numpy broadcasting and the dtype promotion
// rules. Expected values are computed here with plain C++ loops in the
// element type (float arithmetic for f32), which is what the reference
// evaluator's rounding reproduces.
//
//===----------------------------------------------------------------------===//

#include "TracerTestSupport.h"

#include <cmath>

using kiln::DType;
using kiln::Tensor;
using kiln::Tensors;
using namespace tracertest;

namespace {

const std::vector<double> xs = {1.5, -2.0, 3.25, 0.5, -0.75, 4.0};
const std::vector<double> ys = {2.0, 0.5, -1.5, 4.0, 3.0, -2.5};

/// Applies `fn` to float-rounded pairs: the expected f32 results.
template <typename Fn>
std::vector<double> zipF32(const std::vector<double> &a,
                           const std::vector<double> &b, Fn fn) {
  std::vector<double> out;
  for (size_t i = 0; i < a.size(); ++i)
    out.push_back(static_cast<float>(
        fn(static_cast<float>(a[i]), static_cast<float>(b[i]))));
  return out;
}

template <typename Fn>
std::vector<double> mapF32(const std::vector<double> &a, Fn fn) {
  std::vector<double> out;
  for (double v : a)
    out.push_back(static_cast<float>(fn(static_cast<float>(v))));
  return out;
}

TEST(Elementwise, BinaryOperatorsAndFunctions) {
  auto f = kiln::trace(
      "binary", {kiln::f32({2, 3}, "x"), kiln::f32({2, 3}, "y")},
      [](const Tensor &x, const Tensor &y) {
        return Tensors{x + y,
                       x - y,
                       x * y,
                       x / y,
                       kiln::maximum(x, y),
                       kiln::minimum(x, y),
                       kiln::add(x, y),
                       kiln::sub(x, y),
                       kiln::mul(x, y),
                       kiln::div(x, y),
                       kiln::pow(kiln::abs(x), y)};
      });
  auto out = run(f, {f32Data({2, 3}, xs), f32Data({2, 3}, ys)});
  ASSERT_EQ(out.size(), 11u);
  auto add = zipF32(xs, ys, [](float a, float b) { return a + b; });
  auto sub = zipF32(xs, ys, [](float a, float b) { return a - b; });
  auto mul = zipF32(xs, ys, [](float a, float b) { return a * b; });
  auto div = zipF32(xs, ys, [](float a, float b) { return a / b; });
  expectTensor(out[0], DType::F32, {2, 3}, add);
  expectTensor(out[1], DType::F32, {2, 3}, sub);
  expectTensor(out[2], DType::F32, {2, 3}, mul);
  expectTensor(out[3], DType::F32, {2, 3}, div);
  expectTensor(out[4], DType::F32, {2, 3},
               zipF32(xs, ys, [](float a, float b) { return a > b ? a : b; }));
  expectTensor(out[5], DType::F32, {2, 3},
               zipF32(xs, ys, [](float a, float b) { return a < b ? a : b; }));
  expectTensor(out[6], DType::F32, {2, 3}, add);
  expectTensor(out[7], DType::F32, {2, 3}, sub);
  expectTensor(out[8], DType::F32, {2, 3}, mul);
  expectTensor(out[9], DType::F32, {2, 3}, div);
  expectTensor(out[10], DType::F32, {2, 3},
               zipF32(xs, ys, [](float a, float b) {
                 return std::pow(static_cast<double>(std::fabs(a)),
                                 static_cast<double>(b));
               }));
  // Same shapes and dtypes: no broadcast or cast is needed.
  EXPECT_EQ(countOps(f, "kiln.broadcast_in_dim"), 0);
  EXPECT_EQ(countOps(f, "kiln.cast"), 0);
}

TEST(Elementwise, ScalarOperandsOnBothSides) {
  auto f = kiln::trace("scalars", {kiln::f32({6}, "x")}, [](const Tensor &x) {
    return Tensors{x + 2, 2 - x, x * 0.5, 3.0f / x, -x, 1 + x * 2 - 0.25};
  });
  auto out = run(f, {f32Data({6}, xs)});
  ASSERT_EQ(out.size(), 6u);
  expectTensor(out[0], DType::F32, {6}, mapF32(xs, [](float a) { return a + 2; }));
  expectTensor(out[1], DType::F32, {6}, mapF32(xs, [](float a) { return 2 - a; }));
  expectTensor(out[2], DType::F32, {6},
               mapF32(xs, [](float a) { return a * 0.5f; }));
  expectTensor(out[3], DType::F32, {6},
               mapF32(xs, [](float a) { return 3.0f / a; }));
  expectTensor(out[4], DType::F32, {6}, mapF32(xs, [](float a) { return -a; }));
  expectTensor(out[5], DType::F32, {6}, mapF32(xs, [](float a) {
                 return static_cast<float>(1 + a * 2) - 0.25f;
               }));
  // A scalar becomes a splat constant of the full shape, never a broadcast.
  EXPECT_EQ(countOps(f, "kiln.broadcast_in_dim"), 0);
}

TEST(Elementwise, UnaryMath) {
  const std::vector<double> pos = {0.25, 1.0, 2.5, 4.0};
  const std::vector<double> mixed = {-1.5, 0.0, 0.75, 2.0};
  auto f = kiln::trace(
      "unary", {kiln::f32({4}, "p"), kiln::f32({4}, "m")},
      [](const Tensor &p, const Tensor &m) {
        return Tensors{kiln::neg(m),   kiln::abs(m),     kiln::relu(m),
                       kiln::exp(m),   kiln::log(p),     kiln::sqrt(p),
                       kiln::rsqrt(p), kiln::tanh(m),    kiln::sigmoid(m),
                       kiln::sin(m),   kiln::cos(m)};
      });
  auto out = run(f, {f32Data({4}, pos), f32Data({4}, mixed)});
  ASSERT_EQ(out.size(), 11u);
  expectTensor(out[0], DType::F32, {4}, mapF32(mixed, [](float a) { return -a; }));
  expectTensor(out[1], DType::F32, {4},
               mapF32(mixed, [](float a) { return std::fabs(a); }));
  expectTensor(out[2], DType::F32, {4},
               mapF32(mixed, [](float a) { return a > 0 ? a : 0.0f; }));
  expectTensor(out[3], DType::F32, {4},
               mapF32(mixed, [](float a) { return std::exp(double(a)); }));
  expectTensor(out[4], DType::F32, {4},
               mapF32(pos, [](float a) { return std::log(double(a)); }));
  expectTensor(out[5], DType::F32, {4},
               mapF32(pos, [](float a) { return std::sqrt(double(a)); }));
  expectTensor(out[6], DType::F32, {4},
               mapF32(pos, [](float a) { return 1.0 / std::sqrt(double(a)); }));
  expectTensor(out[7], DType::F32, {4},
               mapF32(mixed, [](float a) { return std::tanh(double(a)); }));
  expectTensor(out[8], DType::F32, {4}, mapF32(mixed, [](float a) {
                 return 1.0 / (1.0 + std::exp(-double(a)));
               }));
  expectTensor(out[9], DType::F32, {4},
               mapF32(mixed, [](float a) { return std::sin(double(a)); }));
  expectTensor(out[10], DType::F32, {4},
               mapF32(mixed, [](float a) { return std::cos(double(a)); }));
}

TEST(Elementwise, IntegerArithmeticTruncates) {
  const std::vector<double> a = {7, -7, 9, -3};
  const std::vector<double> b = {2, 2, -4, 5};
  auto f = kiln::trace("ints", {kiln::i32({4}), kiln::i32({4})},
                       [](const Tensor &x, const Tensor &y) {
                         return Tensors{x / y, x * y - 1, kiln::abs(x),
                                        kiln::relu(x), -x};
                       });
  auto out = run(f, {i32Data({4}, a), i32Data({4}, b)});
  ASSERT_EQ(out.size(), 5u);
  std::vector<double> quotient, product, absolute, rectified, negated;
  for (size_t i = 0; i < a.size(); ++i) {
    int32_t p = static_cast<int32_t>(a[i]), q = static_cast<int32_t>(b[i]);
    quotient.push_back(p / q); // C++ truncates toward zero, like kiln.div
    product.push_back(p * q - 1);
    absolute.push_back(p < 0 ? -p : p);
    rectified.push_back(p > 0 ? p : 0);
    negated.push_back(-p);
  }
  expectTensor(out[0], DType::I32, {4}, quotient);
  expectTensor(out[1], DType::I32, {4}, product);
  expectTensor(out[2], DType::I32, {4}, absolute);
  expectTensor(out[3], DType::I32, {4}, rectified);
  expectTensor(out[4], DType::I32, {4}, negated);
}

TEST(Broadcasting, NumpyRules) {
  // [2,3] + [3], [2,1] * [1,3], [3] - [], [4,1,3] + [2,1].
  auto f = kiln::trace(
      "bcast",
      {kiln::f32({2, 3}), kiln::f32({3}), kiln::f32({2, 1}),
       kiln::f32({1, 3})},
      [](const Tensors &in) {
        Tensor s = kiln::constant(10.0f);
        Tensor big = kiln::iota({4, 1, 3}, 2, DType::F32);
        return Tensors{in[0] + in[1], in[2] * in[3], in[1] - s, big + in[2]};
      });
  const std::vector<double> a = {1, 2, 3, 4, 5, 6}, b = {10, 20, 30},
                            c = {2, 3}, d = {1, -1, 0.5};
  auto out = run(f, {f32Data({2, 3}, a), f32Data({3}, b), f32Data({2, 1}, c),
                     f32Data({1, 3}, d)});
  ASSERT_EQ(out.size(), 4u);
  std::vector<double> e0, e1, e2, e3;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      e0.push_back(a[idx2(i, j, 3)] + b[j]);
      e1.push_back(c[i] * d[j]);
    }
  for (int j = 0; j < 3; ++j)
    e2.push_back(b[j] - 10);
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        e3.push_back(j + c[i]);
  expectTensor(out[0], DType::F32, {2, 3}, e0);
  expectTensor(out[1], DType::F32, {2, 3}, e1);
  expectTensor(out[2], DType::F32, {3}, e2);
  expectTensor(out[3], DType::F32, {4, 2, 3}, e3);
}

TEST(Broadcasting, BroadcastTo) {
  auto f = kiln::trace("bto", {kiln::i32({3, 1})}, [](const Tensor &x) {
    return kiln::broadcast_to(x, {2, 3, 4});
  });
  auto out = run(f, {i32Data({3, 1}, {5, 6, 7})});
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> expected;
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j)
        expected.push_back(5 + i);
  expectTensor(out[0], DType::I32, {2, 3, 4}, expected);
}

TEST(Promotion, TensorTensorLattice) {
  // bool < i32 < i64 < f32 < f64.
  auto f = kiln::trace(
      "lattice",
      {kiln::i32({2}), kiln::f32({2}), kiln::i64({2}), kiln::f64({2}),
       kiln::i1({2})},
      [](const Tensors &in) {
        const Tensor &i32 = in[0], &f32 = in[1], &i64 = in[2], &f64 = in[3],
                     &b = in[4];
        return Tensors{i32 + f32, i32 + i64, f32 + f64,
                       i64 * f32, b + i32,   b * f64};
      });
  auto out = run(f, {i32Data({2}, {3, -4}), f32Data({2}, {0.5, 0.25}),
                     i64Data({2}, {10000000000.0, 7}),
                     f64Data({2}, {0.1, 0.2}), i1Data({2}, {1, 0})});
  ASSERT_EQ(out.size(), 6u);
  expectTensor(out[0], DType::F32, {2}, {3.5, -3.75});
  expectTensor(out[1], DType::I64, {2}, {10000000003.0, 3});
  expectTensor(out[2], DType::F64, {2},
               {double(0.5f) + 0.1, double(0.25f) + 0.2}, 1e-15);
  expectTensor(out[3], DType::F32, {2},
               {double(float(10000000000.0) * 0.5f), 7 * 0.25});
  expectTensor(out[4], DType::I32, {2}, {4, -4});
  expectTensor(out[5], DType::F64, {2}, {0.1, 0.0}, 1e-15);
}

TEST(Promotion, HalfPrecision) {
  // f16 and bf16 sit side by side between i64 and f32; together they give
  // f32. Each op rounds once to the half type.
  auto f = kiln::trace(
      "half", {kiln::f16({2}), kiln::bf16({2}), kiln::f32({2}), kiln::i32({2})},
      [](const Tensors &in) {
        const Tensor &h = in[0], &b = in[1], &f = in[2], &i = in[3];
        return Tensors{h + h, h + b, h + f, h + i, b * 3.0, h / 3};
      });
  auto out = run(f, {{DType::F16, {2}, {1.5, -0.1}},
                     {DType::BF16, {2}, {2.0, 0.3}}, f32Data({2}, {0.25, 1}),
                     i32Data({2}, {2, -3})});
  ASSERT_EQ(out.size(), 6u);
  // -0.1 is -0.0999755859375 in f16, 0.3 is 0.30078125 in bf16.
  expectTensor(out[0], DType::F16, {2}, {3.0, -0.199951171875}, 0);
  expectTensor(out[1], DType::F32, {2}, {3.5, 0.2008056640625}, 0);
  expectTensor(out[2], DType::F32, {2}, {1.75, 0.9000244140625}, 0);
  expectTensor(out[3], DType::F16, {2}, {3.5, -3.099609375}, 0);
  expectTensor(out[4], DType::BF16, {2}, {6.0, 0.90234375}, 0);
  // 1.5 / 3 = 0.5; -0.0999755859375 / 3 rounds to -0.033325195 in f16.
  expectTensor(out[5], DType::F16, {2}, {0.5, -0.033325195}, 1e-7);
}

TEST(Promotion, WeakScalars) {
  auto f = kiln::trace(
      "weak", {kiln::i32({3}), kiln::f64({3}), kiln::i1({3}), kiln::i64({3})},
      [](const Tensors &in) {
        const Tensor &i = in[0], &d = in[1], &b = in[2], &l = in[3];
        return Tensors{
            i * 2,      // int scalar adopts i32
            i * 0.5,    // float scalar with an int tensor: f32
            d * 2.5f,   // float scalar adopts f64
            d + 1,      // int scalar adopts f64
            b + 1,      // int scalar with bool: i32
            b == true,  // bool scalar adopts i1
            l - 3,      // adopts i64
            kiln::where(b, 1, 0), // scalars only: i32
            kiln::where(b, 1.5, 0)}; // float scalar: f32
      });
  auto out = run(f, {i32Data({3}, {1, 3, -5}), f64Data({3}, {0.1, 1.0, -2.0}),
                     i1Data({3}, {1, 0, 1}), i64Data({3}, {5, 6, 7})});
  ASSERT_EQ(out.size(), 9u);
  expectTensor(out[0], DType::I32, {3}, {2, 6, -10});
  expectTensor(out[1], DType::F32, {3}, {0.5, 1.5, -2.5});
  expectTensor(out[2], DType::F64, {3}, {0.1 * 2.5, 2.5, -5.0}, 1e-15);
  expectTensor(out[3], DType::F64, {3}, {1.1, 2.0, -1.0}, 1e-15);
  expectTensor(out[4], DType::I32, {3}, {2, 1, 2});
  expectTensor(out[5], DType::I1, {3}, {1, 0, 1});
  expectTensor(out[6], DType::I64, {3}, {2, 3, 4});
  expectTensor(out[7], DType::I32, {3}, {1, 0, 1});
  expectTensor(out[8], DType::F32, {3}, {1.5, 0, 1.5});
}

TEST(Promotion, FloatOnlyOpsPromoteToF32) {
  auto f = kiln::trace("floatonly", {kiln::i32({3}), kiln::i1({3})},
                       [](const Tensor &i, const Tensor &b) {
                         return Tensors{kiln::sqrt(i), kiln::exp(b),
                                        kiln::pow(i, 2), kiln::mean(i)};
                       });
  auto out = run(f, {i32Data({3}, {4, 9, 2}), i1Data({3}, {1, 0, 1})});
  ASSERT_EQ(out.size(), 4u);
  expectTensor(out[0], DType::F32, {3}, {2, 3, double(std::sqrt(2.0f))});
  expectTensor(out[1], DType::F32, {3},
               {double(float(std::exp(1.0))), 1, double(float(std::exp(1.0)))});
  expectTensor(out[2], DType::F32, {3}, {16, 81, 4});
  expectTensor(out[3], DType::F32, {}, {double(15.0f / 3.0f)});
}

TEST(Promotion, ScalarConstants) {
  auto f = kiln::trace("consts", {kiln::f32({1})}, [](const Tensor &x) {
    // Standalone constants are typed by their C++ type; bare numbers in
    // expressions are weak.
    return Tensors{kiln::constant(2.5f),
                   kiln::constant(2.5),
                   kiln::constant(3),
                   kiln::constant(int64_t(3)),
                   kiln::constant(true),
                   kiln::constant(7, DType::I64),
                   kiln::constant(2.9, DType::I32),
                   x * kiln::constant(0.5),
                   x * 0.5};
  });
  auto out = run(f, {f32Data({1}, {3})});
  ASSERT_EQ(out.size(), 9u);
  expectTensor(out[0], DType::F32, {}, {2.5});
  expectTensor(out[1], DType::F64, {}, {2.5});
  expectTensor(out[2], DType::I32, {}, {3});
  expectTensor(out[3], DType::I64, {}, {3});
  expectTensor(out[4], DType::I1, {}, {1});
  expectTensor(out[5], DType::I64, {}, {7});
  expectTensor(out[6], DType::I32, {}, {2}); // truncates like kiln.cast
  expectTensor(out[7], DType::F64, {1}, {1.5});
  expectTensor(out[8], DType::F32, {1}, {1.5});
}

TEST(Comparisons, AllDirectionsAndMixedDtypes) {
  const std::vector<double> a = {1, 2, 3, 4}, b = {2, 2, 2, 2};
  auto f = kiln::trace(
      "cmp", {kiln::f32({4}), kiln::f32({4}), kiln::i32({4})},
      [](const Tensor &x, const Tensor &y, const Tensor &i) {
        return Tensors{x < y,  x <= y, x > y,  x >= y, x == y, x != y,
                       x > 2,  3 <= x, i == x, kiln::less(x, y),
                       kiln::greater_equal(i, 3), kiln::not_equal(x, 4)};
      });
  auto out = run(f, {f32Data({4}, a), f32Data({4}, b), i32Data({4}, {1, 0, 3, 5})});
  ASSERT_EQ(out.size(), 12u);
  expectTensor(out[0], DType::I1, {4}, {1, 0, 0, 0});
  expectTensor(out[1], DType::I1, {4}, {1, 1, 0, 0});
  expectTensor(out[2], DType::I1, {4}, {0, 0, 1, 1});
  expectTensor(out[3], DType::I1, {4}, {0, 1, 1, 1});
  expectTensor(out[4], DType::I1, {4}, {0, 1, 0, 0});
  expectTensor(out[5], DType::I1, {4}, {1, 0, 1, 1});
  expectTensor(out[6], DType::I1, {4}, {0, 0, 1, 1});
  expectTensor(out[7], DType::I1, {4}, {0, 0, 1, 1});
  // i32 == f32 compares in f32.
  expectTensor(out[8], DType::I1, {4}, {1, 0, 1, 0});
  expectTensor(out[9], DType::I1, {4}, {1, 0, 0, 0});
  expectTensor(out[10], DType::I1, {4}, {0, 0, 1, 1});
  expectTensor(out[11], DType::I1, {4}, {1, 1, 1, 0});
}

TEST(Comparisons, LogicalOps) {
  auto f = kiln::trace("logic", {kiln::i1({2, 2}), kiln::i1({2})},
                       [](const Tensor &a, const Tensor &b) {
                         return Tensors{a & b, a | b, ~a,
                                        kiln::logical_and(a, true),
                                        kiln::logical_or(b, false),
                                        kiln::logical_not(b)};
                       });
  const std::vector<double> a = {1, 0, 1, 1}, b = {0, 1};
  auto out = run(f, {i1Data({2, 2}, a), i1Data({2}, b)});
  ASSERT_EQ(out.size(), 6u);
  std::vector<double> andV, orV, notA;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      bool p = a[idx2(i, j, 2)] != 0, q = b[j] != 0;
      andV.push_back(p && q);
      orV.push_back(p || q);
      notA.push_back(!p);
    }
  expectTensor(out[0], DType::I1, {2, 2}, andV);
  expectTensor(out[1], DType::I1, {2, 2}, orV);
  expectTensor(out[2], DType::I1, {2, 2}, notA);
  expectTensor(out[3], DType::I1, {2, 2}, a);
  expectTensor(out[4], DType::I1, {2}, b);
  expectTensor(out[5], DType::I1, {2}, {1, 0});
}

TEST(Select, WhereBroadcastsAndPromotes) {
  auto f = kiln::trace(
      "where", {kiln::f32({2, 3}), kiln::f32({3}), kiln::i1({})},
      [](const Tensor &x, const Tensor &row, const Tensor &flag) {
        return Tensors{kiln::where(x > 0, x, 0.0),     // relu by hand
                       kiln::where(x > row, row, x),   // [2,3] vs [3]
                       kiln::where(flag, x, -x),       // rank-0 predicate
                       kiln::where(row > 0, 1, 2.5)};  // scalars: f32
      });
  const std::vector<double> x = {1, -2, 3, -4, 5, -6}, row = {0.5, -1, 10};
  auto out = run(f, {f32Data({2, 3}, x), f32Data({3}, row), i1Data({}, {0})});
  ASSERT_EQ(out.size(), 4u);
  std::vector<double> e0, e1, e2;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      double v = x[idx2(i, j, 3)];
      e0.push_back(v > 0 ? v : 0);
      e1.push_back(v > row[j] ? row[j] : v);
      e2.push_back(-v);
    }
  expectTensor(out[0], DType::F32, {2, 3}, e0);
  expectTensor(out[1], DType::F32, {2, 3}, e1);
  expectTensor(out[2], DType::F32, {2, 3}, e2);
  expectTensor(out[3], DType::F32, {3}, {1, 2.5, 1});
}

TEST(Casts, Conversions) {
  auto f = kiln::trace("casts", {kiln::f32({4}), kiln::i32({4})},
                       [](const Tensor &x, const Tensor &i) {
                         return Tensors{kiln::cast(x, DType::I32),
                                        kiln::cast(i, DType::F64),
                                        kiln::cast(x, DType::I1),
                                        kiln::cast(kiln::cast(x, DType::I1),
                                                   DType::F32),
                                        kiln::cast(x, DType::F32)};
                       });
  auto out = run(f, {f32Data({4}, {-2.75, 0, 0.5, 3.9}),
                     i32Data({4}, {-1, 0, 7, 100})});
  ASSERT_EQ(out.size(), 5u);
  expectTensor(out[0], DType::I32, {4}, {-2, 0, 0, 3});
  expectTensor(out[1], DType::F64, {4}, {-1, 0, 7, 100});
  expectTensor(out[2], DType::I1, {4}, {1, 0, 1, 1});
  expectTensor(out[3], DType::F32, {4}, {1, 0, 1, 1});
  expectTensor(out[4], DType::F32, {4}, {-2.75, 0, 0.5, double(3.9f)});
  // Casting to the same dtype records nothing.
  EXPECT_EQ(countOps(f, "kiln.cast"), 5);
}

} // namespace
