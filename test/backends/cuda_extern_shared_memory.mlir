// kiln-cuda-extern-shared-memory gives the global that convert-gpu-to-nvvm
// makes of gpu.dynamic_shared_memory (an internal array of 0 bytes in the
// shared address space) external linkage, which the PTX declares as
// CUDA's dynamic shared memory (`.extern .shared ... []`); other globals
// keep theirs.
// REQUIRES: cuda-backend
// RUN: kiln-opt %s --pass-pipeline='builtin.module(gpu.module(kiln-cuda-extern-shared-memory))' | FileCheck %s
// RUN: kiln-opt %s --pass-pipeline='builtin.module(gpu.module(convert-gpu-to-nvvm,kiln-cuda-extern-shared-memory))' | FileCheck %s --check-prefix=LOWERED

// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.mlir.global external @dynamic() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal @static_tile() {addr_space = 3 : i32, alignment = 4 : i64} : !llvm.array<64 x f32>
// CHECK: llvm.mlir.global internal @generic_empty() {addr_space = 0 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK: llvm.mlir.global internal constant @initialized(dense<> : tensor<0xi8>) {addr_space = 3 : i32} : !llvm.array<0 x i8>
gpu.module @kernels {
  llvm.mlir.global internal @dynamic() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
  llvm.mlir.global internal @static_tile() {addr_space = 3 : i32, alignment = 4 : i64} : !llvm.array<64 x f32>
  llvm.mlir.global internal @generic_empty() {alignment = 16 : i64} : !llvm.array<0 x i8>
  llvm.mlir.global internal constant @initialized(dense<> : tensor<0xi8>) {addr_space = 3 : i32} : !llvm.array<0 x i8>
}

// After convert-gpu-to-nvvm, the kernel's dynamic shared memory.
// LOWERED-LABEL: gpu.module @lowered
// LOWERED: llvm.mlir.global external @__dynamic_shmem__0() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// LOWERED: llvm.func @kernel(
// LOWERED: llvm.mlir.addressof @__dynamic_shmem__0 : !llvm.ptr<3>
gpu.module @lowered {
  gpu.func @kernel(%x: f32) kernel {
    %c0 = arith.constant 0 : index
    %base = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
    %tile = memref.view %base[%c0][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<16xf32, #gpu.address_space<workgroup>>
    memref.store %x, %tile[%c0] : memref<16xf32, #gpu.address_space<workgroup>>
    gpu.return
  }
}
