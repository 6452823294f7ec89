func.func @main(%t: tensor<f32>, %i: tensor<2xi32>) -> tensor<2xf32> {
  %0 = kiln.gather %t, %i : tensor<f32>, tensor<2xi32>
  return %0 : tensor<2xf32>
}
