func.func @main(%t: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<i64>) {
  %0 = kiln.transpose %t, permutation = [] : tensor<f32>
  %1 = kiln.reduce_sum %t, dims = [] : tensor<f32>
  %2 = kiln.reverse %t, dims = [] : tensor<f32>
  %3 = kiln.cast %t : tensor<f32> to tensor<i64>
  return %0, %1, %2, %3 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<i64>
}
