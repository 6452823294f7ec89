// Elementwise chains: gelu(x * a + b) * c with the tanh approximation (one
// region, one loop nest on the CPU), chains with broadcasts and reshapes,
// diamonds, multi-output siblings, and a chain cut by a transpose. The
// harness also compiles this file with fusion off and evaluates the fused
// IR.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-opt %s --kiln-fuse | FileCheck %s --check-prefix=FUSED
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-compile %s --no-fusion -o %t.unfused.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// FUSED-LABEL: func.func @gelu_chain(
// FUSED-NEXT:    kiln.fused elementwise
// FUSED-NOT:     kiln.fused
// FUSED:         return
// CHECK: gelu_chain(arg0: f32[1000], arg1: f32[1000], arg2: f32[1000], arg3: f32[1000]) -> (out0: f32[1000])
func.func @gelu_chain(%x: tensor<1000xf32>, %a: tensor<1000xf32>, %b: tensor<1000xf32>,
                      %c: tensor<1000xf32>) -> tensor<1000xf32> {
  %half = kiln.constant dense<0.5> : tensor<1000xf32>
  %one = kiln.constant dense<1.0> : tensor<1000xf32>
  %k0 = kiln.constant dense<0.797884583> : tensor<1000xf32>
  %k1 = kiln.constant dense<0.044715> : tensor<1000xf32>
  %xa = kiln.mul %x, %a : tensor<1000xf32>
  %u = kiln.add %xa, %b : tensor<1000xf32>
  %u2 = kiln.mul %u, %u : tensor<1000xf32>
  %u3 = kiln.mul %u2, %u : tensor<1000xf32>
  %t0 = kiln.mul %u3, %k1 : tensor<1000xf32>
  %t1 = kiln.add %u, %t0 : tensor<1000xf32>
  %t2 = kiln.mul %t1, %k0 : tensor<1000xf32>
  %t3 = kiln.tanh %t2 : tensor<1000xf32>
  %t4 = kiln.add %t3, %one : tensor<1000xf32>
  %t5 = kiln.mul %u, %half : tensor<1000xf32>
  %g = kiln.mul %t5, %t4 : tensor<1000xf32>
  %y = kiln.mul %g, %c : tensor<1000xf32>
  return %y : tensor<1000xf32>
}

// gelu(x + bias) over a matrix, the bias broadcast along the rows, in f64.
// FUSED-LABEL: func.func @gelu_bias_f64(
// FUSED-NEXT:    kiln.fused elementwise
// FUSED-NOT:     kiln.fused
// CHECK: gelu_bias_f64(arg0: f64[16,32], arg1: f64[32]) -> (out0: f64[16,32])
func.func @gelu_bias_f64(%x: tensor<16x32xf64>, %bias: tensor<32xf64>) -> tensor<16x32xf64> {
  %bb = kiln.broadcast_in_dim %bias, dims = [1] : (tensor<32xf64>) -> tensor<16x32xf64>
  %u = kiln.add %x, %bb : tensor<16x32xf64>
  %half = kiln.constant dense<0.5> : tensor<16x32xf64>
  %one = kiln.constant dense<1.0> : tensor<16x32xf64>
  %k0 = kiln.constant dense<0.79788456080286541> : tensor<16x32xf64>
  %k1 = kiln.constant dense<0.044715> : tensor<16x32xf64>
  %u2 = kiln.mul %u, %u : tensor<16x32xf64>
  %u3 = kiln.mul %u2, %u : tensor<16x32xf64>
  %t0 = kiln.mul %u3, %k1 : tensor<16x32xf64>
  %t1 = kiln.add %u, %t0 : tensor<16x32xf64>
  %t2 = kiln.mul %t1, %k0 : tensor<16x32xf64>
  %t3 = kiln.tanh %t2 : tensor<16x32xf64>
  %t4 = kiln.add %t3, %one : tensor<16x32xf64>
  %t5 = kiln.mul %u, %half : tensor<16x32xf64>
  %g = kiln.mul %t5, %t4 : tensor<16x32xf64>
  return %g : tensor<16x32xf64>
}

// A chain through a reshape, with a comparison and select (i1 in the
// middle of the region) and a cast to i32 at the end.
// FUSED-LABEL: func.func @reshape_select_cast(
// FUSED-NEXT:    kiln.fused elementwise
// FUSED-NOT:     kiln.fused
// CHECK: reshape_select_cast(arg0: f32[4,6], arg1: f32[24]) -> (out0: f32[24], out1: i32[24])
func.func @reshape_select_cast(%x: tensor<4x6xf32>, %y: tensor<24xf32>) -> (tensor<24xf32>, tensor<24xi32>) {
  %e = kiln.sigmoid %x : tensor<4x6xf32>
  %f = kiln.reshape %e : (tensor<4x6xf32>) -> tensor<24xf32>
  %gt = kiln.compare gt, %f, %y : tensor<24xf32>
  %s = kiln.select %gt, %f, %y : tensor<24xi1>, tensor<24xf32>
  %ten = kiln.constant dense<10.0> : tensor<24xf32>
  %st = kiln.mul %s, %ten : tensor<24xf32>
  %i = kiln.cast %st : tensor<24xf32> to tensor<24xi32>
  return %s, %i : tensor<24xf32>, tensor<24xi32>
}

// Diamonds: every value is read by two later ops; multi-output siblings of
// the input (exp, sin and x^2 are all results).
// FUSED-LABEL: func.func @diamond_siblings(
// FUSED-NEXT:    kiln.fused elementwise {{.*}} -> (tensor<300xf32>, tensor<300xf32>, tensor<300xf32>, tensor<300xf32>)
// FUSED-NOT:     kiln.fused
// CHECK: diamond_siblings(arg0: f32[300]) -> (out0: f32[300], out1: f32[300], out2: f32[300], out3: f32[300])
func.func @diamond_siblings(%x: tensor<300xf32>) -> (tensor<300xf32>, tensor<300xf32>, tensor<300xf32>, tensor<300xf32>) {
  %a = kiln.exp %x : tensor<300xf32>
  %b = kiln.sin %x : tensor<300xf32>
  %c = kiln.mul %a, %b : tensor<300xf32>
  %d = kiln.cos %a : tensor<300xf32>
  %e = kiln.add %c, %d : tensor<300xf32>
  %f = kiln.mul %e, %b : tensor<300xf32>
  %sq = kiln.mul %x, %x : tensor<300xf32>
  return %f, %a, %b, %sq : tensor<300xf32>, tensor<300xf32>, tensor<300xf32>, tensor<300xf32>
}

// A transpose between two elementwise ops that also meet directly: the
// region of %a and %b cannot take %d (cycle through the transpose).
// FUSED-LABEL: func.func @cut_by_transpose(
// FUSED-NEXT:    kiln.fused elementwise
// FUSED-NEXT:    ^bb0
// FUSED-NEXT:      kiln.exp
// FUSED-NEXT:      kiln.mul
// FUSED-NEXT:      kiln.yield
// FUSED:         kiln.transpose
// FUSED-NEXT:    kiln.fused elementwise
// FUSED-NEXT:    ^bb0
// FUSED-NEXT:      kiln.add
// FUSED-NEXT:      kiln.tanh
// CHECK: cut_by_transpose(arg0: f32[12,12]) -> (out0: f32[12,12])
func.func @cut_by_transpose(%x: tensor<12x12xf32>) -> tensor<12x12xf32> {
  %a = kiln.exp %x : tensor<12x12xf32>
  %b = kiln.mul %a, %x : tensor<12x12xf32>
  %t = kiln.transpose %a, permutation = [1, 0] : tensor<12x12xf32>
  %d = kiln.add %b, %t : tensor<12x12xf32>
  %e = kiln.tanh %d : tensor<12x12xf32>
  return %e : tensor<12x12xf32>
}
