func.func @main(%b: tensor<8x4xf32>, %u: tensor<9x4xf32>, %i: tensor<i64>) -> tensor<8x4xf32> {
  %0 = kiln.dynamic_update_slice %b[%i], %u : tensor<8x4xf32>, tensor<9x4xf32>
  return %0 : tensor<8x4xf32>
}
