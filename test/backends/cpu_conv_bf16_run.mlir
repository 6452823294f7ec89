// A bf16 convolution runs on oneDNN's bf16 kernels (on an AVX-512 host: the
// test needs one), and where oneDNN has
// none for the CPU (here forced with ONEDNN_MAX_CPU_ISA=AVX2, below
// AVX-512) on its f32 ones over widened copies, rounded back to bf16: the
// same values either way. The input and the weight are all s, so each
// output is s^2 times the number of taps inside the padded 12x12 input
// (72 inside, 48 on an edge, 32 in a corner); the f32 sum of all of them
// is 16 channels x 8 input channels x 34^2 = 147968 for s = 1.
//
// REQUIRES: dnnl, avx512f
// RUN: kiln-compile %s -o %t.kmod
// RUN: env ONEDNN_VERBOSE=1 kiln-run %t.kmod --function taps --input 1 | FileCheck %s --check-prefix=NATIVE
// RUN: env ONEDNN_VERBOSE=1 ONEDNN_MAX_CPU_ISA=AVX2 kiln-run %t.kmod --function taps --input 1 | FileCheck %s --check-prefix=WIDENED
// RUN: env ONEDNN_MAX_CPU_ISA=AVX2 kiln-run %t.kmod --function taps --input 0.5 | FileCheck %s --check-prefix=HALF
//
// NATIVE: exec,cpu,convolution,{{.*}}src_bf16{{.*}}wei_bf16{{.*}}dst_bf16
// NATIVE-NOT: src_f32
// NATIVE: out0: f32[] = 147968
// NATIVE-NEXT: out1: bf16[4] = [32, 48, 48, 72]
// WIDENED-NOT: src_bf16
// WIDENED: exec,cpu,convolution,{{.*}}src_f32{{.*}}wei_f32{{.*}}dst_f32
// WIDENED: out0: f32[] = 147968
// WIDENED-NEXT: out1: bf16[4] = [32, 48, 48, 72]
//
// The profiler names the call after its descriptor.
// RUN: kiln-compile --profile %s -o %t.profile.kmod
// RUN: kiln-run %t.profile.kmod --function taps --input 1 --profile-summary 2>&1 | FileCheck %s --check-prefix=PROFILE
// PROFILE: dnnl_conv 1x8x12x12 -> 1x16x12x12 k3x3 bf16 @ {{.*}}cpu_conv_bf16_run.mlir:35
//
// HALF: out0: f32[] = 36992
// HALF-NEXT: out1: bf16[4] = [8, 12, 12, 18]
func.func @taps(%s: tensor<bf16>) -> (tensor<f32>, tensor<4xbf16>) {
  %x = kiln.broadcast_in_dim %s, dims = [] : (tensor<bf16>) -> tensor<1x8x12x12xbf16>
  %w = kiln.broadcast_in_dim %s, dims = [] : (tensor<bf16>) -> tensor<16x8x3x3xbf16>
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x12x12xbf16>, tensor<16x8x3x3xbf16>
  %f = kiln.cast %y : tensor<1x16x12x12xbf16> to tensor<1x16x12x12xf32>
  %sum = kiln.reduce_sum %f, dims = [0, 1, 2, 3] : tensor<1x16x12x12xf32>
  %d = kiln.slice %y, start = [0, 0, 0, 0], limit = [1, 1, 2, 2], stride = [1, 1, 1, 1] : tensor<1x16x12x12xbf16>
  %c = kiln.reshape %d : (tensor<1x1x2x2xbf16>) -> tensor<4xbf16>
  return %sum, %c : tensor<f32>, tensor<4xbf16>
}

// What kiln-autocast makes of a convolution with a bias and a ReLU: the
// call applies both to the f32 sums and rounds once (s * taps + 0.5, exact
// in bf16). A NaN input stays NaN through the ReLU (the call's guard runs
// the convolution without oneDNN's ReLU, which would give 0, and applies
// kiln's), an infinity stays infinite, a negative input gives 0.
// RUN: kiln-run %t.kmod --function autocast_relu --input 1 | FileCheck %s --check-prefix=RELU1
// RUN: kiln-run %t.kmod --function autocast_relu --input -1 | FileCheck %s --check-prefix=RELUNEG
// RUN: kiln-run %t.kmod --function autocast_relu --input nan | FileCheck %s --check-prefix=RELUNAN
// RUN: kiln-run %t.kmod --function autocast_relu --input inf | FileCheck %s --check-prefix=RELUINF
// RELU1: out0: bf16[4] = [32.5, 48.5, 48.5, 72.5]
// RELUNEG: out0: bf16[4] = [0, 0, 0, 0]
// RELUNAN: out0: bf16[4] = [nan, nan, nan, nan]
// RELUINF: out0: bf16[4] = [inf, inf, inf, inf]
func.func @autocast_relu(%s: tensor<f32>) -> tensor<4xbf16> {
  %x = kiln.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<1x8x12x12xf32>
  %w = kiln.constant dense<1.0> : tensor<16x8x3x3xf32>
  %bias = kiln.constant dense<0.5> : tensor<16xf32>
  %xh = kiln.cast %x : tensor<1x8x12x12xf32> to tensor<1x8x12x12xbf16>
  %wh = kiln.cast %w : tensor<16x8x3x3xf32> to tensor<16x8x3x3xbf16>
  %yh = kiln.conv %xh, %wh, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x12x12xbf16>, tensor<16x8x3x3xbf16>
  %y = kiln.cast %yh : tensor<1x16x12x12xbf16> to tensor<1x16x12x12xf32>
  %bb = kiln.broadcast_in_dim %bias, dims = [1] : (tensor<16xf32>) -> tensor<1x16x12x12xf32>
  %b = kiln.add %y, %bb : tensor<1x16x12x12xf32>
  %r = kiln.relu %b : tensor<1x16x12x12xf32>
  %rh = kiln.cast %r : tensor<1x16x12x12xf32> to tensor<1x16x12x12xbf16>
  %d = kiln.slice %rh, start = [0, 0, 0, 0], limit = [1, 1, 2, 2], stride = [1, 1, 1, 1] : tensor<1x16x12x12xbf16>
  %c = kiln.reshape %d : (tensor<1x1x2x2xbf16>) -> tensor<4xbf16>
  return %c : tensor<4xbf16>
}
