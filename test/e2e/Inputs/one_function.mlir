// One public function, so that the e2e harness has something to check.
func.func @negate(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kiln.neg %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
