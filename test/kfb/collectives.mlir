// Collectives, their replica groups and the asynchronous forms survive a
// trip through .kfb.
// RUN: kiln-translate --mlir-to-kfb %s -o %t.kfb
// RUN: kiln-translate --kfb-to-mlir %t.kfb | FileCheck %s

// CHECK-LABEL: func.func @step
// CHECK: kiln.all_reduce %{{.*}}, kind = mean, groups = {{\[\[}}0, 2], [1, 3]] : tensor<4x6xf32>
// CHECK: kiln.reduce_scatter %{{.*}}, kind = min, dim = 1, groups = {{\[\[}}0, 1], [2, 3]] : (tensor<4x6xf32>) -> tensor<4x3xf32>
// CHECK: kiln.all_to_all %{{.*}}, split_dim = 0, concat_dim = 1, groups = {{\[\[}}3, 2, 1, 0]] : (tensor<4x6xf32>) -> tensor<1x24xf32>
// CHECK: kiln.collective_broadcast %{{.*}}, root = 1, groups = {{\[\[}}0, 1], [2, 3]] : tensor<4x6xf32>
// CHECK: kiln.collective_permute %{{.*}}, pairs = [0, 1, 1, 2, 2, 3, 3, 0] : tensor<4x6xf32>
// CHECK: kiln.rank : tensor<i64>
// CHECK: %[[P:.*]] = kiln.all_gather_start %[[X:[^,]*]], dim = 0, groups = {{\[\[}}0, 1, 2, 3]] : (tensor<4x6xf32>) -> tensor<16x6xf32>
// CHECK: kiln.collective_wait %[[P]], %[[X]] : tensor<16x6xf32>, tensor<4x6xf32>
func.func @step(%x: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x3xf32>, tensor<1x24xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<i64>, tensor<16x6xf32>) {
  %a = kiln.all_reduce %x, kind = mean, groups = [[0, 2], [1, 3]] : tensor<4x6xf32>
  %r = kiln.reduce_scatter %x, kind = min, dim = 1, groups = [[0, 1], [2, 3]] : (tensor<4x6xf32>) -> tensor<4x3xf32>
  %t = kiln.all_to_all %x, split_dim = 0, concat_dim = 1, groups = [[3, 2, 1, 0]] : (tensor<4x6xf32>) -> tensor<1x24xf32>
  %b = kiln.collective_broadcast %x, root = 1, groups = [[0, 1], [2, 3]] : tensor<4x6xf32>
  %p = kiln.collective_permute %x, pairs = [0, 1, 1, 2, 2, 3, 3, 0] : tensor<4x6xf32>
  %k = kiln.rank : tensor<i64>
  %s = kiln.all_gather_start %x, dim = 0, groups = [[0, 1, 2, 3]] : (tensor<4x6xf32>) -> tensor<16x6xf32>
  %g = kiln.collective_wait %s, %x : tensor<16x6xf32>, tensor<4x6xf32>
  return %a, %r, %t, %b, %p, %k, %g : tensor<4x6xf32>, tensor<4x3xf32>, tensor<1x24xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<i64>, tensor<16x6xf32>
}
