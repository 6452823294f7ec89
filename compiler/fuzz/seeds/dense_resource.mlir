func.func @main() -> tensor<4xf32> {
  %0 = kiln.constant dense_resource<blob> : tensor<4xf32>
  return %0 : tensor<4xf32>
}
