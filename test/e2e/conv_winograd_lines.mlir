// Convolutions whose window is one row or one column (Inception-v3's 1x7
// and 7x1, 1x3 and 3x1), which kiln's own Winograd convolution computes in
// the one-dimensional F(m, r) along the window's dim (kiln-cpu-outline-
// dnnl-convs with `winograd=query`, the default of kiln-compile, where
// oneDNN has no Winograd kernels: C K / (C + K) at least 32 and 32 tiles
// of m outputs): with a bias and a ReLU, a chain of 1x7 and 7x1 whose
// second call takes the first's bound, a residual addition, maps whose
// last tile the edge cuts, lopsided padding and channel counts that are
// no multiple of 8; and NaNs and infinities, where the calls fall back to
// direct sums. The harness also compiles the conv_winograd* programs
// through kiln's own Winograd convolution wherever the shape allows, in
// each layout it takes, and compares each build with the reference
// evaluator.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// Inception's factorized 7x7: 1x7 then 7x1 on two 17x17 maps, each with
// its bias and ReLU (F(4, 7): 5 tiles of 4 per row, the last cut by the
// edge). The second sums 448 products of the first's results and carries
// their rounding along: on results up to 2,200 (three numpy seeds against
// sums in double), 1.1-1.3e-2 off through F(4, 7), 1.0-1.2e-3 through
// direct sums.
// CHECK: factorized(arg0: f32[2,64,17,17], arg1: f32[64,64,1,7], arg2: f32[64], arg3: f32[64,64,7,1], arg4: f32[64]) -> (out0: f32[2,64,17,17])
func.func @factorized(%x: tensor<2x64x17x17xf32>, %w1: tensor<64x64x1x7xf32>, %b1: tensor<64xf32>, %w2: tensor<64x64x7x1xf32>, %b2: tensor<64xf32>) -> tensor<2x64x17x17xf32> attributes {kiln.e2e_atol = 3.0e-2 : f64} {
  %y = kiln.conv %x, %w1, strides = [1, 1], padding_low = [0, 3], padding_high = [0, 3], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x64x17x17xf32>, tensor<64x64x1x7xf32>
  %bb1 = kiln.broadcast_in_dim %b1, dims = [1] : (tensor<64xf32>) -> tensor<2x64x17x17xf32>
  %yb = kiln.add %y, %bb1 : tensor<2x64x17x17xf32>
  %yr = kiln.relu %yb : tensor<2x64x17x17xf32>
  %z = kiln.conv %yr, %w2, strides = [1, 1], padding_low = [3, 0], padding_high = [3, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x64x17x17xf32>, tensor<64x64x7x1xf32>
  %bb2 = kiln.broadcast_in_dim %b2, dims = [1] : (tensor<64xf32>) -> tensor<2x64x17x17xf32>
  %zb = kiln.add %z, %bb2 : tensor<2x64x17x17xf32>
  %zr = kiln.relu %zb : tensor<2x64x17x17xf32>
  return %zr : tensor<2x64x17x17xf32>
}

// 1x3 and 3x1 on 8x8 maps at batch 8 (F(4, 3), whole tiles), the first
// with the input added back, the second with no epilogue; a 1x5 window
// padded 4 on the left only.
// CHECK: short(arg0: f32[8,64,8,8], arg1: f32[64,64,1,3], arg2: f32[64,64,3,1], arg3: f32[64,64,1,5]) -> (out0: f32[8,64,8,8], out1: f32[8,64,8,8], out2: f32[8,64,8,8])
func.func @short(%x: tensor<8x64x8x8xf32>, %w13: tensor<64x64x1x3xf32>, %w31: tensor<64x64x3x1xf32>, %w15: tensor<64x64x1x5xf32>) -> (tensor<8x64x8x8xf32>, tensor<8x64x8x8xf32>, tensor<8x64x8x8xf32>) attributes {kiln.e2e_atol = 2.0e-3 : f64} {
  %a = kiln.conv %x, %w13, strides = [1, 1], padding_low = [0, 1], padding_high = [0, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<8x64x8x8xf32>, tensor<64x64x1x3xf32>
  %s = kiln.add %a, %x : tensor<8x64x8x8xf32>
  %r = kiln.relu %s : tensor<8x64x8x8xf32>
  %b = kiln.conv %x, %w31, strides = [1, 1], padding_low = [1, 0], padding_high = [1, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<8x64x8x8xf32>, tensor<64x64x3x1xf32>
  %c = kiln.conv %x, %w15, strides = [1, 1], padding_low = [0, 4], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<8x64x8x8xf32>, tensor<64x64x1x5xf32>
  return %r, %b, %c : tensor<8x64x8x8xf32>, tensor<8x64x8x8xf32>, tensor<8x64x8x8xf32>
}

// 12 input and 20 output channels (the transforms' last 4 lanes), a 7x1
// window on a 9x10 map padded 5 above and 1 below, a bias and a residual
// addition.
// CHECK: odd(arg0: f32[1,12,9,10], arg1: f32[20,12,7,1], arg2: f32[20], arg3: f32[1,20,9,10]) -> (out0: f32[1,20,9,10])
func.func @odd(%x: tensor<1x12x9x10xf32>, %w: tensor<20x12x7x1xf32>, %b: tensor<20xf32>, %r: tensor<1x20x9x10xf32>) -> tensor<1x20x9x10xf32> attributes {kiln.e2e_atol = 2.0e-3 : f64} {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [5, 0], padding_high = [1, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x12x9x10xf32>, tensor<20x12x7x1xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<20xf32>) -> tensor<1x20x9x10xf32>
  %yb = kiln.add %y, %bb : tensor<1x20x9x10xf32>
  %s = kiln.add %yb, %r : tensor<1x20x9x10xf32>
  return %s : tensor<1x20x9x10xf32>
}

// Inputs above 1.98 become NaN and below -1.98 an infinity at run time: a
// 1x7 convolution with a ReLU, and a 7x1 one of its result (which takes
// the bound the first call passes on).
// CHECK: nonfinite(arg0: f32[2,64,17,17], arg1: f32[64,64,1,7], arg2: f32[64,64,7,1]) -> (out0: f32[2,64,17,17], out1: f32[2,64,17,17])
func.func @nonfinite(%x: tensor<2x64x17x17xf32>, %w: tensor<64x64x1x7xf32>, %v: tensor<64x64x7x1xf32>) -> (tensor<2x64x17x17xf32>, tensor<2x64x17x17xf32>) attributes {kiln.e2e_atol = 2.0e-3 : f64} {
  %zero = kiln.constant dense<0.0> : tensor<2x64x17x17xf32>
  %one = kiln.constant dense<1.0> : tensor<2x64x17x17xf32>
  %high = kiln.constant dense<1.98> : tensor<2x64x17x17xf32>
  %low = kiln.constant dense<-1.98> : tensor<2x64x17x17xf32>
  %z = kiln.mul %x, %zero : tensor<2x64x17x17xf32>
  %nan = kiln.div %z, %z : tensor<2x64x17x17xf32>
  %inf = kiln.div %one, %z : tensor<2x64x17x17xf32>
  %above = kiln.compare gt, %x, %high : tensor<2x64x17x17xf32>
  %below = kiln.compare lt, %x, %low : tensor<2x64x17x17xf32>
  %v1 = kiln.select %above, %nan, %x : tensor<2x64x17x17xi1>, tensor<2x64x17x17xf32>
  %in = kiln.select %below, %inf, %v1 : tensor<2x64x17x17xi1>, tensor<2x64x17x17xf32>
  %y = kiln.conv %in, %w, strides = [1, 1], padding_low = [0, 3], padding_high = [0, 3], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x64x17x17xf32>, tensor<64x64x1x7xf32>
  %yr = kiln.relu %y : tensor<2x64x17x17xf32>
  %d = kiln.conv %yr, %v, strides = [1, 1], padding_low = [3, 0], padding_high = [3, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x64x17x17xf32>, tensor<64x64x7x1xf32>
  return %yr, %d : tensor<2x64x17x17xf32>, tensor<2x64x17x17xf32>
}
