// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-globals-to-buffers --verify-diagnostics | FileCheck %s

// A constant is copied into a fresh buffer on the host; every use reads the
// buffer.
memref.global "private" constant @weights : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
// CHECK-LABEL: func.func @uses_constant
// CHECK:         %[[G:.+]] = memref.get_global @weights : memref<4xf32>
// CHECK:         %[[B:.+]] = memref.alloc() : memref<4xf32>
// CHECK:         memref.copy %[[G]], %[[B]]
// CHECK:         memref.load %[[B]]
func.func @uses_constant(%i: index) -> f32 {
  %g = memref.get_global @weights : memref<4xf32>
  %x = memref.load %g[%i] : memref<4xf32>
  return %x : f32
}
