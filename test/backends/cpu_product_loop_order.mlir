// kiln-cpu-product-loop-order: a product left as loops, [b,] m, n, k,
// becomes a generic over [b,] m, k, n, so that the innermost loop walks rows
// of B and C; one that reads B as [n, k], or whose rows are not contiguous,
// keeps its order.
// RUN: kiln-opt %s --split-input-file --kiln-cpu-product-loop-order | FileCheck %s

// CHECK-DAG: #[[A:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[B:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @matmul_i32(
// CHECK-SAME:      %[[X:.+]]: memref<67x300xi32>, %[[Y:.+]]: memref<300x131xi32>, %[[Z:.+]]: memref<67x131xi32>)
// CHECK:         linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME:        ins(%[[X]], %[[Y]] : memref<67x300xi32>, memref<300x131xi32>) outs(%[[Z]] : memref<67x131xi32>)
// CHECK:           arith.muli
// CHECK:           arith.addi
// CHECK-NOT:     linalg.matmul
func.func @matmul_i32(%x: memref<67x300xi32>, %y: memref<300x131xi32>, %z: memref<67x131xi32>) {
  linalg.matmul ins(%x, %y : memref<67x300xi32>, memref<300x131xi32>) outs(%z : memref<67x131xi32>)
  return
}

// -----

// Batched, and A read transposed: the batch stays first, then m, k, n.
// CHECK-DAG: #[[BA:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[BB:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[BC:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[TA:.+]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-DAG: #[[TB:.+]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[TC:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @batch_and_transposed_a(
// CHECK:         linalg.generic {indexing_maps = [#[[BA]], #[[BB]], #[[BC]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}
// CHECK:           arith.mulf
// CHECK:         linalg.generic {indexing_maps = [#[[TA]], #[[TB]], #[[TC]]], iterator_types = ["parallel", "reduction", "parallel"]}
func.func @batch_and_transposed_a(%x: memref<3x37x40xf64>, %y: memref<3x40x19xf64>, %z: memref<3x37x19xf64>,
                                  %p: memref<40x23xi64>, %q: memref<40x29xi64>, %r: memref<23x29xi64>) {
  linalg.batch_matmul ins(%x, %y : memref<3x37x40xf64>, memref<3x40x19xf64>) outs(%z : memref<3x37x19xf64>)
  linalg.matmul_transpose_a ins(%p, %q : memref<40x23xi64>, memref<40x29xi64>) outs(%r : memref<23x29xi64>)
  return
}

// -----

// What keeps its order: B read as [n, k]; an output of stride 2 along n; a
// B of stride 2 along n; a product on tensors.
// CHECK-LABEL: func.func @stays(
// CHECK:         linalg.matmul_transpose_b
// CHECK:         linalg.matmul ins({{.+}}) outs({{.+}} : memref<8x16xf32, strided<[32, 2]>>)
// CHECK:         linalg.matmul ins({{.+}} : memref<8x4xf32>, memref<4x16xf32, strided<[32, 2]>>)
// CHECK:         linalg.matmul ins({{.+}} : tensor<8x4xf32>, tensor<4x16xf32>)
// CHECK-NOT:     linalg.generic
func.func @stays(%a: memref<8x4xf32>, %b: memref<4x16xf32>, %bt: memref<16x4xf32>, %c: memref<8x16xf32>,
                 %cs: memref<8x16xf32, strided<[32, 2]>>, %bs: memref<4x16xf32, strided<[32, 2]>>,
                 %ta: tensor<8x4xf32>, %tb: tensor<4x16xf32>, %tc: tensor<8x16xf32>) -> tensor<8x16xf32> {
  linalg.matmul_transpose_b ins(%a, %bt : memref<8x4xf32>, memref<16x4xf32>) outs(%c : memref<8x16xf32>)
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x16xf32>) outs(%cs : memref<8x16xf32, strided<[32, 2]>>)
  linalg.matmul ins(%a, %bs : memref<8x4xf32>, memref<4x16xf32, strided<[32, 2]>>) outs(%c : memref<8x16xf32>)
  %r = linalg.matmul ins(%ta, %tb : tensor<8x4xf32>, tensor<4x16xf32>) outs(%tc : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
