// After kiln-cpu-sin-cos, LLVM's loop vectorizer calls the vector forms
// of kiln_cosf/kiln_sinf (16 lanes with AVX-512, 4 with SSE2) and the
// scalar one in the remainder.
// REQUIRES: avx512f
// RUN: kiln-compile %s --emit=llvm -o - | FileCheck %s
// CHECK-DAG: call <16 x float> @kiln_cosf_v16(
// CHECK-DAG: call <16 x float> @kiln_sinf_v16(
// CHECK-DAG: call {{.*}}float @kiln_cosf(float
// CHECK-DAG: @llvm.compiler.used = {{.*}}@kiln_cosf_v16
// RUN: kiln-compile %s --target-cpu=x86-64 --emit=llvm -o - | FileCheck %s --check-prefix=SSE2
// SSE2-DAG: call <4 x float> @kiln_cosf_v4(
// SSE2-DAG: call <4 x float> @kiln_sinf_v4(
// The values: cos 0 = 1, sin(pi/2) = 1 in f32 (1.5707964 rounds up, cos of
// it is -4.371139e-08), and libm's values beyond 2^24.
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --input 0 --input 1.5707963267948966 --input 3e9 | FileCheck %s --check-prefix=VALUES
// VALUES-DAG: out0: f32[1003] = [1, 1, 1,
// VALUES-DAG: out1: f32[1003] = [1, 1, 1,
// VALUES-DAG: out2: f32[1003] = [-4.37113{{[0-9]*}}e-08, -4.37113{{[0-9]*}}e-08,
// VALUES-DAG: out3: f32[1003] = [-0.160690248, -0.160690248,

func.func @trig(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>) -> (tensor<1003xf32>, tensor<1003xf32>, tensor<1003xf32>, tensor<1003xf32>) {
  %x = kiln.broadcast_in_dim %a, dims = [] : (tensor<f32>) -> tensor<1003xf32>
  %y = kiln.broadcast_in_dim %b, dims = [] : (tensor<f32>) -> tensor<1003xf32>
  %z = kiln.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<1003xf32>
  %cx = kiln.cos %x : tensor<1003xf32>
  %sy = kiln.sin %y : tensor<1003xf32>
  %cy = kiln.cos %y : tensor<1003xf32>
  %cz = kiln.cos %z : tensor<1003xf32>
  return %cx, %sy, %cy, %cz : tensor<1003xf32>, tensor<1003xf32>, tensor<1003xf32>, tensor<1003xf32>
}
