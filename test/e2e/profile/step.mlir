// The program of the profiling test (check_profile.py): a oneDNN product
// with a fused epilogue, then a data-dependent loop (kiln.while, %n
// iterations) whose body holds a conditional and a fused reduction region.
// Here, the regions kiln-compile --profile names in the module, in order
// (copies of the loop-carried tensor in between): the product, its
// epilogue, the loop, the conditional and its branches, the reduction
// region, each named after its kiln ops and the line of the first; and
// without --profile, none.
// RUN: kiln-compile %s --profile --emit=mlir | FileCheck %s
// RUN: kiln-compile %s --emit=mlir | FileCheck %s --check-prefix=PLAIN
// CHECK: llvm.mlir.global external constant @kiln_profile_region_names(
// CHECK-SAME: "dnnl_sgemm 64x256x128 @ step.mlir:[[#MATMUL:]]\00
// CHECK-SAME: fused: add+relu 64x256 @ step.mlir:[[#MATMUL+2]]\00
// CHECK-SAME: while @ step.mlir:[[#MATMUL+5]]\00
// CHECK-SAME: cond @ step.mlir:[[#MATMUL+17]]\00
// CHECK-SAME: tanh 64x256 @ step.mlir:[[#MATMUL+19]]\00
// CHECK-SAME: sigmoid 64x256 @ step.mlir:[[#MATMUL+23]]\00
// CHECK-SAME: fused: reduce_sum+div 64x256 @ step.mlir:[[#MATMUL+26]]\00
// PLAIN-NOT: kiln_profile
func.func @step(%x: tensor<64x128xf32>, %w: tensor<128x256xf32>,
                %b: tensor<256xf32>, %n: tensor<i64>) -> (tensor<64x256xf32>, tensor<i64>) {
  %m = kiln.matmul %x, %w : tensor<64x128xf32>, tensor<128x256xf32>
  %bb = kiln.broadcast_in_dim %b, dims = [1] : (tensor<256xf32>) -> tensor<64x256xf32>
  %a = kiln.add %m, %bb : tensor<64x256xf32>
  %h = kiln.relu %a : tensor<64x256xf32>
  %zero = kiln.constant dense<0> : tensor<i64>
  %r:3 = kiln.while (%h, %zero, %n) : (tensor<64x256xf32>, tensor<i64>, tensor<i64>) cond {
  ^bb0(%c: tensor<64x256xf32>, %i: tensor<i64>, %limit: tensor<i64>):
    %more = kiln.compare lt, %i, %limit : tensor<i64>
    kiln.yield %more : tensor<i1>
  } do {
  ^bb0(%c: tensor<64x256xf32>, %i: tensor<i64>, %limit: tensor<i64>):
    %one = kiln.constant dense<1> : tensor<i64>
    %next = kiln.add %i, %one : tensor<i64>
    %two = kiln.constant dense<2> : tensor<i64>
    %parity = kiln.rem %i, %two : tensor<i64>
    %nought = kiln.constant dense<0> : tensor<i64>
    %even = kiln.compare eq, %parity, %nought : tensor<i64>
    %t = kiln.cond %even, (%c) : tensor<i1>, (tensor<64x256xf32>) -> tensor<64x256xf32> {
    ^bb0(%v: tensor<64x256xf32>):
      %e = kiln.tanh %v : tensor<64x256xf32>
      kiln.yield %e : tensor<64x256xf32>
    } else {
    ^bb0(%v: tensor<64x256xf32>):
      %s = kiln.sigmoid %v : tensor<64x256xf32>
      kiln.yield %s : tensor<64x256xf32>
    }
    %sum = kiln.reduce_sum %t, dims = [1] : tensor<64x256xf32>
    %sb = kiln.broadcast_in_dim %sum, dims = [0] : (tensor<64xf32>) -> tensor<64x256xf32>
    %d = kiln.div %t, %sb : tensor<64x256xf32>
    kiln.yield %d, %next, %limit : tensor<64x256xf32>, tensor<i64>, tensor<i64>
  }
  return %r#0, %r#1 : tensor<64x256xf32>, tensor<i64>
}
