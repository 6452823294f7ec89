// The type constraints around the integer types: signed integers are
// signless (si8 is not a kiln type), there is no ui1, the shifts take
// integers only and both operands have one type.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics

func.func @explicitly_signed(%a: tensor<4xsi8>) -> tensor<4xsi8> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor}}
  %0 = kiln.add %a, %a : tensor<4xsi8>
  return %0 : tensor<4xsi8>
}

// -----

func.func @unsigned_bool(%a: tensor<4xui1>) -> tensor<4xui1> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor}}
  %0 = kiln.and %a, %a : tensor<4xui1>
  return %0 : tensor<4xui1>
}

// -----

func.func @shift_float(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 8-bit signless integer or 16-bit signless integer or 32-bit signless integer or 64-bit signless integer or 8-bit unsigned integer}}
  %0 = kiln.shift_left %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @shift_bool(%a: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 8-bit signless integer}}
  %0 = kiln.shift_right %a, %a : tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @shift_mixed_sign(%a: tensor<4xui8>, %b: tensor<4xi8>) -> tensor<4xui8> {
  // expected-error @+1 {{'kiln.shift_left' op requires the same type for all operands and results}}
  %0 = "kiln.shift_left"(%a, %b) : (tensor<4xui8>, tensor<4xi8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// Pow, exp and the other float functions take no integers, unsigned or not.
func.func @pow_unsigned(%a: tensor<4xui32>) -> tensor<4xui32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %0 = kiln.pow %a, %a : tensor<4xui32>
  return %0 : tensor<4xui32>
}
