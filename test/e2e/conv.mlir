// kiln.conv and kiln.reverse. The f32 convolutions of at least 16384
// multiply-adds call oneDNN's convolution primitive on the CPU (they sum in
// another order, hence the wider absolute tolerance); the smaller ones,
// the input-dilated (transposed) ones and the f64 ones are loops.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// 3x3, padding 1, 8 -> 16 channels (oneDNN), and a 1x1 stride-2
// downsampling (oneDNN), as in a residual network.
// CHECK: conv2d_f32(arg0: f32[1,8,10,10], arg1: f32[16,8,3,3], arg2: f32[2,16,12,12], arg3: f32[32,16,1,1]) -> (out0: f32[1,16,10,10], out1: f32[2,32,6,6])
func.func @conv2d_f32(%x: tensor<1x8x10x10xf32>, %w: tensor<16x8x3x3xf32>, %a: tensor<2x16x12x12xf32>, %b: tensor<32x16x1x1xf32>) -> (tensor<1x16x10x10xf32>, tensor<2x32x6x6xf32>)
    attributes {kiln.e2e_atol = 1.0e-4 : f64} {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32>
  %z = kiln.conv %a, %b, strides = [2, 2], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x16x12x12xf32>, tensor<32x16x1x1xf32>
  return %y, %z : tensor<1x16x10x10xf32>, tensor<2x32x6x6xf32>
}

// Stride 2 with uneven padding, small enough to stay loops.
// CHECK: conv2d_stride2_small(arg0: f32[2,4,9,9], arg1: f32[8,4,3,3]) -> (out0: f32[2,8,4,5])
func.func @conv2d_stride2_small(%x: tensor<2x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x4x5xf32> {
  %y = kiln.conv %x, %w, strides = [2, 2], padding_low = [1, 1], padding_high = [0, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>
  return %y : tensor<2x8x4x5xf32>
}

// Two groups and depthwise (oneDNN both).
// CHECK: conv2d_groups(arg0: f32[2,8,12,12], arg1: f32[16,4,3,3], arg2: f32[2,16,12,12], arg3: f32[16,1,3,3]) -> (out0: f32[2,16,12,12], out1: f32[2,16,12,12])
func.func @conv2d_groups(%x: tensor<2x8x12x12xf32>, %w: tensor<16x4x3x3xf32>, %a: tensor<2x16x12x12xf32>, %d: tensor<16x1x3x3xf32>) -> (tensor<2x16x12x12xf32>, tensor<2x16x12x12xf32>)
    attributes {kiln.e2e_atol = 1.0e-4 : f64} {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 2 : tensor<2x8x12x12xf32>, tensor<16x4x3x3xf32>
  %z = kiln.conv %a, %d, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 16 : tensor<2x16x12x12xf32>, tensor<16x1x3x3xf32>
  return %y, %z : tensor<2x16x12x12xf32>, tensor<2x16x12x12xf32>
}

// 1-d with a dilated kernel (oneDNN) and 3-d (oneDNN).
// CHECK: conv1d_conv3d(arg0: f32[4,8,40], arg1: f32[16,8,5], arg2: f32[1,4,6,6,6], arg3: f32[8,4,3,3,3]) -> (out0: f32[4,16,40], out1: f32[1,8,6,6,6])
func.func @conv1d_conv3d(%x: tensor<4x8x40xf32>, %w: tensor<16x8x5xf32>, %a: tensor<1x4x6x6x6xf32>, %b: tensor<8x4x3x3x3xf32>) -> (tensor<4x16x40xf32>, tensor<1x8x6x6x6xf32>)
    attributes {kiln.e2e_atol = 1.0e-4 : f64} {
  %y = kiln.conv %x, %w, strides = [1], padding_low = [4], padding_high = [4], lhs_dilation = [1], rhs_dilation = [2], groups = 1 : tensor<4x8x40xf32>, tensor<16x8x5xf32>
  %z = kiln.conv %a, %b, strides = [1, 1, 1], padding_low = [1, 1, 1], padding_high = [1, 1, 1], lhs_dilation = [1, 1, 1], rhs_dilation = [1, 1, 1], groups = 1 : tensor<1x4x6x6x6xf32>, tensor<8x4x3x3x3xf32>
  return %y, %z : tensor<4x16x40xf32>, tensor<1x8x6x6x6xf32>
}

// A transposed convolution (input dilation 2, as ONNX ConvTranspose with
// stride 2 writes it), in f32 and f64: loops.
// CHECK: conv_transposed(arg0: f32[1,4,5,5], arg1: f32[3,4,3,3], arg2: f64[1,4,5,5], arg3: f64[3,4,3,3]) -> (out0: f32[1,3,10,10], out1: f64[1,3,10,10])
func.func @conv_transposed(%x: tensor<1x4x5x5xf32>, %w: tensor<3x4x3x3xf32>, %a: tensor<1x4x5x5xf64>, %b: tensor<3x4x3x3xf64>) -> (tensor<1x3x10x10xf32>, tensor<1x3x10x10xf64>) {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 2], padding_high = [2, 1], lhs_dilation = [2, 2], rhs_dilation = [1, 1], groups = 1 : tensor<1x4x5x5xf32>, tensor<3x4x3x3xf32>
  %z = kiln.conv %a, %b, strides = [1, 1], padding_low = [1, 2], padding_high = [2, 1], lhs_dilation = [2, 2], rhs_dilation = [1, 1], groups = 1 : tensor<1x4x5x5xf64>, tensor<3x4x3x3xf64>
  return %y, %z : tensor<1x3x10x10xf32>, tensor<1x3x10x10xf64>
}

// f64 with everything: stride, both dilations, uneven padding, groups.
// CHECK: conv_f64_all(arg0: f64[2,4,7,5], arg1: f64[6,2,3,2]) -> (out0: f64[2,6,6,13])
func.func @conv_f64_all(%x: tensor<2x4x7x5xf64>, %w: tensor<6x2x3x2xf64>) -> tensor<2x6x6x13xf64> {
  %y = kiln.conv %x, %w, strides = [2, 1], padding_low = [2, 0], padding_high = [1, 1], lhs_dilation = [2, 3], rhs_dilation = [2, 1], groups = 2 : tensor<2x4x7x5xf64>, tensor<6x2x3x2xf64>
  return %y : tensor<2x6x6x13xf64>
}

// A convolution with a bias and relu after it (the epilogue is fused
// loops, the convolution oneDNN), feeding a second, depthwise one.
// CHECK: conv_bias_relu(arg0: f32[1,8,10,10], arg1: f32[16,8,3,3], arg2: f32[16], arg3: f32[16,1,3,3]) -> (out0: f32[1,16,8,8])
func.func @conv_bias_relu(%x: tensor<1x8x10x10xf32>, %w: tensor<16x8x3x3xf32>, %bias: tensor<16xf32>, %d: tensor<16x1x3x3xf32>) -> tensor<1x16x8x8xf32>
    attributes {kiln.e2e_atol = 2.0e-4 : f64} {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x10x10xf32>, tensor<16x8x3x3xf32>
  %b = kiln.broadcast_in_dim %bias, dims = [1] : (tensor<16xf32>) -> tensor<1x16x8x8xf32>
  %s = kiln.add %y, %b : tensor<1x16x8x8xf32>
  %r = kiln.relu %s : tensor<1x16x8x8xf32>
  %z = kiln.conv %r, %d, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 16 : tensor<1x16x8x8xf32>, tensor<16x1x3x3xf32>
  return %z : tensor<1x16x8x8xf32>
}

// Empty results: a kernel wider than the padded input, and no batch.
// CHECK: conv_empty(arg0: f32[1,2,2], arg1: f32[3,2,5], arg2: f64[0,2,4], arg3: f64[3,2,2]) -> (out0: f32[1,3,0], out1: f64[0,3,3])
func.func @conv_empty(%x: tensor<1x2x2xf32>, %w: tensor<3x2x5xf32>, %a: tensor<0x2x4xf64>, %b: tensor<3x2x2xf64>) -> (tensor<1x3x0xf32>, tensor<0x3x3xf64>) {
  %y = kiln.conv %x, %w, strides = [1], padding_low = [1], padding_high = [1], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<1x2x2xf32>, tensor<3x2x5xf32>
  %z = kiln.conv %a, %b, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<0x2x4xf64>, tensor<3x2x2xf64>
  return %y, %z : tensor<1x3x0xf32>, tensor<0x3x3xf64>
}

// Reverse along one, two and no dims, floats and integers.
// CHECK: reverse(arg0: f32[3,4,5], arg1: i32[7], arg2: f64[2,3]) -> (out0: f32[3,4,5], out1: i32[7], out2: f64[2,3])
func.func @reverse(%x: tensor<3x4x5xf32>, %i: tensor<7xi32>, %d: tensor<2x3xf64>) -> (tensor<3x4x5xf32>, tensor<7xi32>, tensor<2x3xf64>) {
  %r = kiln.reverse %x, dims = [2, 0] : tensor<3x4x5xf32>
  %s = kiln.reverse %i, dims = [0] : tensor<7xi32>
  %t = kiln.reverse %d, dims = [] : tensor<2x3xf64>
  return %r, %s, %t : tensor<3x4x5xf32>, tensor<7xi32>, tensor<2x3xf64>
}
