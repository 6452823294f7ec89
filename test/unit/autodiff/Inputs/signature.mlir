// @f has named arguments and results, an integer argument and an integer
// result, for the tests of a derived function's signature; the module holds
// a second function, @g.
func.func @f(%x: tensor<4xf32> {kiln.name = "x"}, %n: tensor<i32>, %w: tensor<4xf32> {kiln.name = "w"})
    -> (tensor<f32> {kiln.name = "loss"}, tensor<i32> {kiln.name = "count"}) {
  %m = kiln.mul %x, %w : tensor<4xf32>
  %s = kiln.reduce_sum %m, dims = [0] : tensor<4xf32>
  %k = kiln.add %n, %n : tensor<i32>
  return %s, %k : tensor<f32>, tensor<i32>
}
func.func @g(%x: tensor<3xf64>) -> tensor<3xf64> {
  %e = kiln.exp %x : tensor<3xf64>
  return %e : tensor<3xf64>
}
