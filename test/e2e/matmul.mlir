// matmul (2-D and batched), gather, and a small MLP forward pass.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: matmul_f32(arg0: f32[1,1], arg1: f32[1,1], arg2: f32[3,17], arg3: f32[17,5]) -> (out0: f32[1,1], out1: f32[3,5])
func.func @matmul_f32(%a: tensor<1x1xf32>, %b: tensor<1x1xf32>, %c: tensor<3x17xf32>, %d: tensor<17x5xf32>) -> (tensor<1x1xf32>, tensor<3x5xf32>) {
  %ab = kiln.matmul %a, %b : tensor<1x1xf32>, tensor<1x1xf32>
  %cd = kiln.matmul %c, %d : tensor<3x17xf32>, tensor<17x5xf32>
  return %ab, %cd : tensor<1x1xf32>, tensor<3x5xf32>
}

// Large enough to be a oneDNN sgemm call, which sums in another order.
// CHECK: matmul_f32_64(arg0: f32[64,64], arg1: f32[64,64]) -> (out0: f32[64,64])
func.func @matmul_f32_64(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32>
    attributes {kiln.e2e_atol = 1.0e-4 : f64} {
  %ab = kiln.matmul %a, %b : tensor<64x64xf32>, tensor<64x64xf32>
  return %ab : tensor<64x64xf32>
}

// A product whose operands are themselves computed, with a transpose:
// (a^T a) is symmetric.
// CHECK: matmul_f64(arg0: f64[3,17], arg1: f64[17,5], arg2: f64[17,3]) -> (out0: f64[3,5], out1: f64[3,3])
func.func @matmul_f64(%a: tensor<3x17xf64>, %b: tensor<17x5xf64>, %c: tensor<17x3xf64>) -> (tensor<3x5xf64>, tensor<3x3xf64>) {
  %ab = kiln.matmul %a, %b : tensor<3x17xf64>, tensor<17x5xf64>
  %ct = kiln.transpose %c, permutation = [1, 0] : tensor<17x3xf64>
  %ctc = kiln.matmul %ct, %c : tensor<3x17xf64>, tensor<17x3xf64>
  return %ab, %ctc : tensor<3x5xf64>, tensor<3x3xf64>
}

// CHECK: matmul_i32(arg0: i32[17,3], arg1: i32[3,1], arg2: i32[1,1], arg3: i32[1,1], arg4: i32[64,64], arg5: i32[64,64]) -> (out0: i32[17,1], out1: i32[1,1], out2: i32[64,64])
func.func @matmul_i32(%a: tensor<17x3xi32>, %b: tensor<3x1xi32>, %c: tensor<1x1xi32>, %d: tensor<1x1xi32>, %e: tensor<64x64xi32>, %f: tensor<64x64xi32>) -> (tensor<17x1xi32>, tensor<1x1xi32>, tensor<64x64xi32>) {
  %ab = kiln.matmul %a, %b : tensor<17x3xi32>, tensor<3x1xi32>
  %cd = kiln.matmul %c, %d : tensor<1x1xi32>, tensor<1x1xi32>
  %ef = kiln.matmul %e, %f : tensor<64x64xi32>, tensor<64x64xi32>
  return %ab, %cd, %ef : tensor<17x1xi32>, tensor<1x1xi32>, tensor<64x64xi32>
}

// CHECK: batch_matmul(arg0: f32[2,3,17], arg1: f32[2,17,5], arg2: f64[1,1,1], arg3: f64[1,1,1], arg4: i32[3,17,5], arg5: i32[3,5,1]) -> (out0: f32[2,3,5], out1: f64[1,1,1], out2: i32[3,17,1])
func.func @batch_matmul(%a: tensor<2x3x17xf32>, %b: tensor<2x17x5xf32>, %c: tensor<1x1x1xf64>, %d: tensor<1x1x1xf64>, %e: tensor<3x17x5xi32>, %f: tensor<3x5x1xi32>) -> (tensor<2x3x5xf32>, tensor<1x1x1xf64>, tensor<3x17x1xi32>) {
  %ab = kiln.matmul %a, %b : tensor<2x3x17xf32>, tensor<2x17x5xf32>
  %cd = kiln.matmul %c, %d : tensor<1x1x1xf64>, tensor<1x1x1xf64>
  %ef = kiln.matmul %e, %f : tensor<3x17x5xi32>, tensor<3x5x1xi32>
  return %ab, %cd, %ef : tensor<2x3x5xf32>, tensor<1x1x1xf64>, tensor<3x17x1xi32>
}

// Indices are random in [-8, 8]: negative ones clamp to row 0, and those
// past the last row of a 3-row table clamp to row 2.
// CHECK: gather_rank1(arg0: f32[17,5], arg1: i32[3], arg2: f64[3,2], arg3: i64[17], arg4: i32[1000], arg5: i32[1]) -> (out0: f32[3,5], out1: f64[17,2], out2: i32[1])
func.func @gather_rank1(%table: tensor<17x5xf32>, %idx: tensor<3xi32>, %small: tensor<3x2xf64>, %idx64: tensor<17xi64>, %vec: tensor<1000xi32>, %one: tensor<1xi32>) -> (tensor<3x5xf32>, tensor<17x2xf64>, tensor<1xi32>) {
  %r0 = kiln.gather %table, %idx : tensor<17x5xf32>, tensor<3xi32>
  %r1 = kiln.gather %small, %idx64 : tensor<3x2xf64>, tensor<17xi64>
  // A rank-1 table gives one element per index.
  %r2 = kiln.gather %vec, %one : tensor<1000xi32>, tensor<1xi32>
  return %r0, %r1, %r2 : tensor<3x5xf32>, tensor<17x2xf64>, tensor<1xi32>
}

// Rank-2 indices, and constant indices far out of range on both sides.
// CHECK: gather_rank2(arg0: f32[5,2,3], arg1: i64[3,4], arg2: i1[4,1], arg3: i32[2,3]) -> (out0: f32[3,4,2,3], out1: i1[2,3,1], out2: f32[2,2,2,3])
func.func @gather_rank2(%table: tensor<5x2x3xf32>, %idx: tensor<3x4xi64>, %mask: tensor<4x1xi1>, %idx32: tensor<2x3xi32>) -> (tensor<3x4x2x3xf32>, tensor<2x3x1xi1>, tensor<2x2x2x3xf32>) {
  %r0 = kiln.gather %table, %idx : tensor<5x2x3xf32>, tensor<3x4xi64>
  %r1 = kiln.gather %mask, %idx32 : tensor<4x1xi1>, tensor<2x3xi32>
  %far = kiln.constant dense<[[-1000000, 4], [2, 9223372036854775807]]> : tensor<2x2xi64>
  %r2 = kiln.gather %table, %far : tensor<5x2x3xf32>, tensor<2x2xi64>
  return %r0, %r1, %r2 : tensor<3x4x2x3xf32>, tensor<2x3x1xi1>, tensor<2x2x2x3xf32>
}

// An embedding lookup feeding a matmul.
// CHECK: embedding_matmul(arg0: f32[17,5], arg1: i32[3], arg2: f32[5,3]) -> (out0: f32[3,3])
func.func @embedding_matmul(%emb: tensor<17x5xf32>, %tokens: tensor<3xi32>, %w: tensor<5x3xf32>) -> tensor<3x3xf32> {
  %e = kiln.gather %emb, %tokens : tensor<17x5xf32>, tensor<3xi32>
  %y = kiln.matmul %e, %w : tensor<3x5xf32>, tensor<5x3xf32>
  return %y : tensor<3x3xf32>
}

// A two-layer perceptron: relu(x w1 + b1) w2 + b2, then a softmax over the
// classes computed with reduce_max / exp / reduce_sum / div. The weights
// are scaled by 1/4 so that the logits stay moderate.
// CHECK: mlp_forward(arg0: f32[3,17], arg1: f32[17,64], arg2: f32[64], arg3: f32[64,5], arg4: f32[5]) -> (out0: f32[3,5], out1: f32[3])
func.func @mlp_forward(%x: tensor<3x17xf32>, %w1: tensor<17x64xf32>, %b1: tensor<64xf32>, %w2: tensor<64x5xf32>, %b2: tensor<5xf32>) -> (tensor<3x5xf32>, tensor<3xf32>) {
  %q1 = kiln.constant dense<0.25> : tensor<17x64xf32>
  %w1s = kiln.mul %w1, %q1 : tensor<17x64xf32>
  %h0 = kiln.matmul %x, %w1s : tensor<3x17xf32>, tensor<17x64xf32>
  %b1b = kiln.broadcast_in_dim %b1, dims = [1] : (tensor<64xf32>) -> tensor<3x64xf32>
  %h1 = kiln.add %h0, %b1b : tensor<3x64xf32>
  %h = kiln.relu %h1 : tensor<3x64xf32>
  %q2 = kiln.constant dense<0.25> : tensor<64x5xf32>
  %w2s = kiln.mul %w2, %q2 : tensor<64x5xf32>
  %l0 = kiln.matmul %h, %w2s : tensor<3x64xf32>, tensor<64x5xf32>
  %b2b = kiln.broadcast_in_dim %b2, dims = [1] : (tensor<5xf32>) -> tensor<3x5xf32>
  %logits = kiln.add %l0, %b2b : tensor<3x5xf32>
  // softmax along dim 1
  %m = kiln.reduce_max %logits, dims = [1] : tensor<3x5xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : (tensor<3xf32>) -> tensor<3x5xf32>
  %shifted = kiln.sub %logits, %mb : tensor<3x5xf32>
  %e = kiln.exp %shifted : tensor<3x5xf32>
  %s = kiln.reduce_sum %e, dims = [1] : tensor<3x5xf32>
  %sb = kiln.broadcast_in_dim %s, dims = [0] : (tensor<3xf32>) -> tensor<3x5xf32>
  %probs = kiln.div %e, %sb : tensor<3x5xf32>
  // The probabilities of each row sum to 1 (up to rounding).
  %total = kiln.reduce_sum %probs, dims = [1] : tensor<3x5xf32>
  return %probs, %total : tensor<3x5xf32>, tensor<3xf32>
}
