// RANKS: 4
// Group-local collectives on 4 ranks, compiled and run through MPI by
// kiln-spmd-check, against the evaluator: two stages of two ranks each, as
// pipeline x tensor parallelism has them. Each stage runs its own
// collectives over its pair inside a kiln.cond the other stage skips (a
// different number of them, synchronous and started), then the stages meet
// in a permutation and an all-reduce of every rank.
// RUN: kiln-opt %s | kiln-opt
// RUN: kiln-compile %s -o %t.kmod

func.func @two_stages(%x: tensor<4x6xf32>, %w: tensor<6x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %r = kiln.rank : tensor<i64>
  %two = kiln.constant dense<2> : tensor<i64>
  %first = kiln.compare lt, %r, %two : tensor<i64>
  // Stage 0: a row-parallel product (a partial sum all-reduced in the pair)
  // and a max over the pair. Stage 1: an all-gather and a reduce-scatter.
  %h = kiln.cond %first, (%x, %w) : tensor<i1>, (tensor<4x6xf32>, tensor<6x4xf32>) -> tensor<4x4xf32> {
  ^bb0(%a: tensor<4x6xf32>, %b: tensor<6x4xf32>):
    %p = kiln.matmul %a, %b : tensor<4x6xf32>, tensor<6x4xf32>
    %s = kiln.all_reduce_start %p, kind = sum, groups = [[0, 1], [2, 3]] : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %t = kiln.tanh %p : tensor<4x4xf32>
    %m = kiln.all_reduce %t, kind = max, groups = [[1, 0], [3, 2]] : tensor<4x4xf32>
    %d = kiln.collective_wait %s, %p : tensor<4x4xf32>, tensor<4x4xf32>
    %y = kiln.add %d, %m : tensor<4x4xf32>
    kiln.yield %y : tensor<4x4xf32>
  } else {
  ^bb0(%a: tensor<4x6xf32>, %b: tensor<6x4xf32>):
    %g = kiln.all_gather %b, dim = 1, groups = [[0, 1], [2, 3]] : (tensor<6x4xf32>) -> tensor<6x8xf32>
    %p = kiln.matmul %a, %g : tensor<4x6xf32>, tensor<6x8xf32>
    %s = kiln.reduce_scatter %p, kind = sum, dim = 1, groups = [[0, 1], [2, 3]] : (tensor<4x8xf32>) -> tensor<4x4xf32>
    kiln.yield %s : tensor<4x4xf32>
  }
  %sent = kiln.collective_permute %h, pairs = [0, 2, 1, 3] : tensor<4x4xf32>
  %all = kiln.all_reduce %h, kind = mean, groups = [[0, 1, 2, 3]] : tensor<4x4xf32>
  return %h, %sent, %all : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}

// The stages' pairs and the columns {0, 2}, {1, 3} interleaved in a loop:
// each rank is in one pair and one column and uses them in one order.
func.func @pairs_and_columns(%x: tensor<8xf32>) -> tensor<8xf32> {
  %out = kiln.for 3 iterations (%x) : (tensor<8xf32>) {
  ^bb0(%k: tensor<i64>, %acc: tensor<8xf32>):
    %r = kiln.rank : tensor<i64>
    %two = kiln.constant dense<2> : tensor<i64>
    %first = kiln.compare lt, %r, %two : tensor<i64>
    %c = kiln.all_reduce %acc, kind = sum, groups = [[0, 2], [1, 3]] : tensor<8xf32>
    %half = kiln.constant dense<5.000000e-01> : tensor<8xf32>
    %h = kiln.mul %c, %half : tensor<8xf32>
    %y = kiln.cond %first, (%h) : tensor<i1>, (tensor<8xf32>) -> tensor<8xf32> {
    ^bb0(%a: tensor<8xf32>):
      %s = kiln.all_reduce %a, kind = max, groups = [[0, 1], [2, 3]] : tensor<8xf32>
      kiln.yield %s : tensor<8xf32>
    } else {
    ^bb0(%a: tensor<8xf32>):
      kiln.yield %a : tensor<8xf32>
    }
    kiln.yield %y : tensor<8xf32>
  }
  return %out : tensor<8xf32>
}
