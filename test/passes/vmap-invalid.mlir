// Requests kiln-vmap rejects, each reported at the function or op at fault.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-vmap="function=f in-axes=0,-1 out-axes=0 size=4"

// One in axis per argument.
// expected-error@+1 {{vmap of @f: 2 in axes for 1 arguments}}
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}

// -----

// A collective has no batching rule.
func.func @f(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'kiln.all_reduce' op cannot be batched: there is no batching rule for it}}
  %0 = kiln.all_reduce %x, kind = sum, groups = [[0, 1]] : tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// The name must be free.
// expected-error@+1 {{cannot derive @f_vmap from @f: the name is taken}}
func.func @f(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
func.func @f_vmap() {
  return
}
