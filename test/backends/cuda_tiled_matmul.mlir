// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-tiled-matmul \
// RUN:   --kiln-cuda-check-launches | FileCheck %s

// A 40x24 = 40x30 * 30x24 matmul: 2x3 blocks of 16x16 threads, numbered
// along grid x (column tiles fastest), two tiles of shared memory, ceil(30/16) = 2 steps along K with zero padding past
// the edges, barriers around the dot product, a guarded update of C.
// CHECK-LABEL: func.func @mm
// CHECK:         gpu.launch blocks(%[[B:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c6{{[_0-9]*}}, %{{.+}} = %c1{{[_0-9]*}}, %{{.+}} = %c1{{[_0-9]*}}) threads(%[[TX:.+]], %[[TY:.+]], %{{.+}}) in (%{{.+}} = %c16{{[_0-9]*}}, %{{.+}} = %c16{{[_0-9]*}}, %{{.+}} = %c1{{[_0-9]*}})
// CHECK-SAME:    workgroup(%[[AS:.+]] : memref<16x16xf32, #gpu.address_space<workgroup>>, %[[BS:.+]] : memref<16x16xf32, #gpu.address_space<workgroup>>)
// Block numbers are below 2^31: 32-bit divisions (Delinearize.h).
// CHECK:           %[[B32:.+]] = arith.index_castui %[[B]] : index to i32
// CHECK:           %[[COL32:.+]] = arith.remui %[[B32]], %c2_i32
// CHECK:           %[[COLTILE:.+]] = arith.index_castui %[[COL32]] : i32 to index
// CHECK:           %[[REST:.+]] = arith.divui %[[B32]], %c2_i32
// CHECK:           %[[ROW32:.+]] = arith.remui %[[REST]], %c3_i32
// CHECK:           %[[ROWTILE:.+]] = arith.index_castui %[[ROW32]] : i32 to index
// CHECK:           %[[ROWSTART:.+]] = arith.muli %[[ROWTILE]], %c16
// CHECK:           %[[ROW:.+]] = arith.addi %[[ROWSTART]], %[[TY]]
// CHECK:           %[[COLSTART:.+]] = arith.muli %[[COLTILE]], %c16
// CHECK:           %[[COL:.+]] = arith.addi %[[COLSTART]], %[[TX]]
// CHECK:           %[[ACC:.+]] = scf.for %[[STEP:.+]] = %c0{{[_0-9]*}} to %c2{{[_0-9]*}} step
// CHECK:             scf.if
// CHECK:               memref.load %{{.+}} : memref<40x30xf32>
// CHECK:             } else {
// CHECK:               scf.yield %cst
// CHECK:             memref.store %{{.+}}, %[[AS]][%[[TY]], %[[TX]]]
// CHECK:             memref.load %{{.+}} : memref<30x24xf32>
// CHECK:             memref.store %{{.+}}, %[[BS]][%[[TY]], %[[TX]]]
// CHECK:             gpu.barrier
// CHECK:             scf.for
// CHECK:               memref.load %[[AS]][%[[TY]], %{{.+}}]
// CHECK:               memref.load %[[BS]][%{{.+}}, %[[TX]]]
// CHECK:               arith.mulf
// CHECK:               arith.addf
// CHECK:             gpu.barrier
// CHECK:           scf.if
// CHECK:             %[[OLD:.+]] = memref.load %{{.+}} : memref<40x24xf32>
// CHECK:             %[[NEW:.+]] = arith.addf %[[OLD]], %[[ACC]]
// CHECK:             memref.store %[[NEW]]
// CHECK-NOT:     linalg.matmul
func.func @mm(%a: memref<40x30xf32>, %b: memref<30x24xf32>, %c: memref<40x24xf32>) {
  linalg.matmul ins(%a, %b : memref<40x30xf32>, memref<30x24xf32>) outs(%c : memref<40x24xf32>)
  return
}

// -----

// 1048577 rows are 65537 row tiles, more than grid y holds: the launch
// numbers them along x, and a device can run it.
// CHECK-LABEL: func.func @tall
// CHECK:         gpu.launch blocks(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c65537{{[_0-9]*}}, %{{.+}} = %c1{{[_0-9]*}}, %{{.+}} = %c1{{[_0-9]*}})
func.func @tall(%a: memref<1048577x1xf32>, %b: memref<1x16xf32>, %c: memref<1048577x16xf32>) {
  linalg.matmul ins(%a, %b : memref<1048577x1xf32>, memref<1x16xf32>) outs(%c : memref<1048577x16xf32>)
  return
}

// -----

// Batched: the batch is the slowest part of the block's number, and every
// access is indexed by it.
// CHECK-LABEL: func.func @bmm
// CHECK:         gpu.launch blocks(%[[B:.+]], %{{.+}}, %{{.+}}) in (%{{.+}} = %c3{{[_0-9]*}}, %{{.+}} = %c1{{[_0-9]*}}, %{{.+}} = %c1{{[_0-9]*}})
// CHECK:           %[[B32:.+]] = arith.index_castui %[[B]] : index to i32
// CHECK:           %[[REST:.+]] = arith.divui %[[B32]], %c1_i32
// CHECK:           %[[BZ32:.+]] = arith.divui %[[REST]], %c1_i32{{[_0-9]*}}
// CHECK:           %[[BZ:.+]] = arith.index_castui %[[BZ32]] : i32 to index
// CHECK:           memref.load %{{.+}}[%[[BZ]], %{{.+}}, %{{.+}}] : memref<3x4x5xf32>
// CHECK:           memref.load %{{.+}}[%[[BZ]], %{{.+}}, %{{.+}}] : memref<3x5x2xf32>
// CHECK:           memref.store %{{.+}}, %{{.+}}[%[[BZ]], %{{.+}}, %{{.+}}] : memref<3x4x2xf32>
func.func @bmm(%a: memref<3x4x5xf32>, %b: memref<3x5x2xf32>, %c: memref<3x4x2xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<3x4x5xf32>, memref<3x5x2xf32>) outs(%c : memref<3x4x2xf32>)
  return
}

// -----

// f64 stages f64 tiles.
// CHECK-LABEL: func.func @mm_f64
// CHECK:         workgroup(%{{.+}} : memref<16x16xf64, #gpu.address_space<workgroup>>, %{{.+}} : memref<16x16xf64, #gpu.address_space<workgroup>>)
// CHECK:           arith.constant 0.000000e+00 : f64
func.func @mm_f64(%a: memref<4x5xf64>, %b: memref<5x2xf64>, %c: memref<4x2xf64>) {
  linalg.matmul ins(%a, %b : memref<4x5xf64>, memref<5x2xf64>) outs(%c : memref<4x2xf64>)
  return
}

// -----

// Integer matmuls are left to the generic mapping.
// CHECK-LABEL: func.func @int_mm
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.matmul
func.func @int_mm(%a: memref<4x5xi32>, %b: memref<5x2xi32>, %c: memref<4x2xi32>) {
  linalg.matmul ins(%a, %b : memref<4x5xi32>, memref<5x2xi32>) outs(%c : memref<4x2xi32>)
  return
}
