func.func @main() -> tensor<4xf32> {
  %0 = "kiln.constant"() {value = dense<1> : tensor<4xi32>} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
