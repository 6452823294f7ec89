// kiln-cpu-quantized-matmuls: an f32 product of a dequantized 8-bit
// activation and constant weights that are exactly int8 values times a
// scale becomes the 8-bit product in i32, minus the zero point's share,
// cast and scaled. query-cpu=false: whatever the CPU running the test.
// RUN: kiln-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(func.func(kiln-cpu-quantized-matmuls{query-cpu=false}))" \
// RUN:   | FileCheck %s

// One scale for all weights (31.75 = 127 * 0.25), zero point 0: no
// correction; the result's scale is 0.5 * 0.25.
// CHECK-LABEL: func.func @per_tensor(
// CHECK:         %[[W:.*]] = kiln.constant dense<{{\[\[}}1, -2, 127], [4, 0, -1], [2, 3, -127], [8, -8, 1]]> : tensor<4x3xi8>
// CHECK:         %[[P:.*]] = kiln.matmul %arg0, %[[W]] : tensor<2x4xui8>, tensor<4x3xi8> -> i32
// CHECK:         %[[F:.*]] = kiln.cast %[[P]] : tensor<2x3xi32> to tensor<2x3xf32>
// CHECK:         %[[S:.*]] = kiln.constant dense<1.250000e-01> : tensor<2x3xf32>
// CHECK:         %[[R:.*]] = kiln.mul %[[F]], %[[S]] : tensor<2x3xf32>
// CHECK:         return %[[R]]
func.func @per_tensor(%x: tensor<2x4xui8>) -> tensor<2x3xf32> {
  %s = kiln.constant dense<0.5> : tensor<2x4xf32>
  %w = kiln.constant dense<[[0.25, -0.5, 31.75], [1.0, 0.0, -0.25], [0.5, 0.75, -31.75], [2.0, -2.0, 0.25]]> : tensor<4x3xf32>
  %c = kiln.cast %x : tensor<2x4xui8> to tensor<2x4xf32>
  %d = kiln.mul %c, %s : tensor<2x4xf32>
  %y = kiln.matmul %d, %w : tensor<2x4xf32>, tensor<4x3xf32>
  return %y : tensor<2x3xf32>
}

// -----

// A scale per column (0.5 and 0.25: no one scale holds both columns' int8
// values) and zero point 3: minus 3 * the column sums (3 * -124, 3 *
// -122), each column scaled by 0.5 times its own.
// CHECK-LABEL: func.func @per_column(
// CHECK:         %[[W:.*]] = kiln.constant dense<{{\[\[}}1, 1], [2, -127], [-127, 4]]> : tensor<3x2xi8>
// CHECK:         %[[P:.*]] = kiln.matmul %arg0, %[[W]] : tensor<2x3xui8>, tensor<3x2xi8> -> i32
// CHECK:         %[[Z:.*]] = kiln.constant dense<[-372, -366]> : tensor<2xi32>
// CHECK:         %[[ZB:.*]] = kiln.broadcast_in_dim %[[Z]], dims = [1] : (tensor<2xi32>) -> tensor<2x2xi32>
// CHECK:         %[[D:.*]] = kiln.sub %[[P]], %[[ZB]] : tensor<2x2xi32>
// CHECK:         %[[F:.*]] = kiln.cast %[[D]] : tensor<2x2xi32> to tensor<2x2xf32>
// CHECK:         %[[V:.*]] = kiln.constant dense<[2.500000e-01, 1.250000e-01]> : tensor<2xf32>
// CHECK:         %[[VB:.*]] = kiln.broadcast_in_dim %[[V]], dims = [1] : (tensor<2xf32>) -> tensor<2x2xf32>
// CHECK:         %[[R:.*]] = kiln.mul %[[F]], %[[VB]] : tensor<2x2xf32>
// CHECK:         return %[[R]]
func.func @per_column(%x: tensor<2x3xui8>) -> tensor<2x2xf32> {
  %z = kiln.constant dense<3.0> : tensor<2x3xf32>
  %s = kiln.constant dense<0.5> : tensor<2x3xf32>
  %w = kiln.constant dense<[[0.5, 0.25], [1.0, -31.75], [-63.5, 1.0]]> : tensor<3x2xf32>
  %c = kiln.cast %x : tensor<2x3xui8> to tensor<2x3xf32>
  %e = kiln.sub %c, %z : tensor<2x3xf32>
  %d = kiln.mul %s, %e : tensor<2x3xf32>
  %y = kiln.matmul %d, %w : tensor<2x3xf32>, tensor<3x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// The importer's rows of a batched MatMul: a reshape of the dequantized
// int8 activation (zero point -2) becomes a reshape of the int8 values.
// CHECK-LABEL: func.func @rows(
// CHECK:         %[[X:.*]] = kiln.reshape %arg0 : (tensor<2x3x4xi8>) -> tensor<6x4xi8>
// CHECK:         %[[W:.*]] = kiln.constant dense<{{\[\[}}127, 1], [2, -2], [0, 4], [-1, 3]]> : tensor<4x2xi8>
// CHECK:         %[[P:.*]] = kiln.matmul %[[X]], %[[W]] : tensor<6x4xi8>, tensor<4x2xi8> -> i32
// CHECK:         %[[Z:.*]] = kiln.constant dense<[-256, -12]> : tensor<2xi32>
// CHECK:         kiln.broadcast_in_dim %[[Z]], dims = [1] : (tensor<2xi32>) -> tensor<6x2xi32>
func.func @rows(%x: tensor<2x3x4xi8>) -> tensor<6x2xf32> {
  %z = kiln.constant dense<-2.0> : tensor<2x3x4xf32>
  %s = kiln.constant dense<0.125> : tensor<2x3x4xf32>
  %w = kiln.constant dense<[[63.5, 0.5], [1.0, -1.0], [0.0, 2.0], [-0.5, 1.5]]> : tensor<4x2xf32>
  %c = kiln.cast %x : tensor<2x3x4xi8> to tensor<2x3x4xf32>
  %e = kiln.sub %c, %z : tensor<2x3x4xf32>
  %d = kiln.mul %e, %s : tensor<2x3x4xf32>
  %r = kiln.reshape %d : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %y = kiln.matmul %r, %w : tensor<6x4xf32>, tensor<4x2xf32>
  return %y : tensor<6x2xf32>
}

// -----

// Batched weights: each batch's column sums, broadcast over the rows.
// CHECK-LABEL: func.func @batched(
// CHECK:         kiln.matmul %arg0, %{{.*}} : tensor<2x2x3xui8>, tensor<2x3x2xi8> -> i32
// CHECK:         %[[Z:.*]] = kiln.constant dense<{{\[\[}}128, 2], [9, 12]]> : tensor<2x2xi32>
// CHECK:         kiln.broadcast_in_dim %[[Z]], dims = [0, 2] : (tensor<2x2xi32>) -> tensor<2x2x2xi32>
func.func @batched(%x: tensor<2x2x3xui8>) -> tensor<2x2x2xf32> {
  %z = kiln.constant dense<1.0> : tensor<2x2x3xf32>
  %s = kiln.constant dense<1.0> : tensor<2x2x3xf32>
  %w = kiln.constant dense<[[[127.0, 1.0], [0.0, 0.0], [1.0, 1.0]], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]> : tensor<2x3x2xf32>
  %c = kiln.cast %x : tensor<2x2x3xui8> to tensor<2x2x3xf32>
  %e = kiln.sub %c, %z : tensor<2x2x3xf32>
  %d = kiln.mul %e, %s : tensor<2x2x3xf32>
  %y = kiln.matmul %d, %w : tensor<2x2x3xf32>, tensor<2x3x2xf32>
  return %y : tensor<2x2x2xf32>
}

// -----

// Stay f32: weights that are no int8 values times a scale, an activation
// that is not dequantized, weights that are not constant.
// CHECK-LABEL: func.func @stays(
// CHECK-NOT:     -> i32
// CHECK:         kiln.matmul %{{.*}}, %{{.*}} : tensor<2x2xf32>, tensor<2x2xf32>
// CHECK:         kiln.matmul %arg1, %{{.*}} : tensor<2x2xf32>, tensor<2x2xf32>
// CHECK:         kiln.matmul %{{.*}}, %arg2 : tensor<2x2xf32>, tensor<2x2xf32>
// CHECK-NOT:     -> i32
func.func @stays(%x: tensor<2x2xui8>, %f: tensor<2x2xf32>, %v: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %s = kiln.constant dense<0.5> : tensor<2x2xf32>
  %w = kiln.constant dense<[[0.123456, 3.14159], [1.0e-05, 0.654321]]> : tensor<2x2xf32>
  %q = kiln.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %c = kiln.cast %x : tensor<2x2xui8> to tensor<2x2xf32>
  %d = kiln.mul %c, %s : tensor<2x2xf32>
  %a = kiln.matmul %d, %w : tensor<2x2xf32>, tensor<2x2xf32>
  %b = kiln.matmul %f, %q : tensor<2x2xf32>, tensor<2x2xf32>
  %e = kiln.matmul %d, %v : tensor<2x2xf32>, tensor<2x2xf32>
  return %a, %b, %e : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}
