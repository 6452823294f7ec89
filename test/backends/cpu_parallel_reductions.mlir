// kiln-cpu-parallel-reductions splits large reductions with few outputs
// into per-chunk partials folded in an scf.parallel, then folds the
// partials into the output sequentially.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-parallel-reductions | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cpu-parallel-reductions=chunks=3 \
// RUN:   | FileCheck %s --check-prefix=THREE
// RUN: not kiln-opt %s --split-input-file --kiln-cpu-parallel-reductions=chunks=0 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADCHUNKS

// BADCHUNKS: chunks must be positive

// A full sum of 100000 elements: 64 chunks of 1568 (a multiple of 16), the
// last one shorter; each chunk's fold is reassociable.
// CHECK-LABEL: func.func @full_sum(
// CHECK-SAME:      %[[X:.*]]: memref<100000xf32>, %[[OUT:.*]]: memref<f32>)
// CHECK:         %[[PARTIALS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK:         scf.parallel (%[[C:.*]]) = (%{{.*}}) to (%{{.*}}) step
// CHECK:           %[[LO:.*]] = arith.muli %[[C]], %{{.*}} : index
// CHECK:           %[[HI:.*]] = arith.minsi
// CHECK:           %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:           %[[ACC:.*]] = scf.for %[[I:.*]] = %[[LO]] to %[[HI]] step %{{.*}} iter_args(%[[A:.*]] = %[[ZERO]]) -> (f32)
// CHECK:             %[[V:.*]] = memref.load %[[X]][%[[I]]]
// CHECK:             %[[S:.*]] = arith.addf %[[V]], %[[A]] fastmath<reassoc> : f32
// CHECK:             scf.yield %[[S]]
// CHECK:           memref.store %[[ACC]], %[[PARTIALS]][%[[C]]]
// CHECK:         %[[INIT:.*]] = memref.load %[[OUT]][]
// CHECK:         %[[TOTAL:.*]] = scf.for %[[K:.*]] = {{.*}} iter_args(%[[T:.*]] = %[[INIT]])
// CHECK:           %[[P:.*]] = memref.load %[[PARTIALS]][%[[K]]]
// CHECK:           arith.addf %[[T]], %[[P]] : f32
// CHECK:         memref.store %[[TOTAL]], %[[OUT]][]
// CHECK:         memref.dealloc %[[PARTIALS]]
// CHECK-NOT:     linalg.generic
// THREE-LABEL: func.func @full_sum(
// THREE:         memref.alloc() {alignment = 64 : i64} : memref<3xf32>
// THREE:         arith.constant 33344 : index
#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>
func.func @full_sum(%x: memref<100000xf32>, %out: memref<f32>) {
  linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction"]}
      ins(%x : memref<100000xf32>) outs(%out : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Four row maxima over 30000 columns, with an elementwise producer fused
// into the body: partials per chunk and row (63 chunks of 480 columns),
// accumulators from -inf.
// CHECK-LABEL: func.func @row_max(
// CHECK:         %[[PARTIALS:.*]] = memref.alloc() {alignment = 64 : i64} : memref<63x4xf32>
// CHECK:         scf.parallel (%[[C:.*]]) =
// CHECK:           scf.for %[[ROW:.*]] =
// CHECK:             %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:             %[[ACC:.*]] = scf.for %[[COL:.*]] = {{.*}} iter_args(%[[A:.*]] = %[[NEGINF]])
// CHECK:               %[[V:.*]] = memref.load %{{.*}}[%[[ROW]], %[[COL]]]
// CHECK:               %[[W:.*]] = arith.mulf %[[V]], %[[V]] : f32
// CHECK:               arith.maximumf %[[W]], %[[A]] fastmath<reassoc> : f32
// CHECK:             memref.store %[[ACC]], %[[PARTIALS]][%[[C]], %[[ROW]]]
// CHECK:         scf.for %[[ROW2:.*]] =
// CHECK:           %[[INIT:.*]] = memref.load %{{.*}}[%[[ROW2]]]
// CHECK:           scf.for {{.*}} iter_args(%{{.*}} = %[[INIT]])
// CHECK:             arith.maximumf
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_max(%x: memref<4x30000xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [#rows, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x30000xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %m = arith.maximumf %sq, %acc : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// An integer sum over a transposed operand using its index: linalg.index
// becomes the loop's induction variable. d0 is the outermost reduction dim
// of at least 64 iterations: 58 chunks of 7.
// CHECK-LABEL: func.func @index_sum(
// CHECK:         memref.alloc() {alignment = 64 : i64} : memref<58xi32>
// CHECK:         scf.parallel
// CHECK:           %[[ACC:.*]] = scf.for %[[I:.*]] = {{.*}} iter_args(%[[A:.*]] = %{{.*}}) -> (i32)
// CHECK:             scf.for %[[J:.*]] = {{.*}} iter_args(%[[B:.*]] = %[[A]]) -> (i32)
// CHECK:               memref.load %{{.*}}[%[[J]], %[[I]]]
// CHECK:               arith.index_cast %[[I]]
// CHECK:               arith.addi
#t = affine_map<(d0, d1) -> (d1, d0)>
#s = affine_map<(d0, d1) -> ()>
func.func @index_sum(%x: memref<300x400xi32>, %out: memref<i32>) {
  linalg.generic {indexing_maps = [#t, #s],
                  iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<300x400xi32>) outs(%out : memref<i32>) {
  ^bb0(%a: i32, %acc: i32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %v = arith.muli %a, %ii : i32
    %s = arith.addi %v, %acc : i32
    linalg.yield %s : i32
  }
  return
}

// -----

// Left alone: many outputs (the parallel loop already has the work), too
// little work, and an accumulator used outside its combiner.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT:     scf.parallel
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT:     scf.parallel
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>
func.func @left_alone(%m: memref<1000x100xf32>, %rows: memref<1000xf32>,
                      %small: memref<1000xf32>, %big: memref<100000xf32>,
                      %out: memref<f32>) {
  linalg.generic {indexing_maps = [#rows, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%m : memref<1000x100xf32>) outs(%rows : memref<1000xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction"]}
      ins(%small : memref<1000xf32>) outs(%out : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #scalar], iterator_types = ["reduction"]}
      ins(%big : memref<100000xf32>) outs(%out : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %h = arith.mulf %acc, %a : f32
    %s = arith.addf %h, %acc : f32
    linalg.yield %s : f32
  }
  return
}
