// A rank-0 predicate selects whole tensors (kiln.select is not Elementwise,
// whose trait would reject the mixed ranks).
// RUN: kiln-opt %s | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @select_whole_tensor
// CHECK-SAME: (%[[P:.+]]: tensor<i1>, %[[A:.+]]: tensor<2x3xf32>, %[[B:.+]]: tensor<2x3xf32>)
// CHECK: kiln.select %[[P]], %[[A]], %[[B]] : tensor<i1>, tensor<2x3xf32>
func.func @select_whole_tensor(%p: tensor<i1>, %a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = kiln.select %p, %a, %b : tensor<i1>, tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
