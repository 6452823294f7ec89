func.func @main(%a: tensor<4xf32> {kiln.name = 5 : i32}) -> (tensor<4xf32> {kiln.name = ""}) {
  return %a : tensor<4xf32>
}
