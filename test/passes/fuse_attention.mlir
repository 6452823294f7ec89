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

// The same with the lowest float above the diagonal (transformers' and the
// dynamo exporter's causal mask) is causal too.
// CHECK-LABEL: func.func @causal_lowest_float
// CHECK-NEXT:    %{{.*}}, %{{.*}} = kiln.attention %arg0, %arg1, %arg2 {causal, scale = 1.000000e+00 : f64}
// CHECK-NOT:     kiln.constant
func.func @causal_lowest_float(%q: tensor<3x4xf32>, %k: tensor<3x4xf32>, %v: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %kt = kiln.transpose %k, permutation = [1, 0] : tensor<3x4xf32>
  %qk = kiln.matmul %q, %kt : tensor<3x4xf32>, tensor<4x3xf32>
  %mask = kiln.constant dense<[[0.0, 0xFF7FFFFF, 0xFF7FFFFF], [0.0, 0.0, 0xFF7FFFFF], [0.0, 0.0, 0.0]]> : tensor<3x3xf32>
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

// Such a constant broadcast over the heads (as exported models add it to
// the scores of every head) is causal too; the broadcast is left unused.
// CHECK-LABEL: func.func @causal_broadcast
// CHECK:         %{{.*}}, %{{.*}} = kiln.attention %arg0, %arg1, %arg2 {causal, scale = 1.000000e+00 : f64}
// CHECK-NOT:     mask
func.func @causal_broadcast(%q: tensor<2x3x4xf32>, %k: tensor<2x3x4xf32>, %v: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %kt = kiln.transpose %k, permutation = [0, 2, 1] : tensor<2x3x4xf32>
  %qk = kiln.matmul %q, %kt : tensor<2x3x4xf32>, tensor<2x4x3xf32>
  %mask = kiln.constant dense<[[[0.0, 0xFF7FFFFF, 0xFF7FFFFF], [0.0, 0.0, 0xFF7FFFFF], [0.0, 0.0, 0.0]]]> : tensor<1x3x3xf32>
  %bmask = kiln.broadcast_in_dim %mask, dims = [0, 1, 2] : (tensor<1x3x3xf32>) -> tensor<2x3x3xf32>
  %x = kiln.add %qk, %bmask : tensor<2x3x3xf32>
  %m = kiln.reduce_max %x, dims = [2] : tensor<2x3x3xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3x3xf32>
  %sh = kiln.sub %x, %bm : tensor<2x3x3xf32>
  %e = kiln.exp %sh : tensor<2x3x3xf32>
  %z = kiln.reduce_sum %e, dims = [2] : tensor<2x3x3xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3x3xf32>
  %p = kiln.div %e, %bz : tensor<2x3x3xf32>
  %o = kiln.matmul %p, %v : tensor<2x3x3xf32>, tensor<2x3x4xf32>
  return %o : tensor<2x3x4xf32>
}

// -----

// A large finite value that is not the lowest float (-1e9) is a mask.
// CHECK-LABEL: func.func @not_causal_large_negative
// CHECK:         %[[MASK:.*]] = kiln.constant
// CHECK:         kiln.attention %arg0, %arg1, %arg2 mask %[[MASK]] {scale = 1.000000e+00 : f64}
func.func @not_causal_large_negative(%q: tensor<3x4xf32>, %k: tensor<3x4xf32>, %v: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %kt = kiln.transpose %k, permutation = [1, 0] : tensor<3x4xf32>
  %qk = kiln.matmul %q, %kt : tensor<3x4xf32>, tensor<4x3xf32>
  %mask = kiln.constant dense<[[0.0, -1.0e9, -1.0e9], [0.0, 0.0, -1.0e9], [0.0, 0.0, 0.0]]> : tensor<3x3xf32>
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

// -----

// Heads at rank 4 as PyTorch's exporter writes them: a batched product of
// rank 3 between reshapes, the scale split between q and k^T, k^T a
// transpose of [B, Nk, H, D] straight to [B, H, D, Nk], the mask a select
// between finite constants, and where(isnan(p), 0, p) after the softmax:
// one kiln.attention on rank-4 operands, the key transposed to [B, H, Nk, D].
// CHECK-LABEL: func.func @exported_heads
// CHECK-DAG:     %[[Q:.*]] = kiln.transpose %arg0, permutation = [0, 2, 1, 3]
// CHECK-DAG:     %[[V:.*]] = kiln.transpose %arg2, permutation = [0, 2, 1, 3]
// CHECK-DAG:     %[[SEL:.*]] = kiln.select %arg3
// CHECK:         %[[M:.*]] = kiln.reshape %[[SEL]] : (tensor<2x1x1x5xf32>) -> tensor<2x1x1x5xf32>
// CHECK-NEXT:    %[[K:.*]] = kiln.transpose %arg1, permutation = [0, 2, 1, 3] : tensor<2x5x3x4xf32>
// CHECK-NEXT:    %[[O:.*]], %{{.*}} = kiln.attention %[[Q]], %[[K]], %[[V]] mask %[[M]] {scale = 1.250000e-01 : f64} : tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x1x1x5xf32>
// CHECK-NEXT:    return %[[O]]
func.func @exported_heads(%q: tensor<2x5x3x4xf32>, %k: tensor<2x5x3x4xf32>, %v: tensor<2x5x3x4xf32>, %keep: tensor<2x1x1x5xi1>) -> tensor<2x3x5x4xf32> {
  %qh = kiln.transpose %q, permutation = [0, 2, 1, 3] : tensor<2x5x3x4xf32>
  %vh = kiln.transpose %v, permutation = [0, 2, 1, 3] : tensor<2x5x3x4xf32>
  %kt = kiln.transpose %k, permutation = [0, 2, 3, 1] : tensor<2x5x3x4xf32>
  %cq = kiln.constant dense<0.5> : tensor<2x3x5x4xf32>
  %ck = kiln.constant dense<0.25> : tensor<2x3x4x5xf32>
  %qs = kiln.mul %qh, %cq : tensor<2x3x5x4xf32>
  %ks = kiln.mul %kt, %ck : tensor<2x3x4x5xf32>
  %q3 = kiln.reshape %qs : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %k3 = kiln.reshape %ks : (tensor<2x3x4x5xf32>) -> tensor<6x4x5xf32>
  %qk = kiln.matmul %q3, %k3 : tensor<6x5x4xf32>, tensor<6x4x5xf32>
  %s = kiln.reshape %qk : (tensor<6x5x5xf32>) -> tensor<2x3x5x5xf32>
  %zero = kiln.constant dense<0.0> : tensor<2x1x1x5xf32>
  %low = kiln.constant dense<-3.40282347E+38> : tensor<2x1x1x5xf32>
  %mask = kiln.select %keep, %zero, %low : tensor<2x1x1x5xi1>, tensor<2x1x1x5xf32>
  %mb = kiln.broadcast_in_dim %mask, dims = [0, 1, 2, 3] : (tensor<2x1x1x5xf32>) -> tensor<2x3x5x5xf32>
  %x = kiln.add %s, %mb : tensor<2x3x5x5xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<2x3x5x5xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>
  %sh = kiln.sub %x, %bm : tensor<2x3x5x5xf32>
  %e = kiln.exp %sh : tensor<2x3x5x5xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<2x3x5x5xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>
  %p = kiln.div %e, %bz : tensor<2x3x5x5xf32>
  %nan = kiln.compare ne, %p, %p : tensor<2x3x5x5xf32>
  %fill = kiln.constant dense<0.0> : tensor<2x3x5x5xf32>
  %g = kiln.select %nan, %fill, %p : tensor<2x3x5x5xi1>, tensor<2x3x5x5xf32>
  %p3 = kiln.reshape %g : (tensor<2x3x5x5xf32>) -> tensor<6x5x5xf32>
  %v3 = kiln.reshape %vh : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %o3 = kiln.matmul %p3, %v3 : tensor<6x5x5xf32>, tensor<6x5x4xf32>
  %o = kiln.reshape %o3 : (tensor<6x5x4xf32>) -> tensor<2x3x5x4xf32>
  return %o : tensor<2x3x5x4xf32>
}
// -----

// The same with a mask that may hold -inf (an argument): the rows that it
// masks out entirely (or where it holds +inf or NaN), NaN in kiln.attention
// and zeros after the guard, are zeroed after the op.
// CHECK-LABEL: func.func @exported_infinite_mask
// CHECK:         %[[M:.*]] = kiln.reshape %arg3 : (tensor<2x1x1x5xf32>) -> tensor<2x1x1x5xf32>
// CHECK:         %[[O:.*]], %{{.*}} = kiln.attention %{{.*}}, %{{.*}}, %{{.*}} mask %[[M]] {scale = 1.250000e-01 : f64}
// CHECK-DAG:     %[[FINITE:.*]] = kiln.compare lt, %[[M]], %{{.*}} : tensor<2x1x1x5xf32>
// CHECK-DAG:     %[[KIND1:.*]] = kiln.select %[[FINITE]]
// CHECK-DAG:     %[[NEG:.*]] = kiln.compare eq, %[[M]], %{{.*}} : tensor<2x1x1x5xf32>
// CHECK:         %[[KIND:.*]] = kiln.select %[[NEG]], %{{.*}}, %[[KIND1]]
// CHECK:         %[[LARGEST:.*]] = kiln.reduce_max %[[KIND]], dims = [3] : tensor<2x1x1x5xf32>
// CHECK:         %[[ROW:.*]] = kiln.reshape %[[LARGEST]] : (tensor<2x1x1xf32>) -> tensor<2x1x1x1xf32>
// CHECK:         %[[EMPTY:.*]] = kiln.compare ne, %[[ROW]], %{{.*}} : tensor<2x1x1x1xf32>
// CHECK:         %[[ROWS:.*]] = kiln.broadcast_in_dim %[[EMPTY]], dims = [0, 1, 2, 3] : (tensor<2x1x1x1xi1>) -> tensor<2x3x5x4xi1>
// CHECK:         %[[Z:.*]] = kiln.select %[[ROWS]], %{{.*}}, %[[O]] : tensor<2x3x5x4xi1>, tensor<2x3x5x4xf32>
// CHECK-NEXT:    return %[[Z]]
func.func @exported_infinite_mask(%q: tensor<2x5x3x4xf32>, %k: tensor<2x5x3x4xf32>, %v: tensor<2x5x3x4xf32>, %mask: tensor<2x1x1x5xf32>) -> tensor<2x3x5x4xf32> {
  %qh = kiln.transpose %q, permutation = [0, 2, 1, 3] : tensor<2x5x3x4xf32>
  %vh = kiln.transpose %v, permutation = [0, 2, 1, 3] : tensor<2x5x3x4xf32>
  %kt = kiln.transpose %k, permutation = [0, 2, 3, 1] : tensor<2x5x3x4xf32>
  %cq = kiln.constant dense<0.5> : tensor<2x3x5x4xf32>
  %ck = kiln.constant dense<0.25> : tensor<2x3x4x5xf32>
  %qs = kiln.mul %qh, %cq : tensor<2x3x5x4xf32>
  %ks = kiln.mul %kt, %ck : tensor<2x3x4x5xf32>
  %q3 = kiln.reshape %qs : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %k3 = kiln.reshape %ks : (tensor<2x3x4x5xf32>) -> tensor<6x4x5xf32>
  %qk = kiln.matmul %q3, %k3 : tensor<6x5x4xf32>, tensor<6x4x5xf32>
  %s = kiln.reshape %qk : (tensor<6x5x5xf32>) -> tensor<2x3x5x5xf32>
  %mb = kiln.broadcast_in_dim %mask, dims = [0, 1, 2, 3] : (tensor<2x1x1x5xf32>) -> tensor<2x3x5x5xf32>
  %x = kiln.add %s, %mb : tensor<2x3x5x5xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<2x3x5x5xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>
  %sh = kiln.sub %x, %bm : tensor<2x3x5x5xf32>
  %e = kiln.exp %sh : tensor<2x3x5x5xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<2x3x5x5xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>
  %p = kiln.div %e, %bz : tensor<2x3x5x5xf32>
  %nan = kiln.compare ne, %p, %p : tensor<2x3x5x5xf32>
  %fill = kiln.constant dense<0.0> : tensor<2x3x5x5xf32>
  %g = kiln.select %nan, %fill, %p : tensor<2x3x5x5xi1>, tensor<2x3x5x5xf32>
  %p3 = kiln.reshape %g : (tensor<2x3x5x5xf32>) -> tensor<6x5x5xf32>
  %v3 = kiln.reshape %vh : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %o3 = kiln.matmul %p3, %v3 : tensor<6x5x5xf32>, tensor<6x5x4xf32>
  %o = kiln.reshape %o3 : (tensor<6x5x4xf32>) -> tensor<2x3x5x4xf32>
  return %o : tensor<2x3x5x4xf32>
}
// -----

// A select after the softmax that is not the NaN guard (NaN to 1): no
// attention.
// CHECK-LABEL: func.func @exported_nan_to_one
// CHECK-NOT:     kiln.attention
func.func @exported_nan_to_one(%q: tensor<2x5x3x4xf32>, %k: tensor<2x5x3x4xf32>, %v: tensor<2x5x3x4xf32>, %keep: tensor<2x1x1x5xi1>) -> tensor<2x3x5x4xf32> {
  %qh = kiln.transpose %q, permutation = [0, 2, 1, 3] : tensor<2x5x3x4xf32>
  %vh = kiln.transpose %v, permutation = [0, 2, 1, 3] : tensor<2x5x3x4xf32>
  %kt = kiln.transpose %k, permutation = [0, 2, 3, 1] : tensor<2x5x3x4xf32>
  %cq = kiln.constant dense<0.5> : tensor<2x3x5x4xf32>
  %ck = kiln.constant dense<0.25> : tensor<2x3x4x5xf32>
  %qs = kiln.mul %qh, %cq : tensor<2x3x5x4xf32>
  %ks = kiln.mul %kt, %ck : tensor<2x3x4x5xf32>
  %q3 = kiln.reshape %qs : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %k3 = kiln.reshape %ks : (tensor<2x3x4x5xf32>) -> tensor<6x4x5xf32>
  %qk = kiln.matmul %q3, %k3 : tensor<6x5x4xf32>, tensor<6x4x5xf32>
  %s = kiln.reshape %qk : (tensor<6x5x5xf32>) -> tensor<2x3x5x5xf32>
  %zero = kiln.constant dense<0.0> : tensor<2x1x1x5xf32>
  %low = kiln.constant dense<-3.40282347E+38> : tensor<2x1x1x5xf32>
  %mask = kiln.select %keep, %zero, %low : tensor<2x1x1x5xi1>, tensor<2x1x1x5xf32>
  %mb = kiln.broadcast_in_dim %mask, dims = [0, 1, 2, 3] : (tensor<2x1x1x5xf32>) -> tensor<2x3x5x5xf32>
  %x = kiln.add %s, %mb : tensor<2x3x5x5xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<2x3x5x5xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>
  %sh = kiln.sub %x, %bm : tensor<2x3x5x5xf32>
  %e = kiln.exp %sh : tensor<2x3x5x5xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<2x3x5x5xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>
  %p = kiln.div %e, %bz : tensor<2x3x5x5xf32>
  %nan = kiln.compare ne, %p, %p : tensor<2x3x5x5xf32>
  %fill = kiln.constant dense<1.0> : tensor<2x3x5x5xf32>
  %g = kiln.select %nan, %fill, %p : tensor<2x3x5x5xi1>, tensor<2x3x5x5xf32>
  %p3 = kiln.reshape %g : (tensor<2x3x5x5xf32>) -> tensor<6x5x5xf32>
  %v3 = kiln.reshape %vh : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %o3 = kiln.matmul %p3, %v3 : tensor<6x5x5xf32>, tensor<6x5x4xf32>
  %o = kiln.reshape %o3 : (tensor<6x5x4xf32>) -> tensor<2x3x5x4xf32>
  return %o : tensor<2x3x5x4xf32>
}
// -----

// The scale after a batched product of rank 3 and before the split into
// heads (GPT-2's eager attention as exported), an additive mask of rank 4
// broadcast over the heads, no NaN guard.
// CHECK-LABEL: func.func @exported_scaled_after
// CHECK-NEXT:    %[[M:.*]] = kiln.reshape %arg3 : (tensor<1x1x5x5xf32>) -> tensor<1x1x5x5xf32>
// CHECK-NEXT:    %[[O:.*]], %{{.*}} = kiln.attention %arg0, %arg1, %arg2 mask %[[M]] {scale = 1.250000e-01 : f64} : tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<1x1x5x5xf32>
// CHECK-NEXT:    return %[[O]]
func.func @exported_scaled_after(%q: tensor<2x3x5x4xf32>, %k: tensor<2x3x5x4xf32>, %v: tensor<2x3x5x4xf32>, %mask: tensor<1x1x5x5xf32>) -> tensor<2x3x5x4xf32> {
  %kt = kiln.transpose %k, permutation = [0, 1, 3, 2] : tensor<2x3x5x4xf32>
  %q3 = kiln.reshape %q : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %k3 = kiln.reshape %kt : (tensor<2x3x4x5xf32>) -> tensor<6x4x5xf32>
  %qk = kiln.matmul %q3, %k3 : tensor<6x5x4xf32>, tensor<6x4x5xf32>
  %c = kiln.constant dense<0.125> : tensor<6x5x5xf32>
  %qkc = kiln.mul %qk, %c : tensor<6x5x5xf32>
  %s = kiln.reshape %qkc : (tensor<6x5x5xf32>) -> tensor<2x3x5x5xf32>
  %mb = kiln.broadcast_in_dim %mask, dims = [0, 1, 2, 3] : (tensor<1x1x5x5xf32>) -> tensor<2x3x5x5xf32>
  %x = kiln.add %s, %mb : tensor<2x3x5x5xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<2x3x5x5xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>
  %sh = kiln.sub %x, %bm : tensor<2x3x5x5xf32>
  %e = kiln.exp %sh : tensor<2x3x5x5xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<2x3x5x5xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>
  %p = kiln.div %e, %bz : tensor<2x3x5x5xf32>
  %p3 = kiln.reshape %p : (tensor<2x3x5x5xf32>) -> tensor<6x5x5xf32>
  %v3 = kiln.reshape %v : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %o3 = kiln.matmul %p3, %v3 : tensor<6x5x5xf32>, tensor<6x5x4xf32>
  %o = kiln.reshape %o3 : (tensor<6x5x4xf32>) -> tensor<2x3x5x4xf32>
  return %o : tensor<2x3x5x4xf32>
}

// -----

// Heads split from a batched product whose leading dim the reshapes split
// differently on the two sides (2x3 for the scores, 3x2 for the output):
// no attention.
// CHECK-LABEL: func.func @exported_heads_disagree
// CHECK-NOT:     kiln.attention
func.func @exported_heads_disagree(%q: tensor<2x3x5x4xf32>, %k: tensor<2x3x5x4xf32>, %v: tensor<3x2x5x4xf32>) -> tensor<3x2x5x4xf32> {
  %kt = kiln.transpose %k, permutation = [0, 1, 3, 2] : tensor<2x3x5x4xf32>
  %q3 = kiln.reshape %q : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %k3 = kiln.reshape %kt : (tensor<2x3x4x5xf32>) -> tensor<6x4x5xf32>
  %qk = kiln.matmul %q3, %k3 : tensor<6x5x4xf32>, tensor<6x4x5xf32>
  %x = kiln.reshape %qk : (tensor<6x5x5xf32>) -> tensor<2x3x5x5xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<2x3x5x5xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>
  %sh = kiln.sub %x, %bm : tensor<2x3x5x5xf32>
  %e = kiln.exp %sh : tensor<2x3x5x5xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<2x3x5x5xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>
  %p = kiln.div %e, %bz : tensor<2x3x5x5xf32>
  %p3 = kiln.reshape %p : (tensor<2x3x5x5xf32>) -> tensor<6x5x5xf32>
  %v3 = kiln.reshape %v : (tensor<3x2x5x4xf32>) -> tensor<6x5x4xf32>
  %o3 = kiln.matmul %p3, %v3 : tensor<6x5x5xf32>, tensor<6x5x4xf32>
  %o = kiln.reshape %o3 : (tensor<6x5x4xf32>) -> tensor<3x2x5x4xf32>
  return %o : tensor<3x2x5x4xf32>
}

// -----

// BERT as exported and canonicalized: k^T at rank 3, the transpose (and
// its scale) of a merge of the key's heads [B, H, Nk, D], which is then
// the key as it is.
// CHECK-LABEL: func.func @exported_key_merged
// CHECK:         %[[K:.*]] = kiln.transpose %arg1, permutation = [0, 2, 1, 3]
// CHECK:         %{{.*}}, %{{.*}} = kiln.attention %{{.*}}, %[[K]], %arg2 {scale = 1.250000e-01 : f64} : tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>
// CHECK-NOT:     kiln.matmul
func.func @exported_key_merged(%q: tensor<2x5x3x4xf32>, %k: tensor<2x5x3x4xf32>, %v: tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32> {
  %qh = kiln.transpose %q, permutation = [0, 2, 1, 3] : tensor<2x5x3x4xf32>
  %kh = kiln.transpose %k, permutation = [0, 2, 1, 3] : tensor<2x5x3x4xf32>
  %k3 = kiln.reshape %kh : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %kt = kiln.transpose %k3, permutation = [0, 2, 1] : tensor<6x5x4xf32>
  %cq = kiln.constant dense<0.5> : tensor<2x3x5x4xf32>
  %ck = kiln.constant dense<0.25> : tensor<6x4x5xf32>
  %qs = kiln.mul %qh, %cq : tensor<2x3x5x4xf32>
  %ks = kiln.mul %kt, %ck : tensor<6x4x5xf32>
  %q3 = kiln.reshape %qs : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %qk = kiln.matmul %q3, %ks : tensor<6x5x4xf32>, tensor<6x4x5xf32>
  %x = kiln.reshape %qk : (tensor<6x5x5xf32>) -> tensor<2x3x5x5xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<2x3x5x5xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>
  %sh = kiln.sub %x, %bm : tensor<2x3x5x5xf32>
  %e = kiln.exp %sh : tensor<2x3x5x5xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<2x3x5x5xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>
  %p = kiln.div %e, %bz : tensor<2x3x5x5xf32>
  %p3 = kiln.reshape %p : (tensor<2x3x5x5xf32>) -> tensor<6x5x5xf32>
  %v3 = kiln.reshape %v : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %o3 = kiln.matmul %p3, %v3 : tensor<6x5x5xf32>, tensor<6x5x4xf32>
  %o = kiln.reshape %o3 : (tensor<6x5x4xf32>) -> tensor<2x3x5x4xf32>
  return %o : tensor<2x3x5x4xf32>
}

// -----

// Grouped-query attention as exported from transformers' Llama: the key's
// and the value's 2 heads repeated twice each (a broadcast to [B, Hkv, G,
// N, D]) and merged to [B * H, N, D], which the op takes reshaped
// straight to the query's 4 heads (head h reads kv head h / G, as
// repeat_kv writes them).
// CHECK-LABEL: func.func @grouped_query
// CHECK:         %[[KB:.*]] = kiln.broadcast_in_dim %arg1, dims = [0, 1, 3, 4]
// CHECK:         %[[VB:.*]] = kiln.broadcast_in_dim %arg2, dims = [0, 1, 3, 4]
// CHECK-DAG:     %[[K:.*]] = kiln.reshape %[[KB]] : (tensor<1x2x2x5x4xf32>) -> tensor<1x4x5x4xf32>
// CHECK-DAG:     %[[V:.*]] = kiln.reshape %[[VB]] : (tensor<1x2x2x5x4xf32>) -> tensor<1x4x5x4xf32>
// CHECK:         %{{.*}}, %{{.*}} = kiln.attention %arg0, %[[K]], %[[V]] {scale = 5.000000e-01 : f64} : tensor<1x4x5x4xf32>, tensor<1x4x5x4xf32>, tensor<1x4x5x4xf32>
// CHECK-NOT:     kiln.matmul
func.func @grouped_query(%q: tensor<1x4x5x4xf32>, %k: tensor<1x2x5x4xf32>, %v: tensor<1x2x5x4xf32>) -> tensor<1x4x5x4xf32> {
  %kb = kiln.broadcast_in_dim %k, dims = [0, 1, 3, 4] : (tensor<1x2x5x4xf32>) -> tensor<1x2x2x5x4xf32>
  %vb = kiln.broadcast_in_dim %v, dims = [0, 1, 3, 4] : (tensor<1x2x5x4xf32>) -> tensor<1x2x2x5x4xf32>
  %k3 = kiln.reshape %kb : (tensor<1x2x2x5x4xf32>) -> tensor<4x5x4xf32>
  %kt = kiln.transpose %k3, permutation = [0, 2, 1] : tensor<4x5x4xf32>
  %ck = kiln.constant dense<0.5> : tensor<4x4x5xf32>
  %ks = kiln.mul %kt, %ck : tensor<4x4x5xf32>
  %q3 = kiln.reshape %q : (tensor<1x4x5x4xf32>) -> tensor<4x5x4xf32>
  %qk = kiln.matmul %q3, %ks : tensor<4x5x4xf32>, tensor<4x4x5xf32>
  %x = kiln.reshape %qk : (tensor<4x5x5xf32>) -> tensor<1x4x5x5xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<1x4x5x5xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<1x4x5xf32>) -> tensor<1x4x5x5xf32>
  %sh = kiln.sub %x, %bm : tensor<1x4x5x5xf32>
  %e = kiln.exp %sh : tensor<1x4x5x5xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<1x4x5x5xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<1x4x5xf32>) -> tensor<1x4x5x5xf32>
  %p = kiln.div %e, %bz : tensor<1x4x5x5xf32>
  %p3 = kiln.reshape %p : (tensor<1x4x5x5xf32>) -> tensor<4x5x5xf32>
  %v3 = kiln.reshape %vb : (tensor<1x2x2x5x4xf32>) -> tensor<4x5x4xf32>
  %o3 = kiln.matmul %p3, %v3 : tensor<4x5x5xf32>, tensor<4x5x4xf32>
  %o = kiln.reshape %o3 : (tensor<4x5x4xf32>) -> tensor<1x4x5x4xf32>
  return %o : tensor<1x4x5x4xf32>
}

// -----

// The same with k^T split back into heads between its transpose at rank 3
// and its scale (how the canonicalizer leaves it where D = Nk and one
// constant serves both scales): the reshapes are walked through.
// CHECK-LABEL: func.func @exported_key_split
// CHECK:         %[[K:.*]] = kiln.transpose %arg1, permutation = [0, 2, 1, 3]
// CHECK:         %{{.*}}, %{{.*}} = kiln.attention %{{.*}}, %[[K]], %arg2 {scale = 1.250000e-01 : f64} : tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>
// CHECK-NOT:     kiln.matmul
func.func @exported_key_split(%q: tensor<2x5x3x4xf32>, %k: tensor<2x5x3x4xf32>, %v: tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32> {
  %qh = kiln.transpose %q, permutation = [0, 2, 1, 3] : tensor<2x5x3x4xf32>
  %kh = kiln.transpose %k, permutation = [0, 2, 1, 3] : tensor<2x5x3x4xf32>
  %k3 = kiln.reshape %kh : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %kt = kiln.transpose %k3, permutation = [0, 2, 1] : tensor<6x5x4xf32>
  %kt4 = kiln.reshape %kt : (tensor<6x4x5xf32>) -> tensor<2x3x4x5xf32>
  %cq = kiln.constant dense<0.5> : tensor<2x3x5x4xf32>
  %ck = kiln.constant dense<0.25> : tensor<2x3x4x5xf32>
  %qs = kiln.mul %qh, %cq : tensor<2x3x5x4xf32>
  %ks = kiln.mul %kt4, %ck : tensor<2x3x4x5xf32>
  %q3 = kiln.reshape %qs : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %ks3 = kiln.reshape %ks : (tensor<2x3x4x5xf32>) -> tensor<6x4x5xf32>
  %qk = kiln.matmul %q3, %ks3 : tensor<6x5x4xf32>, tensor<6x4x5xf32>
  %x = kiln.reshape %qk : (tensor<6x5x5xf32>) -> tensor<2x3x5x5xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<2x3x5x5xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>
  %sh = kiln.sub %x, %bm : tensor<2x3x5x5xf32>
  %e = kiln.exp %sh : tensor<2x3x5x5xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<2x3x5x5xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>
  %p = kiln.div %e, %bz : tensor<2x3x5x5xf32>
  %p3 = kiln.reshape %p : (tensor<2x3x5x5xf32>) -> tensor<6x5x5xf32>
  %v3 = kiln.reshape %v : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %o3 = kiln.matmul %p3, %v3 : tensor<6x5x5xf32>, tensor<6x5x4xf32>
  %o = kiln.reshape %o3 : (tensor<6x5x4xf32>) -> tensor<2x3x5x4xf32>
  return %o : tensor<2x3x5x4xf32>
}

// -----

// ONNX's Attention-23 expanded with an attn_mask: the rows of p whose
// mask entries are all -inf zeroed by a flag broadcast over the keys; the
// same rows of the result are zeroed after the op.
// CHECK-LABEL: func.func @onnx_rows_zeroed
// CHECK:         %[[EMPTY:.*]] = kiln.compare eq
// CHECK:         %[[M:.*]] = kiln.reshape %arg3 : (tensor<4x6xf32>) -> tensor<1x1x4x6xf32>
// CHECK:         %[[O:.*]], %{{.*}} = kiln.attention %arg0, %arg1, %arg2 mask %[[M]] {scale = 0.35355{{.*}} : f64}
// CHECK:         %[[ROWS:.*]] = kiln.broadcast_in_dim %[[EMPTY]], dims = [2] : (tensor<4xi1>) -> tensor<2x3x4x8xi1>
// CHECK:         %[[Z:.*]] = kiln.select %[[ROWS]], %{{.*}}, %[[O]] : tensor<2x3x4x8xi1>, tensor<2x3x4x8xf32>
// CHECK-NEXT:    return %[[Z]]
func.func @onnx_rows_zeroed(%q: tensor<2x3x4x8xf32>, %k: tensor<2x3x6x8xf32>, %v: tensor<2x3x6x8xf32>, %mask: tensor<4x6xf32>) -> tensor<2x3x4x8xf32> {
  %ninf = kiln.constant dense<0xFF800000> : tensor<4xf32>
  %zero = kiln.constant dense<0.0> : tensor<2x3x4x6xf32>
  %ck = kiln.constant dense<0.594603539> : tensor<2x3x8x6xf32>
  %cq = kiln.constant dense<0.594603539> : tensor<2x3x4x8xf32>
  %kt = kiln.transpose %k, permutation = [0, 1, 3, 2] : tensor<2x3x6x8xf32>
  %qs = kiln.mul %q, %cq : tensor<2x3x4x8xf32>
  %ks = kiln.mul %kt, %ck : tensor<2x3x8x6xf32>
  %q3 = kiln.reshape %qs : (tensor<2x3x4x8xf32>) -> tensor<6x4x8xf32>
  %k3 = kiln.reshape %ks : (tensor<2x3x8x6xf32>) -> tensor<6x8x6xf32>
  %qk = kiln.matmul %q3, %k3 : tensor<6x4x8xf32>, tensor<6x8x6xf32>
  %s = kiln.reshape %qk : (tensor<6x4x6xf32>) -> tensor<2x3x4x6xf32>
  %mb = kiln.broadcast_in_dim %mask, dims = [2, 3] : (tensor<4x6xf32>) -> tensor<2x3x4x6xf32>
  %x = kiln.add %s, %mb : tensor<2x3x4x6xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<2x3x4x6xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x4xf32>) -> tensor<2x3x4x6xf32>
  %sh = kiln.sub %x, %bm : tensor<2x3x4x6xf32>
  %e = kiln.exp %sh : tensor<2x3x4x6xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<2x3x4x6xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x3x4xf32>) -> tensor<2x3x4x6xf32>
  %p = kiln.div %e, %bz : tensor<2x3x4x6xf32>
  %rowmax = kiln.reduce_max %mask, dims = [1] : tensor<4x6xf32>
  %empty = kiln.compare eq, %rowmax, %ninf : tensor<4xf32>
  %rows = kiln.broadcast_in_dim %empty, dims = [2] : (tensor<4xi1>) -> tensor<2x3x4x6xi1>
  %g = kiln.select %rows, %zero, %p : tensor<2x3x4x6xi1>, tensor<2x3x4x6xf32>
  %p3 = kiln.reshape %g : (tensor<2x3x4x6xf32>) -> tensor<6x4x6xf32>
  %v3 = kiln.reshape %v : (tensor<2x3x6x8xf32>) -> tensor<6x6x8xf32>
  %o3 = kiln.matmul %p3, %v3 : tensor<6x4x6xf32>, tensor<6x6x8xf32>
  %o = kiln.reshape %o3 : (tensor<6x4x8xf32>) -> tensor<2x3x4x8xf32>
  return %o : tensor<2x3x4x8xf32>
}

// -----

// A select after the softmax whose flag varies along the keys zeroes
// single probabilities, not rows: no attention.
// CHECK-LABEL: func.func @zeroes_entries
// CHECK-NOT:     kiln.attention
func.func @zeroes_entries(%q: tensor<2x3x4x8xf32>, %k: tensor<2x3x6x8xf32>, %v: tensor<2x3x6x8xf32>, %drop: tensor<4x6xi1>) -> tensor<2x3x4x8xf32> {
  %zero = kiln.constant dense<0.0> : tensor<2x3x4x6xf32>
  %kt = kiln.transpose %k, permutation = [0, 1, 3, 2] : tensor<2x3x6x8xf32>
  %q3 = kiln.reshape %q : (tensor<2x3x4x8xf32>) -> tensor<6x4x8xf32>
  %k3 = kiln.reshape %kt : (tensor<2x3x8x6xf32>) -> tensor<6x8x6xf32>
  %qk = kiln.matmul %q3, %k3 : tensor<6x4x8xf32>, tensor<6x8x6xf32>
  %x = kiln.reshape %qk : (tensor<6x4x6xf32>) -> tensor<2x3x4x6xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<2x3x4x6xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x4xf32>) -> tensor<2x3x4x6xf32>
  %sh = kiln.sub %x, %bm : tensor<2x3x4x6xf32>
  %e = kiln.exp %sh : tensor<2x3x4x6xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<2x3x4x6xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x3x4xf32>) -> tensor<2x3x4x6xf32>
  %p = kiln.div %e, %bz : tensor<2x3x4x6xf32>
  %entries = kiln.broadcast_in_dim %drop, dims = [2, 3] : (tensor<4x6xi1>) -> tensor<2x3x4x6xi1>
  %g = kiln.select %entries, %zero, %p : tensor<2x3x4x6xi1>, tensor<2x3x4x6xf32>
  %p3 = kiln.reshape %g : (tensor<2x3x4x6xf32>) -> tensor<6x4x6xf32>
  %v3 = kiln.reshape %v : (tensor<2x3x6x8xf32>) -> tensor<6x6x8xf32>
  %o3 = kiln.matmul %p3, %v3 : tensor<6x4x6xf32>, tensor<6x6x8xf32>
  %o = kiln.reshape %o3 : (tensor<6x4x8xf32>) -> tensor<2x3x4x8xf32>
  return %o : tensor<2x3x4x8xf32>
}

// -----

// BERT without an attention mask as exported and canonicalized: the mask,
// all zeros, added at rank 3 before the split into heads. It adds nothing
// and is dropped.
// CHECK-LABEL: func.func @exported_zero_mask_before_split
// CHECK:         %{{.*}}, %{{.*}} = kiln.attention %arg0, %arg1, %arg2 {scale = 2.500000e-01 : f64} : tensor<1x3x5x4xf32>, tensor<1x3x5x4xf32>, tensor<1x3x5x4xf32>
// CHECK-NOT:     kiln.add
// CHECK-NOT:     kiln.matmul
func.func @exported_zero_mask_before_split(%q: tensor<1x3x5x4xf32>, %k: tensor<1x3x5x4xf32>, %v: tensor<1x3x5x4xf32>) -> tensor<1x3x5x4xf32> {
  %k3 = kiln.reshape %k : (tensor<1x3x5x4xf32>) -> tensor<3x5x4xf32>
  %kt = kiln.transpose %k3, permutation = [0, 2, 1] : tensor<3x5x4xf32>
  %cq = kiln.constant dense<0.5> : tensor<1x3x5x4xf32>
  %ck = kiln.constant dense<0.5> : tensor<3x4x5xf32>
  %qs = kiln.mul %q, %cq : tensor<1x3x5x4xf32>
  %ks = kiln.mul %kt, %ck : tensor<3x4x5xf32>
  %q3 = kiln.reshape %qs : (tensor<1x3x5x4xf32>) -> tensor<3x5x4xf32>
  %qk = kiln.matmul %q3, %ks : tensor<3x5x4xf32>, tensor<3x4x5xf32>
  %zero = kiln.constant dense<0.0> : tensor<3x5x5xf32>
  %s = kiln.add %qk, %zero : tensor<3x5x5xf32>
  %x = kiln.reshape %s : (tensor<3x5x5xf32>) -> tensor<1x3x5x5xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<1x3x5x5xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<1x3x5xf32>) -> tensor<1x3x5x5xf32>
  %sh = kiln.sub %x, %bm : tensor<1x3x5x5xf32>
  %e = kiln.exp %sh : tensor<1x3x5x5xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<1x3x5x5xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<1x3x5xf32>) -> tensor<1x3x5x5xf32>
  %p = kiln.div %e, %bz : tensor<1x3x5x5xf32>
  %nan = kiln.compare ne, %p, %p : tensor<1x3x5x5xf32>
  %fill = kiln.constant dense<0.0> : tensor<1x3x5x5xf32>
  %g = kiln.select %nan, %fill, %p : tensor<1x3x5x5xi1>, tensor<1x3x5x5xf32>
  %p3 = kiln.reshape %g : (tensor<1x3x5x5xf32>) -> tensor<3x5x5xf32>
  %v3 = kiln.reshape %v : (tensor<1x3x5x4xf32>) -> tensor<3x5x4xf32>
  %o3 = kiln.matmul %p3, %v3 : tensor<3x5x5xf32>, tensor<3x5x4xf32>
  %o = kiln.reshape %o3 : (tensor<3x5x4xf32>) -> tensor<1x3x5x4xf32>
  return %o : tensor<1x3x5x4xf32>
}

// -----

// The same with a mask that is not zero, added at rank 3: it is split
// into the heads' shape.
// CHECK-LABEL: func.func @exported_mask_before_split
// CHECK:         %[[M:.*]] = kiln.reshape %arg3 : (tensor<6x5x5xf32>) -> tensor<2x3x5x5xf32>
// CHECK:         %{{.*}}, %{{.*}} = kiln.attention %arg0, %arg1, %arg2 mask %[[M]] {scale = 2.500000e-01 : f64} : tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x4xf32>, tensor<2x3x5x5xf32>
// CHECK-NOT:     kiln.matmul
func.func @exported_mask_before_split(%q: tensor<2x3x5x4xf32>, %k: tensor<2x3x5x4xf32>, %v: tensor<2x3x5x4xf32>, %mask: tensor<6x5x5xf32>) -> tensor<2x3x5x4xf32> {
  %k3 = kiln.reshape %k : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %kt = kiln.transpose %k3, permutation = [0, 2, 1] : tensor<6x5x4xf32>
  %ck = kiln.constant dense<0.25> : tensor<6x4x5xf32>
  %ks = kiln.mul %kt, %ck : tensor<6x4x5xf32>
  %q3 = kiln.reshape %q : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %qk = kiln.matmul %q3, %ks : tensor<6x5x4xf32>, tensor<6x4x5xf32>
  %s = kiln.add %mask, %qk : tensor<6x5x5xf32>
  %x = kiln.reshape %s : (tensor<6x5x5xf32>) -> tensor<2x3x5x5xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<2x3x5x5xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>
  %sh = kiln.sub %x, %bm : tensor<2x3x5x5xf32>
  %e = kiln.exp %sh : tensor<2x3x5x5xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<2x3x5x5xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>
  %p = kiln.div %e, %bz : tensor<2x3x5x5xf32>
  %p3 = kiln.reshape %p : (tensor<2x3x5x5xf32>) -> tensor<6x5x5xf32>
  %v3 = kiln.reshape %v : (tensor<2x3x5x4xf32>) -> tensor<6x5x4xf32>
  %o3 = kiln.matmul %p3, %v3 : tensor<6x5x5xf32>, tensor<6x5x4xf32>
  %o = kiln.reshape %o3 : (tensor<6x5x4xf32>) -> tensor<2x3x5x4xf32>
  return %o : tensor<2x3x5x4xf32>
}

// -----

// timm's stacked q, k, v ([3, B, H, N, D], sliced and squeezed to [1, B,
// H, N, D], as the exporter leaves it), the scale split between q at rank
// 5 and k^T, and the causal mask as the exporter's constant of the lowest
// float: the slices reshaped to the heads, the scales folded, `causal`.
// CHECK-LABEL: func.func @stacked_heads
// CHECK-DAG:     %[[Q5:.*]] = kiln.slice %arg0, start = [0, 0, 0, 0, 0]
// CHECK-DAG:     %[[K5:.*]] = kiln.slice %arg0, start = [1, 0, 0, 0, 0]
// CHECK-DAG:     %[[V5:.*]] = kiln.slice %arg0, start = [2, 0, 0, 0, 0]
// CHECK-DAG:     %[[K:.*]] = kiln.reshape %[[K5]] : (tensor<1x2x3x3x4xf32>) -> tensor<2x3x3x4xf32>
// CHECK-DAG:     %[[Q:.*]] = kiln.reshape %[[Q5]] : (tensor<1x2x3x3x4xf32>) -> tensor<2x3x3x4xf32>
// CHECK-DAG:     %[[V:.*]] = kiln.reshape %[[V5]] : (tensor<1x2x3x3x4xf32>) -> tensor<2x3x3x4xf32>
// CHECK:         %{{.*}}, %{{.*}} = kiln.attention %[[Q]], %[[K]], %[[V]] {causal, scale = 2.500000e-01 : f64}
// CHECK-NOT:     kiln.mul
// CHECK-NOT:     kiln.broadcast_in_dim
// CHECK-NOT:     kiln.matmul
func.func @stacked_heads(%qkv: tensor<3x2x3x3x4xf32>) -> tensor<2x3x3x4xf32> {
  %q5 = kiln.slice %qkv, start = [0, 0, 0, 0, 0], limit = [1, 2, 3, 3, 4], stride = [1, 1, 1, 1, 1] : tensor<3x2x3x3x4xf32>
  %k5 = kiln.slice %qkv, start = [1, 0, 0, 0, 0], limit = [2, 2, 3, 3, 4], stride = [1, 1, 1, 1, 1] : tensor<3x2x3x3x4xf32>
  %v5 = kiln.slice %qkv, start = [2, 0, 0, 0, 0], limit = [3, 2, 3, 3, 4], stride = [1, 1, 1, 1, 1] : tensor<3x2x3x3x4xf32>
  %k3 = kiln.reshape %k5 : (tensor<1x2x3x3x4xf32>) -> tensor<6x3x4xf32>
  %kt = kiln.transpose %k3, permutation = [0, 2, 1] : tensor<6x3x4xf32>
  %kt4 = kiln.reshape %kt : (tensor<6x4x3xf32>) -> tensor<2x3x4x3xf32>
  %cq = kiln.constant dense<0.5> : tensor<1x2x3x3x4xf32>
  %ck = kiln.constant dense<0.5> : tensor<2x3x4x3xf32>
  %qs = kiln.mul %q5, %cq : tensor<1x2x3x3x4xf32>
  %ks = kiln.mul %kt4, %ck : tensor<2x3x4x3xf32>
  %q3 = kiln.reshape %qs : (tensor<1x2x3x3x4xf32>) -> tensor<6x3x4xf32>
  %ks3 = kiln.reshape %ks : (tensor<2x3x4x3xf32>) -> tensor<6x4x3xf32>
  %qk = kiln.matmul %q3, %ks3 : tensor<6x3x4xf32>, tensor<6x4x3xf32>
  %s = kiln.reshape %qk : (tensor<6x3x3xf32>) -> tensor<2x3x3x3xf32>
  %causal = kiln.constant dense<[[0.0, -3.40282347E+38, -3.40282347E+38], [0.0, 0.0, -3.40282347E+38], [0.0, 0.0, 0.0]]> : tensor<3x3xf32>
  %mb = kiln.broadcast_in_dim %causal, dims = [2, 3] : (tensor<3x3xf32>) -> tensor<2x3x3x3xf32>
  %x = kiln.add %s, %mb : tensor<2x3x3x3xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<2x3x3x3xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x3xf32>) -> tensor<2x3x3x3xf32>
  %sh = kiln.sub %x, %bm : tensor<2x3x3x3xf32>
  %e = kiln.exp %sh : tensor<2x3x3x3xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<2x3x3x3xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x3x3xf32>) -> tensor<2x3x3x3xf32>
  %p = kiln.div %e, %bz : tensor<2x3x3x3xf32>
  %p3 = kiln.reshape %p : (tensor<2x3x3x3xf32>) -> tensor<6x3x3xf32>
  %v3 = kiln.reshape %v5 : (tensor<1x2x3x3x4xf32>) -> tensor<6x3x4xf32>
  %o3 = kiln.matmul %p3, %v3 : tensor<6x3x3xf32>, tensor<6x3x4xf32>
  %o = kiln.reshape %o3 : (tensor<6x3x4xf32>) -> tensor<2x3x3x4xf32>
  return %o : tensor<2x3x3x4xf32>
}

// -----

// torch.nn.MultiheadAttention as exported: q, k and v [N, B * H, D], k^T
// their transpose straight to [B * H, D, Nk], the heads never at rank 4
// before the split after the product: the key transposed to [B * H, Nk,
// D] and all three split into [B, H, N, D].
// CHECK-LABEL: func.func @multihead_key_transposed
// CHECK-DAG:     %[[QH:.*]] = kiln.transpose %arg0, permutation = [1, 0, 2]
// CHECK-DAG:     %[[VH:.*]] = kiln.transpose %arg2, permutation = [1, 0, 2]
// CHECK-DAG:     %[[KH:.*]] = kiln.transpose %arg1, permutation = [1, 0, 2] : tensor<5x6x4xf32>
// CHECK-DAG:     %[[K:.*]] = kiln.reshape %[[KH]] : (tensor<6x5x4xf32>) -> tensor<2x3x5x4xf32>
// CHECK-DAG:     %[[Q:.*]] = kiln.reshape %[[QH]] : (tensor<6x5x4xf32>) -> tensor<2x3x5x4xf32>
// CHECK-DAG:     %[[V:.*]] = kiln.reshape %[[VH]] : (tensor<6x5x4xf32>) -> tensor<2x3x5x4xf32>
// CHECK:         %{{.*}}, %{{.*}} = kiln.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f64}
// CHECK-NOT:     kiln.matmul
func.func @multihead_key_transposed(%q: tensor<5x6x4xf32>, %k: tensor<5x6x4xf32>, %v: tensor<5x6x4xf32>) -> tensor<2x3x5x4xf32> {
  %qh = kiln.transpose %q, permutation = [1, 0, 2] : tensor<5x6x4xf32>
  %vh = kiln.transpose %v, permutation = [1, 0, 2] : tensor<5x6x4xf32>
  %kt = kiln.transpose %k, permutation = [1, 2, 0] : tensor<5x6x4xf32>
  %cq = kiln.constant dense<0.5> : tensor<6x5x4xf32>
  %ck = kiln.constant dense<0.5> : tensor<6x4x5xf32>
  %qs = kiln.mul %qh, %cq : tensor<6x5x4xf32>
  %ks = kiln.mul %kt, %ck : tensor<6x4x5xf32>
  %qk = kiln.matmul %qs, %ks : tensor<6x5x4xf32>, tensor<6x4x5xf32>
  %x = kiln.reshape %qk : (tensor<6x5x5xf32>) -> tensor<2x3x5x5xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<2x3x5x5xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>
  %sh = kiln.sub %x, %bm : tensor<2x3x5x5xf32>
  %e = kiln.exp %sh : tensor<2x3x5x5xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<2x3x5x5xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x3x5xf32>) -> tensor<2x3x5x5xf32>
  %p = kiln.div %e, %bz : tensor<2x3x5x5xf32>
  %p3 = kiln.reshape %p : (tensor<2x3x5x5xf32>) -> tensor<6x5x5xf32>
  %o3 = kiln.matmul %p3, %vh : tensor<6x5x5xf32>, tensor<6x5x4xf32>
  %o = kiln.reshape %o3 : (tensor<6x5x4xf32>) -> tensor<2x3x5x4xf32>
  return %o : tensor<2x3x5x4xf32>
}

// -----

// The scale multiplied into the scores after the product with no mask (as
// JAX code writes `softmax(q @ k.T * scale) @ v`): the scores feed the
// softmax's maximum and subtraction, the product only the scale.
// CHECK-LABEL: func.func @scaled_after_unmasked
// CHECK-NEXT:    %[[O:.*]], %{{.*}} = kiln.attention %arg0, %arg1, %arg2 {scale = 1.250000e-01 : f64} : tensor<8x16x64xf32>, tensor<8x32x64xf32>, tensor<8x32x48xf32>
// CHECK-NEXT:    return %[[O]]
func.func @scaled_after_unmasked(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x48xf32>) -> tensor<8x16x48xf32> {
  %kt = kiln.transpose %k, permutation = [0, 2, 1] : tensor<8x32x64xf32>
  %qk = kiln.matmul %q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>
  %c = kiln.constant dense<0.125> : tensor<8x16x32xf32>
  %x = kiln.mul %qk, %c : tensor<8x16x32xf32>
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

// The same product also read elsewhere: no attention.
// CHECK-LABEL: func.func @scaled_product_read_twice
// CHECK-NOT:     kiln.attention
func.func @scaled_product_read_twice(%q: tensor<8x16x64xf32>, %k: tensor<8x32x64xf32>, %v: tensor<8x32x48xf32>) -> (tensor<8x16x48xf32>, tensor<8x16x32xf32>) {
  %kt = kiln.transpose %k, permutation = [0, 2, 1] : tensor<8x32x64xf32>
  %qk = kiln.matmul %q, %kt : tensor<8x16x64xf32>, tensor<8x64x32xf32>
  %c = kiln.constant dense<0.125> : tensor<8x16x32xf32>
  %x = kiln.mul %qk, %c : tensor<8x16x32xf32>
  %m = kiln.reduce_max %x, dims = [2] : tensor<8x16x32xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x32xf32>
  %sh = kiln.sub %x, %bm : tensor<8x16x32xf32>
  %e = kiln.exp %sh : tensor<8x16x32xf32>
  %z = kiln.reduce_sum %e, dims = [2] : tensor<8x16x32xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1] : (tensor<8x16xf32>) -> tensor<8x16x32xf32>
  %p = kiln.div %e, %bz : tensor<8x16x32xf32>
  %o = kiln.matmul %p, %v : tensor<8x16x32xf32>, tensor<8x32x48xf32>
  return %o, %qk : tensor<8x16x48xf32>, tensor<8x16x32xf32>
}

// -----

// Heads at rank 4 as kiln's tracer writes `softmax(q @ k^T * c) @ v`: the
// scale after the split of the batched product into heads.
// CHECK-LABEL: func.func @scaled_after_split
// CHECK-NEXT:    %[[O:.*]], %{{.*}} = kiln.attention %arg0, %arg1, %arg2 {scale = 1.250000e-01 : f64} : tensor<2x4x16x64xf32>, tensor<2x4x20x64xf32>, tensor<2x4x20x32xf32>
// CHECK-NEXT:    return %[[O]]
func.func @scaled_after_split(%q: tensor<2x4x16x64xf32>, %k: tensor<2x4x20x64xf32>, %v: tensor<2x4x20x32xf32>) -> tensor<2x4x16x32xf32> {
  %c = kiln.constant dense<1.250000e-01> : tensor<2x4x16x20xf32>
  %kt = kiln.transpose %k, permutation = [0, 1, 3, 2] : tensor<2x4x20x64xf32>
  %q3 = kiln.reshape %q : (tensor<2x4x16x64xf32>) -> tensor<8x16x64xf32>
  %kt3 = kiln.reshape %kt : (tensor<2x4x64x20xf32>) -> tensor<8x64x20xf32>
  %qk = kiln.matmul %q3, %kt3 : tensor<8x16x64xf32>, tensor<8x64x20xf32>
  %s = kiln.reshape %qk : (tensor<8x16x20xf32>) -> tensor<2x4x16x20xf32>
  %x = kiln.mul %s, %c : tensor<2x4x16x20xf32>
  %m = kiln.reduce_max %x, dims = [3] : tensor<2x4x16x20xf32>
  %bm = kiln.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x4x16xf32>) -> tensor<2x4x16x20xf32>
  %sh = kiln.sub %x, %bm : tensor<2x4x16x20xf32>
  %e = kiln.exp %sh : tensor<2x4x16x20xf32>
  %z = kiln.reduce_sum %e, dims = [3] : tensor<2x4x16x20xf32>
  %bz = kiln.broadcast_in_dim %z, dims = [0, 1, 2] : (tensor<2x4x16xf32>) -> tensor<2x4x16x20xf32>
  %p = kiln.div %e, %bz : tensor<2x4x16x20xf32>
  %p3 = kiln.reshape %p : (tensor<2x4x16x20xf32>) -> tensor<8x16x20xf32>
  %v3 = kiln.reshape %v : (tensor<2x4x20x32xf32>) -> tensor<8x20x32xf32>
  %o3 = kiln.matmul %p3, %v3 : tensor<8x16x20xf32>, tensor<8x20x32xf32>
  %o = kiln.reshape %o3 : (tensor<8x16x32xf32>) -> tensor<2x4x16x32xf32>
  return %o : tensor<2x4x16x32xf32>
}
