// kiln.scatter_add: custom and generic forms round-trip, the result type is
// inferred (the table's), and the verifier rejects updates that do not fit.
// RUN: kiln-opt %s --split-input-file | kiln-opt --split-input-file | FileCheck %s
// RUN: kiln-opt %s --split-input-file --mlir-print-op-generic | kiln-opt --split-input-file | FileCheck %s
// RUN: kiln-opt %s --split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @rows
// CHECK-SAME:      (%[[T:.*]]: tensor<10x4xf32>, %[[I:.*]]: tensor<3x2xi64>, %[[U:.*]]: tensor<3x2x4xf32>)
// CHECK: kiln.scatter_add %[[T]], %[[I]], %[[U]] : tensor<10x4xf32>, tensor<3x2xi64>, tensor<3x2x4xf32>
// GENERIC: "kiln.scatter_add"(%{{.*}}, %{{.*}}, %{{.*}}) : (tensor<10x4xf32>, tensor<3x2xi64>, tensor<3x2x4xf32>) -> tensor<10x4xf32>
func.func @rows(%t: tensor<10x4xf32>, %i: tensor<3x2xi64>, %u: tensor<3x2x4xf32>) -> tensor<10x4xf32> {
  %0 = kiln.scatter_add %t, %i, %u : tensor<10x4xf32>, tensor<3x2xi64>, tensor<3x2x4xf32>
  return %0 : tensor<10x4xf32>
}

// -----

// A vector table with a rank-0 index, integers, no indices at all.
// CHECK-LABEL: func.func @edges
// CHECK: kiln.scatter_add %{{.*}}, %{{.*}}, %{{.*}} : tensor<5xi32>, tensor<i32>, tensor<i32>
// CHECK: kiln.scatter_add %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x3xf64>, tensor<0xi64>, tensor<0x3xf64>
func.func @edges(%v: tensor<5xi32>, %j: tensor<i32>, %x: tensor<i32>,
                 %t: tensor<2x3xf64>, %e: tensor<0xi64>, %n: tensor<0x3xf64>) -> (tensor<5xi32>, tensor<2x3xf64>) {
  %0 = kiln.scatter_add %v, %j, %x : tensor<5xi32>, tensor<i32>, tensor<i32>
  %1 = kiln.scatter_add %t, %e, %n : tensor<2x3xf64>, tensor<0xi64>, tensor<0x3xf64>
  return %0, %1 : tensor<5xi32>, tensor<2x3xf64>
}
