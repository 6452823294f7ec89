func.func @main(%a: tensor<4xf32>) -> (tensor<i64>, tensor<4xf32>) {
  %0 = kiln.rank : tensor<i64>
  %1 = kiln.all_reduce %a, kind = mean, groups = [[0, 1]] : tensor<4xf32>
  return %0, %1 : tensor<i64>, tensor<4xf32>
}
