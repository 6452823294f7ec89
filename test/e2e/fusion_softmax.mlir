// Softmax and log-sum-exp: reductions with their elementwise prologue and
// epilogue, which kiln-fuse puts in one region each (kind reduction), and
// sibling reductions that share an input. The harness also compiles this
// file with fusion off and evaluates the fused IR, so fused and unfused
// code must agree with the reference evaluator.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-opt %s --kiln-fuse | FileCheck %s --check-prefix=FUSED
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-compile %s --no-fusion -o %t.unfused.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s
// RUN: kiln-run %t.unfused.kmod --list | FileCheck %s

// FUSED-LABEL: func.func @softmax_rows(
// FUSED-NEXT:    kiln.fused reduction
// FUSED-NOT:     kiln.fused
// FUSED:         return
// CHECK: softmax_rows(arg0: f32[4,10]) -> (out0: f32[4,10])
func.func @softmax_rows(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %m = kiln.reduce_max %x, dims = [1] : tensor<4x10xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : (tensor<4xf32>) -> tensor<4x10xf32>
  %s = kiln.sub %x, %mb : tensor<4x10xf32>
  %e = kiln.exp %s : tensor<4x10xf32>
  %z = kiln.reduce_sum %e, dims = [1] : tensor<4x10xf32>
  %zb = kiln.broadcast_in_dim %z, dims = [0] : (tensor<4xf32>) -> tensor<4x10xf32>
  %y = kiln.div %e, %zb : tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}

// Over the first dim of a wider matrix, in f64.
// FUSED-LABEL: func.func @softmax_cols_f64(
// FUSED-NEXT:    kiln.fused reduction
// FUSED-NOT:     kiln.fused
// CHECK: softmax_cols_f64(arg0: f64[33,3]) -> (out0: f64[33,3])
func.func @softmax_cols_f64(%x: tensor<33x3xf64>) -> tensor<33x3xf64> {
  %m = kiln.reduce_max %x, dims = [0] : tensor<33x3xf64>
  %mb = kiln.broadcast_in_dim %m, dims = [1] : (tensor<3xf64>) -> tensor<33x3xf64>
  %s = kiln.sub %x, %mb : tensor<33x3xf64>
  %e = kiln.exp %s : tensor<33x3xf64>
  %z = kiln.reduce_sum %e, dims = [0] : tensor<33x3xf64>
  %zb = kiln.broadcast_in_dim %z, dims = [1] : (tensor<3xf64>) -> tensor<33x3xf64>
  %y = kiln.div %e, %zb : tensor<33x3xf64>
  return %y : tensor<33x3xf64>
}

// log(sum(exp(x - max))) + max, and the max itself as a second output (the
// region yields it as an extra result, computed once).
// FUSED-LABEL: func.func @log_sum_exp(
// FUSED-NEXT:    kiln.fused reduction {{.*}} -> (tensor<5xf32>, tensor<5xf32>)
// FUSED-COUNT-1:   kiln.reduce_max
// FUSED-NOT:     kiln.fused
// CHECK: log_sum_exp(arg0: f32[5,12]) -> (out0: f32[5], out1: f32[5])
func.func @log_sum_exp(%x: tensor<5x12xf32>) -> (tensor<5xf32>, tensor<5xf32>) {
  %m = kiln.reduce_max %x, dims = [1] : tensor<5x12xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0] : (tensor<5xf32>) -> tensor<5x12xf32>
  %s = kiln.sub %x, %mb : tensor<5x12xf32>
  %e = kiln.exp %s : tensor<5x12xf32>
  %z = kiln.reduce_sum %e, dims = [1] : tensor<5x12xf32>
  %l = kiln.log %z : tensor<5xf32>
  %y = kiln.add %l, %m : tensor<5xf32>
  %two = kiln.constant dense<2.0> : tensor<5xf32>
  %m2 = kiln.mul %m, %two : tensor<5xf32>
  return %y, %m2 : tensor<5xf32>, tensor<5xf32>
}

// A softmax over the last dim of a rank-3 tensor, with a temperature
// broadcast from a scalar input.
// FUSED-LABEL: func.func @softmax_temperature(
// FUSED-NEXT:    kiln.fused reduction
// FUSED-NOT:     kiln.fused
// CHECK: softmax_temperature(arg0: f32[2,3,16], arg1: f32[]) -> (out0: f32[2,3,16])
func.func @softmax_temperature(%x: tensor<2x3x16xf32>, %t: tensor<f32>) -> tensor<2x3x16xf32> {
  %at = kiln.abs %t : tensor<f32>
  %one = kiln.constant dense<1.0> : tensor<f32>
  %temp = kiln.add %at, %one : tensor<f32>
  %tb = kiln.broadcast_in_dim %temp, dims = [] : (tensor<f32>) -> tensor<2x3x16xf32>
  %xs = kiln.div %x, %tb : tensor<2x3x16xf32>
  %m = kiln.reduce_max %xs, dims = [2] : tensor<2x3x16xf32>
  %mb = kiln.broadcast_in_dim %m, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3x16xf32>
  %s = kiln.sub %xs, %mb : tensor<2x3x16xf32>
  %e = kiln.exp %s : tensor<2x3x16xf32>
  %z = kiln.reduce_sum %e, dims = [2] : tensor<2x3x16xf32>
  %zb = kiln.broadcast_in_dim %z, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3x16xf32>
  %y = kiln.div %e, %zb : tensor<2x3x16xf32>
  return %y : tensor<2x3x16xf32>
}

// Sibling reductions of one input (sum, max and mean of each row, and the
// row sums of squares) become one multi-output region.
// FUSED-LABEL: func.func @row_statistics(
// FUSED-NEXT:    kiln.fused reduction {{.*}} -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>)
// FUSED-NOT:     kiln.fused
// CHECK: row_statistics(arg0: f32[6,40]) -> (out0: f32[6], out1: f32[6], out2: f32[6], out3: f32[6])
func.func @row_statistics(%x: tensor<6x40xf32>) -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) {
  %s = kiln.reduce_sum %x, dims = [1] : tensor<6x40xf32>
  %m = kiln.reduce_max %x, dims = [1] : tensor<6x40xf32>
  %a = kiln.reduce_mean %x, dims = [1] : tensor<6x40xf32>
  %sq = kiln.mul %x, %x : tensor<6x40xf32>
  %q = kiln.reduce_sum %sq, dims = [1] : tensor<6x40xf32>
  return %s, %m, %a, %q : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>
}
