// Verifier errors of kiln.scatter_add.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics

func.func @wrong_row_shape(%t: tensor<10x4xf32>, %i: tensor<3xi32>, %u: tensor<3x5xf32>) {
  // expected-error @+1 {{'kiln.scatter_add' op updates must be 'tensor<3x4xf32>' (the indices' shape, then the table's past its rows), got 'tensor<3x5xf32>'}}
  %0 = kiln.scatter_add %t, %i, %u : tensor<10x4xf32>, tensor<3xi32>, tensor<3x5xf32>
  return
}

// -----

func.func @wrong_index_count(%t: tensor<10x4xf32>, %i: tensor<3xi32>, %u: tensor<2x4xf32>) {
  // expected-error @+1 {{'kiln.scatter_add' op updates must be 'tensor<3x4xf32>'}}
  %0 = kiln.scatter_add %t, %i, %u : tensor<10x4xf32>, tensor<3xi32>, tensor<2x4xf32>
  return
}

// -----

func.func @wrong_element_type(%t: tensor<10x4xf32>, %i: tensor<3xi32>, %u: tensor<3x4xf64>) {
  // expected-error @+1 {{'kiln.scatter_add' op updates must be 'tensor<3x4xf32>' (the indices' shape, then the table's past its rows), got 'tensor<3x4xf64>'}}
  %0 = kiln.scatter_add %t, %i, %u : tensor<10x4xf32>, tensor<3xi32>, tensor<3x4xf64>
  return
}

// -----

func.func @rank0_table(%t: tensor<f32>, %i: tensor<i32>, %u: tensor<f32>) {
  // expected-error @+1 {{'kiln.scatter_add' op table must have rank >= 1 and at least one row}}
  %0 = kiln.scatter_add %t, %i, %u : tensor<f32>, tensor<i32>, tensor<f32>
  return
}

// -----

func.func @no_rows(%t: tensor<0x4xf32>, %i: tensor<2xi32>, %u: tensor<2x4xf32>) {
  // expected-error @+1 {{'kiln.scatter_add' op table must have rank >= 1 and at least one row}}
  %0 = kiln.scatter_add %t, %i, %u : tensor<0x4xf32>, tensor<2xi32>, tensor<2x4xf32>
  return
}

// -----

func.func @float_indices(%t: tensor<10x4xf32>, %i: tensor<3xf32>, %u: tensor<3x4xf32>) {
  // expected-error @+1 {{'kiln.scatter_add' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<3xf32>'}}
  %0 = "kiln.scatter_add"(%t, %i, %u) : (tensor<10x4xf32>, tensor<3xf32>, tensor<3x4xf32>) -> tensor<10x4xf32>
  return
}

// -----

func.func @boolean_table(%t: tensor<10xi1>, %i: tensor<3xi32>, %u: tensor<3xi1>) {
  // expected-error @+1 {{'kiln.scatter_add' op operand #0 must be statically shaped tensor of}}
  %0 = "kiln.scatter_add"(%t, %i, %u) : (tensor<10xi1>, tensor<3xi32>, tensor<3xi1>) -> tensor<10xi1>
  return
}

// -----

func.func @wrong_result(%t: tensor<10x4xf32>, %i: tensor<3xi32>, %u: tensor<3x4xf32>) {
  // expected-error @+2 {{failed to infer returned types}}
  // expected-error @+1 {{'kiln.scatter_add' op inferred type(s) 'tensor<10x4xf32>' are incompatible with return type(s) of operation 'tensor<10x4xf64>'}}
  %0 = "kiln.scatter_add"(%t, %i, %u) : (tensor<10x4xf32>, tensor<3xi32>, tensor<3x4xf32>) -> tensor<10x4xf64>
  return
}
