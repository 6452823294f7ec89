// kiln.dynamic_slice and kiln.dynamic_update_slice: custom and generic forms
// round-trip, result types are inferred, and the verifier rejects shapes
// that do not fit.
// RUN: kiln-opt %s --split-input-file | kiln-opt --split-input-file | FileCheck %s
// RUN: kiln-opt %s --split-input-file --mlir-print-op-generic | kiln-opt --split-input-file | FileCheck %s
// RUN: kiln-opt %s --split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @rows
// CHECK-SAME:      (%[[B:.*]]: tensor<8x4xf32>, %[[I:.*]]: tensor<i64>, %[[U:.*]]: tensor<2x4xf32>)
// CHECK: kiln.dynamic_slice %[[B]][%[[I]]], size = 1 : tensor<8x4xf32>
// CHECK: kiln.dynamic_slice %[[B]][%[[I]]], size = 8 : tensor<8x4xf32>
// CHECK: kiln.dynamic_update_slice %[[B]][%[[I]]], %[[U]] : tensor<8x4xf32>, tensor<2x4xf32>
// GENERIC: "kiln.dynamic_slice"(%{{.*}}, %{{.*}}) <{size = 1 : i64}> : (tensor<8x4xf32>, tensor<i64>) -> tensor<1x4xf32>
// GENERIC: "kiln.dynamic_update_slice"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<8x4xf32>, tensor<2x4xf32>, tensor<i64>) -> tensor<8x4xf32>
func.func @rows(%b: tensor<8x4xf32>, %i: tensor<i64>, %u: tensor<2x4xf32>) -> (tensor<1x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %0 = kiln.dynamic_slice %b[%i], size = 1 : tensor<8x4xf32>
  %1 = kiln.dynamic_slice %b[%i], size = 8 : tensor<8x4xf32>
  %2 = kiln.dynamic_update_slice %b[%i], %u : tensor<8x4xf32>, tensor<2x4xf32>
  return %0, %1, %2 : tensor<1x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// Rank 1, i1 and zero rows.
// CHECK-LABEL: func.func @vectors
// CHECK: kiln.dynamic_slice %{{.*}}[%{{.*}}], size = 0 : tensor<5xi1>
// CHECK: kiln.dynamic_update_slice %{{.*}}[%{{.*}}], %{{.*}} : tensor<5xi64>, tensor<1xi64>
func.func @vectors(%m: tensor<5xi1>, %v: tensor<5xi64>, %e: tensor<1xi64>, %i: tensor<i64>) -> (tensor<0xi1>, tensor<5xi64>) {
  %0 = kiln.dynamic_slice %m[%i], size = 0 : tensor<5xi1>
  %1 = kiln.dynamic_update_slice %v[%i], %e : tensor<5xi64>, tensor<1xi64>
  return %0, %1 : tensor<0xi1>, tensor<5xi64>
}
