// kiln-cuda-dynamic-shared-memory places the workgroup buffers of a
// launch that take more than the 48 KiB a block may allocate statically
// in dynamic shared memory: views of gpu.dynamic_shared_memory, one after
// the other at 16-byte boundaries, and the launch asks for their total.
// Launches within 48 KiB keep their buffers.
// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-cuda-dynamic-shared-memory | FileCheck %s

// 12 bytes, then 48 KiB at the next 16-byte boundary: 49168 bytes.
// CHECK-LABEL: func.func @over_48_kib(
// CHECK:         %[[SIZE:.*]] = arith.constant 49168 : i32
// CHECK:         gpu.launch blocks
// CHECK-SAME:      dynamic_shared_memory_size %[[SIZE]]
// CHECK-NOT:       workgroup(
// CHECK:           %[[BASE:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK:           %[[AT0:.*]] = arith.constant 0 : index
// CHECK:           %[[A:.*]] = memref.view %[[BASE]][%[[AT0]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<3xf32, #gpu.address_space<workgroup>>
// CHECK:           %[[AT16:.*]] = arith.constant 16 : index
// CHECK:           %[[B:.*]] = memref.view %[[BASE]][%[[AT16]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x192xf32, #gpu.address_space<workgroup>>
// CHECK:           %[[X:.*]] = memref.load %[[A]]
// CHECK:           memref.store %[[X]], %[[B]]
func.func @over_48_kib(%out: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<3xf32, #gpu.address_space<workgroup>>,
                       %b : memref<64x192xf32, #gpu.address_space<workgroup>>) {
    %c0 = arith.constant 0 : index
    %x = memref.load %a[%c0] : memref<3xf32, #gpu.address_space<workgroup>>
    memref.store %x, %b[%c0, %c0] : memref<64x192xf32, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  return
}

// -----

// Exactly 48 KiB, and private buffers after the workgroup ones: the
// launch is left as it is.
// CHECK-LABEL: func.func @at_48_kib(
// CHECK-NOT:     dynamic_shared_memory
// CHECK:         workgroup(%{{.*}} : memref<64x128xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<64x64xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME:    private(%{{.*}} : memref<2xf32, #gpu.address_space<private>>)
func.func @at_48_kib() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<64x128xf32, #gpu.address_space<workgroup>>,
                       %b : memref<64x64xf32, #gpu.address_space<workgroup>>)
             private(%p : memref<2xf32, #gpu.address_space<private>>) {
    gpu.terminator
  }
  return
}

// -----

// Private buffers stay attributions of the launch when the workgroup ones
// move.
// CHECK-LABEL: func.func @with_private(
// CHECK:         gpu.launch
// CHECK-SAME:      dynamic_shared_memory_size
// CHECK-SAME:      private(%[[P:.*]] : memref<2xf32, #gpu.address_space<private>>)
// CHECK:           memref.view
// CHECK:           memref.load %[[P]]
func.func @with_private() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<12289xf32, #gpu.address_space<workgroup>>)
             private(%p : memref<2xf32, #gpu.address_space<private>>) {
    %c0 = arith.constant 0 : index
    %x = memref.load %p[%c0] : memref<2xf32, #gpu.address_space<private>>
    memref.store %x, %a[%c0] : memref<12289xf32, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  return
}

// -----

func.func @asks_already(%n: i32) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{workgroup buffers of 49156 bytes need dynamic shared memory, which the launch already asks for itself}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             dynamic_shared_memory_size %n
             workgroup(%a : memref<12289xf32, #gpu.address_space<workgroup>>) {
    gpu.terminator
  }
  return
}

// -----

func.func @strided_buffer() {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{cannot be a view of dynamic shared memory (its layout is not the identity)}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<12289xf32, strided<[1], offset: 4>, #gpu.address_space<workgroup>>) {
    gpu.terminator
  }
  return
}
