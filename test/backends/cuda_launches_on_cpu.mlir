// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --verify-diagnostics --kiln-cuda-launches-on-cpu | FileCheck %s

// A grid-stride kernel that never synchronizes: the blocks in a loop nest
// (z, y, x), inside it one loop over the block's threads whose id is
// delinearized; the body runs once per thread.
// CHECK-LABEL: func.func @map
// CHECK-SAME:    (%[[X:.+]]: memref<100xf32>, %[[Y:.+]]: memref<100xf32>)
// CHECK-DAG:     %[[C4:.+]] = arith.constant 4 : index
// CHECK-DAG:     %[[C32:.+]] = arith.constant 32 : index
// CHECK:         %[[THREADS:.+]] = arith.muli %[[C32]], %{{.+}} : index
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             scf.for %[[BX:.+]] = %{{.+}} to %[[C4]]
// CHECK:               scf.for %[[T:.+]] = %{{.+}} to %[[THREADS]]
// CHECK:                 %[[TX:.+]] = arith.remui %[[T]], %[[C32]] : index
// CHECK:                 %[[BASE:.+]] = arith.muli %[[BX]], %[[C32]] : index
// CHECK:                 %[[I:.+]] = arith.addi %[[BASE]], %[[TX]] : index
// CHECK:                 %[[V:.+]] = memref.load %[[X]][%[[I]]]
// CHECK:                 memref.store %[[V]], %[[Y]][%[[I]]]
// CHECK-NOT:     gpu.
// CHECK:         return
func.func @map(%x: memref<100xf32>, %y: memref<100xf32>) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %i = arith.muli %bx, %sx : index
    %j = arith.addi %i, %tx : index
    %v = memref.load %x[%j] : memref<100xf32>
    memref.store %v, %y[%j] : memref<100xf32>
    gpu.terminator
  }
  return
}

// -----

// A barrier between writing workgroup memory and reading another thread's
// word: two loops over the threads, the workgroup buffer a host buffer of
// the launch (no address space), and the index the first phase computed
// kept in a slot per thread for the second.
// CHECK-LABEL: func.func @barrier
// CHECK-SAME:    (%[[X:.+]]: memref<64xf32>, %[[Y:.+]]: memref<64xf32>)
// CHECK:         %[[YZ:.+]] = arith.muli
// CHECK-NEXT:    %[[THREADS:.+]] = arith.muli %{{.+}}, %[[YZ]] : index
// CHECK:         %[[TILE:.+]] = memref.alloc() : memref<32xf32>
// CHECK:         %[[KEPT:.+]] = memref.alloc(%[[THREADS]]) : memref<?xindex>
// CHECK:         scf.for %[[BX:.+]] =
// CHECK:           scf.for %[[T:.+]] = %{{.+}} to %[[THREADS]]
// CHECK:             %[[TX:.+]] = arith.remui %[[T]]
// CHECK:             %[[I:.+]] = arith.addi %{{.+}}, %[[TX]] : index
// CHECK:             memref.store %[[I]], %[[KEPT]][%[[T]]] : memref<?xindex>
// CHECK:             %[[V:.+]] = memref.load %[[X]][%[[I]]]
// CHECK:             memref.store %[[V]], %[[TILE]][%[[TX]]] : memref<32xf32>
// CHECK:           }
// CHECK:           scf.for %[[T2:.+]] = %{{.+}} to %[[THREADS]]
// CHECK:             %[[TX2:.+]] = arith.remui %[[T2]]
// CHECK:             %[[R:.+]] = arith.subi %{{.+}}, %[[TX2]] : index
// CHECK:             %[[W:.+]] = memref.load %[[TILE]][%[[R]]] : memref<32xf32>
// CHECK:             %[[I2:.+]] = memref.load %[[KEPT]][%[[T2]]] : memref<?xindex>
// CHECK:             memref.store %[[W]], %[[Y]][%[[I2]]]
// CHECK:         memref.dealloc %[[TILE]]
// CHECK:         memref.dealloc %[[KEPT]]
// CHECK-NOT:     workgroup
func.func @barrier(%x: memref<64xf32>, %y: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %c31 = arith.constant 31 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) workgroup(%tile : memref<32xf32, #gpu.address_space<workgroup>>) {
    %i = arith.muli %bx, %sx : index
    %j = arith.addi %i, %tx : index
    %v = memref.load %x[%j] : memref<64xf32>
    memref.store %v, %tile[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %r = arith.subi %c31, %tx : index
    %w = memref.load %tile[%r] : memref<32xf32, #gpu.address_space<workgroup>>
    memref.store %w, %y[%j] : memref<64xf32>
    gpu.terminator
  }
  return
}

// -----

// A loop of the same trips for every thread that shuffles: a shuffle
// synchronizes a warp only, so up to the block reduction the warps run one
// after the other (ceil(64 / 32) of them), each through all the phases:
// the carried sum waits in a slot per thread (stored before the loop, read
// in the loop, written at the end of each trip), and in the host loop the
// shuffle stores each value in the exchange, then reads the partner's
// slot (lane xor 1 within the warp, its own where that falls outside). The
// block reduction combines the slots of all threads in order on the host,
// and its one value reaches the threads' phase as it is.
// CHECK-LABEL: func.func @shuffle_and_reduce
// CHECK-DAG:     %[[C4:.+]] = arith.constant 4 : index
// CHECK:         %[[YZ:.+]] = arith.muli
// CHECK-NEXT:    %[[THREADS:.+]] = arith.muli %{{.+}}, %[[YZ]] : index
// CHECK:         %[[CARRIED:.+]] = memref.alloc(%[[THREADS]]) : memref<?xf32>
// CHECK:         %[[VALUES:.+]] = memref.alloc(%[[THREADS]]) : memref<?xf32>
// CHECK:         %[[EXCHANGE:.+]] = memref.alloc(%[[THREADS]]) : memref<?xf32>
// CHECK:           %[[WARPS:.+]] = arith.ceildivui %[[THREADS]], %{{.+}} : index
// CHECK:           scf.for %[[W:.+]] = %{{.+}} to %[[WARPS]]
// CHECK:             %[[LOW:.+]] = arith.muli %[[W]], %{{.+}} : index
// CHECK:             %[[END:.+]] = arith.addi %[[LOW]], %{{.+}} : index
// CHECK:             %[[HIGH:.+]] = arith.minui %[[END]], %[[THREADS]] : index
// CHECK:             scf.for %[[T:.+]] = %[[LOW]] to %[[HIGH]]
// CHECK:               %[[V:.+]] = memref.load
// CHECK:               memref.store %[[V]], %[[VALUES]][%[[T]]]
// CHECK:             scf.for %[[T:.+]] = %[[LOW]] to %[[HIGH]]
// CHECK:               %[[V:.+]] = memref.load %[[VALUES]][%[[T]]]
// CHECK:               memref.store %[[V]], %[[CARRIED]][%[[T]]]
// CHECK:             scf.for %{{.+}} = %{{.+}} to %[[C4]]
// CHECK:               scf.for %[[T:.+]] = %[[LOW]] to %[[HIGH]]
// CHECK:                 %[[ACC:.+]] = memref.load %[[CARRIED]][%[[T]]]
// CHECK:                 memref.store %[[ACC]], %[[EXCHANGE]][%[[T]]]
// CHECK:               scf.for %[[T:.+]] = %[[LOW]] to %[[HIGH]]
// CHECK:                 %[[WARP:.+]] = arith.constant 32 : index
// CHECK-NEXT:            %[[LANE:.+]] = arith.remui %[[T]], %[[WARP]] : index
// CHECK:                 %[[IN:.+]] = arith.remui %[[LANE]], %{{.+}} : index
// CHECK:                 %[[SEGMENT:.+]] = arith.subi %[[T]], %[[IN]] : index
// CHECK:                 %[[SOURCE:.+]] = arith.xori %[[IN]], %{{.+}} : index
// CHECK:                 %[[PARTNER:.+]] = arith.addi %[[SEGMENT]], %[[SOURCE]] : index
// CHECK:                 %[[OK:.+]] = arith.andi
// CHECK:                 %[[FROM:.+]] = arith.select %[[OK]], %[[PARTNER]], %[[T]] : index
// CHECK:                 %[[SH:.+]] = memref.load %[[EXCHANGE]][%[[FROM]]]
// CHECK:                 %[[ACC2:.+]] = memref.load %[[CARRIED]][%[[T]]]
// CHECK:                 %[[SUM:.+]] = arith.addf %[[ACC2]], %[[SH]] : f32
// CHECK:               scf.for %[[T:.+]] = %[[LOW]] to %[[HIGH]]
// CHECK:                 memref.store %{{.+}}, %[[CARRIED]][%[[T]]]
// CHECK:             scf.for %[[T:.+]] = %[[LOW]] to %[[HIGH]]
// CHECK:               %[[FINAL:.+]] = memref.load %[[CARRIED]][%[[T]]]
// CHECK:               memref.store %[[FINAL]]
// CHECK:           scf.for %[[T:.+]] = %{{.+}} to %[[THREADS]]
// CHECK:             memref.store %{{.+}}, %[[EXCHANGE]][%[[T]]]
// CHECK:           %[[FIRST:.+]] = memref.load %[[EXCHANGE]][%{{.+}}]
// CHECK:           %[[TOTAL:.+]] = scf.for %[[I:.+]] = %{{.+}} to %[[THREADS]] step %{{.+}} iter_args(%[[ACC3:.+]] = %[[FIRST]]) -> (f32)
// CHECK:             %[[NEXT:.+]] = memref.load %[[EXCHANGE]][%[[I]]]
// CHECK:             %[[ADDED:.+]] = arith.addf %[[ACC3]], %[[NEXT]] : f32
// CHECK:             scf.yield %[[ADDED]]
// CHECK:           scf.for %[[T:.+]] = %{{.+}} to %[[THREADS]]
// CHECK:             scf.if
// CHECK:               memref.store %[[TOTAL]]
func.func @shuffle_and_reduce(%x: memref<64xf32>, %y: memref<2xf32>, %z: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1 : i32
  %w = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<64xf32>
    %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %v) -> (f32) {
      %sh, %ok = gpu.shuffle xor %acc, %one, %w : f32
      %n = arith.addf %acc, %sh : f32
      scf.yield %n : f32
    }
    memref.store %s, %z[%tx] : memref<64xf32>
    %t = gpu.all_reduce add %v uniform {} : (f32) -> f32
    %first = arith.cmpi eq, %tx, %c0 : index
    scf.if %first {
      memref.store %t, %y[%c0] : memref<2xf32>
    }
    gpu.terminator
  }
  return
}

// -----

// A barrier that only some threads reach: refused, where a GPU would hang.
func.func @barrier_in_branch(%x: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c16 = arith.constant 16 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %low = arith.cmpi ult, %tx, %c16 : index
    // expected-note @below {{the enclosing op}}
    scf.if %low {
      // expected-error @below {{'gpu.barrier' cannot run on the CPU inside this 'scf.if': only loops of the same bounds for every thread of a block may hold an op that synchronizes them}}
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// -----

// A loop whose trips depend on the thread id, through a shuffle's result.
func.func @divergent_trips(%x: memref<64xindex>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %one = arith.constant 1 : i32
  %w = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %i = arith.index_cast %tx : index to i32
    %sh, %ok = gpu.shuffle down %i, %one, %w : i32
    %n = arith.index_cast %sh : i32 to index
    // expected-note @below {{the enclosing op}}
    scf.for %k = %c0 to %n step %c1 {
      // expected-error @below {{'gpu.barrier' cannot run on the CPU inside this 'scf.for'}}
      gpu.barrier
    }
    gpu.terminator
  }
  return
}

// -----

// A uniform loop whose carried value cannot wait in a buffer.
func.func @carried_view(%x: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    // expected-error @below {{a loop that synchronizes threads cannot carry a value of type 'memref<64xf32>' on the CPU}}
    %m = scf.for %k = %c0 to %c2 step %c1 iter_args(%b = %x) -> (memref<64xf32>) {
      gpu.barrier
      scf.yield %b : memref<64xf32>
    }
    gpu.terminator
  }
  return
}

// -----

func.func @async(%x: memref<64xf32>) {
  %c1 = arith.constant 1 : index
  %t = gpu.wait async
  // expected-error @below {{only a synchronous launch without dynamic shared memory or clusters can run on the CPU}}
  %d = gpu.launch async [%t] blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    gpu.terminator
  }
  gpu.wait [%d]
  return
}

// -----

// A tensor-core product (TensorCoreMma.h) synchronizes its warp: the warps
// run one after the other, each thread stores its ten operands (A's four
// words, B's two, the four accumulators) in its slots of the batch's rows
// (words 0-5, floats 0-3), and in the next phase, in a loop over the
// batch's products, computes its four results from its warp's slots: the
// accumulators from the rows a table names (those stored, here), A's
// words of row g = lane / 4 (words 0 and 1, then 2 and 3) from lane 4 g
// + p, B's of columns 2t and 2t + 1 (t = lane mod 4; word 4, then 5) from
// lanes 4 (2t) + p and 4 (2t + 1) + p, for the four pairs p of each half
// of k; the halves unpacked as bf16, the high one shifted down 16 bits.
// The results go to the float rows after the accumulators' (4 count + 4
// p + i), which the extractions' users read as buffers of their own.
// CHECK-LABEL: func.func @mma
// CHECK:         %[[WORDS:.+]] = memref.alloc(%{{.+}}, %[[THREADS:.+]]) : memref<?x?xi32>
// CHECK:         %[[BYTES:.+]] = memref.alloc(%{{.+}}) : memref<?xi8>
// CHECK:         %[[FLOATS:.+]] = memref.view %[[BYTES]][%{{.+}}][%{{.+}}, %[[THREADS]]] : memref<?xi8> to memref<?x?xf32>
// CHECK:         %[[TABLE:.+]] = memref.get_global @kiln_mma_accumulator_rows : memref<4xi32>
// CHECK:         %[[SHIFT:.+]] = arith.muli %[[THREADS]], %c16 : index
// CHECK-NEXT:    %[[D0:.+]] = memref.view %[[BYTES]][%[[SHIFT]]][%[[THREADS]]] : memref<?xi8> to memref<?xf32>
// CHECK:         scf.for %[[T:[^ ]+]] = %{{[0-9]+}} to
// CHECK:           memref.store %{{.+}}, %[[WORDS]][%c0{{[_0-9]*}}, %[[T]]] : memref<?x?xi32>
// CHECK:           memref.store %{{.+}}, %[[WORDS]][%c5{{[_0-9]*}}, %[[T]]] : memref<?x?xi32>
// CHECK:           memref.store %{{.+}}, %[[FLOATS]][%c3{{[_0-9]*}}, %[[T]]] : memref<?x?xf32>
// CHECK-NEXT:    }
// CHECK:         scf.for %[[T2:[^ ]+]] = %{{[0-9]+}} to
// CHECK:           %[[LANE:.+]] = arith.remui %[[T2]], %c32{{[_0-9]*}} : index
// CHECK-NEXT:      %[[FIRST:.+]] = arith.subi %[[T2]], %[[LANE]] : index
// CHECK:           %[[G:.+]] = arith.divui %[[LANE]], %{{.+}} : index
// CHECK:           scf.for %[[P:[^ ]+]] = %{{.+}} to %{{.+}} step
// CHECK:             %[[AT:.+]] = arith.addi
// CHECK-NEXT:        %[[ROW:.+]] = memref.load %[[TABLE]][%[[AT]]] : memref<4xi32>
// CHECK-NEXT:        %[[FROM:.+]] = arith.index_cast %[[ROW]] : i32 to index
// CHECK-NEXT:        memref.load %[[FLOATS]][%[[FROM]], %[[T2]]] : memref<?x?xf32>
// CHECK:             %[[GROW:.+]] = arith.muli %[[G]], %{{.+}} : index
// CHECK-NEXT:        %[[GAT:.+]] = arith.addi %[[GROW]], %{{.+}} : index
// CHECK-NEXT:        %[[HOLDER:.+]] = arith.addi %[[FIRST]], %[[GAT]] : index
// CHECK:             memref.load %[[WORDS]][%{{.+}}, %[[HOLDER]]]
// CHECK:             memref.load %[[WORDS]][%{{.+}}, %[[HOLDER]]]
// CHECK:             arith.trunci %{{.+}} : i32 to i16
// CHECK-NEXT:        arith.bitcast %{{.+}} : i16 to bf16
// CHECK:             arith.shrui
// CHECK-COUNT-4:     memref.store %{{.+}}, %[[FLOATS]][%{{.+}}, %[[T2]]] : memref<?x?xf32>
// CHECK:           }
// CHECK:           %[[R0:.+]] = memref.load %[[D0]][%[[T2]]] : memref<?xf32>
// CHECK-NEXT:      memref.store %[[R0]], %{{.+}}[%{{.+}}, %{{.+}}] : memref<64x4xf32>
// CHECK-NOT:     llvm.
// CHECK:         memref.global "private" constant @kiln_mma_accumulator_rows : memref<4xi32> = dense<[0, 1, 2, 3]>
func.func @mma(%a: memref<64x4xi32>, %b: memref<64x2xi32>, %d: memref<64x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %a0 = memref.load %a[%tx, %c0] : memref<64x4xi32>
    %a1 = memref.load %a[%tx, %c1] : memref<64x4xi32>
    %a2 = memref.load %a[%tx, %c2] : memref<64x4xi32>
    %a3 = memref.load %a[%tx, %c3] : memref<64x4xi32>
    %b0 = memref.load %b[%tx, %c0] : memref<64x2xi32>
    %b1 = memref.load %b[%tx, %c1] : memref<64x2xi32>
    %zero = arith.constant 0.0 : f32
    %r = llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"(%a0, %a1, %a2, %a3, %b0, %b1, %zero, %zero, %zero, %zero) : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    %d0 = llvm.extractvalue %r[0] : !llvm.struct<(f32, f32, f32, f32)>
    %d1 = llvm.extractvalue %r[1] : !llvm.struct<(f32, f32, f32, f32)>
    %d2 = llvm.extractvalue %r[2] : !llvm.struct<(f32, f32, f32, f32)>
    %d3 = llvm.extractvalue %r[3] : !llvm.struct<(f32, f32, f32, f32)>
    memref.store %d0, %d[%tx, %c0] : memref<64x4xf32>
    memref.store %d1, %d[%tx, %c1] : memref<64x4xf32>
    memref.store %d2, %d[%tx, %c2] : memref<64x4xf32>
    memref.store %d3, %d[%tx, %c3] : memref<64x4xf32>
    gpu.terminator
  }
  return
}

// -----

// A TF32 product (m16n8k8) reads its words as the halves' product does,
// each word one value: the f32 bits with the low 13 masked off, none
// shifted; four values of k for each of A's two word pairs.
// CHECK-LABEL: func.func @mma_tf32
// CHECK:         scf.for %[[T2:[^ ]+]] = %{{[0-9]+}} to
// CHECK:           scf.for
// CHECK-COUNT-4:     memref.load %{{.+}} : memref<4xi32>
// CHECK:             %[[A0W:.+]] = memref.load %{{.+}} : memref<?x?xi32>
// CHECK-COUNT-3:     memref.load %{{.+}} : memref<?x?xi32>
// CHECK:             %[[MASKED:.+]] = arith.andi %[[A0W]], %c-8192_i32 : i32
// CHECK-NEXT:        arith.bitcast %[[MASKED]] : i32 to f32
// CHECK-NOT:         arith.shrui
// CHECK-COUNT-32:    arith.mulf
// CHECK-NOT:         arith.mulf
// CHECK:             memref.store %{{.+}} : memref<?x?xf32>
// CHECK:           memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : memref<64x4xf32>
// CHECK-NOT:     llvm.
func.func @mma_tf32(%a: memref<64x4xi32>, %b: memref<64x2xi32>, %d: memref<64x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %a0 = memref.load %a[%tx, %c0] : memref<64x4xi32>
    %a1 = memref.load %a[%tx, %c1] : memref<64x4xi32>
    %a2 = memref.load %a[%tx, %c2] : memref<64x4xi32>
    %a3 = memref.load %a[%tx, %c3] : memref<64x4xi32>
    %b0 = memref.load %b[%tx, %c0] : memref<64x2xi32>
    %b1 = memref.load %b[%tx, %c1] : memref<64x2xi32>
    %zero = arith.constant 0.0 : f32
    %r = llvm.call_intrinsic "llvm.nvvm.mma.m16n8k8.row.col.tf32"(%a0, %a1, %a2, %a3, %b0, %b1, %zero, %zero, %zero, %zero) : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    %d0 = llvm.extractvalue %r[0] : !llvm.struct<(f32, f32, f32, f32)>
    %d1 = llvm.extractvalue %r[1] : !llvm.struct<(f32, f32, f32, f32)>
    %d2 = llvm.extractvalue %r[2] : !llvm.struct<(f32, f32, f32, f32)>
    %d3 = llvm.extractvalue %r[3] : !llvm.struct<(f32, f32, f32, f32)>
    memref.store %d0, %d[%tx, %c0] : memref<64x4xf32>
    memref.store %d1, %d[%tx, %c1] : memref<64x4xf32>
    memref.store %d2, %d[%tx, %c2] : memref<64x4xf32>
    memref.store %d3, %d[%tx, %c3] : memref<64x4xf32>
    gpu.terminator
  }
  return
}

// -----

// Products wait until a result is used as anything but a later product's
// accumulators: the third, whose accumulators are the first's results,
// joins the batch of the two independent ones, and reads them from the
// first's result row (4 count + 0 = 12) where the others read their own
// stored ones; it stores no accumulators of its own. All three store
// their operands in one phase and run in the next, as one loop of three
// trips; the sum that uses the second's and third's results then reads
// them from their rows (16 and 20: bytes 64 and 80 per thread in).
// CHECK-LABEL: func.func @mma_batches
// CHECK:         %[[BYTES:.+]] = memref.alloc(%{{.+}}) : memref<?xi8>
// CHECK:         memref.get_global @kiln_mma_accumulator_rows : memref<12xi32>
// CHECK:         %[[S0AT:.+]] = arith.muli %{{.+}}, %c64{{[_0-9]*}} : index
// CHECK-NEXT:    %[[S0:.+]] = memref.view %[[BYTES]][%[[S0AT]]][%{{.+}}] : memref<?xi8> to memref<?xf32>
// CHECK:         %[[U0AT:.+]] = arith.muli %{{.+}}, %c80 : index
// CHECK-NEXT:    %[[U0:.+]] = memref.view %[[BYTES]][%[[U0AT]]][%{{.+}}] : memref<?xi8> to memref<?xf32>
// CHECK:         scf.for %[[T:[^ ]+]] = %{{[0-9]+}} to
// CHECK:           memref.load %arg0
// CHECK-COUNT-26:  memref.store %{{.+}}[%{{.+}}, %[[T]]] : memref<?x?x
// CHECK-NEXT:    }
// CHECK-NEXT:    scf.for %[[T2:[^ ]+]] = %{{[0-9]+}} to
// CHECK:           %[[THREE:.+]] = arith.constant 3 : index
// CHECK:           scf.for %{{.+}} = %{{.+}} to %[[THREE]] step
// CHECK-COUNT-4:     memref.store
// CHECK-NEXT:      }
// CHECK-DAG:       memref.load %[[S0]][%[[T2]]]
// CHECK-DAG:       memref.load %[[U0]][%[[T2]]]
// CHECK:           arith.addf
// CHECK-NEXT:      memref.store %{{.+}}, %arg1
// CHECK:         memref.global "private" constant @kiln_mma_accumulator_rows : memref<12xi32> = dense<[0, 1, 2, 3, 4, 5, 6, 7, 12, 12, 12, 12]>
func.func @mma_batches(%a: memref<64x4xi32>, %d: memref<64x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c64, %sy = %c1, %sz = %c1) {
    %w = memref.load %a[%tx, %c0] : memref<64x4xi32>
    %zero = arith.constant 0.0 : f32
    %r = llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"(%w, %w, %w, %w, %w, %w, %zero, %zero, %zero, %zero) : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    %r0 = llvm.extractvalue %r[0] : !llvm.struct<(f32, f32, f32, f32)>
    %s = llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"(%w, %w, %w, %w, %w, %w, %zero, %zero, %zero, %zero) : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    %s0 = llvm.extractvalue %s[0] : !llvm.struct<(f32, f32, f32, f32)>
    %u = llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"(%w, %w, %w, %w, %w, %w, %r0, %r0, %r0, %r0) : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    %u0 = llvm.extractvalue %u[0] : !llvm.struct<(f32, f32, f32, f32)>
    %sum = arith.addf %s0, %u0 : f32
    memref.store %sum, %d[%tx, %c0] : memref<64x4xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @mma_partial_warp(%a: i32, %d: memref<48xf32>) {
  %c1 = arith.constant 1 : index
  %c48 = arith.constant 48 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c48, %sy = %c1, %sz = %c1) {
    %zero = arith.constant 0.0 : f32
    // expected-error @below {{an mma runs on the CPU only in blocks of whole warps of constant size}}
    %r = llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.bf16"(%a, %a, %a, %a, %a, %a, %zero, %zero, %zero, %zero) : (i32, i32, i32, i32, i32, i32, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    %d0 = llvm.extractvalue %r[0] : !llvm.struct<(f32, f32, f32, f32)>
    memref.store %d0, %d[%tx] : memref<48xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @mma_struct_used(%a: vector<2xf16>, %d: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %zero = arith.constant 0.0 : f32
    %r = llvm.call_intrinsic "llvm.nvvm.mma.m16n8k16.row.col.f32.f32"(%a, %a, %a, %a, %a, %a, %zero, %zero, %zero, %zero) : (vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>, vector<2xf16>, f32, f32, f32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
    // expected-error @below {{an mma's results run on the CPU only as llvm.extractvalue of one of its four floats}}
    %s = llvm.insertvalue %zero, %r[1] : !llvm.struct<(f32, f32, f32, f32)>
    %d0 = llvm.extractvalue %s[0] : !llvm.struct<(f32, f32, f32, f32)>
    memref.store %d0, %d[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

// A tuned call site (TunedSites.h): with no device to time, every variant
// runs at every call, variant 0 last (its results are the call's): the
// rounds are the variants, round r runs variant (r + 1) mod their number,
// and the runtime's calls and declarations go.
// CHECK-LABEL: func.func @tuned(
// CHECK-SAME:      %[[NAMES:.*]]: !llvm.ptr)
// CHECK-NOT:     kiln_cuda_tune
// CHECK-DAG:     %[[SITE:.*]] = arith.constant 0 : i64
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i64
// CHECK:         %[[UPPER:.*]] = arith.index_cast %[[TWO]] : i64 to index
// CHECK:         scf.for %[[R:.*]] = %{{.*}} to %[[UPPER]]
// CHECK:           %[[ROUND:.*]] = arith.index_cast %[[R]] : index to i64
// CHECK:           %[[NEXT:.*]] = arith.addi %[[ROUND]], %{{.*}} : i64
// CHECK:           %[[VARIANT:.*]] = arith.remui %[[NEXT]], %[[TWO]] : i64
// CHECK:           %[[FIRST:.*]] = arith.cmpi eq, %[[VARIANT]], %[[SITE]] : i64
// CHECK:           scf.if %[[FIRST]] {
// CHECK-NOT:     kiln_cuda_tune
func.func private @kiln_cuda_tune_rounds(i64, i64, !llvm.ptr) -> i64
func.func private @kiln_cuda_tune_begin(i64, i64) -> i64
func.func private @kiln_cuda_tune_end(i64, i64)
func.func @tuned(%x: memref<4xf32>, %names: !llvm.ptr) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %site = arith.constant 0 : i64
  %two = arith.constant 2 : i64
  %rounds = call @kiln_cuda_tune_rounds(%site, %two, %names) : (i64, i64, !llvm.ptr) -> i64
  %n = arith.index_cast %rounds : i64 to index
  scf.for %i = %c0 to %n step %c1 {
    %round = arith.index_cast %i : index to i64
    %variant = func.call @kiln_cuda_tune_begin(%site, %round) : (i64, i64) -> i64
    %first = arith.cmpi eq, %variant, %site : i64
    scf.if %first {
      %zero = arith.constant 0.0 : f32
      memref.store %zero, %x[%c0] : memref<4xf32>
    } else {
      %one = arith.constant 1.0 : f32
      memref.store %one, %x[%c0] : memref<4xf32>
    } {kiln.cuda_tuned_variant = 0 : i64}
    func.call @kiln_cuda_tune_end(%site, %round) : (i64, i64) -> ()
  } {kiln.cuda_tuned_site = 0 : i64}
  return
}

// -----

// A site's loop whose rounds the runtime did not give is refused.
func.func @tuned_without_rounds(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  // expected-error @+1 {{a tuned call site's rounds do not come from kiln_cuda_tune_rounds}}
  scf.for %i = %c0 to %c2 step %c1 {
  } {kiln.cuda_tuned_site = 0 : i64}
  return
}
