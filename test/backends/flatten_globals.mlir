// Multi-dimensional constant globals become one-dimensional, with the same
// elements in the same order, and each get_global reads the flat global
// reshaped back; 1-D and rank-0 globals and uninitialized ones stay.
// RUN: kiln-opt %s --kiln-flatten-globals | FileCheck %s

// CHECK-DAG: memref.global "private" constant @w : memref<6xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00]>
// CHECK-DAG: memref.global "private" constant @s : memref<4xi32> = dense<7>
// CHECK-DAG: memref.global "private" constant @v : memref<3xf32> = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]>
// CHECK-DAG: memref.global "private" constant @r : memref<f32> = dense<1.000000e+00>
// CHECK-DAG: memref.global "private" @u : memref<2x2xf32> = uninitialized
memref.global "private" constant @w : memref<2x3x1xf32> = dense<[[[1.0], [2.0], [3.0]], [[4.0], [5.0], [6.0]]]>
memref.global "private" constant @s : memref<2x2xi32> = dense<7>
memref.global "private" constant @v : memref<3xf32> = dense<[1.0, 2.0, 3.0]>
memref.global "private" constant @r : memref<f32> = dense<1.0>
memref.global "private" @u : memref<2x2xf32> = uninitialized

// CHECK-LABEL: func.func @read(
// CHECK:         %[[W:.*]] = memref.get_global @w : memref<6xf32>
// CHECK:         %[[WS:.*]] = memref.expand_shape %[[W]] {{\[\[}}0, 1, 2]] output_shape [2, 3, 1] : memref<6xf32> into memref<2x3x1xf32>
// CHECK:         %[[S:.*]] = memref.get_global @s : memref<4xi32>
// CHECK:         %[[SS:.*]] = memref.expand_shape %[[S]] {{\[\[}}0, 1]] output_shape [2, 2] : memref<4xi32> into memref<2x2xi32>
// CHECK:         memref.get_global @v : memref<3xf32>
// CHECK:         memref.get_global @r : memref<f32>
// CHECK:         memref.get_global @u : memref<2x2xf32>
// CHECK:         return %[[WS]], %[[SS]]
func.func @read() -> (memref<2x3x1xf32>, memref<2x2xi32>, memref<3xf32>, memref<f32>, memref<2x2xf32>) {
  %w = memref.get_global @w : memref<2x3x1xf32>
  %s = memref.get_global @s : memref<2x2xi32>
  %v = memref.get_global @v : memref<3xf32>
  %r = memref.get_global @r : memref<f32>
  %u = memref.get_global @u : memref<2x2xf32>
  return %w, %s, %v, %r, %u : memref<2x3x1xf32>, memref<2x2xi32>, memref<3xf32>, memref<f32>, memref<2x2xf32>
}
