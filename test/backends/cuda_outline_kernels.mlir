// kiln-cuda-outline-kernels outlines launches as gpu-kernel-outlining does
// and gives the kernel of a launch that asks for N blocks per SM
// (kiln.min_blocks_per_sm) nvvm.minctasm = N, which upstream outlining
// would drop; nothing of the hint is left on the kernel's ops.
// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-cuda-outline-kernels | FileCheck %s

// CHECK-LABEL: func.func @f(
// CHECK:         gpu.launch_func @f_kernel::@f_kernel
// CHECK:         gpu.launch_func @f_kernel_0::@f_kernel
// CHECK:         gpu.launch_func @f_kernel_1::@f_kernel
// CHECK:       gpu.module @f_kernel
// CHECK:         gpu.func @f_kernel(%{{.*}}: memref<4xf32>) kernel attributes {{{.*}}nvvm.minctasm = 2 : i32
// CHECK-NOT:       kiln.min_blocks_per_sm
// CHECK:           memref.store
// CHECK:       gpu.module @f_kernel_0
// CHECK-NOT:     minctasm
// CHECK:           memref.store
// CHECK:       gpu.module @f_kernel_1
// CHECK:         gpu.func @f_kernel() kernel
// CHECK-NOT:     kiln.min_blocks_per_sm
// CHECK-NOT:     minctasm
func.func @f(%m: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %x = memref.load %m[%tx] : memref<4xf32>
    memref.store %x, %m[%bx] : memref<4xf32>
    gpu.terminator
  } {kiln.min_blocks_per_sm = 2 : i64}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    %x = memref.load %m[%bx] : memref<4xf32>
    memref.store %x, %m[%tx] : memref<4xf32>
    gpu.terminator
  }
  // A body of its terminator alone: nothing to bound.
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    gpu.terminator
  } {kiln.min_blocks_per_sm = 3 : i64}
  return
}

// -----

func.func @not_an_integer(%m: memref<4xf32>) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'kiln.min_blocks_per_sm' must be an integer}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %x = memref.load %m[%tx] : memref<4xf32>
    memref.store %x, %m[%bx] : memref<4xf32>
    gpu.terminator
  } {kiln.min_blocks_per_sm = "two"}
  return
}
