// f16 and bf16 have no CPU lowering yet: the conversion fails at the first
// op that uses them, with a message that says so.
// RUN: kiln-opt %s --split-input-file --kiln-to-linalg -verify-diagnostics

func.func @add_f16(%a: tensor<4xf16>, %b: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error @+1 {{'kiln.add' op uses 'f16', which the CPU backend does not support yet}}
  %0 = kiln.add %a, %b : tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @exp_bf16(%a: tensor<4xbf16>) -> tensor<4xbf16> {
  // expected-error @+1 {{'kiln.exp' op uses 'bf16', which the CPU backend does not support yet}}
  %0 = kiln.exp %a : tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

func.func @compare_f16(%a: tensor<4xf16>, %b: tensor<4xf16>) -> tensor<4xi1> {
  // expected-error @+1 {{'kiln.compare' op uses 'f16', which the CPU backend does not support yet}}
  %0 = kiln.compare lt, %a, %b : tensor<4xf16>
  return %0 : tensor<4xi1>
}

// -----

// A cast from or to f16 is rejected too, even from a supported type.
func.func @cast_to_f16(%a: tensor<4xf32>) -> tensor<4xf16> {
  // expected-error @+1 {{'kiln.cast' op uses 'f16', which the CPU backend does not support yet}}
  %0 = kiln.cast %a : tensor<4xf32> to tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @reduce_sum_bf16(%a: tensor<4xbf16>) -> tensor<bf16> {
  // expected-error @+1 {{'kiln.reduce_sum' op uses 'bf16', which the CPU backend does not support yet}}
  %0 = kiln.reduce_sum %a, dims = [0] : tensor<4xbf16>
  return %0 : tensor<bf16>
}

// -----

func.func @matmul_f16(%a: tensor<2x3xf16>, %b: tensor<3x4xf16>) -> tensor<2x4xf16> {
  // expected-error @+1 {{'kiln.matmul' op uses 'f16', which the CPU backend does not support yet}}
  %0 = kiln.matmul %a, %b : tensor<2x3xf16>, tensor<3x4xf16>
  return %0 : tensor<2x4xf16>
}

// -----

func.func @iota_f16() -> tensor<4xf16> {
  // expected-error @+1 {{'kiln.iota' op uses 'f16', which the CPU backend does not support yet}}
  %0 = kiln.iota dim = 0 : tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// The error is reported inside control flow too.
func.func @f16_in_loop(%a: tensor<4xf16>) -> tensor<4xf16> {
  %r = kiln.for 2 iterations (%a) : (tensor<4xf16>) {
  ^bb0(%i: tensor<i64>, %v: tensor<4xf16>):
    // expected-error @+1 {{'kiln.neg' op uses 'f16', which the CPU backend does not support yet}}
    %n = kiln.neg %v : tensor<4xf16>
    kiln.yield %n : tensor<4xf16>
  }
  return %r : tensor<4xf16>
}
