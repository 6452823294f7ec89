// One case per verifier error of kiln.conv and kiln.reverse.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics

func.func @element_types(%x: tensor<1x1x4xf32>, %w: tensor<1x1x3xf64>) {
  // expected-error @+1 {{'kiln.conv' op input element type 'f32' differs from weight's 'f64'}}
  %y = kiln.conv %x, %w, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<1x1x4xf32>, tensor<1x1x3xf64>
  return
}

// -----

func.func @integers(%x: tensor<1x1x4xi32>, %w: tensor<1x1x3xi32>) {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of}}
  %y = kiln.conv %x, %w, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<1x1x4xi32>, tensor<1x1x3xi32>
  return
}

// -----

func.func @rank_too_small(%x: tensor<1x4xf32>, %w: tensor<1x4xf32>) {
  // expected-error @+1 {{'kiln.conv' op input [1,4] must have rank >= 3 ([N, C, spatial...])}}
  %y = kiln.conv %x, %w, strides = [], padding_low = [], padding_high = [], lhs_dilation = [], rhs_dilation = [], groups = 1 : tensor<1x4xf32>, tensor<1x4xf32>
  return
}

// -----

func.func @ranks_differ(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op weight [1,1,3] has rank 3 but the input [1,1,4,4] has rank 4}}
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x1x4x4xf32>, tensor<1x1x3xf32>
  return
}

// -----

func.func @strides_length(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op strides has 1 entries but there are 2 spatial dimensions}}
  %y = kiln.conv %x, %w, strides = [1], padding_low = [0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>
  return
}

// -----

func.func @padding_low_length(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op padding_low has 3 entries but there are 2 spatial dimensions}}
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [0, 0, 0], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>
  return
}

// -----

func.func @padding_high_length(%x: tensor<1x1x4xf32>, %w: tensor<1x1x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op padding_high has 0 entries but there are 1 spatial dimensions}}
  %y = kiln.conv %x, %w, strides = [1], padding_low = [0], padding_high = [], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<1x1x4xf32>, tensor<1x1x3xf32>
  return
}

// -----

func.func @lhs_dilation_length(%x: tensor<1x1x4xf32>, %w: tensor<1x1x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op lhs_dilation has 2 entries but there are 1 spatial dimensions}}
  %y = kiln.conv %x, %w, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1, 1], rhs_dilation = [1], groups = 1 : tensor<1x1x4xf32>, tensor<1x1x3xf32>
  return
}

// -----

func.func @rhs_dilation_length(%x: tensor<1x1x4xf32>, %w: tensor<1x1x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op rhs_dilation has 2 entries but there are 1 spatial dimensions}}
  %y = kiln.conv %x, %w, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1, 1], groups = 1 : tensor<1x1x4xf32>, tensor<1x1x3xf32>
  return
}

// -----

func.func @stride_zero(%x: tensor<1x1x4xf32>, %w: tensor<1x1x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op strides[0] = 0 must be >= 1}}
  %y = kiln.conv %x, %w, strides = [0], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<1x1x4xf32>, tensor<1x1x3xf32>
  return
}

// -----

func.func @negative_padding(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op padding_low[1] = -1 must be >= 0}}
  %y = kiln.conv %x, %w, strides = [1, 1], padding_low = [0, -1], padding_high = [0, 0], lhs_dilation = [1, 1], rhs_dilation = [1, 1], groups = 1 : tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>
  return
}

// -----

func.func @negative_padding_high(%x: tensor<1x1x4xf32>, %w: tensor<1x1x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op padding_high[0] = -2 must be >= 0}}
  %y = kiln.conv %x, %w, strides = [1], padding_low = [0], padding_high = [-2], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<1x1x4xf32>, tensor<1x1x3xf32>
  return
}

// -----

func.func @lhs_dilation_zero(%x: tensor<1x1x4xf32>, %w: tensor<1x1x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op lhs_dilation[0] = 0 must be >= 1}}
  %y = kiln.conv %x, %w, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [0], rhs_dilation = [1], groups = 1 : tensor<1x1x4xf32>, tensor<1x1x3xf32>
  return
}

// -----

func.func @rhs_dilation_zero(%x: tensor<1x1x4xf32>, %w: tensor<1x1x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op rhs_dilation[0] = 0 must be >= 1}}
  %y = kiln.conv %x, %w, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [0], groups = 1 : tensor<1x1x4xf32>, tensor<1x1x3xf32>
  return
}

// -----

func.func @groups_zero(%x: tensor<1x2x4xf32>, %w: tensor<2x2x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op groups = 0 must be >= 1}}
  %y = kiln.conv %x, %w, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 0 : tensor<1x2x4xf32>, tensor<2x2x3xf32>
  return
}

// -----

func.func @groups_input_channels(%x: tensor<1x3x4xf32>, %w: tensor<2x1x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op groups = 2 does not divide the 3 input channels}}
  %y = kiln.conv %x, %w, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 2 : tensor<1x3x4xf32>, tensor<2x1x3xf32>
  return
}

// -----

func.func @groups_output_channels(%x: tensor<1x4x4xf32>, %w: tensor<3x2x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op groups = 2 does not divide the 3 output channels (weight dimension 0)}}
  %y = kiln.conv %x, %w, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 2 : tensor<1x4x4xf32>, tensor<3x2x3xf32>
  return
}

// -----

func.func @weight_channels(%x: tensor<1x4x4xf32>, %w: tensor<2x4x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op weight [2,4,3] must have C / groups = 2 in dimension 1 (input channels 4, groups 2)}}
  %y = kiln.conv %x, %w, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 2 : tensor<1x4x4xf32>, tensor<2x4x3xf32>
  return
}

// -----

// The generic form states a result type; it must be the inferred one.
func.func @result_type(%x: tensor<1x1x4xf32>, %w: tensor<1x1x3xf32>) {
  // expected-error @+2 {{'kiln.conv' op inferred type(s) 'tensor<1x1x2xf32>' are incompatible with return type(s) of operation 'tensor<1x1x3xf32>'}}
  // expected-error @+1 {{'kiln.conv' op failed to infer returned types}}
  %y = "kiln.conv"(%x, %w) <{strides = array<i64: 1>, padding_low = array<i64: 0>, padding_high = array<i64: 0>, lhs_dilation = array<i64: 1>, rhs_dilation = array<i64: 1>, groups = 1 : i64}> : (tensor<1x1x4xf32>, tensor<1x1x3xf32>) -> tensor<1x1x3xf32>
  return
}

// -----

func.func @reverse_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'kiln.reverse' op dimension 2 is out of range for operand of rank 2}}
  %r = kiln.reverse %x, dims = [2] : tensor<2x3xf32>
  return
}

// -----

func.func @reverse_negative(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'kiln.reverse' op dimension -1 is out of range for operand of rank 2}}
  %r = kiln.reverse %x, dims = [-1] : tensor<2x3xf32>
  return
}

// -----

func.func @reverse_twice(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'kiln.reverse' op dimension 1 is listed twice}}
  %r = kiln.reverse %x, dims = [1, 1] : tensor<2x3xf32>
  return
}

// -----

// Sizes past int64 (a bit flip in a .kfb file made one; found by UBSan).
func.func @size_overflows(%x: tensor<1x1x4xf32>, %w: tensor<1x1x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op spatial dimension 0: the padded, dilated input or the dilated kernel is larger than 64-bit sizes allow}}
  %y = kiln.conv %x, %w, strides = [1], padding_low = [0], padding_high = [0], lhs_dilation = [4611686018427387904], rhs_dilation = [1], groups = 1 : tensor<1x1x4xf32>, tensor<1x1x3xf32>
  return
}

// -----

func.func @padding_overflows(%x: tensor<1x1x4xf32>, %w: tensor<1x1x3xf32>) {
  // expected-error @+1 {{'kiln.conv' op spatial dimension 0: the padded, dilated input or the dilated kernel is larger than 64-bit sizes allow}}
  %y = kiln.conv %x, %w, strides = [1], padding_low = [9223372036854775807], padding_high = [0], lhs_dilation = [1], rhs_dilation = [1], groups = 1 : tensor<1x1x4xf32>, tensor<1x1x3xf32>
  return
}
