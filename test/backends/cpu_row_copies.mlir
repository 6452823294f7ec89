// kiln-cpu-row-copies: a copy between buffers of unit stride in their last
// dim calls the module's row-copy function for its row length (one
// memref.copy per row, made once), in blocks of rows in parallel where
// large, with a loop around for leading dims that are not dense; a
// contiguous copy is one memref.copy, or chunks in parallel and the rest.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-row-copies | FileCheck %s

// 24 rows of 32 floats into rows of 96 (a concatenation in NHWC): the
// leading dims are dense on both sides, one call for all the rows. A second
// copy of the same row length calls the same function.
// CHECK-LABEL: func.func @rows(
// CHECK-SAME:      %[[A:.+]]: memref<4x6x32xf32>, %[[B:.+]]: memref<4x6x96xf32>, %[[C:.+]]: memref<24x64xf32>)
// CHECK:         %[[SV:.+]] = memref.subview %[[B]][0, 0, 64] [4, 6, 32] [1, 1, 1]
// CHECK:         %[[SRC:.+]] = memref.subview %[[A]][0, 0, 0] [4, 6, 32] [1, 1, 1] : memref<4x6x32xf32> to memref<4x6x32xf32, strided<[192, 32, 1]>>
// CHECK:         %[[SRC2:.+]] = memref.collapse_shape %[[SRC]] {{\[}}[0, 1], [2]] : memref<4x6x32xf32, strided<[192, 32, 1]>> into memref<24x32xf32, strided<[32, 1]>>
// CHECK:         %[[SRC3:.+]] = memref.subview %[[SRC2]][0, 0] [24, 32] [1, 1]
// CHECK:         %[[SRC4:.+]] = memref.cast %[[SRC3]] : {{.+}} to memref<?x32xf32, strided<[?, 1], offset: ?>>
// CHECK:         %[[DST:.+]] = memref.subview %[[SV]][0, 0, 0] [4, 6, 32] [1, 1, 1]
// CHECK:         %[[DST2:.+]] = memref.collapse_shape %[[DST]] {{\[}}[0, 1], [2]] : {{.+}} into memref<24x32xf32, strided<[96, 1], offset: 64>>
// CHECK:         %[[DST3:.+]] = memref.subview %[[DST2]][0, 0] [24, 32] [1, 1]
// CHECK:         %[[DST4:.+]] = memref.cast %[[DST3]] : {{.+}} to memref<?x32xf32, strided<[?, 1], offset: ?>>
// CHECK:         call @kiln_copy_rows_32xf32(%[[SRC4]], %[[DST4]])
// CHECK-NOT:     linalg.copy
// CHECK:         call @kiln_copy_rows_32xf32(
// CHECK:         return
// CHECK:       func.func private @kiln_copy_rows_32xf32(%[[S:.+]]: memref<?x32xf32, strided<[?, 1], offset: ?>>, %[[D:.+]]: memref<?x32xf32, strided<[?, 1], offset: ?>>) attributes {no_inline}
// CHECK:         %[[N:.+]] = memref.dim %[[S]], %{{.+}}
// CHECK:         scf.for %[[I:.+]] = %{{.+}} to %[[N]]
// CHECK:           %[[SR:.+]] = memref.subview %[[S]][%[[I]], 0] [1, 32] [1, 1] : memref<?x32xf32, strided<[?, 1], offset: ?>> to memref<32xf32, strided<[1], offset: ?>>
// CHECK:           %[[DR:.+]] = memref.subview %[[D]][%[[I]], 0] [1, 32] [1, 1] : memref<?x32xf32, strided<[?, 1], offset: ?>> to memref<32xf32, strided<[1], offset: ?>>
// CHECK:           memref.copy %[[SR]], %[[DR]]
// CHECK-NOT:   func.func private @kiln_copy_rows
func.func @rows(%a: memref<4x6x32xf32>, %b: memref<4x6x96xf32>, %c: memref<24x64xf32>) {
  %sv = memref.subview %b[0, 0, 64] [4, 6, 32] [1, 1, 1] : memref<4x6x96xf32> to memref<4x6x32xf32, strided<[576, 96, 1], offset: 64>>
  linalg.copy ins(%a : memref<4x6x32xf32>) outs(%sv : memref<4x6x32xf32, strided<[576, 96, 1], offset: 64>>)
  %flat = memref.collapse_shape %a [[0, 1], [2]] : memref<4x6x32xf32> into memref<24x32xf32>
  %sc = memref.subview %c[0, 32] [24, 32] [1, 1] : memref<24x64xf32> to memref<24x32xf32, strided<[64, 1], offset: 32>>
  linalg.copy ins(%flat : memref<24x32xf32>) outs(%sc : memref<24x32xf32, strided<[64, 1], offset: 32>>)
  return
}

// -----

// 1000 rows of 256 bytes: blocks of 256 rows in parallel, the last one 232
// rows; each iteration copies 256 x 64 elements (kiln.body_work).
// CHECK-LABEL: func.func @blocks(
// CHECK-DAG:     %[[FOUR:.+]] = arith.constant 4 : index
// CHECK-DAG:     %[[ROWS:.+]] = arith.constant 1000 : index
// CHECK-DAG:     %[[STEP:.+]] = arith.constant 256 : index
// CHECK:         scf.parallel (%[[K:.+]]) = (%{{.+}}) to (%[[FOUR]])
// CHECK:           %[[START:.+]] = arith.muli %[[K]], %[[STEP]] : index
// CHECK:           %[[LEFT:.+]] = arith.subi %[[ROWS]], %[[START]] : index
// CHECK:           %[[COUNT:.+]] = arith.minsi %[[LEFT]], %[[STEP]] : index
// CHECK:           memref.subview %{{.+}}[%[[START]], 0] [%[[COUNT]], 64] [1, 1]
// CHECK:           call @kiln_copy_rows_64xf32(
// CHECK:         } {kiln.body_work = 16384 : i64}
func.func @blocks(%a: memref<1000x64xf32>, %b: memref<1000x128xf32>) {
  %sv = memref.subview %b[0, 0] [1000, 64] [1, 1] : memref<1000x128xf32> to memref<1000x64xf32, strided<[128, 1]>>
  linalg.copy ins(%a : memref<1000x64xf32>) outs(%sv : memref<1000x64xf32, strided<[128, 1]>>)
  return
}

// -----

// Leading dims not dense over one another (the source is a slice of its
// second dim): a parallel loop over the first dim, each iteration one call
// for its 3 x 4 rows of 8 floats (96 elements).
// CHECK-LABEL: func.func @outer(
// CHECK:         scf.parallel (%[[I:.+]]) = (%{{.+}}) to (%{{.+}})
// CHECK:           memref.subview %{{.+}}[%[[I]], 0, 0, 0] [1, 3, 4, 8] [1, 1, 1, 1]
// CHECK:           memref.collapse_shape
// CHECK:           call @kiln_copy_rows_8xf32(
// CHECK:         } {kiln.body_work = 96 : i64}
func.func @outer(%x: memref<2x5x4x8xf32>, %y: memref<2x3x4x24xf32>) {
  %xs = memref.subview %x[0, 1, 0, 0] [2, 3, 4, 8] [1, 1, 1, 1] : memref<2x5x4x8xf32> to memref<2x3x4x8xf32, strided<[160, 32, 8, 1], offset: 32>>
  %ys = memref.subview %y[0, 0, 0, 0] [2, 3, 4, 8] [1, 1, 1, 1] : memref<2x3x4x24xf32> to memref<2x3x4x8xf32, strided<[288, 96, 24, 1]>>
  linalg.copy ins(%xs : memref<2x3x4x8xf32, strided<[160, 32, 8, 1], offset: 32>>) outs(%ys : memref<2x3x4x8xf32, strided<[288, 96, 24, 1]>>)
  return
}

// -----

// Contiguous copies: 40000 floats (160000 bytes) as two chunks of 16384 in
// parallel and the 7232 after them; 100 floats with a leading dim of size 1
// (of any stride) as one memref.copy; 6 x 32 dense floats collapsed into
// one dim. No row-copy function is made.
// CHECK-LABEL: func.func @contiguous(
// CHECK-SAME:      %[[A:.+]]: memref<40000xf32>, %[[B:.+]]: memref<80000xf32>, %[[C:.+]]: memref<1x100xf32>, %[[D:.+]]: memref<1x100xf32, strided<[7, 1], offset: 100>>, %[[E:.+]]: memref<6x32xf32>, %[[F:.+]]: memref<6x32xf32, strided<[32, 1], offset: 64>>)
// CHECK-DAG:     %[[TWO:.+]] = arith.constant 2 : index
// CHECK-DAG:     %[[CHUNK:.+]] = arith.constant 16384 : index
// CHECK:         scf.parallel (%[[K:.+]]) = (%{{.+}}) to (%[[TWO]])
// CHECK:           %[[AT:.+]] = arith.muli %[[K]], %[[CHUNK]] : index
// CHECK:           %[[S:.+]] = memref.subview %[[A]][%[[AT]]] [16384] [1]
// CHECK:           %[[T:.+]] = memref.subview %{{.+}}[%[[AT]]] [16384] [1]
// CHECK:           memref.copy %[[S]], %[[T]]
// CHECK:         } {kiln.body_work = 16384 : i64}
// CHECK:         %[[SR:.+]] = memref.subview %[[A]][32768] [7232] [1]
// CHECK:         %[[TR:.+]] = memref.subview %{{.+}}[32768] [7232] [1]
// CHECK:         memref.copy %[[SR]], %[[TR]]
// CHECK:         %[[C1:.+]] = memref.subview %[[C]][0, 0] [1, 100] [1, 1] : memref<1x100xf32> to memref<100xf32, strided<[1]>>
// CHECK:         %[[C2:.+]] = memref.subview %[[C1]][0] [100] [1]
// CHECK:         %[[D1:.+]] = memref.subview %[[D]][0, 0] [1, 100] [1, 1] : memref<1x100xf32, strided<[7, 1], offset: 100>> to memref<100xf32, strided<[1], offset: 100>>
// CHECK:         %[[D2:.+]] = memref.subview %[[D1]][0] [100] [1]
// CHECK:         memref.copy %[[C2]], %[[D2]]
// CHECK:         %[[E1:.+]] = memref.collapse_shape %[[E]] {{\[}}[0, 1]] : memref<6x32xf32> into memref<192xf32>
// CHECK:         %[[E2:.+]] = memref.subview %[[E1]][0] [192] [1]
// CHECK:         %[[F1:.+]] = memref.collapse_shape %[[F]] {{\[}}[0, 1]] : memref<6x32xf32, strided<[32, 1], offset: 64>> into memref<192xf32, strided<[1], offset: 64>>
// CHECK:         %[[F2:.+]] = memref.subview %[[F1]][0] [192] [1]
// CHECK:         memref.copy %[[E2]], %[[F2]]
// CHECK-NOT:     linalg.copy
// CHECK-NOT:   func.func private
func.func @contiguous(%a: memref<40000xf32>, %b: memref<80000xf32>, %c: memref<1x100xf32>, %d: memref<1x100xf32, strided<[7, 1], offset: 100>>,
                      %e: memref<6x32xf32>, %f: memref<6x32xf32, strided<[32, 1], offset: 64>>) {
  %sv = memref.subview %b[40000] [40000] [1] : memref<80000xf32> to memref<40000xf32, strided<[1], offset: 40000>>
  linalg.copy ins(%a : memref<40000xf32>) outs(%sv : memref<40000xf32, strided<[1], offset: 40000>>)
  linalg.copy ins(%c : memref<1x100xf32>) outs(%d : memref<1x100xf32, strided<[7, 1], offset: 100>>)
  linalg.copy ins(%e : memref<6x32xf32>) outs(%f : memref<6x32xf32, strided<[32, 1], offset: 64>>)
  return
}

// -----

// What stays a linalg.copy: rows of 12 bytes, a last dim of stride 2, i1
// elements, a dynamic shape, tensors.
// CHECK-LABEL: func.func @stays(
// CHECK-COUNT-5: linalg.copy
// CHECK-NOT:     call
// CHECK-NOT:   func.func private
func.func @stays(%a: memref<100x3xf32>, %b: memref<100x3xf32, strided<[8, 1]>>,
                 %c: memref<64xf32, strided<[2]>>, %d: memref<64xf32>,
                 %e: memref<4x64xi1>, %f: memref<4x64xi1, strided<[128, 1]>>,
                 %g: memref<?x64xf32>, %h: memref<?x64xf32, strided<[128, 1]>>,
                 %t: tensor<4x64xf32>, %u: tensor<4x64xf32>) -> tensor<4x64xf32> {
  linalg.copy ins(%a : memref<100x3xf32>) outs(%b : memref<100x3xf32, strided<[8, 1]>>)
  linalg.copy ins(%c : memref<64xf32, strided<[2]>>) outs(%d : memref<64xf32>)
  linalg.copy ins(%e : memref<4x64xi1>) outs(%f : memref<4x64xi1, strided<[128, 1]>>)
  linalg.copy ins(%g : memref<?x64xf32>) outs(%h : memref<?x64xf32, strided<[128, 1]>>)
  %r = linalg.copy ins(%t : tensor<4x64xf32>) outs(%u : tensor<4x64xf32>) -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}

// -----

// The source's rows are dims 2 and 3 (sizes 1 and 2, strides 12 and 6,
// dense over one another); dims 0 and 1 (sizes 1 and 2) are the loop
// around. The rows' view keeps dims 2 to 4 with their own strides and
// collapses dims 2 and 3: a rank-reducing subview left to infer its type
// dropped dim 2 and kept dim 1 (stride 24), and the collapse crashed.
// CHECK-LABEL: func.func @unit_dims_in_rows
// CHECK:         scf.parallel
// CHECK:           %[[ROWS:.+]] = memref.subview %{{.+}}[%{{.+}}, %{{.+}}, 0, 0, 0] [1, 1, 1, 2, 4] [1, 1, 1, 1, 1] : memref<1x2x1x2x4xf64, strided<[48, 24, 12, 6, 1], offset: 12>> to memref<1x2x4xf64, strided<[12, 6, 1], offset: ?>>
// CHECK:           memref.collapse_shape %[[ROWS]] {{\[}}[0, 1], [2]] : memref<1x2x4xf64, strided<[12, 6, 1], offset: ?>> into memref<2x4xf64, strided<[6, 1], offset: ?>>
// CHECK:           call @kiln_copy_rows_4xf64
func.func @unit_dims_in_rows(%a: memref<1x2x1x2x4xf64, strided<[48, 24, 12, 6, 1], offset: 12>>, %b: memref<1x2x1x2x4xf64>) {
  linalg.copy ins(%a : memref<1x2x1x2x4xf64, strided<[48, 24, 12, 6, 1], offset: 12>>) outs(%b : memref<1x2x1x2x4xf64>)
  return
}
