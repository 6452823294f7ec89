func.func @main() -> tensor<100000000000xi64> {
  %0 = kiln.iota dim = 0 : tensor<100000000000xi64>
  return %0 : tensor<100000000000xi64>
}
