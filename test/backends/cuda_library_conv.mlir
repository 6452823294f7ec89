// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-library-conv --verify-diagnostics | FileCheck %s

// A call of a marked function becomes a call of the runtime's
// kiln_cuda_conv with the descriptor (one constant global per function)
// and the buffers' addresses; the function goes. The descriptor, x and w
// are only read (`llvm.readonly`, kiln-cuda-resident-constants), y is not.
// CHECK: func.func private @kiln_cuda_conv(!llvm.ptr {llvm.readonly}, !llvm.ptr {llvm.readonly}, !llvm.ptr {llvm.readonly}, !llvm.ptr)
// CHECK-LABEL: memref.global "private" constant @kiln_cuda_conv_descriptor : memref<21xi64> = dense<[2, 1, 0, 0, 1, 4, 8, 6, 6, 3, 3, 4, 4, 1, 1, 0, 0, 0, 0, 1, 1]> {alignment = 8 : i64}
// CHECK-NOT: func.func private @kiln_cuda_conv_f
// CHECK-LABEL: func.func @twice
// CHECK: %[[D:.*]] = memref.get_global @kiln_cuda_conv_descriptor
// CHECK: %[[DP:.*]] = memref.extract_aligned_pointer_as_index %[[D]]
// CHECK: call @kiln_cuda_conv(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> ()
// CHECK: memref.get_global @kiln_cuda_conv_descriptor
// CHECK: call @kiln_cuda_conv(
// CHECK-NOT: call @kiln_cuda_conv_f
func.func private @kiln_cuda_conv_f(memref<1x4x6x6xf32>, memref<8x4x3x3xf32>, memref<1x8x4x4xf32>) attributes {kiln.cuda_conv = array<i64: 2, 1, 0, 0, 1, 4, 8, 6, 6, 3, 3, 4, 4, 1, 1, 0, 0, 0, 0, 1, 1>}
func.func @twice(%x: memref<1x4x6x6xf32>, %w: memref<8x4x3x3xf32>, %y: memref<1x8x4x4xf32>, %z: memref<1x8x4x4xf32>) {
  call @kiln_cuda_conv_f(%x, %w, %y) : (memref<1x4x6x6xf32>, memref<8x4x3x3xf32>, memref<1x8x4x4xf32>) -> ()
  call @kiln_cuda_conv_f(%x, %w, %z) : (memref<1x4x6x6xf32>, memref<8x4x3x3xf32>, memref<1x8x4x4xf32>) -> ()
  return
}

// -----

// A result written to a fresh buffer that is then copied into the
// function's out-param and freed is written into the out-param directly.
// CHECK-LABEL: func.func @forwarded
// CHECK-NOT: memref.alloc
// CHECK: memref.extract_strided_metadata %arg2
// CHECK: call @kiln_cuda_conv(
// CHECK-NOT: linalg.copy
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func private @kiln_cuda_conv_f(memref<1x4x6x6xf32>, memref<8x4x3x3xf32>, memref<1x8x4x4xf32>) attributes {kiln.cuda_conv = array<i64: 2, 1, 0, 0, 1, 4, 8, 6, 6, 3, 3, 4, 4, 1, 1, 0, 0, 0, 0, 1, 1>}
func.func @forwarded(%x: memref<1x4x6x6xf32>, %w: memref<8x4x3x3xf32>, %y: memref<1x8x4x4xf32>) {
  %t = memref.alloc() : memref<1x8x4x4xf32>
  call @kiln_cuda_conv_f(%x, %w, %t) : (memref<1x4x6x6xf32>, memref<8x4x3x3xf32>, memref<1x8x4x4xf32>) -> ()
  linalg.copy ins(%t : memref<1x8x4x4xf32>) outs(%y : memref<1x8x4x4xf32>)
  memref.dealloc %t : memref<1x8x4x4xf32>
  return
}

// -----

// Strided views go through dense buffers: the input is copied in before
// the call, the result copied out after it; a view at an offset that is
// dense otherwise is passed as it is.
// CHECK-LABEL: func.func @views
// CHECK: %[[XD:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x4x6x6xf32>
// CHECK: linalg.copy ins(%{{.*}} : memref<1x4x6x6xf32, strided<[288, 72, 6, 1]>>) outs(%[[XD]]
// CHECK: %[[YD:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x8x4x4xf32>
// CHECK: call @kiln_cuda_conv(
// CHECK-NEXT: linalg.copy ins(%[[YD]] : memref<1x8x4x4xf32>) outs(%{{.*}} : memref<1x8x4x4xf32, strided<[16, 128, 4, 1]>>)
// CHECK-NEXT: memref.dealloc %[[YD]]
// CHECK-NEXT: memref.dealloc %[[XD]]
func.func private @kiln_cuda_conv_f(memref<1x4x6x6xf32, strided<[288, 72, 6, 1]>>, memref<8x4x3x3xf32, strided<[36, 9, 3, 1], offset: 72>>, memref<1x8x4x4xf32, strided<[16, 128, 4, 1]>>) attributes {kiln.cuda_conv = array<i64: 2, 1, 0, 0, 1, 4, 8, 6, 6, 3, 3, 4, 4, 1, 1, 0, 0, 0, 0, 1, 1>}
func.func @views(%x: memref<1x4x6x6xf32, strided<[288, 72, 6, 1]>>, %w: memref<8x4x3x3xf32, strided<[36, 9, 3, 1], offset: 72>>, %y: memref<1x8x4x4xf32, strided<[16, 128, 4, 1]>>) {
  call @kiln_cuda_conv_f(%x, %w, %y) : (memref<1x4x6x6xf32, strided<[288, 72, 6, 1]>>, memref<8x4x3x3xf32, strided<[36, 9, 3, 1], offset: 72>>, memref<1x8x4x4xf32, strided<[16, 128, 4, 1]>>) -> ()
  return
}

// -----

// Dense views at an index in device memory (a dynamic slice of a batch,
// a dynamic update of one): cuDNN takes addresses from the host, which
// would read the index for them, so the input is copied in and the result
// copied out by kernels that read the index themselves.
// CHECK-LABEL: func.func @at_an_index
// CHECK: %[[XD:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x4x6x6xf32>
// CHECK: linalg.copy ins(%{{.*}} : memref<1x4x6x6xf32, strided<[144, 36, 6, 1], offset: ?>>) outs(%[[XD]]
// CHECK: %[[YD:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x8x4x4xf32>
// CHECK: call @kiln_cuda_conv(
// CHECK-NEXT: linalg.copy ins(%[[YD]] : memref<1x8x4x4xf32>) outs(%{{.*}} : memref<1x8x4x4xf32, strided<[128, 16, 4, 1], offset: ?>>)
func.func private @kiln_cuda_conv_f(memref<1x4x6x6xf32, strided<[144, 36, 6, 1], offset: ?>>, memref<8x4x3x3xf32>, memref<1x8x4x4xf32, strided<[128, 16, 4, 1], offset: ?>>) attributes {kiln.cuda_conv = array<i64: 2, 1, 0, 0, 1, 4, 8, 6, 6, 3, 3, 4, 4, 1, 1, 0, 0, 0, 0, 1, 1>}
func.func @at_an_index(%xs: memref<5x4x6x6xf32>, %i: memref<i64>, %w: memref<8x4x3x3xf32>, %ys: memref<5x8x4x4xf32>) {
  %c144 = arith.constant 144 : index
  %c128 = arith.constant 128 : index
  %l = memref.load %i[] : memref<i64>
  %n = arith.index_cast %l : i64 to index
  %xo = arith.muli %n, %c144 : index
  %yo = arith.muli %n, %c128 : index
  %x = memref.reinterpret_cast %xs to offset: [%xo], sizes: [1, 4, 6, 6], strides: [144, 36, 6, 1] : memref<5x4x6x6xf32> to memref<1x4x6x6xf32, strided<[144, 36, 6, 1], offset: ?>>
  %y = memref.reinterpret_cast %ys to offset: [%yo], sizes: [1, 8, 4, 4], strides: [128, 16, 4, 1] : memref<5x8x4x4xf32> to memref<1x8x4x4xf32, strided<[128, 16, 4, 1], offset: ?>>
  call @kiln_cuda_conv_f(%x, %w, %y) : (memref<1x4x6x6xf32, strided<[144, 36, 6, 1], offset: ?>>, memref<8x4x3x3xf32>, memref<1x8x4x4xf32, strided<[128, 16, 4, 1], offset: ?>>) -> ()
  return
}

// -----

// expected-error @+1 {{'kiln.cuda_conv' must hold k (1 to 3), groups, dtype, flags, N, C, O and 7 entries per spatial dim}}
func.func private @kiln_cuda_conv_f(memref<1x4x6x6xf32>, memref<8x4x3x3xf32>, memref<1x8x4x4xf32>) attributes {kiln.cuda_conv = array<i64: 2, 1, 0, 0, 1, 4, 8, 6, 6>}
func.func @short(%x: memref<1x4x6x6xf32>, %w: memref<8x4x3x3xf32>, %y: memref<1x8x4x4xf32>) {
  call @kiln_cuda_conv_f(%x, %w, %y) : (memref<1x4x6x6xf32>, memref<8x4x3x3xf32>, memref<1x8x4x4xf32>) -> ()
  return
}

// -----

func.func private @kiln_cuda_conv_f(memref<1x4x6x6xf32>, memref<8x4x3x3xf32>) -> memref<1x8x4x4xf32> attributes {kiln.cuda_conv = array<i64: 2, 1, 0, 0, 1, 4, 8, 6, 6, 3, 3, 4, 4, 1, 1, 0, 0, 0, 0, 1, 1>}
func.func @not_bufferized(%x: memref<1x4x6x6xf32>, %w: memref<8x4x3x3xf32>) -> memref<1x8x4x4xf32> {
  // expected-error @+1 {{expected a call of 'kiln_cuda_conv_f' on static input, weight and result buffers of rank 4}}
  %y = call @kiln_cuda_conv_f(%x, %w) : (memref<1x4x6x6xf32>, memref<8x4x3x3xf32>) -> memref<1x8x4x4xf32>
  return %y : memref<1x8x4x4xf32>
}
