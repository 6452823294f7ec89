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

// -----

// A bias gradient (sum over N, H and W of NCHW): 8 outputs cannot fill the
// GPU, so each output's 65536 elements are cut into 16 chunks of 4096. 128
// blocks write a total per (channel, chunk) into a temporary, then a block
// per channel folds its 16 totals into the output in chunk order. The
// indices are split in 32 bits (the reduction space has 2^16 elements).
// CHECK-LABEL: func.func @bias_grad
// CHECK:         %[[PARTS:.+]] = memref.alloc() : memref<128xf32>
// CHECK:         gpu.launch blocks(%[[BX:.+]], %{{.+}}, %{{.+}}) in (%[[GX:.+]] = %c128{{[_0-9]*}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%[[SX:.+]] = %c256{{[_0-9]*}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}})
// CHECK:           scf.for %[[UNIT:.+]] = %[[BX]] to %c128{{[_0-9]*}} step %[[GX]]
// CHECK:             %[[CH:.+]] = arith.divui %[[UNIT]], %c16
// CHECK:             %[[PIECE:.+]] = arith.remui %[[UNIT]], %c16
// CHECK:             %[[START:.+]] = arith.muli %[[PIECE]], %c4096
// CHECK:             %[[END0:.+]] = arith.addi %[[START]], %c4096
// CHECK:             %[[END:.+]] = arith.minui %[[END0]], %c65536
// CHECK:             %[[FROM:.+]] = arith.addi %[[START]], %[[TX]]
// CHECK:             %[[PART:.+]] = scf.for %[[K:.+]] = %[[FROM]] to %[[END]] step %[[SX]] iter_args
// CHECK:               %[[K32:.+]] = arith.index_castui %[[K]] : index to i32
// CHECK:               %[[W32:.+]] = arith.remui %[[K32]], %c64_i32{{[_0-9]*}}
// CHECK:               %[[W:.+]] = arith.index_castui %[[W32]]
// CHECK:               %[[K1:.+]] = arith.divui %[[K32]], %c64_i32{{[_0-9]*}}
// CHECK:               %[[H32:.+]] = arith.remui %[[K1]], %c64_i32{{[_0-9]*}}
// CHECK:               %[[H:.+]] = arith.index_castui %[[H32]]
// CHECK:               %[[N32:.+]] = arith.divui %[[K1]], %c64_i32{{[_0-9]*}}
// CHECK:               %[[N:.+]] = arith.index_castui %[[N32]]
// CHECK:               memref.load %{{.+}}[%[[N]], %[[CH]], %[[H]], %[[W]]] : memref<16x8x64x64xf32>
// CHECK:             %[[TOTAL:.+]] = gpu.all_reduce  add %[[PART]] uniform
// CHECK:             scf.if
// CHECK:               memref.store %[[TOTAL]], %[[PARTS]][%[[UNIT]]] : memref<128xf32>
// CHECK:             gpu.barrier
// CHECK:         gpu.launch blocks(%[[BY:.+]], %{{.+}}, %{{.+}}) in (%[[GY:.+]] = %c8{{[_0-9]*}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) threads(%[[TY:.+]], %{{.+}}, %{{.+}}) in (%[[SY:.+]] = %c32{{[_0-9]*}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}})
// CHECK:           scf.for %[[OUT:.+]] = %[[BY]] to %c8{{[_0-9]*}} step %[[GY]]
// CHECK:             %[[ROW:.+]] = arith.muli %[[OUT]], %c16
// CHECK:             %[[SUM:.+]] = scf.for %[[S:.+]] = %[[TY]] to %c16{{[_0-9]*}} step %[[SY]] iter_args
// CHECK:               %[[AT:.+]] = arith.addi %[[ROW]], %[[S]]
// CHECK:               memref.load %[[PARTS]][%[[AT]]] : memref<128xf32>
// CHECK:             %[[ALL:.+]] = gpu.all_reduce  add %[[SUM]] uniform
// CHECK:             scf.if
// CHECK:               %[[OLD:.+]] = memref.load %{{.+}}[%[[OUT]]] : memref<8xf32>
// CHECK:               %[[NEW:.+]] = arith.addf %[[ALL]], %[[OLD]]
// CHECK:               memref.store %[[NEW]], %{{.+}}[%[[OUT]]] : memref<8xf32>
// CHECK:             gpu.barrier
// CHECK:         memref.dealloc %[[PARTS]] : memref<128xf32>
// CHECK-NOT:     linalg.generic
func.func @bias_grad(%dy: memref<16x8x64x64xf32>, %db: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (c)>],
                  iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%dy : memref<16x8x64x64xf32>) outs(%db : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A full maximum of 2^20 elements: 256 chunks of 4096 (each thread folds
// 16), one block for the second step, max over -inf again.
// CHECK-LABEL: func.func @big_max
// CHECK:         memref.alloc() : memref<256xf32>
// CHECK:         gpu.launch blocks({{.+}}) in ({{.+}} = %c256{{[_0-9]*}}, {{.+}}) threads({{.+}}) in ({{.+}} = %c256
// CHECK:           arith.muli %{{.+}}, %c4096
// CHECK:           gpu.all_reduce  maximumf
// CHECK:         gpu.launch blocks({{.+}}) in ({{.+}} = %c1{{[_0-9]*}}, {{.+}}) threads({{.+}}) in ({{.+}} = %c256
// CHECK:           arith.constant 0xFF800000 : f32
// CHECK:           gpu.all_reduce  maximumf
// CHECK:           memref.store %{{.+}}, %{{.+}}[] : memref<f32>
// CHECK:         memref.dealloc
func.func @big_max(%a: memref<1024x1024xf32>, %m: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%a : memref<1024x1024xf32>) outs(%m : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.maximumf %acc, %x : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Nothing to reduce or nothing to produce: a launch of at least one whole
// warp (a block of no threads is an invalid launch), no split, and no
// division by the zero output count while planning.
// CHECK-LABEL: func.func @empty
// CHECK-NOT:     memref.alloc
// CHECK:         gpu.launch blocks({{.+}}) in ({{.+}} = %c4{{[_0-9]*}}, {{.+}}) threads({{.+}}) in ({{.+}} = %c32
// CHECK:         gpu.launch blocks({{.+}}) in ({{.+}} = %c1{{[_0-9]*}}, {{.+}}) threads({{.+}}) in ({{.+}} = %c256
// CHECK-NOT:     memref.alloc
func.func @empty(%a: memref<4x0xf32>, %s: memref<4xf32>, %b: memref<0x100000xf32>, %t: memref<0xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x0xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(i, k) -> (i, k)>, affine_map<(i, k) -> (i)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<0x100000xf32>) outs(%t : memref<0xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %x, %acc : f32
    linalg.yield %r : f32
  }
  return
}
