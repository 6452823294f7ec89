func.func @main() -> tensor<4611686018427387904x4xf32> {
  %0 = kiln.constant dense<1.0> : tensor<4611686018427387904x4xf32>
  return %0 : tensor<4611686018427387904x4xf32>
}
