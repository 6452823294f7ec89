// kiln.conv and kiln.reverse: the custom form round-trips, the generic form
// parses back into it, and the result type is inferred from the operands
// and attributes (the generic form below states none).
// RUN: kiln-opt %s --split-input-file | kiln-opt --split-input-file | FileCheck %s
// RUN: kiln-opt %s --split-input-file --mlir-print-op-generic | kiln-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @conv2d
// CHECK: kiln.conv %{{.+}}, %{{.+}}, strides = [2, 2], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>
func.func @conv2d(%x: tensor<1x3x32x32xf32>, %w: tensor<8x3x3x3xf32>) -> tensor<1x8x16x16xf32> {
  %y = kiln.conv %x, %w, strides = [2, 2], padding_low = [1, 1], padding_high = [1, 1], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>
  return %y : tensor<1x8x16x16xf32>
}

// -----

// 1-d with dilations and groups; 3-d depthwise in f64. The output sizes:
// ((7-1)*2+1 + 1 + 0 - ((3-1)*2+1)) / 1 + 1 = 10, and (4 + 2 - 3) / 2 + 1 = 2.
// CHECK-LABEL: func.func @conv1d_conv3d
// CHECK: kiln.conv %{{.+}}, %{{.+}}, strides = [1], padding_low = [1], padding_high = [0], lhs_dilation = [2], rhs_dilation = [2], groups = 2 : tensor<2x4x7xf32>, tensor<6x2x3xf32>
// CHECK: kiln.conv %{{.+}}, %{{.+}}, strides = [2, 1, 1], padding_low = [1, 0, 0], padding_high = [1, 0, 0], lhs_dilation = [1, 1, 1], rhs_dilation = [1, 1, 1], groups = 3 : tensor<1x3x4x2x2xf64>, tensor<3x1x3x1x1xf64>
func.func @conv1d_conv3d(%a: tensor<2x4x7xf32>, %b: tensor<6x2x3xf32>, %c: tensor<1x3x4x2x2xf64>, %d: tensor<3x1x3x1x1xf64>) -> (tensor<2x6x10xf32>, tensor<1x3x2x2x2xf64>) {
  %y = kiln.conv %a, %b, strides = [1], padding_low = [1], padding_high = [0], lhs_dilation = [2], rhs_dilation = [2], groups = 2 : tensor<2x4x7xf32>, tensor<6x2x3xf32>
  %z = "kiln.conv"(%c, %d) <{strides = array<i64: 2, 1, 1>, padding_low = array<i64: 1, 0, 0>, padding_high = array<i64: 1, 0, 0>, lhs_dilation = array<i64: 1, 1, 1>, rhs_dilation = array<i64: 1, 1, 1>, groups = 3 : i64}> : (tensor<1x3x4x2x2xf64>, tensor<3x1x3x1x1xf64>) -> tensor<1x3x2x2x2xf64>
  return %y, %z : tensor<2x6x10xf32>, tensor<1x3x2x2x2xf64>
}

// -----

// A kernel larger than the padded input gives an empty output dim; so does
// an empty input.
// CHECK-LABEL: func.func @conv_empty
// CHECK: kiln.conv {{.+}} : tensor<1x1x2xf32>, tensor<1x1x5xf32>
// CHECK: kiln.conv {{.+}} : tensor<0x1x0xf32>, tensor<2x1x1xf32>
func.func @conv_empty(%a: tensor<1x1x2xf32>, %b: tensor<1x1x5xf32>, %c: tensor<0x1x0xf32>, %d: tensor<2x1x1xf32>) -> (tensor<1x1x0xf32>, tensor<0x2x0xf32>) {
  %y = kiln.conv %a, %b, strides = [1], padding_low = [1], padding_high = [1], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<1x1x2xf32>, tensor<1x1x5xf32>
  %z = kiln.conv %c, %d, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<0x1x0xf32>, tensor<2x1x1xf32>
  return %y, %z : tensor<1x1x0xf32>, tensor<0x2x0xf32>
}

// -----

// CHECK-LABEL: func.func @reverse
// CHECK: kiln.reverse %{{.+}}, dims = [0, 2] : tensor<2x3x4xf32>
// CHECK: kiln.reverse %{{.+}}, dims = [] : tensor<5xi32>
func.func @reverse(%x: tensor<2x3x4xf32>, %i: tensor<5xi32>) -> (tensor<2x3x4xf32>, tensor<5xi32>) {
  %r = kiln.reverse %x, dims = [0, 2] : tensor<2x3x4xf32>
  %s = "kiln.reverse"(%i) <{dims = array<i64>}> : (tensor<5xi32>) -> tensor<5xi32>
  return %r, %s : tensor<2x3x4xf32>, tensor<5xi32>
}
