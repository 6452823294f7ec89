func.func @main() -> (tensor<4xi32>, tensor<4xui8>, tensor<4xi1>) {
  %a = kiln.constant dense<0x7FC00000> : tensor<4xf32>
  %b = kiln.constant dense<1.0e+30> : tensor<4xf32>
  %0 = kiln.cast %a : tensor<4xf32> to tensor<4xi32>
  %1 = kiln.cast %b : tensor<4xf32> to tensor<4xui8>
  %2 = kiln.cast %a : tensor<4xf32> to tensor<4xi1>
  return %0, %1, %2 : tensor<4xi32>, tensor<4xui8>, tensor<4xi1>
}
