// The collective ops print and parse back unchanged.
// RUN: kiln-opt %s | kiln-opt | FileCheck %s

// CHECK-LABEL: func.func @sync
func.func @sync(%x: tensor<4x6xf32>, %i: tensor<8xi32>) -> (tensor<4x6xf32>, tensor<8x6xf32>, tensor<2x6xf32>, tensor<4x6xf32>, tensor<2x12xf32>, tensor<8xi32>, tensor<i64>) {
  // CHECK: kiln.all_reduce %{{.*}}, kind = mean, groups = {{\[\[}}0, 1], [2, 3]] : tensor<4x6xf32>
  %a = kiln.all_reduce %x, kind = mean, groups = [[0, 1], [2, 3]] : tensor<4x6xf32>
  // CHECK: kiln.all_gather %{{.*}}, dim = 0, groups = {{\[\[}}0, 1]] : (tensor<4x6xf32>) -> tensor<8x6xf32>
  %g = kiln.all_gather %x, dim = 0, groups = [[0, 1]] : (tensor<4x6xf32>) -> tensor<8x6xf32>
  // CHECK: kiln.reduce_scatter %{{.*}}, kind = sum, dim = 0, groups = {{\[\[}}1, 0]] : (tensor<4x6xf32>) -> tensor<2x6xf32>
  %r = kiln.reduce_scatter %x, kind = sum, dim = 0, groups = [[1, 0]] : (tensor<4x6xf32>) -> tensor<2x6xf32>
  // CHECK: kiln.collective_broadcast %{{.*}}, root = 1, groups = {{\[\[}}0, 1]] : tensor<4x6xf32>
  %b = kiln.collective_broadcast %x, root = 1, groups = [[0, 1]] : tensor<4x6xf32>
  // CHECK: kiln.all_to_all %{{.*}}, split_dim = 0, concat_dim = 1, groups = {{\[\[}}0, 1]] : (tensor<4x6xf32>) -> tensor<2x12xf32>
  %t = kiln.all_to_all %x, split_dim = 0, concat_dim = 1, groups = [[0, 1]] : (tensor<4x6xf32>) -> tensor<2x12xf32>
  // CHECK: kiln.collective_permute %{{.*}}, pairs = [0, 1, 1, 0] : tensor<8xi32>
  %p = kiln.collective_permute %i, pairs = [0, 1, 1, 0] : tensor<8xi32>
  // CHECK: kiln.rank : tensor<i64>
  %k = kiln.rank : tensor<i64>
  return %a, %g, %r, %b, %t, %p, %k : tensor<4x6xf32>, tensor<8x6xf32>, tensor<2x6xf32>, tensor<4x6xf32>, tensor<2x12xf32>, tensor<8xi32>, tensor<i64>
}

// CHECK-LABEL: func.func @async
func.func @async(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<8x6xf32>, tensor<4x3xf32>) {
  // CHECK: %[[P:.*]] = kiln.all_reduce_start %[[X:.*]], kind = sum, groups = {{\[\[}}0, 1]] : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = kiln.all_reduce_start %x, kind = sum, groups = [[0, 1]] : (tensor<4x6xf32>) -> tensor<4x6xf32>
  %q = kiln.all_gather_start %x, dim = 0, groups = [[0, 1]] : (tensor<4x6xf32>) -> tensor<8x6xf32>
  %r = kiln.reduce_scatter_start %x, kind = max, dim = 1, groups = [[0, 1]] : (tensor<4x6xf32>) -> tensor<4x3xf32>
  %y = kiln.exp %x : tensor<4x6xf32>
  // CHECK: kiln.collective_wait %[[P]], %[[X]] : tensor<4x6xf32>, tensor<4x6xf32>
  %a = kiln.collective_wait %p, %x : tensor<4x6xf32>, tensor<4x6xf32>
  %b = kiln.collective_wait %q, %x : tensor<8x6xf32>, tensor<4x6xf32>
  %c = kiln.collective_wait %r, %x : tensor<4x3xf32>, tensor<4x6xf32>
  return %a, %b, %c : tensor<4x6xf32>, tensor<8x6xf32>, tensor<4x3xf32>
}
