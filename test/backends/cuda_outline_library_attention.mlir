// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-outline-library-attention | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cuda-outline-library-attention=deterministic | FileCheck %s --check-prefix=DET

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
