// kiln.scatter_add lowers to an scf.for over the indices that carries the
// table and adds one update row into the clamped row per step, in place;
// other ranks are viewed as [rows, m], [n] and [n, m] first.
// With row-loops (the CPU's choice) the host loop reads the indices; without
// (CUDA), each index is clamped into a rank-0 tensor by a linalg.generic
// (a device kernel) that the host then reads.
// RUN: kiln-opt %s --split-input-file --kiln-to-linalg=row-loops | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-to-linalg | FileCheck %s --check-prefix=DEVICE

// CHECK-LABEL: func.func @rows
// CHECK-SAME:      (%[[T:.*]]: tensor<10x4xf32>, %[[I:.*]]: tensor<3xi32>, %[[U:.*]]: tensor<3x4xf32>)
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[N:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[LAST:.*]] = arith.constant 9 : index
// CHECK:         %[[R:.*]] = scf.for %[[K:.*]] = %[[ZERO]] to %[[N]] step %[[ONE]] iter_args(%[[ACC:.*]] = %[[T]]) -> (tensor<10x4xf32>)
// CHECK:           %[[E:.*]] = tensor.extract %[[I]][%[[K]]] : tensor<3xi32>
// CHECK:           %[[X:.*]] = arith.index_cast %[[E]] : i32 to index
// CHECK:           %[[LO:.*]] = arith.maxsi %[[X]], %[[ZERO]] : index
// CHECK:           %[[ROW:.*]] = arith.minsi %[[LO]], %[[LAST]] : index
// CHECK:           %[[TO:.*]] = tensor.extract_slice %[[ACC]][%[[ROW]], 0] [1, 4] [1, 1] : tensor<10x4xf32> to tensor<1x4xf32>
// CHECK:           %[[FROM:.*]] = tensor.extract_slice %[[U]][%[[K]], 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<1x4xf32>
// CHECK:           %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[FROM]] : tensor<1x4xf32>) outs(%[[TO]] : tensor<1x4xf32>)
// CHECK:             arith.addf
// CHECK:           %[[NEXT:.*]] = tensor.insert_slice %[[SUM]] into %[[ACC]][%[[ROW]], 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<10x4xf32>
// CHECK:           scf.yield %[[NEXT]] : tensor<10x4xf32>
// CHECK:         return %[[R]] : tensor<10x4xf32>
// DEVICE-LABEL: func.func @rows
// DEVICE:         scf.for %[[K:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<10x4xf32>)
// DEVICE:           %[[ONE:.*]] = tensor.extract_slice %{{.*}}[%[[K]]] [1] [1] : tensor<3xi32> to tensor<i32>
// DEVICE:           %[[ROW:.*]] = linalg.generic {{.*}}iterator_types = []} ins(%[[ONE]] : tensor<i32>) outs(%{{.*}} : tensor<i64>)
// DEVICE:             arith.extsi
// DEVICE:             arith.maxsi
// DEVICE:             arith.minsi
// DEVICE:           %[[E:.*]] = tensor.extract %[[ROW]][] : tensor<i64>
// DEVICE:           %[[X:.*]] = arith.index_cast %[[E]] : i64 to index
// DEVICE:           tensor.extract_slice %[[ACC]][%[[X]], 0] [1, 4] [1, 1]
func.func @rows(%t: tensor<10x4xf32>, %i: tensor<3xi32>, %u: tensor<3x4xf32>) -> tensor<10x4xf32> {
  %0 = kiln.scatter_add %t, %i, %u : tensor<10x4xf32>, tensor<3xi32>, tensor<3x4xf32>
  return %0 : tensor<10x4xf32>
}

// -----

// A vector table and 2-D indices: viewed as [5, 1], [6] and [6, 1]; the
// result is viewed back. bf16 rows are added in f32 and rounded once.
// CHECK-LABEL: func.func @views
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [5, 1] : tensor<5xbf16> into tensor<5x1xbf16>
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<2x3xi64> into tensor<6xi64>
// CHECK:         scf.for
// CHECK:           arith.extf
// CHECK:           arith.addf %{{.*}}, %{{.*}} : f32
// CHECK:           arith.truncf
// CHECK:         tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<5x1xbf16> into tensor<5xbf16>
func.func @views(%t: tensor<5xbf16>, %i: tensor<2x3xi64>, %u: tensor<2x3xbf16>) -> tensor<5xbf16> {
  %0 = kiln.scatter_add %t, %i, %u : tensor<5xbf16>, tensor<2x3xi64>, tensor<2x3xbf16>
  return %0 : tensor<5xbf16>
}

// -----

// Integers add with arith.addi (wrapping); no indices leave the table.
// CHECK-LABEL: func.func @integers
// CHECK:         scf.for
// CHECK:           arith.addi
// CHECK-LABEL: func.func @no_ids
// CHECK-SAME:      (%[[T:.*]]: tensor<3x2xf32>,
// CHECK-NOT:     scf.for
// CHECK:         return %[[T]]
func.func @integers(%t: tensor<4x2xi32>, %i: tensor<3xi32>, %u: tensor<3x2xi32>) -> tensor<4x2xi32> {
  %0 = kiln.scatter_add %t, %i, %u : tensor<4x2xi32>, tensor<3xi32>, tensor<3x2xi32>
  return %0 : tensor<4x2xi32>
}
func.func @no_ids(%t: tensor<3x2xf32>, %i: tensor<0xi32>, %u: tensor<0x2xf32>) -> tensor<3x2xf32> {
  %0 = kiln.scatter_add %t, %i, %u : tensor<3x2xf32>, tensor<0xi32>, tensor<0x2xf32>
  return %0 : tensor<3x2xf32>
}
