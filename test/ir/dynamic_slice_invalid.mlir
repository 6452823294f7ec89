// Verifier errors of kiln.dynamic_slice and kiln.dynamic_update_slice.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics

func.func @slice_rank0(%b: tensor<f32>, %i: tensor<i64>) {
  // expected-error @+1 {{'kiln.dynamic_slice' op operand must have rank >= 1}}
  %0 = kiln.dynamic_slice %b[%i], size = 1 : tensor<f32>
  return
}

// -----

func.func @slice_too_many_rows(%b: tensor<3x2xf32>, %i: tensor<i64>) {
  // expected-error @+1 {{'kiln.dynamic_slice' op size 4 must be in [0, 3] (the operand's rows)}}
  %0 = kiln.dynamic_slice %b[%i], size = 4 : tensor<3x2xf32>
  return
}

// -----

func.func @slice_i32_index(%b: tensor<3x2xf32>, %i: tensor<i32>) {
  // expected-error @+1 {{'kiln.dynamic_slice' op operand #1 must be 0D tensor of 64-bit signless integer values, but got 'tensor<i32>'}}
  %0 = "kiln.dynamic_slice"(%b, %i) <{size = 1 : i64}> : (tensor<3x2xf32>, tensor<i32>) -> tensor<1x2xf32>
  return
}

// -----

func.func @update_wrong_row_shape(%b: tensor<3x2xf32>, %u: tensor<1x3xf32>, %i: tensor<i64>) {
  // expected-error @+1 {{'kiln.dynamic_update_slice' op update of type 'tensor<1x3xf32>' does not fit in operand of type 'tensor<3x2xf32>': it needs the operand's element type and shape past dimension 0, and at most 3 rows}}
  %0 = kiln.dynamic_update_slice %b[%i], %u : tensor<3x2xf32>, tensor<1x3xf32>
  return
}

// -----

func.func @update_too_many_rows(%b: tensor<3x2xf32>, %u: tensor<4x2xf32>, %i: tensor<i64>) {
  // expected-error @+1 {{does not fit in operand of type 'tensor<3x2xf32>'}}
  %0 = kiln.dynamic_update_slice %b[%i], %u : tensor<3x2xf32>, tensor<4x2xf32>
  return
}

// -----

func.func @update_element_type(%b: tensor<3x2xf32>, %u: tensor<1x2xf64>, %i: tensor<i64>) {
  // expected-error @+1 {{does not fit in operand of type 'tensor<3x2xf32>'}}
  %0 = kiln.dynamic_update_slice %b[%i], %u : tensor<3x2xf32>, tensor<1x2xf64>
  return
}
