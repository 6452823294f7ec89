//===- CondGradientTest.cpp - Gradients through kiln.cond -----------------===//
//
// The backward pass of a kiln.cond is a kiln.cond on the same predicate
// that runs the reverse sweep of the branch that was taken. These cases
// check, against finite differences and in native code, predicates that are
// arguments (the harness alternates rank-0 i1 arguments with the seed, so
// both branches run) or computed from the inputs, residuals in one or both
// branches, results that only one branch makes varied, integer results,
// arguments held fixed, and conds nested in conds.
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include "kiln/IR/KilnOps.h"

#include <gtest/gtest.h>

using namespace kiln::autodiff_test;

namespace {

std::vector<FunctionCase> condCases() {
  std::vector<FunctionCase> cases;
  // Residuals in both branches (tanh in one, exp in the other), a cotangent
  // for the only result.
  cases.push_back({"cond_two_branches", R"(
func.func @cond_two_branches(%p: tensor<i1>, %x: tensor<4xf64>, %y: tensor<4xf64>) -> tensor<4xf64> {
  %r = kiln.cond %p, (%x, %y) : tensor<i1>, (tensor<4xf64>, tensor<4xf64>) -> (tensor<4xf64>) {
  ^bb0(%a: tensor<4xf64>, %b: tensor<4xf64>):
    %t = kiln.tanh %a : tensor<4xf64>
    %m = kiln.mul %t, %b : tensor<4xf64>
    kiln.yield %m : tensor<4xf64>
  } else {
  ^bb0(%a: tensor<4xf64>, %b: tensor<4xf64>):
    %e = kiln.exp %a : tensor<4xf64>
    %s = kiln.sub %e, %b : tensor<4xf64>
    %q = kiln.mul %s, %e : tensor<4xf64>
    kiln.yield %q : tensor<4xf64>
  }
  return %r : tensor<4xf64>
}
)"});
  // The predicate is computed from x: sum(x) > 0.
  cases.push_back({"cond_computed_predicate", R"(
func.func @cond_computed_predicate(%x: tensor<5xf64>, %y: tensor<5xf64>) -> tensor<f64> {
  %s = kiln.reduce_sum %x, dims = [0] : tensor<5xf64>
  %zero = kiln.constant dense<0.0> : tensor<f64>
  %p = kiln.compare gt, %s, %zero : tensor<f64>
  %r = kiln.cond %p, (%x, %y) : tensor<i1>, (tensor<5xf64>, tensor<5xf64>) -> (tensor<5xf64>) {
  ^bb0(%a: tensor<5xf64>, %b: tensor<5xf64>):
    %sa = kiln.sin %a : tensor<5xf64>
    %m = kiln.mul %sa, %a : tensor<5xf64>
    %o = kiln.add %m, %b : tensor<5xf64>
    kiln.yield %o : tensor<5xf64>
  } else {
  ^bb0(%a: tensor<5xf64>, %b: tensor<5xf64>):
    %bb = kiln.mul %b, %b : tensor<5xf64>
    %o = kiln.sub %bb, %a : tensor<5xf64>
    kiln.yield %o : tensor<5xf64>
  }
  %l = kiln.reduce_sum %r, dims = [0] : tensor<5xf64>
  return %l : tensor<f64>
}
)",
                   {},
                   1e-6,
                   1e-6,
                   8});
  // Three results: one that the then branch passes through unchanged and
  // the else branch computes, an integer, and one that only the then branch
  // makes depend on the inputs (the else branch yields a constant).
  cases.push_back({"cond_mixed_results", R"(
func.func @cond_mixed_results(%p: tensor<i1>, %x: tensor<3xf64>, %w: tensor<3xf64>) -> (tensor<3xf64>, tensor<i32>, tensor<f64>) {
  %r:3 = kiln.cond %p, (%x, %w) : tensor<i1>, (tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<i32>, tensor<f64>) {
  ^bb0(%a: tensor<3xf64>, %b: tensor<3xf64>):
    %k = kiln.constant dense<1> : tensor<i32>
    %m = kiln.mul %a, %b : tensor<3xf64>
    %s = kiln.reduce_sum %m, dims = [0] : tensor<3xf64>
    kiln.yield %a, %k, %s : tensor<3xf64>, tensor<i32>, tensor<f64>
  } else {
  ^bb0(%a: tensor<3xf64>, %b: tensor<3xf64>):
    %k = kiln.constant dense<2> : tensor<i32>
    %c = kiln.constant dense<3.0> : tensor<f64>
    %sq = kiln.mul %a, %a : tensor<3xf64>
    %two = kiln.constant dense<2.0> : tensor<3xf64>
    %o = kiln.mul %sq, %two : tensor<3xf64>
    kiln.yield %o, %k, %c : tensor<3xf64>, tensor<i32>, tensor<f64>
  }
  %out = kiln.sin %r#0 : tensor<3xf64>
  return %out, %r#1, %r#2 : tensor<3xf64>, tensor<i32>, tensor<f64>
}
)"});
  // A cond nested in the then branch of another, reading a value computed
  // in the outer branch; the inner predicate comes from an integer input.
  cases.push_back({"cond_nested", R"(
func.func @cond_nested(%p: tensor<i1>, %n: tensor<i32>, %x: tensor<4xf64>, %y: tensor<4xf64>) -> tensor<4xf64> {
  %r = kiln.cond %p, (%n, %x, %y) : tensor<i1>, (tensor<i32>, tensor<4xf64>, tensor<4xf64>) -> (tensor<4xf64>) {
  ^bb0(%k: tensor<i32>, %a: tensor<4xf64>, %b: tensor<4xf64>):
    %zero = kiln.constant dense<0> : tensor<i32>
    %q = kiln.compare gt, %k, %zero : tensor<i32>
    %t = kiln.tanh %a : tensor<4xf64>
    %inner = kiln.cond %q, (%t, %b) : tensor<i1>, (tensor<4xf64>, tensor<4xf64>) -> (tensor<4xf64>) {
    ^bb0(%u: tensor<4xf64>, %v: tensor<4xf64>):
      %e = kiln.exp %u : tensor<4xf64>
      %m = kiln.mul %e, %v : tensor<4xf64>
      kiln.yield %m : tensor<4xf64>
    } else {
    ^bb0(%u: tensor<4xf64>, %v: tensor<4xf64>):
      %s = kiln.sin %v : tensor<4xf64>
      %m = kiln.mul %s, %u : tensor<4xf64>
      kiln.yield %m : tensor<4xf64>
    }
    %o = kiln.mul %inner, %t : tensor<4xf64>
    kiln.yield %o : tensor<4xf64>
  } else {
  ^bb0(%k: tensor<i32>, %a: tensor<4xf64>, %b: tensor<4xf64>):
    %o = kiln.sub %a, %b : tensor<4xf64>
    kiln.yield %o : tensor<4xf64>
  }
  return %r : tensor<4xf64>
}
)",
                   {{1, Domain{-3, 3}}},
                   1e-6,
                   1e-6,
                   12});
  // The branch reads an input that is not differentiated, and the
  // cond's output is used twice afterwards (fan-out into the cond).
  cases.push_back({"cond_fan_out", R"(
func.func @cond_fan_out(%p: tensor<i1>, %x: tensor<2x3xf64>, %n: tensor<2x3xi64>) -> tensor<f64> {
  %r = kiln.cond %p, (%x, %n) : tensor<i1>, (tensor<2x3xf64>, tensor<2x3xi64>) -> (tensor<2x3xf64>) {
  ^bb0(%a: tensor<2x3xf64>, %k: tensor<2x3xi64>):
    %f = kiln.cast %k : tensor<2x3xi64> to tensor<2x3xf64>
    %m = kiln.mul %a, %f : tensor<2x3xf64>
    %s = kiln.sigmoid %m : tensor<2x3xf64>
    kiln.yield %s : tensor<2x3xf64>
  } else {
  ^bb0(%a: tensor<2x3xf64>, %k: tensor<2x3xi64>):
    %t = kiln.transpose %a, permutation = [1, 0] : tensor<2x3xf64>
    %m = kiln.matmul %a, %t : tensor<2x3xf64>, tensor<3x2xf64>
    %s = kiln.reduce_sum %m, dims = [1] : tensor<2x2xf64>
    %b = kiln.broadcast_in_dim %s, dims = [0] : (tensor<2xf64>) -> tensor<2x3xf64>
    %o = kiln.mul %b, %a : tensor<2x3xf64>
    kiln.yield %o : tensor<2x3xf64>
  }
  %sq = kiln.mul %r, %r : tensor<2x3xf64>
  %e = kiln.add %sq, %r : tensor<2x3xf64>
  %l = kiln.reduce_sum %e, dims = [0, 1] : tensor<2x3xf64>
  return %l : tensor<f64>
}
)",
                   {{2, Domain{-3, 3}}}});
  return cases;
}

GradientSuite &condSuite() {
  static std::unique_ptr<GradientSuite> suite = buildCaseSuite(condCases());
  return *suite;
}

class CondGradient : public ::testing::TestWithParam<FunctionCase> {};

TEST_P(CondGradient, MatchesFiniteDifferences) {
  checkCase(condSuite(), GetParam());
}

TEST_P(CondGradient, JvpMatchesFiniteDifferencesAndVjp) {
  checkJvpCase(condSuite(), GetParam());
}

TEST_P(CondGradient, VmapMatchesEachLane) {
  checkVmapCase(condSuite(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Cond, CondGradient, ::testing::ValuesIn(condCases()),
    [](const ::testing::TestParamInfo<FunctionCase> &info) {
      return info.param.name;
    });

/// The backward pass is one kiln.cond on the forward predicate, and the
/// forward cond exports the residuals its backward branches read.
TEST(CondGradientStructure, BackwardIsACondOnTheSamePredicate) {
  GradientSuite &suite = condSuite();
  ASSERT_EQ(suite.error(), "");
  mlir::func::FuncOp grad = suite.lookup("cond_two_branches_grad");
  ASSERT_TRUE(grad);
  std::vector<mlir::kiln::CondOp> conds;
  for (auto cond : grad.getBody().front().getOps<mlir::kiln::CondOp>())
    conds.push_back(cond);
  ASSERT_EQ(conds.size(), 2u);
  mlir::kiln::CondOp forward = conds[0], backward = conds[1];
  EXPECT_EQ(forward.getPred(), backward.getPred());
  // The forward result, then the residuals: tanh(a) from the then branch,
  // exp(a) and exp(a) - b from the else branch.
  EXPECT_EQ(forward.getNumResults(), 4u);
  // The backward cond yields d/dx and d/dy.
  EXPECT_EQ(backward.getNumResults(), 2u);
}

} // namespace
