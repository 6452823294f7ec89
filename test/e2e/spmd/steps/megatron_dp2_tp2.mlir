// A training step of a Megatron MLP block (y = relu(x w1) w2 + x, squared
// error, SGD), on a dp x tp = 2 x 2 mesh, the batch split over dp: w1
// split by columns, w2 by rows.
// test/e2e/spmd/CMakeLists.txt partitions it with kiln-partition and runs it
// through MPI against the evaluator's simulated ranks (spmd.megatron_*);
// PartitionTest.cpp checks the same rewrite against the single-device step.
// RUN: kiln-opt %s --kiln-partition | kiln-compile - -o %t.kmod
func.func @step(%x: tensor<8x12xf32> {kiln.sharding = ["dp", ""]},
                %t: tensor<8x12xf32> {kiln.sharding = ["dp", ""]},
                %w1: tensor<12x16xf32> {kiln.sharding = ["", "tp"]},
                %w2: tensor<16x12xf32> {kiln.sharding = ["tp", ""]})
    -> (tensor<f32>, tensor<12x16xf32> {kiln.sharding = ["", "tp"]},
        tensor<16x12xf32> {kiln.sharding = ["tp", ""]})
    attributes {kiln.mesh = {axes = ["dp", "tp"], shape = array<i64: 2, 2>}} {
  %h = kiln.matmul %x, %w1 : tensor<8x12xf32>, tensor<12x16xf32>
  %a = kiln.relu %h : tensor<8x16xf32>
  %y0 = kiln.matmul %a, %w2 : tensor<8x16xf32>, tensor<16x12xf32>
  %y = kiln.add %y0, %x : tensor<8x12xf32>
  %d = kiln.sub %y, %t : tensor<8x12xf32>
  %sq = kiln.mul %d, %d : tensor<8x12xf32>
  %loss = kiln.reduce_mean %sq, dims = [0, 1] : tensor<8x12xf32>
  %scale = kiln.constant dense<0.020833334> : tensor<8x12xf32>
  %dy = kiln.mul %d, %scale : tensor<8x12xf32>
  %w2t = kiln.transpose %w2, permutation = [1, 0] : tensor<16x12xf32>
  %da = kiln.matmul %dy, %w2t : tensor<8x12xf32>, tensor<12x16xf32>
  %zero = kiln.constant dense<0.0> : tensor<8x16xf32>
  %pos = kiln.compare gt, %h, %zero : tensor<8x16xf32>
  %dh = kiln.select %pos, %da, %zero : tensor<8x16xi1>, tensor<8x16xf32>
  %xt = kiln.transpose %x, permutation = [1, 0] : tensor<8x12xf32>
  %dw1 = kiln.matmul %xt, %dh : tensor<12x8xf32>, tensor<8x16xf32>
  %at = kiln.transpose %a, permutation = [1, 0] : tensor<8x16xf32>
  %dw2 = kiln.matmul %at, %dy : tensor<16x8xf32>, tensor<8x12xf32>
  %lr1 = kiln.constant dense<0.1> : tensor<12x16xf32>
  %lr2 = kiln.constant dense<0.1> : tensor<16x12xf32>
  %s1 = kiln.mul %lr1, %dw1 : tensor<12x16xf32>
  %s2 = kiln.mul %lr2, %dw2 : tensor<16x12xf32>
  %w1n = kiln.sub %w1, %s1 : tensor<12x16xf32>
  %w2n = kiln.sub %w2, %s2 : tensor<16x12xf32>
  return %loss, %w1n, %w2n : tensor<f32>, tensor<12x16xf32>, tensor<16x12xf32>
}
