// Two constants (f32 and i1): the model whose constant data the
// malformed-file tests corrupt.
func.func @f() -> (tensor<4xf32>, tensor<3xi1>) {
  %a = kiln.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %b = kiln.constant dense<[true, false, true]> : tensor<3xi1>
  return %a, %b : tensor<4xf32>, tensor<3xi1>
}
