// kiln-cpu-collapse-contiguous-loops: an elementwise linalg.generic or a
// linalg.copy on buffers has the run of its last dims that every operand
// walks in order and densely collapsed into one dim.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-collapse-contiguous-loops | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>

// A table of 16 columns scaled: one loop over its 65536 elements.
// CHECK-LABEL: func.func @table(
// CHECK-SAME:      %[[T:.+]]: memref<4096x16xf32>, %[[O:.+]]: memref<4096x16xf32>)
// CHECK-DAG:     %[[TC:.+]] = memref.collapse_shape %[[T]] {{\[\[}}0, 1]] : memref<4096x16xf32> into memref<65536xf32>
// CHECK-DAG:     %[[OC:.+]] = memref.collapse_shape %[[O]] {{\[\[}}0, 1]] : memref<4096x16xf32> into memref<65536xf32>
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel"]{{.*}} ins(%[[TC]] : memref<65536xf32>) outs(%[[OC]] : memref<65536xf32>)
// CHECK:           arith.mulf
func.func @table(%t: memref<4096x16xf32>, %o: memref<4096x16xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<4096x16xf32>) outs(%o : memref<4096x16xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// A copy.
// CHECK-LABEL: func.func @copy(
// CHECK:         linalg.copy ins(%{{.+}} : memref<1024xf32>) outs(%{{.+}} : memref<1024xf32>)
func.func @copy(%t: memref<64x16xf32>, %o: memref<64x16xf32>) {
  linalg.copy ins(%t : memref<64x16xf32>) outs(%o : memref<64x16xf32>)
  return
}

// -----

// A bias added to every row: the bias walks the columns alone, so the
// rows and columns are no run of its dims, and the loop keeps both.
// CHECK-LABEL: func.func @bias(
// CHECK-NOT:     collapse_shape
// CHECK:         iterator_types = ["parallel", "parallel"]
func.func @bias(%x: memref<8x16xf32>, %b: memref<16xf32>, %o: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<8x16xf32>, memref<16xf32>) outs(%o : memref<8x16xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A bias per batch over [batch, rows, cols]: the rows and columns are one
// run in every operand (the bias has neither), the batch stays.
// CHECK-LABEL: func.func @per_batch(
// CHECK-DAG:     memref.collapse_shape %{{.+}} {{\[\[}}0], [1, 2]] : memref<4x8x16xf32> into memref<4x128xf32>
// CHECK:         iterator_types = ["parallel", "parallel"]
func.func @per_batch(%x: memref<4x8x16xf32>, %b: memref<4xf32>, %o: memref<4x8x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %b : memref<4x8x16xf32>, memref<4xf32>) outs(%o : memref<4x8x16xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A view of every other row is not dense over its rows: only each row's
// elements could be one run, and they already are one dim.
// CHECK-LABEL: func.func @strided(
// CHECK-NOT:     collapse_shape
func.func @strided(%t: memref<8x16xf32, strided<[32, 1]>>, %o: memref<8x16xf32>) {
  linalg.copy ins(%t : memref<8x16xf32, strided<[32, 1]>>) outs(%o : memref<8x16xf32>)
  return
}

// -----

// A transposing loop, a reduction and a loop reading its indices keep
// their dims.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     collapse_shape
func.func @kept(%t: memref<8x16xf32>, %o: memref<16x8xf32>, %r: memref<8xf32>, %i: memref<8x16xindex>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<8x16xf32>) outs(%o : memref<16x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%t : memref<8x16xf32>) outs(%r : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      outs(%i : memref<8x16xindex>) {
  ^bb0(%b: index):
    %j = linalg.index 1 : index
    linalg.yield %j : index
  }
  return
}

// -----

// A strided view of rank 0 broadcast over the loop (a scalar cut out of an
// argument) leaves the loop as it is.
// CHECK-LABEL: func.func @strided_scalar(
// CHECK-NOT:     collapse_shape %{{.+}} {{\[\[}}0, 1]]
func.func @strided_scalar(%x: memref<3x4xf64>, %o: memref<3x3xf64>) {
  %s = memref.subview %x[1, 2] [1, 1] [1, 1] : memref<3x4xf64> to memref<1x1xf64, strided<[4, 1], offset: 6>>
  %c = memref.collapse_shape %s [] : memref<1x1xf64, strided<[4, 1], offset: 6>> into memref<f64, strided<[], offset: 6>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<f64, strided<[], offset: 6>>) outs(%o : memref<3x3xf64>) {
  ^bb0(%in: f64, %out: f64):
    linalg.yield %in : f64
  }
  return
}

// -----

// A quantized residual addition written in place, into the buffer it also
// reads: that buffer is collapsed once, so the loop reads and writes
// through one view (two views are two pointers to LLVM, whose vectorizer
// then checks at run time whether they overlap, and they always do).
// CHECK-LABEL: func.func @in_place(
// CHECK-SAME:      %[[X:.+]]: memref<1x56x56x256xf32>, %[[O:.+]]: memref<1x56x56x256xf32>)
// CHECK-DAG:     %[[XC:.+]] = memref.collapse_shape %[[X]] {{\[\[}}0, 1, 2, 3]]
// CHECK-DAG:     %[[OC:.+]] = memref.collapse_shape %[[O]] {{\[\[}}0, 1, 2, 3]]
// CHECK-NOT:     memref.collapse_shape
// CHECK:         linalg.generic {{.*}} ins(%[[XC]], %[[OC]] : memref<802816xf32>, memref<802816xf32>) outs(%[[OC]] : memref<802816xf32>)
func.func @in_place(%x: memref<1x56x56x256xf32>, %o: memref<1x56x56x256xf32>) {
  %s = arith.constant 0.0143 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %o : memref<1x56x56x256xf32>, memref<1x56x56x256xf32>) outs(%o : memref<1x56x56x256xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %q = arith.divf %a, %s : f32
    %r = math.roundeven %q : f32
    %t = arith.addf %r, %b : f32
    linalg.yield %t : f32
  }
  return
}
