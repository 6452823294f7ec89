// kiln-cpu-outline-attention moves each f32 kiln.attention and
// kiln.attention_grad into a private function of its own, marked with the
// CPU kernels' descriptor (AttentionAbi.h: batch, Nq, Nk, D, Dv, flags, the
// scale's bits, the query tile, the leading rank, the leading dims, then
// the mask's strides, 0 where it broadcasts); a call takes its place. The
// function only allocates its results: it is never called.
// Other element types stay (kiln-decompose-attention takes them).
// RUN: kiln-opt %s --split-input-file --kiln-cpu-outline-attention | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cpu-outline-attention=query-tile=16 | FileCheck %s --check-prefix=TILE
// RUN: not kiln-opt %s --split-input-file --kiln-cpu-outline-attention=query-tile=0 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @forward(
// CHECK:         %[[R:.*]]:2 = call @[[F:kiln_attention[_0-9]*]](%arg0, %arg1, %arg2, %arg3) : (tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x48xf32>, tensor<2x1x1x32xf32>) -> (tensor<2x8x16x48xf32>, tensor<2x8x16xf32>)
// CHECK:         return %[[R]]#0
// CHECK:       func.func private @[[F]](%{{.*}}: tensor<2x8x16x64xf32> {bufferization.access = "read"}, %{{.*}}: tensor<2x8x32x64xf32> {bufferization.access = "read"}, %{{.*}}: tensor<2x8x32x48xf32> {bufferization.access = "read"}, %{{.*}}: tensor<2x1x1x32xf32> {bufferization.access = "read"}) -> (tensor<2x8x16x48xf32>, tensor<2x8x16xf32>) attributes {kiln.cpu_attention = array<i64: 16, 16, 32, 64, 48, 3, 4593671619917905920, 256, 2, 2, 8, 32, 0, 0, 1>}
// CHECK-NEXT:    %[[E0:.*]] = tensor.empty() : tensor<2x8x16x48xf32>
// CHECK-NEXT:    %[[E1:.*]] = tensor.empty() : tensor<2x8x16xf32>
// CHECK-NEXT:    return %[[E0]], %[[E1]]
// TILE:        kiln.cpu_attention = array<i64: 16, 16, 32, 64, 48, 3, 4593671619917905920, 16,
// BAD:         query-tile must be at least 1, got 0
func.func @forward(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x32x64xf32>, %v: tensor<2x8x32x48xf32>, %m: tensor<2x1x1x32xf32>) -> tensor<2x8x16x48xf32> {
  %o, %lse = kiln.attention %q, %k, %v mask %m {causal, scale = 0.125 : f64} : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x48xf32>, tensor<2x1x1x32xf32>
  return %o : tensor<2x8x16x48xf32>
}

// -----

// The gradient: the function is marked as a backward.
// CHECK-LABEL: func.func @backward(
// CHECK:         call @[[G:kiln_attention[_0-9]*]](%arg0, %arg1, %arg2, %arg3, %arg4, %arg5)
// CHECK:       func.func private @[[G]]({{.*}}) -> (tensor<5x4xf32>, tensor<7x4xf32>, tensor<7x2xf32>) attributes {kiln.cpu_attention = array<i64: 1, 5, 7, 4, 2, 0, 4607182418800017408, 256, 0>, kiln.cpu_attention_backward}
// CHECK-NEXT:    tensor.empty() : tensor<5x4xf32>
// CHECK-NEXT:    tensor.empty() : tensor<7x4xf32>
// CHECK-NEXT:    tensor.empty() : tensor<7x2xf32>
func.func @backward(%q: tensor<5x4xf32>, %k: tensor<7x4xf32>, %v: tensor<7x2xf32>, %o: tensor<5x2xf32>, %lse: tensor<5xf32>, %do: tensor<5x2xf32>) -> (tensor<5x4xf32>, tensor<7x4xf32>, tensor<7x2xf32>) {
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do {scale = 1.0 : f64} : tensor<5x4xf32>, tensor<7x4xf32>, tensor<7x2xf32>, tensor<5x2xf32>, tensor<5xf32>
  return %dq, %dk, %dv : tensor<5x4xf32>, tensor<7x4xf32>, tensor<7x2xf32>
}

// -----

// f64 attentions are left to the composition; a bf16 one is the f32 op
// on operands widened by kiln.cast, its result rounded back, on the kernel
// (its lse is f32 either way).
// CHECK-LABEL: func.func @other_types(
// CHECK:         %[[O:.*]], %{{.*}} = kiln.attention %arg0
// CHECK-NEXT:    %[[A:.*]] = kiln.cast %arg3 : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK-NEXT:    %[[C:.*]]:2 = call @[[F:.*]](%[[A]], %[[A]], %[[A]]) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>)
// CHECK-NEXT:    %[[R:.*]] = kiln.cast %[[C]]#0 : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-NEXT:    return %[[O]], %[[R]]
// CHECK:       func.func private @[[F]]({{.*}}kiln.cpu_attention
func.func @other_types(%q: tensor<4x8xf64>, %k: tensor<4x8xf64>, %v: tensor<4x8xf64>, %a: tensor<4x8xbf16>) -> (tensor<4x8xf64>, tensor<4x8xbf16>) {
  %o, %l = kiln.attention %q, %k, %v {scale = 1.0 : f64} : tensor<4x8xf64>, tensor<4x8xf64>, tensor<4x8xf64>
  %o2, %l2 = kiln.attention %a, %a, %a {scale = 1.0 : f64} : tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>
  return %o, %o2 : tensor<4x8xf64>, tensor<4x8xbf16>
}

// -----

// The gradient in f16 with an f16 mask: every f16 operand widened (each
// once), the f32 lse as it is, the three gradients rounded back to f16.
// CHECK-LABEL: func.func @half_gradient(
// CHECK-DAG:     %[[Q:.*]] = kiln.cast %arg0 : tensor<2x5x4xf16> to tensor<2x5x4xf32>
// CHECK-DAG:     %[[K:.*]] = kiln.cast %arg1 : tensor<2x7x4xf16> to tensor<2x7x4xf32>
// CHECK-DAG:     %[[V:.*]] = kiln.cast %arg2 : tensor<2x7x4xf16> to tensor<2x7x4xf32>
// CHECK-DAG:     %[[O:.*]] = kiln.cast %arg3 : tensor<2x5x4xf16> to tensor<2x5x4xf32>
// CHECK-DAG:     %[[D:.*]] = kiln.cast %arg5 : tensor<2x5x4xf16> to tensor<2x5x4xf32>
// CHECK-DAG:     %[[M:.*]] = kiln.cast %arg6 : tensor<1x1x7xf16> to tensor<1x1x7xf32>
// CHECK:         %[[G:.*]]:3 = call @{{.*}}(%[[Q]], %[[K]], %[[V]], %[[O]], %arg4, %[[D]], %[[M]])
// CHECK-DAG:     kiln.cast %[[G]]#0 : tensor<2x5x4xf32> to tensor<2x5x4xf16>
// CHECK-DAG:     kiln.cast %[[G]]#1 : tensor<2x7x4xf32> to tensor<2x7x4xf16>
// CHECK-DAG:     kiln.cast %[[G]]#2 : tensor<2x7x4xf32> to tensor<2x7x4xf16>
// CHECK-NOT:     kiln.attention_grad
func.func @half_gradient(%q: tensor<2x5x4xf16>, %k: tensor<2x7x4xf16>, %v: tensor<2x7x4xf16>, %o: tensor<2x5x4xf16>, %lse: tensor<2x5xf32>, %do: tensor<2x5x4xf16>, %m: tensor<1x1x7xf16>) -> (tensor<2x5x4xf16>, tensor<2x7x4xf16>, tensor<2x7x4xf16>) {
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do mask %m {scale = 0.5 : f64} : tensor<2x5x4xf16>, tensor<2x7x4xf16>, tensor<2x7x4xf16>, tensor<2x5x4xf16>, tensor<2x5xf32>, tensor<1x1x7xf16>
  return %dq, %dk, %dv : tensor<2x5x4xf16>, tensor<2x7x4xf16>, tensor<2x7x4xf16>
}
