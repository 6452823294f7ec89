// 3x3 convolutions that run in a Winograd algorithm (kiln-cpu-outline-dnnl-
// convs with `winograd=query`, the default of kiln-compile): kiln's own
// F(4x4, 3x3) where it pays (at least 8 tiles of 4x4 outputs, C K / (C +
// K) at least 32), and oneDNN's Winograd kernels where asked (at least 16
// input channels, 64 output channels and 392 output positions, on
// AVX-512);
// with a bias, a ReLU, a residual addition and a chain whose second call
// takes the first's bound; map sizes that are no multiple of 4, lopsided
// padding and channel counts that are no multiple of 8; and the same on
// NaNs and infinities, where the calls fall back to direct sums (Winograd's
// transforms would turn an infinity into NaNs in outputs whose windows do
// not hold it). The harness compiles the conv* programs with the layouts
// oneDNN wants, channels-last, blocked and plain, and these also through
// kiln's own Winograd convolution wherever the shape allows (blocked by 8
// and 16, channels-last and plain) and through oneDNN's Winograd kernels,
// and compares each with the reference evaluator.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s --conv-algorithm=winograd -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// A residual block on two 16x16 maps: conv + bias + ReLU, conv + the block's input
// + ReLU. The second convolution sums 576 products of the first's results
// and carries their rounding along: through kiln's own F(4x4, 3x3), whose
// transforms round more than direct sums, 3.7e-3 off on a result of 107
// (seeds 0 to 2).
// CHECK: block(arg0: f32[2,64,16,16], arg1: f32[64,64,3,3], arg2: f32[64], arg3: f32[64,64,3,3]) -> (out0: f32[2,64,16,16])
func.func @block(%x: tensor<2x64x16x16xf32>, %w1: tensor<64x64x3x3xf32>, %b1: tensor<64xf32>, %w2: tensor<64x64x3x3xf32>) -> tensor<2x64x16x16xf32> attributes {kiln.e2e_atol = 6.0e-3 : f64} {
  %y = kiln.conv %x, %w1, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x64x16x16xf32>, tensor<64x64x3x3xf32>
  %bb = kiln.broadcast_in_dim %b1, dims = [1] : (tensor<64xf32>) -> tensor<2x64x16x16xf32>
  %yb = kiln.add %y, %bb : tensor<2x64x16x16xf32>
  %yr = kiln.relu %yb : tensor<2x64x16x16xf32>
  %z = kiln.conv %yr, %w2, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x64x16x16xf32>, tensor<64x64x3x3xf32>
  %s = kiln.add %z, %x : tensor<2x64x16x16xf32>
  %r = kiln.relu %s : tensor<2x64x16x16xf32>
  return %r : tensor<2x64x16x16xf32>
}

// Batch 2 at 14x14 (oneDNN's F(4x4, 3x3) kernel where it takes more
// positions), 32 input channels, no epilogue, and unpadded.
// CHECK: batch(arg0: f32[2,32,14,14], arg1: f32[96,32,3,3]) -> (out0: f32[2,96,14,14], out1: f32[2,96,12,12])
func.func @batch(%x: tensor<2x32x14x14xf32>, %w: tensor<96x32x3x3xf32>) -> (tensor<2x96x14x14xf32>, tensor<2x96x12x12xf32>) attributes {kiln.e2e_atol = 2.0e-3 : f64} {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x32x14x14xf32>, tensor<96x32x3x3xf32>
  %u = kiln.conv %x, %w, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x32x14x14xf32>, tensor<96x32x3x3xf32>
  return %y, %u : tensor<2x96x14x14xf32>, tensor<2x96x12x12xf32>
}

// Inputs above 1.98 become NaN and below -1.98 an infinity at run time:
// a convolution with a ReLU, one without an activation, and one of the
// first's result (which takes the bound the first call passes on).
// CHECK: nonfinite(arg0: f32[2,16,16,16], arg1: f32[64,16,3,3], arg2: f32[64,64,3,3]) -> (out0: f32[2,64,16,16], out1: f32[2,64,16,16], out2: f32[2,64,16,16])
func.func @nonfinite(%x: tensor<2x16x16x16xf32>, %w: tensor<64x16x3x3xf32>, %v: tensor<64x64x3x3xf32>) -> (tensor<2x64x16x16xf32>, tensor<2x64x16x16xf32>, tensor<2x64x16x16xf32>) attributes {kiln.e2e_atol = 2.0e-3 : f64} {
  %zero = kiln.constant dense<0.0> : tensor<2x16x16x16xf32>
  %one = kiln.constant dense<1.0> : tensor<2x16x16x16xf32>
  %high = kiln.constant dense<1.98> : tensor<2x16x16x16xf32>
  %low = kiln.constant dense<-1.98> : tensor<2x16x16x16xf32>
  %z = kiln.mul %x, %zero : tensor<2x16x16x16xf32>
  %nan = kiln.div %z, %z : tensor<2x16x16x16xf32>
  %inf = kiln.div %one, %z : tensor<2x16x16x16xf32>
  %above = kiln.compare gt, %x, %high : tensor<2x16x16x16xf32>
  %below = kiln.compare lt, %x, %low : tensor<2x16x16x16xf32>
  %v1 = kiln.select %above, %nan, %x : tensor<2x16x16x16xi1>, tensor<2x16x16x16xf32>
  %in = kiln.select %below, %inf, %v1 : tensor<2x16x16x16xi1>, tensor<2x16x16x16xf32>
  %y = kiln.conv %in, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x16x16x16xf32>, tensor<64x16x3x3xf32>
  %yr = kiln.relu %y : tensor<2x64x16x16xf32>
  %c = kiln.conv %in, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x16x16x16xf32>, tensor<64x16x3x3xf32>
  %d = kiln.conv %yr, %v, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x64x16x16xf32>, tensor<64x64x3x3xf32>
  return %yr, %c, %d : tensor<2x64x16x16xf32>, tensor<2x64x16x16xf32>, tensor<2x64x16x16xf32>
}

// 12 input and 20 output channels (the transforms' last 4 lanes), a 9x10
// map (tiles cut by its edges), padding 2 above and left only, a bias and
// a residual addition.
// CHECK: odd(arg0: f32[1,12,9,10], arg1: f32[20,12,3,3], arg2: f32[20], arg3: f32[1,20,9,10]) -> (out0: f32[1,20,9,10])
func.func @odd(%x: tensor<1x12x9x10xf32>, %w: tensor<20x12x3x3xf32>, %b: tensor<20xf32>, %r: tensor<1x20x9x10xf32>) -> tensor<1x20x9x10xf32> attributes {kiln.e2e_atol = 2.0e-3 : f64} {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [2, 0], padding_high = [0, 2], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x12x9x10xf32>, tensor<20x12x3x3xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<20xf32>) -> tensor<1x20x9x10xf32>
  %yb = kiln.add %y, %bb : tensor<1x20x9x10xf32>
  %s = kiln.add %yb, %r : tensor<1x20x9x10xf32>
  return %s : tensor<1x20x9x10xf32>
}
