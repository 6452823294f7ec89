func.func @main(%a: tensor<4xui8>, %b: tensor<4xui64>) -> (tensor<4xui8>, tensor<4xui64>, tensor<4xf32>) {
  %0 = kiln.div %a, %a : tensor<4xui8>
  %1 = kiln.shift_right %b, %b : tensor<4xui64>
  %2 = kiln.cast %b : tensor<4xui64> to tensor<4xf32>
  return %0, %1, %2 : tensor<4xui8>, tensor<4xui64>, tensor<4xf32>
}
