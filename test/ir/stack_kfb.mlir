// Stacks appear only in derived gradients, which are made after a model is
// loaded; a .kfb file cannot hold them and writing one says so.
// RUN: not kiln-translate --mlir-to-kfb %s -o %t.kfb 2>&1 | FileCheck %s

// CHECK: kiln.stack_empty{{.*}}cannot be stored (stacks are made by reverse-mode differentiation of kiln.while
func.func @f(%v: tensor<4xf32>, %i: tensor<i64>) -> tensor<4xf32> {
  %s = kiln.stack_empty : tensor<?x4xf32>
  %t = kiln.stack_push %s[%i], %v : tensor<?x4xf32>, tensor<4xf32>
  %r = kiln.stack_read %t[%i] : tensor<?x4xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}
