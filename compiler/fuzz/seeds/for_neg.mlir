func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.for -5 iterations (%x) : (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %v: tensor<4xf32>):
    kiln.yield %v : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}
