// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-map-parallel-loops | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cuda-map-parallel-loops=block-size=128 | FileCheck %s --check-prefix=B128

// A 2-D elementwise loop: one launch of 256-thread blocks over the 64*32
// linearized iterations, a grid-stride loop, and row-major delinearization
// (in 32 bits: 2048 iterations fit).
// CHECK-LABEL: func.func @elementwise
// CHECK-DAG:     %[[C2048:.+]] = arith.constant 2048 : index
// CHECK-DAG:     %[[C256:.+]] = arith.constant 256 : index
// CHECK-DAG:     %[[C8:.+]] = arith.constant 8 : index
// CHECK:         gpu.launch blocks(%[[BX:.+]], %{{.+}}, %{{.+}}) in (%[[GX:.+]] = %c8{{[_0-9]*}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) threads(%[[TX:.+]], %{{.+}}, %{{.+}}) in (%[[SX:.+]] = %[[C256]]
// CHECK:           %[[OFF:.+]] = arith.muli %[[BX]], %[[SX]]
// CHECK:           %[[START:.+]] = arith.addi %[[OFF]], %[[TX]]
// CHECK:           %[[STRIDE:.+]] = arith.muli %[[GX]], %[[SX]]
// CHECK:           scf.for %[[L:.+]] = %[[START]] to %[[C2048]] step %[[STRIDE]]
// CHECK:             %[[L32:.+]] = arith.index_castui %[[L]] : index to i32
// CHECK:             %[[C32:.+]] = arith.constant 32 : i32
// CHECK:             %[[J32:.+]] = arith.remui %[[L32]], %[[C32]] : i32
// CHECK:             %[[J:.+]] = arith.index_castui %[[J32]] : i32 to index
// CHECK:             %[[I32:.+]] = arith.divui %[[L32]], %[[C32]] : i32
// CHECK:             %[[I:.+]] = arith.index_castui %[[I32]] : i32 to index
// CHECK:             %[[IS:.+]] = arith.muli %[[I]], %c1
// CHECK:             %[[IV:.+]] = arith.addi %c0, %[[IS]]
// CHECK:             %[[JS:.+]] = arith.muli %[[J]], %c1
// CHECK:             %[[JV:.+]] = arith.addi %c0, %[[JS]]
// CHECK:             memref.load %{{.+}}[%[[IV]], %[[JV]]] : memref<64x32xf32>
// CHECK:             math.tanh
// CHECK:             memref.store
// CHECK:           gpu.terminator
// CHECK-NOT:     scf.parallel
// B128-LABEL: func.func @elementwise
// B128:         threads(%{{.+}}, %{{.+}}, %{{.+}}) in (%{{.+}} = %c128
func.func @elementwise(%a: memref<64x32xf32>, %b: memref<64x32xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c32) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<64x32xf32>
    %y = math.tanh %x : f32
    memref.store %y, %b[%i, %j] : memref<64x32xf32>
    scf.reduce
  }
  return
}

// -----

// A row reduction: the parallel dimension is mapped, the reduction stays a
// sequential loop inside each thread.
// CHECK-LABEL: func.func @row_sum
// CHECK:         gpu.launch
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               arith.addf
// CHECK:           gpu.terminator
func.func @row_sum(%a: memref<8x100xf32>, %s: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c100 = arith.constant 100 : index
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    scf.for %k = %c0 to %c100 step %c1 {
      %x = memref.load %a[%i, %k] : memref<8x100xf32>
      %acc = memref.load %s[%i] : memref<8xf32>
      %sum = arith.addf %x, %acc : f32
      memref.store %sum, %s[%i] : memref<8xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Loops with steps and offsets map back to the original induction values;
// a sequential loop outside any scf.parallel stays in the host code.
// CHECK-LABEL: func.func @strided
// CHECK:         scf.for %{{.+}} = %c0 to %c3 step %c1
// CHECK-NOT:       gpu.launch
// CHECK:         gpu.launch
// CHECK:           %[[SCALED:.+]] = arith.muli %{{.+}}, %c2
// CHECK:           %[[IV:.+]] = arith.addi %c1, %[[SCALED]]
// CHECK:           memref.store %{{.+}}, %{{.+}}[%[[IV]]]
func.func @strided(%a: memref<9xf32>, %host: memref<3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c9 = arith.constant 9 : index
  %zero = arith.constant 0.0 : f32
  scf.for %k = %c0 to %c3 step %c1 {
    memref.store %zero, %host[%k] : memref<3xf32>
  }
  scf.parallel (%i) = (%c1) to (%c9) step (%c2) {
    memref.store %zero, %a[%i] : memref<9xf32>
    scf.reduce
  }
  return
}
