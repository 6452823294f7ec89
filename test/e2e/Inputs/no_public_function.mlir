// A program whose only function is private: the e2e harness must fail it
// rather than pass having checked nothing.
func.func private @hidden(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kiln.neg %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
