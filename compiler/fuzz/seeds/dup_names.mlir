func.func @main(%a: tensor<4xf32> {kiln.name = "x"}, %b: tensor<4xf32> {kiln.name = "x"}) -> (tensor<4xf32> {kiln.name = "x"}) {
  %0 = kiln.add %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
