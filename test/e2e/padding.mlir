// kiln.pad: low, high and interior padding with a value from the inputs or a
// constant, rank 1 to 3, in f32, f64, i1, i32 and i64; empty operands; and
// explicit (ONNX-style) padding followed by a pool.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: pad_2d(arg0: f32[2,3], arg1: f32[]) -> (out0: f32[4,9])
func.func @pad_2d(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<4x9xf32> {
  %p = kiln.pad %x, %v, low = [1, 0], high = [0, 2], interior = [1, 2] : tensor<2x3xf32>, tensor<f32>
  return %p : tensor<4x9xf32>
}

// CHECK: pad_3d_f64(arg0: f64[2,1,3]) -> (out0: f64[3,4,5])
func.func @pad_3d_f64(%x: tensor<2x1x3xf64>) -> tensor<3x4x5xf64> {
  %v = kiln.constant dense<-7.5> : tensor<f64>
  %p = kiln.pad %x, %v, low = [0, 1, 0], high = [1, 2, 0], interior = [0, 3, 1] : tensor<2x1x3xf64>, tensor<f64>
  %e = kiln.exp %p : tensor<3x4x5xf64>
  return %e : tensor<3x4x5xf64>
}

// CHECK: pad_integers(arg0: i1[3], arg1: i1[], arg2: i32[2,2], arg3: i32[], arg4: i64[4]) -> (out0: i1[7], out1: i32[5,4], out2: i64[9])
func.func @pad_integers(%m: tensor<3xi1>, %b: tensor<i1>, %x: tensor<2x2xi32>, %v: tensor<i32>, %w: tensor<4xi64>) -> (tensor<7xi1>, tensor<5x4xi32>, tensor<9xi64>) {
  %pm = kiln.pad %m, %b, low = [2], high = [2], interior = [0] : tensor<3xi1>, tensor<i1>
  %px = kiln.pad %x, %v, low = [0, 1], high = [2, 1], interior = [1, 0] : tensor<2x2xi32>, tensor<i32>
  %z = kiln.constant dense<0> : tensor<i64>
  %pw = kiln.pad %w, %z, low = [0], high = [2], interior = [1] : tensor<4xi64>, tensor<i64>
  return %pm, %px, %pw : tensor<7xi1>, tensor<5x4xi32>, tensor<9xi64>
}

// Empty operands get low + high copies of the value; a rank-0 pad is the
// operand.
// CHECK: pad_empty(arg0: f32[0,2], arg1: f32[], arg2: i32[]) -> (out0: f32[3,6], out1: i32[])
func.func @pad_empty(%x: tensor<0x2xf32>, %v: tensor<f32>, %s: tensor<i32>) -> (tensor<3x6xf32>, tensor<i32>) {
  %p = kiln.pad %x, %v, low = [1, 1], high = [2, 1], interior = [5, 2] : tensor<0x2xf32>, tensor<f32>
  %q = kiln.pad %s, %s, low = [], high = [], interior = [] : tensor<i32>, tensor<i32>
  return %p, %q : tensor<3x6xf32>, tensor<i32>
}

// Explicit padding with a constant, then a max pool over the padded
// tensor, next to the same pool with the padding as an attribute (equal,
// since the pool's padding reads as -inf and the constant is below every
// input).
// CHECK: pad_then_pool(arg0: f32[1,2,6,6]) -> (out0: f32[1,2,3,3], out1: f32[1,2,3,3])
func.func @pad_then_pool(%x: tensor<1x2x6x6xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %v = kiln.constant dense<-100.0> : tensor<f32>
  %p = kiln.pad %x, %v, low = [0, 0, 1, 1], high = [0, 0, 1, 1], interior = [0, 0, 0, 0] : tensor<1x2x6x6xf32>, tensor<f32>
  %a = kiln.reduce_window %p, kind = max, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 0, 0], padding_high = [0, 0, 0, 0], dilations = [1, 1, 1, 1] : tensor<1x2x8x8xf32>
  %b = kiln.reduce_window %x, kind = max, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<1x2x6x6xf32>
  return %a, %b : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}
