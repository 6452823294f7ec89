// Independent kernels side by side (kiln-cpu-concurrent-branches and
// kiln-cpu-concurrent-sections): an Inception block's four branches at
// batch 1 and four projections of one input, each kernel too small to use
// two threads well. The harness calls each function with OpenMP at one,
// two and three threads (`kiln.e2e_threads`): at two the sections run side
// by side, at one and three one after the other, and every result must
// match the reference evaluator.
//
// REQUIRES: openmp
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s --emit=mlir -o /dev/null --mlir-disable-threading \
// RUN:   --mlir-print-ir-after=kiln-cpu-concurrent-branches 2>&1 \
// RUN:   | FileCheck %s --check-prefix=IR
// RUN: kiln-compile %s --emit=mlir -o /dev/null --mlir-disable-threading \
// RUN:   --concurrent-threads=0 \
// RUN:   --mlir-print-ir-after=kiln-cpu-plan-memory 2>&1 \
// RUN:   | FileCheck %s --check-prefix=OFF
// RUN: kiln-compile %s --emit=llvm -o - | FileCheck %s --check-prefix=LLVM
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// IR-LABEL: func.func @inception(
// IR:         scf.index_switch
// IR:         {kiln.concurrent = 2 : i64}
// IR-LABEL: func.func @projections(
// IR:         scf.index_switch
// IR:         {kiln.concurrent = 2 : i64}
// OFF-NOT:    kiln.concurrent
// LLVM:       call i32 @omp_get_max_threads()

// CHECK: inception(arg0: f32[1,32,17,17], arg1: f32[16,32,1,1], arg2: f32[16,32,1,1], arg3: f32[24,16,3,3], arg4: f32[16,32,1,1], arg5: f32[8,32,1,1]) -> (out0: f32[1,64,17,17])
func.func @inception(%x: tensor<1x32x17x17xf32>, %w1: tensor<16x32x1x1xf32>, %w2: tensor<16x32x1x1xf32>, %w2b: tensor<24x16x3x3xf32>, %w3: tensor<16x32x1x1xf32>, %w4: tensor<8x32x1x1xf32>) -> tensor<1x64x17x17xf32> attributes {kiln.e2e_atol = 1.0e-3 : f64, kiln.e2e_threads = array<i64: 1, 2, 3>} {
  %a = kiln.conv %x, %w1, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x32x17x17xf32>, tensor<16x32x1x1xf32>
  %ar = kiln.relu %a : tensor<1x16x17x17xf32>
  %b = kiln.conv %x, %w2, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x32x17x17xf32>, tensor<16x32x1x1xf32>
  %br = kiln.relu %b : tensor<1x16x17x17xf32>
  %b2 = kiln.conv %br, %w2b, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x16x17x17xf32>, tensor<24x16x3x3xf32>
  %b2r = kiln.relu %b2 : tensor<1x24x17x17xf32>
  %pool = kiln.reduce_window %x, kind = sum, window = [1, 1, 3, 3], strides = [1, 1, 1, 1], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<1x32x17x17xf32>
  %ninth = kiln.constant dense<0.111111112> : tensor<1x32x17x17xf32>
  %avg = kiln.mul %pool, %ninth : tensor<1x32x17x17xf32>
  %c = kiln.conv %avg, %w3, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x32x17x17xf32>, tensor<16x32x1x1xf32>
  %cr = kiln.relu %c : tensor<1x16x17x17xf32>
  %d = kiln.conv %x, %w4, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x32x17x17xf32>, tensor<8x32x1x1xf32>
  %dt = kiln.tanh %d : tensor<1x8x17x17xf32>
  %y = kiln.concat %ar, %b2r, %cr, %dt dim = 1 : tensor<1x16x17x17xf32>, tensor<1x24x17x17xf32>, tensor<1x16x17x17xf32>, tensor<1x8x17x17xf32>
  return %y : tensor<1x64x17x17xf32>
}

// The projections have magnitudes of about 15 and their products q k of
// about 2500, where a sum in another order than the evaluator's moves by
// 1e-3: scaled by 1/2500 before the tanh, so that a score near 0 (where
// tanh is steepest) does not carry that into the result (unscaled, two
// f32 orders differed by up to 0.045 in numpy, and a GPU's by 0.06); the
// absolute tolerance covers the sums of 64 values of 15 (5e-4 between two
// orders, scaled).
// CHECK: projections(arg0: f32[64,128], arg1: f32[128,128], arg2: f32[128,128], arg3: f32[128,128], arg4: f32[128,128]) -> (out0: f32[64,128])
func.func @projections(%x: tensor<64x128xf32>, %wq: tensor<128x128xf32>, %wk: tensor<128x128xf32>, %wv: tensor<128x128xf32>, %wg: tensor<128x128xf32>) -> tensor<64x128xf32> attributes {kiln.e2e_atol = 5.0e-3 : f64, kiln.e2e_threads = array<i64: 1, 2, 3>} {
  %q = kiln.matmul %x, %wq : tensor<64x128xf32>, tensor<128x128xf32>
  %k = kiln.matmul %x, %wk : tensor<64x128xf32>, tensor<128x128xf32>
  %v = kiln.matmul %x, %wv : tensor<64x128xf32>, tensor<128x128xf32>
  %g = kiln.matmul %x, %wg : tensor<64x128xf32>, tensor<128x128xf32>
  %kt = kiln.transpose %k, permutation = [1, 0] : tensor<64x128xf32>
  %s = kiln.matmul %q, %kt : tensor<64x128xf32>, tensor<128x64xf32>
  %c = kiln.constant dense<4.0e-4> : tensor<64x64xf32>
  %sc = kiln.mul %s, %c : tensor<64x64xf32>
  %st = kiln.tanh %sc : tensor<64x64xf32>
  %o = kiln.matmul %st, %v : tensor<64x64xf32>, tensor<64x128xf32>
  %gs = kiln.sigmoid %g : tensor<64x128xf32>
  %y = kiln.mul %o, %gs : tensor<64x128xf32>
  return %y : tensor<64x128xf32>
}
