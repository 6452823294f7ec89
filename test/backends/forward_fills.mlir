// kiln-forward-fills: a copy of a buffer known to hold one fill value
// becomes a fill.
// RUN: kiln-opt %s --split-input-file --kiln-forward-fills | FileCheck %s

// Bufferization's shared zero buffer, copied into two accumulators; reads
// of the source and writes of other buffers in between do not matter.
// CHECK-LABEL: func.func @zero_accumulators(
// CHECK-SAME:    %{{[^:]*}}: memref<8x8xf32>, %[[B:[^:]*]]: memref<8x8xf32>, %[[C:[^:]*]]: memref<8x8xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         %[[Z:.*]] = memref.alloc
// CHECK:         linalg.fill ins(%[[ZERO]] : f32) outs(%[[Z]] :
// CHECK-NOT:     linalg.copy
// CHECK:         linalg.fill ins(%[[ZERO]] : f32) outs(%[[B]] :
// CHECK:         linalg.matmul
// CHECK:         linalg.fill ins(%[[ZERO]] : f32) outs(%[[C]] :
// CHECK:         linalg.matmul
func.func @zero_accumulators(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %z = memref.alloc() : memref<8x8xf32>
  linalg.fill ins(%zero : f32) outs(%z : memref<8x8xf32>)
  linalg.copy ins(%z : memref<8x8xf32>) outs(%b : memref<8x8xf32>)
  linalg.matmul ins(%a, %z : memref<8x8xf32>, memref<8x8xf32>) outs(%b : memref<8x8xf32>)
  linalg.copy ins(%z : memref<8x8xf32>) outs(%c : memref<8x8xf32>)
  linalg.matmul ins(%a, %a : memref<8x8xf32>, memref<8x8xf32>) outs(%c : memref<8x8xf32>)
  return
}

// -----

// The source is written after the fill (the last copy would see the
// product, not zeros), or it is a view: copies stay.
// CHECK-LABEL: func.func @source_written(
// CHECK:         linalg.fill
// CHECK:         linalg.fill
// CHECK:         linalg.matmul
// CHECK:         linalg.copy
// CHECK:         linalg.copy
func.func @source_written(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %c: memref<8x8xf32>, %d: memref<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %z = memref.alloc() : memref<8x8xf32>
  linalg.fill ins(%zero : f32) outs(%z : memref<8x8xf32>)
  linalg.copy ins(%z : memref<8x8xf32>) outs(%b : memref<8x8xf32>)
  linalg.matmul ins(%a, %a : memref<8x8xf32>, memref<8x8xf32>) outs(%z : memref<8x8xf32>)
  linalg.copy ins(%z : memref<8x8xf32>) outs(%c : memref<8x8xf32>)
  %v = memref.subview %b[0, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1]>>
  linalg.copy ins(%v : memref<4x8xf32, strided<[8, 1]>>) outs(%d : memref<4x8xf32>)
  return
}

// -----

// A fill in another block (outside the loop) is not looked for; a fill of
// only part of the source is no fill of the source.
// CHECK-LABEL: func.func @not_known(
// CHECK:         scf.for
// CHECK:           linalg.copy
// CHECK:         linalg.copy
func.func @not_known(%b: memref<8x8xf32>, %c: memref<8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %z = memref.alloc() : memref<8x8xf32>
  linalg.fill ins(%zero : f32) outs(%z : memref<8x8xf32>)
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    linalg.copy ins(%z : memref<8x8xf32>) outs(%b : memref<8x8xf32>)
  }
  %y = memref.alloc() : memref<8x8xf32>
  %half = memref.subview %y[0, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1]>>
  linalg.fill ins(%zero : f32) outs(%half : memref<4x8xf32, strided<[8, 1]>>)
  linalg.copy ins(%y : memref<8x8xf32>) outs(%c : memref<8x8xf32>)
  return
}

// -----

// A copy of a constant global with a splat initializer is a fill; a
// global with other values, or one that is not constant, stays a copy.
// CHECK-LABEL: func.func @globals(
// CHECK-SAME:    %[[A:[^:]*]]: memref<4x8xf32>,
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         linalg.fill ins(%[[ZERO]] : f32) outs(%[[A]] :
// CHECK:         linalg.copy
// CHECK:         linalg.copy
memref.global "private" constant @zeros : memref<4x8xf32> = dense<0.0>
memref.global "private" constant @ramp : memref<2xf32> = dense<[1.0, 2.0]>
memref.global "private" @mutable : memref<2xf32> = dense<0.0>
func.func @globals(%a: memref<4x8xf32>, %b: memref<2xf32>, %c: memref<2xf32>) {
  %z = memref.get_global @zeros : memref<4x8xf32>
  linalg.copy ins(%z : memref<4x8xf32>) outs(%a : memref<4x8xf32>)
  %r = memref.get_global @ramp : memref<2xf32>
  linalg.copy ins(%r : memref<2xf32>) outs(%b : memref<2xf32>)
  %m = memref.get_global @mutable : memref<2xf32>
  linalg.copy ins(%m : memref<2xf32>) outs(%c : memref<2xf32>)
  return
}
