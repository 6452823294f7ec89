func.func @main() -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi64>) {
  %a = kiln.constant dense<-2147483648> : tensor<4xi32>
  %b = kiln.constant dense<-1> : tensor<4xi32>
  %z = kiln.constant dense<0> : tensor<4xi32>
  %0 = kiln.div %a, %b : tensor<4xi32>
  %1 = kiln.rem %a, %z : tensor<4xi32>
  %c = kiln.constant dense<64> : tensor<4xi64>
  %d = kiln.constant dense<1> : tensor<4xi64>
  %2 = kiln.shift_left %d, %c : tensor<4xi64>
  return %0, %1, %2 : tensor<4xi32>, tensor<4xi32>, tensor<4xi64>
}
