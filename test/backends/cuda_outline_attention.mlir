// kiln-cuda-outline-attention moves each f32 kiln.attention into a private
// function marked with its scale and causal flag, read-only arguments and
// a body that only allocates the results; f32 kiln.attention_grad the
// same way, marked kiln.cuda_attention_grad. An f16 or bf16 forward or
// gradient whose head dims fit the tensor-core kernels is outlined as it
// is; other f16 and bf16 ones become the f32 op on operands widened by kiln.cast, their
// results rounded back; f64 stays for the composition, as do head dims
// too wide for the kernel.
// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-outline-attention | FileCheck %s
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-cuda-outline-attention=tensor-cores=false | FileCheck %s --check-prefix=WIDENED

// CHECK-LABEL: func.func @forward(
// CHECK:         %[[R:.*]]:2 = call @[[F:kiln_cuda_flash_attention[_0-9]*]](%arg0, %arg1, %arg2, %arg3) : (tensor<2x3x5x8xf32>, tensor<2x3x7x8xf32>, tensor<2x3x7x4xf32>, tensor<1x3x5x1xf32>) -> (tensor<2x3x5x4xf32>, tensor<2x3x5xf32>)
// CHECK:         %[[G:.*]]:2 = call @[[F2:kiln_cuda_flash_attention[_0-9]*]](%arg0, %arg1, %arg2)
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

// The gradient moves into a function marked kiln.cuda_attention_grad that
// takes rowsum(dO * O), computed before the call as kiln ops, in O's
// place: (q, k, v, dO, lse, rowsum[, mask]) -> (dq, dk, dv).
// CHECK-LABEL: func.func @backward(
// CHECK:         %[[PROD:.*]] = kiln.mul %arg5, %arg3 : tensor<4x2xf32>
// CHECK:         %[[SUM:.*]] = kiln.reduce_sum %[[PROD]], dims = [1] : tensor<4x2xf32>
// CHECK:         %[[G:.*]]:3 = call @[[F:kiln_cuda_flash_attention_grad[_0-9]*]](%arg0, %arg1, %arg2, %arg5, %arg4, %[[SUM]]) : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x2xf32>, tensor<4x2xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x2xf32>)
// CHECK:         %[[M:.*]] = kiln.mul %arg5, %arg3
// CHECK:         %[[MS:.*]] = kiln.reduce_sum %[[M]]
// CHECK:         call @{{.*}}(%arg0, %arg1, %arg2, %arg5, %arg4, %[[MS]], %arg6)
// CHECK:         kiln.attention_grad %arg7, %arg7, %arg7
// CHECK:         return %[[G]]#0
// CHECK:       func.func private @[[F]](
// CHECK-SAME:    attributes {kiln.cuda_attention_grad = {causal = false, scale = 1.000000e+00 : f64}}
// CHECK:       func.func private @{{.*}}(
// CHECK-SAME:    attributes {kiln.cuda_attention_grad = {causal = true, scale = 5.000000e-01 : f64}}
func.func @backward(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x2xf32>, %o: tensor<4x2xf32>, %l: tensor<4xf32>, %d: tensor<4x2xf32>, %m: tensor<4x6xf32>, %x: tensor<3x3xf64>, %l3: tensor<3xf64>) -> (tensor<4x8xf32>, tensor<6x8xf32>, tensor<3x3xf64>) {
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %l, %d {scale = 1.0 : f64} : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x2xf32>, tensor<4x2xf32>, tensor<4xf32>
  %mq, %mk, %mv = kiln.attention_grad %q, %k, %v, %o, %l, %d mask %m {causal, scale = 0.5 : f64} : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x2xf32>, tensor<4x2xf32>, tensor<4xf32>, tensor<4x6xf32>
  %xq, %xk, %xv = kiln.attention_grad %x, %x, %x, %x, %l3, %x {scale = 1.0 : f64} : tensor<3x3xf64>, tensor<3x3xf64>, tensor<3x3xf64>, tensor<3x3xf64>, tensor<3xf64>
  return %dq, %mk, %xq : tensor<4x8xf32>, tensor<6x8xf32>, tensor<3x3xf64>
}

// -----

// Head dims 3000 and 100 would leave a thread of the kernel 750 of them
// (kiln-cuda-flash-attention): left to the composition. 64 by 64 is taken.
// CHECK-LABEL: func.func @too_wide(
// CHECK:         kiln.attention %arg0, %arg1, %arg2
// CHECK:         call @kiln_cuda_flash_attention
// CHECK:       func.func private @kiln_cuda_flash_attention({{.*}}tensor<4x64xf32>
func.func @too_wide(%q: tensor<4x3000xf32>, %k: tensor<6x3000xf32>, %v: tensor<6x100xf32>, %q2: tensor<4x64xf32>, %v2: tensor<6x64xf32>) -> (tensor<4x100xf32>, tensor<4x64xf32>) {
  %o, %l = kiln.attention %q, %k, %v {scale = 1.0 : f64} : tensor<4x3000xf32>, tensor<6x3000xf32>, tensor<6x100xf32>
  %o2, %l2 = kiln.attention %q2, %v2, %v2 {scale = 1.0 : f64} : tensor<4x64xf32>, tensor<6x64xf32>, tensor<6x64xf32>
  return %o, %o2 : tensor<4x100xf32>, tensor<4x64xf32>
}

// -----

// bf16 attention and its gradient on the f32 kernels (a head dim of 12 is
// not a multiple of 8, whose last product of 16 the tensor-core forward
// pads): the operands widened, the lse f32 as it is, the results rounded
// back to bf16.
// CHECK-LABEL: func.func @half_precision(
// CHECK:         %[[Q:.*]] = kiln.cast %arg0 : tensor<2x5x12xbf16> to tensor<2x5x12xf32>
// CHECK:         %[[R:.*]]:2 = call @[[F:kiln_cuda_flash_attention[_0-9]*]](%[[Q]], %[[Q]], %[[Q]]) : (tensor<2x5x12xf32>, tensor<2x5x12xf32>, tensor<2x5x12xf32>) -> (tensor<2x5x12xf32>, tensor<2x5xf32>)
// CHECK:         %[[O:.*]] = kiln.cast %[[R]]#0 : tensor<2x5x12xf32> to tensor<2x5x12xbf16>
// CHECK:         %[[G:.*]]:3 = call @{{kiln_cuda_flash_attention_grad[_0-9]*}}(
// CHECK-SAME:        %[[R]]#1
// CHECK:         kiln.cast %[[G]]#0 : tensor<2x5x12xf32> to tensor<2x5x12xbf16>
// CHECK-NOT:     kiln.attention
// CHECK:       func.func private @[[F]]({{.*}}kiln.cuda_attention =
func.func @half_precision(%q: tensor<2x5x12xbf16>, %do: tensor<2x5x12xbf16>) -> (tensor<2x5x12xbf16>, tensor<2x5x12xbf16>) {
  %o, %lse = kiln.attention %q, %q, %q {scale = 0.5 : f64} : tensor<2x5x12xbf16>, tensor<2x5x12xbf16>, tensor<2x5x12xbf16>
  %dq, %dk, %dv = kiln.attention_grad %q, %q, %q, %o, %lse, %do {scale = 0.5 : f64} : tensor<2x5x12xbf16>, tensor<2x5x12xbf16>, tensor<2x5x12xbf16>, tensor<2x5x12xbf16>, tensor<2x5xf32>
  return %o, %dq : tensor<2x5x12xbf16>, tensor<2x5x12xbf16>
}

// -----

// Half-precision forwards and gradients whose head dims fit the
// tensor-core kernels (D and Dv multiples of 8 up to 128) are outlined as
// they are, the mask too, the gradient after rowsum(dO * O) in f32.
// D = 144 does not fit: widened, for the f32 kernels. Without
// tensor cores (before sm_80) every half-precision op is widened.
// WIDENED-LABEL: func.func @tensor_cores(
// WIDENED:         kiln.cast %arg0 : tensor<2x70x64xbf16> to tensor<2x70x64xf32>
// WIDENED:         call @{{kiln_cuda_flash_attention[_0-9]*}}({{.*}}) : (tensor<2x70x64xf32>,
// WIDENED:         kiln.cast %arg4 : tensor<3x16xf16> to tensor<3x16xf32>
// WIDENED-NOT:     call @{{kiln_cuda_flash_attention[_0-9]*}}({{.*}}) : (tensor<{{[0-9x]*}}{{b?}}f16>
// CHECK-LABEL: func.func @tensor_cores(
// CHECK:         %[[R:.*]]:2 = call @[[F:kiln_cuda_flash_attention[_0-9]*]](%arg0, %arg1, %arg2, %arg3) : (tensor<2x70x64xbf16>, tensor<2x45x64xbf16>, tensor<2x45x24xbf16>, tensor<1x70x45xbf16>) -> (tensor<2x70x24xbf16>, tensor<2x70xf32>)
// CHECK:         %[[H:.*]]:2 = call @[[F2:kiln_cuda_flash_attention[_0-9]*]](%arg4, %arg4, %arg4) : (tensor<3x16xf16>, tensor<3x16xf16>, tensor<3x16xf16>) -> (tensor<3x16xf16>, tensor<3xf32>)
// CHECK:         kiln.cast %arg5 : tensor<3x144xbf16> to tensor<3x144xf32>
// CHECK:         call @{{kiln_cuda_flash_attention[_0-9]*}}({{.*}}) : (tensor<3x144xf32>,
// CHECK:         %[[S:.*]] = kiln.reduce_sum
// CHECK:         call @{{kiln_cuda_flash_attention_grad[_0-9]*}}(%arg0, %arg1, %arg2, %arg6, %[[R]]#1, %[[S]], %arg3) : (tensor<2x70x64xbf16>,
// CHECK:       func.func private @[[F]]({{.*}}tensor<1x70x45xbf16> {bufferization.access = "read"}) -> (tensor<2x70x24xbf16>, tensor<2x70xf32>)
// CHECK-SAME:    attributes {kiln.cuda_attention = {causal = true, scale = 1.250000e-01 : f64}}
// CHECK:       func.func private @[[F2]]({{.*}}) -> (tensor<3x16xf16>, tensor<3xf32>)
func.func @tensor_cores(%q: tensor<2x70x64xbf16>, %k: tensor<2x45x64xbf16>, %v: tensor<2x45x24xbf16>, %m: tensor<1x70x45xbf16>, %h: tensor<3x16xf16>, %w: tensor<3x144xbf16>, %do: tensor<2x70x24xbf16>) -> (tensor<2x70x24xbf16>, tensor<3x16xf16>, tensor<3x144xbf16>, tensor<2x70x64xbf16>) {
  %o, %lse = kiln.attention %q, %k, %v mask %m {causal, scale = 0.125 : f64} : tensor<2x70x64xbf16>, tensor<2x45x64xbf16>, tensor<2x45x24xbf16>, tensor<1x70x45xbf16>
  %ho, %hl = kiln.attention %h, %h, %h {scale = 1.0 : f64} : tensor<3x16xf16>, tensor<3x16xf16>, tensor<3x16xf16>
  %wo, %wl = kiln.attention %w, %w, %w {scale = 1.0 : f64} : tensor<3x144xbf16>, tensor<3x144xbf16>, tensor<3x144xbf16>
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do mask %m {causal, scale = 0.125 : f64} : tensor<2x70x64xbf16>, tensor<2x45x64xbf16>, tensor<2x45x24xbf16>, tensor<2x70x24xbf16>, tensor<2x70xf32>, tensor<1x70x45xbf16>
  return %o, %ho, %wo, %dq : tensor<2x70x24xbf16>, tensor<3x16xf16>, tensor<3x144xbf16>, tensor<2x70x64xbf16>
}

// -----

// A half-precision gradient whose head dims are multiples of 16 runs on
// tensor cores as it is: rowsum(dO * O) is computed in f32 from the
// widened cotangent and result, and the call passes the bf16 operands and
// returns the bf16 gradients. Without tensor cores it is widened.
// WIDENED-LABEL: func.func @tensor_cores_grad(
// WIDENED:         kiln.cast %arg0 : tensor<2x70x64xbf16> to tensor<2x70x64xf32>
// WIDENED:         call @{{kiln_cuda_flash_attention_grad[_0-9]*}}({{.*}}) : (tensor<2x70x64xf32>
// CHECK-LABEL: func.func @tensor_cores_grad(
// CHECK:         %[[DO:.*]] = kiln.cast %arg4 : tensor<2x70x32xbf16> to tensor<2x70x32xf32>
// CHECK:         %[[O:.*]] = kiln.cast %arg3 : tensor<2x70x32xbf16> to tensor<2x70x32xf32>
// CHECK:         %[[PROD:.*]] = kiln.mul %[[DO]], %[[O]] : tensor<2x70x32xf32>
// CHECK:         %[[SUM:.*]] = kiln.reduce_sum %[[PROD]], dims = [2] : tensor<2x70x32xf32>
// CHECK:         %[[G:.*]]:3 = call @[[F:kiln_cuda_flash_attention_grad[_0-9]*]](%arg0, %arg1, %arg2, %arg4, %arg5, %[[SUM]], %arg6) : (tensor<2x70x64xbf16>, tensor<2x45x64xbf16>, tensor<2x45x32xbf16>, tensor<2x70x32xbf16>, tensor<2x70xf32>, tensor<2x70xf32>, tensor<1x70x45xbf16>) -> (tensor<2x70x64xbf16>, tensor<2x45x64xbf16>, tensor<2x45x32xbf16>)
// CHECK-NOT:     kiln.cast %arg0
// CHECK:         return %[[G]]#0, %[[G]]#1, %[[G]]#2
// CHECK:       func.func private @[[F]](
// CHECK-SAME:    attributes {kiln.cuda_attention_grad = {causal = true, scale = 1.250000e-01 : f64}}
func.func @tensor_cores_grad(%q: tensor<2x70x64xbf16>, %k: tensor<2x45x64xbf16>, %v: tensor<2x45x32xbf16>, %o: tensor<2x70x32xbf16>, %do: tensor<2x70x32xbf16>, %lse: tensor<2x70xf32>, %m: tensor<1x70x45xbf16>) -> (tensor<2x70x64xbf16>, tensor<2x45x64xbf16>, tensor<2x45x32xbf16>) {
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do mask %m {causal, scale = 0.125 : f64} : tensor<2x70x64xbf16>, tensor<2x45x64xbf16>, tensor<2x45x32xbf16>, tensor<2x70x32xbf16>, tensor<2x70xf32>, tensor<1x70x45xbf16>
  return %dq, %dk, %dv : tensor<2x70x64xbf16>, tensor<2x45x64xbf16>, tensor<2x45x32xbf16>
}

// -----

// A bf16 forward and gradient of head dim 40 (Stable Diffusion's) run on
// the tensor cores as they are, their products' last 16 dims padded with
// zeros. Without tensor cores both are widened.
// CHECK-LABEL: func.func @padded_head_dims(
// CHECK:         %[[R:.*]]:2 = call @{{kiln_cuda_flash_attention[_0-9]*}}(%arg0, %arg0, %arg0) : (tensor<2x64x40xbf16>, tensor<2x64x40xbf16>, tensor<2x64x40xbf16>) -> (tensor<2x64x40xbf16>, tensor<2x64xf32>)
// CHECK:         %[[S:.*]] = kiln.reduce_sum
// CHECK:         call @{{kiln_cuda_flash_attention_grad[_0-9]*}}(%arg0, %arg0, %arg0, %arg1, %[[R]]#1, %[[S]]) : (tensor<2x64x40xbf16>,
// WIDENED-LABEL: func.func @padded_head_dims(
// WIDENED-NOT:     (tensor<2x64x40xbf16>, tensor<2x64x40xbf16>, tensor<2x64x40xbf16>) -> (tensor<2x64x40xbf16>
// WIDENED:         return
func.func @padded_head_dims(%q: tensor<2x64x40xbf16>, %do: tensor<2x64x40xbf16>) -> (tensor<2x64x40xbf16>, tensor<2x64x40xbf16>) {
  %o, %lse = kiln.attention %q, %q, %q {scale = 0.125 : f64} : tensor<2x64x40xbf16>, tensor<2x64x40xbf16>, tensor<2x64x40xbf16>
  %dq, %dk, %dv = kiln.attention_grad %q, %q, %q, %o, %lse, %do {scale = 0.125 : f64} : tensor<2x64x40xbf16>, tensor<2x64x40xbf16>, tensor<2x64x40xbf16>, tensor<2x64x40xbf16>, tensor<2x64xf32>
  return %o, %dq : tensor<2x64x40xbf16>, tensor<2x64x40xbf16>
}
