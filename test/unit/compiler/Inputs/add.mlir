// f32[2] + f32[2]: the function the input-checking tests call wrongly.
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %c = kiln.add %a, %b : tensor<2xf32>
  func.return %c : tensor<2xf32>
}
