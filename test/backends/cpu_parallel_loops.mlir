// kiln-cpu-parallel-loops keeps an scf.parallel only where it is the
// outermost parallel loop of a loop nest doing enough work.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-parallel-loops | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cpu-parallel-loops=min-iterations=1 \
// RUN:   | FileCheck %s --check-prefix=ALL

// 2 x 100000 iterations in perfectly nested parallel loops: merged into
// one two-dim parallel loop (one collapsed OpenMP loop), so the two outer
// iterations do not limit the threads to two. Its body is elementwise, and
// two outer iterations are too few to share, so the last dim is cut into
// 98 chunks of 1024 that stay parallel, each an scf.for over contiguous
// elements (which vectorizes).
// CHECK-LABEL: func.func @perfectly_nested(
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG:     %[[N:.*]] = arith.constant 100000 : index
// CHECK-DAG:     %[[CHUNKS:.*]] = arith.constant 98 : index
// CHECK-DAG:     %[[SIZE:.*]] = arith.constant 1024 : index
// CHECK:         scf.parallel (%[[I:.*]], %[[C:.*]]) = (%[[C0]], %{{.*}}) to (%[[C2]], %[[CHUNKS]])
// CHECK:           %[[OFFSET:.*]] = arith.muli %[[C]], %[[SIZE]]
// CHECK:           %[[FIRST:.*]] = arith.addi %[[C0]], %[[OFFSET]]
// CHECK:           %[[END:.*]] = arith.addi %[[FIRST]], %[[SIZE]]
// CHECK:           %[[LAST:.*]] = arith.minsi %[[END]], %[[N]]
// CHECK:           scf.for %[[J:.*]] = %[[FIRST]] to %[[LAST]]
// CHECK-NEXT:        memref.load %{{.*}}[%[[I]], %[[J]]]
// CHECK-NOT:     scf.parallel
func.func @perfectly_nested(%m: memref<2x100000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = arith.constant 100000 : index
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    scf.parallel (%j) = (%c0) to (%n) step (%c1) {
      %v = memref.load %m[%i, %j] : memref<2x100000xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %m[%i, %j] : memref<2x100000xf32>
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// 1000 x 1000 x 2 iterations with a sequential loop between the parallel
// loops: the outer loop stays parallel, the nested one becomes sequential.
// CHECK-LABEL: func.func @nested(
// CHECK:         scf.parallel (%[[I:.*]]) =
// CHECK-NEXT:      scf.for %[[K:.*]] =
// CHECK-NEXT:        scf.for %[[J:.*]] =
// CHECK-NEXT:          memref.load %{{.*}}[%[[I]], %[[J]]]
// CHECK-NOT:     scf.parallel
func.func @nested(%m: memref<1000x1000xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = arith.constant 1000 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %k = %c0 to %c2 step %c1 {
      scf.parallel (%j) = (%c0) to (%n) step (%c1) {
        %v = memref.load %m[%i, %j] : memref<1000x1000xf32>
        %w = arith.addf %v, %v : f32
        memref.store %w, %m[%i, %j] : memref<1000x1000xf32>
        scf.reduce
      }
    }
    scf.reduce
  }
  return
}

// -----

// 16 x 32 x 8 = 4096 innermost iterations (the reduction loop counts): too
// few for the default threshold, so every loop is sequential.
// CHECK-LABEL: func.func @small(
// CHECK-NOT:     scf.parallel
// CHECK:         scf.for
// CHECK-NEXT:      scf.for
// CHECK-NEXT:        scf.for
// ALL-LABEL: func.func @small(
// ALL:         scf.parallel (%{{.*}}, %{{.*}}) =
// ALL-NEXT:      scf.for
func.func @small(%a: memref<16x32x8xf32>, %out: memref<16x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c32 = arith.constant 32 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c16, %c32) step (%c1, %c1) {
    scf.for %k = %c0 to %c8 step %c1 {
      %v = memref.load %a[%i, %j, %k] : memref<16x32x8xf32>
      %s = memref.load %out[%i, %j] : memref<16x32xf32>
      %w = arith.addf %v, %s : f32
      memref.store %w, %out[%i, %j] : memref<16x32xf32>
    }
    scf.reduce
  }
  return
}

// -----

// A loop with a reduction is left to convert-scf-to-openmp.
// CHECK-LABEL: func.func @reduction(
// CHECK:         scf.parallel
// CHECK:         scf.reduce(
func.func @reduction(%a: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.parallel (%i) = (%c0) to (%c8) step (%c1) init (%zero) -> f32 {
    %v = memref.load %a[%i] : memref<8xf32>
    scf.reduce(%v : f32) {
    ^bb0(%x: f32, %y: f32):
      %r = arith.addf %x, %y : f32
      scf.reduce.return %r : f32
    }
  }
  return %sum : f32
}

// -----

// 64 chunks of min(lower + 2048, 100000) iterations (a reduction split by
// kiln-cpu-parallel-reductions) count as 64 x 2048: the chunk loop stays
// parallel.
// CHECK-LABEL: func.func @chunks(
// CHECK:         scf.parallel
// CHECK:           scf.for
func.func @chunks(%x: memref<100000xf32>, %partials: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %chunk = arith.constant 2048 : index
  %n = arith.constant 100000 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%c) = (%c0) to (%c64) step (%c1) {
    %lo = arith.muli %c, %chunk : index
    %end = arith.addi %lo, %chunk : index
    %hi = arith.minsi %end, %n : index
    %sum = scf.for %i = %lo to %hi step %c1 iter_args(%acc = %zero) -> (f32) {
      %v = memref.load %x[%i] : memref<100000xf32>
      %s = arith.addf %v, %acc : f32
      scf.yield %s : f32
    }
    memref.store %sum, %partials[%c] : memref<64xf32>
    scf.reduce
  }
  return
}

// -----

// A loop whose body is a library call carries what one iteration is worth
// (kiln-cpu-matmul-to-dnnl's loop over a batch of products): 8 iterations
// of 131072 stay parallel, 8 iterations of 100 do not.
func.func private @work(index)
// CHECK-LABEL: func.func @body_work(
// CHECK:         scf.parallel
// CHECK:           call @work
// CHECK:         } {kiln.body_work = 131072 : i64}
// CHECK:         scf.for
// CHECK:           call @work
func.func @body_work() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    func.call @work(%i) : (index) -> ()
  } {kiln.body_work = 131072 : i64}
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    func.call @work(%i) : (index) -> ()
  } {kiln.body_work = 100 : i64}
  return
}

// -----

// An attention's loop over (batch entry, query tile) with one tile: the
// tile's dim goes and the attribute stays, so that its 12 batch entries
// of 2097152 stay parallel (the canonicalization alone dropped both, and
// the loop ran on one thread). A dim of one iteration with a dynamic
// bound or a dim of several stays.
func.func private @tile(i64, i64)
// CHECK-LABEL: func.func @single_tile(
// CHECK-SAME:    %[[N:.+]]: index
// CHECK-DAG:     %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG:     %[[C12:.+]] = arith.constant 12 : index
// CHECK:         scf.parallel (%[[B:.+]]) = (%[[C0]]) to (%[[C12]])
// CHECK:           %[[BI:.+]] = arith.index_cast %[[B]] : index to i64
// CHECK:           call @tile(%[[BI]], %c0_i64)
// CHECK:         } {kiln.body_work = 2097152 : i64}
// CHECK:         scf.parallel (%{{.+}}, %{{.+}}) = (%[[C0]], %[[C0]]) to (%[[C12]], %[[N]])
// CHECK:         } {kiln.body_work = 2097152 : i64}
func.func @single_tile(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c12 = arith.constant 12 : index
  scf.parallel (%b, %t) = (%c0, %c0) to (%c12, %c1) step (%c1, %c1) {
    %bi = arith.index_cast %b : index to i64
    %ti = arith.index_cast %t : index to i64
    func.call @tile(%bi, %ti) : (i64, i64) -> ()
  } {kiln.body_work = 2097152 : i64}
  scf.parallel (%b, %t) = (%c0, %c0) to (%c12, %n) step (%c1, %c1) {
    %bi = arith.index_cast %b : index to i64
    %ti = arith.index_cast %t : index to i64
    func.call @tile(%bi, %ti) : (i64, i64) -> ()
  } {kiln.body_work = 2097152 : i64}
  return
}

// -----

// A big elementwise kernel of rank 4 (4 x 256 x 56 x 56): the first three
// dims (57344 iterations) stay the parallel loop, the last one becomes an
// scf.for inside it, uncut.
// CHECK-LABEL: func.func @rank4(
// CHECK:         scf.parallel (%[[A:.*]], %[[B:.*]], %[[C:.*]]) = (%{{.*}}, %{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NEXT:      scf.for %[[D:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        memref.load %{{.*}}[%[[A]], %[[B]], %[[C]], %[[D]]]
// CHECK-NOT:     arith.minsi
func.func @rank4(%m: memref<4x256x56x56xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c56 = arith.constant 56 : index
  %c256 = arith.constant 256 : index
  scf.parallel (%a, %b, %c, %d) = (%c0, %c0, %c0, %c0) to (%c4, %c256, %c56, %c56) step (%c1, %c1, %c1, %c1) {
    %v = memref.load %m[%a, %b, %c, %d] : memref<4x256x56x56xf32>
    %w = arith.negf %v : f32
    memref.store %w, %m[%a, %b, %c, %d] : memref<4x256x56x56xf32>
    scf.reduce
  }
  return
}

// -----

// Loops that keep their collapsed form: a body with a call (a library
// kernel per iteration), and (with every loop parallel) a last dim of
// unknown length behind too few outer iterations to share, which cannot be
// cut into chunks.
// CHECK-LABEL: func.func @kept(
// CHECK:         scf.parallel (%{{.*}}, %{{.*}}) =
// CHECK-NEXT:      func.call @kernel
// ALL-LABEL:   func.func @kept(
// ALL:           scf.parallel (%{{.*}}, %{{.*}}) =
// ALL-NEXT:        func.call @kernel
// ALL:           scf.parallel (%{{.*}}, %{{.*}}) =
// ALL-NEXT:        memref.load
// ALL-NOT:       scf.for
func.func private @kernel(index, index)
func.func @kept(%m: memref<2x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = arith.constant 100000 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %n) step (%c1, %c1) {
    func.call @kernel(%i, %j) : (index, index) -> ()
    scf.reduce
  }
  %d = memref.dim %m, %c1 : memref<2x?xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %d) step (%c1, %c1) {
    %v = memref.load %m[%i, %j] : memref<2x?xf32>
    %w = arith.addf %v, %v : f32
    memref.store %w, %m[%i, %j] : memref<2x?xf32>
    scf.reduce
  }
  return
}
