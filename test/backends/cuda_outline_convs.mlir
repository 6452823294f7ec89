// REQUIRES: cuda-backend
// RUN: kiln-opt %s --split-input-file --kiln-cuda-outline-convs | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-cuda-outline-convs=tf32=true | FileCheck %s --check-prefix=TF32

// A grouped, strided f32 convolution with uneven padding moves into a
// marked function whose body only allocates the result. The descriptor:
// k = 2, groups 2, dtype f32, flags, N, C, O, then D, K, E, strides, low
// and high padding and dilation, two entries each.
// CHECK-LABEL: func.func @grouped
// CHECK: %[[Y:.*]] = call @kiln_cuda_conv(%arg0, %arg1)
// CHECK: kiln.relu %[[Y]]
// CHECK: func.func private @kiln_cuda_conv(%arg0: tensor<2x8x12x12xf32> {bufferization.access = "read"}, %arg1: tensor<16x4x3x3xf32> {bufferization.access = "read"}) -> tensor<2x16x6x6xf32>
// CHECK-SAME: kiln.cuda_conv = array<i64: 2, 2, [[F32:[0-9]+]], 0, 2, 8, 16, 12, 12, 3, 3, 6, 6, 2, 2, 1, 1, 0, 0, 1, 1>
// CHECK-NEXT: tensor.empty() : tensor<2x16x6x6xf32>
// CHECK-NOT: kiln.conv
// TF32-LABEL: func.func @grouped
// TF32: kiln.cuda_conv = array<i64: 2, 2, {{[0-9]+}}, 1, 2, 8, 16,
func.func @grouped(%x: tensor<2x8x12x12xf32>, %w: tensor<16x4x3x3xf32>) -> tensor<2x16x6x6xf32> {
  %y = kiln.conv %x, %w, strides = [2, 2], padding_low = [1, 1], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 2 : tensor<2x8x12x12xf32>, tensor<16x4x3x3xf32>
  %r = kiln.relu %y : tensor<2x16x6x6xf32>
  return %r : tensor<2x16x6x6xf32>
}

// -----

// 1-d and 3-d convolutions with kernel dilation, in bf16: TF32 is an f32
// matter only.
// CHECK-LABEL: func.func @one_and_three
// CHECK-COUNT-2: call @kiln_cuda_conv
// CHECK: kiln.cuda_conv = array<i64: 1, 1, [[BF16:[0-9]+]], 0, 4, 8, 16, 40, 5, 32, 1, 0, 0, 2>
// CHECK: kiln.cuda_conv = array<i64: 3, 1, [[BF16]], 0, 1, 4, 8, 6, 6, 6, 3, 3, 3, 4, 4, 4, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1>
// TF32-LABEL: func.func @one_and_three
// TF32: kiln.cuda_conv = array<i64: 1, 1, {{[0-9]+}}, 0,
func.func @one_and_three(%a: tensor<4x8x40xbf16>, %wa: tensor<16x8x5xbf16>, %b: tensor<1x4x6x6x6xbf16>, %wb: tensor<8x4x3x3x3xbf16>) -> (tensor<4x16x32xbf16>, tensor<1x8x4x4x4xbf16>) {
  %ya = kiln.conv %a, %wa, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [2], groups = 1 : tensor<4x8x40xbf16>, tensor<16x8x5xbf16>
  %yb = kiln.conv %b, %wb, strides = [1, 1, 1], padding_low = [0, 0, 0], padding_high = [0, 0, 0], lhs_dilation = [1, 1, 1], rhs_dilation = [1, 1, 1], groups = 1 : tensor<1x4x6x6x6xbf16>, tensor<8x4x3x3x3xbf16>
  return %ya, %yb : tensor<4x16x32xbf16>, tensor<1x8x4x4x4xbf16>
}

// -----

// An input-dilated convolution with unit strides is cuDNN's backward data
// of a forward convolution of stride 2: its kernel [6, 2, 3, 3] in two
// groups becomes the forward one [4, 3, 3, 3] (channel dims swapped within
// each group, reversed in space), and padding 2 on either side of the
// 3-wide window is none for the forward convolution (W - 1 - 2 = 0).
// CHECK-LABEL: func.func @transposed
// CHECK: %[[G:.*]] = kiln.reshape %arg1 : (tensor<6x2x3x3xf32>) -> tensor<2x3x2x3x3xf32>
// CHECK: %[[T:.*]] = kiln.transpose %[[G]], permutation = [0, 2, 1, 3, 4]
// CHECK: %[[F:.*]] = kiln.reshape %[[T]] : (tensor<2x2x3x3x3xf32>) -> tensor<4x3x3x3xf32>
// CHECK: %[[R:.*]] = kiln.reverse %[[F]], dims = [2, 3] : tensor<4x3x3x3xf32>
// CHECK: call @kiln_cuda_conv(%arg0, %[[R]]) : (tensor<1x4x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<1x6x11x11xf32>
// CHECK: kiln.cuda_conv = array<i64: 2, 2, {{[0-9]+}}, 2, 1, 4, 6, 5, 5, 3, 3, 11, 11, 2, 2, 0, 0, 0, 0, 1, 1>
func.func @transposed(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x11x11xf32> {
  %t = kiln.conv %x, %w, strides = [1, 1], padding_low = [2, 2], padding_high = [2, 2], lhs_dilation = [2, 2], rhs_dilation = [1, 1], groups = 2 : tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>
  return %t : tensor<1x6x11x11xf32>
}

// -----

// A kernel gradient as kiln-grad writes it (input and cotangent regrouped
// with batch and channel dims swapped, a convolution with stride and
// dilation exchanged, its extra offsets sliced off, the result
// transposed) is cuDNN's backward filter on the input and cotangent
// themselves: the forward convolution was 3x3, stride 2, padding 1 before,
// and no padding after makes 6 outputs of 12.
// CHECK-LABEL: func.func @kernel_gradient
// CHECK-NEXT: %[[DW:.*]] = call @kiln_cuda_conv(%arg0, %arg1) : (tensor<2x8x12x12xf32>, tensor<2x16x6x6xf32>) -> tensor<16x8x3x3xf32>
// CHECK-NEXT: return %[[DW]]
// CHECK: kiln.cuda_conv = array<i64: 2, 1, {{[0-9]+}}, 4, 2, 8, 16, 12, 12, 3, 3, 6, 6, 2, 2, 1, 1, 0, 0, 1, 1>
func.func @kernel_gradient(%x: tensor<2x8x12x12xf32>, %dy: tensor<2x16x6x6xf32>) -> tensor<16x8x3x3xf32> {
  %0 = kiln.reshape %x : (tensor<2x8x12x12xf32>) -> tensor<2x1x8x12x12xf32>
  %1 = kiln.transpose %0, permutation = [2, 1, 0, 3, 4] : tensor<2x1x8x12x12xf32>
  %2 = kiln.reshape %1 : (tensor<8x1x2x12x12xf32>) -> tensor<8x2x12x12xf32>
  %3 = kiln.reshape %dy : (tensor<2x16x6x6xf32>) -> tensor<2x1x16x6x6xf32>
  %4 = kiln.transpose %3, permutation = [1, 2, 0, 3, 4] : tensor<2x1x16x6x6xf32>
  %5 = kiln.reshape %4 : (tensor<1x16x2x6x6xf32>) -> tensor<16x2x6x6xf32>
  %6 = kiln.conv %2, %5, strides = [1, 1], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [2, 2], groups = 1 : tensor<8x2x12x12xf32>, tensor<16x2x6x6xf32>
  %7 = kiln.slice %6, start = [0, 0, 0, 0], limit = [8, 16, 3, 3], stride = [1, 1, 1, 1] : tensor<8x16x4x4xf32>
  %8 = kiln.transpose %7, permutation = [1, 0, 2, 3] : tensor<8x16x3x3xf32>
  return %8 : tensor<16x8x3x3xf32>
}

// -----

// A grouped kernel gradient keeps its groups; with one group the regrouping
// may also be a plain swap of the first two dims.
// CHECK-LABEL: func.func @grouped_kernel_gradient
// CHECK: call @kiln_cuda_conv(%arg0, %arg1) : (tensor<2x4x11xf32>, tensor<2x6x5xf32>) -> tensor<6x2x3xf32>
// CHECK: call @kiln_cuda_conv_0(%arg0, %arg2) : (tensor<2x4x11xf32>, tensor<2x6x11xf32>) -> tensor<6x4x1xf32>
// CHECK: kiln.cuda_conv = array<i64: 1, 2, {{[0-9]+}}, 4, 2, 4, 6, 11, 3, 5, 2, 2, 0, 2>
// CHECK: kiln.cuda_conv = array<i64: 1, 1, {{[0-9]+}}, 4, 2, 4, 6, 11, 1, 11, 1, 0, 0, 1>
func.func @grouped_kernel_gradient(%x: tensor<2x4x11xf32>, %dy: tensor<2x6x5xf32>, %dz: tensor<2x6x11xf32>) -> (tensor<6x2x3xf32>, tensor<6x4x1xf32>) {
  %0 = kiln.reshape %x : (tensor<2x4x11xf32>) -> tensor<2x2x2x11xf32>
  %1 = kiln.transpose %0, permutation = [2, 1, 0, 3] : tensor<2x2x2x11xf32>
  %2 = kiln.reshape %1 : (tensor<2x2x2x11xf32>) -> tensor<2x4x11xf32>
  %3 = kiln.reshape %dy : (tensor<2x6x5xf32>) -> tensor<2x2x3x5xf32>
  %4 = kiln.transpose %3, permutation = [1, 2, 0, 3] : tensor<2x2x3x5xf32>
  %5 = kiln.reshape %4 : (tensor<2x3x2x5xf32>) -> tensor<6x2x5xf32>
  %6 = kiln.conv %2, %5, strides = [2], padding_low = [2], padding_high = [0], lhs_dilation = [1], rhs_dilation = [2], groups = 2 : tensor<2x4x11xf32>, tensor<6x2x5xf32>
  %7 = kiln.transpose %6, permutation = [1, 0, 2] : tensor<2x6x3xf32>
  %s = kiln.transpose %x, permutation = [1, 0, 2] : tensor<2x4x11xf32>
  %t = kiln.transpose %dz, permutation = [1, 0, 2] : tensor<2x6x11xf32>
  %8 = kiln.conv %s, %t, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<4x2x11xf32>, tensor<6x2x11xf32>
  %9 = kiln.transpose %8, permutation = [1, 0, 2] : tensor<4x6x1xf32>
  return %7, %9 : tensor<6x2x3xf32>, tensor<6x4x1xf32>
}

// -----

// What cuDNN does not compute stays a kiln.conv: input dilation with a
// stride, padding wider than the window (no forward convolution's backward
// data), f64, an empty batch.
// CHECK-LABEL: func.func @stays
// CHECK-NOT: call
// CHECK-COUNT-4: kiln.conv
// CHECK-NOT: kiln_cuda_conv
func.func @stays(%x: tensor<1x4x5x5xf32>, %w: tensor<3x4x3x3xf32>, %xd: tensor<1x4x5x5xf64>, %wd: tensor<3x4x3x3xf64>, %e: tensor<0x4x5x5xf32>) -> (tensor<1x3x6x6xf32>, tensor<1x3x13x13xf32>, tensor<1x3x3x3xf64>, tensor<0x3x3x3xf32>) {
  %t = kiln.conv %x, %w, strides = [2, 2], padding_low = [2, 2], padding_high = [2, 2], lhs_dilation = [2, 2], rhs_dilation = [1, 1], groups = 1 : tensor<1x4x5x5xf32>, tensor<3x4x3x3xf32>
  %p = kiln.conv %x, %w, strides = [1, 1], padding_low = [3, 3], padding_high = [3, 3], lhs_dilation = [2, 2], rhs_dilation = [1, 1], groups = 1 : tensor<1x4x5x5xf32>, tensor<3x4x3x3xf32>
  %d = kiln.conv %xd, %wd, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x4x5x5xf64>, tensor<3x4x3x3xf64>
  %z = kiln.conv %e, %w, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<0x4x5x5xf32>, tensor<3x4x3x3xf32>
  return %t, %p, %d, %z : tensor<1x3x6x6xf32>, tensor<1x3x13x13xf32>, tensor<1x3x3x3xf64>, tensor<0x3x3x3xf32>
}
