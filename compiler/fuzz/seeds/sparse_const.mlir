func.func @main() -> tensor<4x4xf32> {
  %0 = kiln.constant sparse<[[0, 0]], [1.0]> : tensor<4x4xf32>
  %1 = kiln.neg %0 : tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}
