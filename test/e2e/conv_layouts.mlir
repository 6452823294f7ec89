// Convolutions laid out channels-last or blocked (kiln-cpu-outline-dnnl-convs)
// with the ops between them that kiln-cpu-propagate-layouts runs in that
// layout:
// bias additions, ReLU, clip and SiLU epilogues (also on NaNs and
// infinities), max and sum pooling, padding,
// strided slices, channel concatenation, reductions over some and all
// spatial dims, residual additions, values with several users, and 1-d
// and 3-d convolutions, a depthwise one and a first one on 3 channels. The
// harness compiles the conv* programs with the layouts oneDNN wants on the
// CPU, and also channels-last, blocked by 8 and by 16 channels and plain
// whatever the CPU, and compares each with the reference evaluator.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s --conv-layouts=channels-last -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// A residual network's stem and block: conv + bias + ReLU, a 3x3 max pool,
// a conv whose result is added to the pool's (a residual), a global mean
// and the block's output.
// CHECK: residual(arg0: f32[2,8,16,16], arg1: f32[16,8,3,3], arg2: f32[16], arg3: f32[16,16,3,3]) -> (out0: f32[2,16], out1: f32[2,16,8,8])
func.func @residual(%x: tensor<2x8x16x16xf32>, %w1: tensor<16x8x3x3xf32>, %b1: tensor<16xf32>, %w2: tensor<16x16x3x3xf32>) -> (tensor<2x16xf32>, tensor<2x16x8x8xf32>) attributes {kiln.e2e_atol = 1.0e-3 : f64} {
  %y = kiln.conv %x, %w1, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x8x16x16xf32>, tensor<16x8x3x3xf32>
  %bb = kiln.broadcast_in_dim %b1, dims = [1] : (tensor<16xf32>) -> tensor<2x16x16x16xf32>
  %yb = kiln.add %y, %bb : tensor<2x16x16x16xf32>
  %yr = kiln.relu %yb : tensor<2x16x16x16xf32>
  %p = kiln.reduce_window %yr, kind = max, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 0, 0], dilations = [1, 1, 1, 1] : tensor<2x16x16x16xf32>
  %z = kiln.conv %p, %w2, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x16x8x8xf32>, tensor<16x16x3x3xf32>
  %s = kiln.add %z, %p : tensor<2x16x8x8xf32>
  %r = kiln.relu %s : tensor<2x16x8x8xf32>
  %m = kiln.reduce_mean %r, dims = [2, 3] : tensor<2x16x8x8xf32>
  return %m, %r : tensor<2x16xf32>, tensor<2x16x8x8xf32>
}

// A dense block: two convolutions' results concatenated along the
// channels, padded unevenly, sliced with a stride, a third convolution
// with a SiLU, then a sum over the rows, a 2x2 average pool and a
// per-channel scale broadcast from [1, C, 1, 1].
// CHECK: dense(arg0: f32[1,8,12,12], arg1: f32[8,8,3,3], arg2: f32[8,8,3,3], arg3: f32[8,16,3,3], arg4: f32[1,8,1,1]) -> (out0: f32[1,8,7], out1: f32[1,8,6,6], out2: f32[1,16,12,12])
func.func @dense(%x: tensor<1x8x12x12xf32>, %w1: tensor<8x8x3x3xf32>, %w2: tensor<8x8x3x3xf32>, %w3: tensor<8x16x3x3xf32>, %g: tensor<1x8x1x1xf32>) -> (tensor<1x8x7xf32>, tensor<1x8x6x6xf32>, tensor<1x16x12x12xf32>) attributes {kiln.e2e_atol = 1.0e-3 : f64} {
  %a = kiln.conv %x, %w1, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x12x12xf32>, tensor<8x8x3x3xf32>
  %ar = kiln.relu %a : tensor<1x8x12x12xf32>
  %b = kiln.conv %ar, %w2, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x12x12xf32>, tensor<8x8x3x3xf32>
  %c = kiln.concat %ar, %b dim = 1 : tensor<1x8x12x12xf32>, tensor<1x8x12x12xf32>
  %zero = kiln.constant dense<0.0> : tensor<f32>
  %pd = kiln.pad %c, %zero, low = [0, 0, 1, 0], high = [0, 0, 0, 1], interior = [0, 0, 0, 0] : tensor<1x16x12x12xf32>, tensor<f32>
  %sl = kiln.slice %pd, start = [0, 0, 0, 0], limit = [1, 16, 13, 13], stride = [1, 1, 2, 2] : tensor<1x16x13x13xf32>
  %d = kiln.conv %sl, %w3, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x16x7x7xf32>, tensor<8x16x3x3xf32>
  %sg = kiln.sigmoid %d : tensor<1x8x7x7xf32>
  %silu = kiln.mul %d, %sg : tensor<1x8x7x7xf32>
  %rows = kiln.reduce_sum %silu, dims = [2] : tensor<1x8x7x7xf32>
  %pool = kiln.reduce_window %silu, kind = sum, window = [1, 1, 2, 2], strides = [1, 1, 1, 1], padding_low = [0, 0, 0, 0], padding_high = [0, 0, 0, 0], dilations = [1, 1, 1, 1] : tensor<1x8x7x7xf32>
  %quarter = kiln.constant dense<0.25> : tensor<1x8x6x6xf32>
  %avg = kiln.mul %pool, %quarter : tensor<1x8x6x6xf32>
  %gb = kiln.broadcast_in_dim %g, dims = [0, 1, 2, 3] : (tensor<1x8x1x1xf32>) -> tensor<1x8x6x6xf32>
  %scaled = kiln.mul %avg, %gb : tensor<1x8x6x6xf32>
  return %rows, %scaled, %c : tensor<1x8x7xf32>, tensor<1x8x6x6xf32>, tensor<1x16x12x12xf32>
}

// 1-d convolutions with a tanh between them, and a 3-d one followed by a
// max over its depth.
// CHECK: other_ranks(arg0: f32[2,8,64], arg1: f32[16,8,5], arg2: f32[16,16,3], arg3: f32[1,4,6,8,8], arg4: f32[8,4,3,3,3]) -> (out0: f32[2,16,58], out1: f32[1,8,8,8])
func.func @other_ranks(%x: tensor<2x8x64xf32>, %w1: tensor<16x8x5xf32>, %w2: tensor<16x16x3xf32>, %v: tensor<1x4x6x8x8xf32>, %k: tensor<8x4x3x3x3xf32>) -> (tensor<2x16x58xf32>, tensor<1x8x8x8xf32>) attributes {kiln.e2e_atol = 1.0e-3 : f64} {
  %y = kiln.conv %x, %w1, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<2x8x64xf32>, tensor<16x8x5xf32>
  %t = kiln.tanh %y : tensor<2x16x60xf32>
  %z = kiln.conv %t, %w2, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<2x16x60xf32>, tensor<16x16x3xf32>
  %u = kiln.conv %v, %k, strides = [1, 1, 1], padding_low = [1, 1, 1], padding_high = [1, 1, 1], lhs_dilation = [1, 1, 1], rhs_dilation = [1, 1, 1], groups = 1 : tensor<1x4x6x8x8xf32>, tensor<8x4x3x3x3xf32>
  %m = kiln.reduce_max %u, dims = [2] : tensor<1x8x6x8x8xf32>
  return %z, %m : tensor<2x16x58xf32>, tensor<1x8x8x8xf32>
}

// NaNs and infinities through the fused activations (oneDNN's ReLU and clip
// post-ops would give their bound for a NaN): inputs above 1.98 become NaN
// and below -1.98 an infinity at run time, then a convolution with a bias
// and a ReLU, one with a clip (ReLU6), and a convolution of the clip's
// result with a ReLU (which takes the bound the clip's call passes on).
// CHECK: activations_nan(arg0: f32[1,8,16,16], arg1: f32[8,8,3,3], arg2: f32[8]) -> (out0: f32[1,8,16,16], out1: f32[1,8,16,16], out2: f32[1,8,16,16])
func.func @activations_nan(%x: tensor<1x8x16x16xf32>, %w: tensor<8x8x3x3xf32>, %b: tensor<8xf32>) -> (tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>) attributes {kiln.e2e_atol = 1.0e-3 : f64} {
  %zero = kiln.constant dense<0.0> : tensor<1x8x16x16xf32>
  %one = kiln.constant dense<1.0> : tensor<1x8x16x16xf32>
  %six = kiln.constant dense<6.0> : tensor<1x8x16x16xf32>
  %high = kiln.constant dense<1.98> : tensor<1x8x16x16xf32>
  %low = kiln.constant dense<-1.98> : tensor<1x8x16x16xf32>
  %z = kiln.mul %x, %zero : tensor<1x8x16x16xf32>
  %nan = kiln.div %z, %z : tensor<1x8x16x16xf32>
  %inf = kiln.div %one, %z : tensor<1x8x16x16xf32>
  %above = kiln.compare gt, %x, %high : tensor<1x8x16x16xf32>
  %below = kiln.compare lt, %x, %low : tensor<1x8x16x16xf32>
  %v1 = kiln.select %above, %nan, %x : tensor<1x8x16x16xi1>, tensor<1x8x16x16xf32>
  %v = kiln.select %below, %inf, %v1 : tensor<1x8x16x16xi1>, tensor<1x8x16x16xf32>
  %y = kiln.conv %v, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<8xf32>) -> tensor<1x8x16x16xf32>
  %yb = kiln.add %y, %bb : tensor<1x8x16x16xf32>
  %yr = kiln.relu %yb : tensor<1x8x16x16xf32>
  %c = kiln.conv %v, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %cl = kiln.max %c, %zero : tensor<1x8x16x16xf32>
  %ch = kiln.min %cl, %six : tensor<1x8x16x16xf32>
  %d = kiln.conv %ch, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>
  %dr = kiln.relu %d : tensor<1x8x16x16xf32>
  return %yr, %ch, %dr : tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>
}

// A mobile network's stem and inverted residual block: a strided 3x3
// convolution of 3 channels (no multiple of a block: a plain input, a
// blocked result where blocked) with a ReLU6, a 1x1 expansion to 64
// channels with a bias and a ReLU6, a depthwise 3x3 (64 groups) with a
// ReLU6, a 1x1 projection back to 16 with a bias, added to the block's
// input, and a global mean.
// CHECK: mobile(arg0: f32[2,3,16,16], arg1: f32[16,3,3,3], arg2: f32[64,16,1,1], arg3: f32[64], arg4: f32[64,1,3,3], arg5: f32[16,64,1,1], arg6: f32[16]) -> (out0: f32[2,16], out1: f32[2,16,8,8])
func.func @mobile(%x: tensor<2x3x16x16xf32>, %ws: tensor<16x3x3x3xf32>, %we: tensor<64x16x1x1xf32>, %be: tensor<64xf32>, %wd: tensor<64x1x3x3xf32>, %wp: tensor<16x64x1x1xf32>, %bp: tensor<16xf32>) -> (tensor<2x16xf32>, tensor<2x16x8x8xf32>) attributes {kiln.e2e_atol = 1.0e-3 : f64} {
  %zero16 = kiln.constant dense<0.0> : tensor<2x16x8x8xf32>
  %six16 = kiln.constant dense<6.0> : tensor<2x16x8x8xf32>
  %zero64 = kiln.constant dense<0.0> : tensor<2x64x8x8xf32>
  %six64 = kiln.constant dense<6.0> : tensor<2x64x8x8xf32>
  %s = kiln.conv %x, %ws, strides = [2, 2], padding_low = [1, 1], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x3x16x16xf32>, tensor<16x3x3x3xf32>
  %sl = kiln.max %s, %zero16 : tensor<2x16x8x8xf32>
  %sh = kiln.min %sl, %six16 : tensor<2x16x8x8xf32>
  %e = kiln.conv %sh, %we, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x16x8x8xf32>, tensor<64x16x1x1xf32>
  %eb = kiln.broadcast_in_dim %be, dims = [1] : (tensor<64xf32>) -> tensor<2x64x8x8xf32>
  %ea = kiln.add %e, %eb : tensor<2x64x8x8xf32>
  %el = kiln.max %ea, %zero64 : tensor<2x64x8x8xf32>
  %eh = kiln.min %el, %six64 : tensor<2x64x8x8xf32>
  %d = kiln.conv %eh, %wd, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 64 : tensor<2x64x8x8xf32>, tensor<64x1x3x3xf32>
  %dl = kiln.max %d, %zero64 : tensor<2x64x8x8xf32>
  %dh = kiln.min %dl, %six64 : tensor<2x64x8x8xf32>
  %p = kiln.conv %dh, %wp, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x64x8x8xf32>, tensor<16x64x1x1xf32>
  %pb = kiln.broadcast_in_dim %bp, dims = [1] : (tensor<16xf32>) -> tensor<2x16x8x8xf32>
  %pa = kiln.add %p, %pb : tensor<2x16x8x8xf32>
  %r = kiln.add %pa, %sh : tensor<2x16x8x8xf32>
  %m = kiln.reduce_mean %r, dims = [2, 3] : tensor<2x16x8x8xf32>
  return %m, %r : tensor<2x16xf32>, tensor<2x16x8x8xf32>
}
