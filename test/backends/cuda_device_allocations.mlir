// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-device-allocations --verify-diagnostics | FileCheck %s

// Buffers only kernels touch become device memory, allocated on the
// stream; a dealloc is a gpu.dealloc queued on the stream that nothing
// waits for.
// CHECK-LABEL: func.func @buffers
// CHECK:         %[[W:.+]] = gpu.wait async
// CHECK:         %[[A:.+]], %{{.+}} = gpu.alloc async [%[[W]]] () : memref<16xf32>
// CHECK:         %[[W2:.+]] = gpu.wait async
// CHECK:         %[[D:.+]], %{{.+}} = gpu.alloc async [%[[W2]]] (%{{.+}}) : memref<?xi64>
// CHECK:         %[[T:.+]] = gpu.wait async
// CHECK-NEXT:    %{{.+}} = gpu.dealloc async [%[[T]]] %[[A]] : memref<16xf32>
// CHECK-NOT:     host_shared
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     memref.dealloc
func.func @buffers(%n: index, %f: f32) -> memref<?xi64> {
  %a = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  %d = memref.alloc(%n) : memref<?xi64>
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %f, %a[%tx] : memref<16xf32>
    gpu.terminator
  }
  memref.dealloc %a : memref<16xf32>
  return %d : memref<?xi64>
}

// -----

// Inside a kernel nothing changes.
// CHECK-LABEL: func.func @in_kernel
// CHECK:         gpu.launch
// CHECK:           memref.alloca
func.func @in_kernel() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %t = memref.alloca() : memref<4xf32>
    gpu.terminator
  }
  return
}

// -----

// The deallocation's bookkeeping stays host memory, freed on the host.
// CHECK-LABEL: func.func @bookkeeping
// CHECK:         %[[F:.+]] = memref.alloc() : memref<1xindex>
// CHECK:         memref.dealloc %[[F]] : memref<1xindex>
// CHECK-NOT:     gpu.alloc
// CHECK-NOT:     gpu.dealloc
func.func @bookkeeping(%p: index) -> index {
  %c0 = arith.constant 0 : index
  %flags = memref.alloc() : memref<1xindex>
  memref.store %p, %flags[%c0] : memref<1xindex>
  %v = memref.load %flags[%c0] : memref<1xindex>
  memref.dealloc %flags : memref<1xindex>
  return %v : index
}

// -----

// A buffer a kernel writes and the host reads through a view is managed
// memory; a stream-ordered copy out of another does not make it so.
// CHECK-LABEL: func.func @host_reads_a_view
// CHECK:         gpu.alloc  host_shared () : memref<8xf32>
// CHECK:         gpu.alloc async [%{{.+}}] () : memref<8xf32>
func.func @host_reads_a_view(%f: f32, %slot: memref<f32>) -> f32 {
  %read = memref.alloc() : memref<8xf32>
  %copied = memref.alloc() : memref<8xf32>
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %f, %read[%tx] : memref<8xf32>
    memref.store %f, %copied[%tx] : memref<8xf32>
    gpu.terminator
  }
  %view = memref.subview %read[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  %c0 = arith.constant 0 : index
  %v = memref.load %view[%c0] : memref<4xf32, strided<[1], offset: 2>>
  %one = memref.subview %copied[3] [1] [1] : memref<8xf32> to memref<f32, strided<[], offset: 3>>
  %w = gpu.wait async
  %t = gpu.memcpy async [%w] %slot, %one : memref<f32>, memref<f32, strided<[], offset: 3>>
  return %v : f32
}

// -----

// A loop-carried buffer is one buffer with what the loop yields: the host
// storing into the value the body yields makes the initial buffer managed
// memory too. A select between buffers touches no element.
// CHECK-LABEL: func.func @carried
// CHECK:         gpu.alloc  host_shared () : memref<4xf32>
// CHECK:         scf.for
// CHECK:           gpu.alloc  host_shared () : memref<4xf32>
// CHECK:         gpu.alloc async [%{{.+}}] () : memref<4xf32>
// CHECK:         gpu.alloc async [%{{.+}}] () : memref<4xf32>
func.func @carried(%n: index, %f: f32, %p: i1) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %init = memref.alloc() : memref<4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%b = %init) -> (memref<4xf32>) {
    %next = memref.alloc() : memref<4xf32>
    scf.yield %next : memref<4xf32>
  }
  memref.store %f, %r[%c0] : memref<4xf32>
  %x = memref.alloc() : memref<4xf32>
  %y = memref.alloc() : memref<4xf32>
  %s = arith.select %p, %x, %y : memref<4xf32>
  return %s : memref<4xf32>
}

// -----

// A buffer passed to a function whose host code loads from it (and whose
// kernel writes it) is managed memory.
// CHECK-LABEL: func.func @passed
// CHECK:         gpu.alloc  host_shared () : memref<2xf32>
func.func @passed() -> f32 {
  %a = memref.alloc() : memref<2xf32>
  %v = func.call @reads(%a) : (memref<2xf32>) -> f32
  return %v : f32
}
func.func private @reads(%a: memref<2xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %f, %a[%tx] : memref<2xf32>
    gpu.terminator
  }
  %v = memref.load %a[%c0] : memref<2xf32>
  return %v : f32
}

// -----

// The runtime's arguments are device memory: host code touching one is
// refused, naming it; a kernel reading one is fine.
// expected-error @+1 {{the host code reads or writes the elements of argument #1 itself, but a CUDA function's arguments live in device memory}}
func.func @kiln_impl_f(%a: memref<4xf32>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = memref.load %b[%c0] : memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %x = memref.load %a[%tx] : memref<4xf32>
    gpu.terminator
  }
  return
}
func.func @kiln_entry_f(%args: !llvm.ptr) {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  func.call @kiln_impl_f(%a, %b) : (memref<4xf32>, memref<4xf32>) -> ()
  return
}

// -----

// A result buffer that only a library call writes, through its address
// made a pointer in the function it is passed to, is device memory: the
// address leaves the host (random program 12 of kiln-program-fuzz, whose
// private function's batched product wrote into host memory on a GPU).
// Addresses the host only compares or stores stay bookkeeping.
// CHECK-LABEL: func.func @address_to_a_library
// CHECK:         gpu.alloc async [%{{.+}}] () : memref<8x16xf32>
// CHECK:         memref.alloc() : memref<1xindex>
// CHECK-NOT:     memref.alloc() : memref<8x16xf32>
func.func @address_to_a_library() -> index {
  %r = memref.alloc() : memref<8x16xf32>
  func.call @writes(%r) : (memref<8x16xf32>) -> ()
  %c0 = arith.constant 0 : index
  %book = memref.alloc() : memref<1xindex>
  %p = memref.extract_aligned_pointer_as_index %book : memref<1xindex> -> index
  memref.store %p, %book[%c0] : memref<1xindex>
  %v = memref.load %book[%c0] : memref<1xindex>
  return %v : index
}
func.func private @library(!llvm.ptr)
func.func private @writes(%r: memref<8x16xf32>) {
  %a = memref.extract_aligned_pointer_as_index %r : memref<8x16xf32> -> index
  %i = arith.index_cast %a : index to i64
  %p = llvm.inttoptr %i : i64 to !llvm.ptr
  func.call @library(%p) : (!llvm.ptr) -> ()
  return
}
