// REQUIRES: cuda-backend
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
// CHECK:         gpu.launch
// CHECK-NEXT:      linalg.generic
// CHECK:         return
func.func @scalar_work(%a: memref<i32>, %b: memref<i32>, %p: memref<i1>, %c: memref<i64>, %v: i64) {
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%a, %b : memref<i32>, memref<i32>) outs(%p : memref<i1>) {
  ^bb0(%x: i32, %y: i32, %o: i1):
    %lt = arith.cmpi slt, %x, %y : i32
    linalg.yield %lt : i1
  }
  memref.store %v, %c[] : memref<i64>
  linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%c : memref<i64>) outs(%c : memref<i64>) {
  ^bb0(%x: i64, %o: i64):
    linalg.yield %x : i64
  }
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

// -----

// The deallocation's bookkeeping (a buffer only stored to, passed to a
// private host function and read there) stays on the host.
// CHECK-LABEL: func.func @bookkeeping
// CHECK-NOT:     gpu.launch
// CHECK:         memref.store
// CHECK:         call @helper
// CHECK-LABEL: func.func private @helper
// CHECK-NOT:     gpu.launch
func.func @bookkeeping(%p: index) -> i1 {
  %c0 = arith.constant 0 : index
  %flags = memref.alloc() : memref<1xindex>
  memref.store %p, %flags[%c0] : memref<1xindex>
  %cast = memref.cast %flags : memref<1xindex> to memref<?xindex>
  %r = call @helper(%cast) : (memref<?xindex>) -> i1
  memref.dealloc %flags : memref<1xindex>
  return %r : i1
}
func.func private @helper(%f: memref<?xindex>) -> i1 {
  %c0 = arith.constant 0 : index
  %true = arith.constant true
  %v = memref.load %f[%c0] : memref<?xindex>
  memref.store %v, %f[%c0] : memref<?xindex>
  return %true : i1
}

// -----

// A reduction to a scalar (no parallel loop) runs sequentially in one
// thread.
// CHECK-LABEL: func.func @to_scalar
// CHECK:         gpu.launch
// CHECK-NEXT:      linalg.generic
// CHECK:           arith.ori
func.func @to_scalar(%x: memref<64xi1>, %r: memref<i1>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%x : memref<64xi1>) outs(%r : memref<i1>) {
  ^bb0(%a: i1, %acc: i1):
    %o = arith.ori %a, %acc : i1
    linalg.yield %o : i1
  }
  return
}
