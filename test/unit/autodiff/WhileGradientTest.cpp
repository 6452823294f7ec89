//===- WhileGradientTest.cpp - Gradients through kiln.while ---------------===//
//
// The forward kiln.while counts its trips and pushes what the backward loop
// reads onto stacks that grow at run time; the backward kiln.while pops
// them in reverse. These cases check, against finite differences and in
// native code: a trip count given by an argument (zero included), a trip
// count that depends on float data, a while in a cond, a cond in a while,
// a while in a while whose inner count depends on the outer counter, a
// for in a while and a while in a for; and that what does not change
// between iterations is not pushed.
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include "kiln/IR/KilnOps.h"

#include <gtest/gtest.h>

using namespace kiln::autodiff_test;

namespace {

std::vector<FunctionCase> whileCases() {
  std::vector<FunctionCase> cases;
  // h <- sin(h w) + h, n times; n is an argument, w is carried unchanged.
  const char *countFromArgument = R"(
func.func @NAME(%x: tensor<3xf64>, %w: tensor<3xf64>, %n: tensor<i64>) -> tensor<3xf64> {
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
)";
  auto named = [](std::string source, const std::string &name) {
    for (size_t at; (at = source.find("NAME")) != std::string::npos;)
      source.replace(at, 4, name);
    return source;
  };
  cases.push_back({"count_from_argument",
                   named(countFromArgument, "count_from_argument"),
                   {{2, Domain{1, 7}}}});
  cases.push_back({"zero_trips", named(countFromArgument, "zero_trips"),
                   {{2, Domain{0, 0}}}});
  // h <- 1.5 h + 0.1 sin(h w) until |h|^2 >= 50: the trip count depends on
  // the float inputs (5 to 9 trips on this domain).
  cases.push_back({"until_large", R"(
func.func @until_large(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<f64> {
  %r:2 = kiln.while (%x, %w) : (tensor<3xf64>, tensor<3xf64>) cond {
  ^bb0(%h: tensor<3xf64>, %ww: tensor<3xf64>):
    %sq = kiln.mul %h, %h : tensor<3xf64>
    %n = kiln.reduce_sum %sq, dims = [0] : tensor<3xf64>
    %limit = kiln.constant dense<50.0> : tensor<f64>
    %c = kiln.compare lt, %n, %limit : tensor<f64>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%h: tensor<3xf64>, %ww: tensor<3xf64>):
    %k = kiln.constant dense<1.5> : tensor<3xf64>
    %e = kiln.constant dense<0.1> : tensor<3xf64>
    %g = kiln.mul %h, %k : tensor<3xf64>
    %m = kiln.mul %h, %ww : tensor<3xf64>
    %s = kiln.sin %m : tensor<3xf64>
    %t = kiln.mul %s, %e : tensor<3xf64>
    %a = kiln.add %g, %t : tensor<3xf64>
    kiln.yield %a, %ww : tensor<3xf64>, tensor<3xf64>
  }
  %sq = kiln.mul %r#0, %r#1 : tensor<3xf64>
  %l = kiln.reduce_sum %sq, dims = [0] : tensor<3xf64>
  return %l : tensor<f64>
}
)",
                   {{0, Domain{0.5, 1.5}}, {1, Domain{-1.0, 1.0}}}});
  // A while in a cond branch: its counter and stacks are residuals of the
  // cond (the other branch exports an empty stack).
  cases.push_back({"while_in_cond", R"(
func.func @while_in_cond(%p: tensor<i1>, %x: tensor<3xf64>, %n: tensor<i64>) -> tensor<3xf64> {
  %r = kiln.cond %p, (%x, %n) : tensor<i1>, (tensor<3xf64>, tensor<i64>) -> (tensor<3xf64>) {
  ^bb0(%a: tensor<3xf64>, %m: tensor<i64>):
    %zero = kiln.constant dense<0> : tensor<i64>
    %l:3 = kiln.while (%a, %zero, %m) : (tensor<3xf64>, tensor<i64>, tensor<i64>) cond {
    ^bb0(%h: tensor<3xf64>, %k: tensor<i64>, %mm: tensor<i64>):
      %c = kiln.compare lt, %k, %mm : tensor<i64>
      kiln.yield %c : tensor<i1>
    } do {
    ^bb0(%h: tensor<3xf64>, %k: tensor<i64>, %mm: tensor<i64>):
      %c = kiln.cos %h : tensor<3xf64>
      %v = kiln.mul %c, %h : tensor<3xf64>
      %one = kiln.constant dense<1> : tensor<i64>
      %k1 = kiln.add %k, %one : tensor<i64>
      kiln.yield %v, %k1, %mm : tensor<3xf64>, tensor<i64>, tensor<i64>
    }
    kiln.yield %l#0 : tensor<3xf64>
  } else {
  ^bb0(%a: tensor<3xf64>, %m: tensor<i64>):
    %e = kiln.exp %a : tensor<3xf64>
    kiln.yield %e : tensor<3xf64>
  }
  return %r : tensor<3xf64>
}
)",
                   {{2, Domain{0, 5}}}});
  // A cond in the body on the parity of the counter: its residuals are
  // pushed per iteration.
  cases.push_back({"cond_in_while", R"(
func.func @cond_in_while(%x: tensor<3xf64>, %w: tensor<3xf64>, %n: tensor<i64>) -> tensor<3xf64> {
  %zero = kiln.constant dense<0> : tensor<i64>
  %r:4 = kiln.while (%x, %w, %zero, %n) : (tensor<3xf64>, tensor<3xf64>, tensor<i64>, tensor<i64>) cond {
  ^bb0(%h: tensor<3xf64>, %ww: tensor<3xf64>, %k: tensor<i64>, %nn: tensor<i64>):
    %c = kiln.compare lt, %k, %nn : tensor<i64>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%h: tensor<3xf64>, %ww: tensor<3xf64>, %k: tensor<i64>, %nn: tensor<i64>):
    %two = kiln.constant dense<2> : tensor<i64>
    %half = kiln.div %k, %two : tensor<i64>
    %twice = kiln.mul %half, %two : tensor<i64>
    %even = kiln.compare eq, %twice, %k : tensor<i64>
    %v = kiln.cond %even, (%h, %ww) : tensor<i1>, (tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>) {
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
    %one = kiln.constant dense<1> : tensor<i64>
    %k1 = kiln.add %k, %one : tensor<i64>
    kiln.yield %v, %ww, %k1, %nn : tensor<3xf64>, tensor<3xf64>, tensor<i64>, tensor<i64>
  }
  return %r#0 : tensor<3xf64>
}
)",
                   {{2, Domain{1, 6}}}});
  // A while in a while; the inner loop runs k + 1 times in outer iteration
  // k. The outer backward body recomputes the inner forward loop.
  cases.push_back({"nested_while", R"(
func.func @nested_while(%x: tensor<2xf64>, %w: tensor<2xf64>, %n: tensor<i64>) -> tensor<2xf64> {
  %zero = kiln.constant dense<0> : tensor<i64>
  %r:4 = kiln.while (%x, %w, %zero, %n) : (tensor<2xf64>, tensor<2xf64>, tensor<i64>, tensor<i64>) cond {
  ^bb0(%h: tensor<2xf64>, %ww: tensor<2xf64>, %k: tensor<i64>, %nn: tensor<i64>):
    %c = kiln.compare lt, %k, %nn : tensor<i64>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%h: tensor<2xf64>, %ww: tensor<2xf64>, %k: tensor<i64>, %nn: tensor<i64>):
    %one = kiln.constant dense<1> : tensor<i64>
    %k1 = kiln.add %k, %one : tensor<i64>
    %z = kiln.constant dense<0> : tensor<i64>
    %in:4 = kiln.while (%h, %ww, %z, %k1) : (tensor<2xf64>, tensor<2xf64>, tensor<i64>, tensor<i64>) cond {
    ^bb0(%g: tensor<2xf64>, %v: tensor<2xf64>, %j: tensor<i64>, %m: tensor<i64>):
      %c = kiln.compare lt, %j, %m : tensor<i64>
      kiln.yield %c : tensor<i1>
    } do {
    ^bb0(%g: tensor<2xf64>, %v: tensor<2xf64>, %j: tensor<i64>, %m: tensor<i64>):
      %p = kiln.mul %g, %v : tensor<2xf64>
      %s = kiln.sin %p : tensor<2xf64>
      %a = kiln.add %s, %g : tensor<2xf64>
      %o = kiln.constant dense<1> : tensor<i64>
      %j1 = kiln.add %j, %o : tensor<i64>
      kiln.yield %a, %v, %j1, %m : tensor<2xf64>, tensor<2xf64>, tensor<i64>, tensor<i64>
    }
    %t = kiln.tanh %in#0 : tensor<2xf64>
    kiln.yield %t, %ww, %k1, %nn : tensor<2xf64>, tensor<2xf64>, tensor<i64>, tensor<i64>
  }
  return %r#0 : tensor<2xf64>
}
)",
                   {{2, Domain{1, 4}}}});
  // A for in a while: the for's [2, ...] buffers are pushed per iteration.
  cases.push_back({"for_in_while", R"(
func.func @for_in_while(%x: tensor<2xf64>, %w: tensor<2xf64>, %n: tensor<i64>) -> tensor<2xf64> {
  %zero = kiln.constant dense<0> : tensor<i64>
  %r:4 = kiln.while (%x, %w, %zero, %n) : (tensor<2xf64>, tensor<2xf64>, tensor<i64>, tensor<i64>) cond {
  ^bb0(%h: tensor<2xf64>, %ww: tensor<2xf64>, %k: tensor<i64>, %nn: tensor<i64>):
    %c = kiln.compare lt, %k, %nn : tensor<i64>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%h: tensor<2xf64>, %ww: tensor<2xf64>, %k: tensor<i64>, %nn: tensor<i64>):
    %in:2 = kiln.for 2 iterations (%h, %ww) : (tensor<2xf64>, tensor<2xf64>) {
    ^bb0(%j: tensor<i64>, %g: tensor<2xf64>, %v: tensor<2xf64>):
      %p = kiln.mul %g, %v : tensor<2xf64>
      %s = kiln.cos %p : tensor<2xf64>
      %a = kiln.add %s, %g : tensor<2xf64>
      kiln.yield %a, %v : tensor<2xf64>, tensor<2xf64>
    }
    %t = kiln.tanh %in#0 : tensor<2xf64>
    %one = kiln.constant dense<1> : tensor<i64>
    %k1 = kiln.add %k, %one : tensor<i64>
    kiln.yield %t, %ww, %k1, %nn : tensor<2xf64>, tensor<2xf64>, tensor<i64>, tensor<i64>
  }
  return %r#0 : tensor<2xf64>
}
)",
                   {{2, Domain{1, 5}}}});
  // A while in a for: the for's backward body recomputes the inner loop.
  cases.push_back({"while_in_for", R"(
func.func @while_in_for(%x: tensor<2xf64>, %w: tensor<2xf64>, %n: tensor<i64>) -> tensor<2xf64> {
  %r:3 = kiln.for 3 iterations (%x, %w, %n) : (tensor<2xf64>, tensor<2xf64>, tensor<i64>) {
  ^bb0(%i: tensor<i64>, %h: tensor<2xf64>, %ww: tensor<2xf64>, %nn: tensor<i64>):
    %z = kiln.constant dense<0> : tensor<i64>
    %m = kiln.add %nn, %i : tensor<i64>
    %in:4 = kiln.while (%h, %ww, %z, %m) : (tensor<2xf64>, tensor<2xf64>, tensor<i64>, tensor<i64>) cond {
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
)",
                   {{2, Domain{0, 3}}}});
  return cases;
}

GradientSuite &whileSuite() {
  static std::unique_ptr<GradientSuite> suite = buildCaseSuite(whileCases());
  return *suite;
}

class WhileGradient : public ::testing::TestWithParam<FunctionCase> {};

TEST_P(WhileGradient, MatchesFiniteDifferences) {
  checkCase(whileSuite(), GetParam());
}

TEST_P(WhileGradient, JvpMatchesFiniteDifferencesAndVjp) {
  checkJvpCase(whileSuite(), GetParam());
}

TEST_P(WhileGradient, VmapMatchesEachLane) {
  checkVmapCase(whileSuite(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    While, WhileGradient, ::testing::ValuesIn(whileCases()),
    [](const ::testing::TestParamInfo<FunctionCase> &info) {
      return info.param.name;
    });

/// Per-example gradients through while loops: vmap of each case's gradient
/// with x (argument 0) and the cotangent mapped and the rest shared, so
/// that the trip count is the same in every lane and the stacks hold every
/// lane's values in one row. Against the gradient run lane by lane, by the
/// reference evaluator and in native code. (A cond on a mapped predicate
/// and a trip count computed from x make the trip count differ between
/// lanes; those are refused, lit vmap-invalid.mlir.)
std::vector<FunctionCase> perExampleCases() {
  std::vector<FunctionCase> cases;
  for (FunctionCase &c : whileCases())
    if (c.name != "while_in_cond" && c.name != "until_large")
      cases.push_back(c);
  return cases;
}

/// (x, w, n, cotangent): x and the cotangent mapped.
const std::vector<int64_t> kPerExampleAxes = {0, -1, -1, 0};

GradientSuite &perExampleSuite() {
  static std::unique_ptr<GradientSuite> suite =
      buildGradientVmapSuite(perExampleCases(), kPerExampleAxes);
  return *suite;
}

class PerExampleGradient : public ::testing::TestWithParam<FunctionCase> {};

TEST_P(PerExampleGradient, VmapOfGradientMatchesEachLane) {
  checkGradientVmapCase(perExampleSuite(), GetParam(), kPerExampleAxes);
}

INSTANTIATE_TEST_SUITE_P(
    While, PerExampleGradient, ::testing::ValuesIn(perExampleCases()),
    [](const ::testing::TestParamInfo<FunctionCase> &info) {
      return info.param.name;
    });

/// The forward loop pushes only what changes between iterations: w is
/// carried unchanged and reaches the backward loop once.
TEST(WhileGradientStructure, PushesOnlyWhatChanges) {
  GradientSuite &suite = whileSuite();
  ASSERT_EQ(suite.error(), "");
  mlir::func::FuncOp grad = suite.lookup("count_from_argument_grad");
  ASSERT_TRUE(grad);
  std::vector<mlir::kiln::WhileOp> loops;
  for (auto loop : grad.getBody().front().getOps<mlir::kiln::WhileOp>())
    loops.push_back(loop);
  ASSERT_EQ(loops.size(), 2u);
  mlir::kiln::WhileOp forward = loops[0], backward = loops[1];
  // h, w, k, n, the trip counter, then two stacks: h (read by the rule of
  // the product) and h w (read by the rule of sin). Not w.
  ASSERT_EQ(forward.getNumResults(), 7u);
  auto f64 = mlir::Float64Type::get(grad.getContext());
  auto stack = mlir::RankedTensorType::get({mlir::ShapedType::kDynamic, 3}, f64);
  for (unsigned k = 5; k < 7; ++k)
    EXPECT_EQ(forward.getResult(k).getType(), stack);
  // The backward loop starts at the trip count and carries w itself.
  EXPECT_EQ(backward.getInits()[0], forward.getResult(4));
  EXPECT_TRUE(llvm::is_contained(backward.getInits(), grad.getArgument(1)));
  // No op outside the loops reads the stacks.
  for (unsigned k = 5; k < 7; ++k)
    for (mlir::Operation *user : forward.getResult(k).getUsers())
      EXPECT_EQ(user, backward.getOperation());
}

} // namespace
