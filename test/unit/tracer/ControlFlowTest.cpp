//===- ControlFlowTest.cpp - cond, while_loop, fori_loop, scan ------------===//
//
// The control-flow primitives and closure conversion: tensors captured from
// enclosing scopes, up to three regions up, must arrive as explicit operands
// (or extra carried values) of every region op in between, and the programs
// must compute what the same C++ loops compute.
//
//===----------------------------------------------------------------------===//

#include "TracerTestSupport.h"

#include "kiln/IR/KilnOps.h"

#include <cmath>

using kiln::DType;
using kiln::Tensor;
using kiln::Tensors;
using namespace tracertest;

namespace {

/// The first op of type OpTy in `f` (outermost first).
template <typename OpTy> OpTy findOp(const kiln::TracedFunction &f) {
  OpTy found;
  f.module().walk<mlir::WalkOrder::PreOrder>([&](OpTy op) {
    if (!found)
      found = op;
  });
  return found;
}

TEST(Cond, PicksBranchOnTensorPredicate) {
  auto f = kiln::trace("cond", {kiln::f32({3}, "x")}, [](const Tensor &x) {
    return kiln::cond(
        kiln::sum(x) > 0,
        [](const Tensors &ops) { return ops[0] * 2; },
        [](const Tensors &ops) { return -ops[0]; }, {x})[0];
  });
  auto pos = run(f, {f32Data({3}, {1, 2, -0.5})});
  ASSERT_EQ(pos.size(), 1u);
  expectTensor(pos[0], DType::F32, {3}, {2, 4, -1});
  auto neg = run(f, {f32Data({3}, {-1, 2, -3})});
  ASSERT_EQ(neg.size(), 1u);
  expectTensor(neg[0], DType::F32, {3}, {1, -2, 3});
  EXPECT_EQ(countOps(f, "kiln.cond"), 1);
}

TEST(Cond, CapturesBecomeOperandsAndBranchesReturnSeveralValues) {
  auto f = kiln::trace(
      "condcap", {kiln::f32({2}, "x"), kiln::f32({2}, "y"), kiln::i1({}, "p")},
      [](const Tensor &x, const Tensor &y, const Tensor &p) {
        // No explicit operands: both branches close over x and y.
        Tensors r = kiln::cond(
            p, [&] { return std::make_tuple(x + y, x * y); },
            [&] { return Tensors{x - y, y}; });
        return Tensors{r[0], r[1]};
      });
  auto cond = findOp<mlir::kiln::CondOp>(f);
  ASSERT_TRUE(cond);
  // x and y are captured once each, shared by both regions.
  EXPECT_EQ(cond.getInputs().size(), 2u);
  EXPECT_EQ(cond.getThenRegion().front().getNumArguments(), 2u);
  EXPECT_EQ(cond.getElseRegion().front().getNumArguments(), 2u);
  auto t = run(f, {f32Data({2}, {1, 2}), f32Data({2}, {3, 5}), i1Data({}, {1})});
  ASSERT_EQ(t.size(), 2u);
  expectTensor(t[0], DType::F32, {2}, {4, 7});
  expectTensor(t[1], DType::F32, {2}, {3, 10});
  auto e = run(f, {f32Data({2}, {1, 2}), f32Data({2}, {3, 5}), i1Data({}, {0})});
  ASSERT_EQ(e.size(), 2u);
  expectTensor(e[0], DType::F32, {2}, {-2, -3});
  expectTensor(e[1], DType::F32, {2}, {3, 5});
}

TEST(WhileLoop, DataDependentTripCount) {
  // Doubles x until it reaches `limit`, counting the steps.
  auto f = kiln::trace(
      "doubling", {kiln::f32({}, "x"), kiln::f32({}, "limit")},
      [](const Tensor &x, const Tensor &limit) {
        Tensors r = kiln::while_loop(
            [&](const Tensors &s) { return s[1] < limit; },
            [](const Tensors &s) { return Tensors{s[0] + 1, s[1] * 2}; },
            {kiln::constant(0), x});
        return Tensors{r[0].named("steps"), r[1].named("value")};
      });
  for (double start : {1.0, 3.0, 100.0}) {
    int steps = 0;
    float value = static_cast<float>(start);
    while (value < 50.0f) {
      ++steps;
      value *= 2;
    }
    auto out = run(f, {f32Data({}, {start}), f32Data({}, {50})});
    ASSERT_EQ(out.size(), 2u);
    expectTensor(out[0], DType::I32, {}, {double(steps)});
    expectTensor(out[1], DType::F32, {}, {value});
  }
  EXPECT_EQ(f.outputSpecs()[0].name, "steps");
  EXPECT_EQ(f.outputSpecs()[1].name, "value");
  // `limit` is captured by the condition region: one extra carried value,
  // whose result is dropped.
  auto loop = findOp<mlir::kiln::WhileOp>(f);
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop.getInits().size(), 3u);
  EXPECT_EQ(loop.getBodyRegion().front().getNumArguments(), 3u);
}

TEST(WhileLoop, NewtonSqrtWithSingleValueCallables) {
  auto f = kiln::trace("newton", {kiln::f64({3}, "a")}, [](const Tensor &a) {
    return kiln::while_loop(
        [&](const Tensor &r) {
          return kiln::max(kiln::abs(r * r - a) / a) > 1e-12;
        },
        [&](const Tensor &r) { return (r + a / r) * 0.5; }, {a})[0];
  });
  std::vector<double> a = {2, 9, 1e6};
  std::vector<double> expected;
  for (double v : a)
    expected.push_back(std::sqrt(v));
  auto out = run(f, {f64Data({3}, a)});
  ASSERT_EQ(out.size(), 1u);
  expectTensor(out[0], DType::F64, {3}, expected, 1e-12);
}

TEST(ForiLoop, IndexStartsAtLo) {
  // acc = sum over i in [3, 8) of i * x, computed with the traced index.
  auto f = kiln::trace("fori", {kiln::i64({2}, "x")}, [](const Tensor &x) {
    return kiln::fori_loop(
        3, 8,
        [&](const Tensor &i, const Tensors &carry) {
          return Tensors{carry[0] + i * x, carry[1] + 1};
        },
        {kiln::zeros({2}, DType::I64), kiln::constant(0)});
  });
  auto loop = findOp<mlir::kiln::ForOp>(f);
  ASSERT_TRUE(loop);
  EXPECT_EQ(static_cast<int64_t>(loop.getTripCount()), 5);
  auto out = run(f, {i64Data({2}, {1, -2})});
  ASSERT_EQ(out.size(), 2u);
  std::vector<double> acc = {0, 0};
  for (int i = 3; i < 8; ++i) {
    acc[0] += i * 1;
    acc[1] += i * -2;
  }
  expectTensor(out[0], DType::I64, {2}, acc);
  expectTensor(out[1], DType::I32, {}, {5});
}

TEST(ForiLoop, EmptyRangeAndSingleCarry) {
  auto f = kiln::trace("fori0", {kiln::f32({2}, "x")}, [](const Tensor &x) {
    Tensor never = kiln::fori_loop(
        5, 2, [](const Tensor &i, const Tensor &c) { return c * 0; }, {x})[0];
    Tensor twice = kiln::fori_loop(
        0, 2, [](const Tensor &i, const Tensor &c) { return c + c; }, {x})[0];
    return Tensors{never, twice};
  });
  auto out = run(f, {f32Data({2}, {1.5, -3})});
  ASSERT_EQ(out.size(), 2u);
  expectTensor(out[0], DType::F32, {2}, {1.5, -3});
  expectTensor(out[1], DType::F32, {2}, {6, -12});
}

TEST(Scan, CumulativeSumStacksOutputs) {
  auto f = kiln::trace(
      "cumsum", {kiln::f32({4, 2}, "xs"), kiln::i32({4}, "ks")},
      [](const Tensor &xs, const Tensor &ks) {
        kiln::ScanResult r = kiln::scan(
            [](const Tensors &carry, const Tensors &x) {
              Tensor next = carry[0] + x[0];
              return std::make_pair(Tensors{next, carry[1] + x[1]},
                                    Tensors{next, x[1] * 10});
            },
            {kiln::zeros({2}), kiln::constant(0)}, {xs, ks});
        return Tensors{r.carry[0], r.carry[1], r.ys[0], r.ys[1]};
      });
  std::vector<double> xs = {1, 2, 3, 4, 5, 6, 7, 8}, ks = {1, -1, 4, 2};
  auto out = run(f, {f32Data({4, 2}, xs), i32Data({4}, ks)});
  ASSERT_EQ(out.size(), 4u);
  std::vector<double> running = {0, 0}, stacked, scaled;
  double kSum = 0;
  for (int t = 0; t < 4; ++t) {
    running[0] += xs[t * 2];
    running[1] += xs[t * 2 + 1];
    stacked.insert(stacked.end(), running.begin(), running.end());
    kSum += ks[t];
    scaled.push_back(ks[t] * 10);
  }
  expectTensor(out[0], DType::F32, {2}, running);
  expectTensor(out[1], DType::I32, {}, {kSum});
  expectTensor(out[2], DType::F32, {4, 2}, stacked);
  expectTensor(out[3], DType::I32, {4}, scaled);
  EXPECT_EQ(countOps(f, "kiln.for"), 1);
}

TEST(Scan, LengthWithoutXsAndZeroSteps) {
  auto f = kiln::trace("powers", {kiln::f32({}, "base")}, [](const Tensor &b) {
    // ys[t] = b^(t+1), carry = b^4; the step closes over b.
    kiln::ScanResult r = kiln::scan(
        [&](const Tensors &carry, const Tensors &) {
          Tensor next = carry[0] * b;
          return std::make_pair(Tensors{next}, Tensors{next});
        },
        {kiln::ones({})}, {}, 4);
    kiln::ScanResult none = kiln::scan(
        [](const Tensors &carry, const Tensors &x) {
          return std::make_pair(Tensors{carry[0] + kiln::sum(x[0])},
                                Tensors{x[0]});
        },
        {kiln::zeros({})}, {kiln::zeros({0, 3})});
    return Tensors{r.carry[0], r.ys[0], none.carry[0], none.ys[0]};
  });
  auto out = run(f, {f32Data({}, {3})});
  ASSERT_EQ(out.size(), 4u);
  expectTensor(out[0], DType::F32, {}, {81});
  expectTensor(out[1], DType::F32, {4}, {3, 9, 27, 81});
  expectTensor(out[2], DType::F32, {}, {0});
  expectTensor(out[3], DType::F32, {0, 3}, {});
}

TEST(Closure, CaptureFromTwoLevelsUpThreadsThroughTheLoop) {
  // w is used inside a cond that is inside a fori_loop body: the loop must
  // carry w (as a pass-through value) and the cond must take it as input.
  auto f = kiln::trace(
      "nested", {kiln::f32({2}, "x"), kiln::f32({2}, "w")},
      [](const Tensor &x, const Tensor &w) {
        return kiln::fori_loop(
            0, 4,
            [&](const Tensor &i, const Tensors &c) {
              Tensor even = kiln::cast(i, DType::I32) / 2 * 2 ==
                            kiln::cast(i, DType::I32);
              return kiln::cond(
                  even, [&] { return c[0] + w; }, [&] { return c[0] * w; });
            },
            {x})[0];
      });
  auto loop = findOp<mlir::kiln::ForOp>(f);
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop.getInits().size(), 2u); // x, then the captured w
  EXPECT_EQ(loop.getNumResults(), 2u);
  auto cond = findOp<mlir::kiln::CondOp>(f);
  ASSERT_TRUE(cond);
  EXPECT_EQ(cond.getInputs().size(), 2u); // c[0] and w
  std::vector<double> x = {1, -2}, w = {3, 0.5};
  auto out = run(f, {f32Data({2}, x), f32Data({2}, w)});
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> expected = x;
  for (int i = 0; i < 4; ++i)
    for (int k = 0; k < 2; ++k)
      expected[k] = i % 2 == 0 ? float(expected[k] + w[k])
                               : float(expected[k] * w[k]);
  expectTensor(out[0], DType::F32, {2}, expected);
}

TEST(Closure, WhileInsideCondCapturesOuterValue) {
  // The while body uses `step` from the top level, two regions up.
  auto f = kiln::trace(
      "whilecond",
      {kiln::i32({}, "n"), kiln::i32({}, "step"), kiln::i1({}, "count")},
      [](const Tensor &n, const Tensor &step, const Tensor &count) {
        return kiln::cond(
            count,
            [&] {
              return kiln::while_loop(
                  [&](const Tensors &s) { return s[0] < n; },
                  [&](const Tensors &s) {
                    return Tensors{s[0] + step, s[1] + 1};
                  },
                  {kiln::constant(0), kiln::constant(0)})[1];
            },
            [&] { return n * 0 - 1; })[0];
      });
  auto out = run(f, {i32Data({}, {10}), i32Data({}, {3}), i1Data({}, {1})});
  ASSERT_EQ(out.size(), 1u);
  int iterations = 0;
  for (int s = 0; s < 10; s += 3)
    ++iterations;
  expectTensor(out[0], DType::I32, {}, {double(iterations)});
  auto other = run(f, {i32Data({}, {10}), i32Data({}, {3}), i1Data({}, {0})});
  ASSERT_EQ(other.size(), 1u);
  expectTensor(other[0], DType::I32, {}, {-1});
  auto cond = findOp<mlir::kiln::CondOp>(f);
  ASSERT_TRUE(cond);
  // n and step enter the cond (the else branch uses n too).
  EXPECT_EQ(cond.getInputs().size(), 2u);
}

TEST(Closure, CondInsideWhileUsesCarriedAndOuterValues) {
  // Collatz steps: the cond inside the body sees the carried value and the
  // top-level constant `three`.
  auto f = kiln::trace(
      "collatz", {kiln::i64({}, "start"), kiln::i64({}, "three")},
      [](const Tensor &start, const Tensor &three) {
        Tensors r = kiln::while_loop(
            [](const Tensors &s) { return s[0] != 1; },
            [&](const Tensors &s) {
              Tensor v = s[0];
              Tensor isEven = v / 2 * 2 == v;
              Tensor next = kiln::cond(
                  isEven, [&] { return v / 2; },
                  [&] { return v * three + 1; })[0];
              return Tensors{next, s[1] + 1};
            },
            {start, kiln::constant(int64_t(0), DType::I64)});
        return r[1];
      });
  for (int64_t start : {1, 6, 27}) {
    int64_t v = start, steps = 0;
    while (v != 1) {
      v = v % 2 == 0 ? v / 2 : 3 * v + 1;
      ++steps;
    }
    auto out = run(f, {i64Data({}, {double(start)}), i64Data({}, {3})});
    ASSERT_EQ(out.size(), 1u);
    expectTensor(out[0], DType::I64, {}, {double(steps)});
  }
}

TEST(Closure, ThreeLevelsScanInsideForiInsideCond) {
  auto f = kiln::trace(
      "deep", {kiln::f32({3}, "v"), kiln::f32({}, "scale"), kiln::i1({}, "p")},
      [](const Tensor &v, const Tensor &scale, const Tensor &p) {
        return kiln::cond(
            p,
            [&] {
              return kiln::fori_loop(
                  0, 2,
                  [&](const Tensor &, const Tensors &acc) {
                    kiln::ScanResult r = kiln::scan(
                        [&](const Tensors &c, const Tensors &x) {
                          // scale comes from three regions up.
                          Tensor next = c[0] + x[0] * scale;
                          return std::make_pair(Tensors{next}, Tensors{});
                        },
                        {acc[0]}, {v});
                    return r.carry;
                  },
                  {kiln::zeros({})});
            },
            [&] { return Tensors{scale}; })[0];
      });
  auto out = run(f, {f32Data({3}, {1, 2, 3}), f32Data({}, {0.5}),
                     i1Data({}, {1})});
  ASSERT_EQ(out.size(), 1u);
  expectTensor(out[0], DType::F32, {}, {2 * (1 + 2 + 3) * 0.5});
  auto other = run(f, {f32Data({3}, {1, 2, 3}), f32Data({}, {0.5}),
                       i1Data({}, {0})});
  ASSERT_EQ(other.size(), 1u);
  expectTensor(other[0], DType::F32, {}, {0.5});
}

TEST(Closure, CppLoopsUnrollAtTraceTime) {
  auto f = kiln::trace("unrolled", {kiln::f32({2}, "x")}, [](Tensor x) {
    for (int layer = 0; layer < 3; ++layer)
      x = kiln::tanh(x * 0.5 + layer);
    return x;
  });
  EXPECT_EQ(countOps(f, "kiln.tanh"), 3);
  EXPECT_EQ(countOps(f, "kiln.for"), 0);
  auto out = run(f, {f32Data({2}, {1, -1})});
  ASSERT_EQ(out.size(), 1u);
  std::vector<double> expected;
  for (float v : {1.0f, -1.0f}) {
    for (int layer = 0; layer < 3; ++layer)
      v = static_cast<float>(
          std::tanh(double(static_cast<float>(v * 0.5f + layer))));
    expected.push_back(v);
  }
  expectTensor(out[0], DType::F32, {2}, expected);
}

} // namespace
