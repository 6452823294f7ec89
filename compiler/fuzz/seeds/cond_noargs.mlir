func.func @main(%p: tensor<i1>) -> tensor<4xf32> {
  %0 = kiln.cond %p, () : tensor<i1>, () -> tensor<4xf32> {
    %c = kiln.constant dense<1.0> : tensor<4xf32>
    kiln.yield %c : tensor<4xf32>
  } else {
    %c = kiln.constant dense<2.0> : tensor<4xf32>
    kiln.yield %c : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
