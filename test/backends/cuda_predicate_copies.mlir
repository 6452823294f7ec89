// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-predicate-copies | FileCheck %s

// The predicate of a loop, written by a kernel, is copied into a host
// stack slot made once in the entry block, then loaded from the slot.
// CHECK-LABEL: func.func @loop_predicate
// CHECK-NEXT:    %[[SLOT:.+]] = memref.alloca() : memref<i1>
// CHECK:         scf.while
// CHECK:           %[[P:.+]] = memref.alloc() : memref<i1>
// CHECK:           gpu.launch
// CHECK:           memref.copy %[[P]], %[[SLOT]] : memref<i1> to memref<i1>
// CHECK-NEXT:      %[[V:.+]] = memref.load %[[SLOT]][] : memref<i1>
// CHECK:           scf.condition(%[[V]])
func.func @loop_predicate(%x: memref<f32>) {
  %c1 = arith.constant 1 : index
  scf.while : () -> () {
    %p = memref.alloc() : memref<i1>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %x[] : memref<f32>
      %zero = arith.constant 0.0 : f32
      %lt = arith.cmpf olt, %v, %zero : f32
      memref.store %lt, %p[] : memref<i1>
      gpu.terminator
    }
    %c = memref.load %p[] : memref<i1>
    memref.dealloc %p : memref<i1>
    scf.condition(%c)
  } do {
    scf.yield
  }
  return
}

// -----

// A callee that only loads its rank-0 argument on the host still reads it
// through a copy: the caller may have written it by stream-ordered work
// (here a constant copied in), which a direct load of the buffer could
// overtake. The caller's own host-only buffer is loaded directly.
// CHECK-LABEL: func.func private @select_callee(
// CHECK-SAME:    %[[P:[^:]*]]: memref<i1>
// CHECK-NEXT:    %[[SLOT:.+]] = memref.alloca() : memref<i1>
// CHECK-NEXT:    memref.copy %[[P]], %[[SLOT]] : memref<i1> to memref<i1>
// CHECK-NEXT:    %[[V:.+]] = memref.load %[[SLOT]][] : memref<i1>
// CHECK-NEXT:    arith.select %[[V]]
// CHECK-LABEL: func.func @select_caller(
// CHECK-NOT:     memref.alloca
// CHECK:         call @select_callee
func.func private @select_callee(%p: memref<i1>, %a: memref<4xf32>, %b: memref<4xf32>) -> memref<4xf32> {
  %v = memref.load %p[] : memref<i1>
  %r = arith.select %v, %a, %b : memref<4xf32>
  return %r : memref<4xf32>
}
func.func @select_caller(%a: memref<4xf32>, %b: memref<4xf32>) -> memref<4xf32> {
  %g = memref.get_global @truth : memref<i1>
  %p = memref.alloc() : memref<i1>
  memref.copy %g, %p : memref<i1> to memref<i1>
  %r = call @select_callee(%p, %a, %b) : (memref<i1>, memref<4xf32>, memref<4xf32>) -> memref<4xf32>
  return %r : memref<4xf32>
}
memref.global "private" constant @truth : memref<i1> = dense<true>

// -----

// Loads inside kernels, from host stack slots, from buffers only the host
// uses and from buffers of higher rank are left alone.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     memref.copy
// CHECK:         return
func.func @left_alone(%x: memref<4xi64>, %s: memref<f32>) -> (i64, f32, i64) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %i = memref.load %x[%c0] : memref<4xi64>
  %h = memref.alloc() : memref<i64>
  memref.store %i, %h[] : memref<i64>
  %j = memref.load %h[] : memref<i64>
  memref.dealloc %h : memref<i64>
  %slot = memref.alloca() : memref<f32>
  %f = memref.load %slot[] : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %s[] : memref<f32>
    memref.store %v, %s[] : memref<f32>
    gpu.terminator
  }
  return %i, %f, %j : i64, f32, i64
}

// -----

// A predicate read through a view: a kernel writes the function's
// memref<1xi1> out-param, and the host selects on its one element through
// the base buffer that expand-strided-metadata makes of the reshape. The
// buffer behind the view is the argument, so the value is copied like any
// other (kiln-program-fuzz --cuda seed 503 was refused, "the host code
// reads or writes the elements of argument #7 itself", when only the view
// was looked at: its one use, this load, is on the host).
// CHECK-LABEL: func.func @predicate_through_view
// CHECK-NEXT:    %[[SLOT:.+]] = memref.alloca() : memref<i1>
// CHECK:         gpu.launch
// CHECK:         %[[BASE:[^,]+]], %{{.+}} = memref.extract_strided_metadata %{{.+}} : memref<1xi1>
// CHECK-NEXT:    memref.copy %[[BASE]], %[[SLOT]] : memref<i1> to memref<i1>
// CHECK-NEXT:    %[[V:.+]] = memref.load %[[SLOT]][] : memref<i1>
// CHECK-NEXT:    arith.select %[[V]]
func.func @predicate_through_view(%x: memref<1xf32>, %a: memref<4xf32>, %b: memref<4xf32>, %out: memref<1xi1>) -> memref<4xf32> {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%c0] : memref<1xf32>
    %zero = arith.constant 0.0 : f32
    %gt = arith.cmpf ogt, %v, %zero : f32
    memref.store %gt, %out[%c0] : memref<1xi1>
    gpu.terminator
  }
  %base, %offset, %size, %stride = memref.extract_strided_metadata %out : memref<1xi1> -> memref<i1>, index, index, index
  %p = memref.load %base[] : memref<i1>
  %r = arith.select %p, %a, %b : memref<4xf32>
  return %r : memref<4xf32>
}
