// kiln.stack_empty, kiln.stack_reserve, kiln.stack_push and
// kiln.stack_read: the custom form
// round-trips, kiln.while and kiln.cond carry stacks, and the verifier
// rejects rows that do not match the stack.
// RUN: kiln-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @push_read
// CHECK:         %[[S:.*]] = kiln.stack_empty : tensor<?x2x3xf32>
// CHECK:         %[[R:.*]] = kiln.stack_reserve %[[S]], %{{.*}} : tensor<?x2x3xf32>
// CHECK:         %[[T:.*]] = kiln.stack_push %[[R]][%{{.*}}], %{{.*}} : tensor<?x2x3xf32>, tensor<2x3xf32>
// CHECK:         kiln.stack_read %[[T]][%{{.*}}] : tensor<?x2x3xf32> -> tensor<2x3xf32>
func.func @push_read(%v: tensor<2x3xf32>, %i: tensor<i64>, %n: tensor<i64>) -> tensor<2x3xf32> {
  %s = kiln.stack_empty : tensor<?x2x3xf32>
  %r = kiln.stack_reserve %s, %n : tensor<?x2x3xf32>
  %t = kiln.stack_push %r[%i], %v : tensor<?x2x3xf32>, tensor<2x3xf32>
  %x = kiln.stack_read %t[%i] : tensor<?x2x3xf32> -> tensor<2x3xf32>
  return %x : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @carried
// CHECK:         kiln.while({{.*}}) : (tensor<i64>, tensor<i64>, tensor<f64>, tensor<?xf64>) cond
// CHECK:         kiln.cond {{.*}} -> tensor<?xf64>
func.func @carried(%v: tensor<f64>, %n: tensor<i64>, %p: tensor<i1>) -> tensor<f64> {
  %zero = kiln.constant dense<0> : tensor<i64>
  %s = kiln.stack_empty : tensor<?xf64>
  %r:4 = kiln.while (%zero, %n, %v, %s) : (tensor<i64>, tensor<i64>, tensor<f64>, tensor<?xf64>) cond {
  ^bb0(%k: tensor<i64>, %m: tensor<i64>, %x: tensor<f64>, %t: tensor<?xf64>):
    %c = kiln.compare lt, %k, %m : tensor<i64>
    kiln.yield %c : tensor<i1>
  } do {
  ^bb0(%k: tensor<i64>, %m: tensor<i64>, %x: tensor<f64>, %t: tensor<?xf64>):
    %t1 = kiln.stack_reserve %t, %m : tensor<?xf64>
    %t2 = kiln.stack_push %t1[%k], %x : tensor<?xf64>, tensor<f64>
    %one = kiln.constant dense<1> : tensor<i64>
    %k1 = kiln.add %k, %one : tensor<i64>
    kiln.yield %k1, %m, %x, %t2 : tensor<i64>, tensor<i64>, tensor<f64>, tensor<?xf64>
  }
  %c = kiln.cond %p, (%r#3) : tensor<i1>, (tensor<?xf64>) -> (tensor<?xf64>) {
  ^bb0(%a: tensor<?xf64>):
    kiln.yield %a : tensor<?xf64>
  } else {
  ^bb0(%a: tensor<?xf64>):
    %e = kiln.stack_empty : tensor<?xf64>
    kiln.yield %e : tensor<?xf64>
  }
  %x = kiln.stack_read %c[%zero] : tensor<?xf64> -> tensor<f64>
  return %x : tensor<f64>
}

// -----

func.func @push_wrong_row(%v: tensor<3xf32>, %i: tensor<i64>) {
  %s = kiln.stack_empty : tensor<?x4xf32>
  // expected-error @+1 {{'kiln.stack_push' op pushes a 'tensor<3xf32>' onto a stack of 'tensor<4xf32>'}}
  %t = kiln.stack_push %s[%i], %v : tensor<?x4xf32>, tensor<3xf32>
  return
}

// -----

func.func @read_wrong_row(%i: tensor<i64>) {
  %s = kiln.stack_empty : tensor<?x4xf32>
  // expected-error @+1 {{'kiln.stack_read' op reads a 'tensor<4xf64>' from a stack of 'tensor<4xf32>'}}
  %r = kiln.stack_read %s[%i] : tensor<?x4xf32> -> tensor<4xf64>
  return
}

// -----

func.func @static_stack() {
  // expected-error @+1 {{'kiln.stack_empty' op result #0 must be kiln stack (tensor<?x...> with a static row shape)}}
  %s = kiln.stack_empty : tensor<4x4xf32>
  return
}

// -----

func.func @two_dynamic_dims() {
  // expected-error @+1 {{'kiln.stack_empty' op result #0 must be kiln stack (tensor<?x...> with a static row shape)}}
  %s = kiln.stack_empty : tensor<?x?xf32>
  return
}

// -----

func.func @reserve_index_type(%n: tensor<i32>) {
  %s = kiln.stack_empty : tensor<?x4xf32>
  // expected-error @+1 {{'kiln.stack_reserve' op operand #1 must be 0D tensor of 64-bit signless integer values}}
  %t = "kiln.stack_reserve"(%s, %n) : (tensor<?x4xf32>, tensor<i32>) -> tensor<?x4xf32>
  return
}
