// kiln-cuda-check-launches refuses launches of constant sizes that no
// CUDA device runs, naming the limit, and leaves the others alone.
// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-cuda-check-launches | FileCheck %s
// RUN: not kiln-opt %s --split-input-file \
// RUN:   --kiln-cuda-check-launches=arch=sm_75 2>&1 | FileCheck %s --check-prefix=SM75
// RUN: not kiln-opt %s --split-input-file \
// RUN:   --kiln-cuda-check-launches=arch=sm_90 2>&1 | FileCheck %s --check-prefix=SM90

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

// Workgroup memory up to what a block may have with its kernel's opt-in
// (kiln-cuda-dynamic-shared-memory) on the architecture (163 KiB on
// sm_80, the default; 64 KiB on sm_75, 227 KiB on sm_90), each buffer at
// a 16-byte boundary: 65544 bytes pass on sm_80 and sm_90, 166920 only on
// sm_90.
// SM75: error: workgroup buffers of 65544 bytes exceed the 65536 bytes of shared memory a CUDA block may have on sm_75
// SM90-NOT: workgroup buffers of
// CHECK-LABEL: func.func @workgroup_memory(
// CHECK: gpu.launch
func.func @workgroup_memory() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<8192xf64, #gpu.address_space<workgroup>>,
                       %b : memref<2xf32, #gpu.address_space<workgroup>>) {
    gpu.terminator
  }
  return
}

// -----

func.func @workgroup_memory_beyond_sm80() {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{workgroup buffers of 166920 bytes exceed the 166912 bytes of shared memory a CUDA block may have on sm_80}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<20864xf64, #gpu.address_space<workgroup>>,
                       %b : memref<2xf32, #gpu.address_space<workgroup>>) {
    gpu.terminator
  }
  return
}

// -----

// A loop that synchronizes its block: what an iteration does after its
// last barrier and what the next does before its first run at once on a
// GPU (and one after the other for the whole block on the host, which
// hides the race). Staging into %a before the first barrier while the end
// of the loop reads %a races.
func.func @loop_race_read(%n: index, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<64xf32, #gpu.address_space<workgroup>>,
                       %b : memref<64xf32, #gpu.address_space<workgroup>>) {
    // expected-error @+1 {{workgroup buffer 0 is read after this loop's last barrier and written before its first: on a GPU one iteration's warps race the next's}}
    scf.for %i = %c0 to %n step %c1 {
      %x = memref.load %out[%tx] : memref<64xf32>
      memref.store %x, %a[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %other = arith.subi %c64, %tx : index
      %last = arith.subi %other, %c1 : index
      %y = memref.load %a[%last] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %y, %b[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %z = memref.load %a[%last] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %z, %out[%tx] : memref<64xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// Reading %a before the first barrier while the end of the loop writes
// it (through a view) races too.
func.func @loop_race_write(%n: index, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<64xf32, #gpu.address_space<workgroup>>) {
    // expected-error @+1 {{workgroup buffer 0 is written after this loop's last barrier and used before its first: on a GPU one iteration's warps race the next's}}
    scf.for %i = %c0 to %n step %c1 {
      %x = memref.load %a[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %x, %out[%tx] : memref<64xf32>
      gpu.barrier
      %half = memref.subview %a[32] [32] [1] : memref<64xf32, #gpu.address_space<workgroup>> to memref<32xf32, strided<[1], offset: 32>, #gpu.address_space<workgroup>>
      %c5 = arith.constant 5 : index
      %y = arith.constant 1.0 : f32
      memref.store %y, %half[%c5] : memref<32xf32, strided<[1], offset: 32>, #gpu.address_space<workgroup>>
    }
    gpu.terminator
  }
  return
}

// -----

// A read whose address the kernel computes from the buffer's own
// (llvm.load of llvm.getelementptr of llvm.inttoptr of its aligned
// pointer plus an offset) is a read of that buffer: at the end of the
// loop it races the staging before the first barrier.
func.func @loop_race_computed_address(%n: index, %out: memref<64xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<64xi32, #gpu.address_space<workgroup>>,
                       %b : memref<64xi32, #gpu.address_space<workgroup>>) {
    // expected-error @+1 {{workgroup buffer 1 is read after this loop's last barrier and written before its first: on a GPU one iteration's warps race the next's}}
    scf.for %i = %c0 to %n step %c1 {
      %x = memref.load %out[%tx] : memref<64xi32>
      memref.store %x, %b[%tx] : memref<64xi32, #gpu.address_space<workgroup>>
      gpu.barrier
      memref.store %x, %a[%tx] : memref<64xi32, #gpu.address_space<workgroup>>
      gpu.barrier
      %base = memref.extract_aligned_pointer_as_index %b : memref<64xi32, #gpu.address_space<workgroup>> -> index
      %bytes = arith.muli %tx, %c4 : index
      %address = arith.addi %base, %bytes : index
      %int = arith.index_castui %address : index to i64
      %pointer = llvm.inttoptr %int : i64 to !llvm.ptr<3>
      %next = llvm.getelementptr %pointer[1] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i32
      %y = llvm.load %next : !llvm.ptr<3> -> i32
      memref.store %y, %out[%tx] : memref<64xi32>
    }
    gpu.terminator
  }
  return
}

// -----

// A barrier ending the loop, or the two ends on different buffers, and
// loops that do not synchronize the block, are left alone.
// CHECK-LABEL: func.func @loops_without_races(
// CHECK-COUNT-2: gpu.launch
func.func @loops_without_races(%n: index, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<64xf32, #gpu.address_space<workgroup>>,
                       %b : memref<64xf32, #gpu.address_space<workgroup>>) {
    scf.for %i = %c0 to %n step %c1 {
      %x = memref.load %out[%tx] : memref<64xf32>
      memref.store %x, %a[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %y = memref.load %a[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %y, %b[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %z = memref.load %b[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %z, %out[%tx] : memref<64xf32>
    }
    scf.for %i = %c0 to %n step %c1 {
      %x = memref.load %out[%tx] : memref<64xf32>
      memref.store %x, %a[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %y = memref.load %a[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %y, %out[%tx] : memref<64xf32>
      gpu.barrier
    }
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<64xf32, #gpu.address_space<workgroup>>) {
    scf.for %i = %c0 to %n step %c1 {
      %x = memref.load %a[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %x, %a[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    }
    gpu.terminator
  }
  return
}

// -----

// Staging %a before the loop with no barrier between the staging and the
// loop's first reads of it: the warps that enter the loop first read what
// the others may not have written yet.
func.func @loop_entry_race(%n: index, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<64xf32, #gpu.address_space<workgroup>>) {
    %x = memref.load %out[%tx] : memref<64xf32>
    memref.store %x, %a[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    // expected-error @+1 {{workgroup buffer 0 is written before this loop (since the last barrier) and used before its first barrier: on a GPU the warps still before the loop race those in it}}
    scf.for %i = %c0 to %n step %c1 {
      %y = memref.load %a[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %y, %out[%tx] : memref<64xf32>
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// -----

// Writing %b after the loop's last barrier and reading it after the loop
// with no barrier between.
func.func @loop_exit_race(%n: index, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%b : memref<64xf32, #gpu.address_space<workgroup>>) {
    // expected-error @+1 {{workgroup buffer 0 is written after this loop's last barrier and used after the loop (before the next barrier): on a GPU the warps still in the loop race those past it}}
    scf.for %i = %c0 to %n step %c1 {
      gpu.barrier
      %x = memref.load %out[%tx] : memref<64xf32>
      memref.store %x, %b[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    }
    %y = memref.load %b[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %y, %out[%tx] : memref<64xf32>
    gpu.barrier
    gpu.terminator
  }
  return
}

// -----

// The same with barriers before and after the loop: left alone.
// CHECK-LABEL: func.func @loop_ends_separated(
// CHECK:         scf.for
func.func @loop_ends_separated(%n: index, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1)
             workgroup(%a : memref<64xf32, #gpu.address_space<workgroup>>,
                       %b : memref<64xf32, #gpu.address_space<workgroup>>) {
    %x = memref.load %out[%tx] : memref<64xf32>
    memref.store %x, %a[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    scf.for %i = %c0 to %n step %c1 {
      %y = memref.load %a[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      memref.store %y, %b[%tx] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
    }
    gpu.barrier
    %z = memref.load %b[%c0] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %z, %out[%tx] : memref<64xf32>
    gpu.terminator
  }
  return
}
