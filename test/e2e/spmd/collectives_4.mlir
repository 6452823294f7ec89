// RANKS: 4
// Collectives over groups of 2 and of 4 on 4 ranks, compiled and run
// through MPI by kiln-spmd-check, against the evaluator.
// RUN: kiln-opt %s | kiln-opt
// RUN: kiln-compile %s -o %t.kmod

func.func @pairs_and_all(%x: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<16x2xf32>, tensor<1x2xf32>, tensor<4x2xf32>) {
  %s = kiln.all_reduce %x, kind = sum, groups = [[0, 2], [3, 1]] : tensor<4x2xf32>
  %m = kiln.all_reduce %x, kind = max, groups = [[0, 1, 2, 3]] : tensor<4x2xf32>
  %g = kiln.all_gather %x, dim = 0, groups = [[3, 2, 1, 0]] : (tensor<4x2xf32>) -> tensor<16x2xf32>
  %r = kiln.reduce_scatter %x, kind = sum, dim = 0, groups = [[0, 1, 2, 3]] : (tensor<4x2xf32>) -> tensor<1x2xf32>
  %b = kiln.collective_broadcast %x, root = 1, groups = [[0, 1], [2, 3]] : tensor<4x2xf32>
  return %s, %m, %g, %r, %b : tensor<4x2xf32>, tensor<4x2xf32>, tensor<16x2xf32>, tensor<1x2xf32>, tensor<4x2xf32>
}

func.func @ring(%x: tensor<3x4xi32>) -> (tensor<3x4xi32>, tensor<3x16xi32>, tensor<i64>) {
  %p = kiln.collective_permute %x, pairs = [0, 1, 1, 2, 2, 3, 3, 0] : tensor<3x4xi32>
  %t = kiln.all_to_all %x, split_dim = 1, concat_dim = 1, groups = [[0, 1, 2, 3]] : (tensor<3x4xi32>) -> tensor<3x4xi32>
  %g = kiln.all_gather %t, dim = 1, groups = [[0, 1, 2, 3]] : (tensor<3x4xi32>) -> tensor<3x16xi32>
  %r = kiln.rank : tensor<i64>
  return %p, %g, %r : tensor<3x4xi32>, tensor<3x16xi32>, tensor<i64>
}

// The same ranks in the same order, split into pairs and as one group: two
// different sub-communicators.
func.func @same_table_other_groups(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = kiln.all_reduce %x, kind = sum, groups = [[1, 0], [3, 2]] : tensor<4xf32>
  %b = kiln.all_reduce %x, kind = sum, groups = [[1, 0, 3, 2]] : tensor<4xf32>
  %c = kiln.collective_broadcast %x, root = 1, groups = [[1, 0, 3, 2]] : tensor<4xf32>
  return %a, %b, %c : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
