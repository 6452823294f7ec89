// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-resident-constants | FileCheck %s

// A buffer filled from a constant and then only read on the device (a
// kernel's loads, also through a view, a device copy from it, the x and w
// of a convolution, which kiln_cuda_conv marks `llvm.readonly`) goes: the
// function asks the runtime for the constant's device address at its start
// and reads it there. Its copy, allocation and free go; what waited on the
// copy waits on what the copy waited on.
// CHECK:       func.func private @kiln_cuda_resident_constant(!llvm.ptr, i64) -> !llvm.ptr
// CHECK-LABEL: func.func @weights
// CHECK-NEXT:    %[[G:.+]] = memref.get_global @w : memref<4x4xf32>
// CHECK:         memref.extract_strided_metadata %[[G]]
// CHECK:         %[[HOST:.+]] = llvm.inttoptr %{{.+}} : i64 to !llvm.ptr
// CHECK:         %[[BYTES:.+]] = arith.constant 64 : i64
// CHECK:         %[[DEVICE:.+]] = call @kiln_cuda_resident_constant(%[[HOST]], %[[BYTES]]) : (!llvm.ptr, i64) -> !llvm.ptr
// CHECK:         llvm.insertvalue %[[DEVICE]], %{{.+}}[0]
// CHECK:         llvm.insertvalue %[[DEVICE]], %{{.+}}[1]
// CHECK:         %[[W:.+]] = builtin.unrealized_conversion_cast %{{.+}} : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<4x4xf32>
// CHECK-NOT:     memref.alloc
// CHECK-NOT:     gpu.memcpy
// CHECK:         %[[T:.+]] = gpu.wait async
// CHECK-NOT:     gpu.memcpy
// CHECK-NEXT:    gpu.launch async [%[[T]]]
// CHECK:           memref.load %[[W]]
// CHECK:           %[[ROW:.+]] = memref.subview %[[W]][1, 0] [1, 4] [1, 1]
// CHECK:           memref.load %[[ROW]]
// CHECK:         memref.extract_aligned_pointer_as_index %[[W]]
// CHECK:         call @kiln_cuda_conv(
// CHECK:         gpu.memcpy async [%{{.+}}] %arg1, %[[W]]
// CHECK-NOT:     memref.dealloc
// CHECK:         return
memref.global "private" constant @w : memref<4x4xf32> = dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0], [13.0, 14.0, 15.0, 16.0]]>
func.func private @kiln_cuda_conv(!llvm.ptr {llvm.readonly}, !llvm.ptr {llvm.readonly}, !llvm.ptr {llvm.readonly}, !llvm.ptr)
func.func @weights(%y: memref<4x4xf32>, %z: memref<4x4xf32>, %d: !llvm.ptr) {
  %c1 = arith.constant 1 : index
  %g = memref.get_global @w : memref<4x4xf32>
  %buffer = memref.alloc() : memref<4x4xf32>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %buffer, %g : memref<4x4xf32>, memref<4x4xf32>
  %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %buffer[%tx, %tx] : memref<4x4xf32>
    %row = memref.subview %buffer[1, 0] [1, 4] [1, 1] : memref<4x4xf32> to memref<4xf32, strided<[1], offset: 4>>
    %u = memref.load %row[%tx] : memref<4xf32, strided<[1], offset: 4>>
    %s = arith.addf %v, %u : f32
    memref.store %s, %y[%tx, %tx] : memref<4x4xf32>
    gpu.terminator
  }
  %a = memref.extract_aligned_pointer_as_index %buffer : memref<4x4xf32> -> index
  %ai = arith.index_cast %a : index to i64
  %ap = llvm.inttoptr %ai : i64 to !llvm.ptr
  %yi = memref.extract_aligned_pointer_as_index %y : memref<4x4xf32> -> index
  %yl = arith.index_cast %yi : index to i64
  %yp = llvm.inttoptr %yl : i64 to !llvm.ptr
  call @kiln_cuda_conv(%d, %d, %ap, %yp) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  %t3 = gpu.wait async
  %t4 = gpu.memcpy async [%t3] %z, %buffer : memref<4x4xf32>, memref<4x4xf32>
  memref.dealloc %buffer : memref<4x4xf32>
  return
}

// -----

// The address is asked for once per constant and function, at the start,
// also where the buffer is filled in a loop's body.
// CHECK-LABEL: func.func @in_loop
// CHECK:         call @kiln_cuda_resident_constant(%{{.+}}, %{{.+}})
// CHECK-NOT:     call @kiln_cuda_resident_constant
// CHECK:         scf.for
// CHECK-NOT:     gpu.memcpy
// CHECK:         gpu.launch
// CHECK-NOT:     gpu.memcpy
// CHECK:         gpu.launch
// CHECK:         return
memref.global "private" constant @b : memref<4xf32> = dense<[0.5, -1.0, 2.0, 0.25]>
func.func @in_loop(%y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %g = memref.get_global @b : memref<4xf32>
    %buffer = memref.alloc() : memref<4xf32>
    %t0 = gpu.wait async
    %t1 = gpu.memcpy async [%t0] %buffer, %g : memref<4xf32>, memref<4xf32>
    %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
        threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %buffer[%tx] : memref<4xf32>
      memref.store %v, %y[%tx] : memref<4xf32>
      gpu.terminator
    }
    memref.dealloc %buffer : memref<4xf32>
  }
  %g2 = memref.get_global @b : memref<4xf32>
  %again = memref.alloc() : memref<4xf32>
  %t3 = gpu.wait async
  %t4 = gpu.memcpy async [%t3] %again, %g2 : memref<4xf32>, memref<4xf32>
  %t5 = gpu.launch async [%t4] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %again[%tx] : memref<4xf32>
    memref.store %v, %y[%tx] : memref<4xf32>
    gpu.terminator
  }
  memref.dealloc %again : memref<4xf32>
  return
}

// -----

// A device buffer the constant is copied into and that is then written
// (a kernel's store, a library call's output parameter), or whose address
// goes to a call not known to only read it, or an argument (a result), or
// a part of a constant: the copy becomes the runtime's
// copy on the device, with the destination's and the constant's addresses
// and the bytes.
// CHECK:       func.func private @kiln_cuda_copy_constant(!llvm.ptr, !llvm.ptr, i64)
// CHECK-NOT:   kiln_cuda_resident_constant
// CHECK-LABEL: func.func @written
// CHECK:         %[[BUFFER:.+]] = memref.alloc() : memref<4xf32>
// CHECK:         memref.extract_strided_metadata %[[BUFFER]]
// CHECK:         %[[DST:.+]] = llvm.inttoptr %{{.+}} : i64 to !llvm.ptr
// CHECK:         %[[SRC:.+]] = llvm.inttoptr %{{.+}} : i64 to !llvm.ptr
// CHECK:         %[[BYTES:.+]] = arith.constant 16 : i64
// CHECK:         call @kiln_cuda_copy_constant(%[[DST]], %[[SRC]], %[[BYTES]])
// CHECK-NEXT:    %[[T:.+]] = gpu.wait async
// CHECK-NEXT:    gpu.launch async [%[[T]]]
// CHECK:           memref.store %{{.+}}, %[[BUFFER]]
// CHECK:         memref.dealloc %[[BUFFER]]
// CHECK-LABEL: func.func @library_output
// CHECK:         call @kiln_cuda_copy_constant
// CHECK:         call @kiln_cuda_conv(
// CHECK-LABEL: func.func @unknown_call
// CHECK:         call @kiln_cuda_copy_constant
// CHECK:         call @opaque(
// CHECK-LABEL: func.func @into_argument
// CHECK:         call @kiln_cuda_copy_constant(%{{.+}}, %{{.+}}, %{{.+}})
// CHECK-LABEL: func.func @part
// CHECK:         %[[PART:.+]] = memref.subview
// CHECK:         %{{[^,]+}}, %[[OFFSET:[^,]+]], %{{[^,]+}}, %{{[^ ]+}} = memref.extract_strided_metadata %[[PART]]
// CHECK:         arith.muli %[[OFFSET]], %{{.+}} : index
// CHECK:         %[[PART_BYTES:.+]] = arith.constant 8 : i64
// CHECK:         call @kiln_cuda_copy_constant(%{{.+}}, %{{.+}}, %[[PART_BYTES]])
memref.global "private" constant @b : memref<4xf32> = dense<[0.5, -1.0, 2.0, 0.25]>
func.func private @kiln_cuda_conv(!llvm.ptr {llvm.readonly}, !llvm.ptr {llvm.readonly}, !llvm.ptr {llvm.readonly}, !llvm.ptr)
func.func private @opaque(!llvm.ptr)
func.func @written(%y: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %g = memref.get_global @b : memref<4xf32>
  %buffer = memref.alloc() : memref<4xf32>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %buffer, %g : memref<4xf32>, memref<4xf32>
  %t2 = gpu.launch async [%t1] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
      threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %buffer[%tx] : memref<4xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %buffer[%tx] : memref<4xf32>
    memref.store %w, %y[%tx] : memref<4xf32>
    gpu.terminator
  }
  memref.dealloc %buffer : memref<4xf32>
  return
}
func.func @library_output(%d: !llvm.ptr) {
  %g = memref.get_global @b : memref<4xf32>
  %buffer = memref.alloc() : memref<4xf32>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %buffer, %g : memref<4xf32>, memref<4xf32>
  %a = memref.extract_aligned_pointer_as_index %buffer : memref<4xf32> -> index
  %ai = arith.index_cast %a : index to i64
  %ap = llvm.inttoptr %ai : i64 to !llvm.ptr
  call @kiln_cuda_conv(%d, %d, %d, %ap) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
  memref.dealloc %buffer : memref<4xf32>
  return
}
func.func @unknown_call() {
  %g = memref.get_global @b : memref<4xf32>
  %h = memref.alloc() : memref<4xf32>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %h, %g : memref<4xf32>, memref<4xf32>
  %a = memref.extract_aligned_pointer_as_index %h : memref<4xf32> -> index
  %ai = arith.index_cast %a : index to i64
  %ap = llvm.inttoptr %ai : i64 to !llvm.ptr
  call @opaque(%ap) : (!llvm.ptr) -> ()
  memref.dealloc %h : memref<4xf32>
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

// Copies that stay as they are: from a mutable global, into a buffer the
// host code reads (managed memory later), a strided part of a constant,
// and a copy between device buffers.
// CHECK-NOT:   kiln_cuda_copy_constant
// CHECK-NOT:   kiln_cuda_resident_constant
// CHECK-LABEL: func.func @mutable
// CHECK:       gpu.memcpy
// CHECK-LABEL: func.func @host_read
// CHECK:       gpu.memcpy
// CHECK-LABEL: func.func @strided_part
// CHECK:       gpu.memcpy
// CHECK-LABEL: func.func @between_device_buffers
// CHECK:       gpu.memcpy
memref.global "private" @state : memref<4xf32> = dense<0.0>
memref.global "private" constant @c : memref<4x4xf32> = dense<3.0>
func.func @mutable(%y: memref<4xf32>) {
  %g = memref.get_global @state : memref<4xf32>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %y, %g : memref<4xf32>, memref<4xf32>
  return
}
func.func @host_read() -> f32 {
  %c0 = arith.constant 0 : index
  %g = memref.get_global @c : memref<4x4xf32>
  %h = memref.alloc() : memref<4x4xf32>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %h, %g : memref<4x4xf32>, memref<4x4xf32>
  gpu.wait [%t1]
  %v = memref.load %h[%c0, %c0] : memref<4x4xf32>
  memref.dealloc %h : memref<4x4xf32>
  return %v : f32
}
func.func @strided_part(%y: memref<4xf32>) {
  %g = memref.get_global @c : memref<4x4xf32>
  %column = memref.subview %g[0, 1] [4, 1] [1, 1] : memref<4x4xf32> to memref<4xf32, strided<[4], offset: 1>>
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %y, %column : memref<4xf32>, memref<4xf32, strided<[4], offset: 1>>
  return
}
func.func @between_device_buffers(%x: memref<4xf32>, %y: memref<4xf32>) {
  %t0 = gpu.wait async
  %t1 = gpu.memcpy async [%t0] %y, %x : memref<4xf32>, memref<4xf32>
  return
}
