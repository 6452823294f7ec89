func.func @main(%a: tensor<2x3xf32>, %n: tensor<i64>) -> tensor<2x3xf32> {
  %s = kiln.stack_empty : tensor<?x2x3xf32>
  %r = kiln.stack_reserve %s, %n : tensor<?x2x3xf32>
  %p = kiln.stack_push %r, %a : tensor<?x2x3xf32>, tensor<2x3xf32>
  %v = kiln.stack_read %p[%n] : tensor<?x2x3xf32> -> tensor<2x3xf32>
  return %v : tensor<2x3xf32>
}
