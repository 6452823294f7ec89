// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-resident-constants | FileCheck %s

// Copies of constants into device buffers (a view of a device arena, an
// argument, a part of a constant) become the runtime's constant copies:
// the destination's and the constant's addresses and the bytes, with a
// fresh token for what waited on the copy.
// CHECK:       func.func private @kiln_cuda_copy_constant(!llvm.ptr, !llvm.ptr, i64)
// CHECK-LABEL: func.func @weights
// CHECK:       %[[ARENA:.+]], %{{.+}} = gpu.alloc async
// CHECK:       %[[G:.+]] = memref.get_global @w : memref<4x4xf32>
// CHECK-NOT:   gpu.memcpy
// CHECK:       memref.extract_aligned_pointer_as_index %[[ARENA]]
// CHECK:       %[[DST:.+]] = llvm.inttoptr %{{.+}} : i64 to !llvm.ptr
// CHECK:       memref.extract_strided_metadata %[[G]]
// CHECK:       %[[SRC:.+]] = llvm.inttoptr %{{.+}} : i64 to !llvm.ptr
// CHECK:       %[[BYTES:.+]] = arith.constant 64 : i64
// CHECK:       call @kiln_cuda_copy_constant(%[[DST]], %[[SRC]], %[[BYTES]])
// CHECK-NEXT:  %[[T:.+]] = gpu.wait async
// CHECK-NEXT:  gpu.launch async [%[[T]]]
// CHECK-LABEL: func.func @into_argument
// CHECK:       %[[ARG_BYTES:.+]] = arith.constant 16 : i64
// CHECK:       call @kiln_cuda_copy_constant(%{{.+}}, %{{.+}}, %[[ARG_BYTES]])
// CHECK-LABEL: func.func @part
// CHECK:       %[[PART:.+]] = memref.subview
// CHECK:       %{{[^,]+}}, %[[OFFSET:[^,]+]], %{{[^,]+}}, %{{[^ ]+}} = memref.extract_strided_metadata %[[PART]]
// CHECK:       arith.muli %[[OFFSET]], %{{.+}} : index
// CHECK:       %[[PART_BYTES:.+]] = arith.constant 8 : i64
// CHECK:       call @kiln_cuda_copy_constant(%{{.+}}, %{{.+}}, %[[PART_BYTES]])
memref.global "private" constant @w : memref<4x4xf32> = dense<1.0>
memref.global "private" constant @b : memref<4xf32> = dense<2.0>
func.func @weights(%y: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t0 = gpu.wait async
  %arena, %ta = gpu.alloc async [%t0] () : memref<64xi8>
  %view = memref.view %arena[%c0][] : memref<64xi8> to memref<4x4xf32>
  %g = memref.get_global @w : memref<4x4xf32>
  %t1 = gpu.wait async
  %t2 = gpu.memcpy async [%t1] %view, %g : memref<4x4xf32>, memref<4x4xf32>
  %t3 = gpu.launch async [%t2] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %view[%tx, %tx] : memref<4x4xf32>
    memref.store %v, %y[%tx, %tx] : memref<4x4xf32>
    gpu.terminator
  }
  %t4 = gpu.dealloc async [%t3] %arena : memref<64xi8>
  return
}
func.func @into_argument(%y: memref<4xf32>) {
  %g = memref.get_global @b : memref<4xf32>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %y, %g : memref<4xf32>, memref<4xf32>
  return
}
func.func @part(%y: memref<2xf32>) {
  %g = memref.get_global @b : memref<4xf32>
  %part = memref.subview %g[2] [2] [1] : memref<4xf32> to memref<2xf32, strided<[1], offset: 2>>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %y, %part : memref<2xf32>, memref<2xf32, strided<[1], offset: 2>>
  return
}

// -----

// Copies that are not a constant's into device memory stay: from a
// mutable global, into managed memory, into host memory, between device
// buffers, and a strided part of a constant.
// CHECK-NOT:   kiln_cuda_copy_constant
// CHECK-LABEL: func.func @mutable
// CHECK:       gpu.memcpy
// CHECK-LABEL: func.func @into_managed
// CHECK:       gpu.memcpy
// CHECK-LABEL: func.func @into_host
// CHECK:       gpu.memcpy
// CHECK-LABEL: func.func @between_device_buffers
// CHECK:       gpu.memcpy
// CHECK-LABEL: func.func @strided_part
// CHECK:       gpu.memcpy
memref.global "private" @state : memref<4xf32> = dense<0.0>
memref.global "private" constant @c : memref<4x4xf32> = dense<3.0>
func.func @mutable(%y: memref<4xf32>) {
  %g = memref.get_global @state : memref<4xf32>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %y, %g : memref<4xf32>, memref<4xf32>
  return
}
func.func @into_managed() {
  %g = memref.get_global @c : memref<4x4xf32>
  %t0 = gpu.wait async
  %m, %t1 = gpu.alloc async [%t0] host_shared () : memref<4x4xf32>
  %t2 = gpu.memcpy async [%t1] %m, %g : memref<4x4xf32>, memref<4x4xf32>
  return
}
func.func @into_host() {
  %g = memref.get_global @c : memref<4x4xf32>
  %h = memref.alloc() : memref<4x4xf32>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %h, %g : memref<4x4xf32>, memref<4x4xf32>
  return
}
func.func @between_device_buffers(%x: memref<4xf32>, %y: memref<4xf32>) {
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %y, %x : memref<4xf32>, memref<4xf32>
  return
}
func.func @strided_part(%y: memref<4xf32>) {
  %g = memref.get_global @c : memref<4x4xf32>
  %column = memref.subview %g[0, 1] [4, 1] [1, 1] : memref<4x4xf32> to memref<4xf32, strided<[4], offset: 1>>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %y, %column : memref<4xf32>, memref<4xf32, strided<[4], offset: 1>>
  return
}
