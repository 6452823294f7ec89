func.func @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  return %a, %a, %a : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
