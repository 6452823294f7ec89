// Constant globals of whole-byte elements become 64-byte aligned i8 arrays
// of the same bytes, read back through memref.view; splats and i1
// constants of rank two or more become one-dimensional globals of their
// type, read through memref.expand_shape; rank-0 and uninitialized globals
// stay.
// RUN: kiln-opt %s --split-input-file --kiln-flatten-globals | FileCheck %s
// RUN: kiln-opt %s --split-input-file \
// RUN:   --kiln-flatten-globals=min-pooled-bytes=8 \
// RUN:   | FileCheck %s --check-prefix=POOLED

// 1.0, 2.0 (f32, little-endian) and 3, 4 (i16).
// CHECK-DAG: memref.global "private" constant @w : memref<8xi8> = dense<[0, 0, -128, 63, 0, 0, 0, 64]> {alignment = 64 : i64}
// CHECK-DAG: memref.global "private" constant @v : memref<4xi8> = dense<[3, 0, 4, 0]> {alignment = 64 : i64}
// CHECK-DAG: memref.global "private" constant @s : memref<4xi32> = dense<7>
// CHECK-DAG: memref.global "private" constant @b : memref<4xi1> = dense<[true, false, false, true]>
// CHECK-DAG: memref.global "private" constant @one : memref<2xf32> = dense<1.000000e+00>
// CHECK-DAG: memref.global "private" constant @r : memref<f32> = dense<1.000000e+00>
// CHECK-DAG: memref.global "private" @u : memref<2x2xf32> = uninitialized
memref.global "private" constant @w : memref<1x2x1xf32> = dense<[[[1.0], [2.0]]]>
memref.global "private" constant @v : memref<2xi16> = dense<[3, 4]>
memref.global "private" constant @s : memref<2x2xi32> = dense<7>
memref.global "private" constant @b : memref<2x2xi1> = dense<[[true, false], [false, true]]>
memref.global "private" constant @one : memref<2xf32> = dense<1.0>
memref.global "private" constant @r : memref<f32> = dense<1.0>
memref.global "private" @u : memref<2x2xf32> = uninitialized

// CHECK-LABEL: func.func @read(
// CHECK:         %[[W:.*]] = memref.get_global @w : memref<8xi8>
// CHECK:         %[[C0:.*]] = arith.constant 0 : index
// CHECK:         %[[WV:.*]] = memref.view %[[W]][%[[C0]]][] : memref<8xi8> to memref<1x2x1xf32>
// CHECK:         %[[V:.*]] = memref.get_global @v : memref<4xi8>
// CHECK:         %[[VV:.*]] = memref.view %[[V]][%{{.*}}][] : memref<4xi8> to memref<2xi16>
// CHECK:         %[[S:.*]] = memref.get_global @s : memref<4xi32>
// CHECK:         %[[SS:.*]] = memref.expand_shape %[[S]] {{\[\[}}0, 1]] output_shape [2, 2] : memref<4xi32> into memref<2x2xi32>
// CHECK:         %[[B:.*]] = memref.get_global @b : memref<4xi1>
// CHECK:         %[[BS:.*]] = memref.expand_shape %[[B]] {{\[\[}}0, 1]] output_shape [2, 2] : memref<4xi1> into memref<2x2xi1>
// CHECK:         memref.get_global @one : memref<2xf32>
// CHECK:         memref.get_global @r : memref<f32>
// CHECK:         memref.get_global @u : memref<2x2xf32>
// CHECK:         return %[[WV]], %[[VV]], %[[SS]], %[[BS]]
func.func @read() -> (memref<1x2x1xf32>, memref<2xi16>, memref<2x2xi32>, memref<2x2xi1>, memref<2xf32>, memref<f32>, memref<2x2xf32>) {
  %w = memref.get_global @w : memref<1x2x1xf32>
  %v = memref.get_global @v : memref<2xi16>
  %s = memref.get_global @s : memref<2x2xi32>
  %b = memref.get_global @b : memref<2x2xi1>
  %one = memref.get_global @one : memref<2xf32>
  %r = memref.get_global @r : memref<f32>
  %u = memref.get_global @u : memref<2x2xf32>
  return %w, %v, %s, %b, %one, %r, %u : memref<1x2x1xf32>, memref<2xi16>, memref<2x2xi32>, memref<2x2xi1>, memref<2xf32>, memref<f32>, memref<2x2xf32>
}

// -----

// With min-pooled-bytes (the CPU pipeline's kiln-cpu-pool-constants
// threshold), a constant of at least that many bytes keeps its type and its
// readers read it as before; smaller constants, splats and globals that are
// not constant are flattened as without it.
// CHECK-DAG: memref.global "private" constant @big : memref<8xi8> = dense<[0, 0, -128, 63, 0, 0, 0, 64]> {alignment = 64 : i64}
// CHECK-DAG: memref.global "private" constant @small : memref<4xi8> = dense<[3, 0, 4, 0]> {alignment = 64 : i64}
// CHECK-DAG: memref.global "private" @mutable : memref<8xi8> = dense<[0, 0, -128, 63, 0, 0, 0, 64]> {alignment = 64 : i64}
// CHECK-DAG: memref.global "private" constant @splat : memref<4xf32> = dense<1.000000e+00>
// POOLED-DAG: memref.global "private" constant @big : memref<2x1xf32> = dense<{{\[\[}}1.000000e+00], [2.000000e+00]]>
// POOLED-DAG: memref.global "private" constant @small : memref<4xi8> = dense<[3, 0, 4, 0]> {alignment = 64 : i64}
// POOLED-DAG: memref.global "private" @mutable : memref<8xi8> = dense<[0, 0, -128, 63, 0, 0, 0, 64]> {alignment = 64 : i64}
// POOLED-DAG: memref.global "private" constant @splat : memref<4xf32> = dense<1.000000e+00>
memref.global "private" constant @big : memref<2x1xf32> = dense<[[1.0], [2.0]]>
memref.global "private" constant @small : memref<1x2xi16> = dense<[[3, 4]]>
memref.global "private" @mutable : memref<2x1xf32> = dense<[[1.0], [2.0]]>
memref.global "private" constant @splat : memref<2x2xf32> = dense<1.0>

// CHECK-LABEL: func.func @pooled(
// CHECK:         memref.view
// POOLED-LABEL: func.func @pooled(
// POOLED-NEXT:    %[[BIG:.*]] = memref.get_global @big : memref<2x1xf32>
// POOLED-NEXT:    %[[SMALL:.*]] = memref.get_global @small : memref<4xi8>
// POOLED:         return %[[BIG]],
func.func @pooled() -> (memref<2x1xf32>, memref<1x2xi16>, memref<2x1xf32>, memref<2x2xf32>) {
  %big = memref.get_global @big : memref<2x1xf32>
  %small = memref.get_global @small : memref<1x2xi16>
  %mutable = memref.get_global @mutable : memref<2x1xf32>
  %splat = memref.get_global @splat : memref<2x2xf32>
  return %big, %small, %mutable, %splat : memref<2x1xf32>, memref<1x2xi16>, memref<2x1xf32>, memref<2x2xf32>
}
