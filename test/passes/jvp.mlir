// The kiln-jvp pass: the derived functions for a few small programs. Each
// RUN line derives the JVP of one function; the derived function follows it
// in the module, with each tangent computed right after its value.
//
// RUN: kiln-opt %s --kiln-jvp="function=square_plus_sin" | FileCheck %s --check-prefix=FANOUT
// RUN: kiln-opt %s --kiln-jvp="function=dense wrt=1 name=ddense" | FileCheck %s --check-prefix=DENSE
// RUN: kiln-opt %s --kiln-jvp="function=branch wrt=1" | FileCheck %s --check-prefix=COND
// RUN: kiln-opt %s --kiln-jvp="function=scan wrt=0" | FileCheck %s --check-prefix=LOOP
// RUN: kiln-opt %s --kiln-jvp="function=halve" | FileCheck %s --check-prefix=WHILE
// RUN: kiln-opt %s --kiln-jvp="function=pool_max" | FileCheck %s --check-prefix=POOLMAX
// RUN: kiln-opt %s --kiln-jvp="function=counted" | FileCheck %s --check-prefix=INT
// Forward over reverse (a Hessian-vector product) and the derived
// functions compile like any other.
// RUN: kiln-opt %s --kiln-grad="function=dense" --kiln-jvp="function=dense_grad wrt=0,1" \
// RUN:   --kiln-jvp="function=branch" --kiln-jvp="function=halve" | kiln-compile - -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s --check-prefix=LIST

// d(x*x + sin x) = t*x + x*t + t*cos(x), each term next to its value.
// FANOUT-LABEL: func.func @square_plus_sin_jvp(
// FANOUT-SAME:      %[[X:.*]]: tensor<4xf32>, %[[T:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// FANOUT:         %[[SQ:.*]] = kiln.mul %[[X]], %[[X]]
// FANOUT:         %[[A:.*]] = kiln.mul %[[T]], %[[X]]
// FANOUT:         %[[B:.*]] = kiln.mul %[[X]], %[[T]]
// FANOUT:         %[[TSQ:.*]] = kiln.add %[[A]], %[[B]]
// FANOUT:         %[[SIN:.*]] = kiln.sin %[[X]]
// FANOUT:         %[[COS:.*]] = kiln.cos %[[X]]
// FANOUT:         %[[TSIN:.*]] = kiln.mul %[[T]], %[[COS]]
// FANOUT:         %[[Y:.*]] = kiln.add %[[SQ]], %[[SIN]]
// FANOUT:         %[[TY:.*]] = kiln.add %[[TSQ]], %[[TSIN]]
// FANOUT:         return %[[Y]], %[[TY]]
func.func @square_plus_sin(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.mul %x, %x : tensor<4xf32>
  %1 = kiln.sin %x : tensor<4xf32>
  %2 = kiln.add %0, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// Only the weight's tangent: the product's other term is absent, and the
// named tangent argument and result follow the primal names.
// DENSE-LABEL: func.func @ddense(
// DENSE-SAME:      %[[X:[^:]*]]: tensor<2x3xf32>, %[[W:[^:]*]]: tensor<3x4xf32> {kiln.name = "w"}, %[[TW:[^:]*]]: tensor<3x4xf32> {kiln.name = "t_w"})
// DENSE-SAME:      -> (tensor<2x4xf32> {kiln.name = "y"}, tensor<2x4xf32> {kiln.name = "t_y"})
// DENSE:         %[[M:.*]] = kiln.matmul %[[X]], %[[W]]
// DENSE-NEXT:    %[[TM:.*]] = kiln.matmul %[[X]], %[[TW]]
// DENSE-NEXT:    %[[Y:.*]] = kiln.tanh %[[M]]
// DENSE:         %[[TY:.*]] = kiln.mul %[[TM]], %{{.*}}
// DENSE:         return %[[Y]], %[[TY]]
func.func @dense(%x: tensor<2x3xf32>, %w: tensor<3x4xf32> {kiln.name = "w"}) -> (tensor<2x4xf32> {kiln.name = "y"}) {
  %0 = kiln.matmul %x, %w : tensor<2x3xf32>, tensor<3x4xf32>
  %1 = kiln.tanh %0 : tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}

// The cond takes the tangent as an extra input and returns the result's
// tangent as an extra result; the branch that passes %w through yields
// zeros (only %x has a tangent).
// COND-LABEL: func.func @branch_jvp(
// COND-SAME:      %[[P:.*]]: tensor<i1>, %[[X:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<3xf32>, %[[T:.*]]: tensor<3xf32>)
// COND:         %[[R:.*]]:2 = kiln.cond %[[P]], (%[[X]], %[[W]], %[[T]])
// COND-NEXT:    ^bb0(%[[A:.*]]: tensor<3xf32>, %{{.*}}: tensor<3xf32>, %[[TA:.*]]: tensor<3xf32>):
// COND-NEXT:      %[[E:.*]] = kiln.exp %[[A]]
// COND-NEXT:      %[[TE:.*]] = kiln.mul %[[TA]], %[[E]]
// COND-NEXT:      kiln.yield %[[E]], %[[TE]]
// COND:         } else {
// COND:           %[[Z:.*]] = kiln.constant dense<0.000000e+00> : tensor<3xf32>
// COND-NEXT:      kiln.yield %{{.*}}, %[[Z]]
// COND:         return %[[R]]#0, %[[R]]#1
func.func @branch(%p: tensor<i1>, %x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %r = kiln.cond %p, (%x, %w) : tensor<i1>, (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%a: tensor<3xf32>, %b: tensor<3xf32>):
    %e = kiln.exp %a : tensor<3xf32>
    kiln.yield %e : tensor<3xf32>
  } else {
  ^bb0(%a: tensor<3xf32>, %b: tensor<3xf32>):
    kiln.yield %b : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}

// The loop carries the tangent of its varied carried value; the weight,
// not differentiated, gets none. Nothing is stored per iteration.
// LOOP-LABEL: func.func @scan_jvp(
// LOOP-SAME:      %[[X:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<3xf32>, %[[T:.*]]: tensor<3xf32>)
// LOOP:         %[[R:.*]]:3 = kiln.for 4 iterations(%[[X]], %[[W]], %[[T]])
// LOOP-NEXT:    ^bb0(%{{.*}}: tensor<i64>, %[[H:.*]]: tensor<3xf32>, %[[WW:.*]]: tensor<3xf32>, %[[TH:.*]]: tensor<3xf32>):
// LOOP-NEXT:      %[[M:.*]] = kiln.mul %[[H]], %[[WW]]
// LOOP-NEXT:      %[[TM:.*]] = kiln.mul %[[TH]], %[[WW]]
// LOOP-NEXT:      kiln.yield %[[M]], %[[WW]], %[[TM]]
// LOOP:         return %[[R]]#0, %[[R]]#2
func.func @scan(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %r:2 = kiln.for 4 iterations (%x, %w) : (tensor<3xf32>, tensor<3xf32>) {
  ^bb0(%i: tensor<i64>, %h: tensor<3xf32>, %ww: tensor<3xf32>):
    %m = kiln.mul %h, %ww : tensor<3xf32>
    kiln.yield %m, %ww : tensor<3xf32>, tensor<3xf32>
  }
  return %r#0 : tensor<3xf32>
}

// A data-dependent loop carries its tangent too (no stacks); the cond
// region takes it without reading it.
// WHILE-LABEL: func.func @halve_jvp(
// WHILE-SAME:      %[[X:.*]]: tensor<f32>, %[[T:.*]]: tensor<f32>)
// WHILE:         %[[R:.*]]:2 = kiln.while(%[[X]], %[[T]]) : (tensor<f32>, tensor<f32>) cond {
// WHILE-NEXT:    ^bb0(%[[V:.*]]: tensor<f32>, %{{.*}}: tensor<f32>):
// WHILE:           kiln.compare gt, %[[V]]
// WHILE:         } do {
// WHILE-NEXT:    ^bb0(%[[B:.*]]: tensor<f32>, %[[TB:.*]]: tensor<f32>):
// WHILE:           %[[N:.*]] = kiln.mul %[[B]], %[[H:.*]] : tensor<f32>
// WHILE-NEXT:      %[[TN:.*]] = kiln.mul %[[TB]], %[[H]] : tensor<f32>
// WHILE-NEXT:      kiln.yield %[[N]], %[[TN]]
// WHILE-NOT:     kiln.stack
// WHILE:         return %[[R]]#0, %[[R]]#1
func.func @halve(%x: tensor<f32>) -> tensor<f32> {
  %r = kiln.while (%x) : (tensor<f32>) cond {
  ^bb0(%v: tensor<f32>):
    %one = kiln.constant dense<1.0> : tensor<f32>
    %p = kiln.compare gt, %v, %one : tensor<f32>
    kiln.yield %p : tensor<i1>
  } do {
  ^bb0(%v: tensor<f32>):
    %h = kiln.constant dense<0.5> : tensor<f32>
    %n = kiln.mul %v, %h : tensor<f32>
    kiln.yield %n : tensor<f32>
  }
  return %r : tensor<f32>
}

// Max pooling: each window offset is a strided slice of the operand and of
// its tangent, and a running selection keeps the tangent of the first
// maximum (here a 2x2 window: four offsets).
// POOLMAX-LABEL: func.func @pool_max_jvp(
// POOLMAX-SAME:      %[[X:.*]]: tensor<1x1x4x4xf32>, %[[T:.*]]: tensor<1x1x4x4xf32>)
// POOLMAX:         %[[Y:.*]] = kiln.reduce_window %[[X]], kind = max
// POOLMAX:         kiln.slice %[[T]], start = [0, 0, 0, 0], limit = [1, 1, 3, 3], stride = [1, 1, 2, 2]
// POOLMAX:         kiln.slice %[[T]], start = [0, 0, 0, 1], limit = [1, 1, 3, 4], stride = [1, 1, 2, 2]
// POOLMAX:         kiln.slice %[[T]], start = [0, 0, 1, 0], limit = [1, 1, 4, 3], stride = [1, 1, 2, 2]
// POOLMAX:         kiln.slice %[[T]], start = [0, 0, 1, 1], limit = [1, 1, 4, 4], stride = [1, 1, 2, 2]
// POOLMAX:         kiln.select %[[TAKE:.*]], %{{.*}}, %{{.*}} :
// POOLMAX-NEXT:    %[[TY:.*]] = kiln.select %[[TAKE]], %{{.*}}, %{{.*}} :
// POOLMAX-NEXT:    return %[[Y]], %[[TY]]
func.func @pool_max(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %r = kiln.reduce_window %x, kind = max, window = [1, 1, 2, 2], strides = [1, 1, 2, 2], padding_low = [0, 0, 0, 0], padding_high = [0, 0, 0, 0], dilations = [1, 1, 1, 1] : tensor<1x1x4x4xf32>
  return %r : tensor<1x1x2x2xf32>
}

// Integer results have no tangent; a result no tangent reaches gets zeros.
// INT-LABEL: func.func @counted_jvp(
// INT-SAME:      %[[X:.*]]: tensor<3xf32>, %[[N:.*]]: tensor<3xi32>, %[[T:.*]]: tensor<3xf32>)
// INT-SAME:      -> (tensor<3xf32>, tensor<3xi32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
// INT:           %[[Z:.*]] = kiln.constant dense<0.000000e+00> : tensor<3xf32>
// INT:           return %{{.*}}, %[[N]], %{{.*}}, %{{.*}}, %[[Z]]
func.func @counted(%x: tensor<3xf32>, %n: tensor<3xi32>) -> (tensor<3xf32>, tensor<3xi32>, tensor<3xf32>) {
  %f = kiln.cast %n : tensor<3xi32> to tensor<3xf32>
  %y = kiln.mul %x, %f : tensor<3xf32>
  return %y, %n, %f : tensor<3xf32>, tensor<3xi32>, tensor<3xf32>
}

// LIST: dense_grad_jvp(arg0: f32[2,3], w: f32[3,4], d_y: f32[2,4], arg3: f32[2,3], t_w: f32[3,4]) -> (y: f32[2,4], out1: f32[2,3], d_w: f32[3,4], t_y: f32[2,4], out4: f32[2,3], t_d_w: f32[3,4])
// LIST: branch_jvp(arg0: i1[], arg1: f32[3], arg2: f32[3], arg3: f32[3], arg4: f32[3]) -> (out0: f32[3], out1: f32[3])
// LIST: halve_jvp(arg0: f32[], arg1: f32[]) -> (out0: f32[], out1: f32[])
