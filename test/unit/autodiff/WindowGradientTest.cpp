//===- WindowGradientTest.cpp - Gradients of pad and pooling --------------===//
//
// Finite-difference checks of the VJP rules of kiln.pad and
// kiln.reduce_window (max pooling through kiln.reduce_window_max_grad, sum
// and average pooling through a strided reduce_window sum): strides,
// padding, dilation, overlapping windows, windows entirely in the padding,
// 1-d, 2-d and 3-d. f64, random inputs (so that window maxima are unique)
// and random cotangents; each derived gradient runs in the reference
// evaluator and as native code.
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include <gtest/gtest.h>

using namespace kiln::autodiff_test;

namespace {

/// @<name>(%x: tensor<SHAPE>) = reduce_window <kind> of sin(x) (so that the
/// function is not linear in x) with the given attributes.
FunctionCase pool(const std::string &name, const std::string &kind,
                  const std::string &shape, const std::string &resultShape,
                  const std::string &attributes) {
  std::string in = "tensor<" + shape + "xf64>";
  std::string out = "tensor<" + resultShape + "xf64>";
  return {name, "func.func @" + name + "(%x: " + in + ") -> " + out + " {\n"
                "  %s = kiln.sin %x : " + in + "\n"
                "  %r = kiln.reduce_window %s, kind = " + kind + ", " +
                    attributes + " : " + in + "\n"
                "  return %r : " + out + "\n}\n"};
}

std::vector<FunctionCase> windowCases() {
  std::vector<FunctionCase> cases = {
      // 3x3 windows with stride 2 overlap by one row and column.
      pool("max_pool_2d", "max", "1x2x6x6", "1x2x3x3",
           "window = [1, 1, 3, 3], strides = [1, 1, 2, 2], "
           "padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], "
           "dilations = [1, 1, 1, 1]"),
      // Stride 1: each element is in up to nine windows.
      pool("max_pool_stride1", "max", "5x5", "3x3",
           "window = [3, 3], strides = [1, 1], padding_low = [0, 0], "
           "padding_high = [0, 0], dilations = [1, 1]"),
      pool("max_pool_1d_dilated", "max", "11", "5",
           "window = [3], strides = [2], padding_low = [1], "
           "padding_high = [2], dilations = [2]"),
      pool("max_pool_3d", "max", "2x5x5x4", "2x5x3x3",
           "window = [1, 2, 2, 2], strides = [1, 1, 2, 1], "
           "padding_low = [0, 1, 0, 1], padding_high = [0, 0, 1, 0], "
           "dilations = [1, 1, 1, 2]"),
      pool("sum_pool_2d", "sum", "1x2x7x7", "1x2x4x4",
           "window = [1, 1, 3, 3], strides = [1, 1, 2, 2], "
           "padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], "
           "dilations = [1, 1, 1, 1]"),
      pool("sum_pool_1d_dilated", "sum", "13", "5",
           "window = [3], strides = [3], padding_low = [4], "
           "padding_high = [1], dilations = [2]"),
      pool("sum_pool_windows_in_padding", "sum", "3", "5",
           "window = [2], strides = [2], padding_low = [4], "
           "padding_high = [3], dilations = [1]"),
      // Stride larger than the window: some elements are in no window.
      pool("sum_pool_gaps", "sum", "2x9", "2x3",
           "window = [1, 2], strides = [1, 4], padding_low = [0, 0], "
           "padding_high = [0, 1], dilations = [1, 1]"),
      pool("sum_pool_3d", "sum", "2x4x5x4", "2x2x5x2",
           "window = [1, 2, 2, 3], strides = [1, 2, 1, 2], "
           "padding_low = [0, 0, 1, 1], padding_high = [0, 1, 0, 1], "
           "dilations = [1, 1, 1, 1]"),
  };
  // The first two and the last window lie entirely in the padding and give
  // -inf, which a max with -5 replaces (finite differences of -inf are
  // NaN); their cotangent reaches nothing.
  cases.push_back({"max_pool_windows_in_padding", R"(
func.func @max_pool_windows_in_padding(%x: tensor<3xf64>) -> tensor<5xf64> {
  %s = kiln.sin %x : tensor<3xf64>
  %r = kiln.reduce_window %s, kind = max, window = [2], strides = [2], padding_low = [4], padding_high = [3], dilations = [1] : tensor<3xf64>
  %floor = kiln.constant dense<-5.0> : tensor<5xf64>
  %m = kiln.max %r, %floor : tensor<5xf64>
  return %m : tensor<5xf64>
}
)"});
  // Average pooling (count_include_pad = false): the sum divided by the
  // number of elements inside the operand, a sum pool of ones.
  cases.push_back({"avg_pool_2d", R"(
func.func @avg_pool_2d(%x: tensor<1x2x6x6xf64>) -> tensor<1x2x3x3xf64> {
  %e = kiln.exp %x : tensor<1x2x6x6xf64>
  %s = kiln.reduce_window %e, kind = sum, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<1x2x6x6xf64>
  %ones = kiln.constant dense<1.0> : tensor<1x2x6x6xf64>
  %n = kiln.reduce_window %ones, kind = sum, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<1x2x6x6xf64>
  %a = kiln.div %s, %n : tensor<1x2x3x3xf64>
  return %a : tensor<1x2x3x3xf64>
}
)"});
  // Pad with interior elements; both the operand and the padding value
  // get gradients.
  cases.push_back({"pad_interior", R"(
func.func @pad_interior(%x: tensor<2x3xf64>, %v: tensor<f64>) -> tensor<4x9xf64> {
  %p = kiln.pad %x, %v, low = [1, 0], high = [0, 2], interior = [1, 2] : tensor<2x3xf64>, tensor<f64>
  %s = kiln.sin %p : tensor<4x9xf64>
  %r = kiln.mul %s, %p : tensor<4x9xf64>
  return %r : tensor<4x9xf64>
}
)"});
  // ONNX-style explicit padding before a max pool, 1-d and 3-d pads.
  cases.push_back({"pad_then_max_pool", R"(
func.func @pad_then_max_pool(%x: tensor<5xf64>, %v: tensor<f64>) -> tensor<4xf64> {
  %p = kiln.pad %x, %v, low = [2], high = [1], interior = [0] : tensor<5xf64>, tensor<f64>
  %r = kiln.reduce_window %p, kind = max, window = [3], strides = [2], padding_low = [0], padding_high = [0], dilations = [1] : tensor<8xf64>
  %y = kiln.mul %r, %r : tensor<3xf64>
  %c = kiln.concat %y, %r dim = 0 : tensor<3xf64>, tensor<3xf64>
  %o = kiln.slice %c, start = [1], limit = [5], stride = [1] : tensor<6xf64>
  return %o : tensor<4xf64>
}
)"});
  cases.push_back({"pad_3d", R"(
func.func @pad_3d(%x: tensor<2x1x3xf64>, %v: tensor<f64>) -> tensor<3x4x5xf64> {
  %p = kiln.pad %x, %v, low = [0, 1, 0], high = [1, 2, 0], interior = [0, 3, 1] : tensor<2x1x3xf64>, tensor<f64>
  %e = kiln.exp %p : tensor<3x4x5xf64>
  return %e : tensor<3x4x5xf64>
}
)"});
  return cases;
}

GradientSuite &windowSuite() {
  static std::unique_ptr<GradientSuite> suite = buildCaseSuite(windowCases());
  return *suite;
}

class WindowGradient : public ::testing::TestWithParam<FunctionCase> {};

TEST_P(WindowGradient, MatchesFiniteDifferences) {
  checkCase(windowSuite(), GetParam());
}

TEST_P(WindowGradient, JvpMatchesFiniteDifferencesAndVjp) {
  checkJvpCase(windowSuite(), GetParam());
}

TEST_P(WindowGradient, VmapMatchesEachLane) {
  checkVmapCase(windowSuite(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Ops, WindowGradient, ::testing::ValuesIn(windowCases()),
    [](const ::testing::TestParamInfo<FunctionCase> &info) {
      return info.param.name;
    });

} // namespace
