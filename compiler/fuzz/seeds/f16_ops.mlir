func.func @main(%a: tensor<4xf16>, %b: tensor<4xbf16>) -> (tensor<4xf16>, tensor<4xbf16>) {
  %0 = kiln.tanh %a : tensor<4xf16>
  %1 = kiln.pow %b, %b : tensor<4xbf16>
  return %0, %1 : tensor<4xf16>, tensor<4xbf16>
}
