// RUN: kiln-opt %s --split-input-file --kiln-decompose-sort | FileCheck %s

// Three rows padded to four (the padding value is irrelevant: padding rows
// are told apart by their original index, 3, and sort last). Bitonic sort
// of 4 has three stages: partners at distance 1, 2, 1; each row keeps the
// first of its pair where its block ascends and it is the lower row, or
// its block descends and it is the upper one. Floats compare NaN as the
// largest value (x != x). The padding is sliced off at the end.
// CHECK-LABEL: func.func @padded
// CHECK:         %[[P:.*]] = kiln.pad %arg0, %{{.*}}, low = [0, 0], high = [1, 0], interior = [0, 0] : tensor<3x2xf32>, tensor<f32>
// CHECK:         %[[I:.*]] = kiln.iota dim = 0 : tensor<4x2xi64>
// CHECK:         %[[N:.*]] = kiln.constant dense<3> : tensor<4x2xi64>
// CHECK:         %[[D1:.*]] = kiln.constant dense<[1, 0, 3, 2]> : tensor<4xi64>
// CHECK-DAG:     kiln.compare ne, %[[P]], %[[P]] : tensor<4x2xf32>
// CHECK-DAG:     %[[PI:.*]] = kiln.gather %[[I]], %[[D1]] : tensor<4x2xi64>, tensor<4xi64>
// CHECK-DAG:     %[[PV:.*]] = kiln.gather %[[P]], %[[D1]] : tensor<4x2xf32>, tensor<4xi64>
// CHECK-DAG:     kiln.compare ge, %[[PI]], %[[N]] : tensor<4x2xi64>
// CHECK-DAG:     kiln.compare lt, %[[P]], %[[PV]] : tensor<4x2xf32>
// CHECK:         kiln.constant dense<[true, false, false, true]> : tensor<4xi1>
// CHECK:         %[[V1:.*]] = kiln.select %[[TAKE:.*]], %[[PV]], %[[P]] : tensor<4x2xi1>, tensor<4x2xf32>
// CHECK:         %[[I1:.*]] = kiln.select %[[TAKE]], %[[PI]], %[[I]] : tensor<4x2xi1>, tensor<4x2xi64>
// CHECK:         kiln.constant dense<[2, 3, 0, 1]> : tensor<4xi64>
// CHECK:         kiln.constant dense<[true, true, false, false]> : tensor<4xi1>
// CHECK:         kiln.constant dense<[1, 0, 3, 2]> : tensor<4xi64>
// CHECK:         kiln.constant dense<[true, false, true, false]> : tensor<4xi1>
// CHECK:         %[[V:.*]] = kiln.slice %{{.*}}, start = [0, 0], limit = [3, 2], stride = [1, 1] : tensor<4x2xf32>
// CHECK:         %[[J:.*]] = kiln.slice %{{.*}}, start = [0, 0], limit = [3, 2], stride = [1, 1] : tensor<4x2xi64>
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
