// The kiln-grad pass: the derived functions for a few small programs. Each
// RUN line differentiates one function; the derived function follows it in
// the module and starts with a copy of the forward computation.
//
// RUN: kiln-opt %s --kiln-grad="function=square_plus_sin" | FileCheck %s --check-prefix=FANOUT
// RUN: kiln-opt %s --kiln-grad="function=dense wrt=1,2" | FileCheck %s --check-prefix=DENSE
// RUN: kiln-opt %s --kiln-grad="function=loss value-and-grad=true" | FileCheck %s --check-prefix=VALUE
// RUN: kiln-opt %s --kiln-grad="function=loss name=dloss" | FileCheck %s --check-prefix=NAMED
// RUN: kiln-opt %s --kiln-grad="function=branch" | FileCheck %s --check-prefix=COND
// RUN: kiln-opt %s --kiln-grad="function=counted" | FileCheck %s --check-prefix=INT
// RUN: kiln-opt %s --kiln-grad="function=scan wrt=0" | FileCheck %s --check-prefix=LOOP
// RUN: kiln-opt %s --kiln-grad="function=halve wrt=0" | FileCheck %s --check-prefix=WHILE
// RUN: kiln-opt %s --kiln-grad="function=widened" | FileCheck %s --check-prefix=WIDENED
// RUN: kiln-opt %s --kiln-grad="function=scan wrt=0 checkpoint-every=2" | FileCheck %s --check-prefix=CKPT
// RUN: kiln-opt %s --kiln-grad="function=running_total" | FileCheck %s --check-prefix=SCAN
// RUN: kiln-opt %s --kiln-grad="function=pool_max" | FileCheck %s --check-prefix=POOLMAX
// RUN: kiln-opt %s --kiln-grad="function=pool_sum" | FileCheck %s --check-prefix=POOLSUM
// RUN: kiln-opt %s --kiln-grad="function=pool_sum_in_padding" | FileCheck %s --check-prefix=POOLCUT
// RUN: kiln-opt %s --kiln-grad="function=padded" | FileCheck %s --check-prefix=PAD
// RUN: kiln-opt %s --kiln-grad="function=calls" | FileCheck %s --check-prefix=CALL
// The derived functions compile like any other.
// RUN: kiln-opt %s --kiln-grad="function=branch" --kiln-grad="function=dense" \
// RUN:   --kiln-grad="function=loss value-and-grad=true" --kiln-grad="function=scan" \
// RUN:   --kiln-grad="function=halve" --kiln-grad="function=calls" | kiln-compile - -o %t.kmod
// RUN: kiln-run %t.kmod --list | FileCheck %s --check-prefix=LIST

// x is used three times: the three contributions are summed with kiln.add.
// FANOUT-LABEL: func.func @square_plus_sin_grad(
// FANOUT-SAME:      %[[X:.*]]: tensor<4xf32>, %[[DY:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// FANOUT:         %[[SQ:.*]] = kiln.mul %[[X]], %[[X]]
// FANOUT:         %[[SIN:.*]] = kiln.sin %[[X]]
// FANOUT:         %[[Y:.*]] = kiln.add %[[SQ]], %[[SIN]]
// FANOUT:         %[[COS:.*]] = kiln.cos %[[X]]
// FANOUT:         %[[G1:.*]] = kiln.mul %[[DY]], %[[COS]]
// FANOUT:         %[[G2:.*]] = kiln.mul %[[DY]], %[[X]]
// FANOUT:         %[[S1:.*]] = kiln.add %[[G1]], %[[G2]]
// FANOUT:         %[[G3:.*]] = kiln.mul %[[DY]], %[[X]]
// FANOUT:         %[[DX:.*]] = kiln.add %[[S1]], %[[G3]]
// FANOUT:         return %[[Y]], %[[DX]]
func.func @square_plus_sin(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.mul %x, %x : tensor<4xf32>
  %1 = kiln.sin %x : tensor<4xf32>
  %2 = kiln.add %0, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}

// Only w and b are differentiated: no gradient is computed for x. The bias
// gradient sums the cotangent over the broadcast dimension.
// DENSE-LABEL: func.func @dense_grad(
// DENSE-SAME:      %[[X:.*]]: tensor<2x3xf32>, %[[W:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<4xf32>, %[[DY:.*]]: tensor<2x4xf32>)
// DENSE-SAME:      -> (tensor<2x4xf32>, tensor<3x4xf32>, tensor<4xf32>)
// DENSE:         %[[Y:.*]] = kiln.add
// DENSE-NEXT:    %[[DB:.*]] = kiln.reduce_sum %[[DY]], dims = [0] : tensor<2x4xf32>
// DENSE-NEXT:    %[[XT:.*]] = kiln.transpose %[[X]], permutation = [1, 0]
// DENSE-NEXT:    %[[DW:.*]] = kiln.matmul %[[XT]], %[[DY]] : tensor<3x2xf32>, tensor<2x4xf32>
// DENSE-NEXT:    return %[[Y]], %[[DW]], %[[DB]]
func.func @dense(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  %0 = kiln.matmul %x, %w : tensor<2x3xf32>, tensor<3x4xf32>
  %1 = kiln.broadcast_in_dim %b, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>
  %2 = kiln.add %0, %1 : tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}

// value-and-grad seeds the backward pass with 1.0 instead of taking a
// cotangent argument.
// VALUE-LABEL: func.func @loss_value_and_grad(
// VALUE-SAME:      %[[X:.*]]: tensor<3xf64> {kiln.name = "x"}) -> (tensor<f64> {kiln.name = "loss"}, tensor<3xf64> {kiln.name = "d_x"})
// VALUE:         %[[E:.*]] = kiln.exp %[[X]]
// VALUE:         %[[L:.*]] = kiln.reduce_mean %[[E]], dims = [0]
// VALUE:         %[[ONE:.*]] = kiln.constant dense<1.000000e+00> : tensor<f64>
// VALUE:         %[[N:.*]] = kiln.constant dense<3.000000e+00> : tensor<f64>
// VALUE:         %[[SHARE:.*]] = kiln.div %[[ONE]], %[[N]]
// VALUE:         %[[B:.*]] = kiln.broadcast_in_dim %[[SHARE]], dims = [] : (tensor<f64>) -> tensor<3xf64>
// VALUE:         %[[DX:.*]] = kiln.mul %[[B]], %[[E]]
// VALUE:         return %[[L]], %[[DX]]

// NAMED-LABEL: func.func @dloss(
// NAMED-SAME:      {kiln.name = "x"}, %{{.*}}: tensor<f64> {kiln.name = "d_loss"})
func.func @loss(%x: tensor<3xf64> {kiln.name = "x"}) -> (tensor<f64> {kiln.name = "loss"}) {
  %0 = kiln.exp %x : tensor<3xf64>
  %1 = kiln.reduce_mean %0, dims = [0] : tensor<3xf64>
  return %1 : tensor<f64>
}

// The backward pass of a cond is a cond on the same predicate. The forward
// cond exports sin(a) from the else branch as an extra result (the then
// branch yields zeros there); tanh(a) is already its result #0.
// COND-LABEL: func.func @branch_grad(
// COND-SAME:      %[[P:.*]]: tensor<i1>, %[[X:.*]]: tensor<4xf32>, %[[DY:.*]]: tensor<4xf32>)
// COND:         %[[F:.*]]:2 = kiln.cond %[[P]], (%[[X]]) : tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
// COND:           %[[T:.*]] = kiln.tanh
// COND-NEXT:      %[[Z:.*]] = kiln.constant dense<0.000000e+00> : tensor<4xf32>
// COND-NEXT:      kiln.yield %[[T]], %[[Z]]
// COND:         } else {
// COND:           %[[S:.*]] = kiln.sin
// COND-NEXT:      %[[M:.*]] = kiln.mul %[[S]]
// COND-NEXT:      kiln.yield %[[M]], %[[S]]
// COND:         %[[DX:.*]] = kiln.cond %[[P]], (%[[DY]], %[[F]]#0, %[[X]], %[[F]]#1)
// COND-NEXT:    ^bb0(%[[G:.*]]: tensor<4xf32>, %[[TANH:.*]]: tensor<4xf32>, %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>):
// COND-NEXT:      %[[SQ:.*]] = kiln.mul %[[TANH]], %[[TANH]]
// COND-NEXT:      %[[ONE:.*]] = kiln.constant dense<1.000000e+00>
// COND-NEXT:      %[[SLOPE:.*]] = kiln.sub %[[ONE]], %[[SQ]]
// COND-NEXT:      %[[R:.*]] = kiln.mul %[[G]], %[[SLOPE]]
// COND-NEXT:      kiln.yield %[[R]]
// COND:         } else {
// COND-NEXT:    ^bb0(%[[G2:.*]]: tensor<4xf32>, %{{.*}}: tensor<4xf32>, %[[A:.*]]: tensor<4xf32>, %[[SIN:.*]]: tensor<4xf32>):
// COND-DAG:       kiln.mul %[[G2]], %[[A]]
// COND-DAG:       kiln.mul %[[G2]], %[[SIN]]
// COND-DAG:       kiln.cos %[[A]]
// COND:         return %[[F]]#0, %[[DX]]
func.func @branch(%p: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %r = kiln.cond %p, (%x) : tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %t = kiln.tanh %a : tensor<4xf32>
    kiln.yield %t : tensor<4xf32>
  } else {
  ^bb0(%a: tensor<4xf32>):
    %s = kiln.sin %a : tensor<4xf32>
    %m = kiln.mul %s, %a : tensor<4xf32>
    kiln.yield %m : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// Integer arguments and results take part in the forward computation only:
// no cotangent for the i32 result, no gradient for the i32 argument, and
// the integer path (cast to f32) contributes nothing.
// INT-LABEL: func.func @counted_grad(
// INT-SAME:      %[[X:.*]]: tensor<3xf32>, %[[N:.*]]: tensor<3xi32>, %[[DY:.*]]: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xi32>, tensor<3xf32>)
// INT:           %[[NF:.*]] = kiln.cast %[[N]] : tensor<3xi32> to tensor<3xf32>
// INT:           %[[DX:.*]] = kiln.mul %[[DY]], %[[NF]]
// INT-NEXT:      return %{{.*}}, %{{.*}}, %[[DX]]
func.func @counted(%x: tensor<3xf32>, %n: tensor<3xi32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %f = kiln.cast %n : tensor<3xi32> to tensor<3xf32>
  %y = kiln.mul %x, %f : tensor<3xf32>
  %m = kiln.add %n, %n : tensor<3xi32>
  return %y, %m : tensor<3xf32>, tensor<3xi32>
}

// The backward pass of a kiln.for is a kiln.for over the iterations in
// reverse (i = 3 - j). The forward loop stores tanh(h w), which changes
// every iteration, in a [4, 3] buffer; w, carried unchanged, is passed to
// the backward loop once instead of being stored.
// LOOP-LABEL: func.func @scan_grad(
// LOOP-SAME:      %[[X:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<3xf32>, %[[DY:.*]]: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// LOOP:         %[[ZEROS:.*]] = kiln.constant dense<0.000000e+00> : tensor<4x3xf32>
// LOOP:         %[[F:.*]]:3 = kiln.for 4 iterations(%[[X]], %[[W]], %[[ZEROS]])
// LOOP-NEXT:    ^bb0(%[[I:.*]]: tensor<i64>, %[[H:.*]]: tensor<3xf32>, %[[V:.*]]: tensor<3xf32>, %[[BUF:.*]]: tensor<4x3xf32>):
// LOOP-NEXT:      %[[M:.*]] = kiln.mul %[[H]], %[[V]]
// LOOP-NEXT:      %[[T:.*]] = kiln.tanh %[[M]]
// LOOP-NEXT:      %[[ROW:.*]] = kiln.reshape %[[T]] : (tensor<3xf32>) -> tensor<1x3xf32>
// LOOP-NEXT:      %[[NEXT:.*]] = kiln.dynamic_update_slice %[[BUF]][%[[I]]], %[[ROW]] : tensor<4x3xf32>, tensor<1x3xf32>
// LOOP-NEXT:      kiln.yield %[[T]], %[[V]], %[[NEXT]]
// LOOP:         %[[B:.*]]:3 = kiln.for 4 iterations(%[[DY]], %[[F]]#2, %[[W]])
// LOOP-NEXT:    ^bb0(%[[J:.*]]: tensor<i64>, %[[G:.*]]: tensor<3xf32>, %[[STORED:.*]]: tensor<4x3xf32>, %[[WB:.*]]: tensor<3xf32>):
// LOOP-NEXT:      %[[LAST:.*]] = kiln.constant dense<3> : tensor<i64>
// LOOP-NEXT:      %[[REV:.*]] = kiln.sub %[[LAST]], %[[J]]
// LOOP-NEXT:      %[[READ:.*]] = kiln.dynamic_slice %[[STORED]][%[[REV]]], size = 1 : tensor<4x3xf32>
// LOOP-NEXT:      %[[TANH:.*]] = kiln.reshape %[[READ]] : (tensor<1x3xf32>) -> tensor<3xf32>
// LOOP:           %[[DM:.*]] = kiln.mul %[[G]], %{{.*}}
// LOOP-NEXT:      %[[DH:.*]] = kiln.mul %[[DM]], %[[WB]]
// LOOP-NEXT:      kiln.yield %[[DH]], %[[STORED]], %[[WB]]
// LOOP:         return %[[F]]#0, %[[B]]#0
// With checkpoint-every=2 the 4 iterations are 2 segments of 2: the outer
// forward loop stores h once per segment ([2, 3]); the inner loop, marked
// kiln.recompute, stores tanh(h w) for its 2 iterations only, and the
// backward loop runs it again (from the stored h) before its own backward
// loop over the segment.
// CKPT-LABEL: func.func @scan_grad(
// CKPT-SAME:      %[[X:.*]]: tensor<3xf32>, %[[W:.*]]: tensor<3xf32>, %[[DY:.*]]: tensor<3xf32>)
// CKPT:         %[[F:.*]]:3 = kiln.for 2 iterations(%[[X]], %[[W]], %{{.*}}) : (tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>)
// CKPT:           kiln.for 2 iterations({{.*}}) : (tensor<3xf32>, tensor<3xf32>, tensor<i64>, tensor<2x3xf32>)
// CKPT:           } {kiln.recompute}
// CKPT:         %[[B:.*]]:3 = kiln.for 2 iterations(%[[DY]], %[[F]]#2, %[[W]])
// CKPT:           %[[AGAIN:.*]]:4 = kiln.for 2 iterations({{.*}}) : (tensor<3xf32>, tensor<3xf32>, tensor<i64>, tensor<2x3xf32>)
// CKPT:           } {kiln.recompute}
// CKPT:           kiln.for 2 iterations(%{{.*}}, %[[AGAIN]]#3, %{{.*}})
// CKPT:         return %[[F]]#0, %[[B]]#0
func.func @scan(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %r:2 = kiln.for 4 iterations (%x, %w) : (tensor<3xf32>, tensor<3xf32>) {
  ^bb0(%i: tensor<i64>, %h: tensor<3xf32>, %v: tensor<3xf32>):
    %m = kiln.mul %h, %v : tensor<3xf32>
    %t = kiln.tanh %m : tensor<3xf32>
    kiln.yield %t, %v : tensor<3xf32>, tensor<3xf32>
  }
  return %r#0 : tensor<3xf32>
}

// The backward pass of a kiln.while is a kiln.while that starts at the
// trip count the forward loop counted and reads row t - 1 of the stack the
// forward loop pushed h onto (the rule of sin reads it); the constant 0.5
// is neither pushed nor carried. The forward loop is two loops: the outer
// one doubles the stack's capacity (at least 4 rows), the inner one runs
// the iterations while the condition holds and the capacity is not reached.
// WHILE-LABEL: func.func @halve_grad(
// WHILE-SAME:      %[[X:.*]]: tensor<3xf32>, %[[DY:.*]]: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// WHILE:         %[[ZERO:.*]] = kiln.constant dense<0> : tensor<i64>
// WHILE:         %[[EMPTY:.*]] = kiln.stack_empty : tensor<?x3xf32>
// WHILE:         %[[F:.*]]:3 = kiln.while(%[[X]], %[[ZERO]], %[[EMPTY]]) : (tensor<3xf32>, tensor<i64>, tensor<?x3xf32>) cond {
// WHILE:           kiln.compare gt
// WHILE:         } do {
// WHILE-NEXT:    ^bb0(%[[H0:.*]]: tensor<3xf32>, %[[C0:.*]]: tensor<i64>, %[[S0:.*]]: tensor<?x3xf32>):
// WHILE-DAG:       %[[FOUR:.*]] = kiln.constant dense<4> : tensor<i64>
// WHILE-DAG:       %[[TWO:.*]] = kiln.constant dense<2> : tensor<i64>
// WHILE:           %[[DOUBLE:.*]] = kiln.mul %[[C0]], %[[TWO]] : tensor<i64>
// WHILE-NEXT:      %[[CAP:.*]] = kiln.max %[[DOUBLE]], %[[FOUR]] : tensor<i64>
// WHILE-NEXT:      %[[GROWN:.*]] = kiln.stack_reserve %[[S0]], %[[CAP]] : tensor<?x3xf32>
// WHILE-NEXT:      %[[IN:.*]]:4 = kiln.while(%[[H0]], %[[C0]], %[[GROWN]], %[[CAP]])
// WHILE-NEXT:      ^bb0(%{{.*}}: tensor<3xf32>, %[[CC:.*]]: tensor<i64>, %{{.*}}: tensor<?x3xf32>, %[[CCAP:.*]]: tensor<i64>):
// WHILE:             %[[HOLDS:.*]] = kiln.compare gt
// WHILE-NEXT:        %[[ROOM:.*]] = kiln.compare lt, %[[CC]], %[[CCAP]] : tensor<i64>
// WHILE-NEXT:        %[[NO:.*]] = kiln.constant dense<false> : tensor<i1>
// WHILE-NEXT:        %[[BOTH:.*]] = kiln.select %[[HOLDS]], %[[ROOM]], %[[NO]]
// WHILE-NEXT:        kiln.yield %[[BOTH]] : tensor<i1>
// WHILE:           } do {
// WHILE-NEXT:      ^bb0(%[[H:.*]]: tensor<3xf32>, %[[C:.*]]: tensor<i64>, %[[S:.*]]: tensor<?x3xf32>, %[[K:.*]]: tensor<i64>):
// WHILE:             %[[ONE:.*]] = kiln.constant dense<1> : tensor<i64>
// WHILE-NEXT:        %[[C1:.*]] = kiln.add %[[C]], %[[ONE]] : tensor<i64>
// WHILE-NEXT:        %[[PUSHED:.*]] = kiln.stack_push %[[S]][%[[C]]], %[[H]] : tensor<?x3xf32>, tensor<3xf32>
// WHILE-NEXT:        kiln.yield %{{.*}}, %[[C1]], %[[PUSHED]], %[[K]]
// WHILE:           kiln.yield %[[IN]]#0, %[[IN]]#1, %[[IN]]#2
// WHILE:         %[[B:.*]]:3 = kiln.while(%[[F]]#1, %[[DY]], %[[F]]#2) : (tensor<i64>, tensor<3xf32>, tensor<?x3xf32>) cond {
// WHILE-NEXT:    ^bb0(%[[T:.*]]: tensor<i64>, %{{.*}}: tensor<3xf32>, %{{.*}}: tensor<?x3xf32>):
// WHILE-NEXT:      %[[Z:.*]] = kiln.constant dense<0> : tensor<i64>
// WHILE-NEXT:      %[[MORE:.*]] = kiln.compare gt, %[[T]], %[[Z]] : tensor<i64>
// WHILE-NEXT:      kiln.yield %[[MORE]] : tensor<i1>
// WHILE-NEXT:    } do {
// WHILE-NEXT:    ^bb0(%[[T2:.*]]: tensor<i64>, %[[G:.*]]: tensor<3xf32>, %[[ST:.*]]: tensor<?x3xf32>):
// WHILE-NEXT:      %[[ONE2:.*]] = kiln.constant dense<1> : tensor<i64>
// WHILE-NEXT:      %[[I:.*]] = kiln.sub %[[T2]], %[[ONE2]] : tensor<i64>
// WHILE:           %[[HI:.*]] = kiln.stack_read %[[ST]][%[[I]]] : tensor<?x3xf32> -> tensor<3xf32>
// WHILE:           kiln.cos %[[HI]]
// WHILE:           kiln.yield %[[I]], %{{.*}}, %[[ST]]
// WHILE:         return %[[F]]#0, %[[B]]#1
func.func @halve(%x: tensor<3xf32>) -> tensor<3xf32> {
  %r = kiln.while (%x) : (tensor<3xf32>) cond {
  ^bb0(%h: tensor<3xf32>):
    %s = kiln.reduce_sum %h, dims = [0] : tensor<3xf32>
    %c = kiln.constant dense<0.1> : tensor<f32>
    %p = kiln.compare gt, %s, %c : tensor<f32>
    kiln.yield %p : tensor<i1>
  } do {
  ^bb0(%h: tensor<3xf32>):
    %half = kiln.constant dense<0.5> : tensor<3xf32>
    %s = kiln.sin %h : tensor<3xf32>
    %m = kiln.mul %s, %half : tensor<3xf32>
    kiln.yield %m : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}

// LIST-DAG: branch_grad(arg0: i1[], arg1: f32[4], arg2: f32[4]) -> (out0: f32[4], out1: f32[4])
// LIST-DAG: dense_grad(arg0: f32[2,3], arg1: f32[3,4], arg2: f32[4], arg3: f32[2,4]) -> (out0: f32[2,4], out1: f32[2,3], out2: f32[3,4], out3: f32[4])
// LIST-DAG: loss_value_and_grad(x: f64[3]) -> (loss: f64[], d_x: f64[3])
// LIST-DAG: halve_grad(arg0: f32[3], arg1: f32[3]) -> (out0: f32[3], out1: f32[3])
// LIST-DAG: scan_grad(arg0: f32[3], arg1: f32[3], arg2: f32[3]) -> (out0: f32[3], out1: f32[3], out2: f32[3])

// cumsum's gradient is a cumsum of the cotangent in the other direction with
// the same exclusiveness; floor and argmax carry no gradient, so nothing is
// derived through them (and the integer result takes no cotangent).
// SCAN-LABEL: func.func @running_total_grad(
// SCAN-SAME:      %[[X:.*]]: tensor<2x3xf32>, %[[DY:.*]]: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2xi64>, tensor<2x3xf32>)
// SCAN:           kiln.floor %[[X]]
// SCAN-NEXT:      kiln.cumsum %[[X]], dim = 1 exclusive : tensor<2x3xf32>
// SCAN-NEXT:      %[[Y:.*]] = kiln.add
// SCAN-NEXT:      %[[I:.*]] = kiln.argmax %[[Y]], dim = 1
// SCAN-NEXT:      %[[DX:.*]] = kiln.cumsum %[[DY]], dim = 1 exclusive reverse : tensor<2x3xf32>
// SCAN-NEXT:      return %[[Y]], %[[I]], %[[DX]]
func.func @running_total(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2xi64>) {
  %f = kiln.floor %x : tensor<2x3xf32>
  %c = kiln.cumsum %x, dim = 1 exclusive : tensor<2x3xf32>
  %y = kiln.add %c, %f : tensor<2x3xf32>
  %i = kiln.argmax %y, dim = 1 : tensor<2x3xf32>
  return %y, %i : tensor<2x3xf32>, tensor<2xi64>
}

// Pooling and padding.

// Max pooling: the cotangent goes through reduce_window_max_grad with the
// forward op's window.
// POOLMAX-LABEL: func.func @pool_max_grad(
// POOLMAX-SAME:      %[[X:.*]]: tensor<1x6x6xf32>, %[[DY:.*]]: tensor<1x3x3xf32>)
// POOLMAX:           %[[DX:.*]] = kiln.reduce_window_max_grad %[[X]], %[[DY]], window = [1, 3, 3], strides = [1, 2, 2], padding_low = [0, 1, 1], padding_high = [0, 1, 1], dilations = [1, 1, 1] : tensor<1x6x6xf32>, tensor<1x3x3xf32>
// POOLMAX-NEXT:      return %{{.*}}, %[[DX]]
func.func @pool_max(%x: tensor<1x6x6xf32>) -> tensor<1x3x3xf32> {
  %y = kiln.reduce_window %x, kind = max, window = [1, 3, 3], strides = [1, 2, 2], padding_low = [0, 1, 1], padding_high = [0, 1, 1], dilations = [1, 1, 1] : tensor<1x6x6xf32>
  return %y : tensor<1x3x3xf32>
}

// Sum pooling with stride 2: the cotangent spread out by an interior pad,
// then a stride-1 sum pool padded by (W - 1) * d - lo = 1 below and so
// that the result has the operand's 5 elements.
// POOLSUM-LABEL: func.func @pool_sum_grad(
// POOLSUM-SAME:      %[[X:.*]]: tensor<5xf32>, %[[DY:.*]]: tensor<3xf32>)
// POOLSUM:           %[[Z:.*]] = kiln.constant dense<0.000000e+00> : tensor<f32>
// POOLSUM:           %[[S:.*]] = kiln.pad %[[DY]], %[[Z]], low = [0], high = [0], interior = [1] : tensor<3xf32>, tensor<f32>
// POOLSUM:           %[[DX:.*]] = kiln.reduce_window %[[S]], kind = sum, window = [3], strides = [1], padding_low = [1], padding_high = [1], dilations = [1] : tensor<5xf32>
// POOLSUM-NEXT:      return %{{.*}}, %[[DX]]
func.func @pool_sum(%x: tensor<5xf32>) -> tensor<3xf32> {
  %y = kiln.reduce_window %x, kind = sum, window = [3], strides = [2], padding_low = [1], padding_high = [1], dilations = [1] : tensor<5xf32>
  return %y : tensor<3xf32>
}

// Padding wider than the window: the spread cotangent's ends that only
// windows in the padding reach are sliced off.
// POOLCUT-LABEL: func.func @pool_sum_in_padding_grad(
// POOLCUT-SAME:      %[[X:.*]]: tensor<3xf32>, %[[DY:.*]]: tensor<5xf32>)
// POOLCUT:           %[[S:.*]] = kiln.pad %[[DY]], %{{.*}}, low = [0], high = [0], interior = [1] : tensor<5xf32>, tensor<f32>
// POOLCUT:           %[[C:.*]] = kiln.slice %[[S]], start = [3], limit = [7], stride = [1] : tensor<9xf32>
// POOLCUT:           %[[DX:.*]] = kiln.reduce_window %[[C]], kind = sum, window = [2], strides = [1], padding_low = [0], padding_high = [0], dilations = [1] : tensor<4xf32>
// POOLCUT-NEXT:      return %{{.*}}, %[[DX]]
func.func @pool_sum_in_padding(%x: tensor<3xf32>) -> tensor<5xf32> {
  %y = kiln.reduce_window %x, kind = sum, window = [2], strides = [2], padding_low = [4], padding_high = [3], dilations = [1] : tensor<3xf32>
  return %y : tensor<5xf32>
}

// Pad: the operand's cotangent is a strided slice; the value's is the sum
// over a mask that pads zeros with one.
// PAD-LABEL: func.func @padded_grad(
// PAD-SAME:      %[[X:.*]]: tensor<2x3xf32>, %[[V:.*]]: tensor<f32>, %[[DY:.*]]: tensor<4x9xf32>)
// PAD-DAG:       %[[DX:.*]] = kiln.slice %[[DY]], start = [1, 0], limit = [4, 7], stride = [2, 3] : tensor<4x9xf32>
// PAD-DAG:       %[[ONE:.*]] = kiln.constant dense<1.000000e+00> : tensor<f32>
// PAD-DAG:       %[[ZEROS:.*]] = kiln.constant dense<0.000000e+00> : tensor<2x3xf32>
// PAD:           %[[MASK:.*]] = kiln.pad %[[ZEROS]], %[[ONE]], low = [1, 0], high = [0, 2], interior = [1, 2] : tensor<2x3xf32>, tensor<f32>
// PAD:           %[[M:.*]] = kiln.mul %[[DY]], %[[MASK]] : tensor<4x9xf32>
// PAD:           %[[DV:.*]] = kiln.reduce_sum %[[M]], dims = [0, 1] : tensor<4x9xf32>
// PAD:           return %{{.*}}, %[[DX]], %[[DV]]
func.func @padded(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<4x9xf32> {
  %p = kiln.pad %x, %v, low = [1, 0], high = [0, 2], interior = [1, 2] : tensor<2x3xf32>, tensor<f32>
  return %p : tensor<4x9xf32>
}

// Calls are differentiated through the callees' bodies, inlined into the
// derived function (nested calls too); the callees stay as they are.
// CALL-LABEL: func.func @calls_grad(
// CALL-SAME:      %[[X:.*]]: tensor<4xf32>, %[[DY:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CALL-NOT:       func.call
// CALL:           %[[SIN:.*]] = kiln.sin %[[X]]
// CALL:           %[[SQ:.*]] = kiln.mul %[[SIN]], %[[SIN]]
// CALL:           kiln.cos %[[X]]
// CALL:           return %[[SQ]],
func.func private @sine(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kiln.sin %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @sine_squared(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @sine(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = kiln.mul %0, %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func @calls(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @sine_squared(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// A product of bf16 operands widened to f32: the f32 cotangent is rounded
// to bf16, and the gradient products are bf16 products (accumulating in
// f32) whose results are the operands' gradients, in bf16.
// WIDENED-LABEL: func.func @widened_grad(
// WIDENED-SAME:      %[[A:.*]]: tensor<2x3xbf16>, %[[B:.*]]: tensor<3x4xbf16>, %[[DY:.*]]: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x3xbf16>, tensor<3x4xbf16>)
// WIDENED:         %[[Y:.*]] = kiln.matmul %[[A]], %[[B]] : tensor<2x3xbf16>, tensor<3x4xbf16> -> f32
// WIDENED:         %[[G:.*]] = kiln.cast %[[DY]] : tensor<2x4xf32> to tensor<2x4xbf16>
// WIDENED:         %[[BT:.*]] = kiln.transpose %[[B]], permutation = [1, 0]
// WIDENED:         %[[DA:.*]] = kiln.matmul %[[G]], %[[BT]] : tensor<2x4xbf16>, tensor<4x3xbf16>{{$}}
// WIDENED:         %[[AT:.*]] = kiln.transpose %[[A]], permutation = [1, 0]
// WIDENED:         %[[DB:.*]] = kiln.matmul %[[AT]], %[[G]] : tensor<3x2xbf16>, tensor<2x4xbf16>{{$}}
// WIDENED:         return %[[Y]], %[[DA]], %[[DB]]
func.func @widened(%a: tensor<2x3xbf16>, %b: tensor<3x4xbf16>) -> tensor<2x4xf32> {
  %0 = kiln.matmul %a, %b : tensor<2x3xbf16>, tensor<3x4xbf16> -> f32
  return %0 : tensor<2x4xf32>
}
