// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-async-launches | FileCheck %s

// Two launches and a contiguous copy are chained on one token without a
// wait; the host waits only before it loads the copied-back value.
// CHECK-LABEL: func.func @chain
// CHECK-SAME:    (%[[A:.+]]: memref<16xf32>, %[[B:.+]]: memref<16xf32>, %[[P:.+]]: memref<i1>)
// CHECK:         %[[SLOT:.+]] = memref.alloca() : memref<i1>
// CHECK-NEXT:    %[[T0:.+]] = gpu.wait async
// CHECK-NEXT:    %[[T1:.+]] = gpu.launch async [%[[T0]]]
// CHECK:         %[[T2:.+]] = gpu.launch async [%[[T1]]]
// CHECK:         %[[T3:.+]] = gpu.memcpy async [%[[T2]]] %[[SLOT]], %[[P]] : memref<i1>, memref<i1>
// CHECK-NEXT:    gpu.wait [%[[T3]]]
// CHECK-NEXT:    %[[V:.+]] = memref.load %[[SLOT]][] : memref<i1>
// CHECK-NOT:     gpu.wait
// CHECK:         return %[[V]]
func.func @chain(%a: memref<16xf32>, %b: memref<16xf32>, %p: memref<i1>) -> i1 {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %slot = memref.alloca() : memref<i1>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%c0] : memref<16xf32>
    memref.store %v, %b[%c0] : memref<16xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %b[%c0] : memref<16xf32>
    %zero = arith.constant 0.0 : f32
    %lt = arith.cmpf olt, %v, %zero : f32
    memref.store %lt, %p[] : memref<i1>
    gpu.terminator
  }
  memref.copy %p, %slot : memref<i1> to memref<i1>
  %r = memref.load %slot[] : memref<i1>
  return %r : i1
}

// -----

// A loop body starts with its own chain. The host load after the loop
// waits, since the loop queued work; a launch with workgroup memory keeps
// it.
// CHECK-LABEL: func.func @loop
// CHECK:         scf.for
// CHECK-NEXT:      %[[T:.+]] = gpu.wait async
// CHECK-NEXT:      gpu.launch async [%[[T]]]
// CHECK-SAME:        workgroup(%{{.+}} : memref<32xf32, #gpu.address_space<workgroup>>)
// CHECK-NOT:       gpu.wait [
// CHECK:         %[[U:.+]] = gpu.wait async
// CHECK-NEXT:    gpu.wait [%[[U]]]
// CHECK-NEXT:    memref.load
func.func @loop(%a: memref<32xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
               workgroup(%shared : memref<32xf32, #gpu.address_space<workgroup>>) {
      %v = memref.load %a[%tx] : memref<32xf32>
      memref.store %v, %shared[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
      gpu.terminator
    }
  }
  %r = memref.load %a[%c0] : memref<32xf32>
  return %r : f32
}

// -----

// Strided copies stay on the host, after a wait; ops that touch no memory
// do not wait.
// CHECK-LABEL: func.func @strided
// CHECK:         arith.addi
// CHECK-NEXT:    %[[T:.+]] = gpu.wait async
// CHECK-NEXT:    gpu.wait [%[[T]]]
// CHECK-NEXT:    memref.copy
func.func @strided(%a: memref<4x4xf32>, %b: memref<4xf32, strided<[4]>>, %i: index) -> index {
  %s = memref.subview %a[0, 0] [4, 1] [1, 1] : memref<4x4xf32> to memref<4xf32, strided<[4]>>
  %j = arith.addi %i, %i : index
  memref.copy %s, %b : memref<4xf32, strided<[4]>> to memref<4xf32, strided<[4]>>
  return %j : index
}

// -----

// A load from the deallocation's bookkeeping, which no kernel uses, does
// not wait for the stream.
// CHECK-LABEL: func.func @bookkeeping
// CHECK:         gpu.launch async
// CHECK-NOT:     gpu.wait [
// CHECK:         memref.load
func.func @bookkeeping(%a: memref<4xf32>, %p: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %flags = memref.alloc() : memref<1xindex>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%c0] : memref<4xf32>
    memref.store %v, %a[%c1] : memref<4xf32>
    gpu.terminator
  }
  memref.store %p, %flags[%c0] : memref<1xindex>
  %v = memref.load %flags[%c0] : memref<1xindex>
  memref.dealloc %flags : memref<1xindex>
  return %v : index
}
