// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-plan-arena=report --verify-diagnostics | FileCheck %s

// Three intermediates only kernels touch: %a and %b are live together, %c
// starts after both ended and takes %a's bytes. The arena is one device
// allocation at the function's start, freed at its end; the buffers'
// deallocations are gone.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[S:.+]] = gpu.wait async
// CHECK-NEXT:    %[[ARENA:.+]], %{{.+}} = gpu.alloc async [%[[S]]] () : memref<8192xi8>
// CHECK:         memref.view %[[ARENA]][%c0{{(_[0-9]+)?}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK:         memref.view %[[ARENA]][%c4096][] : memref<8192xi8> to memref<1024xf32>
// CHECK:         memref.view %[[ARENA]][%c0{{(_[0-9]+)?}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK-NOT:     memref.dealloc
// CHECK:         gpu.dealloc async [%{{.+}}] %[[ARENA]] : memref<8192xi8>
// CHECK-NEXT:    return
// expected-remark @below {{device memory plan for @chain: 3 intermediates of 12288 bytes in total in an arena of 8192 bytes; 0 bytes in their own allocations}}
func.func @chain(%x: memref<1024xf32>, %y: memref<1024xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %a = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<1024xf32>
    memref.store %v, %a[%tx] : memref<1024xf32>
    gpu.terminator
  }
  %b = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%tx] : memref<1024xf32>
    memref.store %v, %b[%tx] : memref<1024xf32>
    gpu.terminator
  }
  memref.dealloc %a : memref<1024xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  %t = gpu.wait async
  %t2 = gpu.memcpy async [%t] %c, %b : memref<1024xf32>, memref<1024xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %c[%tx] : memref<1024xf32>
    memref.store %v, %y[%tx] : memref<1024xf32>
    gpu.terminator
  }
  memref.dealloc %b : memref<1024xf32>
  memref.dealloc %c : memref<1024xf32>
  return
}

// -----

// A loop body's intermediate moves to the function's arena: nothing is
// allocated per iteration. A loop-carried buffer (yielded) and a buffer
// the host reads keep their own allocations.
// CHECK-LABEL: func.func @loop
// CHECK:         gpu.alloc async {{.+}} () : memref<256xi8>
// CHECK:         %[[H:.+]] = memref.alloc() : memref<f32>
// CHECK:         scf.for
// CHECK-NOT:       memref.alloc()
// CHECK:           memref.view
// CHECK:           %[[Y:.+]] = memref.alloc() : memref<64xf32>
// CHECK:           scf.yield %[[Y]]
// expected-remark @below {{device memory plan for @loop: 1 intermediates of 256 bytes in total in an arena of 256 bytes; 260 bytes in their own allocations}}
func.func @loop(%x: memref<64xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %h = memref.alloc() : memref<f32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%cur = %x) -> (memref<64xf32>) {
    %t = memref.alloc() : memref<64xf32>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %cur[%tx] : memref<64xf32>
      memref.store %v, %t[%tx] : memref<64xf32>
      memref.store %v, %h[] : memref<f32>
      gpu.terminator
    }
    %next = memref.alloc() : memref<64xf32>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
               threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %t[%tx] : memref<64xf32>
      memref.store %v, %next[%tx] : memref<64xf32>
      gpu.terminator
    }
    memref.dealloc %t : memref<64xf32>
    scf.yield %next : memref<64xf32>
  }
  %v = memref.load %h[] : memref<f32>
  memref.dealloc %h : memref<f32>
  return %v : f32
}

// -----

// An address handed to a call (a library product, kiln-cuda-library-matmul)
// keeps its buffer alive up to the call: %a is written by a kernel and read
// by the call after %b's kernels ran, so %b must not take %a's bytes.
// CHECK-LABEL: func.func @address_taken
// CHECK:         memref.view %{{.+}}[%c0{{(_[0-9]+)?}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK:         memref.view %{{.+}}[%c4096][] : memref<8192xi8> to memref<1024xf32>
// CHECK:         call @library
func.func private @library(!llvm.ptr)
// expected-remark @below {{device memory plan for @address_taken: 2 intermediates of 8192 bytes in total in an arena of 8192 bytes; 0 bytes in their own allocations}}
func.func @address_taken(%x: memref<1024xf32>, %y: memref<1024xf32>) {
  %c1 = arith.constant 1 : index
  %a = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<1024xf32>
    memref.store %v, %a[%tx] : memref<1024xf32>
    gpu.terminator
  }
  %b = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<1024xf32>
    memref.store %v, %b[%tx] : memref<1024xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %b[%tx] : memref<1024xf32>
    memref.store %v, %y[%tx] : memref<1024xf32>
    gpu.terminator
  }
  %base, %offset, %size, %stride = memref.extract_strided_metadata %a : memref<1024xf32> -> memref<f32>, index, index, index
  %address = memref.extract_aligned_pointer_as_index %base : memref<f32> -> index
  %integer = arith.index_cast %address : index to i64
  %pointer = llvm.inttoptr %integer : i64 to !llvm.ptr
  func.call @library(%pointer) : (!llvm.ptr) -> ()
  memref.dealloc %a : memref<1024xf32>
  memref.dealloc %b : memref<1024xf32>
  return
}
