// A run-time stack (tensor<?x4xf32>) in a block that kiln-fuse groups:
// reading the element count of its dynamic shape failed an assertion.
func.func @main(%x: tensor<4xf32>, %n: tensor<i64>) -> tensor<4xf32> {
  %s = kiln.stack_empty : tensor<?x4xf32>
  %t = kiln.stack_reserve %s, %n : tensor<?x4xf32>
  %zero = kiln.constant dense<0> : tensor<i64>
  %y = kiln.sin %x : tensor<4xf32>
  %u = kiln.stack_push %t[%zero], %y : tensor<?x4xf32>, tensor<4xf32>
  %r = kiln.stack_read %u[%zero] : tensor<?x4xf32> -> tensor<4xf32>
  %c = kiln.cos %r : tensor<4xf32>
  %e = kiln.exp %c : tensor<4xf32>
  return %e : tensor<4xf32>
}
