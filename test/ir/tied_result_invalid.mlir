// kiln.tied_result on a function argument (a donated buffer): the index of
// a result of the argument's type, on a public function, one argument per
// result. Anything else is refused by the verifier with what is wrong.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{argument #0 is tied to result #1 but the function has 1 results}}
func.func @out_of_range(%x: tensor<4xf32> {kiln.tied_result = 1 : i64}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument #0 of type 'tensor<4xf32>' is tied to result #0 of another type, 'tensor<4xf64>'}}
func.func @other_type(%x: tensor<4xf32> {kiln.tied_result = 0 : i64}) -> tensor<4xf64> {
  %y = kiln.cast %x : tensor<4xf32> to tensor<4xf64>
  return %y : tensor<4xf64>
}

// -----

// expected-error @+1 {{arguments #0 and #1 are both tied to result #0}}
func.func @twice(%x: tensor<4xf32> {kiln.tied_result = 0 : i64},
                 %y: tensor<4xf32> {kiln.tied_result = 0 : i64}) -> tensor<4xf32> {
  %z = kiln.add %x, %y : tensor<4xf32>
  return %z : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument #0 is donated ('kiln.tied_result'), which only a public function's caller can do}}
func.func private @private_callee(%x: tensor<4xf32> {kiln.tied_result = 0 : i64}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument #0: 'kiln.tied_result' must be the index of a result (an integer), not "out"}}
func.func @not_an_index(%x: tensor<4xf32> {kiln.tied_result = "out"}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// A valid tie verifies.
func.func @valid(%w: tensor<4xf32> {kiln.tied_result = 1 : i64}, %g: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %n = kiln.sub %w, %g : tensor<4xf32>
  %s = kiln.reduce_sum %g, dims = [0] : tensor<4xf32>
  return %s, %n : tensor<f32>, tensor<4xf32>
}
