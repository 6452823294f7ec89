// kiln.rng_bits: it parses and prints, and of constants it folds. The
// expected words are the known-answer vectors of Threefry-2x32-20 published
// with the Random123 library (key, counter) -> (first, second):
//   (0, 0), (0, 0)                   -> 0x6b200159, 0x99ba4efe
//   (~0, ~0), (~0, ~0)               -> 0x1cb996fc, 0xbb002be7
//   (0x13198a2e, 0x03707344), (0x243f6a88, 0x85a308d3)
//                                    -> 0xc4923a9c, 0x483df7a0
// which JAX's threefry2x32 also gives.
// RUN: kiln-opt %s --split-input-file | kiln-opt --split-input-file | FileCheck %s --check-prefix=ROUND
// RUN: kiln-opt %s --split-input-file --canonicalize | FileCheck %s

// ROUND-LABEL: func.func @known_answers
// ROUND: kiln.rng_bits first, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<3xui32>
// ROUND: kiln.rng_bits second,
// ROUND: kiln.rng_bits xor,
// CHECK-LABEL: func.func @known_answers
// CHECK-DAG: kiln.constant dense<[1797259609, 481924860, 3297917596]> : tensor<3xui32>
// CHECK-DAG: kiln.constant dense<[2579123966, 3137350631, 1212020640]> : tensor<3xui32>
// CHECK-DAG: kiln.constant dense<[4070199207, 2813967643, 2360331580]> : tensor<3xui32>
// CHECK-NOT: kiln.rng_bits
func.func @known_answers() -> (tensor<3xui32>, tensor<3xui32>, tensor<3xui32>) {
  %k0 = kiln.constant dense<[0, 4294967295, 320440878]> : tensor<3xui32>
  %k1 = kiln.constant dense<[0, 4294967295, 57701188]> : tensor<3xui32>
  %x0 = kiln.constant dense<[0, 4294967295, 608135816]> : tensor<3xui32>
  %x1 = kiln.constant dense<[0, 4294967295, 2242054355]> : tensor<3xui32>
  %first = kiln.rng_bits first, %k0, %k1, %x0, %x1 : tensor<3xui32>
  %second = kiln.rng_bits second, %k0, %k1, %x0, %x1 : tensor<3xui32>
  %xor = kiln.rng_bits xor, %k0, %k1, %x0, %x1 : tensor<3xui32>
  return %first, %second, %xor : tensor<3xui32>, tensor<3xui32>, tensor<3xui32>
}

// -----

// Splat operands fold to a splat.
// ROUND-LABEL: func.func @splat
// CHECK-LABEL: func.func @splat
// CHECK: kiln.constant dense<1797259609> : tensor<2x2xui32>
func.func @splat() -> tensor<2x2xui32> {
  %zero = kiln.constant dense<0> : tensor<2x2xui32>
  %bits = kiln.rng_bits first, %zero, %zero, %zero, %zero : tensor<2x2xui32>
  return %bits : tensor<2x2xui32>
}

// -----

// With a varying operand there is nothing to fold.
// ROUND-LABEL: func.func @not_constant
// CHECK-LABEL: func.func @not_constant
// CHECK: kiln.rng_bits xor, %{{.*}}, %{{.*}}, %{{.*}}, %arg0 : tensor<4xui32>
func.func @not_constant(%lo: tensor<4xui32>) -> tensor<4xui32> {
  %zero = kiln.constant dense<0> : tensor<4xui32>
  %bits = kiln.rng_bits xor, %zero, %zero, %zero, %lo : tensor<4xui32>
  return %bits : tensor<4xui32>
}
