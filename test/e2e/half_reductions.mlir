// f16 and bf16 in the ops that compute in f32 (mlir::kiln::
// widensHalfPrecision): reductions, argmax/argmin, cumsum, pooling windows
// and their gradient, convolutions and iota. Each is the op on the
// operands widened to f32, its result rounded once; the evaluator defines
// them the same way. The softmax is a bf16 program end to end, fused.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-compile %s --no-fusion -o %t.unfused.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: reductions_bf16(arg0: bf16[7,29]) -> (out0: bf16[29], out1: bf16[7], out2: bf16[7], out3: i64[29], out4: i64[7])
func.func @reductions_bf16(%x: tensor<7x29xbf16>) -> (tensor<29xbf16>, tensor<7xbf16>, tensor<7xbf16>, tensor<29xi64>, tensor<7xi64>) {
  %s = kiln.reduce_sum %x, dims = [0] : tensor<7x29xbf16>
  %m = kiln.reduce_mean %x, dims = [1] : tensor<7x29xbf16>
  %x2 = kiln.reduce_max %x, dims = [1] : tensor<7x29xbf16>
  %a = kiln.argmax %x, dim = 0 : tensor<7x29xbf16>
  %b = kiln.argmin %x, dim = 1 : tensor<7x29xbf16>
  return %s, %m, %x2, %a, %b : tensor<29xbf16>, tensor<7xbf16>, tensor<7xbf16>, tensor<29xi64>, tensor<7xi64>
}

// CHECK: scans_f16(arg0: f16[3,17]) -> (out0: f16[3,17], out1: f16[3,17], out2: f16[17])
func.func @scans_f16(%x: tensor<3x17xf16>) -> (tensor<3x17xf16>, tensor<3x17xf16>, tensor<17xf16>) {
  %a = kiln.cumsum %x, dim = 1 : tensor<3x17xf16>
  %b = kiln.cumsum %x, dim = 1 exclusive reverse : tensor<3x17xf16>
  %i = kiln.iota dim = 0 : tensor<17xf16>
  return %a, %b, %i : tensor<3x17xf16>, tensor<3x17xf16>, tensor<17xf16>
}

// CHECK: softmax_bf16(arg0: bf16[8,33]) -> (out0: bf16[8,33])
func.func @softmax_bf16(%x: tensor<8x33xbf16>) -> tensor<8x33xbf16> {
  %m = kiln.reduce_max %x, dims = [1] : tensor<8x33xbf16>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : (tensor<8xbf16>) -> tensor<8x33xbf16>
  %d = kiln.sub %x, %mb : tensor<8x33xbf16>
  %e = kiln.exp %d : tensor<8x33xbf16>
  %s = kiln.reduce_sum %e, dims = [1] : tensor<8x33xbf16>
  %sb = kiln.broadcast_in_dim %s, dims = [0] : (tensor<8xbf16>) -> tensor<8x33xbf16>
  %p = kiln.div %e, %sb : tensor<8x33xbf16>
  return %p : tensor<8x33xbf16>
}

// CHECK: pooling_bf16(arg0: bf16[2,3,8,8], arg1: bf16[2,3,4,4]) -> (out0: bf16[2,3,4,4], out1: bf16[2,3,4,4], out2: bf16[2,3,8,8])
func.func @pooling_bf16(%x: tensor<2x3x8x8xbf16>, %dy: tensor<2x3x4x4xbf16>) -> (tensor<2x3x4x4xbf16>, tensor<2x3x4x4xbf16>, tensor<2x3x8x8xbf16>) {
  %mx = kiln.reduce_window %x, kind = max, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<2x3x8x8xbf16>
  %sm = kiln.reduce_window %x, kind = sum, window = [1, 1, 2, 2], strides = [1, 1, 2, 2], padding_low = [0, 0, 0, 0], padding_high = [0, 0, 0, 0], dilations = [1, 1, 1, 1] : tensor<2x3x8x8xbf16>
  %dx = kiln.reduce_window_max_grad %x, %dy, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<2x3x8x8xbf16>, tensor<2x3x4x4xbf16>
  return %mx, %sm, %dx : tensor<2x3x4x4xbf16>, tensor<2x3x4x4xbf16>, tensor<2x3x8x8xbf16>
}

// CHECK: conv_f16(arg0: f16[1,4,9,9], arg1: f16[6,4,3,3]) -> (out0: f16[1,6,9,9])
func.func @conv_f16(%x: tensor<1x4x9x9xf16>, %w: tensor<6x4x3x3xf16>) -> tensor<1x6x9x9xf16> {
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x4x9x9xf16>, tensor<6x4x3x3xf16>
  return %y : tensor<1x6x9x9xf16>
}

// A product of f16 operands large enough for oneDNN: sgemm on the widened
// operands. Compared in f32 (sgemm's order of additions is its own, so an
// f16 rounding of its sums could differ from the evaluator's by one ulp),
// within 1e-4 absolute: a sum of 64 products that cancels to a small value
// keeps the rounding errors of its large terms, and sgemm's order depends
// on the CPU's kernels (AVX2's gave 1.4e-6 at a value of 0.04, beyond the
// default tolerance); the f16-rounded product is a loop-sized one, added in
// the evaluator's order.
// CHECK: matmul_f16(arg0: f16[40,64], arg1: f16[64,48], arg2: f16[6,9], arg3: f16[9,5]) -> (out0: f32[40,48], out1: f16[6,5])
func.func @matmul_f16(%a: tensor<40x64xf16>, %b: tensor<64x48xf16>, %c: tensor<6x9xf16>, %d: tensor<9x5xf16>) -> (tensor<40x48xf32>, tensor<6x5xf16>) attributes {kiln.e2e_atol = 1.0e-4 : f64} {
  %p = kiln.matmul %a, %b : tensor<40x64xf16>, tensor<64x48xf16> -> f32
  %q = kiln.matmul %c, %d : tensor<6x9xf16>, tensor<9x5xf16>
  return %p, %q : tensor<40x48xf32>, tensor<6x5xf16>
}
