// kiln-shared-concat-buffers: concatenations whose inputs are each a prefix
// of the longest one's (a DenseNet block's) become one chain of insertions
// into a tensor of the longest one's shape, each input inserted once after
// its definition; the shorter ones are extracts of the chain. Other
// concatenations stay.
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-shared-concat-buffers))' | FileCheck %s
// RUN: kiln-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kiln-shared-concat-buffers),one-shot-bufferize{bufferize-function-boundaries})' | FileCheck %s --check-prefix=BUF

// A layer that reads its input (two of its channels, copied).
func.func private @layer(%a: tensor<1x4x4x8xf32>) -> tensor<1x4x4x2xf32> {
  %s = tensor.extract_slice %a[0, 0, 0, 0] [1, 4, 4, 2] [1, 1, 1, 1] : tensor<1x4x4x8xf32> to tensor<1x4x4x2xf32>
  %e = tensor.empty() : tensor<1x4x4x2xf32>
  %c = linalg.copy ins(%s : tensor<1x4x4x2xf32>) outs(%e : tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return %c : tensor<1x4x4x2xf32>
}
func.func private @layer12(%a: tensor<1x4x4x12xf32>) -> tensor<1x4x4x2xf32> {
  %s = tensor.extract_slice %a[0, 0, 0, 10] [1, 4, 4, 2] [1, 1, 1, 1] : tensor<1x4x4x12xf32> to tensor<1x4x4x2xf32>
  %e = tensor.empty() : tensor<1x4x4x2xf32>
  %c = linalg.copy ins(%s : tensor<1x4x4x2xf32>) outs(%e : tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return %c : tensor<1x4x4x2xf32>
}

// Three layers; the second and third concatenate all earlier outputs.
// CHECK-LABEL: func.func @dense(
// CHECK-SAME:    %[[X:.*]]: tensor<1x4x4x8xf32>
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<1x4x4x12xf32>
// CHECK-NEXT:    %[[B1:.*]] = tensor.insert_slice %[[X]] into %[[E]][0, 0, 0, 0] [1, 4, 4, 8] [1, 1, 1, 1]
// CHECK-NEXT:    %[[F1:.*]] = call @layer(%[[X]])
// CHECK-NEXT:    %[[B2:.*]] = tensor.insert_slice %[[F1]] into %[[B1]][0, 0, 0, 8] [1, 4, 4, 2] [1, 1, 1, 1]
// CHECK-NEXT:    %[[C2:.*]] = tensor.extract_slice %[[B2]][0, 0, 0, 0] [1, 4, 4, 10] [1, 1, 1, 1] : tensor<1x4x4x12xf32> to tensor<1x4x4x10xf32>
// CHECK-NEXT:    %[[S:.*]] = tensor.extract_slice %[[C2]][0, 0, 0, 0] [1, 4, 4, 8]
// CHECK-NEXT:    %[[F2:.*]] = call @layer(%[[S]])
// CHECK-NEXT:    %[[B3:.*]] = tensor.insert_slice %[[F2]] into %[[B2]][0, 0, 0, 10] [1, 4, 4, 2] [1, 1, 1, 1]
// CHECK-NOT:     tensor.empty
// CHECK-NOT:     tensor.insert_slice
// CHECK:         call @layer12(%[[B3]])
// CHECK:         return %[[B3]]
// Bufferized: one buffer, each input copied into it once (before, a
// buffer per concatenation and x and f1 copied twice).
// BUF-LABEL: func.func @dense(
// BUF-NEXT:    %[[A:.*]] = memref.alloc() {{.*}} : memref<1x4x4x12xf32>
// BUF-NOT:     memref.alloc
// BUF:         memref.copy %arg0, %{{.*}}
// BUF-NOT:     memref.alloc
// BUF:         memref.copy
// BUF-NOT:     memref.alloc
// BUF:         memref.copy
// BUF-NOT:     memref.{{alloc|copy}}
// BUF:         return %[[A]]
func.func @dense(%x: tensor<1x4x4x8xf32>) -> tensor<1x4x4x12xf32> {
  %f1 = call @layer(%x) : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x2xf32>
  %e2 = tensor.empty() : tensor<1x4x4x10xf32>
  %a2 = tensor.insert_slice %x into %e2[0, 0, 0, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x4x4x8xf32> into tensor<1x4x4x10xf32>
  %c2 = tensor.insert_slice %f1 into %a2[0, 0, 0, 8] [1, 4, 4, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> into tensor<1x4x4x10xf32>
  %s = tensor.extract_slice %c2[0, 0, 0, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x4x4x10xf32> to tensor<1x4x4x8xf32>
  %f2 = call @layer(%s) : (tensor<1x4x4x8xf32>) -> tensor<1x4x4x2xf32>
  %e3 = tensor.empty() : tensor<1x4x4x12xf32>
  %a3 = tensor.insert_slice %x into %e3[0, 0, 0, 0] [1, 4, 4, 8] [1, 1, 1, 1] : tensor<1x4x4x8xf32> into tensor<1x4x4x12xf32>
  %b3 = tensor.insert_slice %f1 into %a3[0, 0, 0, 8] [1, 4, 4, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> into tensor<1x4x4x12xf32>
  %c3 = tensor.insert_slice %f2 into %b3[0, 0, 0, 10] [1, 4, 4, 2] [1, 1, 1, 1] : tensor<1x4x4x2xf32> into tensor<1x4x4x12xf32>
  %g = call @layer12(%c3) : (tensor<1x4x4x12xf32>) -> tensor<1x4x4x2xf32>
  return %c3 : tensor<1x4x4x12xf32>
}

// -----

// Not prefixes of one another (the inputs in another order), a single
// concatenation, and one along another dim: unchanged.
// CHECK-LABEL: func.func @unrelated(
// CHECK-COUNT-3: tensor.empty
// CHECK-NOT:     tensor.extract_slice
func.func @unrelated(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<4x4xf32>) {
  %e1 = tensor.empty() : tensor<2x8xf32>
  %a1 = tensor.insert_slice %x into %e1[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %c1 = tensor.insert_slice %y into %a1[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %e2 = tensor.empty() : tensor<2x8xf32>
  %a2 = tensor.insert_slice %y into %e2[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %c2 = tensor.insert_slice %x into %a2[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %e3 = tensor.empty() : tensor<4x4xf32>
  %a3 = tensor.insert_slice %x into %e3[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x4xf32>
  %c3 = tensor.insert_slice %y into %a3[2, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x4xf32>
  return %c1, %c2, %c3 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<4x4xf32>
}

// -----

// Insertions with a gap between them (rows 2 to 4 never written): not a
// concatenation, so the other has no family; unchanged.
// CHECK-LABEL: func.func @gap(
// CHECK-COUNT-2: tensor.empty
// CHECK-NOT:     tensor.extract_slice
func.func @gap(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> (tensor<4x4xf32>, tensor<6x4xf32>) {
  %e1 = tensor.empty() : tensor<4x4xf32>
  %a1 = tensor.insert_slice %x into %e1[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x4xf32>
  %c1 = tensor.insert_slice %y into %a1[2, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<4x4xf32>
  %e2 = tensor.empty() : tensor<6x4xf32>
  %a2 = tensor.insert_slice %x into %e2[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<6x4xf32>
  %c2 = tensor.insert_slice %y into %a2[4, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<6x4xf32>
  return %c1, %c2 : tensor<4x4xf32>, tensor<6x4xf32>
}
