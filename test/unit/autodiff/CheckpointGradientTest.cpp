//===- CheckpointGradientTest.cpp - Gradients with loop checkpointing -----===//
//
// With checkpointEvery = k, loops are split into segments of k iterations
// whose backward pass recomputes them. The gradients must not change: each
// case derives the gradient with and without checkpointing and checks both
// against finite differences (evaluator and native code), for a kiln.for
// whose trip count k does and does not divide, a kiln.while, and a while
// in a for; the structure test checks what the forward loop stores.
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include "kiln/IR/KilnOps.h"

#include <gtest/gtest.h>

using namespace kiln::autodiff_test;

namespace {

const char *kSource = R"(
func.func @scan(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %r:2 = kiln.for 10 iterations (%x, %w) : (tensor<3xf64>, tensor<3xf64>) {
  ^bb0(%i: tensor<i64>, %h: tensor<3xf64>, %v: tensor<3xf64>):
    %fi = kiln.cast %i : tensor<i64> to tensor<f64>
    %c = kiln.constant dense<0.1> : tensor<f64>
    %s = kiln.mul %fi, %c : tensor<f64>
    %sb = kiln.broadcast_in_dim %s, dims = [] : (tensor<f64>) -> tensor<3xf64>
    %m = kiln.mul %h, %v : tensor<3xf64>
    %a = kiln.add %m, %sb : tensor<3xf64>
    %t = kiln.tanh %a : tensor<3xf64>
    kiln.yield %t, %v : tensor<3xf64>, tensor<3xf64>
  }
  return %r#0 : tensor<3xf64>
}

func.func @count(%x: tensor<3xf64>, %w: tensor<3xf64>, %n: tensor<i64>) -> tensor<3xf64> {
  %zero = kiln.constant dense<0> : tensor<i64>
  %r:4 = kiln.while (%x, %w, %zero, %n) : (tensor<3xf64>, tensor<3xf64>, tensor<i64>, tensor<i64>) cond {
  ^bb0(%h: tensor<3xf64>, %ww: tensor<3xf64>, %k: tensor<i64>, %nn: tensor<i64>):
    %c = kiln.compare lt, %k, %nn : tensor<i64>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%h: tensor<3xf64>, %ww: tensor<3xf64>, %k: tensor<i64>, %nn: tensor<i64>):
    %m = kiln.mul %h, %ww : tensor<3xf64>
    %s = kiln.sin %m : tensor<3xf64>
    %a = kiln.add %s, %h : tensor<3xf64>
    %one = kiln.constant dense<1> : tensor<i64>
    %k1 = kiln.add %k, %one : tensor<i64>
    kiln.yield %a, %ww, %k1, %nn : tensor<3xf64>, tensor<3xf64>, tensor<i64>, tensor<i64>
  }
  return %r#0 : tensor<3xf64>
}

func.func @while_in_for(%x: tensor<2xf64>, %w: tensor<2xf64>, %n: tensor<i64>) -> tensor<2xf64> {
  %r:3 = kiln.for 5 iterations (%x, %w, %n) : (tensor<2xf64>, tensor<2xf64>, tensor<i64>) {
  ^bb0(%i: tensor<i64>, %h: tensor<2xf64>, %ww: tensor<2xf64>, %nn: tensor<i64>):
    %z = kiln.constant dense<0> : tensor<i64>
    %in:4 = kiln.while (%h, %ww, %z, %nn) : (tensor<2xf64>, tensor<2xf64>, tensor<i64>, tensor<i64>) cond {
    ^bb0(%g: tensor<2xf64>, %v: tensor<2xf64>, %j: tensor<i64>, %mm: tensor<i64>):
      %c = kiln.compare lt, %j, %mm : tensor<i64>
      kiln.yield %c : tensor<i1>
    } do {
    ^bb0(%g: tensor<2xf64>, %v: tensor<2xf64>, %j: tensor<i64>, %mm: tensor<i64>):
      %p = kiln.mul %g, %v : tensor<2xf64>
      %s = kiln.sin %p : tensor<2xf64>
      %a = kiln.add %s, %g : tensor<2xf64>
      %o = kiln.constant dense<1> : tensor<i64>
      %j1 = kiln.add %j, %o : tensor<i64>
      kiln.yield %a, %v, %j1, %mm : tensor<2xf64>, tensor<2xf64>, tensor<i64>, tensor<i64>
    }
    %t = kiln.tanh %in#0 : tensor<2xf64>
    kiln.yield %t, %ww, %nn : tensor<2xf64>, tensor<2xf64>, tensor<i64>
  }
  return %r#0 : tensor<2xf64>
}
)";

GradientSuite &checkpointSuite() {
  static std::unique_ptr<GradientSuite> suite(new GradientSuite(
      kSource, {
                   {"scan", "scan_store", {0, 1}},
                   {"scan", "scan_every_5", {0, 1}, false, 5},
                   {"scan", "scan_every_3", {0, 1}, false, 3},
                   {"count", "count_store", {0, 1}},
                   {"count", "count_every_3", {0, 1}, false, 3},
                   {"while_in_for", "while_in_for_every_2", {0, 1}, false, 2},
               }));
  return *suite;
}

struct Case {
  const char *function;
  const char *gradient;
  std::map<unsigned, Domain> domains;
};

class CheckpointGradient : public ::testing::TestWithParam<Case> {};

TEST_P(CheckpointGradient, MatchesFiniteDifferences) {
  GradientSuite &suite = checkpointSuite();
  ASSERT_EQ(suite.error(), "");
  GradientCheck check;
  check.function = GetParam().function;
  check.gradient = GetParam().gradient;
  check.wrt = {0, 1};
  check.domains = GetParam().domains;
  reportErrors(check.gradient, checkGradient(suite, check));
}

INSTANTIATE_TEST_SUITE_P(
    Checkpoint, CheckpointGradient,
    ::testing::Values(
        Case{"scan", "scan_store", {}}, Case{"scan", "scan_every_5", {}},
        Case{"scan", "scan_every_3", {}},
        Case{"count", "count_store", {{2, Domain{0, 8}}}},
        Case{"count", "count_every_3", {{2, Domain{0, 8}}}},
        Case{"while_in_for", "while_in_for_every_2", {{2, Domain{0, 4}}}}),
    [](const ::testing::TestParamInfo<Case> &info) {
      return std::string(info.param.gradient);
    });

/// With k = 5, the 10 iterations of @scan are 2 segments of 5: the outer
/// forward loop stores the carried h once per segment ([2, 3]), not the
/// per-iteration values ([10, 3] each).
TEST(CheckpointGradientStructure, StoresOncePerSegment) {
  GradientSuite &suite = checkpointSuite();
  ASSERT_EQ(suite.error(), "");
  auto f64 = mlir::Float64Type::get(suite.getModule().getContext());
  auto countBuffers = [&](const char *name) {
    std::map<int64_t, int> rows;
    mlir::func::FuncOp grad = suite.lookup(name);
    EXPECT_TRUE(grad);
    if (!grad)
      return rows;
    auto loop = *grad.getBody().front().getOps<mlir::kiln::ForOp>().begin();
    for (mlir::Value result : loop.getResults())
      if (auto type = mlir::dyn_cast<mlir::RankedTensorType>(result.getType()))
        if (type.getRank() == 2 && type.getElementType() == f64)
          ++rows[type.getDimSize(0)];
    return rows;
  };
  EXPECT_EQ(countBuffers("scan_store"), (std::map<int64_t, int>{{10, 2}}));
  EXPECT_EQ(countBuffers("scan_every_5"), (std::map<int64_t, int>{{2, 1}}));
}

} // namespace
