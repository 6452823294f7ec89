// RUN: kiln-opt %s --split-input-file --kiln-cuda-scalar-kernels | FileCheck %s

// A rank-0 comparison (a loop predicate) and a store of a host value (a
// kiln.for counter) each become a kernel of one thread.
// CHECK-LABEL: func.func @scalar_work
// CHECK-SAME:    (%{{.+}}: memref<i32>, %{{.+}}: memref<i32>, %[[P:.+]]: memref<i1>, %[[C:.+]]: memref<i64>, %[[V:.+]]: i64)
// CHECK:         %[[ONE:.+]] = arith.constant 1 : index
// CHECK:         gpu.launch blocks(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]]) threads(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]])
// CHECK-NEXT:      linalg.generic
// CHECK:             arith.cmpi slt
// CHECK:           gpu.terminator
// CHECK:         gpu.launch
// CHECK-NEXT:      memref.store %[[V]], %[[C]][] : memref<i64>
// CHECK-NEXT:      gpu.terminator
// CHECK:         return
func.func @scalar_work(%a: memref<i32>, %b: memref<i32>, %p: memref<i1>, %c: memref<i64>, %v: i64) {
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%a, %b : memref<i32>, memref<i32>) outs(%p : memref<i1>) {
  ^bb0(%x: i32, %y: i32, %o: i1):
    %lt = arith.cmpi slt, %x, %y : i32
    linalg.yield %lt : i1
  }
  memref.store %v, %c[] : memref<i64>
  return
}

// -----

// Ops with loops are left to the other mappings, ops already in a kernel
// and stores to a host stack slot stay where they are.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.copy
// CHECK:         memref.store
// CHECK:         gpu.launch
// CHECK-NEXT:      memref.store
// CHECK-NEXT:      gpu.terminator
// CHECK-NOT:     gpu.launch
func.func @left_alone(%a: memref<4xf32>, %b: memref<4xf32>, %f: f32) {
  linalg.copy ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  %slot = memref.alloca() : memref<f32>
  memref.store %f, %slot[] : memref<f32>
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %f, %b[%c0] : memref<4xf32>
    gpu.terminator
  }
  return
}
