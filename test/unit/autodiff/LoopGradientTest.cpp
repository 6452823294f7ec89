//===- LoopGradientTest.cpp - Gradients through kiln.for ------------------===//
//
// The backward pass of a kiln.for is a kiln.for running the iterations in
// reverse, reading what the forward loop stored per iteration. These cases
// check, against finite differences and in native code: a recurrent cell
// with weights carried unchanged (not stored) and inputs read with
// dynamic_slice, values recomputed instead of stored, a value that changes
// every iteration and is stored, the index used as data, zero trips, a cond
// in the body, a loop in a loop, a loop in a cond, and the structure of the
// derived loops.
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include "kiln/IR/KilnOps.h"

#include <gtest/gtest.h>

using namespace kiln::autodiff_test;

namespace {

std::vector<FunctionCase> loopCases() {
  std::vector<FunctionCase> cases;
  // h <- tanh(h W + x_i); W is carried unchanged, the inputs are read with
  // dynamic_slice at the iteration index.
  cases.push_back({"rnn", R"(
func.func @rnn(%h0: tensor<4xf64>, %w: tensor<4x4xf64>, %xs: tensor<5x4xf64>) -> tensor<f64> {
  %r:3 = kiln.for 5 iterations (%h0, %w, %xs) : (tensor<4xf64>, tensor<4x4xf64>, tensor<5x4xf64>) {
  ^bb0(%i: tensor<i64>, %h: tensor<4xf64>, %ww: tensor<4x4xf64>, %x: tensor<5x4xf64>):
    %xi = kiln.dynamic_slice %x[%i], size = 1 : tensor<5x4xf64>
    %hr = kiln.reshape %h : (tensor<4xf64>) -> tensor<1x4xf64>
    %m = kiln.matmul %hr, %ww : tensor<1x4xf64>, tensor<4x4xf64>
    %a = kiln.add %m, %xi : tensor<1x4xf64>
    %t = kiln.tanh %a : tensor<1x4xf64>
    %hn = kiln.reshape %t : (tensor<1x4xf64>) -> tensor<4xf64>
    kiln.yield %hn, %ww, %x : tensor<4xf64>, tensor<4x4xf64>, tensor<5x4xf64>
  }
  %s = kiln.mul %r#0, %r#0 : tensor<4xf64>
  %l = kiln.reduce_sum %s, dims = [0] : tensor<4xf64>
  return %l : tensor<f64>
}
)",
                   {{1, Domain{-0.6, 0.6}}}});
  // cos(w) depends on the carried-unchanged w only: it is recomputed in
  // the backward loop, not stored. sin(h) changes and is stored.
  cases.push_back({"invariant_subexpression", R"(
func.func @invariant_subexpression(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %r:2 = kiln.for 4 iterations (%x, %w) : (tensor<3xf64>, tensor<3xf64>) {
  ^bb0(%i: tensor<i64>, %h: tensor<3xf64>, %ww: tensor<3xf64>):
    %s = kiln.sin %h : tensor<3xf64>
    %c = kiln.cos %ww : tensor<3xf64>
    %half = kiln.constant dense<0.5> : tensor<3xf64>
    %ch = kiln.mul %c, %half : tensor<3xf64>
    %m = kiln.mul %s, %ch : tensor<3xf64>
    %n = kiln.add %m, %h : tensor<3xf64>
    kiln.yield %n, %ww : tensor<3xf64>, tensor<3xf64>
  }
  return %r#0 : tensor<3xf64>
}
)"});
  // Two carried values that both change: an accumulator and a decaying
  // factor; both results have cotangents. The index scales each step.
  cases.push_back({"accumulate_with_index", R"(
func.func @accumulate_with_index(%x: tensor<4xf64>, %p: tensor<4xf64>) -> (tensor<f64>, tensor<4xf64>) {
  %zero = kiln.constant dense<0.0> : tensor<f64>
  %r:3 = kiln.for 6 iterations (%zero, %p, %x) : (tensor<f64>, tensor<4xf64>, tensor<4xf64>) {
  ^bb0(%i: tensor<i64>, %acc: tensor<f64>, %q: tensor<4xf64>, %xx: tensor<4xf64>):
    %fi = kiln.cast %i : tensor<i64> to tensor<f64>
    %one = kiln.constant dense<1.0> : tensor<f64>
    %k = kiln.add %fi, %one : tensor<f64>
    %kb = kiln.broadcast_in_dim %k, dims = [] : (tensor<f64>) -> tensor<4xf64>
    %prod = kiln.mul %xx, %q : tensor<4xf64>
    %scaled = kiln.div %prod, %kb : tensor<4xf64>
    %s = kiln.reduce_sum %scaled, dims = [0] : tensor<4xf64>
    %acc2 = kiln.add %acc, %s : tensor<f64>
    %decay = kiln.constant dense<0.9> : tensor<4xf64>
    %q2 = kiln.mul %q, %decay : tensor<4xf64>
    %q3 = kiln.sin %q2 : tensor<4xf64>
    kiln.yield %acc2, %q3, %xx : tensor<f64>, tensor<4xf64>, tensor<4xf64>
  }
  return %r#0, %r#1 : tensor<f64>, tensor<4xf64>
}
)"});
  // A loop that runs zero times is the identity.
  cases.push_back({"zero_trips", R"(
func.func @zero_trips(%x: tensor<3xf64>) -> tensor<3xf64> {
  %r = kiln.for 0 iterations (%x) : (tensor<3xf64>) {
  ^bb0(%i: tensor<i64>, %h: tensor<3xf64>):
    %s = kiln.sin %h : tensor<3xf64>
    kiln.yield %s : tensor<3xf64>
  }
  %e = kiln.exp %r : tensor<3xf64>
  return %e : tensor<3xf64>
}
)"});
  // A cond in the body, on a predicate that alternates with the index:
  // its residuals are stored per iteration.
  cases.push_back({"cond_in_loop", R"(
func.func @cond_in_loop(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %r:2 = kiln.for 5 iterations (%x, %w) : (tensor<3xf64>, tensor<3xf64>) {
  ^bb0(%i: tensor<i64>, %h: tensor<3xf64>, %ww: tensor<3xf64>):
    %two = kiln.constant dense<2> : tensor<i64>
    %rem = kiln.div %i, %two : tensor<i64>
    %twice = kiln.mul %rem, %two : tensor<i64>
    %even = kiln.compare eq, %twice, %i : tensor<i64>
    %n = kiln.cond %even, (%h, %ww) : tensor<i1>, (tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>) {
    ^bb0(%a: tensor<3xf64>, %b: tensor<3xf64>):
      %t = kiln.tanh %a : tensor<3xf64>
      %m = kiln.mul %t, %b : tensor<3xf64>
      kiln.yield %m : tensor<3xf64>
    } else {
    ^bb0(%a: tensor<3xf64>, %b: tensor<3xf64>):
      %s = kiln.sin %a : tensor<3xf64>
      %m = kiln.add %s, %b : tensor<3xf64>
      kiln.yield %m : tensor<3xf64>
    }
    kiln.yield %n, %ww : tensor<3xf64>, tensor<3xf64>
  }
  return %r#0 : tensor<3xf64>
}
)"});
  // A loop in a loop: the inner loop's buffers are stored per outer
  // iteration.
  cases.push_back({"nested_loops", R"(
func.func @nested_loops(%x: tensor<2xf64>, %w: tensor<2xf64>) -> tensor<2xf64> {
  %r:2 = kiln.for 3 iterations (%x, %w) : (tensor<2xf64>, tensor<2xf64>) {
  ^bb0(%i: tensor<i64>, %h: tensor<2xf64>, %ww: tensor<2xf64>):
    %inner:2 = kiln.for 2 iterations (%h, %ww) : (tensor<2xf64>, tensor<2xf64>) {
    ^bb0(%j: tensor<i64>, %g: tensor<2xf64>, %v: tensor<2xf64>):
      %m = kiln.mul %g, %v : tensor<2xf64>
      %s = kiln.sin %m : tensor<2xf64>
      %a = kiln.add %s, %g : tensor<2xf64>
      kiln.yield %a, %v : tensor<2xf64>, tensor<2xf64>
    }
    %t = kiln.tanh %inner#0 : tensor<2xf64>
    kiln.yield %t, %ww : tensor<2xf64>, tensor<2xf64>
  }
  return %r#0 : tensor<2xf64>
}
)"});
  // A loop in a cond branch: its buffers become residuals of the cond.
  cases.push_back({"loop_in_cond", R"(
func.func @loop_in_cond(%p: tensor<i1>, %x: tensor<3xf64>) -> tensor<3xf64> {
  %r = kiln.cond %p, (%x) : tensor<i1>, (tensor<3xf64>) -> (tensor<3xf64>) {
  ^bb0(%a: tensor<3xf64>):
    %l = kiln.for 3 iterations (%a) : (tensor<3xf64>) {
    ^bb0(%i: tensor<i64>, %h: tensor<3xf64>):
      %c = kiln.cos %h : tensor<3xf64>
      %m = kiln.mul %c, %h : tensor<3xf64>
      kiln.yield %m : tensor<3xf64>
    }
    kiln.yield %l : tensor<3xf64>
  } else {
  ^bb0(%a: tensor<3xf64>):
    %e = kiln.exp %a : tensor<3xf64>
    kiln.yield %e : tensor<3xf64>
  }
  return %r : tensor<3xf64>
}
)"});
  return cases;
}

GradientSuite &loopSuite() {
  static std::unique_ptr<GradientSuite> suite = buildCaseSuite(loopCases());
  return *suite;
}

class LoopGradient : public ::testing::TestWithParam<FunctionCase> {};

TEST_P(LoopGradient, MatchesFiniteDifferences) {
  checkCase(loopSuite(), GetParam());
}

TEST_P(LoopGradient, JvpMatchesFiniteDifferencesAndVjp) {
  checkJvpCase(loopSuite(), GetParam());
}

TEST_P(LoopGradient, VmapMatchesEachLane) {
  checkVmapCase(loopSuite(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    For, LoopGradient, ::testing::ValuesIn(loopCases()),
    [](const ::testing::TestParamInfo<FunctionCase> &info) {
      return info.param.name;
    });

/// The forward loop stores only what changes between iterations, and the
/// weights it carries unchanged reach the backward loop as a carried value.
TEST(LoopGradientStructure, StoresOnlyWhatChanges) {
  GradientSuite &suite = loopSuite();
  ASSERT_EQ(suite.error(), "");
  mlir::func::FuncOp grad = suite.lookup("rnn_grad");
  ASSERT_TRUE(grad);
  std::vector<mlir::kiln::ForOp> loops;
  for (auto loop : grad.getBody().front().getOps<mlir::kiln::ForOp>())
    loops.push_back(loop);
  ASSERT_EQ(loops.size(), 2u);
  mlir::kiln::ForOp forward = loops[0], backward = loops[1];
  // h, W, xs, then two [5, 1, 4] buffers: tanh(a) and the reshaped h.
  ASSERT_EQ(forward.getNumResults(), 5u);
  for (unsigned k = 3; k < 5; ++k)
    EXPECT_EQ(forward.getResult(k).getType(),
              mlir::RankedTensorType::get(
                  {5, 1, 4}, mlir::Float64Type::get(grad.getContext())));
  // The backward loop carries W itself (the function's argument), not a
  // per-iteration copy.
  EXPECT_TRUE(llvm::is_contained(backward.getInits(), grad.getArgument(1)));

  // cos(w) / 2 is recomputed, not stored: two buffers, for h (read by the
  // rule of sin) and sin(h) (read by the rule of the product).
  mlir::func::FuncOp invariant = suite.lookup("invariant_subexpression_grad");
  ASSERT_TRUE(invariant);
  auto loop = *invariant.getBody().front().getOps<mlir::kiln::ForOp>().begin();
  EXPECT_EQ(loop.getNumResults(), 4u);
}

} // namespace
