// Verifier errors of kiln.pad, kiln.reduce_window and
// kiln.reduce_window_max_grad.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics

func.func @pad_value_not_rank0(%x: tensor<2xf32>, %v: tensor<1xf32>) {
  // expected-error @+1 {{'kiln.pad' op padding value of type 'tensor<1xf32>' must be a rank-0 tensor of the operand's element type 'f32'}}
  %0 = kiln.pad %x, %v, low = [0], high = [0], interior = [0] : tensor<2xf32>, tensor<1xf32>
  return
}

// -----

func.func @pad_value_other_type(%x: tensor<2xf32>, %v: tensor<f64>) {
  // expected-error @+1 {{'kiln.pad' op padding value of type 'tensor<f64>' must be a rank-0 tensor of the operand's element type 'f32'}}
  %0 = kiln.pad %x, %v, low = [0], high = [0], interior = [0] : tensor<2xf32>, tensor<f64>
  return
}

// -----

func.func @pad_lengths(%x: tensor<2x3xf32>, %v: tensor<f32>) {
  // expected-error @+1 {{'kiln.pad' op low, high and interior need 2 entries each (the operand rank), got 2, 1 and 2}}
  %0 = kiln.pad %x, %v, low = [0, 0], high = [0], interior = [0, 0] : tensor<2x3xf32>, tensor<f32>
  return
}

// -----

func.func @pad_negative_low(%x: tensor<2xf32>, %v: tensor<f32>) {
  // expected-error @+1 {{'kiln.pad' op dimension 0: low (-1), high (0) and interior (0) must be >= 0}}
  %0 = kiln.pad %x, %v, low = [-1], high = [0], interior = [0] : tensor<2xf32>, tensor<f32>
  return
}

// -----

func.func @pad_negative_interior(%x: tensor<2x2xi32>, %v: tensor<i32>) {
  // expected-error @+1 {{'kiln.pad' op dimension 1: low (0), high (0) and interior (-2) must be >= 0}}
  %0 = kiln.pad %x, %v, low = [0, 0], high = [0, 0], interior = [0, -2] : tensor<2x2xi32>, tensor<i32>
  return
}

// -----

func.func @pad_wrong_result(%x: tensor<2xf32>, %v: tensor<f32>) {
  // expected-error @+2 {{'kiln.pad' op inferred type(s) 'tensor<5xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error @+1 {{'kiln.pad' op failed to infer returned types}}
  %0 = "kiln.pad"(%x, %v) <{low = array<i64: 1>, high = array<i64: 1>, interior = array<i64: 1>}> : (tensor<2xf32>, tensor<f32>) -> tensor<4xf32>
  return
}

// -----

func.func @window_lengths(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'kiln.reduce_window' op window, strides, padding_low, padding_high and dilations need 2 entries each (the operand rank), got 2, 2, 1, 2 and 2}}
  %0 = kiln.reduce_window %x, kind = max, window = [2, 2], strides = [1, 1], padding_low = [0], padding_high = [0, 0], dilations = [1, 1] : tensor<4x4xf32>
  return
}

// -----

func.func @window_zero(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'kiln.reduce_window' op window[1] = 0 must be >= 1}}
  %0 = kiln.reduce_window %x, kind = max, window = [2, 0], strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], dilations = [1, 1] : tensor<4x4xf32>
  return
}

// -----

func.func @stride_zero(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'kiln.reduce_window' op strides[0] = 0 must be >= 1}}
  %0 = kiln.reduce_window %x, kind = sum, window = [2, 2], strides = [0, 1], padding_low = [0, 0], padding_high = [0, 0], dilations = [1, 1] : tensor<4x4xf32>
  return
}

// -----

func.func @dilation_negative(%x: tensor<4x4xi64>) {
  // expected-error @+1 {{'kiln.reduce_window' op dilations[1] = -1 must be >= 1}}
  %0 = kiln.reduce_window %x, kind = sum, window = [2, 2], strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], dilations = [1, -1] : tensor<4x4xi64>
  return
}

// -----

func.func @padding_negative(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'kiln.reduce_window' op dimension 0: padding_low (0) and padding_high (-1) must be >= 0}}
  %0 = kiln.reduce_window %x, kind = max, window = [2, 2], strides = [1, 1], padding_low = [0, 0], padding_high = [-1, 0], dilations = [1, 1] : tensor<4x4xf32>
  return
}

// -----

func.func @window_too_large(%x: tensor<4x4xf32>) {
  // expected-error @+1 {{'kiln.reduce_window' op dimension 1: the window spans 7 elements (window 4, dilation 2) but the padded operand has only 6}}
  %0 = kiln.reduce_window %x, kind = max, window = [2, 4], strides = [1, 1], padding_low = [0, 1], padding_high = [0, 1], dilations = [1, 2] : tensor<4x4xf32>
  return
}

// -----

func.func @window_of_bools(%x: tensor<4xi1>) {
  // expected-error @+1 {{'kiln.reduce_window' op operand #0 must be statically shaped tensor of}}
  %0 = kiln.reduce_window %x, kind = max, window = [2], strides = [1], padding_low = [0], padding_high = [0], dilations = [1] : tensor<4xi1>
  return
}

// -----

func.func @unknown_kind(%x: tensor<4xf32>) {
  // expected-error @+1 {{custom op 'kiln.reduce_window' expected string or keyword containing one of the following enum values for attribute 'kind' [max, sum]}}
  %0 = kiln.reduce_window %x, kind = min, window = [2], strides = [1], padding_low = [0], padding_high = [0], dilations = [1] : tensor<4xf32>
  return
}

// -----

func.func @grad_lengths(%x: tensor<4xf32>, %dy: tensor<3xf32>) {
  // expected-error @+1 {{'kiln.reduce_window_max_grad' op window, strides, padding_low, padding_high and dilations need 1 entries each (the operand rank), got 1, 1, 1, 1 and 2}}
  %0 = kiln.reduce_window_max_grad %x, %dy, window = [2], strides = [1], padding_low = [0], padding_high = [0], dilations = [1, 1] : tensor<4xf32>, tensor<3xf32>
  return
}

// -----

func.func @grad_window_too_large(%x: tensor<4xf32>, %dy: tensor<1xf32>) {
  // expected-error @+1 {{'kiln.reduce_window_max_grad' op dimension 0: the window spans 5 elements (window 5, dilation 1) but the padded operand has only 4}}
  %0 = kiln.reduce_window_max_grad %x, %dy, window = [5], strides = [1], padding_low = [0], padding_high = [0], dilations = [1] : tensor<4xf32>, tensor<1xf32>
  return
}

// -----

func.func @grad_cotangent_shape(%x: tensor<4xf32>, %dy: tensor<2xf32>) {
  // expected-error @+1 {{'kiln.reduce_window_max_grad' op cotangent has type 'tensor<2xf32>' but the max pooling's result has type 'tensor<3xf32>'}}
  %0 = kiln.reduce_window_max_grad %x, %dy, window = [2], strides = [1], padding_low = [0], padding_high = [0], dilations = [1] : tensor<4xf32>, tensor<2xf32>
  return
}

// -----

func.func @grad_cotangent_type(%x: tensor<4xf32>, %dy: tensor<3xf64>) {
  // expected-error @+1 {{'kiln.reduce_window_max_grad' op cotangent has type 'tensor<3xf64>' but the max pooling's result has type 'tensor<3xf32>'}}
  %0 = kiln.reduce_window_max_grad %x, %dy, window = [2], strides = [1], padding_low = [0], padding_high = [0], dilations = [1] : tensor<4xf32>, tensor<3xf64>
  return
}

// -----

func.func @grad_result_type(%x: tensor<4xf32>, %dy: tensor<3xf32>) {
  // expected-error @+1 {{'kiln.reduce_window_max_grad' op failed to verify that all of {operand, result} have same type}}
  %0 = "kiln.reduce_window_max_grad"(%x, %dy) <{window = array<i64: 2>, strides = array<i64: 1>, padding_low = array<i64: 0>, padding_high = array<i64: 0>, dilations = array<i64: 1>}> : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf64>
  return
}
