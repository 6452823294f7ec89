// One kiln.for whose body holds one op: values %0 = x, %1 = y, %2 = i,
// %3 = h in the model file, and a region op for locations and isolation.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = kiln.for 2 iterations (%x) : (tensor<4xf32>) {
  ^bb0(%i: tensor<i64>, %h: tensor<4xf32>):
    %t = kiln.tanh %h : tensor<4xf32>
    kiln.yield %t : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}
