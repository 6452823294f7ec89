// Gradients of convolutions as kiln-grad derives them, checked like every
// end-to-end program (native code against the reference evaluator on
// random inputs). The two forward functions are followed by what
//
//   kiln-opt --kiln-grad="function=res_block value-and-grad=true" \
//            --kiln-grad="function=grouped_1d value-and-grad=true"
//
// derives from them: a residual block (3x3 stride 2 with padding 1, a 1x1
// stride-2 shortcut, relu, 1x1) whose input gradients are input-dilated
// convolutions with the window's padding on one side only, and a grouped
// 1-d convolution with stride, dilation and uneven padding. On CUDA every
// convolution here runs on cuDNN: the forward ones and the weight
// gradients as forward convolutions, the input gradients as backward data.
// The sums of squares reach a few hundred and their gradients sum a few
// hundred products each; summed in another order (oneDNN, cuDNN) they
// differ from the evaluator's in the fourth or fifth digit, hence the
// absolute tolerance.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: res_block(arg0: f32[2,8,12,12], arg1: f32[16,8,3,3], arg2: f32[16,16,1,1], arg3: f32[16,8,1,1]) -> (out0: f32[])
// CHECK: res_block_value_and_grad(arg0: f32[2,8,12,12], arg1: f32[16,8,3,3], arg2: f32[16,16,1,1], arg3: f32[16,8,1,1]) -> (out0: f32[], out1: f32[2,8,12,12], out2: f32[16,8,3,3], out3: f32[16,16,1,1], out4: f32[16,8,1,1])
// CHECK: grouped_1d(arg0: f32[2,4,11], arg1: f32[6,2,3]) -> (out0: f32[])
// CHECK: grouped_1d_value_and_grad(arg0: f32[2,4,11], arg1: f32[6,2,3]) -> (out0: f32[], out1: f32[2,4,11], out2: f32[6,2,3])

func.func @res_block(%arg0: tensor<2x8x12x12xf32>, %arg1: tensor<16x8x3x3xf32>, %arg2: tensor<16x16x1x1xf32>, %arg3: tensor<16x8x1x1xf32>) -> tensor<f32>
    attributes {kiln.e2e_atol = 1.0e-2 : f64} {
  %0 = kiln.conv %arg0, %arg1, strides = [2, 2], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x8x12x12xf32>, tensor<16x8x3x3xf32>
  %1 = kiln.conv %arg0, %arg3, strides = [2, 2], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x8x12x12xf32>, tensor<16x8x1x1xf32>
  %2 = kiln.relu %0 : tensor<2x16x6x6xf32>
  %3 = kiln.conv %2, %arg2, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x16x6x6xf32>, tensor<16x16x1x1xf32>
  %4 = kiln.add %3, %1 : tensor<2x16x6x6xf32>
  %5 = kiln.mul %4, %4 : tensor<2x16x6x6xf32>
  %6 = kiln.reduce_sum %5, dims = [0, 1, 2, 3] : tensor<2x16x6x6xf32>
  return %6 : tensor<f32>
}
func.func @res_block_value_and_grad(%arg0: tensor<2x8x12x12xf32>, %arg1: tensor<16x8x3x3xf32>, %arg2: tensor<16x16x1x1xf32>, %arg3: tensor<16x8x1x1xf32>) -> (tensor<f32>, tensor<2x8x12x12xf32>, tensor<16x8x3x3xf32>, tensor<16x16x1x1xf32>, tensor<16x8x1x1xf32>)
    attributes {kiln.e2e_atol = 1.0e-2 : f64} {
  %0 = kiln.conv %arg0, %arg1, strides = [2, 2], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x8x12x12xf32>, tensor<16x8x3x3xf32>
  %1 = kiln.conv %arg0, %arg3, strides = [2, 2], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x8x12x12xf32>, tensor<16x8x1x1xf32>
  %2 = kiln.relu %0 : tensor<2x16x6x6xf32>
  %3 = kiln.conv %2, %arg2, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x16x6x6xf32>, tensor<16x16x1x1xf32>
  %4 = kiln.add %3, %1 : tensor<2x16x6x6xf32>
  %5 = kiln.mul %4, %4 : tensor<2x16x6x6xf32>
  %6 = kiln.reduce_sum %5, dims = [0, 1, 2, 3] : tensor<2x16x6x6xf32>
  %7 = kiln.constant dense<1.000000e+00> : tensor<f32>
  %8 = kiln.broadcast_in_dim %7, dims = [] : (tensor<f32>) -> tensor<2x16x6x6xf32>
  %9 = kiln.mul %8, %4 : tensor<2x16x6x6xf32>
  %10 = kiln.mul %8, %4 : tensor<2x16x6x6xf32>
  %11 = kiln.add %9, %10 : tensor<2x16x6x6xf32>
  %12 = kiln.reshape %arg2 : (tensor<16x16x1x1xf32>) -> tensor<1x16x16x1x1xf32>
  %13 = kiln.transpose %12, permutation = [0, 2, 1, 3, 4] : tensor<1x16x16x1x1xf32>
  %14 = kiln.reshape %13 : (tensor<1x16x16x1x1xf32>) -> tensor<16x16x1x1xf32>
  %15 = kiln.reverse %14, dims = [2, 3] : tensor<16x16x1x1xf32>
  %16 = kiln.conv %11, %15, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<2x16x6x6xf32>, tensor<16x16x1x1xf32>
  %17 = kiln.reshape %2 : (tensor<2x16x6x6xf32>) -> tensor<2x1x16x6x6xf32>
  %18 = kiln.transpose %17, permutation = [2, 1, 0, 3, 4] : tensor<2x1x16x6x6xf32>
  %19 = kiln.reshape %18 : (tensor<16x1x2x6x6xf32>) -> tensor<16x2x6x6xf32>
  %20 = kiln.reshape %11 : (tensor<2x16x6x6xf32>) -> tensor<2x1x16x6x6xf32>
  %21 = kiln.transpose %20, permutation = [1, 2, 0, 3, 4] : tensor<2x1x16x6x6xf32>
  %22 = kiln.reshape %21 : (tensor<1x16x2x6x6xf32>) -> tensor<16x2x6x6xf32>
  %23 = kiln.conv %19, %22, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<16x2x6x6xf32>, tensor<16x2x6x6xf32>
  %24 = kiln.transpose %23, permutation = [1, 0, 2, 3] : tensor<16x16x1x1xf32>
  %25 = kiln.constant dense<0.000000e+00> : tensor<2x16x6x6xf32>
  %26 = kiln.compare gt, %0, %25 : tensor<2x16x6x6xf32>
  %27 = kiln.select %26, %16, %25 : tensor<2x16x6x6xi1>, tensor<2x16x6x6xf32>
  %28 = kiln.reshape %arg3 : (tensor<16x8x1x1xf32>) -> tensor<1x16x8x1x1xf32>
  %29 = kiln.transpose %28, permutation = [0, 2, 1, 3, 4] : tensor<1x16x8x1x1xf32>
  %30 = kiln.reshape %29 : (tensor<1x8x16x1x1xf32>) -> tensor<8x16x1x1xf32>
  %31 = kiln.reverse %30, dims = [2, 3] : tensor<8x16x1x1xf32>
  %32 = kiln.conv %11, %31, strides = [1, 1], padding_low = [0, 0], padding_high = [1, 1], lhs_dilation = [2, 2], rhs_dilation = [1, 1], groups = 1 : tensor<2x16x6x6xf32>, tensor<8x16x1x1xf32>
  %33 = kiln.reshape %arg0 : (tensor<2x8x12x12xf32>) -> tensor<2x1x8x12x12xf32>
  %34 = kiln.transpose %33, permutation = [2, 1, 0, 3, 4] : tensor<2x1x8x12x12xf32>
  %35 = kiln.reshape %34 : (tensor<8x1x2x12x12xf32>) -> tensor<8x2x12x12xf32>
  %36 = kiln.reshape %11 : (tensor<2x16x6x6xf32>) -> tensor<2x1x16x6x6xf32>
  %37 = kiln.transpose %36, permutation = [1, 2, 0, 3, 4] : tensor<2x1x16x6x6xf32>
  %38 = kiln.reshape %37 : (tensor<1x16x2x6x6xf32>) -> tensor<16x2x6x6xf32>
  %39 = kiln.conv %35, %38, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [2, 2], groups = 1 : tensor<8x2x12x12xf32>, tensor<16x2x6x6xf32>
  %40 = kiln.slice %39, start = [0, 0, 0, 0], limit = [8, 16, 1, 1], stride = [1, 1, 1, 1] : tensor<8x16x2x2xf32>
  %41 = kiln.transpose %40, permutation = [1, 0, 2, 3] : tensor<8x16x1x1xf32>
  %42 = kiln.reshape %arg1 : (tensor<16x8x3x3xf32>) -> tensor<1x16x8x3x3xf32>
  %43 = kiln.transpose %42, permutation = [0, 2, 1, 3, 4] : tensor<1x16x8x3x3xf32>
  %44 = kiln.reshape %43 : (tensor<1x8x16x3x3xf32>) -> tensor<8x16x3x3xf32>
  %45 = kiln.reverse %44, dims = [2, 3] : tensor<8x16x3x3xf32>
  %46 = kiln.conv %27, %45, strides = [1, 1], padding_low = [1, 1], padding_high = [2, 2], lhs_dilation = [2, 2], rhs_dilation = [1, 1], groups = 1 : tensor<2x16x6x6xf32>, tensor<8x16x3x3xf32>
  %47 = kiln.add %32, %46 : tensor<2x8x12x12xf32>
  %48 = kiln.reshape %arg0 : (tensor<2x8x12x12xf32>) -> tensor<2x1x8x12x12xf32>
  %49 = kiln.transpose %48, permutation = [2, 1, 0, 3, 4] : tensor<2x1x8x12x12xf32>
  %50 = kiln.reshape %49 : (tensor<8x1x2x12x12xf32>) -> tensor<8x2x12x12xf32>
  %51 = kiln.reshape %27 : (tensor<2x16x6x6xf32>) -> tensor<2x1x16x6x6xf32>
  %52 = kiln.transpose %51, permutation = [1, 2, 0, 3, 4] : tensor<2x1x16x6x6xf32>
  %53 = kiln.reshape %52 : (tensor<1x16x2x6x6xf32>) -> tensor<16x2x6x6xf32>
  %54 = kiln.conv %50, %53, strides = [1, 1], padding_low = [1, 1], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [2, 2], groups = 1 : tensor<8x2x12x12xf32>, tensor<16x2x6x6xf32>
  %55 = kiln.transpose %54, permutation = [1, 0, 2, 3] : tensor<8x16x3x3xf32>
  return %6, %47, %55, %24, %41 : tensor<f32>, tensor<2x8x12x12xf32>, tensor<16x8x3x3xf32>, tensor<16x16x1x1xf32>, tensor<16x8x1x1xf32>
}
func.func @grouped_1d(%arg0: tensor<2x4x11xf32>, %arg1: tensor<6x2x3xf32>) -> tensor<f32>
    attributes {kiln.e2e_atol = 1.0e-2 : f64} {
  %0 = kiln.conv %arg0, %arg1, strides = [2], padding_low = [2], padding_high = [1], lhs_dilation = [1], rhs_dilation = [2], groups = 2 : tensor<2x4x11xf32>, tensor<6x2x3xf32>
  %1 = kiln.mul %0, %0 : tensor<2x6x5xf32>
  %2 = kiln.reduce_sum %1, dims = [0, 1, 2] : tensor<2x6x5xf32>
  return %2 : tensor<f32>
}
func.func @grouped_1d_value_and_grad(%arg0: tensor<2x4x11xf32>, %arg1: tensor<6x2x3xf32>) -> (tensor<f32>, tensor<2x4x11xf32>, tensor<6x2x3xf32>)
    attributes {kiln.e2e_atol = 1.0e-2 : f64} {
  %0 = kiln.conv %arg0, %arg1, strides = [2], padding_low = [2], padding_high = [1], lhs_dilation = [1], rhs_dilation = [2], groups = 2 : tensor<2x4x11xf32>, tensor<6x2x3xf32>
  %1 = kiln.mul %0, %0 : tensor<2x6x5xf32>
  %2 = kiln.reduce_sum %1, dims = [0, 1, 2] : tensor<2x6x5xf32>
  %3 = kiln.constant dense<1.000000e+00> : tensor<f32>
  %4 = kiln.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<2x6x5xf32>
  %5 = kiln.mul %4, %0 : tensor<2x6x5xf32>
  %6 = kiln.mul %4, %0 : tensor<2x6x5xf32>
  %7 = kiln.add %5, %6 : tensor<2x6x5xf32>
  %8 = kiln.reshape %arg1 : (tensor<6x2x3xf32>) -> tensor<2x3x2x3xf32>
  %9 = kiln.transpose %8, permutation = [0, 2, 1, 3] : tensor<2x3x2x3xf32>
  %10 = kiln.reshape %9 : (tensor<2x2x3x3xf32>) -> tensor<4x3x3xf32>
  %11 = kiln.reverse %10, dims = [2] : tensor<4x3x3xf32>
  %12 = kiln.conv %7, %11, strides = [1], padding_low = [2], padding_high = [4], lhs_dilation = [2], rhs_dilation = [2], groups = 2 : tensor<2x6x5xf32>, tensor<4x3x3xf32>
  %13 = kiln.reshape %arg0 : (tensor<2x4x11xf32>) -> tensor<2x2x2x11xf32>
  %14 = kiln.transpose %13, permutation = [2, 1, 0, 3] : tensor<2x2x2x11xf32>
  %15 = kiln.reshape %14 : (tensor<2x2x2x11xf32>) -> tensor<2x4x11xf32>
  %16 = kiln.reshape %7 : (tensor<2x6x5xf32>) -> tensor<2x2x3x5xf32>
  %17 = kiln.transpose %16, permutation = [1, 2, 0, 3] : tensor<2x2x3x5xf32>
  %18 = kiln.reshape %17 : (tensor<2x3x2x5xf32>) -> tensor<6x2x5xf32>
  %19 = kiln.conv %15, %18, strides = [2], padding_low = [2], padding_high = [0], lhs_dilation = [1], rhs_dilation = [2], groups = 2 : tensor<2x4x11xf32>, tensor<6x2x5xf32>
  %20 = kiln.transpose %19, permutation = [1, 0, 2] : tensor<2x6x3xf32>
  return %2, %12, %20 : tensor<f32>, tensor<2x4x11xf32>, tensor<6x2x3xf32>
}
