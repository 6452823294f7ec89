// Convolutions of bf16 and f16 operands: exact products accumulated in f32,
// the sum rounded once to the result. On the CPU the bf16 convolutions of
// at least 16384 multiply-adds call oneDNN's bf16 convolution
// (kiln_dnnl_conv_bf16), which sums in another order than the evaluator,
// so their results may round to the other bf16 neighbour: those functions
// allow one bf16 step (kiln.e2e_half_rtol). f16 and small ones are loops on
// widened operands. `autocast_block` is what kiln-autocast makes of an f32
// convolution with a bias and a ReLU.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// 3x3, padding 1, 8 -> 16 channels on 12x12 (oneDNN, its blocked
// layouts), and a 1x1 stride-2 downsampling (oneDNN, plain layouts).
// CHECK: conv2d_bf16(arg0: bf16[1,8,12,12], arg1: bf16[16,8,3,3], arg2: bf16[2,16,12,12], arg3: bf16[32,16,1,1]) -> (out0: bf16[1,16,12,12], out1: bf16[2,32,6,6])
func.func @conv2d_bf16(%x: tensor<1x8x12x12xbf16>, %w: tensor<16x8x3x3xbf16>, %a: tensor<2x16x12x12xbf16>, %b: tensor<32x16x1x1xbf16>) -> (tensor<1x16x12x12xbf16>, tensor<2x32x6x6xbf16>)
    attributes {kiln.e2e_atol = 1.0e-4 : f64, kiln.e2e_half_rtol = 8.0e-3 : f64} {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x12x12xbf16>, tensor<16x8x3x3xbf16>
  %z = kiln.conv %a, %b, strides = [2, 2], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x16x12x12xbf16>, tensor<32x16x1x1xbf16>
  return %y, %z : tensor<1x16x12x12xbf16>, tensor<2x32x6x6xbf16>
}

// Groups, depthwise, 1-d with a dilated kernel and 3-d (oneDNN each).
// CHECK: conv_bf16_shapes(arg0: bf16[2,8,12,12], arg1: bf16[16,4,3,3], arg2: bf16[2,16,12,12], arg3: bf16[16,1,3,3], arg4: bf16[4,8,40], arg5: bf16[16,8,5], arg6: bf16[1,4,6,6,6], arg7: bf16[8,4,3,3,3]) -> (out0: bf16[2,16,12,12], out1: bf16[2,16,12,12], out2: bf16[4,16,40], out3: bf16[1,8,6,6,6])
func.func @conv_bf16_shapes(%x: tensor<2x8x12x12xbf16>, %w: tensor<16x4x3x3xbf16>, %a: tensor<2x16x12x12xbf16>, %d: tensor<16x1x3x3xbf16>, %s: tensor<4x8x40xbf16>, %k: tensor<16x8x5xbf16>, %v: tensor<1x4x6x6x6xbf16>, %c: tensor<8x4x3x3x3xbf16>) -> (tensor<2x16x12x12xbf16>, tensor<2x16x12x12xbf16>, tensor<4x16x40xbf16>, tensor<1x8x6x6x6xbf16>)
    attributes {kiln.e2e_atol = 1.0e-4 : f64, kiln.e2e_half_rtol = 8.0e-3 : f64} {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 2 : tensor<2x8x12x12xbf16>, tensor<16x4x3x3xbf16>
  %z = kiln.conv %a, %d, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 16 : tensor<2x16x12x12xbf16>, tensor<16x1x3x3xbf16>
  %t = kiln.conv %s, %k, strides = [1], padding_low = [4], padding_high = [4], lhs_dilation = [1], rhs_dilation = [2], groups = 1 : tensor<4x8x40xbf16>, tensor<16x8x5xbf16>
  %u = kiln.conv %v, %c, strides = [1, 1, 1], padding_low = [1, 1, 1], padding_high = [1, 1, 1], lhs_dilation = [1, 1, 1], rhs_dilation = [1, 1, 1], groups = 1 : tensor<1x4x6x6x6xbf16>, tensor<8x4x3x3x3xbf16>
  return %y, %z, %t, %u : tensor<2x16x12x12xbf16>, tensor<2x16x12x12xbf16>, tensor<4x16x40xbf16>, tensor<1x8x6x6x6xbf16>
}

// Loops, compared bit for bit: a small bf16 convolution, an f16 one that
// oneDNN would take in f32, and a transposed (input-dilated) bf16 one.
// CHECK: conv_half_loops(arg0: bf16[2,4,9,9], arg1: bf16[8,4,3,3], arg2: f16[1,8,10,10], arg3: f16[16,8,3,3], arg4: bf16[1,4,5,5], arg5: bf16[3,4,3,3]) -> (out0: bf16[2,8,4,5], out1: f16[1,16,10,10], out2: bf16[1,3,10,10])
func.func @conv_half_loops(%x: tensor<2x4x9x9xbf16>, %w: tensor<8x4x3x3xbf16>, %h: tensor<1x8x10x10xf16>, %g: tensor<16x8x3x3xf16>, %t: tensor<1x4x5x5xbf16>, %k: tensor<3x4x3x3xbf16>) -> (tensor<2x8x4x5xbf16>, tensor<1x16x10x10xf16>, tensor<1x3x10x10xbf16>) {
  %y = kiln.conv %x, %w, strides = [2, 2], padding_low = [1, 1], padding_high = [0, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x4x9x9xbf16>, tensor<8x4x3x3xbf16>
  %z = kiln.conv %h, %g, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x10x10xf16>, tensor<16x8x3x3xf16>
  %u = kiln.conv %t, %k, strides = [1, 1], padding_low = [1, 2], padding_high = [2, 1], lhs_dilation = [2, 2], rhs_dilation = [1, 1], groups = 1 : tensor<1x4x5x5xbf16>, tensor<3x4x3x3xbf16>
  return %y, %z, %u : tensor<2x8x4x5xbf16>, tensor<1x16x10x10xf16>, tensor<1x3x10x10xbf16>
}

// What kiln-autocast makes of conv + bias + ReLU: the f32 input and weight
// cast to bf16, the convolution in bf16, widened to f32 for the bias and
// the ReLU. On the CPU oneDNN's call applies the bias and the ReLU to the
// f32 sums and rounds once (the evaluator rounds the sums, then adds). The
// f32 results allow one bf16 step of the convolution's values below 256
// (the sums of 72 products of values in [-2, 2] have a standard deviation
// of about 11).
// CHECK: autocast_block(arg0: f32[1,8,12,12], arg1: f32[16,8,3,3], arg2: f32[16]) -> (out0: f32[1,16,12,12])
func.func @autocast_block(%x: tensor<1x8x12x12xf32>, %w: tensor<16x8x3x3xf32>, %bias: tensor<16xf32>) -> tensor<1x16x12x12xf32>
    attributes {kiln.e2e_atol = 1.0 : f64} {
  %xh = kiln.cast %x : tensor<1x8x12x12xf32> to tensor<1x8x12x12xbf16>
  %wh = kiln.cast %w : tensor<16x8x3x3xf32> to tensor<16x8x3x3xbf16>
  %yh = kiln.conv %xh, %wh, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x12x12xbf16>, tensor<16x8x3x3xbf16>
  %y = kiln.cast %yh : tensor<1x16x12x12xbf16> to tensor<1x16x12x12xf32>
  %b = kiln.broadcast_in_dim %bias, dims = [1] : (tensor<16xf32>) -> tensor<1x16x12x12xf32>
  %s = kiln.add %y, %b : tensor<1x16x12x12xf32>
  %r = kiln.relu %s : tensor<1x16x12x12xf32>
  return %r : tensor<1x16x12x12xf32>
}
