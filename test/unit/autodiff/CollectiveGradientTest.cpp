//===- CollectiveGradientTest.cpp - VJPs of collectives, on simulated ranks ===//
//
// An SPMD function f runs on N ranks; its derived VJP, run by
// kiln::evaluateSpmd with a random cotangent w_r per rank, must give each
// rank the gradient of F = sum over ranks r of <w_r, f(x_r)> with respect to
// its own x_r. The test compares it with central finite differences of F,
// perturbing one element of one rank's input at a time and running all
// ranks again. Its derived JVP, with a random tangent per rank, is compared
// with central differences along the tangents and with the VJP
// (sum over ranks of <J t, w> = <t, J^T w>). Its batched form (vmap over
// 3 lanes of the argument) must give, in every lane, what the function
// gives on that lane's inputs, each rank exchanging every lane at once.
// Everything is f64, so the differences are accurate to ~1e-9.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/ReferenceEvaluator.h"
#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"
#include "kiln/Passes/Autodiff.h"
#include "kiln/Passes/Batching.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace mlir;
using ::kiln::HostTensor;

namespace {

class CollectiveGradientTest : public ::testing::Test {
protected:
  CollectiveGradientTest() {
    context.loadDialect<mlir::kiln::KilnDialect, func::FuncDialect>();
  }

  HostTensor random(RankedTensorType type, double low, double high) {
    std::uniform_real_distribution<double> dist(low, high);
    std::vector<double> values(type.getNumElements());
    for (double &v : values)
      v = dist(rng);
    return HostTensor::fromFloats(type.getElementType(), type.getShape(),
                                  values);
  }

  /// F: the sum over ranks of <w_r, f(x_r)>.
  double objective(func::FuncOp f,
                   const std::vector<std::vector<HostTensor>> &x,
                   const std::vector<std::vector<HostTensor>> &w) {
    auto results = ::kiln::evaluateSpmd(f, x);
    if (!results) {
      ADD_FAILURE() << llvm::toString(results.takeError());
      return 0;
    }
    double total = 0;
    for (size_t r = 0; r < x.size(); ++r)
      for (size_t k = 0; k < w[r].size(); ++k)
        for (size_t n = 0; n < w[r][k].f.size(); ++n)
          total += w[r][k].f[n] * (*results)[r][k].f[n];
    return total;
  }

  /// Checks the VJP of @f in `source` (one f64 argument) on `ranks` ranks.
  /// `low`/`high` bound the random inputs (away from ties for max/min).
  void check(const std::string &source, unsigned ranks, double low = -2.0,
             double high = 2.0) {
    ParserConfig config(&context);
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, config, "collectives.mlir");
    ASSERT_TRUE(module);
    auto f = module->lookupSymbol<func::FuncOp>("f");
    ASSERT_TRUE(f);
    FailureOr<func::FuncOp> grad = mlir::kiln::buildGradient(f);
    ASSERT_TRUE(succeeded(grad));

    auto argType = cast<RankedTensorType>(f.getArgumentTypes()[0]);
    std::vector<std::vector<HostTensor>> x, w;
    for (unsigned r = 0; r < ranks; ++r) {
      x.push_back({random(argType, low, high)});
      w.emplace_back();
      for (Type type : f.getResultTypes())
        w.back().push_back(random(cast<RankedTensorType>(type), -1, 1));
    }
    std::vector<std::vector<HostTensor>> gradInputs;
    for (unsigned r = 0; r < ranks; ++r) {
      gradInputs.push_back(x[r]);
      for (const HostTensor &cotangent : w[r])
        gradInputs.back().push_back(cotangent);
    }
    auto derived = ::kiln::evaluateSpmd(*grad, gradInputs);
    ASSERT_TRUE(bool(derived)) << llvm::toString(derived.takeError());

    const double step = 1e-6;
    for (unsigned r = 0; r < ranks; ++r) {
      const HostTensor &dx = (*derived)[r].back();
      ASSERT_EQ(dx.shape, x[r][0].shape);
      for (size_t n = 0; n < dx.f.size(); ++n) {
        auto plus = x, minus = x;
        plus[r][0].f[n] += step;
        minus[r][0].f[n] -= step;
        double expected =
            (objective(f, plus, w) - objective(f, minus, w)) / (2 * step);
        EXPECT_NEAR(dx.f[n], expected, 1e-6 * (1 + std::abs(expected)))
            << "rank " << r << ", element " << n;
      }
    }
    checkJvp(f, x, w, *derived);
    checkVmap(f, ranks, low, high);
  }

  /// vmap of @f over `kLanes` lanes of its argument, run on `ranks` ranks,
  /// against @f run on each lane's inputs; equal to the last bit, since
  /// each lane's elements are combined in the same order.
  void checkVmap(func::FuncOp f, unsigned ranks, double low, double high) {
    constexpr int64_t kLanes = 3;
    std::vector<std::optional<int64_t>> outAxes(f.getNumResults(), 0);
    FailureOr<func::FuncOp> vmap =
        mlir::kiln::buildVmap(f, {0}, outAxes, kLanes);
    ASSERT_TRUE(succeeded(vmap));
    auto batchedType = cast<RankedTensorType>(vmap->getArgumentTypes()[0]);
    std::vector<std::vector<HostTensor>> batched;
    for (unsigned r = 0; r < ranks; ++r)
      batched.push_back({random(batchedType, low, high)});
    auto results = ::kiln::evaluateSpmd(*vmap, batched);
    ASSERT_TRUE(bool(results)) << llvm::toString(results.takeError());
    for (int64_t lane = 0; lane < kLanes; ++lane) {
      std::vector<std::vector<HostTensor>> inputs;
      for (unsigned r = 0; r < ranks; ++r)
        inputs.push_back({laneOf(batched[r][0], lane)});
      auto want = ::kiln::evaluateSpmd(f, inputs);
      ASSERT_TRUE(bool(want)) << llvm::toString(want.takeError());
      for (unsigned r = 0; r < ranks; ++r)
        for (unsigned k = 0; k < f.getNumResults(); ++k) {
          HostTensor got = laneOf((*results)[r][k], lane);
          EXPECT_EQ(got.shape, (*want)[r][k].shape);
          EXPECT_EQ(got.f, (*want)[r][k].f)
              << "lane " << lane << ", rank " << r << ", result " << k;
        }
    }
  }

  /// Lane `lane` of a tensor batched at dim 0.
  static HostTensor laneOf(const HostTensor &batched, int64_t lane) {
    std::vector<int64_t> shape(batched.shape.begin() + 1, batched.shape.end());
    int64_t n = ::kiln::computeNumElements(shape);
    std::vector<double> values(batched.f.begin() + lane * n,
                               batched.f.begin() + (lane + 1) * n);
    return HostTensor::fromFloats(batched.elementType, shape, values);
  }

  /// The JVP of @f with a random tangent t_r per rank: each rank's J t
  /// against the central difference of f along t (every rank's input
  /// moved at once), and sum over ranks of <J t, w> against
  /// sum of <t, J^T w> with the VJP's results `derived`.
  void checkJvp(func::FuncOp f, const std::vector<std::vector<HostTensor>> &x,
                const std::vector<std::vector<HostTensor>> &w,
                const std::vector<std::vector<HostTensor>> &derived) {
    FailureOr<func::FuncOp> jvp = mlir::kiln::buildJvp(f);
    ASSERT_TRUE(succeeded(jvp));
    auto argType = cast<RankedTensorType>(f.getArgumentTypes()[0]);
    size_t ranks = x.size();
    std::vector<std::vector<HostTensor>> jvpInputs, plus = x, minus = x;
    std::vector<HostTensor> t;
    const double step = 1e-6;
    for (size_t r = 0; r < ranks; ++r) {
      t.push_back(random(argType, -1, 1));
      jvpInputs.push_back({x[r][0], t[r]});
      for (size_t n = 0; n < t[r].f.size(); ++n) {
        plus[r][0].f[n] += step * t[r].f[n];
        minus[r][0].f[n] -= step * t[r].f[n];
      }
    }
    auto tangents = ::kiln::evaluateSpmd(*jvp, jvpInputs);
    ASSERT_TRUE(bool(tangents)) << llvm::toString(tangents.takeError());
    auto up = ::kiln::evaluateSpmd(f, plus);
    auto down = ::kiln::evaluateSpmd(f, minus);
    ASSERT_TRUE(up && down);
    unsigned numResults = f.getNumResults();
    double forwardSide = 0, reverseSide = 0;
    for (size_t r = 0; r < ranks; ++r) {
      for (unsigned k = 0; k < numResults; ++k) {
        const HostTensor &ty = (*tangents)[r][numResults + k];
        for (size_t n = 0; n < ty.f.size(); ++n) {
          double expected =
              ((*up)[r][k].f[n] - (*down)[r][k].f[n]) / (2 * step);
          EXPECT_NEAR(ty.f[n], expected, 1e-6 * (1 + std::abs(expected)))
              << "tangent of result " << k << ", rank " << r << ", element "
              << n;
          forwardSide += ty.f[n] * w[r][k].f[n];
        }
      }
      const HostTensor &dx = derived[r].back();
      for (size_t n = 0; n < dx.f.size(); ++n)
        reverseSide += t[r].f[n] * dx.f[n];
    }
    EXPECT_NEAR(forwardSide, reverseSide, 1e-9 * (1 + std::abs(reverseSide)));
  }

  MLIRContext context;
  std::mt19937 rng{7};
};

// Each case multiplies by a rank-dependent factor after the collective, so
// that the ranks' cotangents differ and a rule that ignored the exchange
// (or sent cotangents to the wrong rank) would be caught.
TEST_F(CollectiveGradientTest, AllReduceSumAndMean) {
  check(R"(
    func.func @f(%x: tensor<2x3xf64>) -> (tensor<2x3xf64>, tensor<2x3xf64>) {
      %sq = kiln.mul %x, %x : tensor<2x3xf64>
      %s = kiln.all_reduce %sq, kind = sum, groups = [[0, 2], [1, 3]] : tensor<2x3xf64>
      %m = kiln.all_reduce %x, kind = mean, groups = [[0, 1, 2, 3]] : tensor<2x3xf64>
      %e = kiln.exp %m : tensor<2x3xf64>
      return %s, %e : tensor<2x3xf64>, tensor<2x3xf64>
    })",
        4);
}

TEST_F(CollectiveGradientTest, AllReduceMaxAndMin) {
  check(R"(
    func.func @f(%x: tensor<5xf64>) -> (tensor<5xf64>, tensor<5xf64>) {
      %a = kiln.all_reduce %x, kind = max, groups = [[0, 1, 2]] : tensor<5xf64>
      %b = kiln.all_reduce %x, kind = min, groups = [[0, 1, 2]] : tensor<5xf64>
      %c = kiln.tanh %b : tensor<5xf64>
      return %a, %c : tensor<5xf64>, tensor<5xf64>
    })",
        3);
}

TEST_F(CollectiveGradientTest, GatherAndScatter) {
  check(R"(
    func.func @f(%x: tensor<2x4xf64>) -> (tensor<2x8xf64>, tensor<2x2xf64>, tensor<1x4xf64>) {
      %g = kiln.all_gather %x, dim = 1, groups = [[1, 0]] : (tensor<2x4xf64>) -> tensor<2x8xf64>
      %sq = kiln.mul %g, %g : tensor<2x8xf64>
      %s = kiln.reduce_scatter %x, kind = sum, dim = 1, groups = [[0, 1]] : (tensor<2x4xf64>) -> tensor<2x2xf64>
      %e = kiln.exp %x : tensor<2x4xf64>
      %m = kiln.reduce_scatter %e, kind = mean, dim = 0, groups = [[0, 1]] : (tensor<2x4xf64>) -> tensor<1x4xf64>
      return %sq, %s, %m : tensor<2x8xf64>, tensor<2x2xf64>, tensor<1x4xf64>
    })",
        2);
}

TEST_F(CollectiveGradientTest, ReduceScatterMax) {
  check(R"(
    func.func @f(%x: tensor<4x3xf64>) -> tensor<2x3xf64> {
      %s = kiln.reduce_scatter %x, kind = max, dim = 0, groups = [[0, 1]] : (tensor<4x3xf64>) -> tensor<2x3xf64>
      return %s : tensor<2x3xf64>
    })",
        2);
}

TEST_F(CollectiveGradientTest, StartAndWaitForms) {
  check(R"(
    func.func @f(%x: tensor<4x3xf64>) -> (tensor<4x3xf64>, tensor<8x3xf64>, tensor<2x3xf64>) {
      %p = kiln.all_reduce_start %x, kind = mean, groups = [[0, 1]] : (tensor<4x3xf64>) -> tensor<4x3xf64>
      %q = kiln.all_gather_start %x, dim = 0, groups = [[1, 0]] : (tensor<4x3xf64>) -> tensor<8x3xf64>
      %e = kiln.exp %x : tensor<4x3xf64>
      %r = kiln.reduce_scatter_start %e, kind = sum, dim = 0, groups = [[0, 1]] : (tensor<4x3xf64>) -> tensor<2x3xf64>
      %a = kiln.collective_wait %p, %x : tensor<4x3xf64>, tensor<4x3xf64>
      %g = kiln.collective_wait %q, %x : tensor<8x3xf64>, tensor<4x3xf64>
      %s = kiln.collective_wait %r, %e : tensor<2x3xf64>, tensor<4x3xf64>
      %sq = kiln.mul %a, %a : tensor<4x3xf64>
      return %sq, %g, %s : tensor<4x3xf64>, tensor<8x3xf64>, tensor<2x3xf64>
    })",
        2);
}

TEST_F(CollectiveGradientTest, BroadcastAllToAllPermute) {
  check(R"(
    func.func @f(%x: tensor<4x2xf64>) -> (tensor<4x2xf64>, tensor<2x4xf64>, tensor<4x2xf64>) {
      %b = kiln.collective_broadcast %x, root = 1, groups = [[0, 1], [3, 2]] : tensor<4x2xf64>
      %sq = kiln.mul %b, %x : tensor<4x2xf64>
      %t = kiln.all_to_all %x, split_dim = 0, concat_dim = 1, groups = [[0, 1], [2, 3]] : (tensor<4x2xf64>) -> tensor<2x4xf64>
      %p = kiln.collective_permute %x, pairs = [0, 1, 1, 2, 2, 0] : tensor<4x2xf64>
      %q = kiln.sin %p : tensor<4x2xf64>
      return %sq, %t, %q : tensor<4x2xf64>, tensor<2x4xf64>, tensor<4x2xf64>
    })",
        4);
}

} // namespace
