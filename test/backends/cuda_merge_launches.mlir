// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-merge-launches | FileCheck %s

// A loop's test as kernels of one block: a block reduction's
// initialization, the reduction (all threads, with an all-reduce and a
// barrier), the comparison, then the copies of what the test forwards,
// after the predicate's copy to the host. One launch of 256 threads runs
// them in order; the one-thread parts run under a guard, the copy keeps its
// own stride; the allocations move before the launch, the predicate's copy
// and load stay after it.
// CHECK-LABEL: func.func @loop_test
// CHECK-SAME:    (%[[X:.+]]: memref<256xf32>, %[[N:.+]]: memref<i32>)
// CHECK:         %[[CELL:.+]] = memref.alloc() : memref<f32>
// CHECK:         %[[PRED:.+]] = memref.alloc() : memref<i1>
// CHECK:         %[[SLOT:.+]] = memref.alloca() : memref<i1>
// CHECK:         %[[XCOPY:.+]] = memref.alloc() : memref<256xf32>
// CHECK:         %[[NCOPY:.+]] = memref.alloc() : memref<i32>
// CHECK:         %[[ONE:.+]] = arith.constant 1 : index
// CHECK:         %[[THREADS:.+]] = arith.constant 256 : index
// CHECK:         gpu.launch blocks(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]]) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %[[THREADS]], %{{.+}} = %[[ONE]], %{{.+}} = %[[ONE]]) {
// CHECK-NEXT:      %[[S1:.+]] = arith.constant 1 : index
// CHECK-NEXT:      %[[IN1:.+]] = arith.cmpi ult, %[[TX]], %[[S1]] : index
// CHECK-NEXT:      scf.if %[[IN1]] {
// CHECK-NEXT:        memref.store %{{.+}}, %[[CELL]][] : memref<f32>
// CHECK-NEXT:      }
// CHECK-NEXT:      gpu.barrier
// CHECK-NEXT:      %[[S2:.+]] = arith.constant 256 : index
// CHECK-NEXT:      scf.for %[[I:.+]] = %[[TX]] to %{{.+}} step %[[S2]]
// CHECK:           gpu.all_reduce maximumf
// CHECK:           gpu.barrier
// CHECK-NEXT:      gpu.barrier
// CHECK-NEXT:      %[[S3:.+]] = arith.constant 1 : index
// CHECK-NEXT:      %[[IN3:.+]] = arith.cmpi ult, %[[TX]], %[[S3]] : index
// CHECK-NEXT:      scf.if %[[IN3]] {
// CHECK:             memref.store %{{.+}}, %[[PRED]][] : memref<i1>
// CHECK-NEXT:      }
// CHECK-NEXT:      gpu.barrier
// CHECK-NEXT:      %[[S4:.+]] = arith.constant 256 : index
// CHECK-NEXT:      %[[STRIDE:.+]] = arith.muli %{{.+}}, %[[S4]] : index
// CHECK-NEXT:      scf.for %{{.+}} = %[[TX]] to %{{.+}} step %[[STRIDE]] {
// CHECK:             memref.store %{{.+}}, %[[XCOPY]]
// CHECK:           gpu.barrier
// CHECK-NEXT:      %[[S5:.+]] = arith.constant 1 : index
// CHECK-NEXT:      %[[IN5:.+]] = arith.cmpi ult, %[[TX]], %[[S5]] : index
// CHECK-NEXT:      scf.if %[[IN5]] {
// CHECK:             memref.store %{{.+}}, %[[NCOPY]][] : memref<i32>
// CHECK-NEXT:      }
// CHECK-NEXT:      gpu.terminator
// CHECK-NEXT:    }
// CHECK-NEXT:    memref.copy %[[PRED]], %[[SLOT]]
// CHECK-NEXT:    memref.load %[[SLOT]][]
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @loop_test(%x: memref<256xf32>, %n: memref<i32>) -> (i1, memref<256xf32>, memref<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %lowest = arith.constant 0xFF800000 : f32
  %tol = arith.constant 1.0e-4 : f32
  %cell = memref.alloc() : memref<f32>
  %pred = memref.alloc() : memref<i1>
  %slot = memref.alloca() : memref<i1>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %lowest, %cell[] : memref<f32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %part = scf.for %i = %tx to %c256 step %sx iter_args(%m = %lowest) -> (f32) {
      %v = memref.load %x[%i] : memref<256xf32>
      %a = math.absf %v : f32
      %mm = arith.maximumf %m, %a : f32
      scf.yield %mm : f32
    }
    %all = gpu.all_reduce maximumf %part uniform {} : (f32) -> f32
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      %old = memref.load %cell[] : memref<f32>
      %new = arith.maximumf %old, %all : f32
      memref.store %new, %cell[] : memref<f32>
    }
    gpu.barrier
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %worst = memref.load %cell[] : memref<f32>
    %far = arith.cmpf oge, %worst, %tol : f32
    memref.store %far, %pred[] : memref<i1>
    gpu.terminator
  }
  memref.copy %pred, %slot : memref<i1> to memref<i1>
  %p = memref.load %slot[] : memref<i1>
  %xcopy = memref.alloc() : memref<256xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %stride = arith.muli %gx, %sx : index
    scf.for %i = %tx to %c256 step %stride {
      %v = memref.load %x[%i] : memref<256xf32>
      memref.store %v, %xcopy[%i] : memref<256xf32>
    }
    gpu.terminator
  }
  %ncopy = memref.alloc() : memref<i32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %n[] : memref<i32>
    memref.store %v, %ncopy[] : memref<i32>
    gpu.terminator
  }
  memref.dealloc %cell : memref<f32>
  memref.dealloc %pred : memref<i1>
  return %p, %xcopy, %ncopy : i1, memref<256xf32>, memref<i32>
}

// -----

// A part that synchronizes joins only launches of its own size: a barrier
// under a guard would hang. A one-thread part before a 128-thread one that
// synchronizes joins it; a 256-thread part after it does not.
// CHECK-LABEL: func.func @sizes
// CHECK:         %[[T1:c128_[0-9]+]] = arith.constant 128 : index
// CHECK-NEXT:    gpu.launch {{.+}} threads({{.+}}) in (%{{.+}} = %[[T1]],
// CHECK:           scf.if
// CHECK:           gpu.barrier
// CHECK-NEXT:      arith.constant 128
// CHECK-NEXT:      memref.store
// CHECK-NEXT:      gpu.barrier
// CHECK-NEXT:      gpu.terminator
// CHECK:         gpu.launch {{.+}} threads({{.+}}) in (%{{.+}} = %c256,
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func @sizes(%a: memref<256xf32>, %s: memref<f32>) {
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %zero, %s[] : memref<f32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    memref.store %zero, %a[%tx] : memref<256xf32>
    gpu.barrier
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    memref.store %zero, %a[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}

// -----

// Launches of more than one block, a call between two launches, host code
// that writes a buffer the next launch reads, and a host value the next
// launch uses that is loaded from memory keep the launches apart.
// CHECK-LABEL: func.func @apart
// CHECK-COUNT-8: gpu.launch
// CHECK-NOT:     gpu.launch
// CHECK:         return
func.func private @work()
func.func @apart(%a: memref<256xf32>, %b: memref<256xf32>, %s: memref<f32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %zero, %a[%bx] : memref<256xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %zero, %a[%c0] : memref<256xf32>
    gpu.terminator
  }
  func.call @work() : () -> ()
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %zero, %a[%c0] : memref<256xf32>
    gpu.terminator
  }
  memref.copy %a, %b : memref<256xf32> to memref<256xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %b[%c0] : memref<256xf32>
    memref.store %v, %s[] : memref<f32>
    gpu.terminator
  }
  %slot = memref.alloca() : memref<f32>
  %h = memref.load %slot[] : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %h, %s[] : memref<f32>
    gpu.terminator
  }
  %t, %tok = gpu.alloc async () : memref<f32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %zero, %t[] : memref<f32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) workgroup(%w : memref<4xf32, #gpu.address_space<workgroup>>) {
    memref.store %zero, %w[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  %tok2 = gpu.launch async blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %zero, %s[] : memref<f32>
    gpu.terminator
  }
  return
}

// -----

// In a host loop's body, the runs of its block merge; the loop itself ends
// a run in the block around it.
// CHECK-LABEL: func.func @in_loop
// CHECK:         gpu.launch
// CHECK:         scf.for
// CHECK-NEXT:      memref.alloc
// CHECK:           gpu.launch
// CHECK:             gpu.barrier
// CHECK:             gpu.terminator
// CHECK-NOT:       gpu.launch
// CHECK:           memref.dealloc
// CHECK:         }
// CHECK-NEXT:    return
func.func @in_loop(%a: memref<f32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %one, %a[] : memref<f32>
    gpu.terminator
  }
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloc() : memref<f32>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %a[] : memref<f32>
      %w = arith.addf %v, %one : f32
      memref.store %w, %t[] : memref<f32>
      gpu.terminator
    }
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %t[] : memref<f32>
      memref.store %v, %a[] : memref<f32>
      gpu.terminator
    }
    memref.dealloc %t : memref<f32>
  }
  return
}

// -----

// A loop's predicate slot on the host, allocated outside the loop, is only
// copied into and loaded: no buffer the loop carries can be it, so the
// copy of the carried buffer moves above the predicate's copy. Where the
// slot itself is carried (and could be the buffer the kernel reads), the
// launches stay apart.
// CHECK-LABEL: func.func @private_slot
// CHECK:         scf.for
// CHECK:           gpu.launch
// CHECK:             gpu.barrier
// CHECK:           memref.copy
// CHECK-NOT:       gpu.launch
// CHECK:           scf.yield
// CHECK-LABEL: func.func @carried_slot
// CHECK:         scf.for
// CHECK-COUNT-2:   gpu.launch
// CHECK:           scf.yield
func.func @private_slot(%x: memref<4xf32>, %p: memref<i1>, %n: index) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %true = arith.constant true
  %slot = memref.alloca() : memref<i1>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%buf = %x) -> (memref<4xf32>) {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      memref.store %true, %p[] : memref<i1>
      gpu.terminator
    }
    memref.copy %p, %slot : memref<i1> to memref<i1>
    %b = memref.load %slot[] : memref<i1>
    %new = memref.alloc() : memref<4xf32>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
      %v = memref.load %buf[%tx] : memref<4xf32>
      memref.store %v, %new[%tx] : memref<4xf32>
      gpu.terminator
    }
    scf.yield %new : memref<4xf32>
  }
  return %r : memref<4xf32>
}
func.func @carried_slot(%x: memref<i1>, %p: memref<i1>, %n: index) -> memref<i1> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %true = arith.constant true
  %slot = memref.alloca() : memref<i1>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%buf = %slot) -> (memref<i1>) {
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      memref.store %true, %p[] : memref<i1>
      gpu.terminator
    }
    memref.copy %p, %slot : memref<i1> to memref<i1>
    %new = memref.alloc() : memref<i1>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
      %v = memref.load %buf[] : memref<i1>
      memref.store %v, %new[] : memref<i1>
      gpu.terminator
    }
    scf.yield %new : memref<i1>
  }
  return %r : memref<i1>
}
