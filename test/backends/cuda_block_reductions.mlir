// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-block-reductions | FileCheck %s

// A row sum: one block per row (8 blocks), 128 threads (the 100 reduced
// elements rounded up to whole warps) striding over the row from the
// identity, gpu.all_reduce, and thread 0 adding the total to the output.
// CHECK-LABEL: func.func @row_sum
// CHECK:         gpu.launch blocks(%[[BX:.+]], %{{.+}}, %{{.+}}) in (%[[GX:.+]] = %c8{{[_0-9]*}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%[[SX:.+]] = %c128{{[_0-9]*}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}})
// CHECK:           scf.for %[[ROW:.+]] = %[[BX]] to %c8{{[_0-9]*}} step %[[GX]]
// CHECK:             %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:             %[[PART:.+]] = scf.for %[[K:.+]] = %[[TX]] to %c100{{[_0-9]*}} step %[[SX]] iter_args(%[[ACC:.+]] = %[[ZERO]]) -> (f32)
// CHECK:               %[[X:.+]] = memref.load %{{.+}}[%[[ROW]], %[[K]]] : memref<8x100xf32>
// CHECK:               %[[SQ:.+]] = arith.mulf %[[X]], %[[X]]
// CHECK:               %[[SUM:.+]] = arith.addf %[[SQ]], %[[ACC]]
// CHECK:               scf.yield %[[SUM]]
// CHECK:             %[[TOTAL:.+]] = gpu.all_reduce  add %[[PART]] uniform {
// CHECK:             %[[FIRST:.+]] = arith.cmpi eq, %[[TX]], %c0
// CHECK:             scf.if %[[FIRST]]
// CHECK:               %[[OLD:.+]] = memref.load %{{.+}}[%[[ROW]]] : memref<8xf32>
// CHECK:               %[[NEW:.+]] = arith.addf %[[TOTAL]], %[[OLD]]
// CHECK:               memref.store %[[NEW]], %{{.+}}[%[[ROW]]]
// CHECK:             gpu.barrier
// CHECK-NOT:     linalg.generic
func.func @row_sum(%a: memref<8x100xf32>, %s: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<8x100xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %sq = arith.mulf %x, %x : f32
    %sum = arith.addf %sq, %acc : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// A full max over a rank-0 output: one block, -inf as the identity.
// CHECK-LABEL: func.func @full_max
// CHECK:         gpu.launch blocks({{.+}}) in ({{.+}} = %c1{{[_0-9]*}}, {{.+}}) threads({{.+}}) in ({{.+}} = %c256
// CHECK:           arith.constant 0xFF800000 : f32
// CHECK:           gpu.all_reduce  maximumf
// CHECK:           memref.store %{{.+}}, %{{.+}}[] : memref<f32>
func.func @full_max(%a: memref<4x1000xf32>, %m: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%a : memref<4x1000xf32>) outs(%m : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %acc, %x : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Left alone: matmuls, i1 outputs, and bodies that use the output other
// than in the combiner.
// CHECK-LABEL: func.func @not_handled
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.matmul
// CHECK:         linalg.generic
// CHECK:         linalg.generic
// CHECK-NOT:     gpu.launch
func.func @not_handled(%a: memref<4x8xf32>, %b: memref<8x2xf32>, %c: memref<4x2xf32>,
                       %d: memref<16xi1>, %e: memref<i1>, %f: memref<16xf32>, %g: memref<f32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x2xf32>) outs(%c : memref<4x2xf32>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%d : memref<16xi1>) outs(%e : memref<i1>) {
  ^bb0(%x: i1, %acc: i1):
    %r = arith.ori %x, %acc : i1
    linalg.yield %r : i1
  }
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%f : memref<16xf32>) outs(%g : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.mulf %x, %acc : f32
    %r = arith.addf %m, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// 64-bit values reduce the same way (the shuffles split them in halves).
// CHECK-LABEL: func.func @sum_i64
// CHECK:         gpu.launch
// CHECK:           arith.constant 0 : i64
// CHECK:           gpu.all_reduce  add %{{.+}} uniform
// CHECK:           arith.addi
func.func @sum_i64(%a: memref<3x50xi64>, %s: memref<3xi64>) {
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<3x50xi64>) outs(%s : memref<3xi64>) {
  ^bb0(%x: i64, %acc: i64):
    %r = arith.addi %x, %acc : i64
    linalg.yield %r : i64
  }
  return
}
