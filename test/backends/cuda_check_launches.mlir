// kiln-cuda-check-launches refuses launches of constant sizes that no
// CUDA device runs, naming the limit, and leaves the others alone.
// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-cuda-check-launches | FileCheck %s

// At the limits: 2^31 - 1 blocks along x, 65535 along y and z, 1024
// threads, 48 KiB of workgroup memory (f32 and vectors of four f32), and
// grid sizes only known at run time.
// CHECK-LABEL: func.func @at_the_limits(
// CHECK-COUNT-3: gpu.launch
func.func @at_the_limits(%n: index) {
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %c65535 = arith.constant 65535 : index
  %cmax = arith.constant 2147483647 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %cmax, %gy = %c65535, %gz = %c65535)
             threads(%tx, %ty, %tz) in (%sx = %c1024, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %n, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c64)
             workgroup(%a : memref<1024xvector<4xf32>, #gpu.address_space<workgroup>>,
                       %b : memref<8192xf32, #gpu.address_space<workgroup>>) {
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %n, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

func.func @grid_y(%n: index) {
  %c1 = arith.constant 1 : index
  %c65536 = arith.constant 65536 : index
  // expected-error @+1 {{a grid y of 65536 exceeds what a CUDA device launches (1 to 65535)}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c65536, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

func.func @grid_x() {
  %c1 = arith.constant 1 : index
  %c2g = arith.constant 2147483648 : index
  // expected-error @+1 {{a grid x of 2147483648 exceeds what a CUDA device launches (1 to 2147483647)}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2g, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

func.func @empty_grid() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{a grid z of 0 exceeds what a CUDA device launches (1 to 65535)}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c0)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

func.func @block_z() {
  %c1 = arith.constant 1 : index
  %c65 = arith.constant 65 : index
  // expected-error @+1 {{a block z of 65 exceeds what a CUDA device launches (1 to 64)}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c65) {
    gpu.terminator
  }
  return
}

// -----

func.func @threads() {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  // expected-error @+1 {{blocks of 2048 threads exceed the 1024 a CUDA device runs}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c64, %sz = %c1) {
    gpu.terminator
  }
  return
}

// -----

func.func @workgroup_memory() {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{workgroup buffers of 49160 bytes exceed the 49152 a CUDA block may allocate statically}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<6144xf64, #gpu.address_space<workgroup>>,
                       %b : memref<2xf32, #gpu.address_space<workgroup>>) {
    gpu.terminator
  }
  return
}
