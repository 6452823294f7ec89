// kiln-cuda-outline-attention moves each f32 kiln.attention into a private
// function marked with its scale and causal flag, read-only arguments and
// a body that only allocates the results; kiln.attention_grad and other
// element types stay for the composition, as do head dims too wide for
// the kernel.
// RUN: kiln-opt %s --split-input-file --kiln-cuda-outline-attention | FileCheck %s

// CHECK-LABEL: func.func @forward(
// CHECK:         %[[R:.*]]:2 = call @[[F:kiln_cuda_attention[_0-9]*]](%arg0, %arg1, %arg2, %arg3) : (tensor<2x3x5x8xf32>, tensor<2x3x7x8xf32>, tensor<2x3x7x4xf32>, tensor<1x3x5x1xf32>) -> (tensor<2x3x5x4xf32>, tensor<2x3x5xf32>)
// CHECK:         %[[G:.*]]:2 = call @[[F2:kiln_cuda_attention[_0-9]*]](%arg0, %arg1, %arg2)
// CHECK:         kiln.attention %arg4, %arg4, %arg4
// CHECK:         return %[[R]]#0, %[[G]]#1
// CHECK:       func.func private @[[F]](%{{.*}}: tensor<2x3x5x8xf32> {bufferization.access = "read"}, %{{.*}} {bufferization.access = "read"}, %{{.*}} {bufferization.access = "read"}, %{{.*}}: tensor<1x3x5x1xf32> {bufferization.access = "read"}) -> (tensor<2x3x5x4xf32>, tensor<2x3x5xf32>)
// CHECK-SAME:    attributes {kiln.cuda_attention = {causal = true, scale = 5.000000e-01 : f64}}
// CHECK-NEXT:    tensor.empty() : tensor<2x3x5x4xf32>
// CHECK-NEXT:    tensor.empty() : tensor<2x3x5xf32>
// CHECK-NEXT:    return
// CHECK:       func.func private @[[F2]]({{.*}} attributes {kiln.cuda_attention = {causal = false, scale = 2.500000e-01 : f64}}
func.func @forward(%q: tensor<2x3x5x8xf32>, %k: tensor<2x3x7x8xf32>, %v: tensor<2x3x7x4xf32>, %m: tensor<1x3x5x1xf32>, %d: tensor<4x4xf64>) -> (tensor<2x3x5x4xf32>, tensor<2x3x5xf32>, tensor<4x4xf64>) {
  %r, %l = kiln.attention %q, %k, %v mask %m {causal, scale = 0.5 : f64} : tensor<2x3x5x8xf32>, tensor<2x3x7x8xf32>, tensor<2x3x7x4xf32>, tensor<1x3x5x1xf32>
  %g, %h = kiln.attention %q, %k, %v {scale = 0.25 : f64} : tensor<2x3x5x8xf32>, tensor<2x3x7x8xf32>, tensor<2x3x7x4xf32>
  %e, %f = kiln.attention %d, %d, %d {scale = 1.0 : f64} : tensor<4x4xf64>, tensor<4x4xf64>, tensor<4x4xf64>
  return %r, %h, %e : tensor<2x3x5x4xf32>, tensor<2x3x5xf32>, tensor<4x4xf64>
}

// -----

// The backward op is left to kiln-decompose-attention.
// CHECK-LABEL: func.func @backward(
// CHECK-NOT:     call
// CHECK:         kiln.attention_grad
func.func @backward(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x2xf32>, %o: tensor<4x2xf32>, %l: tensor<4xf32>, %d: tensor<4x2xf32>) -> tensor<4x8xf32> {
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %l, %d {scale = 1.0 : f64} : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x2xf32>, tensor<4x2xf32>, tensor<4xf32>
  return %dq : tensor<4x8xf32>
}

// -----

// Head dims 3000 and 100 would leave a thread of the kernel 750 of them
// (kiln-cuda-flash-attention): left to the composition. 64 by 64 is taken.
// CHECK-LABEL: func.func @too_wide(
// CHECK:         kiln.attention %arg0, %arg1, %arg2
// CHECK:         call @kiln_cuda_attention
// CHECK:       func.func private @kiln_cuda_attention({{.*}}tensor<4x64xf32>
func.func @too_wide(%q: tensor<4x3000xf32>, %k: tensor<6x3000xf32>, %v: tensor<6x100xf32>, %q2: tensor<4x64xf32>, %v2: tensor<6x64xf32>) -> (tensor<4x100xf32>, tensor<4x64xf32>) {
  %o, %l = kiln.attention %q, %k, %v {scale = 1.0 : f64} : tensor<4x3000xf32>, tensor<6x3000xf32>, tensor<6x100xf32>
  %o2, %l2 = kiln.attention %q2, %v2, %v2 {scale = 1.0 : f64} : tensor<4x64xf32>, tensor<6x64xf32>, tensor<6x64xf32>
  return %o, %o2 : tensor<4x100xf32>, tensor<4x64xf32>
}
