// kiln.dynamic_slice / kiln.dynamic_update_slice lower to
// tensor.extract_slice / tensor.insert_slice at the row index clamped to
// [0, rows - slice rows].
// RUN: kiln-opt %s --kiln-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @rows
// CHECK-SAME:      (%[[B:.*]]: tensor<8x4xf32>, %[[I:.*]]: tensor<i64>, %[[U:.*]]: tensor<2x4xf32>)
// CHECK:         %[[E:.*]] = tensor.extract %[[I]][] : tensor<i64>
// CHECK:         %[[X:.*]] = arith.index_cast %[[E]] : i64 to index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[SEVEN:.*]] = arith.constant 7 : index
// CHECK:         %[[LO:.*]] = arith.maxsi %[[X]], %[[ZERO]] : index
// CHECK:         %[[S:.*]] = arith.minsi %[[LO]], %[[SEVEN]] : index
// CHECK:         tensor.extract_slice %[[B]][%[[S]], 0] [1, 4] [1, 1] : tensor<8x4xf32> to tensor<1x4xf32>
// CHECK:         %[[SIX:.*]] = arith.constant 6 : index
// CHECK:         %[[S2:.*]] = arith.minsi %{{.*}}, %[[SIX]] : index
// CHECK:         tensor.insert_slice %[[U]] into %[[B]][%[[S2]], 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<8x4xf32>
func.func @rows(%b: tensor<8x4xf32>, %i: tensor<i64>, %u: tensor<2x4xf32>) -> (tensor<1x4xf32>, tensor<8x4xf32>) {
  %0 = kiln.dynamic_slice %b[%i], size = 1 : tensor<8x4xf32>
  %1 = kiln.dynamic_update_slice %b[%i], %u : tensor<8x4xf32>, tensor<2x4xf32>
  return %0, %1 : tensor<1x4xf32>, tensor<8x4xf32>
}
