//===- OpGradientTest.cpp - Finite-difference check of every VJP rule -----===//
//
// One small f64 function per differentiable op (and a few compositions),
// differentiated with respect to all its float arguments. Each derived
// gradient is evaluated by the reference evaluator and by native code and
// compared with central finite differences of the function, on random
// inputs and random cotangents.
//
//===----------------------------------------------------------------------===//

#include "GradientCheck.h"

#include <gtest/gtest.h>

#include <tuple>

using namespace kiln::autodiff_test;

namespace {

/// `kiln.<op>` applied to (%a) or (%a, %b) of type tensor<3x4xf64>.
FunctionCase unary(const std::string &op, Domain domain = Domain()) {
  return {op,
          "func.func @" + op + "(%a: tensor<3x4xf64>) -> tensor<3x4xf64> {\n"
          "  %r = kiln." + op + " %a : tensor<3x4xf64>\n"
          "  return %r : tensor<3x4xf64>\n}\n",
          {{0, domain}}};
}

FunctionCase binary(const std::string &op, Domain lhs = Domain(),
              Domain rhs = Domain()) {
  return {op,
          "func.func @" + op +
              "(%a: tensor<3x4xf64>, %b: tensor<3x4xf64>) -> tensor<3x4xf64> {\n"
              "  %r = kiln." + op + " %a, %b : tensor<3x4xf64>\n"
              "  return %r : tensor<3x4xf64>\n}\n",
          {{0, lhs}, {1, rhs}}};
}

std::vector<FunctionCase> opCases() {
  Domain positive{0.2, 3.0};
  std::vector<FunctionCase> cases = {
      binary("add"), binary("sub"), binary("mul"),
      binary("div", Domain(), Domain{0.5, 2.0}), binary("max"), binary("min"),
      binary("pow", Domain{0.5, 2.0}, Domain{-2.0, 2.0}),
      unary("neg"), unary("abs"), unary("relu"), unary("exp"),
      unary("log", positive), unary("sqrt", positive),
      unary("rsqrt", positive), unary("tanh"), unary("sigmoid"),
      unary("sin"), unary("cos"), unary("erf"),
      unary("tan", Domain{-1.2, 1.2}), unary("asin", Domain{-0.9, 0.9}),
      unary("acos", Domain{-0.9, 0.9}), unary("atan"), unary("sinh"),
      unary("cosh"), unary("asinh"), unary("acosh", Domain{1.1, 3.0}),
      unary("atanh", Domain{-0.9, 0.9}),
      // Random points are almost surely away from the jumps of trunc(a/b).
      binary("rem", Domain{-3.0, 3.0}, Domain{0.7, 2.0}),
  };
  cases.push_back({"rem_negative_divisor", R"(
func.func @rem_negative_divisor(%a: tensor<3x4xf64>, %b: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %r = kiln.rem %a, %b : tensor<3x4xf64>
  return %r : tensor<3x4xf64>
}
)",
                   {{0, Domain{-3.0, 3.0}}, {1, Domain{-2.0, -0.7}}}});
  // floor, ceil, round and sign carry no gradient: d/dx of
  // x * (floor(x) + ceil(x) + round(x) + sign(x)) is the sum in parentheses.
  cases.push_back({"piecewise_constant", R"(
func.func @piecewise_constant(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %f = kiln.floor %x : tensor<3x4xf64>
  %c = kiln.ceil %x : tensor<3x4xf64>
  %r = kiln.round %x : tensor<3x4xf64>
  %s = kiln.sign %x : tensor<3x4xf64>
  %fc = kiln.add %f, %c : tensor<3x4xf64>
  %rs = kiln.add %r, %s : tensor<3x4xf64>
  %sum = kiln.add %fc, %rs : tensor<3x4xf64>
  %y = kiln.mul %x, %sum : tensor<3x4xf64>
  return %y : tensor<3x4xf64>
}
)",
                   {{0, Domain{-3.0, 3.0}}}});
  // argmax/argmin have integer results: the indices scale x but carry no
  // gradient themselves.
  cases.push_back({"arg_reduce_scales", R"(
func.func @arg_reduce_scales(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %i = kiln.argmax %x, dim = 1 : tensor<3x4xf64>
  %j = kiln.argmin %x, dim = 0 select_last_index : tensor<3x4xf64>
  %fi = kiln.cast %i : tensor<3xi64> to tensor<3xf64>
  %fj = kiln.cast %j : tensor<4xi64> to tensor<4xf64>
  %bi = kiln.broadcast_in_dim %fi, dims = [0] : (tensor<3xf64>) -> tensor<3x4xf64>
  %bj = kiln.broadcast_in_dim %fj, dims = [1] : (tensor<4xf64>) -> tensor<3x4xf64>
  %s = kiln.add %bi, %bj : tensor<3x4xf64>
  %y = kiln.mul %x, %s : tensor<3x4xf64>
  return %y : tensor<3x4xf64>
}
)"});
  // Masks combined with the bitwise ops select between varied values.
  cases.push_back({"bitwise_masks", R"(
func.func @bitwise_masks(%x: tensor<3x4xf64>, %y: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %zero = kiln.constant dense<0.0> : tensor<3x4xf64>
  %p = kiln.compare gt, %x, %zero : tensor<3x4xf64>
  %q = kiln.compare lt, %y, %zero : tensor<3x4xf64>
  %a = kiln.and %p, %q : tensor<3x4xi1>
  %o = kiln.or %p, %q : tensor<3x4xi1>
  %e = kiln.xor %a, %o : tensor<3x4xi1>
  %n = kiln.not %e : tensor<3x4xi1>
  %xy = kiln.mul %x, %y : tensor<3x4xf64>
  %s = kiln.sin %x : tensor<3x4xf64>
  %r = kiln.select %n, %xy, %s : tensor<3x4xi1>, tensor<3x4xf64>
  return %r : tensor<3x4xf64>
}
)"});
  // cumsum in its four directions, along each dimension, after a
  // nonlinearity so that every element's gradient differs.
  for (auto [name, flags, dim] :
       std::vector<std::tuple<std::string, std::string, int>>{
           {"cumsum", "", 1},
           {"cumsum_exclusive", "exclusive", 1},
           {"cumsum_reverse", "reverse", 0},
           {"cumsum_exclusive_reverse", "exclusive reverse", 0}}) {
    cases.push_back(
        {name, "func.func @" + name +
                   "(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {\n"
                   "  %s = kiln.sin %x : tensor<3x4xf64>\n"
                   "  %c = kiln.cumsum %s, dim = " + std::to_string(dim) + " " +
                   flags + " : tensor<3x4xf64>\n"
                   "  %y = kiln.mul %c, %x : tensor<3x4xf64>\n"
                   "  return %y : tensor<3x4xf64>\n}\n"});
  }
  cases.push_back({"select_elementwise", R"(
func.func @select_elementwise(%x: tensor<3x4xf64>, %y: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %p = kiln.compare gt, %x, %y : tensor<3x4xf64>
  %xx = kiln.mul %x, %x : tensor<3x4xf64>
  %s = kiln.sin %y : tensor<3x4xf64>
  %r = kiln.select %p, %xx, %s : tensor<3x4xi1>, tensor<3x4xf64>
  return %r : tensor<3x4xf64>
}
)"});
  cases.push_back({"select_rank0", R"(
func.func @select_rank0(%p: tensor<i1>, %x: tensor<5xf64>, %y: tensor<5xf64>) -> tensor<5xf64> {
  %e = kiln.exp %y : tensor<5xf64>
  %r = kiln.select %p, %x, %e : tensor<i1>, tensor<5xf64>
  %q = kiln.mul %r, %x : tensor<5xf64>
  return %q : tensor<5xf64>
}
)"});
  // f32 -> f64: the input is f32, so the step is coarse and the check loose.
  // Sorting moves each value's derivative with it; the indices carry none.
  // Random values are almost surely distinct.
  cases.push_back({"sort", R"(
func.func @sort(%x: tensor<3x4xf64>) -> (tensor<3x4xf64>, tensor<3x4xi64>) {
  %v, %i = kiln.sort %x, dim = 1 : tensor<3x4xf64>
  %w, %j = kiln.sort %x, dim = 0 descending : tensor<3x4xf64>
  %s = kiln.sin %w : tensor<3x4xf64>
  %m = kiln.mul %v, %s : tensor<3x4xf64>
  return %m, %i : tensor<3x4xf64>, tensor<3x4xi64>
}
)"});
  cases.push_back({"cast_f32_to_f64", R"(
func.func @cast_f32_to_f64(%x: tensor<6xf32>) -> tensor<6xf64> {
  %w = kiln.cast %x : tensor<6xf32> to tensor<6xf64>
  %r = kiln.exp %w : tensor<6xf64>
  return %r : tensor<6xf64>
}
)",
                   {},
                   1e-3,
                   1e-4});
  cases.push_back({"cast_f64_to_f32", R"(
func.func @cast_f64_to_f32(%x: tensor<6xf64>) -> tensor<6xf64> {
  %n = kiln.cast %x : tensor<6xf64> to tensor<6xf32>
  %s = kiln.sin %n : tensor<6xf32>
  %r = kiln.cast %s : tensor<6xf32> to tensor<6xf64>
  return %r : tensor<6xf64>
}
)",
                   {},
                   1e-3,
                   2e-4});
  // The integer path carries no gradient: d/dx (x * trunc(x)) = trunc(x).
  cases.push_back({"cast_through_int", R"(
func.func @cast_through_int(%x: tensor<8xf64>) -> tensor<8xf64> {
  %i = kiln.cast %x : tensor<8xf64> to tensor<8xi32>
  %t = kiln.cast %i : tensor<8xi32> to tensor<8xf64>
  %r = kiln.mul %x, %t : tensor<8xf64>
  return %r : tensor<8xf64>
}
)"});
  cases.push_back({"broadcast_scalar", R"(
func.func @broadcast_scalar(%s: tensor<f64>, %x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %b = kiln.broadcast_in_dim %s, dims = [] : (tensor<f64>) -> tensor<3x4xf64>
  %r = kiln.mul %b, %x : tensor<3x4xf64>
  return %r : tensor<3x4xf64>
}
)"});
  cases.push_back({"broadcast_row", R"(
func.func @broadcast_row(%v: tensor<4xf64>, %x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %b = kiln.broadcast_in_dim %v, dims = [1] : (tensor<4xf64>) -> tensor<3x4xf64>
  %r = kiln.mul %b, %x : tensor<3x4xf64>
  return %r : tensor<3x4xf64>
}
)"});
  cases.push_back({"broadcast_size1", R"(
func.func @broadcast_size1(%c: tensor<3x1xf64>, %x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %b = kiln.broadcast_in_dim %c, dims = [0, 1] : (tensor<3x1xf64>) -> tensor<3x4xf64>
  %t = kiln.tanh %b : tensor<3x4xf64>
  %r = kiln.mul %t, %x : tensor<3x4xf64>
  return %r : tensor<3x4xf64>
}
)"});
  cases.push_back({"broadcast_rank3", R"(
func.func @broadcast_rank3(%m: tensor<1x4xf64>, %x: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
  %b = kiln.broadcast_in_dim %m, dims = [1, 2] : (tensor<1x4xf64>) -> tensor<2x3x4xf64>
  %r = kiln.mul %b, %x : tensor<2x3x4xf64>
  return %r : tensor<2x3x4xf64>
}
)"});
  cases.push_back({"reshape", R"(
func.func @reshape(%x: tensor<3x4xf64>) -> tensor<2x6xf64> {
  %r = kiln.reshape %x : (tensor<3x4xf64>) -> tensor<2x6xf64>
  %s = kiln.sin %r : tensor<2x6xf64>
  return %s : tensor<2x6xf64>
}
)"});
  cases.push_back({"transpose", R"(
func.func @transpose(%x: tensor<2x3x4xf64>, %y: tensor<4x2x3xf64>) -> tensor<4x2x3xf64> {
  %t = kiln.transpose %x, permutation = [2, 0, 1] : tensor<2x3x4xf64>
  %r = kiln.mul %t, %y : tensor<4x2x3xf64>
  return %r : tensor<4x2x3xf64>
}
)"});
  cases.push_back({"slice_unit", R"(
func.func @slice_unit(%x: tensor<5x6xf64>) -> tensor<3x4xf64> {
  %s = kiln.slice %x, start = [1, 2], limit = [4, 6], stride = [1, 1] : tensor<5x6xf64>
  %r = kiln.exp %s : tensor<3x4xf64>
  return %r : tensor<3x4xf64>
}
)"});
  cases.push_back({"slice_strided", R"(
func.func @slice_strided(%x: tensor<7x9xf64>) -> tensor<3x3xf64> {
  %s = kiln.slice %x, start = [1, 2], limit = [7, 9], stride = [2, 3] : tensor<7x9xf64>
  %r = kiln.sin %s : tensor<3x3xf64>
  return %r : tensor<3x3xf64>
}
)"});
  cases.push_back({"slice_strided_tail", R"(
func.func @slice_strided_tail(%x: tensor<8x2xf64>) -> tensor<3x1xf64> {
  %s = kiln.slice %x, start = [0, 1], limit = [7, 2], stride = [3, 1] : tensor<8x2xf64>
  %r = kiln.mul %s, %s : tensor<3x1xf64>
  return %r : tensor<3x1xf64>
}
)"});
  cases.push_back({"concat", R"(
func.func @concat(%a: tensor<2x3xf64>, %b: tensor<2x1xf64>, %c: tensor<2x2xf64>, %w: tensor<2x6xf64>) -> tensor<2x6xf64> {
  %j = kiln.concat %a, %b, %c dim = 1 : tensor<2x3xf64>, tensor<2x1xf64>, tensor<2x2xf64>
  %r = kiln.mul %j, %w : tensor<2x6xf64>
  return %r : tensor<2x6xf64>
}
)"});
  cases.push_back({"reduce_sum_some", R"(
func.func @reduce_sum_some(%x: tensor<2x3x4xf64>) -> tensor<3xf64> {
  %s = kiln.sin %x : tensor<2x3x4xf64>
  %r = kiln.reduce_sum %s, dims = [0, 2] : tensor<2x3x4xf64>
  return %r : tensor<3xf64>
}
)"});
  cases.push_back({"reduce_sum_all", R"(
func.func @reduce_sum_all(%x: tensor<3x4xf64>) -> tensor<f64> {
  %s = kiln.mul %x, %x : tensor<3x4xf64>
  %r = kiln.reduce_sum %s, dims = [0, 1] : tensor<3x4xf64>
  return %r : tensor<f64>
}
)"});
  cases.push_back({"reduce_mean", R"(
func.func @reduce_mean(%x: tensor<3x4xf64>) -> tensor<3xf64> {
  %s = kiln.exp %x : tensor<3x4xf64>
  %r = kiln.reduce_mean %s, dims = [1] : tensor<3x4xf64>
  return %r : tensor<3xf64>
}
)"});
  cases.push_back({"reduce_max_rows", R"(
func.func @reduce_max_rows(%x: tensor<3x5xf64>) -> tensor<3xf64> {
  %r = kiln.reduce_max %x, dims = [1] : tensor<3x5xf64>
  %s = kiln.sin %r : tensor<3xf64>
  return %s : tensor<3xf64>
}
)"});
  cases.push_back({"reduce_max_all", R"(
func.func @reduce_max_all(%x: tensor<2x3x4xf64>) -> tensor<f64> {
  %r = kiln.reduce_max %x, dims = [0, 1, 2] : tensor<2x3x4xf64>
  return %r : tensor<f64>
}
)"});
  cases.push_back({"matmul_2d", R"(
func.func @matmul_2d(%a: tensor<3x4xf64>, %b: tensor<4x5xf64>) -> tensor<3x5xf64> {
  %r = kiln.matmul %a, %b : tensor<3x4xf64>, tensor<4x5xf64>
  return %r : tensor<3x5xf64>
}
)"});
  cases.push_back({"matmul_batched", R"(
func.func @matmul_batched(%a: tensor<2x3x4xf64>, %b: tensor<2x4x5xf64>) -> tensor<2x3x5xf64> {
  %r = kiln.matmul %a, %b : tensor<2x3x4xf64>, tensor<2x4x5xf64>
  %t = kiln.tanh %r : tensor<2x3x5xf64>
  return %t : tensor<2x3x5xf64>
}
)"});
  // Indices from -2 to 6 into 5 rows: repeated rows accumulate, and
  // out-of-range indices clamp to the first and last row.
  cases.push_back({"gather_rows", R"(
func.func @gather_rows(%t: tensor<5x3xf64>, %i: tensor<7xi64>) -> tensor<7x3xf64> {
  %g = kiln.gather %t, %i : tensor<5x3xf64>, tensor<7xi64>
  %r = kiln.mul %g, %g : tensor<7x3xf64>
  return %r : tensor<7x3xf64>
}
)",
                   {{1, Domain{-2, 6}}}});
  cases.push_back({"gather_rank2_indices", R"(
func.func @gather_rank2_indices(%t: tensor<6xf64>, %i: tensor<2x3xi32>) -> tensor<2x3xf64> {
  %g = kiln.gather %t, %i : tensor<6xf64>, tensor<2x3xi32>
  %r = kiln.exp %g : tensor<2x3xf64>
  return %r : tensor<2x3xf64>
}
)",
                   {{1, Domain{0, 5}}}});
  // Indices from -2 to 6 into 5 rows: both the table and the updates get
  // gradients, repeated rows sum their updates, the ends clamp.
  cases.push_back({"scatter_add", R"(
func.func @scatter_add(%t: tensor<5x3xf64>, %i: tensor<7xi64>, %u: tensor<7x3xf64>) -> tensor<5x3xf64> {
  %s = kiln.scatter_add %t, %i, %u : tensor<5x3xf64>, tensor<7xi64>, tensor<7x3xf64>
  %r = kiln.mul %s, %s : tensor<5x3xf64>
  return %r : tensor<5x3xf64>
}
)",
                   {{1, Domain{-2, 6}}}});
  cases.push_back({"scatter_add_rank2_indices", R"(
func.func @scatter_add_rank2_indices(%t: tensor<6xf64>, %i: tensor<2x3xi32>, %u: tensor<2x3xf64>) -> tensor<6xf64> {
  %s = kiln.scatter_add %t, %i, %u : tensor<6xf64>, tensor<2x3xi32>, tensor<2x3xf64>
  %r = kiln.sin %s : tensor<6xf64>
  return %r : tensor<6xf64>
}
)",
                   {{1, Domain{0, 5}}}});
  // Row indices from -2 to 7 into 6 rows: clamped like the forward op.
  cases.push_back({"dynamic_slice", R"(
func.func @dynamic_slice(%x: tensor<6x3xf64>, %i: tensor<i64>) -> tensor<2x3xf64> {
  %s = kiln.dynamic_slice %x[%i], size = 2 : tensor<6x3xf64>
  %r = kiln.sin %s : tensor<2x3xf64>
  return %r : tensor<2x3xf64>
}
)",
                   {{1, Domain{-2, 7}}},
                   1e-6,
                   1e-6,
                   8});
  cases.push_back({"dynamic_update_slice", R"(
func.func @dynamic_update_slice(%x: tensor<6x3xf64>, %u: tensor<2x3xf64>, %i: tensor<i64>) -> tensor<6x3xf64> {
  %s = kiln.dynamic_update_slice %x[%i], %u : tensor<6x3xf64>, tensor<2x3xf64>
  %r = kiln.mul %s, %s : tensor<6x3xf64>
  return %r : tensor<6x3xf64>
}
)",
                   {{2, Domain{-2, 7}}},
                   1e-6,
                   1e-6,
                   8});
  // constant, iota and compare carry no gradient.
  cases.push_back({"no_gradient_ops", R"(
func.func @no_gradient_ops(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %i = kiln.iota dim = 1 : tensor<3x4xf64>
  %c = kiln.constant dense<0.5> : tensor<3x4xf64>
  %p = kiln.compare gt, %x, %c : tensor<3x4xf64>
  %m = kiln.mul %x, %i : tensor<3x4xf64>
  %a = kiln.add %m, %c : tensor<3x4xf64>
  %r = kiln.select %p, %a, %c : tensor<3x4xi1>, tensor<3x4xf64>
  return %r : tensor<3x4xf64>
}
)"});
  // One value used several times: the gradients are summed.
  cases.push_back({"fan_out", R"(
func.func @fan_out(%x: tensor<4xf64>) -> tensor<4xf64> {
  %a = kiln.mul %x, %x : tensor<4xf64>
  %s = kiln.sin %x : tensor<4xf64>
  %b = kiln.mul %s, %x : tensor<4xf64>
  %r = kiln.add %a, %b : tensor<4xf64>
  return %r : tensor<4xf64>
}
)"});
  // Several results, one of them an integer (no cotangent), one a
  // function of an argument that is not differentiated.
  cases.push_back({"multiple_results", R"(
func.func @multiple_results(%x: tensor<4xf64>, %n: tensor<4xi32>) -> (tensor<4xf64>, tensor<4xi32>, tensor<f64>) {
  %e = kiln.exp %x : tensor<4xf64>
  %m = kiln.add %n, %n : tensor<4xi32>
  %s = kiln.reduce_sum %e, dims = [0] : tensor<4xf64>
  return %e, %m, %s : tensor<4xf64>, tensor<4xi32>, tensor<f64>
}
)"});
  // A two-layer perceptron with a softmax cross-entropy loss.
  cases.push_back({"mlp_loss", R"(
func.func @mlp_loss(%x: tensor<4x3xf64>, %w1: tensor<3x5xf64>, %b1: tensor<5xf64>, %w2: tensor<5x2xf64>, %y: tensor<4x2xf64>) -> tensor<f64> {
  %h0 = kiln.matmul %x, %w1 : tensor<4x3xf64>, tensor<3x5xf64>
  %bb = kiln.broadcast_in_dim %b1, dims = [1] : (tensor<5xf64>) -> tensor<4x5xf64>
  %h1 = kiln.add %h0, %bb : tensor<4x5xf64>
  %h = kiln.tanh %h1 : tensor<4x5xf64>
  %z = kiln.matmul %h, %w2 : tensor<4x5xf64>, tensor<5x2xf64>
  %zmax = kiln.reduce_max %z, dims = [1] : tensor<4x2xf64>
  %zmaxb = kiln.broadcast_in_dim %zmax, dims = [0] : (tensor<4xf64>) -> tensor<4x2xf64>
  %zs = kiln.sub %z, %zmaxb : tensor<4x2xf64>
  %e = kiln.exp %zs : tensor<4x2xf64>
  %se = kiln.reduce_sum %e, dims = [1] : tensor<4x2xf64>
  %lse = kiln.log %se : tensor<4xf64>
  %lseb = kiln.broadcast_in_dim %lse, dims = [0] : (tensor<4xf64>) -> tensor<4x2xf64>
  %logp = kiln.sub %zs, %lseb : tensor<4x2xf64>
  %yl = kiln.mul %y, %logp : tensor<4x2xf64>
  %s = kiln.reduce_mean %yl, dims = [0, 1] : tensor<4x2xf64>
  %loss = kiln.neg %s : tensor<f64>
  return %loss : tensor<f64>
}
)"});
  return cases;
}

/// All cases in one module, differentiated and compiled once.
GradientSuite &opSuite() {
  static std::unique_ptr<GradientSuite> suite = buildCaseSuite(opCases());
  return *suite;
}

class OpGradient : public ::testing::TestWithParam<FunctionCase> {};

TEST_P(OpGradient, MatchesFiniteDifferences) {
  checkCase(opSuite(), GetParam());
}

TEST_P(OpGradient, JvpMatchesFiniteDifferencesAndVjp) {
  checkJvpCase(opSuite(), GetParam());
}

TEST_P(OpGradient, VmapMatchesEachLane) {
  checkVmapCase(opSuite(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Ops, OpGradient, ::testing::ValuesIn(opCases()),
    [](const ::testing::TestParamInfo<FunctionCase> &info) { return info.param.name; });

} // namespace
