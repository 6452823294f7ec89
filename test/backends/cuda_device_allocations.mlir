// RUN: kiln-opt %s --split-input-file --kiln-cuda-device-allocations | FileCheck %s

// Host-code buffers become managed memory; a dealloc is a gpu.dealloc
// queued on the stream that nothing waits for.
// CHECK-LABEL: func.func @buffers
// CHECK:         %[[A:.+]] = gpu.alloc  host_shared () : memref<16xf32>
// CHECK:         %[[D:.+]] = gpu.alloc  host_shared (%{{.+}}) : memref<?xi64>
// CHECK:         %[[T:.+]] = gpu.wait async
// CHECK-NEXT:    %{{.+}} = gpu.dealloc async [%[[T]]] %[[A]] : memref<16xf32>
// CHECK-NOT:     gpu.wait
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
