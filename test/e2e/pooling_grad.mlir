// kiln.reduce_window_max_grad (max pooling's gradient): f32 with overlapping
// windows and padding, f64 with dilation in 1-d and 3-d, i32 and i64 where
// the inputs in [-8, 8] tie often (the first maximum of a window gets its
// cotangent), and windows entirely in the padding, whose cotangent reaches
// nothing.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: max_grad_2d(arg0: f32[1,2,7,7], arg1: f32[1,2,4,4]) -> (out0: f32[1,2,7,7])
func.func @max_grad_2d(%x: tensor<1x2x7x7xf32>, %dy: tensor<1x2x4x4xf32>) -> tensor<1x2x7x7xf32> {
  %dx = kiln.reduce_window_max_grad %x, %dy, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<1x2x7x7xf32>, tensor<1x2x4x4xf32>
  return %dx : tensor<1x2x7x7xf32>
}

// CHECK: max_grad_stride1(arg0: f32[6,6], arg1: f32[4,4]) -> (out0: f32[6,6])
func.func @max_grad_stride1(%x: tensor<6x6xf32>, %dy: tensor<4x4xf32>) -> tensor<6x6xf32> {
  %dx = kiln.reduce_window_max_grad %x, %dy, window = [3, 3], strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], dilations = [1, 1] : tensor<6x6xf32>, tensor<4x4xf32>
  return %dx : tensor<6x6xf32>
}

// CHECK: max_grad_dilated(arg0: f64[11], arg1: f64[5], arg2: f64[2,5,5,4], arg3: f64[2,5,3,3]) -> (out0: f64[11], out1: f64[2,5,5,4])
func.func @max_grad_dilated(%x: tensor<11xf64>, %dy: tensor<5xf64>, %u: tensor<2x5x5x4xf64>, %du: tensor<2x5x3x3xf64>) -> (tensor<11xf64>, tensor<2x5x5x4xf64>) {
  %dx = kiln.reduce_window_max_grad %x, %dy, window = [3], strides = [2], padding_low = [1], padding_high = [2], dilations = [2] : tensor<11xf64>, tensor<5xf64>
  %dv = kiln.reduce_window_max_grad %u, %du, window = [1, 2, 2, 2], strides = [1, 1, 2, 1], padding_low = [0, 1, 0, 1], padding_high = [0, 0, 1, 0], dilations = [1, 1, 1, 2] : tensor<2x5x5x4xf64>, tensor<2x5x3x3xf64>
  return %dx, %dv : tensor<11xf64>, tensor<2x5x5x4xf64>
}

// CHECK: max_grad_integers(arg0: i32[3,8], arg1: i32[3,4], arg2: i64[9], arg3: i64[7]) -> (out0: i32[3,8], out1: i64[9])
func.func @max_grad_integers(%x: tensor<3x8xi32>, %dy: tensor<3x4xi32>, %v: tensor<9xi64>, %dv: tensor<7xi64>) -> (tensor<3x8xi32>, tensor<9xi64>) {
  %dx = kiln.reduce_window_max_grad %x, %dy, window = [1, 3], strides = [1, 2], padding_low = [0, 1], padding_high = [0, 0], dilations = [1, 1] : tensor<3x8xi32>, tensor<3x4xi32>
  %dw = kiln.reduce_window_max_grad %v, %dv, window = [3], strides = [1], padding_low = [0], padding_high = [0], dilations = [1] : tensor<9xi64>, tensor<7xi64>
  return %dx, %dw : tensor<3x8xi32>, tensor<9xi64>
}

// CHECK: max_grad_windows_in_padding(arg0: f32[3], arg1: f32[5]) -> (out0: f32[3])
func.func @max_grad_windows_in_padding(%x: tensor<3xf32>, %dy: tensor<5xf32>) -> tensor<3xf32> {
  %dx = kiln.reduce_window_max_grad %x, %dy, window = [2], strides = [2], padding_low = [4], padding_high = [3], dilations = [1] : tensor<3xf32>, tensor<5xf32>
  return %dx : tensor<3xf32>
}

// The first NaN of a window gets its cotangent.
// CHECK: max_grad_nan(arg0: f32[2,12], arg1: f32[2,5]) -> (out0: f32[2,12])
func.func @max_grad_nan(%x: tensor<2x12xf32>, %dy: tensor<2x5xf32>) -> tensor<2x12xf32> {
  %limit = kiln.constant dense<1.0> : tensor<2x12xf32>
  %high = kiln.compare gt, %x, %limit : tensor<2x12xf32>
  %nan = kiln.constant dense<0x7FC00000> : tensor<2x12xf32>
  %n = kiln.select %high, %nan, %x : tensor<2x12xi1>, tensor<2x12xf32>
  %dx = kiln.reduce_window_max_grad %n, %dy, window = [1, 3], strides = [1, 2], padding_low = [0, 0], padding_high = [0, 0], dilations = [1, 1] : tensor<2x12xf32>, tensor<2x5xf32>
  return %dx : tensor<2x12xf32>
}
