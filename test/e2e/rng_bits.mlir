// kiln.rng_bits end to end: each word on counters and keys that vary per
// element, and the chain JAX builds for uniform floats (a key broadcast to
// a shape, the flat index as the counter, the xor word, its high 23 bits as
// the mantissa of a float in [1, 2)), fused and vectorized over a shape
// whose rows are not a multiple of the vector width.
//
// RUN: kiln-opt %s | kiln-opt -o /dev/null
// RUN: kiln-compile %s -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s

// CHECK: words(arg0: ui32[4,9], arg1: ui32[4,9], arg2: ui32[4,9], arg3: ui32[4,9]) -> (out0: ui32[4,9], out1: ui32[4,9], out2: ui32[4,9])
func.func @words(%k0: tensor<4x9xui32>, %k1: tensor<4x9xui32>, %hi: tensor<4x9xui32>, %lo: tensor<4x9xui32>) -> (tensor<4x9xui32>, tensor<4x9xui32>, tensor<4x9xui32>) {
  %first = kiln.rng_bits first, %k0, %k1, %hi, %lo : tensor<4x9xui32>
  %second = kiln.rng_bits second, %k0, %k1, %hi, %lo : tensor<4x9xui32>
  %xor = kiln.rng_bits xor, %k0, %k1, %hi, %lo : tensor<4x9xui32>
  return %first, %second, %xor : tensor<4x9xui32>, tensor<4x9xui32>, tensor<4x9xui32>
}

// CHECK: uniform(arg0: ui32[], arg1: ui32[]) -> (out0: f32[64,33], out1: ui32[64,33])
func.func @uniform(%k0: tensor<ui32>, %k1: tensor<ui32>) -> (tensor<64x33xf32>, tensor<64x33xui32>) {
  %key0 = kiln.broadcast_in_dim %k0, dims = [] : (tensor<ui32>) -> tensor<64x33xui32>
  %key1 = kiln.broadcast_in_dim %k1, dims = [] : (tensor<ui32>) -> tensor<64x33xui32>
  %row = kiln.iota dim = 0 : tensor<64x33xui32>
  %col = kiln.iota dim = 1 : tensor<64x33xui32>
  %width = kiln.constant dense<33> : tensor<64x33xui32>
  %rows = kiln.mul %row, %width : tensor<64x33xui32>
  %lo = kiln.add %rows, %col : tensor<64x33xui32>
  %hi = kiln.constant dense<0> : tensor<64x33xui32>
  %bits = kiln.rng_bits xor, %key0, %key1, %hi, %lo : tensor<64x33xui32>
  %nine = kiln.constant dense<9> : tensor<64x33xui32>
  %mantissa = kiln.shift_right %bits, %nine : tensor<64x33xui32>
  %one_bits = kiln.constant dense<1065353216> : tensor<64x33xui32>
  %in_one_two = kiln.or %mantissa, %one_bits : tensor<64x33xui32>
  %floats = kiln.bitcast %in_one_two : tensor<64x33xui32> to tensor<64x33xf32>
  %one = kiln.constant dense<1.0> : tensor<64x33xf32>
  %uniform = kiln.sub %floats, %one : tensor<64x33xf32>
  return %uniform, %bits : tensor<64x33xf32>, tensor<64x33xui32>
}
