// RUN: kiln-opt %s --split-input-file --kiln-decompose-attention | FileCheck %s

// Leading dims flattened into one batch dim, the scaled product, the mask
// broadcast to the scores, the softmax with its maximum subtracted, the
// second product and lse = max + log(sum); scalars are broadcast, never
// stored in the scores' shape.
// CHECK-LABEL: func.func @forward
// CHECK-DAG:     %[[Q:.*]] = kiln.reshape %arg0 : (tensor<2x3x4x8xf32>) -> tensor<6x4x8xf32>
// CHECK-DAG:     %[[K:.*]] = kiln.reshape %arg1 : (tensor<2x3x5x8xf32>) -> tensor<6x5x8xf32>
// CHECK-DAG:     %[[V:.*]] = kiln.reshape %arg2 : (tensor<2x3x5x6xf32>) -> tensor<6x5x6xf32>
// CHECK-DAG:     %[[MB:.*]] = kiln.broadcast_in_dim %arg3, dims = [0, 1, 2, 3] : (tensor<2x1x1x5xf32>) -> tensor<2x3x4x5xf32>
// CHECK-DAG:     %[[M:.*]] = kiln.reshape %[[MB]] : (tensor<2x3x4x5xf32>) -> tensor<6x4x5xf32>
// CHECK:         %[[KT:.*]] = kiln.transpose %[[K]], permutation = [0, 2, 1]
// CHECK:         %[[QK:.*]] = kiln.matmul %[[Q]], %[[KT]] : tensor<6x4x8xf32>, tensor<6x8x5xf32>
// CHECK:         %[[C:.*]] = kiln.constant dense<5.000000e-01> : tensor<f32>
// CHECK:         %[[CB:.*]] = kiln.broadcast_in_dim %[[C]], dims = [] : (tensor<f32>) -> tensor<6x4x5xf32>
// CHECK:         %[[S:.*]] = kiln.mul %[[QK]], %[[CB]]
// CHECK:         %[[X:.*]] = kiln.add %[[S]], %[[M]]
// CHECK:         %[[MAX:.*]] = kiln.reduce_max %[[X]], dims = [2]
// CHECK:         kiln.exp
// CHECK:         %[[SUM:.*]] = kiln.reduce_sum %{{.*}}, dims = [2]
// CHECK:         %[[P:.*]] = kiln.div
// CHECK:         %[[O:.*]] = kiln.matmul %[[P]], %[[V]] : tensor<6x4x5xf32>, tensor<6x5x6xf32>
// CHECK:         %[[LOG:.*]] = kiln.log %[[SUM]]
// CHECK:         %[[LSE:.*]] = kiln.add %[[MAX]], %[[LOG]]
// CHECK-DAG:     kiln.reshape %[[O]] : (tensor<6x4x6xf32>) -> tensor<2x3x4x6xf32>
// CHECK-DAG:     kiln.reshape %[[LSE]] : (tensor<6x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NOT:     kiln.attention
func.func @forward(%q: tensor<2x3x4x8xf32>, %k: tensor<2x3x5x8xf32>, %v: tensor<2x3x5x6xf32>, %m: tensor<2x1x1x5xf32>) -> (tensor<2x3x4x6xf32>, tensor<2x3x4xf32>) {
  %o, %lse = kiln.attention %q, %k, %v mask %m {scale = 0.5 : f64} : tensor<2x3x4x8xf32>, tensor<2x3x5x8xf32>, tensor<2x3x5x6xf32>, tensor<2x1x1x5xf32>
  return %o, %lse : tensor<2x3x4x6xf32>, tensor<2x3x4xf32>
}

// -----

// causal: key positions above query positions select -inf, from iotas of
// one dim broadcast over the scores; bf16 is computed in f32 and rounded.
// CHECK-LABEL: func.func @causal_bf16
// CHECK:         kiln.cast %arg0 : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK-DAG:     %[[R:.*]] = kiln.iota dim = 0 : tensor<4xi64>
// CHECK-DAG:     %[[C:.*]] = kiln.iota dim = 0 : tensor<6xi64>
// CHECK-DAG:     %[[RB:.*]] = kiln.broadcast_in_dim %[[R]], dims = [1] : (tensor<4xi64>) -> tensor<1x4x6xi64>
// CHECK-DAG:     %[[CB:.*]] = kiln.broadcast_in_dim %[[C]], dims = [2] : (tensor<6xi64>) -> tensor<1x4x6xi64>
// CHECK:         %[[F:.*]] = kiln.compare gt, %[[CB]], %[[RB]]
// CHECK:         kiln.constant dense<0xFF800000> : tensor<f32>
// CHECK:         kiln.select %[[F]]
// CHECK:         kiln.cast %{{.*}} : tensor<4x8xf32> to tensor<4x8xbf16>
func.func @causal_bf16(%q: tensor<4x8xbf16>, %k: tensor<6x8xbf16>, %v: tensor<6x8xbf16>) -> (tensor<4x8xbf16>, tensor<4xf32>) {
  %o, %lse = kiln.attention %q, %k, %v {causal, scale = 1.0 : f64} : tensor<4x8xbf16>, tensor<6x8xbf16>, tensor<6x8xbf16>
  return %o, %lse : tensor<4x8xbf16>, tensor<4xf32>
}

// -----

// The gradient: the scores recomputed, P = exp(S - lse), dV = P^T dO,
// dP = dO V^T, dS = P (dP - rowsum(dO O)) scale, dQ = dS K, dK = dS^T Q.
// CHECK-LABEL: func.func @backward
// CHECK:         %[[LB:.*]] = kiln.broadcast_in_dim %{{.*}}, dims = [0, 1] : (tensor<1x3xf64>) -> tensor<1x3x5xf64>
// CHECK:         %[[S:.*]] = kiln.mul
// CHECK:         %[[SH:.*]] = kiln.sub %[[S]], %[[LB]]
// CHECK:         %[[P:.*]] = kiln.exp %[[SH]]
// CHECK:         %[[PT:.*]] = kiln.transpose %[[P]], permutation = [0, 2, 1]
// CHECK:         %[[DV:.*]] = kiln.matmul %[[PT]], %[[DO:.*]] : tensor<1x5x3xf64>, tensor<1x3x2xf64>
// CHECK:         %[[DP:.*]] = kiln.matmul %[[DO]], %{{.*}} : tensor<1x3x2xf64>, tensor<1x2x5xf64>
// CHECK:         %[[DOO:.*]] = kiln.mul %[[DO]], %{{.*}} : tensor<1x3x2xf64>
// CHECK:         %[[DELTA:.*]] = kiln.reduce_sum %[[DOO]], dims = [2]
// CHECK:         kiln.matmul %{{.*}}, %{{.*}} : tensor<1x3x5xf64>, tensor<1x5x4xf64>
// CHECK:         kiln.matmul %{{.*}}, %{{.*}} : tensor<1x5x3xf64>, tensor<1x3x4xf64>
// CHECK-NOT:     kiln.attention_grad
func.func @backward(%q: tensor<3x4xf64>, %k: tensor<5x4xf64>, %v: tensor<5x2xf64>, %o: tensor<3x2xf64>, %lse: tensor<3xf64>, %do: tensor<3x2xf64>) -> (tensor<3x4xf64>, tensor<5x4xf64>, tensor<5x2xf64>) {
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do {scale = 0.5 : f64} : tensor<3x4xf64>, tensor<5x4xf64>, tensor<5x2xf64>, tensor<3x2xf64>, tensor<3xf64>
  return %dq, %dk, %dv : tensor<3x4xf64>, tensor<5x4xf64>, tensor<5x2xf64>
}
