// kiln-decompose-collectives: every collective in a flat form the runtime's
// communicator runs (start + wait, sum/max/min, leading dimension).
// RUN: kiln-opt %s --split-input-file --kiln-decompose-collectives | FileCheck %s

// CHECK-LABEL: func.func @mean
// CHECK: %[[P:.*]] = kiln.all_reduce_start %[[X:.*]], kind = sum, groups = {{\[\[}}0, 1, 2]] : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[W:.*]] = kiln.collective_wait %[[P]], %[[X]]
// CHECK: %[[S:.*]] = kiln.constant dense<3.000000e+00> : tensor<2x3xf32>
// CHECK: %[[M:.*]] = kiln.div %[[W]], %[[S]]
// CHECK: return %[[M]]
func.func @mean(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %a = kiln.all_reduce %x, kind = mean, groups = [[0, 1, 2]] : tensor<2x3xf32>
  return %a : tensor<2x3xf32>
}

// -----

// An asynchronous mean keeps the computation between start and wait.
// CHECK-LABEL: func.func @async_mean
// CHECK: %[[P:.*]] = kiln.reduce_scatter_start %{{.*}}, kind = sum, dim = 0
// CHECK-NEXT: kiln.exp
// CHECK-NEXT: %[[W:.*]] = kiln.collective_wait %[[P]]
// CHECK: kiln.div %[[W]]
func.func @async_mean(%x: tensor<4xf64>) -> (tensor<2xf64>, tensor<4xf64>) {
  %p = kiln.reduce_scatter_start %x, kind = mean, dim = 0, groups = [[0, 1]] : (tensor<4xf64>) -> tensor<2xf64>
  %e = kiln.exp %x : tensor<4xf64>
  %w = kiln.collective_wait %p, %x : tensor<2xf64>, tensor<4xf64>
  return %w, %e : tensor<2xf64>, tensor<4xf64>
}

// -----

// CHECK-LABEL: func.func @gather_inner
// CHECK: %[[T:.*]] = kiln.transpose %{{.*}}, permutation = [1, 0, 2] : tensor<2x3x4xf32>
// CHECK: %[[P:.*]] = kiln.all_gather_start %[[T]], dim = 0, groups = {{\[\[}}1, 0]] : (tensor<3x2x4xf32>) -> tensor<6x2x4xf32>
// CHECK: %[[W:.*]] = kiln.collective_wait %[[P]], %[[T]]
// CHECK: kiln.transpose %[[W]], permutation = [1, 0, 2] : tensor<6x2x4xf32>
func.func @gather_inner(%x: tensor<2x3x4xf32>) -> tensor<2x6x4xf32> {
  %g = kiln.all_gather %x, dim = 1, groups = [[1, 0]] : (tensor<2x3x4xf32>) -> tensor<2x6x4xf32>
  return %g : tensor<2x6x4xf32>
}

// -----

// CHECK-LABEL: func.func @scatter_last
// CHECK: %[[T:.*]] = kiln.transpose %{{.*}}, permutation = [2, 0, 1] : tensor<2x3x4xi32>
// CHECK: kiln.reduce_scatter_start %[[T]], kind = max, dim = 0, groups = {{\[\[}}0, 1]] : (tensor<4x2x3xi32>) -> tensor<2x2x3xi32>
// CHECK: kiln.transpose %{{.*}}, permutation = [1, 2, 0] : tensor<2x2x3xi32>
func.func @scatter_last(%x: tensor<2x3x4xi32>) -> tensor<2x3x2xi32> {
  %s = kiln.reduce_scatter %x, kind = max, dim = 2, groups = [[0, 1]] : (tensor<2x3x4xi32>) -> tensor<2x3x2xi32>
  return %s : tensor<2x3x2xi32>
}

// -----

// split 1, concat 0 on 2 ranks: blocks along dim 1 exchanged as leading
// blocks, the received block index then merged in front of dim 0.
// CHECK-LABEL: func.func @all_to_all
// CHECK: %[[T:.*]] = kiln.transpose %{{.*}}, permutation = [1, 0] : tensor<3x4xf32>
// CHECK: %[[A:.*]] = kiln.all_to_all %[[T]], split_dim = 0, concat_dim = 0, groups = {{\[\[}}0, 1]] : (tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK: %[[B:.*]] = kiln.reshape %[[A]] : (tensor<4x3xf32>) -> tensor<2x2x3xf32>
// CHECK: %[[C:.*]] = kiln.transpose %[[B]], permutation = [0, 2, 1] : tensor<2x2x3xf32>
// CHECK: kiln.reshape %[[C]] : (tensor<2x3x2xf32>) -> tensor<6x2xf32>
func.func @all_to_all(%x: tensor<3x4xf32>) -> tensor<6x2xf32> {
  %t = kiln.all_to_all %x, split_dim = 1, concat_dim = 0, groups = [[0, 1]] : (tensor<3x4xf32>) -> tensor<6x2xf32>
  return %t : tensor<6x2xf32>
}

// -----

// Already flat: broadcast, permute and leading-dimension forms stay.
// CHECK-LABEL: func.func @flat
// CHECK-NEXT: kiln.collective_broadcast
// CHECK-NEXT: kiln.collective_permute
// CHECK-NEXT: kiln.all_to_all %{{.*}}, split_dim = 0, concat_dim = 0
// CHECK-NEXT: return
func.func @flat(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %b = kiln.collective_broadcast %x, root = 0, groups = [[0, 1]] : tensor<4xf32>
  %p = kiln.collective_permute %x, pairs = [0, 1] : tensor<4xf32>
  %t = kiln.all_to_all %x, split_dim = 0, concat_dim = 0, groups = [[0, 1]] : (tensor<4xf32>) -> tensor<4xf32>
  return %b, %p, %t : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
