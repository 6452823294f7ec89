// kiln-autocast{attention}: f32 attention and its gradient run on operands
// cast to the half type, their lse f32, their results widened back; without
// the option they stay f32.
// RUN: kiln-opt %s --split-input-file --kiln-autocast="attention=true" | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-autocast="attention=true dtype=f16" | FileCheck %s --check-prefix=F16
// RUN: kiln-opt %s --split-input-file --kiln-autocast | FileCheck %s --check-prefix=OFF

// The forward and its gradient: the gradient reads the forward's half
// result itself (the widening cast's source) and the f32 lse as it is; the
// mask is cast like the others.
// CHECK-LABEL: func.func @step
// CHECK-DAG:   %[[Q:.*]] = kiln.cast %arg0 : tensor<2x4x16x8xf32> to tensor<2x4x16x8xbf16>
// CHECK-DAG:   %[[K:.*]] = kiln.cast %arg1 : tensor<2x4x16x8xf32> to tensor<2x4x16x8xbf16>
// CHECK-DAG:   %[[V:.*]] = kiln.cast %arg2 : tensor<2x4x16x8xf32> to tensor<2x4x16x8xbf16>
// CHECK-DAG:   %[[M:.*]] = kiln.cast %arg3 : tensor<2x1x1x16xf32> to tensor<2x1x1x16xbf16>
// CHECK-DAG:   %[[D:.*]] = kiln.cast %arg4 : tensor<2x4x16x8xf32> to tensor<2x4x16x8xbf16>
// CHECK:       %[[O:[a-z_0-9]+]], %[[L:[a-z_0-9]+]] = kiln.attention %[[Q]], %[[K]], %[[V]] mask %[[M]] {causal, scale = 5.000000e-01 : f64} : tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x1x1x16xbf16>
// CHECK:       %[[W:.*]] = kiln.cast %[[O]] : tensor<2x4x16x8xbf16> to tensor<2x4x16x8xf32>
// CHECK:       %[[G0:[a-z_0-9]+]], %[[G1:[a-z_0-9]+]], %[[G2:[a-z_0-9]+]] = kiln.attention_grad %[[Q]], %[[K]], %[[V]], %[[O]], %[[L]], %[[D]] mask %[[M]] {causal, scale = 5.000000e-01 : f64} : tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16xf32>, tensor<2x1x1x16xbf16>
// CHECK-DAG:   %[[DQ:.*]] = kiln.cast %[[G0]] : tensor<2x4x16x8xbf16> to tensor<2x4x16x8xf32>
// CHECK-DAG:   %[[DK:.*]] = kiln.cast %[[G1]] : tensor<2x4x16x8xbf16> to tensor<2x4x16x8xf32>
// CHECK-DAG:   %[[DV:.*]] = kiln.cast %[[G2]] : tensor<2x4x16x8xbf16> to tensor<2x4x16x8xf32>
// CHECK:       return %[[W]], %[[L]], %[[DQ]], %[[DK]], %[[DV]]
// F16-LABEL: func.func @step
// F16: kiln.attention {{.*}} : tensor<2x4x16x8xf16>, tensor<2x4x16x8xf16>, tensor<2x4x16x8xf16>, tensor<2x1x1x16xf16>
// F16: kiln.attention_grad {{.*}} : tensor<2x4x16x8xf16>, tensor<2x4x16x8xf16>, tensor<2x4x16x8xf16>, tensor<2x4x16x8xf16>, tensor<2x4x16xf32>, tensor<2x1x1x16xf16>
// OFF-LABEL: func.func @step
// OFF-NOT: kiln.cast
// OFF: kiln.attention {{.*}} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x1x1x16xf32>
// OFF: kiln.attention_grad {{.*}} : tensor<2x4x16x8xf32>
func.func @step(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>, %m: tensor<2x1x1x16xf32>, %do: tensor<2x4x16x8xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x16xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) {
  %o, %lse = kiln.attention %q, %k, %v mask %m {causal, scale = 0.5 : f64} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x1x1x16xf32>
  %dq, %dk, %dv = kiln.attention_grad %q, %k, %v, %o, %lse, %do mask %m {causal, scale = 0.5 : f64} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16xf32>, tensor<2x1x1x16xf32>
  return %o, %lse, %dq, %dk, %dv : tensor<2x4x16x8xf32>, tensor<2x4x16xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>
}

// -----

// Attention already in half precision, or in f64, is left as it is.
// CHECK-LABEL: func.func @left
// CHECK-NOT: kiln.cast
// CHECK: kiln.attention {{.*}} : tensor<4x8xbf16>
// CHECK: kiln.attention {{.*}} : tensor<4x8xf64>
func.func @left(%h: tensor<4x8xbf16>, %d: tensor<4x8xf64>) -> (tensor<4x8xbf16>, tensor<4x8xf64>) {
  %a, %la = kiln.attention %h, %h, %h {scale = 0.5 : f64} : tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>
  %b, %lb = kiln.attention %d, %d, %d {scale = 0.5 : f64} : tensor<4x8xf64>, tensor<4x8xf64>, tensor<4x8xf64>
  return %a, %b : tensor<4x8xbf16>, tensor<4x8xf64>
}
