func.func @main() -> (tensor<4xi1>, tensor<300xui8>) {
  %0 = kiln.iota dim = 0 : tensor<4xi1>
  %1 = kiln.iota dim = 0 : tensor<300xui8>
  return %0, %1 : tensor<4xi1>, tensor<300xui8>
}
