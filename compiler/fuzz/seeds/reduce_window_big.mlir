func.func @main(%x: tensor<4x5xf32>) -> tensor<1x1xf32> {
  %0 = kiln.reduce_window %x, kind = max, window = [9223372036854775807, 1], strides = [1, 1], padding_low = [0, 0], padding_high = [0, 0], dilations = [1, 1] : tensor<4x5xf32>
  return %0 : tensor<1x1xf32>
}
