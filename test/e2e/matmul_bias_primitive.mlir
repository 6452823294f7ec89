// Dense layers whose product runs through oneDNN's matmul primitive (B
// read transposed, as in x * W^T) with a bias row added after it: the CPU
// backend passes the bias to the primitive, which adds it as it writes
// the product (kiln-cpu-matmul-to-dnnl, KILN_DNNL_MATMUL_BIAS); followed
// by an activation, and in a batch of products. Each x is scaled by 1/32
// (exactly), so that the products' rounding stays within the harness's
// absolute tolerance where product and bias nearly cancel.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s
// RUN: kiln-compile %s --emit=mlir | FileCheck %s --check-prefix=CALLS

// Flags 2 (B transposed) | 32 (bias): 34.
// CALLS: llvm.mlir.constant(34 : i64)
// CALLS: llvm.call @kiln_dnnl_matmul

// CHECK: dense(arg0: f32[40,96], arg1: f32[72,96], arg2: f32[72]) -> (out0: f32[40,72])
func.func @dense(%x: tensor<40x96xf32>, %w: tensor<72x96xf32>, %b: tensor<72xf32>) -> tensor<40x72xf32> {
  %k = kiln.constant dense<0.03125> : tensor<40x96xf32>
  %xs = kiln.mul %x, %k : tensor<40x96xf32>
  %wt = kiln.transpose %w, permutation = [1, 0] : tensor<72x96xf32>
  %p = kiln.matmul %xs, %wt : tensor<40x96xf32>, tensor<96x72xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<72xf32>) -> tensor<40x72xf32>
  %y = kiln.add %p, %bb : tensor<40x72xf32>
  return %y : tensor<40x72xf32>
}

// CHECK: dense_relu(arg0: f32[40,96], arg1: f32[72,96], arg2: f32[72]) -> (out0: f32[40,72])
func.func @dense_relu(%x: tensor<40x96xf32>, %w: tensor<72x96xf32>, %b: tensor<72xf32>) -> tensor<40x72xf32> {
  %k = kiln.constant dense<0.03125> : tensor<40x96xf32>
  %xs = kiln.mul %x, %k : tensor<40x96xf32>
  %wt = kiln.transpose %w, permutation = [1, 0] : tensor<72x96xf32>
  %p = kiln.matmul %xs, %wt : tensor<40x96xf32>, tensor<96x72xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<72xf32>) -> tensor<40x72xf32>
  %y = kiln.add %bb, %p : tensor<40x72xf32>
  %zero = kiln.constant dense<0.0> : tensor<40x72xf32>
  %r = kiln.max %y, %zero : tensor<40x72xf32>
  return %r : tensor<40x72xf32>
}

// CHECK: batched_dense(arg0: f32[3,24,64], arg1: f32[3,56,64], arg2: f32[56]) -> (out0: f32[3,24,56])
func.func @batched_dense(%x: tensor<3x24x64xf32>, %w: tensor<3x56x64xf32>, %b: tensor<56xf32>) -> tensor<3x24x56xf32> {
  %k = kiln.constant dense<0.03125> : tensor<3x24x64xf32>
  %xs = kiln.mul %x, %k : tensor<3x24x64xf32>
  %wt = kiln.transpose %w, permutation = [0, 2, 1] : tensor<3x56x64xf32>
  %p = kiln.matmul %xs, %wt : tensor<3x24x64xf32>, tensor<3x64x56xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [2] : (tensor<56xf32>) -> tensor<3x24x56xf32>
  %y = kiln.add %p, %bb : tensor<3x24x56xf32>
  return %y : tensor<3x24x56xf32>
}
