func.func @main(%a: tensor<0x4xf32>) -> (tensor<4xf32>, tensor<4xi64>, tensor<4xf32>) {
  %0 = kiln.reduce_sum %a, dims = [0] : tensor<0x4xf32>
  %1 = kiln.argmax %a, dim = 0 : tensor<0x4xf32>
  %2 = kiln.reduce_max %a, dims = [0] : tensor<0x4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xi64>, tensor<4xf32>
}
