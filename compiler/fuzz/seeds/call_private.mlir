func.func private @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.neg %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = func.call @f(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %a : tensor<4xf32>, tensor<4xf32>
}
