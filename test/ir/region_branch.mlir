// kiln.cond, kiln.while and kiln.for implement RegionBranchOpInterface, so
// upstream data-flow analyses see through their regions. Checked here with
// sparse constant propagation (--sccp): constants flow into regions along
// the entry edges, out of them along the yields, a constant predicate or
// trip count keeps only the edges that are taken, and values that change
// from one iteration to the next are not mistaken for constants. Without
// the interface SCCP treats every block argument and result of these ops
// as unknown and none of the constants below appear.
// RUN: kiln-opt %s --split-input-file --sccp | FileCheck %s

// A constant predicate selects the then region only, so the result is the
// constant it yields (the else region would yield the argument), and the
// kiln.cond, now unused and pure, is erased.
// CHECK-LABEL: func.func @cond_constant_predicate
// CHECK-NOT: kiln.cond
// CHECK: %[[ONE:.+]] = kiln.constant dense<1.000000e+00> : tensor<4xf32>
// CHECK-NOT: kiln.cond
// CHECK: return %[[ONE]]
func.func @cond_constant_predicate(%x: tensor<4xf32>) -> tensor<4xf32> {
  %t = kiln.constant dense<true> : tensor<i1>
  %r = kiln.cond %t, (%x) : tensor<i1>, (tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %one = kiln.constant dense<1.0> : tensor<4xf32>
    kiln.yield %one : tensor<4xf32>
  } else {
  ^bb0(%a: tensor<4xf32>):
    kiln.yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// With an unknown predicate both regions run on the constant input: the
// then region folds 2 * 2, the else region reads 2 as a constant. The
// result joins two different values and stays unknown.
// CHECK-LABEL: func.func @cond_constant_input
// CHECK-SAME: (%[[P:.+]]: tensor<i1>, %[[X:.+]]: tensor<f32>)
// CHECK: %[[R:.+]] = kiln.cond %[[P]]
// CHECK: ^bb0(%{{.+}}: tensor<f32>, %[[B:.+]]: tensor<f32>):
// CHECK: %[[FOUR:.+]] = kiln.constant dense<4.000000e+00> : tensor<f32>
// CHECK-NOT: kiln.mul
// CHECK: %[[SUM:.+]] = kiln.add %[[FOUR]], %[[B]] : tensor<f32>
// CHECK: kiln.yield %[[SUM]]
// CHECK: } else {
// CHECK: ^bb0(%{{.+}}: tensor<f32>, %[[B2:.+]]: tensor<f32>):
// CHECK: %[[TWO:.+]] = kiln.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[DIFF:.+]] = kiln.sub %[[B2]], %[[TWO]] : tensor<f32>
// CHECK: kiln.yield %[[DIFF]]
// CHECK: return %[[R]]
func.func @cond_constant_input(%p: tensor<i1>, %x: tensor<f32>) -> tensor<f32> {
  %c = kiln.constant dense<2.0> : tensor<f32>
  %r = kiln.cond %p, (%c, %x) : tensor<i1>, (tensor<f32>, tensor<f32>) -> (tensor<f32>) {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = kiln.mul %a, %a : tensor<f32>
    %t = kiln.add %s, %b : tensor<f32>
    kiln.yield %t : tensor<f32>
  } else {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %t = kiln.sub %b, %a : tensor<f32>
    kiln.yield %t : tensor<f32>
  }
  return %r : tensor<f32>
}

// -----

// A carried value the body yields unchanged is the init on every iteration
// and in the result (3 * 3 folds to 9); the counter, which the body
// changes, stays unknown in the cond region, the body and the result.
// CHECK-LABEL: func.func @while_invariant_carried_value
// CHECK-SAME: (%[[N:.+]]: tensor<i64>)
// CHECK-DAG: %[[NINE:.+]] = kiln.constant dense<9.000000e+00> : tensor<f32>
// CHECK-DAG: %[[THREE:.+]] = kiln.constant dense<3.000000e+00> : tensor<f32>
// CHECK: %[[R:.+]]:2 = kiln.while(%[[THREE]], %[[N]])
// CHECK: kiln.compare gt
// CHECK: } do {
// CHECK: ^bb0(%{{.+}}: tensor<f32>, %[[I:.+]]: tensor<i64>):
// CHECK: %[[THREE2:.+]] = kiln.constant dense<3.000000e+00> : tensor<f32>
// CHECK: %[[J:.+]] = kiln.sub %[[I]], %{{.+}} : tensor<i64>
// CHECK: kiln.yield %[[THREE2]], %[[J]]
// CHECK-NOT: kiln.mul
// CHECK: return %[[NINE]], %[[R]]#1
func.func @while_invariant_carried_value(%n: tensor<i64>) -> (tensor<f32>, tensor<i64>) {
  %c = kiln.constant dense<3.0> : tensor<f32>
  %r:2 = kiln.while (%c, %n) : (tensor<f32>, tensor<i64>) cond {
  ^bb0(%a: tensor<f32>, %i: tensor<i64>):
    %zero = kiln.constant dense<0> : tensor<i64>
    %p = kiln.compare gt, %i, %zero : tensor<i64>
    kiln.yield %p : tensor<i1>
  } do {
  ^bb0(%a: tensor<f32>, %i: tensor<i64>):
    %one = kiln.constant dense<1> : tensor<i64>
    %j = kiln.sub %i, %one : tensor<i64>
    kiln.yield %a, %j : tensor<f32>, tensor<i64>
  }
  %s = kiln.mul %r#0, %r#0 : tensor<f32>
  return %s, %r#1 : tensor<f32>, tensor<i64>
}

// -----

// A counter that starts at the constant 0: the body's yields reach the cond
// region, the body and the result as well as the init does, so the
// comparison does not fold to true and the result is not taken to be 0.
// CHECK-LABEL: func.func @while_counter_from_constant
// CHECK: %[[R:.+]] = kiln.while
// CHECK: %[[P:.+]] = kiln.compare lt, %{{.+}}, %{{.+}} : tensor<i64>
// CHECK: kiln.yield %[[P]] : tensor<i1>
// CHECK: } do {
// CHECK: kiln.add
// CHECK: return %[[R]]
func.func @while_counter_from_constant() -> tensor<i64> {
  %zero = kiln.constant dense<0> : tensor<i64>
  %r = kiln.while (%zero) : (tensor<i64>) cond {
  ^bb0(%i: tensor<i64>):
    %ten = kiln.constant dense<10> : tensor<i64>
    %p = kiln.compare lt, %i, %ten : tensor<i64>
    kiln.yield %p : tensor<i1>
  } do {
  ^bb0(%i: tensor<i64>):
    %one = kiln.constant dense<1> : tensor<i64>
    %j = kiln.add %i, %one : tensor<i64>
    kiln.yield %j : tensor<i64>
  }
  return %r : tensor<i64>
}

// -----

// kiln.for: the invariant carried value is constant in the body and in the
// result (1 + 1 folds to 2); the iteration index, block argument 0, is fed
// by no operand and stays unknown, so its cast does not fold.
// CHECK-LABEL: func.func @for_invariant_and_index
// CHECK-SAME: (%[[X:.+]]: tensor<f32>)
// CHECK-DAG: %[[TWO:.+]] = kiln.constant dense<2.000000e+00> : tensor<f32>
// CHECK: %[[R:.+]]:2 = kiln.for 3 iterations(
// CHECK: ^bb0(%[[I:.+]]: tensor<i64>, %{{.+}}: tensor<f32>, %[[B:.+]]: tensor<f32>):
// CHECK: %[[FI:.+]] = kiln.cast %[[I]] : tensor<i64> to tensor<f32>
// CHECK: %[[S:.+]] = kiln.add %[[B]], %[[FI]] : tensor<f32>
// CHECK: return %[[TWO]], %[[R]]#1
func.func @for_invariant_and_index(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %c = kiln.constant dense<1.0> : tensor<f32>
  %r:2 = kiln.for 3 iterations (%c, %x) : (tensor<f32>, tensor<f32>) {
  ^bb0(%i: tensor<i64>, %a: tensor<f32>, %b: tensor<f32>):
    %fi = kiln.cast %i : tensor<i64> to tensor<f32>
    %s = kiln.add %b, %fi : tensor<f32>
    kiln.yield %a, %s : tensor<f32>, tensor<f32>
  }
  %t = kiln.add %r#0, %r#0 : tensor<f32>
  return %t, %r#1 : tensor<f32>, tensor<f32>
}

// -----

// The trip count decides the edges: after 0 iterations the result is the
// init (the body, which negates, never runs); after 1 it is what the body
// yields from the init, as the body does not run again.
// CHECK-LABEL: func.func @for_static_trip_counts
// CHECK-DAG: %[[TWO:.+]] = kiln.constant dense<2.000000e+00> : tensor<f32>
// CHECK-DAG: %[[MINUS:.+]] = kiln.constant dense<-2.000000e+00> : tensor<f32>
// CHECK-NOT: kiln.for
// CHECK: return %[[TWO]], %[[MINUS]]
func.func @for_static_trip_counts() -> (tensor<f32>, tensor<f32>) {
  %c = kiln.constant dense<2.0> : tensor<f32>
  %r0 = kiln.for 0 iterations (%c) : (tensor<f32>) {
  ^bb0(%i: tensor<i64>, %a: tensor<f32>):
    %n = kiln.neg %a : tensor<f32>
    kiln.yield %n : tensor<f32>
  }
  %r1 = kiln.for 1 iterations (%c) : (tensor<f32>) {
  ^bb0(%i: tensor<i64>, %a: tensor<f32>):
    %n = kiln.neg %a : tensor<f32>
    kiln.yield %n : tensor<f32>
  }
  return %r0, %r1 : tensor<f32>, tensor<f32>
}
