//===- SpmdEvaluatorTest.cpp - Collectives on simulated ranks -------------===//
//
// kiln::evaluateSpmd runs one program on N simulated ranks. Each test
// computes the expected exchange itself, element by element from the ranks'
// inputs (random ones, of random shapes where the shape matters), and
// compares; the fault tests check that a rank that disagrees or fails makes
// every rank fail with a message naming it, instead of hanging.
//
//===----------------------------------------------------------------------===//

#include "kiln/Compiler/ReferenceEvaluator.h"

#include "kiln/IR/KilnDialect.h"
#include "kiln/IR/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace mlir;
using ::kiln::HostTensor;

namespace {

using PerRank = std::vector<std::vector<HostTensor>>;

class SpmdEvaluatorTest : public ::testing::Test {
protected:
  SpmdEvaluatorTest() {
    context.loadDialect<mlir::kiln::KilnDialect, func::FuncDialect>();
  }

  func::FuncOp parse(const std::string &source) {
    ParserConfig config(&context);
    module = parseSourceString<ModuleOp>(source, config, "spmd.mlir");
    if (!module)
      return nullptr;
    return module->lookupSymbol<func::FuncOp>("main");
  }

  /// Runs @main of `source` on one rank per entry of `inputs`.
  PerRank run(const std::string &source, const PerRank &inputs) {
    func::FuncOp func = parse(source);
    if (!func) {
      ADD_FAILURE() << "the source does not parse or has no @main";
      return {};
    }
    auto results = ::kiln::evaluateSpmd(func, inputs);
    if (!results) {
      ADD_FAILURE() << llvm::toString(results.takeError());
      return PerRank(inputs.size());
    }
    return std::move(*results);
  }

  std::string runError(const std::string &source, const PerRank &inputs) {
    func::FuncOp func = parse(source);
    if (!func) {
      ADD_FAILURE() << "the source does not parse or has no @main";
      return {};
    }
    auto results = ::kiln::evaluateSpmd(func, inputs);
    if (results) {
      ADD_FAILURE() << "evaluation succeeded but should have failed";
      return {};
    }
    return llvm::toString(results.takeError());
  }

  /// A float tensor of `shape` with random values that f32 holds exactly
  /// and whose sums of a few stay exact too, so that expected values
  /// computed in any order are exact.
  HostTensor randomF32(std::vector<int64_t> shape) {
    std::uniform_int_distribution<int> dist(-64, 64);
    std::vector<double> values(::kiln::computeNumElements(shape));
    for (double &v : values)
      v = dist(rng) / 8.0;
    return HostTensor::fromFloats(Float32Type::get(&context), shape, values);
  }

  HostTensor ints(std::vector<int64_t> shape, std::vector<int64_t> values) {
    return HostTensor::fromInts(IntegerType::get(&context, 32), shape, values);
  }

  std::string type(const std::vector<int64_t> &shape) {
    std::string text = "tensor<";
    for (int64_t d : shape)
      text += std::to_string(d) + "x";
    return text + "f32>";
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::mt19937 rng{20261122};
};

/// Element `index` (row-major) of the tensor of `shape` that concatenates
/// `parts` along `dim`.
double concatenated(const std::vector<const HostTensor *> &parts,
                    const std::vector<int64_t> &shape, int64_t dim,
                    int64_t index) {
  std::vector<int64_t> position(shape.size());
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    position[d] = index % shape[d];
    index /= shape[d];
  }
  int64_t piece = shape[dim] / parts.size();
  const HostTensor &part = *parts[position[dim] / piece];
  position[dim] %= piece;
  int64_t offset = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    offset = offset * part.shape[d] + position[d];
  return part.f[offset];
}

TEST_F(SpmdEvaluatorTest, AllReduceKindsWithinGroups) {
  std::string source = R"(
    func.func @main(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>) {
      %s = kiln.all_reduce %x, kind = sum, groups = [[0, 2], [3, 1]] : tensor<3x5xf32>
      %a = kiln.all_reduce %x, kind = max, groups = [[0, 2], [3, 1]] : tensor<3x5xf32>
      %i = kiln.all_reduce %x, kind = min, groups = [[0, 1, 2, 3]] : tensor<3x5xf32>
      %m = kiln.all_reduce %x, kind = mean, groups = [[0, 1, 2, 3]] : tensor<3x5xf32>
      return %s, %a, %i, %m : tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>
    })";
  PerRank inputs;
  for (int r = 0; r < 4; ++r)
    inputs.push_back({randomF32({3, 5})});
  PerRank results = run(source, inputs);
  ASSERT_EQ(results.size(), 4u);
  int partner[] = {2, 3, 0, 1};
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(results[r].size(), 4u);
    for (int n = 0; n < 15; ++n) {
      double mine = inputs[r][0].f[n], theirs = inputs[partner[r]][0].f[n];
      EXPECT_EQ(results[r][0].f[n], mine + theirs) << "rank " << r;
      EXPECT_EQ(results[r][1].f[n], std::max(mine, theirs)) << "rank " << r;
      double low = inputs[0][0].f[n], total = 0;
      for (int q = 0; q < 4; ++q) {
        low = std::min(low, inputs[q][0].f[n]);
        total += inputs[q][0].f[n];
      }
      EXPECT_EQ(results[r][2].f[n], low) << "rank " << r;
      EXPECT_EQ(results[r][3].f[n], static_cast<float>(total / 4))
          << "rank " << r;
    }
  }
}

TEST_F(SpmdEvaluatorTest, FloatSumsRoundInGroupOrder) {
  // 2^24 + 1 + 1: rounding after each addition loses both ones in f32, as
  // the compiled reduction does; summing in double first would keep them.
  std::string source = R"(
    func.func @main(%x: tensor<1xf32>) -> tensor<1xf32> {
      %s = kiln.all_reduce %x, kind = sum, groups = [[0, 1, 2]] : tensor<1xf32>
      return %s : tensor<1xf32>
    })";
  Type f32 = Float32Type::get(&context);
  PerRank inputs = {{HostTensor::fromFloats(f32, {1}, {16777216.0})},
                    {HostTensor::fromFloats(f32, {1}, {1.0})},
                    {HostTensor::fromFloats(f32, {1}, {1.0})}};
  PerRank results = run(source, inputs);
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(results[r][0].f[0], 16777216.0);
}

TEST_F(SpmdEvaluatorTest, GatherAndScatterOnRandomShapes) {
  for (int trial = 0; trial < 12; ++trial) {
    int64_t ranks = 1 + trial % 4;
    int64_t rank = 1 + trial % 3;
    std::vector<int64_t> shape;
    for (int64_t d = 0; d < rank; ++d)
      shape.push_back(1 + rng() % 4);
    int64_t dim = rng() % rank;
    std::vector<int64_t> gathered = shape, scattered = shape;
    gathered[dim] *= ranks;
    std::string groups = "[[";
    for (int64_t r = 0; r < ranks; ++r)
      groups += (r ? ", " : "") + std::to_string(ranks - 1 - r);
    groups += "]]";
    std::string source = llvm::formatv(R"(
      func.func @main(%x: {0}) -> ({1}, {0}) {{
        %g = kiln.all_gather %x, dim = {2}, groups = {3} : ({0}) -> {1}
        %s = kiln.reduce_scatter %g, kind = sum, dim = {2}, groups = {3} : ({1}) -> {0}
        return %g, %s : {1}, {0}
      })",
                                       type(shape), type(gathered), dim,
                                       groups)
                             .str();
    PerRank inputs;
    for (int64_t r = 0; r < ranks; ++r)
      inputs.push_back({randomF32(shape)});
    PerRank results = run(source, inputs);
    // Group order is ranks-1, ..., 0.
    std::vector<const HostTensor *> order;
    for (int64_t r = ranks - 1; r >= 0; --r)
      order.push_back(&inputs[r][0]);
    for (int64_t r = 0; r < ranks; ++r) {
      const HostTensor &all = results[r][0];
      ASSERT_EQ(all.shape, gathered) << "trial " << trial;
      for (int64_t n = 0; n < all.numElements(); ++n)
        ASSERT_EQ(all.f[n], concatenated(order, gathered, dim, n))
            << "trial " << trial << ", rank " << r << ", element " << n;
      // Every rank gathered the same tensor, so block i of the sum is
      // `ranks` times the input of the rank with group index i.
      const HostTensor &own = results[r][1];
      const HostTensor &source = *order[ranks - 1 - r];
      ASSERT_EQ(own.shape, shape);
      for (int64_t n = 0; n < own.numElements(); ++n)
        ASSERT_EQ(own.f[n], ranks * source.f[n])
            << "trial " << trial << ", rank " << r;
    }
  }
}

TEST_F(SpmdEvaluatorTest, BroadcastAllToAllPermuteRank) {
  std::string source = R"(
    func.func @main(%x: tensor<2x4xi32>) -> (tensor<2x4xi32>, tensor<1x8xi32>, tensor<2x4xi32>, tensor<i64>) {
      %b = kiln.collective_broadcast %x, root = 1, groups = [[0, 1]] : tensor<2x4xi32>
      %t = kiln.all_to_all %x, split_dim = 0, concat_dim = 1, groups = [[0, 1]] : (tensor<2x4xi32>) -> tensor<1x8xi32>
      %p = kiln.collective_permute %x, pairs = [0, 1] : tensor<2x4xi32>
      %r = kiln.rank : tensor<i64>
      return %b, %t, %p, %r : tensor<2x4xi32>, tensor<1x8xi32>, tensor<2x4xi32>, tensor<i64>
    })";
  PerRank inputs = {{ints({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7})},
                    {ints({2, 4}, {10, 11, 12, 13, 14, 15, 16, 17})}};
  PerRank results = run(source, inputs);
  for (int r = 0; r < 2; ++r)
    EXPECT_EQ(results[r][0].i, inputs[1][0].i) << "rank " << r;
  // Rank 0 gets row 0 of each rank, rank 1 row 1, joined along dim 1.
  EXPECT_EQ(results[0][1].i,
            (std::vector<int64_t>{0, 1, 2, 3, 10, 11, 12, 13}));
  EXPECT_EQ(results[1][1].i,
            (std::vector<int64_t>{4, 5, 6, 7, 14, 15, 16, 17}));
  // Rank 1 receives rank 0's tensor; rank 0 is no target and gets zeros.
  EXPECT_EQ(results[0][2].i, std::vector<int64_t>(8, 0));
  EXPECT_EQ(results[1][2].i, inputs[0][0].i);
  EXPECT_EQ(results[0][3].i, std::vector<int64_t>{0});
  EXPECT_EQ(results[1][3].i, std::vector<int64_t>{1});
}

TEST_F(SpmdEvaluatorTest, StartAndWaitMatchTheSynchronousOps) {
  std::string source = R"(
    func.func @main(%x: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<16x2xf32>, tensor<1x2xf32>) {
      %s = kiln.all_reduce %x, kind = sum, groups = [[0, 1, 2, 3]] : tensor<4x2xf32>
      %p = kiln.all_reduce_start %x, kind = sum, groups = [[0, 1, 2, 3]] : (tensor<4x2xf32>) -> tensor<4x2xf32>
      %q = kiln.all_gather_start %x, dim = 0, groups = [[0, 1, 2, 3]] : (tensor<4x2xf32>) -> tensor<16x2xf32>
      %e = kiln.exp %x : tensor<4x2xf32>
      %r = kiln.reduce_scatter_start %e, kind = max, dim = 0, groups = [[0, 1, 2, 3]] : (tensor<4x2xf32>) -> tensor<1x2xf32>
      %a = kiln.collective_wait %p, %x : tensor<4x2xf32>, tensor<4x2xf32>
      %g = kiln.collective_wait %q, %x : tensor<16x2xf32>, tensor<4x2xf32>
      %m = kiln.collective_wait %r, %e : tensor<1x2xf32>, tensor<4x2xf32>
      return %s, %a, %g, %m : tensor<4x2xf32>, tensor<4x2xf32>, tensor<16x2xf32>, tensor<1x2xf32>
    })";
  PerRank inputs;
  for (int r = 0; r < 4; ++r)
    inputs.push_back({randomF32({4, 2})});
  PerRank results = run(source, inputs);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(results[r][0].f, results[r][1].f);
    for (int n = 0; n < 8; ++n)
      EXPECT_EQ(results[r][2].f[r * 8 + n], inputs[r][0].f[n]);
    for (int c = 0; c < 2; ++c) {
      double best = -INFINITY;
      for (int q = 0; q < 4; ++q)
        best = std::max(best, static_cast<double>(static_cast<float>(
                                  std::exp(inputs[q][0].f[r * 2 + c]))));
      EXPECT_EQ(results[r][3].f[c], best) << "rank " << r;
    }
  }
}

TEST_F(SpmdEvaluatorTest, CollectivesInsideLoops) {
  // A ring pass over a kiln.for: after 4 steps on 4 ranks every rank holds
  // the sum of all inputs.
  std::string source = R"(
    func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
      %r:2 = kiln.for 3 iterations (%x, %x) : (tensor<3xf32>, tensor<3xf32>) {
      ^bb0(%i: tensor<i64>, %acc: tensor<3xf32>, %cur: tensor<3xf32>):
        %next = kiln.collective_permute %cur, pairs = [0, 1, 1, 2, 2, 3, 3, 0] : tensor<3xf32>
        %sum = kiln.add %acc, %next : tensor<3xf32>
        kiln.yield %sum, %next : tensor<3xf32>, tensor<3xf32>
      }
      return %r#0 : tensor<3xf32>
    })";
  PerRank inputs;
  for (int r = 0; r < 4; ++r)
    inputs.push_back({randomF32({3})});
  PerRank results = run(source, inputs);
  for (int r = 0; r < 4; ++r)
    for (int n = 0; n < 3; ++n) {
      double total = 0;
      for (int step = 0; step < 4; ++step)
        total += inputs[(r + 4 - step) % 4][0].f[n];
      EXPECT_EQ(results[r][0].f[n], total) << "rank " << r;
    }
}

TEST_F(SpmdEvaluatorTest, RankThatSkipsACollectiveFailsEveryRank) {
  std::string source = R"(
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %r = kiln.rank : tensor<i64>
      %zero = kiln.constant dense<0> : tensor<i64>
      %first = kiln.compare eq, %r, %zero : tensor<i64>
      %y = kiln.cond %first, (%x) : tensor<i1>, (tensor<2xf32>) -> tensor<2xf32> {
      ^bb0(%a: tensor<2xf32>):
        kiln.yield %a : tensor<2xf32>
      } else {
      ^bb0(%a: tensor<2xf32>):
        %s = kiln.all_reduce %a, kind = sum, groups = [[0, 1]] : tensor<2xf32>
        kiln.yield %s : tensor<2xf32>
      }
      return %y : tensor<2xf32>
    })";
  std::string message =
      runError(source, {{randomF32({2})}, {randomF32({2})}});
  EXPECT_NE(message.find("rank 1: rank 0 returned without reaching its "
                         "collective #0, which rank 1 waits in: "
                         "kiln.all_reduce of tensor<2xf32> at spmd.mlir:"),
            std::string::npos)
      << message;
}

TEST_F(SpmdEvaluatorTest, RanksThatDisagreeOnACollectiveFailEveryRank) {
  std::string source = R"(
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %r = kiln.rank : tensor<i64>
      %zero = kiln.constant dense<0> : tensor<i64>
      %first = kiln.compare eq, %r, %zero : tensor<i64>
      %y = kiln.cond %first, (%x) : tensor<i1>, (tensor<2xf32>) -> tensor<2xf32> {
      ^bb0(%a: tensor<2xf32>):
        %s = kiln.all_reduce %a, kind = max, groups = [[0, 1]] : tensor<2xf32>
        kiln.yield %s : tensor<2xf32>
      } else {
      ^bb0(%a: tensor<2xf32>):
        %s = kiln.all_reduce %a, kind = sum, groups = [[0, 1]] : tensor<2xf32>
        kiln.yield %s : tensor<2xf32>
      }
      return %y : tensor<2xf32>
    })";
  std::string message =
      runError(source, {{randomF32({2})}, {randomF32({2})}});
  for (const char *expected :
       {"rank 0: the ranks disagree on a collective: rank 0 reached "
        "kiln.all_reduce of tensor<2xf32> at spmd.mlir:8:",
        "rank 1 kiln.all_reduce of tensor<2xf32> at spmd.mlir:12:",
        "rank 1: the ranks disagree"})
    EXPECT_NE(message.find(expected), std::string::npos) << message;
}

TEST_F(SpmdEvaluatorTest, FailureOnOneRankIsReportedFirst) {
  // Each rank reads row 1 of a stack with room for %n rows: rank 1's
  // holds one.
  std::string source = R"(
    func.func @main(%x: tensor<2xi32>, %n: tensor<i64>) -> tensor<2xi32> {
      %s = kiln.stack_empty : tensor<?x2xi32>
      %t = kiln.stack_reserve %s, %n : tensor<?x2xi32>
      %one = kiln.constant dense<1> : tensor<i64>
      %u = kiln.stack_push %t[%one], %x : tensor<?x2xi32>, tensor<2xi32>
      %q = kiln.stack_read %u[%one] : tensor<?x2xi32> -> tensor<2xi32>
      %s2 = kiln.all_reduce %q, kind = sum, groups = [[0, 1, 2]] : tensor<2xi32>
      return %s2 : tensor<2xi32>
    })";
  HostTensor x = ints({2}, {6, 8});
  auto rows = [&](int64_t n) { return HostTensor::fromInts(
      IntegerType::get(&context, 64), {}, {n}); };
  std::string message = runError(source, {{x, rows(2)}, {x, rows(1)},
                                          {x, rows(3)}});
  EXPECT_EQ(message.find("rank 1: pushes row 1 onto a stack with capacity 1"),
            0u)
      << message;
  EXPECT_NE(message.find("rank 0: rank 1 failed (pushes row 1"),
            std::string::npos)
      << message;
}

/// Ranks 0, 1 (stage 0) and 2, 3 (stage 1) each run a cond of their own,
/// with a different number of collectives over the pairs {0, 1}, {2, 3}:
/// a group's collectives involve its members alone. A permutation and an
/// all-reduce over every rank follow.
constexpr const char *kTwoStagesOfPairs = R"(
    func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
      %r = kiln.rank : tensor<i64>
      %two = kiln.constant dense<2> : tensor<i64>
      %stage0 = kiln.compare lt, %r, %two : tensor<i64>
      %y = kiln.cond %stage0, (%x) : tensor<i1>, (tensor<2xf32>) -> tensor<2xf32> {
      ^bb0(%a: tensor<2xf32>):
        %s = kiln.all_reduce %a, kind = sum, groups = [[0, 1], [2, 3]] : tensor<2xf32>
        %m = kiln.all_reduce %s, kind = max, groups = [[0, 1], [2, 3]] : tensor<2xf32>
        %t = kiln.add %s, %m : tensor<2xf32>
        kiln.yield %t : tensor<2xf32>
      } else {
      ^bb0(%a: tensor<2xf32>):
        %g = kiln.all_gather %a, dim = 0, groups = [[0, 1], [2, 3]] : (tensor<2xf32>) -> tensor<4xf32>
        %h = kiln.slice %g, start = [1], limit = [3], stride = [1] : tensor<4xf32>
        kiln.yield %h : tensor<2xf32>
      }
      %p = kiln.collective_permute %y, pairs = [0, 2, 1, 3] : tensor<2xf32>
      %w = kiln.all_reduce %y, kind = sum, groups = [[0, 1, 2, 3]] : tensor<2xf32>
      return %p, %w : tensor<2xf32>, tensor<2xf32>
    })";

TEST_F(SpmdEvaluatorTest, GroupsRunTheirOwnCollectives) {
  PerRank inputs;
  for (int r = 0; r < 4; ++r)
    inputs.push_back({randomF32({2})});
  PerRank results = run(kTwoStagesOfPairs, inputs);
  ASSERT_EQ(results.size(), 4u);
  auto x = [&](int r, int n) { return inputs[r][0].f[n]; };
  std::vector<std::vector<double>> y(4, std::vector<double>(2));
  for (int n = 0; n < 2; ++n) {
    double sum = x(0, n) + x(1, n);
    y[0][n] = y[1][n] = sum + sum;
    // Element n + 1 of [x2, x3] gathered.
    double gathered[4] = {x(2, 0), x(2, 1), x(3, 0), x(3, 1)};
    y[2][n] = y[3][n] = gathered[n + 1];
  }
  for (int r = 0; r < 4; ++r) {
    ASSERT_EQ(results[r].size(), 2u) << "rank " << r;
    std::vector<double> permuted =
        r >= 2 ? y[r - 2] : std::vector<double>{0, 0};
    EXPECT_EQ(results[r][0].f, permuted) << "rank " << r;
    for (int n = 0; n < 2; ++n)
      EXPECT_EQ(results[r][1].f[n],
                static_cast<float>(static_cast<float>(
                    static_cast<float>(y[0][n] + y[1][n]) + y[2][n]) +
                                   y[3][n]))
          << "rank " << r;
  }
}

TEST_F(SpmdEvaluatorTest, GroupMemberThatReturnsEarlyFailsItsGroup) {
  std::string source = R"(
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %r = kiln.rank : tensor<i64>
      %one = kiln.constant dense<1> : tensor<i64>
      %skip = kiln.compare eq, %r, %one : tensor<i64>
      %y = kiln.cond %skip, (%x) : tensor<i1>, (tensor<2xf32>) -> tensor<2xf32> {
      ^bb0(%a: tensor<2xf32>):
        kiln.yield %a : tensor<2xf32>
      } else {
      ^bb0(%a: tensor<2xf32>):
        %s = kiln.all_reduce %a, kind = sum, groups = [[0, 1], [2, 3]] : tensor<2xf32>
        kiln.yield %s : tensor<2xf32>
      }
      return %y : tensor<2xf32>
    })";
  PerRank inputs;
  for (int r = 0; r < 4; ++r)
    inputs.push_back({randomF32({2})});
  std::string message = runError(source, inputs);
  // Ranks 2 and 3 complete their group's all-reduce; rank 0 waits for 1.
  EXPECT_NE(message.find("rank 0: rank 1 returned without reaching its "
                         "collective #0 in replica group {0, 1}, which rank "
                         "0 waits in: kiln.all_reduce of tensor<2xf32> at "
                         "spmd.mlir:11:"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("rank 2"), std::string::npos) << message;
  EXPECT_EQ(message.find("rank 3"), std::string::npos) << message;
}

TEST_F(SpmdEvaluatorTest, RanksWaitingInEachOthersGroupsFail) {
  // Rank 1 goes on to an all-reduce of every rank while rank 0 waits for
  // it in their pair's; ranks 2 and 3 wait in the all-reduce of every rank.
  std::string source = R"(
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %r = kiln.rank : tensor<i64>
      %zero = kiln.constant dense<0> : tensor<i64>
      %first = kiln.compare eq, %r, %zero : tensor<i64>
      %y = kiln.cond %first, (%x) : tensor<i1>, (tensor<2xf32>) -> tensor<2xf32> {
      ^bb0(%a: tensor<2xf32>):
        %s = kiln.all_reduce %a, kind = sum, groups = [[0, 1], [2, 3]] : tensor<2xf32>
        kiln.yield %s : tensor<2xf32>
      } else {
      ^bb0(%a: tensor<2xf32>):
        kiln.yield %a : tensor<2xf32>
      }
      %w = kiln.all_reduce %y, kind = sum, groups = [[0, 1, 2, 3]] : tensor<2xf32>
      return %w : tensor<2xf32>
    })";
  PerRank inputs;
  for (int r = 0; r < 4; ++r)
    inputs.push_back({randomF32({2})});
  std::string message = runError(source, inputs);
  for (const char *expected :
       {"rank 0: rank 0 waits in its collective #0 in replica group {0, 1} "
        "(kiln.all_reduce of tensor<2xf32> at spmd.mlir:8:",
        ") but rank 1 waits in its collective #0 (kiln.all_reduce of "
        "tensor<2xf32> at spmd.mlir:14:",
        "): the ranks wait for each other",
        "rank 1: rank 1 waits in its collective #0 (kiln.all_reduce of "
        "tensor<2xf32> at spmd.mlir:14:",
        ") but rank 0 waits in its collective #0 in replica group {0, 1}"})
    EXPECT_NE(message.find(expected), std::string::npos)
        << expected << "\n" << message;
}

TEST_F(SpmdEvaluatorTest, GroupsMustSpanTheRun) {
  std::string source = R"(
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %s = kiln.all_reduce %x, kind = sum, groups = [[0, 1], [2, 3]] : tensor<2xf32>
      return %s : tensor<2xf32>
    })";
  std::string message =
      runError(source, {{randomF32({2})}, {randomF32({2})}});
  EXPECT_NE(message.find("the replica groups span 4 ranks, but the run has 2"),
            std::string::npos)
      << message;
}

TEST_F(SpmdEvaluatorTest, PlainEvaluationIsARunOfOneRank) {
  std::string one = R"(
    func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<i64>) {
      %s = kiln.all_reduce %x, kind = mean, groups = [[0]] : tensor<2xf32>
      %r = kiln.rank : tensor<i64>
      return %s, %r : tensor<2xf32>, tensor<i64>
    })";
  HostTensor x = randomF32({2});
  func::FuncOp func = parse(one);
  ASSERT_TRUE(func);
  auto results = ::kiln::evaluate(func, {x});
  ASSERT_TRUE(bool(results)) << llvm::toString(results.takeError());
  EXPECT_EQ((*results)[0].f, x.f);
  EXPECT_EQ((*results)[1].i, std::vector<int64_t>{0});

  std::string two = R"(
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %s = kiln.all_reduce %x, kind = sum, groups = [[0, 1]] : tensor<2xf32>
      return %s : tensor<2xf32>
    })";
  func = parse(two);
  ASSERT_TRUE(func);
  auto failed = ::kiln::evaluate(func, {x});
  ASSERT_FALSE(bool(failed));
  std::string message = llvm::toString(failed.takeError());
  EXPECT_NE(message.find("the replica groups span 2 ranks, but the run has 1"),
            std::string::npos)
      << message;
}

} // namespace
