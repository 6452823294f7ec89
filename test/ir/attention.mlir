// RUN: kiln-opt %s | FileCheck %s
// RUN: kiln-opt %s | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @heads
// CHECK: %{{.*}}, %{{.*}} = kiln.attention %arg0, %arg1, %arg2 {causal, scale = 1.250000e-01 : f64} : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x48xf32>
func.func @heads(%q: tensor<2x8x16x64xf32>, %k: tensor<2x8x32x64xf32>,
                 %v: tensor<2x8x32x48xf32>)
    -> (tensor<2x8x16x48xf32>, tensor<2x8x16xf32>) {
  %o, %lse = kiln.attention %q, %k, %v {causal, scale = 0.125 : f64}
      : tensor<2x8x16x64xf32>, tensor<2x8x32x64xf32>, tensor<2x8x32x48xf32>
  return %o, %lse : tensor<2x8x16x48xf32>, tensor<2x8x16xf32>
}

// A key-padding mask broadcast over heads and queries; bf16 keeps an f32 lse.
// CHECK-LABEL: func.func @masked_bf16
// CHECK: kiln.attention %arg0, %arg1, %arg2 mask %arg3 {scale = 1.000000e+00 : f64} : tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>, tensor<2x1x1x8xbf16>
func.func @masked_bf16(%q: tensor<2x4x8x16xbf16>, %k: tensor<2x4x8x16xbf16>,
                       %v: tensor<2x4x8x16xbf16>, %m: tensor<2x1x1x8xbf16>)
    -> (tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>) {
  %o, %lse = kiln.attention %q, %k, %v mask %m {scale = 1.0 : f64}
      : tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>, tensor<2x4x8x16xbf16>,
        tensor<2x1x1x8xbf16>
  return %o, %lse : tensor<2x4x8x16xbf16>, tensor<2x4x8xf32>
}

// One head without leading dims; f64 keeps an f64 lse.
// CHECK-LABEL: func.func @grad_f64
// CHECK: kiln.attention_grad %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 {scale = 5.000000e-01 : f64} : tensor<5x3xf64>, tensor<7x3xf64>, tensor<7x2xf64>, tensor<5x2xf64>, tensor<5xf64>
func.func @grad_f64(%q: tensor<5x3xf64>, %k: tensor<7x3xf64>,
                    %v: tensor<7x2xf64>, %o: tensor<5x2xf64>,
                    %lse: tensor<5xf64>, %do: tensor<5x2xf64>)
    -> (tensor<5x3xf64>, tensor<7x3xf64>, tensor<7x2xf64>) {
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do
      {scale = 0.5 : f64}
      : tensor<5x3xf64>, tensor<7x3xf64>, tensor<7x2xf64>, tensor<5x2xf64>,
        tensor<5xf64>
  return %dq, %dk, %dv : tensor<5x3xf64>, tensor<7x3xf64>, tensor<7x2xf64>
}
