// Requests kiln-vmap rejects, each reported at the function or op at fault.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-vmap="function=f in-axes=0,-1 out-axes=0 size=4"

// One in axis per argument.
// expected-error@+1 {{vmap of @f: 2 in axes for 1 arguments}}
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}

// -----

// A derived while gradient's stack, in a loop whose trip count depends on
// the mapped argument: each lane would push at its own row.
func.func @f(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %s0 = kiln.stack_empty : tensor<?x3xf32>
  %zero = kiln.constant dense<0> : tensor<i64>
  // expected-error@+1 {{'kiln.while' op cannot be batched: its trip count differs between lanes and it carries a stack (a loop differentiated before vmap), whose rows would be pushed and read at a different index in each lane}}
  %r:3 = kiln.while (%x, %zero, %s0) : (tensor<3xf32>, tensor<i64>, tensor<?x3xf32>) cond {
  ^bb0(%h: tensor<3xf32>, %k: tensor<i64>, %s: tensor<?x3xf32>):
    %n = kiln.reduce_sum %h, dims = [0] : tensor<3xf32>
    %limit = kiln.constant dense<10.0> : tensor<f32>
    %c = kiln.compare lt, %n, %limit : tensor<f32>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%h: tensor<3xf32>, %k: tensor<i64>, %s: tensor<?x3xf32>):
    %one = kiln.constant dense<1> : tensor<i64>
    %k1 = kiln.add %k, %one : tensor<i64>
    %g = kiln.stack_reserve %s, %k1 : tensor<?x3xf32>
    %p = kiln.stack_push %g[%k], %h : tensor<?x3xf32>, tensor<3xf32>
    %two = kiln.constant dense<2.0> : tensor<3xf32>
    %h2 = kiln.mul %h, %two : tensor<3xf32>
    kiln.yield %h2, %k1, %p : tensor<3xf32>, tensor<i64>, tensor<?x3xf32>
  }
  return %r#0 : tensor<3xf32>
}

// -----

// A row index that differs between lanes.
func.func @f(%i: tensor<i64>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %s0 = kiln.stack_empty : tensor<?x3xf32>
  %four = kiln.constant dense<4> : tensor<i64>
  %s1 = kiln.stack_reserve %s0, %four : tensor<?x3xf32>
  // expected-error@+1 {{'kiln.stack_push' op cannot be batched: its row index differs between lanes}}
  %s2 = kiln.stack_push %s1[%i], %y : tensor<?x3xf32>, tensor<3xf32>
  %r = kiln.stack_read %s2[%i] : tensor<?x3xf32> -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// A cond on a mapped predicate cannot choose between two stacks.
func.func @f(%p: tensor<i1>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %s0 = kiln.stack_empty : tensor<?x3xf32>
  %one = kiln.constant dense<1> : tensor<i64>
  %zero = kiln.constant dense<0> : tensor<i64>
  %s1 = kiln.stack_reserve %s0, %one : tensor<?x3xf32>
  // expected-error@+1 {{'kiln.cond' op cannot be batched: its predicate differs between lanes and it returns a stack, whose rows cannot be chosen lane by lane}}
  %s = kiln.cond %p, (%s1, %y) : tensor<i1>, (tensor<?x3xf32>, tensor<3xf32>) -> (tensor<?x3xf32>) {
  ^bb0(%a: tensor<?x3xf32>, %v: tensor<3xf32>):
    %z = kiln.constant dense<0> : tensor<i64>
    %q = kiln.stack_push %a[%z], %v : tensor<?x3xf32>, tensor<3xf32>
    kiln.yield %q : tensor<?x3xf32>
  } else {
  ^bb0(%a: tensor<?x3xf32>, %v: tensor<3xf32>):
    kiln.yield %a : tensor<?x3xf32>
  }
  %r = kiln.stack_read %s[%zero] : tensor<?x3xf32> -> tensor<3xf32>
  return %r : tensor<3xf32>
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
