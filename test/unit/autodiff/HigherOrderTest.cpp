//===- HigherOrderTest.cpp - Gradients of gradients -----------------------===//
//
// The derived gradient is ordinary kiln IR, so it can be differentiated
// again (elementwise compositions, a cond, and a kiln.for loop). For each function f, `f_grad(x, dy) -> (y, dx)` is derived, then
// `f_grad_grad` from f_grad with respect to x. The second-order VJP is
// checked against central finite differences of f_grad (the first
// derivative), evaluated by the reference evaluator, and in native code;
// one case is also compared with its closed-form second derivative. The
// forward-over-reverse form, `f_grad_jvp`, is checked against the same
// differences and against f_grad_grad.
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include "kiln/Compiler/HostTensor.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace kiln::autodiff_test;

namespace {

struct SecondOrderCase {
  std::string name;
  std::string source;
  std::map<unsigned, Domain> domains = {};
};

void PrintTo(const SecondOrderCase &c, std::ostream *os) { *os << c.name; }

std::vector<SecondOrderCase> secondOrderCases() {
  return {
      {"sin_times_x", R"(
func.func @sin_times_x(%x: tensor<5xf64>) -> tensor<5xf64> {
  %s = kiln.sin %x : tensor<5xf64>
  %r = kiln.mul %s, %x : tensor<5xf64>
  return %r : tensor<5xf64>
}
)"},
      {"exp_tanh", R"(
func.func @exp_tanh(%x: tensor<5xf64>) -> tensor<5xf64> {
  %t = kiln.tanh %x : tensor<5xf64>
  %r = kiln.exp %t : tensor<5xf64>
  return %r : tensor<5xf64>
}
)"},
      {"cube", R"(
func.func @cube(%x: tensor<5xf64>) -> tensor<5xf64> {
  %s = kiln.mul %x, %x : tensor<5xf64>
  %r = kiln.mul %s, %x : tensor<5xf64>
  return %r : tensor<5xf64>
}
)"},
      {"rsqrt_cos", R"(
func.func @rsqrt_cos(%x: tensor<5xf64>) -> tensor<5xf64> {
  %s = kiln.mul %x, %x : tensor<5xf64>
  %one = kiln.constant dense<1.0> : tensor<5xf64>
  %t = kiln.add %s, %one : tensor<5xf64>
  %r = kiln.rsqrt %t : tensor<5xf64>
  %c = kiln.cos %x : tensor<5xf64>
  %o = kiln.mul %r, %c : tensor<5xf64>
  return %o : tensor<5xf64>
}
)"},
      {"sigmoid_over_log", R"(
func.func @sigmoid_over_log(%x: tensor<5xf64>) -> tensor<5xf64> {
  %s = kiln.sigmoid %x : tensor<5xf64>
  %l = kiln.log %x : tensor<5xf64>
  %r = kiln.div %s, %l : tensor<5xf64>
  return %r : tensor<5xf64>
}
)",
       {{0, Domain{2.0, 4.0}}}},
      // Mixed partials of a function of two arguments, reduced to a loss.
      {"two_arguments", R"(
func.func @two_arguments(%x: tensor<3xf64>, %y: tensor<3xf64>) -> tensor<f64> {
  %p = kiln.mul %x, %y : tensor<3xf64>
  %s = kiln.sin %p : tensor<3xf64>
  %xx = kiln.mul %x, %x : tensor<3xf64>
  %q = kiln.mul %xx, %y : tensor<3xf64>
  %t = kiln.add %s, %q : tensor<3xf64>
  %l = kiln.reduce_sum %t, dims = [0] : tensor<3xf64>
  return %l : tensor<f64>
}
)"},
      // Through a cond: the first-order gradient has a forward cond with
      // exported residuals and a backward cond, both differentiated again.
      {"cond_branches", R"(
func.func @cond_branches(%p: tensor<i1>, %x: tensor<4xf64>) -> tensor<4xf64> {
  %r = kiln.cond %p, (%x) : tensor<i1>, (tensor<4xf64>) -> (tensor<4xf64>) {
  ^bb0(%a: tensor<4xf64>):
    %s = kiln.sin %a : tensor<4xf64>
    %m = kiln.mul %s, %a : tensor<4xf64>
    kiln.yield %m : tensor<4xf64>
  } else {
  ^bb0(%a: tensor<4xf64>):
    %t = kiln.tanh %a : tensor<4xf64>
    %e = kiln.exp %t : tensor<4xf64>
    kiln.yield %e : tensor<4xf64>
  }
  return %r : tensor<4xf64>
}
)"},
      // Through a loop: the first-order gradient stores per-iteration
      // values with dynamic_update_slice and reads them back with
      // dynamic_slice; the second order differentiates both loops.
      {"loop", R"(
func.func @loop(%x: tensor<3xf64>, %w: tensor<3xf64>) -> tensor<3xf64> {
  %r:2 = kiln.for 4 iterations (%x, %w) : (tensor<3xf64>, tensor<3xf64>) {
  ^bb0(%i: tensor<i64>, %h: tensor<3xf64>, %ww: tensor<3xf64>):
    %s = kiln.sin %h : tensor<3xf64>
    %m = kiln.mul %s, %ww : tensor<3xf64>
    %a = kiln.add %m, %h : tensor<3xf64>
    kiln.yield %a, %ww : tensor<3xf64>, tensor<3xf64>
  }
  return %r#0 : tensor<3xf64>
}
)"},
  };
}

/// The arguments of f (and of f_grad, where they keep their positions)
/// that the second derivatives are taken with respect to.
std::vector<unsigned> secondOrderWrt(const SecondOrderCase &c) {
  if (c.name == "cond_branches")
    return {1};
  if (c.name == "two_arguments" || c.name == "loop")
    return {0, 1};
  return {0};
}

GradientSuite &secondOrderSuite() {
  static std::unique_ptr<GradientSuite> suite = [] {
    std::string source;
    std::vector<Derivation> derivations;
    for (const SecondOrderCase &c : secondOrderCases()) {
      source += c.source;
      derivations.push_back({c.name, c.name + "_grad", {}, false});
    }
    // Second derivatives with respect to f's float arguments, which keep
    // their positions in f_grad.
    for (const SecondOrderCase &c : secondOrderCases()) {
      std::vector<unsigned> wrt = secondOrderWrt(c);
      derivations.push_back({c.name + "_grad", c.name + "_grad_grad", wrt,
                             false});
      // Forward over reverse: the JVP of the gradient (Hessian-vector
      // products).
      derivations.push_back({c.name + "_grad", c.name + "_grad_jvp", wrt,
                             false, 0, /*forward=*/true});
    }
    return std::make_unique<GradientSuite>(source, derivations);
  }();
  return *suite;
}

class SecondOrder : public ::testing::TestWithParam<SecondOrderCase> {};

TEST_P(SecondOrder, MatchesFiniteDifferencesOfFirstDerivative) {
  const SecondOrderCase &c = GetParam();
  GradientSuite &suite = secondOrderSuite();
  ASSERT_EQ(suite.error(), "");
  // First, the first derivative itself.
  GradientCheck first;
  first.function = c.name;
  first.gradient = c.name + "_grad";
  first.wrt = floatArguments(suite.lookup(c.name));
  first.domains = c.domains;
  reportErrors(c.name + " (1st)", checkGradient(suite, first));
  // Then the derivative of f_grad with respect to x.
  GradientCheck second;
  second.function = c.name + "_grad";
  second.gradient = c.name + "_grad_grad";
  second.wrt = first.wrt;
  second.domains = c.domains;
  second.tolerance = 2e-6;
  reportErrors(c.name + " (2nd)", checkGradient(suite, second));
}

/// The JVP of f_grad (forward over reverse) against central differences of
/// f_grad along the tangent, and against f_grad_grad (reverse over
/// reverse): both are the same second derivative.
TEST_P(SecondOrder, ForwardOverReverseMatchesReverseOverReverse) {
  const SecondOrderCase &c = GetParam();
  GradientSuite &suite = secondOrderSuite();
  ASSERT_EQ(suite.error(), "");
  JvpCheck check;
  check.function = c.name + "_grad";
  check.jvp = c.name + "_grad_jvp";
  check.gradient = c.name + "_grad_grad";
  check.domains = c.domains;
  check.tolerance = 2e-6;
  check.wrt = secondOrderWrt(c);
  reportErrors(c.name + " (fwd-over-rev)", checkJvp(suite, check));
}

INSTANTIATE_TEST_SUITE_P(
    HigherOrder, SecondOrder, ::testing::ValuesIn(secondOrderCases()),
    [](const ::testing::TestParamInfo<SecondOrderCase> &info) {
      return info.param.name;
    });

/// With dy = 1 and the cotangents (0 for y, 1 for dx), the second-order
/// VJP of an elementwise f is f''(x): for sin(x) x, 2 cos(x) - x sin(x).
TEST(SecondOrderClosedForm, SinTimesX) {
  GradientSuite &suite = secondOrderSuite();
  ASSERT_EQ(suite.error(), "");
  mlir::func::FuncOp f = suite.lookup("sin_times_x");
  auto type = mlir::cast<mlir::RankedTensorType>(f.getArgumentTypes()[0]);
  kiln::HostTensor x = randomTensor(type, Domain{-3.0, 3.0}, 5, 0);
  auto filled = [&](double value) {
    kiln::HostTensor t(type.getElementType(), type.getShape());
    std::fill(t.f.begin(), t.f.end(), value);
    return t;
  };
  std::vector<kiln::HostTensor> inputs{x, filled(1.0), filled(0.0),
                                       filled(1.0)};
  for (auto results : {suite.evaluate("sin_times_x_grad_grad", inputs),
                       suite.runNative("sin_times_x_grad_grad", inputs)}) {
    ASSERT_EQ(results.size(), 3u);
    for (int64_t k = 0; k < x.numElements(); ++k) {
      double v = x.f[k];
      double want = 2 * std::cos(v) - v * std::sin(v);
      EXPECT_NEAR(results[2].f[k], want, 1e-12 * std::max(1.0, std::fabs(want)));
      EXPECT_NEAR(results[1].f[k], std::sin(v) + v * std::cos(v), 1e-12);
    }
  }
}

} // namespace
