// Gradients of pooling and padding derived by the kiln-grad pass, checked
// like every end-to-end program: native code against the reference
// evaluator on random inputs. The forward function is followed by what
//
//   kiln-opt --kiln-grad="function=pool_loss value-and-grad=true"
//
// derives from it: channel scaling, a 3x3/2 max pool with padding (its
// gradient a kiln.reduce_window_max_grad), a 2x2/2 average pool, an
// interior pad whose value is an argument, and a dilated sum pool (their
// gradients strided sum pools, slices and a padded mask). The forward
// computation uses exactly rounded ops only before the max pool, so that
// native code and the evaluator pick the same maxima. Finite-difference
// checks of the same rules are in test/unit/autodiff/WindowGradientTest.cpp.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: pool_loss(arg0: f32[2,3,8,8], arg1: f32[3], arg2: f32[]) -> (out0: f32[])
// CHECK: pool_loss_value_and_grad(arg0: f32[2,3,8,8], arg1: f32[3], arg2: f32[]) -> (out0: f32[], out1: f32[2,3,8,8], out2: f32[3], out3: f32[])

func.func @pool_loss(%arg0: tensor<2x3x8x8xf32>, %arg1: tensor<3xf32>, %arg2: tensor<f32>) -> tensor<f32> {
  %0 = kiln.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> tensor<2x3x8x8xf32>
  %1 = kiln.mul %arg0, %0 : tensor<2x3x8x8xf32>
  %2 = kiln.reduce_window %1, kind = max, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<2x3x8x8xf32>
  %3 = kiln.reduce_window %2, kind = sum, window = [1, 1, 2, 2], strides = [1, 1, 2, 2], padding_low = [0, 0, 0, 0], padding_high = [0, 0, 0, 0], dilations = [1, 1, 1, 1] : tensor<2x3x4x4xf32>
  %4 = kiln.constant dense<4.000000e+00> : tensor<2x3x2x2xf32>
  %5 = kiln.div %3, %4 : tensor<2x3x2x2xf32>
  %6 = kiln.pad %5, %arg2, low = [0, 0, 1, 0], high = [0, 0, 0, 1], interior = [0, 0, 1, 1] : tensor<2x3x2x2xf32>, tensor<f32>
  %7 = kiln.reduce_window %6, kind = sum, window = [1, 1, 2, 2], strides = [1, 1, 1, 1], padding_low = [0, 0, 0, 0], padding_high = [0, 0, 0, 0], dilations = [1, 1, 2, 2] : tensor<2x3x4x4xf32>
  %8 = kiln.mul %7, %7 : tensor<2x3x2x2xf32>
  %9 = kiln.reduce_mean %8, dims = [0, 1, 2, 3] : tensor<2x3x2x2xf32>
  return %9 : tensor<f32>
}
func.func @pool_loss_value_and_grad(%arg0: tensor<2x3x8x8xf32>, %arg1: tensor<3xf32>, %arg2: tensor<f32>) -> (tensor<f32>, tensor<2x3x8x8xf32>, tensor<3xf32>, tensor<f32>) {
  %0 = kiln.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> tensor<2x3x8x8xf32>
  %1 = kiln.mul %arg0, %0 : tensor<2x3x8x8xf32>
  %2 = kiln.reduce_window %1, kind = max, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<2x3x8x8xf32>
  %3 = kiln.reduce_window %2, kind = sum, window = [1, 1, 2, 2], strides = [1, 1, 2, 2], padding_low = [0, 0, 0, 0], padding_high = [0, 0, 0, 0], dilations = [1, 1, 1, 1] : tensor<2x3x4x4xf32>
  %4 = kiln.constant dense<4.000000e+00> : tensor<2x3x2x2xf32>
  %5 = kiln.div %3, %4 : tensor<2x3x2x2xf32>
  %6 = kiln.pad %5, %arg2, low = [0, 0, 1, 0], high = [0, 0, 0, 1], interior = [0, 0, 1, 1] : tensor<2x3x2x2xf32>, tensor<f32>
  %7 = kiln.reduce_window %6, kind = sum, window = [1, 1, 2, 2], strides = [1, 1, 1, 1], padding_low = [0, 0, 0, 0], padding_high = [0, 0, 0, 0], dilations = [1, 1, 2, 2] : tensor<2x3x4x4xf32>
  %8 = kiln.mul %7, %7 : tensor<2x3x2x2xf32>
  %9 = kiln.reduce_mean %8, dims = [0, 1, 2, 3] : tensor<2x3x2x2xf32>
  %10 = kiln.constant dense<1.000000e+00> : tensor<f32>
  %11 = kiln.constant dense<2.400000e+01> : tensor<f32>
  %12 = kiln.div %10, %11 : tensor<f32>
  %13 = kiln.broadcast_in_dim %12, dims = [] : (tensor<f32>) -> tensor<2x3x2x2xf32>
  %14 = kiln.mul %13, %7 : tensor<2x3x2x2xf32>
  %15 = kiln.mul %13, %7 : tensor<2x3x2x2xf32>
  %16 = kiln.add %14, %15 : tensor<2x3x2x2xf32>
  %17 = kiln.reduce_window %16, kind = sum, window = [1, 1, 2, 2], strides = [1, 1, 1, 1], padding_low = [0, 0, 2, 2], padding_high = [0, 0, 2, 2], dilations = [1, 1, 2, 2] : tensor<2x3x2x2xf32>
  %18 = kiln.slice %17, start = [0, 0, 1, 0], limit = [2, 3, 4, 3], stride = [1, 1, 2, 2] : tensor<2x3x4x4xf32>
  %19 = kiln.constant dense<1.000000e+00> : tensor<f32>
  %20 = kiln.constant dense<0.000000e+00> : tensor<2x3x2x2xf32>
  %21 = kiln.pad %20, %19, low = [0, 0, 1, 0], high = [0, 0, 0, 1], interior = [0, 0, 1, 1] : tensor<2x3x2x2xf32>, tensor<f32>
  %22 = kiln.mul %17, %21 : tensor<2x3x4x4xf32>
  %23 = kiln.reduce_sum %22, dims = [0, 1, 2, 3] : tensor<2x3x4x4xf32>
  %24 = kiln.div %18, %4 : tensor<2x3x2x2xf32>
  %25 = kiln.constant dense<0.000000e+00> : tensor<f32>
  %26 = kiln.pad %24, %25, low = [0, 0, 0, 0], high = [0, 0, 0, 0], interior = [0, 0, 1, 1] : tensor<2x3x2x2xf32>, tensor<f32>
  %27 = kiln.reduce_window %26, kind = sum, window = [1, 1, 2, 2], strides = [1, 1, 1, 1], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<2x3x3x3xf32>
  %28 = kiln.reduce_window_max_grad %1, %27, window = [1, 1, 3, 3], strides = [1, 1, 2, 2], padding_low = [0, 0, 1, 1], padding_high = [0, 0, 1, 1], dilations = [1, 1, 1, 1] : tensor<2x3x8x8xf32>, tensor<2x3x4x4xf32>
  %29 = kiln.mul %28, %0 : tensor<2x3x8x8xf32>
  %30 = kiln.mul %28, %arg0 : tensor<2x3x8x8xf32>
  %31 = kiln.reduce_sum %30, dims = [0, 2, 3] : tensor<2x3x8x8xf32>
  return %9, %29, %31, %23 : tensor<f32>, tensor<2x3x8x8xf32>, tensor<3xf32>, tensor<f32>
}
