func.func @main(%a: tensor<0x4xf32>) -> tensor<0x4xf32> {
  %0 = kiln.exp %a : tensor<0x4xf32>
  %1 = kiln.add %0, %a : tensor<0x4xf32>
  return %1 : tensor<0x4xf32>
}
