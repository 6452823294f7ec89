// A recommendation model's embedding table split by rows over 4 ranks that
// also split the batch of ids (dp = 4): two lookups and an SGD step of the
// table. Spread ids ((raw + 8) * 4, every owner's rows) go to their owners
// in all_to_all buckets of 4 of each rank's 8 ids and the rows come back;
// raw ids (all in rank 0's rows, clamped at 0) overflow rank 0's bucket and
// take the path that gathers every rank's ids. The gradient of the spread
// lookup's rows goes to the owners in the same buckets (OwnerExchange.h).
// test/e2e/spmd/CMakeLists.txt partitions it with kiln-partition and runs
// it through MPI against the evaluator's simulated ranks
// (spmd.sharded_table.n4); PartitionTest.cpp checks the same rewrite of a
// traced step against the single-device step.
// The exchanges as the rules write them (combine=false); by default the
// two overflow checks' max all-reduces become one (combine_collectives.mlir),
// which the compiled program and the MPI run use.
// RUN: kiln-opt %s --kiln-partition="combine=false" | FileCheck %s
// RUN: kiln-opt %s --kiln-partition | FileCheck %s --check-prefix=COMBINED
// RUN: kiln-opt %s --kiln-partition | kiln-compile - -o %t.kmod
// COMBINED: kiln.all_reduce_start {{.*}}kind = max{{.*}} : (tensor<3xi32>) -> tensor<3xi32>
// COMBINED-NOT: kiln.all_reduce {{.*}}kind = max
// CHECK: kiln.all_reduce {{.*}}kind = max
// CHECK: kiln.cond
// CHECK: kiln.all_gather
// CHECK: kiln.reduce_scatter
// CHECK: } else {
// CHECK: kiln.all_to_all %{{.*}}, split_dim = 0, concat_dim = 0, groups = {{\[\[}}0, 1, 2, 3]] : (tensor<4x4xi32>) -> tensor<4x4xi32>
// CHECK: kiln.all_to_all %{{.*}}, split_dim = 0, concat_dim = 0, groups = {{\[\[}}0, 1, 2, 3]] : (tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
func.func @step(%table: tensor<64x4xf32> {kiln.sharding = ["dp", ""]},
                %raw: tensor<16x2xi32> {kiln.sharding = ["dp", ""]},
                %dy: tensor<16x2x4xf32> {kiln.sharding = ["dp", "", ""]})
    -> (tensor<16x2x4xf32> {kiln.sharding = ["dp", "", ""]},
        tensor<16x2x4xf32> {kiln.sharding = ["dp", "", ""]},
        tensor<64x4xf32> {kiln.sharding = ["dp", ""]})
    attributes {kiln.mesh = {axes = ["dp"], shape = array<i64: 4>}} {
  %eight = kiln.constant dense<8> : tensor<16x2xi32>
  %four = kiln.constant dense<4> : tensor<16x2xi32>
  %shifted = kiln.add %raw, %eight : tensor<16x2xi32>
  %ids = kiln.mul %shifted, %four : tensor<16x2xi32>
  %spread = kiln.gather %table, %ids : tensor<64x4xf32>, tensor<16x2xi32>
  %skewed = kiln.gather %table, %raw : tensor<64x4xf32>, tensor<16x2xi32>
  %zero = kiln.constant dense<0.0> : tensor<64x4xf32>
  %g = kiln.scatter_add %zero, %ids, %dy : tensor<64x4xf32>, tensor<16x2xi32>, tensor<16x2x4xf32>
  %half = kiln.constant dense<0.5> : tensor<64x4xf32>
  %step = kiln.mul %half, %g : tensor<64x4xf32>
  %new = kiln.sub %table, %step : tensor<64x4xf32>
  return %spread, %skewed, %new : tensor<16x2x4xf32>, tensor<16x2x4xf32>, tensor<64x4xf32>
}
