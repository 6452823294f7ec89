// A donated table (kiln.tied_result) through the CPU pipeline: the sum of
// the old table is read first, then scatter_add adds the rows into the
// argument's own buffer (no copy of the table, no allocation of its size),
// and the tied out-param is left untouched for the runtime to alias.
// RUN: kiln-opt %s --kiln-cpu-lowering --mlir-print-ir-after=kiln-tied-results -o /dev/null 2>&1 | FileCheck %s

// CHECK-LABEL: func.func @update(
// CHECK-SAME:      %[[T:[^:]+]]: memref<6x3xf32>, %{{[^:]+}}: memref<4xi32>, %{{[^:]+}}: memref<4x3xf32>, %[[S:[^:]+]]: memref<f32>, %[[OUT:[^:]+]]: memref<6x3xf32>)
// CHECK-NOT:     memref.alloc() : memref<6x3xf32>
// CHECK-NOT:     %[[OUT]]
// CHECK:         linalg.generic {{.*}} ins(%[[T]] : memref<6x3xf32>) outs(%[[S]] : memref<f32>)
// CHECK:         scf.for {{.*}} iter_args(%[[C:[^ ]+]] = %[[T]])
// CHECK:           memref.subview %[[C]]
// CHECK-NOT:     %[[OUT]]
// CHECK:         return
func.func @update(%t: tensor<6x3xf32> {kiln.tied_result = 1 : i64}, %i: tensor<4xi32>, %r: tensor<4x3xf32>) -> (tensor<f32>, tensor<6x3xf32>) {
  %s = kiln.reduce_sum %t, dims = [0, 1] : tensor<6x3xf32>
  %n = kiln.scatter_add %t, %i, %r : tensor<6x3xf32>, tensor<4xi32>, tensor<4x3xf32>
  return %s, %n : tensor<f32>, tensor<6x3xf32>
}
