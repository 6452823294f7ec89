func.func @main(%x: tensor<4xf32>) -> tensor<4x4xf32> {
  %0 = kiln.broadcast_in_dim %x, dims = [0, 0] : (tensor<4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
