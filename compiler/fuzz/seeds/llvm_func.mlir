llvm.func @kiln_entry_main(%p: !llvm.ptr) {
  llvm.return
}
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
