// Matrix products of f16 and bf16 operands: exact products accumulated in
// f32, the sum rounded once to a half-precision result or kept in f32
// (`-> f32`, result_element_type). Products of at least 16384
// multiply-adds with bf16 operands call oneDNN's bf16 GEMM (f32
// accumulation); smaller ones and f16 ones are loops. The mixed-precision
// layer is what kiln-autocast makes of an f32 one: casts to bf16, an f32
// product, and an f32 epilogue fused with it.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-compile %s --no-fusion -o %t.unfused.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: widened(arg0: bf16[64,96], arg1: bf16[96,48]) -> (out0: f32[64,48])
func.func @widened(%a: tensor<64x96xbf16>, %b: tensor<96x48xbf16>) -> tensor<64x48xf32>
    attributes {kiln.e2e_atol = 1.0e-5 : f64} {
  %c = kiln.matmul %a, %b : tensor<64x96xbf16>, tensor<96x48xbf16> -> f32
  return %c : tensor<64x48xf32>
}

// A rounded bf16 result, batched and too small for the library: loops.
// CHECK: batched_bf16(arg0: bf16[3,5,7], arg1: bf16[3,7,4]) -> (out0: bf16[3,5,4])
func.func @batched_bf16(%a: tensor<3x5x7xbf16>, %b: tensor<3x7x4xbf16>) -> tensor<3x5x4xbf16> {
  %c = kiln.matmul %a, %b : tensor<3x5x7xbf16>, tensor<3x7x4xbf16>
  return %c : tensor<3x5x4xbf16>
}

// A large batched bf16 product: the library's f32 sums. Its results are
// compared in f32, with an absolute tolerance of 1e-5 like every product
// the library computes here: it adds in an order of its own (which differs
// between CPUs: with AMX tiles a sum that cancels keeps about 2e-6 of its
// terms' error), so a half-precision rounding of
// its sums can differ from the evaluator's by one ulp, and half-precision
// results are compared bit for bit. Rounded results come from loop-sized
// products above, which add in the evaluator's order.
// CHECK: batched_library(arg0: bf16[4,32,64], arg1: bf16[4,64,40]) -> (out0: f32[4,32,40])
func.func @batched_library(%a: tensor<4x32x64xbf16>, %b: tensor<4x64x40xbf16>) -> tensor<4x32x40xf32>
    attributes {kiln.e2e_atol = 1.0e-5 : f64} {
  %c = kiln.matmul %a, %b : tensor<4x32x64xbf16>, tensor<4x64x40xbf16> -> f32
  return %c : tensor<4x32x40xf32>
}

// CHECK: f16_widened(arg0: f16[5,7], arg1: f16[7,4]) -> (out0: f32[5,4], out1: f16[5,4])
func.func @f16_widened(%a: tensor<5x7xf16>, %b: tensor<7x4xf16>) -> (tensor<5x4xf32>, tensor<5x4xf16>) {
  %c = kiln.matmul %a, %b : tensor<5x7xf16>, tensor<7x4xf16> -> f32
  %d = kiln.matmul %a, %b : tensor<5x7xf16>, tensor<7x4xf16>
  return %c, %d : tensor<5x4xf32>, tensor<5x4xf16>
}

// Operands read transposed (x^T w and x w^T), as gradients read them.
// CHECK: transposed(arg0: bf16[96,64], arg1: bf16[48,96]) -> (out0: f32[64,48])
func.func @transposed(%a: tensor<96x64xbf16>, %b: tensor<48x96xbf16>) -> tensor<64x48xf32>
    attributes {kiln.e2e_atol = 1.0e-5 : f64} {
  %at = kiln.transpose %a, permutation = [1, 0] : tensor<96x64xbf16>
  %bt = kiln.transpose %b, permutation = [1, 0] : tensor<48x96xbf16>
  %c = kiln.matmul %at, %bt : tensor<64x96xbf16>, tensor<96x48xbf16> -> f32
  return %c : tensor<64x48xf32>
}

// CHECK: mixed_layer(arg0: f32[32,128], arg1: f32[128,64], arg2: f32[64]) -> (out0: f32[32,64])
func.func @mixed_layer(%x: tensor<32x128xf32>, %w: tensor<128x64xf32>, %b: tensor<64xf32>) -> tensor<32x64xf32>
    attributes {kiln.e2e_atol = 1.0e-5 : f64} {
  %xh = kiln.cast %x : tensor<32x128xf32> to tensor<32x128xbf16>
  %wh = kiln.cast %w : tensor<128x64xf32> to tensor<128x64xbf16>
  %m = kiln.matmul %xh, %wh : tensor<32x128xbf16>, tensor<128x64xbf16> -> f32
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<64xf32>) -> tensor<32x64xf32>
  %a = kiln.add %m, %bb : tensor<32x64xf32>
  %r = kiln.relu %a : tensor<32x64xf32>
  return %r : tensor<32x64xf32>
}
