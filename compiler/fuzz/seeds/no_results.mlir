func.func @main(%a: tensor<4xf32>) {
  %0 = kiln.neg %a : tensor<4xf32>
  return
}
