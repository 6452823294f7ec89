//===- ConvGradientTest.cpp - Finite-difference checks of conv and reverse ===//
//
// The VJP rules of kiln.conv (the gradient with respect to the input is a
// convolution with lhs_dilation and a reversed kernel, the one with respect
// to the weight a convolution of the input by the cotangent) and of
// kiln.reverse, on f64 convolutions covering each attribute: strides with
// padding, dilated kernels, groups, depthwise, input dilation (transposed
// convolution) with padding below and above the dilated kernel's reach, and
// 1-d and 3-d. Each derived gradient runs in the reference evaluator and as
// native code and is compared with central finite differences.
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include <gtest/gtest.h>

using namespace kiln::autodiff_test;

namespace {

/// @<name>(%x: <input>, %w: <weight>) -> <result> computing one kiln.conv
/// with the given attribute text (strides = ..., groups = ...).
FunctionCase convCase(const std::string &name, const std::string &input,
                      const std::string &weight, const std::string &result,
                      const std::string &attributes) {
  return {name, "func.func @" + name + "(%x: " + input + ", %w: " + weight +
                    ") -> " + result + " {\n  %y = kiln.conv %x, %w, " +
                    attributes + " : " + input + ", " + weight +
                    "\n  return %y : " + result + "\n}\n"};
}

std::vector<FunctionCase> convCases() {
  std::vector<FunctionCase> cases;
  cases.push_back(convCase(
      "stride2_padded", "tensor<2x3x7x6xf64>", "tensor<4x3x3x3xf64>",
      "tensor<2x4x4x3xf64>",
      "strides = [2, 2], padding_low = [1, 1], padding_high = [1, 0], "
      "lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1"));
  cases.push_back(convCase(
      "dilation2", "tensor<1x2x7x7xf64>", "tensor<3x2x3x2xf64>",
      "tensor<1x3x4x3xf64>",
      "strides = [1, 2], padding_low = [1, 0], padding_high = [0, 1], "
      "lhs_dilation = [1, 1], rhs_dilation = [2, 2], groups = 1"));
  cases.push_back(convCase(
      "groups2", "tensor<2x4x5x5xf64>", "tensor<6x2x3x3xf64>",
      "tensor<2x6x5x5xf64>",
      "strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], "
      "lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 2"));
  cases.push_back(convCase(
      "depthwise", "tensor<1x3x6x6xf64>", "tensor<3x1x3x3xf64>",
      "tensor<1x3x3x3xf64>",
      "strides = [2, 2], padding_low = [1, 1], padding_high = [1, 1], "
      "lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 3"));
  // A transposed convolution: input dilation 2.
  cases.push_back(convCase(
      "conv1d_lhs_dilation", "tensor<2x2x5xf64>", "tensor<3x2x3xf64>",
      "tensor<2x3x10xf64>",
      "strides = [1], padding_low = [2], padding_high = [1], "
      "lhs_dilation = [2], rhs_dilation = [1], groups = 1"));
  // Padding beyond the kernel's reach (padding_low > K - 1): the input
  // gradient is a full convolution and a slice.
  cases.push_back(convCase(
      "conv1d_wide_padding", "tensor<1x2x4xf64>", "tensor<2x2x3xf64>",
      "tensor<1x2x9xf64>",
      "strides = [1], padding_low = [4], padding_high = [3], "
      "lhs_dilation = [1], rhs_dilation = [1], groups = 1"));
  // Everything at once in 1-d: input and kernel dilation, stride, groups.
  cases.push_back(convCase(
      "conv1d_all", "tensor<1x4x4xf64>", "tensor<2x2x3xf64>",
      "tensor<1x2x2xf64>",
      "strides = [2], padding_low = [1], padding_high = [0], "
      "lhs_dilation = [2], rhs_dilation = [2], groups = 2"));
  cases.push_back(convCase(
      "conv3d", "tensor<1x2x4x4x3xf64>", "tensor<2x2x2x3x2xf64>",
      "tensor<1x2x4x2x2xf64>",
      "strides = [1, 2, 1], padding_low = [1, 1, 0], "
      "padding_high = [0, 1, 1], lhs_dilation = [1, 1, 1], "
      "rhs_dilation = [1, 1, 2], groups = 1"));
  cases.push_back({"reverse", R"(
func.func @reverse(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %r = kiln.reverse %x, dims = [1, 0] : tensor<3x4xf64>
  %s = kiln.sin %r : tensor<3x4xf64>
  %m = kiln.mul %s, %x : tensor<3x4xf64>
  return %m : tensor<3x4xf64>
}
)"});
  // A small convolutional network: conv, relu-free nonlinearity, a second
  // conv with stride and groups, and a scalar loss.
  cases.push_back({"two_layers", R"(
func.func @two_layers(%x: tensor<2x2x6x6xf64>, %w1: tensor<4x2x3x3xf64>, %w2: tensor<4x2x2x2xf64>) -> tensor<f64> {
  %h = kiln.conv %x, %w1, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x2x6x6xf64>, tensor<4x2x3x3xf64>
  %t = kiln.tanh %h : tensor<2x4x6x6xf64>
  %y = kiln.conv %t, %w2, strides = [2, 2], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 2 : tensor<2x4x6x6xf64>, tensor<4x2x2x2xf64>
  %yy = kiln.mul %y, %y : tensor<2x4x3x3xf64>
  %l = kiln.reduce_sum %yy, dims = [0, 1, 2, 3] : tensor<2x4x3x3xf64>
  return %l : tensor<f64>
}
)"});
  return cases;
}

/// All cases in one module, differentiated and compiled once.
GradientSuite &convSuite() {
  static std::unique_ptr<GradientSuite> suite = buildCaseSuite(convCases());
  return *suite;
}

class ConvGradient : public ::testing::TestWithParam<FunctionCase> {};

TEST_P(ConvGradient, MatchesFiniteDifferences) {
  checkCase(convSuite(), GetParam());
}

TEST_P(ConvGradient, JvpMatchesFiniteDifferencesAndVjp) {
  checkJvpCase(convSuite(), GetParam());
}

TEST_P(ConvGradient, VmapMatchesEachLane) {
  checkVmapCase(convSuite(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Conv, ConvGradient, ::testing::ValuesIn(convCases()),
    [](const ::testing::TestParamInfo<FunctionCase> &info) {
      return info.param.name;
    });

} // namespace
