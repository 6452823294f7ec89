func.func @main(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<1x1xf32> {
  %0 = kiln.pad %x, %v, low = [-1, -1], high = [0, -1], interior = [0, 0] : tensor<2x3xf32>, tensor<f32>
  return %0 : tensor<1x1xf32>
}
