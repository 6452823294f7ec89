// kiln.rng_bits takes ui32 keys and counters of one shape, and a word.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics

func.func @signless(%a: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of 32-bit unsigned integer values}}
  %0 = kiln.rng_bits xor, %a, %a, %a, %a : tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @shapes_differ(%key: tensor<ui32>, %counter: tensor<4xui32>) -> tensor<4xui32> {
  // expected-error @+1 {{all non-scalar operands/results must have the same shape and base type}}
  %0 = "kiln.rng_bits"(%key, %key, %counter, %counter) {word = 2 : i32} : (tensor<ui32>, tensor<ui32>, tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  return %0 : tensor<4xui32>
}

// -----

func.func @unknown_word(%a: tensor<4xui32>) -> tensor<4xui32> {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'word' [first, second, xor]}}
  %0 = kiln.rng_bits low, %a, %a, %a, %a : tensor<4xui32>
  return %0 : tensor<4xui32>
}
