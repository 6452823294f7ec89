func.func @main(%a: tensor<4x0xf32>, %b: tensor<0x5xf32>) -> tensor<4x5xf32> {
  %0 = kiln.matmul %a, %b : tensor<4x0xf32>, tensor<0x5xf32>
  return %0 : tensor<4x5xf32>
}
