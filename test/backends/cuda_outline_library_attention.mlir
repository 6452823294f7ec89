// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-outline-library-attention | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cuda-outline-library-attention=deterministic | FileCheck %s --check-prefix=DET
// RUN: kiln-opt %s --split-input-file --kiln-cuda-outline-library-attention=tune | FileCheck %s --check-prefix=TUNE
// RUN: kiln-opt %s --split-input-file --kiln-cuda-outline-library-attention="tune deterministic" | FileCheck %s --check-prefix=TUNE-DET

// A bf16 attention over [batch, heads] with a padding mask moves into a
// function marked with its descriptor: dtype 6 (bf16), flags 3 (causal,
// mask), B 2, H 8, Nq 128, Nk 96, D 64, Dv 32, the mask's dims [2, 1, 1,
// 96] and the bits of the f64 0.125.
// CHECK-LABEL: func.func @forward
// CHECK: %[[R:.*]]:2 = call @kiln_cuda_cudnn_attention(%arg0, %arg1, %arg2, %arg3) : (tensor<2x8x128x64xbf16>, tensor<2x8x96x64xbf16>, tensor<2x8x96x32xbf16>, tensor<2x1x1x96xbf16>) -> (tensor<2x8x128x32xbf16>, tensor<2x8x128xf32>)
// CHECK-NOT: kiln.attention
// CHECK: return %[[R]]#0
// CHECK: func.func private @kiln_cuda_cudnn_attention(%{{.*}}: tensor<2x8x128x64xbf16> {bufferization.access = "read"}, {{.*}} attributes {kiln.cudnn_attention = array<i64: 6, 3, 2, 8, 128, 96, 64, 32, 2, 1, 1, 96, 4593671619917905920>}
// CHECK: tensor.empty() : tensor<2x8x128x32xbf16>
// CHECK: tensor.empty() : tensor<2x8x128xf32>
// kiln's tensor-core kernel takes it too (D 64, Dv 32): with tune, the
// function is marked for both, and its call is the same.
// TUNE-LABEL: func.func @forward
// TUNE: call @kiln_cuda_cudnn_attention(%arg0, %arg1, %arg2, %arg3) :
// TUNE: func.func private @kiln_cuda_cudnn_attention({{.*}} attributes {kiln.cuda_attention = {causal = true, scale = 1.250000e-01 : f64}, kiln.cudnn_attention = array<i64: 6, 3, 2, 8, 128, 96, 64, 32, 2, 1, 1, 96, 4593671619917905920>}
func.func @forward(%q: tensor<2x8x128x64xbf16>, %k: tensor<2x8x96x64xbf16>, %v: tensor<2x8x96x32xbf16>, %m: tensor<2x1x1x96xbf16>) -> tensor<2x8x128x32xbf16> {
  %o, %lse = kiln.attention %q, %k, %v mask %m {causal, scale = 0.125 : f64} : tensor<2x8x128x64xbf16>, tensor<2x8x96x64xbf16>, tensor<2x8x96x32xbf16>, tensor<2x1x1x96xbf16>
  return %o : tensor<2x8x128x32xbf16>
}

// -----

// Leading dims fold into B (all but the last) and H (the last); a mask
// broadcast over all the outer ones keeps MB 1. Without leading dims B
// and H are 1. The gradient keeps the op's own operands (o, not
// rowsum(do * o)) for cuDNN: f16 is dtype 5.
// CHECK-LABEL: func.func @folded
// CHECK: call @kiln_cuda_cudnn_attention(%arg0, %arg1, %arg2, %arg3)
// CHECK: call @kiln_cuda_cudnn_attention_0(%arg4, %arg4, %arg4)
// CHECK: call @kiln_cuda_cudnn_attention_grad(%arg4, %arg4, %arg4, %{{.*}}, %{{.*}}, %arg4) : (tensor<16x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<16xf32>, tensor<16x64xf16>) -> (tensor<16x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>)
// CHECK: kiln.cudnn_attention = array<i64: 5, 2, 6, 4, 16, 16, 64, 64, 1, 4, 16, 16, 4593671619917905920>
// CHECK: kiln.cudnn_attention = array<i64: 5, 0, 1, 1, 16, 16, 64, 64, 1, 1, 1, 1, 4593671619917905920>
// CHECK: kiln.cudnn_attention_grad = array<i64: 5, 0, 1, 1, 16, 16, 64, 64, 1, 1, 1, 1, 4593671619917905920>
// DET-LABEL: func.func @folded
// DET: call @kiln_cuda_cudnn_attention(
// DET: call @kiln_cuda_cudnn_attention_0(
// DET: kiln.attention_grad
// With tune, the gradient's call passes rowsum(do * o) in f32 after do,
// for kiln's kernels; every function is marked for both.
// TUNE-LABEL: func.func @folded
// TUNE: call @kiln_cuda_cudnn_attention(%arg0, %arg1, %arg2, %arg3)
// TUNE: %[[O:.*]]:2 = call @kiln_cuda_cudnn_attention_0(%arg4, %arg4, %arg4)
// TUNE: %[[DO:.*]] = kiln.cast %arg4 : tensor<16x64xf16> to tensor<16x64xf32>
// TUNE: %[[OW:.*]] = kiln.cast %[[O]]#0 : tensor<16x64xf16> to tensor<16x64xf32>
// TUNE: %[[P:.*]] = kiln.mul %[[DO]], %[[OW]] : tensor<16x64xf32>
// TUNE: %[[S:.*]] = kiln.reduce_sum %[[P]], dims = [1] : tensor<16x64xf32>
// TUNE: call @kiln_cuda_cudnn_attention_grad(%arg4, %arg4, %arg4, %[[O]]#0, %[[O]]#1, %arg4, %[[S]]) : (tensor<16x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<16xf32>, tensor<16x64xf16>, tensor<16xf32>) -> (tensor<16x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>)
// TUNE: kiln.cuda_attention = {causal = false, scale = 1.250000e-01 : f64}, kiln.cudnn_attention = array<i64: 5, 2,
// TUNE: kiln.cuda_attention = {causal = false, scale = 1.250000e-01 : f64}, kiln.cudnn_attention = array<i64: 5, 0,
// TUNE: kiln.cuda_attention_grad = {causal = false, scale = 1.250000e-01 : f64}, kiln.cudnn_attention_grad = array<i64: 5, 0,
// Under deterministic the gradient stays a kiln op, tune or not.
// TUNE-DET-LABEL: func.func @folded
// TUNE-DET: kiln.attention_grad
// TUNE-DET-NOT: kiln.reduce_sum
func.func @folded(%q: tensor<2x3x4x16x64xf16>, %k: tensor<2x3x4x16x64xf16>, %v: tensor<2x3x4x16x64xf16>, %m: tensor<1x1x4x16x16xf16>, %x: tensor<16x64xf16>) -> (tensor<2x3x4x16x64xf16>, tensor<16x64xf16>) {
  %o, %lse = kiln.attention %q, %k, %v mask %m {scale = 0.125 : f64} : tensor<2x3x4x16x64xf16>, tensor<2x3x4x16x64xf16>, tensor<2x3x4x16x64xf16>, tensor<1x1x4x16x16xf16>
  %o2, %lse2 = kiln.attention %x, %x, %x {scale = 0.125 : f64} : tensor<16x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>
  %dq, %dk, %dv = kiln.attention_grad %x, %x, %x, %o2, %lse2, %x {scale = 0.125 : f64} : tensor<16x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<16xf32>
  return %o, %dq : tensor<2x3x4x16x64xf16>, tensor<16x64xf16>
}

// -----

// What cuDNN does not take stays: f32, a head dim that is not a multiple
// of 8 or over 128, and a mask that broadcasts over some outer leading
// dims but not all.
// CHECK-LABEL: func.func @left
// CHECK-NOT: call @kiln_cuda_cudnn
// CHECK-COUNT-4: kiln.attention
// CHECK-NOT: kiln.cudnn_attention
func.func @left(%f: tensor<4x16x64xf32>, %odd: tensor<4x16x20xbf16>, %wide: tensor<4x16x256xbf16>, %q: tensor<2x3x4x16x64xf16>, %m: tensor<2x1x4x16x16xf16>) -> (tensor<4x16x64xf32>, tensor<4x16x20xbf16>, tensor<4x16x256xbf16>, tensor<2x3x4x16x64xf16>) {
  %a, %la = kiln.attention %f, %f, %f {scale = 0.125 : f64} : tensor<4x16x64xf32>, tensor<4x16x64xf32>, tensor<4x16x64xf32>
  %b, %lb = kiln.attention %odd, %odd, %odd {scale = 0.125 : f64} : tensor<4x16x20xbf16>, tensor<4x16x20xbf16>, tensor<4x16x20xbf16>
  %c, %lc = kiln.attention %wide, %wide, %wide {scale = 0.125 : f64} : tensor<4x16x256xbf16>, tensor<4x16x256xbf16>, tensor<4x16x256xbf16>
  %d, %ld = kiln.attention %q, %q, %q mask %m {scale = 0.125 : f64} : tensor<2x3x4x16x64xf16>, tensor<2x3x4x16x64xf16>, tensor<2x3x4x16x64xf16>, tensor<2x1x4x16x16xf16>
  return %a, %b, %c, %d : tensor<4x16x64xf32>, tensor<4x16x20xbf16>, tensor<4x16x256xbf16>, tensor<2x3x4x16x64xf16>
}

// -----

// A head dim of 24 (a multiple of 8, not of 16) is cuDNN's and kiln's
// tensor-core kernels' alike (theirs pad the last product): with tune the
// forward and the gradient are choices of the two, the gradient's call
// carrying the rowsum for kiln's kernels, the functions marked for both.
// CHECK-LABEL: func.func @padded_head_dims
// TUNE-LABEL: func.func @padded_head_dims
// TUNE: %[[O:.*]]:2 = call @kiln_cuda_cudnn_attention(%arg0, %arg0, %arg0)
// TUNE: %[[S:.*]] = kiln.reduce_sum
// TUNE: call @kiln_cuda_cudnn_attention_grad(%arg0, %arg0, %arg0, %[[O]]#0, %[[O]]#1, %arg0, %[[S]]) :
// TUNE: func.func private @kiln_cuda_cudnn_attention({{.*}}kiln.cuda_attention = {causal = false
// TUNE: func.func private @kiln_cuda_cudnn_attention_grad({{.*}}kiln.cuda_attention_grad = {causal = false
func.func @padded_head_dims(%x: tensor<4x32x24xbf16>) -> tensor<4x32x24xbf16> {
  %o, %lse = kiln.attention %x, %x, %x {scale = 0.125 : f64} : tensor<4x32x24xbf16>, tensor<4x32x24xbf16>, tensor<4x32x24xbf16>
  %dq, %dk, %dv = kiln.attention_grad %x, %x, %x, %o, %lse, %x {scale = 0.125 : f64} : tensor<4x32x24xbf16>, tensor<4x32x24xbf16>, tensor<4x32x24xbf16>, tensor<4x32x24xbf16>, tensor<4x32xf32>
  return %dq : tensor<4x32x24xbf16>
}
