// RANKS: 2
// Every collective on 2 ranks, compiled and run through MPI by
// kiln-spmd-check (test/e2e/spmd/CMakeLists.txt), against the evaluator.
// RUN: kiln-opt %s | kiln-opt
// RUN: kiln-compile %s -o %t.kmod

func.func @reductions(%x: tensor<3x4xf32>, %i: tensor<5xi32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<5xi32>, tensor<5xi32>) {
  %s = kiln.all_reduce %x, kind = sum, groups = [[0, 1]] : tensor<3x4xf32>
  %m = kiln.all_reduce %x, kind = mean, groups = [[1, 0]] : tensor<3x4xf32>
  %a = kiln.all_reduce %i, kind = max, groups = [[0, 1]] : tensor<5xi32>
  %b = kiln.all_reduce %i, kind = min, groups = [[0, 1]] : tensor<5xi32>
  return %s, %m, %a, %b : tensor<3x4xf32>, tensor<3x4xf32>, tensor<5xi32>, tensor<5xi32>
}

func.func @gather_scatter(%x: tensor<2x3x4xf64>) -> (tensor<2x6x4xf64>, tensor<2x3x2xf64>, tensor<1x3x4xf64>) {
  %g = kiln.all_gather %x, dim = 1, groups = [[1, 0]] : (tensor<2x3x4xf64>) -> tensor<2x6x4xf64>
  %s = kiln.reduce_scatter %x, kind = sum, dim = 2, groups = [[0, 1]] : (tensor<2x3x4xf64>) -> tensor<2x3x2xf64>
  %m = kiln.reduce_scatter %x, kind = mean, dim = 0, groups = [[1, 0]] : (tensor<2x3x4xf64>) -> tensor<1x3x4xf64>
  return %g, %s, %m : tensor<2x6x4xf64>, tensor<2x3x2xf64>, tensor<1x3x4xf64>
}

func.func @exchange(%x: tensor<4x6xi64>, %p: tensor<7xi1>) -> (tensor<4x6xi64>, tensor<2x12xi64>, tensor<8x3xi64>, tensor<7xi1>, tensor<i64>) {
  %b = kiln.collective_broadcast %x, root = 1, groups = [[0, 1]] : tensor<4x6xi64>
  %t = kiln.all_to_all %x, split_dim = 0, concat_dim = 1, groups = [[0, 1]] : (tensor<4x6xi64>) -> tensor<2x12xi64>
  %u = kiln.all_to_all %x, split_dim = 1, concat_dim = 0, groups = [[1, 0]] : (tensor<4x6xi64>) -> tensor<8x3xi64>
  %q = kiln.collective_permute %p, pairs = [0, 1] : tensor<7xi1>
  %r = kiln.rank : tensor<i64>
  return %b, %t, %u, %q, %r : tensor<4x6xi64>, tensor<2x12xi64>, tensor<8x3xi64>, tensor<7xi1>, tensor<i64>
}

// Asynchronous forms with computation in between, and collectives in a
// loop: a ring pass accumulating every rank's input.
func.func @async_and_loops(%x: tensor<16xf32>) -> (tensor<16xf32>, tensor<32xf32>, tensor<16xf32>) {
  %p = kiln.all_reduce_start %x, kind = sum, groups = [[0, 1]] : (tensor<16xf32>) -> tensor<16xf32>
  %q = kiln.all_gather_start %x, dim = 0, groups = [[0, 1]] : (tensor<16xf32>) -> tensor<32xf32>
  %e = kiln.tanh %x : tensor<16xf32>
  %a = kiln.collective_wait %p, %x : tensor<16xf32>, tensor<16xf32>
  %g = kiln.collective_wait %q, %x : tensor<32xf32>, tensor<16xf32>
  %r:2 = kiln.for 3 iterations (%e, %x) : (tensor<16xf32>, tensor<16xf32>) {
  ^bb0(%k: tensor<i64>, %acc: tensor<16xf32>, %cur: tensor<16xf32>):
    %next = kiln.collective_permute %cur, pairs = [0, 1, 1, 0] : tensor<16xf32>
    %sum = kiln.add %acc, %next : tensor<16xf32>
    kiln.yield %sum, %next : tensor<16xf32>, tensor<16xf32>
  }
  return %a, %g, %r#0 : tensor<16xf32>, tensor<32xf32>, tensor<16xf32>
}
