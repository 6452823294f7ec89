// What kiln-grad makes of a kiln.while with a data-dependent trip count
// (`kiln-opt --kiln-grad=function=main` of y = sin applied n times to x):
// the forward loop pushes each iteration's input onto a run-time stack
// (kiln.stack_empty, stack_reserve, stack_push), the reverse loop reads it
// back (kiln.stack_read). The stack's size is known only at run time, so
// its loops have run-time trip counts; for CUDA their grid sizes divide at
// run time (arith.ceildivsi, expanded for the host code by
// arith-expand-ops), which failed to compile before (kiln-program-fuzz
// --cuda --grad).
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s
// RUN: kiln-compile %s --target=cuda -o %t.cuda.kmod
// RUN: kiln-run %t.cuda.kmod --list | FileCheck %s

// CHECK: sin_loop_grad(arg0: f32[4], arg1: i64[], arg2: f32[4]) -> (out0: f32[4], out1: f32[4])
func.func @sin_loop_grad(%arg0: tensor<4xf32>, %arg1: tensor<i64>, %arg2: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = kiln.constant dense<0> : tensor<i64>
  %1 = kiln.constant dense<0> : tensor<i64>
  %2 = kiln.stack_empty : tensor<?x4xf32>
  %3:5 = kiln.while(%0, %arg1, %arg0, %1, %2) : (tensor<i64>, tensor<i64>, tensor<4xf32>, tensor<i64>, tensor<?x4xf32>) cond {
  ^bb0(%arg3: tensor<i64>, %arg4: tensor<i64>, %arg5: tensor<4xf32>, %arg6: tensor<i64>, %arg7: tensor<?x4xf32>):
    %5 = kiln.compare lt, %arg3, %arg4 : tensor<i64>
    kiln.yield %5 : tensor<i1>
  } do {
  ^bb0(%arg3: tensor<i64>, %arg4: tensor<i64>, %arg5: tensor<4xf32>, %arg6: tensor<i64>, %arg7: tensor<?x4xf32>):
    %5 = kiln.constant dense<4> : tensor<i64>
    %6 = kiln.constant dense<2> : tensor<i64>
    %7 = kiln.mul %arg6, %6 : tensor<i64>
    %8 = kiln.max %7, %5 : tensor<i64>
    %9 = kiln.stack_reserve %arg7, %8 : tensor<?x4xf32>
    %10:6 = kiln.while(%arg3, %arg4, %arg5, %arg6, %9, %8) : (tensor<i64>, tensor<i64>, tensor<4xf32>, tensor<i64>, tensor<?x4xf32>, tensor<i64>) cond {
    ^bb0(%arg8: tensor<i64>, %arg9: tensor<i64>, %arg10: tensor<4xf32>, %arg11: tensor<i64>, %arg12: tensor<?x4xf32>, %arg13: tensor<i64>):
      %11 = kiln.compare lt, %arg8, %arg9 : tensor<i64>
      %12 = kiln.compare lt, %arg11, %arg13 : tensor<i64>
      %13 = kiln.constant dense<false> : tensor<i1>
      %14 = kiln.select %11, %12, %13 : tensor<i1>, tensor<i1>
      kiln.yield %14 : tensor<i1>
    } do {
    ^bb0(%arg8: tensor<i64>, %arg9: tensor<i64>, %arg10: tensor<4xf32>, %arg11: tensor<i64>, %arg12: tensor<?x4xf32>, %arg13: tensor<i64>):
      %11 = kiln.sin %arg10 : tensor<4xf32>
      %12 = kiln.constant dense<1> : tensor<i64>
      %13 = kiln.add %arg8, %12 : tensor<i64>
      %14 = kiln.constant dense<1> : tensor<i64>
      %15 = kiln.add %arg11, %14 : tensor<i64>
      %16 = kiln.stack_push %arg12[%arg11], %arg10 : tensor<?x4xf32>, tensor<4xf32>
      kiln.yield %13, %arg9, %11, %15, %16, %arg13 : tensor<i64>, tensor<i64>, tensor<4xf32>, tensor<i64>, tensor<?x4xf32>, tensor<i64>
    }
    kiln.yield %10#0, %10#1, %10#2, %10#3, %10#4 : tensor<i64>, tensor<i64>, tensor<4xf32>, tensor<i64>, tensor<?x4xf32>
  }
  %4:3 = kiln.while(%3#3, %arg2, %3#4) : (tensor<i64>, tensor<4xf32>, tensor<?x4xf32>) cond {
  ^bb0(%arg3: tensor<i64>, %arg4: tensor<4xf32>, %arg5: tensor<?x4xf32>):
    %5 = kiln.constant dense<0> : tensor<i64>
    %6 = kiln.compare gt, %arg3, %5 : tensor<i64>
    kiln.yield %6 : tensor<i1>
  } do {
  ^bb0(%arg3: tensor<i64>, %arg4: tensor<4xf32>, %arg5: tensor<?x4xf32>):
    %5 = kiln.constant dense<1> : tensor<i64>
    %6 = kiln.sub %arg3, %5 : tensor<i64>
    %7 = kiln.stack_read %arg5[%6] : tensor<?x4xf32> -> tensor<4xf32>
    %8 = kiln.cos %7 : tensor<4xf32>
    %9 = kiln.mul %arg4, %8 : tensor<4xf32>
    kiln.yield %6, %9, %arg5 : tensor<i64>, tensor<4xf32>, tensor<?x4xf32>
  }
  return %3#2, %4#1 : tensor<4xf32>, tensor<4xf32>
}
