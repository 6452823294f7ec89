// Convolutions inside a kiln.while, and their gradients: a refinement
// h <- tanh(conv(h, w) / 8 + x) while i < |n| + 1 (one to nine trips,
// decided on integers, so native code and the evaluator run the same
// trips), and what
//
//   kiln-opt --kiln-grad="function=refine_loss value-and-grad=true"
//
// derives from it: the gradient's forward loop pushes each trip's h onto a
// run-time stack, and its backward loop holds the input and weight
// gradients' convolutions. On CUDA each convolution is a cuDNN call
// (kiln-cuda-library-conv), and each loop asks the runtime whether cuDNN
// has run them (kiln_cuda_graph_loops_planned): the first call runs the
// loops on the host, which makes cuDNN's plans, and later calls run them
// as CUDA graphs.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: refine_loss(arg0: f32[1,8,12,12], arg1: f32[8,8,3,3], arg2: i32[]) -> (out0: f32[])
// CHECK: refine_loss_value_and_grad(arg0: f32[1,8,12,12], arg1: f32[8,8,3,3], arg2: i32[]) -> (out0: f32[], out1: f32[1,8,12,12], out2: f32[8,8,3,3])

func.func @refine_loss(%arg0: tensor<1x8x12x12xf32>, %arg1: tensor<8x8x3x3xf32>, %arg2: tensor<i32>) -> tensor<f32> {
  %0 = kiln.abs %arg2 : tensor<i32>
  %1 = kiln.constant dense<1> : tensor<i32>
  %2 = kiln.add %0, %1 : tensor<i32>
  %3 = kiln.constant dense<0> : tensor<i32>
  %4:5 = kiln.while(%arg0, %arg0, %arg1, %3, %2) : (tensor<1x8x12x12xf32>, tensor<1x8x12x12xf32>, tensor<8x8x3x3xf32>, tensor<i32>, tensor<i32>) cond {
  ^bb0(%arg3: tensor<1x8x12x12xf32>, %arg4: tensor<1x8x12x12xf32>, %arg5: tensor<8x8x3x3xf32>, %arg6: tensor<i32>, %arg7: tensor<i32>):
    %7 = kiln.compare lt, %arg6, %arg7 : tensor<i32>
    kiln.yield %7 : tensor<i1>
  } do {
  ^bb0(%arg3: tensor<1x8x12x12xf32>, %arg4: tensor<1x8x12x12xf32>, %arg5: tensor<8x8x3x3xf32>, %arg6: tensor<i32>, %arg7: tensor<i32>):
    %7 = kiln.conv %arg3, %arg5, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x12x12xf32>, tensor<8x8x3x3xf32>
    %8 = kiln.constant dense<1.250000e-01> : tensor<1x8x12x12xf32>
    %9 = kiln.mul %7, %8 : tensor<1x8x12x12xf32>
    %10 = kiln.add %9, %arg4 : tensor<1x8x12x12xf32>
    %11 = kiln.tanh %10 : tensor<1x8x12x12xf32>
    %12 = kiln.constant dense<1> : tensor<i32>
    %13 = kiln.add %arg6, %12 : tensor<i32>
    kiln.yield %11, %arg4, %arg5, %13, %arg7 : tensor<1x8x12x12xf32>, tensor<1x8x12x12xf32>, tensor<8x8x3x3xf32>, tensor<i32>, tensor<i32>
  }
  %5 = kiln.mul %4#0, %4#0 : tensor<1x8x12x12xf32>
  %6 = kiln.reduce_mean %5, dims = [0, 1, 2, 3] : tensor<1x8x12x12xf32>
  return %6 : tensor<f32>
}
func.func @refine_loss_value_and_grad(%arg0: tensor<1x8x12x12xf32>, %arg1: tensor<8x8x3x3xf32>, %arg2: tensor<i32>) -> (tensor<f32>, tensor<1x8x12x12xf32>, tensor<8x8x3x3xf32>) {
  %0 = kiln.abs %arg2 : tensor<i32>
  %1 = kiln.constant dense<1> : tensor<i32>
  %2 = kiln.add %0, %1 : tensor<i32>
  %3 = kiln.constant dense<0> : tensor<i32>
  %4 = kiln.constant dense<0> : tensor<i64>
  %5 = kiln.stack_empty : tensor<?x1x8x12x12xf32>
  %6 = kiln.stack_empty : tensor<?x1x8x12x12xf32>
  %7:8 = kiln.while(%arg0, %arg0, %arg1, %3, %2, %4, %5, %6) : (tensor<1x8x12x12xf32>, tensor<1x8x12x12xf32>, tensor<8x8x3x3xf32>, tensor<i32>, tensor<i32>, tensor<i64>, tensor<?x1x8x12x12xf32>, tensor<?x1x8x12x12xf32>) cond {
  ^bb0(%arg3: tensor<1x8x12x12xf32>, %arg4: tensor<1x8x12x12xf32>, %arg5: tensor<8x8x3x3xf32>, %arg6: tensor<i32>, %arg7: tensor<i32>, %arg8: tensor<i64>, %arg9: tensor<?x1x8x12x12xf32>, %arg10: tensor<?x1x8x12x12xf32>):
    %21 = kiln.compare lt, %arg6, %arg7 : tensor<i32>
    kiln.yield %21 : tensor<i1>
  } do {
  ^bb0(%arg3: tensor<1x8x12x12xf32>, %arg4: tensor<1x8x12x12xf32>, %arg5: tensor<8x8x3x3xf32>, %arg6: tensor<i32>, %arg7: tensor<i32>, %arg8: tensor<i64>, %arg9: tensor<?x1x8x12x12xf32>, %arg10: tensor<?x1x8x12x12xf32>):
    %21 = kiln.constant dense<4> : tensor<i64>
    %22 = kiln.constant dense<2> : tensor<i64>
    %23 = kiln.mul %arg8, %22 : tensor<i64>
    %24 = kiln.max %23, %21 : tensor<i64>
    %25 = kiln.stack_reserve %arg9, %24 : tensor<?x1x8x12x12xf32>
    %26 = kiln.stack_reserve %arg10, %24 : tensor<?x1x8x12x12xf32>
    %27:9 = kiln.while(%arg3, %arg4, %arg5, %arg6, %arg7, %arg8, %25, %26, %24) : (tensor<1x8x12x12xf32>, tensor<1x8x12x12xf32>, tensor<8x8x3x3xf32>, tensor<i32>, tensor<i32>, tensor<i64>, tensor<?x1x8x12x12xf32>, tensor<?x1x8x12x12xf32>, tensor<i64>) cond {
    ^bb0(%arg11: tensor<1x8x12x12xf32>, %arg12: tensor<1x8x12x12xf32>, %arg13: tensor<8x8x3x3xf32>, %arg14: tensor<i32>, %arg15: tensor<i32>, %arg16: tensor<i64>, %arg17: tensor<?x1x8x12x12xf32>, %arg18: tensor<?x1x8x12x12xf32>, %arg19: tensor<i64>):
      %28 = kiln.compare lt, %arg14, %arg15 : tensor<i32>
      %29 = kiln.compare lt, %arg16, %arg19 : tensor<i64>
      %30 = kiln.constant dense<false> : tensor<i1>
      %31 = kiln.select %28, %29, %30 : tensor<i1>, tensor<i1>
      kiln.yield %31 : tensor<i1>
    } do {
    ^bb0(%arg11: tensor<1x8x12x12xf32>, %arg12: tensor<1x8x12x12xf32>, %arg13: tensor<8x8x3x3xf32>, %arg14: tensor<i32>, %arg15: tensor<i32>, %arg16: tensor<i64>, %arg17: tensor<?x1x8x12x12xf32>, %arg18: tensor<?x1x8x12x12xf32>, %arg19: tensor<i64>):
      %28 = kiln.conv %arg11, %arg13, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x12x12xf32>, tensor<8x8x3x3xf32>
      %29 = kiln.constant dense<1.250000e-01> : tensor<1x8x12x12xf32>
      %30 = kiln.mul %28, %29 : tensor<1x8x12x12xf32>
      %31 = kiln.add %30, %arg12 : tensor<1x8x12x12xf32>
      %32 = kiln.tanh %31 : tensor<1x8x12x12xf32>
      %33 = kiln.constant dense<1> : tensor<i32>
      %34 = kiln.add %arg14, %33 : tensor<i32>
      %35 = kiln.constant dense<1> : tensor<i64>
      %36 = kiln.add %arg16, %35 : tensor<i64>
      %37 = kiln.stack_push %arg17[%arg16], %32 : tensor<?x1x8x12x12xf32>, tensor<1x8x12x12xf32>
      %38 = kiln.stack_push %arg18[%arg16], %arg11 : tensor<?x1x8x12x12xf32>, tensor<1x8x12x12xf32>
      kiln.yield %32, %arg12, %arg13, %34, %arg15, %36, %37, %38, %arg19 : tensor<1x8x12x12xf32>, tensor<1x8x12x12xf32>, tensor<8x8x3x3xf32>, tensor<i32>, tensor<i32>, tensor<i64>, tensor<?x1x8x12x12xf32>, tensor<?x1x8x12x12xf32>, tensor<i64>
    }
    kiln.yield %27#0, %27#1, %27#2, %27#3, %27#4, %27#5, %27#6, %27#7 : tensor<1x8x12x12xf32>, tensor<1x8x12x12xf32>, tensor<8x8x3x3xf32>, tensor<i32>, tensor<i32>, tensor<i64>, tensor<?x1x8x12x12xf32>, tensor<?x1x8x12x12xf32>
  }
  %8 = kiln.mul %7#0, %7#0 : tensor<1x8x12x12xf32>
  %9 = kiln.reduce_mean %8, dims = [0, 1, 2, 3] : tensor<1x8x12x12xf32>
  %10 = kiln.constant dense<1.000000e+00> : tensor<f32>
  %11 = kiln.constant dense<1.152000e+03> : tensor<f32>
  %12 = kiln.div %10, %11 : tensor<f32>
  %13 = kiln.broadcast_in_dim %12, dims = [] : (tensor<f32>) -> tensor<1x8x12x12xf32>
  %14 = kiln.mul %13, %7#0 : tensor<1x8x12x12xf32>
  %15 = kiln.mul %13, %7#0 : tensor<1x8x12x12xf32>
  %16 = kiln.add %14, %15 : tensor<1x8x12x12xf32>
  %17 = kiln.constant dense<0.000000e+00> : tensor<1x8x12x12xf32>
  %18 = kiln.constant dense<0.000000e+00> : tensor<8x8x3x3xf32>
  %19:7 = kiln.while(%7#5, %16, %17, %18, %7#6, %arg1, %7#7) : (tensor<i64>, tensor<1x8x12x12xf32>, tensor<1x8x12x12xf32>, tensor<8x8x3x3xf32>, tensor<?x1x8x12x12xf32>, tensor<8x8x3x3xf32>, tensor<?x1x8x12x12xf32>) cond {
  ^bb0(%arg3: tensor<i64>, %arg4: tensor<1x8x12x12xf32>, %arg5: tensor<1x8x12x12xf32>, %arg6: tensor<8x8x3x3xf32>, %arg7: tensor<?x1x8x12x12xf32>, %arg8: tensor<8x8x3x3xf32>, %arg9: tensor<?x1x8x12x12xf32>):
    %21 = kiln.constant dense<0> : tensor<i64>
    %22 = kiln.compare gt, %arg3, %21 : tensor<i64>
    kiln.yield %22 : tensor<i1>
  } do {
  ^bb0(%arg3: tensor<i64>, %arg4: tensor<1x8x12x12xf32>, %arg5: tensor<1x8x12x12xf32>, %arg6: tensor<8x8x3x3xf32>, %arg7: tensor<?x1x8x12x12xf32>, %arg8: tensor<8x8x3x3xf32>, %arg9: tensor<?x1x8x12x12xf32>):
    %21 = kiln.constant dense<1> : tensor<i64>
    %22 = kiln.sub %arg3, %21 : tensor<i64>
    %23 = kiln.stack_read %arg7[%22] : tensor<?x1x8x12x12xf32> -> tensor<1x8x12x12xf32>
    %24 = kiln.constant dense<1.250000e-01> : tensor<1x8x12x12xf32>
    %25 = kiln.stack_read %arg9[%22] : tensor<?x1x8x12x12xf32> -> tensor<1x8x12x12xf32>
    %26 = kiln.mul %23, %23 : tensor<1x8x12x12xf32>
    %27 = kiln.constant dense<1.000000e+00> : tensor<1x8x12x12xf32>
    %28 = kiln.sub %27, %26 : tensor<1x8x12x12xf32>
    %29 = kiln.mul %arg4, %28 : tensor<1x8x12x12xf32>
    %30 = kiln.add %arg5, %29 : tensor<1x8x12x12xf32>
    %31 = kiln.mul %29, %24 : tensor<1x8x12x12xf32>
    %32 = kiln.reshape %arg8 : (tensor<8x8x3x3xf32>) -> tensor<1x8x8x3x3xf32>
    %33 = kiln.transpose %32, permutation = [0, 2, 1, 3, 4] : tensor<1x8x8x3x3xf32>
    %34 = kiln.reshape %33 : (tensor<1x8x8x3x3xf32>) -> tensor<8x8x3x3xf32>
    %35 = kiln.reverse %34, dims = [2, 3] : tensor<8x8x3x3xf32>
    %36 = kiln.conv %31, %35, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x8x12x12xf32>, tensor<8x8x3x3xf32>
    %37 = kiln.reshape %25 : (tensor<1x8x12x12xf32>) -> tensor<1x1x8x12x12xf32>
    %38 = kiln.transpose %37, permutation = [2, 1, 0, 3, 4] : tensor<1x1x8x12x12xf32>
    %39 = kiln.reshape %38 : (tensor<8x1x1x12x12xf32>) -> tensor<8x1x12x12xf32>
    %40 = kiln.reshape %31 : (tensor<1x8x12x12xf32>) -> tensor<1x1x8x12x12xf32>
    %41 = kiln.transpose %40, permutation = [1, 2, 0, 3, 4] : tensor<1x1x8x12x12xf32>
    %42 = kiln.reshape %41 : (tensor<1x8x1x12x12xf32>) -> tensor<8x1x12x12xf32>
    %43 = kiln.conv %39, %42, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<8x1x12x12xf32>, tensor<8x1x12x12xf32>
    %44 = kiln.transpose %43, permutation = [1, 0, 2, 3] : tensor<8x8x3x3xf32>
    %45 = kiln.add %arg6, %44 : tensor<8x8x3x3xf32>
    kiln.yield %22, %36, %30, %45, %arg7, %arg8, %arg9 : tensor<i64>, tensor<1x8x12x12xf32>, tensor<1x8x12x12xf32>, tensor<8x8x3x3xf32>, tensor<?x1x8x12x12xf32>, tensor<8x8x3x3xf32>, tensor<?x1x8x12x12xf32>
  }
  %20 = kiln.add %19#1, %19#2 : tensor<1x8x12x12xf32>
  return %9, %20, %19#3 : tensor<f32>, tensor<1x8x12x12xf32>, tensor<8x8x3x3xf32>
}
