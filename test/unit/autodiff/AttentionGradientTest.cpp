//===- AttentionGradientTest.cpp - Finite-difference checks of attention --===//
//
// The VJP rule of kiln.attention (a kiln.attention_grad that recomputes the
// softmax from the saved lse) on f64 attentions: several heads with
// Nq != Nk and Dv != D, causal masks where Nq < Nk and Nq > Nk, and an
// additive mask broadcast over the leading dims with -inf entries, used
// together with causal. Each derived gradient runs in the reference
// evaluator and as native code (kiln-decompose-attention's composition)
// and is compared with central finite differences of the forward. The JVP
// rule (which forms the scores) is checked on the same cases, and so is the
// batched gradient (per-example gradients), and, since
// forward mode can differentiate through the mask, on a mask that is an
// argument.
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include <gtest/gtest.h>

using namespace kiln::autodiff_test;

namespace {

std::vector<FunctionCase> attentionCases() {
  std::vector<FunctionCase> cases;
  // The loss weights the outputs unevenly so that every output element's
  // cotangent differs.
  cases.push_back({"heads", R"(
func.func @heads(%q: tensor<2x3x4x3xf64>, %k: tensor<2x3x5x3xf64>, %v: tensor<2x3x5x2xf64>) -> tensor<f64> {
  %o, %lse = kiln.attention %q, %k, %v {scale = 0.7 : f64} : tensor<2x3x4x3xf64>, tensor<2x3x5x3xf64>, tensor<2x3x5x2xf64>
  %s = kiln.sin %o : tensor<2x3x4x2xf64>
  %m = kiln.mul %s, %o : tensor<2x3x4x2xf64>
  %l = kiln.reduce_sum %m, dims = [0, 1, 2, 3] : tensor<2x3x4x2xf64>
  return %l : tensor<f64>
}
)"});
  cases.push_back({"causal_fewer_queries", R"(
func.func @causal_fewer_queries(%q: tensor<3x4xf64>, %k: tensor<6x4xf64>, %v: tensor<6x3xf64>) -> tensor<f64> {
  %o, %lse = kiln.attention %q, %k, %v {causal, scale = 0.5 : f64} : tensor<3x4xf64>, tensor<6x4xf64>, tensor<6x3xf64>
  %s = kiln.sin %o : tensor<3x3xf64>
  %m = kiln.mul %s, %o : tensor<3x3xf64>
  %l = kiln.reduce_sum %m, dims = [0, 1] : tensor<3x3xf64>
  return %l : tensor<f64>
}
)"});
  cases.push_back({"causal_more_queries", R"(
func.func @causal_more_queries(%q: tensor<2x6x2xf64>, %k: tensor<2x4x2xf64>, %v: tensor<2x4x2xf64>) -> tensor<f64> {
  %o, %lse = kiln.attention %q, %k, %v {causal, scale = 1.3 : f64} : tensor<2x6x2xf64>, tensor<2x4x2xf64>, tensor<2x4x2xf64>
  %s = kiln.sin %o : tensor<2x6x2xf64>
  %m = kiln.mul %s, %o : tensor<2x6x2xf64>
  %l = kiln.reduce_sum %m, dims = [0, 1, 2] : tensor<2x6x2xf64>
  return %l : tensor<f64>
}
)"});
  // A key-padding mask (key 3 masked for batch 0) plus a finite bias,
  // broadcast over the queries, with causal on top.
  cases.push_back({"masked_causal", R"(
func.func @masked_causal(%q: tensor<2x4x3xf64>, %k: tensor<2x5x3xf64>, %v: tensor<2x5x2xf64>) -> tensor<f64> {
  %mask = kiln.constant dense<[[[0.0, 0.5, -1.0, 0xFFF0000000000000, 0.25]], [[0.3, 0.0, 0.0, -0.7, 1.0]]]> : tensor<2x1x5xf64>
  %o, %lse = kiln.attention %q, %k, %v mask %mask {causal, scale = 0.8 : f64} : tensor<2x4x3xf64>, tensor<2x5x3xf64>, tensor<2x5x2xf64>, tensor<2x1x5xf64>
  %s = kiln.sin %o : tensor<2x4x2xf64>
  %m = kiln.mul %s, %o : tensor<2x4x2xf64>
  %l = kiln.reduce_sum %m, dims = [0, 1, 2] : tensor<2x4x2xf64>
  return %l : tensor<f64>
}
)"});
  return cases;
}

/// All cases in one module, differentiated and compiled once.
GradientSuite &attentionSuite() {
  static std::unique_ptr<GradientSuite> suite =
      buildCaseSuite(attentionCases());
  return *suite;
}

class AttentionGradient : public ::testing::TestWithParam<FunctionCase> {};

TEST_P(AttentionGradient, MatchesFiniteDifferences) {
  checkCase(attentionSuite(), GetParam());
}

TEST_P(AttentionGradient, JvpMatchesFiniteDifferencesAndVjp) {
  checkJvpCase(attentionSuite(), GetParam());
}

TEST_P(AttentionGradient, VmapMatchesEachLane) {
  checkVmapCase(attentionSuite(), GetParam());
}

/// Per-example gradients: vmap of each case's gradient (q, k, v and the
/// cotangent all mapped), a batched kiln.attention_grad.
TEST_P(AttentionGradient, VmapOfGradientMatchesEachLane) {
  const std::vector<int64_t> axes = {0, 0, 0, 0};
  static std::unique_ptr<GradientSuite> suite =
      buildGradientVmapSuite(attentionCases(), axes);
  checkGradientVmapCase(*suite, GetParam(), axes);
}

INSTANTIATE_TEST_SUITE_P(
    Attention, AttentionGradient, ::testing::ValuesIn(attentionCases()),
    [](const ::testing::TestParamInfo<FunctionCase> &info) {
      return info.param.name;
    });

/// The derived gradient uses the fused backward, not the softmax's own
/// rules: one kiln.attention_grad and no N x N softmax in the module.
TEST(AttentionGradientStructure, BackwardIsOneAttentionGrad) {
  GradientSuite &suite = attentionSuite();
  ASSERT_EQ(suite.error(), "");
  mlir::func::FuncOp grad = suite.lookup("heads_grad");
  ASSERT_TRUE(grad);
  unsigned grads = 0, exps = 0;
  grad.walk([&](mlir::Operation *op) {
    grads += op->getName().getStringRef() == "kiln.attention_grad";
    exps += op->getName().getStringRef() == "kiln.exp";
  });
  EXPECT_EQ(grads, 1u);
  EXPECT_EQ(exps, 0u);
}

/// The JVP with respect to the mask too (the VJP refuses the mask), and
/// through the lse result, against finite differences.
TEST(AttentionJvp, ThroughTheMaskAndLse) {
  GradientSuite suite(R"(
func.func @mask_argument(%q: tensor<2x3x4xf64>, %k: tensor<2x5x4xf64>, %v: tensor<2x5x2xf64>, %mask: tensor<2x1x5xf64>) -> (tensor<2x3x2xf64>, tensor<2x3xf64>) {
  %o, %lse = kiln.attention %q, %k, %v mask %mask {causal, scale = 0.6 : f64} : tensor<2x3x4xf64>, tensor<2x5x4xf64>, tensor<2x5x2xf64>, tensor<2x1x5xf64>
  return %o, %lse : tensor<2x3x2xf64>, tensor<2x3xf64>
}
)",
                      {{"mask_argument", "mask_argument_jvp", {}, false, 0,
                        /*forward=*/true}});
  ASSERT_EQ(suite.error(), "");
  JvpCheck check;
  check.function = "mask_argument";
  check.jvp = "mask_argument_jvp";
  check.wrt = {0, 1, 2, 3};
  reportErrors("mask_argument", checkJvp(suite, check));
}

} // namespace
