// Requests kiln-jvp rejects, each reported at the function or op at fault.
// Every split asks for the JVP of @f with respect to argument #1.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics \
// RUN:   --kiln-jvp="function=f wrt=1"

// Only float tensors have tangents.
// expected-error@+1 {{cannot differentiate @f with respect to argument #1 of type 'tensor<4xi32>': only float tensors have gradients}}
func.func @f(%x: tensor<4xf32>, %n: tensor<4xi32>) -> tensor<4xf32> {
  %0 = kiln.cast %n : tensor<4xi32> to tensor<4xf32>
  %1 = kiln.mul %x, %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// The function must exist.
// expected-error@+1 {{kiln-jvp: there is no function named @f}}
module {
  func.func @g(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
    %0 = kiln.mul %x, %y : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}

// -----

// The argument must exist.
// expected-error@+1 {{cannot differentiate @f with respect to argument #1: it has 1 arguments}}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.exp %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The derived function's name must be free.
// expected-error@+1 {{cannot derive @f_jvp from @f: the name is taken}}
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.mul %x, %y : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @f_jvp() {
  return
}

// -----

// A call of a declaration has no body to differentiate through.
func.func private @opaque(tensor<4xf32>) -> tensor<4xf32>
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'func.call' op cannot be differentiated: there is no JVP rule for it}}
  %0 = func.call @opaque(%y) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Stacks exist only in derived gradients of kiln.while; their JVP (forward
// over reverse through a while) is not supported.
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %s = kiln.stack_empty : tensor<?x4xf32>
  %zero = kiln.constant dense<0> : tensor<i64>
  // expected-error@+1 {{'kiln.stack_push' op cannot be differentiated: there is no JVP rule for it}}
  %t = kiln.stack_push %s[%zero], %y : tensor<?x4xf32>, tensor<4xf32>
  %r = kiln.stack_read %t[%zero] : tensor<?x4xf32> -> tensor<4xf32>
  %1 = kiln.add %x, %r : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Nor is the JVP of fused attention's gradient.
func.func @f(%q: tensor<4x8xf32>, %g: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %o, %lse = kiln.attention %q, %q, %q {scale = 0.5 : f64} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
  // expected-error@+1 {{'kiln.attention_grad' op cannot be differentiated: there is no JVP rule for it}}
  %dq, %dk, %dv = kiln.attention_grad %q, %q, %q, %o, %lse, %g {scale = 0.5 : f64} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>
  return %dq : tensor<4x8xf32>
}

// -----

// An op marked as having no derivative (a rejection sampler's step) is
// refused with the mark's reason when it depends on argument #1; one that
// does not is fine.
func.func @f(%x: tensor<3xf32>, %a: tensor<3xf32>) -> tensor<3xf32> {
  %c = kiln.constant dense<2.0> : tensor<3xf32>
  %fine = kiln.sub %x, %c {kiln.no_derivative = "not this one"} : tensor<3xf32>
  // expected-error@+1 {{'kiln.sub' op cannot be differentiated: a step of a sampler}}
  %d = kiln.sub %a, %c {kiln.no_derivative = "a step of a sampler"} : tensor<3xf32>
  %y = kiln.mul %d, %fine : tensor<3xf32>
  return %y : tensor<3xf32>
}
