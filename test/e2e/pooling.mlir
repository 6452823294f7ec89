// kiln.reduce_window: max and sum pooling in 1-d, 2-d (NCHW) and 3-d, with
// strides, padding, dilation, overlapping windows and windows entirely in
// the padding, in f32, f64, i32 and i64; average pooling as a sum divided
// by the window size or by the number of elements inside the operand.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: max_pool_2d(arg0: f32[1,3,9,9]) -> (out0: f32[1,3,5,5])
func.func @max_pool_2d(%x: tensor<1x3x9x9xf32>) -> tensor<1x3x5x5xf32> {
  %y = kiln.reduce_window %x, kind = max, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<1x3x9x9xf32>
  return %y : tensor<1x3x5x5xf32>
}

// Average pooling two ways: over the whole 3x3 window, padding included,
// and over the elements inside the operand only (the count is a sum pool
// of ones).
// CHECK: avg_pool_2d(arg0: f32[2,2,7,7]) -> (out0: f32[2,2,4,4], out1: f32[2,2,4,4])
func.func @avg_pool_2d(%x: tensor<2x2x7x7xf32>) -> (tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>) {
  %s = kiln.reduce_window %x, kind = sum, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<2x2x7x7xf32>
  %nine = kiln.constant dense<9.0> : tensor<2x2x4x4xf32>
  %a = kiln.div %s, %nine : tensor<2x2x4x4xf32>
  %ones = kiln.constant dense<1.0> : tensor<2x2x7x7xf32>
  %n = kiln.reduce_window %ones, kind = sum, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<2x2x7x7xf32>
  %b = kiln.div %s, %n : tensor<2x2x4x4xf32>
  return %a, %b : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>
}

// A global average pool (the window is the whole 5x5 image).
// CHECK: global_avg_pool(arg0: f32[2,8,5,5]) -> (out0: f32[2,8,1,1])
func.func @global_avg_pool(%x: tensor<2x8x5x5xf32>) -> tensor<2x8x1x1xf32> {
  %s = kiln.reduce_window %x, kind = sum, window = [1, 1, 5, 5], strides = [1, 1, 1, 1], padding_low = [0, 0, 0, 0], padding_high = [0, 0, 0, 0], dilations = [1, 1, 1, 1] : tensor<2x8x5x5xf32>
  %n = kiln.constant dense<25.0> : tensor<2x8x1x1xf32>
  %a = kiln.div %s, %n : tensor<2x8x1x1xf32>
  return %a : tensor<2x8x1x1xf32>
}

// 1-d, f64: dilation 3 with stride 2 and uneven padding; overlapping
// windows of 4 with stride 1.
// CHECK: pool_1d(arg0: f64[20]) -> (out0: f64[9], out1: f64[9], out2: f64[17])
func.func @pool_1d(%x: tensor<20xf64>) -> (tensor<9xf64>, tensor<9xf64>, tensor<17xf64>) {
  %m = kiln.reduce_window %x, kind = max, window = [3], strides = [2], padding_low = [2], padding_high = [1], dilations = [3] : tensor<20xf64>
  %s = kiln.reduce_window %x, kind = sum, window = [3], strides = [2], padding_low = [2], padding_high = [1], dilations = [3] : tensor<20xf64>
  %o = kiln.reduce_window %x, kind = max, window = [4], strides = [1], padding_low = [0], padding_high = [0], dilations = [1] : tensor<20xf64>
  return %m, %s, %o : tensor<9xf64>, tensor<9xf64>, tensor<17xf64>
}

// 3-d over (C, D, H, W): every dimension pooled differently.
// CHECK: pool_3d(arg0: f32[2,6,6,6]) -> (out0: f32[2,3,3,3], out1: f32[2,3,3,3])
func.func @pool_3d(%x: tensor<2x6x6x6xf32>) -> (tensor<2x3x3x3xf32>, tensor<2x3x3x3xf32>) {
  %m = kiln.reduce_window %x, kind = max, window = [1, 2, 3, 2], strides = [1, 2, 1, 2], padding_low = [0, 1, 0, 0], padding_high = [0, 0, 1, 1], dilations = [1, 1, 2, 1] : tensor<2x6x6x6xf32>
  %s = kiln.reduce_window %x, kind = sum, window = [1, 2, 3, 2], strides = [1, 2, 1, 2], padding_low = [0, 1, 0, 0], padding_high = [0, 0, 1, 1], dilations = [1, 1, 2, 1] : tensor<2x6x6x6xf32>
  return %m, %s : tensor<2x3x3x3xf32>, tensor<2x3x3x3xf32>
}

// Integers: a max pool whose padding reads as the smallest integer, and
// sums that wrap around.
// CHECK: integer_pools(arg0: i32[2,10,10], arg1: i64[12]) -> (out0: i32[2,10,10], out1: i32[2,4,4], out2: i64[4])
func.func @integer_pools(%x: tensor<2x10x10xi32>, %v: tensor<12xi64>) -> (tensor<2x10x10xi32>, tensor<2x4x4xi32>, tensor<4xi64>) {
  %m = kiln.reduce_window %x, kind = max, window = [1, 3, 3], strides = [1, 1, 1], padding_low = [0, 1, 1], padding_high = [0, 1, 1], dilations = [1, 1, 1] : tensor<2x10x10xi32>
  %big = kiln.constant dense<1000000000> : tensor<2x10x10xi32>
  %scaled = kiln.mul %x, %big : tensor<2x10x10xi32>
  %s = kiln.reduce_window %scaled, kind = sum, window = [1, 4, 4], strides = [1, 2, 2], padding_low = [0, 0, 0], padding_high = [0, 0, 0], dilations = [1, 1, 1] : tensor<2x10x10xi32>
  %t = kiln.reduce_window %v, kind = sum, window = [3], strides = [3], padding_low = [0], padding_high = [0], dilations = [1] : tensor<12xi64>
  return %m, %s, %t : tensor<2x10x10xi32>, tensor<2x4x4xi32>, tensor<4xi64>
}

// Padding wider than the window: the outer windows lie entirely in the
// padding and give the identity (-inf, the smallest integer, 0).
// CHECK: windows_in_padding(arg0: f32[3], arg1: i32[3]) -> (out0: f32[8], out1: i32[8], out2: f32[8])
func.func @windows_in_padding(%x: tensor<3xf32>, %i: tensor<3xi32>) -> (tensor<8xf32>, tensor<8xi32>, tensor<8xf32>) {
  %m = kiln.reduce_window %x, kind = max, window = [2], strides = [1], padding_low = [3], padding_high = [3], dilations = [1] : tensor<3xf32>
  %n = kiln.reduce_window %i, kind = max, window = [2], strides = [1], padding_low = [3], padding_high = [3], dilations = [1] : tensor<3xi32>
  %s = kiln.reduce_window %x, kind = sum, window = [2], strides = [1], padding_low = [3], padding_high = [3], dilations = [1] : tensor<3xf32>
  return %m, %n, %s : tensor<8xf32>, tensor<8xi32>, tensor<8xf32>
}

// Empty operands: a padded empty dimension is all identity, an empty batch
// stays empty; and a rank-0 "window".
// CHECK: empty_and_scalar(arg0: f32[0], arg1: f32[0,2,4], arg2: i64[]) -> (out0: f32[2], out1: f32[0,2,2], out2: i64[])
func.func @empty_and_scalar(%e: tensor<0xf32>, %b: tensor<0x2x4xf32>, %s: tensor<i64>) -> (tensor<2xf32>, tensor<0x2x2xf32>, tensor<i64>) {
  %m = kiln.reduce_window %e, kind = max, window = [1], strides = [1], padding_low = [1], padding_high = [1], dilations = [1] : tensor<0xf32>
  %p = kiln.reduce_window %b, kind = sum, window = [1, 1, 2], strides = [1, 1, 2], padding_low = [0, 0, 0], padding_high = [0, 0, 0], dilations = [1, 1, 1] : tensor<0x2x4xf32>
  %r = kiln.reduce_window %s, kind = sum, window = [], strides = [], padding_low = [], padding_high = [], dilations = [] : tensor<i64>
  return %m, %p, %r : tensor<2xf32>, tensor<0x2x2xf32>, tensor<i64>
}

// Pooling inside a small network: relu, max pool, then a mean over the
// channels.
// CHECK: conv_free_net(arg0: f32[2,4,8,8]) -> (out0: f32[2,4,4])
func.func @conv_free_net(%x: tensor<2x4x8x8xf32>) -> tensor<2x4x4xf32> {
  %r = kiln.relu %x : tensor<2x4x8x8xf32>
  %p = kiln.reduce_window %r, kind = max, window = [1, 1, 2, 2], strides = [1, 1, 2, 2], padding_low = [0, 0, 0, 0], padding_high = [0, 0, 0, 0], dilations = [1, 1, 1, 1] : tensor<2x4x8x8xf32>
  %m = kiln.reduce_mean %p, dims = [1] : tensor<2x4x4x4xf32>
  return %m : tensor<2x4x4xf32>
}

// NaN propagates: about one input in eight becomes NaN, and every window
// holding one gives NaN.
// CHECK: max_pool_nan(arg0: f32[2,12]) -> (out0: f32[2,5])
func.func @max_pool_nan(%x: tensor<2x12xf32>) -> tensor<2x5xf32> {
  %limit = kiln.constant dense<1.5> : tensor<2x12xf32>
  %high = kiln.compare gt, %x, %limit : tensor<2x12xf32>
  %nan = kiln.constant dense<0x7FC00000> : tensor<2x12xf32>
  %n = kiln.select %high, %nan, %x : tensor<2x12xi1>, tensor<2x12xf32>
  %y = kiln.reduce_window %n, kind = max, window = [1, 3], strides = [1, 2], padding_low = [0, 0], padding_high = [0, 0], dilations = [1, 1] : tensor<2x12xf32>
  return %y : tensor<2x5xf32>
}
