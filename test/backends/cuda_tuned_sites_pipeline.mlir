// REQUIRES: cuda-backend
// A module with a bf16 attention that both cuDNN and kiln's tensor-core
// kernels take (by default a tuned call site of the two,
// built by kiln-cuda-library-attention) and an f32 one (a tuned call site
// of the f32 and 3xTF32 kernels, built later by
// kiln-cuda-flash-attention): the sites take distinct numbers across the
// two passes, each with its variants' names, and ptxas assembles both
// sites' kernels.
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --emit=llvm -o - | FileCheck %s
// RUN: kiln-compile %s --target=cuda --cuda-arch=sm_90 --emit=ptx -o %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90 %t.ptx -o %t.cubin %}

// CHECK-DAG: @[[F32:kiln_tuned_site_names[_0-9]*]] = private constant [11 x i8] c"f32,3xtf32\00"
// CHECK-DAG: @[[HALF:kiln_tuned_site_names[_0-9]*]] = private constant [11 x i8] c"kiln,cudnn\00"
// CHECK: call i64 @kiln_cuda_tune_rounds(i64 0, i64 2, ptr nonnull @[[HALF]])
// CHECK: call void @kiln_cuda_attention(
// CHECK: call i64 @kiln_cuda_tune_rounds(i64 1, i64 2, ptr nonnull @[[F32]])
func.func @mixed(%q: tensor<2x4x128x64xbf16>, %f: tensor<2x64x32xf32>) -> (tensor<2x4x128x64xbf16>, tensor<2x64x32xf32>) {
  %o, %lse = kiln.attention %q, %q, %q {causal, scale = 0.125 : f64} : tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>
  %p, %l = kiln.attention %f, %f, %f {scale = 0.125 : f64} : tensor<2x64x32xf32>, tensor<2x64x32xf32>, tensor<2x64x32xf32>
  return %o, %p : tensor<2x4x128x64xbf16>, tensor<2x64x32xf32>
}
