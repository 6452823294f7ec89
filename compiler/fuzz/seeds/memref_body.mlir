func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %m = memref.alloc() : memref<4xf32>
  return %a : tensor<4xf32>
}
