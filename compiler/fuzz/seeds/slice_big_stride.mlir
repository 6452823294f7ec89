func.func @main(%x: tensor<4x1xf32>) -> tensor<1x1xf32> {
  %0 = kiln.slice %x, start = [0, 0], limit = [4, 1], stride = [9223372036854775807, 1] : tensor<4x1xf32>
  return %0 : tensor<1x1xf32>
}
