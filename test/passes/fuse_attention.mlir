// RUN: kiln-opt %s --split-input-file --kiln-fuse-attention | FileCheck %s

// Heads as the batch dim, a splat scale, a key-padding mask broadcast over
// the queries: one kiln.attention on the mask's source (reshaped to rank 3).
// CHECK-LABEL: func.func @heads
// CHECK-NEXT:    %[[M:.*]] = kiln.reshape %arg3 : (tensor<8x32xf32>) -> tensor<8x1x32xf32>
// CHECK-NEXT:    %[[O:.*]], %{{.*}} = kiln.attention %arg0, %arg1, %arg2 mask %[[M]] {scale = 1.250000e-01 : f64} : tensor<8x16x64xf32>, tensor<8x32x64xf32>, tensor<8x32x48xf32>, tensor<8x1x32xf32>
// CHECK-NEXT:    return %[[O]]
func.func @heads(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x48xf32>, %pad: tensor<8x32xf32>) -> tensor<8x16x48xf32> {
  %kt = kiln.transpose %k, permutation = [0, 2, 1] : tensor<8x32x64xf32>
  %qk = kiln.matmul %q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>
  %c = kiln.constant dense<0.125> : tensor<8x16x32xf32>
  %s = kiln.mul %qk, %c : tensor<8x16x32xf32>
  %mb = kiln.broadcast_in_dim %pad, dims = [0, 2] : (tensor<8x32xf32>) -> tensor<8x16x32xf32>
  %x = kiln.add %s, %mb : tensor<8x16x32xf32>
  %m = kiln.reduce_max %x, dims = [2] : tensor<8x16x32xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x32xf32>
  %sh = kiln.sub %x, %bm : tensor<8x16x32xf32>
  %e = kiln.exp %sh : tensor<8x16x32xf32>
  %z = kiln.reduce_sum %e, dims = [2] : tensor<8x16x32xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x32xf32>
  %p = kiln.div %e, %bz : tensor<8x16x32xf32>
  %o = kiln.matmul %p, %v : tensor<8x16x32xf32>, tensor<8x32x48xf32>
  return %o : tensor<8x16x48xf32>
}

// -----

// One head, the scale as a division by sqrt(D), no mask.
// CHECK-LABEL: func.func @divided
// CHECK-NEXT:    %[[O:.*]], %{{.*}} = kiln.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f64} : tensor<5x16xf64>, tensor<7x16xf64>, tensor<7x3xf64>
// CHECK-NEXT:    return %[[O]]
func.func @divided(%q: tensor<5x16xf64>, %k: tensor<7x16xf64>, %v: tensor<7x3xf64>) -> tensor<5x3xf64> {
  %kt = kiln.transpose %k, permutation = [1, 0] : tensor<7x16xf64>
  %qk = kiln.matmul %q, %kt : tensor<5x16xf64>, tensor<16x7xf64>
  %c = kiln.constant dense<4.0> : tensor<5x7xf64>
  %s = kiln.div %qk, %c : tensor<5x7xf64>
  %m = kiln.reduce_max %s, dims = [1] : tensor<5x7xf64>
  %bm = kiln.broadcast_in_dim %m, dims = [0] : (tensor<5xf64>) -> tensor<5x7xf64>
  %sh = kiln.sub %s, %bm : tensor<5x7xf64>
  %e = kiln.exp %sh : tensor<5x7xf64>
  %z = kiln.reduce_sum %e, dims = [1] : tensor<5x7xf64>
  %bz = kiln.broadcast_in_dim %z, dims = [0] : (tensor<5xf64>) -> tensor<5x7xf64>
  %p = kiln.div %e, %bz : tensor<5x7xf64>
  %o = kiln.matmul %p, %v : tensor<5x7xf64>, tensor<7x3xf64>
  return %o : tensor<5x3xf64>
}

// -----

// A constant mask that is 0 on and below the diagonal and -inf above it is
// the causal flag; no scale is scale 1.
// CHECK-LABEL: func.func @causal_constant
// CHECK-NEXT:    %[[O:.*]], %{{.*}} = kiln.attention %arg0, %arg1, %arg2 {causal, scale = 1.000000e+00 : f64}
// CHECK-NOT:     kiln.constant
func.func @causal_constant(%q: tensor<3x4xf32>, %k: tensor<3x4xf32>, %v: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %kt = kiln.transpose %k, permutation = [1, 0] : tensor<3x4xf32>
  %qk = kiln.matmul %q, %kt : tensor<3x4xf32>, tensor<4x3xf32>
  %mask = kiln.constant dense<[[0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0]]> : tensor<3x3xf32>
  %x = kiln.add %mask, %qk : tensor<3x3xf32>
  %m = kiln.reduce_max %x, dims = [1] : tensor<3x3xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0] : (tensor<3xf32>) -> tensor<3x3xf32>
  %sh = kiln.sub %x, %bm : tensor<3x3xf32>
  %e = kiln.exp %sh : tensor<3x3xf32>
  %z = kiln.reduce_sum %e, dims = [1] : tensor<3x3xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0] : (tensor<3xf32>) -> tensor<3x3xf32>
  %p = kiln.div %e, %bz : tensor<3x3xf32>
  %o = kiln.matmul %p, %v : tensor<3x3xf32>, tensor<3x4xf32>
  return %o : tensor<3x4xf32>
}

// -----

// Not causal: the diagonal is masked too. The mask stays a mask.
// CHECK-LABEL: func.func @strict_mask
// CHECK:         kiln.attention %arg0, %arg1, %arg2 mask %{{.*}} {scale = 1.000000e+00 : f64}
func.func @strict_mask(%q: tensor<2x4xf32>, %k: tensor<2x4xf32>, %v: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %kt = kiln.transpose %k, permutation = [1, 0] : tensor<2x4xf32>
  %qk = kiln.matmul %q, %kt : tensor<2x4xf32>, tensor<4x2xf32>
  %mask = kiln.constant dense<[[0xFF800000, 0xFF800000], [0.0, 0xFF800000]]> : tensor<2x2xf32>
  %x = kiln.add %qk, %mask : tensor<2x2xf32>
  %m = kiln.reduce_max %x, dims = [1] : tensor<2x2xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0] : (tensor<2xf32>) -> tensor<2x2xf32>
  %sh = kiln.sub %x, %bm : tensor<2x2xf32>
  %e = kiln.exp %sh : tensor<2x2xf32>
  %z = kiln.reduce_sum %e, dims = [1] : tensor<2x2xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0] : (tensor<2xf32>) -> tensor<2x2xf32>
  %p = kiln.div %e, %bz : tensor<2x2xf32>
  %o = kiln.matmul %p, %v : tensor<2x2xf32>, tensor<2x4xf32>
  return %o : tensor<2x4xf32>
}

// -----

// The attention weights are returned too: nothing is fused, since the
// softmax must be formed anyway.
// CHECK-LABEL: func.func @weights_returned
// CHECK-NOT:     kiln.attention
func.func @weights_returned(%q: tensor<3x4xf32>, %k: tensor<3x4xf32>, %v: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x3xf32>) {
  %kt = kiln.transpose %k, permutation = [1, 0] : tensor<3x4xf32>
  %qk = kiln.matmul %q, %kt : tensor<3x4xf32>, tensor<4x3xf32>
  %m = kiln.reduce_max %qk, dims = [1] : tensor<3x3xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0] : (tensor<3xf32>) -> tensor<3x3xf32>
  %sh = kiln.sub %qk, %bm : tensor<3x3xf32>
  %e = kiln.exp %sh : tensor<3x3xf32>
  %z = kiln.reduce_sum %e, dims = [1] : tensor<3x3xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0] : (tensor<3xf32>) -> tensor<3x3xf32>
  %p = kiln.div %e, %bz : tensor<3x3xf32>
  %o = kiln.matmul %p, %v : tensor<3x3xf32>, tensor<3x4xf32>
  return %o, %p : tensor<3x4xf32>, tensor<3x3xf32>
}

// -----

// A softmax over the queries (dim 0) is not attention's.
// CHECK-LABEL: func.func @softmax_over_queries
// CHECK-NOT:     kiln.attention
func.func @softmax_over_queries(%q: tensor<3x4xf32>, %k: tensor<3x4xf32>, %v: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %kt = kiln.transpose %k, permutation = [1, 0] : tensor<3x4xf32>
  %qk = kiln.matmul %q, %kt : tensor<3x4xf32>, tensor<4x3xf32>
  %m = kiln.reduce_max %qk, dims = [0] : tensor<3x3xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [1] : (tensor<3xf32>) -> tensor<3x3xf32>
  %sh = kiln.sub %qk, %bm : tensor<3x3xf32>
  %e = kiln.exp %sh : tensor<3x3xf32>
  %z = kiln.reduce_sum %e, dims = [0] : tensor<3x3xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [1] : (tensor<3xf32>) -> tensor<3x3xf32>
  %p = kiln.div %e, %bz : tensor<3x3xf32>
  %o = kiln.matmul %p, %v : tensor<3x3xf32>, tensor<3x4xf32>
  return %o : tensor<3x4xf32>
}

// -----

// Keys not transposed (q k rather than q k^T): no attention.
// CHECK-LABEL: func.func @untransposed
// CHECK-NOT:     kiln.attention
func.func @untransposed(%q: tensor<3x3xf32>, %k: tensor<3x3xf32>, %v: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %qk = kiln.matmul %q, %k : tensor<3x3xf32>, tensor<3x3xf32>
  %m = kiln.reduce_max %qk, dims = [1] : tensor<3x3xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0] : (tensor<3xf32>) -> tensor<3x3xf32>
  %sh = kiln.sub %qk, %bm : tensor<3x3xf32>
  %e = kiln.exp %sh : tensor<3x3xf32>
  %z = kiln.reduce_sum %e, dims = [1] : tensor<3x3xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0] : (tensor<3xf32>) -> tensor<3x3xf32>
  %p = kiln.div %e, %bz : tensor<3x3xf32>
  %o = kiln.matmul %p, %v : tensor<3x3xf32>, tensor<3x4xf32>
  return %o : tensor<3x4xf32>
}
