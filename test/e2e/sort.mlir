// kiln.sort end to end: native code (the kiln-decompose-sort network)
// against the reference evaluator (std::stable_sort per slice) on random
// inputs. Integers drawn from [-8, 8] tie often, so the stable order of
// equal elements is checked in both directions; the unsigned case sees
// values above every signed one; NaNs (put where x > 1.5) must sort above
// +inf. Slices of 1, 7 (padded to 8) and 16 elements, along each dim.
// The gradient function is what
//
//   kiln-opt --kiln-grad="function=sorted_loss value-and-grad=true"
//
// derives from sorted_loss (the cotangent scattered back to where each
// value came from).
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: sort_floats(arg0: f32[3,7]) -> (out0: f32[3,7], out1: i64[3,7], out2: f32[3,7], out3: i64[3,7])
func.func @sort_floats(%x: tensor<3x7xf32>) -> (tensor<3x7xf32>, tensor<3x7xi64>, tensor<3x7xf32>, tensor<3x7xi64>) {
  %nan = kiln.constant dense<0x7FC00000> : tensor<3x7xf32>
  %limit = kiln.constant dense<1.5> : tensor<3x7xf32>
  %big = kiln.compare gt, %x, %limit : tensor<3x7xf32>
  %y = kiln.select %big, %nan, %x : tensor<3x7xi1>, tensor<3x7xf32>
  %v, %i = kiln.sort %y, dim = 1 : tensor<3x7xf32>
  %w, %j = kiln.sort %y, dim = 0 descending : tensor<3x7xf32>
  return %v, %i, %w, %j : tensor<3x7xf32>, tensor<3x7xi64>, tensor<3x7xf32>, tensor<3x7xi64>
}

// CHECK: sort_ints(arg0: i32[2,16,3], arg1: ui8[16], arg2: i64[1,4]) -> (out0: i32[2,16,3], out1: i64[2,16,3], out2: ui8[16], out3: i64[16], out4: i64[1,4], out5: i64[1,4])
func.func @sort_ints(%a: tensor<2x16x3xi32>, %b: tensor<16xui8>, %c: tensor<1x4xi64>) -> (tensor<2x16x3xi32>, tensor<2x16x3xi64>, tensor<16xui8>, tensor<16xi64>, tensor<1x4xi64>, tensor<1x4xi64>) {
  %av, %ai = kiln.sort %a, dim = 1 descending : tensor<2x16x3xi32>
  %bv, %bi = kiln.sort %b, dim = 0 : tensor<16xui8>
  %cv, %ci = kiln.sort %c, dim = 0 : tensor<1x4xi64>
  return %av, %ai, %bv, %bi, %cv, %ci : tensor<2x16x3xi32>, tensor<2x16x3xi64>, tensor<16xui8>, tensor<16xi64>, tensor<1x4xi64>, tensor<1x4xi64>
}

// CHECK: sort_half(arg0: f16[5,6], arg1: bf16[9]) -> (out0: f16[5,6], out1: bf16[9], out2: i64[9])
func.func @sort_half(%a: tensor<5x6xf16>, %b: tensor<9xbf16>) -> (tensor<5x6xf16>, tensor<9xbf16>, tensor<9xi64>) {
  %av, %ai = kiln.sort %a, dim = 1 descending : tensor<5x6xf16>
  %bv, %bi = kiln.sort %b, dim = 0 : tensor<9xbf16>
  return %av, %bv, %bi : tensor<5x6xf16>, tensor<9xbf16>, tensor<9xi64>
}

// CHECK: sorted_loss(arg0: f32[4,6], arg1: f32[4,6]) -> (out0: f32[])
func.func @sorted_loss(%x: tensor<4x6xf32>, %w: tensor<4x6xf32>) -> tensor<f32> {
  %v, %i = kiln.sort %x, dim = 1 descending : tensor<4x6xf32>
  %p = kiln.mul %v, %w : tensor<4x6xf32>
  %s = kiln.reduce_sum %p, dims = [0, 1] : tensor<4x6xf32>
  return %s : tensor<f32>
}

// CHECK: sorted_loss_value_and_grad(arg0: f32[4,6], arg1: f32[4,6]) -> (out0: f32[], out1: f32[4,6], out2: f32[4,6])
func.func @sorted_loss_value_and_grad(%arg0: tensor<4x6xf32>, %arg1: tensor<4x6xf32>) -> (tensor<f32>, tensor<4x6xf32>, tensor<4x6xf32>) {
  %values, %indices = kiln.sort %arg0, dim = 1 descending : tensor<4x6xf32>
  %0 = kiln.mul %values, %arg1 : tensor<4x6xf32>
  %1 = kiln.reduce_sum %0, dims = [0, 1] : tensor<4x6xf32>
  %2 = kiln.constant dense<1.000000e+00> : tensor<f32>
  %3 = kiln.broadcast_in_dim %2, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
  %4 = kiln.mul %3, %arg1 : tensor<4x6xf32>
  %5 = kiln.mul %3, %values : tensor<4x6xf32>
  %6 = kiln.iota dim = 0 : tensor<24xi64>
  %7 = kiln.reshape %6 : (tensor<24xi64>) -> tensor<4x6xi64>
  %8 = kiln.iota dim = 1 : tensor<4x6xi64>
  %9 = kiln.constant dense<1> : tensor<4x6xi64>
  %10 = kiln.sub %indices, %8 : tensor<4x6xi64>
  %11 = kiln.mul %10, %9 : tensor<4x6xi64>
  %12 = kiln.add %7, %11 : tensor<4x6xi64>
  %13 = kiln.reshape %4 : (tensor<4x6xf32>) -> tensor<24xf32>
  %14 = kiln.reshape %12 : (tensor<4x6xi64>) -> tensor<24xi64>
  %15 = kiln.constant dense<0.000000e+00> : tensor<24xf32>
  %16 = kiln.scatter_add %15, %14, %13 : tensor<24xf32>, tensor<24xi64>, tensor<24xf32>
  %17 = kiln.reshape %16 : (tensor<24xf32>) -> tensor<4x6xf32>
  return %1, %17, %5 : tensor<f32>, tensor<4x6xf32>, tensor<4x6xf32>
}
