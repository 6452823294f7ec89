// RUN: kiln-opt %s --split-input-file --kiln-decompose-sort | FileCheck %s

// Three rows padded to four (the padding value is irrelevant: padding rows
// are told apart by their original index, 3, and sort last). Bitonic sort
// of 4 has three stages, one kiln.for iteration each, whose block size
// (2, 4, 4) and partner distance (1, 2, 1) the body reads from two
// tables: row i pairs with row i ^ distance and keeps the first of its
// pair where its block ascends and it is the lower row, or its block
// descends and it is the upper one (both bits clear or both set). Floats
// compare NaN as the largest value (x != x). The padding is sliced off at
// the end.
// CHECK-LABEL: func.func @padded
// CHECK:         %[[P:.*]] = kiln.pad %arg0, %{{.*}}, low = [0, 0], high = [1, 0], interior = [0, 0] : tensor<3x2xf32>, tensor<f32>
// CHECK:         %[[I:.*]] = kiln.iota dim = 0 : tensor<4x2xi64>
// CHECK:         %[[L:.*]]:2 = kiln.for 3 iterations(%[[P]], %[[I]]) : (tensor<4x2xf32>, tensor<4x2xi64>) {
// CHECK-NEXT:    ^bb0(%[[S:.*]]: tensor<i64>, %[[V0:.*]]: tensor<4x2xf32>, %[[I0:.*]]: tensor<4x2xi64>):
// CHECK:           %[[SIZES:.*]] = kiln.constant dense<[2, 4, 4]> : tensor<3xi64>
// CHECK:           %[[SIZE:.*]] = kiln.gather %[[SIZES]], %[[S]] : tensor<3xi64>, tensor<i64>
// CHECK:           %[[DISTANCES:.*]] = kiln.constant dense<[1, 2, 1]> : tensor<3xi64>
// CHECK:           %[[DISTANCE:.*]] = kiln.gather %[[DISTANCES]], %[[S]] : tensor<3xi64>, tensor<i64>
// CHECK:           %[[ROW:.*]] = kiln.iota dim = 0 : tensor<4xi64>
// CHECK:           %[[D:.*]] = kiln.broadcast_in_dim %[[DISTANCE]], dims = [] : (tensor<i64>) -> tensor<4xi64>
// CHECK:           %[[AT:.*]] = kiln.xor %[[ROW]], %[[D]] : tensor<4xi64>
// CHECK:           %[[ZERO:.*]] = kiln.constant dense<0> : tensor<4xi64>
// CHECK:           %[[DBIT:.*]] = kiln.and %[[ROW]], %[[D]] : tensor<4xi64>
// CHECK:           %[[LOWER:.*]] = kiln.compare eq, %[[DBIT]], %[[ZERO]] : tensor<4xi64>
// CHECK:           %[[B:.*]] = kiln.broadcast_in_dim %[[SIZE]], dims = [] : (tensor<i64>) -> tensor<4xi64>
// CHECK:           %[[BBIT:.*]] = kiln.and %[[ROW]], %[[B]] : tensor<4xi64>
// CHECK:           %[[ASC:.*]] = kiln.compare eq, %[[BBIT]], %[[ZERO]] : tensor<4xi64>
// CHECK:           %[[DIFFER:.*]] = kiln.xor %[[LOWER]], %[[ASC]] : tensor<4xi1>
// CHECK:           %[[KEEPS:.*]] = kiln.not %[[DIFFER]] : tensor<4xi1>
// CHECK:           %[[N:.*]] = kiln.constant dense<3> : tensor<4x2xi64>
// CHECK-DAG:       kiln.compare ne, %[[V0]], %[[V0]] : tensor<4x2xf32>
// CHECK-DAG:       %[[PI:.*]] = kiln.gather %[[I0]], %[[AT]] : tensor<4x2xi64>, tensor<4xi64>
// CHECK-DAG:       %[[PV:.*]] = kiln.gather %[[V0]], %[[AT]] : tensor<4x2xf32>, tensor<4xi64>
// CHECK-DAG:       kiln.compare ge, %[[PI]], %[[N]] : tensor<4x2xi64>
// CHECK-DAG:       kiln.compare lt, %[[V0]], %[[PV]] : tensor<4x2xf32>
// CHECK:           %[[FIRST:.*]] = kiln.broadcast_in_dim %[[KEEPS]], dims = [0] : (tensor<4xi1>) -> tensor<4x2xi1>
// CHECK:           %[[TAKE:.*]] = kiln.select %[[FIRST]], %{{.*}}, %{{.*}} : tensor<4x2xi1>, tensor<4x2xi1>
// CHECK:           %[[V1:.*]] = kiln.select %[[TAKE]], %[[PV]], %[[V0]] : tensor<4x2xi1>, tensor<4x2xf32>
// CHECK:           %[[I1:.*]] = kiln.select %[[TAKE]], %[[PI]], %[[I0]] : tensor<4x2xi1>, tensor<4x2xi64>
// CHECK:           kiln.yield %[[V1]], %[[I1]] : tensor<4x2xf32>, tensor<4x2xi64>
// CHECK:         }
// CHECK:         %[[V:.*]] = kiln.slice %[[L]]#0, start = [0, 0], limit = [3, 2], stride = [1, 1] : tensor<4x2xf32>
// CHECK:         %[[J:.*]] = kiln.slice %[[L]]#1, start = [0, 0], limit = [3, 2], stride = [1, 1] : tensor<4x2xi64>
// CHECK:         return %[[V]], %[[J]]
// CHECK-NOT:     kiln.sort
func.func @padded(%x: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>) {
  %v, %i = kiln.sort %x, dim = 0 descending : tensor<3x2xf32>
  return %v, %i : tensor<3x2xf32>, tensor<3x2xi64>
}

// -----

// The sorted dim moved first and the others flattened into columns, and
// back; integers need no NaN test; a power of two needs no padding.
// CHECK-LABEL: func.func @moved
// CHECK:         %[[T:.*]] = kiln.transpose %arg0, permutation = [1, 0, 2] : tensor<2x4x3xi32>
// CHECK:         %[[R:.*]] = kiln.reshape %[[T]] : (tensor<4x2x3xi32>) -> tensor<4x6xi32>
// CHECK-NOT:     kiln.pad
// CHECK-NOT:     kiln.compare ne
// CHECK:         kiln.reshape %{{.*}} : (tensor<4x6xi32>) -> tensor<4x2x3xi32>
// CHECK:         kiln.transpose %{{.*}}, permutation = [1, 0, 2] : tensor<4x2x3xi32>
// CHECK:         kiln.reshape %{{.*}} : (tensor<4x6xi64>) -> tensor<4x2x3xi64>
// CHECK:         kiln.transpose %{{.*}}, permutation = [1, 0, 2] : tensor<4x2x3xi64>
// CHECK-NOT:     kiln.sort
func.func @moved(%x: tensor<2x4x3xi32>) -> (tensor<2x4x3xi32>, tensor<2x4x3xi64>) {
  %v, %i = kiln.sort %x, dim = 1 : tensor<2x4x3xi32>
  return %v, %i : tensor<2x4x3xi32>, tensor<2x4x3xi64>
}

// -----

// Eight values: six stages, still one loop body; the tables list each
// stage's block size and distance in the network's order.
// CHECK-LABEL: func.func @eight
// CHECK:         kiln.for 6 iterations
// CHECK:           kiln.constant dense<[2, 4, 4, 8, 8, 8]> : tensor<6xi64>
// CHECK:           kiln.constant dense<[1, 2, 1, 4, 2, 1]> : tensor<6xi64>
// CHECK:           kiln.yield
// CHECK-NOT:     kiln.for
// CHECK-NOT:     kiln.sort
func.func @eight(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xi64>) {
  %v, %i = kiln.sort %x, dim = 0 : tensor<8xf32>
  return %v, %i : tensor<8xf32>, tensor<8xi64>
}

// -----

// One value is sorted already: no stages, no loop.
// CHECK-LABEL: func.func @single
// CHECK-NOT:     kiln.for
// CHECK:         %[[I:.*]] = kiln.iota dim = 0 : tensor<1x2xi64>
// CHECK:         return %arg0, %[[I]]
func.func @single(%x: tensor<1x2xf32>) -> (tensor<1x2xf32>, tensor<1x2xi64>) {
  %v, %i = kiln.sort %x, dim = 0 : tensor<1x2xf32>
  return %v, %i : tensor<1x2xf32>, tensor<1x2xi64>
}
